//! The "changed outside clusterform" line above the change of a cluster the applied record
//! says was changed outside clusterform, and `plan --refresh-only`'s text and document.

use clusterform_model::JobsByCluster;
use clusterform_model::paths::FieldPath;
use clusterform_planner::{
    AppliedDigests, Drift, DriftKind, Plan, PlanBuilder, PlanOptions, desired_digest,
};
use clusterform_testkit::{
    PROJECT, REGION, STACK, address, cluster, config, desired, seed, served,
};
use serde_json::json;

use crate::format::plan_text::render_text;
use crate::format::refresh_only;

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

#[test]
fn refresh_only_lists_each_cluster_and_field_and_proposes_nothing() {
    let text = refresh_only::render_text(&hotfix_plan(true), false);
    assert_eq!(
        text,
        "  # train01 changed outside clusterform:\n      labels.team changed\n\n\
         Refresh only: 1 cluster changed outside clusterform (1 field); nothing is proposed. \
         Run `clusterform plan` to see what apply would do.\n"
    );
    assert_eq!(
        refresh_only::render_text(&hotfix_plan(false), false),
        "No changes outside clusterform: every field the record of applied changes covers holds \
         what clusterform last applied.\n"
    );
    assert!(refresh_only::has_drift(&hotfix_plan(true)));
    assert!(!refresh_only::has_drift(&hotfix_plan(false)));
}

#[test]
fn the_refresh_only_document_holds_only_the_drift() {
    assert_eq!(
        refresh_only::render_json(&hotfix_plan(true)),
        json!({
            "format_version": 1,
            "refresh_only": true,
            "stack": STACK,
            "clusters": [{
                "address": {"project": PROJECT, "region": REGION, "id": "train01"},
                "drift": [{"path": "labels.team", "how": "changed"}],
            }],
        })
    );
    assert_eq!(
        refresh_only::render_json(&hotfix_plan(false))["clusters"],
        json!([])
    );
}
