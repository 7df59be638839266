//! Every API call, pagination, endpoint refusal, redaction, and garbage answers.

use std::sync::Arc;
use std::time::Duration;

use clusterform_emulator::EmulatorOptions;
use clusterform_executor::{
    ApiClient, ClientOptions, StaticToken, Submitted, TransportError, refresh,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::support::*;

#[tokio::test]
async fn create_get_update_delete_and_operations() {
    let h = Harness::start(Duration::from_millis(100)).await;
    let Submitted::Operation(op) = h.client.send(&create_request("train01")).await.unwrap() else {
        panic!("a create starts an operation");
    };
    assert!(!op.done);
    let fetched = h.client.get_operation(&op.name).await.unwrap();
    assert_eq!(fetched.name, op.name);
    let done = h
        .client
        .wait_operation(&op.name, Duration::from_secs(5))
        .await
        .unwrap();
    assert!(done.done);
    let created = done.response_cluster().expect("the new cluster");
    assert_eq!(created.label("clusterform-stack"), Some(STACK));

    let live = h
        .client
        .get_cluster(&parsed_name("train01"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(live.state(), Some("RUNNING"));
    assert!(
        h.client
            .get_cluster(&parsed_name("absent"))
            .await
            .unwrap()
            .is_none()
    );

    send_and_wait(&h, &update_labels_request("train01", "infra")).await;
    let live = h
        .client
        .get_cluster(&parsed_name("train01"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(live.label("team"), Some("infra"));

    send_and_wait(&h, &delete_request("train01")).await;
    assert!(
        h.client
            .get_cluster(&parsed_name("train01"))
            .await
            .unwrap()
            .is_none()
    );

    let requests = h.emulator.requests();
    let create = requests
        .iter()
        .find(|r| r.method == "POST" && r.path == collection_path())
        .unwrap();
    assert_eq!(create.query, "modelDevelopmentClusterId=train01");
    let patch = requests.iter().find(|r| r.method == "PATCH").unwrap();
    assert_eq!(patch.query, "updateMask=labels&updateMode=USER_AND_SERVICE");
}

#[tokio::test]
async fn list_follows_every_page() {
    let h = Harness::with_options(EmulatorOptions {
        max_page_size: 4,
        required_token: Some(TOKEN.to_owned()),
        ..EmulatorOptions::default()
    })
    .await;
    for n in 0..25 {
        h.insert(&format!("c{n:02}"));
    }
    let clusters = h.client.list_clusters(&location()).await.unwrap();
    let mut ids: Vec<_> = clusters.iter().map(|c| c.name.clone().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 25);
    assert_eq!(h.count("GET", "/modelDevelopmentClusters"), 7);
    let first = &h.emulator.requests()[0];
    assert!(first.query.contains("pageSize=100"), "{}", first.query);
}

#[tokio::test]
async fn refresh_lists_each_location_or_gets_targets() {
    let h = Harness::start(Duration::from_millis(50)).await;
    h.insert("alpha");
    h.insert("beta");
    h.emulator.insert_cluster(
        "projects/proj-two/locations/europe-west4/modelDevelopmentClusters/gamma",
        cluster_body("gamma", Some(STACK)),
    );
    let locations = clusterform_model::RefreshLocations::named([
        location(),
        clusterform_model::Location::new("proj-two", "europe-west4").unwrap(),
    ]);
    assert_eq!(
        refresh(&h.client, &locations, &[])
            .await
            .unwrap()
            .live
            .len(),
        3
    );
    h.emulator.clear_requests();
    let targets = [parsed_name("alpha"), parsed_name("nothere")];
    let found = refresh(&h.client, &locations, &targets).await.unwrap().live;
    assert_eq!(found.len(), 1);
    assert_eq!(
        h.count("GET", "/modelDevelopmentClusters"),
        0,
        "no List with targets"
    );
    assert_eq!(h.emulator.requests().len(), 2);
}

#[test]
fn plain_http_to_a_remote_host_is_refused() {
    let options = ClientOptions {
        endpoint: Some("http://aiplatform.example.com".to_owned()),
        ..ClientOptions::default()
    };
    let err = ApiClient::new(options, Arc::new(StaticToken::new(TOKEN))).unwrap_err();
    assert!(
        matches!(err, TransportError::InsecureEndpoint { .. }),
        "{err}"
    );
}

#[tokio::test]
async fn the_token_never_shows() {
    let h = Harness::start(Duration::from_millis(50)).await;
    assert!(!format!("{:?}", h.client).contains(TOKEN));
    let wrong = ApiClient::new(
        ClientOptions {
            endpoint: Some(h.server.base_url()),
            ..ClientOptions::default()
        },
        Arc::new(StaticToken::new("ya29.wrong-secret")),
    )
    .unwrap();
    let err = wrong.list_clusters(&location()).await.unwrap_err();
    assert_eq!(
        err.api_code(),
        Some(clusterform_model::Code::Unauthenticated),
        "{err}"
    );
    for text in [err.to_string(), format!("{err:?}")] {
        assert!(!text.contains("wrong-secret"), "{text}");
    }
}

/// A server that answers every request with `200 OK` and a body that is not JSON.
async fn garbage_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        for _ in 0..16 {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut buffer = [0u8; 4096];
                let _ = socket.read(&mut buffer).await;
                let body = "<html>Welcome to nginx</html>";
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    format!("http://{address}")
}

#[tokio::test]
async fn garbage_answers_are_decode_errors_naming_the_url() {
    let base = garbage_server().await;
    let client = client_for(&base, fast_retry());
    let err = client
        .get_cluster(&parsed_name("train01"))
        .await
        .unwrap_err();
    let TransportError::Decode {
        what,
        url,
        body_start,
        ..
    } = &err
    else {
        panic!("expected a decode error, got {err}");
    };
    assert_eq!(*what, "a cluster");
    assert_eq!(url, &format!("{base}/v1beta1/{}", cluster_name("train01")));
    assert!(body_start.contains("nginx"));
    assert!(err.to_string().contains(url.as_str()));
    let err = client.list_clusters(&location()).await.unwrap_err();
    assert!(err.to_string().contains("cluster list"), "{err}");
}

/// Sends a request that must start an operation, and waits for that operation.
async fn send_and_wait(h: &Harness, request: &clusterform_model::rest::ClusterRequest) {
    let Submitted::Operation(op) = h.client.send(request).await.unwrap() else {
        panic!("{:?} starts an operation", request.kind());
    };
    h.client
        .wait_operation(&op.name, Duration::from_secs(5))
        .await
        .unwrap();
}
