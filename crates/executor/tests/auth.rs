//! The gcloud fallback with a fake `gcloud` on `PATH`, used end to end.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use clusterform_executor::{
    ApiClient, AuthEnvironment, ClientOptions, TokenNote, resolve_token_source,
};

use crate::support::*;

fn fake_gcloud(dir: &Path, script: &str) {
    let path = dir.join("gcloud");
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn external_account_file(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("creds.json");
    std::fs::write(&path, r#"{"type": "external_account", "audience": "x"}"#).unwrap();
    path
}

#[tokio::test]
async fn unsupported_credentials_fall_back_to_gcloud_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    fake_gcloud(
        dir.path(),
        &format!("[ \"$1 $2\" = \"auth print-access-token\" ] && echo {TOKEN}"),
    );
    let env = AuthEnvironment {
        application_credentials: Some(external_account_file(dir.path())),
        search_path: Some(dir.path().as_os_str().to_owned()),
        ..AuthEnvironment::default()
    };
    let resolved = resolve_token_source(&env).await.unwrap();
    assert_eq!(
        resolved.note,
        Some(TokenNote::GcloudInstead {
            kind: "external_account".to_owned(),
            credentials: external_account_file(dir.path()),
        })
    );
    assert!(!format!("{resolved:?}").contains(TOKEN));

    let h = Harness::start(std::time::Duration::from_millis(50)).await;
    let client = ApiClient::new(
        ClientOptions {
            endpoint: Some(h.server.base_url()),
            ..ClientOptions::default()
        },
        resolved.source,
    )
    .unwrap();
    client.list_clusters(&location()).await.unwrap();
}

#[tokio::test]
async fn a_failing_gcloud_says_why() {
    let dir = tempfile::tempdir().unwrap();
    fake_gcloud(
        dir.path(),
        "echo 'You do not currently have an active account selected.' >&2; exit 1",
    );
    let env = AuthEnvironment {
        application_credentials: Some(external_account_file(dir.path())),
        search_path: Some(dir.path().as_os_str().to_owned()),
        ..AuthEnvironment::default()
    };
    let resolved = resolve_token_source(&env).await.unwrap();
    let err = resolved.source.token().await.unwrap_err();
    assert!(
        err.to_string().contains("no active account") || err.to_string().contains("active account"),
        "{err}"
    );
}
