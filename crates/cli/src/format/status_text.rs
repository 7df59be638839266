//! `status` for people: one table row per cluster (project, region, ID, state, nodes by pool,
//! Slurm's jobs and nodes, idle since), then the recent events, then everything that needs
//! attention with its detail.

use clusterform_executor::{
    ClusterHealth, Idleness, PoolNodes, SlurmHealth, SlurmNodeCounts, SlurmReport, StateReading,
};
use time::OffsetDateTime;

use super::login_node::login_text;
use super::names::ClusterNames;
use clusterform_model::UnreadLocation;

use super::status::{
    Declaration, Found, StatusEntry, event_text, gone_text, names, problem_text, undeclared_text,
    unread_rows, unread_text,
};
use super::table::{
    cluster_headers, cluster_row, counted, state_cell, table, time_and_age, unread_row,
};

/// The table, the recent events and what needs attention; `No clusters.` when there is none.
/// `color` (a terminal): a cluster's `ERROR` in red.
pub fn render_text(
    entries: &[StatusEntry],
    unread: &[UnreadLocation],
    now: OffsetDateTime,
    color: bool,
) -> String {
    if entries.is_empty() && unread_rows(unread).next().is_none() {
        return "No clusters.\n".to_owned();
    }
    let names = names(entries);
    let mut text = clusters_table(entries, unread, now, color);
    let in_progress = in_progress(entries, names);
    if !in_progress.is_empty() {
        text.push_str("\nIn progress:\n");
        text.push_str(&in_progress);
    }
    let events = recent_events(entries, names);
    if !events.is_empty() {
        text.push_str("\nRecent events:\n");
        text.push_str(&events);
    }
    let mut problems = attention(entries, names);
    for location in unread_rows(unread) {
        problems.push_str(&format!(
            "  {}/{}: {}\n",
            location.location.project(),
            location.location.region(),
            unread_text(location)
        ));
    }
    if problems.is_empty() {
        text.push_str("\nNothing needs attention.\n");
    } else {
        text.push_str("\nNeeds attention:\n");
        text.push_str(&problems);
    }
    text
}

/// What a cell shows when there is nothing to show: Slurm not asked, a cluster not created.
const NONE: &str = "-";

/// What a cell shows when what it would show could not be read.
const UNKNOWN: &str = "unknown";

fn clusters_table(
    entries: &[StatusEntry],
    unread: &[UnreadLocation],
    now: OffsetDateTime,
    color: bool,
) -> String {
    let mut rows = vec![cluster_headers(&[
        "STATE",
        "NODES",
        "SLURM JOBS",
        "SLURM NODES",
        "IDLE SINCE",
    ])];
    for entry in entries {
        let mut cells = [
            "not created".to_owned(),
            NONE.to_owned(),
            NONE.to_owned(),
            NONE.to_owned(),
            NONE.to_owned(),
        ];
        if let Found::Live(health) = &entry.found {
            cells[0] = state_cell(state(&health.state), color);
            cells[1] = nodes(&health.pools);
            [cells[2], cells[3], cells[4]] = slurm_cells(health, now);
        }
        rows.push(cluster_row(&entry.address, cells));
    }
    rows.extend(unread_rows(unread).map(|location| unread_row(location, 5)));
    table(&rows)
}

fn state(state: &StateReading) -> &str {
    state.spelled().unwrap_or(UNKNOWN)
}

/// `login: 1 running; cpu: 2 running, 1 error`; a pool without nodes is `cpu: 0`.
fn nodes(pools: &[PoolNodes]) -> String {
    if pools.is_empty() {
        return NONE.to_owned();
    }
    let pool = |nodes: &PoolNodes| {
        let counts = [
            (nodes.running, "running"),
            (nodes.preparing, "preparing"),
            (nodes.updating, "updating"),
            (nodes.error, "error"),
            (nodes.repairing, "repairing"),
            (nodes.unknown, UNKNOWN),
        ];
        let listed = non_zero(&counts);
        let id = nodes.pool.as_deref().unwrap_or("(no pool)");
        format!(
            "{id}: {}",
            if listed.is_empty() {
                "0"
            } else {
                listed.as_str()
            }
        )
    };
    pools.iter().map(pool).collect::<Vec<_>>().join("; ")
}

/// `2 running, 1 error`: the counts that are not zero.
fn non_zero(counts: &[(usize, &str)]) -> String {
    counts
        .iter()
        .filter(|(count, _)| *count > 0)
        .map(|(count, what)| format!("{count} {what}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The Slurm jobs, Slurm nodes and idle-since cells.
fn slurm_cells(health: &ClusterHealth, now: OffsetDateTime) -> [String; 3] {
    match &health.slurm {
        SlurmHealth::NotAsked => [NONE, NONE, NONE].map(str::to_owned),
        SlurmHealth::Unreadable(_) => [UNKNOWN, UNKNOWN, UNKNOWN].map(str::to_owned),
        SlurmHealth::Read(report) => read_cells(report, now),
    }
}

fn read_cells(report: &SlurmReport, now: OffsetDateTime) -> [String; 3] {
    let jobs = format!(
        "{} running, {} pending",
        report.jobs.running, report.jobs.pending
    );
    let idle = match &report.idle {
        Idleness::IdleSince(since) => time_and_age(*since, now),
        Idleness::InUse => "in use".to_owned(),
        Idleness::OnlyPendingJobs(jobs) => counted(*jobs, "pending job"),
        Idleness::Unknown(_) => UNKNOWN.to_owned(),
    };
    [jobs, slurm_nodes(&report.nodes), idle]
}

/// `3 idle, 1 allocated, 1 down`: the counts that are not zero; `none` for no node at all.
fn slurm_nodes(nodes: &SlurmNodeCounts) -> String {
    let listed = non_zero(&[
        (nodes.idle, "idle"),
        (nodes.allocated, "allocated"),
        (nodes.down, "down"),
        (nodes.drained, "drained"),
        (nodes.other, "other"),
    ]);
    if listed.is_empty() {
        "none".to_owned()
    } else {
        listed
    }
}

/// One line per recent event, each cluster's newest first.
/// What the service says of each cluster an operation is changing or deleting
/// (`clusterStatus.detail` while `PROVISIONING`, `UPDATING` or `STOPPING`): the table's state
/// alone does not say how far it got. An `ERROR`'s detail is a problem, said below.
fn in_progress(entries: &[StatusEntry], names: ClusterNames) -> String {
    let mut lines = String::new();
    for entry in entries {
        let Found::Live(health) = &entry.found else {
            continue;
        };
        let (StateReading::Known(state), Some(detail)) = (&health.state, &health.detail) else {
            continue;
        };
        if state.is_busy() && !detail.trim().is_empty() {
            lines.push_str(&format!(
                "  {}: {}: {}\n",
                names.name(&entry.address),
                state.as_str(),
                detail.trim()
            ));
        }
    }
    lines
}

fn recent_events(entries: &[StatusEntry], names: ClusterNames) -> String {
    let mut lines = String::new();
    for entry in entries {
        let Found::Live(health) = &entry.found else {
            continue;
        };
        for event in &health.events {
            lines.push_str(&format!(
                "  {}: {}\n",
                names.name(&entry.address),
                event_text(event)
            ));
        }
    }
    lines
}

/// One line per problem, named by its cluster.
fn attention(entries: &[StatusEntry], names: ClusterNames) -> String {
    let mut lines = String::new();
    for entry in entries {
        let name = names.name(&entry.address);
        lines.push_str(&undeclared_line(entry, &name));
        let health = match &entry.found {
            Found::Live(health) => health,
            Found::Gone(recorded) => {
                lines.push_str(&format!("  {name}: {}\n", gone_text(recorded)));
                continue;
            }
            Found::NotCreated => continue,
        };
        for problem in &health.problems {
            lines.push_str(&format!("  {name}: {}\n", problem_text(problem)));
        }
    }
    lines
}

/// `Log in:` and one line per cluster: the command that reaches its login node, or why there
/// is none yet. `status --target` shows it after the rest.
pub fn render_login(entries: &[StatusEntry]) -> String {
    let names = names(entries);
    let mut text = "\nLog in:\n".to_owned();
    for entry in entries {
        let how = match &entry.found {
            Found::Live(health) => login_text(&entry.address, health.login.as_ref()),
            Found::NotCreated | Found::Gone(_) => "not created: no login node".to_owned(),
        };
        text.push_str(&format!("  {}: {how}\n", names.name(&entry.address)));
    }
    text
}

/// The attention line of a cluster the next apply destroys because no block names it; empty
/// for any other (a released cluster needs no one: its `removed` block says what happens).
fn undeclared_line(entry: &StatusEntry, name: &str) -> String {
    match undeclared_text(entry.declaration) {
        Some(text) if entry.declaration == Declaration::Undeclared => format!("  {name}: {text}\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_show_their_nodes_by_state_and_empty_pools_as_zero() {
        let pools = [
            PoolNodes {
                pool: Some("login".to_owned()),
                running: 1,
                ..PoolNodes::default()
            },
            PoolNodes {
                pool: Some("cpu".to_owned()),
                ..PoolNodes::default()
            },
            PoolNodes {
                pool: Some("gpu".to_owned()),
                running: 2,
                error: 1,
                unknown: 1,
                ..PoolNodes::default()
            },
        ];
        assert_eq!(
            nodes(&pools),
            "login: 1 running; cpu: 0; gpu: 2 running, 1 error, 1 unknown"
        );
        assert_eq!(nodes(&[]), "-");
        assert_eq!(slurm_nodes(&SlurmNodeCounts::default()), "none");
    }

    #[test]
    fn a_cluster_in_error_is_red_on_a_terminal_only() {
        let address =
            clusterform_model::ClusterName::new("my-proj", "us-central1", "train01").unwrap();
        let entry = StatusEntry {
            address: address.clone(),
            declaration: Declaration::Declared,
            found: Found::Live(Box::new(ClusterHealth {
                address,
                state: StateReading::Known(clusterform_model::ClusterState::Error),
                detail: None,
                error: None,
                pools: Vec::new(),
                events: Vec::new(),
                slurm: SlurmHealth::NotAsked,
                problems: Vec::new(),
                login: None,
            })),
        };
        let now = OffsetDateTime::UNIX_EPOCH;
        let entries = std::slice::from_ref(&entry);
        let plain = clusters_table(entries, &[], now, false);
        let coloured = clusters_table(entries, &[], now, true);
        assert!(plain.contains("  ERROR  "), "{plain}");
        assert!(
            coloured.contains(&state_cell("ERROR", true)),
            "{coloured:?}"
        );
        assert_eq!(console::strip_ansi_codes(&coloured), plain);
    }
}
