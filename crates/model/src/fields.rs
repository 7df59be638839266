//! The field table: one row per field path of the resource, saying whether the field is
//! output-only, which allowed update-mask path can change it (none = immutable, so a change
//! forces replacement) and what a change does to a running cluster.
//!
//! The planner derives masks and impacts from it, the configuration language derives its
//! attribute names and enum checks from it, the emulator's tests check their mask logic against
//! it, and `docs/fields.md` is rendered from it (a test keeps the file in step).
//!
//! Paths are the API's snake_case names joined by `.`; `[]` marks the elements of a repeated
//! message (`node_pools[].zone`).

use std::fmt;
use std::str::FromStr;

/// An update-mask path the service is known to accept, each with the public source that
/// vouches for it (`docs/fields.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum UpdateMaskPath {
    /// `display_name`
    DisplayName,
    /// `labels`
    Labels,
    /// `node_pools`
    NodePools,
    /// `orchestrator_spec.slurm_spec.partitions`
    Partitions,
    /// `orchestrator_spec.slurm_spec.login_node_pool_id`
    LoginNodePoolId,
    /// `orchestrator_spec.slurm_spec.prolog_bash_scripts`
    PrologBashScripts,
    /// `orchestrator_spec.slurm_spec.epilog_bash_scripts`
    EpilogBashScripts,
    /// `orchestrator_spec.slurm_spec.default_partition_id`
    DefaultPartitionId,
    /// `orchestrator_spec.slurm_spec.config`
    SlurmConfig,
    /// `orchestrator_spec.slurm_spec.node_sets`
    NodeSets,
    /// `orchestrator_spec.slurm_spec.accounting`
    Accounting,
    /// `orchestrator_spec.slurm_spec.scheduling`
    Scheduling,
    /// `lustre_export_config`
    LustreExportConfig,
}

/// Who vouches for an update-mask path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskSource {
    /// The product page *Manage cluster* (update) lists it.
    ManageClusterPage,
    /// The *Create cluster* page says the field "can be changed on a running cluster", and the
    /// Terraform provider sends the path.
    CreateClusterPage,
    /// Only the public Terraform provider's update mask sends it: the service may still refuse
    /// it (`INVALID_ARGUMENT` naming the path), which changes nothing.
    TerraformProvider,
}

impl MaskSource {
    /// The source as written in `docs/fields.md`.
    pub const fn describe(self) -> &'static str {
        match self {
            Self::ManageClusterPage => "*Manage cluster* page",
            Self::CreateClusterPage => "*Create cluster* page (\"Slurm configuration maps\")",
            Self::TerraformProvider => "Terraform provider's update mask only",
        }
    }
}

impl UpdateMaskPath {
    /// Every accepted path, in the order masks list them.
    pub const ALL: [Self; 13] = [
        Self::DisplayName,
        Self::Labels,
        Self::NodePools,
        Self::Partitions,
        Self::LoginNodePoolId,
        Self::PrologBashScripts,
        Self::EpilogBashScripts,
        Self::DefaultPartitionId,
        Self::SlurmConfig,
        Self::NodeSets,
        Self::Accounting,
        Self::Scheduling,
        Self::LustreExportConfig,
    ];

    /// The path as written in `updateMask`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::DisplayName => "display_name",
            Self::Labels => "labels",
            Self::NodePools => "node_pools",
            Self::Partitions => "orchestrator_spec.slurm_spec.partitions",
            Self::LoginNodePoolId => "orchestrator_spec.slurm_spec.login_node_pool_id",
            Self::PrologBashScripts => "orchestrator_spec.slurm_spec.prolog_bash_scripts",
            Self::EpilogBashScripts => "orchestrator_spec.slurm_spec.epilog_bash_scripts",
            Self::DefaultPartitionId => "orchestrator_spec.slurm_spec.default_partition_id",
            Self::SlurmConfig => "orchestrator_spec.slurm_spec.config",
            Self::NodeSets => "orchestrator_spec.slurm_spec.node_sets",
            Self::Accounting => "orchestrator_spec.slurm_spec.accounting",
            Self::Scheduling => "orchestrator_spec.slurm_spec.scheduling",
            Self::LustreExportConfig => "lustre_export_config",
        }
    }

    /// The public source that vouches for the path.
    pub const fn source(self) -> MaskSource {
        match self {
            Self::Labels
            | Self::NodePools
            | Self::Partitions
            | Self::LoginNodePoolId
            | Self::PrologBashScripts
            | Self::EpilogBashScripts => MaskSource::ManageClusterPage,
            Self::SlurmConfig | Self::NodeSets => MaskSource::CreateClusterPage,
            Self::DisplayName
            | Self::DefaultPartitionId
            | Self::Accounting
            | Self::Scheduling
            | Self::LustreExportConfig => MaskSource::TerraformProvider,
        }
    }
}

impl fmt::Display for UpdateMaskPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A path that is not one of the accepted update-mask paths.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not an allowed update-mask path")]
pub struct NotAllowedMaskPath(pub String);

impl FromStr for UpdateMaskPath {
    type Err = NotAllowedMaskPath;

    fn from_str(path: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str() == path)
            .ok_or_else(|| NotAllowedMaskPath(path.to_owned()))
    }
}

impl serde::Serialize for UpdateMaskPath {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for UpdateMaskPath {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let path = String::deserialize(deserializer)?;
        path.parse().map_err(serde::de::Error::custom)
    }
}

/// Whether and how a field can change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldAccess {
    /// Set by the service; never compared, never sent.
    OutputOnly,
    /// Set at creation; a change forces replacement of the cluster.
    Immutable,
    /// Changed in place through this mask path.
    Mutable(UpdateMaskPath),
}

/// What a change of a field does to a running cluster.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum ImpactClass {
    /// Takes effect at once (labels).
    Immediate,
    /// Reaches Slurm within the 15-second sync (partitions, login pool, scripts).
    SlurmSync,
    /// Adds or removes nodes of the pool (scaling).
    ResizesPool,
    /// The service recreates the pool's nodes (storage, startup script, disk, zone, image, IPs).
    RecreatesNodes,
    /// The pool is created.
    AddsPool,
    /// The pool and its nodes are deleted.
    DeletesPool,
    /// The whole cluster is deleted and created again.
    ReplacesCluster,
}

impl ImpactClass {
    /// A short phrase for plans; `pool` names the node pool where the impact concerns one.
    pub fn describe(self, pool: Option<&str>) -> String {
        let pool = pool.unwrap_or("?");
        match self {
            Self::Immediate => "immediate".to_owned(),
            Self::SlurmSync => "slurm sync ≤ 15 s".to_owned(),
            Self::ResizesPool => format!("resizes pool {pool}"),
            Self::RecreatesNodes => format!("recreates nodes of pool {pool}"),
            Self::AddsPool => format!("adds pool {pool}"),
            Self::DeletesPool => format!("deletes pool {pool}"),
            Self::ReplacesCluster => "replaces cluster".to_owned(),
        }
    }

    /// The stable identifier used in JSON plans.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Immediate => "immediate",
            Self::SlurmSync => "slurm_sync",
            Self::ResizesPool => "resizes_pool",
            Self::RecreatesNodes => "recreates_nodes",
            Self::AddsPool => "adds_pool",
            Self::DeletesPool => "deletes_pool",
            Self::ReplacesCluster => "replaces_cluster",
        }
    }
}

/// The value type of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A string.
    String,
    /// An integer (read from a number or a decimal string).
    Integer,
    /// A boolean.
    Bool,
    /// One of a fixed set of strings.
    Enum(&'static [&'static str]),
    /// A protobuf duration such as `"604800s"`.
    Duration,
    /// An RFC 3339 timestamp.
    Timestamp,
    /// An ordered list of strings.
    StringList,
    /// A list of enum values.
    EnumList(&'static [&'static str]),
    /// A string-to-string map.
    StringMap,
    /// A Slurm configuration map: `slurm.conf` parameter names, compared without case and
    /// underscores (`DefMemPerCPU` = `def_mem_per_cpu`), to values as `slurm.conf` text.
    SlurmConfig,
    /// A nested message.
    Message,
    /// A repeated message matched by the named key field.
    KeyedList(&'static str),
    /// Opaque JSON.
    Json,
}

impl FieldKind {
    /// A short name for documentation.
    pub fn describe(self) -> String {
        match self {
            Self::String => "string".to_owned(),
            Self::Integer => "integer".to_owned(),
            Self::Bool => "bool".to_owned(),
            Self::Enum(values) => format!("enum: {}", values.join(", ")),
            Self::Duration => "duration".to_owned(),
            Self::Timestamp => "timestamp".to_owned(),
            Self::StringList => "list(string)".to_owned(),
            Self::EnumList(values) => format!("list(enum: {})", values.join(", ")),
            Self::StringMap => "map(string)".to_owned(),
            Self::SlurmConfig => "map(slurm.conf parameter → string)".to_owned(),
            Self::Message => "block".to_owned(),
            Self::KeyedList(key) => format!("labelled blocks, keyed by `{key}`"),
            Self::Json => "json".to_owned(),
        }
    }
}

/// One row of the field table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldSpec {
    /// snake_case path, `[]` marking list elements.
    pub path: &'static str,
    /// The value type.
    pub kind: FieldKind,
    /// Output-only, immutable, or mutable through a mask path.
    pub access: FieldAccess,
    /// What a change does; `None` for output-only fields.
    pub impact: Option<ImpactClass>,
    /// The impact is our inference: the product documentation does not state it (it states
    /// only that storage sources and startup scripts recreate nodes).
    pub impact_inferred: bool,
    /// Whether a create request must set it (when its parent is set).
    pub required: bool,
    /// One line for the reference documentation.
    pub description: &'static str,
    /// The last segment of `path`, cut once when the table is built: decoding and planning ask
    /// every field's name for every cluster.
    name: &'static str,
}

impl FieldSpec {
    /// The path in the API's lowerCamelCase JSON spelling.
    fn json_path(&self) -> String {
        camel_case(self.path)
    }

    /// The last segment of the path: the HCL attribute or block name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The path of the enclosing message, `None` at the top level.
    pub fn parent(&self) -> Option<&'static str> {
        self.path.rsplit_once('.').map(|(parent, _)| parent)
    }
}

/// Converts a snake_case path to lowerCamelCase segment by segment.
pub fn camel_case(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut upper = false;
    for c in path.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// A `slurm.conf` parameter name as the service compares it: "without matching case and
/// ignoring underscores" (*Create cluster*, "Slurm configuration maps").
pub fn slurm_parameter_key(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Provisioning models of a node pool.
pub const PROVISIONING_MODELS: &[&str] = &crate::ProvisioningModel::NAMES;
/// Reservation affinity types.
pub const RESERVATION_AFFINITY_TYPES: &[&str] =
    &["NO_RESERVATION", "ANY_RESERVATION", "SPECIFIC_RESERVATION"];
/// Boot disk types.
pub const BOOT_DISK_TYPES: &[&str] = &["pd-ssd", "pd-standard", "hyperdisk-balanced"];
/// Confidential instance types.
pub const CONFIDENTIAL_INSTANCE_TYPES: &[&str] = &["SEV", "SEV_SNP", "TDX"];
/// Update modes of a PATCH.
pub const UPDATE_MODES: &[&str] = &["UPDATE_MODE_UNSPECIFIED", "USER_ONLY", "USER_AND_SERVICE"];
/// Days of the week for Lustre export.
pub const DAYS_OF_WEEK: &[&str] = &[
    "MONDAY",
    "TUESDAY",
    "WEDNESDAY",
    "THURSDAY",
    "FRIDAY",
    "SATURDAY",
    "SUNDAY",
];

use FieldAccess::{Immutable, Mutable, OutputOnly};
use ImpactClass::{Immediate, RecreatesNodes, ReplacesCluster, ResizesPool, SlurmSync};
use UpdateMaskPath as M;

const fn field(
    path: &'static str,
    kind: FieldKind,
    access: FieldAccess,
    required: bool,
    description: &'static str,
) -> FieldSpec {
    let impact = match access {
        OutputOnly => None,
        Immutable => Some(ReplacesCluster),
        Mutable(_) => Some(Immediate),
    };
    FieldSpec {
        path,
        kind,
        access,
        impact,
        impact_inferred: false,
        required,
        description,
        name: last_segment(path),
    }
}

/// The last segment of a field path, without a list's `[]`: `node_pools[].zone` → `zone`.
const fn last_segment(path: &'static str) -> &'static str {
    let bytes = path.as_bytes();
    let mut start = bytes.len();
    while start > 0 && bytes[start - 1] != b'.' {
        start -= 1;
    }
    let mut end = bytes.len();
    if end >= start + 2 && bytes[end - 2] == b'[' && bytes[end - 1] == b']' {
        end -= 2;
    }
    let (_, tail) = bytes.split_at(start);
    let (name, _) = tail.split_at(end - start);
    match std::str::from_utf8(name) {
        Ok(name) => name,
        Err(_) => panic!("a field path is ASCII"),
    }
}

const fn with_impact(spec: FieldSpec, impact: ImpactClass) -> FieldSpec {
    FieldSpec {
        impact: Some(impact),
        ..spec
    }
}

/// A pool field whose impact the documentation does not state.
const fn inferred(spec: FieldSpec) -> FieldSpec {
    FieldSpec {
        impact_inferred: true,
        ..spec
    }
}

const fn output(path: &'static str, kind: FieldKind, description: &'static str) -> FieldSpec {
    field(path, kind, OutputOnly, false, description)
}

const fn fixed(path: &'static str, kind: FieldKind, description: &'static str) -> FieldSpec {
    field(path, kind, Immutable, false, description)
}

const fn fixed_required(
    path: &'static str,
    kind: FieldKind,
    description: &'static str,
) -> FieldSpec {
    field(path, kind, Immutable, true, description)
}

const fn pool(
    path: &'static str,
    kind: FieldKind,
    impact: ImpactClass,
    d: &'static str,
) -> FieldSpec {
    with_impact(field(path, kind, Mutable(M::NodePools), false, d), impact)
}

const fn slurm(path: &'static str, kind: FieldKind, mask: M, d: &'static str) -> FieldSpec {
    with_impact(field(path, kind, Mutable(mask), false, d), SlurmSync)
}

/// A field of the Lustre export schedule: it changes when exports run, not the nodes.
const fn export(path: &'static str, kind: FieldKind, required: bool, d: &'static str) -> FieldSpec {
    inferred(field(
        path,
        kind,
        Mutable(M::LustreExportConfig),
        required,
        d,
    ))
}

use FieldKind as K;

/// Every field of the resource.
#[rustfmt::skip]
pub const FIELDS: &[FieldSpec] = &[
    output("name", K::String, "`projects/{P}/locations/{R}/modelDevelopmentClusters/{ID}`"),
    field("display_name", K::String, Mutable(M::DisplayName), false, "Human-readable name, up to 128 characters"),
    field("labels", K::StringMap, Mutable(M::Labels), false, "User labels; clusterform adds `clusterform-stack`"),
    fixed_required("network", K::Message, "The VPC of the cluster"),
    fixed_required("network.network", K::String, "`projects/{P}/global/networks/{N}`"),
    fixed("network.subnetwork", K::String, "`projects/{P}/regions/{R}/subnetworks/{S}`; defaulted by the service"),
    field("node_pools", K::KeyedList("id"), Mutable(M::NodePools), true, "Node pools, matched by id; replaced whole on update"),
    fixed_required("node_pools[].id", K::String, "Unique id of the pool (the block label)"),
    fixed_required("node_pools[].machine_spec", K::Message, "Machine type and accelerators"),
    fixed_required("node_pools[].machine_spec.machine_type", K::String, "e.g. `n2-standard-8`, `a4-highgpu-8g`"),
    fixed("node_pools[].machine_spec.accelerator_type", K::String, "e.g. `NVIDIA_H100_MEGA_80GB`, `NVIDIA_B200`"),
    fixed("node_pools[].machine_spec.accelerator_count", K::Integer, "Accelerators per node"),
    fixed("node_pools[].machine_spec.reservation_affinity", K::Message, "Which reservation the nodes consume"),
    fixed("node_pools[].machine_spec.reservation_affinity.reservation_affinity_type", K::Enum(RESERVATION_AFFINITY_TYPES), "Kind of affinity"),
    fixed("node_pools[].machine_spec.reservation_affinity.key", K::String, "e.g. `compute.googleapis.com/reservation-name`"),
    fixed("node_pools[].machine_spec.reservation_affinity.values", K::StringList, "Reservation names"),
    pool("node_pools[].scaling_spec", K::Message, ResizesPool, "Node counts"),
    pool("node_pools[].scaling_spec.min_node_count", K::Integer, ResizesPool, "At least 0; always sent"),
    pool("node_pools[].scaling_spec.max_node_count", K::Integer, ResizesPool, "At least `min_node_count`; always sent"),
    inferred(pool("node_pools[].zone", K::String, RecreatesNodes, "A zone of the cluster's region")),
    inferred(pool("node_pools[].enable_public_ips", K::Bool, RecreatesNodes, "Give the nodes external addresses")),
    inferred(pool("node_pools[].boot_disk", K::Message, RecreatesNodes, "Boot disk; defaulted by the service")),
    inferred(pool("node_pools[].boot_disk.boot_disk_type", K::Enum(BOOT_DISK_TYPES), RecreatesNodes, "Default `pd-ssd`")),
    inferred(pool("node_pools[].boot_disk.boot_disk_size_gb", K::Integer, RecreatesNodes, "Default 100")),
    fixed("node_pools[].provisioning_model", K::Enum(PROVISIONING_MODELS), "How the nodes are obtained"),
    inferred(pool("node_pools[].flex_start_max_duration", K::Duration, Immediate, "Only with `FLEX_START`; applies to nodes obtained afterwards")),
    pool("node_pools[].filestores", K::StringList, RecreatesNodes, "Filestore instances mounted on the nodes"),
    pool("node_pools[].lustres", K::StringList, RecreatesNodes, "Lustre instances mounted on the nodes"),
    pool("node_pools[].startup_script", K::String, RecreatesNodes, "Runs when a node boots"),
    inferred(pool("node_pools[].node_image", K::String, RecreatesNodes, "Node image; defaulted by the service")),
    inferred(pool("node_pools[].labels", K::StringMap, Immediate, "Labels of the pool's VMs")),
    fixed("node_pools[].confidential_instance_config", K::Message, "Confidential computing"),
    fixed("node_pools[].confidential_instance_config.confidential_instance_type", K::Enum(CONFIDENTIAL_INSTANCE_TYPES), "Confidential technology"),
    fixed_required("orchestrator_spec", K::Message, "The orchestrator"),
    fixed_required("orchestrator_spec.slurm_spec", K::Message, "Slurm settings"),
    fixed_required("orchestrator_spec.slurm_spec.home_directory_storage", K::String, "`projects/{P}/locations/{ZONE}/instances/{NAME}` (Filestore or Lustre)"),
    with_impact(field("orchestrator_spec.slurm_spec.login_node_pool_id", K::String, Mutable(M::LoginNodePoolId), true, "The pool of the login nodes"), SlurmSync),
    slurm("orchestrator_spec.slurm_spec.partitions", K::KeyedList("id"), M::Partitions, "Ordered; without `default_partition_id` the first is the default"),
    slurm("orchestrator_spec.slurm_spec.partitions[].id", K::String, M::Partitions, "Partition name (the block label)"),
    slurm("orchestrator_spec.slurm_spec.partitions[].node_pool_ids", K::StringList, M::Partitions, "Pools whose nodes form the partition"),
    slurm("orchestrator_spec.slurm_spec.partitions[].config", K::SlurmConfig, M::Partitions, "Partition settings"),
    slurm("orchestrator_spec.slurm_spec.prolog_bash_scripts", K::StringList, M::PrologBashScripts, "Run before every job on each node"),
    slurm("orchestrator_spec.slurm_spec.epilog_bash_scripts", K::StringList, M::EpilogBashScripts, "Run after every job on each node"),
    slurm("orchestrator_spec.slurm_spec.default_partition_id", K::String, M::DefaultPartitionId, "The partition jobs use without `--partition`; set to the partition that is already the default, it changes nothing"),
    slurm("orchestrator_spec.slurm_spec.config", K::SlurmConfig, M::SlurmConfig, "slurm.conf `Key=Value` settings; keys without case and underscores, values as strings"),
    slurm("orchestrator_spec.slurm_spec.node_sets", K::KeyedList("node_pool_id"), M::NodeSets, "Per-pool settings on the `NodeName=` line; at most one per compute pool"),
    slurm("orchestrator_spec.slurm_spec.node_sets[].node_pool_id", K::String, M::NodeSets, "The pool (the block label)"),
    slurm("orchestrator_spec.slurm_spec.node_sets[].config", K::SlurmConfig, M::NodeSets, "Node set settings"),
    slurm("orchestrator_spec.slurm_spec.accounting", K::Message, M::Accounting, "Accounting settings; superseded by `config`, not together with it"),
    slurm("orchestrator_spec.slurm_spec.accounting.accounting_storage_enforce", K::String, M::Accounting, "`AccountingStorageEnforce`, e.g. `limits,qos`"),
    slurm("orchestrator_spec.slurm_spec.scheduling", K::Message, M::Scheduling, "Priority and preemption settings; superseded by `config`, not together with it"),
    slurm("orchestrator_spec.slurm_spec.scheduling.priority_type", K::String, M::Scheduling, "`PriorityType`, e.g. `priority/multifactor`"),
    slurm("orchestrator_spec.slurm_spec.scheduling.priority_weight_age", K::Integer, M::Scheduling, "`PriorityWeightAge`"),
    slurm("orchestrator_spec.slurm_spec.scheduling.priority_weight_assoc", K::Integer, M::Scheduling, "`PriorityWeightAssoc`"),
    slurm("orchestrator_spec.slurm_spec.scheduling.priority_weight_fairshare", K::Integer, M::Scheduling, "`PriorityWeightFairshare`"),
    slurm("orchestrator_spec.slurm_spec.scheduling.priority_weight_job_size", K::Integer, M::Scheduling, "`PriorityWeightJobSize`"),
    slurm("orchestrator_spec.slurm_spec.scheduling.priority_weight_partition", K::Integer, M::Scheduling, "`PriorityWeightPartition`"),
    slurm("orchestrator_spec.slurm_spec.scheduling.priority_weight_qos", K::Integer, M::Scheduling, "`PriorityWeightQOS`"),
    slurm("orchestrator_spec.slurm_spec.scheduling.priority_weight_tres", K::String, M::Scheduling, "`PriorityWeightTRES`, e.g. `cpu=100,mem=150`"),
    slurm("orchestrator_spec.slurm_spec.scheduling.preempt_type", K::String, M::Scheduling, "`PreemptType`, e.g. `preempt/qos`"),
    slurm("orchestrator_spec.slurm_spec.scheduling.preempt_mode", K::String, M::Scheduling, "`PreemptMode`, a comma list such as `SUSPEND,GANG`"),
    slurm("orchestrator_spec.slurm_spec.scheduling.preempt_exempt_time", K::String, M::Scheduling, "`PreemptExemptTime`, e.g. `00:00:00`"),
    fixed("runtime_spec", K::Message, "Runtime identity"),
    fixed("runtime_spec.service_account", K::String, "Service account of the nodes; defaulted by the service"),
    export("lustre_export_config", K::Message, false, "Scheduled export of Lustre data to Cloud Storage"),
    export("lustre_export_config.destination_bucket", K::String, true, "The bucket's name, without `gs://`"),
    export("lustre_export_config.days_of_week", K::EnumList(DAYS_OF_WEEK), false, "Days the export runs"),
    export("lustre_export_config.lustres", K::StringList, false, "Lustre instances to export"),
    export("lustre_export_config.start_time", K::Message, false, "Time of day the export starts"),
    export("lustre_export_config.start_time.hours", K::Integer, false, "0–23"),
    export("lustre_export_config.start_time.minutes", K::Integer, false, "0–59"),
    output("create_time", K::Timestamp, "When the cluster was created"),
    output("update_time", K::Timestamp, "When the cluster last changed"),
    output("start_time", K::Timestamp, "When the cluster first reached RUNNING"),
    output("cluster_status", K::Json, "State, detail, error and per-node status"),
    output("cluster_events", K::Json, "The last 100 events"),
    output("runtime", K::Json, "Training services and xmanager"),
];

/// The row for a path. Element selectors are accepted and ignored, so
/// `node_pools[cpu].zone` finds `node_pools[].zone`.
pub fn lookup(path: &str) -> Option<&'static FieldSpec> {
    let generic = generic_path(path);
    FIELDS.iter().find(|f| f.path == generic)
}

/// Replaces every `[selector]` in a path with `[]`.
fn generic_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut in_selector = false;
    for c in path.chars() {
        match c {
            '[' => {
                in_selector = true;
                out.push('[');
            }
            ']' => {
                in_selector = false;
                out.push(']');
            }
            _ if in_selector => {}
            _ => out.push(c),
        }
    }
    out
}

/// The direct children of a message path (`""` for the top level).
pub fn children(parent: &str) -> impl Iterator<Item = &'static FieldSpec> + '_ {
    FIELDS
        .iter()
        .filter(move |f| f.parent().unwrap_or("") == parent)
}

/// Why an immutable field replaces the cluster: no mask path of any public source reaches it
/// (the *Manage cluster* page, the *Create cluster* page, the Terraform provider's mask).
const IMMUTABLE_SOURCE: &str = "no public source lists a mask path for it";

/// The reference table of every field, as Markdown (the content of `docs/fields.md`).
pub fn render_markdown() -> String {
    let mut out = String::from(
        "# Fields of a Model Development Cluster\n\n\
         Generated from `crates/model/src/fields.rs` (`clusterform_model::fields::FIELDS`); \
         a test fails when this file and the table differ. Regenerate with \
         `CLUSTERFORM_BLESS=1 cargo test -p clusterform-model`.\n\n\
         \"Update mask\" is the `updateMask` path that changes the field in place (the \
         smallest path covering it); a field without one is immutable and a change to it \
         **replaces the cluster**. \"Source\" is the public source of that fact. A path only \
         the Terraform provider's update mask vouches for may still be refused by the service \
         (`INVALID_ARGUMENT` naming the path): nothing changes then, apply reports it for that \
         cluster, and `plan --replace ID` is the way to force the change.\n\n\
         An impact marked \"(inferred)\" is our reading, not the product documentation's: the \
         documentation says only that changes to storage sources (filestores, lustres, the home \
         directory) and startup scripts recreate nodes. Plans show the same mark.\n\n\
         | path | JSON | type | required | update mask | source | impact of a change | notes |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for f in FIELDS {
        let (access, source) = match f.access {
            OutputOnly => ("output only".to_owned(), "—"),
            Immutable => ("— (immutable)".to_owned(), IMMUTABLE_SOURCE),
            Mutable(mask) => (format!("`{mask}`"), mask.source().describe()),
        };
        let impact = f.impact.map_or_else(
            || "—".to_owned(),
            |i| {
                let inferred = if f.impact_inferred { " (inferred)" } else { "" };
                format!("{}{inferred}", i.describe(Some("X")))
            },
        );
        out.push_str(&format!(
            "| `{}` | `{}` | {} | {} | {} | {} | {} | {} |\n",
            f.path,
            f.json_path(),
            f.kind.describe(),
            if f.required { "yes" } else { "" },
            access,
            source,
            impact,
            f.description
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_unique_and_parents_exist() {
        for (i, f) in FIELDS.iter().enumerate() {
            assert!(
                FIELDS[..i].iter().all(|g| g.path != f.path),
                "duplicate {}",
                f.path
            );
            if let Some(parent) = f.parent() {
                let parent = parent.trim_end_matches("[]");
                assert!(
                    FIELDS.iter().any(|g| g.path == parent),
                    "{} has no parent row",
                    f.path
                );
            }
        }
    }

    #[test]
    fn every_mask_path_has_its_row() {
        for mask in UpdateMaskPath::ALL {
            let row = lookup(mask.as_str()).unwrap();
            assert_eq!(row.access, Mutable(mask));
            assert_eq!(mask.as_str().parse::<UpdateMaskPath>(), Ok(mask));
        }
        assert!("network".parse::<UpdateMaskPath>().is_err());
    }

    /// API.md's rule: a field reachable by any known mask path is updated in place; only the
    /// cluster's identity, network, home directory, service account and a pool's machine,
    /// provisioning model and confidential computing force a replacement.
    #[test]
    fn only_the_documented_fields_force_replacement() {
        let replacing: Vec<&str> = FIELDS
            .iter()
            .filter(|f| f.access == Immutable && !matches!(f.kind, FieldKind::Message))
            .map(|f| f.path)
            .collect();
        assert_eq!(
            replacing,
            [
                "network.network",
                "network.subnetwork",
                "node_pools[].id",
                "node_pools[].machine_spec.machine_type",
                "node_pools[].machine_spec.accelerator_type",
                "node_pools[].machine_spec.accelerator_count",
                "node_pools[].machine_spec.reservation_affinity.reservation_affinity_type",
                "node_pools[].machine_spec.reservation_affinity.key",
                "node_pools[].machine_spec.reservation_affinity.values",
                "node_pools[].provisioning_model",
                "node_pools[].confidential_instance_config.confidential_instance_type",
                "orchestrator_spec.slurm_spec.home_directory_storage",
                "runtime_spec.service_account",
            ]
        );
        for path in [
            "display_name",
            "lustre_export_config.destination_bucket",
            "orchestrator_spec.slurm_spec.default_partition_id",
            "orchestrator_spec.slurm_spec.config",
            "orchestrator_spec.slurm_spec.node_sets[].config",
            "orchestrator_spec.slurm_spec.scheduling.preempt_mode",
            "orchestrator_spec.slurm_spec.accounting.accounting_storage_enforce",
        ] {
            assert!(matches!(lookup(path).unwrap().access, Mutable(_)), "{path}");
        }
    }

    #[test]
    fn only_the_terraform_provider_vouches_for_five_paths() {
        let provider_only: Vec<&str> = UpdateMaskPath::ALL
            .into_iter()
            .filter(|m| m.source() == MaskSource::TerraformProvider)
            .map(UpdateMaskPath::as_str)
            .collect();
        assert_eq!(
            provider_only,
            [
                "display_name",
                "orchestrator_spec.slurm_spec.default_partition_id",
                "orchestrator_spec.slurm_spec.accounting",
                "orchestrator_spec.slurm_spec.scheduling",
                "lustre_export_config",
            ]
        );
    }

    #[test]
    fn children_of_a_mutable_list_share_its_mask() {
        for f in FIELDS {
            let Some(parent) = f.parent() else { continue };
            let parent = lookup(parent.trim_end_matches("[]")).unwrap();
            if let Mutable(mask) = parent.access
                && f.access != Immutable
            {
                assert_eq!(f.access, Mutable(mask), "{}", f.path);
            }
        }
    }

    #[test]
    fn slurm_parameters_are_one_key_whatever_their_spelling() {
        for spelling in [
            "DefMemPerCPU",
            "defmempercpu",
            "def_mem_per_cpu",
            "DEF_MEM_PER_CPU",
        ] {
            assert_eq!(slurm_parameter_key(spelling), "defmempercpu");
        }
        assert_ne!(slurm_parameter_key("DefMemPerNode"), "defmempercpu");
    }

    #[test]
    fn lookup_ignores_selectors() {
        let row = lookup("node_pools[cpu].scaling_spec.max_node_count").unwrap();
        assert_eq!(row.access, Mutable(UpdateMaskPath::NodePools));
        assert_eq!(row.impact, Some(ResizesPool));
        assert_eq!(lookup("network.network").unwrap().access, Immutable);
        assert!(lookup("node_pools[].nonsense").is_none());
    }

    #[test]
    fn json_paths_are_camel_case() {
        let row = lookup("orchestrator_spec.slurm_spec.login_node_pool_id").unwrap();
        assert_eq!(
            row.json_path(),
            "orchestratorSpec.slurmSpec.loginNodePoolId"
        );
        assert_eq!(row.name(), "login_node_pool_id");
    }

    #[test]
    fn a_name_is_the_last_segment_without_a_lists_brackets() {
        assert_eq!(lookup("node_pools").unwrap().name(), "node_pools");
        assert_eq!(lookup("node_pools[].zone").unwrap().name(), "zone");
        assert_eq!(last_segment("labels"), "labels");
        assert_eq!(last_segment("node_pools[]"), "node_pools");
        assert_eq!(last_segment("a.b[].c[]"), "c");
        assert_eq!(last_segment(""), "");
        for spec in FIELDS {
            let last = spec.path.rsplit('.').next().unwrap();
            assert_eq!(spec.name(), last.trim_end_matches("[]"), "{}", spec.path);
        }
    }

    #[test]
    fn impacts_the_documentation_does_not_state_are_marked_inferred() {
        for path in [
            "node_pools[].zone",
            "node_pools[].boot_disk.boot_disk_size_gb",
            "node_pools[].node_image",
            "node_pools[].enable_public_ips",
        ] {
            assert!(lookup(path).unwrap().impact_inferred, "{path}");
        }
        for path in [
            "node_pools[].startup_script",
            "node_pools[].filestores",
            "node_pools[].lustres",
            "labels",
            "node_pools[].scaling_spec.max_node_count",
        ] {
            assert!(!lookup(path).unwrap().impact_inferred, "{path}");
        }
    }

    #[test]
    fn impacts_follow_the_design() {
        let recreates = [
            "node_pools[].filestores",
            "node_pools[].lustres",
            "node_pools[].startup_script",
            "node_pools[].boot_disk.boot_disk_size_gb",
            "node_pools[].zone",
            "node_pools[].node_image",
            "node_pools[].enable_public_ips",
        ];
        for path in recreates {
            assert_eq!(lookup(path).unwrap().impact, Some(RecreatesNodes), "{path}");
        }
        assert_eq!(lookup("labels").unwrap().impact, Some(Immediate));
        assert_eq!(
            lookup("orchestrator_spec.slurm_spec.prolog_bash_scripts")
                .unwrap()
                .impact,
            Some(SlurmSync)
        );
        assert_eq!(
            lookup("network.network").unwrap().impact,
            Some(ReplacesCluster)
        );
    }
}
