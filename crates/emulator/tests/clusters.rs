//! Create, Get and Delete: validation, server defaults, string integers,
//! transitional states, and the error answers.

use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{
    PARENT, TestServer, cluster_name, cluster_path, create_path, fast_options, redact_times, seed,
    transition_options, violations,
};

#[tokio::test]
async fn create_runs_an_operation_that_ends_with_a_running_cluster() {
    let server = TestServer::start(transition_options()).await;
    let (status, operation) = server.create("train01", seed()).await;
    assert_eq!(status, 200);
    assert_eq!(
        operation["name"],
        "projects/123456789012/locations/us-central1/operations/1"
    );
    assert!(operation.get("done").is_none());
    assert_eq!(
        operation["metadata"]["@type"],
        "type.googleapis.com/google.cloud.aiplatform.v1beta1.CreateModelDevelopmentClusterOperationMetadata"
    );
    let (_, provisioning) = server.get(&cluster_path("train01")).await;
    assert_eq!(provisioning["clusterStatus"]["state"], "PROVISIONING");
    assert!(provisioning.get("startTime").is_none());

    let finished = server.wait_done(&operation).await;
    assert_eq!(
        finished["metadata"]["progressMessage"],
        "The cluster is running."
    );
    assert_eq!(
        finished["response"]["@type"],
        "type.googleapis.com/google.cloud.aiplatform.v1beta1.ModelDevelopmentCluster"
    );
    let (status, cluster) = server.get(&cluster_path("train01")).await;
    assert_eq!(status, 200);
    insta::assert_json_snapshot!(redact_times(cluster), @r##"
    {
      "name": "projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01",
      "displayName": "Research training",
      "labels": {
        "team": "ml"
      },
      "network": {
        "network": "projects/my-proj/global/networks/default",
        "subnetwork": "projects/my-proj/regions/us-central1/subnetworks/default"
      },
      "nodePools": [
        {
          "id": "login",
          "machineSpec": {
            "machineType": "n2-standard-8"
          },
          "scalingSpec": {
            "minNodeCount": "1",
            "maxNodeCount": "1"
          },
          "zone": "us-central1-a",
          "enablePublicIps": true,
          "bootDisk": {
            "bootDiskType": "pd-standard",
            "bootDiskSizeGb": "120"
          },
          "nodeImage": "slurm-24-11-ubuntu-2204"
        },
        {
          "id": "cpu",
          "machineSpec": {
            "machineType": "n2-standard-8"
          },
          "scalingSpec": {
            "minNodeCount": "0",
            "maxNodeCount": "4"
          },
          "zone": "us-central1-a",
          "bootDisk": {
            "bootDiskType": "pd-ssd",
            "bootDiskSizeGb": "100"
          },
          "nodeImage": "slurm-24-11-ubuntu-2204"
        }
      ],
      "orchestratorSpec": {
        "slurmSpec": {
          "homeDirectoryStorage": "projects/my-proj/locations/us-central1-a/instances/home",
          "loginNodePoolId": "login",
          "partitions": [
            {
              "id": "cpu",
              "nodePoolIds": [
                "cpu"
              ]
            }
          ],
          "prologBashScripts": [
            "#!/bin/bash\necho prolog"
          ]
        }
      },
      "runtimeSpec": {
        "serviceAccount": "123456789012-compute@developer.gserviceaccount.com"
      },
      "createTime": "[time]",
      "updateTime": "[time]",
      "clusterStatus": {
        "state": "RUNNING",
        "nodesStatus": [
          {
            "nodePoolId": "login",
            "nodePoolType": "NODE_POOL_TYPE_LOGIN",
            "nodeState": "RUNNING",
            "instanceName": "train01-login-0",
            "createTime": "[time]",
            "lastUpdateTime": "[time]"
          }
        ]
      },
      "startTime": "[time]"
    }
    "##);
}

#[tokio::test]
async fn a_snake_case_body_is_accepted_and_answered_in_camel_case() {
    let server = TestServer::start(fast_options()).await;
    let body = json!({
        "display_name": "Snake",
        "labels": {"cost_center": "r_d"},
        "network": {"network": "projects/my-proj/global/networks/default"},
        "node_pools": [{"id": "login", "machine_spec": {"machine_type": "n2-standard-8"},
                        "scaling_spec": {"min_node_count": "2", "max_node_count": 2},
                        "boot_disk": {"boot_disk_type": "pd-standard", "boot_disk_size_gb": 120}}],
        "orchestrator_spec": {"slurm_spec": {"home_directory_storage": "projects/my-proj/locations/z/instances/h",
                                             "login_node_pool_id": "login",
                                             "config": {"Max_Array_Size": "10"}}}
    });
    server.create_running("snake", body).await;
    let cluster = server.emulator().cluster(&cluster_name("snake")).unwrap();
    assert_eq!(cluster["displayName"], "Snake");
    assert_eq!(cluster["labels"], json!({"cost_center": "r_d"}));
    assert_eq!(
        cluster["nodePools"][0]["scalingSpec"],
        json!({"minNodeCount": "2", "maxNodeCount": "2"})
    );
    assert_eq!(
        cluster["nodePools"][0]["bootDisk"],
        json!({"bootDiskType": "pd-standard", "bootDiskSizeGb": "120"})
    );
    assert_eq!(
        cluster["orchestratorSpec"]["slurmSpec"]["config"],
        json!({"Max_Array_Size": "10"})
    );
}

#[tokio::test]
async fn the_snake_case_id_parameter_is_accepted() {
    let server = TestServer::start(fast_options()).await;
    let path =
        format!("/v1beta1/{PARENT}/modelDevelopmentClusters?model_development_cluster_id=snakeid");
    let (status, _) = server.call(Method::POST, &path, Some(seed())).await;
    assert_eq!(status, 200);
    assert!(
        server
            .emulator()
            .cluster(&cluster_name("snakeid"))
            .is_some()
    );
}

#[tokio::test]
async fn a_second_create_with_the_same_id_is_already_exists() {
    let server = TestServer::start(fast_options()).await;
    server.create_running("dup", seed()).await;
    let (status, error) = server.create("dup", seed()).await;
    assert_eq!(status, 409);
    insta::assert_json_snapshot!(error, @r#"
    {
      "error": {
        "code": 409,
        "message": "There is an existing ModelDevelopmentCluster with the same ID \"dup\". Please delete the existing cluster and try again or use a different ID.",
        "status": "ALREADY_EXISTS",
        "details": []
      }
    }
    "#);
}

#[tokio::test]
async fn invalid_cluster_ids_are_refused() {
    let server = TestServer::start(fast_options()).await;
    let cases = [
        (
            "a-b",
            "a cluster with a Slurm spec cannot have hyphens in its ID",
        ),
        ("abcdefghijk", "it must be 1 to 10 characters long"),
        (
            "a/b",
            "only lowercase letters, digits and hyphens are allowed",
        ),
        (
            "a%2F..",
            "only lowercase letters, digits and hyphens are allowed",
        ),
        ("Train", "it must start with a lowercase letter"),
    ];
    for (id, rule) in cases {
        let (status, error) = server.create(id, seed()).await;
        assert_eq!(status, 400, "{id}");
        assert_eq!(error["error"]["status"], "INVALID_ARGUMENT");
        assert!(
            error["error"]["message"]
                .as_str()
                .unwrap()
                .ends_with(&format!("{rule}.")),
            "{id}: {error}"
        );
    }
    let missing = format!("/v1beta1/{PARENT}/modelDevelopmentClusters");
    let (status, error) = server.call(Method::POST, &missing, Some(seed())).await;
    assert_eq!(status, 400);
    assert_eq!(
        error["error"]["message"],
        "The query parameter modelDevelopmentClusterId is required."
    );
    let (_, list) = server.get(&missing).await;
    assert_eq!(list, json!({}), "nothing was created");
}

#[tokio::test]
async fn missing_required_fields_and_bad_references_are_refused() {
    let server = TestServer::start(fast_options()).await;
    let (status, error) = server.create("empty", json!({"displayName": "x"})).await;
    assert_eq!(status, 400);
    insta::assert_snapshot!(error["error"]["message"].as_str().unwrap(), @"List of found errors:\t1.Field: model_development_cluster.network.network; Message: The field is required.\t2.Field: model_development_cluster.node_pools; Message: At least one node pool is required.\t3.Field: model_development_cluster.orchestrator_spec.slurm_spec; Message: The Slurm spec is required.\t");

    let mut cluster = seed();
    cluster["orchestratorSpec"]["slurmSpec"]["loginNodePoolId"] = json!("gpu");
    cluster["orchestratorSpec"]["slurmSpec"]["partitions"][0]["nodePoolIds"] = json!(["cpu", "a3"]);
    cluster["nodePools"][1]["scalingSpec"] = json!({"minNodeCount": 5, "maxNodeCount": 4});
    cluster["nodePools"][1]["id"] = json!("login");
    let (status, error) = server.create("refs", cluster).await;
    assert_eq!(status, 400);
    insta::assert_snapshot!(violations(&error), @r"
    model_development_cluster.node_pools[1].id: The node pool id `login` is used by more than one node pool.
    model_development_cluster.node_pools[1].scaling_spec.min_node_count: min_node_count (5) is greater than max_node_count (4).
    model_development_cluster.orchestrator_spec.slurm_spec.login_node_pool_id: login_node_pool_id `gpu` does not name a node pool.
    model_development_cluster.orchestrator_spec.slurm_spec.partitions[0].node_pool_ids[0]: `cpu` does not name a node pool.
    model_development_cluster.orchestrator_spec.slurm_spec.partitions[0].node_pool_ids[1]: `a3` does not name a node pool.
    ");
}

#[tokio::test]
async fn malformed_json_is_invalid_argument_with_the_parser_message() {
    let server = TestServer::start(fast_options()).await;
    let response = server
        .client
        .post(server.url(&create_path("bad")))
        .bearer_auth("t")
        .body("{\"network\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"]["status"], "INVALID_ARGUMENT");
    assert_eq!(
        error["error"]["message"],
        "Invalid JSON payload received: EOF while parsing a value at line 1 column 12."
    );
}

#[tokio::test]
async fn output_only_fields_in_a_create_body_are_ignored() {
    let server = TestServer::start(transition_options()).await;
    let mut cluster = seed();
    cluster["name"] = json!("projects/evil/locations/x/modelDevelopmentClusters/other");
    cluster["clusterStatus"] = json!({"state": "RUNNING"});
    let (status, _) = server.create("outonly", cluster).await;
    assert_eq!(status, 200);
    let cluster = server.emulator().cluster(&cluster_name("outonly")).unwrap();
    assert_eq!(cluster["name"], cluster_name("outonly"));
    assert_eq!(cluster["clusterStatus"]["state"], "PROVISIONING");
}

#[tokio::test]
async fn delete_stops_the_cluster_then_removes_it() {
    let server = TestServer::start(transition_options()).await;
    server.create_running("gone", seed()).await;
    let (status, operation) = server
        .call(Method::DELETE, &cluster_path("gone"), None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        operation["metadata"]["@type"],
        "type.googleapis.com/google.cloud.aiplatform.v1beta1.DeleteModelDevelopmentClusterOperationMetadata"
    );
    let (_, stopping) = server.get(&cluster_path("gone")).await;
    assert_eq!(stopping["clusterStatus"]["state"], "STOPPING");
    let finished = server.wait_done(&operation).await;
    assert_eq!(
        finished["response"],
        json!({"@type": "type.googleapis.com/google.protobuf.Empty"})
    );
    let (status, error) = server.get(&cluster_path("gone")).await;
    assert_eq!(status, 404);
    assert_eq!(error["error"]["status"], "NOT_FOUND");
}

#[tokio::test]
async fn get_and_delete_of_a_missing_cluster_are_not_found() {
    let server = TestServer::start(fast_options()).await;
    for method in [Method::GET, Method::DELETE] {
        let (status, error) = server.call(method, &cluster_path("nothere"), None).await;
        assert_eq!(status, 404);
        assert_eq!(
            error["error"]["message"],
            "Cluster projects/my-proj/locations/us-central1/modelDevelopmentClusters/nothere not found."
        );
    }
}

#[tokio::test]
async fn unknown_routes_answer_not_found_in_google_json() {
    let server = TestServer::start(fast_options()).await;
    let (status, error) = server.get("/v1beta1/projects/p/somethingElse").await;
    assert_eq!(status, 404);
    insta::assert_json_snapshot!(error, @r#"
    {
      "error": {
        "code": 404,
        "message": "The requested URL GET /v1beta1/projects/p/somethingElse was not found on this server.",
        "status": "NOT_FOUND",
        "details": []
      }
    }
    "#);
    let (status, error) = server.call(Method::PUT, &cluster_path("x"), None).await;
    assert_eq!(status, 404);
    assert_eq!(error["error"]["status"], "NOT_FOUND");
    let (status, _) = server
        .call(
            Method::POST,
            &format!("{}:restart", cluster_path("x")),
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn shutdown_closes_the_port() {
    let server = TestServer::start(fast_options()).await;
    let address = server.server.local_addr();
    assert!(server.server.base_url().starts_with("http://127.0.0.1:"));
    server.get(&cluster_path("warm")).await;
    server.server.shutdown().await;
    assert!(tokio::net::TcpStream::connect(address).await.is_err());
}

#[tokio::test]
async fn shutdown_does_not_wait_for_a_half_sent_request_beyond_the_grace_period() {
    use tokio::io::AsyncWriteExt as _;

    let server = TestServer::start(fast_options()).await;
    let mut half_open = tokio::net::TcpStream::connect(server.server.local_addr())
        .await
        .unwrap();
    half_open
        .write_all(b"GET /v1/projects HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    // Let the server accept the connection and start reading the request.
    server.get(&cluster_path("warm")).await;
    let bound = clusterform_emulator::SHUTDOWN_GRACE * 4;
    tokio::time::timeout(bound, server.server.shutdown())
        .await
        .expect("shutdown ends although a client never finishes its request");
    drop(half_open);
}
