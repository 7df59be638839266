//! Decoding the cluster blocks on all cores: blocks (with their instances, already expanded)
//! are grouped in tasks of a few dozen, each task decoded by a forked evaluator whose
//! diagnostics are absorbed in order afterwards, and a cluster ID declared twice is reported at
//! the second declaration.

use std::collections::HashMap;

use rayon::iter::{IndexedParallelIterator, IntoParallelIterator};

use super::for_each::ExpandedBlock;
use super::{Run, at};
use crate::config::{DesiredCluster, Provider, SourceLocation};
use crate::evaluator::Bindings;
use crate::parallel::in_parallel;
use crate::source::label_range;

impl Run {
    /// Decodes and checks the instances of the cluster blocks on parallel threads, which also
    /// free them.
    pub(super) fn clusters<'a>(
        &mut self,
        blocks: Vec<ExpandedBlock<'a>>,
        ctx: &Bindings,
        provider: &Provider,
    ) -> Vec<DesiredCluster> {
        let tasks = blocks.into_par_iter().chunks(CLUSTERS_PER_TASK);
        let decoded = in_parallel(tasks, |chunk: Vec<ExpandedBlock<'a>>| {
            let mut worker = Run {
                eval: self.eval.fork(),
                unknown_locations: self.unknown_locations,
                ..Run::default()
            };
            let mut clusters = Vec::new();
            for ((source, block), instances) in chunk {
                for (id, each_ctx) in instances {
                    let each = each_ctx.is_some();
                    let instance_ctx = each_ctx.as_ref().unwrap_or(ctx);
                    if let Some(cluster) =
                        worker.cluster(source, &block, id, instance_ctx, each, provider)
                    {
                        clusters.push((cluster, source, label_range(&block)));
                    }
                }
            }
            (clusters, worker.eval)
        });
        let mut clusters: Vec<DesiredCluster> = Vec::new();
        let mut first_seen: HashMap<String, SourceLocation> = HashMap::new();
        for (chunk, eval) in decoded {
            self.eval.absorb(eval);
            for (cluster, source, label) in chunk {
                if let Some(first) = first_seen.get(&cluster.id) {
                    self.eval.diagnostics.push(source.error(
                        label,
                        format!("duplicate cluster ID `{}`", cluster.id),
                        Some(format!("already declared at {}", at(first))),
                    ));
                } else {
                    first_seen.insert(cluster.id.clone(), cluster.location.clone());
                    clusters.push(cluster);
                }
            }
        }
        clusters
    }
}

/// How many cluster blocks one task decodes (each task forks an evaluator): small
/// configurations stay on one thread.
const CLUSTERS_PER_TASK: usize = 32;
