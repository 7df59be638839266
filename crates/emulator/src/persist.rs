//! Loading and saving the store as a JSON file. Saving is atomic: the JSON is
//! written to a temporary file in the same directory (readable by its owner
//! only), flushed to disk, then renamed over the state file, so a crash never
//! leaves a half-written file. One emulator at a time uses a state file: it
//! holds an exclusive lock on a sibling `FILE.lock` for as long as it lives
//! (the state file itself cannot carry the lock, as every save replaces it).
//! A state path that exists but is not a regular file is refused before
//! anything is read or created next to it.

use std::ffi::OsString;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use crate::error::EmulatorError;
use crate::store::{STORE_FORMAT_VERSION, Store};

/// Refuses a state file that exists but is not a regular file (or a link to one): a device
/// such as `/dev/full` or `/dev/zero` would be read without end, a FIFO would block the start,
/// and no save could ever land in either.
pub(crate) fn check_kind(path: &Path) -> Result<(), EmulatorError> {
    let kind = match std::fs::metadata(path) {
        Ok(metadata) if metadata.is_file() => return Ok(()),
        Ok(metadata) => kind_of(&metadata.file_type()),
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(EmulatorError::ReadState {
                path: path.to_owned(),
                source,
            });
        }
    };
    Err(EmulatorError::StateNotAFile {
        path: path.to_owned(),
        kind,
    })
}

/// What a file that is not a regular file is, for the error.
fn kind_of(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if file_type.is_char_device() || file_type.is_block_device() {
            return "a device";
        }
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

/// Takes the lock of the state file at `path`, or fails at once if another
/// emulator holds it. The operating system releases it when the file is
/// closed, or the process ends however it ends.
pub(crate) fn lock(path: &Path) -> Result<File, EmulatorError> {
    let lock = lock_path(path);
    let failed = |source| EmulatorError::LockState {
        path: path.to_owned(),
        lock: lock.clone(),
        source,
    };
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let file = options.open(&lock).map_err(failed)?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(EmulatorError::StateInUse {
            path: path.to_owned(),
            lock,
        }),
        Err(TryLockError::Error(source)) => Err(failed(source)),
    }
}

/// `FILE.lock` next to `FILE`.
fn lock_path(path: &Path) -> PathBuf {
    let mut name = OsString::from(path.as_os_str());
    name.push(".lock");
    PathBuf::from(name)
}

/// The store saved at `path`, or `None` if there is no file yet.
pub(crate) fn load(path: &Path) -> Result<Option<Store>, EmulatorError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(EmulatorError::ReadState {
                path: path.to_owned(),
                source,
            });
        }
    };
    let store: Store =
        serde_json::from_str(&text).map_err(|source| EmulatorError::CorruptState {
            path: path.to_owned(),
            source,
        })?;
    if store.version != STORE_FORMAT_VERSION {
        return Err(EmulatorError::StateVersion {
            path: path.to_owned(),
            found: store.version,
            expected: STORE_FORMAT_VERSION,
        });
    }
    Ok(Some(store))
}

/// Writes `store` to `path` atomically.
pub(crate) fn save(path: &Path, store: &Store) -> Result<(), EmulatorError> {
    let write_error = |source| EmulatorError::WriteState {
        path: path.to_owned(),
        source,
    };
    let json = serde_json::to_vec_pretty(store).map_err(|error| write_error(error.into()))?;
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut temporary = tempfile::NamedTempFile::new_in(directory).map_err(write_error)?;
    temporary.write_all(&json).map_err(write_error)?;
    temporary.as_file().sync_all().map_err(write_error)?;
    temporary
        .persist(path)
        .map_err(|error| write_error(error.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_an_empty_start() {
        let directory = tempfile::tempdir().unwrap();
        assert!(
            load(&directory.path().join("state.json"))
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn a_saved_store_loads_back() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("state.json");
        let mut store = Store::default();
        store.last_operation_id = 41;
        save(&path, &store).unwrap();
        assert_eq!(load(&path).unwrap().unwrap().last_operation_id, 41);
        let leftovers = std::fs::read_dir(directory.path()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file is left behind");
    }

    #[test]
    fn a_state_file_is_locked_until_its_lock_is_dropped() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("state.json");
        let first = lock(&path).unwrap();
        let second = lock(&path).unwrap_err();
        assert!(
            matches!(&second, EmulatorError::StateInUse { path: p, .. } if *p == path),
            "{second}"
        );
        assert!(second.to_string().contains("state.json"), "{second}");
        drop(first);
        lock(&path).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn the_state_and_its_lock_are_private_to_their_owner() {
        use std::os::unix::fs::PermissionsExt as _;

        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("state.json");
        let _lock = lock(&path).unwrap();
        save(&path, &Store::default()).unwrap();
        for file in [path.clone(), lock_path(&path)] {
            let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", file.display());
        }
    }

    #[test]
    fn a_corrupt_file_is_an_error_naming_it() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("state.json");
        std::fs::write(&path, "{not json").unwrap();
        let message = load(&path).unwrap_err().to_string();
        assert!(
            message.starts_with(&format!(
                "the emulator state file {} is corrupt",
                path.display()
            )),
            "{message}"
        );
    }

    #[test]
    fn another_format_version_is_refused() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("state.json");
        std::fs::write(
            &path,
            r#"{"version":9,"lastOperationId":0,"clusters":{},"operations":{}}"#,
        )
        .unwrap();
        assert!(matches!(
            load(&path),
            Err(EmulatorError::StateVersion { found: 9, .. })
        ));
    }
}
