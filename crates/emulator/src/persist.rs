//! Loading and saving the store as a JSON file. Saving is atomic: the JSON is
//! written to a temporary file in the same directory, flushed to disk, then
//! renamed over the state file, so a crash never leaves a half-written file.

use std::io::{ErrorKind, Write};
use std::path::Path;

use crate::error::EmulatorError;
use crate::store::{STORE_FORMAT_VERSION, Store};

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
        let store = Store {
            last_operation_id: 41,
            ..Store::default()
        };
        save(&path, &store).unwrap();
        assert_eq!(load(&path).unwrap().unwrap().last_operation_id, 41);
        let leftovers = std::fs::read_dir(directory.path()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file is left behind");
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
