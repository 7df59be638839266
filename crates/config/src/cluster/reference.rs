//! The generated part of `docs/configuration.md`: every block and attribute a `cluster` block
//! accepts, rendered from the field table (the same walk the decoder does), so the reference
//! cannot drift from the language.

use clusterform_model::fields::{FieldAccess, FieldKind};

use crate::cluster::fallback::{FALLBACK_BLOCK, takes_fallbacks};
use crate::cluster::schema::{Member, element_path, hcl_name, members};
use crate::config::FALLBACK_FIELDS;

/// Marks the start of the generated section in `docs/configuration.md`.
pub const REFERENCE_BEGIN: &str = "<!-- BEGIN GENERATED REFERENCE -->";
/// Marks its end.
pub const REFERENCE_END: &str = "<!-- END GENERATED REFERENCE -->";

/// The reference of the blocks and attributes inside `cluster "ID" { ... }`, as Markdown.
pub fn reference_markdown() -> String {
    let mut out = String::new();
    write_block(&mut out, "", "cluster \"ID\"", "cluster");
    out
}

fn write_block(out: &mut String, generic: &str, title: &str, nesting: &str) {
    out.push_str(&format!(
        "### `{title}`\n\nInside: `{nesting}`.\n\n| name | type | required | a change | description |\n|---|---|---|---|---|\n"
    ));
    let mut nested = Vec::new();
    for (name, member) in members(generic) {
        let spec = member.spec();
        let kind = match member {
            Member::Attribute(_) => spec.kind.describe(),
            Member::Block(_) => format!("block `{name} {{ }}`"),
            Member::Labelled(_) => {
                format!("repeated block `{name} \"{}\" {{ }}`", key_label(spec.kind))
            }
        };
        let change = match spec.access {
            FieldAccess::Mutable(mask) => format!("in place (`{mask}`)"),
            _ => "replaces the cluster".to_owned(),
        };
        out.push_str(&format!(
            "| `{name}` | {kind} | {} | {change} | {} |\n",
            if spec.required { "yes" } else { "" },
            spec.description
        ));
        match member {
            Member::Attribute(_) => {}
            Member::Block(_) => nested.push((spec.path.to_owned(), name.to_owned(), name)),
            Member::Labelled(_) => nested.push((
                element_path(spec),
                format!("{name} \"{}\"", key_label(spec.kind)),
                hcl_name(spec),
            )),
        }
    }
    if takes_fallbacks(generic) {
        write_fallback_row(out);
    }
    out.push('\n');
    for (path, title, name) in nested {
        write_block(out, &path, &title, &format!("{nesting} > {name}"));
    }
}

/// The row of a pool's `fallback` blocks: not a field of the resource, so not in the table.
fn write_fallback_row(out: &mut String) {
    let members: Vec<String> = FALLBACK_FIELDS
        .iter()
        .map(|name| format!("`{name}`"))
        .collect();
    out.push_str(&format!(
        "| `{FALLBACK_BLOCK}` | repeated block `{FALLBACK_BLOCK} {{ }}` |  | see [Fallback alternatives](#fallback-alternatives) | An alternative tried, in order, when a create fails for capacity or quota; sets only {} |\n",
        members.join(", ")
    ));
}

fn key_label(kind: FieldKind) -> &'static str {
    match kind {
        FieldKind::KeyedList("node_pool_id") => "POOL",
        _ => "ID",
    }
}
