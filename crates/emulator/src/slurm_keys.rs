//! Slurm configuration map keys as a service that canonicalises them answers them: folded to
//! lowercase without underscores, the form in which the service compares parameter names
//! ("without matching case and ignoring underscores", *Create cluster*). Used with
//! `fold_slurm_config_keys` to rehearse a service that does not echo the request's spelling.

use serde_json::{Map, Value};

/// Folds the keys of the three Slurm configuration maps of a stored (lowerCamelCase) cluster:
/// `slurmSpec.config`, each partition's `config` and each node set's `config`.
pub(crate) fn fold_config_keys(cluster: &mut Value) {
    let Some(slurm) = cluster.pointer_mut("/orchestratorSpec/slurmSpec") else {
        return;
    };
    if let Some(config) = slurm.get_mut("config") {
        fold_map(config);
    }
    for list in ["partitions", "nodeSets"] {
        let items = slurm.get_mut(list).and_then(Value::as_array_mut);
        for config in items
            .into_iter()
            .flatten()
            .filter_map(|i| i.get_mut("config"))
        {
            fold_map(config);
        }
    }
}

fn fold_map(map: &mut Value) {
    let Value::Object(map) = map else {
        return;
    };
    let folded: Map<String, Value> = std::mem::take(map)
        .into_iter()
        .map(|(key, value)| (fold(&key), value))
        .collect();
    *map = folded;
}

fn fold(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_slurm_map_is_folded_and_nothing_else() {
        let mut cluster = json!({"labels": {"Team_A": "x"}, "orchestratorSpec": {"slurmSpec": {
            "config": {"DefMemPerCPU": "1024", "preempt_mode": "SUSPEND,GANG"},
            "partitions": [{"id": "a", "config": {"MaxTime": "1:00:00"}}],
            "nodeSets": [{"nodePoolId": "gpu", "config": {"Weight": "10"}}]}}});
        fold_config_keys(&mut cluster);
        let slurm = &cluster["orchestratorSpec"]["slurmSpec"];
        assert_eq!(
            slurm["config"],
            json!({"defmempercpu": "1024", "preemptmode": "SUSPEND,GANG"})
        );
        assert_eq!(
            slurm["partitions"][0]["config"],
            json!({"maxtime": "1:00:00"})
        );
        assert_eq!(slurm["nodeSets"][0]["config"], json!({"weight": "10"}));
        assert_eq!(cluster["labels"], json!({"Team_A": "x"}));
    }
}
