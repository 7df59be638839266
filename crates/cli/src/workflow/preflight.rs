//! Preflight in a run: the reads a plan's creates need, started while the Lists run — a
//! declared cluster whose location's List ended without it is a create, so its reads start
//! then — and the rest once the plan is known (replacements, added pools); then the findings,
//! each told at its configuration line, and the run's error when one is certain (unless
//! `--skip-preflight`). A plan that creates nothing reads nothing.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use clusterform_config::{Config, Diagnostic, Severity, SourceLocation, field_location};
use clusterform_executor::PreflightClient;
use clusterform_model::preflight::{PreflightRead, Reading};
use clusterform_model::{ClusterName, LiveCluster, Location};
use clusterform_planner::Plan;
use clusterform_planner::preflight::{
    Finding, cluster_requirements, distinct_reads, findings, plan_requirements,
};
use tokio::task::JoinHandle;

use super::Run;
use crate::context::PreflightSetup;
use crate::diagnostics;
use crate::error::CliError;
use crate::views::PlanView;
use clusterform::format::preflight::{self as words, PreflightReport};

/// The reads started before the plan is known, and the client they go through (built at the
/// first read, so a plan that reads nothing builds none).
pub struct PreflightReads {
    config: Arc<Config>,
    setup: PreflightSetup,
    /// Whether a List's end starts the reads of the creates it shows (not for a plan that
    /// only deletes).
    early: bool,
    client: OnceLock<Option<PreflightClient>>,
    /// The clusters the pages held, per location: those a finished List lacks are creates.
    seen: Mutex<HashSet<ClusterName>>,
    started: Mutex<BTreeMap<PreflightRead, JoinHandle<Reading>>>,
}

impl std::fmt::Debug for PreflightReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let started = self.started.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("PreflightReads")
            .field("started", &started.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl PreflightReads {
    /// Nothing started yet; `early`: reads start as the Lists show creates.
    pub fn new(config: Arc<Config>, setup: PreflightSetup, early: bool) -> Self {
        Self {
            config,
            setup,
            early,
            client: OnceLock::new(),
            seen: Mutex::new(HashSet::new()),
            started: Mutex::new(BTreeMap::new()),
        }
    }

    /// Notes the clusters of a page.
    pub fn page(&self, clusters: &[LiveCluster]) {
        if !self.early {
            return;
        }
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        seen.extend(clusters.iter().map(|live| live.address.clone()));
    }

    /// The List of `location` ended: the declared clusters there that no page held will be
    /// created, so their reads start now.
    pub fn listed(&self, location: &Location) {
        if !self.early {
            return;
        }
        let seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let creates: Vec<_> = self
            .config
            .clusters
            .iter()
            .filter(|declared| declared.name.location() == location)
            .filter(|declared| !seen.contains(&declared.name))
            .flat_map(cluster_requirements)
            .collect();
        drop(seen);
        for read in distinct_reads(&creates) {
            self.start(read);
        }
    }

    /// Starts `read` unless it is started already.
    fn start(&self, read: PreflightRead) {
        let mut started = self.started.lock().unwrap_or_else(PoisonError::into_inner);
        if started.contains_key(&read) {
            return;
        }
        let client = self
            .client
            .get_or_init(|| match self.setup.client() {
                Ok(client) => Some(client),
                Err(error) => {
                    tracing::debug!(%error, "preflight has no client");
                    None
                }
            })
            .clone();
        let handle = tokio::spawn({
            let read = read.clone();
            async move {
                match client {
                    Some(client) => client.read(&read).await,
                    None => Reading::Unchecked("no HTTP client could be built".to_owned()),
                }
            }
        });
        started.insert(read, handle);
    }

    /// What `plan` needs, read: the reads started for it are awaited, the others made now, and
    /// the reads it does not need are dropped.
    async fn finish(self, plan: &Plan) -> Vec<Finding> {
        let requirements = plan_requirements(&self.config, plan);
        let needed = distinct_reads(&requirements);
        for read in &needed {
            self.start(read.clone());
        }
        let started =
            std::mem::take(&mut *self.started.lock().unwrap_or_else(PoisonError::into_inner));
        let mut readings = BTreeMap::new();
        for (read, handle) in started {
            if needed.contains(&read) {
                let reading = handle.await.unwrap_or_else(|ended| {
                    Reading::Unchecked(format!("the read ended early: {ended}"))
                });
                readings.insert(read, reading);
            } else {
                handle.abort();
            }
        }
        findings(&requirements, &readings)
    }
}

impl<V: PlanView + ?Sized> Run<'_, V> {
    /// Reads for a plan of this run; `early`: started as the Lists show creates, before the
    /// plan is known.
    pub fn preflight_reads(&self, early: bool) -> PreflightReads {
        PreflightReads::new(
            self.config.clone(),
            self.connection.preflight().clone(),
            early,
        )
    }

    /// Preflight of `plan` (with the reads `reads` started): its findings, each located.
    pub async fn preflight(
        &self,
        plan: &Plan,
        reads: PreflightReads,
        skip: bool,
    ) -> PreflightReport {
        let found = reads.finish(plan).await;
        let findings = found
            .into_iter()
            .map(|finding| {
                let place = self.place_of(&finding);
                (finding, place)
            })
            .collect();
        PreflightReport {
            findings,
            skipped: skip,
        }
    }

    /// Where the configuration writes the field `finding` concerns.
    fn place_of(&self, finding: &Finding) -> Option<SourceLocation> {
        let declared = self.config.cluster(finding.cluster.id().as_str())?;
        if finding.field.is_empty() {
            return Some(declared.location.clone());
        }
        field_location(&self.dir, declared, &finding.field)
            .or_else(|| Some(declared.location.clone()))
    }

    /// Tells each finding through the view (an error, or a warning with `--skip-preflight`, for
    /// an inference and for a check that could not run); the run's error when one is an error.
    pub fn tell_preflight(&self, report: &PreflightReport) -> Result<(), CliError> {
        for (finding, place) in &report.findings {
            let severity = match words::severity(finding, report.skipped) {
                "error" => Severity::Error,
                _ => Severity::Warning,
            };
            let place = place.clone().unwrap_or_default();
            let diagnostic = Diagnostic {
                severity,
                message: words::message(finding),
                file: place.file,
                line: place.line,
                column: place.column,
                range: None,
                hint: words::hint(finding),
                reason: None,
            };
            let diagnostic = diagnostics::located_warning(diagnostic, &self.dir, &[]);
            self.view.preflight_finding(&diagnostic);
        }
        match report.errors() {
            0 => Ok(()),
            errors => Err(CliError::Preflight { errors }),
        }
    }
}
