//! Nothing leaves the machine for an invalid configuration: `plan` sends no request and looks up
//! no credential before the whole configuration is known valid; stderr reads as a load followed
//! by a connection, and the journal is read before the first List is sent.

use crate::support::{ClusterSpec, Env, apply_ok, config, stderr};

const BUCKET: &str = "team-infra";
const JOURNAL: &str = "clusterform/prod/research.journal.json";

/// A fleet large enough that its clusters decode well after its locations are known, each with
/// an attribute that does not exist.
fn broken_fleet() -> String {
    let keys: Vec<String> = (0..3000).map(|n| format!("c{n:04} = 1")).collect();
    let settings = format!(
        "  for_each = {{ {} }}\n  no_such_attribute = 1\n",
        keys.join(", ")
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
    let plan = plan_without_credentials();
    let err = stderr(&plan);
    assert_eq!(plan.status.code(), Some(1), "{err}");
    assert!(err.contains("no_such_attribute"), "{err}");
    assert!(err.contains("main.hcl"), "{err}");
    assert!(!err.contains("CLUSTERFORM_ACCESS_TOKEN"), "{err}");
    assert!(env.emulator().requests().is_empty());
    env.cmd(&["plan"]).output().unwrap();
    assert!(
        env.emulator().requests().is_empty(),
        "with valid credentials too, an invalid configuration sends nothing"
    );

    // The same credentials fail a configuration without the error.
    env.write_config(&config(&[ClusterSpec::default()]));
    let plan = plan_without_credentials();
    let err = stderr(&plan);
    assert_eq!(plan.status.code(), Some(1), "{err}");
    assert!(err.contains("CLUSTERFORM_ACCESS_TOKEN"), "{err}");
    assert!(env.emulator().requests().is_empty());
}

#[test]
fn the_configuration_s_warnings_come_before_the_journal_s() {
    let env = Env::new(50);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.write_unusable_journal_entry();
    let unused = "variable \"unused\" {\n  default = 1\n}\n";
    env.write_config(&format!("{unused}{}", config(&[ClusterSpec::default()])));

    let plan = env.run(&["plan"]);
    let err = stderr(&plan);
    assert!(plan.status.success(), "{err}");
    let variable = err.find("unused").expect("the unused variable's warning");
    let journal = err.find("entry 1 of").expect("the journal's warning");
    assert!(variable < journal, "{err}");
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
