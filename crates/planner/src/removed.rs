//! `removed` blocks that release nothing: the cluster they name is not live, or not this
//! stack's, or this stack's cluster of that ID lives in another location (the block releases
//! only at its own address, so that cluster is planned as any other undeclared one). Such a block does no harm, but it may name the wrong cluster (a typo in the ID or
//! the region), or be left over from a release that is done; the plan says so.

use std::collections::BTreeMap;

use clusterform_config::{Config, RemovedCluster};
use clusterform_model::{Cluster, ClusterName, LiveCluster};

use crate::PlanOptions;

/// A `removed` block that matched no cluster of this stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnmatchedRemoved<'c> {
    /// The block.
    pub block: &'c RemovedCluster,
    /// Why it releases nothing.
    pub why: Unmatched,
}

/// Why a `removed` block releases nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unmatched {
    /// No live cluster has its address, nor does this stack own one of its ID elsewhere.
    NoCluster,
    /// No live cluster has its address, but this stack owns clusters of its ID in other
    /// locations: the block does not release them.
    Elsewhere {
        /// Where they live, in address order.
        at: Vec<ClusterName>,
    },
    /// The live cluster there carries another stack's label, or none.
    NotOwned {
        /// The stack label it carries, if any.
        stack: Option<String>,
    },
}

/// The `removed` blocks in scope of `options` (all of them without `--target`) that name no
/// live cluster of the configuration's stack among `live`.
pub fn unmatched_removed<'c, 'l>(
    config: &'c Config,
    live: impl IntoIterator<Item = &'l LiveCluster>,
    options: &PlanOptions,
) -> Vec<UnmatchedRemoved<'c>> {
    let live: BTreeMap<&ClusterName, &Cluster> = live
        .into_iter()
        .map(|current| (&current.address, &current.cluster))
        .collect();
    let stack = config.provider.stack.as_str();
    let owned_elsewhere = |block: &RemovedCluster| -> Vec<ClusterName> {
        live.iter()
            .filter(|&(address, cluster)| {
                address.id() == block.name.id() && cluster.is_owned_by(stack)
            })
            .map(|(&address, _)| address.clone())
            .collect()
    };
    let in_scope = |block: &&RemovedCluster| {
        options.targets.is_empty()
            || options
                .targets
                .iter()
                .any(|target| target == block.name.id().as_str())
    };
    config
        .removed
        .iter()
        .filter(in_scope)
        .filter_map(|block| {
            let why = match live.get(&block.name) {
                None => match owned_elsewhere(block) {
                    at if at.is_empty() => Unmatched::NoCluster,
                    at => Unmatched::Elsewhere { at },
                },
                Some(cluster) if cluster.is_owned_by(stack) => return None,
                Some(cluster) => Unmatched::NotOwned {
                    stack: cluster.owner().map(str::to_owned),
                },
            };
            Some(UnmatchedRemoved { block, why })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use clusterform_testkit::{STACK, cluster, config, live_seed, removed, seed, served};

    use super::*;

    fn with_removed(ids: &[&str]) -> Config {
        let mut config = config(vec![]);
        config.removed = ids.iter().map(|id| removed(id)).collect();
        config
    }

    fn whys(
        config: &Config,
        live: &[LiveCluster],
        options: &PlanOptions,
    ) -> Vec<(String, Unmatched)> {
        unmatched_removed(config, live, options)
            .into_iter()
            .map(|u| (u.block.name.id().to_string(), u.why))
            .collect()
    }

    #[test]
    fn a_block_naming_an_owned_live_cluster_is_matched() {
        let config = with_removed(&["train01"]);
        assert_eq!(
            whys(&config, &[live_seed("train01")], &PlanOptions::default()),
            []
        );
    }

    #[test]
    fn a_block_naming_no_cluster_or_another_stacks_is_unmatched() {
        let config = with_removed(&["gone", "theirs", "bare"]);
        let live = [
            cluster(served("theirs", &seed(), Some("ml-prod"), "RUNNING")),
            cluster(served("bare", &seed(), None, "RUNNING")),
        ];
        assert_eq!(
            whys(&config, &live, &PlanOptions::default()),
            [
                ("gone".to_owned(), Unmatched::NoCluster),
                (
                    "theirs".to_owned(),
                    Unmatched::NotOwned {
                        stack: Some("ml-prod".to_owned())
                    }
                ),
                ("bare".to_owned(), Unmatched::NotOwned { stack: None }),
            ]
        );
    }

    #[test]
    fn a_block_whose_cluster_the_stack_owns_in_another_location_says_where() {
        let config = with_removed(&["train01"]);
        let elsewhere = |region: &str, stack| {
            let mut found = cluster(served("train01", &seed(), stack, "RUNNING"));
            found.address =
                ClusterName::new(found.address.project(), region, found.address.id().as_str())
                    .unwrap();
            found
        };
        let live = [
            elsewhere("europe-west4", Some(STACK)),
            elsewhere("us-east1", Some("ml-prod")),
        ];
        let [(_, why)] = whys(&config, &live, &PlanOptions::default())
            .try_into()
            .unwrap();
        assert_eq!(
            why,
            Unmatched::Elsewhere {
                at: vec![live[0].address.clone()]
            }
        );
    }

    #[test]
    fn with_targets_only_the_targeted_blocks_are_checked() {
        let config = with_removed(&["gone", "other"]);
        let options = PlanOptions {
            targets: vec!["gone".to_owned()],
            ..PlanOptions::default()
        };
        assert_eq!(
            whys(&config, &[], &options),
            [("gone".to_owned(), Unmatched::NoCluster)]
        );
    }
}
