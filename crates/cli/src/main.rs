//! The `clusterform` binary: parses the command line, runs one command, and turns its outcome
//! into an exit status. Everything it does is in the library crates and in [`commands`]; all
//! output goes through the one [`printer::Printer`].

mod arguments;
mod cli;
mod commands;
mod context;
mod diagnostics;
mod environment;
mod error;
mod exit_status;
mod hints;
mod interrupt_signal;
mod local_emulator;
mod printer;
mod prompt;
mod stack_lock;
mod views;
mod workflow;

use std::process::ExitCode;

use clap::Parser;

use crate::arguments::Arguments;
use crate::cli::Cli;
use crate::printer::Printer;

fn main() -> ExitCode {
    let argv = arguments::terraform_spellings(std::env::args_os());
    let no_color = argv.iter().any(|arg| arg == "--no-color");
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(error) => return usage_error(&argv, &error, no_color),
    };
    let printer = Printer::new(&cli.global);
    init_tracing(cli.global.verbose, printer.stderr_color());
    let arguments = match Arguments::from_cli(cli) {
        Ok(arguments) => arguments,
        Err(err) => {
            printer.error(&err);
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            printer.error(&error::CliError::Runtime(err));
            return ExitCode::FAILURE;
        }
    };
    let dir = arguments.config_dir().map(std::path::Path::to_path_buf);
    match runtime.block_on(commands::run(arguments, &printer)) {
        Ok(status) => status.into(),
        Err(err) => {
            printer.error_in(&err, dir.as_deref());
            ExitCode::FAILURE
        }
    }
}

/// Only clusterform's own crates log by default (dependencies such as gcp_auth warn about
/// every credential they try); `-v` shows their debug logs, `-vv` everything, and `RUST_LOG`
/// overrides. Logs go to stderr through the printer (above any progress bars), coloured only
/// when the printer colours stderr (a terminal, no `--no-color`, no `NO_COLOR`), so that a log
/// piped into a file has no escape codes.
fn init_tracing(verbose: u8, color: bool) {
    let default = match verbose {
        0 => "off,clusterform=warn,clusterform_executor=warn,clusterform_emulator=warn",
        1 => "off,clusterform=debug,clusterform_executor=debug,clusterform_emulator=info",
        // Everyone's debug lines (connections, TLS), and the bodies of our requests.
        _ => "debug,clusterform_executor=trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(printer::LogWriter)
        .with_ansi(color)
        .with_target(false)
        .init();
}

/// A command line clap refused: the error on stderr and exit 1, as Terraform does, so that a
/// CI script never reads a typo as `--detailed-exitcode`'s "changes present" (2). `--help` and
/// `--version` are answers, printed to stdout with exit 0. Only `--no-color` of the global
/// flags can matter here, and clap could not say whether it was given: it is looked up in
/// the words of the command line.
fn usage_error(argv: &[std::ffi::OsString], error: &clap::Error, no_color: bool) -> ExitCode {
    let global = cli::GlobalArgs {
        no_color,
        verbose: 0,
        quiet: false,
    };
    let printer = Printer::new(&global);
    if let Some(refusal) = arguments::terraform_only_flag(argv) {
        printer.error(&error::CliError::Usage(refusal));
        return ExitCode::FAILURE;
    }
    if let Some(elsewhere) = arguments::flag_of_other_commands(argv, error) {
        printer.error(&error::CliError::Usage(elsewhere));
        return ExitCode::FAILURE;
    }
    printer.usage_error(error);
    if error.use_stderr() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
