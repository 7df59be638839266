//! The language: variables and their sources, types, locals, functions, for_each, sensitive
//! values, timeouts and lifecycle.

use clusterform_config::{CommandLineReason, Severity, VariableInputs};
use clusterform_model::paths::IgnorePath;

use crate::support::{
    CLUSTER_BODY, PROVIDER, dir_with, failure, find, load_text, load_with, reason, valid_with,
};

/// A file whose cluster's display_name is `expr`, with extra top-level `prelude`.
fn display_name(prelude: &str, expr: &str) -> String {
    let text = format!(
        "{prelude}\n{PROVIDER}\ncluster \"train01\" {{\n  display_name = {expr}\n{CLUSTER_BODY}}}\n"
    );
    match load_text(&text) {
        Ok(loaded) => loaded.config.clusters[0]
            .cluster
            .display_name
            .clone()
            .unwrap_or_default(),
        Err(diagnostics) => panic!("{}", diagnostics.render(false)),
    }
}

#[test]
fn every_function() {
    let cases = [
        (r#"format("%s-%d", "a", 2)"#, "a-2"),
        (r#"join(",", ["a", "b"], ["c"])"#, "a,b,c"),
        (r#"join("|", split(".", "a.b"))"#, "a|b"),
        (r#"lower("AbC")"#, "abc"),
        (r#"upper("abc")"#, "ABC"),
        (r#"replace("a-b-c", "-", "_")"#, "a_b_c"),
        (r#"join(",", concat(["a"], ["b"]))"#, "a,b"),
        (r#"merge({ a = "1" }, { a = "2" }).a"#, "2"),
        (r#"tostring(length([1, 2, 3]))"#, "3"),
        (r#"join(",", [for n in range(3) : tostring(n)])"#, "0,1,2"),
        (r#"lookup({ a = "x" }, "b", "fallback")"#, "fallback"),
        (r#"coalesce("", null, "first")"#, "first"),
        (r#"tostring(tonumber("41") + 1)"#, "42"),
        (r#"join(",", toset(["b", "a", "b"]))"#, "b,a"),
        (r#"join(",", tolist(["x", "x"]))"#, "x,x"),
        (r#"true ? "yes" : "no""#, "yes"),
    ];
    for (expr, expected) in cases {
        assert_eq!(display_name("", expr), expected, "{expr}");
    }
}

#[test]
fn file_and_templatefile_resolve_relative_to_the_directory() {
    let text = format!(
        "{PROVIDER}\ncluster \"train01\" {{\n  display_name = templatefile(\"tpl/name.tpl\", {{ team = \"ml\" }})\n{CLUSTER_BODY}}}\n"
    );
    let text = text.replace(
        "      login_node_pool_id     = \"login\"",
        "      login_node_pool_id     = \"login\"\n      prolog_bash_scripts = [file(\"scripts/prolog.sh\")]",
    );
    let dir = dir_with(&[
        ("main.hcl", &text),
        ("tpl/name.tpl", "cluster of ${upper(team)}"),
        ("scripts/prolog.sh", "echo hi\n"),
    ]);
    let loaded = clusterform_config::load(dir.path(), &VariableInputs::default()).unwrap();
    let cluster = &loaded.config.clusters[0].cluster;
    assert_eq!(cluster.display_name.as_deref(), Some("cluster of ML"));
    assert_eq!(
        cluster.slurm_spec().unwrap().prolog_bash_scripts.as_deref(),
        Some(&["echo hi\n".to_owned()][..])
    );
}

#[test]
fn a_missing_file_is_an_error_at_the_call() {
    let text = valid_with(
        "  network {",
        "  display_name = file(\"nope.txt\")\n  network {",
    );
    insta::assert_snapshot!(find(&failure(&text), "nope.txt"));
}

#[test]
fn locals_resolve_in_dependency_order() {
    let prelude = "locals {\n  full = \"${local.first}-${local.second}\"\n  first = \"a\"\n}\nlocals {\n  second = upper(local.first)\n}\n";
    assert_eq!(display_name(prelude, "local.full"), "a-A");
}

#[test]
fn a_locals_cycle_is_named() {
    let prelude = "locals {\n  a = local.b\n  b = local.c\n  c = local.a\n}\n";
    let text = valid_with("  network {", "  display_name = local.a\n  network {");
    let diagnostics = failure(&format!("{prelude}{text}"));
    insta::assert_snapshot!(find(&diagnostics, "cycle"));
    assert_eq!(
        diagnostics
            .items
            .iter()
            .filter(|d| d.message.contains("cycle"))
            .count(),
        1
    );
}

#[test]
fn undefined_variables_and_locals() {
    let text = valid_with(
        "  network {",
        "  display_name = \"${var.nme}${local.zon}\"\n  network {",
    );
    let diagnostics = failure(&format!(
        "variable \"name\" {{\n  default = \"x\"\n}}\nlocals {{\n  zone = \"z\"\n}}\n{text}"
    ));
    insta::assert_snapshot!(find(&diagnostics, "var.nme"));
    insta::assert_snapshot!(find(&diagnostics, "local.zon"));
}

#[test]
fn each_outside_for_each_is_an_error() {
    let text = valid_with("  network {", "  display_name = each.key\n  network {");
    insta::assert_snapshot!(find(&failure(&text), "each"));
}

#[test]
fn unused_variables_are_warnings() {
    let text = format!(
        "variable \"spare\" {{\n  default = 1\n}}\n{}",
        crate::support::valid_file()
    );
    let loaded = load_text(&text).unwrap();
    assert_eq!(loaded.warnings.len(), 1);
    let warning = &loaded.warnings[0];
    assert_eq!(warning.severity, Severity::Warning);
    assert_eq!(
        (warning.line, warning.column, warning.message.as_str()),
        (1, 1, "variable `spare` is declared but never used")
    );
}

const NAME_VARIABLE: &str = "variable \"name\" {\n  type = string\n  default = \"default\"\n}\n";

fn name_with(inputs: &VariableInputs, var_files: &[(&str, &str)]) -> String {
    let text = valid_with("  network {", "  display_name = var.name\n  network {");
    let main = format!("{NAME_VARIABLE}{text}");
    let mut files = vec![("main.hcl", main.as_str())];
    files.extend_from_slice(var_files);
    let dir = dir_with(&files);
    let mut inputs = inputs.clone();
    inputs.files = inputs.files.iter().map(|f| dir.path().join(f)).collect();
    let loaded = clusterform_config::load(dir.path(), &inputs).unwrap();
    loaded.config.clusters[0]
        .cluster
        .display_name
        .clone()
        .unwrap()
}

#[test]
fn variable_precedence_is_env_then_files_then_cli() {
    let mut inputs = VariableInputs::default();
    assert_eq!(name_with(&inputs, &[]), "default");
    inputs.env.insert("name".to_owned(), "from-env".to_owned());
    assert_eq!(name_with(&inputs, &[]), "from-env");
    inputs.files = vec!["a.vars".into(), "b.vars".into()];
    let files = [
        ("a.vars", "name = \"from-a\"\n"),
        ("b.vars", "name = \"from-b\"\n"),
    ];
    assert_eq!(name_with(&inputs, &files), "from-b");
    inputs.cli.push(("name".to_owned(), "from-cli".to_owned()));
    assert_eq!(name_with(&inputs, &files), "from-cli");
}

#[test]
fn typed_variables_convert_cli_text() {
    let prelude = "variable \"count\" {\n  type = number\n}\nvariable \"ids\" {\n  type = list(string)\n}\nvariable \"on\" {\n  type = bool\n}\n";
    let text = valid_with("max_node_count = 4", "max_node_count = var.count")
        .replace("node_pool_ids = [\"cpu\"]", "node_pool_ids = var.ids")
        .replace(
            "  network {",
            "  labels = { on = tostring(var.on) }\n  network {",
        );
    let inputs = VariableInputs {
        cli: vec![
            ("count".to_owned(), "7".to_owned()),
            ("ids".to_owned(), "[\"cpu\"]".to_owned()),
            ("on".to_owned(), "true".to_owned()),
        ],
        ..VariableInputs::default()
    };
    let loaded = load_with(&[("main.hcl", &format!("{prelude}{text}"))], &inputs).unwrap();
    let cluster = &loaded.config.clusters[0].cluster;
    let cpu = cluster.node_pool("cpu").unwrap();
    assert_eq!(cpu.scaling_spec.as_ref().unwrap().max_node_count, Some(7));
    assert_eq!(cluster.label("on"), Some("true"));

    let bad = VariableInputs {
        cli: vec![("count".to_owned(), "seven".to_owned())],
        ..inputs
    };
    let diagnostics = load_with(&[("main.hcl", &format!("{prelude}{text}"))], &bad).unwrap_err();
    insta::assert_snapshot!(find(&diagnostics, "count"));
    assert_eq!(
        reason(&diagnostics, "count"),
        Some(CommandLineReason::InvalidValue {
            variable: "count".into(),
            problem: "expected a number, found `seven`".into(),
        })
    );
}

#[test]
fn a_default_of_the_wrong_type_is_an_error() {
    let text = format!(
        "variable \"n\" {{\n  type = number\n  default = [1]\n}}\n{}",
        crate::support::valid_file()
    );
    insta::assert_snapshot!(find(&failure(&text), "default"));
}

#[test]
fn undeclared_cli_variables_are_errors() {
    let inputs = VariableInputs {
        cli: vec![("nope".to_owned(), "1".to_owned())],
        ..VariableInputs::default()
    };
    let diagnostics =
        load_with(&[("main.hcl", &crate::support::valid_file())], &inputs).unwrap_err();
    insta::assert_snapshot!(find(&diagnostics, "nope"));
    assert_eq!(
        reason(&diagnostics, "nope"),
        Some(CommandLineReason::UndeclaredVariable {
            variable: "nope".into()
        })
    );
}

#[test]
fn sensitive_values_are_tracked() {
    let prelude = "variable \"script\" {\n  sensitive = true\n  default = \"echo secret\"\n}\nlocals {\n  wrapped = \"#!/bin/sh\\n${var.script}\"\n}\n";
    let text = valid_with(
        "zone = \"us-central1-a\"\n  }\n  orch",
        "zone = \"us-central1-a\"\n    startup_script = local.wrapped\n  }\n  orch",
    );
    let loaded = load_text(&format!("{prelude}{text}")).unwrap();
    let paths: Vec<_> = loaded.config.clusters[0]
        .sensitive_paths
        .iter()
        .cloned()
        .collect();
    assert_eq!(paths, ["node_pools[cpu].startup_script"]);
}

#[test]
fn for_each_over_a_set_with_a_derived_id() {
    let text = format!(
        "{PROVIDER}\ncluster \"fleet\" {{\n  for_each = [\"b\", \"a\"]\n  id = \"team${{each.key}}\"\n  display_name = each.value\n{CLUSTER_BODY}}}\n"
    );
    let loaded = load_text(&text).unwrap();
    let ids: Vec<_> = loaded
        .config
        .clusters
        .iter()
        .map(|c| c.name.id().as_str())
        .collect();
    assert_eq!(ids, ["teama", "teamb"]);
    assert_eq!(
        loaded.config.clusters[0].cluster.display_name.as_deref(),
        Some("a")
    );
}

/// Instances are decoded in tasks of a few dozen, each reusing one context for every `each`: a
/// fleet over several tasks, from a local and with a derived `id`, next to a plain block, gives
/// every instance its own `each` and the plain block none.
#[test]
fn every_instance_of_a_large_for_each_sees_its_own_each() {
    let text = format!(
        "locals {{\n  fleet = {{ for n in range(70) : \"n${{n + 100}}\" => {{ size = n }} }}\n}}\n\
         {PROVIDER}\n\
         cluster \"fleet\" {{\n  for_each = local.fleet\n  id = \"c${{each.key}}\"\n  display_name = \"${{each.key}}/${{each.value.size}}\"\n{CLUSTER_BODY}}}\n\
         cluster \"plain\" {{\n  display_name = \"plain\"\n{CLUSTER_BODY}}}\n"
    );
    let loaded = load_text(&text).unwrap_or_else(|d| panic!("{}", d.render(false)));
    let names: Vec<(String, String)> = loaded
        .config
        .clusters
        .iter()
        .map(|c| {
            (
                c.name.id().to_string(),
                c.cluster.display_name.clone().unwrap_or_default(),
            )
        })
        .collect();
    let mut expected: Vec<(String, String)> = (0..70)
        .map(|n| (format!("cn{}", n + 100), format!("n{}/{n}", n + 100)))
        .collect();
    expected.push(("plain".to_owned(), "plain".to_owned()));
    assert_eq!(names, expected);
}

#[test]
fn for_each_needs_a_collection() {
    let text = format!("{PROVIDER}\ncluster \"fleet\" {{\n  for_each = 3\n{CLUSTER_BODY}}}\n");
    insta::assert_snapshot!(find(&failure(&text), "for_each"));
}

#[test]
fn for_each_over_toset_as_its_hint_writes_it() {
    let text = format!(
        "{PROVIDER}\ncluster \"fleet\" {{\n  for_each = toset([\"b\", \"a\", \"b\"])\n{CLUSTER_BODY}}}\n"
    );
    let loaded = load_text(&text).unwrap_or_else(|d| panic!("{}", d.render(false)));
    let ids: Vec<&str> = loaded
        .config
        .clusters
        .iter()
        .map(|c| c.name.id().as_str())
        .collect();
    assert_eq!(ids, ["a", "b"]);
}

#[test]
fn timeouts_and_lifecycle() {
    let text = valid_with(
        "  network {",
        "  timeouts {\n    create = \"90m\"\n    delete = \"2h\"\n  }\n  lifecycle {\n    prevent_destroy = true\n    ignore_changes = [\"labels\"]\n  }\n  network {",
    );
    let loaded = load_text(&text).unwrap();
    let cluster = &loaded.config.clusters[0];
    assert_eq!(cluster.timeouts.create.map(|s| s.0), Some(5400));
    assert_eq!(cluster.timeouts.update, None);
    assert_eq!(cluster.timeouts.delete.map(|s| s.0), Some(7200));
    assert!(cluster.lifecycle.prevent_destroy);
    assert_eq!(
        cluster.lifecycle.ignore_changes,
        ["labels".parse::<IgnorePath>().unwrap()]
    );
    let bad = valid_with(
        "  network {",
        "  timeouts {\n    create = \"soon\"\n  }\n  network {",
    );
    insta::assert_snapshot!(find(&failure(&bad), "timeout"));
}

#[test]
fn cluster_project_and_region_override_the_provider() {
    let text = valid_with(
        "  network {",
        "  project = \"other-project\"\n  region = \"us-east1\"\n  network {",
    )
    .replace("us-central1-a", "us-east1-b");
    let loaded = load_text(&text).unwrap();
    let cluster = &loaded.config.clusters[0];
    assert_eq!(
        (cluster.name.project(), cluster.name.region()),
        ("other-project", "us-east1")
    );
    assert_eq!(loaded.config.locations().len(), 1);
}

#[test]
fn files_are_read_in_name_order_and_the_digest_changes_with_values() {
    let (a, b) = (crate::support::valid_file(), "locals {\n  unused = 1\n}\n");
    let first = load_with(&[("b.hcl", &a), ("a.hcl", b)], &VariableInputs::default()).unwrap();
    let again = load_with(&[("b.hcl", &a), ("a.hcl", b)], &VariableInputs::default()).unwrap();
    assert_eq!(first.config.digest, again.config.digest);
    assert_eq!(first.config.digest.len(), 64);
    let changed = load_with(
        &[
            (
                "b.hcl",
                &a.replace("max_node_count = 4", "max_node_count = 5"),
            ),
            ("a.hcl", b),
        ],
        &VariableInputs::default(),
    )
    .unwrap();
    assert_ne!(first.config.digest, changed.config.digest);
    assert_eq!(
        first.config.clusters[0].location.file,
        std::path::PathBuf::from("b.hcl")
    );
}
