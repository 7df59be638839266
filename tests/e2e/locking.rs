//! The run lock between two processes: the second run is refused at once, naming the holder,
//! or with `--lock-timeout` waits for the first to finish and then proceeds.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use clusterform_executor::{LockInfo, RunLock};

use crate::support::{ClusterSpec, Env, Transcript, assert_succeeded, config};

/// Waits until the run lock's record names a holder (the first run has taken the lock);
/// answers its record.
fn wait_for_holder(dir: &Path) -> LockInfo {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(info) = RunLock::holder(dir) {
            return info;
        }
        assert!(
            Instant::now() < deadline,
            "the first run never took the lock"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The transcript of `output` with the holder's `user@host` as `[WHO]`, its process ID as
/// `[HOLDER PID]` and its lock ID as `[LOCK ID]` (the refusals show neither the directory nor
/// the endpoint).
fn transcript_of(output: &Output, holder: &LockInfo) -> Transcript {
    Transcript::of(output, |text| {
        text.replace(&holder.who, "[WHO]")
            .replace(&format!("(pid {})", holder.pid), "(pid [HOLDER PID])")
            .replace(&holder.id, "[LOCK ID]")
    })
}

#[test]
fn a_second_run_names_the_holder_or_waits_for_it_with_a_lock_timeout() {
    let env = Env::new(4_000);
    env.write_config(&config(&[ClusterSpec::default()]));
    let first = env.spawn(&["apply", "--auto-approve"], &[]);
    let holder = wait_for_holder(env.path());
    assert_eq!(holder.pid, first.id());

    let refused = env.run(&["apply", "--auto-approve"]);
    insta::assert_snapshot!(transcript_of(&refused, &holder), @"
    [stderr]
    Error: the stack is locked by [WHO] (pid [HOLDER PID]) running `apply` since [TIME] (lock ID [LOCK ID])
      hint: wait for the other run to finish (`--lock-timeout 10m` waits for it); the lock is released when it exits
    [exit status: 1]
    ");

    let waited = env.run(&["apply", "--auto-approve", "--lock-timeout", "30s"]);
    let first = first.wait_with_output().unwrap();
    assert_succeeded(&first);
    // The second run planned after the first.
    insta::assert_snapshot!(transcript_of(&waited, &holder), @"
    No changes. Your clusters match the configuration.
    [stderr]
    Waiting up to 30s for the lock, held by [WHO] (pid [HOLDER PID]) running `apply` since [TIME] (lock ID [LOCK ID])…
    ");
    assert_eq!(env.mutations().len(), 1, "one create, from the first run");
}
