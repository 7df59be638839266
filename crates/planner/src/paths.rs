//! Field paths as the plan writes them: snake_case segments joined by `.`, with the element of a
//! keyed list named by its key in brackets (`node_pools[cpu].scaling_spec.max_node_count`).
//! Diffs, `ignore_changes`, sensitivity checks and the text renderer all share this spelling.

use std::fmt;

/// One step of a path: a field name, optionally selecting an element of a keyed list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Segment {
    /// snake_case field name.
    pub name: String,
    /// The element selected in a keyed list.
    pub selector: Option<Selector>,
}

/// Which elements of a keyed list a segment selects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Selector {
    /// The element whose key is this value.
    Key(String),
    /// Every element (`[]` or `[*]`).
    Any,
}

/// A path that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a field path (expected names joined by `.`, such as `node_pools[cpu].zone`)")]
pub(crate) struct PathSyntaxError(pub String);

/// Splits a path into segments.
pub(crate) fn parse(path: &str) -> Result<Vec<Segment>, PathSyntaxError> {
    let error = || PathSyntaxError(path.to_owned());
    let mut segments = Vec::new();
    let mut rest = path.trim();
    while !rest.is_empty() {
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let name = &rest[..end];
        let name_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*');
        if name.is_empty() || !name.chars().all(name_char) {
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

/// The path with every selector written as `[]`, as in the field table.
pub(crate) fn generic(segments: &[Segment]) -> String {
    segments
        .iter()
        .map(|s| match s.selector {
            Some(_) => format!("{}[]", s.name),
            None => s.name.clone(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Appends a field name to a path.
pub(crate) fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// Selects an element of the keyed list at `path`.
pub(crate) fn element(path: &str, key: &str) -> String {
    format!("{path}[{key}]")
}

/// The block name of one element of a keyed list, as written in the configuration
/// (`node_pools` → `node_pool`, `partitions` → `partition`).
pub(crate) fn block_name(list: &str) -> &str {
    list.strip_suffix('s').unwrap_or(list)
}

/// Whether `path` is `prefix` or lies inside it (`node_pools[cpu].zone` inside `node_pools[cpu]`).
pub(crate) fn is_within(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn within_respects_segment_boundaries() {
        assert!(is_within("node_pools[cpu].zone", "node_pools[cpu]"));
        assert!(is_within("labels", "labels"));
        assert!(!is_within("node_pools[cpu2].zone", "node_pools[cpu]"));
        assert!(!is_within("labels_x", "labels"));
    }
}
