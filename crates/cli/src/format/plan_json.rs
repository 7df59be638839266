//! The plan as JSON for `plan --json` and `show --json`: the plan's versioned document
//! (`clusterform_planner::plan_document`, also the saved plan file's format) with, under each
//! disruptive change, the jobs seen on its cluster (`running_jobs`), which live beside the plan
//! and never in a plan file.

use clusterform_model::JobsByCluster;
use clusterform_model::pricing::PriceList;
use clusterform_planner::{ClusterChange, GpuChange, Plan, plan_document};
use serde_json::Value;

use super::{costs, notes};

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

/// What a change or the plan does to the GPUs (`docs/plan-json.md`, "GPUs").
pub fn gpus_json(change: &GpuChange) -> Value {
    // Counts and names only, which always encode.
    serde_json::to_value(change).unwrap_or(Value::Null)
}

/// The plan's document, each change with the jobs `jobs` saw on its cluster and its warnings
/// worded.
pub fn render_json(plan: &Plan, jobs: &JobsByCluster) -> Value {
    let mut document = plan_document(plan);
    let changes = document.get_mut("changes").and_then(Value::as_array_mut);
    for (change, written) in plan.changes.iter().zip(changes.into_iter().flatten()) {
        word_warnings(change, written);
        // Derived from the change, so a plan file keeps no copy to disagree with it.
        written["gpus"] = gpus_json(&change.gpu_change());
        if let (Some(seen), Some(written)) = (jobs.get(&change.address), written.as_object_mut()) {
            // The job lists hold only strings and numbers, which always encode.
            let seen = serde_json::to_value(seen).unwrap_or(Value::Null);
            written.insert("running_jobs".to_owned(), seen);
        }
    }
    document["gpus"] = gpus_json(&plan.gpu_change());
    // Always there, empty when every location was listed: a reader need not ask whether.
    document["unreadable_locations"] =
        super::status_json::unreadable_locations(&plan.unreadable_locations);
    document
}

/// With prices, each change's `cost` and the plan's (`docs/plan-json.md`, "Costs"): derived
/// when shown, as the GPUs are, so a plan file holds no copy.
pub fn add_costs(document: &mut Value, plan: &Plan, prices: &PriceList) {
    let changes = document.get_mut("changes").and_then(Value::as_array_mut);
    for (change, written) in plan.changes.iter().zip(changes.into_iter().flatten()) {
        written["cost"] = costs::change_json(&change.cost_change(prices), &prices.currency);
    }
    document["cost"] = costs::change_json(&plan.cost_change(prices), &prices.currency);
}

#[cfg(test)]
mod tests {
    use clusterform_testkit::{plan_against_seed, seed};
    use serde_json::json;

    use super::*;

    /// `plan --json` carries each change's GPUs and the plan's; a plan file holds neither.
    #[test]
    fn the_gpus_of_each_change_and_of_the_plan_are_in_the_document_beside_the_plan() {
        let mut wanted = seed();
        wanted["nodePools"].as_array_mut().unwrap().push(json!({
            "id": "gpu", "machineSpec": {"machineType": "a4-highgpu-8g"},
            "zone": "us-central1-a", "scalingSpec": {"minNodeCount": 1, "maxNodeCount": 2}
        }));
        let plan = plan_against_seed(wanted);
        let shown = render_json(&plan, &JobsByCluster::default());
        let added = json!({"by_type": {"NVIDIA_B200": {
            "now": {"added": 8, "removed": 0}, "at_most": {"added": 16, "removed": 0}
        }}, "unknown_pools": []});
        assert_eq!(shown["changes"][0]["gpus"], added);
        assert_eq!(shown["gpus"], added);
        let stored = plan_document(&plan);
        assert!(stored.get("gpus").is_none() && stored["changes"][0].get("gpus").is_none());
    }

    /// With prices, `plan --json` carries each change's cost and the plan's; without, neither.
    #[test]
    fn with_prices_each_change_and_the_plan_carry_their_cost() {
        let mut wanted = seed();
        wanted["nodePools"][1]["scalingSpec"]["maxNodeCount"] = json!(6);
        let plan = plan_against_seed(wanted);
        let prices = PriceList {
            currency: "EUR".parse().unwrap(),
            machine_types: std::collections::BTreeMap::from([(
                "n2-standard-8".to_owned(),
                clusterform_model::pricing::HourlyPrice::new(0.5).unwrap(),
            )]),
            accelerators: std::collections::BTreeMap::new(),
        };
        let mut shown = render_json(&plan, &JobsByCluster::default());
        assert!(shown.get("cost").is_none());
        add_costs(&mut shown, &plan, &prices);
        // The CPU pool may grow from 4 to 6 nodes: 1.00 EUR an hour more at most.
        let cost = json!({"currency": "EUR",
            "now": {"per_hour": 0.0, "per_30_days": 0.0, "unpriced_machine_types": []},
            "at_most": {"per_hour": 1.0, "per_30_days": 720.0, "unpriced_machine_types": []}});
        assert_eq!(shown["changes"][0]["cost"], cost);
        assert_eq!(shown["cost"], cost);
    }

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
