//! Injected faults: 503 and 429 answers are retried, a failing operation is reported with
//! exit 1 while other clusters still finish.

use crate::support::{ClusterSpec, Env, apply_ok, cluster_name, config, stderr, stdout};

#[test]
fn transient_errors_are_survived() {
    let env = Env::new(100);
    env.emulator()
        .set_faults("503=0.4,429=0.3,retry-after=0,seed=5".parse().unwrap());
    apply_ok(&env, &[ClusterSpec::default()]);
    let statuses: Vec<u16> = env.emulator().requests().iter().map(|r| r.status).collect();
    assert!(
        statuses.contains(&503) || statuses.contains(&429),
        "{statuses:?}"
    );
    assert!(env.emulator().cluster(&cluster_name("train01")).is_some());
}

#[test]
fn a_failing_operation_exits_one_and_others_finish() {
    let env = Env::new(100);
    env.emulator()
        .set_faults("opfail=1.0,seed=3".parse().unwrap());
    env.write_config(&config(&[ClusterSpec::default()]));
    let output = env.run(&["apply", "--auto-approve"]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let err = stderr(&output);
    assert!(err.contains("train01"), "{err}");
    assert!(err.contains("failed"), "{err}");
}
