//! Plan at scale: `clusterform plan` of a fleet that needs no changes, against the two
//! baselines — the floor (the List pages a refresh cannot avoid, regions in parallel) and a
//! Get per declared cluster at a parallelism of ten, which is how the Terraform provider
//! refreshes (one read per resource in its state, `-parallelism=10`).

use std::time::{Duration, Instant};

use clusterform_executor::ApiClient;
use clusterform_model::ClusterName;
use futures::{StreamExt, TryStreamExt};

use crate::child::{Run, Tool};
use crate::error::BenchError;
use crate::fleet::Fleet;
use crate::progress::progress;
use crate::server;
use crate::startup::kib;
use crate::stats::Summary;

/// Concurrent Gets of the Get-per-cluster baseline (Terraform's default `-parallelism`).
pub const GET_PARALLELISM: usize = 10;

/// Above this many clusters the Get-per-cluster baseline is not run but computed from the
/// largest measured size of the same layout: at a fixed parallelism its time grows linearly,
/// and 10,000 Gets take about 50 s per sample.
pub const GET_MEASURED_UP_TO: usize = 1_000;

/// The Get-per-cluster figure of one case.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GetBaseline {
    /// Measured over the samples.
    Measured(Summary),
    /// Scaled linearly from the measured case of `from_size` clusters.
    Computed {
        /// The measured case it is scaled from.
        from_size: usize,
        /// The scaled figures.
        summary: Summary,
    },
}

impl GetBaseline {
    /// The figures, however they were found.
    pub fn summary(self) -> Summary {
        match self {
            Self::Measured(summary) | Self::Computed { summary, .. } => summary,
        }
    }
}

/// The List page caps the page-cap rows try besides the emulator's default: the page size
/// clusterform asks for, which is also the first size at which a List refresh can be ten times
/// faster than a Get per cluster at parallelism ten. A larger cap changes nothing a refresh
/// reads, since no page holds more than was asked for.
pub const PAGE_CAPS_TRIED: [usize; 1] = [clusterform_executor::LIST_PAGE_SIZE as usize];

/// One case: a fleet size in a layout.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanCase {
    /// Declared (and live) clusters.
    pub size: usize,
    /// Regions they are spread over.
    pub regions: usize,
    /// Wall time of `clusterform plan`, in seconds.
    pub ours: Summary,
    /// CPU time of `clusterform plan`, in seconds.
    pub cpu: Summary,
    /// Peak RSS of `clusterform plan`, in KiB.
    pub rss_kib: Summary,
    /// The floor, in seconds.
    pub floor: f64,
    /// The Get-per-cluster refresh, in seconds.
    pub get_per_cluster: GetBaseline,
}

/// The plan of one fleet size in one region against an emulator with another List page cap.
#[derive(Debug, Clone, PartialEq)]
pub struct PageCapCase {
    /// The most clusters a List page holds.
    pub page_cap: usize,
    /// Declared (and live) clusters, all in one region.
    pub size: usize,
    /// Wall time of `clusterform plan`, in seconds.
    pub ours: Summary,
    /// The floor at this cap, in seconds.
    pub floor: f64,
    /// The Get-per-cluster refresh of the same fleet (it does not depend on the cap).
    pub get_per_cluster: Summary,
}

/// The floor of a refresh: every region's List pages one after the other, the regions in
/// parallel, each page costing the injected latency. A plan also lists every service region
/// the fleet leaves empty (one page each, at the same time as the others), which never raises
/// the floor above the busiest region's pages.
pub fn floor(fleet: &Fleet, latency: Duration, page_cap: usize) -> f64 {
    let pages = fleet
        .per_region()
        .values()
        .map(|&clusters| clusters.div_ceil(page_cap).max(1))
        .max()
        .unwrap_or(1);
    // Page counts are small whole numbers, exact in an f64.
    #[allow(clippy::cast_precision_loss)]
    let pages = pages as f64;
    pages * latency.as_secs_f64()
}

/// Measures every size in both layouts (one region, then ten).
pub async fn measure(
    tool: &Tool,
    sizes: &[usize],
    latency: Duration,
    samples: usize,
) -> Result<Vec<PlanCase>, BenchError> {
    let mut cases = Vec::new();
    for regions in [1, 10] {
        let mut largest_measured: Option<(usize, Summary)> = None;
        for &size in sizes {
            let fleet = Fleet::new(size, regions);
            let computed_from = largest_measured.filter(|_| size > GET_MEASURED_UP_TO);
            let (ours, gets) = measure_case(
                tool,
                &fleet,
                latency,
                samples,
                server::list_page_cap(),
                computed_from.is_none(),
            )
            .await?;
            let get_per_cluster = match (computed_from, gets) {
                (Some((from_size, measured)), _) => GetBaseline::Computed {
                    from_size,
                    summary: measured.scaled(ratio_of(size, from_size)),
                },
                (None, Some(gets)) => {
                    largest_measured = Some((size, gets));
                    GetBaseline::Measured(gets)
                }
                (None, None) => {
                    return Err(BenchError::Unexpected("no Get samples".to_owned()));
                }
            };
            cases.push(PlanCase {
                size,
                regions,
                ours: summary_of(&ours, |run| run.wall),
                cpu: summary_of(&ours, |run| run.cpu),
                rss_kib: summary_of(&ours, |run| kib(run.max_rss_kib)),
                floor: floor(&fleet, latency, server::list_page_cap()),
                get_per_cluster,
            });
        }
    }
    Ok(cases)
}

/// Measures the plan of the one-region `case` again against emulators whose List pages hold
/// each of [`PAGE_CAPS_TRIED`] clusters: how the List page cap bounds the speed-up over a Get
/// per cluster, since the service's cap is not documented.
pub async fn measure_page_caps(
    tool: &Tool,
    case: &PlanCase,
    latency: Duration,
    samples: usize,
) -> Result<Vec<PageCapCase>, BenchError> {
    let fleet = Fleet::new(case.size, 1);
    let mut cases = Vec::with_capacity(PAGE_CAPS_TRIED.len());
    for page_cap in PAGE_CAPS_TRIED {
        let (ours, _) = measure_case(tool, &fleet, latency, samples, page_cap, false).await?;
        cases.push(PageCapCase {
            page_cap,
            size: case.size,
            ours: summary_of(&ours, |run| run.wall),
            floor: floor(&fleet, latency, page_cap),
            get_per_cluster: case.get_per_cluster.summary(),
        });
    }
    Ok(cases)
}

async fn measure_case(
    tool: &Tool,
    fleet: &Fleet,
    latency: Duration,
    samples: usize,
    page_cap: usize,
    measure_gets: bool,
) -> Result<(Vec<Run>, Option<Summary>), BenchError> {
    let size = fleet.members.len();
    let regions = fleet.per_region().len();
    progress(&format!(
        "plan: {size} clusters in {regions} region(s), pages of {page_cap}, {samples} samples"
    ));
    let handle = server::start_with_page_cap(latency, Duration::from_secs(1), page_cap).await?;
    for member in &fleet.members {
        handle
            .emulator()
            .insert_cluster(&member.name(), member.resource(4));
    }
    let dir = tempfile::tempdir().map_err(|e| BenchError::io("creating a temp dir", e))?;
    std::fs::write(dir.path().join("main.hcl"), fleet.hcl(4))
        .map_err(|e| BenchError::io("writing the configuration", e))?;
    let mut runs = Vec::with_capacity(samples);
    for _ in 0..samples {
        // Exit code 0 under --detailed-exitcode means "No changes": the seed matches.
        let args = ["plan", "--detailed-exitcode"];
        runs.push(
            tool.run(dir.path(), Some(&handle.base_url()), &args, 0)
                .await?,
        );
    }
    let gets = if measure_gets {
        let client = server::api_client(&handle.base_url())?;
        let mut times = Vec::with_capacity(samples);
        for _ in 0..samples {
            times.push(get_each(&client, fleet).await?);
        }
        Summary::of(&times)
    } else {
        progress(&format!(
            "plan: Get per cluster for {size} clusters is computed, not run"
        ));
        None
    };
    handle.shutdown().await;
    Ok((runs, gets))
}

/// The Get-per-cluster refresh: one Get per declared cluster, ten at a time; its wall time in
/// seconds.
async fn get_each(client: &ApiClient, fleet: &Fleet) -> Result<f64, BenchError> {
    let names = fleet
        .members
        .iter()
        .map(|member| {
            member
                .name()
                .parse::<ClusterName>()
                .map_err(|e| BenchError::Unexpected(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let started = Instant::now();
    futures::stream::iter(names)
        .map(async |name| match client.get_cluster(&name).await? {
            Some(_) => Ok(()),
            None => Err(BenchError::Unexpected(format!("{name} is missing"))),
        })
        .buffer_unordered(GET_PARALLELISM)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(started.elapsed().as_secs_f64())
}

fn summary_of(runs: &[Run], figure: impl Fn(&Run) -> f64) -> Summary {
    let values: Vec<f64> = runs.iter().map(figure).collect();
    Summary::of(&values).unwrap_or(Summary::exact(0.0))
}

fn ratio_of(size: usize, from_size: usize) -> f64 {
    // Cluster counts are far below 2^53.
    #[allow(clippy::cast_precision_loss)]
    let ratio = size as f64 / from_size as f64;
    ratio
}

#[cfg(test)]
mod tests {
    use super::*;

    const LATENCY: Duration = Duration::from_millis(50);

    #[test]
    fn the_floor_is_one_page_for_a_small_region() {
        assert_eq!(floor(&Fleet::new(10, 1), LATENCY, 50), 0.05);
    }

    #[test]
    fn the_floor_counts_the_pages_of_one_region_in_sequence() {
        // 1,000 clusters at 50 a page: 20 pages of 50 ms.
        assert!((floor(&Fleet::new(1_000, 1), LATENCY, 50) - 1.0).abs() < 1e-9);
        assert!((floor(&Fleet::new(1_001, 1), LATENCY, 50) - 1.05).abs() < 1e-9);
    }

    #[test]
    fn the_floor_of_many_regions_is_the_busiest_region() {
        // 10,000 over ten regions: 1,000 each, listed in parallel, 20 pages.
        assert!((floor(&Fleet::new(10_000, 10), LATENCY, 50) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_computed_baseline_scales_linearly() {
        let measured = Summary::of(&[5.0, 5.2, 4.9]).unwrap();
        assert_eq!(measured.scaled(ratio_of(10_000, 1_000)).median, 50.0);
    }
}
