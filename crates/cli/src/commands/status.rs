//! `clusterform status`: the health of every cluster of the configuration — each declared
//! one (shown as not created when it is absent) and each live cluster the stack owns, or only
//! the `--target` ones — from the API and, for a `RUNNING` cluster, its Slurm; a table and what
//! needs attention, or one JSON document. It only reads: no lock, no journal, no request that
//! changes anything.

use std::collections::BTreeMap;

use std::time::Duration;

use clusterform::format::status::{self, Declaration, Found, Recorded, StatusEntry};
use clusterform::format::status_watch::{self, FailedReadings};
use clusterform_config::Config;
use clusterform_executor::{AppliedRecord, FleetTotals};
use clusterform_model::pricing::FleetBurnRate;
use clusterform_model::{ClusterName, LiveCluster, UnreadLocation};
use clusterform_planner::PlanError;
use time::OffsetDateTime;

use crate::arguments::Status;
use crate::context::{self, Connection};
use crate::error::CliError;
use crate::exit_status::ExitStatus;
use crate::interrupt_signal;
use crate::printer::Printer;
use crate::views::{StatusReport, StatusView, status_view};
use crate::workflow::{self, EarlierRuns};

/// Reads and shows the health of the configuration's clusters, once or, with `--watch`,
/// again every interval until Ctrl-C.
pub async fn run(args: &Status, printer: &Printer) -> Result<ExitStatus, CliError> {
    let view = status_view(args.json, !args.targets.is_empty(), printer);
    let inputs = context::variable_inputs(&args.variables)?;
    let mut config = context::load_config(&args.dir, inputs, printer).await?;
    // The prices every reading of a watch shows costs at: read once, the flag's winning.
    config.provider.pricing =
        context::prices(args.prices.as_deref(), Some(&config.provider), printer)?;
    let endpoint = args.endpoint.as_ref();
    let connection = context::connect(endpoint, Some(&config.provider), &args.dir, printer).await?;
    if let Some(interval) = args.watch {
        return watch(args, &config, &connection, &*view, interval, printer).await;
    }
    let report = read_report(args, &config, &connection, printer).await?;
    view.report(&report.shown());
    workflow::complete_view(&report.unread)?;
    Ok(
        if args.detailed_exitcode && status::needs_attention(&report.entries) {
            ExitStatus::NeedsAttention
        } else {
            ExitStatus::Success
        },
    )
}

/// What one reading found.
struct Report {
    entries: Vec<StatusEntry>,
    unread: Vec<UnreadLocation>,
    totals: FleetTotals,
    burn_rate: Option<FleetBurnRate>,
    now: OffsetDateTime,
}

impl Report {
    /// The report as the view shows it.
    fn shown(&self) -> StatusReport<'_> {
        StatusReport {
            entries: &self.entries,
            unread: &self.unread,
            totals: &self.totals,
            burn_rate: self.burn_rate.as_ref(),
            now: self.now,
        }
    }
}

/// Lists the locations, reads the health of the clusters reported on, and says which
/// locations could not be listed.
async fn read_report(
    args: &Status,
    config: &Config,
    connection: &Connection,
    printer: &Printer,
) -> Result<Report, CliError> {
    let client = &connection.client;
    // A target neither declared nor released may be anywhere: every location is listed.
    let names = workflow::target_names(config, &args.targets)?.unwrap_or_default();
    let earlier = EarlierRuns::read(&args.dir, connection, printer).await;
    let locations = earlier.scanned(config);
    let refreshed = clusterform_executor::refresh(client, &locations, &names).await?;
    let unread = earlier.known(config).unread(&refreshed.refused);
    let record = earlier.record;
    workflow::report_unread(printer, &unread);
    let (watched, present) = watched_clusters(config, refreshed.live, &args.targets, &unread)?;
    let now = OffsetDateTime::now_utc();
    let health = clusterform_executor::inspect_health(client, &present, args.events, now).await;
    let totals = FleetTotals::of(&present, &health);
    let prices = config.provider.pricing.as_ref();
    let burn_rate = prices.map(|prices| prices.fleet_burn_rate(&present));
    Ok(Report {
        entries: entries(watched, health, &record),
        unread,
        totals,
        burn_rate,
        now,
    })
}

/// `--watch`: a report every `interval`, each headed by what changed since the one before,
/// until Ctrl-C (exit 0). A reading that fails is said and the next one tried: one bad
/// minute of the service does not end the watch. Since a report replaces the errors on a
/// terminal, the next one's header says how many readings failed since the one before.
async fn watch(
    args: &Status,
    config: &Config,
    connection: &Connection,
    view: &dyn StatusView,
    interval: Duration,
    printer: &Printer,
) -> Result<ExitStatus, CliError> {
    let interrupted = interrupt_signal::next_ctrl_c();
    tokio::pin!(interrupted);
    let started = OffsetDateTime::now_utc();
    let mut previous: Option<(OffsetDateTime, Vec<StatusEntry>)> = None;
    let mut failed: Option<FailedReadings> = None;
    loop {
        tokio::select! {
            _ = &mut interrupted => return Ok(ExitStatus::Success),
            read = read_report(args, config, connection, printer) => match read {
                Ok(report) => {
                    let changed = previous.as_ref().map(|(at, entries)| {
                        (*at, status_watch::changed_clusters(entries, &report.entries))
                    });
                    let since = changed.as_ref().map(|(at, names)| (*at, names.as_slice()));
                    let failed = failed.take();
                    let header = status_watch::header(interval, report.now, since, failed.as_ref());
                    view.watching(&header);
                    view.report(&report.shown());
                    previous = Some((report.now, report.entries));
                }
                Err(error) => {
                    printer.error(&error);
                    let since = previous.as_ref().map_or(started, |(at, _)| *at);
                    failed = Some(one_more_failure(failed.take(), since, &error));
                }
            },
        }
        tokio::select! {
            _ = &mut interrupted => return Ok(ExitStatus::Success),
            () = tokio::time::sleep(interval) => {}
        }
    }
}

/// The readings that failed since the report read at `since` (or since the watch began),
/// `error` the latest.
fn one_more_failure(
    earlier: Option<FailedReadings>,
    since: OffsetDateTime,
    error: &CliError,
) -> FailedReadings {
    let message = error.to_string();
    match earlier {
        Some(earlier) => earlier.again(&message),
        None => FailedReadings::first(since, &message),
    }
}

/// A cluster `status` reports on, before its health is read.
struct Watched {
    address: ClusterName,
    declaration: Declaration,
    created: bool,
}

/// The clusters to report on: the declared ones (but those in a location that could not be
/// listed), then the live ones the stack owns that are no longer declared; with `targets`, only
/// those. Beside them, the live clusters among them, in the same order, for their health to be
/// read.
///
/// A declared cluster is reported whoever owns it (the plan says what is wrong with its
/// ownership); an undeclared one only when it carries this stack's label. A target that is
/// neither is an error, as for `plan`.
fn watched_clusters(
    config: &Config,
    live: Vec<LiveCluster>,
    targets: &[String],
    unread: &[UnreadLocation],
) -> Result<(Vec<Watched>, Vec<LiveCluster>), CliError> {
    let wanted =
        |name: &ClusterName| targets.is_empty() || targets.iter().any(|t| t == name.id().as_str());
    // Nothing is known of a declared cluster whose location could not be listed: its
    // location's row says so, never "not created".
    let seen = |name: &ClusterName| !unread.iter().any(|u| &u.location == name.location());
    // By whole address: the same ID may live in two regions.
    let mut live: BTreeMap<ClusterName, LiveCluster> = live
        .into_iter()
        .map(|cluster| (cluster.address.clone(), cluster))
        .collect();
    let (mut watched, mut present) = (Vec::new(), Vec::new());
    for declared in config
        .clusters
        .iter()
        .filter(|c| wanted(&c.name) && seen(&c.name))
    {
        let found = live.remove(&declared.name);
        watched.push(Watched {
            address: declared.name.clone(),
            declaration: Declaration::Declared,
            created: found.is_some(),
        });
        present.extend(found);
    }
    let stack = config.provider.stack.as_str();
    for (address, cluster) in live {
        if wanted(&address) && cluster.cluster.is_owned_by(stack) {
            // A `removed` block releases a cluster only at its own address, as the plan does.
            let released = config.removed.iter().any(|block| block.name == address);
            watched.push(Watched {
                declaration: if released {
                    Declaration::Released
                } else {
                    Declaration::Undeclared
                },
                address,
                created: true,
            });
            present.push(cluster);
        }
    }
    let unseen = |target: &String| {
        unread
            .iter()
            .any(|u| u.held.iter().any(|id| id.as_str() == target.as_str()))
    };
    if let Some(unknown) = targets.iter().find(|target| {
        !unseen(target)
            && !watched
                .iter()
                .any(|w| w.address.id().as_str() == target.as_str())
    }) {
        let known = watched.iter().map(|w| w.address.id().as_str());
        return Err(PlanError::UnknownTarget {
            id: unknown.clone(),
            closest: clusterform_config::closest(unknown, known).map(str::to_owned),
        }
        .into());
    }
    Ok((watched, present))
}

/// Each watched cluster with its health, by project, region and ID (the order of every table
/// of clusters); `health` holds one report per created cluster, in their order. A declared
/// cluster that is not live is `Gone` when the applied record says clusterform had it (a mark
/// or an entry): an unreadable record says nothing.
fn entries(
    watched: Vec<Watched>,
    health: Vec<clusterform_executor::ClusterHealth>,
    record: &AppliedRecord,
) -> Vec<StatusEntry> {
    let mut health = health.into_iter();
    let mut entries: Vec<StatusEntry> = watched
        .into_iter()
        .map(|cluster| {
            let found = match cluster.created.then(|| health.next()).flatten() {
                Some(health) => Found::Live(Box::new(health)),
                None => recorded(record, &cluster.address).map_or(Found::NotCreated, Found::Gone),
            };
            StatusEntry {
                address: cluster.address,
                declaration: cluster.declaration,
                found,
            }
        })
        .collect();
    entries.sort_by(|a, b| a.address.cmp(&b.address));
    entries
}

/// What the applied record says of `address`: its mark, else its entry.
fn recorded(record: &AppliedRecord, address: &ClusterName) -> Option<Recorded> {
    if let Some(mark) = record.mark(address) {
        return Some(Recorded::Marked(mark));
    }
    record.get(address).map(|entry| Recorded::Applied {
        applied_at: entry.applied_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_readings_count_from_the_report_before_the_first_failure() {
        let report_at = time::macros::datetime!(2026-12-06 12:00:05 UTC);
        let later = time::macros::datetime!(2026-12-06 12:00:35 UTC);
        let expired = CliError::Usage("the token expired".to_owned());
        let unreachable = CliError::Usage("no answer".to_owned());
        let once = one_more_failure(None, report_at, &expired);
        assert_eq!(once, FailedReadings::first(report_at, "the token expired"));
        assert_eq!(
            one_more_failure(Some(once), later, &unreachable),
            FailedReadings::first(report_at, "the token expired").again("no answer")
        );
    }
}
