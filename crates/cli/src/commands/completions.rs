//! `clusterform completions SHELL`: shell completion scripts generated from the clap model.

use clap::CommandFactory;

use crate::cli::Cli;
use crate::error::CliError;
use crate::exit_status::ExitStatus;
use crate::printer::Printer;

/// Prints the completion script for one shell.
pub fn run(shell: clap_complete::Shell, printer: &Printer) -> Result<ExitStatus, CliError> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "clusterform", &mut script);
    printer.result(&String::from_utf8_lossy(&script));
    Ok(ExitStatus::Success)
}
