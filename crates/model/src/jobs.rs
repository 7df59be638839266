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
    /// Slurm was not asked: the cluster is not `RUNNING`, and the API's Slurm relay answers
    /// only a running cluster (anything else is `FAILED_PRECONDITION`).
    NotAsked {
        /// The cluster's state, as the service spells it (`ERROR`, `UPDATING`, …).
        state: String,
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
    /// `start_time`, Unix seconds, when Slurm set it (a running job's start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<i64>,
}

/// Job states (base states and flags) of a job that holds nodes now: running, suspended or
/// stopped on them, being configured or completing on them, signalled, staging out, resizing,
/// or waiting for its nodes to power up (slurm.schedmd.com, `squeue` "JOB STATE CODES").
pub const NODE_HOLDING_STATES: &[&str] = &[
    "RUNNING",
    "COMPLETING",
    "CONFIGURING",
    "SUSPENDED",
    "STOPPED",
    "SIGNALING",
    "STAGE_OUT",
    "RESIZING",
    "POWER_UP_NODE",
];

/// Job states of a job that only waits for nodes. With [`NODE_HOLDING_STATES`], the states of
/// an active job.
pub const WAITING_STATES: &[&str] = &[
    "PENDING",
    "REQUEUED",
    "REQUEUE_HOLD",
    "REQUEUE_FED",
    "RESV_DEL_HOLD",
];

impl RunningJob {
    /// Whether the job holds nodes, so that taking them away stops it. A job whose states are
    /// neither a known holding state nor a known waiting one holds nodes: what Slurm says that
    /// clusterform does not know is never taken for harmless.
    pub fn holds_nodes(&self) -> bool {
        let states: Vec<&str> = self.states().collect();
        let any_of = |known: &[&str]| {
            states
                .iter()
                .any(|state| known.iter().any(|k| state.eq_ignore_ascii_case(k)))
        };
        any_of(NODE_HOLDING_STATES) || !any_of(WAITING_STATES)
    }

    /// Its states, one by one.
    pub fn states(&self) -> impl Iterator<Item = &str> {
        self.state
            .split(',')
            .map(str::trim)
            .filter(|state| !state.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job known by its ID and state only, as a plan file stores one.
    fn job(state: &str) -> RunningJob {
        serde_json::from_value(serde_json::json!({"id": 1, "state": state}))
            .expect("a job with an ID and a state")
    }

    #[test]
    fn running_suspended_configuring_and_completing_jobs_hold_nodes() {
        for state in [
            "RUNNING",
            "COMPLETING",
            "CONFIGURING",
            "SUSPENDED",
            "running",
        ] {
            assert!(job(state).holds_nodes(), "{state}");
        }
        assert!(job("RUNNING,REQUEUED").holds_nodes(), "a holding flag wins");
        assert!(job("COMPLETING,REQUEUED").holds_nodes());
    }

    #[test]
    fn pending_jobs_hold_none() {
        for state in [
            "PENDING",
            "PENDING,REQUEUED",
            "REQUEUE_HOLD",
            "RESV_DEL_HOLD",
        ] {
            assert!(!job(state).holds_nodes(), "{state}");
        }
    }

    #[test]
    fn a_state_not_known_holds_nodes() {
        assert!(job("SOME_FUTURE_STATE").holds_nodes());
        assert!(
            job("").holds_nodes(),
            "no state at all is not known to wait"
        );
    }
}
