//! The Cloud Storage client against the emulator's Storage API (and, for answers the emulator
//! never gives, a scripted server): every operation, precondition races, retries, the lost
//! answer of a write, and the errors' wording.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::http::StatusCode;
use axum::response::IntoResponse;
use clusterform_emulator::{EmulatorOptions, FaultSpec};
use clusterform_executor::{Generation, RetryPolicy, StaticToken, StorageClient, StorageError};
use clusterform_testkit::TestEmulator;
use serde_json::json;

use crate::scripted::{Scripted, json};
use crate::support::{TOKEN, client_options, fast_retry};

const BUCKET: &str = "team-infra";
const LOCK: &str = "clusterform/prod/stack.lock";

struct Bench {
    server: TestEmulator,
}

impl Bench {
    async fn start() -> Self {
        let server = TestEmulator::start(EmulatorOptions {
            required_token: Some(TOKEN.to_owned()),
            buckets: vec![BUCKET.to_owned()],
            ..EmulatorOptions::default()
        })
        .await;
        Self { server }
    }

    fn client(&self, bucket: &str) -> StorageClient {
        storage_client(&self.server.base_url(), bucket, fast_retry())
    }

    /// Statuses answered to requests whose method is `method`, in order.
    fn statuses(&self, method: &str) -> Vec<u16> {
        self.server
            .emulator()
            .requests()
            .iter()
            .filter(|request| request.method == method)
            .map(|request| request.status)
            .collect()
    }
}

pub fn storage_client(base_url: &str, bucket: &str, retry: RetryPolicy) -> StorageClient {
    StorageClient::new(
        bucket,
        client_options(base_url, retry),
        Arc::new(StaticToken::new(TOKEN)),
    )
    .unwrap()
}

/// The error's text with the server's address as `[endpoint]`, for snapshots.
fn shown(error: &StorageError, base_url: &str) -> String {
    error.to_string().replace(base_url, "[endpoint]")
}

#[tokio::test]
async fn an_object_goes_through_create_read_replace_and_delete() {
    let bench = Bench::start().await;
    let client = bench.client(BUCKET);
    assert_eq!(client.read(LOCK).await.unwrap(), None);

    let first = client.create_if_absent(LOCK, b"{\"id\":1}").await.unwrap();
    assert_eq!(
        client.read(LOCK).await.unwrap(),
        Some((b"{\"id\":1}".to_vec(), first))
    );
    let second = client.replace_if(LOCK, b"{\"id\":2}", first).await.unwrap();
    assert!(second > first);
    assert_eq!(
        bench.server.emulator().object(BUCKET, LOCK),
        Some((b"{\"id\":2}".to_vec(), second.get()))
    );
    client.delete_if(LOCK, second).await.unwrap();
    assert_eq!(client.read(LOCK).await.unwrap(), None);

    let paths: Vec<String> = bench
        .server
        .emulator()
        .requests()
        .iter()
        .map(|request| format!("{} {}", request.method, request.path))
        .collect();
    assert!(
        paths.contains(
            &"DELETE /storage/v1/b/team-infra/o/clusterform%2Fprod%2Fstack.lock".to_owned()
        ),
        "{paths:?}"
    );
}

#[tokio::test]
async fn of_two_machines_creating_one_lock_exactly_one_wins() {
    let bench = Bench::start().await;
    let (first, second) = (bench.client(BUCKET), bench.client(BUCKET));
    let mut refusals = Vec::new();
    for round in 0..10 {
        let (a, b) = tokio::join!(
            first.create_if_absent(LOCK, b"first"),
            second.create_if_absent(LOCK, b"second"),
        );
        let (winner, loser) = match (a, b) {
            (Ok(generation), Err(error)) | (Err(error), Ok(generation)) => (generation, error),
            other => panic!("round {round}: {other:?}"),
        };
        refusals.push(loser.to_string());
        first.delete_if(LOCK, winner).await.unwrap();
    }
    refusals.dedup();
    insta::assert_snapshot!(refusals.join("\n"), @"gs://team-infra/clusterform/prod/stack.lock: precondition failed: the object already exists");
    let uploads = bench.statuses("POST");
    assert_eq!(uploads.iter().filter(|status| **status == 412).count(), 10);
    assert_eq!(uploads.len(), 20, "a 412 is never retried: {uploads:?}");
}

#[tokio::test]
async fn a_stale_generation_neither_replaces_nor_deletes() {
    let bench = Bench::start().await;
    let client = bench.client(BUCKET);
    let stale = client.create_if_absent(LOCK, b"v1").await.unwrap();
    let live = client.replace_if(LOCK, b"v2", stale).await.unwrap();

    let error = client.replace_if(LOCK, b"v3", stale).await.unwrap_err();
    assert!(
        matches!(&error, StorageError::PreconditionFailed { expected: Some(g), .. } if *g == stale),
        "{error:?}"
    );
    let shown = error.to_string().replace(&stale.to_string(), "[stale]");
    insta::assert_snapshot!(shown, @"gs://team-infra/clusterform/prod/stack.lock: precondition failed: the live object is not generation [stale] (it was replaced or deleted)");
    let error = client.delete_if(LOCK, stale).await.unwrap_err();
    assert!(
        matches!(error, StorageError::PreconditionFailed { .. }),
        "{error:?}"
    );
    assert_eq!(
        client.read(LOCK).await.unwrap(),
        Some((b"v2".to_vec(), live))
    );
}

#[tokio::test]
async fn deleting_an_object_that_is_gone_is_done() {
    let bench = Bench::start().await;
    let client = bench.client(BUCKET);
    let generation = client.create_if_absent(LOCK, b"x").await.unwrap();
    client.delete_if(LOCK, generation).await.unwrap();
    client.delete_if(LOCK, generation).await.unwrap();
}

#[tokio::test]
async fn a_missing_bucket_and_a_403_say_which_bucket_and_object() {
    let bench = Bench::start().await;
    let missing = bench.client("no-such-bucket");
    let error = missing.read(LOCK).await.unwrap_err();
    insta::assert_snapshot!(error.to_string(), @"gs://no-such-bucket/clusterform/prod/stack.lock: the bucket `no-such-bucket` does not exist");
    let error = missing.create_if_absent(LOCK, b"x").await.unwrap_err();
    assert!(
        matches!(error, StorageError::BucketNotFound { .. }),
        "{error:?}"
    );
    let error = missing
        .delete_if(LOCK, Generation::new(1).unwrap())
        .await
        .unwrap_err();
    assert!(
        matches!(error, StorageError::BucketNotFound { .. }),
        "{error:?}"
    );

    bench.server.emulator().set_bucket_forbidden(BUCKET, true);
    let error = bench
        .client(BUCKET)
        .create_if_absent(LOCK, b"x")
        .await
        .unwrap_err();
    insta::assert_snapshot!(error.to_string(), @"gs://team-infra/clusterform/prod/stack.lock: permission denied: The caller does not have storage.objects.create access to the Google Cloud Storage object. Permission 'storage.objects.create' denied on resource (or it may not exist).");
    assert_eq!(bench.statuses("POST"), [404, 403], "neither is retried");
}

#[tokio::test]
async fn unavailable_and_rate_limited_answers_are_retried() {
    let bench = Bench::start().await;
    bench
        .server
        .emulator()
        .set_faults("503=0.3,429=0.2,seed=11".parse::<FaultSpec>().unwrap());
    let client = bench.client(BUCKET);
    let mut generation = client.create_if_absent(LOCK, b"0").await.unwrap();
    for round in 1..8 {
        let content = round.to_string();
        generation = client
            .replace_if(LOCK, content.as_bytes(), generation)
            .await
            .unwrap();
        let (read, read_generation) = client.read(LOCK).await.unwrap().unwrap();
        assert_eq!((read, read_generation), (content.into_bytes(), generation));
    }
    client.delete_if(LOCK, generation).await.unwrap();
    let statuses: Vec<u16> = bench
        .server
        .emulator()
        .requests()
        .iter()
        .map(|r| r.status)
        .collect();
    assert!(
        statuses.contains(&503) && statuses.contains(&429),
        "{statuses:?}"
    );
    assert!(!statuses.contains(&412), "{statuses:?}");
}

#[tokio::test]
async fn an_unreachable_server_is_a_transport_error_naming_the_object() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let retry = RetryPolicy {
        max_attempts: 2,
        ..fast_retry()
    };
    let error = storage_client(&base_url, BUCKET, retry)
        .read(LOCK)
        .await
        .unwrap_err();
    assert!(matches!(error, StorageError::Transport { .. }), "{error:?}");
    let shown = shown(&error, &base_url);
    assert!(
        shown.starts_with("gs://team-infra/clusterform/prod/stack.lock: GET [endpoint]/storage/v1/b/team-infra/o/clusterform%2Fprod%2Fstack.lock?alt=media got no answer: "),
        "{shown}"
    );
}

/// A server that answers the first upload with `500` although it stored the object, the
/// second with `412`, and reads with `live` at generation 42.
async fn lost_answer_server(live: &'static str) -> Scripted {
    let uploads = AtomicUsize::new(0);
    Scripted::start(move |seen, _| {
        if seen.method == "POST" {
            let status = match uploads.fetch_add(1, Ordering::SeqCst) {
                0 => StatusCode::INTERNAL_SERVER_ERROR,
                _ => StatusCode::PRECONDITION_FAILED,
            };
            let body = json!({"error": {"code": status.as_u16(), "message": "no"}});
            (status, axum::Json(body)).into_response()
        } else {
            (StatusCode::OK, [("x-goog-generation", "42")], live).into_response()
        }
    })
    .await
}

#[tokio::test]
async fn a_write_that_lost_its_answer_is_recognised_by_its_content() {
    let server = lost_answer_server("ours").await;
    let client = storage_client(server.base_url(), BUCKET, fast_retry());
    assert_eq!(
        client.create_if_absent(LOCK, b"ours").await.unwrap(),
        Generation::new(42).unwrap()
    );

    let server = lost_answer_server("theirs").await;
    let client = storage_client(server.base_url(), BUCKET, fast_retry());
    let error = client.create_if_absent(LOCK, b"ours").await.unwrap_err();
    assert!(
        matches!(
            error,
            StorageError::PreconditionFailed { expected: None, .. }
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn answers_without_a_generation_are_refused() {
    let server = Scripted::start(|seen, _| {
        if seen.method == "POST" {
            json(json!({"name": LOCK}))
        } else {
            (StatusCode::OK, "content without a generation").into_response()
        }
    })
    .await;
    let client = storage_client(server.base_url(), BUCKET, fast_retry());
    let error = client.create_if_absent(LOCK, b"x").await.unwrap_err();
    insta::assert_snapshot!(shown(&error, server.base_url()), @r#"gs://team-infra/clusterform/prod/stack.lock: POST [endpoint]/upload/storage/v1/b/team-infra/o?uploadType=media&name=clusterform%2Fprod%2Fstack.lock&ifGenerationMatch=0 answered something unusable: no usable generation in {"name":"clusterform/prod/stack.lock"}"#);
    let error = client.read(LOCK).await.unwrap_err();
    insta::assert_snapshot!(shown(&error, server.base_url()), @"gs://team-infra/clusterform/prod/stack.lock: GET [endpoint]/storage/v1/b/team-infra/o/clusterform%2Fprod%2Fstack.lock?alt=media answered something unusable: no usable x-goog-generation header");
}

#[tokio::test]
async fn a_lock_create_refused_for_rate_is_answered_at_once() {
    let server = Scripted::start(|_, _| {
        let body = json!({"error": {"code": 429, "message": "rate"}});
        (StatusCode::TOO_MANY_REQUESTS, axum::Json(body)).into_response()
    })
    .await;
    let client = storage_client(server.base_url(), BUCKET, fast_retry());
    let error = client.take_if_absent(LOCK, b"ours").await.unwrap_err();
    assert!(error.is_rate_limited(), "{error:?}");
    assert_eq!(server.requests().len(), 1, "no retry of a 429");
}

#[tokio::test]
async fn a_lock_create_that_lost_its_answer_and_meets_the_rate_limit_is_recognised() {
    let uploads = AtomicUsize::new(0);
    let server = Scripted::start(move |seen, _| {
        if seen.method == "POST" {
            let status = match uploads.fetch_add(1, Ordering::SeqCst) {
                0 => StatusCode::INTERNAL_SERVER_ERROR,
                _ => StatusCode::TOO_MANY_REQUESTS,
            };
            let body = json!({"error": {"code": status.as_u16(), "message": "no"}});
            (status, axum::Json(body)).into_response()
        } else {
            (StatusCode::OK, [("x-goog-generation", "42")], "ours").into_response()
        }
    })
    .await;
    let client = storage_client(server.base_url(), BUCKET, fast_retry());
    assert_eq!(
        client.take_if_absent(LOCK, b"ours").await.unwrap(),
        Generation::new(42).unwrap()
    );
}
