//! JSON round trips on realistic payloads: the seed's snake_case update payload, a GPU A4
//! cluster with a reservation, and a live response with string integers and unknown fields.

use clusterform_model::{Cluster, ErrorEnvelope, Operation};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn read(value: &Value) -> Cluster {
    serde_json::from_value(value.clone()).unwrap()
}

fn is_integer_field(key: &str) -> bool {
    key.ends_with("Count") || key.ends_with("SizeGb")
}

/// Keys that differ only in spelling (snake vs camel) and integers that differ only in
/// encoding compare equal after this.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let key = if k.contains('_') && !k.starts_with('@') {
                        clusterform_model::fields::camel_case(k)
                    } else {
                        k.clone()
                    };
                    let value = match v {
                        Value::String(s) if is_integer_field(&key) => {
                            json!(s.parse::<i64>().unwrap())
                        }
                        other => canonical(other),
                    };
                    (key, value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

#[test]
fn seed_update_payload_reads_snake_case_and_writes_camel_case() {
    let raw = fixture("seed-update.json");
    let cluster = read(&raw);
    let cpu = cluster.node_pool("cpu").unwrap();
    assert_eq!(cpu.scaling_spec.as_ref().unwrap().min_node_count, Some(0));
    assert_eq!(cpu.boot_disk.as_ref().unwrap().boot_disk_size_gb, Some(120));
    assert_eq!(
        cluster.slurm_spec().unwrap().login_node_pool_id.as_deref(),
        Some("login")
    );
    let written = serde_json::to_value(&cluster).unwrap();
    assert!(written.get("nodePools").is_some());
    assert!(written.get("node_pools").is_none());
    assert_eq!(written, canonical(&raw));
    assert_eq!(read(&written), cluster);
}

#[test]
fn gpu_cluster_with_reservation_round_trips_exactly() {
    let raw = fixture("gpu-a4.json");
    let cluster = read(&raw);
    let a4 = cluster.node_pool("a4").unwrap();
    let affinity = a4
        .machine_spec
        .as_ref()
        .unwrap()
        .reservation_affinity
        .as_ref()
        .unwrap();
    assert_eq!(
        affinity.reservation_affinity_type.as_deref(),
        Some("SPECIFIC_RESERVATION")
    );
    assert_eq!(
        cluster
            .lustre_export_config
            .as_ref()
            .unwrap()
            .start_time
            .as_ref()
            .unwrap()
            .minutes,
        Some(30)
    );
    assert_eq!(serde_json::to_value(&cluster).unwrap(), raw);
}

#[test]
fn live_response_keeps_unknown_fields_and_reads_string_integers() {
    let raw = fixture("live-response.json");
    let cluster = read(&raw);
    let login = cluster.node_pool("login").unwrap();
    assert_eq!(login.scaling_spec.as_ref().unwrap().max_node_count, Some(1));
    let cpu = cluster.node_pool("cpu").unwrap();
    assert_eq!(cpu.scaling_spec.as_ref().unwrap().min_node_count, None);
    assert_eq!(
        cpu.machine_spec.as_ref().unwrap().accelerator_count,
        Some(0),
        "a zero is a set value"
    );
    assert_eq!(cluster.state(), Some("RUNNING"));
    assert_eq!(cluster.extra["satisfiesPzi"], json!(false));
    assert!(login.extra.contains_key("futurePoolField"));
    assert!(
        cluster
            .slurm_spec()
            .unwrap()
            .extra
            .contains_key("slurmVersion")
    );

    let written = serde_json::to_value(&cluster).unwrap();
    assert_eq!(written, canonical(&raw));
}

#[test]
fn read_modify_write_never_drops_a_field() {
    let raw = fixture("live-response.json");
    let mut cluster = read(&raw);
    cluster
        .labels
        .get_or_insert_default()
        .insert("team".into(), "ml".into());
    let written = serde_json::to_value(&cluster).unwrap();
    assert_eq!(
        written["network"]["networkAttachment"],
        raw["network"]["networkAttachment"]
    );
    assert_eq!(
        written["nodePools"][0]["futurePoolField"],
        raw["nodePools"][0]["futurePoolField"]
    );
    assert_eq!(written["labels"]["team"], "ml");
}

#[test]
fn unset_and_zero_are_different() {
    let cluster: Cluster = serde_json::from_value(json!({
        "nodePools": [{"id": "a", "scalingSpec": {"minNodeCount": 0}}]
    }))
    .unwrap();
    let written = serde_json::to_value(&cluster).unwrap();
    assert_eq!(
        written,
        json!({"nodePools": [{"id": "a", "scalingSpec": {"minNodeCount": 0}}]})
    );
}

#[test]
fn bad_integers_are_errors_that_name_the_value() {
    let err = serde_json::from_value::<Cluster>(json!({
        "nodePools": [{"id": "a", "scalingSpec": {"minNodeCount": "lots"}}]
    }))
    .unwrap_err();
    assert!(err.to_string().contains("lots"), "{err}");
}

#[test]
fn operations_expose_progress_and_response() {
    let op: Operation = serde_json::from_value(fixture("operation.json")).unwrap();
    assert!(op.done);
    assert_eq!(op.progress_message(), Some("Resizing node pool cpu"));
    let cluster = op.response_cluster().unwrap();
    let cpu = cluster.node_pool("cpu").unwrap();
    assert_eq!(cpu.scaling_spec.as_ref().unwrap().max_node_count, Some(8));

    let pending: Operation =
        serde_json::from_value(json!({"name": "projects/1/locations/r/operations/2"})).unwrap();
    assert!(!pending.done);
    let deleted: Operation = serde_json::from_value(json!({
        "name": "x", "done": true,
        "response": {"@type": "type.googleapis.com/google.protobuf.Empty"}
    }))
    .unwrap();
    assert!(deleted.response_cluster().is_none());
}

#[test]
fn operation_errors_and_error_envelopes() {
    let op: Operation = serde_json::from_value(json!({
        "name": "x", "done": true,
        "error": {"code": 9, "message": "pool busy"}
    }))
    .unwrap();
    let error = op.error.unwrap();
    assert_eq!(error.code_name(), "FAILED_PRECONDITION");
    assert_eq!(error.to_string(), "FAILED_PRECONDITION (9): pool busy");

    let envelope: ErrorEnvelope = serde_json::from_value(json!({
        "error": {"code": 409, "message": "exists", "status": "ALREADY_EXISTS", "details": []}
    }))
    .unwrap();
    assert_eq!(envelope.error.code_name(), "ALREADY_EXISTS");
}
