//! How each command that has a human and a JSON output shows itself (Terraform's
//! `internal/command/views`): the view is chosen once, from `--json`, when the command starts,
//! and the command never asks which one it has. A view owns the words, the progress sink and
//! the summary; what it prints is rendered by the `clusterform::format` library (plan text, plan
//! JSON, tables) and goes through the one printer.

mod plan;
pub mod run;
mod status;

use clusterform_executor::ApplyReport;
use clusterform_model::Action;

pub use plan::{PlanFormat, PlanView, plan_view, show_drift};
pub use run::{Completion, RunView, run_view};
pub use status::{StatusReport, StatusView, status_view};

/// What a run did, by action: counted here alone, from the engine's reports, for the summary
/// line and the `summary` event.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Clusters created.
    pub add: usize,
    /// Clusters updated in place.
    pub change: usize,
    /// Clusters replaced.
    pub replace: usize,
    /// Clusters deleted.
    pub destroy: usize,
    /// Clusters released from the stack.
    pub release: usize,
    /// Actions that failed or were interrupted.
    pub failed: usize,
}

impl Counts {
    /// The counts of one report.
    pub fn of(report: &ApplyReport) -> Self {
        let mut counts = Self::default();
        for outcome in &report.outcomes {
            match (&outcome.result, outcome.action) {
                (Err(_), _) => counts.failed += 1,
                (Ok(()), Action::Create) => counts.add += 1,
                (Ok(()), Action::Update) => counts.change += 1,
                (Ok(()), Action::Replace) => counts.replace += 1,
                (Ok(()), Action::Delete) => counts.destroy += 1,
                (Ok(()), Action::Release) => counts.release += 1,
                (Ok(()), Action::NoOp) => {}
            }
        }
        counts
    }

    /// These counts and `other`'s together.
    #[must_use]
    pub fn plus(self, other: Self) -> Self {
        Self {
            add: self.add + other.add,
            change: self.change + other.change,
            replace: self.replace + other.replace,
            destroy: self.destroy + other.destroy,
            release: self.release + other.release,
            failed: self.failed + other.failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use clusterform_executor::{ActionOutcome, ExecError};
    use clusterform_model::ClusterName;

    use super::*;

    fn outcome(id: &str, action: Action, result: Result<(), ExecError>) -> ActionOutcome {
        ActionOutcome {
            address: ClusterName::new("acme-ml", "us-central1", id).unwrap(),
            action,
            result,
            live: None,
            fallback_attempt: None,
            remains: None,
            duration: Duration::ZERO,
        }
    }

    #[test]
    fn a_report_counts_what_ended_well_by_action_and_every_failure_once() {
        let report = ApplyReport {
            outcomes: vec![
                outcome("a", Action::Create, Ok(())),
                outcome("b", Action::Create, Ok(())),
                outcome("c", Action::Update, Err(ExecError::Cancelled)),
                outcome("d", Action::Delete, Ok(())),
                outcome("e", Action::NoOp, Ok(())),
                outcome("f", Action::Release, Ok(())),
            ],
            interrupted: true,
            ..ApplyReport::default()
        };
        let counts = Counts::of(&report);
        assert_eq!(
            counts,
            Counts {
                add: 2,
                destroy: 1,
                release: 1,
                failed: 1,
                ..Counts::default()
            }
        );
        assert_eq!(counts.plus(counts).add, 4);
    }
}
