//! The variable values a saved plan records: every declared variable's value comes back from
//! [`Config::variables`], and loading with them as [`VariableInputs::saved`] reproduces the
//! configuration and its digest whatever else is set.

use std::collections::BTreeMap;

use clusterform_config::{CommandLineReason, VariableInputs};
use serde_json::json;

use crate::support::{PROVIDER, load_with, reason};

const FILES: &str = r#"
variable "max_nodes" {
  type    = number
  default = 2
}
variable "zones" {
  type = list(string)
}
"#;

fn inputs(cli: &[(&str, &str)], saved: BTreeMap<String, serde_json::Value>) -> VariableInputs {
    VariableInputs {
        cli: cli
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect(),
        saved,
        ..VariableInputs::default()
    }
}

#[test]
fn every_declared_variable_is_recorded_and_reproduces_the_digest() {
    let files = [("main.hcl", PROVIDER), ("variables.hcl", FILES)];
    let planned = load_with(
        &files,
        &inputs(&[("zones", r#"["a", "b"]"#)], BTreeMap::new()),
    )
    .unwrap()
    .config;
    assert_eq!(
        planned.variables,
        BTreeMap::from([
            ("max_nodes".to_owned(), json!(2)),
            ("zones".to_owned(), json!(["a", "b"])),
        ])
    );
    // The saved values win over a --var given later.
    let applied = load_with(
        &files,
        &inputs(&[("max_nodes", "9")], planned.variables.clone()),
    )
    .unwrap()
    .config;
    assert_eq!(applied.variables, planned.variables);
    assert_eq!(applied.digest, planned.digest);
}

#[test]
fn a_saved_value_of_the_wrong_type_is_refused() {
    let files = [("main.hcl", PROVIDER), ("variables.hcl", FILES)];
    let saved = BTreeMap::from([
        ("max_nodes".to_owned(), json!({"not": "a number"})),
        ("zones".to_owned(), json!(["a"])),
    ]);
    let diagnostics = load_with(&files, &inputs(&[], saved)).unwrap_err();
    let messages: Vec<&str> = diagnostics
        .items
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("invalid value for variable `max_nodes` in the saved plan")),
        "{messages:?}"
    );
    assert_eq!(
        reason(&diagnostics, "in the saved plan"),
        Some(CommandLineReason::InvalidSavedValue)
    );
}
