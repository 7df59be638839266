//! `clusterform emulator`: serves the local API emulator until Ctrl-C.

use std::time::Duration;

use clusterform_emulator::{Emulator, EmulatorOptions, FaultSpec};

use crate::cli::EmulatorArgs;
use crate::commands::ExitStatus;
use crate::error::CliError;
use crate::printer::Printer;

/// Starts the emulator on loopback (or, with `--allow-remote`, anywhere) and waits.
pub async fn run(args: &EmulatorArgs, printer: &Printer) -> Result<ExitStatus, CliError> {
    if !args.listen.ip().is_loopback() && !args.allow_remote {
        return Err(CliError::Usage(format!(
            "refusing to listen on {}: the emulator accepts any token; use a loopback address or --allow-remote",
            args.listen
        )));
    }
    if !args.op_seconds.is_finite() || args.op_seconds < 0.0 {
        return Err(CliError::Usage(
            "--op-seconds must be a non-negative number".into(),
        ));
    }
    let faults = match &args.faults {
        Some(spec) => spec
            .parse::<FaultSpec>()
            .map_err(|err| CliError::Usage(format!("--faults: {err}")))?,
        None => FaultSpec::default(),
    };
    let options = EmulatorOptions {
        operation_duration: Duration::from_secs_f64(args.op_seconds),
        latency: Duration::from_millis(args.latency_ms),
        faults,
        required_token: args.token.clone(),
        state_file: args.state.clone(),
        project_numbers: args.project_numbers,
        ..EmulatorOptions::default()
    };
    let emulator = Emulator::new(options)?;
    let handle = emulator.serve(args.listen).await?;
    printer.info(&format!(
        "Emulator listening on {} (Ctrl-C to stop)",
        handle.base_url()
    ));
    tokio::signal::ctrl_c().await.map_err(CliError::Runtime)?;
    handle.shutdown().await;
    printer.info("Emulator stopped.");
    Ok(ExitStatus::Success)
}
