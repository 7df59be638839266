//! The plan's versioned serialised form (`docs/plan-json.md`): `format_version` first, then the
//! stack, the configuration digest, what applying it needs (directory, variable values, the
//! flags it was made with and their digest), the action counts and every cluster's change with
//! its exact requests. It is the saved plan file's format, so it lives with the plan and not in a view;
//! `plan --json` and `show PLANFILE --json` print the same document.

use serde_json::{Map, Value};

use crate::plan::Plan;

/// The plan as its versioned JSON document.
pub fn plan_document(plan: &Plan) -> Value {
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
    document.insert("config_files".to_owned(), to_json(&plan.config_files));
    document.insert(
        "directory".to_owned(),
        Value::from(plan.directory.to_string_lossy()),
    );
    document.insert("variables".to_owned(), to_json(&plan.variables));
    document.insert("flags".to_owned(), to_json(&plan.flags));
    document.insert(
        "flags_digest".to_owned(),
        Value::from(plan.flags_digest.as_str()),
    );
    if let Some(endpoint) = &plan.endpoint {
        document.insert("endpoint".to_owned(), Value::from(endpoint.to_string()));
    }
    document.insert("summary".to_owned(), to_json(&plan.summary()));
    document.insert("changes".to_owned(), to_json(&plan.changes));
    Value::Object(document)
}

/// The plan's own types hold only strings, numbers and string-keyed maps, which always encode.
fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
