//! The `removed { cluster = "ID" }` blocks: clusters the stack releases without deleting them,
//! each with its project and region, and the rule that a cluster is not both declared and
//! removed.

use std::ops::Range;

use clusterform_model::ClusterId;
use hcl::edit::Span;
use hcl::edit::structure::Block;

use super::{FileBlock, Place, Run, at};
use crate::config::{DesiredCluster, Provider, RemovedCluster, SourceLocation};
use crate::decode::string_text;
use crate::diagnostic::{SourceFile, closest_or_all};
use crate::evaluator::{Bindings, Scope, takes_string};
use crate::source::{block_head, label_range};

const REMOVED_ATTRIBUTES: [&str; 3] = ["cluster", "project", "region"];
const REMOVED_SHAPE_HINT: &str =
    "write `removed { cluster = \"ID\" }`, optionally with `project` and `region`";

/// The values of a `removed` block's attributes, each with where it is written.
#[derive(Default)]
struct RemovedValues {
    cluster: Option<(String, Option<Range<usize>>)>,
    project: Option<(String, Option<Range<usize>>)>,
    region: Option<(String, Option<Range<usize>>)>,
}

impl Run {
    /// Decodes and checks the `removed` blocks, each with where its `cluster` value is
    /// written; a cluster removed twice is reported at the second block.
    pub(super) fn removed<'a>(
        &mut self,
        blocks: &[FileBlock<'a>],
        ctx: &Bindings,
        provider: &Provider,
    ) -> Vec<(RemovedCluster, Place<'a>)> {
        let mut removed: Vec<(RemovedCluster, Place<'a>)> = Vec::new();
        for (source, block) in blocks {
            let Some((cluster, place)) = self.removed_block(source, block, ctx, provider) else {
                continue;
            };
            if let Some((first, _)) = removed.iter().find(|(r, _)| r.id == cluster.id) {
                let message = format!("cluster `{}` is removed more than once", cluster.id);
                let hint = format!("already removed at {}", at(&first.location));
                self.eval
                    .diagnostics
                    .push(place.file.error(place.range, message, Some(hint)));
                continue;
            }
            removed.push((cluster, place));
        }
        removed
    }

    /// One `removed { cluster = "ID" project = ... region = ... }` block.
    fn removed_block<'a>(
        &mut self,
        source: &'a SourceFile,
        block: &Block,
        ctx: &Bindings,
        provider: &Provider,
    ) -> Option<(RemovedCluster, Place<'a>)> {
        let head = block_head(block);
        if !block.labels.is_empty() {
            self.eval.diagnostics.push(source.error(
                label_range(block),
                "a `removed` block takes no label",
                Some(REMOVED_SHAPE_HINT.to_owned()),
            ));
            return None;
        }
        let values = self.removed_attributes(source, block, ctx)?;
        let Some((id, id_range)) = values.cluster else {
            // A cluster ID that depends on unknown variables is not missing.
            let cluster = block.body.get_attribute("cluster");
            if cluster.is_some_and(|c| self.eval.depends_on_unknown(&c.value)) {
                return None;
            }
            self.eval.diagnostics.push(source.error(
                head,
                "a `removed` block needs `cluster`, the ID of the cluster to release",
                Some(REMOVED_SHAPE_HINT.to_owned()),
            ));
            return None;
        };
        if let Err(error) = ClusterId::parse(&id, false) {
            self.eval.diagnostics.push(source.error(
                id_range,
                error.to_string(),
                Some("use the ID of the cluster as it is in the API".to_owned()),
            ));
            return None;
        }
        let (project, project_range) = values
            .project
            .map_or((provider.project.clone(), head.clone()), |(v, r)| {
                (Some(v), r)
            });
        let (region, region_range) = values
            .region
            .map_or((provider.region.clone(), head.clone()), |(v, r)| {
                (Some(v), r)
            });
        let (project, region) = self.required_locations(
            source,
            &id,
            &block.body,
            (project, project_range),
            (region, region_range),
        );
        let (line, column) = source.position(head.map_or(0, |r| r.start));
        let removed = RemovedCluster {
            id,
            project: project?,
            region: region?,
            location: SourceLocation {
                file: source.path.clone(),
                line,
                column,
            },
        };
        Some((
            removed,
            Place {
                file: source,
                range: id_range,
            },
        ))
    }

    /// The string attributes of a `removed` block with where their values are written;
    /// `None` when one of them is wrong.
    fn removed_attributes(
        &mut self,
        source: &SourceFile,
        block: &Block,
        ctx: &Bindings,
    ) -> Option<RemovedValues> {
        let errors_before = self.error_count();
        for nested in block.body.blocks() {
            self.eval.diagnostics.push(source.error(
                nested.ident.span(),
                format!("unknown block `{}` in `removed`", nested.ident.as_str()),
                Some(REMOVED_SHAPE_HINT.to_owned()),
            ));
        }
        let mut values = RemovedValues::default();
        for attribute in block.body.attributes() {
            let name = attribute.key.as_str();
            let slot = match name {
                "cluster" => &mut values.cluster,
                "project" => &mut values.project,
                "region" => &mut values.region,
                _ => {
                    self.eval.diagnostics.push(source.error(
                        attribute.key.span(),
                        format!("unknown attribute `{name}` in `removed`"),
                        Some(closest_or_all(name, &REMOVED_ATTRIBUTES)),
                    ));
                    continue;
                }
            };
            let range = attribute.value.span();
            let Some(evaluated) =
                self.eval
                    .value(source, &attribute.value, Scope { ctx, each: false })
            else {
                self.eval
                    .check_unknown_type(source, name, &attribute.value, takes_string);
                continue;
            };
            match string_text(&evaluated.value) {
                Ok(text) => *slot = Some((text, range)),
                Err(message) => self.eval.diagnostics.push(source.error(
                    range,
                    format!("wrong value for `{name}`: {message}"),
                    None,
                )),
            }
        }
        (self.error_count() == errors_before).then_some(values)
    }

    /// A cluster cannot be both declared and released.
    pub(super) fn check_removed_not_declared(
        &mut self,
        removed: &[(RemovedCluster, Place<'_>)],
        clusters: &[DesiredCluster],
    ) {
        for (released, place) in removed {
            let Some(declared) = clusters.iter().find(|c| c.id == released.id) else {
                continue;
            };
            self.eval.diagnostics.push(place.file.error(
                place.range.clone(),
                format!("cluster `{}` is both declared and removed", released.id),
                Some(format!(
                    "it is declared at {}: delete that `cluster` block to stop managing the cluster \
                     without destroying it, or this `removed` block to keep managing it",
                    at(&declared.location)
                )),
            ));
        }
    }
}
