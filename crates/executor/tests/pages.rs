//! Lists page by page: `list_clusters_paged` gives each page as it is read, and `refresh_paged`
//! hands every page's live clusters over with its position (a prefetched List's pages read
//! before the refresh included), from which `LivePages` puts the whole set together.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use clusterform_emulator::EmulatorOptions;
use clusterform_executor::{LivePages, PagePosition, RefreshWatcher, refresh, refresh_paged};
use clusterform_model::{LiveCluster, Location, RefreshLocations};

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
    live.iter().map(|c| c.address.id().to_string()).collect()
}

#[tokio::test]
async fn list_clusters_paged_gives_each_page_in_order() {
    let h = paged_emulator().await;
    let mut pages = Vec::new();
    h.client
        .list_clusters_paged(&location(), &h.client.refresh_meter(), |page| {
            pages.push(page);
        })
        .await
        .unwrap();
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [4, 4, 2]);
    let whole = h.client.list_clusters(&location()).await.unwrap();
    assert_eq!(pages.concat(), whole);
}

/// The next page is asked for as soon as a page's token is read, before its clusters are
/// decoded and handed over: when page N is handed over, the emulator has already received the
/// request for page N + 1 (or will, without anything else running on this task). A full page
/// handed over before its successor was asked for makes this wait for a request that never
/// comes. (The last page, not full, waits for nothing.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_page_is_asked_for_before_a_page_is_handed_over() {
    let h = paged_emulator().await;
    let lists_received = || h.count("GET", "/modelDevelopmentClusters");
    let mut asked_before_handed_over = Vec::new();
    h.client
        .list_clusters_paged(&location(), &h.client.refresh_meter(), |page| {
            let pages_so_far = asked_before_handed_over.len() + 1;
            let deadline = Instant::now() + Duration::from_secs(10);
            let full = page.len() == 4;
            while full && lists_received() <= pages_so_far && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            asked_before_handed_over.push(lists_received());
        })
        .await
        .unwrap();
    assert_eq!(
        asked_before_handed_over,
        [2, 3, 3],
        "pages 2 and 3 were asked for before pages 1 and 2 were handed over; page 3 is the last"
    );
}

#[tokio::test]
async fn every_location_s_pages_are_handed_over_with_their_positions() {
    let h = paged_emulator().await;
    let needed = RefreshLocations::named([
        location(),
        Location::new(OTHER_PROJECT, OTHER_REGION).unwrap(),
    ]);
    let pages = RefCell::new(Vec::new());
    refresh_paged(&h.client, &needed, &[], |position, page| {
        pages.borrow_mut().push((position, page));
    })
    .await
    .unwrap();
    let pages = pages.into_inner();
    let mut positions: Vec<(usize, usize, usize)> = pages
        .iter()
        .map(|(p, page)| (p.location, p.page, page.len()))
        .collect();
    positions.sort_unstable();
    assert_eq!(
        positions,
        [(0, 0, 4), (0, 1, 4), (0, 2, 2), (1, 0, 1)],
        "three pages here (the first location in order), one in the other"
    );
    let mut whole = LivePages::default();
    // Put together in an order of arrival other than the positions'.
    for (position, page) in pages.into_iter().rev() {
        whole.add(position, page);
    }
    let read: Vec<LiveCluster> = whole.iter().cloned().collect();
    let live = whole.into_live();
    assert_eq!(
        read, live,
        "read in place, the pages give the set they put together"
    );
    assert_eq!(ids(&live).len(), 11);
    assert_eq!(live, refresh(&h.client, &needed, &[]).await.unwrap().live);
}

/// Counts the pages and says which Lists ended, in the order they ended.
#[derive(Default)]
struct Watched {
    pages: RefCell<usize>,
    listed: RefCell<Vec<Location>>,
}

impl RefreshWatcher for &Watched {
    fn page(&self, _position: PagePosition, _clusters: Vec<LiveCluster>) {
        *self.pages.borrow_mut() += 1;
    }

    fn listed(&self, location: &Location) {
        self.listed.borrow_mut().push(location.clone());
    }
}

#[tokio::test]
async fn each_location_is_said_to_be_listed_once_after_its_last_page() {
    let h = paged_emulator().await;
    let other = Location::new(OTHER_PROJECT, OTHER_REGION).unwrap();
    let refused = Location::new(OTHER_PROJECT, "us-east5").unwrap();
    h.emulator
        .set_refused_locations(vec![format!("{OTHER_PROJECT}/us-east5").parse().unwrap()]);
    let mut needed = RefreshLocations::named([location(), other.clone()]);
    needed.add_other(refused.clone());
    let watched = Watched::default();
    let refused_lists = refresh_paged(&h.client, &needed, &[], &watched)
        .await
        .unwrap();
    assert_eq!(refused_lists.len(), 1, "us-east5 refuses");
    assert_eq!(*watched.pages.borrow(), 4);
    let mut listed = watched.listed.into_inner();
    listed.sort();
    let mut expected = vec![location(), other, refused];
    expected.sort();
    assert_eq!(listed, expected, "every List, the refused one too, once");
}

#[tokio::test]
async fn targets_give_what_they_found_as_one_page() {
    let h = paged_emulator().await;
    let needed = RefreshLocations::named([location()]);
    let given = RefCell::new(Vec::new());
    refresh_paged(
        &h.client,
        &needed,
        &[parsed_name("c03"), parsed_name("gone")],
        |position, page: Vec<LiveCluster>| given.borrow_mut().push((position, ids(&page))),
    )
    .await
    .unwrap();
    assert_eq!(
        given.into_inner(),
        [(PagePosition::default(), vec!["c03".to_owned()])]
    );
}
