//! Authentication: every request needs `Authorization: Bearer TOKEN`, and the
//! configured token when there is one.

use clusterform_emulator::EmulatorOptions;
use serde_json::Value;

use crate::support::{TestServer, cluster_path, fast_options};

async fn status_with(server: &TestServer, authorization: Option<&str>) -> (u16, Value) {
    let mut request = server.client.get(server.url(&cluster_path("x")));
    if let Some(value) = authorization {
        request = request.header("authorization", value);
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

#[tokio::test]
async fn requests_without_a_bearer_token_are_unauthenticated() {
    let server = TestServer::start(fast_options()).await;
    for authorization in [
        None,
        Some("Bearer "),
        Some("Basic dXNlcjpwdw=="),
        Some("token"),
    ] {
        let (status, error) = status_with(&server, authorization).await;
        assert_eq!(status, 401, "{authorization:?}");
        assert_eq!(error["error"]["status"], "UNAUTHENTICATED");
        assert_eq!(error["error"]["code"], 401);
    }
    let (status, _) = status_with(&server, Some("Bearer anything")).await;
    assert_eq!(status, 404, "any token passes authentication");
    let logged: Vec<u16> = server
        .emulator()
        .requests()
        .iter()
        .map(|request| request.status)
        .collect();
    assert_eq!(logged, [401, 401, 401, 401, 404]);
}

#[tokio::test]
async fn a_configured_token_must_match() {
    let options = EmulatorOptions {
        required_token: Some("s3cret".to_owned()),
        ..fast_options()
    };
    let server = TestServer::start(options).await;
    let (status, error) = status_with(&server, Some("Bearer other")).await;
    assert_eq!(status, 401);
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not the expected one")
    );
    let (status, _) = status_with(&server, Some("bearer s3cret")).await;
    assert_eq!(status, 404);
}
