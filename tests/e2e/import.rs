//! `import`: labels a foreign cluster and writes HCL that plans to no changes.

use serde_json::json;

use crate::support::{Env, PROVIDER, STACK, cluster_name, hand_made_cluster, stderr, stdout};

#[test]
fn import_labels_the_cluster_and_round_trips() {
    let env = Env::new(100);
    let mut legacy = hand_made_cluster();
    legacy["labels"] = json!({"team": "ml"});
    env.emulator()
        .insert_cluster(&cluster_name("legacy"), legacy);
    env.write_config(PROVIDER);
    let output = env.run(&["import", "legacy", "--out", "legacy.hcl"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let live = env.emulator().cluster(&cluster_name("legacy")).unwrap();
    assert_eq!(live["labels"]["clusterform-stack"], STACK);
    assert_eq!(live["labels"]["team"], "ml");
    let patches: Vec<_> = env
        .emulator()
        .requests()
        .into_iter()
        .filter(|r| r.method == "PATCH")
        .collect();
    assert_eq!(patches.len(), 1, "{patches:?}");
    assert_eq!(patches[0].query, "updateMask=labels&updateMode=USER_ONLY");
    // The planner's body rules: the live cluster without its output-only fields.
    let body = patches[0].body.as_ref().unwrap();
    assert_eq!(
        body["labels"],
        json!({"team": "ml", "clusterform-stack": STACK})
    );
    assert_eq!(body["nodePools"][1]["id"], "cpu");
    assert!(
        body.get("createTime").is_none() && body.get("name").is_none(),
        "{body}"
    );
    let hcl = std::fs::read_to_string(env.path().join("legacy.hcl")).unwrap();
    assert!(hcl.contains("cluster \"legacy\""), "{hcl}");
    assert!(!hcl.contains("clusterform-stack"), "{hcl}");

    let plan = env.run(&["plan", "--detailed-exitcode"]);
    assert_eq!(
        plan.status.code(),
        Some(0),
        "{}{}",
        stdout(&plan),
        stderr(&plan)
    );
    assert!(stdout(&plan).contains("No changes."));
}
