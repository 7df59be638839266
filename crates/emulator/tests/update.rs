//! Update (PATCH): mask validation, whole replacement of masked fields, update
//! modes, reference checks after the mask is applied, and ABORTED while
//! another operation runs.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{
    TestServer, cluster_name, cluster_path, fast_options, seed, transition_options,
};

fn patch_path(id: &str, query: &str) -> String {
    format!("{}?{query}", cluster_path(id))
}

async fn running_cluster() -> TestServer {
    let server = TestServer::start(transition_options()).await;
    server.create_running("train01", seed()).await;
    server
}

#[tokio::test]
async fn node_pools_are_replaced_whole_and_a_pool_left_out_is_deleted() {
    let server = running_cluster().await;
    let before = server.emulator().cluster(&cluster_name("train01")).unwrap();
    let body = json!({
        "nodePools": [
            {"id": "login", "machineSpec": {"machineType": "n2-standard-8"},
             "scalingSpec": {"minNodeCount": 1, "maxNodeCount": 1}},
            {"id": "big", "machine_spec": {"machine_type": "n2-standard-32"},
             "scaling_spec": {"min_node_count": 0, "max_node_count": 8}}
        ],
        "orchestratorSpec": {"slurmSpec": {"partitions": [{"id": "big", "nodePoolIds": ["big"]}]}},
        "displayName": "ignored because it is not masked"
    });
    let query =
        "updateMask=node_pools,orchestrator_spec.slurm_spec.partitions&updateMode=USER_AND_SERVICE";
    let (status, operation) = server
        .call(Method::PATCH, &patch_path("train01", query), Some(body))
        .await;
    assert_eq!(status, 200, "{operation}");
    assert_eq!(operation["metadata"]["updateMode"], "USER_AND_SERVICE");
    let during = server.emulator().cluster(&cluster_name("train01")).unwrap();
    assert_eq!(during["clusterStatus"]["state"], "UPDATING");
    assert_eq!(
        during["nodePools"], before["nodePools"],
        "the change lands when the operation finishes"
    );

    let finished = server.wait_done(&operation).await;
    let (_, after) = server.get(&cluster_path("train01")).await;
    assert_eq!(finished["response"]["nodePools"], after["nodePools"]);
    assert_eq!(after["clusterStatus"]["state"], "RUNNING");
    assert_eq!(after["displayName"], "Research training");
    assert_eq!(after["startTime"], before["startTime"]);
    assert_ne!(after["updateTime"], before["updateTime"]);
    let pools: Vec<&str> = after["nodePools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(pools, ["login", "big"]);
    assert_eq!(
        after["nodePools"][1]["scalingSpec"],
        json!({"minNodeCount": "0", "maxNodeCount": "8"})
    );
    assert_eq!(
        after["nodePools"][1]["bootDisk"],
        json!({"bootDiskType": "pd-ssd", "bootDiskSizeGb": "100"})
    );
    assert_eq!(
        after["nodePools"][1]["nodeImage"],
        "slurm-24-11-ubuntu-2204"
    );
}

#[tokio::test]
async fn labels_and_scripts_can_be_cleared_by_leaving_them_out() {
    let server = running_cluster().await;
    let query = "updateMask=labels,orchestrator_spec.slurm_spec.prolog_bash_scripts";
    let (status, operation) = server
        .call(
            Method::PATCH,
            &patch_path("train01", query),
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 200);
    server.wait_done(&operation).await;
    let after = server.emulator().cluster(&cluster_name("train01")).unwrap();
    assert!(after.get("labels").is_none());
}

#[tokio::test]
async fn a_path_outside_the_allowed_list_is_refused_by_name() {
    let server = running_cluster().await;
    let (status, error) = server
        .call(
            Method::PATCH,
            &patch_path("train01", "updateMask=labels,network"),
            Some(json!({"network": {"network": "projects/p/global/networks/other"}})),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(error["error"]["status"], "INVALID_ARGUMENT");
    insta::assert_snapshot!(error["error"]["message"].as_str().unwrap(), @"update mask path `network` is not updatable; allowed paths are display_name, labels, node_pools, orchestrator_spec.slurm_spec.partitions, orchestrator_spec.slurm_spec.login_node_pool_id, orchestrator_spec.slurm_spec.prolog_bash_scripts, orchestrator_spec.slurm_spec.epilog_bash_scripts, orchestrator_spec.slurm_spec.default_partition_id, orchestrator_spec.slurm_spec.config, orchestrator_spec.slurm_spec.node_sets, orchestrator_spec.slurm_spec.accounting, orchestrator_spec.slurm_spec.scheduling, lustre_export_config.");
}

#[tokio::test]
async fn a_bad_update_mode_is_refused() {
    let server = running_cluster().await;
    for (query, message) in [(
        "updateMask=labels&updateMode=EVERYTHING",
        "Invalid updateMode `EVERYTHING`; expected one of UPDATE_MODE_UNSPECIFIED, USER_ONLY, USER_AND_SERVICE.",
    )] {
        let (status, error) = server
            .call(
                Method::PATCH,
                &patch_path("train01", query),
                Some(json!({})),
            )
            .await;
        assert_eq!(status, 400, "{query}");
        assert_eq!(error["error"]["message"], message);
    }
}

#[tokio::test]
async fn the_snake_case_query_parameters_are_accepted_and_the_mode_is_recorded() {
    let server = running_cluster().await;
    server.emulator().clear_requests();
    let query = "update_mask=labels&update_mode=USER_ONLY";
    let (status, operation) = server
        .call(
            Method::PATCH,
            &patch_path("train01", query),
            Some(json!({"labels": {"team": "infra"}})),
        )
        .await;
    assert_eq!(status, 200, "{operation}");
    assert_eq!(operation["metadata"]["updateMode"], "USER_ONLY");
    let requests = server.emulator().requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method, "PATCH");
    assert_eq!(requests[0].query, query);
    assert_eq!(requests[0].body, Some(json!({"labels": {"team": "infra"}})));
    assert_eq!(requests[0].status, 200);
}

#[tokio::test]
async fn an_update_leaving_a_dangling_reference_is_refused_and_changes_nothing() {
    let server = running_cluster().await;
    let before = server.emulator().cluster(&cluster_name("train01")).unwrap();
    let only_login =
        json!({"nodePools": [{"id": "login", "machineSpec": {"machineType": "n2-standard-8"}}]});
    let (status, error) = server
        .call(
            Method::PATCH,
            &patch_path("train01", "updateMask=node_pools"),
            Some(only_login),
        )
        .await;
    assert_eq!(status, 400);
    insta::assert_snapshot!(error["error"]["message"].as_str().unwrap(), @"The update was rejected and the cluster is unchanged. List of found errors:\t1.Field: model_development_cluster.orchestrator_spec.slurm_spec.partitions[0].node_pool_ids[0]; Message: `cpu` does not name a node pool.\t");
    assert_eq!(
        error["error"]["details"][0]["fieldViolations"][0]["field"],
        "model_development_cluster.orchestrator_spec.slurm_spec.partitions[0].node_pool_ids[0]",
        "the field violations survive the update's wording"
    );
    let login = json!({"orchestratorSpec": {"slurmSpec": {"loginNodePoolId": "nope"}}});
    let mask = "updateMask=orchestrator_spec.slurm_spec.login_node_pool_id";
    let (status, _) = server
        .call(Method::PATCH, &patch_path("train01", mask), Some(login))
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        server.emulator().cluster(&cluster_name("train01")).unwrap(),
        before
    );
}

#[tokio::test]
async fn updating_a_missing_cluster_is_not_found() {
    let server = TestServer::start(fast_options()).await;
    let (status, _) = server
        .call(
            Method::PATCH,
            &patch_path("ghost", "updateMask=labels"),
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn any_change_while_an_operation_runs_is_aborted() {
    let server = TestServer::start(transition_options()).await;
    let (_, creating) = server.create("busy", seed()).await;
    let attempts = [
        (
            Method::PATCH,
            patch_path("busy", "updateMask=labels"),
            Some(json!({})),
        ),
        (Method::DELETE, cluster_path("busy"), None),
    ];
    for (method, path, body) in attempts {
        let (status, error) = server.call(method, &path, body).await;
        assert_eq!(status, 409);
        assert_eq!(error["error"]["status"], "ABORTED");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(creating["name"].as_str().unwrap()),
            "{message}"
        );
    }
    server.wait_done(&creating).await;
    let (status, _) = server
        .call(
            Method::PATCH,
            &patch_path("busy", "updateMask=labels"),
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_body_that_is_not_an_object_is_refused() {
    let server = running_cluster().await;
    let (status, error) = server
        .call(
            Method::PATCH,
            &patch_path("train01", "updateMask=labels"),
            Some(json!([1])),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        error["error"]["message"],
        "The request body must be a JSON object."
    );
    let body: Value = json!({"labels": "x"});
    let (status, _) = server
        .call(
            Method::PATCH,
            &patch_path("train01", "updateMask=labels"),
            Some(body),
        )
        .await;
    assert_eq!(status, 400);
}
