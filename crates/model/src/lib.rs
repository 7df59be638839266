//! The Model Development Cluster resource as typed Rust, shared by every other crate.
//!
//! This crate is pure data: the resource and its sub-messages ([`Cluster`], [`NodePool`], …),
//! long-running [`Operation`]s and Google's error [`Status`], resource names with their
//! validation ([`ClusterName`], [`OperationName`], [`ClusterId`]), protobuf durations, the
//! [`UpdateMode`] of a PATCH, field [`paths`] (and the `ignore_changes` paths users write), the
//! typed requests and every request path of the API ([`rest`]), and the one [`fields`] table
//! that says, for every field path, whether it is output-only, which update-mask path can
//! change it and what a change does to a running cluster; and the words the other crates
//! exchange about live clusters: a [`LiveCluster`] with the address it was read at, the
//! [`Action`] a cluster gets and the [`RunningJobs`] its Slurm reported; the regions the
//! service runs in ([`SERVICE_REGIONS`]) and the locations a refresh lists
//! ([`RefreshLocations`]); and the hourly prices the user gives ([`pricing`]) with what nodes
//! cost at them.
//!
//! JSON follows the proto3 mapping the API uses: lowerCamelCase on output, lowerCamelCase or
//! snake_case on input, integers from numbers or decimal strings, and unknown fields kept so
//! that a read-modify-write never drops what the service added.

mod action;
mod attempt;
pub mod catalogue;
mod cluster;
pub mod duration;
mod endpoint;
pub mod fields;
mod int;
mod jobs;
mod live;
mod names;
mod operation;
pub mod paths;
pub mod preflight;
pub mod pricing;
mod provisioning;
mod regions;
pub mod rest;
mod unread;
mod update_mode;

pub use action::Action;
pub use attempt::Attempt;
pub use cluster::{
    BootDisk, Cluster, ClusterEvent, ClusterStatus, ConfidentialInstanceConfig, GpusPerNode,
    LustreExportConfig, MachineSpec, NetworkSpec, NodePool, NodeSet, NodeStatus, OrchestratorSpec,
    Partition, ReservationAffinity, RuntimeSpec, ScalingSpec, SlurmAccounting, SlurmScheduling,
    SlurmSpec, TimeOfDay, WritableCluster,
};
pub use endpoint::{Endpoint, EndpointError, EndpointUrl};
pub use jobs::{JobsByCluster, NODE_HOLDING_STATES, RunningJob, RunningJobs, WAITING_STATES};
pub use live::{LiveCluster, UnreadableName};
pub use names::{
    ClusterId, ClusterName, Location, NameError, OperationName, cluster_address, validate_location,
    validate_project,
};
pub use operation::{
    Code, ErrorEnvelope, FieldViolation, Operation, Shortage, Status, shortage_brief,
};
pub use provisioning::{ProvisioningModel, ProvisioningProblem};
pub use regions::{RefreshLocations, SERVICE_REGIONS, is_service_region};
pub use unread::{UnreadKind, UnreadLocation};
pub use update_mode::{UnknownUpdateMode, UpdateMode};

/// The label clusterform puts on every cluster it manages; its value is the stack name.
pub const STACK_LABEL: &str = "clusterform-stack";

/// The cluster states reported in `clusterStatus.state`, and which of them a client waits out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClusterState {
    /// `PROVISIONING`: the cluster is being created.
    Provisioning,
    /// `RUNNING`: the cluster is ready.
    Running,
    /// `STOPPING`: the cluster is being deleted.
    Stopping,
    /// `ERROR`: the cluster failed.
    Error,
    /// `UPDATING`: an update is being applied.
    Updating,
    /// A state this version does not know.
    Other,
}

impl ClusterState {
    /// An operation is changing the cluster: it is being created or updated.
    pub const WORKING: [Self; 2] = [Self::Provisioning, Self::Updating];
    /// An update or a delete sent now would be refused: an operation is changing the cluster,
    /// or it is being deleted.
    pub const BUSY: [Self; 3] = [Self::Provisioning, Self::Updating, Self::Stopping];

    /// The state the service spells `text`.
    pub fn of(text: &str) -> Self {
        match text {
            "PROVISIONING" => Self::Provisioning,
            "RUNNING" => Self::Running,
            "STOPPING" => Self::Stopping,
            "ERROR" => Self::Error,
            "UPDATING" => Self::Updating,
            _ => Self::Other,
        }
    }

    /// The service's spelling (`another state` for [`Self::Other`]).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Provisioning => "PROVISIONING",
            Self::Running => "RUNNING",
            Self::Stopping => "STOPPING",
            Self::Error => "ERROR",
            Self::Updating => "UPDATING",
            Self::Other => "another state",
        }
    }

    /// See [`Self::WORKING`].
    pub fn is_working(self) -> bool {
        Self::WORKING.contains(&self)
    }

    /// See [`Self::BUSY`].
    pub fn is_busy(self) -> bool {
        Self::BUSY.contains(&self)
    }
}

/// The node states reported in `clusterStatus.nodesStatus[].nodeState`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NodeState {
    /// `PREPARING`: the node is being created or started.
    Preparing,
    /// `RUNNING`: the node is up.
    Running,
    /// `UPDATING`: the node is being changed.
    Updating,
    /// `ERROR`: the node failed.
    Error,
    /// `REPAIRING`: the service is repairing the node (after `reportFaultyNodes`; an A4X
    /// repair may take days); it does not serve meanwhile.
    Repairing,
    /// A state this version does not know.
    Other,
}

impl NodeState {
    /// The state the service spells `text`.
    pub fn of(text: &str) -> Self {
        match text {
            "PREPARING" => Self::Preparing,
            "RUNNING" => Self::Running,
            "UPDATING" => Self::Updating,
            "ERROR" => Self::Error,
            "REPAIRING" => Self::Repairing,
            _ => Self::Other,
        }
    }

    /// The service's spelling (`another state` for [`Self::Other`]).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Preparing => "PREPARING",
            Self::Running => "RUNNING",
            Self::Updating => "UPDATING",
            Self::Error => "ERROR",
            Self::Repairing => "REPAIRING",
            Self::Other => "another state",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ClusterState, NodeState};

    #[test]
    fn busy_states_are_the_working_ones_and_stopping() {
        for state in ["PROVISIONING", "UPDATING"] {
            assert!(ClusterState::of(state).is_working(), "{state}");
            assert!(ClusterState::of(state).is_busy(), "{state}");
        }
        assert!(ClusterState::of("STOPPING").is_busy());
        assert!(!ClusterState::of("STOPPING").is_working());
        for state in ["RUNNING", "ERROR", "SUSPENDED"] {
            assert!(!ClusterState::of(state).is_busy(), "{state}");
        }
        assert_eq!(ClusterState::of("SUSPENDED"), ClusterState::Other);
        assert_eq!(ClusterState::of("RUNNING").as_str(), "RUNNING");
    }

    #[test]
    fn node_states_read_the_service_s_spelling() {
        for state in [
            NodeState::Preparing,
            NodeState::Running,
            NodeState::Updating,
            NodeState::Error,
        ] {
            assert_eq!(NodeState::of(state.as_str()), state);
        }
        assert_eq!(NodeState::of("running"), NodeState::Other);
    }
}
