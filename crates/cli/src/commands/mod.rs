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

use std::process::ExitCode;

use crate::cli::{Cli, Command};
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
pub async fn run(cli: Cli, printer: &Printer) -> Result<ExitStatus, CliError> {
    let global = &cli.global;
    match cli.command {
        Command::Validate(args) => validate::run(global, &args, printer),
        Command::Fmt(args) => fmt::run(global, &args, printer),
        Command::Plan(args) => plan::run(global, &args, printer).await,
        Command::Apply(args) => apply::run(global, &args, printer).await,
        Command::Destroy(args) => destroy::run(global, &args, printer).await,
        Command::Show(args) => show::run(&args, printer),
        Command::List(args) => list::run(global, &args, printer).await,
        Command::Import(args) => import::run(global, &args, printer).await,
        Command::Emulator(args) => emulator::run(&args, printer).await,
        Command::Completions(args) => completions::run(&args, printer),
    }
}
