//! `validate` as CI runs it: without variable values (they are unknown, never missing, never
//! prompted for), while `plan` still requires them; and a variables file misnamed `*.hcl`.

use crate::support::{Env, examples_dir, stderr};

#[test]
fn validate_needs_no_variable_values_and_plan_does() {
    let env = Env::new(50);
    // gpu-a4 declares `project` and `reservation` without defaults.
    let example = examples_dir().join("gpu-a4");
    let example = example.to_str().unwrap();
    insta::assert_snapshot!(env.transcript(&["validate", example]), @"
    [stderr]
    Success! The configuration is valid (1 cluster).
    ");
    let json = env.run(&["validate", "--json", example]);
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        report,
        serde_json::json!({"valid": true, "diagnostics": []})
    );
    insta::assert_snapshot!(env.transcript(&["plan", example]), @r#"
    [stderr]
    Error: no value for variable `project`
       ╭─[[EXAMPLES]/gpu-a4/main.hcl:5:1]
     4 │ 
     5 │ variable "project" {
       · ──────────────────
     6 │   type        = string
       ╰────
      hint: pass `--var project=VALUE`, set CLUSTERFORM_VAR_project, add `project = VALUE` to clusterform.cfvars or a --var-file, or give it a default

    Error: no value for variable `reservation`
        ╭─[[EXAMPLES]/gpu-a4/main.hcl:15:1]
     14 │ 
     15 │ variable "reservation" {
        · ──────────────────────
     16 │   type        = string
        ╰────
      hint: pass `--var reservation=VALUE`, set CLUSTERFORM_VAR_reservation, add `reservation = VALUE` to clusterform.cfvars or a --var-file, or give it a default
    [exit status: 1]
    "#);
}

#[test]
fn validate_reports_a_variable_whose_declared_type_never_fits_where_it_is_used() {
    let env = Env::new(50);
    let example = examples_dir().join("cpu-cluster");
    std::fs::copy(example.join("main.hcl"), env.path().join("main.hcl")).unwrap();
    let variables = std::fs::read_to_string(example.join("variables.hcl"))
        .unwrap()
        .replacen("type        = string", "type        = list(string)", 1);
    std::fs::write(env.path().join("variables.hcl"), variables).unwrap();
    let output = env.run(&["validate", "--json"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let messages: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        messages,
        ["wrong value for `project`: expected a string, found a value of type `list(string)`"]
    );
    assert_eq!(report["diagnostics"][0]["file"], "main.hcl");
    assert_eq!(report["diagnostics"][0]["line"], 5);
}

#[test]
fn a_variables_file_named_hcl_is_reported_as_misnamed() {
    let env = Env::new(50);
    let example = examples_dir().join("cpu-cluster");
    for file in ["main.hcl", "variables.hcl"] {
        std::fs::copy(example.join(file), env.path().join(file)).unwrap();
    }
    std::fs::write(env.path().join("values.hcl"), "project = \"acme-ml\"\n").unwrap();
    insta::assert_snapshot!(env.transcript(&["validate"]), @r#"
    [stderr]
    Error: `values.hcl` looks like a variables file: rename it to `values.cfvars`
       ╭─[values.hcl:1:1]
     1 │ project = "acme-ml"
       · ───────
       ╰────
      hint: every *.hcl file is read as configuration; variables files are named *.cfvars: clusterform.cfvars and *.auto.cfvars in the configuration directory are loaded automatically, any other with --var-file
    [exit status: 1]
    "#);
    std::fs::rename(
        env.path().join("values.hcl"),
        env.path().join("clusterform.cfvars"),
    )
    .unwrap();
    let plan = env.run(&["plan"]);
    assert_eq!(
        plan.status.code(),
        Some(0),
        "clusterform.cfvars gives the project: {}",
        stderr(&plan)
    );
}

#[test]
fn every_example_validates_without_variables() {
    let env = Env::new(50);
    let mut validated = 0;
    for entry in std::fs::read_dir(examples_dir()).unwrap() {
        let example = entry.unwrap().path();
        if !example.is_dir() {
            continue;
        }
        let out = env.run(&["validate", example.to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            example.display(),
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("Success! The configuration is valid"),
            "{}: {}",
            example.display(),
            stderr(&out)
        );
        validated += 1;
    }
    assert!(validated >= 6, "only {validated} examples found");
}

/// Two copies of an example with one hard-coded `stack` would each plan the other's clusters
/// away: every example that sets one says so where it is set.
#[test]
fn every_example_that_sets_a_stack_warns_copies_to_change_it() {
    for entry in std::fs::read_dir(examples_dir()).unwrap() {
        let main = entry.unwrap().path().join("main.hcl");
        let Ok(text) = std::fs::read_to_string(&main) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        for (index, line) in lines.iter().enumerate() {
            if line.trim_start().starts_with("stack ") {
                let above = lines[..index].join("\n");
                assert!(
                    above.ends_with("the two copies plan each other's clusters away."),
                    "{}:{}: no comment above `stack`",
                    main.display(),
                    index + 1
                );
            }
        }
    }
}
