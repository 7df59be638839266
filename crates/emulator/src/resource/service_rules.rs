//! What the service refuses synchronously, beyond required fields and
//! references (`docs/emulator.md`): the boot disk of the newest GPU machine
//! types, reservation affinities, the login pool's node counts, flex-start
//! durations, the Lustre export's bucket, the Slurm configuration maps and
//! node sets, and `config` beside the `scheduling`/`accounting` messages it
//! supersedes. These rules are written here from the API's documentation and
//! recorded answers, never taken from clusterform's own crates, so that the
//! client's copy of them is tested against an independent one.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Map, Value};

use super::{Problems, SLURM_SPEC_PATH, read_integer};

/// Machine types whose boot disk must be unset or `hyperdisk-balanced`, which
/// is also their default.
const HYPERDISK_ONLY: [&str; 3] = ["a4-highgpu-8g", "a4x-highgpu-4g", "a3-ultragpu-8g"];
const HYPERDISK: &str = "hyperdisk-balanced";
const SPECIFIC_RESERVATION: &str = "SPECIFIC_RESERVATION";
/// `flexStartMaxDuration` bounds in seconds: 30 s to 7 days.
const FLEX_START_SECONDS: std::ops::RangeInclusive<f64> = 30.0..=604_800.0;

/// Machine type families that come with GPUs (the Compute resources page): a pool of one is
/// a GPU pool whether or not it names its accelerators.
const GPU_FAMILIES: [&str; 5] = [
    "a4x-highgpu-",
    "a4-highgpu-",
    "a3-ultragpu-",
    "a3-megagpu-",
    "a3-highgpu-",
];

/// Refused in every Slurm configuration map: the service manages health
/// checks and requeueing, and runs its own prolog and epilog.
const SERVICE_MANAGED: [&str; 6] = [
    "HealthCheckProgram",
    "HealthCheckInterval",
    "HealthCheckNodeState",
    "RequeueExit",
    "Prolog",
    "Epilog",
];

/// slurmdbd.conf(5) parameters that slurm.conf(5) does not also have (Slurm
/// 24.11); the service refuses them in every map.
const SLURMDBD_ONLY: [&str; 39] = [
    "AllowNoDefAcct",
    "AllResourcesAbsolute",
    "ArchiveDir",
    "ArchiveEvents",
    "ArchiveJobs",
    "ArchiveResvs",
    "ArchiveScript",
    "ArchiveSteps",
    "ArchiveSuspend",
    "ArchiveTXN",
    "ArchiveUsage",
    "CommitDelay",
    "DbdAddr",
    "DbdBackupHost",
    "DbdHost",
    "DbdPort",
    "DebugLevel",
    "DebugLevelSyslog",
    "DefaultQOS",
    "DisableCoordDBD",
    "LogFile",
    "MaxQueryTimeRange",
    "PidFile",
    "PurgeEventAfter",
    "PurgeJobAfter",
    "PurgeResvAfter",
    "PurgeStepAfter",
    "PurgeSuspendAfter",
    "PurgeTXNAfter",
    "PurgeUsageAfter",
    "StorageBackupHost",
    "StorageHost",
    "StorageLoc",
    "StorageParameters",
    "StoragePass",
    "StoragePort",
    "StorageType",
    "StorageUser",
    "TrackSlurmctldDown",
];

/// Runs every rule on a camelCase cluster.
pub(super) fn check(cluster: &Value, problems: &mut Problems) {
    let pools = cluster
        .get("nodePools")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (index, pool) in pools.iter().enumerate() {
        let path = format!("node_pools[{index}]");
        check_boot_disk(pool, &path, problems);
        check_reservation(pool, &path, problems);
        check_gpu_provisioning(pool, &path, problems);
        check_flex_start(pool, &path, problems);
    }
    check_destination_bucket(cluster, problems);
    if let Some(spec) = cluster
        .pointer("/orchestratorSpec/slurmSpec")
        .filter(|spec| spec.is_object())
    {
        let login = spec.get("loginNodePoolId").and_then(Value::as_str);
        check_login_pool(pools, login, problems);
        check_slurm_maps(spec, problems);
        check_node_sets(spec, pools, login, problems);
        check_superseded(spec, problems);
    }
}

/// The boot disk type the service gives a pool of this machine spec, when it
/// is not the general default.
pub(super) fn default_boot_disk_type(machine_spec: Option<&Value>) -> Option<&'static str> {
    let machine_type = machine_spec?.get("machineType")?.as_str()?;
    HYPERDISK_ONLY.contains(&machine_type).then_some(HYPERDISK)
}

fn check_boot_disk(pool: &Value, path: &str, problems: &mut Problems) {
    let Some(machine_type) = pool
        .pointer("/machineSpec/machineType")
        .and_then(Value::as_str)
        .filter(|machine_type| HYPERDISK_ONLY.contains(machine_type))
    else {
        return;
    };
    let Some(disk_type) = pool
        .pointer("/bootDisk/bootDiskType")
        .and_then(Value::as_str)
        .filter(|disk_type| !disk_type.is_empty() && *disk_type != HYPERDISK)
    else {
        return;
    };
    problems.add(
        &format!("{path}.boot_disk.boot_disk_type"),
        format!(
            "Machine type {machine_type} requires boot_disk_type to be unset (the default) or \"{HYPERDISK}\"; got \"{disk_type}\""
        ),
    );
}

/// A GPU pool (accelerators named, or a GPU machine type) sets its provisioning model unless
/// it consumes a reservation: the API reference says it "must be set for GPU node pools".
fn check_gpu_provisioning(pool: &Value, path: &str, problems: &mut Problems) {
    let spec = pool.get("machineSpec");
    let named = spec
        .and_then(|spec| spec.get("acceleratorType"))
        .and_then(Value::as_str)
        .is_some_and(|kind| !kind.is_empty() && kind != "ACCELERATOR_TYPE_UNSPECIFIED");
    let gpu_machine = spec
        .and_then(|spec| spec.get("machineType"))
        .and_then(Value::as_str)
        .is_some_and(|machine| {
            GPU_FAMILIES
                .iter()
                .any(|family| machine.starts_with(family))
        });
    let set = |field: &str| pool.get(field).is_some_and(|value| !value.is_null());
    let reserved = spec.is_some_and(|spec| spec.get("reservationAffinity").is_some());
    if (named || gpu_machine) && !set("provisioningModel") && !reserved {
        problems.add(
            &format!("{path}.provisioning_model"),
            "provisioning_model must be set for GPU node pools".to_owned(),
        );
    }
}

fn check_reservation(pool: &Value, path: &str, problems: &mut Problems) {
    let Some(affinity) = pool
        .pointer("/machineSpec/reservationAffinity")
        .filter(|affinity| affinity.is_object())
    else {
        return;
    };
    let path = format!("{path}.machine_spec.reservation_affinity");
    let kind = affinity
        .get("reservationAffinityType")
        .and_then(Value::as_str)
        .unwrap_or("TYPE_UNSPECIFIED");
    if kind != SPECIFIC_RESERVATION {
        problems.add(
            &format!("{path}.reservation_affinity_type"),
            format!(
                "reservation_affinity_type must be {SPECIFIC_RESERVATION}, which is the only supported value; got {kind}"
            ),
        );
    }
    let values = affinity
        .get("values")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (index, value) in values.iter().enumerate() {
        let value = value.as_str().unwrap_or_default();
        if !is_reservation_name(value) {
            problems.add(
                &format!("{path}.values[{index}]"),
                format!(
                    "\"{value}\" is not a reservation name: expected projects/{{project}}/zones/{{zone}}/reservations/{{reservation}}, optionally followed by /reservationBlocks/{{block}} and /reservationSubBlocks/{{sub_block}}"
                ),
            );
        }
    }
}

/// `projects/P/zones/Z/reservations/R`, optionally with `/reservationBlocks/B`
/// and then `/reservationSubBlocks/S`.
fn is_reservation_name(name: &str) -> bool {
    let parts: Vec<&str> = name.split('/').collect();
    let literals = [
        "projects",
        "zones",
        "reservations",
        "reservationBlocks",
        "reservationSubBlocks",
    ];
    matches!(parts.len(), 6 | 8 | 10)
        && parts.chunks(2).zip(literals).all(|(pair, literal)| {
            pair[0] == literal && !pair[1].is_empty() && !pair[1].contains([' ', '?', '#'])
        })
}

fn check_flex_start(pool: &Value, path: &str, problems: &mut Problems) {
    let Some(text) = pool.get("flexStartMaxDuration").and_then(Value::as_str) else {
        return;
    };
    // The schema has checked the proto3 form (`"3600s"`, `"0.5s"`).
    let Some(seconds) = text
        .strip_suffix('s')
        .and_then(|number| number.parse::<f64>().ok())
    else {
        return;
    };
    if !FLEX_START_SECONDS.contains(&seconds) {
        problems.add(
            &format!("{path}.flex_start_max_duration"),
            format!("flex_start_max_duration must be between 30s and 604800s (7 days); got {text}"),
        );
    }
}

fn check_destination_bucket(cluster: &Value, problems: &mut Problems) {
    if let Some(bucket) = cluster
        .pointer("/lustreExportConfig/destinationBucket")
        .and_then(Value::as_str)
        .filter(|bucket| bucket.starts_with("gs://"))
    {
        problems.add(
            "lustre_export_config.destination_bucket",
            format!(
                "destination_bucket must be a Cloud Storage bucket name without the gs:// prefix; got \"{bucket}\""
            ),
        );
    }
}

/// "For the login node pool, the MAX_NODE_COUNT must be the same as the
/// MIN_NODE_COUNT"; a max below the min is reported already.
fn check_login_pool(pools: &[Value], login: Option<&str>, problems: &mut Problems) {
    let Some((index, pool)) = pools
        .iter()
        .enumerate()
        .find(|(_, pool)| login.is_some() && pool.get("id").and_then(Value::as_str) == login)
    else {
        return;
    };
    let count = |field: &str| {
        pool.pointer(&format!("/scalingSpec/{field}"))
            .map_or(Some(0), read_integer)
    };
    if let (Some(min), Some(max)) = (count("minNodeCount"), count("maxNodeCount"))
        && min < max
    {
        problems.add(
            &format!("node_pools[{index}].scaling_spec.max_node_count"),
            format!(
                "For the login node pool, max_node_count must be the same as min_node_count; got {max} and {min}"
            ),
        );
    }
}

/// Where a configuration map is, for its rules and messages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum MapScope {
    Cluster,
    Partition,
    NodeSet,
}

fn check_slurm_maps(spec: &Value, problems: &mut Problems) {
    check_slurm_map(
        spec.get("config"),
        &format!("{SLURM_SPEC_PATH}.config"),
        MapScope::Cluster,
        problems,
    );
    for (list, field, scope) in [
        ("partitions", "partitions", MapScope::Partition),
        ("nodeSets", "node_sets", MapScope::NodeSet),
    ] {
        let entries = spec
            .get(list)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for (index, entry) in entries.iter().enumerate() {
            let path = format!("{SLURM_SPEC_PATH}.{field}[{index}].config");
            check_slurm_map(entry.get("config"), &path, scope, problems);
        }
    }
}

/// A Slurm parameter name as the service compares it: without case and
/// underscores.
fn parameter_key(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

fn check_slurm_map(map: Option<&Value>, path: &str, scope: MapScope, problems: &mut Problems) {
    let Some(map) = map.and_then(Value::as_object) else {
        return;
    };
    for key in map.keys() {
        if let Some(description) = refusal(key, scope) {
            problems.add(path, description);
        }
    }
    check_same_parameter(map, path, problems);
}

/// Why the service refuses the parameter `key` in a map of `scope`.
fn refusal(key: &str, scope: MapScope) -> Option<String> {
    let normal = parameter_key(key);
    let is = |names: &[&str]| names.iter().any(|name| parameter_key(name) == normal);
    if is(&SERVICE_MANAGED) {
        Some(format!(
            "The Slurm parameter {key} cannot be set: the service manages health checks, requeueing, prolog and epilog (use prolog_bash_scripts and epilog_bash_scripts)"
        ))
    } else if is(&SLURMDBD_ONLY) {
        Some(format!(
            "The Slurm parameter {key} is a slurmdbd.conf parameter and cannot be set in a slurm.conf map"
        ))
    } else if scope == MapScope::Partition && is(&["Default"]) {
        Some(format!(
            "The Slurm parameter {key} cannot be set on a partition: use default_partition_id"
        ))
    } else {
        None
    }
}

/// Two keys of one map that are the same parameter.
fn check_same_parameter(map: &Map<String, Value>, path: &str, problems: &mut Problems) {
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    for key in map.keys() {
        if let Some(first) = seen.insert(parameter_key(key), key) {
            problems.add(
                path,
                format!(
                    "{first} and {key} are the same Slurm parameter (keys are compared without case and underscores)"
                ),
            );
        }
    }
}

/// Each node set names a compute pool, at most once.
fn check_node_sets(spec: &Value, pools: &[Value], login: Option<&str>, problems: &mut Problems) {
    let pool_ids: HashSet<&str> = pools
        .iter()
        .filter_map(|pool| pool.get("id").and_then(Value::as_str))
        .collect();
    let node_sets = spec
        .get("nodeSets")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut described = HashSet::new();
    for (index, node_set) in node_sets.iter().enumerate() {
        let path = format!("{SLURM_SPEC_PATH}.node_sets[{index}].node_pool_id");
        let Some(pool) = problems.require_string(node_set, "/nodePoolId", &path) else {
            continue;
        };
        let problem = if !pool_ids.contains(pool) {
            format!("node_pool_id `{pool}` does not name a node pool.")
        } else if Some(pool) == login {
            format!("`{pool}` is the login node pool; a node set must describe a compute pool.")
        } else if !described.insert(pool) {
            format!("The node pool `{pool}` has more than one node set.")
        } else {
            continue;
        };
        problems.add(&path, problem);
    }
}

/// `scheduling` and `accounting` are superseded by `config` and cannot be set
/// together with it.
fn check_superseded(spec: &Value, problems: &mut Problems) {
    let config_set = spec
        .get("config")
        .and_then(Value::as_object)
        .is_some_and(|config| !config.is_empty());
    if !config_set {
        return;
    }
    for field in ["scheduling", "accounting"] {
        if spec.get(field).is_some_and(|value| !value.is_null()) {
            problems.add(
                &format!("{SLURM_SPEC_PATH}.{field}"),
                format!("{field} cannot be set together with config, which supersedes it"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A login pool, an A4 pool on a reservation and a partition, all valid.
    fn cluster() -> Value {
        json!({
            "network": {"network": "projects/p/global/networks/default"},
            "nodePools": [
                {"id": "login", "machineSpec": {"machineType": "n2-standard-8"},
                 "scalingSpec": {"minNodeCount": "1", "maxNodeCount": 1}},
                {"id": "gpu", "machineSpec": {"machineType": "a4-highgpu-8g",
                    "reservationAffinity": {"reservationAffinityType": "SPECIFIC_RESERVATION",
                        "values": ["projects/p/zones/us-central1-b/reservations/r/reservationBlocks/b"]}},
                 "provisioningModel": "RESERVATION", "bootDisk": {"bootDiskType": "hyperdisk-balanced"}}
            ],
            "orchestratorSpec": {"slurmSpec": {
                "homeDirectoryStorage": "projects/p/locations/us-central1-a/instances/home",
                "loginNodePoolId": "login",
                "partitions": [{"id": "gpu", "nodePoolIds": ["gpu"], "config": {"MaxTime": "1:00:00"}}],
                "nodeSets": [{"nodePoolId": "gpu", "config": {"Weight": "1"}}],
                "config": {"DefMemPerCPU": "1024"}
            }},
            "lustreExportConfig": {"destinationBucket": "exports"}
        })
    }

    fn violations(cluster: &Value) -> String {
        let mut problems = Problems::default();
        check(cluster, &mut problems);
        problems
            .0
            .iter()
            .map(|v| format!("{}: {}\n", v.field, v.description))
            .collect()
    }

    #[test]
    fn a_cluster_within_the_rules_has_no_violation() {
        assert_eq!(violations(&cluster()), "");
        let mut flex = cluster();
        flex["nodePools"][1]["flexStartMaxDuration"] = json!("604800s");
        flex["nodePools"][1]
            .as_object_mut()
            .unwrap()
            .remove("bootDisk");
        assert_eq!(violations(&flex), "");
    }

    #[test]
    fn machines_reservations_counts_and_buckets() {
        let mut cluster = cluster();
        cluster["nodePools"][1]["bootDisk"]["bootDiskType"] = json!("pd-standard");
        cluster["nodePools"][1]["machineSpec"]["reservationAffinity"] =
            json!({"reservationAffinityType": "ANY_RESERVATION", "values": ["r1"]});
        cluster["nodePools"][1]["flexStartMaxDuration"] = json!("29.5s");
        cluster["nodePools"][0]["scalingSpec"]["maxNodeCount"] = json!("2");
        cluster["lustreExportConfig"]["destinationBucket"] = json!("gs://exports");
        insta::assert_snapshot!(violations(&cluster), @r#"
        model_development_cluster.node_pools[1].boot_disk.boot_disk_type: Machine type a4-highgpu-8g requires boot_disk_type to be unset (the default) or "hyperdisk-balanced"; got "pd-standard"
        model_development_cluster.node_pools[1].machine_spec.reservation_affinity.reservation_affinity_type: reservation_affinity_type must be SPECIFIC_RESERVATION, which is the only supported value; got ANY_RESERVATION
        model_development_cluster.node_pools[1].machine_spec.reservation_affinity.values[0]: "r1" is not a reservation name: expected projects/{project}/zones/{zone}/reservations/{reservation}, optionally followed by /reservationBlocks/{block} and /reservationSubBlocks/{sub_block}
        model_development_cluster.node_pools[1].flex_start_max_duration: flex_start_max_duration must be between 30s and 604800s (7 days); got 29.5s
        model_development_cluster.lustre_export_config.destination_bucket: destination_bucket must be a Cloud Storage bucket name without the gs:// prefix; got "gs://exports"
        model_development_cluster.node_pools[0].scaling_spec.max_node_count: For the login node pool, max_node_count must be the same as min_node_count; got 2 and 1
        "#);
    }

    #[test]
    fn slurm_maps_refuse_managed_and_slurmdbd_parameters_and_repeats() {
        let mut cluster = cluster();
        let spec = &mut cluster["orchestratorSpec"]["slurmSpec"];
        spec["config"] = json!({"health_check_program": "/bin/true", "PurgeJobAfter": "12month",
                                "DefMemPerCPU": "1", "def_mem_per_cpu": "2"});
        spec["partitions"][0]["config"] = json!({"Default": "YES"});
        spec["nodeSets"][0]["config"] = json!({"Epilog": "/e", "Default": "x"});
        insta::assert_snapshot!(violations(&cluster), @r"
        model_development_cluster.orchestrator_spec.slurm_spec.config: The Slurm parameter health_check_program cannot be set: the service manages health checks, requeueing, prolog and epilog (use prolog_bash_scripts and epilog_bash_scripts)
        model_development_cluster.orchestrator_spec.slurm_spec.config: The Slurm parameter PurgeJobAfter is a slurmdbd.conf parameter and cannot be set in a slurm.conf map
        model_development_cluster.orchestrator_spec.slurm_spec.config: DefMemPerCPU and def_mem_per_cpu are the same Slurm parameter (keys are compared without case and underscores)
        model_development_cluster.orchestrator_spec.slurm_spec.partitions[0].config: The Slurm parameter Default cannot be set on a partition: use default_partition_id
        model_development_cluster.orchestrator_spec.slurm_spec.node_sets[0].config: The Slurm parameter Epilog cannot be set: the service manages health checks, requeueing, prolog and epilog (use prolog_bash_scripts and epilog_bash_scripts)
        ");
    }

    #[test]
    fn node_sets_describe_each_compute_pool_at_most_once() {
        let mut cluster = cluster();
        cluster["orchestratorSpec"]["slurmSpec"]["nodeSets"] = json!([
            {"nodePoolId": "gpu"}, {"nodePoolId": "login"}, {"nodePoolId": "gpu"}, {"nodePoolId": "cpu"}, {}
        ]);
        insta::assert_snapshot!(violations(&cluster), @r"
        model_development_cluster.orchestrator_spec.slurm_spec.node_sets[1].node_pool_id: `login` is the login node pool; a node set must describe a compute pool.
        model_development_cluster.orchestrator_spec.slurm_spec.node_sets[2].node_pool_id: The node pool `gpu` has more than one node set.
        model_development_cluster.orchestrator_spec.slurm_spec.node_sets[3].node_pool_id: node_pool_id `cpu` does not name a node pool.
        model_development_cluster.orchestrator_spec.slurm_spec.node_sets[4].node_pool_id: The field is required.
        ");
    }

    #[test]
    fn config_cannot_sit_beside_the_messages_it_supersedes() {
        let mut cluster = cluster();
        let spec = &mut cluster["orchestratorSpec"]["slurmSpec"];
        spec["scheduling"] = json!({"priorityType": "priority/multifactor"});
        spec["accounting"] = json!({});
        insta::assert_snapshot!(violations(&cluster), @r"
        model_development_cluster.orchestrator_spec.slurm_spec.scheduling: scheduling cannot be set together with config, which supersedes it
        model_development_cluster.orchestrator_spec.slurm_spec.accounting: accounting cannot be set together with config, which supersedes it
        ");
        cluster["orchestratorSpec"]["slurmSpec"]["config"] = json!({});
        assert_eq!(violations(&cluster), "", "scheduling alone still works");
    }

    #[test]
    fn reservation_names_may_name_blocks_and_sub_blocks() {
        assert!(is_reservation_name("projects/p/zones/z/reservations/r"));
        assert!(is_reservation_name(
            "projects/p/zones/z/reservations/r/reservationBlocks/b/reservationSubBlocks/s"
        ));
        for bad in [
            "r",
            "projects/p/zones/z/reservations/",
            "projects/p/zones/z/reservations/r/reservationSubBlocks/s",
            "projects/p/regions/z/reservations/r",
        ] {
            assert!(!is_reservation_name(bad), "{bad}");
        }
    }

    #[test]
    fn hyperdisk_only_machines_default_to_hyperdisk() {
        let a4 = json!({"machineType": "a3-ultragpu-8g"});
        assert_eq!(default_boot_disk_type(Some(&a4)), Some(HYPERDISK));
        let n2 = json!({"machineType": "n2-standard-8"});
        assert_eq!(default_boot_disk_type(Some(&n2)), None);
    }
}
