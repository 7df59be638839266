//! The totals `status` and `list` end with ([`FleetTotals`]): the live clusters, the GPUs their
//! reported nodes run by accelerator type, and the GPU-hours spent idle, each with how many
//! clusters it could not count. GPU-hours are shown to one decimal. With prices, the fleet's
//! burn rate follows ([`costs::fleet_words`]).

use clusterform_executor::FleetTotals;
use clusterform_model::pricing::FleetBurnRate;
use serde_json::{Value, json};

use crate::format::costs;
use crate::format::table::counted;

/// `Fleet: 3 clusters; GPUs running: 16 NVIDIA_B200; idle GPU-hours: 24.0`, then, with
/// prices, `; burn rate: …`.
pub fn totals_line(totals: &FleetTotals, burn_rate: Option<&FleetBurnRate>) -> String {
    let running = if totals.gpus_running.is_empty() {
        "none".to_owned()
    } else {
        let by_type: Vec<String> = totals
            .gpus_running
            .iter()
            .map(|(kind, count)| format!("{count} {kind}"))
            .collect();
        by_type.join(", ")
    };
    format!(
        "Fleet: {}; GPUs running: {running}{}; idle GPU-hours: {:.1}{}{}",
        counted(totals.clusters, "cluster"),
        unknown_for(totals.gpus_unknown),
        totals.idle_gpu_hours,
        unknown_for(totals.idle_gpu_hours_unknown),
        burn_rate.map(costs::fleet_words).unwrap_or_default(),
    )
}

/// The `totals` object of `status --json` and `list --json`; with prices, its `burn_rate`.
pub fn totals_json(totals: &FleetTotals, burn_rate: Option<&FleetBurnRate>) -> Value {
    let mut document = json!({
        "clusters": totals.clusters,
        "gpus_running": totals.gpus_running,
        "gpus_unknown_clusters": totals.gpus_unknown,
        "idle_gpu_hours": (totals.idle_gpu_hours * 10.0).round() / 10.0,
        "idle_gpu_hours_unknown_clusters": totals.idle_gpu_hours_unknown,
    });
    if let Some(burn_rate) = burn_rate {
        document["burn_rate"] = costs::fleet_json(burn_rate);
    }
    document
}

/// ` (unknown for 2 clusters)`, nothing when every cluster was counted.
fn unknown_for(clusters: usize) -> String {
    match clusters {
        0 => String::new(),
        n => format!(" (unknown for {})", counted(n, "cluster")),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn totals() -> FleetTotals {
        FleetTotals {
            clusters: 3,
            gpus_running: BTreeMap::from([
                ("NVIDIA_B200".to_owned(), 16),
                ("NVIDIA_H200_141GB".to_owned(), 8),
            ]),
            gpus_unknown: 1,
            idle_gpu_hours: 24.04,
            idle_gpu_hours_unknown: 0,
        }
    }

    #[test]
    fn the_line_gives_gpus_by_type_and_idle_hours_and_what_could_not_be_counted() {
        assert_eq!(
            totals_line(&totals(), None),
            "Fleet: 3 clusters; GPUs running: 16 NVIDIA_B200, 8 NVIDIA_H200_141GB (unknown for \
             1 cluster); idle GPU-hours: 24.0"
        );
        assert_eq!(
            totals_line(
                &FleetTotals {
                    clusters: 1,
                    ..FleetTotals::default()
                },
                None
            ),
            "Fleet: 1 cluster; GPUs running: none; idle GPU-hours: 0.0"
        );
    }

    #[test]
    fn the_json_carries_the_same_numbers() {
        assert_eq!(
            totals_json(&totals(), None),
            json!({"clusters": 3, "gpus_running": {"NVIDIA_B200": 16, "NVIDIA_H200_141GB": 8},
                   "gpus_unknown_clusters": 1, "idle_gpu_hours": 24.0,
                   "idle_gpu_hours_unknown_clusters": 0})
        );
    }
}
