//! Preflight's reads, all at once: each distinct read once, a bounded number in flight, every
//! one answered with a [`Reading`] (a read that cannot be made is `Unchecked`, never an error).

use std::collections::BTreeMap;

use clusterform_model::preflight::{PreflightRead, Reading};
use futures::StreamExt;

use crate::transport::preflight::PreflightClient;

/// Reads in flight at once: a plan creating many clusters shares a few networks and services,
/// and the APIs' per-minute read quotas are shared with the user's other tools.
const READS_IN_FLIGHT: usize = 16;

/// What each of `reads` finds, each read once.
pub async fn read_preflight(
    client: &PreflightClient,
    reads: impl IntoIterator<Item = PreflightRead>,
) -> BTreeMap<PreflightRead, Reading> {
    let distinct: std::collections::BTreeSet<PreflightRead> = reads.into_iter().collect();
    futures::stream::iter(distinct)
        .map(|read| async move {
            let reading = client.read(&read).await;
            (read, reading)
        })
        .buffer_unordered(READS_IN_FLIGHT)
        .collect()
        .await
}
