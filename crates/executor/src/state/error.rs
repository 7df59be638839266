//! The state layer's errors: a stored document (the journal, the applied record) cannot be read
//! or written ([`DocumentError`]); the journal, a lock or the state directory cannot be used, or
//! another run holds the stack's lock ([`StateError`]).

use std::path::PathBuf;
use std::time::Duration;

use clusterform_model::duration::Seconds;

use crate::state::location::DocumentLocation;
use crate::state::lock_info::LockInfo;
use crate::transport::storage::{Generation, StorageError};

/// Everything that can go wrong with what a run keeps between runs.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// One entry of the journal cannot be used; the cluster it names is left alone.
    #[error("journal {journal}: entry {entry} ({cluster}) cannot be used: {reason}")]
    UnusableJournalEntry {
        /// The journal file or object.
        journal: DocumentLocation,
        /// The entry's position in the file, from 1.
        entry: usize,
        /// The cluster the entry names, as far as it can be read.
        cluster: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The journal of in-flight operations cannot be read or written: its file or object cannot
    /// be used, or other runs kept replacing it. Never a Cloud Storage call's error, which is
    /// [`StateError::JournalStorage`].
    #[error("journal {0}")]
    Journal(DocumentError),
    /// A Cloud Storage call on the journal's object failed (the error names the object); boxed
    /// to keep errors small.
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

impl From<DocumentError> for StateError {
    /// The journal's document error: a Cloud Storage call's is [`StateError::JournalStorage`],
    /// so that the hint can point at the bucket rather than at the journal's content.
    fn from(error: DocumentError) -> Self {
        match error {
            DocumentError::Storage { error, .. } => Self::JournalStorage(error),
            other => Self::Journal(other),
        }
    }
}

/// What can go wrong with a stored document (`state/document.rs`): the journal's and the
/// applied record's one error. Every variant names the file or object.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DocumentError {
    /// It cannot be read, or what it holds cannot be used (not JSON, another version).
    #[error("{location}: {reason}")]
    Unreadable {
        /// The file or object.
        location: DocumentLocation,
        /// Why.
        reason: String,
    },
    /// It cannot be encoded, written or removed, or the change asked for is refused.
    #[error("{location}: {reason}")]
    Unwritable {
        /// The file or object.
        location: DocumentLocation,
        /// Why.
        reason: String,
    },
    /// A Cloud Storage call on its object failed (the error names the object too).
    #[error("{error}")]
    Storage {
        /// The object.
        location: DocumentLocation,
        /// What Cloud Storage answered, or why it did not; boxed to keep errors small.
        error: Box<StorageError>,
    },
    /// Another machine wrote the object before every one of this run's attempts to write it.
    #[error("{location}: gave up after {attempts} attempts: other runs kept replacing it")]
    Contended {
        /// The object.
        location: DocumentLocation,
        /// How many writes were attempted.
        attempts: usize,
    },
}

impl DocumentError {
    /// The file or object.
    pub fn location(&self) -> &DocumentLocation {
        match self {
            Self::Unreadable { location, .. }
            | Self::Unwritable { location, .. }
            | Self::Storage { location, .. }
            | Self::Contended { location, .. } => location,
        }
    }

    /// What went wrong, without the location in front (a Cloud Storage error names its
    /// object all the same).
    pub fn reason(&self) -> String {
        match self {
            Self::Unreadable { reason, .. } | Self::Unwritable { reason, .. } => reason.clone(),
            Self::Storage { error, .. } => error.to_string(),
            Self::Contended { attempts, .. } => {
                format!("gave up after {attempts} attempts: other runs kept replacing it")
            }
        }
    }
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
