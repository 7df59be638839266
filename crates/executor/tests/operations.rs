//! Waiting for operations: `:wait`, the polling fallback, not-yet-visible operations, timeouts.

use std::time::Duration;

use clusterform_executor::{
    ExecError, OperationWaiter, RetryPolicy, Submitted, TransportError, WaitOptions,
};

use crate::proxy::{Mischief, Proxy, Rule, is_wait};
use crate::support::*;

async fn start_create(h: &Harness) -> String {
    match h.client.send(&create_request("train01")).await.unwrap() {
        Submitted::Operation(op) => op.name,
        other => panic!("expected an operation, got {other:?}"),
    }
}

#[tokio::test]
async fn long_poll_notices_completion_in_one_call() {
    let h = Harness::start(Duration::from_millis(200)).await;
    let name = start_create(&h).await;
    let waiter = OperationWaiter::new(&h.client, fast_wait());
    let done = waiter
        .wait(&name, Duration::from_secs(10), async |_| {})
        .await
        .unwrap();
    assert!(done.done && done.error.is_none());
    assert_eq!(h.count("POST", ":wait"), 1);
    assert_eq!(h.count("GET", &name), 0, "no polling while :wait works");
}

#[tokio::test]
async fn the_next_wait_is_in_flight_while_a_pending_answer_is_reported() {
    // The operation outlives the first `:wait` (1 s, the shortest the waiter asks for); the
    // report of that pending answer never finishes. Waiting for the report before asking again
    // would never notice the end; asking beside it notices it with the second `:wait`.
    let h = Harness::start(Duration::from_millis(1_500)).await;
    let name = start_create(&h).await;
    let waiter = OperationWaiter::new(
        &h.client,
        WaitOptions {
            long_poll: Duration::from_secs(1),
            ..fast_wait()
        },
    );
    let mut reports = 0;
    let done = waiter
        .wait(&name, Duration::from_secs(10), async |_| {
            reports += 1;
            std::future::pending::<()>().await;
        })
        .await
        .unwrap();
    assert!(done.done && done.error.is_none());
    assert_eq!(reports, 1, "the one pending answer was reported");
    assert_eq!(h.count("POST", ":wait"), 2);
}

#[tokio::test]
async fn unimplemented_wait_falls_back_to_polling() {
    let h = Harness::start(Duration::from_millis(150)).await;
    h.emulator.set_wait_unimplemented(true);
    let name = start_create(&h).await;
    let waiter = OperationWaiter::new(&h.client, fast_wait());
    let mut pending_reports = 0;
    let done = waiter
        .wait(&name, Duration::from_secs(10), async |_| {
            pending_reports += 1;
        })
        .await
        .unwrap();
    assert!(done.done);
    assert_eq!(
        h.statuses("POST", ":wait"),
        vec![501],
        "one :wait, then GETs only"
    );
    let polls = h.count("GET", &name);
    assert!(polls >= 2, "polled {polls} times");
    assert_eq!(pending_reports, polls - 1);
}

#[tokio::test]
async fn an_unknown_operation_is_not_found_after_the_grace_period() {
    let h = Harness::start(Duration::from_millis(50)).await;
    let name = "projects/123456789012/locations/us-central1/operations/424242";
    let waiter = OperationWaiter::new(
        &h.client,
        WaitOptions {
            not_found_grace: Duration::from_millis(200),
            ..fast_wait()
        },
    );
    let err = waiter
        .wait(name, Duration::from_secs(10), async |_| {})
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
    assert!(
        h.emulator.requests().len() >= 3,
        "retried during the grace period"
    );
}

#[tokio::test]
async fn waiting_ends_at_the_timeout() {
    let h = Harness::start(Duration::from_secs(30)).await;
    let name = start_create(&h).await;
    let waiter = OperationWaiter::new(&h.client, fast_wait());
    let err = waiter
        .wait(&name, Duration::from_millis(300), async |_| {})
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Timeout { .. }), "{err}");
    assert!(err.to_string().contains(&name), "{err}");
}

#[tokio::test]
async fn operation_names_are_validated_before_use() {
    let h = Harness::start(Duration::from_millis(50)).await;
    let err = h
        .client
        .get_operation("projects/1/locations/us-central1/operations/../../x")
        .await
        .unwrap_err();
    assert!(matches!(err, TransportError::Name(_)), "{err}");
    assert!(h.emulator.requests().is_empty());
}

/// GET requests for operations that reached the emulator.
fn operation_polls(h: &Harness) -> usize {
    h.emulator
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path.contains("/operations/"))
        .count()
}

/// Waits for a fresh create through a proxy whose first `failing` `:wait` requests get
/// `status`, with a client that tries each request twice. Returns the proxy for counting.
async fn wait_through_failing_waits(h: &Harness, status: u16, failing: usize) -> Proxy {
    let name = start_create(h).await;
    let proxy = Proxy::start(
        h.server.base_url(),
        Rule {
            applies_to: is_wait,
            mischief: Mischief::Refuse(status),
            times: failing,
        },
    )
    .await;
    let client = client_for(
        proxy.base_url(),
        RetryPolicy {
            max_attempts: 2,
            ..fast_retry()
        },
    );
    let done = OperationWaiter::new(&client, fast_wait())
        .wait(&name, Duration::from_secs(10), async |_| {})
        .await
        .unwrap();
    assert!(done.done && done.error.is_none(), "{status}: {done:?}");
    proxy
}

#[tokio::test]
async fn wait_failing_three_times_falls_back_to_polling() {
    for status in [500, 503] {
        let h = Harness::start(Duration::from_millis(300)).await;
        let proxy = wait_through_failing_waits(&h, status, 6).await;
        assert_eq!(
            proxy.count("POST", ":wait"),
            6,
            "{status}: three `:wait` calls of two attempts each, then no more"
        );
        assert_eq!(h.count("POST", ":wait"), 0, "{status}");
        let polls = operation_polls(&h);
        assert!(polls >= 1, "{status}: the operation was polled");
    }
}

#[tokio::test]
async fn wait_failing_twice_keeps_long_polling() {
    let h = Harness::start(Duration::from_millis(300)).await;
    let proxy = wait_through_failing_waits(&h, 503, 4).await;
    assert_eq!(
        proxy.count("POST", ":wait"),
        5,
        "two failed calls, then one that worked"
    );
    assert_eq!(h.statuses("POST", ":wait"), vec![200]);
    let polls = operation_polls(&h);
    assert_eq!(polls, 0, "no fallback before the third failure");
}
