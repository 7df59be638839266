//! The Model Development Cluster resource as typed Rust, shared by every other crate.
//!
//! This crate is pure data: the resource and its sub-messages ([`Cluster`], [`NodePool`], …),
//! long-running [`Operation`]s and Google's error [`Status`], resource names with their
//! validation ([`ClusterName`], [`OperationName`], [`ClusterId`]), protobuf durations, the
//! [`UpdateMode`] of a PATCH, field [`paths`] (and the `ignore_changes` paths users write), the
//! typed requests and every request path of the API ([`rest`]), and the one [`fields`] table
//! that says, for every field path, whether it is output-only, which update-mask path can
//! change it and what a change does to a running cluster.
//!
//! JSON follows the proto3 mapping the API uses: lowerCamelCase on output, lowerCamelCase or
//! snake_case on input, integers from numbers or decimal strings, and unknown fields kept so
//! that a read-modify-write never drops what the service added.

mod cluster;
pub mod duration;
pub mod fields;
mod int;
mod names;
mod operation;
pub mod paths;
pub mod rest;
mod update_mode;

pub use cluster::{
    BootDisk, Cluster, ClusterEvent, ClusterStatus, ConfidentialInstanceConfig, LustreExportConfig,
    MachineSpec, NetworkSpec, NodePool, NodeSet, NodeStatus, OrchestratorSpec, Partition,
    ReservationAffinity, RuntimeSpec, ScalingSpec, SlurmAccounting, SlurmScheduling, SlurmSpec,
    TimeOfDay, WritableCluster,
};
pub use names::{
    ClusterId, ClusterName, NameError, OperationName, cluster_address, validate_location,
    validate_project,
};
pub use operation::{ErrorEnvelope, FieldViolation, Operation, Status, rpc_code_name};
pub use update_mode::{UnknownUpdateMode, UpdateMode};

/// The label clusterform puts on every cluster it manages; its value is the stack name.
pub const STACK_LABEL: &str = "clusterform-stack";

/// The cluster states reported in `clusterStatus.state`.
pub mod state {
    /// The cluster is being created.
    pub const PROVISIONING: &str = "PROVISIONING";
    /// The cluster is ready.
    pub const RUNNING: &str = "RUNNING";
    /// The cluster is being deleted.
    pub const STOPPING: &str = "STOPPING";
    /// The cluster failed.
    pub const ERROR: &str = "ERROR";
    /// An update is being applied.
    pub const UPDATING: &str = "UPDATING";
}
