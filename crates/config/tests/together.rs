//! All problems are reported together, each once: an error that stops a cluster's decode does
//! not hide what the semantic checks of the same cluster find, a `for_each` fleet reports one
//! problem once, and a byte-order mark is not a problem at all.

use clusterform_config::{VariableInputs, load};

use crate::support::{dir_with, failure, load_text, valid_file, valid_with};

/// The messages of the diagnostics of a configuration that fails to load.
fn error_messages(text: &str) -> Vec<String> {
    failure(text).items.into_iter().map(|d| d.message).collect()
}

#[test]
fn an_unknown_attribute_does_not_hide_a_dangling_reference() {
    let text = valid_with(
        "login_node_pool_id     = \"login\"",
        "login_node_pool_id     = \"nope\"\n      no_such_attribute      = 1",
    );
    let messages = error_messages(&text);
    assert!(
        messages.iter().any(|m| m.contains("no_such_attribute")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("login_node_pool_id refers to node pool `nope`")),
        "{messages:?}"
    );
}

#[test]
fn a_pool_with_an_error_still_counts_for_the_references_to_it() {
    let text = valid_with(
        "zone = \"us-central1-a\"\n  }\n  node_pool \"cpu\"",
        "zone = \"us-central1-a\"\n    no_such_attribute = 1\n  }\n  node_pool \"cpu\"",
    );
    let messages = error_messages(&text);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(messages[0].contains("no_such_attribute"), "{messages:?}");
}

/// The instances of a `for_each` block dealt over regions report an undocumented region once
/// per region, however they interleave.
#[test]
fn a_fleet_warns_once_per_undocumented_region() {
    let entries: String = (0..30)
        .map(|n| {
            let region = ["us-central1", "asia-east1", "australia-southeast1"][n % 3];
            format!("    c{n:02} = \"{region}\"\n")
        })
        .collect();
    let text = valid_with(
        "cluster \"train01\" {",
        &format!("cluster \"fleet\" {{\n  for_each = {{\n{entries}  }}\n  region = each.value\n  id = each.key"),
    )
    .replace("us-central1-a", "${each.value}-a");
    let loaded = load_text(&text).unwrap();
    let regions: Vec<&str> = loaded
        .warnings
        .iter()
        .filter(|w| w.message.starts_with("region `"))
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(regions.len(), 2, "{regions:?}");
}

/// A file saved with a UTF-8 byte-order mark (as some editors do) loads like any other.
#[test]
fn a_byte_order_mark_is_not_a_syntax_error() {
    let dir = dir_with(&[("main.hcl", &format!("\u{feff}{}", valid_file()))]);
    let loaded = load(dir.path(), &VariableInputs::default());
    assert!(loaded.is_ok(), "{:?}", loaded.err());
}

/// A refused value of megabytes is quoted by its start only.
#[test]
fn a_huge_refused_value_is_quoted_by_its_start() {
    let text = valid_with(
        "cluster \"train01\" {",
        "cluster \"train01\" {\n  labels = { team = join(\"\", [for i in range(1000) : join(\"\", [for j in range(100) : \"A\"])]) }",
    );
    let diagnostics = failure(&text);
    let label = diagnostics
        .items
        .iter()
        .find(|d| d.message.contains("of label `team`"))
        .expect("the label's error");
    assert!(label.message.len() < 1_000, "{} bytes", label.message.len());
    assert!(
        label.message.contains("(99800 more characters)"),
        "{}",
        label.message
    );
}
