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
//! number of at least 0. A type the machine catalogue lacks (a typo, or a type newer than the
//! catalogue) is a warning at its key, never an error: its price is used only by pools of
//! that type.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use clusterform_model::pricing::{Currency, HourlyPrice, PriceList};
use hcl::Value;
use hcl::edit::Ident;
use hcl::edit::Span;
use hcl::edit::expr::{Expression, ObjectKey};
use hcl::edit::structure::Block;

use crate::cluster::catalogue::{TypeList, Unlisted, catalogue};
use crate::cluster::spans::key_text;
use crate::diagnostic::{Diagnostic, Diagnostics, Severity, SourceFile, detached_error};
use crate::language::block_schema::{AttributeSchema, BlockSchema, UnknownBlock};
use crate::language::evaluator::{Bindings, Evaluator, Scope};
use crate::language::functions::{base_context, with_base_dir};
use crate::language::guard::with_budget;
use crate::language::source::{parse, read_source};

/// The nested block of the provider that holds the prices.
pub(super) const PRICING_BLOCK: &str = "pricing";

/// An attribute that maps a type to its hourly price, and the catalogue's list of its types.
#[derive(Debug, Clone, Copy)]
struct PriceMap {
    name: &'static str,
    types: TypeList,
}

/// The attributes that map a type to its hourly price.
const PRICE_MAPS: [PriceMap; 2] = [
    PriceMap {
        name: "machine_types",
        types: TypeList::MachineTypes,
    },
    PriceMap {
        name: "accelerators",
        types: TypeList::Accelerators,
    },
];

impl PriceMap {
    /// The warning for each type of `prices` the catalogue lacks, with its key.
    fn unlisted_types(
        self,
        prices: &BTreeMap<String, HourlyPrice>,
    ) -> impl Iterator<Item = (&str, Unlisted)> {
        let catalogue = catalogue();
        prices.keys().filter_map(move |kind| {
            let Unlisted { message, hint } = catalogue.unlisted(self.types, kind)?;
            let message = format!(
                "`{PRICING_BLOCK}.{}`: {message}; its price is used only by pools of that type",
                self.name
            );
            Some((kind.as_str(), Unlisted { message, hint }))
        })
    }
}

/// A prices file's prices, and its warnings.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedPrices {
    /// The prices.
    pub prices: PriceList,
    /// What does not stop them from being used: each type the machine catalogue lacks.
    pub warnings: Vec<Diagnostic>,
}

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
    for map in PRICE_MAPS {
        let name = map.name;
        let Some(expr) = members.expression(name) else {
            continue;
        };
        let Some(evaluated) = eval.value(source, expr, Scope { ctx, each: false }) else {
            continue;
        };
        match hourly_prices(name, &evaluated.value) {
            Ok(prices) => {
                for (kind, Unlisted { message, hint }) in map.unlisted_types(&prices) {
                    let range = key_range(expr, kind).or_else(|| expr.span());
                    let warning = source.diagnostic(Severity::Warning, range, message, Some(hint));
                    eval.diagnostics.push(warning);
                }
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

/// Where `expr`, an object written out, writes the key `kind`; `None` for any other
/// expression (a variable, a function's result), whose keys are written elsewhere.
fn key_range(expr: &Expression, kind: &str) -> Option<Range<usize>> {
    let Expression::Object(object) = expr else {
        return None;
    };
    object
        .iter()
        .map(|(key, _)| key)
        .find(|key| key_text(key) == Some(kind))
        .and_then(|key| match key {
            ObjectKey::Ident(ident) => ident.span(),
            ObjectKey::Expression(written) => written.span(),
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
/// holding what the `pricing` block holds. Its warnings come with the prices: in HCL at the
/// key they concern, in JSON (read without positions) at the file.
///
/// # Errors
///
/// Every problem of the file, at its place in the file where it has one.
pub fn load_prices(path: &Path) -> Result<LoadedPrices, Diagnostics> {
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
    match prices {
        Some(prices) => Ok(LoadedPrices {
            prices,
            warnings: eval.diagnostics,
        }),
        None => Err(failed(eval.diagnostics, Some(&source))),
    }
}

/// A prices file in JSON: `{"currency": "USD", "machine_types": {…}, "accelerators": {…}}`.
fn json_prices(source: &SourceFile) -> Result<LoadedPrices, Box<Diagnostic>> {
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
    let [machine_types, accelerators] = PRICE_MAPS;
    let prices = PriceList {
        currency,
        machine_types: map(machine_types.name)?,
        accelerators: map(accelerators.name)?,
    };
    let warnings = [
        machine_types.unlisted_types(&prices.machine_types),
        accelerators.unlisted_types(&prices.accelerators),
    ]
    .into_iter()
    .flatten()
    .map(|(_, Unlisted { message, hint })| {
        source.diagnostic(Severity::Warning, None, message, Some(hint))
    })
    .collect();
    Ok(LoadedPrices { prices, warnings })
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
        assert_eq!(
            load_prices(&path).unwrap(),
            LoadedPrices {
                prices: wanted(),
                warnings: Vec::new()
            }
        );
    }

    #[test]
    fn a_json_prices_file_holds_the_same_object() {
        let (_dir, path) = written(
            "prices.json",
            r#"{"currency": "EUR", "machine_types": {"a4-highgpu-8g": 44},
                "accelerators": {"NVIDIA_B200": 5.5}}"#,
        );
        assert_eq!(
            load_prices(&path).unwrap(),
            LoadedPrices {
                prices: wanted(),
                warnings: Vec::new()
            }
        );
    }

    /// Each warning of the prices file at `path`: its place, message and hint.
    fn warnings(path: &Path) -> Vec<String> {
        load_prices(path)
            .unwrap()
            .warnings
            .iter()
            .map(|warning| {
                format!(
                    "{} {}: {} | {}",
                    warning.severity,
                    warning.location(),
                    warning.message,
                    warning.hint.as_deref().unwrap_or_default()
                )
            })
            .collect()
    }

    #[test]
    fn an_hcl_prices_file_warns_at_each_key_the_catalogue_lacks() {
        let (_dir, path) = written(
            "prices.hcl",
            "currency = \"USD\"\nmachine_types = { \"a4-highgpu-8g\" = 44, \"a4-higpu-8g\" = 44 }\n\
             accelerators = {\n  NVIDIA_B200 = 5.5\n  NVIDIA_B20 = 5.5\n}\n",
        );
        let file = path.display();
        let newer = "The service may offer types newer than clusterform's catalogue (the Compute \
                     resources page lists the documented ones): if this one exists, ignore this \
                     warning.";
        assert_eq!(
            warnings(&path),
            [
                format!(
                    "warning {file}:2:41: `pricing.machine_types`: machine type `a4-higpu-8g` is \
                     not in clusterform's catalogue of training machine types; its price is used \
                     only by pools of that type | did you mean `a4-highgpu-8g`? {newer}"
                ),
                format!(
                    "warning {file}:5:3: `pricing.accelerators`: accelerator type `NVIDIA_B20` is \
                     not in clusterform's catalogue; its price is used only by pools of that type \
                     | did you mean `NVIDIA_B200`? {newer}"
                ),
            ]
        );
    }

    #[test]
    fn a_json_prices_file_warns_at_the_file_for_each_type_the_catalogue_lacks() {
        let (_dir, path) = written(
            "prices.json",
            r#"{"currency": "USD", "machine_types": {"a4-highgpu-8g": 44, "a4-higpu-8g": 44},
                "accelerators": {"NVIDIA_B200": 5.5, "NVIDIA_L4": 0.7}}"#,
        );
        let file = path.display();
        let found = warnings(&path);
        let places: Vec<&str> = found
            .iter()
            .map(|warning| warning.split(" | ").next().unwrap())
            .collect();
        assert_eq!(
            places,
            [
                format!(
                    "warning {file}: `pricing.machine_types`: machine type `a4-higpu-8g` is not \
                     in clusterform's catalogue of training machine types; its price is used only \
                     by pools of that type"
                ),
                format!(
                    "warning {file}: `pricing.accelerators`: accelerator type `NVIDIA_L4` is not \
                     in clusterform's catalogue; its price is used only by pools of that type"
                ),
            ]
        );
        assert!(
            found[0].contains("| did you mean `a4-highgpu-8g`? The service"),
            "{found:?}"
        );
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
