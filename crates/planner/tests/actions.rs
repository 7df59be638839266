//! The rules of `plan()`: actions, ownership, masks, modes, requests, options and errors.

use clusterform_config::Lifecycle;
use clusterform_model::LiveCluster;
use clusterform_model::duration::Seconds;
use clusterform_model::fields::{ImpactClass, UpdateMaskPath};
use clusterform_model::paths::{self, IgnorePath};
use clusterform_model::rest::RequestKind;
use clusterform_model::{Action, ClusterState, UpdateMode};
use clusterform_planner::{
    AppliedDigests, ChangeReason, IdleDeletion, InError, Plan, PlanBuilder, PlanError, PlanOptions,
    PlanWarning, plan,
};
use serde_json::{Value, json};

use crate::support::{STACK, cluster, config, desired, live_seed, plan_against_seed, seed, served};

fn options() -> PlanOptions {
    PlanOptions::default()
}

#[test]
fn a_served_cluster_matches_its_configuration() {
    let made = plan(
        &config(vec![desired("train01", seed())]),
        &[live_seed("train01")],
        &options(),
    )
    .unwrap();
    assert_eq!(made.changes.len(), 1);
    let change = &made.changes[0];
    assert_eq!(change.action, Action::NoOp, "{:#?}", change.fields);
    assert!(change.requests.is_empty());
    assert_eq!(
        change.live_update_time.as_deref(),
        Some("2026-11-02T10:30:00Z")
    );
    assert!(!made.has_changes());
}

#[test]
fn identity_ignores_the_project_number_in_live_names() {
    let owned = live_seed("train01");
    let name = owned.cluster.name.as_deref().unwrap_or_default();
    assert!(name.starts_with("projects/123456789012/"), "{name}");
    let made = plan(
        &config(vec![desired("train01", seed())]),
        &[owned, live_seed("old01")],
        &options(),
    )
    .unwrap();
    let actions: Vec<_> = made
        .changes
        .iter()
        .map(|c| (c.address.id().as_str(), c.action))
        .collect();
    assert_eq!(
        actions,
        [("old01", Action::Delete), ("train01", Action::NoOp)]
    );
    assert_eq!(
        made.changes[1].requests.len(),
        0,
        "no request is built from the live name"
    );
    assert_eq!(
        made.changes[0].requests[0].path(),
        "/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters/old01"
    );
}

#[test]
fn an_absent_cluster_is_created_with_the_ownership_label() {
    let made = plan(&config(vec![desired("train01", seed())]), &[], &options()).unwrap();
    let change = &made.changes[0];
    assert_eq!(change.action, Action::Create);
    let request = &change.requests[0];
    assert_eq!(request.method().as_str(), "POST");
    assert_eq!(
        request.path(),
        "/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters"
    );
    assert_eq!(
        request.query(),
        [("modelDevelopmentClusterId".to_owned(), "train01".to_owned())]
    );
    let body = request.body().unwrap();
    assert_eq!(
        body["labels"],
        json!({"team": "ml", "clusterform-stack": STACK})
    );
    assert_eq!(
        body["nodePools"][1]["scalingSpec"],
        json!({"minNodeCount": 0, "maxNodeCount": 4})
    );
    assert!(change.fields.iter().all(|f| f.before.is_none()));
}

#[test]
fn a_mutable_change_is_an_update_with_the_smallest_mask() {
    let mut wanted = seed();
    wanted["nodePools"][1]["scalingSpec"]["maxNodeCount"] = json!(8);
    let made = plan_against_seed(wanted);
    let change = &made.changes[0];
    assert_eq!(change.action, Action::Update);
    assert_eq!(change.update_mask(), [UpdateMaskPath::NodePools]);
    assert_eq!(change.update_mode(), Some(UpdateMode::UserAndService));
    assert_eq!(change.fields.len(), 1);
    assert_eq!(
        change.fields[0].path,
        "node_pools[cpu].scaling_spec.max_node_count"
    );
    assert_eq!(change.impacts[0].to_string(), "resizes pool cpu");
    let request = &change.requests[0];
    assert_eq!(request.method().as_str(), "PATCH");
    assert_eq!(
        request.query(),
        [
            ("updateMask".to_owned(), "node_pools".to_owned()),
            ("updateMode".to_owned(), "USER_AND_SERVICE".to_owned())
        ]
    );
    let body = request.body().unwrap();
    // The complete cluster as it should be after the update, without output-only fields.
    let mut keys: Vec<_> = body.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "displayName",
            "labels",
            "network",
            "nodePools",
            "orchestratorSpec",
            "runtimeSpec"
        ]
    );
    assert_eq!(body["labels"]["clusterform-stack"], STACK);
    assert_eq!(
        body["orchestratorSpec"]["slurmSpec"]["homeDirectoryStorage"],
        "projects/my-proj/locations/us-central1-a/instances/home"
    );
    // Complete list, desired order, server defaults kept, both counts sent.
    assert_eq!(body["nodePools"][0]["id"], "login");
    assert_eq!(body["nodePools"][1]["nodeImage"], "slurm-image-2026-10");
    assert_eq!(
        body["nodePools"][1]["bootDisk"],
        json!({"bootDiskType": "pd-ssd"})
    );
    assert_eq!(
        body["nodePools"][1]["scalingSpec"],
        json!({"minNodeCount": 0, "maxNodeCount": 8})
    );
}

#[test]
fn several_kinds_of_change_combine_their_mask_paths_in_order() {
    let mut wanted = seed();
    wanted["labels"] = json!({"team": "research"});
    wanted["orchestratorSpec"]["slurmSpec"]["epilogBashScripts"] = json!(["echo bye"]);
    wanted["orchestratorSpec"]["slurmSpec"]["partitions"][0]["nodePoolIds"] =
        json!(["cpu", "login"]);
    let made = plan_against_seed(wanted);
    let change = &made.changes[0];
    assert_eq!(
        change.update_mask(),
        [
            UpdateMaskPath::Labels,
            UpdateMaskPath::Partitions,
            UpdateMaskPath::EpilogBashScripts
        ]
    );
    let body = change.requests[0].body().unwrap();
    assert_eq!(
        body["labels"],
        json!({"team": "research", "clusterform-stack": STACK})
    );
    let impacts: Vec<String> = change.impacts.iter().map(ToString::to_string).collect();
    assert_eq!(impacts, ["immediate", "slurm sync ≤ 15 s"]);
}

/// API.md's mask list: a rename, the three Slurm configuration maps, the default partition,
/// `scheduling`, `accounting` and the Lustre export schedule are updated in place, each under
/// its own path.
/// The canonical cluster with the field at `pointer` (a JSON pointer) set to `value`.
fn seed_with(pointer: &str, value: Value) -> Value {
    let mut wanted = seed();
    let (parent, field) = pointer.rsplit_once('/').unwrap();
    let parent = if parent.is_empty() {
        &mut wanted
    } else {
        wanted.pointer_mut(parent).unwrap()
    };
    parent[field] = value;
    wanted
}

/// The Slurm settings whose combination the service does not check are named, so that apply
/// can ask the controller afterwards; other changes name none.
#[test]
fn a_change_names_the_slurm_setting_it_changes() {
    let cases: [(&str, Value, Option<&str>); 6] = [
        (
            "/orchestratorSpec/slurmSpec/config",
            json!({"DefMemPerCPU": "1024"}),
            Some("orchestrator_spec.slurm_spec.config"),
        ),
        (
            "/orchestratorSpec/slurmSpec/scheduling",
            json!({"priorityWeightAge": 1000}),
            Some("orchestrator_spec.slurm_spec.scheduling"),
        ),
        (
            "/orchestratorSpec/slurmSpec/accounting",
            json!({"accountingStorageEnforce": "limits,qos"}),
            Some("orchestrator_spec.slurm_spec.accounting"),
        ),
        (
            "/orchestratorSpec/slurmSpec/nodeSets",
            json!([{"nodePoolId": "cpu", "config": {"Weight": "10"}}]),
            Some("orchestrator_spec.slurm_spec.node_sets"),
        ),
        ("/displayName", json!("Renamed"), None),
        (
            "/lustreExportConfig",
            json!({"destinationBucket": "exports"}),
            None,
        ),
    ];
    for (pointer, value, setting) in cases {
        let made = plan_against_seed(seed_with(pointer, value));
        let named = made.changes[0].changed_slurm_setting();
        match setting {
            Some(setting) => assert!(
                named.is_some_and(|path| paths::is_within(path, setting)),
                "{pointer}: {named:?}"
            ),
            None => assert_eq!(named, None, "{pointer}"),
        }
    }
    let mut partition_config = seed();
    partition_config["orchestratorSpec"]["slurmSpec"]["partitions"][0]["config"] =
        json!({"MaxTime": "60"});
    let made = plan_against_seed(partition_config);
    let named = made.changes[0].changed_slurm_setting().unwrap();
    assert!(
        named.starts_with("orchestrator_spec.slurm_spec.partitions[") && named.contains("].config"),
        "{named}"
    );
}

#[test]
fn every_documented_mask_path_updates_in_place() {
    let cases: [(&str, Value, UpdateMaskPath); 7] = [
        (
            "/displayName",
            json!("Renamed"),
            UpdateMaskPath::DisplayName,
        ),
        (
            "/orchestratorSpec/slurmSpec/config",
            json!({"DefMemPerCPU": "1024"}),
            UpdateMaskPath::SlurmConfig,
        ),
        (
            "/orchestratorSpec/slurmSpec/nodeSets",
            json!([{"nodePoolId": "cpu", "config": {"Weight": "10"}}]),
            UpdateMaskPath::NodeSets,
        ),
        (
            "/orchestratorSpec/slurmSpec/defaultPartitionId",
            json!("other"),
            UpdateMaskPath::DefaultPartitionId,
        ),
        (
            "/orchestratorSpec/slurmSpec/scheduling",
            json!({"priorityWeightAge": 1000}),
            UpdateMaskPath::Scheduling,
        ),
        (
            "/orchestratorSpec/slurmSpec/accounting",
            json!({"accountingStorageEnforce": "limits,qos"}),
            UpdateMaskPath::Accounting,
        ),
        (
            "/lustreExportConfig",
            json!({"destinationBucket": "exports"}),
            UpdateMaskPath::LustreExportConfig,
        ),
    ];
    for (pointer, value, mask) in cases {
        let mut wanted = seed_with(pointer, value.clone());
        if mask == UpdateMaskPath::DefaultPartitionId {
            wanted["orchestratorSpec"]["slurmSpec"]["partitions"]
                .as_array_mut()
                .unwrap()
                .push(json!({"id": "other", "nodePoolIds": ["cpu"]}));
        }
        let made = plan_against_seed(wanted);
        let change = &made.changes[0];
        assert_eq!(change.action, Action::Update, "{pointer}");
        assert!(
            change.update_mask().contains(&mask),
            "{pointer}: {:?}",
            change.update_mask()
        );
        let body = change.requests[0].body().unwrap();
        assert_eq!(body.pointer(pointer), Some(&value), "{pointer}");
    }
}

#[test]
fn a_masked_message_keeps_the_live_fields_the_configuration_leaves_unset() {
    let mut live = seed();
    live["orchestratorSpec"]["slurmSpec"]["scheduling"] =
        json!({"priorityType": "priority/multifactor", "priorityWeightAge": "10"});
    let mut wanted = seed();
    wanted["orchestratorSpec"]["slurmSpec"]["scheduling"] = json!({"priorityWeightAge": 20});
    let made = plan(
        &config(vec![desired("train01", wanted)]),
        &[cluster(served("train01", &live, Some(STACK), "RUNNING"))],
        &options(),
    )
    .unwrap();
    let body = made.changes[0].requests[0].body().unwrap();
    assert_eq!(
        body["orchestratorSpec"]["slurmSpec"]["scheduling"],
        json!({"priorityType": "priority/multifactor", "priorityWeightAge": 20})
    );
}

#[test]
fn naming_the_partition_that_is_already_the_default_changes_nothing() {
    let mut wanted = seed();
    let first = wanted["orchestratorSpec"]["slurmSpec"]["partitions"][0]["id"].clone();
    wanted["orchestratorSpec"]["slurmSpec"]["defaultPartitionId"] = first;
    assert_eq!(
        plan_against_seed(wanted.clone()).changes[0].action,
        Action::NoOp
    );
    // Moving another partition first keeps the default only if it is named: an update then.
    let partitions = wanted["orchestratorSpec"]["slurmSpec"]["partitions"]
        .as_array_mut()
        .unwrap();
    partitions.insert(0, json!({"id": "urgent", "nodePoolIds": ["cpu"]}));
    let change = &plan_against_seed(wanted).changes[0];
    assert_eq!(change.action, Action::Update);
    assert!(
        change
            .update_mask()
            .contains(&UpdateMaskPath::DefaultPartitionId)
    );
}

#[test]
fn an_immutable_change_replaces_the_cluster_delete_first() {
    let mut wanted = seed();
    wanted["network"]["subnetwork"] = json!("projects/p/regions/us-central1/subnetworks/other");
    wanted["nodePools"][1]["scalingSpec"]["maxNodeCount"] = json!(8);
    let made = plan_against_seed(wanted);
    let change = &made.changes[0];
    assert_eq!(change.action, Action::Replace);
    let display = change
        .fields
        .iter()
        .find(|f| f.path == "network.subnetwork")
        .unwrap();
    assert!(display.forces_replacement);
    let scaling = change
        .fields
        .iter()
        .find(|f| f.path.as_str().contains("max_node_count"))
        .unwrap();
    assert!(!scaling.forces_replacement);
    let kinds: Vec<RequestKind> = change.requests.iter().map(|r| r.kind()).collect();
    assert_eq!(kinds, [RequestKind::Delete, RequestKind::Create]);
    assert!(change.requests[0].body().is_none());
    assert!(change.update_mask().is_empty());
    assert_eq!(change.impacts.len(), 1);
    assert_eq!(change.impacts[0].class, ImpactClass::ReplacesCluster);
}

#[test]
fn replace_option_forces_a_replacement() {
    let options = PlanOptions {
        replace: vec!["train01".into()],
        ..options()
    };
    let made = plan(
        &config(vec![desired("train01", seed())]),
        &[live_seed("train01")],
        &options,
    )
    .unwrap();
    assert_eq!(made.changes[0].action, Action::Replace);
    assert!(made.changes[0].fields.is_empty());
    let unknown = PlanOptions {
        replace: vec!["nope".into()],
        ..PlanOptions::default()
    };
    let err = plan(&config(vec![desired("train01", seed())]), &[], &unknown).unwrap_err();
    assert_eq!(
        err,
        PlanError::UnknownReplace {
            id: "nope".into(),
            closest: None
        }
    );
}

#[test]
fn only_this_stacks_undeclared_clusters_are_deleted() {
    let foreign = cluster(served("other", &seed(), Some("someone-else"), "RUNNING"));
    let unlabelled = cluster(served("manual", &seed(), None, "RUNNING"));
    let made = plan(
        &config(vec![]),
        &[live_seed("old01"), foreign, unlabelled],
        &options(),
    )
    .unwrap();
    assert_eq!(made.changes.len(), 1);
    let change = &made.changes[0];
    assert_eq!(change.address.id(), "old01");
    assert_eq!(change.action, Action::Delete);
    assert_eq!(change.requests[0].method().as_str(), "DELETE");
    assert_eq!(
        change.requests[0].path(),
        "/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters/old01"
    );
}

#[test]
fn a_declared_cluster_without_the_label_is_not_adopted() {
    let unlabelled = cluster(served("train01", &seed(), None, "RUNNING"));
    let err = plan(
        &config(vec![desired("train01", seed())]),
        &[unlabelled],
        &options(),
    )
    .unwrap_err();
    assert!(matches!(err, PlanError::Unowned { ref id, .. } if id == "train01"));
    assert!(
        err.to_string().contains("not managed by stack `research`"),
        "{err}"
    );
    let foreign = cluster(served("train01", &seed(), Some("prod"), "RUNNING"));
    let err = plan(
        &config(vec![desired("train01", seed())]),
        &[foreign],
        &options(),
    )
    .unwrap_err();
    assert_eq!(
        err,
        PlanError::OwnedByOtherStack {
            id: "train01".into(),
            stack: "prod".into()
        }
    );
}

#[test]
fn every_cluster_that_cannot_be_planned_is_reported() {
    let unlabelled = cluster(served("train01", &seed(), None, "RUNNING"));
    let foreign = cluster(served("train02", &seed(), Some("prod"), "RUNNING"));
    let err = plan(
        &config(vec![desired("train01", seed()), desired("train02", seed())]),
        &[unlabelled, foreign],
        &options(),
    )
    .unwrap_err();
    let PlanError::Several(errors) = &err else {
        panic!("expected both problems, got {err}");
    };
    assert_eq!(errors.len(), 2);
    let text = err.to_string();
    assert!(text.starts_with("2 clusters cannot be planned"), "{text}");
    assert!(
        text.contains("train01") && text.contains("train02"),
        "{text}"
    );
}

#[test]
fn prevent_destroy_refuses_replacement_and_destroy() {
    let mut guarded = desired(
        "train01",
        json!({"network": {"network": "projects/p/global/networks/other"}}),
    );
    guarded.lifecycle = Lifecycle {
        prevent_destroy: true,
        ignore_changes: vec![],
    };
    let err = plan(
        &config(vec![guarded.clone()]),
        &[live_seed("train01")],
        &options(),
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            PlanError::PreventDestroy {
                action: "replace",
                ..
            }
        ),
        "{err}"
    );
    let destroy = PlanOptions {
        destroy: true,
        ..options()
    };
    let err = plan(&config(vec![guarded]), &[live_seed("train01")], &destroy).unwrap_err();
    assert!(
        matches!(
            err,
            PlanError::PreventDestroy {
                action: "destroy",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn destroy_deletes_declared_clusters_that_exist() {
    let destroy = PlanOptions {
        destroy: true,
        ..options()
    };
    let clusters = vec![desired("train01", seed()), desired("absent", seed())];
    let made = plan(&config(clusters), &[live_seed("train01")], &destroy).unwrap();
    assert_eq!(made.changes.len(), 1);
    assert_eq!(made.changes[0].action, Action::Delete);
    assert_eq!(made.summary().destroy, 1);
}

#[test]
fn targets_narrow_the_plan() {
    let targeted = PlanOptions {
        targets: vec!["b".into()],
        ..options()
    };
    let clusters = vec![desired("a", seed()), desired("b", seed())];
    let made = plan(&config(clusters.clone()), &[live_seed("old")], &targeted).unwrap();
    let ids: Vec<&str> = made
        .changes
        .iter()
        .map(|c| c.address.id().as_str())
        .collect();
    assert_eq!(ids, ["b"]);
    let unknown = PlanOptions {
        targets: vec!["zzz".into()],
        ..options()
    };
    let err = plan(&config(clusters), &[], &unknown).unwrap_err();
    assert_eq!(
        err,
        PlanError::UnknownTarget {
            id: "zzz".into(),
            closest: None
        }
    );
}

#[test]
fn a_mistyped_target_or_replace_names_the_cluster_id_it_is_closest_to() {
    let clusters = vec![desired("train01", seed()), desired("eval01", seed())];
    let typo = PlanOptions {
        targets: vec!["trian01".into()],
        ..options()
    };
    let err = plan(&config(clusters.clone()), &[], &typo).unwrap_err();
    assert_eq!(
        err,
        PlanError::UnknownTarget {
            id: "trian01".into(),
            closest: Some("train01".into())
        }
    );
    let typo = PlanOptions {
        replace: vec!["evl01".into()],
        ..options()
    };
    let err = plan(&config(clusters), &[], &typo).unwrap_err();
    assert_eq!(
        err,
        PlanError::UnknownReplace {
            id: "evl01".into(),
            closest: Some("eval01".into())
        }
    );
}

#[test]
fn update_mode_precedence_is_flag_cluster_provider_default() {
    let mut wanted = seed();
    wanted["labels"] = json!({"team": "x"});
    let mode_of = |flag: Option<&str>, cluster_mode: Option<&str>, provider_mode: Option<&str>| {
        let mut cluster = desired("train01", wanted.clone());
        let parse = |mode: Option<&str>| mode.map(|m| m.parse::<UpdateMode>().unwrap());
        cluster.update_mode = parse(cluster_mode);
        let mut config = config(vec![cluster]);
        config.provider.update_mode = parse(provider_mode);
        let options = PlanOptions {
            update_mode: parse(flag),
            ..PlanOptions::default()
        };
        let made = plan(&config, &[live_seed("train01")], &options).unwrap();
        made.changes[0].requests[0].query()[1].1.clone()
    };
    assert_eq!(mode_of(None, None, None), "USER_AND_SERVICE");
    assert_eq!(mode_of(None, None, Some("USER_ONLY")), "USER_ONLY");
    assert_eq!(
        mode_of(None, Some("USER_ONLY"), Some("USER_AND_SERVICE")),
        "USER_ONLY"
    );
    assert_eq!(
        mode_of(Some("USER_AND_SERVICE"), Some("USER_ONLY"), None),
        "USER_AND_SERVICE"
    );
}

#[test]
fn ignore_changes_takes_paths_out_of_the_comparison() {
    let mut wanted = seed();
    wanted["labels"] = json!({"team": "changed"});
    wanted["nodePools"][1]["scalingSpec"]["maxNodeCount"] = json!(99);
    wanted["nodePools"][1]["zone"] = json!("us-central1-b");
    let mut cluster = desired("train01", wanted);
    cluster.lifecycle.ignore_changes = ["labels", "node_pool.cpu.scaling_spec"]
        .map(|path| path.parse::<IgnorePath>().unwrap())
        .to_vec();
    let made = plan(&config(vec![cluster]), &[live_seed("train01")], &options()).unwrap();
    let change = &made.changes[0];
    let paths: Vec<&str> = change.fields.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["node_pools[cpu].zone"]);
    // The ignored scaling keeps its live value in the complete pool list.
    let body = change.requests[0].body().unwrap();
    assert_eq!(
        body["nodePools"][1]["scalingSpec"]["maxNodeCount"],
        json!(4)
    );
}

#[test]
fn adding_and_removing_pools_is_an_update_of_node_pools() {
    let mut wanted = seed();
    wanted["nodePools"].as_array_mut().unwrap().push(json!({
        "id": "gpu", "machineSpec": {"machineType": "a4-highgpu-8g", "acceleratorType": "NVIDIA_B200", "acceleratorCount": 8},
        "scalingSpec": {"minNodeCount": 0, "maxNodeCount": 2}, "provisioningModel": "FLEX_START"
    }));
    let made = plan_against_seed(wanted);
    let change = &made.changes[0];
    assert_eq!(change.action, Action::Update);
    assert_eq!(change.update_mask(), [UpdateMaskPath::NodePools]);
    assert!(
        change
            .fields
            .iter()
            .all(|f| f.impact.class == ImpactClass::AddsPool)
    );
    assert_eq!(
        change.requests[0].body().unwrap()["nodePools"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[test]
fn sensitive_paths_mark_their_changes_and_timeouts_get_defaults() {
    let mut wanted = seed();
    wanted["nodePools"][1]["startupScript"] = json!("export TOKEN=secret");
    let mut cluster = desired("train01", wanted);
    cluster
        .sensitive_paths
        .insert("node_pools[cpu].startup_script".into());
    cluster.timeouts.create = Some(Seconds(5_400));
    let made = plan(&config(vec![cluster]), &[live_seed("train01")], &options()).unwrap();
    let change = &made.changes[0];
    assert!(change.fields[0].sensitive);
    assert_eq!(change.timeouts.create, 5_400);
    assert_eq!(change.timeouts.update, 3_600);
    assert_eq!(change.timeouts.delete, 7_200);
}

#[test]
fn destroy_masks_the_live_value_of_a_sensitive_attribute() {
    let mut wanted = seed();
    wanted["nodePools"][1]["startupScript"] = json!("export TOKEN=secret");
    let live = cluster(served("train01", &wanted, Some(STACK), "RUNNING"));
    let mut declared = desired("train01", wanted);
    declared
        .sensitive_paths
        .insert("node_pools[cpu].startup_script".into());
    let destroy = PlanOptions {
        destroy: true,
        ..options()
    };
    let made = plan(&config(vec![declared]), &[live], &destroy).unwrap();
    let script = made.changes[0]
        .fields
        .iter()
        .find(|f| f.path == "node_pools[cpu].startup_script")
        .expect("the deleted script is listed");
    assert!(script.sensitive);
}

#[test]
fn removing_a_pool_that_is_still_referenced_is_an_error() {
    let mut wanted = seed();
    wanted["nodePools"].as_array_mut().unwrap().remove(1);
    wanted["orchestratorSpec"]["slurmSpec"]
        .as_object_mut()
        .unwrap()
        .remove("partitions");
    let err = plan(
        &config(vec![desired("train01", wanted)]),
        &[live_seed("train01")],
        &options(),
    )
    .unwrap_err();
    assert!(
        matches!(err, PlanError::RemovedPoolStillReferenced { .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("partition `cpu` still refers to it"),
        "{err}"
    );
}

fn broken_seed(id: &str) -> Value {
    let mut broken = served(id, &seed(), Some(STACK), "ERROR");
    broken["clusterStatus"]["detail"] = json!("boot failure");
    broken
}

/// Plans `live` against `config`, the applied record saying that a create of clusterform's
/// left each of `tainted` failed.
fn plan_tainted(
    config: &clusterform_config::Config,
    live: &[LiveCluster],
    tainted: &[&LiveCluster],
    options: &PlanOptions,
) -> Result<Plan, PlanError> {
    let applied =
        AppliedDigests::default().with_tainted(tainted.iter().map(|live| live.address.clone()));
    PlanBuilder::new(config, options)
        .with_applied(&applied)
        .finish(live)
}

/// A broken cluster's reason says each thing once: a detail that repeats the error's message
/// is left out, and no part keeps a full stop before the `; ` that joins them.
#[test]
fn a_broken_cluster_s_reason_says_each_thing_once() {
    let reason = |detail: &str, message: &str| {
        let mut broken = broken_seed("train01");
        broken["clusterStatus"]["detail"] = json!(detail);
        broken["clusterStatus"]["error"] = json!({"code": 13, "message": message});
        let broken = cluster(broken);
        let made = plan_tainted(
            &config(vec![desired("train01", seed())]),
            std::slice::from_ref(&broken),
            &[&broken],
            &options(),
        )
        .unwrap();
        match &made.changes[0].reason {
            Some(ChangeReason::Broken { detail, .. }) => detail.clone(),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(
        reason("boot disk corrupted", "boot disk corrupted."),
        Some("INTERNAL: boot disk corrupted".into())
    );
    assert_eq!(
        reason("Creation failed; delete it.", "The operation failed."),
        Some("Creation failed; delete it; INTERNAL: The operation failed".into())
    );
}

/// Taint: a cluster in ERROR that a create of clusterform's left so is replaced.
#[test]
fn a_cluster_our_create_left_broken_is_replaced_unless_protected() {
    let broken = cluster(broken_seed("train01"));
    let made = plan_tainted(
        &config(vec![desired("train01", seed())]),
        std::slice::from_ref(&broken),
        &[&broken],
        &options(),
    )
    .unwrap();
    let change = &made.changes[0];
    assert_eq!(change.action, Action::Replace);
    assert_eq!(
        change.reason,
        Some(ChangeReason::Broken {
            state: "ERROR".into(),
            detail: Some("boot failure".into())
        })
    );
    assert_eq!(change.in_error, None, "a replacement needs no note");
    let kinds: Vec<_> = change.requests.iter().map(|r| r.kind()).collect();
    assert_eq!(kinds, [RequestKind::Delete, RequestKind::Create]);

    let mut guarded = desired("train01", seed());
    guarded.lifecycle.prevent_destroy = true;
    let err = plan_tainted(
        &config(vec![guarded]),
        std::slice::from_ref(&broken),
        &[&broken],
        &options(),
    )
    .unwrap_err();
    assert!(matches!(err, PlanError::BrokenButProtected { .. }), "{err}");
    assert!(err.to_string().contains("boot failure"), "{err}");
}

/// A cluster that went into ERROR without a create of ours failing is compared as any other,
/// and the change says it is in ERROR, since its `updateTime`.
#[test]
fn a_cluster_in_error_that_no_create_of_ours_left_so_is_not_replaced() {
    let broken = cluster(broken_seed("train01"));
    let in_error = Some(InError {
        state: "ERROR".into(),
        detail: Some("boot failure".into()),
        since: Some("2026-11-02T10:30:00Z".into()),
    });
    for applied in [None, Some(AppliedDigests::default())] {
        let declared = config(vec![desired("train01", seed())]);
        let defaults = options();
        let builder = PlanBuilder::new(&declared, &defaults);
        let builder = match &applied {
            Some(applied) => builder.with_applied(applied),
            None => builder,
        };
        let made = builder.finish(std::slice::from_ref(&broken)).unwrap();
        let change = &made.changes[0];
        assert_eq!(change.action, Action::NoOp, "{:#?}", change.fields);
        assert_eq!(change.reason, None);
        assert_eq!(change.in_error, in_error);
        assert!(change.requests.is_empty());
    }
    // A difference is an update, still with the note.
    let mut changed = seed();
    changed["labels"]["team"] = json!("research");
    let made = plan(
        &config(vec![desired("train01", changed)]),
        std::slice::from_ref(&broken),
        &options(),
    )
    .unwrap();
    assert_eq!(made.changes[0].action, Action::Update);
    assert_eq!(made.changes[0].in_error, in_error);
    // prevent_destroy does not stop a plan that replaces nothing.
    let mut guarded = desired("train01", seed());
    guarded.lifecycle.prevent_destroy = true;
    let made = plan(&config(vec![guarded]), &[broken], &options()).unwrap();
    assert_eq!(made.changes[0].action, Action::NoOp);
    assert_eq!(made.changes[0].in_error, in_error);
}

/// `--replace` replaces a cluster in ERROR whoever left it so.
#[test]
fn replace_replaces_a_cluster_in_error() {
    let broken = cluster(broken_seed("train01"));
    let replacing = PlanOptions {
        replace: vec!["train01".into()],
        ..PlanOptions::default()
    };
    let made = plan(
        &config(vec![desired("train01", seed())]),
        &[broken],
        &replacing,
    )
    .unwrap();
    let change = &made.changes[0];
    assert_eq!(change.action, Action::Replace);
    assert_eq!(change.reason, Some(ChangeReason::ReplaceRequested));
    assert_eq!(change.in_error, None);
}

/// A declared cluster that `destroy --idle-for` deleted is created again, saying so.
#[test]
fn a_cluster_deleted_for_being_idle_is_created_again_with_the_reason() {
    let declared = config(vec![desired("train01", seed())]);
    let address = declared.clusters[0].name.clone();
    let deletion = IdleDeletion {
        deleted_at: "2026-11-10T12:00:00Z".into(),
        idle_for: "2h".into(),
        evidence: "no active job or busy node; last busy 3h ago (>= 2h)".into(),
    };
    let applied = AppliedDigests::default().with_idle_deletion(address, deletion.clone());
    let made = PlanBuilder::new(&declared, &options())
        .with_applied(&applied)
        .finish(&[])
        .unwrap();
    let change = &made.changes[0];
    assert_eq!(change.action, Action::Create);
    assert_eq!(
        change.reason,
        Some(ChangeReason::RecreateAfterIdle {
            deleted_at: deletion.deleted_at,
            idle_for: deletion.idle_for,
            evidence: deletion.evidence,
        })
    );
    let document = serde_json::to_value(change).unwrap();
    assert_eq!(document["reason"]["kind"], "recreate_after_idle");
    let read: clusterform_planner::ClusterChange = serde_json::from_value(document).unwrap();
    assert_eq!(&read, change);
}

#[test]
fn busy_clusters_are_waited_for_never_replaced() {
    for state in ["PROVISIONING", "UPDATING"] {
        let busy = served("train01", &seed(), Some(STACK), state);
        let made = plan(
            &config(vec![desired("train01", seed())]),
            &[cluster(busy)],
            &options(),
        )
        .unwrap();
        assert_eq!(made.changes[0].action, Action::NoOp, "{state}");
        assert_eq!(
            made.changes[0].warnings,
            [PlanWarning::StillWorking {
                state: ClusterState::of(state)
            }],
            "{state}"
        );
    }
}

#[test]
fn a_cluster_being_deleted_gets_no_second_delete() {
    let stopping = cluster(served("old01", &seed(), Some(STACK), "STOPPING"));
    let made = plan(&config(vec![]), std::slice::from_ref(&stopping), &options()).unwrap();
    let change = &made.changes[0];
    assert_eq!(change.action, Action::Delete);
    assert_eq!(change.reason, Some(ChangeReason::BeingDeleted));
    assert!(change.requests.is_empty());
    assert!(
        made.has_changes(),
        "a deletion in flight is not \"No changes\""
    );

    let destroy = PlanOptions {
        destroy: true,
        ..options()
    };
    let made = plan(
        &config(vec![desired("old01", seed())]),
        std::slice::from_ref(&stopping),
        &destroy,
    )
    .unwrap();
    assert_eq!(made.changes[0].reason, Some(ChangeReason::BeingDeleted));
    assert!(made.changes[0].requests.is_empty());

    let made = plan(
        &config(vec![desired("old01", seed())]),
        &[stopping],
        &options(),
    )
    .unwrap();
    assert_eq!(made.changes[0].action, Action::Create);
    assert_eq!(made.changes[0].reason, Some(ChangeReason::BeingDeleted));
}

#[test]
fn deletions_say_why() {
    let made = plan(&config(vec![]), &[live_seed("old01")], &options()).unwrap();
    assert_eq!(
        made.changes[0].reason,
        Some(ChangeReason::NoLongerDeclared {
            stack: STACK.into()
        })
    );
    let destroy = PlanOptions {
        destroy: true,
        ..options()
    };
    let made = plan(
        &config(vec![desired("old01", seed())]),
        &[live_seed("old01")],
        &destroy,
    )
    .unwrap();
    assert_eq!(made.changes[0].reason, Some(ChangeReason::DestroyRequested));
}

#[test]
fn a_removed_block_releases_the_cluster_without_deleting_it() {
    let mut desired_config = config(vec![]);
    desired_config
        .removed
        .push(clusterform_testkit::removed("old01"));
    let foreign = cluster(served("other01", &seed(), Some("someone-else"), "RUNNING"));
    let made = plan(
        &desired_config,
        &[live_seed("old01"), foreign.clone()],
        &options(),
    )
    .unwrap();
    assert_eq!(made.changes.len(), 1);
    let change = &made.changes[0];
    assert_eq!(change.action, Action::Release);
    assert_eq!(change.reason, Some(ChangeReason::Removed));
    assert_eq!(made.summary().release, 1);
    assert_eq!(made.summary().destroy, 0);
    let request = &change.requests[0];
    assert_eq!(request.kind(), RequestKind::Update);
    assert_eq!(
        request.query(),
        [
            ("updateMask".to_owned(), "labels".to_owned()),
            ("updateMode".to_owned(), "USER_ONLY".to_owned())
        ]
    );
    let body = request.body().unwrap();
    assert_eq!(
        body["labels"],
        json!({"team": "ml"}),
        "only the ownership label goes"
    );
    assert!(body.get("name").is_none() && body.get("clusterStatus").is_none());

    desired_config.removed[0] = clusterform_testkit::removed("other01");
    let made = plan(&desired_config, &[foreign], &options()).unwrap();
    assert!(
        made.changes.is_empty(),
        "another stack's cluster is not released by us"
    );
}

/// A smaller pool says what the cluster reports of the pool's nodes: how many are above the
/// new maximum, or that none is; without a report, that any above it are removed.
#[test]
fn a_smaller_pool_says_how_many_reported_nodes_are_above_the_new_maximum() {
    let mut wanted = seed();
    wanted["nodePools"][1]["scalingSpec"]["maxNodeCount"] = json!(2);
    let warning = |reported: Option<usize>| {
        let mut live = served("train01", &seed(), Some(STACK), "RUNNING");
        if let Some(count) = reported {
            let nodes: Vec<Value> = (0..count)
                .map(|n| json!({"nodePoolId": "cpu", "nodeState": "RUNNING", "instanceName": format!("cpu-{n}")}))
                .chain([json!({"nodePoolId": "login", "nodeState": "RUNNING"})])
                .collect();
            live["clusterStatus"]["nodesStatus"] = json!(nodes);
        }
        let made = plan(
            &config(vec![desired("train01", wanted.clone())]),
            &[cluster(live)],
            &options(),
        )
        .unwrap();
        made.changes[0]
            .warnings
            .iter()
            .filter(|w| matches!(w, PlanWarning::PoolShrinks { .. }))
            .cloned()
            .collect::<Vec<_>>()
    };
    let shrinks = |nodes_reported: Option<usize>| PlanWarning::PoolShrinks {
        pool: "cpu".to_owned(),
        from: "4".to_owned(),
        to: "2".to_owned(),
        nodes_reported,
    };
    assert_eq!(warning(Some(3)), [shrinks(Some(3))]);
    assert_eq!(shrinks(Some(3)).nodes_removed(), Some(1));
    assert_eq!(warning(Some(1)), [shrinks(Some(1))]);
    assert_eq!(shrinks(Some(1)).nodes_removed(), Some(0));
    assert_eq!(warning(None), [shrinks(None)]);
    assert_eq!(shrinks(None).nodes_removed(), None);
}

/// A cluster no longer declared has no configuration left to say which of its values are
/// sensitive: its deletion hides every script and Slurm setting, and shows the rest.
#[test]
fn an_undeclared_deletion_hides_what_may_hold_secrets() {
    let mut secretive = seed();
    secretive["nodePools"][1]["startupScript"] = json!("#!/bin/bash\nexport TOKEN=s3cr3t");
    secretive["orchestratorSpec"]["slurmSpec"]["config"] =
        json!({"AccountingStoragePass": "s3cr3t"});
    let live = cluster(served("old01", &secretive, Some(STACK), "RUNNING"));
    let made = plan(&config(vec![]), &[live], &options()).unwrap();
    let fields = &made.changes[0].fields;
    let hidden: Vec<&str> = fields
        .iter()
        .filter(|f| f.sensitive)
        .map(|f| f.path.as_str())
        .collect();
    assert!(
        hidden.contains(&"node_pools[cpu].startup_script")
            && hidden.contains(&"orchestrator_spec.slurm_spec.prolog_bash_scripts")
            && hidden
                .iter()
                .any(|path| path.starts_with("orchestrator_spec.slurm_spec.config")),
        "{hidden:?}"
    );
    assert!(
        fields
            .iter()
            .any(|f| f.path == "display_name" && !f.sensitive),
        "{fields:?}"
    );
}

/// A `node_pools` update sends the whole pools back, with what the service filled in where the
/// configuration sets nothing: the plan names those values (the node image may pin the pool).
#[test]
fn a_node_pools_update_names_the_service_filled_values_it_sends_back() {
    let mut wanted = seed();
    wanted["nodePools"][1]["scalingSpec"]["maxNodeCount"] = json!(6);
    let mut live = served("train01", &seed(), Some(STACK), "RUNNING");
    for pool in live["nodePools"].as_array_mut().unwrap() {
        pool["nodeImage"] = json!("projects/img/global/images/family/slurm");
        pool["startupScript"] = json!("echo token-from-elsewhere");
    }
    let made = plan(
        &config(vec![desired("train01", wanted)]),
        &[cluster(live)],
        &options(),
    )
    .unwrap();
    let carried = made.changes[0]
        .warnings
        .iter()
        .find_map(|w| match w {
            PlanWarning::CarriedFromLive { values } => Some(values),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{:?}", made.changes[0].warnings));
    let value_of = |path: &str| {
        carried
            .iter()
            .find(|carried| carried.path == path)
            .unwrap_or_else(|| panic!("{path}: {carried:?}"))
            .value
            .clone()
    };
    assert_eq!(
        value_of("node_pools[cpu].node_image"),
        Some(json!("projects/img/global/images/family/slurm"))
    );
    assert_eq!(
        value_of("node_pools[cpu].startup_script"),
        None,
        "a script is not quoted"
    );
    assert!(!format!("{carried:?}").contains("token-from-elsewhere"));
    let mut labels = seed();
    labels["labels"]["team"] = json!("other");
    let labels_only = plan_against_seed(labels).changes.remove(0);
    assert!(
        !labels_only
            .warnings
            .iter()
            .any(|w| matches!(w, PlanWarning::CarriedFromLive { .. })),
        "a labels update sends no pool"
    );
}
