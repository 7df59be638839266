//! Positions of the fields of one cluster block, found on demand: a concrete path such as
//! `node_pools[cpu].zone` is followed through the block's nested blocks to the attribute's
//! value, the block's head or the labelled block's label. Positions are needed only when a
//! diagnostic is emitted, so nothing is recorded while decoding.

use std::ops::Range;

use hcl::edit::Span;
use hcl::edit::structure::{Block, Body};

use crate::schema::singular;
use crate::source::{block_head, label_range};

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
}

impl<'b> Spans<'b> {
    /// The fields of the cluster block with this body.
    pub fn new(body: &'b Body) -> Self {
        Self { body }
    }

    /// Where the field at `path` is written; `None` when it is not in the block.
    pub fn get(&self, path: &str) -> Option<Range<usize>> {
        let mut body = self.body;
        let mut rest = path;
        loop {
            let (segment, remainder) = split_segment(rest)?;
            if let (Segment::Field(name), None) = (segment, remainder)
                && let Some(attribute) = body.get_attribute(name)
            {
                return attribute.value.span();
            }
            let block = find_block(body, segment)?;
            match remainder {
                None => {
                    return match segment {
                        Segment::Field(_) => block_head(block),
                        Segment::Element(..) => label_range(block),
                    };
                }
                Some(remainder) => {
                    body = &block.body;
                    rest = remainder;
                }
            }
        }
    }
}

/// The first block a segment names (a valid block has one).
fn find_block<'b>(body: &'b Body, segment: Segment<'_>) -> Option<&'b Block> {
    let (ident, key) = match segment {
        Segment::Field(name) => (name, None),
        Segment::Element(name, key) => (singular(name), Some(key)),
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
    Some((
        Segment::Element(name, &keyed[..close]),
        remainder.strip_prefix('.'),
    ))
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
