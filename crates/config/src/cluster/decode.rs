//! Decoding a `cluster` block into a desired `clusterform_model::Cluster`, driven by the field
//! table through [`crate::cluster::schema`]: each attribute is evaluated on its own, checked
//! against its field's kind and written under its snake_case name into the block's [`Fields`],
//! which the model's serde then reads (it accepts snake_case), so unset fields stay unset.
//! Unknown names, wrong block or attribute syntax, duplicates and missing required fields are
//! reported here with positions.
//! Concrete paths such as `node_pools[cpu].zone` are only rendered when shown (a diagnostic, a
//! sensitive field); the semantic checks that follow find positions through [`crate::cluster::spans`].
//! A pool's `fallback` blocks are decoded after the pool, each member as the pool's own, into
//! what each block sets ([`crate::cluster::fallback`]).

use std::collections::BTreeSet;
use std::fmt;
use std::ops::Range;

use clusterform_model::duration;
use clusterform_model::fields::{self, FieldAccess, FieldKind, FieldSpec, UPDATE_MODES};
use clusterform_model::paths::{IgnorePath, IgnorePathError};
use clusterform_model::{Cluster, UpdateMode};
use hcl::Value;
use hcl::edit::Span;
use hcl::edit::expr::Expression;
use hcl::edit::structure::{Attribute, Block, Body, Structure};

use crate::cluster::decoded::{Decoded, Fields};
use crate::cluster::fallback::{
    FALLBACK_BLOCK, FallbackBlock, FallbackFields, PoolFallbackBlocks, takes_fallbacks,
};
use crate::cluster::schema::{Member, Shape, cluster_shape, is_output_only, key_field, shape_of};
use crate::config::{FALLBACK_FIELDS, Lifecycle, Timeouts};
use crate::diagnostic::{SourceFile, closest_or_all, did_you_mean};
use crate::language::evaluator::{Evaluated, Evaluator, Scope, takes_string};
use crate::language::functions::{string_text, type_name};
use crate::language::source::{block_head, label_range};
use crate::language::variables::VarType;

/// Cluster-level names that are not fields of the resource.
const CLUSTER_ATTRIBUTES: &[&str] = &["project", "region", "update_mode", "for_each", "id"];
/// The longest `timeouts` value: waiting longer for one operation is never intended, and
/// bounding it keeps deadlines computable.
pub const MAX_TIMEOUT_SECONDS: u64 = 7 * 86_400;

/// `google.protobuf.Duration` holds at most 315,576,000,000 seconds.
const MAX_PROTO_DURATION_SECONDS: u64 = 315_576_000_000;

const CLUSTER_BLOCKS: &[&str] = &["timeouts", "lifecycle"];

/// A decoded cluster block, before the semantic checks.
#[derive(Debug)]
pub(crate) struct DecodedCluster {
    pub cluster: Cluster,
    pub project: Option<String>,
    pub region: Option<String>,
    pub update_mode: Option<UpdateMode>,
    pub timeouts: Timeouts,
    pub lifecycle: Lifecycle,
    pub sensitive_paths: BTreeSet<String>,
    /// The `fallback` blocks of its pools, pools in declaration order.
    pub fallbacks: Vec<PoolFallbackBlocks>,
}

/// Decodes one cluster block (one `for_each` instance), as far as it decodes: with errors, the
/// cluster holds the attributes that decoded; `None` when no cluster can be built at all.
pub(crate) fn decode_cluster(
    eval: &mut Evaluator,
    file: &SourceFile,
    block: &Block,
    scope: Scope<'_>,
) -> Option<DecodedCluster> {
    let errors_before = eval.diagnostics.len();
    let mut decoder = Decoder {
        eval,
        file,
        scope,
        sensitive: BTreeSet::new(),
        fallbacks: Vec::new(),
        unknown_values: 0,
    };
    let object = decoder.message(
        &block.body,
        cluster_shape(),
        &Path::Cluster,
        block_head(block).as_ref(),
        true,
    );
    let project = decoder.cluster_string(&block.body, "project", None);
    let region = decoder.cluster_string(&block.body, "region", None);
    // `cluster_string` has checked the value against the modes, so it parses.
    let update_mode = decoder
        .cluster_string(&block.body, "update_mode", Some(UPDATE_MODES))
        .and_then(|text| text.parse().ok());
    let timeouts = decoder.timeouts(&block.body);
    let lifecycle = decoder.lifecycle(&block.body);
    let Decoder {
        sensitive,
        fallbacks,
        ..
    } = decoder;
    // A cluster with errors is still built from the attributes that decoded, so that the
    // semantic checks report their problems too (an unknown attribute must not hide a
    // dangling reference); the caller counts the errors and plans nothing from it.
    let had_errors = eval.diagnostics.len() > errors_before;
    match object.read::<Cluster>() {
        Ok(cluster) => Some(DecodedCluster {
            cluster,
            project,
            region,
            update_mode,
            timeouts,
            lifecycle,
            sensitive_paths: sensitive,
            fallbacks,
        }),
        Err(_) if had_errors => None,
        Err(error) => {
            eval.diagnostics.push(file.error(
                block_head(block),
                format!("cannot build the cluster: {error}"),
                None,
            ));
            None
        }
    }
}

struct Decoder<'e, 'c> {
    eval: &'e mut Evaluator,
    file: &'e SourceFile,
    scope: Scope<'c>,
    sensitive: BTreeSet<String>,
    fallbacks: Vec<PoolFallbackBlocks>,
    /// How many attribute values so far depend on unknown variables.
    unknown_values: usize,
}

/// The concrete path of a message or field, e.g. `node_pools[cpu].zone`, rendered only when
/// shown: decoding passes it down for every block and attribute.
#[derive(Debug, Clone, Copy)]
enum Path<'p> {
    /// The cluster itself (the empty path).
    Cluster,
    /// A field of a message.
    Field(&'p Path<'p>, &'p str),
    /// The element with key `KEY` of a keyed list: `names[KEY]`.
    Element(&'p Path<'p>, &'p str, &'p str),
    /// The `N`-th `fallback` block of a pool, from 1: `fallback[N]`.
    Fallback(&'p Path<'p>, usize),
}

impl Path<'_> {
    /// The path of the field a value at this path sets: a fallback's members are its pool's
    /// fields in another attempt, so `node_pools[gpu].fallback[1].zone` sets
    /// `node_pools[gpu].zone`.
    fn field_path(&self) -> String {
        let mut out = String::new();
        // Writing into a `String` cannot fail.
        let _ = self.write(&mut out, false);
        out
    }

    fn write(&self, out: &mut impl fmt::Write, fallbacks: bool) -> fmt::Result {
        let (parent, name) = match self {
            Self::Cluster => return Ok(()),
            Self::Fallback(parent, _) if !fallbacks => return parent.write(out, fallbacks),
            Self::Fallback(parent, _) => (parent, FALLBACK_BLOCK),
            Self::Field(parent, name) | Self::Element(parent, name, _) => (parent, *name),
        };
        if !matches!(parent, Self::Cluster) {
            parent.write(out, fallbacks)?;
            out.write_char('.')?;
        }
        out.write_str(name)?;
        match self {
            Self::Element(_, _, key) => write!(out, "[{key}]"),
            Self::Fallback(_, ordinal) => write!(out, "[{ordinal}]"),
            _ => Ok(()),
        }
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, true)
    }
}

/// A name already used in a message: an attribute or block name, or a labelled block's name
/// with its key.
type Seen<'b> = (&'b str, Option<&'b str>);

/// Names accepted inside a message, for "did you mean" hints.
fn candidates(shape: &Shape, top: bool) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = shape.members.iter().map(|(name, _)| *name).collect();
    if top {
        names.extend(CLUSTER_ATTRIBUTES.iter().chain(CLUSTER_BLOCKS));
    }
    if takes_fallbacks(&shape.generic) {
        names.push(FALLBACK_BLOCK);
    }
    names
}

fn context_name(generic: &str) -> String {
    if generic.is_empty() {
        "a cluster block".to_owned()
    } else {
        let name = generic.rsplit('.').next().unwrap_or(generic);
        let name = name.strip_suffix("s[]").unwrap_or(name);
        format!("`{name}`")
    }
}

impl Decoder<'_, '_> {
    /// Decodes the body of a message of `shape` (concrete path `concrete`) into a JSON
    /// object; `head` is where the block starts, for missing-field errors.
    fn message(
        &mut self,
        body: &Body,
        shape: &'static Shape,
        concrete: &Path<'_>,
        head: Option<&Range<usize>>,
        top: bool,
    ) -> Fields {
        let mut object = Fields::with_capacity(body.len());
        let mut seen: Vec<Seen<'_>> = Vec::with_capacity(body.len());
        // Attributes whose value depends on unknown variables: written, so not missing.
        let mut unknown: Vec<&str> = Vec::new();
        for structure in body.iter() {
            match structure {
                Structure::Attribute(attribute) => {
                    let name = attribute.key.as_str();
                    if top && CLUSTER_ATTRIBUTES.contains(&name) {
                        continue;
                    }
                    if self.first_time(&mut seen, name, attribute.key.span())
                        && self.attribute(attribute, shape, concrete, top, &mut object)
                    {
                        unknown.push(name);
                    }
                }
                Structure::Block(block) => {
                    let name = block.ident.as_str();
                    // A pool's `fallback` blocks are decoded on their own, after the pool.
                    let own_block = (top && CLUSTER_BLOCKS.contains(&name))
                        || (takes_fallbacks(&shape.generic) && name == FALLBACK_BLOCK);
                    if own_block {
                        continue;
                    }
                    self.block(block, shape, concrete, top, &mut object, &mut seen);
                }
            }
        }
        self.check_required(shape, concrete, &object, &unknown, head);
        object
    }

    fn first_time<'b>(
        &mut self,
        seen: &mut Vec<Seen<'b>>,
        name: &'b str,
        range: Option<Range<usize>>,
    ) -> bool {
        if !seen.contains(&(name, None)) {
            seen.push((name, None));
            return true;
        }
        self.eval.diagnostics.push(self.file.error(
            range,
            format!("`{name}` is set more than once"),
            Some("remove the repeated one".to_owned()),
        ));
        false
    }

    fn unknown(&mut self, name: &str, shape: &Shape, top: bool, range: Option<Range<usize>>) {
        let (message, hint) = if is_output_only(&shape.generic, name) {
            (
                format!("`{name}` is output only: the service sets it"),
                Some("remove it".to_owned()),
            )
        } else {
            (
                format!(
                    "unknown attribute or block `{name}` in {}",
                    context_name(&shape.generic)
                ),
                Some(closest_or_all(name, &candidates(shape, top))),
            )
        };
        self.eval
            .diagnostics
            .push(self.file.error(range, message, hint));
    }

    /// Decodes one attribute into `object`; `true` when its value is unknown (it depends on
    /// variables without a value).
    fn attribute(
        &mut self,
        attribute: &Attribute,
        shape: &Shape,
        concrete: &Path<'_>,
        top: bool,
        object: &mut Fields,
    ) -> bool {
        let name = attribute.key.as_str();
        let spec = match shape.member(name) {
            Some(Member::Attribute(spec)) => spec,
            Some(_) => {
                self.eval.diagnostics.push(self.file.error(
                    attribute.key.span(),
                    format!("`{name}` is a block, not an attribute"),
                    Some(format!("write `{name} {{ ... }}`")),
                ));
                return false;
            }
            None => {
                self.unknown(name, shape, top, attribute.key.span());
                return false;
            }
        };
        let range = attribute.value.span();
        let Some(Evaluated { value, sensitive }) =
            self.eval.value(self.file, &attribute.value, self.scope)
        else {
            if !self.eval.depends_on_unknown(&attribute.value) {
                return false;
            }
            self.check_unknown_type(name, spec, &attribute.value);
            self.unknown_values += 1;
            return true;
        };
        match field_value(spec, &value) {
            Ok(Some(decoded)) => {
                if sensitive {
                    self.sensitive
                        .insert(Path::Field(concrete, name).field_path());
                }
                object.insert(spec.name(), decoded);
            }
            Ok(None) => {}
            Err((message, hint)) => {
                self.eval.diagnostics.push(self.file.error(
                    range,
                    format!("wrong value for `{name}`: {message}"),
                    hint,
                ));
            }
        }
        false
    }

    /// Reports an attribute whose value is unknown but sure to have a type the field never
    /// takes (`labels = var.team` with `variable "team" { type = string }`).
    fn check_unknown_type(&mut self, name: &str, spec: &FieldSpec, expr: &Expression) {
        self.eval
            .check_unknown_type(self.file, name, expr, |ty| kind_takes(spec.kind, ty));
    }

    fn block<'b>(
        &mut self,
        block: &'b Block,
        shape: &Shape,
        concrete: &Path<'_>,
        top: bool,
        object: &mut Fields,
        seen: &mut Vec<Seen<'b>>,
    ) {
        let name = block.ident.as_str();
        let head = block_head(block);
        let member = shape.member(name);
        match (member, member.and_then(shape_of)) {
            (Some(Member::Block(spec)), Some(nested_shape)) => {
                if !block.labels.is_empty() {
                    self.eval.diagnostics.push(self.file.error(
                        label_range(block),
                        format!("a `{name}` block takes no label"),
                        Some(format!("write `{name} {{ ... }}`")),
                    ));
                    return;
                }
                if !self.first_time(seen, name, head.clone()) {
                    return;
                }
                let path = Path::Field(concrete, name);
                let nested = self.message(&block.body, nested_shape, &path, head.as_ref(), false);
                object.insert(spec.name(), Decoded::Message(nested));
            }
            (Some(Member::Labelled(spec)), Some(element_shape)) => {
                self.labelled(block, spec, element_shape, concrete, object, seen);
            }
            (Some(Member::Attribute(_)), _) => {
                self.eval.diagnostics.push(self.file.error(
                    head,
                    format!("`{name}` is an attribute, not a block"),
                    Some(format!("write `{name} = ...`")),
                ));
            }
            // A block member always opens a shape; without one the name is unknown.
            (None, _) | (Some(_), None) => self.unknown(name, shape, top, block.ident.span()),
        }
    }

    fn labelled<'b>(
        &mut self,
        block: &'b Block,
        spec: &'static FieldSpec,
        shape: &'static Shape,
        concrete: &Path<'_>,
        object: &mut Fields,
        seen: &mut Vec<Seen<'b>>,
    ) {
        let name = block.ident.as_str();
        let [label] = block.labels.as_slice() else {
            self.eval.diagnostics.push(self.file.error(
                block_head(block),
                format!("a `{name}` block needs exactly one label"),
                Some(format!("write `{name} \"ID\" {{ ... }}`")),
            ));
            return;
        };
        let key = label.as_str();
        let range = label_range(block);
        if seen.contains(&(name, Some(key))) {
            self.eval.diagnostics.push(self.file.error(
                range,
                format!("duplicate {name} `{key}`"),
                Some(format!("each {name} needs a distinct label")),
            ));
            return;
        }
        seen.push((name, Some(key)));
        let path = Path::Element(concrete, spec.name(), key);
        let mut element = self.message(&block.body, shape, &path, range.as_ref(), false);
        if let Some(key_name) = key_field(spec) {
            element.insert(key_name, Decoded::String(key.to_owned()));
        }
        if takes_fallbacks(&shape.generic) {
            let blocks = self.fallbacks(&block.body, shape, &path);
            if !blocks.is_empty() {
                self.fallbacks.push(PoolFallbackBlocks {
                    pool: key.to_owned(),
                    blocks,
                });
            }
        }
        object.push_element(spec.name(), Decoded::Message(element));
    }

    /// The `fallback` blocks of the pool with this body (of `shape`, at `pool`), each decoded
    /// as far as it decodes; one with an error is reported and left out.
    fn fallbacks(
        &mut self,
        body: &Body,
        shape: &'static Shape,
        pool: &Path<'_>,
    ) -> Vec<FallbackBlock> {
        body.get_blocks(FALLBACK_BLOCK)
            .enumerate()
            .filter_map(|(index, block)| {
                let ordinal = index + 1;
                self.fallback(block, shape, &Path::Fallback(pool, ordinal))
                    .map(|(fields, unknown)| FallbackBlock {
                        ordinal,
                        fields,
                        unknown,
                    })
            })
            .collect()
    }

    /// One `fallback` block: what it sets, and whether a value in it is unknown. Its members
    /// are decoded as the same members of the pool (`shape`) are.
    fn fallback(
        &mut self,
        block: &Block,
        shape: &'static Shape,
        concrete: &Path<'_>,
    ) -> Option<(FallbackFields, bool)> {
        if !block.labels.is_empty() {
            self.eval.diagnostics.push(self.file.error(
                label_range(block),
                format!("a `{FALLBACK_BLOCK}` block takes no label"),
                Some(format!(
                    "write `{FALLBACK_BLOCK} {{ ... }}`: a pool's fallbacks are tried in the order they are written"
                )),
            ));
            return None;
        }
        if block.body.is_empty() {
            self.eval.diagnostics.push(self.file.error(
                block_head(block),
                format!("an empty `{FALLBACK_BLOCK}` block would retry the same pool"),
                Some(format!(
                    "set at least one of {} in it, or remove it",
                    fallback_fields_listed()
                )),
            ));
            return None;
        }
        let errors_before = self.eval.diagnostics.len();
        let unknown_before = self.unknown_values;
        let mut object = Fields::default();
        let mut seen: Vec<Seen<'_>> = Vec::new();
        for structure in block.body.iter() {
            match structure {
                Structure::Attribute(attribute) => {
                    let name = attribute.key.as_str();
                    if !FALLBACK_FIELDS.contains(&name) {
                        self.not_in_fallback(name, attribute.key.span());
                    } else if self.first_time(&mut seen, name, attribute.key.span()) {
                        self.attribute(attribute, shape, concrete, false, &mut object);
                    }
                }
                Structure::Block(nested) => {
                    let name = nested.ident.as_str();
                    if FALLBACK_FIELDS.contains(&name) {
                        self.block(nested, shape, concrete, false, &mut object, &mut seen);
                    } else {
                        self.not_in_fallback(name, nested.ident.span());
                    }
                }
            }
        }
        if self.eval.diagnostics.len() > errors_before {
            return None;
        }
        let unknown = self.unknown_values > unknown_before;
        match object.read::<FallbackFields>() {
            Ok(fields) => Some((fields, unknown)),
            Err(error) => {
                self.eval.diagnostics.push(self.file.error(
                    block_head(block),
                    format!("cannot build the fallback: {error}"),
                    None,
                ));
                None
            }
        }
    }

    /// Refuses `name` inside a `fallback` block: only [`FALLBACK_FIELDS`] may differ from the
    /// pool.
    fn not_in_fallback(&mut self, name: &str, range: Option<Range<usize>>) {
        let hint = did_you_mean(name, FALLBACK_FIELDS.iter().copied()).unwrap_or_else(|| {
            format!("set `{name}` in the pool itself: every fallback of the pool uses it")
        });
        self.eval.diagnostics.push(self.file.error(
            range,
            format!(
                "`{name}` cannot be set in a `{FALLBACK_BLOCK}` block: a fallback may set {}; everything else is the pool's",
                fallback_fields_listed()
            ),
            Some(hint),
        ));
    }

    fn check_required(
        &mut self,
        shape: &Shape,
        concrete: &Path<'_>,
        object: &Fields,
        unknown: &[&str],
        head: Option<&Range<usize>>,
    ) {
        for &(name, member) in &shape.members {
            let spec = member.spec();
            if !spec.required || object.contains(spec.name()) || unknown.contains(&name) {
                continue;
            }
            let what = match member {
                Member::Attribute(_) => format!("attribute `{name}`"),
                Member::Block(_) => format!("block `{name}`"),
                Member::Labelled(_) => format!("at least one `{name}` block"),
            };
            let place = if matches!(concrete, Path::Cluster) {
                "the cluster".to_owned()
            } else {
                format!("`{concrete}`")
            };
            self.eval.diagnostics.push(self.file.error(
                head.cloned(),
                format!("missing required {what} in {place}"),
                Some(format!("{}: {}", spec.path, spec.description)),
            ));
        }
    }

    /// A cluster-level string attribute (`project`, `region`, `update_mode`).
    fn cluster_string(
        &mut self,
        body: &Body,
        name: &str,
        allowed: Option<&'static [&'static str]>,
    ) -> Option<String> {
        let attribute = body.get_attribute(name)?;
        let range = attribute.value.span();
        let Some(evaluated) = self.eval.value(self.file, &attribute.value, self.scope) else {
            self.eval
                .check_unknown_type(self.file, name, &attribute.value, takes_string);
            return None;
        };
        let result = match allowed {
            Some(values) => enum_text(name, values, &evaluated.value),
            None => string_text(&evaluated.value)
                .map(Some)
                .map_err(|m| (m, None)),
        };
        match result {
            Ok(text) => text,
            Err((message, hint)) => {
                self.eval.diagnostics.push(self.file.error(
                    range,
                    format!("wrong value for `{name}`: {message}"),
                    hint,
                ));
                None
            }
        }
    }

    /// The single block `name` among the cluster's blocks (a repeat is an error).
    fn single_block<'b>(&mut self, body: &'b Body, name: &'b str) -> Option<&'b Block> {
        let mut blocks = body.get_blocks(name);
        let first = blocks.next()?;
        for repeated in blocks {
            self.eval.diagnostics.push(self.file.error(
                block_head(repeated),
                format!("`{name}` is set more than once"),
                Some("remove the repeated one".to_owned()),
            ));
        }
        Some(first)
    }

    fn simple_block_attributes<'b>(
        &mut self,
        block: &'b Block,
        allowed: &[&str],
    ) -> Vec<&'b Attribute> {
        for nested in block.body.blocks() {
            self.eval.diagnostics.push(self.file.error(
                nested.ident.span(),
                format!(
                    "unknown block `{}` in `{}`",
                    nested.ident.as_str(),
                    block.ident.as_str()
                ),
                Some(format!(
                    "`{}` accepts {}",
                    block.ident.as_str(),
                    allowed.join(", ")
                )),
            ));
        }
        let mut known = Vec::new();
        for attribute in block.body.attributes() {
            let name = attribute.key.as_str();
            if allowed.contains(&name) {
                known.push(attribute);
            } else {
                self.eval.diagnostics.push(self.file.error(
                    attribute.key.span(),
                    format!("unknown attribute `{name}` in `{}`", block.ident.as_str()),
                    Some(closest_or_all(name, allowed)),
                ));
            }
        }
        known
    }

    fn timeouts(&mut self, body: &Body) -> Timeouts {
        let mut timeouts = Timeouts::default();
        let Some(block) = self.single_block(body, "timeouts") else {
            return timeouts;
        };
        for attribute in self.simple_block_attributes(block, &["create", "update", "delete"]) {
            let range = attribute.value.span();
            let Some(evaluated) = self.eval.value(self.file, &attribute.value, self.scope) else {
                let name = attribute.key.as_str();
                self.eval
                    .check_unknown_type(self.file, name, &attribute.value, takes_string);
                continue;
            };
            let parsed = string_text(&evaluated.value)
                .and_then(|text| duration::parse(&text).map_err(|e| e.to_string()))
                .and_then(|seconds| {
                    if seconds.0 == 0 {
                        return Err(
                            "a timeout of 0s would give up before the operation starts".to_owned()
                        );
                    }
                    if seconds.0 > MAX_TIMEOUT_SECONDS {
                        return Err(format!(
                            "{seconds} is longer than the longest timeout, 7 days"
                        ));
                    }
                    Ok(seconds)
                });
            let slot = match attribute.key.as_str() {
                "create" => &mut timeouts.create,
                "update" => &mut timeouts.update,
                _ => &mut timeouts.delete,
            };
            match parsed {
                Ok(seconds) => *slot = Some(seconds),
                Err(message) => self.eval.diagnostics.push(self.file.error(
                    range,
                    format!(
                        "wrong value for timeout `{}`: {message}",
                        attribute.key.as_str()
                    ),
                    Some("write a duration such as \"90m\" or \"2h\"".to_owned()),
                )),
            }
        }
        timeouts
    }

    fn lifecycle(&mut self, body: &Body) -> Lifecycle {
        let mut lifecycle = Lifecycle::default();
        let Some(block) = self.single_block(body, "lifecycle") else {
            return lifecycle;
        };
        for attribute in self.simple_block_attributes(block, &["prevent_destroy", "ignore_changes"])
        {
            let range = attribute.value.span();
            let Some(evaluated) = self.eval.value(self.file, &attribute.value, self.scope) else {
                let name = attribute.key.as_str();
                self.eval
                    .check_unknown_type(self.file, name, &attribute.value, |ty| {
                        lifecycle_takes(name, ty)
                    });
                continue;
            };
            let result = match (attribute.key.as_str(), evaluated.value) {
                ("prevent_destroy", Value::Bool(flag)) => {
                    lifecycle.prevent_destroy = flag;
                    Ok(())
                }
                ("ignore_changes", Value::Array(items)) => {
                    lifecycle.ignore_changes = self.ignore_paths(&attribute.value, &items);
                    Ok(())
                }
                ("prevent_destroy", other) => {
                    Err(format!("expected a bool, found a {}", type_name(&other)))
                }
                (_, other) => Err(format!(
                    "expected a list of strings, found a {}",
                    type_name(&other)
                )),
            };
            if let Err(message) = result {
                self.eval.diagnostics.push(self.file.error(
                    range,
                    format!("wrong value for `{}`: {message}", attribute.key.as_str()),
                    None,
                ));
            }
        }
        lifecycle
    }

    /// The `ignore_changes` entries that name a field; each other one is a diagnostic at the
    /// element written in the list (at the whole value when the list is computed).
    fn ignore_paths(&mut self, expr: &Expression, items: &[Value]) -> Vec<IgnorePath> {
        let written = match expr {
            Expression::Array(array) if array.len() == items.len() => Some(array),
            _ => None,
        };
        let mut paths = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let range = written
                .and_then(|array| array.get(index))
                .map_or_else(|| expr.span(), Span::span);
            let parsed = match item.as_str() {
                Some(text) => text.parse::<IgnorePath>().map_err(|error| {
                    let hint = ignore_path_suggestion(&error)
                        .unwrap_or_else(|| IGNORE_PATH_HINT.to_owned());
                    (format!("invalid `ignore_changes` entry: {error}"), hint)
                }),
                None => Err((
                    format!(
                        "wrong value in `ignore_changes`: expected a field path as a string, found a {}",
                        type_name(item)
                    ),
                    "write each path in quotes, e.g. `ignore_changes = [\"labels\"]`".to_owned(),
                )),
            };
            match parsed {
                Ok(path) => paths.push(path),
                Err((message, hint)) => {
                    self.eval
                        .diagnostics
                        .push(self.file.error(range, message, Some(hint)));
                }
            }
        }
        paths
    }
}

/// [`FALLBACK_FIELDS`] as a sentence lists them: `a, b and c`.
fn fallback_fields_listed() -> String {
    let (last, rest) = FALLBACK_FIELDS.split_last().unwrap_or((&"", &[]));
    format!("{} and {last}", rest.join(", "))
}

/// How to write an `ignore_changes` entry.
/// "did you mean" the entry with its unknown name replaced by the closest name its message
/// has, written as the configuration writes it (a block list by its block name).
fn ignore_path_suggestion(error: &IgnorePathError) -> Option<String> {
    let unknown = error.unknown.as_ref()?;
    let names = fields::children(&unknown.parent)
        .filter(|spec| spec.access != FieldAccess::OutputOnly)
        .map(|spec| match spec.kind {
            FieldKind::KeyedList(_) => spec.name().trim_end_matches('s'),
            _ => spec.name(),
        });
    let name = crate::diagnostic::closest(&unknown.name, names)?;
    let written: Vec<&str> = error.path.split('.').collect();
    let at = written
        .iter()
        .position(|segment| *segment == unknown.name)?;
    let mut suggested: Vec<&str> = written;
    suggested[at] = name;
    Some(format!("did you mean `{}`?", suggested.join(".")))
}

const IGNORE_PATH_HINT: &str = "write paths as in the configuration, e.g. `labels`, `node_pool.cpu.scaling_spec`, `node_pool.*.zone` or `orchestrator_spec.slurm_spec.partitions`";

type ValueError = (String, Option<String>);

fn enum_text(
    name: &str,
    allowed: &'static [&'static str],
    value: &Value,
) -> Result<Option<String>, ValueError> {
    let text = string_text(value).map_err(|m| (m, None))?;
    if allowed.contains(&text.as_str()) {
        return Ok(Some(text));
    }
    let hint = allowed
        .iter()
        .find(|v| v.eq_ignore_ascii_case(&text))
        .map(|v| format!("did you mean `{v}`?"))
        .or_else(|| Some(closest_or_all(&text, allowed)));
    Err((format!("`{text}` is not a valid {name}"), hint))
}

/// Converts an evaluated value to the value of a field of `spec`'s kind; `None` for null
/// (which leaves the field unset, as in Terraform).
fn field_value(spec: &FieldSpec, value: &Value) -> Result<Option<Decoded>, ValueError> {
    if value.is_null() {
        return Ok(None);
    }
    let plain = |m: String| (m, None);
    let json = match spec.kind {
        FieldKind::String => Decoded::String(string_text(value).map_err(plain)?),
        FieldKind::Integer => Decoded::Int(int32(value).map_err(plain)?),
        FieldKind::Bool => Decoded::Bool(boolean(value).map_err(plain)?),
        FieldKind::Enum(allowed) => {
            enum_text(spec.name(), allowed, value)?.map_or(Decoded::Null, Decoded::String)
        }
        FieldKind::Duration => {
            let text = string_text(value).map_err(plain)?;
            let seconds = duration::parse(&text).map_err(|e| plain(e.to_string()))?;
            if seconds.0 > MAX_PROTO_DURATION_SECONDS {
                return Err(plain(format!(
                    "`{text}` is longer than the longest duration the API accepts \
                     ({MAX_PROTO_DURATION_SECONDS}s, 10,000 years)"
                )));
            }
            Decoded::String(seconds.to_proto())
        }
        FieldKind::StringList => Decoded::List(
            list(value)
                .map_err(plain)?
                .iter()
                .map(|item| string_text(item).map(Decoded::String))
                .collect::<Result<_, _>>()
                .map_err(plain)?,
        ),
        FieldKind::EnumList(allowed) => Decoded::List(
            list(value)
                .map_err(plain)?
                .iter()
                .map(|item| {
                    enum_text(spec.name(), allowed, item)
                        .map(|t| t.map_or(Decoded::Null, Decoded::String))
                })
                .collect::<Result<_, _>>()?,
        ),
        FieldKind::StringMap | FieldKind::SlurmConfig => {
            let Value::Object(entries) = value else {
                return Err(plain(format!(
                    "expected a map of strings, found a {}",
                    type_name(value)
                )));
            };
            Decoded::StringMap(
                entries
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), string_text(v)?)))
                    .collect::<Result<_, String>>()
                    .map_err(plain)?,
            )
        }
        FieldKind::Timestamp | FieldKind::Json | FieldKind::Message | FieldKind::KeyedList(_) => {
            return Err(plain(format!("`{}` cannot be set", spec.name())));
        }
    };
    Ok(Some(json))
}

/// Whether some value of type `ty` (an unknown value's declared type) could be the lifecycle
/// argument `name`: `prevent_destroy` takes a bool, `ignore_changes` a list of field paths.
fn lifecycle_takes(name: &str, ty: &VarType) -> Result<(), String> {
    match (name, ty) {
        ("prevent_destroy", VarType::Bool) => Ok(()),
        ("prevent_destroy", _) => Err(format!("expected a bool, found a value of type `{ty}`")),
        _ if ty.may_be_list_of_strings() => Ok(()),
        _ => Err(format!(
            "expected a list of strings, found a value of type `{ty}`"
        )),
    }
}

/// Whether some value of type `ty` (an unknown value's declared type) could be written to a
/// field of `kind` under [`field_value`]'s conversions; else what is wrong with every such value.
fn kind_takes(kind: FieldKind, ty: &VarType) -> Result<(), String> {
    let fits = match kind {
        FieldKind::String | FieldKind::Duration | FieldKind::Enum(_) => {
            return takes_string(ty);
        }
        FieldKind::Integer => matches!(ty, VarType::Number | VarType::String),
        FieldKind::Bool => matches!(ty, VarType::Bool | VarType::String),
        FieldKind::StringList | FieldKind::EnumList(_) => {
            matches!(ty, VarType::List(element) | VarType::Set(element) if element.may_be_scalar())
        }
        FieldKind::StringMap | FieldKind::SlurmConfig => {
            matches!(ty, VarType::Map(element) if element.may_be_scalar())
        }
        FieldKind::Timestamp | FieldKind::Json | FieldKind::Message | FieldKind::KeyedList(_) => {
            true
        }
    };
    if fits {
        return Ok(());
    }
    let expected = match kind {
        FieldKind::Integer => "a whole number",
        FieldKind::Bool => "true or false",
        FieldKind::StringList | FieldKind::EnumList(_) => "a list of strings",
        _ => "a map of strings",
    };
    Err(format!("expected {expected}, found a value of type `{ty}`"))
}

fn list(value: &Value) -> Result<&[Value], String> {
    value
        .as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| format!("expected a list, found a {}", type_name(value)))
}

/// Every integer field of the API is an `int32`.
fn int32(value: &Value) -> Result<i64, String> {
    let n = integer(value)?;
    if i32::try_from(n).is_err() {
        return Err(format!(
            "{n} is out of range: the API takes a 32-bit integer ({} to {})",
            i32::MIN,
            i32::MAX
        ));
    }
    Ok(n)
}

fn integer(value: &Value) -> Result<i64, String> {
    let from_number = |n: &hcl::Number| {
        n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| f as i64)
        })
    };
    match value {
        Value::Number(n) => from_number(n).ok_or_else(|| match n.as_f64() {
            Some(f) if f.fract() == 0.0 => format!(
                "{n} is out of range: the API takes a 32-bit integer ({} to {})",
                i32::MIN,
                i32::MAX
            ),
            _ => format!("expected a whole number, found {n}"),
        }),
        Value::String(s) => s
            .trim()
            .parse()
            .map_err(|_| format!("expected a whole number, found `{s}`")),
        other => Err(format!(
            "expected a whole number, found a {}",
            type_name(other)
        )),
    }
}

fn boolean(value: &Value) -> Result<bool, String> {
    match value {
        Value::Bool(b) => Ok(*b),
        Value::String(s) if s == "true" || s == "false" => Ok(s == "true"),
        other => Err(format!(
            "expected true or false, found a {}",
            type_name(other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clusterform_model::fields::lookup;

    #[test]
    fn concrete_paths_render_as_dotted_names_with_keys() {
        let pool = Path::Element(&Path::Cluster, "node_pools", "cpu");
        let machine = Path::Field(&pool, "machine_spec");
        assert_eq!(Path::Cluster.to_string(), "");
        assert_eq!(Path::Field(&Path::Cluster, "labels").to_string(), "labels");
        assert_eq!(pool.to_string(), "node_pools[cpu]");
        assert_eq!(
            Path::Field(&machine, "machine_type").to_string(),
            "node_pools[cpu].machine_spec.machine_type"
        );
    }

    #[test]
    fn a_fallbacks_members_are_shown_in_it_and_set_the_pools_fields() {
        let pool = Path::Element(&Path::Cluster, "node_pools", "gpu");
        let fallback = Path::Fallback(&pool, 2);
        let machine = Path::Field(&fallback, "machine_spec");
        let machine_type = Path::Field(&machine, "machine_type");
        assert_eq!(
            machine_type.to_string(),
            "node_pools[gpu].fallback[2].machine_spec.machine_type"
        );
        assert_eq!(
            machine_type.field_path(),
            "node_pools[gpu].machine_spec.machine_type"
        );
    }

    #[test]
    fn field_values_are_checked_by_kind() {
        let min = lookup("node_pools[].scaling_spec.min_node_count").unwrap();
        assert_eq!(
            field_value(min, &Value::from("3")),
            Ok(Some(Decoded::Int(3)))
        );
        assert!(field_value(min, &Value::from(1.5)).is_err());
        let model = lookup("node_pools[].provisioning_model").unwrap();
        let (message, hint) = field_value(model, &Value::from("spot")).unwrap_err();
        assert_eq!(message, "`spot` is not a valid provisioning_model");
        assert_eq!(hint.as_deref(), Some("did you mean `SPOT`?"));
        let flex = lookup("node_pools[].flex_start_max_duration").unwrap();
        assert_eq!(
            field_value(flex, &Value::from("2h")),
            Ok(Some(Decoded::String("7200s".to_owned())))
        );
        assert_eq!(field_value(flex, &Value::Null), Ok(None));
    }
}
