//! List: paging with opaque tokens, the page-size default and cap, the end
//! marker, invalid tokens, and collections kept apart by project and location.

use clusterform_emulator::EmulatorOptions;
use serde_json::{Value, json};

use crate::support::{PARENT, TestServer, cluster_name, fast_options};

fn list_path(query: &str) -> String {
    format!("/v1beta1/{PARENT}/modelDevelopmentClusters?{query}")
}

fn names(page: &Value) -> Vec<String> {
    page["modelDevelopmentClusters"]
        .as_array()
        .map(|clusters| {
            clusters
                .iter()
                .map(|c| c["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

async fn seeded(count: usize, options: EmulatorOptions) -> TestServer {
    let server = TestServer::start(options).await;
    for index in 0..count {
        server.emulator().insert_cluster(
            &cluster_name(&format!("c{index:02}")),
            json!({"displayName": format!("n{index}")}),
        );
    }
    server
}

#[tokio::test]
async fn pages_cover_every_cluster_once_in_name_order() {
    let server = seeded(23, fast_options()).await;
    server.emulator().insert_cluster(
        "projects/my-proj/locations/europe-west4/modelDevelopmentClusters/elsewhere",
        json!({}),
    );
    server.emulator().insert_cluster(
        "projects/other/locations/us-central1/modelDevelopmentClusters/foreign",
        json!({}),
    );
    let mut seen = Vec::new();
    let mut page_sizes = Vec::new();
    let mut token = String::new();
    for _ in 0..10 {
        let (status, page) = server
            .get(&list_path(&format!("pageSize=10&pageToken={token}")))
            .await;
        assert_eq!(status, 200, "{page}");
        page_sizes.push(names(&page).len());
        seen.extend(names(&page));
        match page["nextPageToken"].as_str() {
            Some(next) if !next.is_empty() => {
                assert!(
                    !next.contains("c0") && next.parse::<u64>().is_err(),
                    "the token is opaque: {next}"
                );
                token = next.to_owned();
            }
            _ => break,
        }
    }
    assert_eq!(page_sizes, [10, 10, 3]);
    let expected: Vec<String> = (0..23)
        .map(|index| cluster_name(&format!("c{index:02}")))
        .collect();
    assert_eq!(seen, expected);
}

#[tokio::test]
async fn the_last_page_has_no_next_token() {
    let server = seeded(3, fast_options()).await;
    let (_, page) = server.get(&list_path("pageSize=3")).await;
    assert_eq!(names(&page).len(), 3);
    assert!(page.get("nextPageToken").is_none());
}

#[tokio::test]
async fn page_size_defaults_and_is_capped() {
    let options = EmulatorOptions {
        default_page_size: 4,
        max_page_size: 6,
        ..fast_options()
    };
    let server = seeded(9, options).await;
    let (_, page) = server.get(&list_path("")).await;
    assert_eq!(names(&page).len(), 4);
    let (_, page) = server.get(&list_path("pageSize=0")).await;
    assert_eq!(names(&page).len(), 4);
    let (_, page) = server.get(&list_path("pageSize=1000")).await;
    assert_eq!(names(&page).len(), 6);
    assert!(page["nextPageToken"].is_string());
}

#[tokio::test]
async fn bad_tokens_and_sizes_are_invalid_argument() {
    let server = seeded(3, fast_options()).await;
    let (_, first) = server.get(&list_path("pageSize=1")).await;
    let token = first["nextPageToken"].as_str().unwrap();
    let other_location = format!(
        "/v1beta1/projects/my-proj/locations/asia-east1/modelDevelopmentClusters?pageToken={token}"
    );
    for path in [
        list_path("pageToken=not-a-token"),
        list_path("pageToken=0a1"),
        other_location,
    ] {
        let (status, error) = server.get(&path).await;
        assert_eq!(status, 400, "{path}");
        assert_eq!(error["error"]["status"], "INVALID_ARGUMENT");
        assert!(
            error["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("Invalid pageToken")
        );
    }
    let (status, error) = server.get(&list_path("pageSize=-1")).await;
    assert_eq!(status, 400);
    assert_eq!(
        error["error"]["message"],
        "Invalid pageSize -1: it must not be negative."
    );
    let (status, _) = server.get(&list_path("pageSize=ten")).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn a_deleted_cluster_between_pages_does_not_break_paging() {
    let server = seeded(4, fast_options()).await;
    let (_, first) = server.get(&list_path("pageSize=2")).await;
    assert_eq!(names(&first), [cluster_name("c00"), cluster_name("c01")]);
    let (status, operation) = server
        .call(
            reqwest::Method::DELETE,
            &format!("/v1beta1/{}", cluster_name("c01")),
            None,
        )
        .await;
    assert_eq!(status, 200);
    server.wait_done(&operation).await;
    let token = first["nextPageToken"].as_str().unwrap();
    let (_, second) = server
        .get(&list_path(&format!("pageSize=2&pageToken={token}")))
        .await;
    assert_eq!(names(&second), [cluster_name("c02"), cluster_name("c03")]);
}

#[tokio::test]
async fn an_empty_collection_lists_as_an_empty_object() {
    let server = TestServer::start(fast_options()).await;
    let (status, page) = server.get(&list_path("")).await;
    assert_eq!(status, 200);
    assert_eq!(page, json!({}));
}
