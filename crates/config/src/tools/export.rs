//! Writing a cluster back as HCL (for `clusterform import`): a `cluster "ID" { ... }` block
//! with every user-settable field that is set, walked from the field table so that it covers
//! exactly what the language accepts. The ownership label is left out (the provider's `stack`
//! sets it). Loading the result with a provider block gives back the same desired cluster.

use std::fmt::Write;
use std::path::Path;

use clusterform_model::fields::{FieldKind, camel_case};
use clusterform_model::{Cluster, STACK_LABEL};
use serde_json::Value as Json;

use crate::cluster::schema::{Member, element_path, key_field, members};
use crate::tools::format::format_source;

/// The HCL of a cluster, formatted.
pub fn cluster_to_hcl(id: &str, cluster: &Cluster) -> String {
    cluster_to_hcl_placed(id, cluster, &Placement::default())
}

/// Where a cluster block puts its cluster when it is not where the provider's `project` and
/// `region` default to: each one set is written as the block's own attribute.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placement<'a> {
    /// The block's `project`, when it differs from the provider's.
    pub project: Option<&'a str>,
    /// The block's `region`, when it differs from the provider's.
    pub region: Option<&'a str>,
}

/// [`cluster_to_hcl`] for a cluster at `placement`: its `project` and `region` first.
pub fn cluster_to_hcl_placed(id: &str, cluster: &Cluster, placement: &Placement<'_>) -> String {
    let json = serde_json::to_value(cluster).unwrap_or(Json::Null);
    let mut out = format!("cluster {} {{\n", quote(id));
    for (name, value) in [("project", placement.project), ("region", placement.region)] {
        if let Some(value) = value {
            let _ = writeln!(out, "  {name} = {}", quote(value));
        }
    }
    if let Json::Object(object) = &json {
        write_message(&mut out, object, "", 1);
    }
    out.push_str("}\n");
    // The text is built from valid pieces, so it always parses; fall back to it regardless.
    format_source(&out, Path::new("import.hcl")).unwrap_or(out)
}

fn write_message(
    out: &mut String,
    object: &serde_json::Map<String, Json>,
    generic: &str,
    depth: usize,
) {
    let indent = "  ".repeat(depth);
    for (name, member) in members(generic) {
        let spec = member.spec();
        let Some(value) = object
            .get(&camel_case(spec.name()))
            .filter(|v| !v.is_null())
        else {
            continue;
        };
        match member {
            Member::Attribute(_) => {
                let skip_stack = generic.is_empty() && spec.name() == "labels";
                if let Some(text) = attribute_value(spec.kind, value, skip_stack) {
                    let _ = writeln!(out, "{indent}{name} = {text}");
                }
            }
            Member::Block(_) => {
                if let Json::Object(nested) = value {
                    let _ = writeln!(out, "{indent}{name} {{");
                    write_message(out, nested, spec.path, depth + 1);
                    let _ = writeln!(out, "{indent}}}");
                }
            }
            Member::Labelled(_) => {
                let key = key_field(spec).map(camel_case).unwrap_or_default();
                for element in value.as_array().into_iter().flatten() {
                    let Json::Object(element) = element else {
                        continue;
                    };
                    let label = element.get(&key).and_then(Json::as_str).unwrap_or_default();
                    let _ = writeln!(out, "{indent}{name} {} {{", quote(label));
                    write_message(out, element, &element_path(spec), depth + 1);
                    let _ = writeln!(out, "{indent}}}");
                }
            }
        }
    }
}

/// The HCL of an attribute's value; `None` when nothing is left to write.
fn attribute_value(kind: FieldKind, value: &Json, skip_stack: bool) -> Option<String> {
    match (kind, value) {
        (FieldKind::StringMap | FieldKind::SlurmConfig, Json::Object(map)) => {
            let entries: Vec<String> = map
                .iter()
                .filter(|(key, _)| !(skip_stack && key.as_str() == STACK_LABEL))
                .map(|(key, value)| format!("{} = {}", map_key(key), scalar(value)))
                .collect();
            (!entries.is_empty() || map.is_empty())
                .then(|| format!("{{ {} }}", entries.join(", ")).replace("{  }", "{}"))
        }
        (_, Json::Array(items)) => Some(format!(
            "[{}]",
            items.iter().map(scalar).collect::<Vec<_>>().join(", ")
        )),
        (_, value) => Some(scalar(value)),
    }
}

fn scalar(value: &Json) -> String {
    match value {
        Json::String(text) => quote(text),
        other => other.to_string(),
    }
}

fn map_key(key: &str) -> String {
    let identifier = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if identifier {
        key.to_owned()
    } else {
        quote(key)
    }
}

/// An HCL quoted string: escapes, and `${`/`%{` doubled so they stay literal.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '$' | '%' if chars.peek() == Some(&'{') => {
                out.push(c);
                out.push(c);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_keeps_text_literal() {
        assert_eq!(quote("a\"b\\c\n${x}%{y}$z"), r#""a\"b\\c\n$${x}%%{y}$z""#);
    }

    #[test]
    fn the_stack_label_is_left_out() {
        let mut cluster = Cluster {
            labels: Some([(STACK_LABEL.to_owned(), "s".to_owned())].into()),
            ..Cluster::default()
        };
        assert_eq!(cluster_to_hcl("c1", &cluster), "cluster \"c1\" {\n}\n");
        cluster.labels = Some(
            [
                ("team".to_owned(), "ml".to_owned()),
                ("a.b".to_owned(), "x".to_owned()),
            ]
            .into(),
        );
        assert_eq!(
            cluster_to_hcl("c1", &cluster),
            "cluster \"c1\" {\n  labels = { \"a.b\" = \"x\", team = \"ml\" }\n}\n"
        );
    }
}
