//! Broken configuration never reaches the API: diagnostics with file:line:col, exit 1.

use crate::support::{Env, PROVIDER, stderr};

#[test]
fn bad_hcl_reports_the_position_and_sends_nothing() {
    let env = Env::new(100);
    env.write_config(&format!(
        "{PROVIDER}\ncluster \"train01\" {{\n  display_name = \n}}\n"
    ));
    let output = env.run(&["plan"]);
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(err.contains("main.hcl:"), "{err}");
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
    let output = env.run(&["validate"]);
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(err.contains("display_name"), "{err}");
    assert!(err.contains("main.hcl:"), "{err}");
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
fn a_missing_token_is_a_clear_error() {
    let env = Env::new(100);
    env.write_config(&crate::support::config(&[
        crate::support::ClusterSpec::default(),
    ]));
    let output = env
        .cmd(&["plan"])
        .env("CLUSTERFORM_ACCESS_TOKEN", "wrong-token")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let err = stderr(&output);
    assert!(err.contains("UNAUTHENTICATED"), "{err}");
    assert!(
        !err.contains("wrong-token"),
        "the token never appears: {err}"
    );
}
