//! The Slurm jobs active on a cluster, as read through the API's Slurm relay and shown beside
//! plans.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ClusterName;

/// The jobs on the clusters of a plan's disruptive changes when the plan was shown. They live
/// beside the plan, never in it: the planner has no network, and a saved plan records what will
/// be done, not what ran when it was made.
pub type JobsByCluster = BTreeMap<ClusterName, RunningJobs>;

/// The jobs on a cluster right now, as far as its Slurm could tell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RunningJobs {
    /// Slurm answered: its active (running, pending, suspended, …) jobs.
    Known {
        /// The jobs, in Slurm's order.
        jobs: Vec<RunningJob>,
    },
    /// Slurm could not be asked or did not answer readably.
    Unknown {
        /// Why.
        reason: String,
    },
}

/// One active Slurm job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunningJob {
    /// `job_id`.
    pub id: Option<i64>,
    /// The job's name.
    pub name: Option<String>,
    /// Who submitted it.
    pub user: Option<String>,
    /// Its states joined by commas, e.g. `RUNNING`.
    pub state: String,
    /// The nodes it holds, e.g. `a3-[0-3]`.
    pub nodes: Option<String>,
    /// Its partition, or the comma-separated partitions a pending job may start in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// The node pools of its partitions, as the cluster's Slurm spec assigns them (empty when
    /// not known).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pools: Vec<String>,
}
