//! Variables files: `clusterform.cfvars` and `*.auto.cfvars` in the configuration directory are
//! loaded automatically, in Terraform's order of precedence, and a variables file misnamed
//! `*.hcl` gets one clear diagnostic instead of being read as configuration.

use clusterform_config::{CommandLineReason, VariableInputs, load};

use crate::support::{dir_with, find, reason, valid_with};

/// The valid file whose display name is `var.name`, declared without a default.
fn named_by_variable() -> String {
    let text = valid_with("  network {", "  display_name = var.name\n  network {");
    format!("variable \"name\" {{\n  type = string\n}}\n{text}")
}

fn display_name(files: &[(&str, &str)], inputs: &VariableInputs) -> String {
    let dir = dir_with(files);
    let loaded = load(dir.path(), inputs).unwrap_or_else(|d| panic!("{}", d.render(false)));
    let cluster = &loaded.config.clusters[0].cluster;
    cluster.display_name.clone().unwrap()
}

#[test]
fn clusterform_cfvars_is_loaded_automatically() {
    let main = named_by_variable();
    let files = [
        ("main.hcl", main.as_str()),
        ("clusterform.cfvars", "name = \"from-default-file\"\n"),
    ];
    assert_eq!(
        display_name(&files, &VariableInputs::default()),
        "from-default-file"
    );
}

#[test]
fn other_cfvars_files_are_not_loaded_automatically() {
    let main = named_by_variable();
    let dir = dir_with(&[("main.hcl", &main), ("prod.cfvars", "name = \"prod\"\n")]);
    let diagnostics = load(dir.path(), &VariableInputs::default()).unwrap_err();
    let missing: Vec<_> = diagnostics
        .missing_variables
        .iter()
        .map(|v| &v.name)
        .collect();
    assert_eq!(missing, ["name"]);
}

#[test]
fn precedence_is_terraforms() {
    let main = named_by_variable();
    let dir = dir_with(&[
        ("main.hcl", &main),
        ("clusterform.cfvars", "name = \"default-file\"\n"),
        ("a.auto.cfvars", "name = \"auto-a\"\n"),
        ("b.auto.cfvars", "name = \"auto-b\"\n"),
        ("given.cfvars", "name = \"var-file\"\n"),
    ]);
    let value = |inputs: &VariableInputs| {
        let loaded = load(dir.path(), inputs).unwrap_or_else(|d| panic!("{}", d.render(false)));
        loaded.config.clusters[0]
            .cluster
            .display_name
            .clone()
            .unwrap()
    };
    let env = VariableInputs {
        env: [("name".to_owned(), "env".to_owned())].into(),
        ..VariableInputs::default()
    };
    // The last *.auto.cfvars in name order beats clusterform.cfvars and the environment.
    assert_eq!(value(&env), "auto-b");
    let with_file = VariableInputs {
        files: vec![dir.path().join("given.cfvars")],
        ..env.clone()
    };
    assert_eq!(value(&with_file), "var-file");
    let with_flag = VariableInputs {
        cli: vec![("name".to_owned(), "flag".to_owned())],
        ..with_file
    };
    assert_eq!(value(&with_flag), "flag");
    std::fs::remove_file(dir.path().join("a.auto.cfvars")).unwrap();
    std::fs::remove_file(dir.path().join("b.auto.cfvars")).unwrap();
    assert_eq!(value(&env), "default-file");
    std::fs::remove_file(dir.path().join("clusterform.cfvars")).unwrap();
    assert_eq!(value(&env), "env");
}

#[test]
fn a_variables_file_named_hcl_is_reported_as_misnamed() {
    let main = named_by_variable();
    let dir = dir_with(&[("main.hcl", &main), ("values.hcl", "name = \"x\"\n")]);
    let diagnostics = load(dir.path(), &VariableInputs::default()).unwrap_err();
    assert!(
        diagnostics.missing_variables.is_empty(),
        "no prompt for values the misnamed file holds"
    );
    assert_eq!(diagnostics.items.len(), 1, "{}", diagnostics.render(false));
    assert_eq!(
        reason(&diagnostics, "variables file"),
        Some(CommandLineReason::MisnamedVarFile)
    );
    insta::assert_snapshot!(find(&diagnostics, "variables file"), @r#"
     × `values.hcl` looks like a variables file: rename it to `values.cfvars`
      ╭─[values.hcl:1:1]
    1 │ name = "x"
      · ────
      ╰────
    "#);
}

#[test]
fn top_level_attributes_that_are_not_variables_stay_errors() {
    let main = named_by_variable();
    let dir = dir_with(&[
        ("main.hcl", &main),
        ("stray.hcl", "name = \"x\"\nzone = \"y\"\n"),
    ]);
    let diagnostics = load(dir.path(), &VariableInputs::default()).unwrap_err();
    insta::assert_snapshot!(find(&diagnostics, "unexpected attribute"), @r#"
      × unexpected attribute `name` at the top level
       ╭─[stray.hcl:1:1]
     1 │ name = "x"
       · ────
     2 │ zone = "y"
       ╰────
      help: attributes belong inside a block such as `locals { ... }`
    "#);
}
