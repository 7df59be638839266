//! Lists page by page: `list_clusters_paged` gives each page as it is read, and `refresh_paged`
//! hands every page's live clusters over (a prefetched List's pages read before the refresh
//! included) while still returning the whole set.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::time::Duration;

use clusterform_emulator::EmulatorOptions;
use clusterform_executor::{ListPrefetch, refresh, refresh_paged};
use clusterform_planner::LiveCluster;

use crate::support::*;

const OTHER_PROJECT: &str = "proj-two";
const OTHER_REGION: &str = "europe-west4";

/// A harness whose Lists answer 4 clusters a page, with 10 clusters in the testkit's location
/// and one in another.
async fn paged_emulator() -> Harness {
    let h = Harness::with_options(EmulatorOptions {
        max_page_size: 4,
        required_token: Some(TOKEN.to_owned()),
        ..EmulatorOptions::default()
    })
    .await;
    for n in 0..10 {
        h.insert(&format!("c{n:02}"));
    }
    h.emulator.insert_cluster(
        &format!(
            "projects/{OTHER_PROJECT}/locations/{OTHER_REGION}/modelDevelopmentClusters/gamma"
        ),
        cluster_body("gamma", Some(STACK)),
    );
    h
}

fn ids(live: &[LiveCluster]) -> Vec<String> {
    live.iter().map(|c| c.address.cluster_id.clone()).collect()
}

#[tokio::test]
async fn list_clusters_paged_gives_each_page_in_order() {
    let h = paged_emulator().await;
    let mut pages = Vec::new();
    h.client
        .list_clusters_paged(PROJECT, REGION, |page| pages.push(page))
        .await
        .unwrap();
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [4, 4, 2]);
    let whole = h.client.list_clusters(PROJECT, REGION).await.unwrap();
    assert_eq!(pages.concat(), whole);
}

#[tokio::test]
async fn prefetched_pages_read_before_the_refresh_are_handed_over_too() {
    let h = paged_emulator().await;
    let here = (PROJECT.to_owned(), REGION.to_owned());
    let prefetch = ListPrefetch::start(&h.client, &BTreeSet::from([here.clone()]));
    // Let the prefetched List read all its pages before anyone takes them.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let needed = BTreeSet::from([here, (OTHER_PROJECT.to_owned(), OTHER_REGION.to_owned())]);
    let pages = RefCell::new(Vec::new());
    let live = refresh_paged(&h.client, &needed, &[], prefetch, |page| {
        pages.borrow_mut().push(ids(page));
    })
    .await
    .unwrap();
    let mut pages = pages.into_inner();
    assert_eq!(
        pages.len(),
        4,
        "three pages here, one in the other location"
    );
    pages.sort();
    let mut given: Vec<String> = pages.concat();
    given.sort();
    let mut whole = ids(&live);
    whole.sort();
    assert_eq!(given, whole);
    assert_eq!(whole.len(), 11);
    assert_eq!(live, refresh(&h.client, &needed, &[]).await.unwrap());
    assert_eq!(
        h.count("GET", "/modelDevelopmentClusters"),
        4 + 4,
        "the prefetched List was not sent again"
    );
}

#[tokio::test]
async fn targets_give_no_page() {
    let h = paged_emulator().await;
    let needed = BTreeSet::from([(PROJECT.to_owned(), REGION.to_owned())]);
    let given = RefCell::new(0);
    let live = refresh_paged(
        &h.client,
        &needed,
        &[parsed_name("c03")],
        ListPrefetch::default(),
        |_| *given.borrow_mut() += 1,
    )
    .await
    .unwrap();
    assert_eq!(ids(&live), ["c03"]);
    assert_eq!(*given.borrow(), 0);
}
