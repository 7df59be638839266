//! Running the work of a load on all cores with rayon. Evaluation reads two thread-locals of
//! the load (the base directory of `file` and `templatefile`, and the evaluation budget), and a
//! rayon worker has neither, so every task runs with the caller's values set around it.
//!
//! Until 2026-11 this was a hand-rolled pool that decoded each cluster block on the thread that
//! parsed its file, so that the allocator freed it on the thread that allocated it; the
//! benchmark showed no gain from that over rayon's work stealing (docs/benchmarks.md).

use std::sync::Arc;

use rayon::iter::{IndexedParallelIterator, ParallelIterator};

use crate::language::functions::{base_dir, with_base_dir};
use crate::language::guard::{current_budget, with_budget};

/// Maps every item with `f` on rayon's threads; the results keep the order of the items.
/// `f` owns each item, so whatever it does not keep is freed on the thread that used it.
pub(crate) fn in_parallel<I, R>(items: I, f: impl Fn(I::Item) -> R + Sync) -> Vec<R>
where
    I: IndexedParallelIterator,
    R: Send,
{
    let (dir, budget) = (base_dir(), current_budget());
    items
        .map(|item| with_budget(Arc::clone(&budget), || with_base_dir(&dir, || f(item))))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use rayon::iter::IntoParallelIterator;

    use super::*;

    #[test]
    fn results_keep_the_order_of_the_items() {
        let results = in_parallel((0..1000).into_par_iter(), |item| item * 2);
        assert_eq!(results, (0..1000).map(|item| item * 2).collect::<Vec<_>>());
    }

    #[test]
    fn every_task_sees_the_base_dir_and_budget_of_the_caller() {
        let budget = Arc::default();
        let seen: Vec<(PathBuf, bool)> = with_budget(Arc::clone(&budget), || {
            with_base_dir(Path::new("/configuration"), || {
                in_parallel((0..64).into_par_iter(), |_| {
                    (base_dir(), Arc::ptr_eq(&current_budget(), &budget))
                })
            })
        });
        assert!(
            seen.iter()
                .all(|(dir, shared)| dir == Path::new("/configuration") && *shared),
            "{seen:?}"
        );
    }
}
