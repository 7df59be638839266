//! Drift: a live cluster that differs from a declaration whose digest an earlier apply recorded
//! was changed outside clusterform, and its change names the fields; the record never changes
//! what the plan does.

use clusterform_config::{Config, DesiredCluster};
use clusterform_model::paths::IgnorePath;
use clusterform_model::{Action, LiveCluster};
use clusterform_planner::{
    AppliedDigests, ClusterChange, DriftKind, PlanBuilder, PlanOptions, desired_digest,
    field_digests, plan_document,
};
use serde_json::{Value, json};

use crate::support::{STACK, address, cluster, config, desired, live_seed, seed, served};

/// `train01` as declared (the seed).
fn declared() -> DesiredCluster {
    desired("train01", seed())
}

/// The seed cluster live, with `edit` made to it outside clusterform.
fn edited_live(edit: impl FnOnce(&mut Value)) -> LiveCluster {
    let mut live = seed();
    edit(&mut live);
    cluster(served("train01", &live, Some(STACK), "RUNNING"))
}

/// The `team` label changed and the cpu pool resized in the console.
fn hotfixed() -> LiveCluster {
    edited_live(|live| {
        live["labels"]["team"] = json!("oncall");
        live["nodePools"][1]["scalingSpec"]["maxNodeCount"] = json!(8);
    })
}

/// The one change of `config` planned against `live` with `applied`, if given.
fn planned(
    config: &Config,
    live: &[LiveCluster],
    applied: Option<&AppliedDigests>,
) -> ClusterChange {
    let options = PlanOptions::default();
    let mut builder = PlanBuilder::new(config, &options);
    if let Some(applied) = applied {
        builder = builder.with_applied(applied);
    }
    let plan = builder.finish(live).unwrap();
    assert_eq!(plan.changes.len(), 1);
    plan.changes.into_iter().next().unwrap()
}

/// A record saying that `cluster`, as declared, was applied last.
fn recorded(cluster: &DesiredCluster) -> AppliedDigests {
    [(address("train01"), desired_digest(cluster).unwrap())]
        .into_iter()
        .collect()
}

/// A `gpu` pool, as added in the console.
fn gpu_pool() -> Value {
    json!({
        "id": "gpu", "machineSpec": {"machineType": "a3-highgpu-8g"},
        "scalingSpec": {"minNodeCount": 0, "maxNodeCount": 2}, "zone": "us-central1-a"
    })
}

/// A record saying that `cluster` was applied last and left train01 as `left` is.
fn recorded_fields(cluster: &DesiredCluster, left: &LiveCluster) -> AppliedDigests {
    recorded(cluster).with_field_digests(address("train01"), field_digests(&left.cluster))
}

fn drift_of(change: &ClusterChange) -> Vec<(String, DriftKind)> {
    change
        .drift
        .iter()
        .map(|d| (d.path.to_string(), d.how))
        .collect()
}

#[test]
fn the_digest_is_stable_and_follows_what_is_compared() {
    let digest = desired_digest(&declared()).unwrap();
    assert_eq!(digest.len(), 64);
    assert!(digest.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(desired_digest(&declared()).unwrap(), digest);
    // Another order of the same labels is the same cluster.
    let mut reordered = seed();
    reordered["labels"] = json!({"b": "2", "a": "1"});
    let mut ordered = seed();
    ordered["labels"] = json!({"a": "1", "b": "2"});
    assert_eq!(
        desired_digest(&desired("train01", reordered)).unwrap(),
        desired_digest(&desired("train01", ordered)).unwrap()
    );
    let mut resized = seed();
    resized["nodePools"][1]["scalingSpec"]["maxNodeCount"] = json!(5);
    assert_ne!(
        desired_digest(&desired("train01", resized)).unwrap(),
        digest
    );
    let mut ignoring = declared();
    ignoring.lifecycle.ignore_changes = vec!["labels".parse::<IgnorePath>().unwrap()];
    assert_ne!(desired_digest(&ignoring).unwrap(), digest);
}

#[test]
fn a_create_and_an_update_carry_the_declared_clusters_digest() {
    let config = config(vec![declared()]);
    let digest = desired_digest(&declared()).unwrap();
    let create = planned(&config, &[], None);
    assert_eq!(create.action, Action::Create);
    assert_eq!(create.desired_digest.as_deref(), Some(digest.as_str()));
    let update = planned(&config, &[hotfixed()], None);
    assert_eq!(update.action, Action::Update);
    assert_eq!(update.desired_digest.as_deref(), Some(digest.as_str()));
    let unchanged = planned(&config, &[live_seed("train01")], None);
    assert_eq!(unchanged.action, Action::NoOp);
    assert_eq!(unchanged.desired_digest, None);
}

#[test]
fn the_recorded_digest_and_a_differing_cluster_name_the_drift() {
    let config = config(vec![declared()]);
    let change = planned(&config, &[hotfixed()], Some(&recorded(&declared())));
    assert_eq!(change.action, Action::Update);
    assert_eq!(
        drift_of(&change),
        [
            ("labels.team".to_owned(), DriftKind::Changed),
            (
                "node_pools[cpu].scaling_spec.max_node_count".to_owned(),
                DriftKind::Changed
            ),
        ]
    );
    // The plan still restores the configuration.
    let body = change.requests[0].body().unwrap();
    assert_eq!(body["labels"]["team"], "ml");
    assert_eq!(
        body["nodePools"][1]["scalingSpec"]["maxNodeCount"],
        json!(4)
    );
}

#[test]
fn a_label_removed_and_a_pool_deleted_outside_are_named_so() {
    let mut wanted = seed();
    wanted["labels"] = json!({"team": "ml", "cost": "a"});
    let cluster = desired("train01", wanted);
    let live = edited_live(|live| {
        live["labels"] = json!({"team": "ml"});
        live["nodePools"].as_array_mut().unwrap().push(gpu_pool());
    });
    let change = planned(
        &config(vec![cluster.clone()]),
        &[live],
        Some(&recorded(&cluster)),
    );
    assert_eq!(
        drift_of(&change),
        [
            ("labels.cost".to_owned(), DriftKind::Removed),
            ("node_pools[gpu]".to_owned(), DriftKind::Added),
        ]
    );
}

#[test]
fn another_digest_means_the_configuration_changed_and_says_nothing_of_drift() {
    let config = config(vec![declared()]);
    let mut before = seed();
    before["nodePools"][1]["scalingSpec"]["maxNodeCount"] = json!(8);
    let stale = recorded(&desired("train01", before));
    let change = planned(&config, &[hotfixed()], Some(&stale));
    assert_eq!(change.action, Action::Update);
    assert!(change.drift.is_empty(), "{:?}", change.drift);
}

#[test]
fn without_a_record_or_with_another_clusters_entry_there_is_no_drift() {
    let config = config(vec![declared()]);
    assert!(planned(&config, &[hotfixed()], None).drift.is_empty());
    let empty = AppliedDigests::default();
    assert!(
        planned(&config, &[hotfixed()], Some(&empty))
            .drift
            .is_empty()
    );
    let elsewhere: AppliedDigests = [(address("train02"), desired_digest(&declared()).unwrap())]
        .into_iter()
        .collect();
    assert!(
        planned(&config, &[hotfixed()], Some(&elsewhere))
            .drift
            .is_empty()
    );
}

#[test]
fn the_record_changes_no_action_field_mask_or_request() {
    let config = config(vec![declared()]);
    let record = recorded(&declared());
    for live in [hotfixed(), live_seed("train01")] {
        let with = planned(&config, std::slice::from_ref(&live), Some(&record));
        let without = planned(&config, std::slice::from_ref(&live), None);
        assert_eq!(with.action, without.action);
        assert_eq!(with.fields, without.fields);
        assert_eq!(with.update_mask(), without.update_mask());
        assert_eq!(with.update_mode(), without.update_mode());
        assert_eq!(with.requests, without.requests);
        assert_eq!(with.desired_digest, without.desired_digest);
        assert_eq!(
            ClusterChange {
                drift: Vec::new(),
                ..with
            },
            without
        );
    }
}

#[test]
fn a_cluster_in_sync_with_the_record_has_no_drift() {
    let config = config(vec![declared()]);
    let change = planned(
        &config,
        &[live_seed("train01")],
        Some(&recorded(&declared())),
    );
    assert_eq!(change.action, Action::NoOp);
    assert!(change.drift.is_empty());
}

#[test]
fn the_document_carries_the_drift_and_reads_it_back() {
    let config = config(vec![declared()]);
    let options = PlanOptions::default();
    let record = recorded(&declared());
    let plan = PlanBuilder::new(&config, &options)
        .with_applied(&record)
        .finish(&[hotfixed()])
        .unwrap();
    let document = plan_document(&plan);
    let change = &document["changes"][0];
    assert_eq!(
        change["drift"],
        json!([
            {"path": "labels.team", "how": "changed"},
            {"path": "node_pools[cpu].scaling_spec.max_node_count", "how": "changed"}
        ])
    );
    assert_eq!(
        change["desired_digest"],
        json!(desired_digest(&declared()).unwrap())
    );
    let read: clusterform_planner::Plan = serde_json::from_value(document).unwrap();
    assert_eq!(read.changes, plan.changes);
    // A plan without drift writes no `drift` key.
    let plain = clusterform_planner::plan(&config, &[hotfixed()], &options).unwrap();
    assert_eq!(plan_document(&plain)["changes"][0].get("drift"), None);
}

#[test]
fn a_saved_plan_whose_digest_was_edited_is_refused_and_one_without_is_not() {
    let config = config(vec![declared()]);
    let live = [hotfixed()];
    let saved = clusterform_planner::plan(&config, &live, &PlanOptions::default()).unwrap();
    assert!(clusterform_planner::saved_plan_mismatches(&saved, &config, &live).is_empty());
    let mut edited = saved.clone();
    edited.changes[0].desired_digest = Some("0".repeat(64));
    let mismatches = clusterform_planner::saved_plan_mismatches(&edited, &config, &live);
    assert_eq!(mismatches.len(), 1, "{mismatches:?}");
    assert!(
        mismatches[0].to_string().contains("desired digest"),
        "{}",
        mismatches[0]
    );
    let mut without = saved;
    without.changes[0].desired_digest = None;
    without.changes[0].drift = vec![];
    assert!(clusterform_planner::saved_plan_mismatches(&without, &config, &live).is_empty());
}

#[test]
fn drift_is_named_per_field_when_the_configuration_changed_too() {
    let mut wanted = seed();
    wanted["displayName"] = json!("Research training v2");
    wanted["labels"]["team"] = json!("vision");
    let config = config(vec![desired("train01", wanted)]);
    let record = recorded_fields(&declared(), &live_seed("train01"));
    let change = planned(&config, &[hotfixed()], Some(&record));
    assert_eq!(change.action, Action::Update);
    // display_name changed in the configuration only; the team label on both sides.
    assert_eq!(
        drift_of(&change),
        [
            ("labels.team".to_owned(), DriftKind::Changed),
            (
                "node_pools[cpu].scaling_spec.max_node_count".to_owned(),
                DriftKind::Changed
            ),
        ]
    );
    let team = change
        .fields
        .iter()
        .find(|field| field.path == "labels")
        .unwrap();
    assert_eq!(team.after.as_ref().unwrap()["team"], "vision");
    // The whole-digest rule says nothing once the configuration changed.
    assert!(
        planned(&config, &[hotfixed()], Some(&recorded(&declared())))
            .drift
            .is_empty()
    );
}

#[test]
fn a_field_the_configuration_now_matches_is_not_named() {
    // The configuration adopted the hotfix, or an apply of clusterform's that the record
    // missed (an interrupted run) made the cluster so: the record cannot tell which.
    let mut wanted = seed();
    wanted["labels"]["team"] = json!("oncall");
    wanted["nodePools"][1]["scalingSpec"]["maxNodeCount"] = json!(8);
    let config = config(vec![desired("train01", wanted)]);
    let record = recorded_fields(&declared(), &live_seed("train01"));
    let change = planned(&config, &[hotfixed()], Some(&record));
    assert_eq!(change.action, Action::NoOp);
    assert!(change.drift.is_empty(), "{:?}", change.drift);
}

#[test]
fn a_field_the_configuration_does_not_set_is_never_drift() {
    let config = config(vec![declared()]);
    let record = recorded_fields(&declared(), &live_seed("train01"));
    let live = edited_live(|live| {
        live["nodePools"][1]["nodeImage"] = json!("slurm-25-05-ubuntu-2404");
    });
    assert!(seed()["nodePools"][1].get("nodeImage").is_none());
    let change = planned(&config, &[live], Some(&record));
    assert_eq!(change.action, Action::NoOp);
    assert!(change.drift.is_empty(), "{:?}", change.drift);
}

#[test]
fn per_field_a_pool_added_or_deleted_is_one_entry_and_someone_elses_label_none() {
    let config = config(vec![declared()]);
    let record = recorded_fields(&declared(), &live_seed("train01"));
    let live = edited_live(|live| {
        live["labels"]["hotfix"] = json!("1");
        let pools = live["nodePools"].as_array_mut().unwrap();
        pools.retain(|pool| pool["id"] != "cpu");
        pools.push(gpu_pool());
    });
    let change = planned(&config, &[live], Some(&record));
    assert_eq!(
        drift_of(&change),
        // The label is someone else's: kept, so the plan changes nothing of it.
        [
            ("node_pools[cpu]".to_owned(), DriftKind::Removed),
            ("node_pools[gpu]".to_owned(), DriftKind::Added),
        ]
    );
}

#[test]
fn a_record_without_field_digests_is_judged_whole_and_one_with_them_per_field() {
    let config = config(vec![declared()]);
    let whole = planned(&config, &[hotfixed()], Some(&recorded(&declared())));
    let record = recorded_fields(&declared(), &live_seed("train01"));
    let per_field = planned(&config, &[hotfixed()], Some(&record));
    assert_eq!(whole.drift, per_field.drift);
    // Empty field digests are a record without them.
    let empty = recorded(&declared()).with_field_digests(address("train01"), Default::default());
    assert_eq!(empty.field_digests(&address("train01")), None);
}

#[test]
fn an_ignored_pool_changed_outside_is_no_drift() {
    let mut ignoring = declared();
    ignoring.lifecycle.ignore_changes = vec!["node_pool.cpu".parse::<IgnorePath>().unwrap()];
    let config = config(vec![ignoring.clone()]);
    let record = recorded_fields(&ignoring, &live_seed("train01"));
    let change = planned(&config, &[hotfixed()], Some(&record));
    assert_eq!(
        drift_of(&change),
        [("labels.team".to_owned(), DriftKind::Changed)]
    );
}

#[test]
fn a_recorded_path_this_version_cannot_read_names_nothing() {
    let config = config(vec![declared()]);
    let mut fields = field_digests(&live_seed("train01").cluster);
    fields.insert("not a [path".to_owned(), "0".repeat(16));
    let record = recorded(&declared()).with_field_digests(address("train01"), fields);
    let change = planned(&config, &[hotfixed()], Some(&record));
    assert_eq!(
        drift_of(&change),
        [
            ("labels.team".to_owned(), DriftKind::Changed),
            (
                "node_pools[cpu].scaling_spec.max_node_count".to_owned(),
                DriftKind::Changed
            ),
        ]
    );
}
