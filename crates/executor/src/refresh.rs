//! Reading the live clusters the planner compares against.
//!
//! There is no state file: the live API is the source of truth. Without targets, every
//! (project, region) the configuration touches is listed with one paged List, all locations at
//! once; with `--target`, only those clusters are read, with one Get each.

use std::collections::BTreeSet;

use clusterform_model::{Cluster, ClusterName};
use futures::future::try_join_all;

use crate::client::ApiClient;
use crate::error::ExecError;

/// The live clusters: every cluster of `locations` (project, region), or only `targets` when
/// some are given (a target that does not exist is simply absent from the result).
pub async fn refresh(
    client: &ApiClient,
    locations: &BTreeSet<(String, String)>,
    targets: &[ClusterName],
) -> Result<Vec<Cluster>, ExecError> {
    if !targets.is_empty() {
        let found = try_join_all(targets.iter().map(|name| client.get_cluster(name))).await?;
        return Ok(found.into_iter().flatten().collect());
    }
    let lists = try_join_all(
        locations
            .iter()
            .map(|(project, region)| client.list_clusters(project, region)),
    )
    .await?;
    Ok(lists.into_iter().flatten().collect())
}
