//! Health for `clusterform status`: what the service says of a cluster (its state with its
//! detail and error, its nodes by pool, its recent events) and, for a `RUNNING` cluster, what
//! its Slurm says (jobs running and pending, nodes idle, allocated, down or drained, and since
//! when nothing has run), read into a typed [`ClusterHealth`] with the [`Problem`]s that need
//! someone's attention.
//!
//! It only reads: one `/jobs` and one `/nodes` call through `callSlurmRestApi` per `RUNNING`
//! cluster, as `destroy --idle-for` makes them, and "idle since" is that command's evidence
//! ([`idle_verdict`]) read with a threshold of zero, so the two never disagree about when a
//! cluster last worked.
//!
//! Unknown is never healthy: a state this version does not know (or none), a node without a
//! known state, a Slurm that cannot be read, each is a problem of its own.

use std::collections::BTreeMap;
use std::time::Duration;

use clusterform_model::{
    Cluster, ClusterEvent, ClusterName, ClusterState, ClusterStatus, LiveCluster, NodeState,
    NodeStatus, Partition, Status,
};
use futures::StreamExt;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::run::idle::{IdleVerdict, SlurmEvidence, idle_verdict, read_evidence};
use crate::run::login::{LoginNode, login_node};
use crate::run::slurm::{SLURM_PARALLELISM, SlurmJob, SlurmNode, SlurmReadError};
use crate::transport::api::ApiClient;

/// What live clusters hold together, for the totals `status` and `list` end with.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FleetTotals {
    /// The live clusters counted.
    pub clusters: usize,
    /// The GPUs of their reported nodes, by accelerator type ([`Cluster::gpus_by_type`]).
    pub gpus_running: BTreeMap<String, u64>,
    /// The clusters whose running GPUs cannot be counted (no nodes reported).
    pub gpus_unknown: usize,
    /// The GPU-hours spent idle, summed over the clusters whose Slurm told
    /// ([`SlurmReport::idle_gpu_hours`]).
    pub idle_gpu_hours: f64,
    /// The clusters that may hold GPUs but whose idle GPU-hours are not known (Slurm not
    /// asked, not read, or unable to say).
    pub idle_gpu_hours_unknown: usize,
}

impl FleetTotals {
    /// The totals of `clusters`, each with its health (`health[i]` is `clusters[i]`'s).
    pub fn of(clusters: &[LiveCluster], health: &[ClusterHealth]) -> Self {
        let mut totals = Self::default();
        for (live, health) in clusters.iter().zip(health) {
            totals.clusters += 1;
            let running = live.cluster.gpus_by_type();
            match &running {
                Some(by_type) => {
                    for (kind, count) in by_type {
                        *totals.gpus_running.entry(kind.clone()).or_insert(0) += count;
                    }
                }
                None => totals.gpus_unknown += 1,
            }
            let idle_hours = match &health.slurm {
                SlurmHealth::Read(report) => report.idle_gpu_hours,
                SlurmHealth::NotAsked | SlurmHealth::Unreadable(_) => None,
            };
            let holds_none = running.is_some_and(|by_type| by_type.is_empty());
            match idle_hours {
                Some(hours) => totals.idle_gpu_hours += hours,
                None if holds_none => {}
                None => totals.idle_gpu_hours_unknown += 1,
            }
        }
        totals
    }
}

/// What was found about one live cluster.
#[derive(Debug)]
pub struct ClusterHealth {
    /// Where the cluster was read.
    pub address: ClusterName,
    /// `clusterStatus.state`.
    pub state: StateReading,
    /// `clusterStatus.detail`.
    pub detail: Option<String>,
    /// `clusterStatus.error`.
    pub error: Option<Status>,
    /// The nodes the service reports, counted by state for each pool: the cluster's pools in
    /// its order (those without nodes too), then any pool only the nodes name.
    pub pools: Vec<PoolNodes>,
    /// The newest `clusterEvents`, newest first, as many as were asked for.
    pub events: Vec<ClusterEvent>,
    /// What Slurm said.
    pub slurm: SlurmHealth,
    /// Everything that needs attention, in the order: the state, the nodes, Slurm, the events.
    pub problems: Vec<Problem>,
    /// Where its login node is; `None` when its Slurm names no login pool.
    pub login: Option<LoginNode>,
}

impl ClusterHealth {
    /// Whether a problem of the cluster's present state needs attention (error events, which
    /// are history, do not count: see [`Problem::is_current`]).
    pub fn needs_attention(&self) -> bool {
        self.problems.iter().any(Problem::is_current)
    }
}

/// `clusterStatus.state`, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateReading {
    /// A state the API documents (never [`ClusterState::Other`]).
    Known(ClusterState),
    /// A state this version does not know, as the service spelled it.
    Unrecognised(String),
    /// The cluster reports no state.
    Missing,
}

impl StateReading {
    fn of(state: Option<&str>) -> Self {
        match state.map(|text| (text, ClusterState::of(text))) {
            None => Self::Missing,
            Some((text, ClusterState::Other)) => Self::Unrecognised(text.to_owned()),
            Some((_, known)) => Self::Known(known),
        }
    }

    /// The state as the service spelled it, if it reported one.
    pub fn spelled(&self) -> Option<&str> {
        match self {
            Self::Known(state) => Some(state.as_str()),
            Self::Unrecognised(text) => Some(text),
            Self::Missing => None,
        }
    }
}

/// The nodes of one pool by state, as `clusterStatus.nodesStatus` reports them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PoolNodes {
    /// The pool's ID; `None` for nodes that name no pool.
    pub pool: Option<String>,
    /// `PREPARING`.
    pub preparing: usize,
    /// `RUNNING`.
    pub running: usize,
    /// `UPDATING`.
    pub updating: usize,
    /// `ERROR`.
    pub error: usize,
    /// `REPAIRING`: being repaired by the service, not serving.
    pub repairing: usize,
    /// Without a state, or in one this version does not know.
    pub unknown: usize,
}

impl PoolNodes {
    fn count(&mut self, state: Option<NodeState>) {
        let counter = match state {
            Some(NodeState::Preparing) => &mut self.preparing,
            Some(NodeState::Running) => &mut self.running,
            Some(NodeState::Updating) => &mut self.updating,
            Some(NodeState::Error) => &mut self.error,
            Some(NodeState::Repairing) => &mut self.repairing,
            Some(NodeState::Other) | None => &mut self.unknown,
        };
        *counter += 1;
    }

    /// Every node of the pool.
    pub fn total(&self) -> usize {
        self.preparing + self.running + self.updating + self.error + self.repairing + self.unknown
    }
}

/// What the cluster's Slurm said.
#[derive(Debug)]
pub enum SlurmHealth {
    /// Not asked: Slurm is asked only on a `RUNNING` cluster (on any other, its controller
    /// may not be there yet, or any more).
    NotAsked,
    /// Slurm answered.
    Read(SlurmReport),
    /// Slurm could not be read.
    Unreadable(SlurmReadError),
}

/// Slurm's answer, counted.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmReport {
    /// The slurmrestd REST version that answered, e.g. `v0.0.42`.
    pub version: String,
    /// The jobs slurmctld still remembers that hold or wait for nodes.
    pub jobs: SlurmJobCounts,
    /// Every node, by what it can do.
    pub nodes: SlurmNodeCounts,
    /// Since when nothing has run.
    pub idle: Idleness,
    /// The GPU-hours spent idle since then, as the idle report counts them
    /// ([`IdleReport::idle_gpu_hours`](crate::IdleReport::idle_gpu_hours)): 0 while in use,
    /// `None` when unknown.
    pub idle_gpu_hours: Option<f64>,
}

/// Active jobs: every one is either pending or running (suspended, completing and the like
/// count as running: they hold nodes), so the two add up to the active jobs of the idle
/// evidence.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SlurmJobCounts {
    /// Holding nodes.
    pub running: usize,
    /// Waiting for nodes.
    pub pending: usize,
}

/// Slurm's nodes, each counted once, in this order of precedence: down, drained, allocated,
/// idle, other.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SlurmNodeCounts {
    /// Idle (powered down ones included: they start when a job needs them).
    pub idle: usize,
    /// Doing work, or being started for it (the idle evidence's busy nodes).
    pub allocated: usize,
    /// Down, or not responding.
    pub down: usize,
    /// Drained or draining: taking no new jobs.
    pub drained: usize,
    /// In no state this version recognises.
    pub other: usize,
}

/// Since when a cluster has done nothing, from the evidence `destroy --idle-for` decides on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Idleness {
    /// No active job and no busy node; the newest node `last_busy` or finished job end.
    IdleSince(OffsetDateTime),
    /// A job holds nodes or a node is busy.
    InUse,
    /// Nothing holds a node: the only active jobs, this many, wait for nodes. Kept all the
    /// same (they start once nodes come), but not busy.
    OnlyPendingJobs(usize),
    /// Slurm's answer cannot say, and why (a node without `last_busy`, no node at all, …).
    Unknown(String),
}

/// Something about a cluster that needs attention.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// The cluster is in `ERROR`.
    ClusterError {
        /// `clusterStatus.detail`.
        detail: Option<String>,
        /// `clusterStatus.error`.
        error: Option<Status>,
    },
    /// The cluster reports no state, or one this version does not know: its health is unknown.
    UnknownState {
        /// The state as spelled, if any.
        reported: Option<String>,
    },
    /// A node the service reports in `ERROR`.
    NodeError {
        /// Its pool.
        pool: Option<String>,
        /// Its VM's name, else its VM's id.
        node: Option<String>,
        /// The node's `detail`.
        detail: Option<String>,
    },
    /// A node without a state, or in one this version does not know.
    UnknownNodeState {
        /// Its pool.
        pool: Option<String>,
        /// Its VM's name, else its VM's id.
        node: Option<String>,
        /// The state as spelled, if any.
        reported: Option<String>,
    },
    /// Slurm nodes down or not responding, by name.
    SlurmNodesDown(Vec<String>),
    /// Slurm nodes drained or draining, by name.
    SlurmNodesDrained(Vec<String>),
    /// Slurm nodes in no state this version recognises, by name, each with its states.
    SlurmNodesUnknown(Vec<String>),
    /// A pool's nodes that Slurm could not start (a shortage on day two: dynamic nodes are
    /// made when jobs pend, and the machines may not be there then).
    NodesNotStarting(NodesNotStarting),
    /// Slurm could not be read, and why.
    SlurmUnreadable(String),
    /// A recent event of an error type (`VM_PROLOG_ERROR`, `VM_SCAN_ERROR`, …).
    ErrorEvent(ClusterEvent),
}

/// A pool whose nodes fail to start, from Slurm's nodes and jobs: the nodes of the pool
/// (a node is the pool's when every partition it is in holds that pool, and only that one
/// pool is common to them) that are up, of those asked for (every node but the ones resting
/// powered down), the jobs pending on the partitions of its nodes, and the newest failure.
#[derive(Debug, Clone, PartialEq)]
pub struct NodesNotStarting {
    /// The pool; `None` for nodes whose partitions name no single pool.
    pub pool: Option<String>,
    /// Nodes up.
    pub started: usize,
    /// Nodes up, starting or failed to start.
    pub wanted: usize,
    /// Pending jobs that may run on the pool's nodes.
    pub pending_jobs: usize,
    /// The newest failure (by `reason_changed_at`; the last listed when none says when).
    pub last_failure: StartFailure,
}

/// One node that failed to start, with Slurm's reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartFailure {
    /// The node's name.
    pub node: String,
    /// Slurm's `reason`.
    pub reason: String,
    /// Slurm's `reason_changed_at`.
    pub at: Option<OffsetDateTime>,
}

impl Problem {
    /// Whether it is the cluster's state now. An error event is history: the service keeps
    /// the last 100 events, and one that a replaced node left would otherwise keep
    /// `status --detailed-exitcode` failing long after the node was healthy again.
    pub fn is_current(&self) -> bool {
        !matches!(self, Self::ErrorEvent(_))
    }
}

/// Whether `event` reports an error: its type ends with `_ERROR`, as every error type the
/// API documents does (`VM_PROLOG_ERROR`, `VM_EPILOG_ERROR`, `VM_CONTINUOUS_GPU_ERROR`,
/// `VM_SCAN_ERROR`), so that an error type added later counts too.
fn is_error_event(event: &ClusterEvent) -> bool {
    event
        .event_type
        .as_deref()
        .is_some_and(|kind| kind.ends_with("_ERROR"))
}

/// Reads the health of every cluster (Slurm asked for up to ten clusters at once), in the
/// order of `clusters`, keeping each cluster's `recent_events` newest events. Never fails: a
/// Slurm that cannot be read is part of the report.
pub async fn inspect_health(
    client: &ApiClient,
    clusters: &[LiveCluster],
    recent_events: usize,
    now: OffsetDateTime,
) -> Vec<ClusterHealth> {
    futures::stream::iter(clusters)
        .map(|live| inspect_one(client, live, recent_events, now))
        .buffered(SLURM_PARALLELISM)
        .collect()
        .await
}

async fn inspect_one(
    client: &ApiClient,
    live: &LiveCluster,
    recent_events: usize,
    now: OffsetDateTime,
) -> ClusterHealth {
    let slurm = match live.cluster.cluster_state() {
        Some(ClusterState::Running) => Some(read_evidence(client, &live.address).await),
        _ => None,
    };
    cluster_health(live, slurm, recent_events, now)
}

/// The health of `live`, given its Slurm's evidence (`None`: not asked).
fn cluster_health(
    live: &LiveCluster,
    slurm: Option<Result<SlurmEvidence, SlurmReadError>>,
    recent_events: usize,
    now: OffsetDateTime,
) -> ClusterHealth {
    let status = live.cluster.cluster_status.as_ref();
    let state = StateReading::of(live.cluster.state());
    let nodes = status
        .and_then(|s| s.nodes_status.as_deref())
        .unwrap_or_default();
    let events = newest_events(live.cluster.cluster_events.as_deref(), recent_events);
    let mut problems = state_problems(&state, status);
    problems.extend(nodes.iter().filter_map(node_problem));
    let slurm = match slurm {
        None => SlurmHealth::NotAsked,
        Some(Ok(evidence)) => {
            problems.extend(
                nodes_not_starting(&live.cluster, &evidence)
                    .into_iter()
                    .map(Problem::NodesNotStarting),
            );
            problems.extend(slurm_node_problems(&evidence.nodes));
            SlurmHealth::Read(slurm_report(live, &evidence, now))
        }
        Some(Err(error)) => {
            problems.push(Problem::SlurmUnreadable(error.to_string()));
            SlurmHealth::Unreadable(error)
        }
    };
    problems.extend(
        events
            .iter()
            .filter(|e| is_error_event(e))
            .cloned()
            .map(Problem::ErrorEvent),
    );
    ClusterHealth {
        address: live.address.clone(),
        state,
        detail: status.and_then(|s| s.detail.clone()),
        error: status.and_then(|s| s.error.clone()),
        pools: pool_nodes(live, nodes),
        events,
        slurm,
        problems,
        login: login_node(&live.cluster),
    }
}

fn state_problems(state: &StateReading, status: Option<&ClusterStatus>) -> Vec<Problem> {
    match state {
        StateReading::Known(ClusterState::Error) => vec![Problem::ClusterError {
            detail: status.and_then(|s| s.detail.clone()),
            error: status.and_then(|s| s.error.clone()),
        }],
        StateReading::Known(_) => Vec::new(),
        StateReading::Unrecognised(_) | StateReading::Missing => vec![Problem::UnknownState {
            reported: state.spelled().map(str::to_owned),
        }],
    }
}

fn node_problem(node: &NodeStatus) -> Option<Problem> {
    let pool = node.node_pool_id.clone();
    let name = node.display_name().map(str::to_owned);
    match node.state() {
        Some(NodeState::Error) => Some(Problem::NodeError {
            pool,
            node: name,
            detail: node.detail.clone(),
        }),
        Some(NodeState::Other) | None => Some(Problem::UnknownNodeState {
            pool,
            node: name,
            reported: node.node_state.clone(),
        }),
        Some(_) => None,
    }
}

/// The cluster's pools in its order, each with its nodes counted, then the pools that only
/// the nodes name, in the order they first appear.
fn pool_nodes(live: &LiveCluster, nodes: &[NodeStatus]) -> Vec<PoolNodes> {
    let mut pools: Vec<PoolNodes> = live
        .cluster
        .node_pools
        .iter()
        .flatten()
        .map(|pool| PoolNodes {
            pool: Some(pool.id.clone()),
            ..PoolNodes::default()
        })
        .collect();
    for node in nodes {
        let at = match pools.iter().position(|p| p.pool == node.node_pool_id) {
            Some(at) => at,
            None => {
                pools.push(PoolNodes {
                    pool: node.node_pool_id.clone(),
                    ..PoolNodes::default()
                });
                pools.len() - 1
            }
        };
        pools[at].count(node.state());
    }
    pools
}

/// The newest `keep` events, newest first; events without a readable time go last, in the
/// order the service listed them.
fn newest_events(events: Option<&[ClusterEvent]>, keep: usize) -> Vec<ClusterEvent> {
    let mut events: Vec<&ClusterEvent> = events.unwrap_or_default().iter().collect();
    let time = |event: &ClusterEvent| {
        let text = event.event_time.as_deref()?;
        OffsetDateTime::parse(text, &Rfc3339).ok()
    };
    // `sort_by_key` is stable: events of the same time keep the service's order.
    events.sort_by_key(|event| std::cmp::Reverse(time(event)));
    events.into_iter().take(keep).cloned().collect()
}

/// Slurm's counts, and since when the cluster has been idle: the verdict `destroy --idle-for`
/// would reach with a threshold of zero, which is "idle" exactly when nothing is active and
/// the time of the last work is known.
fn slurm_report(live: &LiveCluster, evidence: &SlurmEvidence, now: OffsetDateTime) -> SlurmReport {
    let verdict = idle_verdict(&live.address, &live.cluster, evidence, now, Duration::ZERO);
    let idle_gpu_hours = verdict.idle_gpu_hours();
    let active = evidence.jobs.iter().filter(|job| job.is_active());
    let pending = active.clone().filter(|job| job.is_pending()).count();
    let idle = match (verdict.verdict, verdict.last_busy) {
        (IdleVerdict::Idle, Some(since)) => Idleness::IdleSince(since),
        (IdleVerdict::Busy, _) if verdict.only_pending_jobs() => Idleness::OnlyPendingJobs(pending),
        (IdleVerdict::Busy, _) => Idleness::InUse,
        _ => Idleness::Unknown(verdict.reason),
    };
    SlurmReport {
        version: evidence.version.clone(),
        jobs: SlurmJobCounts {
            running: active.count() - pending,
            pending,
        },
        nodes: slurm_node_counts(&evidence.nodes),
        idle,
        idle_gpu_hours,
    }
}

/// What a Slurm node can do, each node in one class only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NodeClass {
    Down,
    Drained,
    Allocated,
    Idle,
    Other,
}

fn classify(node: &SlurmNode) -> NodeClass {
    if node.is_down() {
        NodeClass::Down
    } else if node.is_drained() {
        NodeClass::Drained
    } else if node.is_busy() {
        NodeClass::Allocated
    } else if node.is_idle() {
        NodeClass::Idle
    } else {
        NodeClass::Other
    }
}

fn slurm_node_counts(nodes: &[SlurmNode]) -> SlurmNodeCounts {
    let mut counts = SlurmNodeCounts::default();
    for node in nodes {
        let counter = match classify(node) {
            NodeClass::Down => &mut counts.down,
            NodeClass::Drained => &mut counts.drained,
            NodeClass::Allocated => &mut counts.allocated,
            NodeClass::Idle => &mut counts.idle,
            NodeClass::Other => &mut counts.other,
        };
        *counter += 1;
    }
    counts
}

/// The down (but not failed to start: [`nodes_not_starting`] tells those), drained and
/// unrecognised nodes, one problem for each of these classes that has any.
fn slurm_node_problems(nodes: &[SlurmNode]) -> Vec<Problem> {
    let in_class = |class: NodeClass| nodes.iter().filter(move |n| classify(n) == class);
    let down: Vec<String> = in_class(NodeClass::Down)
        .filter(|node| !node.failed_to_start())
        .map(node_name)
        .collect();
    let name = node_name;
    let drained: Vec<String> = in_class(NodeClass::Drained).map(name).collect();
    let unknown: Vec<String> = in_class(NodeClass::Other)
        .map(|node| format!("{} [{}]", name(node), node.state.join(",")))
        .collect();
    let mut problems = Vec::new();
    if !down.is_empty() {
        problems.push(Problem::SlurmNodesDown(down));
    }
    if !drained.is_empty() {
        problems.push(Problem::SlurmNodesDrained(drained));
    }
    if !unknown.is_empty() {
        problems.push(Problem::SlurmNodesUnknown(unknown));
    }
    problems
}

fn node_name(node: &SlurmNode) -> String {
    node.name.clone().unwrap_or_else(|| "?".to_owned())
}

/// The pools of `cluster` that have nodes Slurm failed to start, in the order their first
/// node is listed.
fn nodes_not_starting(cluster: &Cluster, evidence: &SlurmEvidence) -> Vec<NodesNotStarting> {
    let partitions = cluster
        .slurm_spec()
        .and_then(|slurm| slurm.partitions.as_deref())
        .unwrap_or_default();
    let mut by_pool: Vec<(Option<String>, Vec<&SlurmNode>)> = Vec::new();
    for node in &evidence.nodes {
        let pool = pool_of(node, partitions);
        match by_pool.iter_mut().find(|(of, _)| *of == pool) {
            Some((_, nodes)) => nodes.push(node),
            None => by_pool.push((pool, vec![node])),
        }
    }
    by_pool
        .into_iter()
        .filter_map(|(pool, nodes)| {
            let last_failure = nodes
                .iter()
                .filter(|node| node.failed_to_start())
                .max_by_key(|node| node.reason_changed_at)?;
            let on_partitions = |job: &&SlurmJob| {
                job.partition.as_deref().is_some_and(|candidates| {
                    candidates.split(',').any(|p| {
                        nodes
                            .iter()
                            .any(|node| node.partitions.iter().any(|n| n == p))
                    })
                })
            };
            Some(NodesNotStarting {
                pool,
                started: nodes.iter().filter(|node| node.is_started()).count(),
                wanted: nodes.iter().filter(|node| !node.is_resting()).count(),
                pending_jobs: evidence
                    .jobs
                    .iter()
                    .filter(|job| job.is_pending())
                    .filter(on_partitions)
                    .count(),
                last_failure: StartFailure {
                    node: node_name(last_failure),
                    reason: last_failure.reason.clone().unwrap_or_default(),
                    at: last_failure
                        .reason_changed_at
                        .and_then(|at| OffsetDateTime::from_unix_timestamp(at).ok()),
                },
            })
        })
        .collect()
}

/// The one pool common to every partition `node` is in, by the cluster's partitions.
fn pool_of(node: &SlurmNode, partitions: &[Partition]) -> Option<String> {
    let pools_of = |name: &String| {
        partitions
            .iter()
            .find(|partition| &partition.id == name)
            .and_then(|partition| partition.node_pool_ids.clone())
            .unwrap_or_default()
    };
    let mut listed = node.partitions.iter();
    let mut common = pools_of(listed.next()?);
    for name in listed {
        let pools = pools_of(name);
        common.retain(|pool| pools.contains(pool));
    }
    match common.as_slice() {
        [pool] => Some(pool.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use time::macros::datetime;

    use super::*;
    use crate::run::slurm::{parse_jobs, parse_nodes};

    const NOW: OffsetDateTime = datetime!(2026-11-10 12:00 UTC);

    fn live(mut cluster: Value) -> LiveCluster {
        cluster["name"] =
            json!("projects/123456789012/locations/us-central1/modelDevelopmentClusters/train01");
        let location = clusterform_model::Location::new("proj-one", "us-central1").unwrap();
        LiveCluster::read_at(&location, serde_json::from_value(cluster).unwrap()).unwrap()
    }

    fn running(nodes: Value) -> LiveCluster {
        let mut cluster = json!({
            "nodePools": [{"id": "login"}, {"id": "cpu"}],
            "clusterStatus": {"state": "RUNNING"},
        });
        cluster["clusterStatus"]["nodesStatus"] = nodes;
        live(cluster)
    }

    fn ago(minutes: i64) -> Value {
        let at = (NOW - time::Duration::minutes(minutes)).unix_timestamp();
        json!({"set": true, "infinite": false, "number": at})
    }

    fn evidence(jobs: Value, nodes: Value) -> SlurmEvidence {
        SlurmEvidence {
            version: "v0.0.42".to_owned(),
            jobs: parse_jobs(&listing("jobs", jobs)).unwrap(),
            nodes: parse_nodes(&listing("nodes", nodes)).unwrap(),
        }
    }

    /// slurmrestd's `{"jobs": [...]}` or `{"nodes": [...]}`.
    fn listing(field: &str, items: Value) -> Value {
        Value::Object([(field.to_owned(), items)].into_iter().collect())
    }

    fn idle_nodes() -> Value {
        json!([
            {"name": "cpu-0", "state": ["IDLE"], "last_busy": ago(90)},
            {"name": "cpu-1", "state": ["IDLE", "POWERED_DOWN"], "last_busy": ago(300)},
        ])
    }

    fn health(live: &LiveCluster, slurm: Option<SlurmEvidence>) -> ClusterHealth {
        cluster_health(live, slurm.map(Ok), 5, NOW)
    }

    #[test]
    fn a_healthy_idle_cluster_needs_nothing_and_says_since_when_it_is_idle() {
        let cluster = running(json!([
            {"nodePoolId": "login", "nodeState": "RUNNING", "instanceName": "train01-login-0"},
        ]));
        let report = health(&cluster, Some(evidence(json!([]), idle_nodes())));
        assert!(report.problems.is_empty(), "{:?}", report.problems);
        assert!(!report.needs_attention());
        assert_eq!(report.state, StateReading::Known(ClusterState::Running));
        let counts: Vec<(Option<&str>, usize, usize)> = report
            .pools
            .iter()
            .map(|p| (p.pool.as_deref(), p.running, p.total()))
            .collect();
        assert_eq!(counts, [(Some("login"), 1, 1), (Some("cpu"), 0, 0)]);
        let SlurmHealth::Read(slurm) = &report.slurm else {
            panic!("{:?}", report.slurm);
        };
        assert_eq!(slurm.nodes.idle, 2);
        assert_eq!(
            slurm.idle,
            Idleness::IdleSince(NOW - time::Duration::minutes(90))
        );
    }

    #[test]
    fn jobs_that_only_wait_for_nodes_are_counted_apart_from_a_cluster_in_use() {
        let pending = json!([
            {"job_id": 1, "job_state": ["PENDING"]},
            {"job_id": 2, "job_state": ["PENDING"]},
        ]);
        let waiting = health(&running(json!([])), Some(evidence(pending, idle_nodes())));
        let SlurmHealth::Read(slurm) = &waiting.slurm else {
            panic!("{:?}", waiting.slurm);
        };
        assert_eq!(slurm.idle, Idleness::OnlyPendingJobs(2));
        let one_running = json!([
            {"job_id": 1, "job_state": ["PENDING"]},
            {"job_id": 2, "job_state": ["RUNNING"]},
        ]);
        let busy = health(
            &running(json!([])),
            Some(evidence(one_running, idle_nodes())),
        );
        let SlurmHealth::Read(slurm) = &busy.slurm else {
            panic!("{:?}", busy.slurm);
        };
        assert_eq!(slurm.idle, Idleness::InUse);
    }

    /// `status` and `list` add up the idle GPU-hours as the idle report counts them.
    #[test]
    fn an_idle_gpu_cluster_has_spent_its_gpus_times_the_idle_hours() {
        let cluster = live(json!({
            "nodePools": [{"id": "gpu", "machineSpec": {"machineType": "a3-ultragpu-8g"}}],
            "clusterStatus": {"state": "RUNNING", "nodesStatus": [
                {"nodePoolId": "gpu", "nodeState": "RUNNING"},
                {"nodePoolId": "gpu", "nodeState": "RUNNING"},
            ]},
        }));
        let report = health(&cluster, Some(evidence(json!([]), idle_nodes())));
        let SlurmHealth::Read(slurm) = &report.slurm else {
            panic!("{:?}", report.slurm);
        };
        assert_eq!(slurm.idle_gpu_hours, Some(16.0 * 1.5));
    }

    #[test]
    fn fleet_totals_add_up_running_gpus_by_type_and_idle_gpu_hours_and_count_the_unknown() {
        let gpu = |nodes: Value| {
            live(json!({
                "nodePools": [{"id": "gpu", "machineSpec": {"machineType": "a4-highgpu-8g"}}],
                "clusterStatus": {"state": "RUNNING", "nodesStatus": nodes},
            }))
        };
        let node = json!({"nodePoolId": "gpu", "nodeState": "RUNNING"});
        let clusters = [
            gpu(json!([node.clone(), node.clone()])),
            gpu(json!([node])),
            gpu(Value::Null),
            running(json!([])),
        ];
        let idle = || Some(evidence(json!([]), idle_nodes()));
        let health: Vec<ClusterHealth> = vec![
            health(&clusters[0], idle()),
            health(&clusters[1], None),
            health(&clusters[2], idle()),
            health(&clusters[3], None),
        ];
        let totals = FleetTotals::of(&clusters, &health);
        assert_eq!(
            totals,
            FleetTotals {
                clusters: 4,
                gpus_running: BTreeMap::from([("NVIDIA_B200".to_owned(), 24)]),
                gpus_unknown: 1,
                idle_gpu_hours: 16.0 * 1.5,
                idle_gpu_hours_unknown: 2,
            }
        );
    }

    #[test]
    fn a_node_under_repair_is_counted_as_repairing_not_as_an_unknown_state() {
        let cluster = running(json!([
            {"nodePoolId": "cpu", "nodeState": "RUNNING"},
            {"nodePoolId": "cpu", "nodeState": "REPAIRING", "instanceName": "cpu-1"},
        ]));
        let report = health(&cluster, None);
        let cpu = report
            .pools
            .iter()
            .find(|pool| pool.pool.as_deref() == Some("cpu"))
            .unwrap();
        assert_eq!((cpu.running, cpu.repairing, cpu.unknown), (1, 1, 0));
        assert!(
            !report
                .problems
                .iter()
                .any(|p| matches!(p, Problem::UnknownNodeState { .. })),
            "{:?}",
            report.problems
        );
    }

    #[test]
    fn an_error_state_and_error_nodes_are_problems_with_their_details() {
        let cluster = live(json!({
            "nodePools": [{"id": "cpu"}],
            "clusterStatus": {
                "state": "ERROR",
                "detail": "2 nodes failed",
                "error": {"code": 13, "message": "boot failed"},
                "nodesStatus": [
                    {"nodePoolId": "cpu", "nodeState": "ERROR", "instanceName": "cpu-0", "detail": "disk"},
                    {"nodePoolId": "cpu", "nodeState": "ERROR", "instanceId": "4242"},
                    {"nodePoolId": "cpu", "nodeState": "PREPARING", "instanceName": "cpu-2"},
                ],
            },
        }));
        let report = health(&cluster, None);
        assert!(report.needs_attention());
        assert!(matches!(report.slurm, SlurmHealth::NotAsked));
        assert_eq!(report.pools[0].error, 2);
        assert_eq!(report.pools[0].preparing, 1);
        assert_eq!(
            report.problems,
            [
                Problem::ClusterError {
                    detail: Some("2 nodes failed".to_owned()),
                    error: Some(Status {
                        code: 13,
                        message: "boot failed".to_owned(),
                        ..Status::default()
                    }),
                },
                Problem::NodeError {
                    pool: Some("cpu".to_owned()),
                    node: Some("cpu-0".to_owned()),
                    detail: Some("disk".to_owned()),
                },
                Problem::NodeError {
                    pool: Some("cpu".to_owned()),
                    node: Some("4242".to_owned()),
                    detail: None,
                },
            ]
        );
    }

    #[test]
    fn slurm_nodes_are_counted_once_each_and_the_bad_ones_named() {
        let nodes = json!([
            {"name": "a-0", "state": ["DOWN", "DRAIN"], "last_busy": ago(10)},
            {"name": "a-1", "state": ["IDLE", "DRAIN"], "last_busy": ago(10)},
            {"name": "a-2", "state": ["MIXED", "DRAIN"], "last_busy": ago(10)},
            {"name": "a-3", "state": ["ALLOCATED"], "last_busy": ago(10)},
            {"name": "a-4", "state": ["IDLE", "NOT_RESPONDING"], "last_busy": ago(10)},
            {"name": "a-5", "state": ["FUTURE"], "last_busy": ago(10)},
            {"name": "a-6", "state": ["IDLE"], "last_busy": ago(10)},
        ]);
        let jobs = json!([
            {"job_id": 1, "job_state": ["RUNNING"]},
            {"job_id": 2, "job_state": ["PENDING"]},
            {"job_id": 3, "job_state": ["SUSPENDED"]},
            {"job_id": 4, "job_state": ["COMPLETED"], "end_time": ago(1)},
        ]);
        let report = health(&running(json!([])), Some(evidence(jobs, nodes)));
        let SlurmHealth::Read(slurm) = &report.slurm else {
            panic!("{:?}", report.slurm);
        };
        assert_eq!(
            slurm.nodes,
            SlurmNodeCounts {
                idle: 1,
                allocated: 1,
                down: 2,
                drained: 2,
                other: 1,
            }
        );
        assert_eq!(
            slurm.jobs,
            SlurmJobCounts {
                running: 2,
                pending: 1
            }
        );
        assert_eq!(slurm.idle, Idleness::InUse);
        let owned = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect();
        assert_eq!(
            report.problems,
            [
                Problem::SlurmNodesDown(owned(&["a-0", "a-4"])),
                Problem::SlurmNodesDrained(owned(&["a-1", "a-2"])),
                Problem::SlurmNodesUnknown(owned(&["a-5 [FUTURE]"])),
            ]
        );
        assert!(report.needs_attention());
    }

    #[test]
    fn nodes_that_fail_to_start_are_told_per_pool_with_the_jobs_waiting_for_them() {
        let mut cluster = json!({
            "nodePools": [{"id": "login"}, {"id": "cpu"}, {"id": "gpu"}],
            "clusterStatus": {"state": "RUNNING"},
            "orchestratorSpec": {"slurmSpec": {"partitions": [
                {"id": "gpu", "nodePoolIds": ["gpu"]},
                {"id": "all", "nodePoolIds": ["cpu", "gpu"]},
                {"id": "cpu", "nodePoolIds": ["cpu"]},
            ]}},
        });
        cluster["clusterStatus"]["nodesStatus"] = json!([]);
        let stockout = "The zone 'projects/p/zones/us-central1-a' does not have enough resources available to fulfill the request. '(resource type:compute)'. (state:STOCKOUT)";
        let failed = |name: &str, minutes: i64| {
            json!({"name": name, "state": ["DOWN", "CLOUD", "POWERED_DOWN"],
                   "partitions": ["gpu", "all"], "reason": stockout,
                   "reason_changed_at": ago(minutes), "last_busy": ago(600)})
        };
        let nodes = json!([
            failed("c-gpu-0", 10),
            failed("c-gpu-1", 5),
            {"name": "c-gpu-2", "state": ["IDLE", "CLOUD", "POWERED_DOWN"],
             "partitions": ["gpu", "all"], "last_busy": ago(600)},
            {"name": "c-cpu-0", "state": ["DOWN"], "partitions": ["cpu", "all"],
             "reason": "Not responding", "last_busy": ago(600)},
        ]);
        let jobs = json!([
            {"job_id": 1, "job_state": ["PENDING"], "partition": "gpu"},
            {"job_id": 2, "job_state": ["PENDING"], "partition": "cpu,all"},
            {"job_id": 3, "job_state": ["PENDING"], "partition": "cpu"},
            {"job_id": 4, "job_state": ["RUNNING"], "partition": "gpu"},
        ]);
        let report = health(&live(cluster), Some(evidence(jobs, nodes)));
        assert!(report.needs_attention());
        assert_eq!(
            report.problems,
            [
                Problem::NodesNotStarting(NodesNotStarting {
                    pool: Some("gpu".to_owned()),
                    started: 0,
                    wanted: 2,
                    pending_jobs: 2,
                    last_failure: StartFailure {
                        node: "c-gpu-1".to_owned(),
                        reason: stockout.to_owned(),
                        at: Some(NOW - time::Duration::minutes(5)),
                    },
                }),
                Problem::SlurmNodesDown(vec!["c-cpu-0".to_owned()]),
            ],
            "a node that ran and went down is down, not a start failure"
        );
    }

    #[test]
    fn an_unreadable_slurm_needs_attention_with_its_reason() {
        let error = SlurmReadError::Status {
            status: 500,
            path: "/slurm/v0.0.42/jobs".to_owned(),
        };
        let report = cluster_health(&running(json!([])), Some(Err(error)), 5, NOW);
        assert_eq!(
            report.problems,
            [Problem::SlurmUnreadable(
                "slurmrestd answered HTTP 500 for /slurm/v0.0.42/jobs".to_owned()
            )]
        );
        assert!(matches!(report.slurm, SlurmHealth::Unreadable(_)));
        assert!(report.needs_attention());
    }

    #[test]
    fn what_is_unknown_needs_attention() {
        for state in [json!({}), json!({"state": "HIBERNATING"})] {
            let report = health(&live(json!({ "clusterStatus": state })), None);
            assert!(report.needs_attention(), "{state}");
            assert!(
                matches!(report.problems[..], [Problem::UnknownState { .. }]),
                "{:?}",
                report.problems
            );
        }
        let nodes = json!([
            {"nodePoolId": "cpu", "instanceName": "cpu-0"},
            {"nodePoolId": "gpu", "nodeState": "REBOOTING", "instanceName": "gpu-0"},
        ]);
        let report = health(&running(nodes), Some(evidence(json!([]), idle_nodes())));
        assert_eq!(
            report.pools.len(),
            3,
            "a pool only the nodes name is listed"
        );
        assert_eq!(report.pools[2].pool.as_deref(), Some("gpu"));
        assert_eq!(report.pools[2].unknown, 1);
        assert_eq!(
            report.problems,
            [
                Problem::UnknownNodeState {
                    pool: Some("cpu".to_owned()),
                    node: Some("cpu-0".to_owned()),
                    reported: None,
                },
                Problem::UnknownNodeState {
                    pool: Some("gpu".to_owned()),
                    node: Some("gpu-0".to_owned()),
                    reported: Some("REBOOTING".to_owned()),
                },
            ]
        );
        let unsure = health(
            &running(json!([])),
            Some(evidence(
                json!([]),
                json!([{"name": "cpu-0", "state": ["IDLE"]}]),
            )),
        );
        let SlurmHealth::Read(slurm) = &unsure.slurm else {
            panic!("{:?}", unsure.slurm);
        };
        assert_eq!(
            slurm.idle,
            Idleness::Unknown("node cpu-0 reports no last_busy".to_owned())
        );
    }

    #[test]
    fn the_newest_events_come_first_and_error_events_are_history() {
        let cluster = live(json!({
            "clusterStatus": {"state": "PROVISIONING"},
            "clusterEvents": [
                {"eventType": "VM_REBOOT", "eventTime": "2026-11-10T09:00:00Z"},
                {"eventType": "VM_PROLOG_ERROR", "eventTime": "2026-11-10T11:00:00.5Z",
                 "eventMessage": "prolog exited 1"},
                {"eventType": "VM_DELETION"},
                {"eventType": "VM_SCAN_ERROR", "eventTime": "2026-11-10T10:00:00Z"},
                {"eventType": "VM_SLURM_DRAIN", "eventTime": "2026-11-10T08:00:00Z"},
            ],
        }));
        let report = cluster_health(&cluster, None, 3, NOW);
        let kinds: Vec<&str> = report
            .events
            .iter()
            .filter_map(|e| e.event_type.as_deref())
            .collect();
        assert_eq!(kinds, ["VM_PROLOG_ERROR", "VM_SCAN_ERROR", "VM_REBOOT"]);
        assert_eq!(report.problems.len(), 2);
        assert!(report.problems.iter().all(|p| !p.is_current()));
        assert!(
            !report.needs_attention(),
            "a PROVISIONING cluster with past errors"
        );
        assert!(cluster_health(&cluster, None, 0, NOW).events.is_empty());
    }
}
