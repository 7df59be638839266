//! A `sensitive = true` variable's value never reaches a diagnostic: whatever form the error
//! takes (a conversion of `--var`, `CLUSTERFORM_VAR_*` or a variables file, arithmetic, a
//! function, indexing, a label check), `validate` prints `(sensitive value)` where the value
//! would be, and the value itself appears neither on stdout nor on stderr.

use crate::support::{ClusterSpec, Env, config, stderr, stdout};

const SECRET: &str = "Hunter2-Secret-Value";

/// The default configuration with a sensitive variable `p` of `ty`, and `uses` (a `labels`
/// line) instead of the cluster's labels.
fn configuration(ty: &str, uses: &str) -> String {
    let variable = format!("variable \"p\" {{\n  type      = {ty}\n  sensitive = true\n}}\n");
    let hcl = config(&[ClusterSpec::default()]);
    let labels = "  labels       = { team = \"ml\" }";
    assert!(hcl.contains(labels), "{hcl}");
    let hcl = hcl.replacen(labels, uses, 1);
    format!("{variable}{hcl}")
}

/// Runs `validate` with `args` (and `env`), asserting that it fails and that the secret is in
/// none of its output; answers its transcript under a `$ case` line.
fn assert_hidden(env: &Env, case: &str, args: &[&str], vars: &[(&str, &str)]) -> String {
    let mut command = env.cmd(&[&["validate"], args].concat());
    for (name, value) in vars {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    let (out, err) = (stdout(&output), stderr(&output));
    assert!(!output.status.success(), "{case}: validate passed\n{err}");
    assert!(
        !out.contains(SECRET) && !err.contains(SECRET),
        "{case}:\n{out}\n{err}"
    );
    assert!(
        !err.contains(&SECRET[..12]),
        "{case}: a part of the value shows\n{err}"
    );
    format!("$ {case}\n{}", env.transcript_of(&output))
}

#[test]
fn no_form_of_error_shows_a_sensitive_value() {
    let env = Env::new(50);
    let var = format!("p={SECRET}");
    let number_use = "  labels = { n = tostring(var.p) }";
    env.write_config(&configuration("number", number_use));
    let mut transcripts = assert_hidden(&env, "--var conversion", &["--var", &var], &[]);
    transcripts += &assert_hidden(
        &env,
        "environment conversion",
        &[],
        &[("CLUSTERFORM_VAR_p", SECRET)],
    );
    std::fs::write(
        env.path().join("secret.cfvars"),
        format!("p = \"{SECRET}\"\n"),
    )
    .unwrap();
    transcripts += &assert_hidden(
        &env,
        "variables file conversion",
        &["--var-file", "secret.cfvars"],
        &[],
    );

    for (case, uses) in [
        ("arithmetic", "  labels = { n = tostring(var.p + 1) }"),
        ("tonumber", "  labels = { n = tostring(tonumber(var.p)) }"),
        ("format", "  labels = { n = format(\"%d\", var.p) }"),
        ("indexing", "  labels = { n = var.p[3] }"),
        ("label check", "  labels = { team = var.p }"),
    ] {
        env.write_config(&configuration("string", uses));
        transcripts += &assert_hidden(&env, case, &["--var", &var], &[]);
    }
    env.write_config(&configuration(
        "map(string)",
        "  labels = { n = lookup(var.p, \"x\") }",
    ));
    let map = format!("p={{ a = \"{SECRET}\" }}");
    transcripts += &assert_hidden(&env, "lookup", &["--var", &map], &[]);
    env.write_config(&configuration(
        "list(number)",
        "  labels = { n = tostring(var.p[0]) }",
    ));
    let list = format!("p=[\"{SECRET}\"]");
    transcripts += &assert_hidden(&env, "list conversion", &["--var", &list], &[]);
    insta::assert_snapshot!(transcripts, @r#"
    $ --var conversion
    [stderr]
    Error: invalid value for variable `p` from --var p=...: (sensitive value) does not fit the variable's type
      at <command line>
      hint: the variable's type is number
    [exit status: 1]
    $ environment conversion
    [stderr]
    Error: invalid value for variable `p` from CLUSTERFORM_VAR_p: (sensitive value) does not fit the variable's type
      at <environment>
      hint: the variable's type is number
    [exit status: 1]
    $ variables file conversion
    [stderr]
    Error: invalid value for variable `p`: (sensitive value) does not fit the variable's type
       ╭─[secret.cfvars:1:5]
     1 │ p = **********************
       ·     ──────────────────────
       ╰────
      hint: the variable's type is number
    [exit status: 1]
    $ arithmetic
    [stderr]
    Error: operator `+` is not applicable to `"(sensitive value)"` and `1`
        ╭─[main.hcl:14:12]
     13 │   display_name = "Research training"
     14 │   labels = { n = tostring(var.p + 1) }
        ·            ───────────────────────────
     15 │ 
        ╰────
    [exit status: 1]
    $ tonumber
    [stderr]
    Error: error calling function `tonumber`: `(sensitive value)` is not a number
        ╭─[main.hcl:14:12]
     13 │   display_name = "Research training"
     14 │   labels = { n = tostring(tonumber(var.p)) }
        ·            ─────────────────────────────────
     15 │ 
        ╰────
    [exit status: 1]
    $ format
    [stderr]
    Error: error calling function `format`: `%d` needs a whole number, not `"(sensitive value)"`
        ╭─[main.hcl:14:12]
     13 │   display_name = "Research training"
     14 │   labels = { n = format("%d", var.p) }
        ·            ───────────────────────────
     15 │ 
        ╰────
    [exit status: 1]
    $ indexing
    [stderr]
    Error: unexpected value `"(sensitive value)"`, expected an array
        ╭─[main.hcl:14:12]
     13 │   display_name = "Research training"
     14 │   labels = { n = var.p[3] }
        ·            ────────────────
     15 │ 
        ╰────
    [exit status: 1]
    $ label check
    [stderr]
    Error: invalid value `(sensitive value)` of label `team`: it may contain only lowercase letters, digits, `_` and `-`
        ╭─[main.hcl:14:12]
     13 │   display_name = "Research training"
     14 │   labels = { team = var.p }
        ·            ────────────────
     15 │ 
        ╰────
      hint: label keys: 1 to 63 lowercase letters (of any script), digits, `_` and `-`, starting with a letter; values: at most 64 of the same
    [exit status: 1]
    $ lookup
    [stderr]
    Error: error calling function `lookup`: no key `x` in the map and no default given
        ╭─[main.hcl:14:12]
     13 │   display_name = "Research training"
     14 │   labels = { n = lookup(var.p, "x") }
        ·            ──────────────────────────
     15 │ 
        ╰────
    [exit status: 1]
    $ list conversion
    [stderr]
    Error: invalid value for variable `p` from --var p=...: (sensitive value) does not fit the variable's type
      at <command line>
      hint: the variable's type is list(number)
    [exit status: 1]
    "#);
}

#[test]
fn the_value_is_named_as_sensitive_where_it_would_be() {
    let env = Env::new(50);
    env.write_config(&configuration("string", "  labels = { team = var.p }"));
    let output = env.run(&["validate", "--var", &format!("p={SECRET}")]);
    assert!(!stderr(&output).contains(SECRET), "{}", stderr(&output));
    insta::assert_snapshot!(env.transcript_of(&output), @r#"
    [stderr]
    Error: invalid value `(sensitive value)` of label `team`: it may contain only lowercase letters, digits, `_` and `-`
        ╭─[main.hcl:14:12]
     13 │   display_name = "Research training"
     14 │   labels = { team = var.p }
        ·            ────────────────
     15 │ 
        ╰────
      hint: label keys: 1 to 63 lowercase letters (of any script), digits, `_` and `-`, starting with a letter; values: at most 64 of the same
    [exit status: 1]
    "#);
}

/// The default configuration after a sensitive variable `p` whose block is `body`.
fn with_sensitive_block(body: &str) -> String {
    let hcl = config(&[ClusterSpec::default()]);
    format!("variable \"p\" {{\n  sensitive = true\n{body}}}\n{hcl}")
}

#[test]
fn a_sensitive_variables_own_default_is_never_quoted() {
    let env = Env::new(50);
    env.write_config(&with_sensitive_block(&format!(
        "  type      = number\n  default   = \"{SECRET}\"\n"
    )));
    let mut transcripts = assert_hidden(&env, "a default of the wrong type", &[], &[]);
    env.write_config(&with_sensitive_block(&format!(
        "  type      = list(string)\n  default   = {{ a = \"{SECRET}\" }}\n"
    )));
    transcripts += &assert_hidden(&env, "a map for a list", &[], &[]);
    // Given on the command line, the default is not the value, yet a snippet of the block
    // quotes its line.
    env.write_config(&with_sensitive_block(&format!(
        "  default   = \"{SECRET}\"\n  description = 5\n"
    )));
    transcripts += &assert_hidden(
        &env,
        "an error beside the default",
        &["--var", "p=other-value"],
        &[],
    );
    insta::assert_snapshot!(transcripts, @r#"
    $ a default of the wrong type
    [stderr]
    Error: invalid default for variable `p`: it is not a number (the value is not shown: the variable is sensitive)
       ╭─[main.hcl:4:15]
     3 │   type      = number
     4 │   default   = **********************
       ·               ──────────────────────
     5 │ }
       ╰────
      hint: a default is a constant of the variable's type
    [exit status: 1]
    $ a map for a list
    [stderr]
    Error: invalid default for variable `p`: it is not a list(string) (the value is not shown: the variable is sensitive)
       ╭─[main.hcl:4:15]
     3 │   type      = list(string)
     4 │   default   = ******************************
       ·               ──────────────────────────────
     5 │ }
       ╰────
      hint: a default is a constant of the variable's type
    [exit status: 1]
    $ an error beside the default
    [stderr]
    Error: --var sets `p`, which no variable block declares
      at <command line>
      hint: declare it with `variable "p" {}`

    Error: `description` of variable `p` must be a literal string
       ╭─[main.hcl:4:17]
     3 │   default   = **********************
     4 │   description = 5
       ·                 ─
     5 │ }
       ╰────
    [exit status: 1]
    "#);
}

#[test]
fn a_server_message_quoting_a_sensitive_value_is_shown_without_it() {
    const MACHINE: &str = "n2-standard-32";
    let env = Env::with_options(clusterform_emulator::EmulatorOptions {
        operation_duration: std::time::Duration::from_millis(100),
        required_token: Some(crate::support::TOKEN.to_owned()),
        capacity_failures: vec![format!("not-allowed:{MACHINE}").parse().unwrap()],
        ..clusterform_emulator::EmulatorOptions::default()
    });
    let hcl = config(&[ClusterSpec::default()]);
    let cpu_machine = "      machine_type = \"n2-standard-8\"\n    }\n    scaling_spec {\n      min_node_count = 0";
    assert!(hcl.contains(cpu_machine), "{hcl}");
    let hcl = hcl.replacen(
        cpu_machine,
        &cpu_machine.replace("\"n2-standard-8\"", "var.machine"),
        1,
    );
    env.write_config(&format!(
        "variable \"machine\" {{\n  sensitive = true\n  default   = \"{MACHINE}\"\n}}\n{hcl}"
    ));
    let human = env.run(&["apply", "--auto-approve"]);
    assert_eq!(human.status.code(), Some(1), "{}", stderr(&human));
    let said = stderr(&human);
    assert!(
        !said.contains(MACHINE) && said.contains("machine type (sensitive value) is not allowed"),
        "{said}"
    );
    let events = env.run(&["destroy", "--auto-approve"]);
    assert!(events.status.success(), "{}", stderr(&events));
    let json = env.run(&["apply", "--auto-approve", "--json"]);
    assert_eq!(json.status.code(), Some(1), "{}", stderr(&json));
    let (out, err) = (stdout(&json), stderr(&json));
    assert!(
        !out.contains(MACHINE) && !err.contains(MACHINE),
        "{out}\n{err}"
    );
    let failed = out
        .lines()
        .find(|line| line.contains("\"type\":\"failed\""))
        .unwrap_or_else(|| panic!("no failed event: {out}"));
    assert!(
        failed.contains("(sensitive value) is not allowed"),
        "{failed}"
    );
}
