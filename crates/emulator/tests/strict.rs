//! Strict requests: unknown field names and bad enum values anywhere in a
//! create or update body are refused by path, output-only fields (a body
//! echoing Get) are accepted, immutable node pool fields cannot change in an
//! update, an update without `updateMask` follows AIP-134's implied mask, and
//! what the service refuses at request time (boot disks, reservations, the
//! login pool, Slurm maps, ...) is answered with Google's field violations.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{
    TestServer, cluster_name, cluster_path, seed, transition_options, violations,
};

fn patch_path(id: &str, query: &str) -> String {
    format!("{}?{query}", cluster_path(id))
}

async fn running_cluster(id: &str) -> TestServer {
    let server = TestServer::start(transition_options()).await;
    server.create_running(id, seed()).await;
    server
}

fn error_message(error: &Value) -> &str {
    error["error"]["message"].as_str().unwrap()
}

#[tokio::test]
async fn a_misspelled_field_anywhere_in_a_create_body_is_refused_by_path() {
    let server = TestServer::start(transition_options()).await;
    let cases = [
        (
            "/nodePools/1/machineSpec",
            "machineTyp",
            "model_development_cluster.node_pools[1].machine_spec",
        ),
        (
            "/orchestratorSpec/slurmSpec/partitions/0",
            "nodePoolId",
            "model_development_cluster.orchestrator_spec.slurm_spec.partitions[0]",
        ),
        ("/network", "sub_net", "model_development_cluster.network"),
        ("", "lustreExport", "model_development_cluster"),
    ];
    for (pointer, name, path) in cases {
        let mut cluster = seed();
        cluster.pointer_mut(pointer).unwrap()[name] = json!("x");
        let (status, error) = server.create("typo", cluster).await;
        assert_eq!(status, 400, "{name}");
        assert_eq!(error["error"]["status"], "INVALID_ARGUMENT");
        assert_eq!(
            error_message(&error),
            format!(
                "Invalid JSON payload received. Unknown name \"{name}\" at '{path}': Cannot find field."
            )
        );
    }
    assert!(server.emulator().cluster(&cluster_name("typo")).is_none());
}

#[tokio::test]
async fn every_documented_field_is_accepted_in_either_spelling() {
    let server = TestServer::start(transition_options()).await;
    let mut cluster = seed();
    cluster["runtime_spec"] = json!({"service_account": "sa@proj.iam.gserviceaccount.com"});
    cluster["lustreExportConfig"] = json!({
        "destinationBucket": "b", "days_of_week": ["MONDAY", "FRIDAY"],
        "lustres": ["l"], "startTime": {"hours": 2, "minutes": 30}
    });
    cluster["nodePools"][1] = json!({
        "id": "cpu", "machineSpec": {"machineType": "a3-megagpu-8g", "acceleratorType": "NVIDIA_H100_MEGA_80GB",
                                     "acceleratorCount": 8,
                                     "reservation_affinity": {"reservationAffinityType": "SPECIFIC_RESERVATION",
                                                              "key": "compute.googleapis.com/reservation-name",
                                                              "values": ["projects/my-proj/zones/us-central1-a/reservations/r1"]}},
        "scalingSpec": {"minNodeCount": "0", "maxNodeCount": "2"}, "zone": "us-central1-a",
        "enablePublicIps": false, "boot_disk": {"bootDiskType": "hyperdisk-balanced", "bootDiskSizeGb": "200"},
        "provisioningModel": "RESERVATION", "filestores": ["f"], "lustres": ["l"],
        "startupScript": "echo", "nodeImage": "img", "labels": {"pool": "gpu"},
        "confidentialInstanceConfig": {"confidentialInstanceType": "TDX"}
    });
    cluster["orchestratorSpec"]["slurmSpec"]["nodeSets"] =
        json!([{"nodePoolId": "cpu", "config": {"Weight": "1"}}]);
    cluster["orchestratorSpec"]["slurmSpec"]["default_partition_id"] = json!("cpu");
    cluster["orchestratorSpec"]["slurmSpec"]["prologBashScripts"] = json!(["echo a"]);
    cluster["orchestratorSpec"]["slurmSpec"]["epilog_bash_scripts"] = json!(["echo b"]);
    cluster["orchestratorSpec"]["slurmSpec"]["partitions"][0]["config"] = json!({"MaxTime": "60"});
    let (status, answer) = server.create("full", cluster).await;
    assert_eq!(status, 200, "{answer}");
}

#[tokio::test]
async fn enum_values_outside_their_lists_are_refused_with_field_and_value() {
    let server = TestServer::start(transition_options()).await;
    let cases = [
        (
            "/nodePools/1",
            "provisioningModel",
            "PREEMPTIBLE",
            "node_pools[1].provisioning_model",
        ),
        (
            "/nodePools/1/machineSpec",
            "acceleratorType",
            "NVIDIA_H300",
            "node_pools[1].machine_spec.accelerator_type",
        ),
        (
            "/nodePools/1/confidentialInstanceConfig",
            "confidentialInstanceType",
            "SGX",
            "node_pools[1].confidential_instance_config.confidential_instance_type",
        ),
        (
            "/nodePools/1/machineSpec/reservationAffinity",
            "reservationAffinityType",
            "ANY",
            "node_pools[1].machine_spec.reservation_affinity.reservation_affinity_type",
        ),
    ];
    for (pointer, field, value, path) in cases {
        let mut cluster = seed();
        let (parent, _) = pointer.rsplit_once('/').unwrap();
        let child = pointer.rsplit('/').next().unwrap();
        if cluster.pointer(pointer).is_none() {
            cluster.pointer_mut(parent).unwrap()[child] = json!({});
        }
        cluster.pointer_mut(pointer).unwrap()[field] = json!(value);
        let (status, error) = server.create("badenum", cluster).await;
        assert_eq!(status, 400, "{field}");
        assert_eq!(
            error_message(&error),
            format!("Invalid value at 'model_development_cluster.{path}' (TYPE_ENUM), \"{value}\"")
        );
    }
}

#[tokio::test]
async fn an_update_body_is_checked_as_strictly_as_a_create() {
    let server = running_cluster("strict").await;
    let before = server.emulator().cluster(&cluster_name("strict")).unwrap();
    let mut pools = before["nodePools"].clone();
    pools[0]["scalingSpec"]["maxNodeCnt"] = json!("2");
    let (status, error) = server
        .call(
            Method::PATCH,
            &patch_path("strict", "updateMask=node_pools"),
            Some(json!({"nodePools": pools, "displayNme": "outside the mask, still parsed"})),
        )
        .await;
    assert_eq!(status, 400);
    insta::assert_snapshot!(error_message(&error), @r#"
    Invalid JSON payload received. Unknown name "maxNodeCnt" at 'model_development_cluster.node_pools[0].scaling_spec': Cannot find field.
    Invalid JSON payload received. Unknown name "displayNme" at 'model_development_cluster': Cannot find field.
    "#);
    assert_eq!(
        server.emulator().cluster(&cluster_name("strict")).unwrap(),
        before
    );
}

#[tokio::test]
async fn a_patch_body_echoing_get_with_new_values_is_accepted() {
    let server = running_cluster("echo").await;
    let (_, mut body) = server.get(&cluster_path("echo")).await;
    body["labels"]["team"] = json!("infra");
    body["nodePools"][1]["scalingSpec"]["maxNodeCount"] = json!("8");
    body["displayName"] = json!("changed but not masked, so ignored");
    let (status, operation) = server
        .call(
            Method::PATCH,
            &patch_path(
                "echo",
                "updateMask=labels,node_pools&updateMode=USER_AND_SERVICE",
            ),
            Some(body),
        )
        .await;
    assert_eq!(status, 200, "{operation}");
    server.wait_done(&operation).await;
    let after = server.emulator().cluster(&cluster_name("echo")).unwrap();
    assert_eq!(after["labels"]["team"], "infra");
    assert_eq!(after["nodePools"][1]["scalingSpec"]["maxNodeCount"], "8");
    assert_eq!(after["displayName"], "Research training");
}

#[tokio::test]
async fn immutable_fields_of_an_existing_node_pool_cannot_change() {
    let server = running_cluster("immut").await;
    let before = server.emulator().cluster(&cluster_name("immut")).unwrap();
    let changes = [
        (
            "/machineSpec",
            "machineType",
            json!("n2-standard-16"),
            "machine_spec.machine_type",
        ),
        (
            "/machineSpec",
            "acceleratorType",
            json!("NVIDIA_L4"),
            "machine_spec.accelerator_type",
        ),
        (
            "/machineSpec",
            "acceleratorCount",
            json!(2),
            "machine_spec.accelerator_count",
        ),
        (
            "/machineSpec",
            "reservationAffinity",
            json!({"reservationAffinityType": "ANY_RESERVATION"}),
            "machine_spec.reservation_affinity",
        ),
        ("", "provisioningModel", json!("SPOT"), "provisioning_model"),
        (
            "",
            "confidentialInstanceConfig",
            json!({"confidentialInstanceType": "SEV"}),
            "confidential_instance_config",
        ),
    ];
    for (pointer, field, value, path) in changes {
        let mut pools = before["nodePools"].clone();
        pools[1].pointer_mut(pointer).unwrap()[field] = value;
        let (status, error) = server
            .call(
                Method::PATCH,
                &patch_path("immut", "updateMask=node_pools"),
                Some(json!({"nodePools": pools})),
            )
            .await;
        assert_eq!(status, 400, "{field}");
        let message = error_message(&error);
        assert!(
            message.contains(&format!("node pool `cpu`: {path} cannot be changed")),
            "{message}"
        );
    }
    assert_eq!(
        server.emulator().cluster(&cluster_name("immut")).unwrap(),
        before
    );
}

#[tokio::test]
async fn a_new_pool_replacing_an_old_one_may_use_another_machine() {
    let server = running_cluster("swap").await;
    let mut pools = server.emulator().cluster(&cluster_name("swap")).unwrap()["nodePools"].clone();
    pools[1]["id"] = json!("cpu2");
    pools[1]["machineSpec"]["machineType"] = json!("n2-standard-16");
    let body = json!({"nodePools": pools, "orchestratorSpec": {"slurmSpec": {"partitions": [{"id": "cpu", "nodePoolIds": ["cpu2"]}]}}});
    let (status, operation) = server
        .call(
            Method::PATCH,
            &patch_path(
                "swap",
                "updateMask=node_pools,orchestrator_spec.slurm_spec.partitions",
            ),
            Some(body),
        )
        .await;
    assert_eq!(status, 200, "{operation}");
}

#[tokio::test]
async fn without_a_mask_every_populated_updatable_field_is_applied() {
    let server = running_cluster("nomask").await;
    let (_, mut body) = server.get(&cluster_path("nomask")).await;
    body["labels"] = json!({"team": "infra"});
    body["orchestratorSpec"]["slurmSpec"]["prologBashScripts"] = json!(["echo hi"]);
    let (status, operation) = server
        .call(Method::PATCH, &cluster_path("nomask"), Some(body))
        .await;
    assert_eq!(status, 200, "{operation}");
    server.wait_done(&operation).await;
    let after = server.emulator().cluster(&cluster_name("nomask")).unwrap();
    assert_eq!(after["labels"], json!({"team": "infra"}));
    assert_eq!(
        after["orchestratorSpec"]["slurmSpec"]["prologBashScripts"],
        json!(["echo hi"])
    );
    assert_eq!(after["nodePools"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn without_a_mask_fields_left_out_are_kept() {
    let server = running_cluster("partial").await;
    let (status, operation) = server
        .call(
            Method::PATCH,
            &cluster_path("partial"),
            Some(json!({"labels": {"team": "infra"}})),
        )
        .await;
    assert_eq!(status, 200, "{operation}");
    server.wait_done(&operation).await;
    let after = server.emulator().cluster(&cluster_name("partial")).unwrap();
    assert_eq!(after["labels"], json!({"team": "infra"}));
    assert_eq!(
        after["orchestratorSpec"]["slurmSpec"]["partitions"][0]["id"],
        "cpu"
    );
}

#[tokio::test]
async fn without_a_mask_a_changed_non_updatable_field_is_refused_by_name() {
    let server = running_cluster("fixed").await;
    let before = server.emulator().cluster(&cluster_name("fixed")).unwrap();
    let (status, error) = server
        .call(
            Method::PATCH,
            &cluster_path("fixed"),
            Some(json!({"labels": {"team": "infra"},
                        "network": {"network": "projects/my-proj/global/networks/other"}})),
        )
        .await;
    assert_eq!(status, 400);
    insta::assert_snapshot!(error_message(&error), @"The request has no updateMask, so every field it populates is to be updated, but network.network cannot be updated and differs from the cluster's value. Updatable fields are display_name, labels, node_pools, orchestrator_spec.slurm_spec.partitions, orchestrator_spec.slurm_spec.login_node_pool_id, orchestrator_spec.slurm_spec.prolog_bash_scripts, orchestrator_spec.slurm_spec.epilog_bash_scripts, orchestrator_spec.slurm_spec.default_partition_id, orchestrator_spec.slurm_spec.config, orchestrator_spec.slurm_spec.node_sets, orchestrator_spec.slurm_spec.accounting, orchestrator_spec.slurm_spec.scheduling, lustre_export_config.");
    assert_eq!(
        server.emulator().cluster(&cluster_name("fixed")).unwrap(),
        before
    );
}

/// The CPU cluster whose `cpu` pool is an A4 pool on spot VMs.
fn a4_cluster() -> Value {
    let mut cluster = seed();
    cluster["nodePools"][1]["machineSpec"] = json!({"machineType": "a4-highgpu-8g",
        "acceleratorType": "NVIDIA_B200", "acceleratorCount": 8});
    cluster["nodePools"][1]["provisioningModel"] = json!("SPOT");
    cluster
}

#[tokio::test]
async fn a_refused_create_lists_each_field_in_the_message_and_a_bad_request_detail() {
    let server = TestServer::start(transition_options()).await;
    let mut cluster = a4_cluster();
    cluster["nodePools"][1]["bootDisk"] = json!({"bootDiskType": "pd-standard"});
    cluster["lustreExportConfig"] = json!({"destinationBucket": "gs://exports"});
    let (status, error) = server.create("refused", cluster).await;
    assert_eq!(status, 400);
    assert_eq!(error["error"]["code"], 400);
    assert_eq!(error["error"]["status"], "INVALID_ARGUMENT");
    insta::assert_snapshot!(error_message(&error), @r#"List of found errors:	1.Field: model_development_cluster.node_pools[1].boot_disk.boot_disk_type; Message: Machine type a4-highgpu-8g requires boot_disk_type to be unset (the default) or "hyperdisk-balanced"; got "pd-standard"	2.Field: model_development_cluster.lustre_export_config.destination_bucket; Message: destination_bucket must be a Cloud Storage bucket name without the gs:// prefix; got "gs://exports"	"#);
    insta::assert_snapshot!(violations(&error), @r#"
    model_development_cluster.node_pools[1].boot_disk.boot_disk_type: Machine type a4-highgpu-8g requires boot_disk_type to be unset (the default) or "hyperdisk-balanced"; got "pd-standard"
    model_development_cluster.lustre_export_config.destination_bucket: destination_bucket must be a Cloud Storage bucket name without the gs:// prefix; got "gs://exports"
    "#);
    assert!(
        server
            .emulator()
            .cluster(&cluster_name("refused"))
            .is_none()
    );
}

#[tokio::test]
async fn a_gpu_pool_without_a_provisioning_model_is_refused_even_unnamed() {
    let server = TestServer::start(transition_options()).await;
    let mut named = a4_cluster();
    named["nodePools"][1]
        .as_object_mut()
        .unwrap()
        .remove("provisioningModel");
    let mut unnamed = named.clone();
    unnamed["nodePools"][1]["machineSpec"] = json!({"machineType": "a3-ultragpu-8g"});
    for (id, cluster) in [("named", named), ("unnamed", unnamed)] {
        let (status, error) = server.create(id, cluster).await;
        assert_eq!(status, 400, "{id}: {error}");
        assert_eq!(
            violations(&error).trim(),
            "model_development_cluster.node_pools[1].provisioning_model: provisioning_model must be set for GPU node pools",
            "{id}"
        );
    }
    let mut reserved = a4_cluster();
    reserved["nodePools"][1]["provisioningModel"] = json!("RESERVATION");
    reserved["nodePools"][1]["machineSpec"]["reservationAffinity"] = json!({
        "reservationAffinityType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["projects/p/zones/us-central1-a/reservations/r"]});
    let (status, answer) = server.create("reserved", reserved).await;
    assert_eq!(status, 200, "{answer}");
}

#[tokio::test]
async fn field_paths_index_pools_in_request_order() {
    let server = TestServer::start(transition_options()).await;
    let mut cluster = a4_cluster();
    let pools = cluster["nodePools"].as_array_mut().unwrap();
    pools.reverse();
    pools[0]["bootDisk"] = json!({"bootDiskType": "pd-ssd"});
    let (status, error) = server.create("order", cluster).await;
    assert_eq!(status, 400);
    assert_eq!(
        error["error"]["details"][0]["fieldViolations"][0]["field"],
        "model_development_cluster.node_pools[0].boot_disk.boot_disk_type"
    );
}

#[tokio::test]
async fn an_a4_pool_without_a_boot_disk_type_gets_hyperdisk_and_stays_updatable() {
    let server = TestServer::start(transition_options()).await;
    server.create_running("a4", a4_cluster()).await;
    let live = server.emulator().cluster(&cluster_name("a4")).unwrap();
    assert_eq!(
        live["nodePools"][1]["bootDisk"]["bootDiskType"],
        "hyperdisk-balanced"
    );
    assert_eq!(
        live["nodePools"][0]["bootDisk"]["bootDiskType"], "pd-standard",
        "a pool's own disk type is kept"
    );
    let labels = json!({"labels": {"team": "vision"}});
    let (status, answer) = server
        .call(
            Method::PATCH,
            &patch_path("a4", "updateMask=labels"),
            Some(labels),
        )
        .await;
    assert_eq!(
        status, 200,
        "the service's default passes its own rule: {answer}"
    );
}

#[tokio::test]
async fn an_update_is_held_to_the_same_rules_and_changes_nothing() {
    let server = running_cluster("rules").await;
    let before = server.emulator().cluster(&cluster_name("rules")).unwrap();
    let mut pools = seed()["nodePools"].clone();
    pools[0]["scalingSpec"]["maxNodeCount"] = json!(3);
    let (status, error) = server
        .call(
            Method::PATCH,
            &patch_path("rules", "updateMask=node_pools"),
            Some(json!({"nodePools": pools})),
        )
        .await;
    assert_eq!(status, 400);
    insta::assert_snapshot!(violations(&error), @"model_development_cluster.node_pools[0].scaling_spec.max_node_count: For the login node pool, max_node_count must be the same as min_node_count; got 3 and 1");
    let partitions = json!({"orchestratorSpec": {"slurmSpec": {"partitions": [
        {"id": "cpu", "nodePoolIds": ["cpu"], "config": {"default": "YES", "Requeue_Exit": "1"}}
    ]}}});
    let mask = "updateMask=orchestrator_spec.slurm_spec.partitions";
    let (status, error) = server
        .call(Method::PATCH, &patch_path("rules", mask), Some(partitions))
        .await;
    assert_eq!(status, 400);
    insta::assert_snapshot!(violations(&error), @r"
    model_development_cluster.orchestrator_spec.slurm_spec.partitions[0].config: The Slurm parameter default cannot be set on a partition: use default_partition_id
    model_development_cluster.orchestrator_spec.slurm_spec.partitions[0].config: The Slurm parameter Requeue_Exit cannot be set: the service manages health checks, requeueing, prolog and epilog (use prolog_bash_scripts and epilog_bash_scripts)
    ");
    assert_eq!(
        server.emulator().cluster(&cluster_name("rules")).unwrap(),
        before
    );
}
