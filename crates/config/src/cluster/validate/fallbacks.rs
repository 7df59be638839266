//! A pool's alternatives, checked as pools: every check of a pool runs on each of them, at its
//! `fallback` block. What the block sets is reported where it is written; what it inherits is
//! reported at the block's head, as inherited, unless the pool itself is reported for the same
//! thing (once is enough). An alternative that makes the same pool again is a warning, and so
//! is a fallback of a pool that starts empty (never tried at create); a FLEX_START pool's
//! chain gets what is known of flex creates.

use clusterform_model::{Cluster, NodePool};

use super::{ClusterChecks, pool_path};
use crate::cluster::fallback::{FALLBACK_BLOCK, FallbackBlock, PoolFallbackBlocks};
use crate::diagnostic::Diagnostic;

impl ClusterChecks<'_> {
    pub(super) fn fallbacks(&mut self, cluster: &Cluster, fallbacks: &[PoolFallbackBlocks]) {
        let login = cluster
            .slurm_spec()
            .and_then(|slurm| slurm.login_node_pool_id.as_deref());
        for of_pool in fallbacks {
            let Some(pool) = cluster.node_pool(&of_pool.pool) else {
                continue;
            };
            let is_login = login == Some(pool.id.as_str());
            let own = self.scratch(&pool_path(pool), pool, is_login);
            let mut earlier: Vec<(usize, NodePool)> = vec![(0, pool.clone())];
            if let Some(first) = of_pool.blocks.first() {
                self.flex_start_chain(pool, first);
            }
            for block in &of_pool.blocks {
                self.never_tried_at_create(pool, block);
                let alternative = block.fields.alternative(pool);
                self.alternative(pool, block, &alternative, is_login, &own);
                if !block.unknown {
                    self.same_as_earlier(pool, block, &alternative, &earlier);
                    earlier.push((block.ordinal, alternative));
                }
            }
        }
    }

    /// The pool checks of `alternative`, the pool's fallback `block`: the diagnostics the pool
    /// itself has (`own`) are not repeated for what the block inherits.
    fn alternative(
        &mut self,
        pool: &NodePool,
        block: &FallbackBlock,
        alternative: &NodePool,
        is_login: bool,
        own: &[Diagnostic],
    ) {
        let path = fallback_path(pool, block);
        let head = self.spans.get(&path);
        for mut diagnostic in self.scratch(&path, alternative, is_login) {
            let inherited = diagnostic.range == head;
            if inherited && own.iter().any(|mine| same_problem(mine, &diagnostic)) {
                continue;
            }
            let inheritance = if inherited {
                ", inherited from the pool"
            } else {
                ""
            };
            diagnostic.message = format!(
                "{} ({FALLBACK_BLOCK} {}{inheritance})",
                diagnostic.message, block.ordinal
            );
            self.diagnostics.push(diagnostic);
        }
    }

    /// A warning when `pool` starts empty: a create asks only for a pool's static nodes
    /// (`min_node_count`), so it cannot fail for this pool's capacity and never moves to
    /// `block`; the pool's dynamic nodes are made when jobs pend, where a shortage shows as
    /// nodes that do not start.
    fn never_tried_at_create(&mut self, pool: &NodePool, block: &FallbackBlock) {
        if pool.has_static_nodes() {
            return;
        }
        self.warning(
            &fallback_path(pool, block),
            format!(
                "{FALLBACK_BLOCK} {} of pool `{}`: the pool starts empty (min_node_count = 0); \
                 its nodes are made when jobs pend, so this fallback is never tried at create",
                block.ordinal, pool.id
            ),
            "set min_node_count above 0 for machines at create (a shortage then falls back), or \
             remove the fallback; `clusterform status` shows nodes that fail to start"
                .to_owned(),
        );
    }

    /// What is known of a FLEX_START pool's chain, once per pool at its first `block`: flex
    /// start queues its requests, and no public record shows a flex create failing for a
    /// stockout, so its fallbacks may never be tried.
    fn flex_start_chain(&mut self, pool: &NodePool, block: &FallbackBlock) {
        let Some(model) = pool
            .provisioning_model
            .as_ref()
            .filter(|model| model.queues_requests())
        else {
            return;
        };
        self.warning(
            &fallback_path(pool, block),
            format!(
                "pool `{}` is {model}: its requests are queued until the machines are \
                 available (Dynamic Workload Scheduler), and no public record shows a flex \
                 create failing for a stockout, so its fallbacks may never be tried",
                pool.id
            ),
            "keep the fallbacks for quota refusals, or put first the model you would rather \
             wait for"
                .to_owned(),
        );
    }

    /// The diagnostics of the pool checks of `pool` at `path`, kept apart.
    fn scratch(&self, path: &str, pool: &NodePool, is_login: bool) -> Vec<Diagnostic> {
        let mut diagnostics = Vec::new();
        let mut checks = ClusterChecks {
            file: self.file,
            spans: self.spans,
            head: self.head.clone(),
            label: self.label.clone(),
            project: self.project,
            region: self.region,
            diagnostics: &mut diagnostics,
        };
        checks.pool(path, pool);
        if is_login {
            checks.login_pool(path, pool);
        }
        diagnostics
    }

    /// A warning when `alternative` is the pool again (ordinal 0 in `earlier`) or an earlier
    /// alternative: the attempt would ask for the same machines that just failed.
    fn same_as_earlier(
        &mut self,
        pool: &NodePool,
        block: &FallbackBlock,
        alternative: &NodePool,
        earlier: &[(usize, NodePool)],
    ) {
        let Some((ordinal, _)) = earlier.iter().find(|(_, made)| made == alternative) else {
            return;
        };
        let same_as = match ordinal {
            0 => "the pool itself".to_owned(),
            n => format!("its {FALLBACK_BLOCK} {n}"),
        };
        self.warning(
            &fallback_path(pool, block),
            format!(
                "{FALLBACK_BLOCK} {} of pool `{}` makes the same pool as {same_as}: it would retry the same machines",
                block.ordinal, pool.id
            ),
            "change what it sets, or remove it".to_owned(),
        );
    }
}

/// Where a pool's fallback block is written: `node_pools[ID].fallback[N]`.
fn fallback_path(pool: &NodePool, block: &FallbackBlock) -> String {
    format!("{}.{FALLBACK_BLOCK}[{}]", pool_path(pool), block.ordinal)
}

fn same_problem(a: &Diagnostic, b: &Diagnostic) -> bool {
    (a.severity, &a.message) == (b.severity, &b.message)
}
