//! `clusterform emulator`: serves the local API emulator until Ctrl-C.

use clusterform_emulator::Emulator;

use crate::arguments;
use crate::error::CliError;
use crate::exit_status::ExitStatus;
use crate::printer::Printer;

/// Starts the emulator on the validated address (loopback unless `--allow-remote`) and waits.
pub async fn run(args: arguments::Emulator, printer: &Printer) -> Result<ExitStatus, CliError> {
    let emulator = Emulator::new(args.options)?;
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
