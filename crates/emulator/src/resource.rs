//! The cluster resource as the service treats it, on plain JSON: cluster-ID
//! rules, request-body preparation (camelCase keys, output-only fields
//! dropped), validation of required fields, references and what the service
//! refuses at request time ([`service_rules`]), each problem a field violation
//! with the field's snake_case path in request order, server defaults, and the
//! proto3 JSON encoding of 64-bit integers as strings.

mod service_rules;

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use crate::api_error::{ApiError, FieldViolation};
use crate::casing::camel_case_keys;

/// Fields the service sets itself; values sent by a client are ignored.
const OUTPUT_ONLY_FIELDS: [&str; 7] = [
    "name",
    "createTime",
    "updateTime",
    "startTime",
    "clusterStatus",
    "clusterEvents",
    "runtime",
];
const DEFAULT_BOOT_DISK_TYPE: &str = "pd-ssd";
/// The request field that carries the cluster, as the service names it in field paths.
const REQUEST_FIELD: &str = "model_development_cluster";
const DEFAULT_BOOT_DISK_SIZE_GB: i64 = 100;
const DEFAULT_NODE_IMAGE: &str = "slurm-24-11-ubuntu-2204";
const MAX_CLUSTER_ID_LENGTH: usize = 10;
const MAX_DISPLAY_NAME_CHARS: usize = 128;
const MAX_LABEL_KEY_LENGTH: usize = 63;
/// Label values: up to 64 code points, "International characters are allowed" (*Create
/// cluster*).
const MAX_LABEL_VALUE_LENGTH: usize = 64;

/// The project and location a collection of clusters lives in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Parent {
    pub(crate) project: String,
    pub(crate) location: String,
}

#[cfg(test)]
impl Parent {
    /// `proj` in `us-central1`, the parent unit tests use.
    pub(crate) fn of_tests() -> Parent {
        Parent {
            project: "proj".to_owned(),
            location: "us-central1".to_owned(),
        }
    }
}

impl Parent {
    /// `projects/{P}/locations/{R}/modelDevelopmentClusters/`, the prefix of every cluster name in it.
    pub(crate) fn collection_prefix(&self) -> String {
        format!(
            "projects/{}/locations/{}/modelDevelopmentClusters/",
            self.project, self.location
        )
    }

    pub(crate) fn cluster_name(&self, cluster_id: &str) -> String {
        format!("{}{cluster_id}", self.collection_prefix())
    }

    /// The parent of a full cluster name, if it has the canonical shape.
    pub(crate) fn of_cluster_name(name: &str) -> Option<Parent> {
        match name.split('/').collect::<Vec<_>>().as_slice() {
            [
                "projects",
                project,
                "locations",
                location,
                "modelDevelopmentClusters",
                _,
            ] => Some(Parent {
                project: (*project).to_owned(),
                location: (*location).to_owned(),
            }),
            _ => None,
        }
    }
}

/// Checks a cluster ID: 1–10 characters `^[a-z]([a-z0-9-]{0,8}[a-z0-9])?$`,
/// and no hyphen at all when the cluster has a Slurm spec.
pub(crate) fn check_cluster_id(cluster_id: &str, has_slurm_spec: bool) -> Result<(), ApiError> {
    let invalid = |rule: &str| {
        ApiError::invalid_argument(format!(
            "Invalid modelDevelopmentClusterId `{cluster_id}`: {rule}."
        ))
    };
    if cluster_id.is_empty() || cluster_id.len() > MAX_CLUSTER_ID_LENGTH {
        return Err(invalid("it must be 1 to 10 characters long"));
    }
    if !cluster_id.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err(invalid("it must start with a lowercase letter"));
    }
    if !cluster_id
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(invalid(
            "only lowercase letters, digits and hyphens are allowed",
        ));
    }
    if cluster_id.ends_with('-') {
        return Err(invalid("it must not end with a hyphen"));
    }
    if has_slurm_spec && cluster_id.contains('-') {
        return Err(invalid(
            "a cluster with a Slurm spec cannot have hyphens in its ID",
        ));
    }
    Ok(())
}

/// Turns a request body into a cluster: keys in lowerCamelCase, output-only fields removed.
pub(crate) fn cluster_from_request(body: &Value) -> Result<Value, ApiError> {
    if !body.is_object() {
        return Err(ApiError::invalid_argument(
            "The request body must be a JSON object (the cluster).",
        ));
    }
    let mut cluster =
        camel_case_keys(body, "").map_err(|error| ApiError::invalid_argument(error.to_string()))?;
    if let Some(object) = cluster.as_object_mut() {
        object.retain(|key, _| !OUTPUT_ONLY_FIELDS.contains(&key.as_str()));
    }
    Ok(cluster)
}

/// Whether a (camelCase) cluster carries `orchestratorSpec.slurmSpec`.
pub(crate) fn has_slurm_spec(cluster: &Value) -> bool {
    cluster
        .pointer("/orchestratorSpec/slurmSpec")
        .is_some_and(|spec| !spec.is_null())
}

/// Validates required fields, types, references and the service's request-time
/// rules of a camelCase cluster; every problem found is a field violation of
/// one `INVALID_ARGUMENT`.
pub(crate) fn check_cluster(cluster: &Value) -> Result<(), ApiError> {
    let mut problems = Problems::default();
    if cluster.is_object() {
        check_display_name(cluster, &mut problems);
        check_labels(cluster.get("labels"), "labels", &mut problems);
        problems.require_string(cluster, "/network/network", "network.network");
        let pool_ids = check_node_pools(cluster.get("nodePools"), &mut problems);
        check_slurm_spec(
            cluster.pointer("/orchestratorSpec/slurmSpec"),
            &pool_ids,
            &mut problems,
        );
        service_rules::check(cluster, &mut problems);
    } else {
        problems.add("", "The cluster must be a JSON object.");
    }
    problems.into_result()
}

/// Fills the values the service chooses when the client leaves them unset,
/// and writes 64-bit integers as strings.
pub(crate) fn complete_cluster(cluster: &mut Value, parent: Option<&Parent>, project_number: &str) {
    let Some(object) = cluster.as_object_mut() else {
        return;
    };
    if let Some(parent) = parent
        && let Some(network) = child_object(object, "network")
    {
        network.entry("subnetwork").or_insert_with(|| {
            Value::from(format!(
                "projects/{}/regions/{}/subnetworks/default",
                parent.project, parent.location
            ))
        });
    }
    if let Some(runtime_spec) = child_object(object, "runtimeSpec") {
        runtime_spec.entry("serviceAccount").or_insert_with(|| {
            Value::from(format!(
                "{project_number}-compute@developer.gserviceaccount.com"
            ))
        });
    }
    if let Some(Value::Array(pools)) = object.get_mut("nodePools") {
        pools
            .iter_mut()
            .filter_map(Value::as_object_mut)
            .for_each(complete_node_pool);
    }
}

fn complete_node_pool(pool: &mut Map<String, Value>) {
    let disk_type = service_rules::default_boot_disk_type(pool.get("machineSpec"))
        .unwrap_or(DEFAULT_BOOT_DISK_TYPE);
    if let Some(boot_disk) = child_object(pool, "bootDisk") {
        boot_disk
            .entry("bootDiskType")
            .or_insert_with(|| Value::from(disk_type));
        boot_disk
            .entry("bootDiskSizeGb")
            .or_insert_with(|| Value::from(DEFAULT_BOOT_DISK_SIZE_GB));
        encode_integer(boot_disk, "bootDiskSizeGb", IntegerEncoding::String);
    }
    pool.entry("nodeImage")
        .or_insert_with(|| Value::from(DEFAULT_NODE_IMAGE));
    if let Some(Value::Object(scaling)) = pool.get_mut("scalingSpec") {
        encode_integer(scaling, "minNodeCount", IntegerEncoding::String);
        encode_integer(scaling, "maxNodeCount", IntegerEncoding::String);
    }
    if let Some(Value::Object(machine)) = pool.get_mut("machineSpec") {
        encode_integer(machine, "acceleratorCount", IntegerEncoding::Number);
    }
}

/// proto3 JSON writes int64 as a string and int32 as a number.
#[derive(Clone, Copy)]
enum IntegerEncoding {
    String,
    Number,
}

fn encode_integer(object: &mut Map<String, Value>, field: &str, encoding: IntegerEncoding) {
    let Some(value) = object.get_mut(field) else {
        return;
    };
    if let Some(integer) = read_integer(value) {
        *value = match encoding {
            IntegerEncoding::String => Value::from(integer.to_string()),
            IntegerEncoding::Number => Value::from(integer),
        };
    }
}

/// The object under `key`, created if absent or null; `None` if it holds something else.
fn child_object<'a>(
    object: &'a mut Map<String, Value>,
    key: &str,
) -> Option<&'a mut Map<String, Value>> {
    let child = object.entry(key).or_insert(Value::Null);
    if child.is_null() {
        *child = json!({});
    }
    child.as_object_mut()
}

/// A pool's `scalingSpec` count `field` (`minNodeCount`, `maxNodeCount`): 0 when unset or not
/// a non-negative integer, as proto3 reads an unset count.
pub(crate) fn node_count(pool: &Value, field: &str) -> u64 {
    pool.pointer(&format!("/scalingSpec/{field}"))
        .and_then(read_integer)
        .and_then(|count| u64::try_from(count).ok())
        .unwrap_or(0)
}

/// Whether a create asks for machines for `pool`: its static nodes, `minNodeCount` (the
/// *Flex Start* and *Cluster resiliency* pages: nodes above the minimum are dynamic, made
/// when a job pends).
pub(crate) fn has_static_nodes(pool: &Value) -> bool {
    node_count(pool, "minNodeCount") > 0
}

/// An integer given as a JSON number or a decimal string.
fn read_integer(value: &Value) -> Option<i64> {
    match value {
        Value::Number(number) => number.as_i64(),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    }
}

fn check_display_name(cluster: &Value, problems: &mut Problems) {
    match cluster.get("displayName") {
        None | Some(Value::Null) => {}
        Some(Value::String(name)) if name.chars().count() <= MAX_DISPLAY_NAME_CHARS => {}
        Some(Value::String(name)) => problems.add(
            "display_name",
            format!(
                "display_name can have at most {MAX_DISPLAY_NAME_CHARS} characters; it has {}.",
                name.chars().count()
            ),
        ),
        Some(_) => problems.add("display_name", "display_name must be a string."),
    }
}

fn check_labels(labels: Option<&Value>, path: &str, problems: &mut Problems) {
    let Some(labels) = labels.filter(|labels| !labels.is_null()) else {
        return;
    };
    let Some(labels) = labels.as_object() else {
        problems.add(path, "Labels must be an object of strings.");
        return;
    };
    for (key, value) in labels {
        let key_path = format!("{path}[\"{key}\"]");
        if !is_label_text(key, MAX_LABEL_KEY_LENGTH) || !key.starts_with(is_lowercase_letter) {
            problems.add(
                &key_path,
                format!(
                    "Label key `{key}` must start with a lowercase letter and have at most 63 \
                     lowercase letters, digits, `_` or `-`."
                ),
            );
        }
        match value.as_str() {
            Some(text) if is_label_text(text, MAX_LABEL_VALUE_LENGTH) => {}
            Some(text) => problems.add(
                &key_path,
                format!(
                    "Label value `{text}` must have at most 64 lowercase letters, digits, `_` or `-`."
                ),
            ),
            None => problems.add(&key_path, "Label values must be strings."),
        }
    }
}

fn is_label_text(text: &str, longest: usize) -> bool {
    text.chars().count() <= longest
        && text
            .chars()
            .all(|c| is_lowercase_letter(c) || c.is_numeric() || c == '_' || c == '-')
}

/// A lowercase letter, of any script: one without case counts.
fn is_lowercase_letter(c: char) -> bool {
    c.is_alphabetic() && !c.is_uppercase()
}

/// Checks `nodePools` and returns the pool IDs it declares.
fn check_node_pools(pools: Option<&Value>, problems: &mut Problems) -> HashSet<String> {
    let mut pool_ids = HashSet::new();
    let pools = match pools {
        Some(Value::Array(pools)) if !pools.is_empty() => pools,
        Some(Value::Array(_)) | None | Some(Value::Null) => {
            problems.add("node_pools", "At least one node pool is required.");
            return pool_ids;
        }
        Some(_) => {
            problems.add("node_pools", "node_pools must be a list.");
            return pool_ids;
        }
    };
    for (index, pool) in pools.iter().enumerate() {
        let path = format!("node_pools[{index}]");
        if !pool.is_object() {
            problems.add(&path, "A node pool must be an object.");
            continue;
        }
        if let Some(id) = problems.require_string(pool, "/id", &format!("{path}.id"))
            && !pool_ids.insert(id.to_owned())
        {
            problems.add(
                &format!("{path}.id"),
                format!("The node pool id `{id}` is used by more than one node pool."),
            );
        }
        problems.require_string(
            pool,
            "/machineSpec/machineType",
            &format!("{path}.machine_spec.machine_type"),
        );
        check_scaling(pool, &path, problems);
        check_optional_integer(
            pool,
            "/bootDisk/bootDiskSizeGb",
            &format!("{path}.boot_disk.boot_disk_size_gb"),
            problems,
        );
        check_optional_integer(
            pool,
            "/machineSpec/acceleratorCount",
            &format!("{path}.machine_spec.accelerator_count"),
            problems,
        );
        check_labels(pool.get("labels"), &format!("{path}.labels"), problems);
    }
    pool_ids
}

/// `0 ≤ minNodeCount ≤ maxNodeCount`; an unset count is 0, as in proto3.
fn check_scaling(pool: &Value, path: &str, problems: &mut Problems) {
    let min = check_optional_integer(
        pool,
        "/scalingSpec/minNodeCount",
        &format!("{path}.scaling_spec.min_node_count"),
        problems,
    );
    let max = check_optional_integer(
        pool,
        "/scalingSpec/maxNodeCount",
        &format!("{path}.scaling_spec.max_node_count"),
        problems,
    );
    if let (Some(min), Some(max)) = (min, max)
        && min > max
    {
        problems.add(
            &format!("{path}.scaling_spec.min_node_count"),
            format!("min_node_count ({min}) is greater than max_node_count ({max})."),
        );
    }
}

/// A non-negative integer at `pointer` (0 when unset); `None` after reporting a bad value.
fn check_optional_integer(
    value: &Value,
    pointer: &str,
    path: &str,
    problems: &mut Problems,
) -> Option<i64> {
    match value.pointer(pointer) {
        None | Some(Value::Null) => Some(0),
        Some(raw) => match read_integer(raw) {
            Some(integer) if integer >= 0 => Some(integer),
            _ => {
                problems.add(
                    path,
                    format!("The value must be a non-negative integer; got {raw}."),
                );
                None
            }
        },
    }
}

const SLURM_SPEC_PATH: &str = "orchestrator_spec.slurm_spec";

fn check_slurm_spec(spec: Option<&Value>, pool_ids: &HashSet<String>, problems: &mut Problems) {
    let Some(spec) = spec.filter(|spec| spec.is_object()) else {
        problems.add(SLURM_SPEC_PATH, "The Slurm spec is required.");
        return;
    };
    let path = SLURM_SPEC_PATH;
    problems.require_string(
        spec,
        "/homeDirectoryStorage",
        &format!("{path}.home_directory_storage"),
    );
    let login_path = format!("{path}.login_node_pool_id");
    if let Some(login) = problems.require_string(spec, "/loginNodePoolId", &login_path)
        && !pool_ids.contains(login)
    {
        problems.add(
            &login_path,
            format!("login_node_pool_id `{login}` does not name a node pool."),
        );
    }
    let partition_ids = check_partitions(spec.get("partitions"), pool_ids, problems);
    if let Some(default) = spec.get("defaultPartitionId").and_then(Value::as_str)
        && !default.is_empty()
        && !partition_ids.contains(default)
    {
        problems.add(
            &format!("{path}.default_partition_id"),
            format!("default_partition_id `{default}` does not name a partition."),
        );
    }
    for (key, field) in [
        ("prologBashScripts", "prolog_bash_scripts"),
        ("epilogBashScripts", "epilog_bash_scripts"),
    ] {
        check_string_list(spec.get(key), &format!("{path}.{field}"), problems);
    }
}

/// Checks partitions and returns their IDs.
fn check_partitions(
    partitions: Option<&Value>,
    pool_ids: &HashSet<String>,
    problems: &mut Problems,
) -> HashSet<String> {
    let mut partition_ids = HashSet::new();
    let partitions = match partitions {
        None | Some(Value::Null) => return partition_ids,
        Some(Value::Array(partitions)) => partitions,
        Some(_) => {
            problems.add(
                &format!("{SLURM_SPEC_PATH}.partitions"),
                "partitions must be a list.",
            );
            return partition_ids;
        }
    };
    for (index, partition) in partitions.iter().enumerate() {
        let path = format!("{SLURM_SPEC_PATH}.partitions[{index}]");
        if let Some(id) = problems.require_string(partition, "/id", &format!("{path}.id"))
            && !partition_ids.insert(id.to_owned())
        {
            problems.add(
                &format!("{path}.id"),
                format!("The partition id `{id}` is used by more than one partition."),
            );
        }
        let pools_path = format!("{path}.node_pool_ids");
        let listed = check_string_list(partition.get("nodePoolIds"), &pools_path, problems);
        for (entry, pool_id) in listed.into_iter().enumerate() {
            if !pool_ids.contains(pool_id) {
                problems.add(
                    &format!("{pools_path}[{entry}]"),
                    format!("`{pool_id}` does not name a node pool."),
                );
            }
        }
    }
    partition_ids
}

/// The strings of an optional list, after reporting anything that is not a string.
fn check_string_list<'a>(
    list: Option<&'a Value>,
    path: &str,
    problems: &mut Problems,
) -> Vec<&'a str> {
    match list {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => {
            if items.iter().any(|item| !item.is_string()) {
                problems.add(path, "The value must be a list of strings.");
            }
            items.iter().filter_map(Value::as_str).collect()
        }
        Some(_) => {
            problems.add(path, "The value must be a list of strings.");
            Vec::new()
        }
    }
}

/// Validation problems, each a field violation, collected so that all of them
/// are reported together.
#[derive(Default)]
struct Problems(Vec<FieldViolation>);

impl Problems {
    /// A problem with the field at `path`, snake_case and relative to the
    /// cluster (`node_pools[1].id`; empty: the cluster itself).
    fn add(&mut self, path: &str, description: impl Into<String>) {
        let field = if path.is_empty() {
            REQUEST_FIELD.to_owned()
        } else {
            format!("{REQUEST_FIELD}.{path}")
        };
        self.0.push(FieldViolation {
            field,
            description: description.into(),
        });
    }

    /// The non-empty string at `pointer`, or a problem naming `path`.
    fn require_string<'a>(
        &mut self,
        value: &'a Value,
        pointer: &str,
        path: &str,
    ) -> Option<&'a str> {
        match value.pointer(pointer) {
            Some(Value::String(text)) if !text.is_empty() => Some(text),
            Some(Value::String(_)) | None | Some(Value::Null) => {
                self.add(path, "The field is required.");
                None
            }
            Some(_) => {
                self.add(path, "The field must be a string.");
                None
            }
        }
    }

    fn into_result(self) -> Result<(), ApiError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(ApiError::field_violations(self.0))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid_cluster() -> Value {
        json!({
            "network": {"network": "projects/p/global/networks/default"},
            "nodePools": [
                {"id": "login", "machineSpec": {"machineType": "n2-standard-8"},
                 "scalingSpec": {"minNodeCount": 1, "maxNodeCount": "1"}},
                {"id": "cpu", "machineSpec": {"machineType": "n2-standard-8", "acceleratorCount": "2"},
                 "scalingSpec": {"maxNodeCount": 4}, "bootDisk": {"bootDiskType": "pd-standard"}}
            ],
            "orchestratorSpec": {"slurmSpec": {
                "homeDirectoryStorage": "projects/p/locations/us-central1-a/instances/home",
                "loginNodePoolId": "login",
                "partitions": [{"id": "cpu", "nodePoolIds": ["cpu"]}],
                "defaultPartitionId": "cpu"
            }}
        })
    }

    /// The field violations of an invalid cluster, one `field: description` a line.
    fn problems_of(cluster: &Value) -> String {
        check_cluster(cluster)
            .unwrap_err()
            .field_violations
            .iter()
            .map(|v| format!("{}: {}\n", v.field, v.description))
            .collect()
    }

    #[test]
    fn a_complete_cluster_is_valid() {
        check_cluster(&valid_cluster()).unwrap();
    }

    #[test]
    fn cluster_ids_follow_the_api_rules() {
        for good in ["a", "train01", "abcdefghij"] {
            check_cluster_id(good, true).unwrap();
        }
        check_cluster_id("a-b", false).unwrap();
        let cases = [
            ("", true, "it must be 1 to 10 characters long"),
            ("abcdefghijk", true, "it must be 1 to 10 characters long"),
            ("1abc", true, "it must start with a lowercase letter"),
            (
                "a/b",
                true,
                "only lowercase letters, digits and hyphens are allowed",
            ),
            (
                "aB",
                true,
                "only lowercase letters, digits and hyphens are allowed",
            ),
            ("ab-", false, "it must not end with a hyphen"),
            (
                "a-b",
                true,
                "a cluster with a Slurm spec cannot have hyphens in its ID",
            ),
        ];
        for (id, slurm, rule) in cases {
            let message = check_cluster_id(id, slurm).unwrap_err().message;
            assert_eq!(
                message,
                format!("Invalid modelDevelopmentClusterId `{id}`: {rule}.")
            );
        }
    }

    #[test]
    fn problems_are_listed_in_the_message_and_as_field_violations() {
        let mut cluster = valid_cluster();
        cluster["displayName"] = json!("d".repeat(129));
        cluster["nodePools"][1]["id"] = json!("");
        let error = check_cluster(&cluster).unwrap_err();
        assert_eq!(error.code, crate::api_error::Code::InvalidArgument);
        insta::assert_snapshot!(error.message, @"List of found errors:\t1.Field: model_development_cluster.display_name; Message: display_name can have at most 128 characters; it has 129.\t2.Field: model_development_cluster.node_pools[1].id; Message: The field is required.\t3.Field: model_development_cluster.orchestrator_spec.slurm_spec.partitions[0].node_pool_ids[0]; Message: `cpu` does not name a node pool.\t");
        assert_eq!(error.field_violations.len(), 3);
    }

    #[test]
    fn every_missing_required_field_is_reported() {
        insta::assert_snapshot!(problems_of(&json!({})), @r"
        model_development_cluster.network.network: The field is required.
        model_development_cluster.node_pools: At least one node pool is required.
        model_development_cluster.orchestrator_spec.slurm_spec: The Slurm spec is required.
        ");
        let cluster = json!({"network": {"network": "n"}, "nodePools": [{"id": ""}], "orchestratorSpec": {"slurmSpec": {}}});
        insta::assert_snapshot!(problems_of(&cluster), @r"
        model_development_cluster.node_pools[0].id: The field is required.
        model_development_cluster.node_pools[0].machine_spec.machine_type: The field is required.
        model_development_cluster.orchestrator_spec.slurm_spec.home_directory_storage: The field is required.
        model_development_cluster.orchestrator_spec.slurm_spec.login_node_pool_id: The field is required.
        ");
    }

    #[test]
    fn dangling_references_and_bad_counts_are_reported() {
        let mut cluster = valid_cluster();
        cluster["nodePools"][1]["id"] = json!("login");
        cluster["nodePools"][0]["scalingSpec"]["minNodeCount"] = json!(3);
        cluster["nodePools"][1]["scalingSpec"]["maxNodeCount"] = json!(-1);
        cluster["orchestratorSpec"]["slurmSpec"]["defaultPartitionId"] = json!("gpu");
        insta::assert_snapshot!(problems_of(&cluster), @r"
        model_development_cluster.node_pools[0].scaling_spec.min_node_count: min_node_count (3) is greater than max_node_count (1).
        model_development_cluster.node_pools[1].id: The node pool id `login` is used by more than one node pool.
        model_development_cluster.node_pools[1].scaling_spec.max_node_count: The value must be a non-negative integer; got -1.
        model_development_cluster.orchestrator_spec.slurm_spec.partitions[0].node_pool_ids[0]: `cpu` does not name a node pool.
        model_development_cluster.orchestrator_spec.slurm_spec.default_partition_id: default_partition_id `gpu` does not name a partition.
        ");
    }

    #[test]
    fn bad_labels_are_reported() {
        let mut cluster = valid_cluster();
        cluster["labels"] = json!({"Team": "ml", "ok": "Bad Value", "n": 1});
        insta::assert_snapshot!(problems_of(&cluster), @r#"
        model_development_cluster.labels["Team"]: Label key `Team` must start with a lowercase letter and have at most 63 lowercase letters, digits, `_` or `-`.
        model_development_cluster.labels["ok"]: Label value `Bad Value` must have at most 64 lowercase letters, digits, `_` or `-`.
        model_development_cluster.labels["n"]: Label values must be strings.
        "#);
    }

    #[test]
    fn defaults_are_filled_and_int64_fields_become_strings() {
        let mut cluster = valid_cluster();
        let parent = Parent {
            project: "p".to_owned(),
            location: "us-central1".to_owned(),
        };
        complete_cluster(&mut cluster, Some(&parent), "42");
        assert_eq!(
            cluster["network"]["subnetwork"],
            "projects/p/regions/us-central1/subnetworks/default"
        );
        assert_eq!(
            cluster["runtimeSpec"]["serviceAccount"],
            "42-compute@developer.gserviceaccount.com"
        );
        assert_eq!(
            cluster["nodePools"][0]["bootDisk"],
            json!({"bootDiskType": "pd-ssd", "bootDiskSizeGb": "100"})
        );
        assert_eq!(
            cluster["nodePools"][1]["bootDisk"],
            json!({"bootDiskType": "pd-standard", "bootDiskSizeGb": "100"})
        );
        assert_eq!(cluster["nodePools"][0]["nodeImage"], DEFAULT_NODE_IMAGE);
        assert_eq!(
            cluster["nodePools"][0]["scalingSpec"],
            json!({"minNodeCount": "1", "maxNodeCount": "1"})
        );
        assert_eq!(
            cluster["nodePools"][1]["scalingSpec"],
            json!({"maxNodeCount": "4"})
        );
        assert_eq!(
            cluster["nodePools"][1]["machineSpec"]["acceleratorCount"],
            json!(2)
        );
    }

    #[test]
    fn values_set_by_the_client_are_kept() {
        let mut cluster = valid_cluster();
        cluster["network"]["subnetwork"] = json!("projects/p/regions/r/subnetworks/mine");
        cluster["runtimeSpec"] = json!({"serviceAccount": "sa@p.iam.gserviceaccount.com"});
        cluster["nodePools"][0]["nodeImage"] = json!("custom");
        complete_cluster(&mut cluster, None, "42");
        assert_eq!(
            cluster["network"]["subnetwork"],
            "projects/p/regions/r/subnetworks/mine"
        );
        assert_eq!(
            cluster["runtimeSpec"]["serviceAccount"],
            "sa@p.iam.gserviceaccount.com"
        );
        assert_eq!(cluster["nodePools"][0]["nodeImage"], "custom");
    }

    #[test]
    fn request_bodies_lose_output_only_fields_and_snake_case() {
        let body = json!({"name": "x", "cluster_status": {"state": "RUNNING"}, "display_name": "D", "futureField": 1});
        assert_eq!(
            cluster_from_request(&body).unwrap(),
            json!({"displayName": "D", "futureField": 1})
        );
        assert!(cluster_from_request(&json!([])).is_err());
    }

    #[test]
    fn parents_come_from_canonical_names_only() {
        let parent =
            Parent::of_cluster_name("projects/p/locations/r/modelDevelopmentClusters/c").unwrap();
        assert_eq!(
            parent.cluster_name("d"),
            "projects/p/locations/r/modelDevelopmentClusters/d"
        );
        assert!(Parent::of_cluster_name("c").is_none());
    }
}
