//! `--idle-for`: asks the Slurm of every cluster a destroy plan would delete (and of every
//! protected one, to show it) for its jobs and nodes, shows the evidence, and keeps in the plan
//! only the provably idle clusters, each with its evidence as the reason it is deleted.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use clusterform::format::idle_table::idle_table;
use clusterform::format::notes::Note;
pub use clusterform::format::notes::Recheck;
use clusterform_executor::{IdleReport, IdleVerdict};
use clusterform_model::duration::Seconds;
use clusterform_model::pricing::PriceList;
use clusterform_model::{Action, ClusterName, JobsByCluster, LiveCluster};
use clusterform_planner::{ChangeReason, Plan, PlanOptions};
use time::OffsetDateTime;

use super::{Planned, Run};
use crate::error::CliError;
use crate::views::PlanView;

impl<V: PlanView + ?Sized> Run<'_, V> {
    /// Shows the evidence, drops from the plan every cluster that is not idle, and gives, for
    /// each deletion left, the active jobs of the same answer. The declared clusters that
    /// `lifecycle { prevent_destroy }` protects (planned with `keep_protected`) are shown as
    /// kept.
    pub async fn keep_only_idle(
        &self,
        planned: &mut Planned,
        options: &PlanOptions,
        threshold: Duration,
        prices: Option<&PriceList>,
    ) -> Result<JobsByCluster, CliError> {
        if threshold < MOMENTARY_IDLENESS {
            self.view().tell(&Note::ShortIdleThreshold {
                threshold,
                momentary: MOMENTARY_IDLENESS,
            });
        }
        planned
            .plan
            .record_idle_threshold(threshold.as_secs().max(1));
        let deleted = deleted_addresses(&planned.plan);
        let protected = self.protected(options);
        let (reports, now) = self
            .inspect_idle(planned.live.iter(), threshold, |address| {
                deleted.contains(address) || protected.contains(address)
            })
            .await?;
        let burn_rates = prices.map(|prices| prices.fleet_burn_rate(planned.live.iter()));
        let table = idle_table(&reports, &protected, burn_rates.as_ref(), now);
        self.view().evidence(&table);
        // Matched by whole address: the same ID may live in two regions.
        let idle: BTreeMap<&ClusterName, &IdleReport> = reports
            .iter()
            .filter(|r| r.verdict == IdleVerdict::Idle && !protected.contains(&r.name))
            .map(|r| (&r.name, r))
            .collect();
        planned.plan.changes.retain_mut(|change| {
            let Some(report) = idle.get(&change.address) else {
                return false;
            };
            change.reason = Some(ChangeReason::Idle {
                evidence: report.reason.clone(),
                idle_for: Some(Seconds::from(threshold).to_string()),
            });
            true
        });
        Ok(idle
            .into_iter()
            .map(|(name, report)| (name.clone(), report.running_jobs.clone()))
            .collect())
    }

    /// Asks the Slurm of each cluster an idle destroy deletes once more, right before the
    /// deletes (`when`: after the approval, or when a saved idle destroy is applied), and drops
    /// from `plan` every cluster no longer idle for its threshold, saying so; the reasons of
    /// those left carry the new evidence. Nothing is deleted on evidence older than this look.
    pub async fn recheck_idle<'l>(
        &self,
        plan: &mut Plan,
        live: impl IntoIterator<Item = &'l LiveCluster>,
        when: Recheck,
    ) -> Result<(), CliError> {
        let Some(seconds) = plan.flags.idle_for else {
            return Ok(());
        };
        let threshold = Duration::from_secs(seconds);
        let deleted = deleted_addresses(plan);
        let (reports, _) = self
            .inspect_idle(live, threshold, |address| deleted.contains(address))
            .await?;
        let reports: BTreeMap<&ClusterName, &IdleReport> =
            reports.iter().map(|r| (&r.name, r)).collect();
        plan.changes.retain_mut(|change| {
            if change.action != Action::Delete {
                return true;
            }
            match reports.get(&change.address) {
                Some(report) if report.verdict == IdleVerdict::Idle => {
                    change.reason = Some(ChangeReason::Idle {
                        evidence: report.reason.clone(),
                        idle_for: Some(Seconds(seconds).to_string()),
                    });
                    true
                }
                found => {
                    let why = found.map_or("it is no longer listed", |r| r.reason.as_str());
                    self.view().tell(&Note::NoLongerIdle {
                        cluster: change.address.id().clone(),
                        recheck: when,
                        why: why.to_owned(),
                    });
                    false
                }
            }
        });
        Ok(())
    }

    /// The idle evidence of the live clusters `wanted` picks, read now, and when.
    async fn inspect_idle<'l>(
        &self,
        live: impl IntoIterator<Item = &'l LiveCluster>,
        threshold: Duration,
        wanted: impl Fn(&ClusterName) -> bool,
    ) -> Result<(Vec<IdleReport>, OffsetDateTime), CliError> {
        let candidates: Vec<LiveCluster> = live
            .into_iter()
            .filter(|live| wanted(&live.address))
            .cloned()
            .collect();
        let now = OffsetDateTime::now_utc();
        let reports = clusterform_executor::inspect_idle(
            &self.connection.client,
            &candidates,
            threshold,
            now,
        )
        .await?;
        let mut reports = reports;
        // In the order of every table of clusters: project, region, ID.
        reports.sort_by(|a, b| a.name.cmp(&b.name));
        Ok((reports, now))
    }

    /// The declared clusters in scope of `options` that `prevent_destroy` protects.
    fn protected(&self, options: &PlanOptions) -> BTreeSet<ClusterName> {
        let in_scope =
            |id: &str| options.targets.is_empty() || options.targets.iter().any(|t| t == id);
        self.config()
            .clusters
            .iter()
            .filter(|cluster| {
                cluster.lifecycle.prevent_destroy && in_scope(cluster.name.id().as_str())
            })
            .map(|cluster| cluster.name.clone())
            .collect()
    }
}

/// Idleness shorter than this is what any cluster shows between two jobs.
const MOMENTARY_IDLENESS: Duration = Duration::from_secs(10 * 60);

/// The clusters the plan deletes. (Gathered once: looking each live cluster up in the plan
/// would be quadratic in the size of the fleet.)
fn deleted_addresses(plan: &Plan) -> BTreeSet<&ClusterName> {
    plan.changes
        .iter()
        .filter(|c| c.action == Action::Delete)
        .map(|c| &c.address)
        .collect()
}
