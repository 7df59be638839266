//! One cluster instance: its block decoded into the model, its project and region resolved
//! (its own, else the provider's) and checked, and the offline cluster checks run.

use std::ops::Range;

use clusterform_model::{ClusterName, Location, validate_location, validate_project};
use hcl::edit::Span;
use hcl::edit::structure::{Block, Body};

use super::{ProviderDefaults, UnknownLocations, error_count, source_location};
use crate::cluster::decode::decode_cluster;
use crate::cluster::fallback::pool_fallbacks;
use crate::cluster::spans::Spans;
use crate::cluster::validate::ClusterChecks;
use crate::config::{DesiredCluster, SourceLocation};
use crate::diagnostic::{Diagnostic, SourceFile};
use crate::language::evaluator::{Evaluator, Scope};
use crate::language::source::{block_head, label_range};

/// A block that names a cluster, checked: its ID and where it starts, for the rules across
/// blocks, and what it declares once its location is known.
pub(super) struct Checked<T> {
    pub(super) id: String,
    pub(super) location: SourceLocation,
    /// `None` when the project or region depends on unknown variables: only a run of
    /// [`crate::validate`] has such blocks, and it plans nothing.
    pub(super) named: Option<T>,
}

/// Decodes and checks one instance of a cluster block; `None` when it has an error.
pub(super) fn cluster(
    eval: &mut Evaluator,
    source: &SourceFile,
    block: &Block,
    id: String,
    scope: Scope<'_>,
    defaults: &ProviderDefaults,
) -> Option<Checked<DesiredCluster>> {
    let errors_before = error_count(&eval.diagnostics);
    let decoded = decode_cluster(eval, source, block, scope)?;
    let provider = &defaults.provider;
    let head = block_head(block);
    let spans = Spans::new(&block.body);
    let project = decoded.project.clone().or_else(|| provider.project.clone());
    let region = decoded.region.clone().or_else(|| provider.region.clone());
    let project_range = spans.get("project").or_else(|| head.clone());
    let region_range = spans.get("region").or_else(|| head.clone());
    let placement = required_locations(
        eval,
        defaults.unknown,
        source,
        &id,
        &block.body,
        (project, project_range),
        (region, region_range),
    );
    let label = if scope.each {
        block
            .body
            .get_attribute("id")
            .and_then(|a| a.value.span())
            .or_else(|| label_range(block))
    } else {
        label_range(block)
    };
    let known = placement.as_ref().and_then(Placement::known);
    let cluster_id = ClusterChecks {
        file: source,
        spans,
        head: head.clone(),
        label,
        project: known.map(Location::project),
        region: known.map(Location::region),
        diagnostics: &mut eval.diagnostics,
    }
    .run(&id, &decoded.cluster, &decoded.fallbacks);
    if error_count(&eval.diagnostics) > errors_before {
        return None;
    }
    let location = source_location(source, head);
    let named = match placement? {
        Placement::Known(place) => Some(DesiredCluster {
            name: ClusterName::at(place, cluster_id?),
            fallbacks: pool_fallbacks(&decoded.cluster, &decoded.fallbacks),
            cluster: decoded.cluster,
            update_mode: decoded.update_mode.or(provider.update_mode),
            timeouts: decoded.timeouts,
            lifecycle: decoded.lifecycle,
            sensitive_paths: decoded.sensitive_paths,
            location: location.clone(),
        }),
        Placement::Unknown => None,
    };
    Some(Checked {
        id,
        location,
        named,
    })
}

/// Where a cluster or `removed` block's cluster lives.
pub(super) enum Placement {
    /// Its project and region, both valid.
    Known(Location),
    /// Its project or region depends on unknown variables (only in a run of
    /// [`crate::validate`]).
    Unknown,
}

impl Placement {
    fn known(&self) -> Option<&Location> {
        match self {
            Self::Known(location) => Some(location),
            Self::Unknown => None,
        }
    }
}

/// Whether a block's `name` (`project` or `region`) depends on unknown variables: its own
/// attribute's expression, else the provider's (`provider_unknown`).
fn location_unknown(eval: &Evaluator, body: &Body, name: &str, provider_unknown: bool) -> bool {
    match body.get_attribute(name) {
        Some(attribute) => eval.depends_on_unknown(&attribute.value),
        None => provider_unknown,
    }
}

/// The project and region a cluster or `removed` block resolves to (its own, else the
/// provider's), each checked, with a diagnostic at `range` for what is missing or invalid;
/// `None` after such a diagnostic. One that has no value because it depends on unknown
/// variables (the block's own attribute in `body`, else the provider's, as `unknown` says)
/// makes the placement unknown.
pub(super) fn required_locations(
    eval: &mut Evaluator,
    unknown: UnknownLocations,
    source: &SourceFile,
    id: &str,
    body: &Body,
    (project, project_range): (Option<String>, Option<Range<usize>>),
    (region, region_range): (Option<String>, Option<Range<usize>>),
) -> Option<Placement> {
    let project_unknown = location_unknown(eval, body, "project", unknown.project);
    let region_unknown = location_unknown(eval, body, "region", unknown.region);
    let diagnostics = &mut eval.diagnostics;
    let project = required_location(
        diagnostics,
        source,
        id,
        ("project", project_unknown),
        project,
        project_range,
        validate_project,
    );
    let region = required_location(
        diagnostics,
        source,
        id,
        ("region", region_unknown),
        region,
        region_range,
        validate_location,
    );
    match (project?, region?) {
        // Both parts passed the checks whose diagnostics point at them, so this succeeds.
        (Some(project), Some(region)) => {
            Location::new(&project, &region).ok().map(Placement::Known)
        }
        _ => Some(Placement::Unknown),
    }
}

/// A block's project or region: `None` after a diagnostic, `Some(None)` when it depends on
/// unknown variables.
fn required_location<E: std::fmt::Display>(
    diagnostics: &mut Vec<Diagnostic>,
    source: &SourceFile,
    id: &str,
    (what, unknown): (&str, bool),
    value: Option<String>,
    range: Option<Range<usize>>,
    validate: fn(&str) -> Result<(), E>,
) -> Option<Option<String>> {
    if value.is_none() && unknown {
        return Some(None);
    }
    let Some(value) = value else {
        diagnostics.push(source.error(
            range,
            format!("cluster `{id}` has no {what}"),
            Some(format!(
                "set `{what}` in the provider block or in the cluster"
            )),
        ));
        return None;
    };
    if let Err(error) = validate(&value) {
        diagnostics.push(source.error(range, error.to_string(), None));
        return None;
    }
    Some(Some(value))
}
