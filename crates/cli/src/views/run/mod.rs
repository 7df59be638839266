//! `apply`'s and `destroy`'s views: the plan, the question, live progress and the summary line
//! for people; or, with `--json`, a stream of JSON events on stdout and nothing else there
//! (`docs/events.md`), ended by the `summary` event whatever the outcome.

pub mod events;
pub mod progress;

use std::sync::{Arc, Mutex};

use clusterform::format::names::ClusterNames;
use clusterform::format::notes::Note;
use clusterform::format::{actions, plan_text, stopped_work};
use clusterform_config::Diagnostic;
use clusterform_executor::{ApplyReport, ProgressSink};
use clusterform_model::JobsByCluster;
use clusterform_model::pricing::PriceList;
use clusterform_planner::{Plan, StoppedWork};
use time::OffsetDateTime;

use self::events::JsonEvents;
use self::progress::ApplyProgress;
use super::{Counts, PlanView};
use crate::error::CliError;
use crate::exit_status::ExitStatus;
use crate::printer::{Printer, Tell};
use crate::prompt;

/// How a run that changes clusters shows itself.
pub trait RunView: PlanView {
    /// The saved plan about to be applied (it was shown when it was made).
    fn saved_plan(&self, plan: &Plan);

    /// Asks whether to carry out `plan`, naming the running work it stops (`stopped`); says so
    /// when the answer is no.
    fn confirm(&self, plan: &Plan, stopped: &[StoppedWork<'_>]) -> Result<bool, CliError>;

    /// Says, for a run nobody is asked in, what running work each change stops: `refused`
    /// when the run stops there (nothing sent), else going ahead (`--allow-disruption`).
    fn stopped_work(&self, stopped: &[StoppedWork<'_>], refused: bool);

    /// Where the engine's progress goes, the clusters named as `names` says.
    fn progress(&self, names: ClusterNames, total: usize) -> Arc<dyn ProgressSink>;

    /// One report of the run: every one counts, earlier runs' operations included.
    fn executed(&self, report: &ApplyReport);

    /// Names the alternatives that won where a create fell back (`report` ran `plan`).
    fn fell_back(&self, plan: &Plan, report: &ApplyReport);

    /// Says that a step of the run ended well.
    fn completed(&self, plan: &Plan, completion: Completion);

    /// The command ended with `result`.
    fn ended(&self, result: &Result<ExitStatus, CliError>);
}

/// What ended well.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// The plan (with the operations of earlier runs it resumed), which did what `Counts` says.
    Executed(Counts),
    /// Nothing to change, but the earlier operations of unchanged clusters were waited for.
    Settled,
}

/// The view `--json` chooses. The JSON view prints through a printer of its own, which prints
/// results (the events), warnings and errors: never commentary, progress or colour on stdout.
/// `unasked`: nobody is asked to approve the plan (`--auto-approve`, a saved plan), so under
/// `--quiet` the human view prints no plan, which nobody asked for.
pub fn run_view(json: bool, unasked: bool, printer: &Printer) -> Box<dyn RunView> {
    if !json {
        return Box::new(HumanRun {
            printer: *printer,
            shows_plan: !(unasked && printer.is_quiet()),
        });
    }
    let printer = printer.for_events();
    Box::new(JsonRun {
        printer,
        events: Arc::new(JsonEvents::new(printer)),
        counts: Mutex::new(Counts::default()),
    })
}

/// Text for people: the plan, Terraform's question, a line per cluster while it works, a
/// summary line.
struct HumanRun {
    printer: Printer,
    /// Whether the plan is printed: not under `--quiet` when nobody is asked about it.
    shows_plan: bool,
}

impl Tell for HumanRun {
    fn tell(&self, note: &Note) {
        self.printer.tell(note);
    }

    fn configuration_warning(&self, warning: &Diagnostic) {
        self.printer.configuration_warning(warning);
    }
}

impl PlanView for HumanRun {
    fn printer(&self) -> &Printer {
        &self.printer
    }

    fn plan(&self, plan: &Plan, jobs: &JobsByCluster, prices: Option<&PriceList>) {
        if !self.shows_plan {
            return;
        }
        let text = plan_text::render_priced_text(plan, jobs, prices, self.printer.color());
        self.printer.result(&text);
    }

    fn evidence(&self, table: &str) {
        self.printer.result(table);
    }
}

impl RunView for HumanRun {
    fn saved_plan(&self, plan: &Plan) {
        if !plan.has_changes() {
            self.printer.info("The saved plan has no changes.");
        }
    }

    fn confirm(&self, plan: &Plan, stopped: &[StoppedWork<'_>]) -> Result<bool, CliError> {
        let (question, cancelled) = if plan.flags.destroy {
            (
                "Do you really want to destroy these clusters?",
                "Destroy cancelled.",
            )
        } else {
            ("Do you want to perform these actions?", "Apply cancelled.")
        };
        let mut question = question.to_owned();
        for line in stopped_work::question_lines(stopped, OffsetDateTime::now_utc()) {
            question.push_str("\n  ");
            question.push_str(&line);
        }
        let approved = prompt::confirm(&question).map_err(|err| match err {
            CliError::NoTerminalToConfirm if plan.flags.destroy => {
                CliError::NoTerminalToConfirmDestroy {
                    idle_for: plan.flags.idle_for,
                }
            }
            other => other,
        })?;
        if !approved {
            self.printer.info(cancelled);
        }
        Ok(approved)
    }

    fn stopped_work(&self, stopped: &[StoppedWork<'_>], refused: bool) {
        say_stopped_work(&self.printer, stopped, refused);
    }

    fn progress(&self, names: ClusterNames, total: usize) -> Arc<dyn ProgressSink> {
        Arc::new(ApplyProgress::new(self.printer, names, total))
    }

    fn executed(&self, _report: &ApplyReport) {}

    fn fell_back(&self, plan: &Plan, report: &ApplyReport) {
        for (outcome, attempt) in report
            .outcomes
            .iter()
            .filter_map(|outcome| Some((outcome, outcome.fallback_attempt?)))
        {
            let Some(change) = plan.changes.iter().find(|c| c.address == outcome.address) else {
                continue;
            };
            let pools: Vec<String> = change
                .capacity
                .alternatives_at(attempt)
                .into_iter()
                .map(|(pool, alternative)| {
                    format!(
                        "node pool \"{pool}\" runs {}",
                        plan_text::alternative_text(alternative)
                    )
                })
                .collect();
            self.printer.info(&format!(
                "{}: fell back to {attempt}: {}.",
                outcome.address.id(),
                pools.join(", ")
            ));
        }
    }

    fn completed(&self, plan: &Plan, completion: Completion) {
        self.printer.success(&completion_line(plan, completion));
    }

    fn ended(&self, _result: &Result<ExitStatus, CliError>) {}
}

/// `Apply complete! Resources: 1 added, 2 changed, 0 replaced, 0 destroyed.` (and `, 1 released`
/// when a `removed` block released a cluster), `Destroy complete! Resources: 2 destroyed.`, …
fn completion_line(plan: &Plan, completion: Completion) -> String {
    match completion {
        Completion::Settled => {
            "Apply complete! The clusters' earlier operations finished.".to_owned()
        }
        Completion::Executed(counts) if plan.flags.destroy => {
            format!("Destroy complete! Resources: {} destroyed.", counts.destroy)
        }
        Completion::Executed(counts) => {
            let released = match counts.release {
                0 => String::new(),
                n => format!(", {n} released"),
            };
            format!(
                "Apply complete! Resources: {} added, {} changed, {} replaced, {} destroyed{released}.",
                counts.add, counts.change, counts.replace, counts.destroy
            )
        }
    }
}

/// What each change stops, on stderr: an error when the run is `refused`, else a warning that
/// it goes ahead. Neither `--quiet` nor `--json` silences it.
fn say_stopped_work(printer: &Printer, stopped: &[StoppedWork<'_>], refused: bool) {
    let now = OffsetDateTime::now_utc();
    for work in stopped {
        let error = CliError::StopsRunningWork {
            verb: actions::verb(work.change.action),
            cluster: work.change.address.id().to_string(),
            stopped: stopped_work::stopped_text(work, now),
        };
        if refused {
            printer.error(&error);
        } else {
            printer.warn_about_work(&format!("going ahead (--allow-disruption): {error}"));
        }
    }
}

/// JSON events, one per line on stdout.
struct JsonRun {
    printer: Printer,
    events: Arc<JsonEvents>,
    /// What every report of the run did, for the `summary` event.
    counts: Mutex<Counts>,
}

/// Stdout holds the events alone: notes and warnings go to stderr, which `--json` silences
/// only for progress (`docs/events.md`).
impl Tell for JsonRun {
    fn tell(&self, note: &Note) {
        self.printer.tell(note);
    }

    fn configuration_warning(&self, warning: &Diagnostic) {
        self.printer.configuration_warning(warning);
    }
}

impl PlanView for JsonRun {
    fn printer(&self) -> &Printer {
        &self.printer
    }

    fn plan(&self, plan: &Plan, _jobs: &JobsByCluster, _prices: Option<&PriceList>) {
        self.events.planned(plan);
    }

    /// On stderr: stdout holds only events.
    fn evidence(&self, table: &str) {
        self.printer.evidence(table);
    }
}

impl RunView for JsonRun {
    fn saved_plan(&self, plan: &Plan) {
        self.events.planned(plan);
    }

    /// Unreachable through the command line, which refuses `--json` without `--auto-approve`
    /// or a saved plan; never a silent yes.
    fn confirm(&self, _plan: &Plan, _stopped: &[StoppedWork<'_>]) -> Result<bool, CliError> {
        Err(CliError::NoTerminalToConfirm)
    }

    /// An event per change, and its words on stderr, which `--json` never silences.
    fn stopped_work(&self, stopped: &[StoppedWork<'_>], refused: bool) {
        for work in stopped {
            self.events.stopped_work(work, refused);
        }
        say_stopped_work(&self.printer, stopped, refused);
    }

    fn progress(&self, _names: ClusterNames, _total: usize) -> Arc<dyn ProgressSink> {
        self.events.clone()
    }

    fn executed(&self, report: &ApplyReport) {
        self.events.executed(report);
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        *counts = counts.plus(Counts::of(report));
    }

    fn fell_back(&self, _plan: &Plan, _report: &ApplyReport) {}

    fn completed(&self, _plan: &Plan, _completion: Completion) {}

    fn ended(&self, result: &Result<ExitStatus, CliError>) {
        let counts = *self.counts.lock().unwrap_or_else(|e| e.into_inner());
        self.events.summary(result, counts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(destroy: bool) -> Plan {
        let mut plan = clusterform_planner::plan(
            &clusterform_testkit::config(Vec::new()),
            &[],
            &Default::default(),
        )
        .unwrap();
        plan.flags.destroy = destroy;
        plan
    }

    #[test]
    fn summary_lines_count_what_the_plan_did() {
        let counts = Counts {
            add: 1,
            change: 2,
            destroy: 3,
            release: 1,
            ..Counts::default()
        };
        assert_eq!(
            completion_line(&plan(false), Completion::Executed(counts)),
            "Apply complete! Resources: 1 added, 2 changed, 0 replaced, 3 destroyed, 1 released."
        );
        assert_eq!(
            completion_line(&plan(true), Completion::Executed(counts)),
            "Destroy complete! Resources: 3 destroyed."
        );
    }
}
