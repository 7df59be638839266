//! The provider's `lock "gcs" { ... }` block: decoded into `Provider.lock`, every value checked
//! offline and reported at the attribute, misspellings answered with the closest name.

use clusterform_config::RemoteState;
use clusterform_model::{Endpoint, EndpointUrl};

use crate::support::{failure, find, load_text, valid_with};

/// The valid file with `block` inside the provider block.
fn with_lock(block: &str) -> String {
    valid_with(
        "  stack   = \"research\"\n",
        &format!("  stack   = \"research\"\n{block}\n"),
    )
}

#[test]
fn the_lock_block_is_decoded_onto_the_provider() {
    let text = with_lock(
        r#"  lock "gcs" {
    bucket   = "team-infra"
    prefix   = "clusterform/prod"
    endpoint = "http://127.0.0.1:4443"
  }"#,
    );
    let provider = load_text(&text).unwrap().config.provider;
    assert_eq!(
        provider.lock,
        Some(RemoteState {
            bucket: "team-infra".into(),
            prefix: "clusterform/prod".into(),
            endpoint: Some(storage_url("http://127.0.0.1:4443")),
        })
    );
}

fn storage_url(text: &str) -> EndpointUrl {
    match text.parse() {
        Ok(Endpoint::Url(url)) => url,
        other => panic!("{other:?}"),
    }
}

#[test]
fn without_a_lock_block_the_state_stays_local() {
    let provider = load_text(&with_lock("")).unwrap().config.provider;
    assert_eq!(provider.lock, None);
}

#[test]
fn prefix_and_endpoint_are_optional() {
    let text = with_lock("  lock \"gcs\" { bucket = \"team-infra\" }");
    let lock = load_text(&text).unwrap().config.provider.lock.unwrap();
    assert_eq!((lock.prefix.as_str(), lock.endpoint), ("", None));
}

#[test]
fn a_bad_bucket_name_is_reported_at_the_attribute() {
    let text = with_lock("  lock \"gcs\" { bucket = \"Team_Infra\" }");
    insta::assert_snapshot!(find(&failure(&text), "not a valid bucket name"));
}

#[test]
fn bad_values_are_refused_with_the_rule_they_break() {
    for (block, needle) in [
        (
            r#"bucket = "-infra""#,
            "start and end with a letter or digit",
        ),
        (r#"bucket = "ab""#, "3 to 63 characters"),
        (
            r#"bucket = "b-1", prefix = "/prod""#,
            "must not start or end with `/`",
        ),
        (r#"bucket = "b-1", prefix = "a/../b""#, "`..`"),
        (
            r#"bucket = "b-1", endpoint = "storage.local""#,
            "not an http(s) URL",
        ),
        (
            r#"bucket = "b-1", endpoint = "local""#,
            "not an http(s) URL",
        ),
        (
            r#"bucket = "b-1", endpoint = "https://exa mple""#,
            "is not a valid URL",
        ),
        (r#"prefix = "p""#, "sets no `bucket`"),
    ] {
        let text = with_lock(&format!(
            "  lock \"gcs\" {{\n    {}\n  }}",
            block.replace(", ", "\n    ")
        ));
        find(&failure(&text), needle);
    }
}

#[test]
fn misspellings_get_the_closest_name() {
    let attribute = with_lock("  lock \"gcs\" { buckt = \"team-infra\" }");
    let message = find(&failure(&attribute), "unknown attribute `buckt`");
    assert!(message.contains("bucket"), "{message}");
    let block = with_lock("  lokc \"gcs\" { bucket = \"team-infra\" }");
    let message = find(&failure(&block), "unknown block `lokc`");
    assert!(message.contains("`lock`"), "{message}");
}

#[test]
fn only_the_gcs_kind_and_one_lock_are_accepted() {
    let kind = with_lock("  lock \"s3\" { bucket = \"team-infra\" }");
    find(&failure(&kind), "unknown lock kind `s3`");
    let twice = with_lock(
        "  lock \"gcs\" { bucket = \"team-infra\" }\n  lock \"gcs\" { bucket = \"team-infra\" }",
    );
    find(&failure(&twice), "declared more than once");
}
