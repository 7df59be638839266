//! `clusterform emulator`: serves the local API emulator until Ctrl-C.

use clusterform_emulator::Emulator;

use crate::arguments;
use crate::error::CliError;
use crate::exit_status::ExitStatus;
use crate::interrupt_signal;
use crate::printer::Printer;

/// What a client of the emulator sets as its token: any, unless `--token` asks for one.
fn token_advice(required: Option<&str>) -> String {
    match required {
        None => "It accepts any token: export CLUSTERFORM_ACCESS_TOKEN=anything".to_owned(),
        Some(_) => {
            "It accepts only the --token it was given: export CLUSTERFORM_ACCESS_TOKEN=<that token>"
                .to_owned()
        }
    }
}

/// The variables that send preflight's reads to the emulator too: an API endpoint never
/// redirects them.
fn preflight_advice(base: &str) -> String {
    let variables: Vec<String> = clusterform_executor::emulator_preflight_variables(base)
        .into_iter()
        .map(|(variable, value)| format!("{variable}={value}"))
        .collect();
    format!(
        "Preflight's reads go to it with: export {}",
        variables.join(" ")
    )
}

/// Starts the emulator on the validated address (loopback unless `--allow-remote`) and waits.
pub async fn run(args: arguments::Emulator, printer: &Printer) -> Result<ExitStatus, CliError> {
    let advice = token_advice(args.options.required_token.as_deref());
    // Before serving: a client may connect, and the user press Ctrl-C, at once.
    let interrupted = interrupt_signal::next_ctrl_c();
    let emulator = Emulator::new(args.options)?;
    let handle = emulator.serve(args.listen).await?;
    printer.info(&format!(
        "Emulator listening on {} (Ctrl-C to stop)",
        handle.base_url()
    ));
    printer.info(&advice);
    printer.info(&preflight_advice(&handle.base_url()));
    interrupted.await.map_err(CliError::Runtime)?;
    handle.shutdown().await;
    printer.info("Emulator stopped.");
    Ok(ExitStatus::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_banner_sends_each_read_of_preflight_where_the_emulator_serves_it() {
        assert_eq!(
            preflight_advice("http://127.0.0.1:8089"),
            "Preflight's reads go to it with: export \
             CLUSTERFORM_COMPUTE_ENDPOINT=http://127.0.0.1:8089 \
             CLUSTERFORM_SERVICE_USAGE_ENDPOINT=http://127.0.0.1:8089/serviceusage \
             CLUSTERFORM_FILESTORE_ENDPOINT=http://127.0.0.1:8089/file \
             CLUSTERFORM_LUSTRE_ENDPOINT=http://127.0.0.1:8089/lustre \
             CLUSTERFORM_RESOURCE_MANAGER_ENDPOINT=http://127.0.0.1:8089/cloudresourcemanager \
             CLUSTERFORM_IAM_ENDPOINT=http://127.0.0.1:8089/iam \
             CLUSTERFORM_STORAGE_ENDPOINT=http://127.0.0.1:8089"
        );
    }
}
