//! `clusterform version`: what `--version` prints, as Terraform's `version` command, and with
//! `--json` the plan file format this build writes, for scripts that keep plans between runs.

use clusterform_planner::PLAN_FORMAT_VERSION;
use serde_json::json;

use crate::exit_status::ExitStatus;
use crate::printer::Printer;

/// This build's version.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Prints the version on stdout.
pub fn run(json: bool, printer: &Printer) -> ExitStatus {
    printer.result(&text(json));
    ExitStatus::Success
}

fn text(json: bool) -> String {
    if json {
        json!({
            "clusterform_version": VERSION,
            "plan_format_version": PLAN_FORMAT_VERSION,
        })
        .to_string()
    } else {
        format!("clusterform {VERSION}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_matches_dash_dash_version_and_the_json_names_the_plan_format() {
        assert_eq!(
            text(false),
            format!("clusterform {}", env!("CARGO_PKG_VERSION"))
        );
        let value: serde_json::Value = serde_json::from_str(&text(true)).unwrap();
        assert_eq!(value["clusterform_version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(value["plan_format_version"], PLAN_FORMAT_VERSION);
    }
}
