//! `validate` without variable values: a variable without one is unknown, never missing, and
//! what depends on it is not evaluated; everything else is checked as by `load`.

use clusterform_config::{CommandLineReason, VariableInputs, load, validate};

use crate::support::{dir_with, find, reason, valid_with};

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
    assert!(matches!(
        reason(&diagnostics, "pool_size"),
        Some(CommandLineReason::InvalidValue { variable, .. }) if variable == "pool_size"
    ));
    insta::assert_snapshot!(find(&diagnostics, "pool_size"), @"
    <command line>

      × invalid value for variable `pool_size` from the command line: expected a number, found `many`
      help: the variable's type is number
    ");
}

/// The valid file with `variables` declared, `cluster_lines` added to the cluster and `top`
/// added after it, validated without values: the messages of its diagnostics (none when valid).
fn validation_messages(variables: &str, cluster_lines: &str, top: &str) -> Vec<String> {
    validation_messages_of(&format!(
        "{variables}\n{}\n{top}",
        valid_with("  network {", &format!("{cluster_lines}  network {{"))
    ))
}

/// The messages of the diagnostics of `text` validated without values (none when valid).
fn validation_messages_of(text: &str) -> Vec<String> {
    let dir = dir_with(&[("main.hcl", text)]);
    match validate(dir.path(), &VariableInputs::default()) {
        Ok(_) => Vec::new(),
        Err(diagnostics) => diagnostics
            .items
            .iter()
            .map(|d| d.message.clone())
            .collect(),
    }
}

#[test]
fn a_declared_type_that_no_attribute_value_fits_is_reported_at_the_reference() {
    let text = valid_with("  network {", "  labels = var.team\n  network {");
    let text = format!("variable \"team\" {{\n  type = string\n}}\n{text}");
    let dir = dir_with(&[("main.hcl", &text)]);
    let diagnostics = validate(dir.path(), &VariableInputs::default()).unwrap_err();
    assert!(diagnostics.missing_variables.is_empty());
    insta::assert_snapshot!(diagnostics.render(false), @r#"
     × wrong value for `labels`: expected a map of strings, found a value of type `string`
       ╭─[main.hcl:12:12]
    11 │ cluster "train01" {
    12 │   labels = var.team
       ·            ────────
    13 │   network {
       ╰────
     help: the value is not known until the variable has one, but no value of the type the variable
           declares fits here
    "#);
}

#[test]
fn declared_types_are_followed_through_locals_indexes_and_parentheses() {
    let variables = "variable \"names\" {\n  type = list(string)\n}\nvariable \"sizes\" {\n  type = map(list(number))\n}\nlocals {\n  names = var.names\n}";
    let messages = validation_messages(
        variables,
        "  display_name = local.names\n  labels = (var.sizes)\n",
        "",
    );
    assert_eq!(
        messages,
        [
            "wrong value for `display_name`: expected a string, found a value of type `list(string)`",
            "wrong value for `labels`: expected a map of strings, found a value of type `map(list(number))`",
        ]
    );
    let fitting = validation_messages(
        variables,
        "  display_name = local.names[0]\n  labels = { team = var.sizes.a[0] }\n",
        "",
    );
    assert_eq!(fitting, Vec::<String>::new());
}

#[test]
fn a_type_some_of_whose_values_fit_is_not_reported() {
    let variables = [
        ("text", "string"),
        ("count", "number"),
        ("flag", "bool"),
        ("anything", "any"),
        ("tags", "map(string)"),
        ("pools", "set(string)"),
    ]
    .map(|(name, ty)| format!("variable \"{name}\" {{\n  type = {ty}\n}}\n"))
    .concat()
        + "variable \"untyped\" {}\n";
    // A string may hold a number; a number or bool reads as a string; `any` and no type say
    // nothing; an expression other than a reference is not typed until known.
    let lines = [
        "  display_name = var.count",
        "  labels = var.tags",
        "  network {\n    network = var.flag\n    subnetwork = var.anything\n  }",
        "  node_pool \"gpu\" {\n    machine_spec {\n      machine_type = var.untyped\n    }\n    scaling_spec {\n      min_node_count = var.text\n      max_node_count = merge(var.tags)\n    }\n    zone = \"us-central1-a\"\n  }",
        "  lifecycle {\n    ignore_changes = var.pools\n  }",
    ]
    .join("\n");
    let text = valid_with(
        "  network {\n    network = \"projects/my-proj/global/networks/default\"\n  }",
        &lines,
    );
    let dir = dir_with(&[("main.hcl", &format!("{variables}{text}"))]);
    if let Err(diagnostics) = validate(dir.path(), &VariableInputs::default()) {
        panic!("{}", diagnostics.render(false));
    }
}

#[test]
fn for_each_provider_lock_and_lifecycle_values_are_type_checked_too() {
    let variables = "variable \"region\" {\n  type = string\n}\nvariable \"zones\" {\n  type = list(number)\n}\nvariable \"projects\" {\n  type = list(string)\n}\nvariable \"protect\" {\n  type = string\n}\nvariable \"buckets\" {\n  type = map(string)\n}";
    let text = valid_with(
        "  stack   = \"research\"\n",
        "  stack   = \"research\"\n  lock \"gcs\" {\n    bucket = var.buckets\n  }\n",
    );
    let text = text.replacen(
        "  network {",
        "  lifecycle {\n    prevent_destroy = var.protect\n  }\n  network {",
        1,
    );
    let messages = validation_messages_of(&format!(
        "{variables}\n{text}\ncluster \"a\" {{\n  for_each = var.region\n}}\ncluster \"b\" {{\n  for_each = var.zones\n}}\ncluster \"c\" {{\n  for_each = {{ x = 1 }}\n  id = var.projects\n}}\nremoved {{\n  cluster = \"old\"\n  project = var.projects\n}}\n"
    ));
    assert_eq!(
        messages,
        [
            "wrong value for `bucket`: expected a string, found a value of type `map(string)`",
            "wrong value for `prevent_destroy`: expected a bool, found a value of type `string`",
            "wrong value for `for_each`: for_each needs a map or a set of strings, found a value of type `string`",
            "wrong value for `for_each`: for_each over a set needs strings, found a value of type `list(number)`",
            "wrong value for `id`: expected a string, found a value of type `list(string)`",
            "wrong value for `project`: expected a string, found a value of type `list(string)`",
        ]
    );
}
