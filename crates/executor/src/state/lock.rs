//! The run lock: one `apply`, `destroy` or `import` at a time per configuration directory.
//!
//! Two runs changing the same clusters would race (both creating a cluster, one patching what
//! the other deletes) and would both rewrite the journal. The lock is an exclusive advisory
//! lock on `.clusterform/lock`; the operating system releases it when the process exits, even
//! after a crash, so a stale lock never blocks the next run. Once it holds the lock, a run
//! writes who it is into the same file (a [`LockInfo`]), so that a refused run can say who
//! holds the lock, since when and for which command. The record is only information: the OS
//! lock decides, and a record that cannot be read just means "held by someone".

use std::fs::{File, TryLockError};
use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::state::error::StateError;
use crate::state::lock_info::LockInfo;
use crate::state::state_dir::{StateDir, open_private_file};

/// How often a run waiting for the lock (`--lock-timeout`) tries again: taking a free lock is
/// one system call, so waiting ends soon after the holder exits.
const POLL_INTERVAL: Duration = Duration::from_millis(250);

/// The most of a lock record that is read: a record is a few hundred bytes, and a file that
/// someone filled with something else must not be read whole.
const MAX_RECORD_BYTES: u64 = 64 * 1024;

/// Held for as long as a run changes clusters; dropping it releases the lock.
#[derive(Debug)]
pub struct RunLock {
    file: File,
    info: LockInfo,
}

impl RunLock {
    /// Takes the lock of the configuration in `config_dir` for `holder`, or fails at once with
    /// [`StateError::Locked`] (naming the holder when its record can be read) if another run
    /// holds it.
    pub fn acquire(config_dir: &Path, holder: LockInfo) -> Result<Self, StateError> {
        Self::acquire_within(config_dir, holder, Duration::ZERO)
    }

    /// Takes the lock, trying again every quarter second for up to `timeout` while another run
    /// holds it; a zero timeout fails at once. Blocks the thread while it waits.
    pub fn acquire_within(
        config_dir: &Path,
        holder: LockInfo,
        timeout: Duration,
    ) -> Result<Self, StateError> {
        let deadline = crate::transport::deadline::after(timeout).into_std();
        let path = StateDir::of(config_dir).lock_file();
        loop {
            if let Some(file) = try_lock(config_dir)? {
                return Self::record(file, &path, holder);
            }
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Err(StateError::Locked {
                    holder: read_holder(&path).map(Box::new),
                    waited: timeout,
                    path,
                });
            }
            std::thread::sleep(POLL_INTERVAL.min(remaining));
        }
    }

    /// Who holds the lock of `config_dir` now, when its record can be read.
    pub fn holder(config_dir: &Path) -> Option<LockInfo> {
        read_holder(&StateDir::of(config_dir).lock_file())
    }

    /// The record this run wrote.
    pub fn info(&self) -> &LockInfo {
        &self.info
    }

    /// Writes the holder's record into the locked file, replacing an earlier holder's.
    fn record(mut file: File, path: &Path, info: LockInfo) -> Result<Self, StateError> {
        let failed = |error: std::io::Error| StateError::Lock {
            path: path.to_path_buf(),
            reason: error.to_string(),
        };
        let text = serde_json::to_string(&info).unwrap_or_default();
        file.set_len(0).map_err(failed)?;
        file.write_all(format!("{text}\n").as_bytes())
            .map_err(failed)?;
        Ok(Self { file, info })
    }
}

impl Drop for RunLock {
    /// Empties the record before the lock goes, so that the next holder's record is the only
    /// one a refused run can read. Failing to empty it is harmless: the OS lock decides.
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
    }
}

/// Opens (creating it if needed) and tries to lock the lock file: `None` while another run
/// holds it.
fn try_lock(config_dir: &Path) -> Result<Option<File>, StateError> {
    let state = StateDir::of(config_dir);
    let path = state.lock_file();
    let failed = |reason: String| StateError::Lock {
        path: path.clone(),
        reason,
    };
    state.create().map_err(|e| failed(e.to_string()))?;
    let file = open_private_file(&path).map_err(|e| failed(e.to_string()))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(error)) => Err(failed(error.to_string())),
    }
}

/// The record in a lock file; `None` when it is empty (the holder has not written it yet),
/// unreadable or not a record.
fn read_holder(path: &Path) -> Option<LockInfo> {
    // A FIFO or a device in its place is refused before it is opened: opening a FIFO waits.
    let bytes = clusterform_files::read_capped(path, MAX_RECORD_BYTES).ok()?;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(command: &str) -> LockInfo {
        LockInfo::for_this_process(command, "9.9.9")
    }

    #[test]
    fn a_second_run_is_refused_until_the_first_releases_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let first = RunLock::acquire(dir.path(), holder("apply")).unwrap();
        assert!(StateDir::of(dir.path()).lock_file().is_file());
        let second = RunLock::acquire(dir.path(), holder("destroy")).unwrap_err();
        assert!(matches!(second, StateError::Locked { .. }), "{second}");
        drop(first);
        RunLock::acquire(dir.path(), holder("destroy")).unwrap();
    }

    #[test]
    fn the_holder_is_recorded_and_named_to_the_refused_run() {
        let dir = tempfile::tempdir().unwrap();
        let first = RunLock::acquire(dir.path(), holder("apply")).unwrap();
        assert_eq!(RunLock::holder(dir.path()).as_ref(), Some(first.info()));

        let refused = RunLock::acquire(dir.path(), holder("destroy")).unwrap_err();
        let StateError::Locked {
            holder: Some(named),
            ..
        } = &refused
        else {
            panic!("the holder is not named: {refused}");
        };
        assert_eq!(**named, *first.info());
        let message = refused.to_string();
        assert!(
            message.starts_with(&format!(
                "the stack is locked by {} (pid {}) running `apply` since ",
                first.info().who,
                std::process::id()
            )),
            "{message}"
        );
        assert!(message.contains(&first.info().id), "{message}");
        assert!(!message.contains("waiting"), "it did not wait: {message}");

        drop(first);
        assert_eq!(
            RunLock::holder(dir.path()),
            None,
            "release empties the record"
        );
    }

    #[test]
    fn a_record_that_cannot_be_read_only_says_the_lock_is_held() {
        let dir = tempfile::tempdir().unwrap();
        let first = RunLock::acquire(dir.path(), holder("apply")).unwrap();
        std::fs::write(StateDir::of(dir.path()).lock_file(), "not a record").unwrap();
        let refused = RunLock::acquire(dir.path(), holder("apply")).unwrap_err();
        assert!(
            matches!(refused, StateError::Locked { holder: None, .. }),
            "{refused}"
        );
        assert!(
            refused
                .to_string()
                .starts_with("the stack is locked by another clusterform run"),
            "{refused}"
        );
        drop(first);
    }

    #[test]
    fn waiting_ends_with_the_holder_named_when_the_timeout_expires() {
        let dir = tempfile::tempdir().unwrap();
        let _first = RunLock::acquire(dir.path(), holder("apply")).unwrap();
        let timeout = Duration::from_millis(600);
        let refused = RunLock::acquire_within(dir.path(), holder("apply"), timeout).unwrap_err();
        let StateError::Locked { holder, waited, .. } = &refused else {
            panic!("{refused}");
        };
        assert!(holder.is_some());
        assert!(*waited >= timeout, "{waited:?}");
        assert!(
            refused.to_string().contains("still locked after"),
            "{refused}"
        );
    }

    #[test]
    fn a_waiting_run_takes_the_lock_once_the_holder_releases_it() {
        let dir = tempfile::tempdir().unwrap();
        let first = RunLock::acquire(dir.path(), holder("apply")).unwrap();
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(400));
            drop(first);
        });
        let second =
            RunLock::acquire_within(dir.path(), holder("destroy"), Duration::from_secs(30))
                .unwrap();
        releaser.join().unwrap();
        assert_eq!(RunLock::holder(dir.path()).as_ref(), Some(second.info()));
        assert_eq!(second.info().command, "destroy");
    }
}
