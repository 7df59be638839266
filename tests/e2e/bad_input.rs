//! Broken configuration never reaches the API: diagnostics with file:line:col, exit 1.

use crate::support::{Env, PROVIDER, stderr};

#[test]
fn bad_hcl_reports_the_position_and_sends_nothing() {
    let env = Env::new(100);
    env.write_config(&format!(
        "{PROVIDER}\ncluster \"train01\" {{\n  display_name = \n}}\n"
    ));
    insta::assert_snapshot!(env.transcript(&["plan"]), @r#"
    [stderr]
    Error: syntax error: invalid expression; expected `"`, `[`, `{`, `-`, `!`, `(`, `_`, `<`, letter or digit
        ╭─[main.hcl:9:18]
      8 │ cluster "train01" {
      9 │   display_name = 
        ·                  ─
     10 │ }
        ╰────
      hint: near `display_name =`
    [exit status: 1]
    "#);
    assert!(
        env.emulator().requests().is_empty(),
        "no request for a broken config"
    );
}

#[test]
fn an_unknown_attribute_suggests_the_right_one() {
    let env = Env::new(100);
    env.write_config(&format!(
        "{PROVIDER}\ncluster \"train01\" {{\n  dispaly_name = \"x\"\n}}\n"
    ));
    insta::assert_snapshot!(env.transcript(&["validate"]), @r#"
    [stderr]
    Error: missing required at least one `node_pool` block in the cluster
       ╭─[main.hcl:8:1]
     7 │ 
     8 │ cluster "train01" {
       · ─────────────────
     9 │   dispaly_name = "x"
       ╰────
      hint: node_pools: Node pools, matched by id; replaced whole on update

    Error: missing required block `network` in the cluster
       ╭─[main.hcl:8:1]
     7 │ 
     8 │ cluster "train01" {
       · ─────────────────
     9 │   dispaly_name = "x"
       ╰────
      hint: network: The VPC of the cluster

    Error: missing required block `orchestrator_spec` in the cluster
       ╭─[main.hcl:8:1]
     7 │ 
     8 │ cluster "train01" {
       · ─────────────────
     9 │   dispaly_name = "x"
       ╰────
      hint: orchestrator_spec: The orchestrator

    Error: unknown attribute or block `dispaly_name` in a cluster block
        ╭─[main.hcl:9:3]
      8 │ cluster "train01" {
      9 │   dispaly_name = "x"
        ·   ────────────
     10 │ }
        ╰────
      hint: did you mean `display_name`?
    [exit status: 1]
    "#);
}

#[test]
fn validate_json_has_ranges() {
    let env = Env::new(100);
    env.write_config(&format!(
        "{PROVIDER}\ncluster \"train01\" {{\n  dispaly_name = \"x\"\n}}\n"
    ));
    let output = env.run(&["validate", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["valid"], false);
    let first = &report["diagnostics"][0];
    assert!(first["line"].as_u64().unwrap() > 0, "{report}");
}

#[test]
fn a_rejected_token_is_a_clear_error_that_never_shows_the_token() {
    let env = Env::new(100);
    env.write_config(&crate::support::config(&[
        crate::support::ClusterSpec::default(),
    ]));
    let output = env
        .cmd(&["plan"])
        .env("CLUSTERFORM_ACCESS_TOKEN", "wrong-token")
        .output()
        .unwrap();
    assert!(
        !stderr(&output).contains("wrong-token"),
        "the token never appears"
    );
    insta::assert_snapshot!(env.transcript_of(&output), @"
    [stderr]
    Error: GET [ENDPOINT]/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters?pageSize=100 failed: UNAUTHENTICATED (401): Request had invalid authentication credentials: the bearer token is not the expected one. Expected an OAuth 2 access token.
      hint: the access token was rejected: run `gcloud auth application-default login` or refresh CLUSTERFORM_ACCESS_TOKEN
    [exit status: 1]
    ");
}
