//! Hostile server answers: a scripted server that lies, loops, floods or redirects. Each case
//! must end in a clear error naming what was asked and where, without a panic, with the number
//! of requests bounded, and with nothing unusable written to the journal.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::http::Method;
use clusterform_executor::{
    ApiClient, ApplyEngine, ApplyReport, BudgetLimit, ClientOptions, ExecError, Journal,
    MAX_ANSWER_BYTES, REFRESH_PAGES, RefreshBudget, StaticToken, Submitted, TransportError,
    refresh,
};
use clusterform_model::rest::ClusterRequest;
use clusterform_model::{Action, RefreshLocations};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::scripted::{Scripted, Seen, cut_short, google_error, json, redirect, text};
use crate::support::*;

const OPERATION: &str = "projects/123456789012/locations/us-central1/operations/777";

fn client_with_cap(server: &Scripted, max_answer_bytes: usize) -> ApiClient {
    client_with_budget(server, max_answer_bytes, RefreshBudget::default())
}

/// A client whose refreshes read at most `refresh_budget`, and each answer at most
/// `max_answer_bytes`.
fn client_with_budget(
    server: &Scripted,
    max_answer_bytes: usize,
    refresh_budget: RefreshBudget,
) -> ApiClient {
    ApiClient::new(
        ClientOptions {
            endpoint: Some(server.base_url().to_owned()),
            request_timeout: Duration::from_secs(10),
            retry: fast_retry(),
            max_answer_bytes,
            refresh_budget,
            ..ClientOptions::default()
        },
        Arc::new(StaticToken::new(TOKEN)),
    )
    .unwrap()
}

fn client(server: &Scripted) -> ApiClient {
    client_with_cap(server, MAX_ANSWER_BYTES)
}

fn running_cluster(id: &str) -> serde_json::Value {
    let mut cluster = cluster_body(id, Some(STACK));
    cluster["name"] = json!(cluster_name(id));
    cluster["clusterStatus"] = json!({"state": "RUNNING"});
    cluster
}

fn pending_operation() -> serde_json::Value {
    json!({"name": OPERATION, "done": false})
}

/// Runs one change against `server` with a journal in `dir`.
async fn apply_one(
    server: &Scripted,
    dir: &std::path::Path,
    action: Action,
    request: ClusterRequest,
) -> ApplyReport {
    let engine = ApplyEngine::new(client(server), Journal::open(dir).unwrap(), 1)
        .with_wait_options(fast_wait());
    let plan = plan(vec![change("train01", action, vec![request])]);
    engine
        .apply(
            &plan,
            Arc::new(RecordingSink::default()),
            CancellationToken::new(),
        )
        .await
}

/// Applies the create of `train01` through `server`.
async fn create_through(server: &Scripted, dir: &std::path::Path) -> ApplyReport {
    apply_one(server, dir, Action::Create, create_request("train01")).await
}

fn the_error(report: &ApplyReport) -> &ExecError {
    assert_eq!(report.outcomes.len(), 1, "{report:?}");
    report.outcomes[0]
        .result
        .as_ref()
        .expect_err("the action must fail")
}

#[tokio::test]
async fn invalid_json_and_html_are_errors_naming_the_url() {
    for body in [
        "{\"name\": ",
        "<html><body>Sign in</body></html>",
        "",
        "null",
    ] {
        let server = Scripted::start(move |_, _| text("text/html", body)).await;
        let err = client(&server)
            .get_cluster(&parsed_name("train01"))
            .await
            .unwrap_err();
        assert!(
            matches!(err, TransportError::Decode { .. }),
            "{body}: {err}"
        );
        assert!(
            err.to_string().contains(
                "/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01"
            ),
            "{err}"
        );
        assert_eq!(
            server.requests().len(),
            1,
            "a bad answer is not asked again"
        );
    }
}

#[tokio::test]
async fn wrong_types_are_errors_naming_the_url() {
    let cases = [
        json!({"modelDevelopmentClusters": {}}),
        json!({"modelDevelopmentClusters": [], "nextPageToken": 5}),
        json!({"modelDevelopmentClusters": [{"nodePools": {"id": "login"}}]}),
        json!({"modelDevelopmentClusters": [{"labels": ["a"]}]}),
        json!({"modelDevelopmentClusters": [{"nodePools": [{"id": "x", "scalingSpec": {"minNodeCount": "many"}}]}]}),
    ];
    for answer in cases {
        let body = answer.clone();
        let server = Scripted::start(move |_, _| json(body.clone())).await;
        let err = client(&server)
            .list_clusters(&location())
            .await
            .unwrap_err();
        assert!(
            matches!(err, TransportError::Decode { .. }),
            "{answer}: {err}"
        );
        assert!(err.to_string().contains(&collection_path()), "{err}");
        assert_eq!(server.requests().len(), 1);
    }
    let server = Scripted::start(|_, _| json(json!({"name": OPERATION, "done": "yes"}))).await;
    let err = client(&server).get_operation(OPERATION).await.unwrap_err();
    assert!(matches!(err, TransportError::Decode { .. }), "{err}");
    assert!(err.to_string().contains(OPERATION), "{err}");
}

/// The next page is asked for before a page's clusters are decoded: a page that then fails to
/// decode still ends the List with its own error, none of its clusters is handed over, and no
/// page after the one already asked for is read.
#[tokio::test]
async fn a_bad_page_with_a_next_page_token_ends_the_list_with_its_error() {
    let page = json!({"modelDevelopmentClusters": [{"labels": ["a"]}], "nextPageToken": "p2"});
    let server = Scripted::start(move |_, _| json(page.clone())).await;
    let mut pages_handed_over = 0;
    let client = client(&server);
    let err = client
        .list_clusters_paged(&location(), &client.refresh_meter(), |_| {
            pages_handed_over += 1;
        })
        .await
        .unwrap_err();
    assert!(matches!(err, TransportError::Decode { .. }), "{err}");
    assert!(err.to_string().contains(&collection_path()), "{err}");
    assert_eq!(pages_handed_over, 0);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let received = server.requests().len();
    assert!(received <= 2, "{received} requests");
}

/// A page's token is followed wherever the page writes it: written first, or with an escape,
/// it is read by skipping over the page's clusters; written last and plain, from the end of the
/// page. Every page is asked for once, and every cluster is handed over.
#[tokio::test]
async fn a_page_token_is_followed_wherever_the_page_writes_it() {
    let server = Scripted::start(|seen, _| {
        let body = match seen.param("pageToken").as_deref() {
            None => r#"{"nextPageToken":"p2","modelDevelopmentClusters":[{"displayName":"a"}]}"#,
            Some("p2") => {
                r#"{"modelDevelopmentClusters":[{"displayName":"b"}],"nextPageToken":"p\u0033"}"#
            }
            Some("p3") => {
                r#"{"modelDevelopmentClusters":[{"displayName":"c"}] , "nextPageToken" : "p4" }"#
            }
            _ => r#"{"modelDevelopmentClusters":[{"displayName":"d"}]}"#,
        };
        text("application/json", body)
    })
    .await;
    let client = client(&server);
    let mut names = Vec::new();
    client
        .list_clusters_paged(&location(), &client.refresh_meter(), |page| {
            names.extend(page.into_iter().filter_map(|c| c.display_name));
        })
        .await
        .unwrap();
    assert_eq!(names, ["a", "b", "c", "d"]);
    let tokens: Vec<Option<String>> = server
        .requests()
        .iter()
        .map(|seen| seen.param("pageToken"))
        .collect();
    assert_eq!(
        tokens,
        [
            None,
            Some("p2".into()),
            Some("p3".into()),
            Some("p4".into())
        ]
    );
}

/// A server that answers every request with 100 MB, 64 KiB at a time.
async fn flooding() -> Scripted {
    Scripted::start(|_, tools| tools.flood(100 * 1000 * 1000, 64 * 1024)).await
}

/// The bytes of flood answers the server handed over, once it has had a moment to notice that
/// the client closed its connections.
async fn streamed_once_closed(server: &Scripted) -> usize {
    tokio::time::sleep(Duration::from_millis(200)).await;
    server.streamed()
}

#[tokio::test]
async fn an_endless_answer_stops_at_the_cap_without_reading_it_all() {
    const CAP: usize = 1 << 20;
    let server = flooding().await;
    let err = client_with_cap(&server, CAP)
        .list_clusters(&location())
        .await
        .unwrap_err();
    assert!(
        matches!(err, TransportError::AnswerTooLarge { limit: CAP, .. }),
        "{err}"
    );
    let message = err.to_string();
    assert!(message.contains(&collection_path()), "{message}");
    assert!(message.contains(&CAP.to_string()), "{message}");
    assert_eq!(server.requests().len(), 1, "a flood is not asked for again");
    // The server stopped early.
    let streamed = streamed_once_closed(&server).await;
    assert!(streamed < 32 * CAP, "{streamed} bytes streamed");
}

#[tokio::test]
async fn the_real_cap_holds_against_a_70_mb_answer() {
    let server =
        Scripted::start(|_, tools| tools.flood(70 * 1000 * 1000 + (1 << 20), 1 << 20)).await;
    let started = std::time::Instant::now();
    let err = client(&server)
        .get_cluster(&parsed_name("train01"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            TransportError::AnswerTooLarge {
                limit: MAX_ANSWER_BYTES,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("67108864 bytes"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn an_oversize_answer_with_a_content_length_is_refused() {
    const CAP: usize = 1 << 20;
    let server = Scripted::start(|_, _| {
        let body = vec![b' '; 2 * CAP];
        axum::response::IntoResponse::into_response((axum::http::StatusCode::OK, body))
    })
    .await;
    let err = client_with_cap(&server, CAP)
        .get_operation(OPERATION)
        .await
        .unwrap_err();
    assert!(
        matches!(err, TransportError::AnswerTooLarge { .. }),
        "{err}"
    );
    assert!(err.to_string().contains(OPERATION), "{err}");
}

#[tokio::test]
async fn a_list_that_never_ends_stops_after_the_page_cap() {
    let server = Scripted::start(|seen: &Seen, _| {
        let page = seen
            .param("pageToken")
            .map_or(0, |t| t.parse::<u64>().unwrap());
        json(json!({"modelDevelopmentClusters": [], "nextPageToken": (page + 1).to_string()}))
    })
    .await;
    let err = client(&server)
        .list_clusters(&location())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, TransportError::RefreshBudgetSpent { spent, .. }
            if spent.limit == BudgetLimit::Pages(REFRESH_PAGES)),
        "{err}"
    );
    assert!(err.to_string().contains(&collection_path()), "{err}");
    // Time for a request beyond the cap to arrive, were one sent ahead (pages are asked for
    // before the previous one is decoded).
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(server.requests().len(), REFRESH_PAGES);
}

#[tokio::test]
async fn a_list_of_many_pages_stops_at_the_total_cap() {
    const TOTAL: usize = 64 * 1024;
    let server = Scripted::start(|seen: &Seen, _| {
        let page = seen
            .param("pageToken")
            .map_or(0, |t| t.parse::<u64>().unwrap());
        let filler = "x".repeat(16 * 1024);
        json(json!({
            "modelDevelopmentClusters": [{"displayName": filler}],
            "nextPageToken": (page + 1).to_string()
        }))
    })
    .await;
    let budget = RefreshBudget {
        answer_bytes: TOTAL,
        ..RefreshBudget::default()
    };
    let err = client_with_budget(&server, MAX_ANSWER_BYTES, budget)
        .list_clusters(&location())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, TransportError::RefreshBudgetSpent { spent, .. }
            if spent.limit == BudgetLimit::AnswerBytes(TOTAL)),
        "{err}"
    );
    assert!(server.requests().len() <= 4, "{}", server.requests().len());
}

#[tokio::test]
async fn any_repeated_page_token_ends_the_list() {
    for (tokens, requests) in [
        (vec!["A", "B"], 3),
        (vec!["A"], 2),
        (vec!["A", "B", "C"], 4),
    ] {
        let cycle = tokens.clone();
        let server = Scripted::start(move |seen: &Seen, _| {
            let next = match seen.param("pageToken") {
                None => cycle[0],
                Some(token) => {
                    let at = cycle.iter().position(|t| *t == token).unwrap();
                    cycle[(at + 1) % cycle.len()]
                }
            };
            json(json!({"modelDevelopmentClusters": [], "nextPageToken": next}))
        })
        .await;
        let err = client(&server)
            .list_clusters(&location())
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("page token \"A\" a second time"),
            "{err}"
        );
        assert_eq!(server.requests().len(), requests, "{tokens:?}");
    }
}

#[tokio::test]
async fn redirects_are_never_followed() {
    let elsewhere = Scripted::start(|_, _| json(json!({}))).await;
    for status in [301, 302, 303, 307, 308] {
        let location = format!("{}/steal?x=1", elsewhere.base_url());
        let target = location.clone();
        let server = Scripted::start(move |_, _| redirect(status, &target)).await;
        let err = client(&server)
            .send(&create_request("train01"))
            .await
            .unwrap_err();
        assert!(
            matches!(err, TransportError::Redirected { status: s, .. } if s == status),
            "{status}: {err}"
        );
        let message = err.to_string();
        assert!(message.contains(&location), "{message}");
        assert!(message.contains(&collection_path()), "{message}");
        assert_eq!(server.requests().len(), 1, "{status}: not retried");
        let err = client(&server)
            .list_clusters(&crate::support::location())
            .await
            .unwrap_err();
        assert!(matches!(err, TransportError::Redirected { .. }), "{err}");
    }
    assert!(
        elsewhere.requests().is_empty(),
        "nothing, and no token, reached the other host"
    );
}

#[tokio::test]
async fn a_success_that_is_not_an_operation_is_an_error_and_nothing_is_journaled() {
    for answer in [
        json!({}),
        json!({"name": ""}),
        json!({"name": "../x"}),
        json!({"name": "https://evil.example/v1/operations/1"}),
        json!({"name": "projects/1/locations/us-central1/operations/../../x", "done": false}),
        json!({"name": OPERATION, "done": 1}),
        json!([]),
    ] {
        let body = answer.clone();
        let server = Scripted::start(move |_, _| json(body.clone())).await;
        let dir = tempfile::tempdir().unwrap();
        let report = create_through(&server, dir.path()).await;
        let err = the_error(&report);
        assert!(
            matches!(
                err,
                ExecError::Transport(TransportError::NotAnOperation { .. })
            ),
            "{answer}: {err}"
        );
        assert!(err.to_string().contains(&cluster_name("train01")), "{err}");
        assert_eq!(server.requests().len(), 1, "{answer}: nothing waited for");
        let journal = Journal::open(dir.path()).expect("the journal stays readable");
        assert!(journal.is_empty(), "{answer}: nothing journaled");
    }
}

#[tokio::test]
async fn done_without_error_or_response_is_not_a_success() {
    // Done in the create's own answer, and done on the first `:wait`.
    for immediately in [true, false] {
        let server = Scripted::start(move |seen: &Seen, _| {
            let done = json!({"name": OPERATION, "done": true});
            if seen.method == Method::POST && !seen.is_operation_poll() && !immediately {
                json(pending_operation())
            } else {
                json(done)
            }
        })
        .await;
        let dir = tempfile::tempdir().unwrap();
        let report = create_through(&server, dir.path()).await;
        let err = the_error(&report);
        assert!(
            matches!(err, ExecError::OperationWithoutResult { .. }),
            "{err}"
        );
        let message = err.to_string();
        assert!(
            message.contains(OPERATION) && message.contains("train01"),
            "{message}"
        );
        assert!(Journal::open(dir.path()).unwrap().is_empty());
        assert!(server.requests().len() <= 2);
    }
}

#[tokio::test]
async fn an_operation_that_never_finishes_times_out_naming_it() {
    let server = Scripted::start(|seen: &Seen, _| {
        if seen.is_operation_poll() {
            json(json!({"name": OPERATION, "metadata": {"progressMessage": "still going"}}))
        } else if seen.method == Method::POST {
            json(pending_operation())
        } else {
            json(running_cluster("train01"))
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut request = change("train01", Action::Create, vec![create_request("train01")]);
    request.timeouts.create = 1;
    let engine = ApplyEngine::new(client(&server), Journal::open(dir.path()).unwrap(), 1)
        .with_wait_options(fast_wait());
    let report = engine
        .apply(
            &plan(vec![request]),
            Arc::new(RecordingSink::default()),
            CancellationToken::new(),
        )
        .await;
    let err = the_error(&report);
    assert!(matches!(err, ExecError::Timeout { .. }), "{err}");
    assert!(err.to_string().contains(OPERATION), "{err}");
    let journal = Journal::open(dir.path()).unwrap();
    assert_eq!(journal.entries().len(), 1, "kept for the next run");
    // Paced by the polling backoff: a 1 s timeout allows a few dozen requests at most.
    assert!(server.requests().len() < 60, "{}", server.requests().len());
}

#[tokio::test]
async fn a_fresh_operation_answering_404_is_waited_for_then_succeeds() {
    let polls = Arc::new(AtomicUsize::new(0));
    let counter = polls.clone();
    let server = Scripted::start(move |seen: &Seen, _| {
        if !seen.is_operation_poll() {
            return json(pending_operation());
        }
        if counter.fetch_add(1, Ordering::SeqCst) < 3 {
            return google_error(404, "NOT_FOUND", "operation not found");
        }
        json(json!({"name": OPERATION, "done": true, "response": running_cluster("train01")}))
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let report = create_through(&server, dir.path()).await;
    assert!(report.is_success(), "{report:?}");
    assert!(report.outcomes[0].live.is_some());
    assert!(polls.load(Ordering::SeqCst) >= 4);
    assert!(Journal::open(dir.path()).unwrap().is_empty());
}

#[tokio::test]
async fn an_interruption_after_a_change_got_no_answer_still_sends_it_again_and_journals_it() {
    let cancel = CancellationToken::new();
    let patches = Arc::new(AtomicUsize::new(0));
    let server = Scripted::start({
        let (cancel, patches) = (cancel.clone(), patches.clone());
        move |seen: &Seen, _| {
            if seen.method == Method::PATCH {
                if patches.fetch_add(1, Ordering::SeqCst) > 0 {
                    return json(pending_operation());
                }
                // The run is interrupted while the answer of the first PATCH is lost: the
                // service may have started an operation that only a second answer names.
                cancel.cancel();
                return cut_short();
            }
            if seen.is_operation_poll() {
                return json(pending_operation());
            }
            json(running_cluster("train01"))
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let engine = ApplyEngine::new(client(&server), Journal::open(dir.path()).unwrap(), 1)
        .with_wait_options(fast_wait());
    let plan = plan(vec![change(
        "train01",
        Action::Update,
        vec![update_labels_request("train01", "x")],
    )]);

    let report = engine
        .apply(&plan, Arc::new(RecordingSink::default()), cancel)
        .await;

    assert!(report.interrupted, "{report:?}");
    assert!(matches!(the_error(&report), ExecError::Cancelled));
    assert_eq!(
        patches.load(Ordering::SeqCst),
        2,
        "the change that got no answer is sent again"
    );
    let entries = Journal::open(dir.path()).unwrap().entries();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0].operation, OPERATION);
}

/// The scripted cluster for an update: there until the PATCH, then gone.
fn deleted_during_update(
    operation_answer: fn(&Seen) -> axum::response::Response,
) -> impl Fn(&Seen, &crate::scripted::Tools) -> axum::response::Response + Send + Sync {
    let patched = Arc::new(AtomicUsize::new(0));
    move |seen: &Seen, _| {
        if seen.method == Method::PATCH {
            patched.fetch_add(1, Ordering::SeqCst);
            return json(pending_operation());
        }
        if seen.is_operation_poll() {
            return operation_answer(seen);
        }
        if patched.load(Ordering::SeqCst) == 0 {
            json(running_cluster("train01"))
        } else {
            google_error(404, "NOT_FOUND", "cluster not found")
        }
    }
}

#[tokio::test]
async fn a_cluster_deleted_during_an_update_fails_naming_the_cluster() {
    // The operation ends with NOT_FOUND.
    let server = Scripted::start(deleted_during_update(|_| {
        json(json!({"name": OPERATION, "done": true,
                    "error": {"code": 5, "message": "the cluster was deleted"}}))
    }))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let report = apply_one(
        &server,
        dir.path(),
        Action::Update,
        update_labels_request("train01", "x"),
    )
    .await;
    let err = the_error(&report);
    assert!(matches!(err, ExecError::OperationFailed { .. }), "{err}");
    assert!(err.to_string().contains(&cluster_name("train01")), "{err}");
    assert!(Journal::open(dir.path()).unwrap().is_empty());

    // The operation vanishes with the cluster.
    let server = Scripted::start(deleted_during_update(|_| {
        google_error(404, "NOT_FOUND", "operation not found")
    }))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let report = apply_one(
        &server,
        dir.path(),
        Action::Update,
        update_labels_request("train01", "x"),
    )
    .await;
    let err = the_error(&report);
    assert!(matches!(err, ExecError::OperationLost { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.contains(&cluster_name("train01")) && message.contains("does not exist"),
        "{message}"
    );
    assert!(Journal::open(dir.path()).unwrap().is_empty());
    // Bounded by the 2 s grace of `fast_wait` and its polling backoff.
    assert!(server.requests().len() < 80, "{}", server.requests().len());
}

#[tokio::test]
async fn a_submitted_operation_is_followed_by_the_name_it_was_submitted_under() {
    // The `:wait` answer names another operation: the journal entry of ours still goes.
    let server = Scripted::start(|seen: &Seen, _| {
        if seen.is_operation_poll() {
            json(
                json!({"name": "projects/1/locations/us-central1/operations/other",
                        "done": true, "response": running_cluster("train01")}),
            )
        } else {
            json(pending_operation())
        }
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let report = create_through(&server, dir.path()).await;
    assert!(report.is_success(), "{report:?}");
    assert!(Journal::open(dir.path()).unwrap().is_empty());
}

#[tokio::test]
async fn submitted_operations_are_returned_when_usable() {
    let server = Scripted::start(|_, _| json(pending_operation())).await;
    let submitted = client(&server)
        .send(&create_request("train01"))
        .await
        .unwrap();
    assert!(matches!(submitted, Submitted::Operation(op) if op.name == OPERATION));
}

/// A List that names one cluster twice, across pages or within one, with other content the
/// second time: the refresh is an error naming the cluster and both pages, never a guess at
/// which copy is the cluster.
#[tokio::test]
async fn a_cluster_listed_twice_fails_the_refresh_naming_it_and_its_pages() {
    let name = format!(
        "{}/modelDevelopmentClusters/train01",
        clusterform_testkit::PARENT
    );
    let first = json!({"name": name, "labels": {"team": "ml"}});
    let stale = json!({"name": name, "labels": {"team": "old"}});
    let other = json!({"name": format!("{}/modelDevelopmentClusters/train02", clusterform_testkit::PARENT)});
    let pages = [
        json!({"modelDevelopmentClusters": [first.clone()], "nextPageToken": "p2"}),
        json!({"modelDevelopmentClusters": [other, stale]}),
    ];
    let server = Scripted::start(move |seen, _| match seen.param("pageToken").as_deref() {
        Some("p2") => json(pages[1].clone()),
        _ => json(pages[0].clone()),
    })
    .await;
    let locations = RefreshLocations::named([location()]);
    let err = refresh(&client(&server), &locations, &[])
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ExecError::ListedTwice { name, first_page: 1, second_page: 2 }
            if name.id() == "train01"),
        "{err}"
    );
    assert!(
        err.to_string().contains("train01 twice (pages 1 and 2)"),
        "{err}"
    );

    let twice = json!({"modelDevelopmentClusters": [first.clone(), first]});
    let server = Scripted::start(move |_, _| json(twice.clone())).await;
    let err = refresh(&client(&server), &locations, &[])
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ExecError::ListedTwice {
                first_page: 1,
                second_page: 1,
                ..
            }
        ),
        "{err}"
    );
}

/// The location a List request was sent to: its region, from `/v1beta1/projects/P/locations/R/…`.
fn region_of(seen: &Seen) -> String {
    seen.path.split('/').nth(5).unwrap_or_default().to_owned()
}

/// An endless List page: no clusters, and a token never given before.
fn endless_page(seen: &Seen) -> axum::response::Response {
    let page = seen
        .param("pageToken")
        .map_or(0, |t| t.parse::<u64>().unwrap());
    json(json!({"modelDevelopmentClusters": [], "nextPageToken": (page + 1).to_string()}))
}

/// The budget error of a refresh, and the location it names.
fn spent_budget(error: &ExecError) -> (BudgetLimit, String) {
    let ExecError::Transport(TransportError::RefreshBudgetSpent { spent, .. }) = error else {
        panic!("not the refresh's budget: {error}");
    };
    (spent.limit, spent.location.region().to_owned())
}

#[tokio::test]
async fn endless_lists_in_every_location_share_one_page_budget() {
    let server = Scripted::start(|seen, _| endless_page(seen)).await;
    let locations = RefreshLocations::everywhere([location()], [], []);
    let error = refresh(&client(&server), &locations, &[])
        .await
        .unwrap_err();

    let (limit, region) = spent_budget(&error);
    assert_eq!(limit, BudgetLimit::Pages(REFRESH_PAGES));
    let message = error.to_string();
    assert!(
        message.contains(&format!(
            "the List of {PROJECT}/{region} passed the refresh's total of {REFRESH_PAGES} pages"
        )),
        "{message}"
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    let requests = server.requests().len();
    assert!(
        requests <= REFRESH_PAGES + locations.len(),
        "{requests} requests for {} locations: one budget, not one per location",
        locations.len()
    );
}

#[tokio::test]
async fn large_answers_in_several_locations_share_one_byte_budget() {
    const TOTAL: usize = 1 << 20;
    let server = flooding().await;
    let budget = RefreshBudget {
        answer_bytes: TOTAL,
        ..RefreshBudget::default()
    };
    let client = client_with_budget(&server, MAX_ANSWER_BYTES, budget);
    let locations = RefreshLocations::everywhere([location()], [], []);
    let error = refresh(&client, &locations, &[]).await.unwrap_err();

    let (limit, _) = spent_budget(&error);
    assert_eq!(limit, BudgetLimit::AnswerBytes(TOTAL));
    assert!(
        error
            .to_string()
            .contains("counted over the Lists of every location together"),
        "{error}"
    );
    assert_eq!(
        server.requests().len(),
        locations.len(),
        "a flood is not asked for again"
    );
    // Each List alone would read the 64 MiB of one answer, 768 MiB in all; together they stop
    // at the total, plus what each connection had buffered (a few MiB on loopback).
    let streamed = streamed_once_closed(&server).await;
    assert!(streamed < 4 * MAX_ANSWER_BYTES, "{streamed} bytes streamed");
}

/// The named location fails its List once the other locations have been asked for
/// `HEAD_START` pages; they list forever.
#[tokio::test]
async fn a_list_that_fails_the_refresh_stops_the_others() {
    const HEAD_START: usize = 20;
    let others_asked = Arc::new(AtomicUsize::new(0));
    let counted = others_asked.clone();
    let server = Scripted::start(move |seen, _| {
        if region_of(seen) != REGION {
            counted.fetch_add(1, Ordering::SeqCst);
            return endless_page(seen);
        }
        if counted.load(Ordering::SeqCst) < HEAD_START {
            return endless_page(seen);
        }
        google_error(403, "PERMISSION_DENIED", "Permission denied")
    })
    .await;
    let locations = RefreshLocations::everywhere([location()], [], []);
    let error = refresh(&client(&server), &locations, &[])
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ExecError::Transport(TransportError::Api { url, .. }) if url.contains(REGION)),
        "the named location's failure: {error}"
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    let asked = others_asked.load(Ordering::SeqCst);
    // Read on to their end, the others would have used the refresh's whole budget.
    assert!(
        asked < REFRESH_PAGES / 2,
        "the other locations asked for {asked} pages"
    );
}

/// A List refused where nothing is named stops nothing: the named location's many pages are
/// all read.
#[tokio::test]
async fn a_refused_list_stops_no_other_list() {
    const PAGES: u64 = 30;
    let server = Scripted::start(move |seen, _| {
        if region_of(seen) != REGION {
            return google_error(403, "PERMISSION_DENIED", "Permission denied");
        }
        let page = seen
            .param("pageToken")
            .map_or(0, |t| t.parse::<u64>().unwrap());
        let mut cluster = running_cluster(&format!("c{page}"));
        cluster["name"] = json!(cluster_name(&format!("c{page}")));
        let next = if page + 1 < PAGES {
            json!((page + 1).to_string())
        } else {
            json!("")
        };
        json(json!({"modelDevelopmentClusters": [cluster], "nextPageToken": next}))
    })
    .await;
    let locations = RefreshLocations::everywhere([location()], [], []);
    let refreshed = refresh(&client(&server), &locations, &[]).await.unwrap();
    assert_eq!(refreshed.live.len(), PAGES as usize);
    assert_eq!(refreshed.refused.len(), locations.len() - 1);
}
