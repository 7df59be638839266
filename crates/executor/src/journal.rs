//! The journal of operations in flight: `.clusterform/journal.json` in the configuration
//! directory.
//!
//! An entry is written **before** the executor starts waiting on an operation and removed when
//! the operation is seen done, so that after a crash, a lost connection or Ctrl-C the next run
//! knows what is still running and waits for it instead of sending the call again. Every write
//! replaces the file atomically (temporary file in the same directory, fsync, rename, fsync of
//! the directory): a crash leaves either the old or the new journal, never half of one. A
//! journal that cannot be read is an error naming the file; it is never silently discarded,
//! because discarding it could start a second create.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use clusterform_model::OperationName;
use clusterform_planner::{Action, ClusterAddress, RequestKind};
use serde::{Deserialize, Serialize};

use crate::error::ExecError;
use crate::state_dir::{STATE_DIR, create_state_dir};

/// Version of the journal file format.
const JOURNAL_VERSION: u32 = 1;

/// The journal's file name.
const JOURNAL_FILE: &str = "journal.json";

/// One operation in flight.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// The cluster.
    pub address: ClusterAddress,
    /// The plan action the operation belongs to.
    pub action: Action,
    /// The request that started it.
    pub request: RequestKind,
    /// The operation's name, verbatim.
    pub operation: String,
    /// When the request was sent, RFC 3339.
    pub started_at: String,
    /// The action's timeout in seconds, counted from `started_at`.
    pub timeout_seconds: u64,
}

#[derive(Serialize, Deserialize)]
struct JournalFile {
    version: u32,
    entries: Vec<JournalEntry>,
}

/// The journal of one configuration directory.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    entries: Mutex<Vec<JournalEntry>>,
}

impl Journal {
    /// Opens `CONFIG_DIR/.clusterform/journal.json`; a missing file is an empty journal.
    pub fn open(config_dir: &Path) -> Result<Self, ExecError> {
        let path = config_dir.join(STATE_DIR).join(JOURNAL_FILE);
        let entries = match std::fs::read_to_string(&path) {
            Ok(text) => parse(&path, &text)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(journal_error(&path, format!("cannot read it: {e}"))),
        };
        Ok(Self {
            path,
            entries: Mutex::new(entries),
        })
    }

    /// The journal file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The operations in flight.
    pub fn entries(&self) -> Vec<JournalEntry> {
        self.lock().clone()
    }

    /// Whether no operation is in flight.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Adds an entry and writes the journal before returning.
    pub fn record(&self, entry: JournalEntry) -> Result<(), ExecError> {
        let mut entries = self.lock();
        let mut updated = entries.clone();
        updated.retain(|e| e.operation != entry.operation);
        updated.push(entry);
        self.write(&updated)?;
        *entries = updated;
        Ok(())
    }

    /// Removes the entry of a finished operation and writes the journal before returning.
    pub fn remove(&self, operation: &str) -> Result<(), ExecError> {
        let mut entries = self.lock();
        let mut updated = entries.clone();
        updated.retain(|e| e.operation != operation);
        if updated.len() == entries.len() {
            return Ok(());
        }
        self.write(&updated)?;
        *entries = updated;
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<JournalEntry>> {
        // A panic elsewhere while holding the lock leaves the entries as last written.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Replaces the file atomically; an empty journal removes it.
    fn write(&self, entries: &[JournalEntry]) -> Result<(), ExecError> {
        if entries.is_empty() {
            return match std::fs::remove_file(&self.path) {
                Ok(()) => self.sync_directory(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(journal_error(&self.path, format!("cannot remove it: {e}"))),
            };
        }
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            journal_error(&self.path, format!("{what}: {e}"))
        };
        let dir = self.directory();
        if let Some(config_dir) = dir.parent() {
            create_state_dir(config_dir).map_err(|e| fail("cannot create its directory", &e))?;
        }
        let document = JournalFile {
            version: JOURNAL_VERSION,
            entries: entries.to_vec(),
        };
        let text =
            serde_json::to_string_pretty(&document).map_err(|e| fail("cannot encode it", &e))?;
        let mut temp = tempfile::NamedTempFile::new_in(dir)
            .map_err(|e| fail("cannot create a temporary file", &e))?;
        temp.write_all(text.as_bytes())
            .and_then(|()| temp.write_all(b"\n"))
            .and_then(|()| temp.as_file().sync_all())
            .map_err(|e| fail("cannot write it", &e))?;
        temp.persist(&self.path)
            .map_err(|e| fail("cannot replace it", &e.error))?;
        self.sync_directory()
    }

    fn directory(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    /// Makes the rename itself durable.
    fn sync_directory(&self) -> Result<(), ExecError> {
        std::fs::File::open(self.directory())
            .and_then(|dir| dir.sync_all())
            .map_err(|e| journal_error(&self.path, format!("cannot sync its directory: {e}")))
    }
}

fn parse(path: &Path, text: &str) -> Result<Vec<JournalEntry>, ExecError> {
    let document: JournalFile = serde_json::from_str(text)
        .map_err(|e| journal_error(path, format!("it is corrupt ({e})")))?;
    if document.version != JOURNAL_VERSION {
        return Err(journal_error(
            path,
            format!(
                "format version {} is not supported (expected {JOURNAL_VERSION})",
                document.version
            ),
        ));
    }
    for entry in &document.entries {
        entry.operation.parse::<OperationName>().map_err(|e| {
            journal_error(
                path,
                format!("it is corrupt: entry for {}: {e}", entry.address),
            )
        })?;
    }
    Ok(document.entries)
}

fn journal_error(path: &Path, reason: String) -> ExecError {
    ExecError::Journal {
        path: path.to_owned(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, operation: &str) -> JournalEntry {
        JournalEntry {
            address: ClusterAddress {
                project: "proj-one".into(),
                region: "us-central1".into(),
                id: id.into(),
            },
            action: Action::Create,
            request: RequestKind::Create,
            operation: format!("projects/123/locations/us-central1/operations/{operation}"),
            started_at: "2026-11-10T12:00:00Z".into(),
            timeout_seconds: 7200,
        }
    }

    #[test]
    fn entries_survive_reopening_and_removal_deletes_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path()).unwrap();
        assert!(journal.is_empty());
        journal.record(entry("a", "1")).unwrap();
        journal.record(entry("b", "2")).unwrap();
        let reopened = Journal::open(dir.path()).unwrap();
        assert_eq!(reopened.entries(), vec![entry("a", "1"), entry("b", "2")]);
        journal.remove(&entry("a", "1").operation).unwrap();
        assert_eq!(
            Journal::open(dir.path()).unwrap().entries(),
            vec![entry("b", "2")]
        );
        journal.remove(&entry("b", "2").operation).unwrap();
        assert!(!journal.path().exists());
    }

    #[test]
    fn writes_leave_no_temporary_files() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path()).unwrap();
        for n in 0..5 {
            journal.record(entry("a", &n.to_string())).unwrap();
        }
        let files: Vec<_> = std::fs::read_dir(dir.path().join(STATE_DIR))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(files, vec![JOURNAL_FILE]);
    }

    #[test]
    fn a_corrupt_journal_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(STATE_DIR)).unwrap();
        let path = dir.path().join(STATE_DIR).join(JOURNAL_FILE);
        for corrupt in [
            "{\"version\":1,\"entries\":[",
            "{\"version\":9,\"entries\":[]}",
            "{\"version\":1,\"entries\":[{\"address\":{\"project\":\"p\",\"region\":\"r\",\"id\":\"x\"},\"action\":\"create\",\"request\":\"create\",\"operation\":\"../../etc\",\"started_at\":\"\",\"timeout_seconds\":1}]}",
        ] {
            std::fs::write(&path, corrupt).unwrap();
            let err = Journal::open(dir.path()).unwrap_err();
            assert!(err.to_string().contains(&*path.to_string_lossy()), "{err}");
            assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                corrupt,
                "file was touched"
            );
        }
    }
}
