//! The provider's `pricing { ... }` block: decoded into `Provider.pricing`, its currency and
//! prices checked at the attribute, misspellings answered with the closest key.

use std::collections::BTreeMap;

use clusterform_model::pricing::HourlyPrice;

use crate::support::{failure, find, load_text, valid_with};

/// The valid file with `block` inside the provider block.
fn with_pricing(block: &str) -> String {
    valid_with(
        "  stack   = \"research\"\n",
        &format!("  stack   = \"research\"\n{block}\n"),
    )
}

#[test]
fn the_block_is_decoded_onto_the_provider() {
    let text = with_pricing(
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
    let without = load_text(&with_pricing("")).unwrap().config.provider;
    assert_eq!(without.pricing, None);
}

#[test]
fn a_currency_that_is_not_an_iso_code_is_reported() {
    let text = with_pricing("  pricing { currency = \"dollars\" }");
    find(
        &failure(&text),
        "`dollars` is not an ISO 4217 currency code",
    );
}

#[test]
fn a_block_without_currency_is_reported() {
    let text = with_pricing("  pricing { accelerators = { NVIDIA_B200 = 5.5 } }");
    find(&failure(&text), "`pricing` block sets no `currency`");
}

#[test]
fn a_price_that_is_not_a_number_is_reported() {
    let text = with_pricing(
        "  pricing {\n    currency = \"USD\"\n    accelerators = { NVIDIA_B200 = \"cheap\" }\n  }",
    );
    find(&failure(&text), "the price of `NVIDIA_B200` is");
}

#[test]
fn a_misspelt_key_gets_the_closest_one() {
    let text = with_pricing("  pricing {\n    currency = \"USD\"\n    acelerators = {}\n  }");
    let message = find(&failure(&text), "unknown attribute `acelerators`");
    assert!(message.contains("accelerators"), "{message}");
}
