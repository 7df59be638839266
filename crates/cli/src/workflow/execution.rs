//! Execution: wait for what earlier runs left in flight, confirm, run the plan with live
//! progress, wait for unchanged clusters still working, check the Slurm controllers that a
//! change to their settings may have stopped, and end with the failures (each field an API
//! error names shown where the configuration writes it) and the summary.

use std::collections::BTreeSet;
use std::path::Path;

use clusterform_config::{Config, field_location};
use clusterform_executor::{ApiClient, ApplyReport, ExecError, Remains};
use clusterform_model::{Action, LiveCluster, Location};
use clusterform_model::{ClusterName, ClusterState, paths};
use clusterform_planner::{ClusterChange, Plan, StoppedWork};
use futures::StreamExt;

use super::{Approval, Planned, Run};
use crate::error::CliError;
use crate::exit_status::ExitStatus;
use crate::views::{Completion, Counts, RunView};
use clusterform::format::actions;
use clusterform::format::names::ClusterNames;
use clusterform::format::notes::{Note, Waiting};

/// Clusters whose controllers are asked at once after an apply.
const SLURM_CHECKS_AT_ONCE: usize = 10;

impl<V: RunView + ?Sized> Run<'_, V> {
    /// The API client, for the steps of one command (a saved plan's refresh, the idle check).
    pub fn client(&self) -> &ApiClient {
        &self.connection.client
    }

    /// Tells that `report`'s run could not write the applied record, if it could not.
    fn tell_record_not_written(&self, report: &ApplyReport) {
        if let Some(error) = &report.record_not_written {
            self.view.tell(&Note::AppliedRecordNotWritten {
                record: error.0.location().clone(),
                reason: error.0.reason(),
            });
        }
    }

    /// Waits for the operations an earlier run left in the journal, and for clusters the plan
    /// would change while an operation no journal knows is still changing them, before anything
    /// new is sent. What the resumed operations did is counted in the run's summary
    /// ([`Run::finish`]); the plan's warnings have said once what was resumed.
    pub async fn settle_earlier_runs(&self, planned: &Planned) -> Result<Settled, CliError> {
        let resuming: BTreeSet<ClusterName> = self
            .engine
            .journal()
            .entries()
            .into_iter()
            .map(|entry| entry.address)
            .collect();
        let mut settled = Settled::default();
        if !resuming.is_empty() {
            let names = ClusterNames::for_clusters(&resuming);
            let token = self.interrupts.token(rerun(&planned.plan));
            let progress = self.view.progress(names, resuming.len());
            let resumed = self.engine.resume(progress, token).await;
            self.tell_record_not_written(&resumed);
            self.view.executed(&resumed);
            self.fail_on(&resumed, None)?;
            settled.resumed = Counts::of(&resumed);
            settled.replan = true;
        }
        // A cluster just resumed was waited for to its end: only the others are looked at.
        let changing: Vec<ClusterChange> = changing_under_us(&planned.plan, planned.live.iter())
            .into_iter()
            .filter(|change| !resuming.contains(&change.address))
            .collect();
        if !changing.is_empty() {
            self.view.tell(&Note::Waiting(Waiting::ChangingClusters));
            let settled_changes = self.await_settled(&changing, &planned.plan).await;
            // A cluster that ended badly shows in the new plan (a broken one is replaced); only
            // an interrupt stops here.
            if settled_changes.interrupted {
                return Err(CliError::Interrupted);
            }
            settled.replan = true;
        }
        Ok(settled)
    }

    /// Asks for approval, naming the running work the plan stops (`stopped`), or without a
    /// person to ask (`approval.unattended`) refuses such work unless it is allowed; then runs
    /// the plan. `None` when the user declined and nothing was sent.
    pub async fn confirm_and_execute(
        &self,
        plan: &Plan,
        approval: &Approval,
        stopped: &[StoppedWork<'_>],
    ) -> Result<Option<ApplyReport>, CliError> {
        if !self.approve(plan, approval, stopped)? {
            return Ok(None);
        }
        Ok(Some(self.execute(plan).await))
    }

    /// Whether `plan` may run: asked (naming the running work it stops), or unattended with
    /// the guard's leave; `false` when the user declined.
    pub fn approve(
        &self,
        plan: &Plan,
        approval: &Approval,
        stopped: &[StoppedWork<'_>],
    ) -> Result<bool, CliError> {
        if approval.unattended {
            self.guard_unattended(approval, stopped)?;
            return Ok(true);
        }
        self.view.confirm(plan, stopped)
    }

    /// Without a person to ask, a change that stops running work is refused before anything
    /// is sent, unless `--allow-disruption` lets it go (and then each is still said).
    pub fn guard_unattended(
        &self,
        approval: &Approval,
        stopped: &[StoppedWork<'_>],
    ) -> Result<(), CliError> {
        if stopped.is_empty() {
            return Ok(());
        }
        self.view.stopped_work(stopped, !approval.allow_disruption);
        if approval.allow_disruption {
            return Ok(());
        }
        Err(CliError::DisruptionRefused {
            clusters: stopped.len(),
            go_ahead: approval.go_ahead.clone(),
        })
    }

    /// Runs a plan with progress; Ctrl-C stops waiting (the journal keeps the operations), a
    /// second Ctrl-C exits at once.
    pub async fn execute(&self, plan: &Plan) -> ApplyReport {
        let names = ClusterNames::for_clusters(plan.changes.iter().map(|c| &c.address));
        let token = self.interrupts.token(rerun(plan));
        let changing = plan
            .changes
            .iter()
            .filter(|c| c.action != Action::NoOp)
            .count();
        let report = self
            .engine
            .apply(plan, self.view.progress(names, changing), token)
            .await;
        self.tell_record_not_written(&report);
        self.view.executed(&report);
        self.view.fell_back(plan, &report);
        report
    }

    /// Waits for the `working` clusters to settle (unless the run was interrupted), checks the
    /// Slurm controllers the plan's settings may have stopped, then reports the failures and
    /// the summary of `report` (`None`: the plan had nothing to do) with what the earlier
    /// runs' operations it resumed did (`resumed`), in one line.
    pub async fn finish(
        &self,
        report: Option<ApplyReport>,
        plan: &Plan,
        working: &[ClusterChange],
        unread: &[Location],
        resumed: Counts,
    ) -> Result<ExitStatus, CliError> {
        let changed =
            report.as_ref().is_some_and(|r| !r.outcomes.is_empty()) || resumed != Counts::default();
        let mut report = report.unwrap_or_default();
        if !working.is_empty() && !report.interrupted {
            self.view.tell(&Note::Waiting(Waiting::UnchangedClusters));
            let settled = self.await_settled(working, plan).await;
            report.outcomes.extend(settled.outcomes);
            report.interrupted = settled.interrupted;
        }
        self.warn_of_silent_controllers(&report, plan).await;
        let sources = FieldSources {
            config: &self.config,
            plan,
            dir: &self.dir,
        };
        let completion = match (changed, working.is_empty()) {
            (true, _) => Completion::Executed(resumed.plus(Counts::of(&report))),
            (false, false) => Completion::Settled,
            (false, true) => return Ok(ExitStatus::Success),
        };
        self.conclude(&report, plan, completion, Some(&sources), unread)
    }

    /// Waits, sending nothing, for clusters an operation no journal knows is still changing.
    async fn await_settled(&self, changes: &[ClusterChange], plan: &Plan) -> ApplyReport {
        let names = ClusterNames::for_clusters(changes.iter().map(|c| &c.address));
        let token = self.interrupts.token(rerun(plan));
        let settled = self
            .engine
            .await_settled(changes, self.view.progress(names, changes.len()), token)
            .await;
        self.view.executed(&settled);
        settled
    }

    /// Prints the report's failures ([`Run::fail_on`]) and says what completed; maps the
    /// report to an exit status. A destroy that could not list every location (`unread`) is
    /// incomplete, whatever it deleted: clusters of the stack may be left there.
    fn conclude(
        &self,
        report: &ApplyReport,
        plan: &Plan,
        completion: Completion,
        sources: Option<&FieldSources<'_>>,
        unread: &[Location],
    ) -> Result<ExitStatus, CliError> {
        self.fail_on(report, sources)?;
        if plan.flags.destroy && !unread.is_empty() {
            return Err(CliError::DestroyIncomplete {
                destroyed: Counts::of(report).destroy,
                unread: unread.to_vec(),
            });
        }
        self.view.completed(plan, completion);
        Ok(ExitStatus::Success)
    }

    /// Prints the report's failures (with `sources`, each field an API error names where the
    /// configuration writes it) and ends the run with an error if it was interrupted or an
    /// action failed.
    fn fail_on(
        &self,
        report: &ApplyReport,
        sources: Option<&FieldSources<'_>>,
    ) -> Result<(), CliError> {
        let failed: Vec<_> = report.failed().collect();
        for outcome in &failed {
            if let Err(err) = &outcome.result
                && !matches!(err, ExecError::Cancelled)
            {
                let violations = sources
                    .map(|s| s.violations(&outcome.address, err))
                    .unwrap_or_default();
                let reason = std::iter::once(err.to_string())
                    .chain(violations)
                    .collect::<Vec<_>>()
                    .join("\n  ");
                self.view.error(&CliError::ActionFailed {
                    action: actions::noun(outcome.action),
                    cluster: outcome.address.id().to_string(),
                    reason,
                    hint: crate::hints::exec_hint(err),
                });
            }
            if outcome.remains == Some(Remains::Missing) {
                let id = outcome.address.id();
                self.view.tell(&Note::MissingAfterReplacement {
                    cluster: id.clone(),
                });
            }
        }
        if report.interrupted {
            return Err(CliError::Interrupted);
        }
        if !failed.is_empty() {
            return Err(CliError::ActionsFailed {
                failed: failed.len(),
                total: report.outcomes.len(),
            });
        }
        Ok(())
    }

    /// After creates and updates that set Slurm settings, asks each cluster's Slurm once whether
    /// its controller still answers, and warns, naming the change, when it does not. The check
    /// runs as soon as the operation ends; a controller that stops later (after the service's
    /// 15-second Slurm sync) is not seen here (docs/commands.md).
    async fn warn_of_silent_controllers(&self, report: &ApplyReport, plan: &Plan) {
        let glance = self.connection.client.for_a_glance();
        let checks = report
            .outcomes
            .iter()
            .filter(|outcome| {
                outcome.result.is_ok() && matches!(outcome.action, Action::Create | Action::Update)
            })
            .filter_map(|outcome| {
                let change = plan.changes.iter().find(|c| c.address == outcome.address)?;
                Some((&outcome.address, change.changed_slurm_setting()?))
            });
        let silent = futures::stream::iter(checks)
            .map(|(address, setting)| {
                let glance = &glance;
                async move {
                    let answer = clusterform_executor::ping(glance, address).await;
                    answer.err().map(|error| (address, setting, error))
                }
            })
            .buffered(SLURM_CHECKS_AT_ONCE)
            .filter_map(std::future::ready)
            .collect::<Vec<_>>()
            .await;
        for (address, setting, error) in silent {
            self.view.tell(&Note::SilentController {
                cluster: address.id().clone(),
                setting: setting.to_string(),
                error: error.to_string(),
            });
        }
    }
}

/// What [`Run::settle_earlier_runs`] did before anything new is sent.
#[derive(Debug, Default)]
pub struct Settled {
    /// What the operations an earlier run left in the journal did, each waited for to its end.
    pub resumed: Counts,
    /// Whether the live clusters may have changed since the plan was made, so that it is
    /// made again.
    pub replan: bool,
}

/// The command that, run again, waits for what an interrupted run of `plan` left running: a
/// destroy's is `destroy` (an `apply` would create its clusters again).
fn rerun(plan: &Plan) -> &'static str {
    if plan.flags.destroy {
        "destroy"
    } else {
        "apply"
    }
}

/// Unchanged clusters that are `PROVISIONING` or `UPDATING`: an operation no journal knows
/// (started, perhaps, by a run killed before it could journal it) is still running on them,
/// and "No changes" is only true once it has ended well.
pub fn still_working<'l>(
    plan: &Plan,
    live: impl IntoIterator<Item = &'l LiveCluster>,
) -> Vec<ClusterChange> {
    busy_with(plan, live, |action| action == Action::NoOp)
}

/// Clusters the plan would change (update, replace, delete, release) while an operation no
/// journal knows is still changing them: planned before that operation ends, they might get
/// the same change a second time. They are only waited for, so they are no-ops here: their
/// progress says "checking… ready", and no count takes them for what the plan would do.
fn changing_under_us<'l>(
    plan: &Plan,
    live: impl IntoIterator<Item = &'l LiveCluster>,
) -> Vec<ClusterChange> {
    let mut changing = busy_with(plan, live, |action| {
        !matches!(action, Action::NoOp | Action::Create)
    });
    for change in &mut changing {
        change.action = Action::NoOp;
    }
    changing
}

/// The changes whose action `selected` picks and whose live cluster is `PROVISIONING` or
/// `UPDATING`. (The busy addresses are gathered first: looking each change up in the whole
/// live set would be quadratic, 100 million comparisons for 10,000 unchanged clusters.)
fn busy_with<'l>(
    plan: &Plan,
    live: impl IntoIterator<Item = &'l LiveCluster>,
    selected: impl Fn(Action) -> bool,
) -> Vec<ClusterChange> {
    let busy: BTreeSet<&ClusterName> = live
        .into_iter()
        .filter(|cluster| {
            cluster
                .cluster
                .cluster_state()
                .is_some_and(ClusterState::is_working)
        })
        .map(|cluster| &cluster.address)
        .collect();
    plan.changes
        .iter()
        .filter(|change| selected(change.action) && busy.contains(&change.address))
        .cloned()
        .collect()
}

/// What a failure's field violations are pointed back to: the configuration the plan was made
/// from, its directory, and the plan whose requests the violations' indexes count in.
struct FieldSources<'a> {
    config: &'a Config,
    plan: &'a Plan,
    dir: &'a Path,
}

impl FieldSources<'_> {
    /// One line per field violation of `error` (a `BadRequest` detail of Google's answer): the
    /// field as the configuration names it, where it is written, and why the service refused
    /// it (`node_pools[gpu].boot_disk.boot_disk_type at main.hcl:23:7: Machine type …`).
    fn violations(&self, address: &ClusterName, error: &ExecError) -> Vec<String> {
        let Some(status) = error.api_status() else {
            return Vec::new();
        };
        let body = self
            .plan
            .changes
            .iter()
            .find(|change| change.address == *address)
            .and_then(|change| change.requests.iter().rev().find_map(|r| r.body()));
        let declared = self
            .config
            .clusters
            .iter()
            .find(|cluster| cluster.name == *address);
        status
            .field_violations()
            .into_iter()
            .map(|violation| {
                let path = body.and_then(|body| paths::of_request_field(&violation.field, body));
                let written = path
                    .as_deref()
                    .zip(declared)
                    .and_then(|(path, cluster)| field_location(self.dir, cluster, path));
                let place = match written {
                    Some(at) => format!(" at {}:{}:{}", at.file.display(), at.line, at.column),
                    None => String::new(),
                };
                let field = path.unwrap_or(violation.field);
                format!("{field}{place}: {}", violation.description)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use clusterform_config::VariableInputs;
    use clusterform_executor::TransportError;

    use super::*;

    /// A 400's field violation (request-order index) is shown with the pool's id and the
    /// `file:line:col` where the configuration writes the field.
    #[test]
    fn a_field_violation_points_at_the_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let text = clusterform_testkit::hcl::seed_file("train01");
        std::fs::write(dir.path().join("main.hcl"), &text).unwrap();
        let config = clusterform_config::load(dir.path(), &VariableInputs::default())
            .unwrap()
            .config;
        let plan = clusterform_planner::plan(&config, &[], &Default::default()).unwrap();
        let address = plan.changes[0].address.clone();
        let body = plan.changes[0].requests[0].body().unwrap();
        let index = body["nodePools"]
            .as_array()
            .unwrap()
            .iter()
            .position(|pool| pool["id"] == "login")
            .unwrap();
        let field =
            format!("model_development_cluster.node_pools[{index}].boot_disk.boot_disk_type");
        let error = ExecError::Transport(TransportError::Api {
            status: Box::new(clusterform_model::Status {
                code: 400,
                message: format!("List of found errors:\t1.Field: {field}; Message: no\t"),
                status: Some("INVALID_ARGUMENT".into()),
                details: vec![serde_json::json!({
                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": [{"field": field, "description": "not on this machine"}]
                })],
            }),
            method: "POST".into(),
            url: "https://x".into(),
        });
        let sources = FieldSources {
            config: &config,
            plan: &plan,
            dir: dir.path(),
        };
        let lines = sources.violations(&address, &error);
        let line = text
            .lines()
            .position(|l| l.contains("boot_disk_type"))
            .unwrap()
            + 1;
        assert_eq!(lines.len(), 1, "{lines:?}");
        let expected = format!("node_pools[login].boot_disk.boot_disk_type at main.hcl:{line}:");
        assert!(lines[0].starts_with(&expected), "{lines:?}");
        assert!(lines[0].ends_with(": not on this machine"), "{lines:?}");
    }
}
