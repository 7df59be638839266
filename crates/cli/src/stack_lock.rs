//! The stack lock a changing command (`apply`, `destroy`, `import`) holds: the local lock of
//! the configuration directory, or, with `lock "gcs" { ... }` in the provider block, an object
//! on Cloud Storage that every machine applying the stack sees.
//!
//! With the remote lock no local lock is taken: two runs of one directory are two runs of the
//! same stack, so they ask for the same object and the remote lock refuses the second as it
//! refuses a run on another machine. The exception is a lock on the in-process Storage
//! emulator (`endpoint = "local"` without a storage endpoint), which no other process can see:
//! there the local lock is what keeps two runs apart, so it is taken too.
//!
//! The remote lock is released when the command ends, after an error as after success, and on
//! Ctrl-C: outside of an apply's execution the first Ctrl-C releases it and exits; during
//! execution the first Ctrl-C stops waiting as always and the lock is released when the
//! command returns. A second Ctrl-C (or a crash, or SIGKILL) leaves it behind: `force-unlock`.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clusterform::format::notes::Note;
use clusterform_config::Provider;
use clusterform_executor::{LockInfo, RunLock, StateError, StorageLock};
use clusterform_model::Endpoint;

use crate::context::{self, StorageConnection};
use crate::error::CliError;
use crate::interrupt_signal;
use crate::printer::{self, Tell};

/// Set once a command handles Ctrl-C itself (apply's execution stops waiting on the first):
/// from then on the lock's own handler leaves the first Ctrl-C to it.
static INTERRUPTS_HANDLED: AtomicBool = AtomicBool::new(false);

/// Says that the command now handles Ctrl-C itself and will return (releasing the lock).
pub fn interrupts_handled_by_command() {
    INTERRUPTS_HANDLED.store(true, Ordering::SeqCst);
}

/// The lock a run holds.
#[derive(Debug)]
pub enum StackLock {
    /// `.clusterform/lock`, released by the OS when the process ends.
    Local(RunLock),
    /// The object `{prefix}/{stack}.lock` on Cloud Storage (boxed: it is the larger).
    Storage(Box<RemoteLock>),
}

/// A lock on Cloud Storage and what it needs for as long as it is held.
#[derive(Debug)]
pub struct RemoteLock {
    /// The lock.
    lock: StorageLock,
    /// The client (and the in-process emulator, when it is that) the lock lives on: held so
    /// that an in-process emulator serves until the lock is released.
    _connection: StorageConnection,
    /// The local lock, taken too when the bucket is private to this process.
    _local: Option<RunLock>,
}

impl StackLock {
    /// The record this run wrote.
    pub fn info(&self) -> &LockInfo {
        match self {
            Self::Local(lock) => lock.info(),
            Self::Storage(remote) => remote.lock.info(),
        }
    }

    /// Releases the lock. A remote lock that cannot be released is told (`tell`) with the
    /// command that removes it; the run's own outcome stands.
    pub async fn release(self, tell: &dyn Tell) {
        let Self::Storage(remote) = self else {
            return;
        };
        if let Err(note) = release_remote(remote.lock).await {
            tell.tell(&note);
        }
    }

    /// For a remote lock, a task that releases it and exits on Ctrl-C unless the command
    /// handles Ctrl-C itself by then.
    fn release_on_interrupt(&self) -> Option<tokio::task::JoinHandle<()>> {
        let Self::Storage(remote) = self else {
            return None;
        };
        let lock = remote.lock.clone();
        let interrupted = interrupt_signal::next_ctrl_c();
        Some(tokio::spawn(async move {
            if interrupted.await.is_err() {
                return;
            }
            // Once the command handles Ctrl-C itself, the lock is released on its way out.
            while INTERRUPTS_HANDLED.load(Ordering::SeqCst) {
                if tokio::signal::ctrl_c().await.is_err() {
                    return;
                }
            }
            printer::interrupted(&lock.info().command);
            if let Err(note) = release_remote(lock).await {
                printer::lock_left_behind(&note);
            }
            std::process::exit(130);
        }))
    }
}

/// Releases `lock`; the note that says how to remove it when it cannot be released.
async fn release_remote(lock: StorageLock) -> Result<(), Note> {
    let (location, id) = (lock.location(), lock.info().id.clone());
    lock.release().await.map_err(|error| Note::LockNotReleased {
        lock: location,
        error: error.to_string(),
        id,
    })
}

/// What a command locks: its configuration directory, the command's name for the lock record,
/// how long it waits for another run (`--lock-timeout`), and `--endpoint` /
/// `CLUSTERFORM_ENDPOINT` (which decides, with the provider's, whether the Storage emulator is
/// the in-process one).
#[derive(Debug, Clone, Copy)]
pub struct LockRequest<'a> {
    /// The configuration directory.
    pub dir: &'a Path,
    /// `apply`, `destroy`, `import`.
    pub command: &'a str,
    /// How long to wait for a lock another run holds.
    pub timeout: Duration,
    /// The API endpoint given on the command line or in the environment.
    pub endpoint: Option<&'a Endpoint>,
}

/// Takes the lock `request` names (and `provider`, the configuration's when there is one),
/// runs `body` holding it, then releases it, whatever the outcome.
pub async fn with_lock<T>(
    request: LockRequest<'_>,
    provider: Option<&Provider>,
    tell: &dyn Tell,
    body: impl Future<Output = Result<T, CliError>>,
) -> Result<T, CliError> {
    let lock = take_lock(request, provider, tell).await?;
    holding(lock, tell, body).await
}

/// Runs `body` holding `lock`, then releases it, whatever the outcome.
async fn holding<T>(
    lock: StackLock,
    tell: &dyn Tell,
    body: impl Future<Output = Result<T, CliError>>,
) -> Result<T, CliError> {
    tracing::debug!(lock = %lock.info(), "holding the stack lock");
    let on_interrupt = lock.release_on_interrupt();
    let outcome = body.await;
    if let Some(task) = on_interrupt {
        task.abort();
    }
    lock.release(tell).await;
    outcome
}

/// Takes the stack lock `request` names: the `lock` block of `provider` (when there is one)
/// chooses the remote lock, else the local one of the directory. Waits up to the request's
/// timeout for another run to release it, saying so when it has to wait.
pub async fn take_lock(
    request: LockRequest<'_>,
    provider: Option<&Provider>,
    tell: &dyn Tell,
) -> Result<StackLock, CliError> {
    let LockRequest {
        dir,
        command,
        timeout,
        endpoint,
    } = request;
    let holder = LockInfo::for_this_process(command, env!("CARGO_PKG_VERSION"));
    let Some((provider, remote)) = provider.and_then(|p| Some(p).zip(p.lock.as_ref())) else {
        return Ok(StackLock::Local(take_local(dir, holder, timeout, tell)?));
    };
    let endpoint = endpoint.or(provider.endpoint.as_ref());
    let connection = context::connect_storage(remote, endpoint).await?;
    let local = if connection.is_private() {
        Some(take_local(dir, holder.clone(), timeout, tell)?)
    } else {
        None
    };
    let object = clusterform_executor::StackObjects::new(&remote.prefix, &provider.stack).lock();
    let client = &connection.client;
    let lock = StorageLock::acquire(client, &object, holder, timeout, |held_by| {
        say_waiting(timeout, held_by, tell);
    })
    .await?;
    Ok(StackLock::Storage(Box::new(RemoteLock {
        lock,
        _connection: connection,
        _local: local,
    })))
}

/// The local lock of `dir`, waiting up to `timeout` for it.
fn take_local(
    dir: &Path,
    holder: LockInfo,
    timeout: Duration,
    tell: &dyn Tell,
) -> Result<RunLock, CliError> {
    match RunLock::acquire(dir, holder.clone()) {
        Err(StateError::Locked {
            holder: held_by, ..
        }) if !timeout.is_zero() => {
            say_waiting(timeout, held_by.as_deref(), tell);
            Ok(RunLock::acquire_within(dir, holder, timeout)?)
        }
        taken => Ok(taken?),
    }
}

fn say_waiting(timeout: Duration, held_by: Option<&LockInfo>, tell: &dyn Tell) {
    tell.tell(&Note::WaitingForLock {
        timeout,
        holder: held_by.cloned(),
    });
}
