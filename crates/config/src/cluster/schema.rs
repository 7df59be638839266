//! The HCL shape of a `cluster` block, derived from the model's field table so that the
//! language cannot drift from the resource: attribute names are the snake_case path segments,
//! messages are blocks, and repeated messages keyed by an id (`node_pools`, `partitions`,
//! `node_sets`) are labelled blocks named in the singular (`node_pool "ID"`).

use std::sync::OnceLock;

use clusterform_model::fields::{self, FieldAccess, FieldKind, FieldSpec};

/// What a name inside a block stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Member {
    /// `name = value`.
    Attribute(&'static FieldSpec),
    /// `name { ... }`, at most once.
    Block(&'static FieldSpec),
    /// `name "KEY" { ... }`, once per key.
    Labelled(&'static FieldSpec),
}

impl Member {
    pub fn spec(self) -> &'static FieldSpec {
        match self {
            Self::Attribute(spec) | Self::Block(spec) | Self::Labelled(spec) => spec,
        }
    }
}

/// The HCL name of a field: its last path segment, singular for labelled blocks.
pub(crate) fn hcl_name(spec: &'static FieldSpec) -> &'static str {
    let name = spec.name();
    match spec.kind {
        FieldKind::KeyedList(_) => singular(name),
        _ => name,
    }
}

/// The name of one block of a keyed list: `node_pool` for `node_pools`.
pub(crate) fn singular(name: &str) -> &str {
    name.strip_suffix('s').unwrap_or(name)
}

/// The generic path of a field's children: `node_pools[]` for a keyed list, the path otherwise.
pub(crate) fn element_path(spec: &FieldSpec) -> String {
    match spec.kind {
        FieldKind::KeyedList(_) => format!("{}[]", spec.path),
        _ => spec.path.to_owned(),
    }
}

/// The key field of a keyed list's elements (the block label), e.g. `id`.
pub(crate) fn key_field(spec: &FieldSpec) -> Option<&'static str> {
    match spec.kind {
        FieldKind::KeyedList(key) => Some(key),
        _ => None,
    }
}

/// The user-settable members of one message (the cluster, a block, a labelled block).
#[derive(Debug)]
pub(crate) struct Shape {
    /// The message's generic path: `""` for the cluster, `node_pools[]` for a node pool.
    pub generic: String,
    /// Its members in table order, excluding output-only fields and the key field the label
    /// supplies.
    pub members: Vec<(&'static str, Member)>,
}

impl Shape {
    /// The member called `name`.
    pub fn member(&self, name: &str) -> Option<Member> {
        self.members
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, m)| *m)
    }
}

/// Every user-settable member of the message at `parent` (a generic path, `""` for the
/// cluster), excluding output-only fields and the key field the label supplies, in table order.
pub(crate) fn members(parent: &str) -> impl Iterator<Item = (&'static str, Member)> + '_ {
    schema()
        .iter()
        .find(|shape| shape.generic == parent)
        .into_iter()
        .flat_map(|shape| shape.members.iter().copied())
}

/// The member called `name` inside `parent`.
#[cfg(test)]
pub(crate) fn member(parent: &str, name: &str) -> Option<Member> {
    members(parent).find(|(n, _)| *n == name).map(|(_, m)| m)
}

/// The shape of a `cluster` block.
pub(crate) fn cluster_shape() -> &'static Shape {
    &schema()[0]
}

/// The shape of the message a block or labelled block member opens; `None` for an attribute.
pub(crate) fn shape_of(member: Member) -> Option<&'static Shape> {
    let opens = |shape: &&Shape| match member {
        Member::Block(spec) => shape.generic == spec.path,
        Member::Labelled(spec) => shape.generic.strip_suffix("[]") == Some(spec.path),
        Member::Attribute(_) => false,
    };
    schema().iter().find(opens)
}

/// The shape of every message, the cluster first, computed once: decoding looks one up for
/// every block and a member for every attribute, and scanning the field table each time
/// dominated the load time.
fn schema() -> &'static [Shape] {
    static SCHEMA: OnceLock<Vec<Shape>> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        std::iter::once(String::new())
            .chain(
                fields::FIELDS
                    .iter()
                    .filter(|spec| {
                        matches!(spec.kind, FieldKind::Message | FieldKind::KeyedList(_))
                    })
                    .map(element_path),
            )
            .map(|generic| Shape {
                members: scan_members(&generic),
                generic,
            })
            .collect()
    })
}

fn scan_members(parent: &str) -> Vec<(&'static str, Member)> {
    let key = parent
        .strip_suffix("[]")
        .and_then(fields::lookup)
        .and_then(key_field);
    fields::children(parent)
        .filter(|spec| spec.access != FieldAccess::OutputOnly)
        .filter(|spec| Some(spec.name()) != key)
        .map(|spec| {
            let member = match spec.kind {
                FieldKind::Message => Member::Block(spec),
                FieldKind::KeyedList(_) => Member::Labelled(spec),
                _ => Member::Attribute(spec),
            };
            (hcl_name(spec), member)
        })
        .collect()
}

/// Whether `name` is an output-only field of `parent` (to explain why it is refused).
pub(crate) fn is_output_only(parent: &str, name: &str) -> bool {
    fields::children(parent)
        .any(|spec| spec.name() == name && spec.access == FieldAccess::OutputOnly)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_lists_are_singular_labelled_blocks() {
        assert!(matches!(member("", "node_pool"), Some(Member::Labelled(_))));
        assert!(matches!(
            member("orchestrator_spec.slurm_spec", "partition"),
            Some(Member::Labelled(_))
        ));
        assert!(matches!(
            member("orchestrator_spec.slurm_spec", "node_set"),
            Some(Member::Labelled(_))
        ));
        assert!(matches!(member("", "network"), Some(Member::Block(_))));
        assert!(matches!(member("", "labels"), Some(Member::Attribute(_))));
    }

    #[test]
    fn labels_and_output_fields_are_not_attributes() {
        assert!(member("node_pools[]", "id").is_none());
        assert!(member("orchestrator_spec.slurm_spec.node_sets[]", "node_pool_id").is_none());
        assert!(member("", "create_time").is_none());
        assert!(is_output_only("", "create_time"));
    }
}
