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
      hint: label keys and values: at most 63 lowercase letters, digits, `_` and `-`; keys start with a letter
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
      hint: label keys and values: at most 63 lowercase letters, digits, `_` and `-`; keys start with a letter
    [exit status: 1]
    "#);
}
