//! Nothing leaves the machine for an invalid configuration: `plan` sends no request and looks up
//! no credential before the whole configuration is known valid; stderr reads as a load followed
//! by a connection, and the journal is read before the first List is sent.

use crate::support::{ClusterSpec, Env, apply_ok, config, stderr};

const BUCKET: &str = "team-infra";
const JOURNAL: &str = "clusterform/prod/research.journal.json";

/// The keys of [`broken_fleet`]'s `for_each`.
fn fleet_keys() -> String {
    let keys: Vec<String> = (0..3000).map(|n| format!("c{n:04} = 1")).collect();
    keys.join(", ")
}

/// A fleet large enough that its clusters decode well after its locations are known, each with
/// an attribute that does not exist.
fn broken_fleet() -> String {
    let settings = format!(
        "  for_each = {{ {} }}\n  no_such_attribute = 1\n",
        fleet_keys()
    );
    let hcl = config(&[ClusterSpec::default()]);
    assert!(hcl.contains("  display_name"), "{hcl}");
    hcl.replacen("  display_name", &format!("{settings}  display_name"), 1)
}

#[test]
fn an_invalid_configuration_sends_nothing_and_looks_up_no_credential() {
    let env = Env::new(50);
    let plan_without_credentials = || {
        env.cmd(&["plan"])
            .env("CLUSTERFORM_ACCESS_TOKEN", "")
            .output()
            .unwrap()
    };
    env.write_config(&broken_fleet());
    let keys = fleet_keys();
    insta::assert_snapshot!(env.transcript_of(&plan_without_credentials()).normalized_with(|text| text.replace(&keys, "c0000 = 1, …")), @r#"
    [stderr]
    Error: unknown attribute or block `no_such_attribute` in a cluster block
        ╭─[main.hcl:10:3]
      9 │   for_each = { c0000 = 1, … }
     10 │   no_such_attribute = 1
        ·   ─────────────────
     11 │   display_name = "Research training"
        ╰────
      hint: expected one of: display_name, labels, network, node_pool, orchestrator_spec, runtime_spec, lustre_export_config, project, region, update_mode, for_each, id, timeouts, lifecycle
    [exit status: 1]
    "#);
    assert!(env.emulator().requests().is_empty());
    env.cmd(&["plan"]).output().unwrap();
    assert!(
        env.emulator().requests().is_empty(),
        "with valid credentials too, an invalid configuration sends nothing"
    );

    // The same credentials fail a configuration without the error.
    env.write_config(&config(&[ClusterSpec::default()]));
    insta::assert_snapshot!(env.transcript_of(&plan_without_credentials()), @"
    [stderr]
    Error: CLUSTERFORM_ACCESS_TOKEN is set but empty
    [exit status: 1]
    ");
    assert!(env.emulator().requests().is_empty());
}

#[test]
fn the_configuration_s_warnings_come_before_the_journal_s() {
    let env = Env::new(50);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.write_unusable_journal_entry();
    let unused = "variable \"unused\" {\n  default = 1\n}\n";
    env.write_config(&format!("{unused}{}", config(&[ClusterSpec::default()])));

    insta::assert_snapshot!(env.transcript(&["plan"]), @"
    No changes. Your clusters match the configuration.
    [stderr]
    Warning: variable `unused` is declared but never used
      at main.hcl:1:1
      hint: remove it, or use it as `var.unused`
    Warning: entry 1 of ./.clusterform/journal.json cannot be used (`../../elsewhere` is not an operation name: expected `projects/{P}/locations/{R}/operations/{ID}`); apply refuses to act on cluster train01 until it is fixed or removed
    ");
}

#[test]
fn the_journal_is_read_before_the_first_list() {
    let env = Env::new(50);
    env.emulator().create_bucket(BUCKET);
    let lock = format!(
        "  stack   = \"research\"\n  lock \"gcs\" {{\n    bucket   = \"{BUCKET}\"\n    prefix   = \"clusterform/prod\"\n    endpoint = \"{}\"\n  }}\n",
        env.server.base_url()
    );
    let hcl = config(&[ClusterSpec::default()]).replace("  stack   = \"research\"\n", &lock);
    env.write_config(&hcl);
    env.emulator().clear_requests();

    let plan = env.run(&["plan"]);
    assert!(plan.status.success(), "{}", stderr(&plan));
    let requests = env.emulator().requests();
    let position = |what: &dyn Fn(&clusterform_emulator::RecordedRequest) -> bool| {
        requests.iter().position(what)
    };
    let journal_read =
        position(&|r| r.path.contains("journal.json") || r.query.contains("journal.json"))
            .unwrap_or_else(|| panic!("the journal {JOURNAL} was not read: {requests:?}"));
    let first_list =
        position(&|r| r.method == "GET" && r.path.ends_with("/modelDevelopmentClusters"))
            .expect("a List");
    assert!(journal_read < first_list, "{requests:?}");
}
