//! Project numbers: with `project_numbers`, names in answers carry the
//! project number derived from the project ID the request named, and the ID
//! and the number address the same clusters and operations; without it,
//! names are written as requested.

use clusterform_emulator::{EmulatorOptions, project_number_of};
use reqwest::Method;

use crate::support::{PROJECT, TestServer, cluster_name, cluster_path, fast_options, seed};

fn numbered_options() -> EmulatorOptions {
    EmulatorOptions {
        project_numbers: true,
        ..fast_options()
    }
}

fn numbered_cluster_name(id: &str) -> String {
    format!(
        "projects/{}/locations/us-central1/modelDevelopmentClusters/{id}",
        project_number_of(PROJECT)
    )
}

#[tokio::test]
async fn names_in_answers_carry_the_project_number() {
    let server = TestServer::start(numbered_options()).await;
    let (status, operation) = server.create("numbered", seed()).await;
    assert_eq!(status, 200);
    let number = project_number_of(PROJECT);
    assert!(
        operation["name"].as_str().unwrap().starts_with(&format!(
            "projects/{number}/locations/us-central1/operations/"
        )),
        "{operation}"
    );
    let finished = server.wait_done(&operation).await;
    assert_eq!(
        finished["response"]["name"],
        numbered_cluster_name("numbered")
    );
    let (_, cluster) = server.get(&cluster_path("numbered")).await;
    assert_eq!(cluster["name"], numbered_cluster_name("numbered"));
    assert_eq!(
        cluster["runtimeSpec"]["serviceAccount"],
        format!("{number}-compute@developer.gserviceaccount.com")
    );
    let (_, listed) = server
        .get("/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters")
        .await;
    assert_eq!(
        listed["modelDevelopmentClusters"][0]["name"],
        numbered_cluster_name("numbered")
    );
    let path = format!("{}?updateMask=labels", cluster_path("numbered"));
    let (_, update) = server.call(Method::PATCH, &path, Some(seed())).await;
    let finished = server.wait_done(&update).await;
    assert_eq!(
        finished["response"]["name"],
        numbered_cluster_name("numbered")
    );
}

#[tokio::test]
async fn the_project_id_and_number_address_the_same_collection() {
    let server = TestServer::start(numbered_options()).await;
    server.create_running("both", seed()).await;
    let by_number = format!("/v1beta1/{}", numbered_cluster_name("both"));
    let (status, cluster) = server.get(&by_number).await;
    assert_eq!(status, 200);
    assert_eq!(cluster, server.get(&cluster_path("both")).await.1);
    let list = format!(
        "/v1beta1/projects/{}/locations/us-central1/modelDevelopmentClusters",
        project_number_of(PROJECT)
    );
    let (_, listed) = server.get(&list).await;
    assert_eq!(
        listed["modelDevelopmentClusters"].as_array().unwrap().len(),
        1
    );
    let (status, _) = server.create("both", seed()).await;
    assert_eq!(status, 409, "the ID reaches the cluster created through it");
    let (status, deleting) = server.call(Method::DELETE, &by_number, None).await;
    assert_eq!(status, 200);
    let operation_id = deleting["name"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap();
    let by_id = format!("/v1/projects/my-proj/locations/us-central1/operations/{operation_id}");
    let (status, operation) = server.get(&by_id).await;
    assert_eq!(status, 200);
    assert_eq!(operation["name"], deleting["name"]);
    let logged = server.emulator().requests();
    assert!(
        logged
            .iter()
            .any(|request| request.path == cluster_path("both")),
        "the request log keeps paths as sent"
    );
}

#[tokio::test]
async fn test_controls_accept_the_project_id() {
    let server = TestServer::start(numbered_options()).await;
    server
        .emulator()
        .insert_cluster(&cluster_name("seeded"), seed());
    let cluster = server.emulator().cluster(&cluster_name("seeded")).unwrap();
    assert_eq!(cluster["name"], numbered_cluster_name("seeded"));
    assert!(
        server
            .emulator()
            .cluster(&numbered_cluster_name("seeded"))
            .is_some()
    );
    let (status, _) = server.get(&cluster_path("seeded")).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn without_the_option_names_are_written_as_requested() {
    let server = TestServer::start(fast_options()).await;
    let finished = server.create_running("plain", seed()).await;
    assert_eq!(finished["response"]["name"], cluster_name("plain"));
    assert!(
        finished["name"]
            .as_str()
            .unwrap()
            .starts_with("projects/123456789012/")
    );
}
