//! The emulator's own schema of the ModelDevelopmentCluster message (field
//! names, kinds and enum values, written from the API's field tables, never
//! taken from `clusterform-model`) and the strict request check built on it:
//! like Google's JSON front end, a request body with an unknown field name,
//! a value of the wrong kind or an enum value outside its list is refused
//! with `INVALID_ARGUMENT` naming the field path in proto (snake_case) form.
//! Names are accepted in lowerCamelCase or snake_case; keys of map fields are
//! free; output-only fields are accepted without being looked into (AIP-203).

use serde_json::{Map, Value};

use crate::api_error::ApiError;

/// What a field holds.
#[derive(Debug)]
pub(crate) enum Kind {
    String,
    Int32,
    Int64,
    Bool,
    /// A `google.protobuf.Duration` such as `"3600s"`.
    Duration,
    Enum(&'static [&'static str]),
    Message(&'static [Field]),
    Repeated(&'static Kind),
    /// `map<string, string>`: free keys, string values.
    StringMap,
    /// Set by the service; accepted in requests and ignored.
    OutputOnly,
}

/// One field of a message, by its lowerCamelCase name.
#[derive(Debug)]
pub(crate) struct Field {
    pub(crate) name: &'static str,
    pub(crate) kind: Kind,
}

const fn field(name: &'static str, kind: Kind) -> Field {
    Field { name, kind }
}

/// Vertex AI's `AcceleratorType` values.
const ACCELERATOR_TYPES: &[&str] = &[
    "ACCELERATOR_TYPE_UNSPECIFIED",
    "NVIDIA_TESLA_K80",
    "NVIDIA_TESLA_P100",
    "NVIDIA_TESLA_V100",
    "NVIDIA_TESLA_P4",
    "NVIDIA_TESLA_T4",
    "NVIDIA_TESLA_A100",
    "NVIDIA_A100_80GB",
    "NVIDIA_L4",
    "NVIDIA_H100_80GB",
    "NVIDIA_H100_MEGA_80GB",
    "NVIDIA_H200_141GB",
    "NVIDIA_B200",
    "NVIDIA_GB200",
    "NVIDIA_RTX_PRO_6000",
    "TPU_V2",
    "TPU_V3",
    "TPU_V4_POD",
    "TPU_V5_LITEPOD",
];
const PROVISIONING_MODELS: &[&str] = &["ON_DEMAND", "RESERVATION", "SPOT", "FLEX_START"];
const RESERVATION_AFFINITY_TYPES: &[&str] = &[
    "TYPE_UNSPECIFIED",
    "NO_RESERVATION",
    "ANY_RESERVATION",
    "SPECIFIC_RESERVATION",
];
const CONFIDENTIAL_INSTANCE_TYPES: &[&str] = &["SEV", "SEV_SNP", "TDX"];
const DAYS_OF_WEEK: &[&str] = &[
    "DAY_OF_WEEK_UNSPECIFIED",
    "MONDAY",
    "TUESDAY",
    "WEDNESDAY",
    "THURSDAY",
    "FRIDAY",
    "SATURDAY",
    "SUNDAY",
];

const RESERVATION_AFFINITY: &[Field] = &[
    field(
        "reservationAffinityType",
        Kind::Enum(RESERVATION_AFFINITY_TYPES),
    ),
    field("key", Kind::String),
    field("values", Kind::Repeated(&Kind::String)),
];

const MACHINE_SPEC: &[Field] = &[
    field("machineType", Kind::String),
    field("acceleratorType", Kind::Enum(ACCELERATOR_TYPES)),
    field("acceleratorCount", Kind::Int32),
    field("reservationAffinity", Kind::Message(RESERVATION_AFFINITY)),
];

const NODE_POOL: &[Field] = &[
    field("id", Kind::String),
    field("machineSpec", Kind::Message(MACHINE_SPEC)),
    field(
        "scalingSpec",
        Kind::Message(&[
            field("minNodeCount", Kind::Int64),
            field("maxNodeCount", Kind::Int64),
        ]),
    ),
    field("zone", Kind::String),
    field("enablePublicIps", Kind::Bool),
    field(
        "bootDisk",
        Kind::Message(&[
            field("bootDiskType", Kind::String),
            field("bootDiskSizeGb", Kind::Int64),
        ]),
    ),
    field("provisioningModel", Kind::Enum(PROVISIONING_MODELS)),
    field("flexStartMaxDuration", Kind::Duration),
    field("filestores", Kind::Repeated(&Kind::String)),
    field("lustres", Kind::Repeated(&Kind::String)),
    field("startupScript", Kind::String),
    field("nodeImage", Kind::String),
    field("labels", Kind::StringMap),
    field(
        "confidentialInstanceConfig",
        Kind::Message(&[field(
            "confidentialInstanceType",
            Kind::Enum(CONFIDENTIAL_INSTANCE_TYPES),
        )]),
    ),
];

const SLURM_SPEC: &[Field] = &[
    field("homeDirectoryStorage", Kind::String),
    field("loginNodePoolId", Kind::String),
    field(
        "partitions",
        Kind::Repeated(&Kind::Message(&[
            field("id", Kind::String),
            field("nodePoolIds", Kind::Repeated(&Kind::String)),
            field("config", Kind::StringMap),
        ])),
    ),
    field("prologBashScripts", Kind::Repeated(&Kind::String)),
    field("epilogBashScripts", Kind::Repeated(&Kind::String)),
    field("defaultPartitionId", Kind::String),
    field("config", Kind::StringMap),
    field(
        "nodeSets",
        Kind::Repeated(&Kind::Message(&[
            field("nodePoolId", Kind::String),
            field("config", Kind::StringMap),
        ])),
    ),
    field(
        "accounting",
        Kind::Message(&[field("accountingStorageEnforce", Kind::String)]),
    ),
    field("scheduling", Kind::Message(SCHEDULING)),
];

/// `slurmSpec.scheduling` (the Terraform provider's resource; weights are int64).
const SCHEDULING: &[Field] = &[
    field("priorityType", Kind::String),
    field("priorityWeightAge", Kind::Int64),
    field("priorityWeightAssoc", Kind::Int64),
    field("priorityWeightFairshare", Kind::Int64),
    field("priorityWeightJobSize", Kind::Int64),
    field("priorityWeightPartition", Kind::Int64),
    field("priorityWeightQos", Kind::Int64),
    field("priorityWeightTres", Kind::String),
    field("preemptType", Kind::String),
    field("preemptMode", Kind::String),
    field("preemptExemptTime", Kind::String),
];

const LUSTRE_EXPORT_CONFIG: &[Field] = &[
    field("destinationBucket", Kind::String),
    field("daysOfWeek", Kind::Repeated(&Kind::Enum(DAYS_OF_WEEK))),
    field("lustres", Kind::Repeated(&Kind::String)),
    field(
        "startTime",
        Kind::Message(&[
            field("hours", Kind::Int32),
            field("minutes", Kind::Int32),
            field("seconds", Kind::Int32),
            field("nanos", Kind::Int32),
        ]),
    ),
];

/// The ModelDevelopmentCluster message.
pub(crate) const CLUSTER: &[Field] = &[
    field("name", Kind::OutputOnly),
    field("displayName", Kind::String),
    field("labels", Kind::StringMap),
    field(
        "network",
        Kind::Message(&[
            field("network", Kind::String),
            field("subnetwork", Kind::String),
        ]),
    ),
    field("nodePools", Kind::Repeated(&Kind::Message(NODE_POOL))),
    field(
        "orchestratorSpec",
        Kind::Message(&[field("slurmSpec", Kind::Message(SLURM_SPEC))]),
    ),
    field(
        "runtimeSpec",
        Kind::Message(&[field("serviceAccount", Kind::String)]),
    ),
    field("lustreExportConfig", Kind::Message(LUSTRE_EXPORT_CONFIG)),
    field("createTime", Kind::OutputOnly),
    field("updateTime", Kind::OutputOnly),
    field("startTime", Kind::OutputOnly),
    field("clusterStatus", Kind::OutputOnly),
    field("clusterEvents", Kind::OutputOnly),
    field("runtime", Kind::OutputOnly),
];

/// The request field that carries the cluster, as Google names it in error paths.
const REQUEST_FIELD: &str = "model_development_cluster";

/// Checks a create or update body against the cluster schema; every problem
/// is reported in one `INVALID_ARGUMENT`, one line each, in Google's wording.
pub(crate) fn check_request_body(body: &Value) -> Result<(), ApiError> {
    let mut problems = Vec::new();
    match body {
        Value::Object(object) => check_message(object, CLUSTER, REQUEST_FIELD, &mut problems),
        other => problems.push(invalid_value(REQUEST_FIELD, "TYPE_MESSAGE", other)),
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid_argument(problems.join("\n")))
    }
}

/// The schema field a body key names, in either spelling.
pub(crate) fn find_field<'a>(fields: &'a [Field], key: &str) -> Option<&'a Field> {
    fields
        .iter()
        .find(|field| field.name == key || camel_to_snake(field.name) == key)
}

/// `nodePools` → `node_pools`.
pub(crate) fn camel_to_snake(name: &str) -> String {
    let mut snake = String::with_capacity(name.len() + 4);
    for character in name.chars() {
        if character.is_ascii_uppercase() {
            snake.push('_');
            snake.push(character.to_ascii_lowercase());
        } else {
            snake.push(character);
        }
    }
    snake
}

fn check_message(
    object: &Map<String, Value>,
    fields: &[Field],
    path: &str,
    problems: &mut Vec<String>,
) {
    for (key, value) in object {
        match find_field(fields, key) {
            None => problems.push(format!(
                "Invalid JSON payload received. Unknown name \"{key}\" at '{path}': Cannot find field."
            )),
            Some(field) => {
                let field_path = format!("{path}.{}", camel_to_snake(field.name));
                check_value(value, &field.kind, key, path, &field_path, problems);
            }
        }
    }
}

/// Checks `value` of the field spelled `key` in the message at `parent_path`.
fn check_value(
    value: &Value,
    kind: &Kind,
    key: &str,
    parent_path: &str,
    path: &str,
    problems: &mut Vec<String>,
) {
    if value.is_null() || matches!(kind, Kind::OutputOnly) {
        return;
    }
    if value.is_array() && !matches!(kind, Kind::Repeated(_)) {
        problems.push(format!(
            "Invalid JSON payload received. Unknown name \"{key}\" at '{parent_path}': Proto field is not repeating, cannot start list."
        ));
        return;
    }
    match kind {
        Kind::Repeated(item_kind) => match value {
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    let item_path = format!("{path}[{index}]");
                    if item.is_array() {
                        problems.push(invalid_value(&item_path, type_name(item_kind), item));
                    } else {
                        check_value(item, item_kind, key, parent_path, &item_path, problems);
                    }
                }
            }
            other => problems.push(invalid_value(path, type_name(item_kind), other)),
        },
        Kind::Message(fields) => match value {
            Value::Object(object) => check_message(object, fields, path, problems),
            other => problems.push(invalid_value(path, "TYPE_MESSAGE", other)),
        },
        Kind::StringMap => match value {
            Value::Object(map) => {
                for (map_key, map_value) in map.iter().filter(|(_, v)| !v.is_string()) {
                    problems.push(invalid_value(
                        &format!("{path}[\"{map_key}\"]"),
                        "TYPE_STRING",
                        map_value,
                    ));
                }
            }
            other => problems.push(invalid_value(path, "TYPE_MESSAGE", other)),
        },
        scalar_kind => {
            if !scalar_fits(value, scalar_kind) {
                problems.push(invalid_value(path, type_name(scalar_kind), value));
            }
        }
    }
}

fn scalar_fits(value: &Value, kind: &Kind) -> bool {
    match kind {
        Kind::String => value.is_string(),
        Kind::Bool => value.is_boolean(),
        Kind::Int32 | Kind::Int64 => match value {
            Value::Number(number) => number.is_i64() || number.is_u64(),
            Value::String(text) => text.trim().parse::<i64>().is_ok(),
            _ => false,
        },
        Kind::Duration => value.as_str().is_some_and(is_duration),
        Kind::Enum(values) => value.as_str().is_some_and(|text| values.contains(&text)),
        Kind::Message(_) | Kind::Repeated(_) | Kind::StringMap | Kind::OutputOnly => true,
    }
}

/// `"3600s"`, `"0.5s"`, `"-1s"`: the proto3 JSON form of a Duration.
fn is_duration(text: &str) -> bool {
    let Some(number) = text.strip_suffix('s') else {
        return false;
    };
    let digits = number.strip_prefix('-').unwrap_or(number);
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, "0"));
    !whole.is_empty()
        && !fraction.is_empty()
        && whole.chars().all(|c| c.is_ascii_digit())
        && fraction.chars().all(|c| c.is_ascii_digit())
}

fn type_name(kind: &Kind) -> &'static str {
    match kind {
        Kind::String => "TYPE_STRING",
        Kind::Int32 => "TYPE_INT32",
        Kind::Int64 => "TYPE_INT64",
        Kind::Bool => "TYPE_BOOL",
        Kind::Duration => "type.googleapis.com/google.protobuf.Duration",
        Kind::Enum(_) => "TYPE_ENUM",
        Kind::Message(_) | Kind::StringMap | Kind::OutputOnly => "TYPE_MESSAGE",
        Kind::Repeated(item) => type_name(item),
    }
}

/// Google's wording for a value its field cannot hold.
fn invalid_value(path: &str, type_name: &str, value: &Value) -> String {
    format!("Invalid value at '{path}' ({type_name}), {value}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(body: &Value) -> String {
        check_request_body(body).unwrap_err().message
    }

    #[test]
    fn both_spellings_and_output_only_fields_are_accepted() {
        check_request_body(&json!({
            "display_name": "x",
            "nodePools": [{"id": "a", "machine_spec": {"machineType": "n2", "accelerator_count": "2"},
                           "flexStartMaxDuration": "3600s", "labels": {"Any_Key": "v"}}],
            "orchestratorSpec": {"slurm_spec": {"config": {"MaxJobCount": "10"}}},
            "clusterStatus": {"state": "RUNNING", "whatever": [1]},
            "lustreExportConfig": {"daysOfWeek": ["MONDAY"], "startTime": {"hours": 2}},
            "runtimeSpec": null
        }))
        .unwrap();
    }

    #[test]
    fn unknown_names_are_reported_with_their_path() {
        insta::assert_snapshot!(problems(&json!({
            "displayNam": "x",
            "nodePools": [{"id": "a"}, {"machineSpec": {"machineTyp": "n2"}}],
            "orchestratorSpec": {"slurmSpec": {"partitions": [{"nodePoolIDs": []}]}}
        })), @r#"
        Invalid JSON payload received. Unknown name "displayNam" at 'model_development_cluster': Cannot find field.
        Invalid JSON payload received. Unknown name "machineTyp" at 'model_development_cluster.node_pools[1].machine_spec': Cannot find field.
        Invalid JSON payload received. Unknown name "nodePoolIDs" at 'model_development_cluster.orchestrator_spec.slurm_spec.partitions[0]': Cannot find field.
        "#);
    }

    #[test]
    fn enum_values_and_kinds_are_checked() {
        insta::assert_snapshot!(problems(&json!({
            "labels": {"a": 1},
            "network": "default",
            "nodePools": [{"provisioningModel": "CHEAP", "enablePublicIps": "yes",
                           "machineSpec": {"acceleratorType": "NVIDIA_H300", "acceleratorCount": 1.5,
                                           "reservationAffinity": {"reservationAffinityType": "SOME"}},
                           "confidentialInstanceConfig": {"confidentialInstanceType": "SGX"},
                           "zone": ["a"], "flexStartMaxDuration": "1h"}],
            "lustreExportConfig": {"daysOfWeek": ["FUNDAY"]}
        })), @r#"
        Invalid value at 'model_development_cluster.labels["a"]' (TYPE_STRING), 1
        Invalid value at 'model_development_cluster.network' (TYPE_MESSAGE), "default"
        Invalid value at 'model_development_cluster.node_pools[0].provisioning_model' (TYPE_ENUM), "CHEAP"
        Invalid value at 'model_development_cluster.node_pools[0].enable_public_ips' (TYPE_BOOL), "yes"
        Invalid value at 'model_development_cluster.node_pools[0].machine_spec.accelerator_type' (TYPE_ENUM), "NVIDIA_H300"
        Invalid value at 'model_development_cluster.node_pools[0].machine_spec.accelerator_count' (TYPE_INT32), 1.5
        Invalid value at 'model_development_cluster.node_pools[0].machine_spec.reservation_affinity.reservation_affinity_type' (TYPE_ENUM), "SOME"
        Invalid value at 'model_development_cluster.node_pools[0].confidential_instance_config.confidential_instance_type' (TYPE_ENUM), "SGX"
        Invalid JSON payload received. Unknown name "zone" at 'model_development_cluster.node_pools[0]': Proto field is not repeating, cannot start list.
        Invalid value at 'model_development_cluster.node_pools[0].flex_start_max_duration' (type.googleapis.com/google.protobuf.Duration), "1h"
        Invalid value at 'model_development_cluster.lustre_export_config.days_of_week[0]' (TYPE_ENUM), "FUNDAY"
        "#);
    }

    #[test]
    fn every_listed_enum_value_is_accepted() {
        for accelerator in ACCELERATOR_TYPES {
            let body = json!({"nodePools": [{"machineSpec": {"acceleratorType": accelerator}}]});
            check_request_body(&body).unwrap();
        }
        for model in PROVISIONING_MODELS {
            check_request_body(&json!({"nodePools": [{"provisioningModel": model}]})).unwrap();
        }
    }

    #[test]
    fn names_convert_to_snake_case() {
        assert_eq!(camel_to_snake("bootDiskSizeGb"), "boot_disk_size_gb");
        assert_eq!(camel_to_snake("id"), "id");
        assert!(find_field(CLUSTER, "node_pools").is_some());
        assert!(find_field(CLUSTER, "nodepools").is_none());
        assert!(find_field(CLUSTER, "node_Pools").is_none());
    }

    #[test]
    fn durations_follow_proto3_json() {
        for good in ["3600s", "0.5s", "-1s"] {
            assert!(is_duration(good), "{good}");
        }
        for bad in ["1h", "s", "1.s", "1", "+1s"] {
            assert!(!is_duration(bad), "{bad}");
        }
    }
}
