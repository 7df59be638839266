//! `plan --refresh-only`: only what changed outside clusterform since its last apply, per
//! cluster and per field, as text or as a JSON document (`docs/plan-json.md`, "Refresh-only
//! document"). Nothing is proposed, so neither shows an action, a field's new value or a
//! request.

use std::fmt::Write as _;

use clusterform_model::{ClusterName, cluster_address};
use clusterform_planner::{ClusterChange, Drift, Plan};
use console::Style;
use serde::Serialize;
use serde_json::Value;

use crate::format::names::ClusterNames;
use crate::format::plan_text::Paint;

/// Version of the refresh-only document's format.
pub const REFRESH_ONLY_FORMAT_VERSION: u32 = 1;

/// The changes of `plan` whose clusters changed outside clusterform.
fn drifted(plan: &Plan) -> impl Iterator<Item = &ClusterChange> {
    plan.changes
        .iter()
        .filter(|change| !change.drift.is_empty())
}

/// Whether any cluster of `plan` changed outside clusterform.
pub fn has_drift(plan: &Plan) -> bool {
    drifted(plan).next().is_some()
}

/// Each cluster that changed outside clusterform with its fields, one a line, then a line
/// that says nothing is proposed; `color` adds ANSI colours.
pub fn render_text(plan: &Plan, color: bool) -> String {
    let paint = |style: Style, text: &str| Paint { color }.style(style, text);
    let names = ClusterNames::for_clusters(plan.changes.iter().map(|c| &c.address));
    let mut out = String::new();
    let mut clusters = 0;
    let mut fields = 0;
    for change in drifted(plan) {
        clusters += 1;
        fields += change.drift.len();
        let header = format!(
            "# {} changed outside clusterform:",
            names.name(&change.address)
        );
        let _ = writeln!(out, "  {}", paint(Style::new().yellow().bold(), &header));
        for Drift { path, how } in &change.drift {
            let _ = writeln!(out, "      {path} {how}");
        }
        out.push('\n');
    }
    if clusters == 0 {
        let _ = writeln!(
            out,
            "{} every field the record of applied changes covers holds what clusterform last applied.",
            paint(
                Style::new().green().bold(),
                "No changes outside clusterform:"
            )
        );
        return out;
    }
    let _ = writeln!(
        out,
        "{} {clusters} {} changed outside clusterform ({fields} {}); nothing is proposed. Run `clusterform plan` to see what apply would do.",
        paint(Style::new().bold(), "Refresh only:"),
        if clusters == 1 { "cluster" } else { "clusters" },
        if fields == 1 { "field" } else { "fields" },
    );
    out
}

/// The refresh-only document: `format_version`, `stack`, and under `clusters` each cluster
/// that changed outside clusterform with its `address` and its `drift` entries, as a plan
/// document's change has them.
pub fn render_json(plan: &Plan) -> Value {
    #[derive(Serialize)]
    struct Drifted<'p> {
        #[serde(with = "cluster_address")]
        address: ClusterName,
        drift: &'p [Drift],
    }
    let clusters: Vec<Drifted<'_>> = drifted(plan)
        .map(|change| Drifted {
            address: change.address.clone(),
            drift: &change.drift,
        })
        .collect();
    serde_json::json!({
        "format_version": REFRESH_ONLY_FORMAT_VERSION,
        "refresh_only": true,
        "stack": plan.stack,
        "clusters": clusters,
    })
}
