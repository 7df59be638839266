//! Where a cluster's login node is, for `status` to say how to get onto the cluster: the
//! login pool (`orchestratorSpec.slurmSpec.loginNodePoolId`), its zone and whether its nodes
//! have external addresses (`enablePublicIps`), and the pool's node as
//! `clusterStatus.nodesStatus` reports it. Nothing is invented: a node without an instance
//! name has none yet.

use clusterform_model::{Cluster, NodeState, NodeStatus};

/// The `nodePoolType` of a login node.
const LOGIN_POOL_TYPE: &str = "NODE_POOL_TYPE_LOGIN";

/// The login node of a cluster whose Slurm names a login pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginNode {
    /// `orchestratorSpec.slurmSpec.loginNodePoolId`.
    pub pool: String,
    /// The pool's `zone`, if the cluster has that pool and it names one.
    pub zone: Option<String>,
    /// The pool's `enablePublicIps` (unset is false: the field is a plain bool): without
    /// external addresses, the node is reached through Identity-Aware Proxy.
    pub public_ips: bool,
    /// The pool's node, as the service reports it.
    pub instance: LoginInstance,
}

/// The login pool's node, as `clusterStatus.nodesStatus` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginInstance {
    /// `RUNNING`, with its VM's name: it can be reached.
    Running {
        /// `instanceName`.
        name: String,
    },
    /// Reported, but not `RUNNING` or without a name yet.
    NotRunning {
        /// `instanceName`, once the service gave one.
        name: Option<String>,
        /// `nodeState` as the service spelled it, if it reported one.
        state: Option<String>,
    },
    /// The service reports no node of the pool.
    Absent,
}

/// The login node of `cluster`, `None` when its Slurm names no login pool.
pub fn login_node(cluster: &Cluster) -> Option<LoginNode> {
    let pool_id = cluster.slurm_spec()?.login_node_pool_id.clone()?;
    let pool = cluster.node_pool(&pool_id);
    let nodes = cluster
        .cluster_status
        .as_ref()
        .and_then(|status| status.nodes_status.as_deref())
        .unwrap_or_default();
    let of_pool: Vec<&NodeStatus> = nodes
        .iter()
        .filter(|node| is_login_node(node, &pool_id))
        .collect();
    Some(LoginNode {
        zone: pool.and_then(|p| p.zone.clone()).filter(|z| !z.is_empty()),
        public_ips: pool.and_then(|p| p.enable_public_ips).unwrap_or(false),
        instance: instance(&of_pool),
        pool: pool_id,
    })
}

/// A node of the login pool: named by its pool, or, naming none, typed as a login node.
fn is_login_node(node: &NodeStatus, pool: &str) -> bool {
    match node.node_pool_id.as_deref() {
        Some(id) => id == pool,
        None => node.node_pool_type.as_deref() == Some(LOGIN_POOL_TYPE),
    }
}

/// The first running node with a name, else the first node reported.
fn instance(nodes: &[&NodeStatus]) -> LoginInstance {
    let name = |node: &NodeStatus| node.instance_name.clone().filter(|n| !n.is_empty());
    if let Some(name) = nodes
        .iter()
        .filter(|node| node.state() == Some(NodeState::Running))
        .find_map(|node| name(node))
    {
        return LoginInstance::Running { name };
    }
    match nodes.first() {
        Some(node) => LoginInstance::NotRunning {
            name: name(node),
            state: node.node_state.clone(),
        },
        None => LoginInstance::Absent,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn cluster(nodes: Value, public_ips: Option<bool>) -> Cluster {
        let mut login = json!({"id": "login", "zone": "us-central1-a"});
        if let Some(public_ips) = public_ips {
            login["enablePublicIps"] = json!(public_ips);
        }
        let mut cluster = json!({
            "nodePools": [login, {"id": "cpu", "zone": "us-central1-b"}],
            "orchestratorSpec": {"slurmSpec": {"loginNodePoolId": "login"}},
            "clusterStatus": {"state": "RUNNING"},
        });
        cluster["clusterStatus"]["nodesStatus"] = nodes;
        serde_json::from_value(cluster).unwrap()
    }

    #[test]
    fn the_running_login_node_is_named_with_its_pools_zone() {
        let nodes = json!([
            {"nodePoolId": "cpu", "nodeState": "RUNNING", "instanceName": "t-cpu-0"},
            {"nodePoolId": "login", "nodeState": "PREPARING"},
            {"nodePoolId": "login", "nodeState": "RUNNING", "instanceName": "t-login-1"},
        ]);
        assert_eq!(
            login_node(&cluster(nodes, None)),
            Some(LoginNode {
                pool: "login".to_owned(),
                zone: Some("us-central1-a".to_owned()),
                public_ips: false,
                instance: LoginInstance::Running {
                    name: "t-login-1".to_owned()
                },
            })
        );
    }

    #[test]
    fn a_login_node_not_running_or_not_reported_has_no_name_invented() {
        let preparing = json!([{"nodePoolType": "NODE_POOL_TYPE_LOGIN", "nodeState": "PREPARING"}]);
        let found = login_node(&cluster(preparing, Some(true))).unwrap();
        assert!(found.public_ips);
        assert_eq!(
            found.instance,
            LoginInstance::NotRunning {
                name: None,
                state: Some("PREPARING".to_owned())
            }
        );
        let unnamed = json!([{"nodePoolId": "login", "nodeState": "RUNNING"}]);
        assert_eq!(
            login_node(&cluster(unnamed, None)).unwrap().instance,
            LoginInstance::NotRunning {
                name: None,
                state: Some("RUNNING".to_owned())
            }
        );
        let compute_only = json!([{"nodePoolId": "cpu", "nodeState": "RUNNING"}]);
        assert_eq!(
            login_node(&cluster(compute_only, None)).unwrap().instance,
            LoginInstance::Absent
        );
    }

    #[test]
    fn a_cluster_without_a_login_pool_has_no_login_node() {
        let cluster: Cluster =
            serde_json::from_value(json!({"nodePools": [{"id": "cpu"}]})).unwrap();
        assert_eq!(login_node(&cluster), None);
    }
}
