//! Preflight's decisions, without I/O: which documented reads a plan needs before it creates
//! something (a cluster it creates or replaces, an update, a pool an update adds), each once
//! however many clusters share it (`requirements`), and what the readings mean for each
//! cluster — a [`Finding`] at the configuration field it concerns (`meaning`). A documented
//! impossibility is [`Certainty::Error`]; an inference (GPU quota, zones), anything about a
//! pool's `fallback` alternative ([`Problem::InAlternative`]: the primary may never need it) and
//! a read that could not be made are warnings, the latter one [`Problem::NotChecked`] per API
//! and reason. The
//! executor makes the reads (`clusterform_executor::read_preflight`); the binary words the
//! findings.

mod meaning;
mod requirements;

use clusterform_model::preflight::{
    BucketName, ClusterPermission, InstanceName, NetworkName, PreflightApi, PreflightRead,
    ReservationName, Service, ServiceAccountEmail, SubnetworkName,
};
use clusterform_model::{Attempt, ClusterName};

pub use meaning::findings;
pub use requirements::{Requirement, cluster_requirements, distinct_reads, plan_requirements};

/// Where the cluster names its network.
pub const NETWORK_FIELD: &str = "network.network";
/// Where the cluster names its subnetwork.
pub const SUBNETWORK_FIELD: &str = "network.subnetwork";
/// Where the cluster names its home directory.
pub const HOME_FIELD: &str = "orchestrator_spec.slurm_spec.home_directory_storage";
/// Where the cluster names the service account of its nodes.
pub const SERVICE_ACCOUNT_FIELD: &str = "runtime_spec.service_account";
/// Where the cluster names the Lustre export's bucket.
pub const EXPORT_BUCKET_FIELD: &str = "lustre_export_config.destination_bucket";
/// Where the cluster names the Lustre instances it exports.
pub const EXPORT_LUSTRES_FIELD: &str = "lustre_export_config.lustres";

/// How sure a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Certainty {
    /// A documented impossibility: the create would fail.
    Error,
    /// Not known: an inference, or a check that could not run.
    Warning,
}

/// Which kind of instance a storage finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageKind {
    /// A Filestore instance.
    Filestore,
    /// A Managed Lustre instance.
    Lustre,
}

/// A node pool's `fallback` alternative, as users number it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alternative {
    /// The pool's ID.
    pub pool: String,
    /// The attempt that runs it (attempt 1 is the pool as declared, which is no alternative).
    pub attempt: Attempt,
}

/// What a check found wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The service is not enabled in the project.
    ServiceDisabled {
        /// The project.
        project: String,
        /// The service.
        service: Service,
    },
    /// The network does not exist.
    NetworkMissing(NetworkName),
    /// The subnetwork does not exist.
    SubnetworkMissing(SubnetworkName),
    /// The subnetwork is in another region than the cluster.
    SubnetworkInOtherRegion {
        /// The subnetwork.
        subnetwork: SubnetworkName,
        /// Its region.
        region: String,
        /// The cluster's.
        cluster_region: String,
    },
    /// The subnetwork is on another network than the cluster names.
    SubnetworkOnOtherNetwork {
        /// The subnetwork.
        subnetwork: SubnetworkName,
        /// Its network.
        network: NetworkName,
        /// The cluster's.
        cluster_network: NetworkName,
    },
    /// Pools without public IPs on a subnetwork without Private Google Access: the create
    /// fails with "Subnetwork does not allow private IP Google access".
    PrivateAccessOff {
        /// The subnetwork.
        subnetwork: SubnetworkName,
        /// The pools without public IPs.
        pools: Vec<String>,
    },
    /// No Filestore instance is the home directory, and whether a Managed Lustre instance is
    /// could not be read.
    FilestoreMissing(InstanceName),
    /// Neither a Filestore nor a Managed Lustre instance is the home directory.
    HomeMissing(InstanceName),
    /// The home directory's Filestore instance is not READY.
    FilestoreNotReady {
        /// The instance.
        instance: InstanceName,
        /// Its state.
        state: String,
    },
    /// The home directory's Filestore instance is on none of the cluster's network.
    FilestoreOnOtherNetwork {
        /// The instance.
        instance: InstanceName,
        /// Its networks, as Filestore spells them.
        networks: Vec<String>,
        /// The cluster's.
        cluster_network: NetworkName,
    },
    /// A Managed Lustre instance a pool or the export names does not exist.
    LustreMissing(InstanceName),
    /// A Managed Lustre instance is not ACTIVE.
    LustreNotActive {
        /// The instance.
        instance: InstanceName,
        /// Its state.
        state: String,
    },
    /// A Managed Lustre instance is not on the cluster's network.
    LustreOnOtherNetwork {
        /// The instance.
        instance: InstanceName,
        /// Its network, if it says.
        network: Option<String>,
        /// The cluster's.
        cluster_network: NetworkName,
    },
    /// An instance sits in a zone where no pool of the cluster is.
    StorageInOtherZone {
        /// Filestore or Lustre.
        kind: StorageKind,
        /// The instance.
        instance: InstanceName,
        /// The pools' zones.
        pool_zones: Vec<String>,
    },
    /// The Lustre export's bucket does not exist.
    BucketMissing(BucketName),
    /// The reservation a pool names does not exist.
    ReservationMissing {
        /// The reservation.
        reservation: ReservationName,
        /// The pool.
        pool: String,
    },
    /// The reservation is in another zone than the pool.
    ReservationInOtherZone {
        /// The reservation.
        reservation: ReservationName,
        /// Its zone.
        zone: String,
        /// The pool.
        pool: String,
        /// The pool's zone.
        pool_zone: String,
    },
    /// The reservation is for another machine type than the pool's.
    ReservationForOtherMachine {
        /// The reservation.
        reservation: ReservationName,
        /// Its machine type.
        machine_type: String,
        /// The pool.
        pool: String,
        /// The pool's.
        pool_machine_type: String,
    },
    /// The reservation has fewer machines not in use than the pool's `min_node_count`.
    ReservationTooSmall {
        /// The reservation.
        reservation: ReservationName,
        /// The pool.
        pool: String,
        /// Machines reserved.
        count: u64,
        /// Of them, in use.
        in_use: u64,
        /// The pool's `min_node_count`.
        min_node_count: u64,
    },
    /// The caller lacks permissions on the project that apply's calls need.
    PermissionsMissing {
        /// The project.
        project: String,
        /// What it lacks.
        missing: Vec<ClusterPermission>,
    },
    /// The nodes' service account does not exist.
    ServiceAccountMissing(ServiceAccountEmail),
    /// The caller may not act as the nodes' service account.
    ActAsMissing(ServiceAccountEmail),
    /// What the plan adds of a GPU quota is more than is free (an inference: which quota the
    /// service charges is not documented).
    QuotaShort {
        /// The project.
        project: String,
        /// The region.
        region: String,
        /// The quota's metric, e.g. `NVIDIA_H100_GPUS`.
        metric: String,
        /// Its limit.
        limit: u64,
        /// Its usage.
        usage: u64,
        /// What the plan's creates add, at their pools' `max_node_count`.
        adds: u64,
        /// How many clusters add it.
        clusters: usize,
    },
    /// The region lists no quota for the metric the plan's GPUs would use.
    QuotaUnlisted {
        /// The project.
        project: String,
        /// The region.
        region: String,
        /// The metric.
        metric: String,
        /// What the plan adds.
        adds: u64,
    },
    /// What would make a pool's `fallback` alternative fail, or may: found before the
    /// primary machines are tried, which may well succeed, so never more than a warning.
    InAlternative {
        /// The alternative.
        alternative: Alternative,
        /// What its check found, as it would be for a pool declared so.
        problem: Box<Problem>,
    },
    /// Reads of one API that could not be made, for one reason: what they would have checked
    /// is not known.
    NotChecked {
        /// The API.
        api: PreflightApi,
        /// The reads, in the order the plan needed them.
        reads: Vec<PreflightRead>,
        /// What happened.
        reason: String,
    },
}

/// One thing preflight found, at the configuration field of the cluster it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The cluster.
    pub cluster: ClusterName,
    /// The field (a concrete path such as `network.subnetwork` or `node_pools[gpu].lustres`;
    /// `""`: the cluster block).
    pub field: String,
    /// What is wrong.
    pub problem: Problem,
}

impl Finding {
    /// Whether the create would fail for it, or it is only not known.
    pub fn certainty(&self) -> Certainty {
        match self.problem {
            // The home directory may be a Managed Lustre instance that could not be read; the
            // zone rule and the quota the service charges are not documented; an alternative
            // runs only if the primary machines fail.
            Problem::NotChecked { .. }
            | Problem::FilestoreMissing(_)
            | Problem::StorageInOtherZone { .. }
            | Problem::QuotaShort { .. }
            | Problem::QuotaUnlisted { .. }
            | Problem::InAlternative { .. } => Certainty::Warning,
            _ => Certainty::Error,
        }
    }
}

#[cfg(test)]
mod tests;
