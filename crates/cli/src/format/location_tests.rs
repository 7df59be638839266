//! Plans spanning several locations name each cluster with its project and region, since the
//! same ID may exist in two regions; single-location plans keep the bare ID.

use clusterform_config::DesiredCluster;
use clusterform_model::{Cluster, ClusterName, JobsByCluster, LiveCluster, Location};
use clusterform_planner::{Plan, PlanOptions, plan};
use clusterform_testkit::{PROJECT, REGION, STACK, config, declared, seed, served};
use serde_json::{Value, json};

use crate::format::plan_text::render_text;

const OTHER_REGION: &str = "europe-west4";

/// `train01` declared with `wanted` in `region`.
fn declared_in(region: &str, wanted: Value) -> DesiredCluster {
    let name = ClusterName::new(PROJECT, region, "train01").unwrap();
    declared(name, serde_json::from_value(wanted).unwrap())
}

/// The seed `train01` as the List of `region` serves it, in `state`.
fn live_in(region: &str, state: &str) -> LiveCluster {
    let mut json = served("train01", &seed(), Some(STACK), state);
    let name = json["name"].as_str().unwrap().replace(REGION, region);
    json["name"] = json!(name);
    let cluster: Cluster = serde_json::from_value(json).unwrap();
    LiveCluster::read_at(&Location::new(PROJECT, region).unwrap(), cluster).unwrap()
}

/// `train01` in both regions, each with `wanted`, against the live seed in `state`.
fn two_regions(wanted: &Value, state: &str) -> Plan {
    let config = config(vec![
        declared_in(REGION, wanted.clone()),
        declared_in(OTHER_REGION, wanted.clone()),
    ]);
    let live = [live_in(REGION, state), live_in(OTHER_REGION, state)];
    plan(&config, &live, &PlanOptions::default()).unwrap()
}

#[test]
fn headers_name_the_location_when_the_plan_spans_two_regions() {
    let mut wanted = seed();
    wanted["labels"] = json!({"team": "research"});
    let text = render_text(
        &two_regions(&wanted, "RUNNING"),
        &JobsByCluster::new(),
        false,
    );
    insta::assert_snapshot!(text, @r#"
    clusterform will perform the following actions:

      # train01 (my-proj/europe-west4) will be updated in place
      ~ cluster "train01" {
          ~ labels = {
              ~ "team" = "ml" -> "research"
            }
            # (1 unchanged attribute hidden)
            # (4 unchanged blocks hidden)
        }
        update mask: labels
        update mode: USER_AND_SERVICE (the service may also refresh the startup, prolog and epilog scripts it manages; no node is recreated unless it refreshes a pool's startup script)
        impact: immediate

      # train01 (my-proj/us-central1) will be updated in place
      ~ cluster "train01" {
          ~ labels = {
              ~ "team" = "ml" -> "research"
            }
            # (1 unchanged attribute hidden)
            # (4 unchanged blocks hidden)
        }
        update mask: labels
        update mode: USER_AND_SERVICE (the service may also refresh the startup, prolog and epilog scripts it manages; no node is recreated unless it refreshes a pool's startup script)
        impact: immediate

    Plan: 0 to add, 2 to change, 0 to replace, 0 to destroy.
    "#);
}

#[test]
fn notes_of_an_unchanged_plan_name_the_location_too() {
    let text = render_text(
        &two_regions(&seed(), "PROVISIONING"),
        &JobsByCluster::new(),
        false,
    );
    insta::assert_snapshot!(text, @r"
    No changes. Your clusters match the configuration.
    Note: train01 (my-proj/europe-west4): the cluster is PROVISIONING right now: an operation is in flight on it (started by another run)
    Note: train01 (my-proj/us-central1): the cluster is PROVISIONING right now: an operation is in flight on it (started by another run)
    ");
}

#[test]
fn a_single_location_plan_names_clusters_by_id_alone() {
    let mut wanted = seed();
    wanted["labels"] = json!({"team": "research"});
    let made = plan(
        &config(vec![declared_in(OTHER_REGION, wanted)]),
        &[live_in(OTHER_REGION, "RUNNING")],
        &PlanOptions::default(),
    )
    .unwrap();
    let text = render_text(&made, &JobsByCluster::new(), false);
    assert!(
        text.contains("  # train01 will be updated in place\n"),
        "{text}"
    );
}
