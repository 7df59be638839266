//! The words of what the libraries and the workflow report as typed values: a plan's
//! warnings ([`PlanWarning`]), which the plan text shows under each change and `plan --json`
//! gives as `message` beside their data.

use clusterform_planner::{CarriedValue, PlanWarning};

/// `the cluster is UPDATING right now: …`: one warning of a change, as a sentence without its
/// `Warning:` label.
pub fn plan_warning(warning: &PlanWarning) -> String {
    match warning {
        PlanWarning::Busy { state } => format!(
            "the cluster is {} right now: apply waits for the running operation to end before sending its request",
            state.as_str()
        ),
        PlanWarning::StillWorking { state } => format!(
            "the cluster is {} right now: an operation started earlier is still running on it",
            state.as_str()
        ),
        PlanWarning::BeingDeleted => "the cluster is being deleted right now (STOPPING): apply waits until it is gone, then creates it again".to_owned(),
        PlanWarning::DefaultPartitionMoves { from, to } => format!(
            "the default partition moves from {} to {}: default_partition_id is unset, so the first partition is the default for every job submitted without --partition",
            partition(from.as_deref()),
            partition(to.as_deref())
        ),
        PlanWarning::PoolShrinks { pool, from, to, nodes_reported } => format!(
            "max_node_count of pool {pool} goes from {from} to {to}: {}",
            shrink_consequence(*nodes_reported, warning.nodes_removed())
        ),
        PlanWarning::LabelsKept { keys } => labels_kept(keys),
        PlanWarning::CarriedFromLive { values } => format!(
            "this node_pools update sends back what the service filled in where the configuration \
             sets nothing, which may pin it (an unset node_image follows the default image, a set \
             one stays): {}",
            values.iter().map(carried).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn partition(id: Option<&str>) -> String {
    id.map_or_else(|| "none".to_owned(), |id| format!("`{id}`"))
}

/// What lowering a pool's maximum does to its nodes, as far as the cluster's report tells.
fn shrink_consequence(reported: Option<usize>, removed: Option<usize>) -> String {
    match (reported, removed) {
        (Some(nodes), Some(removed)) if removed > 0 => format!(
            "the cluster reports {nodes} nodes in the pool, so {removed} above the new maximum are removed, and Slurm jobs running on them are stopped"
        ),
        (Some(nodes), Some(_)) => format!(
            "the cluster reports {nodes} {} in the pool, none above the new maximum, so none is removed now",
            if nodes == 1 { "node" } else { "nodes" }
        ),
        _ => "nodes above the new maximum are removed, and Slurm jobs running on them are stopped"
            .to_owned(),
    }
}

fn labels_kept(keys: &[String]) -> String {
    let quoted: Vec<String> = keys.iter().map(|key| format!("`{key}`")).collect();
    let (which, are) = match quoted.as_slice() {
        [one] => (format!("the label {one}"), "is"),
        several => (format!("the labels {}", several.join(", ")), "are"),
    };
    format!(
        "{which} {are} not in the configuration and {are} kept: clusterform does not remove \
         labels someone else put on a cluster (declare them to manage them)"
    )
}

/// `node_pools[cpu].node_image = "projects/…"`; a value that may hold a secret as `(sensitive)`.
fn carried(value: &CarriedValue) -> String {
    match &value.value {
        Some(shown) => format!("{} = {shown}", value.path),
        None => format!("{} = (sensitive)", value.path),
    }
}

#[cfg(test)]
mod tests {
    use clusterform_model::ClusterState;
    use serde_json::json;

    use super::*;

    fn shrinking(nodes_reported: Option<usize>) -> PlanWarning {
        PlanWarning::PoolShrinks {
            pool: "cpu".to_owned(),
            from: "8".to_owned(),
            to: "4".to_owned(),
            nodes_reported,
        }
    }

    #[test]
    fn a_busy_cluster_is_named_by_its_state() {
        assert_eq!(
            plan_warning(&PlanWarning::Busy {
                state: ClusterState::Updating
            }),
            "the cluster is UPDATING right now: apply waits for the running operation to end before sending its request"
        );
        assert_eq!(
            plan_warning(&PlanWarning::StillWorking {
                state: ClusterState::Provisioning
            }),
            "the cluster is PROVISIONING right now: an operation started earlier is still running on it"
        );
        assert!(plan_warning(&PlanWarning::BeingDeleted).contains("(STOPPING)"));
    }

    #[test]
    fn a_default_partition_that_moves_names_both_or_none() {
        let moves = PlanWarning::DefaultPartitionMoves {
            from: Some("cpu".to_owned()),
            to: None,
        };
        assert!(
            plan_warning(&moves).starts_with("the default partition moves from `cpu` to none:"),
            "{}",
            plan_warning(&moves)
        );
    }

    #[test]
    fn a_shrinking_pool_says_how_many_nodes_go_when_the_cluster_reports_them() {
        assert!(plan_warning(&shrinking(Some(6))).contains(
            "max_node_count of pool cpu goes from 8 to 4: the cluster reports 6 nodes in the pool, so 2 above the new maximum are removed"
        ));
        assert!(
            plan_warning(&shrinking(Some(1)))
                .contains("the cluster reports 1 node in the pool, none above the new maximum")
        );
        assert!(plan_warning(&shrinking(None)).ends_with(
            "nodes above the new maximum are removed, and Slurm jobs running on them are stopped"
        ));
    }

    #[test]
    fn kept_labels_are_quoted_in_one_sentence() {
        let one = PlanWarning::LabelsKept {
            keys: vec!["owner".to_owned()],
        };
        assert!(
            plan_warning(&one)
                .starts_with("the label `owner` is not in the configuration and is kept")
        );
        let two = PlanWarning::LabelsKept {
            keys: vec!["owner".to_owned(), "cost".to_owned()],
        };
        assert!(
            plan_warning(&two).starts_with(
                "the labels `owner`, `cost` are not in the configuration and are kept"
            )
        );
    }

    #[test]
    fn a_carried_value_that_may_be_secret_is_not_quoted() {
        let warning = PlanWarning::CarriedFromLive {
            values: vec![
                CarriedValue {
                    path: "node_pools[cpu].node_image".to_owned(),
                    value: Some(json!("projects/p/global/images/i")),
                },
                CarriedValue {
                    path: "node_pools[cpu].startup_script".to_owned(),
                    value: None,
                },
            ],
        };
        assert!(plan_warning(&warning).ends_with(
            "node_pools[cpu].node_image = \"projects/p/global/images/i\", node_pools[cpu].startup_script = (sensitive)"
        ));
    }
}
