//! `clusterform validate`: offline checks of the configuration, as text or JSON. As
//! `terraform validate`, it needs no variable values: a variable without one is unknown, so
//! CI can validate without secrets, and it never prompts. Either way a file is named by its
//! path from the working directory.

use serde_json::json;

use crate::arguments::Validate;
use crate::context;
use crate::diagnostics;
use crate::error::CliError;
use crate::exit_status::ExitStatus;
use crate::printer::Printer;

/// Validates the configuration and reports every problem; exit 1 on any error.
pub fn run(args: &Validate, printer: &Printer) -> Result<ExitStatus, CliError> {
    let dir = &args.dir;
    let var_files = &args.variables.files;
    let inputs = context::variable_inputs(&args.variables)?;
    let result = clusterform_config::validate(dir, &inputs);
    let result = result
        .map(|mut validated| {
            validated.warnings = validated
                .warnings
                .into_iter()
                .map(|warning| diagnostics::located_warning(warning, dir, var_files))
                .collect();
            validated
        })
        .map_err(|found| diagnostics::located(found, dir, var_files));
    if args.json {
        return report_json(result, printer);
    }
    let validated = result.map_err(CliError::Diagnostics)?;
    for warning in &validated.warnings {
        printer.warn_diagnostic(warning);
    }
    printer.success(&format!(
        "Success! The configuration is valid ({} cluster{}).",
        validated.clusters,
        if validated.clusters == 1 { "" } else { "s" }
    ));
    Ok(ExitStatus::Success)
}

fn report_json(
    result: Result<clusterform_config::Validated, clusterform_config::Diagnostics>,
    printer: &Printer,
) -> Result<ExitStatus, CliError> {
    match result {
        Ok(validated) => {
            let report = json!({"valid": true, "diagnostics": validated.warnings});
            printer.result(&pretty(&report));
            Ok(ExitStatus::Success)
        }
        Err(found) => {
            let report = json!({"valid": false, "diagnostics": found.items});
            printer.result(&pretty(&report));
            Err(CliError::AlreadyReported)
        }
    }
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}
