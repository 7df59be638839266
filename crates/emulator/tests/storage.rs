//! Cloud Storage: media upload, metadata and content reads, deletes, `ifGenerationMatch`
//! preconditions and their races, missing buckets and objects, 403, the Storage error
//! envelope (also for authentication and injected faults), and persistence.

use clusterform_emulator::{EmulatorOptions, FaultSpec, OBJECT_MUTATION_INTERVAL};
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{TOKEN, TestServer, fast_options};

const BUCKET: &str = "team-infra";
const OBJECT: &str = "clusterform/prod/stack.lock";
const ENCODED: &str = "clusterform%2Fprod%2Fstack.lock";

fn options_with_bucket() -> EmulatorOptions {
    EmulatorOptions {
        buckets: vec![BUCKET.to_owned()],
        ..fast_options()
    }
}

fn object_path(bucket: &str) -> String {
    format!("/storage/v1/b/{bucket}/o/{ENCODED}")
}

fn upload_path(bucket: &str, if_generation_match: Option<i64>) -> String {
    let condition = if_generation_match
        .map(|generation| format!("&ifGenerationMatch={generation}"))
        .unwrap_or_default();
    format!("/upload/storage/v1/b/{bucket}/o?uploadType=media&name={ENCODED}{condition}")
}

/// Uploads `content`; answers the status and the JSON body.
async fn upload(
    server: &TestServer,
    bucket: &str,
    content: &str,
    if_generation_match: Option<i64>,
) -> (u16, Value) {
    let response = server
        .client
        .post(server.url(&upload_path(bucket, if_generation_match)))
        .bearer_auth(TOKEN)
        .header("content-type", "application/json")
        .body(content.to_owned())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

fn generation_of(resource: &Value) -> i64 {
    resource["generation"].as_str().unwrap().parse().unwrap()
}

/// `GET …?alt=media`: the status, the `x-goog-generation` header and the content.
async fn read_media(server: &TestServer, query: &str) -> (u16, Option<String>, String) {
    let response = server
        .client
        .get(server.url(&format!("{}?alt=media{query}", object_path(BUCKET))))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let generation = response
        .headers()
        .get("x-goog-generation")
        .map(|value| value.to_str().unwrap().to_owned());
    (status, generation, response.text().await.unwrap())
}

#[tokio::test]
async fn an_object_is_created_read_replaced_and_deleted_by_generation() {
    let server = TestServer::start(options_with_bucket()).await;
    let (status, created) = upload(&server, BUCKET, r#"{"who":"a"}"#, Some(0)).await;
    assert_eq!(status, 200, "{created}");
    let first = generation_of(&created);
    assert_eq!(created["name"], OBJECT);
    assert_eq!(created["bucket"], BUCKET);
    assert_eq!(created["size"], "11");
    assert_eq!(created["contentType"], "application/json");
    assert_eq!(created["kind"], "storage#object");

    let (status, metadata) = server.get(&object_path(BUCKET)).await;
    assert_eq!((status, metadata.clone()), (200, created.clone()));
    let (status, generation, content) = read_media(&server, "").await;
    assert_eq!(status, 200);
    assert_eq!(generation, Some(first.to_string()));
    assert_eq!(content, r#"{"who":"a"}"#);

    let (status, replaced) = upload(&server, BUCKET, r#"{"who":"b"}"#, Some(first)).await;
    assert_eq!(status, 200, "{replaced}");
    let second = generation_of(&replaced);
    assert!(second > first, "{second} after {first}");

    let delete = format!("{}?ifGenerationMatch={second}", object_path(BUCKET));
    let (status, body) = server.call(Method::DELETE, &delete, None).await;
    assert_eq!((status, body), (204, Value::Null));
    assert_eq!(server.emulator().object(BUCKET, OBJECT), None);
    let (status, _) = server.get(&object_path(BUCKET)).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn of_two_creates_racing_for_an_absent_object_exactly_one_wins() {
    let server = TestServer::start(options_with_bucket()).await;
    for round in 0..10 {
        let (first, second) = tokio::join!(
            upload(&server, BUCKET, "first", Some(0)),
            upload(&server, BUCKET, "second", Some(0)),
        );
        let mut statuses = [first.0, second.0];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 412], "round {round}: {first:?} {second:?}");
        let winner = if first.0 == 200 { first.1 } else { second.1 };
        let (content, generation) = server.emulator().object(BUCKET, OBJECT).unwrap();
        assert_eq!(generation, generation_of(&winner));
        let delete = format!("{}?ifGenerationMatch={generation}", object_path(BUCKET));
        assert_eq!(server.call(Method::DELETE, &delete, None).await.0, 204);
        assert!(content == b"first" || content == b"second");
    }
}

#[tokio::test]
async fn a_failed_precondition_is_412_in_the_storage_envelope_and_changes_nothing() {
    let server = TestServer::start(options_with_bucket()).await;
    let (_, created) = upload(&server, BUCKET, "mine", Some(0)).await;
    let live = generation_of(&created);
    let stale = live - 1;

    let (status, again) = upload(&server, BUCKET, "theirs", Some(0)).await;
    assert_eq!(status, 412);
    insta::assert_json_snapshot!(again, @r#"
    {
      "error": {
        "code": 412,
        "message": "At least one of the pre-conditions you specified did not hold.",
        "errors": [
          {
            "message": "At least one of the pre-conditions you specified did not hold.",
            "domain": "global",
            "reason": "conditionNotMet",
            "locationType": "header",
            "location": "If-Match"
          }
        ]
      }
    }
    "#);
    assert_eq!(upload(&server, BUCKET, "theirs", Some(stale)).await.0, 412);
    let delete = format!("{}?ifGenerationMatch={stale}", object_path(BUCKET));
    assert_eq!(server.call(Method::DELETE, &delete, None).await.0, 412);
    let (status, _, _) = read_media(&server, &format!("&ifGenerationMatch={stale}")).await;
    assert_eq!(status, 412);
    let (status, generation, content) =
        read_media(&server, &format!("&ifGenerationMatch={live}")).await;
    assert_eq!((status, content), (200, "mine".to_owned()));
    assert_eq!(generation, Some(live.to_string()));
}

#[tokio::test]
async fn a_missing_bucket_and_a_missing_object_are_404s_that_say_which() {
    let server = TestServer::start(options_with_bucket()).await;
    let (status, no_bucket) = upload(&server, "no-such-bucket", "x", Some(0)).await;
    assert_eq!(status, 404);
    insta::assert_json_snapshot!(no_bucket, @r#"
    {
      "error": {
        "code": 404,
        "message": "The specified bucket does not exist.",
        "errors": [
          {
            "message": "The specified bucket does not exist.",
            "domain": "global",
            "reason": "notFound"
          }
        ]
      }
    }
    "#);
    let (status, _) = server.get(&object_path("no-such-bucket")).await;
    assert_eq!(status, 404);

    let (status, no_object) = server.get(&object_path(BUCKET)).await;
    assert_eq!(status, 404);
    assert_eq!(
        no_object["error"]["message"],
        "No such object: team-infra/clusterform/prod/stack.lock"
    );
    let (status, _) = server
        .call(Method::DELETE, &object_path(BUCKET), None)
        .await;
    assert_eq!(status, 404);
    assert_eq!(upload(&server, BUCKET, "x", Some(5)).await.0, 412);
}

#[tokio::test]
async fn buckets_can_be_created_by_the_test_or_on_first_use() {
    let server = TestServer::start(fast_options()).await;
    assert_eq!(upload(&server, "late-bucket", "x", None).await.0, 404);
    server.emulator().create_bucket("late-bucket");
    assert_eq!(upload(&server, "late-bucket", "x", None).await.0, 200);

    // As `endpoint = "local"` runs it: project numbers on, which must not touch these paths.
    let on_use = TestServer::start(EmulatorOptions {
        create_buckets_on_use: true,
        project_numbers: true,
        ..fast_options()
    })
    .await;
    let (status, _) = on_use.get(&object_path("any-bucket")).await;
    assert_eq!(status, 404, "the bucket exists, the object does not");
    assert_eq!(upload(&on_use, "any-bucket", "x", Some(0)).await.0, 200);
    assert_eq!(upload(&on_use, "Bad_Name", "x", Some(0)).await.0, 400);
}

#[tokio::test]
async fn with_the_object_mutation_limit_an_object_changes_at_most_once_a_second() {
    let server = TestServer::start(EmulatorOptions {
        object_mutation_limit: true,
        ..options_with_bucket()
    })
    .await;
    let (status, created) = upload(&server, BUCKET, "a", Some(0)).await;
    assert_eq!(status, 200, "{created}");
    // At once: the update, a create refused by its precondition and the delete are all refused
    // for the rate, and so is the second within the second.
    let (status, refused) = upload(&server, BUCKET, "b", None).await;
    assert_eq!(status, 429, "{refused}");
    assert_eq!(refused["error"]["errors"][0]["reason"], "rateLimitExceeded");
    insta::assert_snapshot!(refused["error"]["message"].as_str().unwrap(), @"The object team-infra/clusterform/prod/stack.lock exceeded the rate limit for object mutation operations (create, update, and delete). Please reduce your request rate. See https://cloud.google.com/storage/docs/gcs429.");
    assert_eq!(upload(&server, BUCKET, "c", Some(0)).await.0, 429);
    let (status, _) = server
        .call(Method::DELETE, &object_path(BUCKET), None)
        .await;
    assert_eq!(status, 429);
    // Reads are not limited, and another object is not held back.
    assert_eq!(server.get(&object_path(BUCKET)).await.0, 200);
    let other = server
        .call(
            Method::POST,
            &format!("/upload/storage/v1/b/{BUCKET}/o?uploadType=media&name=other"),
            Some(json!("x")),
        )
        .await;
    assert_eq!(other.0, 200, "{}", other.1);

    tokio::time::sleep(OBJECT_MUTATION_INTERVAL).await;
    // A precondition failure counts as a change asked of the object.
    assert_eq!(upload(&server, BUCKET, "d", Some(0)).await.0, 412);
    assert_eq!(upload(&server, BUCKET, "e", None).await.0, 429);
    tokio::time::sleep(OBJECT_MUTATION_INTERVAL).await;
    let (status, _) = server
        .call(Method::DELETE, &object_path(BUCKET), None)
        .await;
    assert_eq!(status, 204);
}

#[tokio::test]
async fn a_forbidden_bucket_answers_403_naming_the_permission() {
    let server = TestServer::start(options_with_bucket()).await;
    server.emulator().set_bucket_forbidden(BUCKET, true);
    let (status, denied) = server
        .call(Method::DELETE, &object_path(BUCKET), None)
        .await;
    assert_eq!(status, 403);
    insta::assert_snapshot!(denied["error"]["message"].as_str().unwrap(), @"The caller does not have storage.objects.delete access to the Google Cloud Storage object. Permission 'storage.objects.delete' denied on resource (or it may not exist).");
    assert_eq!(denied["error"]["errors"][0]["reason"], "forbidden");
    server.emulator().set_bucket_forbidden(BUCKET, false);
    assert_eq!(upload(&server, BUCKET, "x", Some(0)).await.0, 200);
}

#[tokio::test]
async fn the_token_rule_and_faults_apply_with_the_storage_envelope() {
    let server = TestServer::start(EmulatorOptions {
        required_token: Some(TOKEN.to_owned()),
        ..options_with_bucket()
    })
    .await;
    let response = server
        .client
        .get(server.url(&object_path(BUCKET)))
        .bearer_auth("someone-else")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 401);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["errors"][0]["reason"], "required");
    assert_eq!(body["error"]["errors"][0]["location"], "Authorization");

    server
        .emulator()
        .set_faults("429=1,retry-after=3".parse::<FaultSpec>().unwrap());
    let response = server
        .client
        .get(server.url(&object_path(BUCKET)))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 429);
    assert_eq!(response.headers()["retry-after"], "3");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["errors"][0]["reason"], "rateLimitExceeded");
    assert_eq!(body["error"]["code"], 429);
}

#[tokio::test]
async fn bad_requests_are_refused() {
    let server = TestServer::start(options_with_bucket()).await;
    let (status, body) = server
        .call(
            Method::POST,
            &format!("/upload/storage/v1/b/{BUCKET}/o?uploadType=multipart&name=x"),
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = server
        .get(&format!("{}?ifGenerationMatch=soon", object_path(BUCKET)))
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"]["message"],
        "Invalid value for ifGenerationMatch: 'soon'"
    );
    let (status, _) = server
        .get(&format!("{}?alt=xml", object_path(BUCKET)))
        .await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn objects_and_generations_survive_a_restart() {
    let directory = tempfile::tempdir().unwrap();
    let options = EmulatorOptions {
        state_file: Some(directory.path().join("emulator.json")),
        ..options_with_bucket()
    };
    let first = TestServer::start(options.clone()).await;
    let (_, created) = upload(&first, BUCKET, "\u{0}binary\u{ff}", Some(0)).await;
    let generation = generation_of(&created);
    first.server.shutdown().await;

    let second = TestServer::start(EmulatorOptions {
        buckets: Vec::new(),
        ..options
    })
    .await;
    let (content, kept) = second.emulator().object(BUCKET, OBJECT).unwrap();
    assert_eq!(kept, generation);
    assert_eq!(content, "\u{0}binary\u{ff}".as_bytes());
    let (status, replaced) = upload(&second, BUCKET, "next", Some(generation)).await;
    assert_eq!(status, 200);
    assert!(generation_of(&replaced) > generation);
}
