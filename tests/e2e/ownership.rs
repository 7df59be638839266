//! What is not provably ours is never touched: `removed` releases a cluster without deleting
//! it, a destroy interrupted at any point is finished by a re-run without a second DELETE, and
//! a broken cluster is replaced (or, protected, stops the plan) instead of passing as healthy.

use std::path::Path;
use std::time::{Duration, Instant};

use clusterform_emulator::FaultSpec;

use crate::support::{
    ClusterSpec, Env, PROVIDER, apply_ok, assert_succeeded, cluster_hcl, cluster_name, stderr,
    stdout,
};

/// How many mutating requests of `method` (POST: creates) the API received.
fn sent(env: &Env, method: &str) -> usize {
    env.mutations()
        .iter()
        .filter(|r| r.method == method)
        .count()
}

fn deletes(env: &Env) -> usize {
    sent(env, "DELETE")
}

#[test]
fn a_removed_block_releases_the_cluster_without_deleting_it() {
    let env = Env::new(100);
    let kept = ClusterSpec::default();
    let released = ClusterSpec {
        id: "old01",
        ..ClusterSpec::default()
    };
    apply_ok(&env, &[kept.clone(), released]);
    env.write_config(&format!(
        "{PROVIDER}{}\nremoved {{\n  cluster = \"old01\"\n}}\n",
        cluster_hcl(&kept)
    ));

    let plan = env.run(&["plan"]);
    let text = stdout(&plan);
    assert!(plan.status.success(), "{}", stderr(&plan));
    assert!(
        text.contains("# old01 will no longer be managed (not destroyed)"),
        "{text}"
    );
    assert!(text.contains("0 to destroy, 1 to release."), "{text}");

    let apply = env.run(&["apply", "--auto-approve"]);
    assert!(apply.status.success(), "{}", stderr(&apply));
    assert!(stderr(&apply).contains("1 released"), "{}", stderr(&apply));
    assert_eq!(deletes(&env), 0);
    let old = env
        .emulator()
        .cluster(&cluster_name("old01"))
        .expect("still there");
    assert_eq!(
        old["labels"],
        serde_json::json!({"team": "ml"}),
        "only the ownership label went"
    );

    env.write_config(&format!("{PROVIDER}{}", cluster_hcl(&kept)));
    let after = env.run(&["plan"]);
    assert!(stdout(&after).contains("No changes."), "{}", stdout(&after));
}

/// Runs the binary with `args` and kills it (SIGKILL, as a crash would) once it has journaled
/// an operation.
#[cfg(unix)]
fn crash_once_journaled(env: &Env, args: &[&str]) {
    let journal = env.journal_path();
    let mut child = env.spawn(args, &[]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !journal_mentions_an_operation(&journal) {
        assert!(Instant::now() < deadline, "no operation was ever journaled");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[cfg(unix)]
fn crash_a_destroy(env: &Env) {
    crash_once_journaled(env, &["destroy", "--auto-approve"]);
    assert_eq!(deletes(env), 1);
}

fn journal_mentions_an_operation(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|text| text.contains("/operations/"))
}

#[test]
#[cfg(unix)]
fn a_crashed_destroy_is_finished_by_a_rerun_without_a_second_delete() {
    let env = Env::new(2_000);
    apply_ok(&env, &[ClusterSpec::default()]);
    crash_a_destroy(&env);

    let rerun = env.run(&["destroy", "--auto-approve"]);
    assert_succeeded(&rerun);
    assert_eq!(
        deletes(&env),
        1,
        "the journaled delete was awaited, not sent again"
    );
    assert!(env.emulator().cluster(&cluster_name("train01")).is_none());
}

#[test]
#[cfg(unix)]
fn a_deletion_the_journal_lost_is_named_by_plan_and_awaited_by_destroy() {
    let env = Env::new(3_000);
    apply_ok(&env, &[ClusterSpec::default()]);
    crash_a_destroy(&env);
    // The crash came before the journal reached the disk: nothing records the operation.
    std::fs::remove_file(env.journal_path()).unwrap();

    let plan = env.run(&["plan"]);
    let text = stdout(&plan);
    assert!(
        text.contains("# train01 is being deleted; it will be created again once it is gone"),
        "{text}"
    );
    assert!(!text.contains("No changes."), "{text}");

    let rerun = env.run(&["destroy", "--auto-approve"]);
    let out = stdout(&rerun);
    assert!(rerun.status.success(), "{out}{}", stderr(&rerun));
    assert!(
        out.contains("is being deleted already; apply waits until it is gone"),
        "{out}"
    );
    assert_eq!(deletes(&env), 1, "no second DELETE");
    assert!(env.emulator().cluster(&cluster_name("train01")).is_none());
}

fn creates(env: &Env) -> usize {
    sent(env, "POST")
}

#[test]
fn a_cluster_our_failed_create_left_in_error_is_replaced() {
    let env = Env::new(100);
    env.emulator().set_faults(FaultSpec {
        operation_failure_rate: 1.0,
        ..FaultSpec::default()
    });
    env.write_config(&crate::support::config(&[ClusterSpec::default()]));
    let failed = env.run(&["apply", "--auto-approve"]);
    assert_eq!(failed.status.code(), Some(1), "{}", stdout(&failed));
    env.emulator().set_faults(FaultSpec::default());

    let plan = env.run(&["plan", "--detailed-exitcode"]);
    let text = stdout(&plan);
    assert_eq!(plan.status.code(), Some(2), "{text}{}", stderr(&plan));
    assert!(text.contains("# train01 is in ERROR ("), "{text}");
    assert!(text.contains("it will be replaced"), "{text}");
    assert!(text.contains("1 to replace"), "{text}");

    let apply = env.run(&["apply", "--auto-approve"]);
    assert_succeeded(&apply);
    assert_eq!((creates(&env), deletes(&env)), (2, 1));
    let live = env.emulator().cluster(&cluster_name("train01")).unwrap();
    assert_eq!(live["clusterStatus"]["state"], "RUNNING");
    assert!(stdout(&env.run(&["plan"])).contains("No changes."));
}

#[test]
fn a_broken_cluster_under_prevent_destroy_stops_the_plan() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::protected()]);
    let broken = env.emulator().set_cluster_status(
        &cluster_name("train01"),
        "ERROR",
        Some("boot disk corrupted"),
    );
    assert!(broken);
    let plan = env.run(&["plan"]);
    assert_eq!(plan.status.code(), Some(1));
    let err = stderr(&plan);
    assert!(err.contains("is in ERROR (boot disk corrupted"), "{err}");
    assert!(err.contains("prevent_destroy"), "{err}");
    let apply = env.run(&["apply", "--auto-approve"]);
    assert_eq!(apply.status.code(), Some(1));
    assert_eq!(deletes(&env), 0);
}

#[test]
fn plan_names_a_journal_entry_it_cannot_use() {
    let env = Env::new(100);
    apply_ok(&env, &[ClusterSpec::default()]);
    env.write_unusable_journal_entry();

    let plan = env.run(&["plan"]);
    let err = stderr(&plan);
    assert!(plan.status.success(), "{err}");
    assert!(err.contains("entry 1 of"), "{err}");
    assert!(err.contains("journal.json"), "{err}");
    assert!(err.contains("cluster train01"), "{err}");
}

#[test]
#[cfg(unix)]
fn an_update_whose_journal_entry_was_lost_is_not_sent_twice() {
    let env = Env::new(2_500);
    apply_ok(&env, &[ClusterSpec::default()]);
    let bigger = ClusterSpec {
        max_nodes: 6,
        ..ClusterSpec::default()
    };
    env.write_config(&crate::support::config(&[bigger]));
    crash_once_journaled(&env, &["apply", "--auto-approve"]);
    // The crash came before the journal reached the disk.
    std::fs::remove_file(env.journal_path()).unwrap();
    assert_eq!(sent(&env, "PATCH"), 1);

    let rerun = env.run(&["apply", "--auto-approve"]);
    assert_succeeded(&rerun);
    assert_eq!(
        sent(&env, "PATCH"),
        1,
        "the PATCH in flight was waited for, not sent again"
    );
    assert!(stdout(&rerun).contains("No changes."), "{}", stdout(&rerun));
    let live = env.emulator().cluster(&cluster_name("train01")).unwrap();
    let cpu = live["nodePools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "cpu")
        .unwrap()
        .clone();
    assert_eq!(
        cpu["scalingSpec"]["maxNodeCount"]
            .to_string()
            .trim_matches('"'),
        "6"
    );
}
