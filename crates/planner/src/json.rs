//! The plan as one versioned JSON document (`docs/plan-json.md`): `format_version` first, then
//! the stack, the configuration digest, the action counts and every cluster's change with its
//! exact requests. Saved plan files use the same document, so `show PLANFILE --json` prints
//! what `plan --json` printed.

use serde_json::{Map, Value};

use crate::plan::Plan;

/// Renders the plan document.
pub fn render_json(plan: &Plan) -> Value {
    let mut document = Map::new();
    document.insert(
        "format_version".to_owned(),
        Value::from(plan.format_version),
    );
    document.insert("stack".to_owned(), Value::from(plan.stack.as_str()));
    document.insert(
        "config_digest".to_owned(),
        Value::from(plan.config_digest.as_str()),
    );
    document.insert("summary".to_owned(), to_json(&plan.summary()));
    document.insert("changes".to_owned(), to_json(&plan.changes));
    Value::Object(document)
}

/// The plan's own types hold only strings, numbers and string-keyed maps, which always encode.
fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
