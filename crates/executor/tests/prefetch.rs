//! Lists started ahead of the refresh (`ListPrefetch`): a needed location's List is taken, not
//! sent again; a needed location that was not prefetched is listed; a prefetched location that
//! is not needed is ignored, even when its List failed; a needed one's error is the refresh's.

use std::collections::BTreeSet;
use std::time::Duration;

use clusterform_emulator::FaultSpec;
use clusterform_executor::{ListPrefetch, refresh, refresh_prefetched};
use clusterform_model::Location;

use crate::support::*;

/// A region whose every answer is a `500`: its List fails.
const BROKEN_REGION: &str = "asia-east1";
const OTHER_PROJECT: &str = "proj-two";
const OTHER_REGION: &str = "europe-west4";

fn at(project: &str, region: &str) -> Location {
    Location::new(project, region).unwrap()
}

/// A harness with `alpha` and `beta` in the testkit's location and `gamma` in another.
async fn two_locations() -> Harness {
    let h = Harness::start(Duration::from_millis(50)).await;
    let faults = format!("500=1,location={BROKEN_REGION}");
    h.emulator.set_faults(faults.parse::<FaultSpec>().unwrap());
    h.insert("alpha");
    h.insert("beta");
    h.emulator.insert_cluster(
        &format!(
            "projects/{OTHER_PROJECT}/locations/{OTHER_REGION}/modelDevelopmentClusters/gamma"
        ),
        cluster_body("gamma", Some(STACK)),
    );
    h
}

fn ids(live: &[clusterform_model::LiveCluster]) -> Vec<String> {
    let mut ids: Vec<String> = live.iter().map(|c| c.address.id().to_string()).collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn a_prefetched_list_is_taken_and_a_missing_one_is_listed() {
    let h = two_locations().await;
    let prefetched = BTreeSet::from([at(PROJECT, REGION)]);
    let prefetch = ListPrefetch::start(&h.client, &prefetched);
    let needed = BTreeSet::from([at(PROJECT, REGION), at(OTHER_PROJECT, OTHER_REGION)]);
    let live = refresh_prefetched(&h.client, &needed, &[], prefetch)
        .await
        .unwrap();
    assert_eq!(ids(&live), ["alpha", "beta", "gamma"]);
    assert_eq!(
        h.count("GET", "/modelDevelopmentClusters"),
        2,
        "one List per location, the prefetched one not sent again"
    );
}

#[tokio::test]
async fn a_prefetched_location_not_needed_is_ignored_even_when_it_failed() {
    let h = two_locations().await;
    let prefetched = BTreeSet::from([
        at(PROJECT, REGION),
        at(PROJECT, BROKEN_REGION),
        at(OTHER_PROJECT, OTHER_REGION),
    ]);
    let prefetch = ListPrefetch::start(&h.client, &prefetched);
    // Let every prefetched List finish, the broken one with its error.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let needed = BTreeSet::from([at(PROJECT, REGION)]);
    let live = refresh_prefetched(&h.client, &needed, &[], prefetch)
        .await
        .unwrap();
    assert_eq!(ids(&live), ["alpha", "beta"]);
}

#[tokio::test]
async fn a_needed_location_s_error_is_the_refresh_s_error() {
    let h = two_locations().await;
    let needed = BTreeSet::from([at(PROJECT, REGION), at(PROJECT, BROKEN_REGION)]);
    let expected = refresh(&h.client, &needed, &[]).await.unwrap_err();
    let prefetch = ListPrefetch::start(&h.client, &needed);
    let error = refresh_prefetched(&h.client, &needed, &[], prefetch)
        .await
        .unwrap_err();
    assert_eq!(error.to_string(), expected.to_string());
    assert!(error.to_string().contains(BROKEN_REGION), "{error}");
}

#[tokio::test]
async fn targets_are_read_with_gets_whatever_was_prefetched() {
    let h = two_locations().await;
    let broken = BTreeSet::from([at(PROJECT, BROKEN_REGION)]);
    let prefetch = ListPrefetch::start(&h.client, &broken);
    let needed = BTreeSet::from([at(PROJECT, REGION)]);
    let targets = [parsed_name("alpha")];
    let live = refresh_prefetched(&h.client, &needed, &targets, prefetch)
        .await
        .unwrap();
    assert_eq!(ids(&live), ["alpha"]);
    assert_eq!(h.count("GET", "/modelDevelopmentClusters/alpha"), 1);
}
