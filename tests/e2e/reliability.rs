//! Injected faults: 503 and 429 answers are retried, a failing operation is reported with
//! exit 1 while other clusters still finish.

use crate::support::{
    ClusterSpec, Env, apply_ok, cluster_name, config, created_attributes_elided,
    failure_seconds_hidden,
};

#[test]
fn transient_errors_are_survived() {
    let env = Env::new(100);
    // The cluster's region only: 70 % of faults in all twelve regions' Lists would exhaust
    // some List's retries, which is not what this test is about.
    env.emulator().set_faults(
        "503=0.4,429=0.3,retry-after=0,seed=5,location=us-central1"
            .parse()
            .unwrap(),
    );
    apply_ok(&env, &[ClusterSpec::default()]);
    let statuses: Vec<u16> = env.emulator().requests().iter().map(|r| r.status).collect();
    assert!(
        statuses.contains(&503) || statuses.contains(&429),
        "{statuses:?}"
    );
    assert!(env.emulator().cluster(&cluster_name("train01")).is_some());
}

#[test]
fn a_failing_operation_exits_one_with_the_services_error_and_its_hint() {
    let env = Env::new(100);
    env.emulator()
        .set_faults("opfail=1.0,seed=3".parse().unwrap());
    env.write_config(&config(&[ClusterSpec::default()]));
    insta::assert_snapshot!(
        env.transcript(&["apply", "--auto-approve"])
            .normalized_with(created_attributes_elided)
            .normalized_with(failure_seconds_hidden),
        @r#"
    clusterform will perform the following actions:

      # train01 will be created
      + cluster "train01" { … }

    Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.
    [stderr]
    [HH:MM:SS] train01: creating… [Ns]
    [HH:MM:SS] train01: create request accepted [Ns]
    [HH:MM:SS] train01: FAILED after [N]s: projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01: operation projects/253589482369/locations/us-central1/operations/1 failed: INTERNAL: The operation failed (injected by the emulator's opfail fault).
    Error: Creation of cluster train01 failed: projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01: operation projects/253589482369/locations/us-central1/operations/1 failed: INTERNAL: The operation failed (injected by the emulator's opfail fault).
      hint: the service failed on its side (INTERNAL), not because of the configuration: run `clusterform apply` again (what finished is not redone); if it fails again, see `clusterform status --target train01` and give Google Cloud support the operation projects/253589482369/locations/us-central1/operations/1
    Error: 1 of 1 actions failed
      hint: fix the cause above and run `clusterform apply` again; finished clusters are not touched twice
    [exit status: 1]
    "#
    );
}
