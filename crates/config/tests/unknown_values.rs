//! `validate` without variable values: a variable without one is unknown, never missing, and
//! what depends on it is not evaluated; everything else is checked as by `load`.

use clusterform_config::{VariableInputs, load, validate};

use crate::support::{dir_with, find, valid_with};

/// The valid file with its project, zone, node count and label taken from variables without
/// defaults (the count through a local and arithmetic), plus `extra` lines in the cluster.
fn with_unknowns(extra: &str) -> String {
    let text = valid_with("  network {", &format!("{extra}  network {{"))
        .replace("project = \"my-proj\"", "project = var.project")
        .replace("max_node_count = 4", "max_node_count = local.pool_size + 1")
        .replace(
            "zone = \"us-central1-a\"\n  }\n  orchestrator_spec",
            "zone = \"${var.zone}\"\n  }\n  orchestrator_spec",
        );
    format!(
        "variable \"project\" {{\n  type = string\n}}\nvariable \"pool_size\" {{\n  type = number\n}}\nvariable \"zone\" {{\n  type = string\n}}\nlocals {{\n  pool_size = var.pool_size * 2\n}}\n{text}"
    )
}

#[test]
fn unknown_variables_are_neither_missing_nor_errors() {
    let dir = dir_with(&[("main.hcl", &with_unknowns(""))]);
    let validated = validate(dir.path(), &VariableInputs::default())
        .unwrap_or_else(|d| panic!("{}", d.render(false)));
    assert_eq!(validated.clusters, 1);
    assert!(validated.warnings.is_empty(), "{:?}", validated.warnings);
}

#[test]
fn plan_and_apply_still_need_the_values() {
    let dir = dir_with(&[("main.hcl", &with_unknowns(""))]);
    let diagnostics = load(dir.path(), &VariableInputs::default()).unwrap_err();
    let missing: Vec<_> = diagnostics
        .missing_variables
        .iter()
        .map(|v| v.name.as_str())
        .collect();
    assert_eq!(missing, ["project", "pool_size", "zone"]);
}

#[test]
fn problems_that_do_not_depend_on_unknowns_are_still_reported() {
    let dir = dir_with(&[(
        "main.hcl",
        &with_unknowns("  display_name = 3 % 0\n  netwrk = var.project\n"),
    )]);
    let diagnostics = validate(dir.path(), &VariableInputs::default()).unwrap_err();
    assert!(diagnostics.missing_variables.is_empty());
    assert_eq!(diagnostics.items.len(), 2, "{}", diagnostics.render(false));
    insta::assert_snapshot!(find(&diagnostics, "modulo"), @r#"
      × modulo by zero: `3 % 0`
        ╭─[main.hcl:21:18]
     20 │ cluster "train01" {
     21 │   display_name = 3 % 0
        ·                  ─────
     22 │   netwrk = var.project
        ╰────
    "#);
}

#[test]
fn given_values_are_still_checked() {
    let dir = dir_with(&[("main.hcl", &with_unknowns(""))]);
    let inputs = VariableInputs {
        cli: vec![("pool_size".to_owned(), "many".to_owned())],
        ..VariableInputs::default()
    };
    let diagnostics = validate(dir.path(), &inputs).unwrap_err();
    insta::assert_snapshot!(find(&diagnostics, "pool_size"), @r"
    <command line>

      × invalid value for variable `pool_size` from --var pool_size=...: expected a number, found
      │ `many`
      help: the variable's type is number
    ");
}
