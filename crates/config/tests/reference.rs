//! `docs/configuration.md` holds the generated reference between its markers, up to date.

use clusterform_config::{REFERENCE_BEGIN, REFERENCE_END, reference_markdown};

#[test]
fn docs_configuration_md_has_the_current_reference() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
    let actual = std::fs::read_to_string(path).unwrap_or_default();
    let (Some(begin), Some(end)) = (actual.find(REFERENCE_BEGIN), actual.find(REFERENCE_END))
    else {
        panic!("docs/configuration.md lacks the generated-reference markers");
    };
    let expected = format!(
        "{}{REFERENCE_BEGIN}\n{}{}",
        &actual[..begin],
        reference_markdown(),
        &actual[end..]
    );
    if std::env::var_os("CLUSTERFORM_BLESS").is_some() {
        std::fs::write(path, &expected).unwrap();
    }
    let actual = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        actual == expected,
        "docs/configuration.md is out of date; run `CLUSTERFORM_BLESS=1 cargo test -p clusterform-config`"
    );
}
