//! The `removed { cluster = "ID" }` blocks: clusters the stack releases without deleting them,
//! each with its project and region, and the rule that a cluster is not both declared and
//! removed.

use clusterform_model::{ClusterId, ClusterName};
use hcl::edit::structure::Block;

use super::cluster::{Checked, Placement, required_locations};
use super::{FileBlock, Place, ProviderDefaults, at, error_count, source_location};
use crate::config::{DesiredCluster, RemovedCluster};
use crate::diagnostic::{Diagnostic, SourceFile};
use crate::language::block_schema::{AttributeSchema, BlockSchema, UnknownBlock};
use crate::language::evaluator::{Bindings, Evaluator, Scope};
use crate::language::source::{block_head, label_range};

const REMOVED_SHAPE_HINT: &str =
    "write `removed { cluster = \"ID\" }`, optionally with `project` and `region`";

/// What `removed { ... }` accepts. `cluster` is required, but not when it depends on unknown
/// variables, and not reported while another attribute is wrong: [`removed_block`] says so.
static REMOVED: BlockSchema = BlockSchema {
    name: "`removed`",
    member: "attribute",
    attributes: &[
        AttributeSchema::string("cluster"),
        AttributeSchema::string("project"),
        AttributeSchema::string("region"),
    ],
    blocks: &[],
    accepts: "expected one of:",
    unknown_block: UnknownBlock::Hint(|_| REMOVED_SHAPE_HINT.to_owned()),
};

/// Decodes and checks the `removed` blocks, each with where its `cluster` value is written; a
/// cluster removed twice is reported at the second block.
pub(super) fn removed<'a>(
    eval: &mut Evaluator,
    blocks: &[FileBlock<'a>],
    ctx: &Bindings,
    defaults: &ProviderDefaults,
) -> Vec<(Checked<RemovedCluster>, Place<'a>)> {
    let mut removed: Vec<(Checked<RemovedCluster>, Place<'a>)> = Vec::new();
    for (source, block) in blocks {
        let Some((cluster, place)) = removed_block(eval, source, block, ctx, defaults) else {
            continue;
        };
        if let Some((first, _)) = removed.iter().find(|(r, _)| r.id == cluster.id) {
            let message = format!("cluster `{}` is removed more than once", cluster.id);
            let hint = format!("already removed at {}", at(&first.location));
            eval.diagnostics
                .push(place.file.error(place.range, message, Some(hint)));
            continue;
        }
        removed.push((cluster, place));
    }
    removed
}

/// One `removed { cluster = "ID" project = ... region = ... }` block.
fn removed_block<'a>(
    eval: &mut Evaluator,
    source: &'a SourceFile,
    block: &Block,
    ctx: &Bindings,
    defaults: &ProviderDefaults,
) -> Option<(Checked<RemovedCluster>, Place<'a>)> {
    let head = block_head(block);
    if !block.labels.is_empty() {
        eval.diagnostics.push(source.error(
            label_range(block),
            "a `removed` block takes no label",
            Some(REMOVED_SHAPE_HINT.to_owned()),
        ));
        return None;
    }
    let errors_before = error_count(&eval.diagnostics);
    let members = REMOVED.walk(source, block, &mut eval.diagnostics);
    let mut strings = members.strings(eval, source, Scope { ctx, each: false });
    if error_count(&eval.diagnostics) > errors_before {
        return None;
    }
    let Some((id, id_range)) = strings.take("cluster") else {
        // A cluster ID that depends on unknown variables is not missing.
        if strings.unknown.contains(&"cluster") {
            return None;
        }
        eval.diagnostics.push(source.error(
            head,
            "a `removed` block needs `cluster`, the ID of the cluster to release",
            Some(REMOVED_SHAPE_HINT.to_owned()),
        ));
        return None;
    };
    let cluster_id = match ClusterId::parse(&id, false) {
        Ok(cluster_id) => cluster_id,
        Err(error) => {
            eval.diagnostics.push(source.error(
                id_range,
                error.to_string(),
                Some("use the ID of the cluster as it is in the API".to_owned()),
            ));
            return None;
        }
    };
    let provider = &defaults.provider;
    let (project, project_range) = strings
        .take("project")
        .map_or((provider.project.clone(), head.clone()), |(v, r)| {
            (Some(v), r)
        });
    let (region, region_range) = strings
        .take("region")
        .map_or((provider.region.clone(), head.clone()), |(v, r)| {
            (Some(v), r)
        });
    let placement = required_locations(
        eval,
        defaults.unknown,
        source,
        &id,
        &block.body,
        (project, project_range),
        (region, region_range),
    );
    let location = source_location(source, head);
    let named = match placement? {
        Placement::Known(place) => Some(RemovedCluster {
            name: ClusterName::at(place, cluster_id),
            location: location.clone(),
        }),
        Placement::Unknown => None,
    };
    let removed = Checked {
        id,
        location,
        named,
    };
    Some((
        removed,
        Place {
            file: source,
            range: id_range,
        },
    ))
}

/// A cluster cannot be both declared and released.
pub(super) fn check_removed_not_declared(
    removed: &[(Checked<RemovedCluster>, Place<'_>)],
    clusters: &[Checked<DesiredCluster>],
    diagnostics: &mut Vec<Diagnostic>,
) {
    for (released, place) in removed {
        let Some(declared) = clusters.iter().find(|c| c.id == released.id) else {
            continue;
        };
        diagnostics.push(place.file.error(
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
