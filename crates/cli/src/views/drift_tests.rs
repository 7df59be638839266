//! The "changed outside clusterform" line: above the change that restores the configuration,
//! only when the applied record says the configuration did not change.

use clusterform_model::JobsByCluster;
use clusterform_model::paths::FieldPath;
use clusterform_planner::{
    AppliedDigests, Drift, DriftKind, Plan, PlanBuilder, PlanOptions, desired_digest,
};
use clusterform_testkit::{STACK, address, cluster, config, desired, seed, served};
use serde_json::json;

use crate::views::plan_text::render_text;

/// `train01` as declared, live with its `team` label changed by a hotfix, planned with (or
/// without) the record of its last apply.
fn hotfix_plan(recorded: bool) -> Plan {
    let declared = desired("train01", seed());
    let config = config(vec![declared.clone()]);
    let mut live = seed();
    live["labels"]["team"] = json!("oncall");
    let live = cluster(served("train01", &live, Some(STACK), "RUNNING"));
    let applied: AppliedDigests = if recorded {
        [(address("train01"), desired_digest(&declared).unwrap())]
            .into_iter()
            .collect()
    } else {
        AppliedDigests::default()
    };
    let options = PlanOptions::default();
    PlanBuilder::new(&config, &options)
        .with_applied(&applied)
        .finish([&live])
        .unwrap()
}

#[test]
fn the_drift_line_comes_before_the_change_that_restores_it() {
    let text = render_text(&hotfix_plan(true), &JobsByCluster::new(), false);
    let head: Vec<&str> = text.lines().take(4).collect();
    assert_eq!(
        head,
        [
            "clusterform will perform the following actions:",
            "",
            "  # train01 changed outside clusterform: labels.team changed",
            "  # train01 will be updated in place",
        ]
    );
    let plain = render_text(&hotfix_plan(false), &JobsByCluster::new(), false);
    assert_eq!(
        plain,
        text.replace(
            "  # train01 changed outside clusterform: labels.team changed\n",
            ""
        )
    );
}

#[test]
fn a_long_drift_names_ten_fields_and_counts_the_rest() {
    let mut plan = hotfix_plan(true);
    plan.changes[0].drift = (0..12)
        .map(|n| Drift {
            path: format!("labels.l{n:02}").parse::<FieldPath>().unwrap(),
            how: DriftKind::Added,
        })
        .collect();
    let text = render_text(&plan, &JobsByCluster::new(), false);
    let line = text
        .lines()
        .find(|line| line.contains("outside clusterform"))
        .unwrap();
    assert!(line.ends_with("labels.l09 added, and 2 more"), "{line}");
    assert!(!line.contains("l10"), "{line}");
}
