//! Capacity fallbacks as a user sees them: the plan's chain, the attempts in progress and in
//! `--json` events, the winner in the summary, and the next plan, which finds the cluster on
//! its fallback matching its declaration.

use std::time::Duration;

use clusterform_emulator::EmulatorOptions;
use serde_json::Value;

use crate::support::{
    ClusterSpec, Env, TOKEN, cluster_name, config, created_attributes_elided,
    failure_seconds_hidden,
};

/// The default cluster with its `cpu` pool on 32-vCPU machines, falling back to 16-vCPU ones,
/// and asking for one node at create: only a pool with static nodes can run short at create.
fn with_fallback() -> String {
    config(&[ClusterSpec::default()]).replace(
        "      machine_type = \"n2-standard-8\"\n    }\n    scaling_spec {\n      min_node_count = 0",
        "      machine_type = \"n2-standard-32\"\n    }\n    scaling_spec {\n      min_node_count = 1",
    ).replace(
        "    zone = \"us-central1-a\"\n  }\n",
        "    zone = \"us-central1-a\"\n\n    fallback {\n      machine_spec {\n        machine_type = \"n2-standard-16\"\n      }\n    }\n  }\n",
    )
}

fn short_of(failure: &str) -> Env {
    short_of_all(&[failure])
}

/// An environment whose emulator fails creates as each of `failures` says.
fn short_of_all(failures: &[&str]) -> Env {
    Env::with_options(EmulatorOptions {
        operation_duration: Duration::from_millis(100),
        required_token: Some(TOKEN.to_owned()),
        project_numbers: true,
        capacity_failures: failures.iter().map(|f| f.parse().unwrap()).collect(),
        ..EmulatorOptions::default()
    })
}

#[test]
fn a_stockout_falls_back_and_the_next_plan_finds_the_fallback_matching() {
    let env = short_of("n2-standard-32");
    let hcl = with_fallback();
    assert!(hcl.contains("fallback {"), "{hcl}");
    env.write_config(&hcl);
    insta::assert_snapshot!(
        env.transcript(&["apply", "--auto-approve"]).normalized_with(created_attributes_elided),
        @r#"
    clusterform will perform the following actions:

      # train01 will be created
      + cluster "train01" { … }
        # node pool "cpu" falls back to: n2-standard-16

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    [stderr]
    [HH:MM:SS] train01: creating… [Ns]
    [HH:MM:SS] train01: create request accepted [Ns]
    [HH:MM:SS] train01: attempt 1 of 2 found no capacity (STOCKOUT in us-central1-a); deleting the cluster it left in ERROR, then trying attempt 2… [Ns]
    [HH:MM:SS] train01: delete request accepted [Ns]
    [HH:MM:SS] train01: delete done [Ns]
    [HH:MM:SS] train01: create request accepted [Ns]
    [HH:MM:SS] train01: attempt 2 of 2 has machines [Ns]
    [HH:MM:SS] train01: create done [Ns]
    [HH:MM:SS] train01: created [Ns]
    train01: fell back to attempt 2: node pool "cpu" runs n2-standard-16.
    Apply complete! Resources: 1 added, 0 changed, 0 replaced, 0 destroyed.
    "#);
    let live = env.emulator().cluster(&cluster_name("train01")).unwrap();
    let pools = live["nodePools"].as_array().unwrap();
    let cpu = pools.iter().find(|p| p["id"] == "cpu").unwrap();
    assert_eq!(cpu["machineSpec"]["machineType"], "n2-standard-16");
    insta::assert_snapshot!(env.transcript(&["plan", "--detailed-exitcode"]), @r#"
    No changes. Your clusters match the configuration.
    Note: train01: node pool "cpu" runs n2-standard-16, its alternative in attempt 2, which matches its declaration
    "#);
    // The alternative clusterform chose is never drift, not even when --replace compares the
    // pool with its declared machines again.
    let replace = env.run(&["plan", "--replace", "train01"]);
    let text = String::from_utf8_lossy(&replace.stdout).to_string();
    assert!(text.contains("machine_type"), "{text}");
    assert!(!text.contains("outside clusterform"), "{text}");
    insta::assert_snapshot!(env.transcript(&["plan", "--refresh-only", "--detailed-exitcode"]), @"No changes outside clusterform: every field the record of applied changes covers holds what clusterform last applied.");
}

#[test]
fn a_quota_refusal_goes_to_the_fallback_at_once_and_events_say_so() {
    let env = short_of("quota:n2-standard-32");
    env.write_config(&with_fallback());
    let output = env.run(&["apply", "--auto-approve", "--json"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let events: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let of_type = |kind: &str| events.iter().find(|e| e["type"] == kind).cloned();
    let failed = of_type("attempt_failed").expect("an attempt_failed event");
    assert_eq!(failed["shortage"], "quota");
    assert_eq!(failed["next_attempt"], 2);
    assert_eq!(
        failed["deleting_its_cluster"], false,
        "a refusal made nothing"
    );
    let fell_back = of_type("fell_back").expect("a fell_back event");
    assert_eq!(fell_back["attempt"], 2);
    assert_eq!(fell_back["pools"][0]["machine_type"], "n2-standard-16");
    let methods: Vec<String> = env
        .mutations()
        .iter()
        .map(|r| format!("{} {}", r.method, r.status))
        .collect();
    assert_eq!(
        methods,
        ["POST 429", "POST 200"],
        "no retry of the quota, no delete"
    );
}

/// The `cpu` machine type of every create the emulator accepted or refused, in order.
fn created_cpu_machines(env: &Env) -> Vec<String> {
    env.mutations()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("modelDevelopmentClusters"))
        .filter_map(|r| {
            let pools = r.body.as_ref()?["nodePools"].as_array()?.clone();
            let cpu = pools.into_iter().find(|p| p["id"] == "cpu")?;
            Some(cpu["machineSpec"]["machineType"].as_str()?.to_owned())
        })
        .collect()
}

#[test]
fn a_chain_whose_record_was_lost_goes_on_after_the_attempt_its_cluster_shows() {
    let env = short_of_all(&["n2-standard-32", "n2-standard-16"]);
    let chain = with_fallback().replace(
        "        machine_type = \"n2-standard-16\"\n      }\n    }\n",
        "        machine_type = \"n2-standard-16\"\n      }\n    }\n\n    fallback {\n      machine_spec {\n        machine_type = \"n2-standard-8\"\n      }\n    }\n",
    );
    assert_eq!(chain.matches("fallback {").count(), 2, "{chain}");
    // A protected cluster's failed first attempt is kept in ERROR; then the record of it is
    // lost (the state a kill leaves while the create's answer is in flight, before anything
    // is written), and the protection lifted.
    let protected = chain.replacen(
        "  display_name",
        "  lifecycle {\n    prevent_destroy = true\n  }\n  display_name",
        1,
    );
    env.write_config(&protected);
    let kept = env.run(&["apply", "--auto-approve"]);
    assert_eq!(kept.status.code(), Some(1));
    let live = env.emulator().cluster(&cluster_name("train01")).unwrap();
    assert_eq!(live["clusterStatus"]["state"], "ERROR");
    assert!(live.get("startTime").is_none(), "{live}");
    std::fs::remove_file(env.path().join(".clusterform/applied.json")).unwrap();
    env.write_config(&chain);

    let plan = env.transcript(&["plan"]).to_string();
    assert!(
        plan.contains("it will be replaced")
            && plan.contains("so attempt 1 (the pools as declared) found no machines; apply goes on with attempt 2 of 3"),
        "{plan}"
    );
    env.emulator().clear_requests();
    let applied = env.run(&["apply", "--auto-approve"]);
    assert!(
        applied.status.success(),
        "{}",
        crate::support::stderr(&applied)
    );
    assert_eq!(
        created_cpu_machines(&env),
        ["n2-standard-16", "n2-standard-8"],
        "attempt 1, known to be out, is not sent again"
    );
    let live = env.emulator().cluster(&cluster_name("train01")).unwrap();
    let cpu = live["nodePools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "cpu")
        .unwrap()
        .clone();
    assert_eq!(cpu["machineSpec"]["machineType"], "n2-standard-8");
}

#[test]
fn an_exhausted_chain_is_told_once_naming_every_attempt() {
    let env = short_of_all(&["n2-standard-32", "not-allowed:n2-standard-16"]);
    env.write_config(&with_fallback());
    let applied = env.transcript(&["apply", "--auto-approve"]);
    let said = applied.to_string();
    assert_eq!(
        said.matches("does not have enough resources available")
            .count(),
        1,
        "the service's whole text once: {said}"
    );
    assert!(!said.contains("add a `fallback`"), "{said}");
    insta::assert_snapshot!(
        applied.normalized_with(failure_seconds_hidden).to_string().lines()
            .skip_while(|line| !line.starts_with("[stderr]")).collect::<Vec<_>>().join("\n"),
        @r#"
    [stderr]
    [HH:MM:SS] train01: creating… [Ns]
    [HH:MM:SS] train01: create request accepted [Ns]
    [HH:MM:SS] train01: attempt 1 of 2 found no capacity (STOCKOUT in us-central1-a); deleting the cluster it left in ERROR, then trying attempt 2… [Ns]
    [HH:MM:SS] train01: delete request accepted [Ns]
    [HH:MM:SS] train01: delete done [Ns]
    [HH:MM:SS] train01: create request accepted [Ns]
    [HH:MM:SS] train01: attempt 2 of 2 was not allowed (n2-standard-16 not allowed for VM); deleting the cluster it left in ERROR [Ns]
    [HH:MM:SS] train01: delete request accepted [Ns]
    [HH:MM:SS] train01: delete done [Ns]
    [HH:MM:SS] train01: FAILED after [N]s: no attempt of 2 found machines
    Error: Creation of cluster train01 failed: projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01: no attempt found machines: attempt 1 (cpu: n2-standard-32 in us-central1-a) found no capacity (STOCKOUT in us-central1-a); attempt 2 (cpu: n2-standard-16 in us-central1-a) was not allowed (n2-standard-16 not allowed for VM); the service said "The zone 'projects/253589482369/zones/us-central1-a' does not have enough resources available to fulfill the request. '(resource type:compute)'. (state:STOCKOUT)", then "machine type n2-standard-16 is not allowed for VM"; the cluster the failed create left in ERROR was deleted
      hint: the zones have none of these machines now: run `clusterform apply` again later, or change an alternative (another zone, machine type or provisioning model)
      n2-standard-16 is not allowed for VMs there, and waiting does not change that: choose another machine type for the pool
    Error: 1 of 1 actions failed
      hint: fix the cause above and run `clusterform apply` again; finished clusters are not touched twice
    [exit status: 1]
    "#
    );
    env.run(&["destroy", "--auto-approve"]);
    let json = env.run(&["apply", "--auto-approve", "--json"]);
    let events = String::from_utf8_lossy(&json.stdout).to_string();
    let failed: Value = events
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|event| event["type"] == "failed")
        .unwrap_or_else(|| panic!("{events}"));
    assert_eq!(failed["error"]["status"], "INVALID_ARGUMENT", "{failed}");
    assert_eq!(
        failed["error"]["code"],
        Value::Null,
        "an operation's failure has no HTTP status"
    );
}
