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
mod version;

use crate::arguments::Arguments;
use crate::error::CliError;
use crate::exit_status::ExitStatus;
use crate::printer::Printer;

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
        Arguments::Version { json } => Ok(version::run(json, printer)),
    }
}
