//! A plan over Lists of many pages: the clusters of each page are planned as it arrives, and
//! the plan is still the plan of the whole live set.

use std::time::Duration;

use clusterform_emulator::EmulatorOptions;
use serde_json::{Value, json};

use crate::support::{Env, TOKEN, assert_succeeded, fleet_config, stderr};

#[test]
fn a_fleet_listed_in_many_pages_is_planned_as_a_whole() {
    let env = Env::with_options(EmulatorOptions {
        operation_duration: Duration::ZERO,
        required_token: Some(TOKEN.to_owned()),
        project_numbers: true,
        max_page_size: 3,
        ..EmulatorOptions::default()
    });
    let fleet: Vec<(String, u32)> = (0..12).map(|n| (format!("c{n:02}"), 4)).collect();
    env.write_config(&fleet_config(&fleet));
    assert_succeeded(&env.run(&["apply", "--auto-approve"]));

    let mut next = fleet;
    next[3].1 = 6;
    next[7].1 = 6;
    next.retain(|(id, _)| id != "c00" && id != "c10");
    next.push(("c12".to_owned(), 4));
    env.write_config(&fleet_config(&next));
    let lists = || {
        let requests = env.emulator().requests();
        let is_list = |path: &str| path.ends_with("/modelDevelopmentClusters");
        requests
            .iter()
            .filter(|r| r.method == "GET" && is_list(&r.path))
            .count()
    };
    let before = lists();
    let output = env.run(&["plan", "--json", "--detailed-exitcode"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(lists() - before >= 4, "12 clusters, 3 a page");
    let plan: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        plan["summary"],
        json!({"add": 1, "change": 2, "replace": 0, "destroy": 2, "release": 0})
    );
    let changes = plan["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 13, "11 declared, 2 no longer declared");
}
