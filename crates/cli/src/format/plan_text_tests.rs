//! Text and JSON renderings, pinned by snapshots for every kind of action and warning.

use clusterform_config::{Config, DesiredCluster};
use clusterform_model::{JobsByCluster, LiveCluster, UpdateMode};
use clusterform_planner::{AppliedDigests, IdleDeletion, PlanBuilder, PlanOptions, plan};
use clusterform_testkit::{STACK, cluster, config, desired, live_seed, seed, served};
use serde_json::json;

use crate::format::plan_text::render_text;
use clusterform_planner::plan_document;

/// Snapshots the text and the JSON of a plan under `name`.
fn pin(name: &str, config: &Config, live: &[LiveCluster], options: &PlanOptions) {
    pin_with(name, config, live, options, &AppliedDigests::default());
}

/// [`pin`], with what earlier runs recorded.
fn pin_with(
    name: &str,
    config: &Config,
    live: &[LiveCluster],
    options: &PlanOptions,
    applied: &AppliedDigests,
) {
    let made = PlanBuilder::new(config, options)
        .with_applied(applied)
        .finish(live)
        .unwrap();
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

/// train01 in ERROR with the service's detail.
fn in_error() -> LiveCluster {
    let mut broken = served("train01", &seed(), Some(STACK), "ERROR");
    broken["clusterStatus"]["detail"] = json!("node pool cpu failed to provision");
    broken["clusterStatus"]["error"] = json!({"code": 8, "message": "quota exceeded for N2 CPUs"});
    // It ran before it failed: not the leftover of a create whose record was lost.
    broken["startTime"] = json!("2026-11-02T10:05:00Z");
    cluster(broken)
}

#[test]
fn broken_cluster_is_replaced_with_the_service_detail() {
    let broken = in_error();
    let tainted = AppliedDigests::default().with_tainted([broken.address.clone()]);
    pin_with(
        "broken",
        &one(desired("train01", seed())),
        &[broken],
        &PlanOptions::default(),
        &tainted,
    );
}

#[test]
fn a_cluster_in_error_that_no_create_of_ours_left_so_is_noted_not_replaced() {
    pin(
        "in_error",
        &one(desired("train01", seed())),
        &[in_error()],
        &PlanOptions::default(),
    );
    // Beside other changes, the note comes before the counts.
    let config = config(vec![desired("train01", seed()), desired("train02", seed())]);
    let made = plan(&config, &[in_error()], &PlanOptions::default()).unwrap();
    let text = render_text(&made, &JobsByCluster::new(), false);
    let note = text.find("Note: train01: the cluster is in ERROR").unwrap();
    assert!(text.find("+ cluster \"train02\"").unwrap() < note, "{text}");
    assert!(note < text.find("Plan: 1 to add").unwrap(), "{text}");
}

#[test]
fn a_cluster_deleted_for_being_idle_is_created_again_saying_so() {
    let config = one(desired("train01", seed()));
    let applied = AppliedDigests::default().with_idle_deletion(
        config.clusters[0].name.clone(),
        IdleDeletion {
            deleted_at: "2026-11-10T12:00:00Z".into(),
            idle_for: "2h".into(),
            evidence: "no active job or busy node; last busy 3h ago (>= 2h)".into(),
        },
    );
    let made = PlanBuilder::new(&config, &PlanOptions::default())
        .with_applied(&applied)
        .finish(&[])
        .unwrap();
    let text = render_text(&made, &JobsByCluster::new(), false);
    let head: Vec<&str> = text.lines().take(3).collect();
    insta::assert_snapshot!(head.join("\n"), @"
    clusterform will perform the following actions:

      # train01 was deleted for being idle at 2026-11-10T12:00:00Z (destroy --idle-for 2h); apply creates it again
    ");
    assert!(
        text.contains("    # its Slurm then: no active job or busy node; last busy 3h ago (>= 2h)"),
        "{text}"
    );
    let document = plan_document(&made);
    insta::assert_json_snapshot!(document["changes"][0]["reason"], @r#"
    {
      "kind": "recreate_after_idle",
      "deleted_at": "2026-11-10T12:00:00Z",
      "idle_for": "2h",
      "evidence": "no active job or busy node; last busy 3h ago (>= 2h)"
    }
    "#);
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
    Note: train01: the cluster is PROVISIONING right now: an operation is in flight on it (started by another run)
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
            "config_files",
            "directory",
            "variables",
            "flags",
            "flags_digest",
            "summary",
            "changes"
        ]
    );
}

#[test]
fn a_replacement_says_its_machines_and_reservations_are_not_held() {
    let mut wanted = seed();
    wanted["nodePools"][1]["machineSpec"]["reservationAffinity"] = json!({
        "reservationAffinityType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["projects/my-proj/zones/us-central1-a/reservations/h200-block"],
    });
    let options = PlanOptions {
        replace: vec!["train01".into()],
        ..PlanOptions::default()
    };
    let made = plan(
        &one(desired("train01", wanted)),
        &[live_seed("train01")],
        &options,
    )
    .unwrap();
    let text = render_text(&made, &JobsByCluster::new(), false);
    let notes: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("    # "))
        .collect();
    let id = made.changes[0].address.id();
    assert_eq!(
        notes,
        [
            format!("    # the live cluster is deleted first: its machines are not held for the new one, so if the create finds no machines, {id} is gone").as_str(),
            "    # node pool \"cpu\" consumes reservation projects/my-proj/zones/us-central1-a/reservations/h200-block: the delete frees it and the create consumes it again (another consumer may take it in between)",
        ],
        "{text}"
    );
}
