//! One module per command; [`run`] dispatches to them and returns the exit status.

mod apply;
mod completions;
mod destroy;
mod emulator;
mod fmt;
mod force_unlock;
mod import;
mod list;
mod plan;
mod show;
mod status;
mod validate;

use std::process::ExitCode;

use crate::arguments::Arguments;
use crate::error::CliError;
use crate::printer::Printer;

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

/// Runs the command the user asked for.
pub async fn run(arguments: Arguments, printer: &Printer) -> Result<ExitStatus, CliError> {
    match arguments {
        Arguments::Validate(args) => validate::run(&args, printer),
        Arguments::Fmt(args) => fmt::run(&args, printer),
        Arguments::Plan(args) => plan::run(&args, printer).await,
        Arguments::Apply(args) => apply::run(&args, printer).await,
        Arguments::Destroy(args) => destroy::run(&args, printer).await,
        Arguments::Status(args) => status::run(&args, printer).await,
        Arguments::Show(args) => show::run(&args, printer),
        Arguments::List(args) => list::run(&args, printer).await,
        Arguments::Import(args) => import::run(&args, printer).await,
        Arguments::ForceUnlock(args) => force_unlock::run(&args, printer).await,
        Arguments::Emulator(args) => emulator::run(*args, printer).await,
        Arguments::Completions(shell) => completions::run(shell, printer),
    }
}
