//! Reading the live clusters the planner compares against.
//!
//! There is no state file: the live API is the source of truth. Without targets, every
//! (project, region) the configuration touches is listed with one paged List, all locations at
//! once; with `--target`, only those clusters are read, with one Get each. Every cluster is
//! addressed by where it was read (the configuration's project and region) and the last
//! segment of its name, because the service may spell the project as a number.
//!
//! Each List hands over its pages as they arrive ([`refresh_paged`]), so that the planner can
//! work on them while the next pages are on the network. A page is handed over, not copied:
//! whoever takes them puts the whole set together from their positions ([`LivePages`]).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, PoisonError};

use clusterform_model::{Cluster, ClusterId, ClusterName, LiveCluster, Location, STACK_LABEL};
use futures::future::try_join_all;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;

use crate::run::error::ExecError;
use crate::transport::api::ApiClient;

/// The addressed clusters of one List page.
type Page = Vec<LiveCluster>;

/// Where a page belongs in the whole live set: the position of its location among those
/// refreshed (in their order), then its number in that location's List.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct PagePosition {
    /// The location's position among the refreshed locations.
    pub location: usize,
    /// The page's number in its List, from 0.
    pub page: usize,
}

/// The pages of a refresh, in whatever order they came, read as the whole live set in the
/// order [`refresh`] returns it — without moving the clusters out of their pages, which at a
/// thousand clusters costs a millisecond right when the plan is awaited.
#[derive(Debug, Default)]
pub struct LivePages {
    /// Sorted by position.
    pages: Vec<(PagePosition, Page)>,
}

impl LivePages {
    /// Keeps `page`, found at `position`.
    pub fn add(&mut self, position: PagePosition, page: Vec<LiveCluster>) {
        let at = self.pages.partition_point(|(kept, _)| *kept <= position);
        self.pages.insert(at, (position, page));
    }

    /// Every live cluster kept, page by page in the order of their positions.
    pub fn iter(&self) -> impl Iterator<Item = &LiveCluster> {
        self.pages.iter().flat_map(|(_, page)| page)
    }

    /// The whole live set, in the order of [`iter`](Self::iter).
    pub fn into_live(self) -> Vec<LiveCluster> {
        // Sized up front: the clusters are large, and growing would copy them several times.
        let mut all = Vec::with_capacity(self.pages.iter().map(|(_, page)| page.len()).sum());
        for (_, page) in self.pages {
            all.extend(page);
        }
        all
    }
}

/// A List running on the runtime (each location's at once), its pages kept until they are
/// handed over; cancelled when dropped.
#[derive(Debug)]
struct StartedList {
    task: JoinHandle<Result<(), ExecError>>,
    pages: UnboundedReceiver<Page>,
}

impl StartedList {
    fn start(client: &ApiClient, location: &Location) -> Self {
        let (client, location) = (client.clone(), location.clone());
        let (sender, pages) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move { list(&client, &location, &sender).await });
        Self { task, pages }
    }

    /// Gives every page of the location, the `location`-th refreshed, to `on_page` as it
    /// arrives; then whether the List ended well.
    ///
    /// A cluster listed twice (in one page or two, with the same content or not) ends the
    /// List with [`ExecError::ListedTwice`] before the page that repeats it is given: which
    /// copy is the cluster cannot be known, and planning from either could delete or replace
    /// a cluster that needs nothing.
    async fn hand_over(
        mut self,
        location: usize,
        on_page: &impl Fn(PagePosition, Vec<LiveCluster>),
    ) -> Result<(), ExecError> {
        let mut page = 0;
        let mut seen = ListedOnce::default();
        // The task holds the only sender: the pages end when the List does.
        while let Some(clusters) = self.pages.recv().await {
            seen.check(&clusters, page)?;
            on_page(PagePosition { location, page }, clusters);
            page += 1;
        }
        match (&mut self.task).await {
            Ok(listed) => listed,
            // The task is only ever aborted by dropping this handle, so it ended by panicking.
            Err(ended) => std::panic::resume_unwind(ended.into_panic()),
        }
    }
}

impl Drop for StartedList {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The live clusters: every cluster of `locations`, or only `targets` when
/// some are given (a target that does not exist is simply absent from the result).
pub async fn refresh(
    client: &ApiClient,
    locations: &BTreeSet<Location>,
    targets: &[ClusterName],
) -> Result<Vec<LiveCluster>, ExecError> {
    let pages = Mutex::new(LivePages::default());
    refresh_paged(client, locations, targets, |position, page| {
        pages
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .add(position, page);
    })
    .await?;
    let pages = pages.into_inner().unwrap_or_else(PoisonError::into_inner);
    Ok(pages.into_live())
}

/// [`refresh`], handing each List page's live clusters to `on_page` as they arrive, with the
/// page's position, so that they can be used before the last page is in; the pages put
/// together by position ([`LivePages`]) are the whole set [`refresh`] returns. `Ok` when every
/// page was given; on an error, the pages given are part of an incomplete answer. With
/// `targets`, whose clusters are read with Gets, the clusters found are given as one page.
pub async fn refresh_paged(
    client: &ApiClient,
    locations: &BTreeSet<Location>,
    targets: &[ClusterName],
    on_page: impl Fn(PagePosition, Vec<LiveCluster>),
) -> Result<(), ExecError> {
    if !targets.is_empty() {
        let found = get_targets(client, targets).await?;
        on_page(PagePosition::default(), found);
        return Ok(());
    }
    let started: Vec<StartedList> = locations
        .iter()
        .map(|location| StartedList::start(client, location))
        .collect();
    let lists = started
        .into_iter()
        .enumerate()
        .map(|(location, list)| list.hand_over(location, &on_page));
    try_join_all(lists).await?;
    Ok(())
}

/// The page each cluster of one List was first listed in.
#[derive(Debug, Default)]
struct ListedOnce {
    pages: HashMap<ClusterId, usize>,
}

impl ListedOnce {
    /// Records the clusters of the List's page `page`; the first one already listed (in an
    /// earlier page, or earlier in this one) is an error naming it and both pages.
    fn check(&mut self, clusters: &[LiveCluster], page: usize) -> Result<(), ExecError> {
        for cluster in clusters {
            let id = cluster.address.id();
            if let Some(&first) = self.pages.get(id) {
                return Err(ExecError::ListedTwice {
                    name: cluster.address.clone(),
                    first_page: first + 1,
                    second_page: page + 1,
                });
            }
            self.pages.insert(id.clone(), page);
        }
        Ok(())
    }
}

/// One Get per target, all at once.
async fn get_targets(
    client: &ApiClient,
    targets: &[ClusterName],
) -> Result<Vec<LiveCluster>, ExecError> {
    let found = try_join_all(targets.iter().map(async |name| {
        let cluster = client.get_cluster(name).await?;
        cluster.map(|c| addressed(name.location(), c)).transpose()
    }))
    .await?;
    Ok(found.into_iter().flatten().flatten().collect())
}

/// Lists one location, sending each page's clusters, addressed, to `pages`. A page with a
/// cluster that cannot be addressed is not sent, nor any after it; the List still runs to its
/// end, so that its own errors come first, as they would for the whole list.
async fn list(
    client: &ApiClient,
    location: &Location,
    pages: &UnboundedSender<Page>,
) -> Result<(), ExecError> {
    let mut unaddressable = None;
    client
        .list_clusters_paged(location, |clusters| {
            if unaddressable.is_some() {
                return;
            }
            match address_page(location, clusters) {
                // Nobody takes the pages once the refresh is dropped; nothing to do then.
                Ok(page) => drop(pages.send(page)),
                Err(error) => unaddressable = Some(error),
            }
        })
        .await?;
    unaddressable.map_or(Ok(()), Err)
}

/// One page's clusters, addressed; a cluster nobody owns whose name cannot be read is left out.
fn address_page(location: &Location, clusters: Vec<Cluster>) -> Result<Page, ExecError> {
    let addressed: Result<Vec<_>, _> = clusters
        .into_iter()
        .map(|c| addressed(location, c))
        .collect();
    addressed.map(|all| all.into_iter().flatten().collect())
}

/// The cluster with its address. A cluster whose name cannot be read cannot be addressed by
/// any request: one without an ownership label is nobody's concern here and is skipped, one
/// that carries it stops the run, since planning without it could delete or duplicate.
fn addressed(location: &Location, cluster: Cluster) -> Result<Option<LiveCluster>, ExecError> {
    let owned = cluster.label(STACK_LABEL).is_some();
    match LiveCluster::read_at(location, cluster) {
        Ok(live) => Ok(Some(live)),
        Err(unreadable) if owned => Err(ExecError::UnreadableLiveName(unreadable)),
        Err(unreadable) => {
            tracing::debug!("skipping a cluster nobody owns: {unreadable}");
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster(name: &str, stack: Option<&str>) -> Cluster {
        let labels = stack.map(|s| [(STACK_LABEL.to_owned(), s.to_owned())].into());
        Cluster {
            name: Some(name.to_owned()),
            labels,
            ..Cluster::default()
        }
    }

    #[test]
    fn a_project_number_in_the_name_is_addressed_with_the_project_listed() {
        let named = "projects/123456789012/locations/us-central1/modelDevelopmentClusters/train01";
        let live = addressed(&acme_ml(), cluster(named, Some("s")))
            .unwrap()
            .unwrap();
        assert_eq!(live.address.project(), "acme-ml");
        assert_eq!(live.address.id(), "train01");
        assert_eq!(
            live.cluster.name.as_deref(),
            Some(named),
            "the answer is kept as is"
        );
    }

    fn acme_ml() -> Location {
        Location::new("acme-ml", "us-central1").unwrap()
    }

    fn listed(id: &str) -> LiveCluster {
        let name = format!("projects/acme-ml/locations/us-central1/modelDevelopmentClusters/{id}");
        addressed(&acme_ml(), cluster(&name, Some("s")))
            .unwrap()
            .unwrap()
    }

    #[test]
    fn a_cluster_listed_twice_is_an_error_naming_it_and_its_pages() {
        let mut seen = ListedOnce::default();
        seen.check(&[listed("a"), listed("b")], 0).unwrap();
        seen.check(&[listed("c")], 1).unwrap();
        let error = seen.check(&[listed("d"), listed("b")], 2).unwrap_err();
        assert!(
            matches!(&error, ExecError::ListedTwice { name, first_page: 1, second_page: 3 }
                if name.id() == "b"),
            "{error}"
        );
        let mut seen = ListedOnce::default();
        let twice_in_one = seen.check(&[listed("a"), listed("a")], 0).unwrap_err();
        assert!(
            matches!(
                twice_in_one,
                ExecError::ListedTwice {
                    first_page: 1,
                    second_page: 1,
                    ..
                }
            ),
            "{twice_in_one}"
        );
    }

    #[test]
    fn unreadable_names_are_skipped_unless_a_stack_owns_the_cluster() {
        let skipped = addressed(&acme_ml(), cluster("garbage", None)).unwrap();
        assert!(skipped.is_none());
        let error = addressed(&acme_ml(), cluster("garbage", Some("other"))).unwrap_err();
        assert!(matches!(error, ExecError::UnreadableLiveName(_)), "{error}");
        assert!(error.to_string().contains("garbage"), "{error}");
    }
}
