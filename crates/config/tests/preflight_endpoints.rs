//! The provider's `preflight_endpoints { ... }` block: decoded into
//! `Provider.preflight_endpoints`, each value checked offline to be an http(s) URL at its
//! attribute, misspellings answered with the closest key.

use std::collections::BTreeMap;

use clusterform_model::preflight::PreflightApi;

use crate::support::{failure, find, load_text, with_provider_block};

#[test]
fn the_block_is_decoded_onto_the_provider() {
    let text = with_provider_block(
        r#"  preflight_endpoints {
    compute       = "http://127.0.0.1:4443"
    service_usage = "https://serviceusage.example"
    iam           = "https://iam.example"
  }"#,
    );
    let provider = load_text(&text).unwrap().config.provider;
    let expected: BTreeMap<PreflightApi, String> = [
        (PreflightApi::Compute, "http://127.0.0.1:4443"),
        (PreflightApi::ServiceUsage, "https://serviceusage.example"),
        (PreflightApi::Iam, "https://iam.example"),
    ]
    .into_iter()
    .map(|(api, url)| (api, url.to_owned()))
    .collect();
    assert_eq!(provider.preflight_endpoints, expected);
    let without = load_text(&with_provider_block("")).unwrap().config.provider;
    assert!(without.preflight_endpoints.is_empty());
}

#[test]
fn an_endpoint_that_is_not_a_url_is_reported_at_the_attribute() {
    let text = with_provider_block("  preflight_endpoints { filestore = \"file.googleapis.com\" }");
    let message = find(&failure(&text), "is not an http(s) URL");
    assert!(message.contains("https://file.googleapis.com"), "{message}");
}

#[test]
fn a_misspelt_key_gets_the_closest_one() {
    let text = with_provider_block("  preflight_endpoints { compte = \"https://c.example\" }");
    let message = find(&failure(&text), "unknown attribute `compte`");
    assert!(message.contains("compute"), "{message}");
}
