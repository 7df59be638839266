//! The `ModelDevelopmentCluster` resource (v1beta1) and its messages.
//!
//! Every field is optional so that "not set" differs from a zero value: a desired cluster from
//! the configuration leaves unset what the user did not write, and the planner never compares
//! those. Each message keeps the fields it does not know in `extra`, written back verbatim.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Fields a message does not model, kept so they survive a read-modify-write.
pub type UnknownFields = BTreeMap<String, Value>;

/// A string-to-string map such as `labels` or a Slurm `config`.
pub type StringMap = BTreeMap<String, String>;

/// A Model Development Cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cluster {
    /// `projects/{P}/locations/{R}/modelDevelopmentClusters/{ID}`; output only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Up to 128 characters; immutable.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "display_name"
    )]
    pub display_name: Option<String>,
    /// User labels, including clusterform's `clusterform-stack`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<StringMap>,
    /// The VPC the cluster lives in; immutable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkSpec>,
    /// The node pools, matched by `id`; replaced whole on update.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "node_pools")]
    pub node_pools: Option<Vec<NodePool>>,
    /// The orchestrator (Slurm) settings.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "orchestrator_spec"
    )]
    pub orchestrator_spec: Option<OrchestratorSpec>,
    /// The runtime identity; immutable.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "runtime_spec"
    )]
    pub runtime_spec: Option<RuntimeSpec>,
    /// Scheduled export of Lustre data to Cloud Storage; immutable.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "lustre_export_config"
    )]
    pub lustre_export_config: Option<LustreExportConfig>,
    /// Output only.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "create_time"
    )]
    pub create_time: Option<String>,
    /// Output only; the planner's freshness marker (there is no etag).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "update_time"
    )]
    pub update_time: Option<String>,
    /// Output only: the first time the cluster reached `RUNNING`.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "start_time")]
    pub start_time: Option<String>,
    /// Output only.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "cluster_status"
    )]
    pub cluster_status: Option<ClusterStatus>,
    /// Output only: the last 100 events.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "cluster_events"
    )]
    pub cluster_events: Option<Vec<ClusterEvent>>,
    /// Output only: training services and xmanager; kept as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<Value>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

/// A cluster without its output-only fields, borrowed: what the planner compares with,
/// serialised without copying the cluster first or encoding its status, events and times.
/// Its fields keep the cluster's order, but removing fields from a whole cluster's JSON
/// (`serde_json`'s `remove` moves the last field into the gap) may order them differently.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WritableCluster<'c> {
    #[serde(skip_serializing_if = "Option::is_none")]
    display_name: Option<&'c String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    labels: Option<&'c StringMap>,
    #[serde(skip_serializing_if = "Option::is_none")]
    network: Option<&'c NetworkSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    node_pools: Option<&'c Vec<NodePool>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    orchestrator_spec: Option<&'c OrchestratorSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    runtime_spec: Option<&'c RuntimeSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lustre_export_config: Option<&'c LustreExportConfig>,
    #[serde(flatten)]
    extra: &'c UnknownFields,
}

impl Cluster {
    /// The cluster without its output-only fields (`name`, the times, `clusterStatus`,
    /// `clusterEvents`, `runtime`); fields this version does not model are kept.
    pub fn writable(&self) -> WritableCluster<'_> {
        // Written out whole, so that a field added to `Cluster` does not compile until it is
        // sorted here as writable or output only.
        let Self {
            name: _,
            display_name,
            labels,
            network,
            node_pools,
            orchestrator_spec,
            runtime_spec,
            lustre_export_config,
            create_time: _,
            update_time: _,
            start_time: _,
            cluster_status: _,
            cluster_events: _,
            runtime: _,
            extra,
        } = self;
        WritableCluster {
            display_name: display_name.as_ref(),
            labels: labels.as_ref(),
            network: network.as_ref(),
            node_pools: node_pools.as_ref(),
            orchestrator_spec: orchestrator_spec.as_ref(),
            runtime_spec: runtime_spec.as_ref(),
            lustre_export_config: lustre_export_config.as_ref(),
            extra,
        }
    }

    /// The cluster's state as the service spells it, if it reported one.
    pub fn state(&self) -> Option<&str> {
        self.cluster_status.as_ref()?.state.as_deref()
    }

    /// The cluster's state, if the service reported one.
    pub fn cluster_state(&self) -> Option<crate::ClusterState> {
        self.state().map(crate::ClusterState::of)
    }

    /// The node pool with this id.
    pub fn node_pool(&self, id: &str) -> Option<&NodePool> {
        self.node_pools.as_deref()?.iter().find(|p| p.id == id)
    }

    /// The Slurm spec, if set.
    pub fn slurm_spec(&self) -> Option<&SlurmSpec> {
        self.orchestrator_spec.as_ref()?.slurm_spec.as_ref()
    }

    /// The value of a label.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels.as_ref()?.get(key).map(String::as_str)
    }

    /// The stack that owns it: the value of its [`STACK_LABEL`](crate::STACK_LABEL); `None`
    /// when no stack does.
    pub fn owner(&self) -> Option<&str> {
        self.label(crate::STACK_LABEL)
    }

    /// Whether the stack named `stack` owns it, the one test of "ours" every crate uses.
    pub fn is_owned_by(&self, stack: &str) -> bool {
        self.owner() == Some(stack)
    }

    /// How many nodes of the pool `pool` the service reports (`clusterStatus.nodesStatus`),
    /// if it reports nodes at all.
    pub fn nodes_reported(&self, pool: &str) -> Option<usize> {
        let nodes = self.cluster_status.as_ref()?.nodes_status.as_ref()?;
        Some(
            nodes
                .iter()
                .filter(|node| node.node_pool_id.as_deref() == Some(pool))
                .count(),
        )
    }

    /// The node pools of the Slurm partitions `partitions` names (one ID, or several joined
    /// by commas, as Slurm writes a pending job's candidates), in the spec's order, each once.
    pub fn pools_of_partitions(&self, partitions: &str) -> Vec<String> {
        let named: Vec<&str> = partitions.split(',').map(str::trim).collect();
        let mut pools: Vec<String> = Vec::new();
        let spec = self.slurm_spec().and_then(|spec| spec.partitions.as_ref());
        for partition in spec.into_iter().flatten() {
            if !named.contains(&partition.id.as_str()) {
                continue;
            }
            for pool in partition.node_pool_ids.iter().flatten() {
                if !pools.contains(pool) {
                    pools.push(pool.clone());
                }
            }
        }
        pools
    }

    /// The accelerators the cluster holds now: each pool's accelerators per node
    /// ([`MachineSpec::accelerators`], built-in ones included) times the nodes the service
    /// reports for it. `None` when a pool with accelerators has no
    /// reported nodes to count (the service reports none at all); 0 for a cluster without
    /// accelerators.
    pub fn gpus(&self) -> Option<u64> {
        Some(self.gpus_by_type()?.values().sum())
    }

    /// [`Cluster::gpus`] by accelerator type (a type with no node reported is left out).
    pub fn gpus_by_type(&self) -> Option<BTreeMap<String, u64>> {
        let mut by_type = BTreeMap::new();
        for pool in self.node_pools.iter().flatten() {
            let Some((kind, per_node)) = pool
                .machine_spec
                .as_ref()
                .and_then(MachineSpec::accelerators)
                .filter(|(_, per_node)| *per_node > 0)
            else {
                continue;
            };
            let nodes = u64::try_from(self.nodes_reported(&pool.id)?).ok()?;
            if nodes > 0 {
                *by_type.entry(kind.to_owned()).or_insert(0) += per_node * nodes;
            }
        }
        Some(by_type)
    }
}

/// `network`: where the cluster's VMs live.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkSpec {
    /// `projects/{P}/global/networks/{N}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    /// `projects/{P}/regions/{R}/subnetworks/{S}`; defaulted by the service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subnetwork: Option<String>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

/// One entry of `nodePools`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodePool {
    /// Unique within the cluster; the key pools are matched by.
    #[serde(default)]
    pub id: String,
    /// Machine type, accelerators, reservation; immutable.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "machine_spec"
    )]
    pub machine_spec: Option<MachineSpec>,
    /// Node counts.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "scaling_spec"
    )]
    pub scaling_spec: Option<ScalingSpec>,
    /// A zone of the cluster's region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// Whether the nodes get external addresses.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "enable_public_ips"
    )]
    pub enable_public_ips: Option<bool>,
    /// Boot disk type and size; defaulted by the service.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "boot_disk")]
    pub boot_disk: Option<BootDisk>,
    /// `ON_DEMAND`, `RESERVATION`, `SPOT` or `FLEX_START`; immutable.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "provisioning_model"
    )]
    pub provisioning_model: Option<crate::ProvisioningModel>,
    /// A protobuf duration; only with `FLEX_START`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "flex_start_max_duration"
    )]
    pub flex_start_max_duration: Option<String>,
    /// Filestore instances mounted on the nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filestores: Option<Vec<String>>,
    /// Lustre instances mounted on the nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lustres: Option<Vec<String>>,
    /// Runs when a node boots.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "startup_script"
    )]
    pub startup_script: Option<String>,
    /// The node image; defaulted by the service.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "node_image")]
    pub node_image: Option<String>,
    /// Labels applied to the pool's VMs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<StringMap>,
    /// Confidential computing; immutable.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "confidential_instance_config"
    )]
    pub confidential_instance_config: Option<ConfidentialInstanceConfig>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

impl NodePool {
    /// Whether a create asks for machines for it: its static nodes, `min_node_count` (unset is
    /// 0, as in proto3). The nodes above the minimum are dynamic, made when a job pends (the
    /// *Flex Start* and *Cluster resiliency* pages), so a pool that starts empty gets no
    /// machines at create and cannot fail it for capacity.
    pub fn has_static_nodes(&self) -> bool {
        self.scaling_spec
            .as_ref()
            .and_then(|scaling| scaling.min_node_count)
            .is_some_and(|min| min > 0)
    }
}

/// `machineSpec` of a node pool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineSpec {
    /// e.g. `n2-standard-8`, `a4-highgpu-8g`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "machine_type"
    )]
    pub machine_type: Option<String>,
    /// e.g. `NVIDIA_B200`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "accelerator_type"
    )]
    pub accelerator_type: Option<String>,
    /// Accelerators per node.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "accelerator_count",
        deserialize_with = "crate::int::option"
    )]
    pub accelerator_count: Option<i64>,
    /// Which reservation the nodes consume.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "reservation_affinity"
    )]
    pub reservation_affinity: Option<ReservationAffinity>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

impl MachineSpec {
    /// The accelerators each node has, type and count: as the spec names them (a count the
    /// service leaves out is the machine type's built-in count, else proto3's 0), or, when it
    /// names none, the ones its machine type comes with (`a3-ultragpu-8g`: 8 ×
    /// `NVIDIA_H200_141GB`, from the [catalogue](crate::catalogue)). `None`: a CPU machine.
    pub fn accelerators(&self) -> Option<(&str, u64)> {
        let built_in = self
            .machine_type
            .as_deref()
            .and_then(|machine| crate::catalogue::machine_catalogue().built_in(machine));
        let named = self
            .accelerator_type
            .as_deref()
            .filter(|kind| !kind.is_empty() && *kind != "ACCELERATOR_TYPE_UNSPECIFIED");
        match (named, built_in) {
            (Some(kind), _) => {
                let count = self
                    .accelerator_count
                    .and_then(|count| u64::try_from(count).ok())
                    .or(built_in.map(|b| u64::from(b.count)))
                    .unwrap_or(0);
                Some((kind, count))
            }
            (None, Some(built_in)) => Some((built_in.kind.as_str(), u64::from(built_in.count))),
            (None, None) => None,
        }
    }

    /// The GPUs one node of this spec has, as far as the catalogue or the spec itself can
    /// tell: a machine type outside the catalogue is [`GpusPerNode::Unknown`] unless the spec
    /// names both its accelerator type and count (never a guess).
    pub fn gpus_per_node(&self) -> GpusPerNode {
        let catalogued = self.machine_type.as_deref().is_some_and(|machine| {
            crate::catalogue::machine_catalogue()
                .machine(machine)
                .is_some()
        });
        let named_in_full = self.accelerator_count.is_some_and(|count| count > 0)
            && self
                .accelerator_type
                .as_deref()
                .is_some_and(|kind| !kind.is_empty() && kind != "ACCELERATOR_TYPE_UNSPECIFIED");
        if !catalogued && !named_in_full {
            return GpusPerNode::Unknown;
        }
        match self.accelerators() {
            Some((kind, count)) if count > 0 => GpusPerNode::Gpus {
                kind: kind.to_owned(),
                count,
            },
            _ => GpusPerNode::None,
        }
    }
}

/// The GPUs one node of a pool has ([`MachineSpec::gpus_per_node`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpusPerNode {
    /// A CPU machine type.
    None,
    /// `count` GPUs of the accelerator type `kind`.
    Gpus {
        /// The accelerator type, e.g. `NVIDIA_B200`.
        kind: String,
        /// How many per node.
        count: u64,
    },
    /// A machine type the catalogue does not know, without accelerators named in full.
    Unknown,
}

/// `machineSpec.reservationAffinity`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReservationAffinity {
    /// `NO_RESERVATION`, `ANY_RESERVATION` or `SPECIFIC_RESERVATION`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "reservation_affinity_type"
    )]
    pub reservation_affinity_type: Option<String>,
    /// e.g. `compute.googleapis.com/reservation-name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The reservations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

/// `scalingSpec` of a node pool. Both counts are always sent, 0 included.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScalingSpec {
    /// Lower bound, ≥ 0.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "min_node_count",
        deserialize_with = "crate::int::option"
    )]
    pub min_node_count: Option<i64>,
    /// Upper bound, ≥ min.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "max_node_count",
        deserialize_with = "crate::int::option"
    )]
    pub max_node_count: Option<i64>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

/// `bootDisk` of a node pool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BootDisk {
    /// `pd-ssd` (default), `pd-standard`, `hyperdisk-balanced`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "boot_disk_type"
    )]
    pub boot_disk_type: Option<String>,
    /// Size in GB; default 100.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "boot_disk_size_gb",
        deserialize_with = "crate::int::option"
    )]
    pub boot_disk_size_gb: Option<i64>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

/// `confidentialInstanceConfig` of a node pool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfidentialInstanceConfig {
    /// `SEV`, `SEV_SNP` or `TDX`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "confidential_instance_type"
    )]
    pub confidential_instance_type: Option<String>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

/// `orchestratorSpec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrchestratorSpec {
    /// The Slurm orchestrator.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "slurm_spec")]
    pub slurm_spec: Option<SlurmSpec>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

/// `orchestratorSpec.slurmSpec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SlurmSpec {
    /// `projects/{P}/locations/{ZONE}/instances/{NAME}`; immutable.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "home_directory_storage"
    )]
    pub home_directory_storage: Option<String>,
    /// The pool that runs the login nodes.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "login_node_pool_id"
    )]
    pub login_node_pool_id: Option<String>,
    /// Ordered: without `defaultPartitionId` the first one is the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<Vec<Partition>>,
    /// Run before every job on each allocated node.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "prolog_bash_scripts"
    )]
    pub prolog_bash_scripts: Option<Vec<String>>,
    /// Run after every job on each allocated node.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "epilog_bash_scripts"
    )]
    pub epilog_bash_scripts: Option<Vec<String>>,
    /// The partition jobs go to without `--partition`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "default_partition_id"
    )]
    pub default_partition_id: Option<String>,
    /// slurm.conf `Key=Value` settings (keys compared without case and underscores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<StringMap>,
    /// Per-pool node set settings.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "node_sets")]
    pub node_sets: Option<Vec<NodeSet>>,
    /// Accounting settings; superseded by `config`, never set together with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accounting: Option<SlurmAccounting>,
    /// Scheduling settings; superseded by `config`, never set together with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduling: Option<SlurmScheduling>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

/// `slurmSpec.accounting`, the message form of slurm.conf's accounting settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SlurmAccounting {
    /// `AccountingStorageEnforce`, a comma list such as `limits,qos`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "accounting_storage_enforce"
    )]
    pub accounting_storage_enforce: Option<String>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

/// `slurmSpec.scheduling`, the message form of slurm.conf's priority and preemption settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SlurmScheduling {
    /// `PriorityType`, e.g. `priority/multifactor`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "priority_type"
    )]
    pub priority_type: Option<String>,
    /// `PriorityWeightAge`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "priority_weight_age",
        deserialize_with = "crate::int::option"
    )]
    pub priority_weight_age: Option<i64>,
    /// `PriorityWeightAssoc`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "priority_weight_assoc",
        deserialize_with = "crate::int::option"
    )]
    pub priority_weight_assoc: Option<i64>,
    /// `PriorityWeightFairshare`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "priority_weight_fairshare",
        deserialize_with = "crate::int::option"
    )]
    pub priority_weight_fairshare: Option<i64>,
    /// `PriorityWeightJobSize`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "priority_weight_job_size",
        deserialize_with = "crate::int::option"
    )]
    pub priority_weight_job_size: Option<i64>,
    /// `PriorityWeightPartition`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "priority_weight_partition",
        deserialize_with = "crate::int::option"
    )]
    pub priority_weight_partition: Option<i64>,
    /// `PriorityWeightQOS`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "priority_weight_qos",
        deserialize_with = "crate::int::option"
    )]
    pub priority_weight_qos: Option<i64>,
    /// `PriorityWeightTRES`, e.g. `cpu=100,mem=150`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "priority_weight_tres"
    )]
    pub priority_weight_tres: Option<String>,
    /// `PreemptType`, e.g. `preempt/qos`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "preempt_type"
    )]
    pub preempt_type: Option<String>,
    /// `PreemptMode`, a comma list such as `SUSPEND,GANG`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "preempt_mode"
    )]
    pub preempt_mode: Option<String>,
    /// `PreemptExemptTime`, e.g. `00:00:00`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "preempt_exempt_time"
    )]
    pub preempt_exempt_time: Option<String>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

/// One Slurm partition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Partition {
    /// The partition name.
    #[serde(default)]
    pub id: String,
    /// The pools whose nodes form the partition.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "node_pool_ids"
    )]
    pub node_pool_ids: Option<Vec<String>>,
    /// Partition settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<StringMap>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

/// One Slurm node set (at most one per pool).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSet {
    /// The pool the node set describes.
    #[serde(default, alias = "node_pool_id")]
    pub node_pool_id: String,
    /// Node set settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<StringMap>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

/// `runtimeSpec`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeSpec {
    /// The service account the nodes run as; defaulted by the service.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "service_account"
    )]
    pub service_account: Option<String>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

/// `lustreExportConfig`: scheduled export of Lustre data to a bucket.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LustreExportConfig {
    /// `gs://…`; required.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "destination_bucket"
    )]
    pub destination_bucket: Option<String>,
    /// e.g. `MONDAY`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "days_of_week"
    )]
    pub days_of_week: Option<Vec<String>>,
    /// The Lustre instances to export.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lustres: Option<Vec<String>>,
    /// Time of day the export starts.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "start_time")]
    pub start_time: Option<TimeOfDay>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

/// `google.type.TimeOfDay` (hours and minutes).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimeOfDay {
    /// 0–23.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::int::option"
    )]
    pub hours: Option<i64>,
    /// 0–59.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::int::option"
    )]
    pub minutes: Option<i64>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

/// `clusterStatus`; output only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterStatus {
    /// `PROVISIONING`, `RUNNING`, `STOPPING`, `ERROR` or `UPDATING`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Human-readable detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Set in `ERROR`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<crate::Status>,
    /// One entry per node.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "nodes_status"
    )]
    pub nodes_status: Option<Vec<NodeStatus>>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

/// One node of `clusterStatus.nodesStatus`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeStatus {
    /// The node's pool.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "node_pool_id"
    )]
    pub node_pool_id: Option<String>,
    /// `NODE_POOL_TYPE_LOGIN` or `NODE_POOL_TYPE_COMPUTE`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "node_pool_type"
    )]
    pub node_pool_type: Option<String>,
    /// `PREPARING`, `RUNNING`, `ERROR` or `UPDATING`.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "node_state")]
    pub node_state: Option<String>,
    /// The VM's id.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "instance_id"
    )]
    pub instance_id: Option<String>,
    /// The VM's name.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "instance_name"
    )]
    pub instance_name: Option<String>,
    /// When the node was created.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "create_time"
    )]
    pub create_time: Option<String>,
    /// When the node last changed.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "last_update_time"
    )]
    pub last_update_time: Option<String>,
    /// Human-readable detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

impl NodeStatus {
    /// The node's state, if the service reported one.
    pub fn state(&self) -> Option<crate::NodeState> {
        self.node_state.as_deref().map(crate::NodeState::of)
    }

    /// How the node is named to people: its VM's name, else its VM's id.
    pub fn display_name(&self) -> Option<&str> {
        [&self.instance_name, &self.instance_id]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .find(|name| !name.is_empty())
    }
}

/// One entry of `clusterEvents`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterEvent {
    /// e.g. `VM_PROLOG_ERROR`, `VM_SLURM_DRAIN`.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "event_type")]
    pub event_type: Option<String>,
    /// When it happened.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "event_time")]
    pub event_time: Option<String>,
    /// What happened.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        alias = "event_message"
    )]
    pub event_message: Option<String>,
    /// Fields this version does not model.
    #[serde(flatten)]
    pub extra: UnknownFields,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn with_nodes(nodes: &[&str]) -> Cluster {
        let nodes: Vec<_> = nodes
            .iter()
            .map(|pool| json!({"nodePoolId": pool}))
            .collect();
        serde_json::from_value(json!({
            "nodePools": [
                {"id": "login", "machineSpec": {"machineType": "n2-standard-8"}},
                {"id": "gpu", "machineSpec": {"machineType": "a3-ultragpu-8g",
                    "acceleratorType": "NVIDIA_H200_141GB", "acceleratorCount": "8"}},
            ],
            "clusterStatus": {"nodesStatus": nodes},
        }))
        .unwrap()
    }

    fn spec(json: Value) -> MachineSpec {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn gpus_per_node_come_from_the_catalogue_or_from_accelerators_named_in_full() {
        let b200 = GpusPerNode::Gpus {
            kind: "NVIDIA_B200".to_owned(),
            count: 8,
        };
        assert_eq!(
            spec(json!({"machineType": "a4-highgpu-8g"})).gpus_per_node(),
            b200
        );
        assert_eq!(
            spec(json!({"machineType": "n2-standard-8"})).gpus_per_node(),
            GpusPerNode::None
        );
        assert_eq!(
            spec(
                json!({"machineType": "x9-custom-8g", "acceleratorType": "NVIDIA_B200",
                        "acceleratorCount": "8"})
            )
            .gpus_per_node(),
            b200
        );
    }

    #[test]
    fn a_machine_type_outside_the_catalogue_has_unknown_gpus_unless_they_are_named_in_full() {
        for unknown in [
            json!({"machineType": "x9-custom-8g"}),
            json!({"machineType": "x9-custom-8g", "acceleratorType": "NVIDIA_B200"}),
            json!({}),
        ] {
            assert_eq!(
                spec(unknown.clone()).gpus_per_node(),
                GpusPerNode::Unknown,
                "{unknown}"
            );
        }
    }

    #[test]
    fn the_stack_label_says_which_stack_owns_a_cluster() {
        let owned: Cluster =
            serde_json::from_value(json!({"labels": {"clusterform-stack": "prod", "team": "ml"}}))
                .unwrap();
        assert_eq!(owned.owner(), Some("prod"));
        assert!(owned.is_owned_by("prod"));
        assert!(!owned.is_owned_by("dev"));
        let unowned: Cluster = serde_json::from_value(json!({"labels": {"team": "ml"}})).unwrap();
        assert_eq!(unowned.owner(), None);
        assert!(!unowned.is_owned_by("prod"));
        assert!(!unowned.is_owned_by(""));
    }

    #[test]
    fn gpus_are_the_accelerators_of_the_reported_nodes() {
        assert_eq!(with_nodes(&["login", "gpu", "gpu"]).gpus(), Some(16));
        assert_eq!(with_nodes(&["login"]).gpus(), Some(0));
        assert_eq!(
            with_nodes(&["login", "gpu", "gpu"]).gpus_by_type(),
            Some(BTreeMap::from([("NVIDIA_H200_141GB".to_owned(), 16)]))
        );
        assert_eq!(with_nodes(&["login"]).gpus_by_type(), Some(BTreeMap::new()));
    }

    #[test]
    fn a_machine_type_with_built_in_accelerators_counts_them_unnamed() {
        let mut cluster = with_nodes(&["gpu", "gpu"]);
        let spec = cluster.node_pools.as_mut().unwrap()[1]
            .machine_spec
            .as_mut()
            .unwrap();
        spec.accelerator_type = None;
        spec.accelerator_count = None;
        assert_eq!(spec.accelerators(), Some(("NVIDIA_H200_141GB", 8)));
        assert_eq!(cluster.gpus(), Some(16));
        let cpu = MachineSpec {
            machine_type: Some("n2-standard-8".into()),
            ..MachineSpec::default()
        };
        assert_eq!(cpu.accelerators(), None);
    }

    #[test]
    fn a_jobs_partitions_give_their_pools() {
        let cluster: Cluster = serde_json::from_value(json!({
            "orchestratorSpec": {"slurmSpec": {"partitions": [
                {"id": "a3", "nodePoolIds": ["gpu", "gpu2"]},
                {"id": "cpu", "nodePoolIds": ["cpu", "gpu"]},
            ]}},
        }))
        .unwrap();
        assert_eq!(cluster.pools_of_partitions("a3"), ["gpu", "gpu2"]);
        assert_eq!(
            cluster.pools_of_partitions("cpu,a3"),
            ["gpu", "gpu2", "cpu"]
        );
        assert!(cluster.pools_of_partitions("gone").is_empty());
    }

    #[test]
    fn gpus_are_unknown_when_no_nodes_are_reported() {
        let mut cluster = with_nodes(&[]);
        cluster.cluster_status = None;
        assert_eq!(cluster.gpus(), None);
        let cpu_only: Cluster = serde_json::from_value(json!({
            "nodePools": [{"id": "cpu", "machineSpec": {"machineType": "n2-standard-8"}}],
        }))
        .unwrap();
        assert_eq!(cpu_only.gpus(), Some(0), "nothing to count");
    }
}
