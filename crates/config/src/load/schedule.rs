//! Decoding the cluster blocks on all cores: the instances of every block (already expanded)
//! are grouped in tasks of a few dozen, so that one `for_each` block of a thousand instances is
//! spread over the cores as well as a thousand blocks are; each task is decoded by a forked
//! evaluator whose diagnostics are absorbed in order afterwards, and a cluster ID declared twice
//! is reported at the second declaration.

use std::collections::HashMap;

use rayon::iter::{IndexedParallelIterator, IntoParallelIterator};

use super::cluster::{Checked, cluster};
use super::for_each::{ExpandedBlock, Instance, InstanceScope};
use super::{FileBlock, ProviderDefaults, at};
use crate::config::{DesiredCluster, SourceLocation};
use crate::language::evaluator::{Bindings, Evaluator};
use crate::language::parallel::in_parallel;
use crate::language::source::label_range;

/// Decodes and checks the instances of the cluster blocks on parallel threads.
pub(super) fn clusters<'a>(
    eval: &mut Evaluator,
    blocks: Vec<ExpandedBlock<'a>>,
    ctx: &Bindings,
    defaults: &ProviderDefaults,
) -> Vec<Checked<DesiredCluster>> {
    let (file_blocks, instances): (Vec<FileBlock<'a>>, Vec<Vec<Instance>>) =
        blocks.into_iter().unzip();
    let items: Vec<(usize, Instance)> = instances
        .into_iter()
        .enumerate()
        .flat_map(|(index, instances)| instances.into_iter().map(move |i| (index, i)))
        .collect();
    let tasks = items.into_par_iter().chunks(CLUSTERS_PER_TASK);
    let shared: &Evaluator = eval;
    let decoded = in_parallel(tasks, |chunk: Vec<(usize, Instance)>| {
        let mut worker = shared.fork();
        let mut scope = InstanceScope::new(ctx);
        let mut clusters = Vec::with_capacity(chunk.len());
        for (index, (id, each)) in chunk {
            let (source, block) = &file_blocks[index];
            let scope = scope.of(each.as_ref());
            if let Some(cluster) = cluster(&mut worker, source, block, id, scope, defaults) {
                clusters.push((cluster, *source, label_range(block)));
            }
        }
        (clusters, worker)
    });
    // The syntax trees are large: freed on every core, as before the instances were split
    // from their blocks (3–5 ms of a 1,000-block load when freed on one thread).
    in_parallel(file_blocks.into_par_iter(), drop);
    let declared = decoded.iter().map(|(chunk, _)| chunk.len()).sum();
    let mut clusters: Vec<Checked<DesiredCluster>> = Vec::with_capacity(declared);
    let mut first_seen: HashMap<String, SourceLocation> = HashMap::with_capacity(declared);
    for (chunk, worker) in decoded {
        eval.absorb(worker);
        for (cluster, source, label) in chunk {
            if let Some(first) = first_seen.get(&cluster.id) {
                eval.diagnostics.push(source.error(
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

/// How many cluster instances one task decodes (each task forks an evaluator and copies the
/// context once): small configurations stay on one thread.
const CLUSTERS_PER_TASK: usize = 32;
