//! `removed` blocks that release nothing: the cluster they name is not live, or not this
//! stack's. Such a block does no harm, but it may name the wrong cluster (a typo in the ID or
//! the region), or be left over from a release that is done; the plan says so.

use std::collections::BTreeMap;

use clusterform_config::{Config, RemovedCluster};
use clusterform_model::{ClusterName, LiveCluster, STACK_LABEL};

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
    /// No live cluster has its address.
    NoCluster,
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
    let labels: BTreeMap<&ClusterName, Option<&str>> = live
        .into_iter()
        .map(|current| (&current.address, current.cluster.label(STACK_LABEL)))
        .collect();
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
            let why = match labels.get(&block.name) {
                None => Unmatched::NoCluster,
                Some(&stack) if stack == Some(config.provider.stack.as_str()) => return None,
                Some(&stack) => Unmatched::NotOwned {
                    stack: stack.map(str::to_owned),
                },
            };
            Some(UnmatchedRemoved { block, why })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use clusterform_testkit::{cluster, config, live_seed, removed, seed, served};

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
