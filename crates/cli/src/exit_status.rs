//! How a command that did not fail ends: its exit status, as Terraform's conventions give it.

use std::process::ExitCode;

/// How a successful command ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Exit 0.
    Success,
    /// Exit 2: `plan --detailed-exitcode` found changes.
    Changes,
    /// Exit 2: `status --detailed-exitcode` found something that needs attention.
    NeedsAttention,
    /// Exit 1: the user declined the confirmation, so nothing was done (as Terraform does: a
    /// script must not read a declined apply as a successful one).
    Declined,
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> Self {
        match status {
            ExitStatus::Success => ExitCode::SUCCESS,
            ExitStatus::Changes | ExitStatus::NeedsAttention => ExitCode::from(2),
            ExitStatus::Declined => ExitCode::FAILURE,
        }
    }
}
