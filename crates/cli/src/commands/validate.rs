//! `clusterform validate`: offline checks of the configuration, as text or JSON; either way a
//! file is named by its path from the working directory.

use serde_json::json;

use crate::arguments::Validate;
use crate::commands::ExitStatus;
use crate::context;
use crate::diagnostics;
use crate::error::CliError;
use crate::printer::Printer;

/// Loads the configuration and reports every problem; exit 1 on any error.
pub fn run(args: &Validate, printer: &Printer) -> Result<ExitStatus, CliError> {
    let dir = &args.dir;
    if !args.json {
        let config = context::load_config(dir, &args.variables, printer)?;
        printer.success(&format!(
            "Success! The configuration is valid ({} cluster{}).",
            config.clusters.len(),
            if config.clusters.len() == 1 { "" } else { "s" }
        ));
        return Ok(ExitStatus::Success);
    }
    let inputs = context::variable_inputs(&args.variables)?;
    let var_files = &args.variables.files;
    match clusterform_config::load(dir, &inputs) {
        Ok(loaded) => {
            let warnings: Vec<_> = loaded
                .warnings
                .into_iter()
                .map(|warning| diagnostics::located_warning(warning, dir, var_files))
                .collect();
            let report = json!({"valid": true, "diagnostics": warnings});
            printer.result(&pretty(&report));
            Ok(ExitStatus::Success)
        }
        Err(found) => {
            let found = diagnostics::located(found, dir, var_files);
            let report = json!({"valid": false, "diagnostics": found.items});
            printer.result(&pretty(&report));
            Err(CliError::AlreadyReported)
        }
    }
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}
