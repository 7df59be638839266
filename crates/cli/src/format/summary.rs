//! A plan at a glance, for reviews: one row per changing cluster (its action, the fields or
//! update-mask paths it changes, its impact, the running jobs it stops, the GPUs it adds or
//! removes), then the totals (with prices, the cost in total too) — as a text table (`plan --summary`, `show FILE --summary`) or
//! as a pull-request comment in Markdown (`show FILE --format markdown`), whose full plan sits
//! in a collapsed `<details>` section. Only paths, impacts and counts are shown: never a
//! value, so nothing secret; the full plan hides sensitive values as the text plan does.

use std::fmt::Write as _;

use clusterform_model::pricing::PriceList;
use clusterform_model::{Action, JobsByCluster};
use clusterform_planner::{ClusterChange, Plan, StoppedJobs, stopped_work};

use crate::format::names::ClusterNames;
use crate::format::table::table;
use crate::format::{costs, gpus, plan_text};

/// What a cell shows when there is nothing to say.
const NONE: &str = "-";

/// One changing cluster, as the summary shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    cluster: String,
    action: &'static str,
    changes: String,
    impact: String,
    jobs: String,
    gpus: String,
}

const HEADERS: [&str; 6] = [
    "CLUSTER",
    "ACTION",
    "CHANGES",
    "IMPACT",
    "RUNNING JOBS",
    "GPUS",
];

const MARKDOWN_HEADERS: [&str; 6] = [
    "Cluster",
    "Action",
    "Changes",
    "Impact",
    "Running jobs",
    "GPUs",
];

/// The rows of `plan`'s changes (no-ops left out), the jobs as `jobs` saw them.
fn rows(plan: &Plan, jobs: &JobsByCluster) -> Vec<Row> {
    let names = ClusterNames::for_clusters(plan.changes.iter().map(|c| &c.address));
    // No live cluster is at hand here: a cluster whose jobs were not read may be running some.
    let stopped = stopped_work(plan, jobs, []);
    plan.changes
        .iter()
        .filter(|change| change.action != Action::NoOp)
        .map(|change| {
            let stops = stopped
                .iter()
                .find(|work| work.change.address == change.address)
                .map(|work| &work.jobs);
            Row {
                cluster: names.name(&change.address),
                action: action_word(change.action),
                changes: changed(change),
                impact: impact(change),
                jobs: jobs_cell(change, stops),
                gpus: gpus::counts(&change.gpu_change()).unwrap_or_else(|| NONE.to_owned()),
            }
        })
        .collect()
}

fn action_word(action: Action) -> &'static str {
    match action {
        Action::Create => "create",
        Action::Update => "update in place",
        Action::Replace => "replace",
        Action::Delete => "destroy",
        Action::Release => "release",
        Action::NoOp => "none",
    }
}

/// An update's (or a release's) mask paths; a replacement's fields that force it, else the
/// top-level fields it changes; nothing for a create or a delete, which take the whole
/// cluster.
fn changed(change: &ClusterChange) -> String {
    let paths: Vec<String> = match change.action {
        Action::Update | Action::Release => change
            .update_mask()
            .iter()
            .map(|path| path.as_str().to_owned())
            .collect(),
        Action::Replace => {
            let forcing: Vec<String> = change
                .fields
                .iter()
                .filter(|field| field.forces_replacement)
                .map(|field| field.path.as_str().to_owned())
                .collect();
            if forcing.is_empty() {
                top_level_fields(change)
            } else {
                forcing
            }
        }
        Action::Create | Action::Delete | Action::NoOp => Vec::new(),
    };
    let mut distinct: Vec<String> = Vec::new();
    for path in paths {
        if !distinct.contains(&path) {
            distinct.push(path);
        }
    }
    if distinct.is_empty() {
        NONE.to_owned()
    } else {
        distinct.join(", ")
    }
}

fn top_level_fields(change: &ClusterChange) -> Vec<String> {
    change
        .fields
        .iter()
        .filter_map(|field| field.path.segments().first())
        .map(|segment| segment.name.clone())
        .collect()
}

fn impact(change: &ClusterChange) -> String {
    match change.action {
        Action::Delete => "deletes the cluster".to_owned(),
        Action::Release => "none: the cluster keeps running".to_owned(),
        _ if change.impacts.is_empty() => NONE.to_owned(),
        _ => {
            let impacts: Vec<String> = change.impacts.iter().map(ToString::to_string).collect();
            impacts.join("; ")
        }
    }
}

/// The jobs a disruptive change stops: their count, `none`, or `unknown`; nothing for a change
/// that takes no node away.
fn jobs_cell(change: &ClusterChange, stops: Option<&StoppedJobs>) -> String {
    match stops {
        _ if !change.is_disruptive() => NONE.to_owned(),
        None => "none".to_owned(),
        Some(StoppedJobs::Known(jobs)) => match jobs.len() {
            1 => "1 job".to_owned(),
            n => format!("{n} jobs"),
        },
        Some(StoppedJobs::Unknown { .. }) => "unknown".to_owned(),
    }
}

/// The totals under the rows: the action counts, the GPUs, with `prices` the cost, the jobs
/// stopped.
fn totals(plan: &Plan, jobs: &JobsByCluster, prices: Option<&PriceList>) -> Vec<String> {
    let mut lines = vec![format!("Plan: {}", plan_text::action_counts(plan))];
    lines.extend(gpus::total_line(&plan.gpu_change()));
    lines.extend(
        prices.and_then(|prices| costs::total_line(&plan.cost_change(prices), &prices.currency)),
    );
    let stopped = stopped_work(plan, jobs, []);
    if !stopped.is_empty() {
        let known: usize = stopped.iter().map(|work| work.jobs.known().len()).sum();
        let unknown = stopped
            .iter()
            .filter(|work| matches!(work.jobs, StoppedJobs::Unknown { .. }))
            .count();
        let unknown = match unknown {
            0 => String::new(),
            1 => ", and unknown on 1 cluster".to_owned(),
            n => format!(", and unknown on {n} clusters"),
        };
        lines.push(format!("Running jobs stopped: {known}{unknown}"));
    }
    lines
}

/// `plan --summary`, `show FILE --summary`: the table, then the totals.
pub fn render_text(plan: &Plan, jobs: &JobsByCluster, prices: Option<&PriceList>) -> String {
    let rows = rows(plan, jobs);
    if rows.is_empty() {
        return "No changes. Your clusters match the configuration.\n".to_owned();
    }
    let mut cells = vec![HEADERS.map(str::to_owned).to_vec()];
    cells.extend(rows.into_iter().map(|row| {
        vec![
            row.cluster,
            row.action.to_owned(),
            row.changes,
            row.impact,
            row.jobs,
            row.gpus,
        ]
    }));
    let mut out = table(&cells);
    out.push('\n');
    for line in totals(plan, jobs, prices) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// `show FILE --format markdown`: a pull-request comment — a heading with the counts, the
/// summary table, the totals, then (`full_plan`, already rendered without colour, headed by
/// what made it) the whole plan in a collapsed section.
pub fn render_markdown(
    plan: &Plan,
    jobs: &JobsByCluster,
    prices: Option<&PriceList>,
    full_plan: Option<&str>,
) -> String {
    let mut out = format!(
        "### clusterform plan: {}\n\n",
        plan_text::action_counts(plan)
    );
    let rows = rows(plan, jobs);
    if rows.is_empty() {
        out.push_str("No changes. Your clusters match the configuration.\n");
    } else {
        let _ = writeln!(out, "| {} |", MARKDOWN_HEADERS.join(" | "));
        let _ = writeln!(out, "|{}", "---|".repeat(MARKDOWN_HEADERS.len()));
        for row in rows {
            let cells = [
                code(&row.cluster),
                row.action.to_owned(),
                code_list(&row.changes),
                cell(&row.impact),
                cell(&row.jobs),
                cell(&row.gpus),
            ];
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        out.push('\n');
        for line in totals(plan, jobs, prices).iter().skip(1) {
            let _ = writeln!(out, "{}  ", cell(line));
        }
    }
    if let Some(full) = full_plan {
        let fence = fence_for(full);
        let _ = write!(
            out,
            "\n<details><summary>Full plan</summary>\n\n{fence}text\n{}\n{fence}\n\n</details>\n",
            full.trim_end()
        );
    }
    out
}

/// A table cell: `|` would end it, a line break would end the row.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn code(text: &str) -> String {
    format!("`{}`", cell(text))
}

/// Each comma-separated path in code; `-` as it is.
fn code_list(text: &str) -> String {
    if text == NONE {
        return NONE.to_owned();
    }
    let paths: Vec<String> = text.split(", ").map(code).collect();
    paths.join(", ")
}

/// A code fence longer than any run of backticks in `text` (a startup script may hold some).
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

#[cfg(test)]
mod tests {
    use clusterform_model::{RunningJob, RunningJobs};
    use clusterform_testkit::{plan_against_seed, seed, slurm_job};
    use serde_json::json;

    use super::*;

    /// `train01` with a B200 pool of 2 to 4 nodes added (an update).
    fn gpu_pool_added() -> Plan {
        let mut wanted = seed();
        wanted["nodePools"].as_array_mut().unwrap().push(json!({
            "id": "gpu", "machineSpec": {"machineType": "a4-highgpu-8g"},
            "zone": "us-central1-a", "scalingSpec": {"minNodeCount": 2, "maxNodeCount": 4}
        }));
        plan_against_seed(wanted)
    }

    #[test]
    fn with_prices_the_totals_give_the_cost_in_total() {
        let prices = PriceList {
            currency: "USD".parse().unwrap(),
            machine_types: std::collections::BTreeMap::new(),
            accelerators: std::collections::BTreeMap::from([(
                "NVIDIA_B200".to_owned(),
                clusterform_model::pricing::HourlyPrice::new(5.5).unwrap(),
            )]),
        };
        let plan = gpu_pool_added();
        let priced = render_text(&plan, &JobsByCluster::new(), Some(&prices));
        assert!(
            priced.contains(
                "Cost in total: +88.00 USD/h (+63360.00 USD per 30 days) now, +176.00 USD/h \
                 (+126720.00 USD per 30 days) at most"
            ),
            "{priced}"
        );
        let unpriced = render_text(&plan, &JobsByCluster::new(), None);
        assert!(!unpriced.contains("Cost"), "{unpriced}");
    }

    #[test]
    fn a_row_gives_the_action_mask_paths_impact_jobs_and_gpus_then_the_totals() {
        let text = render_text(&gpu_pool_added(), &JobsByCluster::new(), None);
        let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
        assert_eq!(
            lines,
            [
                "CLUSTER  ACTION           CHANGES     IMPACT         RUNNING JOBS  GPUS",
                "train01  update in place  node_pools  adds pool gpu  -             +16 NVIDIA_B200 now (+32 at most)",
                "",
                "Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy.",
                "GPUs in total: +16 NVIDIA_B200 now (+32 at most)",
            ]
        );
    }

    #[test]
    fn a_disruptive_change_counts_the_jobs_it_stops_or_says_they_are_unknown() {
        let mut wanted = seed();
        wanted["nodePools"][1]["machineSpec"]["machineType"] = json!("n2-standard-16");
        let plan = plan_against_seed(wanted);
        let unread = render_text(&plan, &JobsByCluster::new(), None);
        assert!(unread.contains("  unknown  "), "{unread}");
        assert!(unread.contains("Running jobs stopped: 0, and unknown on 1 cluster"));
        let job = RunningJob {
            name: Some("train-llm".to_owned()),
            user: Some("alice".to_owned()),
            nodes: Some("cpu-0".to_owned()),
            partition: Some("cpu".to_owned()),
            pools: vec!["cpu".to_owned()],
            ..slurm_job(17, "RUNNING")
        };
        let mut jobs = JobsByCluster::new();
        jobs.insert(
            plan.changes[0].address.clone(),
            RunningJobs::Known { jobs: vec![job] },
        );
        let read = render_text(&plan, &jobs, None);
        assert!(read.contains("  1 job  "), "{read}");
        assert!(read.contains("Running jobs stopped: 1\n"), "{read}");
    }

    #[test]
    fn markdown_has_the_table_the_totals_and_the_full_plan_folded() {
        let plan = gpu_pool_added();
        let full = "  ~ cluster \"train01\" {\n    ```\n";
        let markdown = render_markdown(&plan, &JobsByCluster::new(), None, Some(full));
        assert_eq!(
            markdown,
            "### clusterform plan: 0 to add, 1 to change, 0 to replace, 0 to destroy.\n\n\
             | Cluster | Action | Changes | Impact | Running jobs | GPUs |\n\
             |---|---|---|---|---|---|\n\
             | `train01` | update in place | `node_pools` | adds pool gpu | - | +16 NVIDIA_B200 now (+32 at most) |\n\
             \n\
             GPUs in total: +16 NVIDIA_B200 now (+32 at most)  \n\
             \n<details><summary>Full plan</summary>\n\n\
             ````text\n  ~ cluster \"train01\" {\n    ```\n````\n\n</details>\n"
        );
    }

    #[test]
    fn a_plan_without_changes_says_so() {
        let plan = plan_against_seed(seed());
        assert_eq!(
            render_text(&plan, &JobsByCluster::new(), None),
            "No changes. Your clusters match the configuration.\n"
        );
    }
}
