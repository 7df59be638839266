//! The applied record: what clusterform last applied to each cluster — the digest of the
//! declared cluster, the field paths its create or update set, when, and which fallback won —
//! kept beside the journal: `.clusterform/applied.json`, or the object
//! `{prefix}/{stack}.applied.json` beside the journal's object with `lock "gcs"`.
//!
//! The record is advisory: it only words the next plan (a live cluster that differs from a
//! configuration whose digest is the recorded one was changed outside clusterform). So it never
//! fails anything. A record that cannot be read is an empty one (the reason is kept for a `-v`
//! trace), and one that cannot be written is a warning of the run; the next successful apply
//! of a cluster writes its entry again. The engine writes it once per run, after the run's
//! changes, with every cluster the run created, updated, replaced, deleted or released: one
//! write whatever the number of clusters. On Cloud Storage the write carries the generation
//! last read (`ifGenerationMatch`); when another machine wrote in between, the object is read
//! again and this run's changes are made on top of what it holds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use clusterform_files::{Access, remove_durably, write_atomic};
use clusterform_model::{ClusterName, cluster_address};
use serde::{Deserialize, Serialize};

use crate::state::journal::JournalLocation;
use crate::state::state_dir::StateDir;
use crate::transport::storage::{Generation, StorageClient, StorageError};

/// Version of the record's format.
const APPLIED_VERSION: u32 = 1;

/// How many times one write is attempted while other machines keep replacing the object.
const MAX_WRITE_ATTEMPTS: usize = 8;

/// What clusterform last applied to one cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedEntry {
    /// The cluster, written `{"project", "region", "id"}`.
    #[serde(with = "cluster_address")]
    pub address: ClusterName,
    /// The digest of the declared cluster the change brought it to (the planner's
    /// `desired_digest`).
    pub digest: String,
    /// The field paths the last create or update set (a create: every field the configuration
    /// sets), in the plan's spelling.
    pub fields: Vec<String>,
    /// When the change ended, RFC 3339.
    pub applied_at: String,
    /// The `fallback` (from 1) whose machines the create ran on, when the declared ones were
    /// out of capacity or quota: then the pools' machine fields hold that alternative's
    /// values, and the plan compares them with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<usize>,
}

/// One change to the record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppliedChange {
    /// A create or update succeeded: the cluster's entry becomes this one.
    Applied(AppliedEntry),
    /// The cluster was deleted or released: its entry goes.
    Gone(ClusterName),
}

impl AppliedChange {
    fn address(&self) -> &ClusterName {
        match self {
            Self::Applied(entry) => &entry.address,
            Self::Gone(address) => address,
        }
    }
}

/// The record could not be written (a warning of the run, never its failure).
#[derive(Debug, thiserror::Error)]
#[error("the record of applied changes {record} could not be written: {reason}")]
pub struct AppliedRecordError {
    /// The file or object.
    pub record: JournalLocation,
    /// Why.
    pub reason: String,
}

#[derive(Serialize, Deserialize)]
struct AppliedFile {
    version: u32,
    clusters: Vec<AppliedEntry>,
}

/// The applied record of one configuration directory, or of one stack in Cloud Storage.
#[derive(Debug)]
pub struct AppliedRecord {
    location: JournalLocation,
    /// The entries as last read or written, by cluster.
    entries: Mutex<BTreeMap<ClusterName, AppliedEntry>>,
    /// Why the record could not be read when it was opened, if it could not.
    unreadable: Option<String>,
    /// Held across a write.
    store: tokio::sync::Mutex<Store>,
}

#[derive(Debug)]
enum Store {
    File(PathBuf),
    /// Boxed: a client is much larger than a path.
    Object(Box<ObjectStore>),
}

#[derive(Debug)]
struct ObjectStore {
    client: StorageClient,
    object: String,
    /// The generation last read or written; `None` while the object is absent (or was
    /// unreadable).
    generation: Option<Generation>,
}

impl AppliedRecord {
    /// Where the record of a configuration directory lives: `CONFIG_DIR/.clusterform/applied.json`.
    pub fn path_in(config_dir: &Path) -> PathBuf {
        StateDir::of(config_dir).applied_file()
    }

    /// Opens the record of `config_dir` ([`AppliedRecord::path_in`]). A missing file is an
    /// empty record, and so is one that cannot be read (see [`AppliedRecord::unreadable`]).
    pub fn open(config_dir: &Path) -> Self {
        let path = Self::path_in(config_dir);
        let (entries, unreadable) = match std::fs::read(&path) {
            Ok(bytes) => parsed(&bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (BTreeMap::new(), None),
            Err(e) => (BTreeMap::new(), Some(format!("cannot read it: {e}"))),
        };
        Self::with_store(
            JournalLocation::File(path.clone()),
            entries,
            unreadable,
            Store::File(path),
        )
    }

    /// Opens the record kept as `object` in the client's bucket (for a stack,
    /// `{prefix}/{stack}.applied.json`, beside the journal's object). A missing object is an
    /// empty record, and so is one that cannot be read.
    pub async fn open_in_storage(client: StorageClient, object: String) -> Self {
        let location = JournalLocation::Object {
            bucket: client.bucket().to_owned(),
            object: object.clone(),
        };
        let (entries, unreadable, generation) = match client.read(&object).await {
            Ok(None) => (BTreeMap::new(), None, None),
            Ok(Some((bytes, generation))) => {
                let (entries, unreadable) = parsed(&bytes);
                (entries, unreadable, Some(generation))
            }
            Err(e) => (BTreeMap::new(), Some(e.to_string()), None),
        };
        let store = Store::Object(Box::new(ObjectStore {
            client,
            object,
            generation,
        }));
        Self::with_store(location, entries, unreadable, store)
    }

    fn with_store(
        location: JournalLocation,
        entries: BTreeMap<ClusterName, AppliedEntry>,
        unreadable: Option<String>,
        store: Store,
    ) -> Self {
        Self {
            location,
            entries: Mutex::new(entries),
            unreadable,
            store: tokio::sync::Mutex::new(store),
        }
    }

    /// Where the record is kept.
    pub fn location(&self) -> &JournalLocation {
        &self.location
    }

    /// Why the record could not be read when it was opened (it is then empty), if it could not.
    pub fn unreadable(&self) -> Option<&str> {
        self.unreadable.as_deref()
    }

    /// Every entry, by address.
    pub fn entries(&self) -> Vec<AppliedEntry> {
        self.lock().values().cloned().collect()
    }

    /// The entry of `address`, if any.
    pub fn get(&self, address: &ClusterName) -> Option<AppliedEntry> {
        self.lock().get(address).cloned()
    }

    /// Makes `changes` and writes the record once (nothing when there are none). A record that
    /// could not be read is replaced by what this run knows.
    ///
    /// # Errors
    ///
    /// When the file or object cannot be written; the entries stay as they were.
    pub async fn update(&self, changes: &[AppliedChange]) -> Result<(), AppliedRecordError> {
        if changes.is_empty() {
            return Ok(());
        }
        let mut store = self.store.lock().await;
        let current = self.lock().clone();
        let written = match &mut *store {
            Store::File(path) => {
                let updated = changed(current, changes);
                write_file(path.as_path(), &updated).map(|()| updated)
            }
            Store::Object(store) => {
                let ObjectStore {
                    client,
                    object,
                    generation,
                } = &mut **store;
                write_object(client, object.as_str(), generation, current, changes).await
            }
        };
        match written {
            Ok(updated) => {
                *self.lock() = updated;
                Ok(())
            }
            Err(reason) => Err(AppliedRecordError {
                record: self.location.clone(),
                reason,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<ClusterName, AppliedEntry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The entries of a record's bytes, or none and why.
fn parsed(bytes: &[u8]) -> (BTreeMap<ClusterName, AppliedEntry>, Option<String>) {
    match serde_json::from_slice::<AppliedFile>(bytes) {
        Ok(file) if file.version == APPLIED_VERSION => (
            file.clusters
                .into_iter()
                .map(|entry| (entry.address.clone(), entry))
                .collect(),
            None,
        ),
        Ok(file) => (
            BTreeMap::new(),
            Some(format!(
                "format version {} is not supported (expected {APPLIED_VERSION})",
                file.version
            )),
        ),
        Err(e) => (BTreeMap::new(), Some(format!("it is corrupt ({e})"))),
    }
}

/// `entries` with `changes` made in order.
fn changed(
    mut entries: BTreeMap<ClusterName, AppliedEntry>,
    changes: &[AppliedChange],
) -> BTreeMap<ClusterName, AppliedEntry> {
    for change in changes {
        match change {
            AppliedChange::Applied(entry) => {
                entries.insert(entry.address.clone(), entry.clone());
            }
            AppliedChange::Gone(_) => {
                entries.remove(change.address());
            }
        }
    }
    entries
}

/// The record's document, ending with a newline; `None` for an empty record.
fn encoded(entries: &BTreeMap<ClusterName, AppliedEntry>) -> Result<Option<Vec<u8>>, String> {
    if entries.is_empty() {
        return Ok(None);
    }
    let file = AppliedFile {
        version: APPLIED_VERSION,
        clusters: entries.values().cloned().collect(),
    };
    let text = serde_json::to_string_pretty(&file).map_err(|e| format!("cannot encode it: {e}"))?;
    Ok(Some(format!("{text}\n").into_bytes()))
}

/// Replaces the file atomically (0600); an empty record removes it.
fn write_file(path: &Path, entries: &BTreeMap<ClusterName, AppliedEntry>) -> Result<(), String> {
    let Some(content) = encoded(entries)? else {
        return match remove_durably(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("cannot remove it: {e}")),
        };
    };
    if let Some(config_dir) = path.parent().and_then(Path::parent) {
        StateDir::of(config_dir)
            .create()
            .map_err(|e| format!("cannot create its directory: {e}"))?;
    }
    write_atomic(path, &content, Access::Private).map_err(|e| format!("cannot write it: {e}"))
}

/// Writes the object over the generation last seen, making `changes` again on top of what
/// another machine wrote when it wrote in between; answers the entries now stored.
async fn write_object(
    client: &StorageClient,
    object: &str,
    generation: &mut Option<Generation>,
    current: BTreeMap<ClusterName, AppliedEntry>,
    changes: &[AppliedChange],
) -> Result<BTreeMap<ClusterName, AppliedEntry>, String> {
    let mut base = current;
    for _ in 0..MAX_WRITE_ATTEMPTS {
        let updated = changed(base, changes);
        let content = encoded(&updated)?;
        let written = match (content, *generation) {
            (None, None) => Ok(None),
            (None, Some(live)) => client.delete_if(object, live).await.map(|()| None),
            (Some(content), None) => client.create_if_absent(object, &content).await.map(Some),
            (Some(content), Some(live)) => {
                client.replace_if(object, &content, live).await.map(Some)
            }
        };
        match written {
            Ok(now) => {
                *generation = now;
                return Ok(updated);
            }
            Err(StorageError::PreconditionFailed { .. }) => {
                // Another machine wrote it: start again from what it holds now (an unreadable
                // object is replaced).
                let live = client.read(object).await.map_err(|e| e.to_string())?;
                (base, *generation) = match live {
                    None => (BTreeMap::new(), None),
                    Some((bytes, live)) => (parsed(&bytes).0, Some(live)),
                };
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    Err(format!(
        "gave up after {MAX_WRITE_ATTEMPTS} attempts: other runs kept replacing it"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, digest: &str) -> AppliedEntry {
        AppliedEntry {
            address: ClusterName::new("proj-one", "us-central1", id).unwrap(),
            digest: digest.to_owned(),
            fields: vec!["labels".to_owned()],
            applied_at: "2026-11-10T12:00:00Z".to_owned(),
            fallback: None,
        }
    }

    #[tokio::test]
    async fn entries_are_written_replaced_and_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let record = AppliedRecord::open(dir.path());
        assert!(record.entries().is_empty());
        assert_eq!(record.unreadable(), None);
        record
            .update(&[
                AppliedChange::Applied(entry("a", "1")),
                AppliedChange::Applied(entry("b", "2")),
            ])
            .await
            .unwrap();
        let reopened = AppliedRecord::open(dir.path());
        assert_eq!(reopened.entries(), vec![entry("a", "1"), entry("b", "2")]);
        record
            .update(&[
                AppliedChange::Applied(entry("a", "3")),
                AppliedChange::Gone(entry("b", "2").address),
            ])
            .await
            .unwrap();
        assert_eq!(
            AppliedRecord::open(dir.path()).entries(),
            vec![entry("a", "3")]
        );
        record
            .update(&[AppliedChange::Gone(entry("a", "3").address)])
            .await
            .unwrap();
        assert!(!AppliedRecord::path_in(dir.path()).exists());
    }

    #[test]
    fn an_unreadable_record_is_an_empty_one_that_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::of(dir.path());
        state.create().unwrap();
        for (content, why) in [
            ("{\"version\":1,\"clusters\":[", "corrupt"),
            ("{\"version\":7,\"clusters\":[]}", "version 7"),
            ("[]", "corrupt"),
            ("", "corrupt"),
        ] {
            std::fs::write(state.applied_file(), content).unwrap();
            let record = AppliedRecord::open(dir.path());
            assert!(record.entries().is_empty());
            let reason = record.unreadable().unwrap();
            assert!(reason.contains(why), "{reason}");
        }
    }

    #[tokio::test]
    async fn a_corrupt_record_is_replaced_by_the_next_write() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::of(dir.path());
        state.create().unwrap();
        std::fs::write(state.applied_file(), "garbage").unwrap();
        let record = AppliedRecord::open(dir.path());
        record
            .update(&[AppliedChange::Applied(entry("a", "1"))])
            .await
            .unwrap();
        let reopened = AppliedRecord::open(dir.path());
        assert_eq!(reopened.unreadable(), None);
        assert_eq!(reopened.entries(), vec![entry("a", "1")]);
    }
}

#[cfg(all(test, unix))]
mod unix_tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[tokio::test]
    async fn the_record_is_written_private() {
        let dir = tempfile::tempdir().unwrap();
        let record = AppliedRecord::open(dir.path());
        record
            .update(&[AppliedChange::Applied(AppliedEntry {
                address: ClusterName::new("proj-one", "us-central1", "a").unwrap(),
                digest: "d".to_owned(),
                fields: Vec::new(),
                applied_at: "2026-11-10T12:00:00Z".to_owned(),
                fallback: None,
            })])
            .await
            .unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        let state = StateDir::of(dir.path());
        assert_eq!(mode(state.path()), 0o700);
        assert_eq!(mode(&state.applied_file()), 0o600);
    }
}
