//! The early locations: the provider and every (project, region) the configuration lists,
//! known once the `for_each` of every cluster block is expanded and before any cluster body is
//! decoded (the expensive part of a load), so that a caller can start reading the live
//! clusters while the load goes on. They come from the rule of [`Config::locations`] over the
//! same values the decode finds, so they equal the loaded configuration's locations whenever
//! the load succeeds.
//!
//! [`Config::locations`]: crate::Config::locations

use std::collections::BTreeSet;

use clusterform_model::Location;
use hcl::edit::structure::Body;

use super::cluster::Checked;
use super::for_each::{ExpandedBlock, InstanceScope};
use super::{Place, error_count};
use crate::config::{Provider, RemovedCluster, locations_of};
use crate::diagnostic::SourceFile;
use crate::language::evaluator::{Bindings, Evaluator, Scope};
use crate::language::functions::string_text;

/// The locations of the expanded cluster blocks and the `removed` blocks; `None` when the run
/// has an error already or when an instance's `project` or `region` is broken or invalid: the
/// load then fails, and reports it, without the early locations.
pub(super) fn early_locations(
    eval: &Evaluator,
    blocks: &[ExpandedBlock<'_>],
    removed: &[(Checked<RemovedCluster>, Place<'_>)],
    ctx: &Bindings,
    provider: &Provider,
) -> Option<BTreeSet<Location>> {
    if error_count(&eval.diagnostics) > 0 {
        return None;
    }
    // A fork whose findings are dropped: the decode evaluates the same attributes again and
    // reports their problems (and variable uses) in its own order.
    let mut probe = eval.fork();
    let mut declared = Vec::new();
    let mut instance_scope = InstanceScope::new(ctx);
    for ((source, block), instances) in blocks {
        for (_, each) in instances {
            let scope = instance_scope.of(each.as_ref());
            let project = attribute(&mut probe, source, &block.body, "project", scope)?
                .or_else(|| provider.project.clone())?;
            let region = attribute(&mut probe, source, &block.body, "region", scope)?
                .or_else(|| provider.region.clone())?;
            declared.push(Location::new(&project, &region).ok()?);
        }
    }
    // Without errors so far, every `removed` block has a known location.
    let removed = removed.iter().filter_map(|(r, _)| r.named.as_ref());
    let removed = removed.map(|r| r.name.location());
    Some(locations_of(declared.iter().chain(removed), provider))
}

/// The string value of the cluster attribute `name` as the decode reads it: `Some(None)` when
/// it is not written, `None` when it is broken.
fn attribute(
    probe: &mut Evaluator,
    source: &SourceFile,
    body: &Body,
    name: &str,
    scope: Scope<'_>,
) -> Option<Option<String>> {
    let Some(attribute) = body.get_attribute(name) else {
        return Some(None);
    };
    let evaluated = probe.value(source, &attribute.value, scope)?;
    string_text(&evaluated.value).ok().map(Some)
}
