//! The run lock between two processes: the second run is refused at once, naming the holder,
//! or with `--lock-timeout` waits for the first to finish and then proceeds.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::{ClusterSpec, Env, assert_succeeded, config, stderr, stdout};

/// Waits until the run lock's record names a holder (the first run has taken the lock).
fn wait_for_holder(dir: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while clusterform_executor::RunLock::holder(dir).is_none() {
        assert!(
            Instant::now() < deadline,
            "the first run never took the lock"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_second_run_names_the_holder_or_waits_for_it_with_a_lock_timeout() {
    let env = Env::new(4_000);
    env.write_config(&config(&[ClusterSpec::default()]));
    let first = env.spawn(&["apply", "--auto-approve"], &[]);
    wait_for_holder(env.path());

    let refused = env.run(&["apply", "--auto-approve"]);
    assert_eq!(refused.status.code(), Some(1));
    let message = stderr(&refused);
    assert!(message.contains("the stack is locked by "), "{message}");
    assert!(
        message.contains(&format!("(pid {}) running `apply` since ", first.id())),
        "{message}"
    );
    assert!(message.contains("(lock ID "), "{message}");
    assert!(message.contains("--lock-timeout"), "the hint: {message}");

    let waited = env.run(&["apply", "--auto-approve", "--lock-timeout", "30s"]);
    let first = first.wait_with_output().unwrap();
    assert_succeeded(&first);
    assert_succeeded(&waited);
    let said = format!("{}{}", stdout(&waited), stderr(&waited));
    assert!(
        said.contains("Waiting up to 30s for the lock, held by "),
        "{said}"
    );
    assert!(
        said.contains("No changes"),
        "the second run planned after the first: {said}"
    );
    assert_eq!(env.mutations().len(), 1, "one create, from the first run");
}
