//! The generated field reference `docs/fields.md` stays in step with the field table.

use clusterform_model::fields;

#[test]
fn docs_fields_md_matches_the_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/fields.md");
    let expected = fields::render_markdown();
    if std::env::var_os("CLUSTERFORM_BLESS").is_some() {
        std::fs::write(path, &expected).unwrap();
    }
    let actual = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        actual == expected,
        "docs/fields.md is out of date; run `CLUSTERFORM_BLESS=1 cargo test -p clusterform-model`"
    );
}
