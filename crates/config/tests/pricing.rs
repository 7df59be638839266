//! The provider's `pricing { ... }` block: decoded into `Provider.pricing`, its currency and
//! prices checked at the attribute, misspellings answered with the closest key, types the
//! catalogue lacks warned about at their key.

use std::collections::BTreeMap;

use clusterform_model::pricing::HourlyPrice;

use crate::support::{failure, find, load_text, with_provider_block};

#[test]
fn the_block_is_decoded_onto_the_provider() {
    let text = with_provider_block(
        r#"  pricing {
    currency      = "USD"
    machine_types = { "n2-standard-8" = 0.39 }
    accelerators  = { NVIDIA_B200 = 5.5, "NVIDIA_H200_141GB" = 4 }
  }"#,
    );
    let prices = load_text(&text).unwrap().config.provider.pricing.unwrap();
    let price = |p| HourlyPrice::new(p).unwrap();
    assert_eq!(prices.currency.to_string(), "USD");
    assert_eq!(
        prices.machine_types,
        BTreeMap::from([("n2-standard-8".to_owned(), price(0.39))])
    );
    assert_eq!(
        prices.accelerators,
        BTreeMap::from([
            ("NVIDIA_B200".to_owned(), price(5.5)),
            ("NVIDIA_H200_141GB".to_owned(), price(4.0)),
        ])
    );
    let without = load_text(&with_provider_block("")).unwrap().config.provider;
    assert_eq!(without.pricing, None);
}

/// Each warning of the loaded `text`: its position and message.
fn warnings(text: &str) -> Vec<String> {
    let loaded = load_text(text).expect("a type the catalogue lacks must not stop a load");
    loaded
        .warnings
        .iter()
        .map(|warning| format!("{}:{} {}", warning.line, warning.column, warning.message))
        .collect()
}

#[test]
fn prices_of_types_in_the_catalogue_get_no_warning() {
    let text = with_provider_block(
        r#"  pricing {
    currency      = "USD"
    machine_types = { "a4-highgpu-8g" = 44, "n2-standard-8" = 0.39 }
    accelerators  = { NVIDIA_B200 = 5.5 }
  }"#,
    );
    assert_eq!(warnings(&text), Vec::<String>::new());
}

#[test]
fn a_type_the_catalogue_lacks_is_a_warning_at_its_key_with_the_closest_type() {
    let text = with_provider_block(
        r#"  pricing {
    currency      = "USD"
    machine_types = { "a4-higpu-8g" = 44 }
    accelerators  = { NVIDIA_B20 = 5.5 }
  }"#,
    );
    let line = line_index(&text, "a4-higpu-8g");
    let loaded = load_text(&text).unwrap();
    assert!(loaded.config.provider.pricing.is_some());
    assert_eq!(
        warnings(&text),
        [
            format!(
                "{}:23 `pricing.machine_types`: machine type `a4-higpu-8g` is not in \
                 clusterform's catalogue of training machine types; its price is used only by \
                 pools of that type",
                line + 1
            ),
            format!(
                "{}:23 `pricing.accelerators`: accelerator type `NVIDIA_B20` is not in \
                 clusterform's catalogue; its price is used only by pools of that type",
                line + 2
            ),
        ]
    );
    let hints: Vec<&str> = loaded
        .warnings
        .iter()
        .filter_map(|warning| warning.hint.as_deref())
        .collect();
    assert!(hints[0].starts_with("did you mean `a4-highgpu-8g`? The service may offer types newer than clusterform's catalogue"), "{hints:?}");
    assert!(
        hints[1].starts_with("did you mean `NVIDIA_B200`? "),
        "{hints:?}"
    );
}

#[test]
fn a_map_not_written_out_is_warned_about_at_the_map() {
    let text = with_provider_block(
        r#"  pricing {
    currency      = "USD"
    accelerators  = merge({ NVIDIA_B20 = 5.5 })
  }"#,
    );
    let line = line_index(&text, "NVIDIA_B20");
    let found = warnings(&text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with(&format!(
            "{}:21 `pricing.accelerators`: accelerator type `NVIDIA_B20`",
            line + 1
        )),
        "{found:?}"
    );
}

#[test]
fn a_currency_that_is_not_an_iso_code_is_reported() {
    let text = with_provider_block("  pricing { currency = \"dollars\" }");
    find(
        &failure(&text),
        "`dollars` is not an ISO 4217 currency code",
    );
}

#[test]
fn a_block_without_currency_is_reported() {
    let text = with_provider_block("  pricing { accelerators = { NVIDIA_B200 = 5.5 } }");
    find(&failure(&text), "`pricing` block sets no `currency`");
}

#[test]
fn a_price_that_is_not_a_number_is_reported() {
    let text = with_provider_block(
        "  pricing {\n    currency = \"USD\"\n    accelerators = { NVIDIA_B200 = \"cheap\" }\n  }",
    );
    find(&failure(&text), "the price of `NVIDIA_B200` is");
}

#[test]
fn a_misspelt_key_gets_the_closest_one() {
    let text =
        with_provider_block("  pricing {\n    currency = \"USD\"\n    acelerators = {}\n  }");
    let message = find(&failure(&text), "unknown attribute `acelerators`");
    assert!(message.contains("accelerators"), "{message}");
}

/// The index (from 0) of the first line of `text` holding `needle`.
fn line_index(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("no line holds {needle:?}"))
}
