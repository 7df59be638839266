//! Text and JSON renderings, pinned by snapshots for every kind of action and warning.

use clusterform_config::{Config, DesiredCluster};
use clusterform_model::{JobsByCluster, LiveCluster, UpdateMode};
use clusterform_planner::{PlanOptions, plan};
use clusterform_testkit::{STACK, cluster, config, desired, live_seed, seed, served};
use serde_json::json;

use crate::views::plan_text::render_text;
use clusterform_planner::plan_document;

/// Snapshots the text and the JSON of a plan under `name`.
fn pin(name: &str, config: &Config, live: &[LiveCluster], options: &PlanOptions) {
    let made = plan(config, live, options).unwrap();
    insta::assert_snapshot!(
        format!("{name}_text"),
        render_text(&made, &JobsByCluster::new(), false)
    );
    insta::assert_json_snapshot!(format!("{name}_json"), plan_document(&made));
}

fn one(cluster: DesiredCluster) -> Config {
    config(vec![cluster])
}

#[test]
fn create() {
    pin(
        "create",
        &one(desired("train01", seed())),
        &[],
        &PlanOptions::default(),
    );
}

#[test]
fn update_in_place() {
    let mut wanted = seed();
    wanted["labels"] = json!({"team": "research", "cost": "gpu"});
    wanted["nodePools"][1]["scalingSpec"]["maxNodeCount"] = json!(8);
    wanted["orchestratorSpec"]["slurmSpec"]["partitions"][0]["nodePoolIds"] =
        json!(["cpu", "login"]);
    let mut cluster = desired("train01", wanted);
    cluster.update_mode = Some(UpdateMode::UserOnly);
    pin(
        "update",
        &one(cluster),
        &[live_seed("train01")],
        &PlanOptions::default(),
    );
}

#[test]
fn replace_for_an_immutable_field() {
    let mut wanted = seed();
    wanted["network"]["subnetwork"] =
        json!("projects/my-proj/regions/us-central1/subnetworks/other");
    wanted["nodePools"][1]["machineSpec"]["machineType"] = json!("n2-standard-16");
    pin(
        "replace",
        &one(desired("train01", wanted)),
        &[live_seed("train01")],
        &PlanOptions::default(),
    );
}

#[test]
fn replace_on_request() {
    let options = PlanOptions {
        replace: vec!["train01".into()],
        ..PlanOptions::default()
    };
    pin(
        "replace_requested",
        &one(desired("train01", seed())),
        &[live_seed("train01")],
        &options,
    );
}

#[test]
fn delete_of_an_undeclared_cluster() {
    pin(
        "delete",
        &config(vec![]),
        &[live_seed("old01")],
        &PlanOptions::default(),
    );
}

#[test]
fn no_changes() {
    pin(
        "noop",
        &one(desired("train01", seed())),
        &[live_seed("train01")],
        &PlanOptions::default(),
    );
}

#[test]
fn warning_default_partition_moves() {
    let mut wanted = seed();
    wanted["nodePools"].as_array_mut().unwrap().push(json!({
        "id": "gpu", "machineSpec": {"machineType": "a4-highgpu-8g"},
        "scalingSpec": {"minNodeCount": 0, "maxNodeCount": 2}
    }));
    wanted["orchestratorSpec"]["slurmSpec"]["partitions"] =
        json!([{"id": "gpu", "nodePoolIds": ["gpu"]}, {"id": "cpu", "nodePoolIds": ["cpu"]}]);
    pin(
        "warning_default_partition",
        &one(desired("train01", wanted)),
        &[live_seed("train01")],
        &PlanOptions::default(),
    );
}

#[test]
fn broken_cluster_is_replaced_with_the_service_detail() {
    let mut broken = served("train01", &seed(), Some(STACK), "ERROR");
    broken["clusterStatus"]["detail"] = json!("node pool cpu failed to provision");
    broken["clusterStatus"]["error"] = json!({"code": 8, "message": "quota exceeded for N2 CPUs"});
    pin(
        "broken",
        &one(desired("train01", seed())),
        &[cluster(broken)],
        &PlanOptions::default(),
    );
}

#[test]
fn clusters_being_deleted_and_still_provisioning() {
    let stopping = served("old01", &seed(), Some(STACK), "STOPPING");
    let recreated = served("train02", &seed(), Some(STACK), "STOPPING");
    let config = config(vec![desired("train01", seed()), desired("train02", seed())]);
    let live = [cluster(stopping), cluster(recreated), live_seed("train01")];
    pin("being_deleted", &config, &live, &PlanOptions::default());
    let provisioning = served("train01", &seed(), Some(STACK), "PROVISIONING");
    let made = plan(
        &one(desired("train01", seed())),
        &[cluster(provisioning)],
        &PlanOptions::default(),
    )
    .unwrap();
    insta::assert_snapshot!(render_text(&made, &JobsByCluster::new(), false), @r"
    No changes. Your clusters match the configuration.
    Note: train01: the cluster is PROVISIONING right now: an operation started earlier is still running on it
    ");
}

#[test]
fn release_of_a_removed_cluster() {
    let mut released = config(vec![]);
    released.removed.push(clusterform_testkit::removed("old01"));
    let made = plan(&released, &[live_seed("old01")], &PlanOptions::default()).unwrap();
    insta::assert_snapshot!(render_text(&made, &JobsByCluster::new(), false), @r#"
    clusterform will perform the following actions:

      # old01 will no longer be managed (not destroyed)
      . cluster "old01" {
        }
        update mask: labels
        update mode: USER_ONLY (only the fields you set; the service does not refresh its managed fields)

    Plan: 0 to add, 0 to change, 0 to replace, 0 to destroy, 1 to release.
    "#);
}

#[test]
fn warning_busy_cluster() {
    let mut wanted = seed();
    wanted["orchestratorSpec"]["slurmSpec"]["prologBashScripts"] = json!(["echo new"]);
    let busy = cluster(served("train01", &seed(), Some(STACK), "UPDATING"));
    pin(
        "warning_busy",
        &one(desired("train01", wanted)),
        &[busy],
        &PlanOptions::default(),
    );
}

#[test]
fn sensitive_values_are_hidden_in_text() {
    let mut wanted = seed();
    wanted["nodePools"][1]["startupScript"] = json!("export TOKEN=hunter2");
    let mut cluster = desired("train01", wanted);
    cluster
        .sensitive_paths
        .insert("node_pools[cpu].startup_script".into());
    let made = plan(
        &one(cluster),
        &[live_seed("train01")],
        &PlanOptions::default(),
    )
    .unwrap();
    let text = render_text(&made, &JobsByCluster::new(), false);
    assert!(!text.contains("hunter2"), "{text}");
    insta::assert_snapshot!("sensitive_text", text);
}

#[test]
fn colour_only_when_asked() {
    let made = plan(
        &one(desired("train01", seed())),
        &[],
        &PlanOptions::default(),
    )
    .unwrap();
    assert!(!render_text(&made, &JobsByCluster::new(), false).contains('\u{1b}'));
    let coloured = render_text(&made, &JobsByCluster::new(), true);
    assert!(coloured.contains("\u{1b}[32m+"), "{coloured:?}");
}

#[test]
fn json_document_starts_with_its_version() {
    let made = plan(
        &one(desired("train01", seed())),
        &[],
        &PlanOptions::default(),
    )
    .unwrap();
    let document = plan_document(&made);
    let keys: Vec<&String> = document.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "format_version",
            "stack",
            "config_digest",
            "directory",
            "variables",
            "destroy",
            "summary",
            "changes"
        ]
    );
}
