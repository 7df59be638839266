//! Prices the user gives: the provider's `pricing { ... }` block, or a prices file of the same
//! content (`--prices FILE`: the block's attributes as HCL, or the same object as JSON).
//!
//! ```hcl
//! pricing {
//!   currency      = "USD"
//!   machine_types = { "a4-highgpu-8g" = 44.0 }   # per node and hour
//!   accelerators  = { NVIDIA_B200 = 5.5 }        # per accelerator and hour
//! }
//! ```
//!
//! Every value is checked where it is written: the currency an ISO 4217 code, each price a
//! number of at least 0.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use clusterform_model::pricing::{Currency, HourlyPrice, PriceList};
use hcl::Value;
use hcl::edit::Ident;
use hcl::edit::Span;
use hcl::edit::structure::Block;

use crate::diagnostic::{Diagnostic, Diagnostics, SourceFile, detached_error};
use crate::language::block_schema::{AttributeSchema, BlockSchema, UnknownBlock};
use crate::language::evaluator::{Bindings, Evaluator, Scope};
use crate::language::functions::{base_context, with_base_dir};
use crate::language::guard::with_budget;
use crate::language::source::{parse, read_source};

/// The nested block of the provider that holds the prices.
pub(super) const PRICING_BLOCK: &str = "pricing";

/// The attributes that map a type to its hourly price.
const PRICE_MAPS: [&str; 2] = ["machine_types", "accelerators"];

/// What `pricing { ... }` (and a prices file) accepts.
static PRICING: BlockSchema = BlockSchema {
    name: "`pricing`",
    member: "attribute",
    attributes: &[
        AttributeSchema::string("currency").required(
            "add `currency = \"USD\"`: the ISO 4217 code of every price (three capital letters)",
        ),
        AttributeSchema::expression("machine_types"),
        AttributeSchema::expression("accelerators"),
    ],
    blocks: &[],
    accepts: "expected one of:",
    unknown_block: UnknownBlock::Hint(|schema| {
        format!(
            "`pricing` accepts the attributes {}",
            schema.attribute_names().join(", ")
        )
    }),
};

/// Decodes `pricing { ... }`; `None` when something in it is wrong (it is reported).
pub(super) fn pricing(
    eval: &mut Evaluator,
    source: &SourceFile,
    block: &Block,
    ctx: &Bindings,
) -> Option<PriceList> {
    let errors_before = super::error_count(&eval.diagnostics);
    let members = PRICING.walk(source, block, &mut eval.diagnostics);
    let mut strings = members.strings(eval, source, Scope { ctx, each: false });
    let currency =
        strings
            .take("currency")
            .and_then(|(text, range)| match text.parse::<Currency>() {
                Ok(currency) => Some(currency),
                Err(problem) => {
                    let error = source.error(range, problem.to_string(), None);
                    eval.diagnostics.push(error);
                    None
                }
            });
    let mut maps = BTreeMap::new();
    for name in PRICE_MAPS {
        let Some(expr) = members.expression(name) else {
            continue;
        };
        let Some(evaluated) = eval.value(source, expr, Scope { ctx, each: false }) else {
            continue;
        };
        match hourly_prices(name, &evaluated.value) {
            Ok(prices) => {
                maps.insert(name, prices);
            }
            Err(problem) => eval
                .diagnostics
                .push(source.error(expr.span(), problem, None)),
        }
    }
    let complete = super::error_count(&eval.diagnostics) == errors_before;
    let currency = currency.filter(|_| complete)?;
    Some(PriceList {
        currency,
        machine_types: maps.remove("machine_types").unwrap_or_default(),
        accelerators: maps.remove("accelerators").unwrap_or_default(),
    })
}

/// `{ TYPE = price, … }`, each price a number of at least 0.
fn hourly_prices(name: &str, value: &Value) -> Result<BTreeMap<String, HourlyPrice>, String> {
    let Value::Object(entries) = value else {
        return Err(format!(
            "`{name}` must be a map of hourly prices, e.g. {{ \"a4-highgpu-8g\" = 44.0 }}"
        ));
    };
    let mut prices = BTreeMap::new();
    for (kind, price) in entries {
        let price = price
            .as_number()
            .and_then(hcl::Number::as_f64)
            .ok_or_else(|| format!("`{name}`: the price of `{kind}` is {price}, not a number"))
            .and_then(|price| {
                HourlyPrice::new(price).map_err(|problem| format!("`{name}`: `{kind}`: {problem}"))
            })?;
        prices.insert(kind.clone(), price);
    }
    Ok(prices)
}

/// Reads a prices file (`--prices FILE`): JSON when its name ends in `.json`, else HCL, each
/// holding what the `pricing` block holds.
///
/// # Errors
///
/// Every problem of the file, at its place in the file where it has one.
pub fn load_prices(path: &Path) -> Result<PriceList, Diagnostics> {
    let source =
        read_source(path, path.to_path_buf()).map_err(|error| failed(vec![*error], None))?;
    let is_json = path
        .extension()
        .is_some_and(|extension| extension.eq_ignore_ascii_case("json"));
    if is_json {
        return json_prices(&source).map_err(|error| failed(vec![*error], None));
    }
    let body = parse(&source).map_err(|error| failed(vec![*error], Some(&source)))?;
    let mut block = Block::new(Ident::new(PRICING_BLOCK));
    block.body = body;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut eval = Evaluator::default();
    let ctx = Bindings::new(base_context());
    let prices = with_budget(Arc::default(), || {
        with_base_dir(dir, || pricing(&mut eval, &source, &block, &ctx))
    });
    prices.ok_or_else(|| failed(eval.diagnostics, Some(&source)))
}

/// A prices file in JSON: `{"currency": "USD", "machine_types": {…}, "accelerators": {…}}`.
fn json_prices(source: &SourceFile) -> Result<PriceList, Box<Diagnostic>> {
    let refused = |message: String| Box::new(detached_error(&source.path, message, None));
    let value: serde_json::Value = serde_json::from_str(&source.text)
        .map_err(|error| refused(format!("not a JSON prices file: {error}")))?;
    let Some(object) = value.as_object() else {
        return Err(refused(
            "a JSON prices file holds one object: {\"currency\": …, \"machine_types\": {…}, \
             \"accelerators\": {…}}"
                .to_owned(),
        ));
    };
    if let Some(unknown) = object
        .keys()
        .find(|key| !PRICING.attribute_names().contains(&key.as_str()))
    {
        return Err(refused(format!(
            "unknown key `{unknown}` in the prices file; expected one of: {}",
            PRICING.attribute_names().join(", ")
        )));
    }
    let currency = object
        .get("currency")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| refused("the prices file sets no `currency` (e.g. \"USD\")".to_owned()))?
        .parse::<Currency>()
        .map_err(|problem| refused(problem.to_string()))?;
    let map = |name: &str| -> Result<BTreeMap<String, HourlyPrice>, Box<Diagnostic>> {
        match object.get(name) {
            None => Ok(BTreeMap::new()),
            Some(written) => {
                let value = hcl::to_value(written).map_err(|error| refused(error.to_string()))?;
                hourly_prices(name, &value).map_err(refused)
            }
        }
    };
    Ok(PriceList {
        currency,
        machine_types: map("machine_types")?,
        accelerators: map("accelerators")?,
    })
}

fn failed(items: Vec<Diagnostic>, source: Option<&SourceFile>) -> Diagnostics {
    Diagnostics {
        items,
        missing_variables: Vec::new(),
        sources: source
            .map(|source| BTreeMap::from([(source.path.clone(), source.text.clone())]))
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    fn wanted() -> PriceList {
        PriceList {
            currency: "EUR".parse().unwrap(),
            machine_types: BTreeMap::from([(
                "a4-highgpu-8g".to_owned(),
                HourlyPrice::new(44.0).unwrap(),
            )]),
            accelerators: BTreeMap::from([(
                "NVIDIA_B200".to_owned(),
                HourlyPrice::new(5.5).unwrap(),
            )]),
        }
    }

    #[test]
    fn an_hcl_prices_file_holds_the_blocks_attributes() {
        let (_dir, path) = written(
            "prices.hcl",
            "currency = \"EUR\"\nmachine_types = { \"a4-highgpu-8g\" = 44 }\n\
             accelerators = { NVIDIA_B200 = 5.5 }\n",
        );
        assert_eq!(load_prices(&path).unwrap(), wanted());
    }

    #[test]
    fn a_json_prices_file_holds_the_same_object() {
        let (_dir, path) = written(
            "prices.json",
            r#"{"currency": "EUR", "machine_types": {"a4-highgpu-8g": 44},
                "accelerators": {"NVIDIA_B200": 5.5}}"#,
        );
        assert_eq!(load_prices(&path).unwrap(), wanted());
    }

    #[test]
    fn a_wrong_currency_or_price_is_reported_where_it_is_written() {
        let (_dir, path) = written(
            "prices.hcl",
            "currency = \"usd\"\naccelerators = { NVIDIA_B200 = -1 }\n",
        );
        let errors = load_prices(&path).unwrap_err().items;
        let places: Vec<(usize, &str)> = errors
            .iter()
            .map(|error| (error.line, error.message.as_str()))
            .collect();
        assert_eq!(
            places,
            [
                (
                    1,
                    "`usd` is not an ISO 4217 currency code (three capital letters, e.g. USD)"
                ),
                (
                    2,
                    "`accelerators`: `NVIDIA_B200`: -1 is not an hourly price (a number of at \
                     least 0)"
                ),
            ]
        );
    }

    #[test]
    fn a_json_file_without_currency_or_with_an_unknown_key_is_refused() {
        let (_dir, path) = written("prices.json", r#"{"accelerators": {}}"#);
        let error = &load_prices(&path).unwrap_err().items[0];
        assert!(error.message.contains("sets no `currency`"), "{error:?}");
        let (_dir, path) = written("prices.json", r#"{"currency": "USD", "gpus": {}}"#);
        let error = &load_prices(&path).unwrap_err().items[0];
        assert!(error.message.contains("unknown key `gpus`"), "{error:?}");
    }
}
