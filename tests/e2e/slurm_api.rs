//! Slurm through `callSlurmRestApi` as the Slurm Job API page documents it (slurmrestd's JSON
//! as a string in `body`), set up the way a user rehearses it: through the emulator's admin
//! HTTP API and the `clusterform emulator` flags. `destroy --idle-for` finds the REST version
//! a cluster serves, keeps a cluster whose controller is down, and a create that meets a
//! stockout fails with the service's message.

use std::time::Duration;

use clusterform_emulator::EmulatorOptions;
use serde_json::{Value, json};

use crate::emulator_command::ServedEmulator;
use crate::support::{
    ClusterSpec, Env, TOKEN, apply_ok, cluster_name, config, created_attributes_elided,
    destroyed_attributes_elided, failure_seconds_hidden, seconds_of_ages_hidden,
};

/// An emulator whose clusters serve Slurm's REST v0.0.44 and v0.0.43 only, as a Slurm newer
/// than the emulator's default does.
fn modern_slurm_env() -> Env {
    Env::with_options(EmulatorOptions {
        operation_duration: Duration::from_millis(100),
        required_token: Some(TOKEN.to_owned()),
        project_numbers: true,
        slurm_api_versions: vec!["v0.0.44".to_owned(), "v0.0.43".to_owned()],
        ..EmulatorOptions::default()
    })
}

/// `PUT {base}{path}` with `body` through the admin API; answers the status.
fn admin_put(base: &str, path: &str, body: &Value) -> u16 {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        reqwest::Client::new()
            .put(format!("{base}{path}"))
            .bearer_auth(TOKEN)
            .json(body)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    })
}

/// The admin path of cluster `id`'s `leaf`, named by project ID as a user would.
fn admin_path(id: &str, leaf: &str) -> String {
    format!("/emulator/v1/{}/{leaf}", cluster_name(id))
}

fn powered_down_node(minutes_ago: i64) -> Value {
    let last_busy = time::OffsetDateTime::now_utc().unix_timestamp() - minutes_ago * 60;
    json!({"name": "cpu-0", "state": ["IDLE", "POWERED_DOWN"],
           "last_busy": {"set": true, "infinite": false, "number": last_busy}})
}

fn slurm_paths(env: &Env) -> Vec<String> {
    env.emulator()
        .requests()
        .iter()
        .filter(|r| r.path.ends_with(":callSlurmRestApi"))
        .filter_map(|r| r.body.as_ref()?["path"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn idle_for_reads_the_documented_body_at_the_version_the_cluster_serves() {
    let env = modern_slurm_env();
    apply_ok(&env, &[ClusterSpec::default()]);
    let base = env.server.base_url();
    let nodes = json!({"nodes": [powered_down_node(300)]});
    assert_eq!(
        admin_put(&base, &admin_path("train01", "slurm/nodes"), &nodes),
        200
    );
    env.emulator().clear_requests();
    let output = env.run(&["destroy", "--idle-for", "2h", "--auto-approve"]);
    // The node was last busy 5h before the test set it; the run reads the clock a second or
    // two later, and an age shows its seconds only when one has ticked.
    let whole_hours = |text: &str| seconds_of_ages_hidden(text).replace("5h[S]s ago", "5h ago");
    insta::assert_snapshot!(env.transcript_of(&output).normalized_with(whole_hours).normalized_with(destroyed_attributes_elided), @r#"
    PROJECT  REGION       ID       STATE    ACTIVE JOBS  BUSY NODES  LAST BUSY                      GPUS  IDLE GPU-HOURS  VERDICT        REASON
    my-proj  us-central1  train01  RUNNING  0            0           [TIME] (5h ago)  0     0.0             idle: destroy  no active job or busy node; last busy 5h ago (>= 2h)
    clusterform will perform the following actions:

      # train01 will be destroyed: idle (no active job or busy node; last busy 5h ago (>= 2h))
      - cluster "train01" { … }
        # no Slurm jobs active now

    Plan: 0 to add, 0 to change, 0 to replace, 1 to destroy.
    [stderr]
    [HH:MM:SS] train01: destroying… [Ns]
    [HH:MM:SS] train01: delete request accepted [Ns]
    [HH:MM:SS] train01: delete done [Ns]
    [HH:MM:SS] train01: destroyed [Ns]
    Destroy complete! Resources: 1 destroyed.
    "#);
    assert_eq!(
        slurm_paths(&env),
        [
            "/slurm/v0.0.45/jobs",
            "/slurm/v0.0.44/jobs",
            "/slurm/v0.0.44/nodes"
        ],
        "newest first, then the nodes at the version that answered"
    );
    assert!(env.emulator().cluster(&cluster_name("train01")).is_none());
}

#[test]
fn a_cluster_whose_slurm_controller_is_down_is_kept() {
    let env = modern_slurm_env();
    apply_ok(&env, &[ClusterSpec::default()]);
    let base = env.server.base_url();
    let nodes = json!({"nodes": [powered_down_node(300)]});
    admin_put(&base, &admin_path("train01", "slurm/nodes"), &nodes);
    let controller = json!({"up": false});
    assert_eq!(
        admin_put(
            &base,
            &admin_path("train01", "slurm/controller"),
            &controller
        ),
        200
    );
    let output = env.run(&["destroy", "--idle-for", "0s", "--auto-approve"]);
    insta::assert_snapshot!(env.transcript_of(&output), @"
    PROJECT  REGION       ID       STATE    ACTIVE JOBS  BUSY NODES  LAST BUSY  GPUS  IDLE GPU-HOURS  VERDICT        REASON
    my-proj  us-central1  train01  RUNNING  ?            ?           ?          0     ?               unknown: keep  slurmrestd answered HTTP 500 for /slurm/v0.0.44/jobs
    No clusters to destroy.
    [stderr]
    Warning: --idle-for 0s is shorter than 10m: a cluster between two jobs qualifies as idle
    ");
    assert!(env.emulator().cluster(&cluster_name("train01")).is_some());
}

#[test]
fn a_create_that_meets_a_stockout_without_a_fallback_deletes_what_it_left_and_says_why() {
    let env = Env::with_options(EmulatorOptions {
        operation_duration: Duration::from_millis(100),
        required_token: Some(TOKEN.to_owned()),
        project_numbers: true,
        capacity_failures: vec!["n2-standard-8@us-central1-a".parse().unwrap()],
        ..EmulatorOptions::default()
    });
    env.write_config(&config(&[ClusterSpec::default()]));
    insta::assert_snapshot!(
        env.transcript(&["apply", "--auto-approve"])
            .normalized_with(created_attributes_elided)
            .normalized_with(failure_seconds_hidden),
        @r#"
    clusterform will perform the following actions:

      # train01 will be created
      + cluster "train01" { … }

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    [stderr]
    [HH:MM:SS] train01: creating… [Ns]
    [HH:MM:SS] train01: create request accepted [Ns]
    [HH:MM:SS] train01: the create found no capacity (STOCKOUT in us-central1-a); deleting the cluster it left in ERROR [Ns]
    [HH:MM:SS] train01: delete request accepted [Ns]
    [HH:MM:SS] train01: delete done [Ns]
    [HH:MM:SS] train01: FAILED after [N]s: found no capacity (STOCKOUT in us-central1-a)
    Error: Creation of cluster train01 failed: projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01: the create found no capacity (STOCKOUT in us-central1-a); the service said "The zone 'projects/253589482369/zones/us-central1-a' does not have enough resources available to fulfill the request. '(resource type:compute)'. (state:STOCKOUT)"; the cluster the failed create left in ERROR was deleted
      hint: the zone has no such machines now: run `clusterform apply` again later, or add a `fallback` block to the pool (another machine type, or another provisioning model such as FLEX_START or SPOT)
    Error: 1 of 1 actions failed
      hint: fix the cause above and run `clusterform apply` again; finished clusters are not touched twice
    [exit status: 1]
    "#
    );
    assert!(env.emulator().cluster(&cluster_name("train01")).is_none());
    let methods: Vec<String> = env.mutations().iter().map(|r| r.method.clone()).collect();
    assert_eq!(methods, ["POST", "DELETE"]);
    assert!(
        !env.journal_path().exists(),
        "the chain left a journal entry"
    );
}

#[test]
#[cfg(unix)]
fn the_emulator_command_takes_slurm_versions_and_capacity_failures() {
    let emulator = ServedEmulator::start(
        "127.0.0.1",
        &[
            "--slurm-versions",
            "v0.0.44",
            "--capacity-failure",
            "a4-highgpu-8g@us-central1-b",
        ],
    );
    let base = emulator.base_url();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let listed: Value = runtime.block_on(async {
        reqwest::Client::new()
            .get(format!("{base}/emulator/v1/capacityFailures"))
            .bearer_auth("any-token")
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    });
    assert_eq!(
        listed,
        json!({"capacityFailures": [{"machineType": "a4-highgpu-8g", "zone": "us-central1-b"}]})
    );
    let status = emulator.interrupt();
    assert!(status.success(), "{status}");
}
