//! Which changes are disruptive, and how the jobs running on their cluster are shown in the
//! text and JSON plans.

use clusterform_model::{Action, JobsByCluster, RunningJob, RunningJobs};
use clusterform_planner::{Plan, plan_document};
use clusterform_testkit::{plan_against_seed, seed};
use serde_json::json;

use crate::views::plan_json::render_json;
use crate::views::plan_text::render_text;

fn startup_script_change() -> Plan {
    let mut wanted = seed();
    wanted["nodePools"][1]["startupScript"] = json!("#!/bin/bash\necho hi");
    plan_against_seed(wanted)
}

fn labels_change() -> Plan {
    let mut wanted = seed();
    wanted["labels"] = json!({"team": "research"});
    plan_against_seed(wanted)
}

fn job(id: i64, name: &str, user: &str, state: &str, nodes: Option<&str>) -> RunningJob {
    RunningJob {
        id: Some(id),
        name: Some(name.to_owned()),
        user: Some(user.to_owned()),
        state: state.to_owned(),
        nodes: nodes.map(str::to_owned),
    }
}

#[test]
fn node_recreation_pool_deletion_replacement_and_delete_are_disruptive() {
    let recreate = startup_script_change();
    assert_eq!(recreate.changes[0].action, Action::Update);
    assert!(recreate.changes[0].is_disruptive());
    assert!(!labels_change().changes[0].is_disruptive());
    let mut wanted = seed();
    wanted["nodePools"].as_array_mut().unwrap().remove(1);
    wanted["orchestratorSpec"]["slurmSpec"]["partitions"] = json!([]);
    assert!(plan_against_seed(wanted).changes[0].is_disruptive());
    let mut change = labels_change().changes.remove(0);
    for action in [Action::Delete, Action::Replace] {
        change.action = action;
        assert!(change.is_disruptive(), "{action:?}");
    }
    change.action = Action::Create;
    assert!(!change.is_disruptive());
}

#[test]
fn a_pool_that_gets_smaller_is_disruptive_and_says_why() {
    let resized = |max: i64| {
        let mut wanted = seed();
        wanted["nodePools"][1]["scalingSpec"]["maxNodeCount"] = json!(max);
        plan_against_seed(wanted).changes.remove(0)
    };
    let live_max = seed()["nodePools"][1]["scalingSpec"]["maxNodeCount"]
        .as_i64()
        .unwrap();
    let smaller = resized(live_max - 1);
    assert_eq!(smaller.action, Action::Update);
    assert!(smaller.is_disruptive());
    assert_eq!(
        smaller.warnings,
        [format!(
            "max_node_count of pool cpu goes from {live_max} to {}: nodes above the new maximum are removed, and Slurm jobs running on them are stopped",
            live_max - 1
        )]
    );
    let larger = resized(live_max + 1);
    assert!(!larger.is_disruptive());
    assert!(larger.warnings.is_empty(), "{:?}", larger.warnings);
}

/// The plan of [`startup_script_change`] with `seen` as the jobs on its cluster.
fn seen(plan: &Plan, seen: RunningJobs) -> JobsByCluster {
    JobsByCluster::from([(plan.changes[0].address.clone(), seen)])
}

#[test]
fn known_jobs_are_listed_under_the_cluster() {
    let plan = startup_script_change();
    let jobs = seen(
        &plan,
        RunningJobs::Known {
            jobs: vec![
                job(17, "train-llm", "alice", "RUNNING", Some("a3-[0-1]")),
                job(18, "eval", "bob", "PENDING", None),
            ],
        },
    );
    let text = render_text(&plan, &jobs, false);
    assert!(
        text.contains(
            "    # 2 Slurm jobs active now: 17 train-llm (alice, RUNNING on a3-[0-1]), 18 eval (bob, PENDING)\n"
        ),
        "{text}"
    );
    let json = render_json(&plan, &jobs);
    assert_eq!(
        json["changes"][0]["running_jobs"],
        json!({"status": "known", "jobs": [
            {"id": 17, "name": "train-llm", "user": "alice", "state": "RUNNING", "nodes": "a3-[0-1]"},
            {"id": 18, "name": "eval", "user": "bob", "state": "PENDING", "nodes": null}
        ]})
    );
    assert_eq!(
        json["changes"][0].as_object().unwrap().len(),
        plan_document(&plan)["changes"][0]
            .as_object()
            .unwrap()
            .len()
            + 1,
        "the jobs are added to the plan's own document, nothing else"
    );
}

#[test]
fn no_jobs_many_jobs_and_unknown_jobs_are_said_so() {
    let plan = startup_script_change();
    let none = seen(&plan, RunningJobs::Known { jobs: Vec::new() });
    assert!(render_text(&plan, &none, false).contains("    # no Slurm jobs active now\n"));
    let many = seen(
        &plan,
        RunningJobs::Known {
            jobs: (1..=12)
                .map(|id| job(id, "sweep", "carol", "RUNNING", None))
                .collect(),
        },
    );
    let text = render_text(&plan, &many, false);
    assert!(text.contains("12 Slurm jobs active now: 1 sweep"), "{text}");
    assert!(
        text.contains("10 sweep (carol, RUNNING), and 2 more\n"),
        "{text}"
    );
    let unknown = seen(
        &plan,
        RunningJobs::Unknown {
            reason: "Slurm REST API unreachable".to_owned(),
        },
    );
    assert!(
        render_text(&plan, &unknown, false)
            .contains("    # Slurm jobs active now: unknown (Slurm REST API unreachable)\n")
    );
    assert_eq!(
        render_json(&plan, &unknown)["changes"][0]["running_jobs"],
        json!({"status": "unknown", "reason": "Slurm REST API unreachable"})
    );
}

#[test]
fn a_plan_without_jobs_looked_up_has_no_running_jobs_field() {
    let plan = startup_script_change();
    let nothing_seen = JobsByCluster::new();
    assert!(
        render_json(&plan, &nothing_seen)["changes"][0]
            .get("running_jobs")
            .is_none()
    );
    assert!(!render_text(&plan, &nothing_seen, false).contains("Slurm jobs"));
}
