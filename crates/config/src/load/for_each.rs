//! `for_each` expansion: the instances of a cluster block, each with its ID (the key, or the
//! evaluated `id` attribute) and its `each` object (`each.key` and `each.value`). Every block is
//! expanded before any is decoded, so that the locations of all instances can be announced
//! first (`locations`).
//!
//! An instance holds its `each` object, not a context: a context is a copy of every function,
//! variable and local, so one per instance made a fleet's load quadratic in practice (a
//! `for_each` over a large local copied that local once per instance). Whoever evaluates an
//! instance declares its `each` in one scratch context it reuses ([`InstanceScope`]).

use hcl::Value;
use hcl::edit::Span;
use hcl::edit::structure::Block;

use super::FileBlock;
use crate::diagnostic::SourceFile;
use crate::language::evaluator::{Bindings, Evaluator, Scope, takes_string};
use crate::language::functions::string_text;
use crate::language::functions::type_name;
use crate::language::source::block_head;
use crate::language::variables::VarType;

/// One instance of a cluster block: its ID and, with `for_each`, its `each` object.
pub(super) type Instance = (String, Option<Value>);

/// A cluster block with its instances.
pub(super) type ExpandedBlock<'a> = (FileBlock<'a>, Vec<Instance>);

/// Every cluster block with its instances, in source order.
pub(super) fn expand<'a>(
    eval: &mut Evaluator,
    blocks: Vec<FileBlock<'a>>,
    ctx: &Bindings,
) -> Vec<ExpandedBlock<'a>> {
    blocks
        .into_iter()
        .map(|(source, block)| {
            let instances = instances(eval, source, &block, ctx);
            ((source, block), instances)
        })
        .collect()
}

/// The instances of a cluster block: its ID and, with `for_each`, its `each` object.
fn instances(
    eval: &mut Evaluator,
    source: &SourceFile,
    block: &Block,
    ctx: &Bindings,
) -> Vec<Instance> {
    let [label] = block.labels.as_slice() else {
        eval.diagnostics.push(source.error(
            block_head(block),
            "a cluster block needs exactly one label, its ID",
            Some("write `cluster \"ID\" { ... }`".to_owned()),
        ));
        return Vec::new();
    };
    let Some(for_each) = block.body.get_attribute("for_each") else {
        if let Some(id) = block.body.get_attribute("id") {
            eval.diagnostics.push(source.error(
                id.key.span(),
                "`id` is only used with `for_each`; the ID of a single cluster is its label",
                Some("remove `id`".to_owned()),
            ));
        }
        return vec![(label.as_str().to_owned(), None)];
    };
    let Some(entries) = for_each_entries(eval, source, &for_each.value, ctx) else {
        return Vec::new();
    };
    let id_attribute = block.body.get_attribute("id");
    if let Some(id) = id_attribute {
        eval.check_unknown_type(source, "id", &id.value, takes_string);
    }
    let mut scope = InstanceScope::new(ctx);
    let mut instances = Vec::new();
    for (key, value) in entries {
        let mut each = hcl::Map::new();
        each.insert("key".to_owned(), Value::String(key.clone()));
        each.insert("value".to_owned(), value);
        let each = Value::Object(each);
        let id = match id_attribute {
            None => Some(key),
            Some(id) => eval
                .value(source, &id.value, scope.of(Some(&each)))
                .and_then(|evaluated| match string_text(&evaluated.value) {
                    Ok(text) => Some(text),
                    Err(message) => {
                        eval.diagnostics.push(source.error(
                            id.value.span(),
                            format!("wrong value for `id`: {message}"),
                            None,
                        ));
                        None
                    }
                }),
        };
        if let Some(id) = id {
            instances.push((id, Some(each)));
        }
    }
    instances
}

/// The `(each.key, each.value)` pairs of a `for_each` value, in key order.
fn for_each_entries(
    eval: &mut Evaluator,
    source: &SourceFile,
    expr: &hcl::edit::expr::Expression,
    ctx: &Bindings,
) -> Option<Vec<(String, Value)>> {
    let Some(evaluated) = eval.value(source, expr, Scope { ctx, each: false }) else {
        eval.check_unknown_type(source, "for_each", expr, for_each_takes);
        return None;
    };
    let mut entries: Vec<(String, Value)> = match evaluated.value {
        Value::Object(map) => map.into_iter().collect(),
        Value::Array(items) => {
            let mut keys = Vec::new();
            for item in items {
                let Value::String(key) = item else {
                    eval.diagnostics.push(source.error(
                        expr.span(),
                        format!(
                            "for_each over a set needs strings, found a {}",
                            type_name(&item)
                        ),
                        None,
                    ));
                    return None;
                };
                keys.push((key.clone(), Value::String(key)));
            }
            keys
        }
        other => {
            eval.diagnostics.push(
                source.error(
                    expr.span(),
                    format!(
                        "for_each needs a map or a set of strings, found a {}",
                        type_name(&other)
                    ),
                    Some(
                        "e.g. `for_each = { a = {...}, b = {...} }` or `for_each = toset([...])`"
                            .to_owned(),
                    ),
                ),
            );
            return None;
        }
    };
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries.dedup_by(|a, b| a.0 == b.0);
    Some(entries)
}

/// Whether some value of type `ty` (an unknown `for_each` value's declared type) could be a
/// `for_each` value: a map, or a list or set of strings.
fn for_each_takes(ty: &VarType) -> Result<(), String> {
    match ty {
        VarType::Map(_) | VarType::Any => Ok(()),
        _ if ty.may_be_list_of_strings() => Ok(()),
        VarType::List(_) | VarType::Set(_) => Err(format!(
            "for_each over a set needs strings, found a value of type `{ty}`"
        )),
        VarType::String | VarType::Number | VarType::Bool => Err(format!(
            "for_each needs a map or a set of strings, found a value of type `{ty}`"
        )),
    }
}

/// Where the instances of cluster blocks are evaluated, one after another: the shared context
/// for an instance without `for_each`, else one scratch copy of it, made at the first instance
/// that needs it, with that instance's `each` declared.
pub(super) struct InstanceScope<'c> {
    shared: &'c Bindings,
    scratch: Option<Bindings>,
}

impl<'c> InstanceScope<'c> {
    pub(super) fn new(shared: &'c Bindings) -> Self {
        Self {
            shared,
            scratch: None,
        }
    }

    /// The scope of an instance whose `each` object is `each` (`None` without `for_each`).
    pub(super) fn of(&mut self, each: Option<&Value>) -> Scope<'_> {
        let Some(each) = each else {
            return Scope {
                ctx: self.shared,
                each: false,
            };
        };
        let scratch = self.scratch.get_or_insert_with(|| self.shared.clone());
        scratch.declare("each", each.clone());
        Scope {
            ctx: scratch,
            each: true,
        }
    }
}
