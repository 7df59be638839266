//! Apply: `clusterform apply --auto-approve` of many updates or many creates, against the
//! floor — the List pages of the refresh, then, wave after wave at the given parallelism, one
//! request round trip and the operation's own time. Following the operation adds nothing to
//! the floor: a `:wait` sent while the operation runs answers the moment it finishes.

use std::time::Duration;

use clusterform_executor::DEFAULT_PARALLELISM;

use crate::child::Tool;
use crate::error::BenchError;
use crate::fleet::Fleet;
use crate::progress::progress;
use crate::server;
use crate::stats::Summary;

/// What the applied plan does to every cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Every live cluster's compute pool grows (a PATCH each).
    Update,
    /// Every declared cluster is new (a POST each).
    Create,
}

impl Change {
    /// `updates` or `creates`.
    pub fn plural(self) -> &'static str {
        match self {
            Self::Update => "updates",
            Self::Create => "creates",
        }
    }
}

/// One apply case.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ApplyCase {
    /// What was applied.
    pub change: Change,
    /// How many clusters.
    pub clusters: usize,
    /// How long each operation ran.
    pub operation: Duration,
    /// The parallelism given to `apply`.
    pub parallelism: usize,
    /// Wall time of `clusterform apply`, in seconds.
    pub ours: Summary,
    /// The floor, in seconds.
    pub floor: f64,
}

/// The floor of applying `clusters` changes that each take one round trip and `operation`,
/// `parallelism` at a time, after a refresh of `live` clusters in one region.
pub fn floor(
    clusters: usize,
    live: usize,
    parallelism: usize,
    latency: Duration,
    operation: Duration,
    page_cap: usize,
) -> f64 {
    let refresh_pages = live.div_ceil(page_cap).max(1);
    let waves = clusters.div_ceil(parallelism.max(1));
    // Page and wave counts are small whole numbers, exact in a u32.
    let refresh = latency * u32::try_from(refresh_pages).unwrap_or(u32::MAX);
    let actions = (latency + operation) * u32::try_from(waves).unwrap_or(u32::MAX);
    (refresh + actions).as_secs_f64()
}

/// Measures `clusters` updates and `clusters` creates, each sample on a fresh emulator and
/// configuration directory.
pub async fn measure(
    tool: &Tool,
    clusters: usize,
    operation: Duration,
    latency: Duration,
    samples: usize,
) -> Result<Vec<ApplyCase>, BenchError> {
    let mut cases = Vec::new();
    for change in [Change::Update, Change::Create] {
        progress(&format!(
            "apply: {clusters} {} of {} s operations, {samples} samples",
            change.plural(),
            operation.as_secs_f64()
        ));
        let mut times = Vec::with_capacity(samples);
        for _ in 0..samples {
            times.push(apply_once(tool, change, clusters, operation, latency).await?);
        }
        let live = match change {
            Change::Update => clusters,
            Change::Create => 0,
        };
        cases.push(ApplyCase {
            change,
            clusters,
            operation,
            parallelism: DEFAULT_PARALLELISM,
            ours: Summary::of(&times)
                .ok_or_else(|| BenchError::Unexpected("no samples".to_owned()))?,
            floor: floor(
                clusters,
                live,
                DEFAULT_PARALLELISM,
                latency,
                operation,
                server::list_page_cap(),
            ),
        });
    }
    Ok(cases)
}

async fn apply_once(
    tool: &Tool,
    change: Change,
    clusters: usize,
    operation: Duration,
    latency: Duration,
) -> Result<f64, BenchError> {
    let fleet = Fleet::new(clusters, 1);
    let handle = server::start(latency, operation).await?;
    if change == Change::Update {
        for member in &fleet.members {
            handle
                .emulator()
                .insert_cluster(&member.name(), member.resource(4));
        }
    }
    let dir = tempfile::tempdir().map_err(|e| BenchError::io("creating a temp dir", e))?;
    std::fs::write(dir.path().join("main.hcl"), fleet.hcl(8))
        .map_err(|e| BenchError::io("writing the configuration", e))?;
    let parallelism = DEFAULT_PARALLELISM.to_string();
    let args = ["apply", "--auto-approve", "--parallelism", &parallelism];
    let run = tool
        .run(dir.path(), Some(&handle.base_url()), &args, 0)
        .await;
    handle.shutdown().await;
    Ok(run?.wall)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LATENCY: Duration = Duration::from_millis(50);
    const OPERATION: Duration = Duration::from_secs(2);

    #[test]
    fn the_floor_of_100_updates_is_two_pages_and_ten_waves() {
        // 2 × 50 ms + 10 × (50 ms + 2 s)
        let floor = floor(100, 100, 10, LATENCY, OPERATION, 50);
        assert!((floor - 20.6).abs() < 1e-9, "{floor}");
    }

    #[test]
    fn the_floor_of_creates_lists_one_empty_page() {
        let floor = floor(100, 0, 10, LATENCY, OPERATION, 50);
        assert!((floor - 20.55).abs() < 1e-9, "{floor}");
    }

    #[test]
    fn a_partial_wave_counts_as_a_wave() {
        let floor = floor(11, 0, 10, LATENCY, OPERATION, 50);
        assert!((floor - 4.15).abs() < 1e-9, "{floor}");
    }
}
