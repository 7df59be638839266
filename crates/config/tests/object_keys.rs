//! Object literals' keys as the parser sees them: a repeated key is a syntax error pointing at
//! the second occurrence, keys differing only in form (an identifier and a string literal with the
//! same text) are not repeats, the parsed object keeps its items in source order with their
//! decor and spans, and an object with tens of thousands of keys yields every instance. The
//! parser is the vendored hcl-edit (vendor/hcl-edit/PATCHED.md), whose duplicate-key check
//! these tests pin.

use hcl_edit::Span;
use hcl_edit::expr::{Expression, ObjectKey};
use hcl_edit::parser::parse_body;

use crate::support::{CLUSTER_BODY, PROVIDER, failure, find, load_text};

/// A `fleet` cluster whose `for_each` object holds `items` (one `key = value` a line).
fn fleet_with_items(items: &str) -> String {
    format!(
        "{PROVIDER}\ncluster \"fleet\" {{\n  for_each = {{\n{items}  }}\n  display_name = each.value\n{CLUSTER_BODY}}}\n"
    )
}

#[test]
fn a_repeated_identifier_key_is_an_error_at_its_second_occurrence() {
    let text = fleet_with_items("    a = \"one\"\n    b = \"two\"\n    a = \"three\"\n");
    insta::assert_snapshot!(find(&failure(&text), "redefined"));
}

#[test]
fn a_repeated_string_key_is_an_error_at_its_second_occurrence() {
    let text = fleet_with_items("    \"a\" = \"one\"\n    \"a\" = \"two\"\n");
    insta::assert_snapshot!(find(&failure(&text), "redefined"));
}

#[test]
fn a_repeated_expression_key_is_an_error_at_its_second_occurrence() {
    let text = fleet_with_items("    (\"a\") = \"one\"\n    (\"a\") = \"two\"\n");
    insta::assert_snapshot!(find(&failure(&text), "redefined"));
}

#[test]
fn an_identifier_and_a_string_with_the_same_text_are_different_keys() {
    let text = fleet_with_items("    a = \"ident\"\n    \"a\" = \"string\"\n    b = \"other\"\n");
    let loaded = load_text(&text).unwrap();
    let instances: Vec<_> = loaded
        .config
        .clusters
        .iter()
        .map(|c| (c.name.id().as_str(), c.cluster.display_name.as_deref()))
        .collect();
    assert_eq!(instances, [("a", Some("string")), ("b", Some("other"))]);
}

#[test]
fn twenty_thousand_keys_yield_every_instance_with_its_value() {
    let ids: Vec<String> = (0..20_000).map(|index| format!("c{index:05}")).collect();
    let items: String = ids
        .iter()
        .map(|id| format!("    {id} = \"name-{id}\"\n"))
        .collect();
    let loaded = load_text(&fleet_with_items(&items)).unwrap();
    let instances: Vec<_> = loaded
        .config
        .clusters
        .iter()
        .map(|c| (c.name.id().to_string(), c.cluster.display_name.clone()))
        .collect();
    let expected: Vec<_> = ids
        .iter()
        .map(|id| (id.clone(), Some(format!("name-{id}"))))
        .collect();
    assert_eq!(instances, expected);
}

#[test]
fn a_parsed_object_keeps_its_items_in_source_order_with_decor_and_spans() {
    let text = "m = {\n  # first\n  zeta = 1, \"alpha\" = 2\n  (k) = 3 # trailing\n  mid = 4\n}\n";
    let body = parse_body(text).unwrap();
    let attribute = body.get_attribute("m").unwrap();
    let Expression::Object(object) = &attribute.value else {
        panic!("m is not an object: {attribute:?}");
    };
    let keys: Vec<_> = object
        .iter()
        .map(|(key, _)| {
            let form = match key {
                ObjectKey::Ident(ident) => format!("ident {}", ident.value()),
                ObjectKey::Expression(Expression::String(string)) => {
                    format!("string {}", string.value())
                }
                ObjectKey::Expression(_) => "expression".to_owned(),
            };
            (form, key.span().map(|span| &text[span]))
        })
        .collect();
    assert_eq!(
        keys,
        [
            ("ident zeta".to_owned(), Some("zeta")),
            ("string alpha".to_owned(), Some("\"alpha\"")),
            ("expression".to_owned(), Some("(k)")),
            ("ident mid".to_owned(), Some("mid")),
        ]
    );
    assert_eq!(body.to_string(), text);
}
