//! The warnings a plan gives under a change, as data: `warnings.rs` decides which a change
//! gets, the views word them, and plan files store them as they are.

use clusterform_model::ClusterState;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Something the user should know before applying a change, with its data: the views word it
/// (`clusterform::format::notes`), and a plan file stores it as it is, never as prose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlanWarning {
    /// The service is changing the cluster right now: apply waits for that operation to end
    /// before sending its own request.
    Busy {
        /// `PROVISIONING` or `UPDATING`.
        #[serde(with = "state_text")]
        state: ClusterState,
    },
    /// A cluster that matches its configuration is being changed by an operation started
    /// earlier (perhaps by a run killed before it could journal it).
    StillWorking {
        /// `PROVISIONING` or `UPDATING`.
        #[serde(with = "state_text")]
        state: ClusterState,
    },
    /// The cluster is being deleted (`STOPPING`): apply waits until it is gone, then creates it
    /// again.
    BeingDeleted,
    /// `default_partition_id` is unset and the first partition changes, so the partition jobs
    /// submitted without `--partition` run in moves.
    DefaultPartitionMoves {
        /// The first partition before, if any.
        from: Option<String>,
        /// The first partition after, if any.
        to: Option<String>,
    },
    /// A pool's `max_node_count` goes down.
    PoolShrinks {
        /// The pool's ID.
        pool: String,
        /// The live maximum, as the plan shows it.
        from: String,
        /// The new maximum.
        to: String,
        /// How many nodes the cluster reports in the pool (`clusterStatus.nodesStatus`), when
        /// it reports them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nodes_reported: Option<usize>,
    },
    /// Labels someone else put on the cluster, which a labels update keeps.
    LabelsKept {
        /// Their keys.
        keys: Vec<String>,
    },
    /// What a `node_pools` PATCH sends back of what the service filled in where the
    /// configuration sets nothing (which may pin it).
    CarriedFromLive {
        /// Each value sent back.
        values: Vec<CarriedValue>,
    },
}

/// One service-filled value a `node_pools` PATCH sends back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CarriedValue {
    /// `node_pools[cpu].node_image`.
    pub path: String,
    /// The value; `None` for one that may hold a secret, which is never quoted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
}

impl PlanWarning {
    /// The nodes above the new maximum of a [`Self::PoolShrinks`]: `Some(n)` when the cluster
    /// reports its nodes and the new maximum is a number (`Some(0)`: none is removed now);
    /// `None` when they may be any.
    pub fn nodes_removed(&self) -> Option<usize> {
        let Self::PoolShrinks {
            to, nodes_reported, ..
        } = self
        else {
            return None;
        };
        let maximum: usize = to.parse().ok()?;
        Some((*nodes_reported)?.saturating_sub(maximum))
    }
}

/// A cluster state in a plan file, as the service spells it.
mod state_text {
    use clusterform_model::ClusterState;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(state: &ClusterState, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(state.as_str())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ClusterState, D::Error> {
        Ok(ClusterState::of(&String::deserialize(d)?))
    }
}
