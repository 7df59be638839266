//! Faults under load: 50 clusters are created, updated and deleted against an emulator that
//! answers 20 % of requests with 503, 5 % with 429 (`Retry-After: 0`) and drops 5 % of
//! connections, and delays each request by 0–200 ms, with a fixed seed.
//! Every phase must end with the clusters matching the configuration, no cluster created
//! twice, and one `-v` "retrying" line for every injected fault the binary retried.

use std::collections::BTreeMap;
use std::time::Duration;

use clusterform_emulator::{EmulatorOptions, RecordedRequest};

use crate::support::{Env, TOKEN, created_id, fleet_config, stderr};

const CLUSTERS: usize = 50;

/// An apply that meets more than `max_attempts` faults on one request fails (as it should);
/// the next run picks up where it stopped, so a phase gets a few runs.
const RUNS_PER_PHASE: usize = 4;

fn fleet(max_nodes: u32) -> Vec<(String, u32)> {
    (0..CLUSTERS)
        .map(|n| (format!("c{n:02}"), max_nodes))
        .collect()
}

/// The answers that were injected faults: 503, 429, or a dropped connection (logged as 0).
/// Slurm calls are left out: the plan asks Slurm once, without retries, and shows "unknown".
fn injected_faults(requests: &[RecordedRequest]) -> usize {
    requests
        .iter()
        .filter(|r| matches!(r.status, 0 | 429 | 503))
        .filter(|r| !r.path.ends_with(":callSlurmRestApi"))
        .count()
}

/// How a run's log accounts for retried requests: one "retrying" line per retry, and one
/// "polling instead" line when `:wait` gave up after its own retries. Slurm reads are left out,
/// as by `injected_faults`: one that fails on every attempt is an "unknown", not an error,
/// so its faults need not all be retried.
fn logged_retries(log: &str) -> usize {
    log.lines()
        .filter(|line| !line.contains(":callSlurmRestApi"))
        .filter(|line| line.contains("retrying") || line.contains("polling instead"))
        .count()
}

/// Runs `args` (with `-v`) until it succeeds, checking after each run that every injected
/// fault left a line in the log. Returns how many faults the phase met.
fn run_until_ok(env: &Env, args: &[&str]) -> usize {
    let mut faults = 0;
    for _ in 0..RUNS_PER_PHASE {
        let seen = env.emulator().requests().len();
        let output = env.run(args);
        let requests = env.emulator().requests();
        let injected = injected_faults(&requests[seen..]);
        let log = stderr(&output);
        let logged = logged_retries(&log);
        faults += injected;
        if output.status.success() {
            assert_eq!(
                logged, injected,
                "every fault was retried and logged:\n{log}"
            );
            return faults;
        }
        // A request that met a fault on every attempt is reported as an error, not retried;
        // nothing else may fail.
        let errors: Vec<&str> = log
            .lines()
            .filter(|line| line.starts_with("Error: ") && !line.contains(" actions failed"))
            .collect();
        assert!(
            !errors.is_empty()
                && errors
                    .iter()
                    .all(|e| e.contains("Injected fault") || e.contains("got no answer")),
            "{log}"
        );
        assert!(
            logged <= injected && logged > 0,
            "{logged} of {injected}:\n{log}"
        );
    }
    panic!("{args:?} did not succeed in {RUNS_PER_PHASE} runs");
}

fn creates_per_cluster(requests: &[RecordedRequest]) -> BTreeMap<String, (usize, usize)> {
    let mut counts: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for request in requests.iter().filter(|r| r.method == "POST") {
        let Some(id) = created_id(request) else {
            continue;
        };
        let entry = counts.entry(id).or_default();
        match request.status {
            200 => entry.0 += 1,
            409 => entry.1 += 1,
            _ => {}
        }
    }
    counts
}

fn assert_no_changes(env: &Env) {
    env.emulator().set_faults(Default::default());
    // Every phase ends with the same plan.
    insta::allow_duplicates! {
        insta::assert_snapshot!(env.transcript(&["plan", "--detailed-exitcode"]), @"No changes. Your clusters match the configuration.");
    }
}

fn live_max_nodes(env: &Env, id: &str) -> Option<u64> {
    let cluster = env.emulator().cluster(&crate::support::cluster_name(id))?;
    cluster["nodePools"]
        .as_array()?
        .iter()
        .find(|pool| pool["id"] == "cpu")
        // int64 fields travel as JSON strings.
        .and_then(|pool| pool["scalingSpec"]["maxNodeCount"].as_str()?.parse().ok())
}

#[test]
fn fifty_clusters_survive_errors_drops_and_rate_limits() {
    let env = Env::with_options(EmulatorOptions {
        operation_duration: Duration::from_millis(50),
        required_token: Some(TOKEN.to_owned()),
        project_numbers: true,
        ..EmulatorOptions::default()
    });
    let faults = "503=0.2,429=0.05,retry-after=0,drop=0.05,jitter-ms=200,seed=12";
    let mut met = Vec::new();
    for (phase, clusters) in [
        ("create", fleet(4)),
        ("update", fleet(6)),
        ("delete", vec![]),
    ] {
        env.write_config(&fleet_config(&clusters));
        env.emulator().set_faults(faults.parse().unwrap());
        // The delete phase's Slurm reads meet the faults too: a cluster whose jobs cannot be
        // read is not deleted unattended without --allow-disruption (tested in disruption.rs).
        met.push((
            phase,
            run_until_ok(
                &env,
                &["apply", "--auto-approve", "--allow-disruption", "-v"],
            ),
        ));
        assert_no_changes(&env);
        for (id, max_nodes) in &clusters {
            assert_eq!(
                live_max_nodes(&env, id),
                Some(u64::from(*max_nodes)),
                "{id}"
            );
        }
    }
    for n in 0..CLUSTERS {
        assert!(
            env.emulator()
                .cluster(&crate::support::cluster_name(&format!("c{n:02}")))
                .is_none()
        );
    }
    let creates = creates_per_cluster(&env.emulator().requests());
    assert_eq!(creates.len(), CLUSTERS);
    for (id, (accepted, conflicts)) in &creates {
        assert_eq!((*accepted, *conflicts), (1, 0), "creates of {id}");
    }
    assert!(met.iter().all(|(_, faults)| *faults > 0), "{met:?}");
}
