//! `status --json`: one versioned document, its shape documented in `docs/commands.md`
//! ("`status --json`").

use clusterform_executor::{
    ClusterHealth, Idleness, LoginInstance, LoginNode, PoolNodes, Problem, SlurmHealth,
    SlurmReport, StateReading,
};
use clusterform_model::{ClusterEvent, ClusterName, Status, UnreadLocation};
use serde_json::{Value, json};

use super::login_node::{login_command, login_text};
use super::status::{
    Declaration, Found, Recorded, StatusEntry, gone_text, needs_attention, problem_text,
    undeclared_text, unread_rows, unread_text,
};
use super::table::format_time;

/// The version of the document's shape: raised when a field changes meaning or goes away.
pub const STATUS_FORMAT_VERSION: u32 = 1;

/// The document: `{format_version, needs_attention, clusters: [...], unreadable_locations:
/// [...]}`.
pub fn render_json(entries: &[StatusEntry], unread: &[UnreadLocation]) -> Value {
    json!({
        "format_version": STATUS_FORMAT_VERSION,
        "needs_attention": needs_attention(entries) || unread_rows(unread).next().is_some(),
        "clusters": entries.iter().map(entry).collect::<Vec<_>>(),
        "unreadable_locations": unreadable_locations(unread),
    })
}

/// Every location that could not be listed, as a plan file writes it (`{project, region,
/// kind, reason, named, held}`), with the words `status` shows.
pub fn unreadable_locations(unread: &[UnreadLocation]) -> Value {
    unread
        .iter()
        .map(|location| {
            let mut written = serde_json::to_value(location).unwrap_or(Value::Null);
            written["message"] = Value::from(unread_text(location));
            written
        })
        .collect::<Vec<_>>()
        .into()
}

pub(crate) fn entry(entry: &StatusEntry) -> Value {
    let address = &entry.address;
    let mut written = json!({
        "address": {
            "project": address.project(),
            "region": address.region(),
            "id": address.id().as_str(),
        },
        "declared": entry.declaration == Declaration::Declared,
        "created": matches!(entry.found, Found::Live(_)),
        "needs_attention": entry.needs_attention(),
    });
    if let (Found::Live(health), Some(fields)) = (&entry.found, written.as_object_mut()) {
        fields.extend(health_fields(health).map(|(key, value)| (key.to_owned(), value)));
    }
    if let Found::Gone(recorded) = &entry.found {
        written["recorded"] = recorded_fields(recorded);
    }
    if let Some(next_apply) = next_apply(entry.declaration) {
        written["next_apply"] = next_apply;
    }
    written
}

/// What the next apply does to a cluster no `cluster` block declares: `{action, message}`,
/// the action `release` or `delete`.
fn next_apply(declaration: Declaration) -> Option<Value> {
    let action = match declaration {
        Declaration::Declared => return None,
        Declaration::Released => "release",
        Declaration::Undeclared => "delete",
    };
    Some(json!({"action": action, "message": undeclared_text(declaration)}))
}

/// What the applied record says of a declared cluster that clusterform had and that is gone:
/// the mark's own fields under its `kind`, or `{"kind": "applied", "applied_at"}`; and the
/// words `status` shows.
fn recorded_fields(recorded: &Recorded) -> Value {
    let mut fields = match recorded {
        // A mark holds only strings, which always encode.
        Recorded::Marked(mark) => serde_json::to_value(mark).unwrap_or(Value::Null),
        Recorded::Applied { applied_at } => json!({"kind": "applied", "applied_at": applied_at}),
    };
    fields["message"] = Value::from(gone_text(recorded));
    fields
}

/// What a live cluster adds to its entry.
fn health_fields(health: &ClusterHealth) -> [(&'static str, Value); 8] {
    [
        ("state", state(&health.state)),
        ("detail", Value::from(health.detail.clone())),
        ("error", health.error.as_ref().map_or(Value::Null, error)),
        (
            "node_pools",
            health.pools.iter().map(pool).collect::<Vec<_>>().into(),
        ),
        (
            "events",
            health.events.iter().map(event).collect::<Vec<_>>().into(),
        ),
        ("slurm", slurm(&health.slurm)),
        (
            "problems",
            health
                .problems
                .iter()
                .map(problem)
                .collect::<Vec<_>>()
                .into(),
        ),
        (
            "login_node",
            health
                .login
                .as_ref()
                .map_or(Value::Null, |login| login_node(&health.address, login)),
        ),
    ]
}

/// `list --json`'s `health`: whether the cluster needs attention, what its Slurm said (as in
/// `status --json`) and its problems of now, each as `status --json` writes it.
pub fn health_summary(health: &ClusterHealth) -> Value {
    json!({
        "needs_attention": health.needs_attention(),
        "slurm": slurm(&health.slurm),
        "problems": health
            .problems
            .iter()
            .filter(|p| p.is_current())
            .map(problem)
            .collect::<Vec<_>>(),
    })
}

/// `{pool, zone, public_ips, instance, state, command, message}`: the login node, the command
/// that reaches it (`null` until it runs with a name) and the words the text shows.
fn login_node(address: &ClusterName, login: &LoginNode) -> Value {
    let (instance, state) = match &login.instance {
        LoginInstance::Running { name } => (Some(name.as_str()), Some("RUNNING")),
        LoginInstance::NotRunning { name, state } => (name.as_deref(), state.as_deref()),
        LoginInstance::Absent => (None, None),
    };
    json!({
        "pool": login.pool,
        "zone": login.zone,
        "public_ips": login.public_ips,
        "instance": instance,
        "state": state,
        "command": login_command(address, login),
        "message": login_text(address, Some(login)),
    })
}

/// `clusterStatus.error`.
fn error(status: &Status) -> Value {
    json!({
        "code": status.code,
        "status": status.code_name(),
        "message": status.message,
    })
}

/// The state as the service spelled it; `null` when it reported none.
fn state(state: &StateReading) -> Value {
    state.spelled().map_or(Value::Null, Value::from)
}

fn pool(nodes: &PoolNodes) -> Value {
    json!({
        "id": nodes.pool,
        "nodes": nodes.total(),
        "running": nodes.running,
        "preparing": nodes.preparing,
        "updating": nodes.updating,
        "error": nodes.error,
        "repairing": nodes.repairing,
        "unknown": nodes.unknown,
    })
}

fn event(event: &ClusterEvent) -> Value {
    json!({
        "type": event.event_type,
        "time": event.event_time,
        "message": event.event_message,
    })
}

fn slurm(slurm: &SlurmHealth) -> Value {
    match slurm {
        SlurmHealth::NotAsked => json!({"status": "not_asked"}),
        SlurmHealth::Unreadable(error) => json!({
            "status": "unreadable",
            "reason": error.to_string(),
        }),
        SlurmHealth::Read(report) => read(report),
    }
}

fn read(report: &SlurmReport) -> Value {
    let idle = match &report.idle {
        Idleness::IdleSince(since) => json!({"status": "idle", "since": format_time(*since)}),
        Idleness::InUse => json!({"status": "in_use", "only_pending_jobs": false}),
        Idleness::OnlyPendingJobs(_) => json!({"status": "in_use", "only_pending_jobs": true}),
        Idleness::Unknown(reason) => json!({"status": "unknown", "reason": reason}),
    };
    let nodes = &report.nodes;
    json!({
        "status": "read",
        "version": report.version,
        "jobs": {"running": report.jobs.running, "pending": report.jobs.pending},
        "nodes": {
            "idle": nodes.idle,
            "allocated": nodes.allocated,
            "down": nodes.down,
            "drained": nodes.drained,
            "other": nodes.other,
        },
        "idle": idle,
    })
}

/// `{kind, current, message}` and what the kind says.
fn problem(problem: &Problem) -> Value {
    let mut written = match problem {
        Problem::ClusterError { detail, error } => json!({
            "kind": "cluster_error",
            "detail": detail,
            "error": error.as_ref().map_or(Value::Null, self::error),
        }),
        Problem::UnknownState { reported } => {
            json!({"kind": "unknown_state", "reported": reported})
        }
        Problem::NodeError { pool, node, detail } => json!({
            "kind": "node_error", "pool": pool, "node": node, "detail": detail,
        }),
        Problem::UnknownNodeState {
            pool,
            node,
            reported,
        } => json!({
            "kind": "unknown_node_state", "pool": pool, "node": node, "reported": reported,
        }),
        Problem::SlurmNodesDown(nodes) => json!({"kind": "slurm_nodes_down", "nodes": nodes}),
        Problem::SlurmNodesDrained(nodes) => {
            json!({"kind": "slurm_nodes_drained", "nodes": nodes})
        }
        Problem::SlurmNodesUnknown(nodes) => {
            json!({"kind": "slurm_nodes_unknown", "nodes": nodes})
        }
        Problem::NodesNotStarting(shortage) => json!({
            "kind": "nodes_not_starting",
            "pool": shortage.pool,
            "started": shortage.started,
            "wanted": shortage.wanted,
            "pending_jobs": shortage.pending_jobs,
            "last_failure": {
                "node": shortage.last_failure.node,
                "reason": shortage.last_failure.reason,
                "at": shortage.last_failure.at.map(format_time),
            },
        }),
        Problem::SlurmUnreadable(reason) => {
            json!({"kind": "slurm_unreadable", "reason": reason})
        }
        Problem::ErrorEvent(happened) => json!({"kind": "error_event", "event": event(happened)}),
    };
    written["current"] = Value::from(problem.is_current());
    written["message"] = Value::from(problem_text(problem));
    written
}
