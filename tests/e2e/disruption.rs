//! The disruption guard: a change that takes nodes away from running Slurm jobs (or from a
//! running cluster whose jobs cannot be read) is named in the confirmation, and refused without
//! a person to ask (`--auto-approve`, `apply FILE`, `destroy --auto-approve`) before anything
//! is sent, unless `--allow-disruption` lets it go.

use serde_json::{Value, json};

use crate::support::{
    ClusterSpec, Env, apply_ok, cluster_name, config, destroyed_attributes_elided, on_terminal,
};

/// Seconds since the epoch, now.
fn now() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap()
}

/// Two jobs running for two days on pool `cpu`'s partition, and one pending.
fn long_training() -> Vec<Value> {
    let started = now() - 2 * 86_400;
    vec![
        json!({"job_id": 17, "name": "train-llm", "user_name": "alice", "job_state": ["RUNNING"],
               "partition": "cpu", "nodes": "cpu-[0-1]",
               "start_time": {"set": true, "infinite": false, "number": started}}),
        json!({"job_id": 21, "name": "finetune", "user_name": "bob", "job_state": ["RUNNING"],
               "partition": "cpu", "nodes": "cpu-2",
               "start_time": {"set": true, "infinite": false, "number": started}}),
        json!({"job_id": 22, "name": "eval", "user_name": "bob", "job_state": ["PENDING"],
               "partition": "cpu"}),
    ]
}

/// The default cluster on another subnetwork: a replacement.
fn on_another_subnetwork() -> String {
    config(&[ClusterSpec::default()]).replace(
        "projects/my-proj/regions/us-central1/subnetworks/default",
        "projects/my-proj/regions/us-central1/subnetworks/other",
    )
}

/// A cluster running [`long_training`] whose configuration now asks for a replacement.
fn training_cluster_to_replace() -> Env {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    crate::support::add_other_subnetwork(&env);
    env.emulator()
        .set_slurm_jobs(&cluster_name("train01"), long_training());
    env.write_config(&on_another_subnetwork());
    env.emulator().clear_requests();
    env
}

#[test]
fn an_unattended_apply_refuses_to_replace_a_cluster_with_running_jobs() {
    let env = training_cluster_to_replace();
    insta::assert_snapshot!(env.transcript(&["apply", "--auto-approve"]), @r#"
    clusterform will perform the following actions:

      # train01 must be replaced
    -/+ cluster "train01" {
          ~ network {
              ~ subnetwork = "projects/my-proj/regions/us-central1/subnetworks/default" -> "projects/my-proj/regions/us-central1/subnetworks/other" # forces replacement
                # (1 unchanged attribute hidden)
            }
            # (2 unchanged attributes hidden)
            # (3 unchanged blocks hidden)
        }
        impact: replaces cluster
        # the live cluster is deleted first: its machines are not held for the new one, so if the create finds no machines, train01 is gone
        # 3 Slurm jobs active now: 2 RUNNING, 1 PENDING
        # all of them stop with the cluster:
        #   17 train-llm (alice, RUNNING on cpu-[0-1])
        #   21 finetune (bob, RUNNING on cpu-2)
        #   22 eval (bob, PENDING)

    Plan: 0 to add, 0 to change, 1 to replace, 0 to destroy.
    [stderr]
    Error: replacing cluster train01 would stop 2 Slurm jobs that hold nodes: 17 train-llm (alice, RUNNING for 2d), 21 finetune (bob, RUNNING for 2d)
    Error: 1 change would stop running work, and nobody was asked: nothing was changed
      hint: wait for the jobs to end (or drain the pools) and run again; to stop them all the same, run the same command with --allow-disruption
    [exit status: 1]
    "#);
    assert!(env.mutations().is_empty(), "nothing is sent");

    let allowed = env.run(&["apply", "--auto-approve", "--allow-disruption"]);
    assert!(allowed.status.success(), "{allowed:?}");
    let stderr = String::from_utf8(allowed.stderr).unwrap();
    assert!(
        stderr.starts_with(
            "Warning: going ahead (--allow-disruption): replacing cluster train01 would stop 2 \
             Slurm jobs that hold nodes: 17 train-llm (alice, RUNNING for 2d), 21 finetune (bob, \
             RUNNING for 2d)\n"
        ),
        "{stderr}"
    );
    let methods: Vec<_> = env.mutations().into_iter().map(|r| r.method).collect();
    assert_eq!(methods, ["DELETE", "POST"]);
}

#[test]
fn a_refusal_in_json_is_an_event_of_its_own_and_its_words_reach_stderr() {
    let env = training_cluster_to_replace();
    let output = env.run(&["apply", "--auto-approve", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let events: Vec<Value> = String::from_utf8(output.stdout.clone())
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["planned", "disruption_refused", "summary"]);
    let refused = &events[1];
    assert_eq!(refused["address"]["id"], "train01");
    let ids: Vec<&Value> = refused["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|job| &job["id"])
        .collect();
    assert_eq!(ids, [&json!(17), &json!(21)], "the jobs that hold nodes");
    assert_eq!(refused["jobs"][0]["user"], "alice");
    assert!(refused["jobs"][0]["started_at"].is_i64());
    assert_eq!(events[2]["success"], false, "{}", events[2]);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("Error: replacing cluster train01 would stop 2 Slurm jobs"),
        "{stderr}"
    );
    assert!(env.mutations().is_empty());
}

#[test]
fn a_saved_plan_reads_the_jobs_again_when_it_is_applied() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    crate::support::add_other_subnetwork(&env);
    env.write_config(&on_another_subnetwork());
    let plan = env.run(&["plan", "--out", "saved.plan"]);
    assert!(plan.status.success());
    assert!(
        String::from_utf8(plan.stdout)
            .unwrap()
            .contains("# no Slurm jobs active now"),
        "nothing ran when the plan was made"
    );
    env.emulator()
        .set_slurm_jobs(&cluster_name("train01"), long_training());
    env.emulator().clear_requests();
    insta::assert_snapshot!(env.transcript(&["apply", "saved.plan"]), @r"
    [stderr]
    Error: replacing cluster train01 would stop 2 Slurm jobs that hold nodes: 17 train-llm (alice, RUNNING for 2d), 21 finetune (bob, RUNNING for 2d)
    Error: 1 change would stop running work, and nobody was asked: nothing was changed
      hint: wait for the jobs to end (or drain the pools) and run again; to stop them all the same, run `clusterform apply --allow-disruption saved.plan`
    [exit status: 1]
    ");
    assert!(env.mutations().is_empty());
    let applied = env.run(&["apply", "--allow-disruption", "saved.plan"]);
    assert!(applied.status.success(), "{applied:?}");
    let methods: Vec<_> = env.mutations().into_iter().map(|r| r.method).collect();
    assert_eq!(methods, ["DELETE", "POST"]);
}

#[test]
fn a_destroy_of_a_running_cluster_whose_jobs_cannot_be_read_is_refused_unattended() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.emulator()
        .set_slurm_unreachable(&cluster_name("train01"), true);
    env.emulator().clear_requests();
    let output = env.run(&["destroy", "--auto-approve"]);
    insta::assert_snapshot!(env.transcript_of(&output).normalized_with(destroyed_attributes_elided), @r#"
    clusterform will perform the following actions:

      # train01 will be destroyed: declared in this configuration, and destroy was requested
      - cluster "train01" { … }
        # Slurm jobs active now: unknown (Slurm REST API unreachable: POST [ENDPOINT]/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01:callSlurmRestApi failed: UNAVAILABLE (503): The Slurm REST API of cluster projects/253589482369/locations/us-central1/modelDevelopmentClusters/train01 is unreachable.)

    Plan: 0 to add, 0 to change, 0 to replace, 1 to destroy.
    [stderr]
    Error: destroying cluster train01 would stop Slurm jobs that may be running, since they cannot be read (Slurm REST API unreachable: POST [ENDPOINT]/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01:callSlurmRestApi failed: UNAVAILABLE (503): The Slurm REST API of cluster projects/253589482369/locations/us-central1/modelDevelopmentClusters/train01 is unreachable.)
    Error: 1 change would stop running work, and nobody was asked: nothing was changed
      hint: wait for the jobs to end (or drain the pools) and run again; to stop them all the same, run the same command with --allow-disruption
    [exit status: 1]
    "#);
    assert!(env.mutations().is_empty());
    assert!(
        env.run(&["destroy", "--auto-approve", "--allow-disruption"])
            .status
            .success()
    );
    assert!(env.emulator().cluster(&cluster_name("train01")).is_none());
}

#[test]
fn pending_jobs_and_jobs_on_pools_a_change_leaves_alone_do_not_stop_it() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    crate::support::add_other_subnetwork(&env);
    let pending_only: Vec<Value> = long_training()
        .into_iter()
        .filter(|job| job["job_state"][0] == "PENDING")
        .collect();
    env.emulator()
        .set_slurm_jobs(&cluster_name("train01"), pending_only);
    env.write_config(&on_another_subnetwork());
    let output = env.run(&["apply", "--auto-approve"]);
    assert!(output.status.success(), "{output:?}");
}

#[test]
#[cfg(unix)]
fn the_question_names_the_jobs_it_stops() {
    let env = training_cluster_to_replace();
    let mut session = on_terminal(&env, "apply");
    session
        .exp_string("This plan stops 2 running Slurm jobs:")
        .unwrap();
    session
        .exp_string("train01: 17 train-llm (alice, RUNNING for 2d)")
        .unwrap();
    session
        .exp_string("train01: 21 finetune (bob, RUNNING for 2d)")
        .unwrap();
    session.exp_string("Only 'yes' will be accepted").unwrap();
    session.send_line("no").unwrap();
    session.exp_string("Apply cancelled.").unwrap();
    session.exp_eof().unwrap();
    assert!(env.mutations().is_empty());
}
