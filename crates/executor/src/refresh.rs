//! Reading the live clusters the planner compares against.
//!
//! There is no state file: the live API is the source of truth. Without targets, every
//! (project, region) the configuration touches is listed with one paged List, all locations at
//! once; with `--target`, only those clusters are read, with one Get each. Every cluster is
//! addressed by where it was read (the configuration's project and region) and the last
//! segment of its name, because the service may spell the project as a number.
//!
//! The Lists may start before the configuration is fully loaded ([`ListPrefetch`]): the
//! configuration names its locations long before its clusters are decoded, and the network
//! time of the Lists then overlaps that work. The refresh takes the Lists already started for
//! the locations it needs, lists the others, and drops the rest unread.

use std::collections::{BTreeMap, BTreeSet};

use clusterform_model::{Cluster, ClusterName, STACK_LABEL};
use clusterform_planner::LiveCluster;
use futures::future::try_join_all;
use tokio::task::JoinHandle;

use crate::client::ApiClient;
use crate::error::ExecError;

/// The live clusters of one location, or why they could not be read.
type LocationList = Result<Vec<LiveCluster>, ExecError>;

/// Lists started ahead of the refresh, one per location, running on the tokio runtime. What the
/// refresh does not take is cancelled when this is dropped, and its errors are never seen.
#[derive(Debug, Default)]
pub struct ListPrefetch {
    lists: BTreeMap<(String, String), StartedList>,
}

impl ListPrefetch {
    /// Starts the List of every location in `locations` on the current tokio runtime.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime.
    pub fn start(client: &ApiClient, locations: &BTreeSet<(String, String)>) -> Self {
        let lists = locations
            .iter()
            .map(|location| {
                let (client, (project, region)) = (client.clone(), location.clone());
                let task = tokio::spawn(async move { list(&client, &project, &region).await });
                (location.clone(), StartedList(task))
            })
            .collect();
        Self { lists }
    }
}

/// A List running on the runtime, cancelled when dropped unread.
#[derive(Debug)]
struct StartedList(JoinHandle<LocationList>);

impl StartedList {
    async fn result(mut self) -> LocationList {
        match (&mut self.0).await {
            Ok(list) => list,
            // The task is only ever aborted by dropping this handle, so it ended by panicking.
            Err(ended) => std::panic::resume_unwind(ended.into_panic()),
        }
    }
}

impl Drop for StartedList {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The live clusters: every cluster of `locations` (project, region), or only `targets` when
/// some are given (a target that does not exist is simply absent from the result).
pub async fn refresh(
    client: &ApiClient,
    locations: &BTreeSet<(String, String)>,
    targets: &[ClusterName],
) -> Result<Vec<LiveCluster>, ExecError> {
    refresh_prefetched(client, locations, targets, ListPrefetch::default()).await
}

/// [`refresh`], taking the Lists of `prefetch` for the locations it needs instead of listing
/// them again; a location not prefetched is listed now, and a prefetched one that is not in
/// `locations` is dropped, its answer or error ignored. With `targets`, no List is used. The
/// result and the errors are those of [`refresh`].
pub async fn refresh_prefetched(
    client: &ApiClient,
    locations: &BTreeSet<(String, String)>,
    targets: &[ClusterName],
    mut prefetch: ListPrefetch,
) -> Result<Vec<LiveCluster>, ExecError> {
    if !targets.is_empty() {
        drop(prefetch);
        return get_targets(client, targets).await;
    }
    let lists = try_join_all(locations.iter().map(|location| {
        let started = prefetch.lists.remove(location);
        async move {
            match started {
                Some(started) => started.result().await,
                None => list(client, &location.0, &location.1).await,
            }
        }
    }))
    .await?;
    Ok(lists.into_iter().flatten().collect())
}

/// One Get per target, all at once.
async fn get_targets(
    client: &ApiClient,
    targets: &[ClusterName],
) -> Result<Vec<LiveCluster>, ExecError> {
    let found = try_join_all(targets.iter().map(async |name| {
        let cluster = client.get_cluster(name).await?;
        cluster
            .map(|c| addressed(&name.project, &name.location, c))
            .transpose()
    }))
    .await?;
    Ok(found.into_iter().flatten().flatten().collect())
}

/// Every cluster of one location, addressed.
async fn list(client: &ApiClient, project: &str, region: &str) -> LocationList {
    let clusters = client.list_clusters(project, region).await?;
    let addressed: Result<Vec<_>, _> = clusters
        .into_iter()
        .map(|c| addressed(project, region, c))
        .collect();
    addressed.map(|all| all.into_iter().flatten().collect())
}

/// The cluster with its address. A cluster whose name cannot be read cannot be addressed by
/// any request: one without an ownership label is nobody's concern here and is skipped, one
/// that carries it stops the run, since planning without it could delete or duplicate.
fn addressed(
    project: &str,
    region: &str,
    cluster: Cluster,
) -> Result<Option<LiveCluster>, ExecError> {
    let owned = cluster.label(STACK_LABEL).is_some();
    match LiveCluster::read_at(project, region, cluster) {
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
        let live = addressed("acme-ml", "us-central1", cluster(named, Some("s")))
            .unwrap()
            .unwrap();
        assert_eq!(live.address.project, "acme-ml");
        assert_eq!(live.address.cluster_id, "train01");
        assert_eq!(
            live.cluster.name.as_deref(),
            Some(named),
            "the answer is kept as is"
        );
    }

    #[test]
    fn unreadable_names_are_skipped_unless_a_stack_owns_the_cluster() {
        let skipped = addressed("acme-ml", "us-central1", cluster("garbage", None)).unwrap();
        assert!(skipped.is_none());
        let error =
            addressed("acme-ml", "us-central1", cluster("garbage", Some("other"))).unwrap_err();
        assert!(matches!(error, ExecError::UnreadableLiveName(_)), "{error}");
        assert!(error.to_string().contains("garbage"), "{error}");
    }
}
