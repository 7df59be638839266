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
use crate::state::lock_info::LockInfo;
use crate::transport::storage::{Generation, OBJECT_WRITE_INTERVAL, StorageClient, StorageError};

/// How often a run waiting for the lock (`--lock-timeout`) reads it: each read is a request,
/// so less often than the local lock's quarter second.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The creates in a row that Cloud Storage may refuse for rate while no lock is there before a
/// run gives up: an object deleted (released, force-unlocked) takes a write again a second
/// later, so one refusal is usual and a few, a second apart, mean that something keeps writing
/// the object or that the server refuses every write of it.
const RATE_LIMITED_CREATES: u32 = 3;

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
    /// it; a zero timeout fails at once with [`StateError::RemoteLocked`] naming the lock read.
    /// `on_wait` is called once, with the holder, when it starts waiting. While it waits, it
    /// reads the lock every second and tries to create it again only once it is gone: Cloud
    /// Storage takes about one write of an object a second, and a waiter's refused creates
    /// would compete with the holder's release. A create refused for rate while no lock is
    /// there (it was released or removed within the second) is sent again a second later,
    /// whatever the timeout, at most [`RATE_LIMITED_CREATES`] times in a row; then it fails with
    /// [`StateError::LockRateLimited`].
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
        let mut refused_for_rate = 0;
        loop {
            let refusal = match client.take_if_absent(object, &record).await {
                Ok(generation) => {
                    return Ok(Self {
                        client: client.clone(),
                        object: object.to_owned(),
                        generation,
                        taken_at: Instant::now(),
                        info: holder,
                    });
                }
                Err(refusal @ StorageError::PreconditionFailed { .. }) => refusal,
                // The create is not retried (`take_if_absent`): whether another run is taking
                // the lock or released it within the second, the read below tells.
                Err(refusal) if refusal.is_rate_limited() => refusal,
                Err(other) => return Err(lock_storage(other)),
            };
            match StorageLock::holder(client, object).await? {
                Some(held) => {
                    refused_for_rate = 0;
                    wait.until_gone(held, &mut on_wait).await?;
                }
                // Released or removed within the second: nobody holds it, and the object takes
                // a write again a second after the delete.
                None if refusal.is_rate_limited() => {
                    refused_for_rate += 1;
                    if refused_for_rate == RATE_LIMITED_CREATES {
                        return Err(StateError::LockRateLimited {
                            object: location(client, object),
                            creates: refused_for_rate,
                        });
                    }
                    tokio::time::sleep(OBJECT_WRITE_INTERVAL).await;
                }
                // Released between the create and the read: create it again.
                None => {}
            }
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
    /// Reads the lock every second until it is gone, telling `on_wait` (once) who holds it;
    /// fails with [`StateError::RemoteLocked`], naming the lock last read, at the deadline.
    async fn until_gone(
        &self,
        mut held: HeldLock,
        on_wait: &mut Option<impl FnOnce(Option<&LockInfo>)>,
    ) -> Result<(), StateError> {
        loop {
            let remaining = self.deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Err(StateError::RemoteLocked {
                    object: location(self.client, self.object),
                    generation: held.generation,
                    holder: held.info.map(Box::new),
                    waited: self.timeout,
                });
            }
            if let Some(tell) = on_wait.take() {
                tell(held.info.as_ref());
            }
            tokio::time::sleep(POLL_INTERVAL.min(remaining)).await;
            match StorageLock::holder(self.client, self.object).await? {
                Some(still) => held = still,
                None => return Ok(()),
            }
        }
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
