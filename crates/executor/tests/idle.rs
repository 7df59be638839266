//! Idle detection through the emulator's Slurm job API.

use std::time::Duration;

use clusterform_executor::{IdleVerdict, inspect_idle};
use serde_json::json;
use time::OffsetDateTime;

use crate::support::*;

#[tokio::test]
async fn every_kind_of_cluster_gets_the_right_verdict() {
    let h = Harness::start(Duration::from_millis(50)).await;
    let now = OffsetDateTime::now_utc() + time::Duration::hours(5);
    let long_ago = (now - time::Duration::hours(4)).unix_timestamp();
    let recently = (now - time::Duration::minutes(10)).unix_timestamp();
    for id in ["running", "pending", "old", "recent", "empty", "unreach"] {
        h.insert(id);
    }
    let jobs = |state: &str, end: i64| {
        vec![
            json!({"job_id": 7, "job_state": [state], "end_time": {"set": true, "infinite": false, "number": end}}),
        ]
    };
    h.emulator
        .set_slurm_jobs(&cluster_name("running"), jobs("RUNNING", 0));
    h.emulator
        .set_slurm_jobs(&cluster_name("pending"), jobs("PENDING", 0));
    h.emulator
        .set_slurm_jobs(&cluster_name("old"), jobs("COMPLETED", long_ago));
    h.emulator
        .set_slurm_jobs(&cluster_name("recent"), jobs("COMPLETED", recently));
    h.emulator
        .set_slurm_unreachable(&cluster_name("unreach"), true);

    let locations = std::collections::BTreeSet::from([(PROJECT.to_owned(), REGION.to_owned())]);
    let clusters = clusterform_executor::refresh(&h.client, &locations, &[])
        .await
        .unwrap();
    let reports = inspect_idle(&h.client, &clusters, Duration::from_secs(2 * 3600), now)
        .await
        .unwrap();
    let verdict = |id: &str| {
        reports
            .iter()
            .find(|r| r.name.cluster_id == id)
            .map(|r| r.verdict.clone())
            .unwrap()
    };
    assert!(
        matches!(verdict("running"), IdleVerdict::Busy(reason) if reason.contains("1 running"))
    );
    assert!(
        matches!(verdict("pending"), IdleVerdict::Busy(reason) if reason.contains("1 pending"))
    );
    assert_eq!(verdict("old"), IdleVerdict::Idle);
    assert!(matches!(verdict("recent"), IdleVerdict::Busy(_)));
    assert_eq!(
        verdict("empty"),
        IdleVerdict::Idle,
        "started 5 hours before `now`, no jobs"
    );
    assert!(
        matches!(verdict("unreach"), IdleVerdict::Unknown(reason) if reason.contains("unreachable"))
    );
    let old = reports.iter().find(|r| r.name.cluster_id == "old").unwrap();
    assert_eq!(old.last_job_end.map(|t| t.unix_timestamp()), Some(long_ago));
    assert_eq!(old.state.as_deref(), Some("RUNNING"));
}
