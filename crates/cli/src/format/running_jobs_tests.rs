//! Which changes are disruptive, and how the jobs running on their cluster are shown in the
//! text and JSON plans.

use clusterform_model::{Action, JobsByCluster, RunningJob, RunningJobs};
use clusterform_planner::{Plan, PlanWarning, plan_document};
use clusterform_testkit::{plan_against_seed, seed, slurm_job};
use serde_json::json;

use crate::format::notes;
use crate::format::plan_json::render_json;
use crate::format::plan_text::render_text;

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
        name: Some(name.to_owned()),
        user: Some(user.to_owned()),
        nodes: nodes.map(str::to_owned),
        ..slurm_job(id, state)
    }
}

/// `job` in partition `partition`, whose nodes are those of `pools`.
fn placed(job: RunningJob, partition: &str, pools: &[&str]) -> RunningJob {
    RunningJob {
        partition: Some(partition.to_owned()),
        pools: pools.iter().map(|p| (*p).to_owned()).collect(),
        ..job
    }
}

/// The comment lines under the plan's change: the jobs it would hit.
fn jobs_lines(text: &str) -> String {
    text.lines()
        .filter(|line| line.starts_with("    # "))
        .collect::<Vec<_>>()
        .join("\n")
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
    let said: Vec<String> = smaller
        .warnings
        .iter()
        .filter(|warning| matches!(warning, PlanWarning::PoolShrinks { .. }))
        .map(notes::plan_warning)
        .collect();
    assert_eq!(
        said,
        [format!(
            "max_node_count of pool cpu goes from {live_max} to {}: nodes above the new maximum are removed, and Slurm jobs running on them are stopped",
            live_max - 1
        )]
    );
    let larger = resized(live_max + 1);
    assert!(!larger.is_disruptive());
    assert!(
        !larger
            .warnings
            .iter()
            .any(|w| matches!(w, PlanWarning::PoolShrinks { .. })),
        "{:?}",
        larger.warnings
    );
}

/// The plan of [`startup_script_change`] with `seen` as the jobs on its cluster.
fn seen(plan: &Plan, seen: RunningJobs) -> JobsByCluster {
    JobsByCluster::from([(plan.changes[0].address.clone(), seen)])
}

#[test]
fn jobs_are_counted_by_state_then_listed_under_the_pool_that_goes() {
    let plan = startup_script_change();
    let jobs = seen(
        &plan,
        RunningJobs::Known {
            jobs: vec![
                placed(
                    job(17, "train-llm", "alice", "RUNNING", Some("cpu-[0-1]")),
                    "cpu",
                    &["cpu"],
                ),
                placed(job(18, "eval", "bob", "PENDING", None), "cpu", &["cpu"]),
                placed(
                    job(19, "etl", "erin", "RUNNING", Some("x-0")),
                    "other",
                    &["other"],
                ),
                job(20, "mystery", "dan", "PENDING", None),
            ],
        },
    );
    let text = render_text(&plan, &jobs, false);
    insta::assert_snapshot!(jobs_lines(&text), @"
    # 4 Slurm jobs active now: 2 RUNNING, 2 PENDING
    # on pool cpu, whose nodes are recreated:
    #   17 train-llm (alice, RUNNING on cpu-[0-1])
    #   18 eval (bob, PENDING)
    # on pools not known (no partition that names a pool), so perhaps hit:
    #   20 mystery (dan, PENDING)
    # 1 job on pools this change leaves alone
    ");
    let json = render_json(&plan, &jobs);
    assert_eq!(
        json["changes"][0]["running_jobs"]["jobs"][0],
        json!({"id": 17, "name": "train-llm", "user": "alice", "state": "RUNNING",
               "nodes": "cpu-[0-1]", "partition": "cpu", "pools": ["cpu"]})
    );
    assert_eq!(
        json["changes"][0]["running_jobs"]["jobs"][3],
        json!({"id": 20, "name": "mystery", "user": "dan", "state": "PENDING", "nodes": null})
    );
    assert_eq!(
        json["changes"][0].as_object().unwrap().len(),
        plan_document(&plan)["changes"][0]
            .as_object()
            .unwrap()
            .len()
            + 2,
        "the jobs and the GPUs are added to the plan's own document, nothing else"
    );
}

#[test]
fn a_deletion_stops_every_job_and_a_shrink_names_the_nodes_that_go() {
    let running = || {
        vec![placed(
            job(17, "train-llm", "alice", "RUNNING", Some("cpu-[0-1]")),
            "cpu",
            &["cpu"],
        )]
    };
    let mut deleted = labels_change();
    deleted.changes[0].action = Action::Delete;
    let jobs = seen(&deleted, RunningJobs::Known { jobs: running() });
    insta::assert_snapshot!(jobs_lines(&render_text(&deleted, &jobs, false)), @"
    # 1 Slurm job active now: 1 RUNNING
    # all of them stop with the cluster:
    #   17 train-llm (alice, RUNNING on cpu-[0-1])
    ");

    let mut wanted = seed();
    let live_max = wanted["nodePools"][1]["scalingSpec"]["maxNodeCount"]
        .as_i64()
        .unwrap();
    wanted["nodePools"][1]["scalingSpec"]["maxNodeCount"] = json!(live_max - 1);
    let shrunk = plan_against_seed(wanted);
    let jobs = seen(
        &shrunk,
        RunningJobs::Known {
            jobs: vec![job(30, "idle", "x", "PENDING", None)],
        },
    );
    insta::assert_snapshot!(jobs_lines(&render_text(&shrunk, &jobs, false)), @"
    # 1 Slurm job active now: 1 PENDING
    # none on pool cpu, which shrinks from 4 to 3 nodes (1 goes; the service picks which)
    # on pools not known (no partition that names a pool), so perhaps hit:
    #   30 idle (x, PENDING)
    ");
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
                .map(|id| placed(job(id, "sweep", "carol", "RUNNING", None), "cpu", &["cpu"]))
                .collect(),
        },
    );
    let text = render_text(&plan, &many, false);
    assert!(
        text.contains("    # 12 Slurm jobs active now: 12 RUNNING\n"),
        "{text}"
    );
    assert!(
        text.contains("    #   10 sweep (carol, RUNNING)\n    #   and 2 more\n"),
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
