//! The state layer's error: the journal, a lock or the state directory cannot be used, or
//! another run holds the stack's lock.

use std::path::PathBuf;
use std::time::Duration;

use clusterform_model::duration::Seconds;

use crate::state::journal::JournalLocation;
use crate::state::lock::LockInfo;
use crate::transport::storage::{Generation, StorageError};

/// Everything that can go wrong with what a run keeps between runs.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// One entry of the journal cannot be used; the cluster it names is left alone.
    #[error("journal {journal}: entry {entry} ({cluster}) cannot be used: {reason}")]
    UnusableJournalEntry {
        /// The journal file or object.
        journal: JournalLocation,
        /// The entry's position in the file, from 1.
        entry: usize,
        /// The cluster the entry names, as far as it can be read.
        cluster: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The journal of in-flight operations cannot be read or written.
    #[error("journal {journal}: {reason}")]
    Journal {
        /// The journal file or object.
        journal: JournalLocation,
        /// What went wrong.
        reason: String,
    },
    /// The journal's Cloud Storage object cannot be read or written (the error names it);
    /// boxed to keep errors small.
    #[error("journal {0}")]
    JournalStorage(#[source] Box<StorageError>),
    /// Another clusterform run holds this configuration's lock.
    #[error("{}", locked_message(path, holder.as_deref(), *waited))]
    Locked {
        /// The lock file.
        path: PathBuf,
        /// Who holds it, when its record could be read; boxed to keep errors small.
        holder: Option<Box<LockInfo>>,
        /// How long this run waited for it: the whole `--lock-timeout` (zero: not at all).
        waited: Duration,
    },
    /// The lock file could not be created or locked.
    #[error("cannot lock {path}: {reason}")]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// What the system said.
        reason: String,
    },
    /// Another clusterform run, perhaps on another machine, holds the stack's lock on Cloud
    /// Storage.
    /// Only ever made from a lock object read as present.
    #[error("{}", remote_locked_message(object, holder.as_deref(), *generation, *waited))]
    RemoteLocked {
        /// The lock object, `gs://BUCKET/OBJECT`.
        object: String,
        /// Who holds it, when the object holds a record; boxed to keep errors small.
        holder: Option<Box<LockInfo>>,
        /// The object's generation when it was last read: the lock's ID for `force-unlock`
        /// when it holds no record.
        generation: Generation,
        /// How long this run waited for it: the whole `--lock-timeout` (zero: not at all).
        waited: Duration,
    },
    /// Cloud Storage refused the lock's create for rate (`429`) again and again, a second
    /// apart, while no lock object was there: nobody holds the lock, but it cannot be taken.
    #[error(
        "the lock object {object} is rate-limited: Cloud Storage refused {creates} creates of it \
         in a row, a second apart (429, too many writes of one object), while no lock was there; \
         the stack is not locked"
    )]
    LockRateLimited {
        /// The lock object, `gs://BUCKET/OBJECT`.
        object: String,
        /// The creates refused in a row.
        creates: u32,
    },
    /// Reading, taking or releasing the lock on Cloud Storage failed; boxed to keep errors
    /// small.
    #[error(transparent)]
    LockStorage(Box<StorageError>),
}

/// `the stack is locked by alice@laptop (pid 4242) running `apply` since … (lock ID …)`, or
/// only that the lock is held when the holder's record cannot be read; after a wait, how long
/// this run waited.
fn locked_message(path: &std::path::Path, holder: Option<&LockInfo>, waited: Duration) -> String {
    let mut message = match holder {
        Some(holder) => format!("the stack is locked by {holder}"),
        None => format!(
            "the stack is locked by another clusterform run (lock {} is held)",
            path.display()
        ),
    };
    if !waited.is_zero() {
        message.push_str(&format!(
            "; still locked after waiting {}",
            Seconds::from(waited)
        ));
    }
    message
}

fn remote_locked_message(
    object: &str,
    holder: Option<&LockInfo>,
    generation: Generation,
    waited: Duration,
) -> String {
    let mut message = match holder {
        Some(holder) => format!("the stack is locked by {holder} at {object}"),
        None => format!(
            "the stack is locked: {object} exists but holds no lock record that can be read \
             (lock ID {generation}, the object's generation)"
        ),
    };
    if !waited.is_zero() {
        message.push_str(&format!(
            "; still locked after waiting {}",
            Seconds::from(waited)
        ));
    }
    message
}
