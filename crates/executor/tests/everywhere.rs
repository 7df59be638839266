//! A refresh lists every location of its `RefreshLocations` — every service region and every
//! named one, in every project — each once and all at once; a List refused where nothing is
//! named is reported and gives nothing, while a named location's failure, an outage anywhere
//! and a refusal after a first page still fail the refresh.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use clusterform_emulator::{EmulatorOptions, FaultSpec, RefusedLocation};
use std::sync::Arc;

use clusterform_executor::{
    ApiClient, ClientOptions, FIRST_PAGE_WITHIN, StaticToken, UnreadKind, is_refusal, refresh,
};
use clusterform_model::{Code, Location, RefreshLocations, SERVICE_REGIONS};
use serde_json::json;

use crate::scripted::{Scripted, google_error, json};
use crate::support::*;

const OTHER_PROJECT: &str = "proj-two";

/// The testkit's location named, and every service region of it and of [`OTHER_PROJECT`].
fn everywhere() -> RefreshLocations {
    RefreshLocations::everywhere([location()], [OTHER_PROJECT], [])
}

fn name_in(project: &str, region: &str, id: &str) -> String {
    format!("projects/{project}/locations/{region}/modelDevelopmentClusters/{id}")
}

/// How many Lists each (project, region) was sent.
fn lists_per_location(h: &Harness) -> BTreeMap<(String, String), usize> {
    let mut lists = BTreeMap::new();
    for request in h.emulator.requests() {
        let Some(rest) = request.path.strip_prefix("/v1beta1/projects/") else {
            continue;
        };
        let parts: Vec<&str> = rest.split('/').collect();
        if request.method == "GET" && parts.len() == 4 && parts[3] == "modelDevelopmentClusters" {
            *lists
                .entry((parts[0].to_owned(), parts[2].to_owned()))
                .or_insert(0) += 1;
        }
    }
    lists
}

#[tokio::test]
async fn every_service_region_of_every_project_is_listed_once_and_all_at_once() {
    let latency = Duration::from_millis(150);
    let h = Harness::with_options(EmulatorOptions {
        required_token: Some(TOKEN.to_owned()),
        latency,
        ..EmulatorOptions::default()
    })
    .await;
    h.insert("home");
    h.emulator.insert_cluster(
        &name_in(PROJECT, "europe-north1", "far"),
        cluster_body("far", Some(STACK)),
    );
    h.emulator.insert_cluster(
        &name_in(OTHER_PROJECT, "asia-south2", "other"),
        cluster_body("other", Some("someone-else")),
    );
    let locations = everywhere();
    assert_eq!(locations.len(), 2 * SERVICE_REGIONS.len());

    let started = Instant::now();
    let refreshed = refresh(&h.client, &locations, &[]).await.unwrap();
    let elapsed = started.elapsed();

    let mut found: Vec<String> = refreshed
        .live
        .iter()
        .map(|c| format!("{}/{}", c.address.location(), c.address.id()))
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            "projects/my-proj/locations/europe-north1/far",
            "projects/my-proj/locations/us-central1/home",
            "projects/proj-two/locations/asia-south2/other",
        ]
    );
    assert!(refreshed.refused.is_empty());
    let lists = lists_per_location(&h);
    assert_eq!(lists.len(), 2 * SERVICE_REGIONS.len(), "{lists:?}");
    assert!(lists.values().all(|&n| n == 1), "{lists:?}");
    // 24 Lists one after the other would take 3.6 s; at once, about one latency.
    assert!(
        elapsed < latency * 8,
        "the Lists did not run at once: {elapsed:?}"
    );
}

#[tokio::test]
async fn a_list_refused_where_nothing_is_named_is_reported_and_gives_nothing() {
    let h = Harness::start(Duration::from_millis(50)).await;
    h.insert("home");
    // A cluster of the stack where the List is refused: it cannot be seen, so it is not given.
    h.emulator.insert_cluster(
        &name_in(PROJECT, "us-east5", "hidden"),
        cluster_body("hidden", Some(STACK)),
    );
    h.emulator.set_refused_locations(vec![
        format!("{PROJECT}/us-east5")
            .parse::<RefusedLocation>()
            .unwrap(),
        "not-allowlisted:asia-south2".parse().unwrap(),
    ]);

    let refreshed = refresh(&h.client, &everywhere(), &[]).await.unwrap();

    let ids: Vec<String> = refreshed
        .live
        .iter()
        .map(|c| c.address.id().to_string())
        .collect();
    assert_eq!(ids, ["home"]);
    let refused: Vec<String> = refreshed
        .refused
        .iter()
        .map(|r| r.location.to_string())
        .collect();
    assert_eq!(
        refused,
        [
            "projects/my-proj/locations/asia-south2",
            "projects/my-proj/locations/us-east5",
            "projects/proj-two/locations/asia-south2",
        ],
        "in the order of their locations"
    );
    let permission = &refreshed.refused[1];
    assert_eq!(
        permission.status().map(|s| s.canonical_code()),
        Some(Code::PermissionDenied)
    );
    assert!(
        permission.to_string().starts_with(
            "the List of my-proj/us-east5 was refused: PERMISSION_DENIED (403): Permission \
             'aiplatform.modelDevelopmentClusters.list' denied"
        ),
        "{permission}"
    );
    let allowlist = &refreshed.refused[0];
    assert_eq!(
        allowlist.status().map(|s| s.canonical_code()),
        Some(Code::InvalidArgument)
    );
    // A refusal is an answer, not asked again.
    assert_eq!(
        lists_per_location(&h)[&(PROJECT.to_owned(), "us-east5".to_owned())],
        1
    );
}

#[tokio::test]
async fn a_refused_list_where_the_configuration_names_a_cluster_is_reported_as_named() {
    let h = Harness::start(Duration::from_millis(50)).await;
    h.emulator
        .set_refused_locations(vec![format!("{PROJECT}/{REGION}").parse().unwrap()]);
    let refreshed = refresh(&h.client, &everywhere(), &[]).await.unwrap();
    // The caller makes it an error for the clusters there; the other locations were read.
    let [refused] = refreshed.refused.as_slice() else {
        panic!("one location refused: {:?}", refreshed.refused);
    };
    assert!(refused.named);
    assert_eq!(refused.location.region(), REGION);
    let unread = refused.unread();
    assert!(unread.is_error(), "the configuration names it");
    assert!(
        unread.reason.starts_with("PERMISSION_DENIED (403)"),
        "{}",
        unread.reason
    );
}

/// A server that takes every connection and never answers.
async fn silent_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        // Bounded: one connection per List and retry is all a refresh opens.
        while held.len() < 1000 {
            let Ok((connection, _)) = listener.accept().await else {
                break;
            };
            held.push(connection);
        }
    });
    format!("http://{address}")
}

#[tokio::test(start_paused = true)]
async fn a_location_that_gives_no_first_page_in_30_seconds_is_failing() {
    // Requests that may wait ten minutes each: only the refresh's own bound ends them.
    let options = ClientOptions {
        request_timeout: Duration::from_secs(600),
        ..client_options(&silent_server().await, fast_retry())
    };
    let client = ApiClient::new(options, Arc::new(StaticToken::new(TOKEN))).unwrap();
    let started = tokio::time::Instant::now();
    let refreshed = refresh(&client, &everywhere(), &[]).await.unwrap();
    assert!(started.elapsed() >= FIRST_PAGE_WITHIN);
    assert!(!refreshed.refused.is_empty());
    assert!(
        refreshed
            .refused
            .iter()
            .all(|list| list.kind == UnreadKind::Failing)
    );
    assert!(
        refreshed.refused[0]
            .to_string()
            .contains("no first page within 30s"),
        "{}",
        refreshed.refused[0]
    );
}

#[tokio::test]
async fn an_outage_where_nothing_is_named_is_a_failing_location_not_a_failed_refresh() {
    let h = Harness::with_options(EmulatorOptions {
        required_token: Some(TOKEN.to_owned()),
        faults: "503=1,location=us-west4".parse::<FaultSpec>().unwrap(),
        ..EmulatorOptions::default()
    })
    .await;
    let refreshed = refresh(&h.client, &everywhere(), &[]).await.unwrap();
    // us-west4 of each of the two projects.
    assert_eq!(refreshed.refused.len(), 2, "{:?}", refreshed.refused);
    for failing in &refreshed.refused {
        assert_eq!(failing.location.region(), "us-west4");
        assert_eq!(failing.kind, UnreadKind::Failing);
        assert_eq!(failing.error.api_code(), Some(Code::Unavailable));
        assert!(!is_refusal(&failing.error));
    }
}

#[tokio::test]
async fn a_list_refused_after_its_first_page_fails_the_refresh() {
    let mut first = cluster_body("a1", Some(STACK));
    first["name"] = json!(name_in(PROJECT, "us-east1", "a1"));
    let server = Scripted::start(move |seen, _| {
        if !seen.path.contains("/locations/us-east1/") {
            return json(json!({}));
        }
        match seen.param("pageToken") {
            Some(_) => google_error(403, "PERMISSION_DENIED", "Permission denied"),
            None => {
                json(json!({"modelDevelopmentClusters": [first.clone()], "nextPageToken": "p2"}))
            }
        }
    })
    .await;
    let client = client_for(server.base_url(), fast_retry());
    let locations =
        RefreshLocations::everywhere([Location::new(PROJECT, "us-central1").unwrap()], [], []);
    let error = refresh(&client, &locations, &[]).await.unwrap_err();
    assert_eq!(
        error.api_code(),
        Some(Code::PermissionDenied),
        "half a List is not a refused one: {error}"
    );
}
