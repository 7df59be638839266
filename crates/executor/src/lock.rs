//! The run lock: one `apply`, `destroy` or `import` at a time per configuration directory.
//!
//! Two runs changing the same clusters would race (both creating a cluster, one patching what
//! the other deletes) and would both rewrite the journal. The lock is an exclusive advisory
//! lock on `.clusterform/lock`; the operating system releases it when the process exits, even
//! after a crash, so a stale lock never blocks the next run.

use std::fs::{File, TryLockError};
use std::path::Path;

use crate::error::ExecError;
use crate::state_dir::{StateDir, open_private_file};

/// Held for as long as a run changes clusters; dropping it releases the lock.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

impl RunLock {
    /// Takes the lock of the configuration in `config_dir`, or fails at once if another run
    /// holds it.
    pub fn acquire(config_dir: &Path) -> Result<Self, ExecError> {
        let state = StateDir::of(config_dir);
        let path = state.lock_file();
        let failed = |reason: String| ExecError::Lock {
            path: path.clone(),
            reason,
        };
        state.create().map_err(|e| failed(e.to_string()))?;
        let file = open_private_file(&path).map_err(|e| failed(e.to_string()))?;
        match file.try_lock() {
            Ok(()) => Ok(Self { _file: file }),
            Err(TryLockError::WouldBlock) => Err(ExecError::Locked { path }),
            Err(TryLockError::Error(error)) => Err(failed(error.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_run_is_refused_until_the_first_releases_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let first = RunLock::acquire(dir.path()).unwrap();
        assert!(StateDir::of(dir.path()).lock_file().is_file());
        let second = RunLock::acquire(dir.path()).unwrap_err();
        assert!(matches!(second, ExecError::Locked { .. }), "{second}");
        drop(first);
        RunLock::acquire(dir.path()).unwrap();
    }
}
