//! The plan as JSON for `plan --json` and `show --json`: the plan's versioned document
//! (`clusterform_planner::plan_document`, also the saved plan file's format) with, under each
//! disruptive change, the jobs seen on its cluster (`running_jobs`), which live beside the plan
//! and never in a plan file.

use clusterform_model::JobsByCluster;
use clusterform_planner::{Plan, plan_document};
use serde_json::Value;

/// The plan's document, each change with the jobs `jobs` saw on its cluster.
pub fn render_json(plan: &Plan, jobs: &JobsByCluster) -> Value {
    let mut document = plan_document(plan);
    let changes = document.get_mut("changes").and_then(Value::as_array_mut);
    for (change, written) in plan.changes.iter().zip(changes.into_iter().flatten()) {
        if let (Some(seen), Some(written)) = (jobs.get(&change.address), written.as_object_mut()) {
            // The job lists hold only strings and numbers, which always encode.
            let seen = serde_json::to_value(seen).unwrap_or(Value::Null);
            written.insert("running_jobs".to_owned(), seen);
        }
    }
    // Always there, empty when every location was listed: a reader need not ask whether.
    document["unreadable_locations"] =
        super::status_json::unreadable_locations(&plan.unreadable_locations);
    document
}
