//! A fleet over two regions applied with `--parallelism-per-location 1`: the clusters of one
//! region are created one after the other, while the two regions work at the same time.

use std::time::{Duration, Instant};

use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::support::{ClusterSpec, Env, PROVIDER, assert_succeeded, cluster_hcl};

/// `a1` and `a2` in the provider's us-central1, `b1` and `b2` in europe-west4.
fn two_regions() -> String {
    let here = |id| {
        cluster_hcl(&ClusterSpec {
            id,
            ..ClusterSpec::default()
        })
    };
    // Every `us-central1` of these blocks, the region setting included, becomes europe-west4.
    let there = |id| {
        cluster_hcl(&ClusterSpec {
            id,
            extra_cluster_settings: "  region = \"us-central1\"\n",
            ..ClusterSpec::default()
        })
        .replace("us-central1", "europe-west4")
    };
    format!(
        "{PROVIDER}{}{}{}{}",
        here("a1"),
        here("a2"),
        there("b1"),
        there("b2")
    )
}

/// When each cluster was created and when it became `RUNNING`, earliest first.
fn lifetimes(env: &Env, region: &str, ids: &[&str]) -> Vec<(OffsetDateTime, OffsetDateTime)> {
    let time_of = |cluster: &Value, field: &str| {
        OffsetDateTime::parse(cluster[field].as_str().unwrap(), &Rfc3339).unwrap()
    };
    let mut lifetimes: Vec<_> = ids
        .iter()
        .map(|id| {
            let name = format!("projects/my-proj/locations/{region}/modelDevelopmentClusters/{id}");
            let cluster = env.emulator().cluster(&name).unwrap();
            (
                time_of(&cluster, "createTime"),
                time_of(&cluster, "startTime"),
            )
        })
        .collect();
    lifetimes.sort();
    lifetimes
}

#[test]
fn one_cluster_per_region_at_a_time_with_both_regions_at_once() {
    let env = Env::new(1000);
    env.write_config(&two_regions());

    let applied = env.run(&["apply", "--auto-approve", "--parallelism-per-location", "1"]);

    assert_succeeded(&applied);
    let here = lifetimes(&env, "us-central1", &["a1", "a2"]);
    let there = lifetimes(&env, "europe-west4", &["b1", "b2"]);
    for (region, pair) in [("us-central1", &here), ("europe-west4", &there)] {
        assert!(
            pair[1].0 >= pair[0].1,
            "two clusters of {region} were created at once: {pair:?}"
        );
    }
    assert!(
        there[0].0 < here[0].1 && here[0].0 < there[0].1,
        "the regions did not work at the same time: {here:?} {there:?}"
    );
}

#[test]
fn a_per_location_limit_of_zero_is_refused() {
    let env = Env::new(50);
    env.write_config(&two_regions());
    let refused = env.run(&["apply", "--auto-approve", "--parallelism-per-location", "0"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(env.mutations().is_empty());
}

#[test]
fn destroy_deletes_one_cluster_per_region_at_a_time() {
    let operation = Duration::from_millis(1500);
    let env = Env::new(u64::try_from(operation.as_millis()).unwrap());
    env.write_config(&two_regions());
    assert_succeeded(&env.run(&["apply", "--auto-approve"]));

    let started = Instant::now();
    let destroyed = env.run(&[
        "destroy",
        "--auto-approve",
        "--parallelism-per-location",
        "1",
    ]);

    assert_succeeded(&destroyed);
    // Two deletes in a row per region: never faster than two operations.
    assert!(
        started.elapsed() >= operation * 2,
        "the deletes of one region overlapped: {:?}",
        started.elapsed()
    );
    let deletes = env
        .mutations()
        .iter()
        .filter(|r| r.method == "DELETE")
        .count();
    assert_eq!(deletes, 4);
}
