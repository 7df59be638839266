//! Running the work of a load on all cores: tasks are spread over up to as many threads as
//! there are cores (the calling thread is one of them), each thread taking the tasks meant for
//! it first and then helping with the others'. A task names the thread that should preferably
//! run it so that cluster blocks are decoded, and freed, by the thread that parsed them: the
//! allocator frees memory much faster on the thread that allocated it, and several threads
//! freeing into one allocation arena wait on its lock.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use crate::functions::{base_dir, with_base_dir};
use crate::guard::{current_budget, with_budget};

/// A piece of work and the thread (0 is the calling one) that should preferably do it.
#[derive(Debug)]
pub(crate) struct Task<T> {
    pub thread: usize,
    pub item: T,
}

/// What became of a [`Task`], and the thread that did it.
#[derive(Debug)]
pub(crate) struct Done<R> {
    pub thread: usize,
    pub result: R,
}

/// Tasks waiting for a thread, with their position among all tasks.
type Queue<T> = Mutex<VecDeque<(usize, T)>>;

/// Maps every task's item with `f`, in parallel; the results keep the order of the tasks.
/// `f` owns each item, so whatever it does not keep is freed on the thread that used it.
pub(crate) fn in_parallel<T: Send, R: Send>(
    tasks: Vec<Task<T>>,
    f: impl Fn(T) -> R + Sync,
) -> Vec<Done<R>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(tasks.len());
    if threads < 2 {
        let done = |task: Task<T>| Done {
            thread: 0,
            result: f(task.item),
        };
        return tasks.into_iter().map(done).collect();
    }
    let queues: Vec<Queue<T>> = (0..threads).map(|_| Mutex::default()).collect();
    for (index, task) in tasks.into_iter().enumerate() {
        lock(&queues[task.thread % threads]).push_back((index, task.item));
    }
    let mut done: Vec<(usize, Done<R>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (1..threads)
            .map(|thread| {
                // Each worker runs the same evaluation code, so it needs the same base dir,
                // and it draws on the same evaluation budget.
                let (dir, budget) = (base_dir(), current_budget());
                let (queues, f) = (&queues, &f);
                scope.spawn(move || {
                    with_budget(budget, || with_base_dir(&dir, || work(thread, queues, f)))
                })
            })
            .collect();
        let mut done = work(0, &queues, &f);
        for handle in handles {
            done.extend(
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            );
        }
        done
    });
    done.sort_unstable_by_key(|(index, _)| *index);
    done.into_iter().map(|(_, done)| done).collect()
}

/// The loop of one thread: its own tasks first, then any other thread's, until none are left.
fn work<T, R>(thread: usize, queues: &[Queue<T>], f: impl Fn(T) -> R) -> Vec<(usize, Done<R>)> {
    let mut done = Vec::new();
    loop {
        // Each lock is released before `f` runs, so the other threads can take tasks meanwhile.
        let next = (0..queues.len())
            .map(|offset| (thread + offset) % queues.len())
            .find_map(|queue| lock(&queues[queue]).pop_front());
        let Some((index, item)) = next else {
            return done;
        };
        done.push((
            index,
            Done {
                thread,
                result: f(item),
            },
        ));
    }
}

fn lock<T>(queue: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panicking task is re-raised by `in_parallel`; the queue itself stays consistent.
    queue.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_order_of_the_tasks() {
        let tasks: Vec<Task<usize>> = (0..100)
            .map(|item| Task {
                thread: item % 3,
                item,
            })
            .collect();
        let results: Vec<usize> = in_parallel(tasks, |item| item * 2)
            .into_iter()
            .map(|done| done.result)
            .collect();
        assert_eq!(results, (0..100).map(|item| item * 2).collect::<Vec<_>>());
    }

    #[test]
    fn no_tasks_no_results() {
        assert!(in_parallel(Vec::<Task<()>>::new(), |()| ()).is_empty());
    }
}
