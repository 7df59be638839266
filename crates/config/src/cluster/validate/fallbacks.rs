//! A pool's alternatives, checked as pools: every check of a pool runs on each of them, at its
//! `fallback` block. What the block sets is reported where it is written; what it inherits is
//! reported at the block's head, as inherited, unless the pool itself is reported for the same
//! thing (once is enough). An alternative that makes the same pool again is a warning.

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
            for block in &of_pool.blocks {
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
