//! One module per command; [`run`] dispatches to them and returns the exit status.

mod apply;
mod completions;
mod destroy;
mod emulator;
mod fmt;
mod import;
mod list;
mod plan;
mod show;
mod validate;

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clusterform_executor::{ExecError, LockInfo, RunLock};

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
    /// Exit 1: the user declined the confirmation, so nothing was done (as Terraform does: a
    /// script must not read a declined apply as a successful one).
    Declined,
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> Self {
        match status {
            ExitStatus::Success => ExitCode::SUCCESS,
            ExitStatus::Changes => ExitCode::from(2),
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
        Arguments::Show(args) => show::run(&args, printer),
        Arguments::List(args) => list::run(&args, printer).await,
        Arguments::Import(args) => import::run(&args, printer).await,
        Arguments::Emulator(args) => emulator::run(args, printer).await,
        Arguments::Completions(shell) => completions::run(shell, printer),
    }
}

/// Takes the run lock of `dir` for `command`, waiting up to `timeout` (`--lock-timeout`) for
/// another run to release it, and saying so when it has to wait. The wait blocks the thread:
/// nothing else of the command runs before it holds the lock.
pub fn take_lock(
    dir: &Path,
    command: &str,
    timeout: Duration,
    printer: &Printer,
) -> Result<RunLock, CliError> {
    let holder = LockInfo::for_this_process(command, env!("CARGO_PKG_VERSION"));
    match RunLock::acquire(dir, holder.clone()) {
        Err(ExecError::Locked {
            holder: held_by, ..
        }) if !timeout.is_zero() => {
            let who =
                held_by.map_or_else(|| "another clusterform run".to_owned(), |h| h.to_string());
            printer.info(&format!(
                "Waiting up to {} for the lock, held by {who}…",
                clusterform_model::duration::Seconds::from(timeout).to_units(2)
            ));
            Ok(RunLock::acquire_within(dir, holder, timeout)?)
        }
        taken => Ok(taken?),
    }
}
