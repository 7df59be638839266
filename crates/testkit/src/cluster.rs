//! The canonical cluster as JSON: the product page's CPU cluster as a configuration writes it
//! ([`seed`]) and as the service serves it back ([`served`]: a name with the project number,
//! defaults filled in, output-only fields, pools reordered, integers as strings). The same
//! cluster as HCL is [`crate::hcl::SEED_HCL`].

use serde_json::{Value, json};

use crate::{PROJECT_NUMBER, REGION};

/// The canonical CPU cluster as a configuration writes it.
pub fn seed() -> Value {
    json!({
        "displayName": "Research training",
        "labels": {"team": "ml"},
        "network": {
            "network": "projects/my-proj/global/networks/default",
            "subnetwork": "projects/my-proj/regions/us-central1/subnetworks/default"
        },
        "nodePools": [
            {"id": "login", "machineSpec": {"machineType": "n2-standard-8"},
             "scalingSpec": {"minNodeCount": 1, "maxNodeCount": 1}, "zone": "us-central1-a",
             "enablePublicIps": true, "bootDisk": {"bootDiskType": "pd-standard", "bootDiskSizeGb": 120}},
            {"id": "cpu", "machineSpec": {"machineType": "n2-standard-8"},
             "scalingSpec": {"minNodeCount": 0, "maxNodeCount": 4}, "zone": "us-central1-a"}
        ],
        "orchestratorSpec": {"slurmSpec": {
            "homeDirectoryStorage": "projects/my-proj/locations/us-central1-a/instances/home",
            "loginNodePoolId": "login",
            "partitions": [{"id": "cpu", "nodePoolIds": ["cpu"]}],
            "prologBashScripts": ["#!/bin/bash\necho prolog"]
        }}
    })
}

/// What the service returns after creating `desired`: a name with the project number, the
/// ownership label of `stack`, server defaults, output-only fields, pools in another order,
/// integers as strings, zeros omitted.
pub fn served(id: &str, desired: &Value, stack: Option<&str>, state: &str) -> Value {
    let mut live = desired.clone();
    let object = live.as_object_mut().expect("object");
    object.insert(
        "name".into(),
        json!(format!(
            "projects/{PROJECT_NUMBER}/locations/{REGION}/modelDevelopmentClusters/{id}"
        )),
    );
    if let Some(stack) = stack {
        let labels = object.entry("labels").or_insert_with(|| json!({}));
        labels["clusterform-stack"] = json!(stack);
    }
    object.insert("createTime".into(), json!("2026-11-02T10:00:00Z"));
    object.insert("updateTime".into(), json!("2026-11-02T10:30:00Z"));
    object.insert("clusterStatus".into(), json!({"state": state}));
    object.insert(
        "runtimeSpec".into(),
        json!({"serviceAccount": "123-compute@developer.gserviceaccount.com"}),
    );
    if let Some(pools) = object.get_mut("nodePools").and_then(Value::as_array_mut) {
        for pool in pools.iter_mut() {
            serve_pool(pool);
        }
        pools.reverse();
    }
    live
}

fn serve_pool(pool: &mut Value) {
    let object = pool.as_object_mut().expect("pool");
    object
        .entry("nodeImage")
        .or_insert_with(|| json!("slurm-image-2026-10"));
    let disk = object.entry("bootDisk").or_insert_with(|| json!({}));
    disk.as_object_mut()
        .expect("disk")
        .entry("bootDiskType")
        .or_insert_with(|| json!("pd-ssd"));
    if let Some(scaling) = object.get_mut("scalingSpec").and_then(Value::as_object_mut) {
        for count in ["minNodeCount", "maxNodeCount"] {
            match scaling.get(count).and_then(Value::as_i64) {
                Some(0) => {
                    scaling.remove(count);
                }
                Some(n) => {
                    scaling.insert(count.to_owned(), json!(n.to_string()));
                }
                None => {}
            }
        }
    }
}
