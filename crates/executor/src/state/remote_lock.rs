//! The stack lock on Cloud Storage, for a team that applies one stack from several machines.
//!
//! The lock is one object (`{prefix}/{stack}.lock`) holding the holder's [`LockInfo`] as JSON.
//! It is taken by creating the object only if none exists (`ifGenerationMatch=0`), so of two
//! machines racing for it exactly one wins; the other reads who holds it. It is released by
//! deleting it only if its generation is still the one this run wrote, so a run never deletes
//! a lock someone else took (after a `force-unlock`, say). Unlike the local lock, nothing
//! releases it when the process dies: a lock left by a crash is removed with `force-unlock`,
//! which reads the lock and deletes exactly the generation it read. A lock object that holds no
//! readable record (written by something else, or damaged) is named by its generation instead
//! of a record's ID, so that it too can be removed.

use std::time::Duration;

use tokio::time::Instant;

use crate::state::error::StateError;
use crate::state::lock::LockInfo;
use crate::transport::storage::{Generation, OBJECT_WRITE_INTERVAL, StorageClient, StorageError};

/// How often a run waiting for the lock (`--lock-timeout`) reads it: each read is a request,
/// so less often than the local lock's quarter second.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The stack lock this run holds on Cloud Storage. Cheap to clone (a clone releases the same
/// acquisition: only one release finds the object).
#[derive(Debug, Clone)]
pub struct StorageLock {
    client: StorageClient,
    object: String,
    generation: Generation,
    /// When the lock was written: its release waits [`OBJECT_WRITE_INTERVAL`] from then, since
    /// a release refused for rate until the retries run out would leave the lock behind.
    taken_at: Instant,
    info: LockInfo,
}

/// A lock object as read: its generation and, when it is a record, who holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldLock {
    /// The holder's record; `None` when the object holds something else.
    pub info: Option<LockInfo>,
    /// The generation read: what a forced removal deletes, and nothing newer.
    pub generation: Generation,
}

impl HeldLock {
    /// The ID `force-unlock` takes: the record's, or the generation's when the object holds
    /// no record, which has no ID of its own and must still be removable.
    pub fn id(&self) -> String {
        self.info
            .as_ref()
            .map_or_else(|| self.generation.to_string(), |info| info.id.clone())
    }
}

impl StorageLock {
    /// Takes the lock `object` for `holder`, waiting up to `timeout` while another run holds
    /// it; a zero timeout fails at once with [`StateError::RemoteLocked`] naming the holder.
    /// `on_wait` is called once, with the holder, when it starts waiting. While it waits, it
    /// reads the lock every second and tries to create it again only once it is gone: Cloud
    /// Storage takes about one write of an object a second, and a waiter's refused creates
    /// would compete with the holder's release.
    pub async fn acquire(
        client: &StorageClient,
        object: &str,
        holder: LockInfo,
        timeout: Duration,
        on_wait: impl FnOnce(Option<&LockInfo>),
    ) -> Result<Self, StateError> {
        let mut on_wait = Some(on_wait);
        let wait = LockWait {
            client,
            object,
            deadline: crate::transport::deadline::after(timeout),
            timeout,
        };
        let record = serde_json::to_vec(&holder).unwrap_or_default();
        loop {
            let just_written = match client.take_if_absent(object, &record).await {
                Ok(generation) => {
                    return Ok(Self {
                        client: client.clone(),
                        object: object.to_owned(),
                        generation,
                        taken_at: Instant::now(),
                        info: holder,
                    });
                }
                Err(StorageError::PreconditionFailed { .. }) => false,
                // Another run wrote the lock within the last second, taking or releasing it:
                // look at it, and write no sooner than a second later. The create is not
                // retried (`take_if_absent`), so a zero timeout fails at once.
                Err(error) if error.is_rate_limited() => true,
                Err(other) => return Err(lock_storage(other)),
            };
            wait.until_free(just_written, &mut on_wait).await?;
        }
    }

    /// The lock object as it is now; `None` when nobody holds the lock.
    pub async fn holder(
        client: &StorageClient,
        object: &str,
    ) -> Result<Option<HeldLock>, StateError> {
        let Some((content, generation)) = client.read(object).await.map_err(lock_storage)? else {
            return Ok(None);
        };
        Ok(Some(HeldLock {
            info: serde_json::from_slice(&content).ok(),
            generation,
        }))
    }

    /// Deletes the lock `held` describes, whoever holds it (`force-unlock`). Fails with a
    /// precondition error if the lock was released and taken again since it was read.
    pub async fn remove(
        client: &StorageClient,
        object: &str,
        held: &HeldLock,
    ) -> Result<(), StateError> {
        client
            .delete_if(object, held.generation)
            .await
            .map_err(lock_storage)
    }

    /// Releases the lock: deletes the object if it is still the generation this run wrote.
    pub async fn release(self) -> Result<(), StateError> {
        tokio::time::sleep_until(self.taken_at + OBJECT_WRITE_INTERVAL).await;
        self.client
            .delete_if(&self.object, self.generation)
            .await
            .map_err(lock_storage)
    }

    /// The record this run wrote.
    pub fn info(&self) -> &LockInfo {
        &self.info
    }

    /// The generation this run wrote.
    pub fn generation(&self) -> Generation {
        self.generation
    }

    /// `gs://BUCKET/OBJECT`.
    pub fn location(&self) -> String {
        location(&self.client, &self.object)
    }
}

/// A wait for a lock another run holds, until `deadline` (`timeout` after the wait began).
struct LockWait<'a> {
    client: &'a StorageClient,
    object: &'a str,
    deadline: Instant,
    timeout: Duration,
}

impl LockWait<'_> {
    /// Reads the lock every second until it is gone and was not written within the last second
    /// (`just_written`: a create of ours was refused for rate), telling `on_wait` (once) who
    /// holds it; fails with [`StateError::RemoteLocked`] at the deadline.
    async fn until_free(
        &self,
        mut just_written: bool,
        on_wait: &mut Option<impl FnOnce(Option<&LockInfo>)>,
    ) -> Result<(), StateError> {
        let mut held = StorageLock::holder(self.client, self.object).await?;
        while held.is_some() || just_written {
            let remaining = self.deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Err(StateError::RemoteLocked {
                    object: location(self.client, self.object),
                    generation: held.as_ref().map(|lock| lock.generation),
                    holder: held.and_then(|lock| lock.info).map(Box::new),
                    waited: self.timeout,
                });
            }
            if let Some(tell) = on_wait.take() {
                tell(held.as_ref().and_then(|lock| lock.info.as_ref()));
            }
            tokio::time::sleep(POLL_INTERVAL.min(remaining)).await;
            just_written = false;
            held = StorageLock::holder(self.client, self.object).await?;
        }
        Ok(())
    }
}

/// `gs://BUCKET/OBJECT`.
pub fn location(client: &StorageClient, object: &str) -> String {
    format!("gs://{}/{object}", client.bucket())
}

/// A Storage error met on the lock object (the journal's are told apart as
/// [`StateError::JournalStorage`]).
fn lock_storage(error: StorageError) -> StateError {
    StateError::LockStorage(Box::new(error))
}
