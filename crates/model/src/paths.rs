//! Field paths: snake_case segments joined by `.`, with the element of a keyed list named by
//! its key in brackets (`node_pools[cpu].scaling_spec.max_node_count`), and the paths users
//! write in `lifecycle.ignore_changes` ([`IgnorePath`]), read into that spelling.
//!
//! `ignore_changes` accepts the configuration's spelling (`labels`,
//! `node_pool.cpu.scaling_spec`, `orchestrator_spec.slurm_spec.partition.debug`) as well as the
//! plan's (`node_pools[cpu].zone`); `*` or `[]` stands for every element
//! (`node_pool.*.zone`). A path must name a field that the configuration can set.

use std::fmt;
use std::str::FromStr;

use crate::fields::{self, FieldAccess, FieldKind};

/// One step of a path: a field name, optionally selecting an element of a keyed list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Segment {
    /// snake_case field name.
    pub name: String,
    /// The element selected in a keyed list.
    pub selector: Option<Selector>,
}

/// Which elements of a keyed list a segment selects.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Selector {
    /// The element whose key is this value.
    Key(String),
    /// Every element (`[]` or `[*]`).
    Any,
}

/// A path that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a field path (expected names joined by `.`, such as `node_pools[cpu].zone`)")]
pub struct PathSyntaxError(pub String);

/// Appends a field name to a path.
pub fn child(path: &str, name: &str) -> String {
    let mut out = path.to_owned();
    push_child(&mut out, name);
    out
}

/// Selects an element of the keyed list at `path`.
pub fn element(path: &str, key: &str) -> String {
    let mut out = path.to_owned();
    push_element(&mut out, key);
    out
}

/// [`child`] in place: writes the field `name` of the path in `out` (a walk that spells many
/// paths reuses one buffer).
pub fn push_child(out: &mut String, name: &str) {
    if !out.is_empty() {
        out.push('.');
    }
    out.push_str(name);
}

/// [`element`] in place.
pub fn push_element(out: &mut String, key: &str) {
    out.push('[');
    out.push_str(key);
    out.push(']');
}

/// The block name of one element of a keyed list, as written in the configuration
/// (`node_pools` → `node_pool`, `partitions` → `partition`).
pub fn block_name(list: &str) -> &str {
    list.strip_suffix('s').unwrap_or(list)
}

/// Whether `path` is `prefix` or lies inside it (`node_pools[cpu].zone` inside `node_pools[cpu]`).
pub fn is_within(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
}

/// Splits a path into segments.
///
/// # Errors
///
/// When `path` is empty or not names joined by `.` with optional `[KEY]` selectors.
pub fn parse(path: &str) -> Result<Vec<Segment>, PathSyntaxError> {
    split(path, |c| {
        c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*')
    })
}

/// [`parse`] with names made of the characters `name_char` accepts.
fn split(path: &str, name_char: impl Fn(char) -> bool) -> Result<Vec<Segment>, PathSyntaxError> {
    let error = || PathSyntaxError(path.to_owned());
    let mut segments = Vec::new();
    let mut rest = path.trim();
    while !rest.is_empty() {
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let name = &rest[..end];
        if name.is_empty() || !name.chars().all(&name_char) {
            return Err(error());
        }
        rest = &rest[end..];
        let selector = match rest.strip_prefix('[') {
            Some(inner) => {
                let close = inner.find(']').ok_or_else(error)?;
                let key = &inner[..close];
                rest = &inner[close + 1..];
                Some(match key {
                    "" | "*" => Selector::Any,
                    key => Selector::Key(key.trim_matches('"').to_owned()),
                })
            }
            None => None,
        };
        segments.push(Segment {
            name: name.to_owned(),
            selector,
        });
        rest = match rest.strip_prefix('.') {
            Some(next) if !next.is_empty() => next,
            Some(_) => return Err(error()),
            None if rest.is_empty() => rest,
            None => return Err(error()),
        };
    }
    if segments.is_empty() {
        return Err(error());
    }
    Ok(segments)
}

/// The request message a create's or update's field violations name first.
const REQUEST_MESSAGE: &str = "model_development_cluster";

/// The field path of a request's field violation (`model_development_cluster.node_pools[1]
/// .boot_disk.boot_disk_type`, request-order indexes) in this module's spelling
/// (`node_pools[gpu].boot_disk.boot_disk_type`): each index of a keyed list is replaced by the
/// key of that element of `body`, the request's lowerCamelCase body. `None` when the path does
/// not name a field of the cluster or an index has no element with a key in `body`.
pub fn of_request_field(field: &str, body: &serde_json::Value) -> Option<String> {
    let field = field
        .strip_prefix(REQUEST_MESSAGE)
        .map_or(field, |rest| rest.strip_prefix('.').unwrap_or(rest));
    let mut out = String::new();
    let mut generic_so_far = String::new();
    let mut value = Some(body);
    for segment in parse(field).ok()? {
        let generic_path = child(&generic_so_far, &segment.name);
        let spec = fields::lookup(&generic_path)?;
        value = value.and_then(|v| v.get(fields::camel_case(&segment.name)));
        out = child(&out, &segment.name);
        generic_so_far = generic_path;
        let Some(Selector::Key(index)) = segment.selector else {
            continue;
        };
        let FieldKind::KeyedList(key_field) = spec.kind else {
            return None;
        };
        let item = value?.get(index.parse::<usize>().ok()?)?;
        let key = item.get(fields::camel_case(key_field))?.as_str()?;
        out = element(&out, key);
        generic_so_far.push_str("[]");
        value = Some(item);
    }
    Some(out)
}

/// The path with every selector written as `[]`, as in the field table.
pub fn generic(segments: &[Segment]) -> String {
    segments
        .iter()
        .map(|s| match s.selector {
            Some(_) => format!("{}[]", s.name),
            None => s.name.clone(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.selector {
            None => f.write_str(&self.name),
            Some(Selector::Any) => write!(f, "{}[]", self.name),
            Some(Selector::Key(key)) => write!(f, "{}[{key}]", self.name),
        }
    }
}

/// The path of one field of a cluster in the plan's spelling
/// (`node_pools[cpu].scaling_spec.max_node_count`), built from its segments, so that its text
/// and its segments never disagree and no reader parses it again. A map's keys are names of
/// their own (`labels.team`), and may be any text without `.`, `[` or `]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldPath {
    text: String,
    segments: Vec<Segment>,
}

impl FieldPath {
    /// The path of a field named `name` inside this one (the cluster's own fields inside the
    /// empty path).
    #[must_use]
    pub fn child(&self, name: &str) -> Self {
        let mut segments = self.segments.clone();
        segments.push(Segment {
            name: name.to_owned(),
            selector: None,
        });
        Self {
            text: child(&self.text, name),
            segments,
        }
    }

    /// The path of the element whose key is `key` in the keyed list at this path.
    #[must_use]
    pub fn element(&self, key: &str) -> Self {
        let mut segments = self.segments.clone();
        if let Some(last) = segments.last_mut() {
            last.selector = Some(Selector::Key(key.to_owned()));
        }
        Self {
            text: element(&self.text, key),
            segments,
        }
    }

    /// The path as text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Its segments.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Whether the path is `prefix` or lies inside it.
    pub fn is_within(&self, prefix: &str) -> bool {
        is_within(&self.text, prefix)
    }

    /// The path with every selector written as `[]`, as in the field table.
    pub fn generic(&self) -> String {
        generic(&self.segments)
    }
}

impl Ord for FieldPath {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.text.cmp(&other.text)
    }
}

impl PartialOrd for FieldPath {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for FieldPath {
    type Err = PathSyntaxError;

    /// Reads a path written by [`FieldPath`]'s `Display` (a plan file's).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let segments = split(text, |c| !matches!(c, '.' | '[' | ']'))?;
        Ok(Self {
            text: text.to_owned(),
            segments,
        })
    }
}

impl PartialEq<str> for FieldPath {
    fn eq(&self, other: &str) -> bool {
        self.text == other
    }
}

impl PartialEq<&str> for FieldPath {
    fn eq(&self, other: &&str) -> bool {
        self.text == *other
    }
}

impl serde::Serialize for FieldPath {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> serde::Deserialize<'de> for FieldPath {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A `lifecycle.ignore_changes` entry, read into the plan's spelling: it names a field the
/// configuration can set, or an element (or every element) of a keyed list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IgnorePath {
    segments: Vec<Segment>,
}

/// An `ignore_changes` entry that does not name a field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{path}` {reason}")]
pub struct IgnorePathError {
    /// The entry as written.
    pub path: String,
    /// What is wrong with it, e.g. `names no field (read as `nonsense`)`.
    pub reason: String,
    /// The first name in it that no field has, when that is what is wrong.
    pub unknown: Option<UnknownName>,
}

/// A name in an `ignore_changes` entry that no field of its message has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownName {
    /// The message it was looked up in, as the field table spells paths (`""`: the cluster,
    /// `node_pools[].scaling_spec`).
    pub parent: String,
    /// The name as written.
    pub name: String,
}

impl IgnorePath {
    /// The path's segments in the plan's spelling (`node_pools[cpu]`, `scaling_spec`).
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }
}

impl fmt::Display for IgnorePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, segment) in self.segments.iter().enumerate() {
            if index > 0 {
                f.write_str(".")?;
            }
            write!(f, "{segment}")?;
        }
        Ok(())
    }
}

impl FromStr for IgnorePath {
    type Err = IgnorePathError;

    fn from_str(path: &str) -> Result<Self, Self::Err> {
        let fail = |reason: String| IgnorePathError {
            path: path.to_owned(),
            reason,
            unknown: None,
        };
        let raw = parse(path).map_err(|_| {
            fail(
                "is not a field path: write names joined by `.`, such as `node_pool.cpu.zone`"
                    .to_owned(),
            )
        })?;
        let mut segments: Vec<Segment> = Vec::with_capacity(raw.len());
        let mut rest = raw.into_iter();
        while let Some(segment) = rest.next() {
            let list = format!("{}s", segment.name);
            if !is_keyed_list(&segments, &list) {
                segments.push(segment);
                continue;
            }
            let selector = match segment.selector {
                Some(selector) => selector,
                None => match rest.next() {
                    Some(key) if key.selector.is_none() => selector_of(&key.name),
                    _ => {
                        return Err(fail(format!(
                            "needs the {} label after `{}`",
                            segment.name, segment.name
                        )));
                    }
                },
            };
            segments.push(Segment {
                name: list,
                selector: Some(selector),
            });
        }
        check_names_a_field(&segments).map_err(|reason| IgnorePathError {
            unknown: first_unknown_name(&segments),
            ..fail(reason)
        })?;
        Ok(Self { segments })
    }
}

fn selector_of(key: &str) -> Selector {
    if key == "*" {
        Selector::Any
    } else {
        Selector::Key(key.to_owned())
    }
}

fn is_keyed_list(prefix: &[Segment], list: &str) -> bool {
    let mut candidate = prefix.to_vec();
    candidate.push(Segment {
        name: list.to_owned(),
        selector: None,
    });
    fields::lookup(&generic(&candidate))
        .is_some_and(|spec| matches!(spec.kind, FieldKind::KeyedList(_)))
}

/// The first segment whose path (its parents', then its name) is no field of the table.
fn first_unknown_name(segments: &[Segment]) -> Option<UnknownName> {
    (0..segments.len()).find_map(|end| {
        let path = generic(&segments[..=end]);
        let field = path.strip_suffix("[]").unwrap_or(&path);
        fields::lookup(field).is_none().then(|| UnknownName {
            parent: generic(&segments[..end]),
            name: segments[end].name.clone(),
        })
    })
}

fn check_names_a_field(segments: &[Segment]) -> Result<(), String> {
    let generic = generic(segments);
    let field_path = generic.strip_suffix("[]").unwrap_or(&generic);
    match fields::lookup(field_path) {
        None => Err(format!("names no field (read as `{generic}`)")),
        Some(spec) if spec.access == FieldAccess::OutputOnly => {
            Err("names an output-only field, which is never compared".to_owned())
        }
        Some(spec) => match (segments.last().and_then(|s| s.selector.as_ref()), spec.kind) {
            (Some(_), FieldKind::KeyedList(_)) | (None, _) => Ok(()),
            (Some(_), _) => Err(format!(
                "selects an element of `{}`, which is not a list of blocks",
                spec.path
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_path_is_built_from_its_segments_and_read_back_from_its_text() {
        let path = FieldPath::default()
            .child("node_pools")
            .element("cpu")
            .child("scaling_spec")
            .child("max_node_count");
        assert_eq!(path, "node_pools[cpu].scaling_spec.max_node_count");
        assert_eq!(path.generic(), "node_pools[].scaling_spec.max_node_count");
        assert!(path.is_within("node_pools[cpu]") && !path.is_within("node_pools[cp]"));
        assert_eq!(path.as_str().parse::<FieldPath>().unwrap(), path);
        let label = FieldPath::default().child("labels").child("kostenstelle-ü");
        let read: FieldPath =
            serde_json::from_value(serde_json::to_value(&label).unwrap()).unwrap();
        assert_eq!(read, label, "a map's key may be any text");
        assert_eq!(read.segments()[1].name, "kostenstelle-ü");
        for broken in ["", "node_pools[cpu", "a..b", "a."] {
            assert!(broken.parse::<FieldPath>().is_err(), "{broken:?}");
        }
    }

    #[test]
    fn a_field_violation_names_the_pool_by_its_id() {
        let body = serde_json::json!({"nodePools": [{"id": "login"}, {"id": "gpu"}],
            "orchestratorSpec": {"slurmSpec": {"partitions": [{"id": "a"}]}}});
        let path = |field| of_request_field(field, &body);
        assert_eq!(
            path("model_development_cluster.node_pools[1].boot_disk.boot_disk_type").as_deref(),
            Some("node_pools[gpu].boot_disk.boot_disk_type")
        );
        assert_eq!(
            path("orchestrator_spec.slurm_spec.partitions[0].node_pool_ids").as_deref(),
            Some("orchestrator_spec.slurm_spec.partitions[a].node_pool_ids")
        );
        assert_eq!(path("display_name").as_deref(), Some("display_name"));
        assert_eq!(path("model_development_cluster.node_pools[2].zone"), None);
        assert_eq!(path("model_development_cluster.no_such_field"), None);
    }

    #[test]
    fn within_respects_segment_boundaries() {
        assert!(is_within("node_pools[cpu].zone", "node_pools[cpu]"));
        assert!(is_within("labels", "labels"));
        assert!(!is_within("node_pools[cpu2].zone", "node_pools[cpu]"));
        assert!(!is_within("labels_x", "labels"));
    }

    fn spelled(path: &str) -> String {
        path.parse::<IgnorePath>().unwrap().to_string()
    }

    #[test]
    fn parses_selectors_and_wildcards() {
        let segments = parse("node_pools[cpu].scaling_spec").unwrap();
        assert_eq!(segments[0].selector, Some(Selector::Key("cpu".into())));
        assert_eq!(generic(&segments), "node_pools[].scaling_spec");
        assert_eq!(
            parse("node_pools[*]").unwrap()[0].selector,
            Some(Selector::Any)
        );
        assert_eq!(parse("labels").unwrap()[0].to_string(), "labels");
    }

    #[test]
    fn rejects_malformed_paths() {
        for bad in ["", "a..b", "a.", "node_pools[cpu", "a b", "a[x]b", "a/b"] {
            assert!(parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn ignore_paths_read_the_configuration_spellings() {
        assert_eq!(spelled("labels"), "labels");
        assert_eq!(
            spelled("node_pool.cpu.scaling_spec"),
            "node_pools[cpu].scaling_spec"
        );
        assert_eq!(spelled("node_pools[cpu].zone"), "node_pools[cpu].zone");
        assert_eq!(spelled("node_pool.*.zone"), "node_pools[].zone");
        assert_eq!(spelled("node_pool[*].zone"), "node_pools[].zone");
        assert_eq!(
            spelled("orchestrator_spec.slurm_spec.partition.debug"),
            "orchestrator_spec.slurm_spec.partitions[debug]"
        );
        assert_eq!(
            spelled("orchestrator_spec.slurm_spec.partitions"),
            "orchestrator_spec.slurm_spec.partitions"
        );
    }

    #[test]
    fn ignore_paths_must_name_a_settable_field() {
        for (bad, reason) in [
            ("nonsense", "names no field (read as `nonsense`)"),
            ("node_pool", "needs the node_pool label after `node_pool`"),
            (
                "node_pool.cpu.nonsense",
                "names no field (read as `node_pools[].nonsense`)",
            ),
            (
                "update_time",
                "names an output-only field, which is never compared",
            ),
            (
                "labels[x]",
                "selects an element of `labels`, which is not a list of blocks",
            ),
        ] {
            let error = bad.parse::<IgnorePath>().unwrap_err();
            assert_eq!(error.reason, reason, "{bad}");
            assert_eq!(error.path, bad);
        }
        assert!("a b".parse::<IgnorePath>().is_err());
    }
}
