//! The plan as JSON for `plan --json` and `show --json`: the plan's versioned document
//! (`clusterform_planner::plan_document`, also the saved plan file's format) with, under each
//! disruptive change, the jobs seen on its cluster (`running_jobs`), which live beside the plan
//! and never in a plan file.

use clusterform_model::JobsByCluster;
use clusterform_planner::{ClusterChange, Plan, plan_document};
use serde_json::Value;

use super::notes;

/// Each warning of `change`'s document with its sentence (`message`) beside its data: a
/// program reads the kind and its data, a person the message, and a plan file keeps neither
/// sentence.
fn word_warnings(change: &ClusterChange, written: &mut Value) {
    let Some(warnings) = written.get_mut("warnings").and_then(Value::as_array_mut) else {
        return;
    };
    for (warning, written) in change.warnings.iter().zip(warnings) {
        if let Some(written) = written.as_object_mut() {
            written.insert(
                "message".to_owned(),
                Value::from(notes::plan_warning(warning)),
            );
        }
    }
}

/// The plan's document, each change with the jobs `jobs` saw on its cluster and its warnings
/// worded.
pub fn render_json(plan: &Plan, jobs: &JobsByCluster) -> Value {
    let mut document = plan_document(plan);
    let changes = document.get_mut("changes").and_then(Value::as_array_mut);
    for (change, written) in plan.changes.iter().zip(changes.into_iter().flatten()) {
        word_warnings(change, written);
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

#[cfg(test)]
mod tests {
    use clusterform_testkit::{plan_against_seed, seed};
    use serde_json::json;

    use super::*;

    /// `plan --json` words each warning beside its data; the plan file's document holds the
    /// data alone.
    #[test]
    fn a_warning_has_its_kind_its_data_and_its_message() {
        let mut wanted = seed();
        wanted["nodePools"][1]["scalingSpec"]["maxNodeCount"] = json!(1);
        let plan = plan_against_seed(wanted);
        let shown = render_json(&plan, &JobsByCluster::default());
        let warning = &shown["changes"][0]["warnings"][0];
        assert_eq!(warning["kind"], "pool_shrinks", "{warning}");
        assert_eq!(
            (&warning["pool"], &warning["to"]),
            (&json!("cpu"), &json!("1"))
        );
        assert!(
            warning["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("max_node_count of pool cpu goes from")),
            "{warning}"
        );
        let stored = plan_document(&plan);
        assert!(
            stored["changes"][0]["warnings"][0].get("message").is_none(),
            "a plan file keeps no prose"
        );
    }
}
