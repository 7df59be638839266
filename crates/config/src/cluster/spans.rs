//! Positions of the fields of one cluster block, found on demand: a concrete path such as
//! `node_pools[cpu].zone` is followed through the block's nested blocks to the attribute's
//! value, the block's head or the labelled block's label, and on into an object literal's key
//! or a list literal's element. A pool's alternatives are found by `fallback[N]`, its `N`-th
//! `fallback` block (from 1), e.g. `node_pools[gpu].fallback[1].machine_spec.machine_type`.
//! Positions are needed only when a diagnostic is emitted, so nothing is recorded while
//! decoding.

use std::ops::Range;

use hcl::edit::Span;
use hcl::edit::expr::{Expression, ObjectKey};
use hcl::edit::structure::{Attribute, Block, Body};

use crate::cluster::fallback::FALLBACK_BLOCK;
use crate::cluster::schema::singular;
use crate::language::source::{block_head, label_range};

/// The byte ranges of the fields written in one cluster block.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spans<'b> {
    body: &'b Body,
}

/// One step of a concrete path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Segment<'p> {
    /// `name`: an attribute or a block.
    Field(&'p str),
    /// `names[KEY]`: the labelled block `name "KEY"` of a keyed list.
    Element(&'p str, &'p str),
    /// `fallback[N]`: the `N`-th `fallback` block, from 1.
    Fallback(usize),
}

impl<'b> Spans<'b> {
    /// The fields of the cluster block with this body.
    pub fn new(body: &'b Body) -> Self {
        Self { body }
    }

    /// Where the field at `path` is written; `None` when it is not in the block.
    pub fn get(&self, path: &str) -> Option<Range<usize>> {
        match self.find(path)? {
            Written::Attribute(attribute) => attribute.value.span(),
            Written::Block(block, Segment::Field(_) | Segment::Fallback(_)) => block_head(block),
            Written::Block(block, Segment::Element(..)) => label_range(block),
        }
    }

    /// Where the key `key` of the map attribute at `path` is written: `None` unless the value is
    /// an object literal with that key (a map built by a function or a `for` has no key of its
    /// own to point at). Of two keys with the same text (`a` and `"a"`), the later one wins, as
    /// it does in the value.
    pub fn map_key(&self, path: &str, key: &str) -> Option<Range<usize>> {
        let Written::Attribute(attribute) = self.find(path)? else {
            return None;
        };
        attribute
            .value
            .as_object()?
            .iter()
            .filter(|(written, _)| key_text(written) == Some(key))
            .last()
            .and_then(|(written, _)| written.span())
    }

    /// Where element `index` of the list attribute at `path` is written: `None` unless the
    /// value is a list literal that long.
    pub fn list_element(&self, path: &str, index: usize) -> Option<Range<usize>> {
        let Written::Attribute(attribute) = self.find(path)? else {
            return None;
        };
        attribute.value.as_array()?.iter().nth(index)?.span()
    }

    /// The attribute or block at `path`.
    fn find<'p>(&self, path: &'p str) -> Option<Written<'b, 'p>> {
        let mut body = self.body;
        let mut rest = path;
        loop {
            let (segment, remainder) = split_segment(rest)?;
            if let (Segment::Field(name), None) = (segment, remainder)
                && let Some(attribute) = body.get_attribute(name)
            {
                return Some(Written::Attribute(attribute));
            }
            let block = find_block(body, segment)?;
            match remainder {
                None => return Some(Written::Block(block, segment)),
                Some(remainder) => {
                    body = &block.body;
                    rest = remainder;
                }
            }
        }
    }
}

/// What a path leads to in the block.
enum Written<'b, 'p> {
    Attribute(&'b Attribute),
    /// A block, with the last segment that named it.
    Block(&'b Block, Segment<'p>),
}

/// The text of an object key written as an identifier or a plain string (`a`, `"a"`).
pub(crate) fn key_text(key: &ObjectKey) -> Option<&str> {
    match key {
        ObjectKey::Ident(ident) => Some(ident.as_str()),
        ObjectKey::Expression(Expression::String(text)) => Some(text.as_str()),
        ObjectKey::Expression(_) => None,
    }
}

/// The first block a segment names (a valid block has one).
fn find_block<'b>(body: &'b Body, segment: Segment<'_>) -> Option<&'b Block> {
    let (ident, key) = match segment {
        Segment::Field(name) => (name, None),
        Segment::Element(name, key) => (singular(name), Some(key)),
        Segment::Fallback(ordinal) => {
            return body.get_blocks(FALLBACK_BLOCK).nth(ordinal.checked_sub(1)?);
        }
    };
    body.blocks().find(|block| {
        block.ident.as_str() == ident
            && match (key, block.labels.as_slice()) {
                (None, _) => true,
                (Some(key), [label]) => label.as_str() == key,
                (Some(_), _) => false,
            }
    })
}

/// The first segment of a path and what follows its `.`, if anything.
fn split_segment(path: &str) -> Option<(Segment<'_>, Option<&str>)> {
    let name_end = path.find(['.', '[']).unwrap_or(path.len());
    let (name, after) = path.split_at(name_end);
    let Some(keyed) = after.strip_prefix('[') else {
        return Some((Segment::Field(name), after.strip_prefix('.')));
    };
    // Keys are block labels and may hold dots or brackets: the key ends at the `]` that ends
    // the path or comes before a `.`.
    let close = keyed
        .match_indices(']')
        .map(|(index, _)| index)
        .find(|&index| matches!(keyed.as_bytes().get(index + 1), None | Some(b'.')))?;
    let remainder = &keyed[close + 1..];
    let key = &keyed[..close];
    // Keyed lists have plural names, so `fallback[N]` is never one of their elements.
    let segment = match key.parse() {
        Ok(ordinal) if name == FALLBACK_BLOCK => Segment::Fallback(ordinal),
        _ => Segment::Element(name, key),
    };
    Some((segment, remainder.strip_prefix('.')))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLUSTER: &str = r#"
project = "p"
network {
  network = "n"
}
node_pool "a.b" {
  zone = "z"
  machine_spec {
    machine_type = "m"
  }
}
node_pool "c" {
  labels = { a = "1", "b.c" = "2", b = "3", "b" = "4", (x) = "5" }
  filestores = ["f0", "f1"]
  fallback {
    provisioning_model = "SPOT"
  }
  fallback {
    machine_spec {
      machine_type = "m2"
    }
  }
}
"#;

    fn text_at(body: &Body, path: &str) -> Option<&'static str> {
        Spans::new(body).get(path).map(|range| &CLUSTER[range])
    }

    #[test]
    fn paths_lead_to_values_heads_and_labels() {
        let body = hcl::edit::parser::parse_body(CLUSTER).unwrap();
        assert_eq!(text_at(&body, "project"), Some("\"p\""));
        assert_eq!(text_at(&body, "network"), Some("network"));
        assert_eq!(text_at(&body, "network.network"), Some("\"n\""));
        assert_eq!(text_at(&body, "node_pools[a.b]"), Some("\"a.b\""));
        assert_eq!(text_at(&body, "node_pools[a.b].zone"), Some("\"z\""));
        assert_eq!(
            text_at(&body, "node_pools[a.b].machine_spec"),
            Some("machine_spec")
        );
        assert_eq!(text_at(&body, "node_pools[c]"), Some("\"c\""));
    }

    #[test]
    fn fallback_paths_lead_to_the_nth_fallback_block() {
        let body = hcl::edit::parser::parse_body(CLUSTER).unwrap();
        let spans = Spans::new(&body);
        let line = |path| {
            spans
                .get(path)
                .map(|range| CLUSTER[..range.start].lines().count())
        };
        assert_eq!(line("node_pools[c].fallback[1]"), Some(15));
        assert_eq!(line("node_pools[c].fallback[2]"), Some(18));
        assert_eq!(
            text_at(&body, "node_pools[c].fallback[1].provisioning_model"),
            Some("\"SPOT\"")
        );
        assert_eq!(
            text_at(&body, "node_pools[c].fallback[2].machine_spec.machine_type"),
            Some("\"m2\"")
        );
        for unwritten in [
            "node_pools[c].fallback[0]",
            "node_pools[c].fallback[3]",
            "node_pools[c].fallback[2].provisioning_model",
            "node_pools[a.b].fallback[1]",
        ] {
            assert_eq!(spans.get(unwritten), None, "{unwritten}");
        }
    }

    #[test]
    fn map_keys_and_list_elements_have_their_own_positions() {
        let body = hcl::edit::parser::parse_body(CLUSTER).unwrap();
        let spans = Spans::new(&body);
        let key = |key| {
            spans
                .map_key("node_pools[c].labels", key)
                .map(|r| &CLUSTER[r])
        };
        assert_eq!(key("a"), Some("a"));
        assert_eq!(key("b.c"), Some("\"b.c\""));
        assert_eq!(key("b"), Some("\"b\""), "the later of two equal keys");
        assert_eq!(key("x"), None, "an expression key has no text");
        assert_eq!(key("z"), None);
        let element = |index| {
            spans
                .list_element("node_pools[c].filestores", index)
                .map(|r| &CLUSTER[r])
        };
        assert_eq!(element(1), Some("\"f1\""));
        assert_eq!(element(2), None);
        assert_eq!(
            spans.map_key("node_pools[c]", "a"),
            None,
            "a block is no map"
        );
        assert_eq!(
            spans.list_element("project", 0),
            None,
            "a string is no list"
        );
    }

    #[test]
    fn unwritten_paths_have_no_position() {
        let body = hcl::edit::parser::parse_body(CLUSTER).unwrap();
        for path in [
            "region",
            "network.subnetwork",
            "node_pools[x]",
            "node_pools[c].zone",
            "node_pools[a",
            "",
        ] {
            assert_eq!(text_at(&body, path), None, "{path}");
        }
    }

    #[test]
    fn segments_split_at_dots_outside_keys() {
        assert_eq!(
            split_segment("node_pools[a.b].zone"),
            Some((Segment::Element("node_pools", "a.b"), Some("zone")))
        );
        assert_eq!(split_segment("zone"), Some((Segment::Field("zone"), None)));
        assert_eq!(split_segment("node_pools[a"), None);
    }
}
