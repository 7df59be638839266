//! What `status` reports on, and the words for what needs attention, shared by its text
//! ([`super::status_text`]) and its JSON ([`super::status_json`]).

use clusterform_executor::{ClusterHealth, Mark, NodesNotStarting, Problem, SlurmHealth};
use clusterform_model::{ClusterEvent, ClusterName, UnreadLocation};

use super::names::ClusterNames;

/// One cluster of the configuration and what was found of it.
#[derive(Debug)]
pub struct StatusEntry {
    /// Where it lives.
    pub address: ClusterName,
    /// Whether the configuration declares it, and what the next apply does if not.
    pub declaration: Declaration,
    /// What the API and Slurm said.
    pub found: Found,
}

/// Whether the configuration declares a cluster; one it does not declare is reported only
/// when the stack owns it through its label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Declaration {
    /// A `cluster` block declares it.
    Declared,
    /// No `cluster` block declares it and a `removed` block names it: the next apply releases
    /// it (drops the stack's label; it keeps running).
    Released,
    /// No block names it: the next apply destroys it.
    Undeclared,
}

/// Whether a cluster exists, and its health when it does.
#[derive(Debug)]
pub enum Found {
    /// Declared, and absent live, and never had by clusterform as far as the applied record
    /// says: the next apply creates it. Nothing to attend to.
    NotCreated,
    /// Declared and absent live, although the applied record says clusterform had it: it is
    /// not created, and needs attention.
    Gone(Recorded),
    /// Live. (Boxed: a report is large beside the empty `NotCreated`.)
    Live(Box<ClusterHealth>),
}

/// What the applied record says of a declared cluster that is not live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// Its mark: deleted for a replacement or for being idle, or its create failed.
    Marked(Mark),
    /// Its entry: clusterform last applied it then (RFC 3339), and it is gone since.
    Applied {
        /// When.
        applied_at: String,
    },
}

impl StatusEntry {
    /// Whether something about the cluster's present state needs attention.
    /// A cluster the next apply destroys because no block names it any more needs attention
    /// too: it may be a block deleted by mistake.
    pub fn needs_attention(&self) -> bool {
        if self.declaration == Declaration::Undeclared {
            return true;
        }
        match &self.found {
            Found::NotCreated => false,
            Found::Gone(_) => true,
            Found::Live(health) => health.needs_attention(),
        }
    }
}

/// Why a declared cluster that clusterform had is not there, without the cluster's name.
pub fn gone_text(recorded: &Recorded) -> String {
    match recorded {
        // The error is the run's, which said it in full; `status --json` keeps it.
        Recorded::Marked(Mark::DeletedForReplacement { at, .. }) => format!(
            "cluster is missing: a replacement deleted it, then could not create it again \
             (at {at}); `clusterform apply` creates it"
        ),
        Recorded::Marked(Mark::DeletedIdle { at, idle_for, .. }) => format!(
            "cluster is not created: it was deleted for being idle at {at} (destroy --idle-for \
             {idle_for}); `clusterform apply` creates it again, or remove its block"
        ),
        Recorded::Marked(Mark::CreateFailed { at, error }) => format!(
            "cluster is missing: clusterform's create of it failed ({at}: {error}) and it no \
             longer exists; `clusterform apply` creates it"
        ),
        Recorded::Applied { applied_at } => format!(
            "cluster is missing: clusterform applied it at {applied_at} and it no longer exists \
             (deleted outside clusterform?); `clusterform apply` creates it again"
        ),
    }
}

/// What the next apply does to a cluster no `cluster` block declares, `None` for a declared one.
pub fn undeclared_text(declaration: Declaration) -> Option<&'static str> {
    match declaration {
        Declaration::Declared => None,
        Declaration::Released => Some(
            "released: a removed block names it, so the next apply drops this stack's label \
             (the cluster keeps running)",
        ),
        Declaration::Undeclared => Some(
            "undeclared: the next apply destroys it (it carries this stack's label, but no \
             cluster block declares it; a removed block releases it instead)",
        ),
    }
}

/// Whether anything of `entries` needs attention: `status --detailed-exitcode`'s exit 2.
pub fn needs_attention(entries: &[StatusEntry]) -> bool {
    entries.iter().any(StatusEntry::needs_attention)
}

/// The locations a view shows as rows and under what needs attention: those whose List kept
/// failing, and those of the stack (a location refused for good where nothing of the stack is
/// known is only the run's note).
pub fn unread_rows(unread: &[UnreadLocation]) -> impl Iterator<Item = &UnreadLocation> {
    unread
        .iter()
        .filter(|location| location.leaves_a_view_incomplete())
}

/// Why a location's clusters are not shown, and which are known to be there.
pub fn unread_text(unread: &UnreadLocation) -> String {
    let how = unread.kind.what_the_list_did();
    let held = if unread.held.is_empty() {
        "any cluster there is not shown".to_owned()
    } else {
        let ids: Vec<String> = unread.held.iter().map(ToString::to_string).collect();
        format!("{} there not seen", ids.join(", "))
    };
    format!("the List {how} ({}): {held}", unread.reason)
}

/// The naming rule of a report on `entries`.
pub(crate) fn names(entries: &[StatusEntry]) -> ClusterNames {
    ClusterNames::for_clusters(entries.iter().map(|entry| &entry.address))
}

/// Names listed in one line before the rest is only counted: a pool of a hundred drained nodes
/// must not make a line of a hundred names.
const NAMES_LISTED: usize = 10;

/// A problem in words, without the cluster's name.
pub fn problem_text(problem: &Problem) -> String {
    match problem {
        Problem::ClusterError { detail, error } => {
            let mut text = format!("cluster is in ERROR: {}", or_no_detail(detail.as_deref()));
            // The service often repeats the detail as the error's message.
            if let Some(error) = error
                .as_ref()
                .filter(|e| Some(&e.message) != detail.as_ref())
            {
                text.push_str(&format!(" (error {error})"));
            }
            text
        }
        Problem::UnknownState { reported } => match reported {
            Some(state) => format!(
                "cluster is {state}, a state clusterform does not know: its health is unknown"
            ),
            None => "cluster reports no state: its health is unknown".to_owned(),
        },
        Problem::NodeError { pool, node, detail } => format!(
            "{} is in ERROR: {}",
            node_text(pool.as_deref(), node.as_deref()),
            or_no_detail(detail.as_deref())
        ),
        Problem::UnknownNodeState {
            pool,
            node,
            reported,
        } => {
            let node = node_text(pool.as_deref(), node.as_deref());
            match reported {
                Some(state) => format!(
                    "{node} is {state}, a state clusterform does not know: its health is unknown"
                ),
                None => format!("{node} reports no state: its health is unknown"),
            }
        }
        Problem::SlurmNodesDown(nodes) => slurm_nodes(nodes, "down or not responding"),
        Problem::SlurmNodesDrained(nodes) => slurm_nodes(nodes, "drained or draining"),
        Problem::SlurmNodesUnknown(nodes) => {
            slurm_nodes(nodes, "in a state clusterform does not know")
        }
        Problem::NodesNotStarting(shortage) => nodes_not_starting_text(shortage),
        Problem::SlurmUnreadable(reason) => format!("Slurm could not be read: {reason}"),
        Problem::ErrorEvent(event) => format!("recent event {}", event_text(event)),
    }
}

/// `list`'s health cell: `ok` when Slurm was read and nothing needs attention, `-` when the
/// cluster is not running (Slurm is not asked, and its state says the rest), else the short
/// form of each problem of now, joined by `; ` (`status` words them in full).
pub fn health_cell(health: &ClusterHealth) -> String {
    let current: Vec<String> = health
        .problems
        .iter()
        .filter(|problem| problem.is_current())
        .map(problem_brief)
        .collect();
    if !current.is_empty() {
        return counted(current).join("; ");
    }
    match health.slurm {
        SlurmHealth::Read(_) => "ok".to_owned(),
        SlurmHealth::NotAsked | SlurmHealth::Unreadable(_) => "-".to_owned(),
    }
}

/// Equal briefs once, `×N` when there are several (`node error in pool cpu ×3`), in the order
/// of their first.
fn counted(briefs: Vec<String>) -> Vec<String> {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for brief in briefs {
        match seen.iter_mut().find(|(known, _)| *known == brief) {
            Some((_, count)) => *count += 1,
            None => seen.push((brief, 1)),
        }
    }
    seen.into_iter()
        .map(|(brief, count)| match count {
            1 => brief,
            _ => format!("{brief} ×{count}"),
        })
        .collect()
}

/// A problem in a few words, for a table cell.
fn problem_brief(problem: &Problem) -> String {
    let in_pool = |pool: &Option<String>| {
        pool.as_deref()
            .map_or_else(String::new, |pool| format!(" in pool {pool}"))
    };
    let counted_nodes = |nodes: &[String], what: &str| {
        let count = nodes.len();
        let noun = if count == 1 { "node" } else { "nodes" };
        format!("{count} Slurm {noun} {what}")
    };
    match problem {
        Problem::ClusterError { .. } => "cluster in ERROR".to_owned(),
        Problem::UnknownState { .. } => "state unknown".to_owned(),
        Problem::NodeError { pool, .. } => format!("node error{}", in_pool(pool)),
        Problem::UnknownNodeState { pool, .. } => format!("node state unknown{}", in_pool(pool)),
        Problem::SlurmNodesDown(nodes) => counted_nodes(nodes, "down"),
        Problem::SlurmNodesDrained(nodes) => counted_nodes(nodes, "drained"),
        Problem::SlurmNodesUnknown(nodes) => counted_nodes(nodes, "in unknown states"),
        Problem::NodesNotStarting(shortage) => nodes_not_starting_brief(shortage),
        Problem::SlurmUnreadable(_) => "Slurm unreadable".to_owned(),
        Problem::ErrorEvent(event) => format!(
            "recent {}",
            event.event_type.as_deref().unwrap_or("error event")
        ),
    }
}

/// `gpu: 0/4 started, 3 pending, STOCKOUT in us-central1-a`.
fn nodes_not_starting_brief(shortage: &NodesNotStarting) -> String {
    let pool = shortage.pool.as_deref().unwrap_or("(no one pool)");
    format!(
        "{pool}: {}/{} started, {} pending, {}",
        shortage.started,
        shortage.wanted,
        shortage.pending_jobs,
        start_failure_reason(&shortage.last_failure.reason)
    )
}

/// `pool gpu: 0 of 4 nodes started; 3 jobs pending; STOCKOUT in us-central1-a`.
fn nodes_not_starting_text(shortage: &NodesNotStarting) -> String {
    let pool = shortage.pool.as_deref().map_or_else(
        || "nodes of no one pool".to_owned(),
        |id| format!("pool {id}"),
    );
    let NodesNotStarting {
        started,
        wanted,
        pending_jobs,
        last_failure,
        ..
    } = shortage;
    let nodes = if *wanted == 1 { "node" } else { "nodes" };
    let jobs = if *pending_jobs == 1 { "job" } else { "jobs" };
    format!(
        "{pool}: {started} of {wanted} {nodes} started; {pending_jobs} {jobs} pending; {}",
        start_failure_reason(&last_failure.reason)
    )
}

/// Slurm's reason for a node that did not start (the node is named in `status --json`),
/// shortened when it is Compute Engine's stockout text naming its zone (`STOCKOUT in
/// us-central1-a`, as the model's `shortage_brief` words it); `status --json` keeps it whole.
fn start_failure_reason(reason: &str) -> String {
    let brief = clusterform_model::shortage_brief(reason);
    if brief.starts_with("STOCKOUT in ") {
        return brief;
    }
    match brief.strip_prefix("ZONE_RESOURCE_POOL_EXHAUSTED in ") {
        Some(zone) => format!("STOCKOUT in {zone}"),
        None => reason.to_owned(),
    }
}

/// `VM_PROLOG_ERROR at 2026-11-30T10:00:00Z: prolog exited 1`.
pub fn event_text(event: &ClusterEvent) -> String {
    let mut text = event.event_type.clone().unwrap_or_else(|| "?".to_owned());
    if let Some(time) = &event.event_time {
        text.push_str(&format!(" at {time}"));
    }
    if let Some(message) = &event.event_message {
        text.push_str(&format!(": {message}"));
    }
    text
}

fn or_no_detail(detail: Option<&str>) -> &str {
    detail
        .filter(|d| !d.is_empty())
        .unwrap_or("no detail given")
}

/// `node train01-cpu-0 of pool cpu`.
fn node_text(pool: Option<&str>, node: Option<&str>) -> String {
    let node = node.map_or_else(|| "a node".to_owned(), |name| format!("node {name}"));
    match pool {
        Some(pool) => format!("{node} of pool {pool}"),
        None => node,
    }
}

/// `2 Slurm nodes down or not responding: a3-0, a3-1`, the names after the tenth counted.
fn slurm_nodes(nodes: &[String], what: &str) -> String {
    let count = nodes.len();
    let noun = if count == 1 { "node" } else { "nodes" };
    let mut listed = nodes[..count.min(NAMES_LISTED)].join(", ");
    if count > NAMES_LISTED {
        listed.push_str(&format!(" and {} more", count - NAMES_LISTED));
    }
    format!("{count} Slurm {noun} {what}: {listed}")
}

#[cfg(test)]
mod tests {
    use clusterform_model::Status;

    use super::*;

    fn entry(found: Found) -> StatusEntry {
        StatusEntry {
            address: ClusterName::new("acme-ml", "us-central1", "train01").unwrap(),
            declaration: Declaration::Declared,
            found,
        }
    }

    #[test]
    fn a_declared_cluster_clusterform_had_and_lost_needs_attention() {
        assert!(!entry(Found::NotCreated).needs_attention());
        let missing = Recorded::Marked(Mark::DeletedForReplacement {
            at: "2026-11-10T12:00:00Z".to_owned(),
            error: "no capacity".to_owned(),
        });
        assert!(entry(Found::Gone(missing.clone())).needs_attention());
        assert_eq!(
            gone_text(&missing),
            "cluster is missing: a replacement deleted it, then could not create it again \
             (at 2026-11-10T12:00:00Z); `clusterform apply` creates it"
        );
        let idle = Recorded::Marked(Mark::DeletedIdle {
            at: "2026-11-10T12:00:00Z".to_owned(),
            idle_for: "2h".to_owned(),
            evidence: "idle".to_owned(),
        });
        assert!(
            gone_text(&idle)
                .contains("deleted for being idle at 2026-11-10T12:00:00Z (destroy --idle-for 2h)")
        );
        let applied = Recorded::Applied {
            applied_at: "2026-11-10T12:00:00Z".to_owned(),
        };
        assert!(entry(Found::Gone(applied)).needs_attention());
        let json = super::super::status_json::render_json(&[entry(Found::Gone(missing))], &[]);
        assert_eq!(json["needs_attention"], true);
        assert_eq!(json["clusters"][0]["created"], false);
        assert_eq!(
            json["clusters"][0]["recorded"]["kind"],
            "deleted_for_replacement"
        );
    }

    #[test]
    fn problems_read_with_their_details() {
        let error = Status {
            code: 13,
            message: "boot disk failed".to_owned(),
            ..Status::default()
        };
        let cases = [
            (
                Problem::ClusterError {
                    detail: Some("boot disk failed".to_owned()),
                    error: Some(error.clone()),
                },
                "cluster is in ERROR: boot disk failed",
            ),
            (
                Problem::ClusterError {
                    detail: None,
                    error: Some(error),
                },
                "cluster is in ERROR: no detail given (error INTERNAL (13): boot disk failed)",
            ),
            (
                Problem::NodeError {
                    pool: Some("cpu".to_owned()),
                    node: Some("train01-cpu-0".to_owned()),
                    detail: None,
                },
                "node train01-cpu-0 of pool cpu is in ERROR: no detail given",
            ),
            (
                Problem::UnknownNodeState {
                    pool: None,
                    node: None,
                    reported: None,
                },
                "a node reports no state: its health is unknown",
            ),
            (
                Problem::SlurmNodesDrained(vec!["cpu-3".to_owned()]),
                "1 Slurm node drained or draining: cpu-3",
            ),
            (
                Problem::NodesNotStarting(gpu_stockout("train01-gpu-3")),
                "pool gpu: 0 of 4 nodes started; 3 jobs pending; STOCKOUT in us-central1-a",
            ),
            (
                Problem::NodesNotStarting(NodesNotStarting {
                    pool: None,
                    started: 1,
                    wanted: 1,
                    pending_jobs: 1,
                    last_failure: clusterform_executor::StartFailure {
                        node: "n7".to_owned(),
                        reason: "ResumeTimeout reached".to_owned(),
                        at: None,
                    },
                }),
                "nodes of no one pool: 1 of 1 node started; 1 job pending; ResumeTimeout \
                 reached",
            ),
        ];
        for (problem, text) in cases {
            assert_eq!(problem_text(&problem), text);
        }
        let many: Vec<String> = (0..12).map(|i| format!("n{i}")).collect();
        assert_eq!(
            problem_text(&Problem::SlurmNodesDown(many)),
            "12 Slurm nodes down or not responding: n0, n1, n2, n3, n4, n5, n6, n7, n8, n9 and 2 more"
        );
    }

    /// Pool gpu: 0 of 4 nodes started, 3 jobs pending, `node` the last to fail for a stockout.
    fn gpu_stockout(node: &str) -> NodesNotStarting {
        NodesNotStarting {
            pool: Some("gpu".to_owned()),
            started: 0,
            wanted: 4,
            pending_jobs: 3,
            last_failure: clusterform_executor::StartFailure {
                node: node.to_owned(),
                reason: "The zone 'projects/p/zones/us-central1-a' does not have enough \
                         resources available to fulfill the request. '(resource \
                         type:compute)'. (state:STOCKOUT)"
                    .to_owned(),
                at: None,
            },
        }
    }

    fn health(slurm: SlurmHealth, problems: Vec<Problem>) -> ClusterHealth {
        ClusterHealth {
            address: ClusterName::new("acme-ml", "us-central1", "train01").unwrap(),
            state: clusterform_executor::StateReading::Missing,
            detail: None,
            error: None,
            pools: Vec::new(),
            events: Vec::new(),
            slurm,
            problems,
            login: None,
        }
    }

    #[test]
    fn list_s_health_cell_says_ok_only_when_slurm_was_read_and_briefs_each_problem() {
        let read = || {
            SlurmHealth::Read(clusterform_executor::SlurmReport {
                version: "v0.0.42".to_owned(),
                jobs: clusterform_executor::SlurmJobCounts::default(),
                nodes: clusterform_executor::SlurmNodeCounts::default(),
                idle: clusterform_executor::Idleness::InUse,
                idle_gpu_hours: Some(0.0),
            })
        };
        assert_eq!(health_cell(&health(read(), Vec::new())), "ok");
        assert_eq!(health_cell(&health(SlurmHealth::NotAsked, Vec::new())), "-");
        let event = Problem::ErrorEvent(ClusterEvent::default());
        assert_eq!(
            health_cell(&health(read(), vec![event])),
            "ok",
            "an error event is history, not the cluster's health now"
        );
        let node_error = || Problem::NodeError {
            pool: Some("cpu".to_owned()),
            node: None,
            detail: None,
        };
        let shortage = Problem::NodesNotStarting(gpu_stockout("gpu-0"));
        let problems = vec![node_error(), shortage, node_error()];
        assert_eq!(
            health_cell(&health(read(), problems)),
            "node error in pool cpu ×2; gpu: 0/4 started, 3 pending, STOCKOUT in us-central1-a"
        );
    }
}
