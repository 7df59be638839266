//! The applied record: what clusterform last applied to each cluster — the digest of the
//! declared cluster, the label keys it declared, the digest of each field of the cluster it
//! left, and when — kept beside the journal, a stored document (`state/document.rs`):
//! `.clusterform/applied.json`, or the object `{prefix}/{stack}.applied.json` beside the
//! journal's object with `lock "gcs"`.
//!
//! The record is advisory: it only words the next plan (a field whose live value is not the one
//! recorded was changed outside clusterform). So it never
//! fails anything. A record that cannot be read is an empty one (the reason is kept for a `-v`
//! trace), and one that cannot be written is a warning of the run; the next successful apply
//! of a cluster writes its entry again. The engine writes it once per run, after the run's
//! changes, with every cluster the run created, updated, replaced, deleted or released: one
//! write whatever the number of clusters. On Cloud Storage, when another machine wrote in
//! between, the object is read again and this run's changes are made on top of what it holds
//! (an object that cannot be read is replaced).
//!
//! Beside the entries, the record keeps a [`ClusterMark`] for clusters whose last change by
//! clusterform did not end as planned: a create of ours that failed and left its cluster
//! (tainted: the next plan replaces it when it is in `ERROR`), a replacement that deleted the
//! cluster and could not create it again, and a cluster `destroy --idle-for` deleted. A
//! successful create or update of the cluster clears its mark; a delete or release drops it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use clusterform_model::{ClusterName, cluster_address};
use serde::{Deserialize, Serialize};

use crate::state::document::{DocumentContent, StoredDocument};
use crate::state::error::DocumentError;
use crate::state::location::DocumentLocation;
use crate::state::state_dir::StateDir;
use crate::transport::storage::StorageClient;

/// Version of the record's format.
const APPLIED_VERSION: u32 = 1;

/// What clusterform last applied to one cluster. Records written before may hold `fields`
/// and `fallback` too: they are ignored when read, and dropped by the next write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedEntry {
    /// The cluster, written `{"project", "region", "id"}`.
    #[serde(with = "cluster_address")]
    pub address: ClusterName,
    /// The digest of the declared cluster the change brought it to (the planner's
    /// `desired_digest`).
    pub digest: String,
    /// When the change ended, RFC 3339.
    pub applied_at: String,
    /// The label keys the configuration declared (the planner's `declared_labels`): the
    /// labels clusterform manages on the cluster. A key, never a value. Absent in records
    /// written before it was kept (every undeclared label is then someone else's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// The digest of each field of the cluster as the change left it, by the field's path
    /// (the planner's `field_digests` of the cluster the operation returned): the next plan
    /// judges drift field by field from them. Digests, never values. Absent in records
    /// written before they were kept, and when the operation returned no cluster (drift is
    /// then judged from `digest` alone).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub field_digests: BTreeMap<String, String>,
}

/// What the record remembers of a cluster whose last change by clusterform did not end as
/// planned, or that clusterform deleted without the configuration asking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Mark {
    /// A create of ours (a create, a replacement's create, or the attempt a fallback chain
    /// ended on) failed and left its cluster, in `ERROR`: the cluster is tainted, and the next
    /// plan replaces it while it is in `ERROR`.
    CreateFailed {
        /// When the create ended, RFC 3339.
        at: String,
        /// Why it failed, as the run reported it.
        error: String,
    },
    /// A replacement deleted the cluster, then no attempt could create it again: the cluster
    /// is missing.
    DeletedForReplacement {
        /// When the create ended, RFC 3339.
        at: String,
        /// Why the create failed, as the run reported it.
        error: String,
    },
    /// `destroy --idle-for` deleted the cluster for being idle.
    DeletedIdle {
        /// When the delete ended, RFC 3339.
        at: String,
        /// The threshold, as `destroy --idle-for` was given it (`2h`).
        idle_for: String,
        /// What its Slurm showed.
        evidence: String,
    },
}

impl Mark {
    /// Whether the mark says the cluster no longer exists (a tombstone).
    pub fn is_tombstone(&self) -> bool {
        !matches!(self, Self::CreateFailed { .. })
    }
}

/// The mark of one cluster, as the record's file holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterMark {
    /// The cluster, written `{"project", "region", "id"}`.
    #[serde(with = "cluster_address")]
    pub address: ClusterName,
    /// What is remembered.
    pub mark: Mark,
}

/// One change to the record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppliedChange {
    /// A create or update succeeded: the cluster's entry becomes this one, and its mark goes.
    Applied(AppliedEntry),
    /// The cluster was deleted or released: its entry and its mark go.
    Gone(ClusterName),
    /// The cluster gets this mark; a tombstone also drops its entry (there is no cluster for
    /// it to describe).
    Marked(ClusterMark),
    /// The cluster's mark goes (a create an earlier run left in flight ended well); its entry
    /// stays.
    Unmarked(ClusterName),
}

/// The record could not be written (a warning of the run, never its failure).
#[derive(Debug, thiserror::Error)]
#[error(
    "the record of applied changes {} could not be written: {}",
    .0.location(),
    .0.reason()
)]
pub struct AppliedRecordError(pub DocumentError);

#[derive(Serialize, Deserialize)]
struct AppliedFile {
    version: u32,
    clusters: Vec<AppliedEntry>,
    /// Absent from records written before marks were kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    marks: Vec<ClusterMark>,
}

/// What the record holds: the entries and the marks, by cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Contents {
    entries: BTreeMap<ClusterName, AppliedEntry>,
    marks: BTreeMap<ClusterName, Mark>,
}

impl Contents {
    fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.marks.is_empty()
    }
}

/// The applied record of one configuration directory, or of one stack in Cloud Storage.
#[derive(Debug)]
pub struct AppliedRecord {
    location: DocumentLocation,
    /// The entries and marks as last read or written, by cluster.
    contents: Mutex<Contents>,
    /// Why the record could not be read when it was opened, if it could not.
    unreadable: Option<String>,
    /// Held across a write.
    document: tokio::sync::Mutex<StoredDocument<Contents>>,
}

impl AppliedRecord {
    /// Where the record of a configuration directory lives: `CONFIG_DIR/.clusterform/applied.json`.
    pub fn path_in(config_dir: &Path) -> PathBuf {
        StateDir::of(config_dir).applied_file()
    }

    /// Opens the record of `config_dir` ([`AppliedRecord::path_in`]). A missing file is an
    /// empty record, and so is one that cannot be read (see [`AppliedRecord::unreadable`]).
    pub fn open(config_dir: &Path) -> Self {
        let state = StateDir::of(config_dir);
        let path = state.applied_file();
        let (document, contents) = StoredDocument::open_file(state, path);
        Self::with_document(document, contents)
    }

    /// Opens the record kept as `object` in the client's bucket (for a stack,
    /// `{prefix}/{stack}.applied.json`, beside the journal's object: [`crate::StackObjects`]).
    /// A missing object is an empty record, and so is one that cannot be read.
    pub async fn open_in_storage(client: StorageClient, object: String) -> Self {
        let (document, contents) = StoredDocument::open_object(client, object).await;
        Self::with_document(document, contents)
    }

    fn with_document(
        document: StoredDocument<Contents>,
        contents: Result<Contents, DocumentError>,
    ) -> Self {
        let (contents, unreadable) = match contents {
            Ok(contents) => (contents, None),
            Err(error) => (Contents::default(), Some(error.reason())),
        };
        Self {
            location: document.location().clone(),
            contents: Mutex::new(contents),
            unreadable,
            document: tokio::sync::Mutex::new(document),
        }
    }

    /// Where the record is kept.
    pub fn location(&self) -> &DocumentLocation {
        &self.location
    }

    /// Why the record could not be read when it was opened (it is then empty), if it could not.
    pub fn unreadable(&self) -> Option<&str> {
        self.unreadable.as_deref()
    }

    /// Every entry, by address.
    pub fn entries(&self) -> Vec<AppliedEntry> {
        self.lock().entries.values().cloned().collect()
    }

    /// The entry of `address`, if any.
    pub fn get(&self, address: &ClusterName) -> Option<AppliedEntry> {
        self.lock().entries.get(address).cloned()
    }

    /// Every mark, by address.
    pub fn marks(&self) -> Vec<ClusterMark> {
        self.lock()
            .marks
            .iter()
            .map(|(address, mark)| ClusterMark {
                address: address.clone(),
                mark: mark.clone(),
            })
            .collect()
    }

    /// The mark of `address`, if any.
    pub fn mark(&self, address: &ClusterName) -> Option<Mark> {
        self.lock().marks.get(address).cloned()
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
        let mut document = self.document.lock().await;
        let current = self.lock().clone();
        let updated = document
            .write_changed(current, |contents| Some(changed(contents.clone(), changes)))
            .await
            .map_err(AppliedRecordError)?;
        *self.lock() = updated;
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Contents> {
        self.contents.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The record's document: a missing one is an empty record, and an empty record removes it.
impl DocumentContent for Contents {
    /// The record only words plans: one that cannot be read is replaced by what this run knows.
    const ADVISORY: bool = true;

    fn decode(bytes: &[u8]) -> Result<Self, String> {
        let file = serde_json::from_slice::<AppliedFile>(bytes)
            .map_err(|e| format!("it is corrupt ({e})"))?;
        if file.version != APPLIED_VERSION {
            return Err(format!(
                "format version {} is not supported (expected {APPLIED_VERSION})",
                file.version
            ));
        }
        Ok(Self {
            entries: file
                .clusters
                .into_iter()
                .map(|entry| (entry.address.clone(), entry))
                .collect(),
            marks: file
                .marks
                .into_iter()
                .map(|marked| (marked.address, marked.mark))
                .collect(),
        })
    }

    fn encode(&self) -> Result<Option<Vec<u8>>, String> {
        if self.is_empty() {
            return Ok(None);
        }
        let file = AppliedFile {
            version: APPLIED_VERSION,
            clusters: self.entries.values().cloned().collect(),
            marks: self
                .marks
                .iter()
                .map(|(address, mark)| ClusterMark {
                    address: address.clone(),
                    mark: mark.clone(),
                })
                .collect(),
        };
        let text = serde_json::to_string_pretty(&file).map_err(|e| e.to_string())?;
        Ok(Some(format!("{text}\n").into_bytes()))
    }
}

/// `contents` with `changes` made in order.
fn changed(mut contents: Contents, changes: &[AppliedChange]) -> Contents {
    for change in changes {
        match change {
            AppliedChange::Applied(entry) => {
                contents.marks.remove(&entry.address);
                contents
                    .entries
                    .insert(entry.address.clone(), entry.clone());
            }
            AppliedChange::Gone(address) => {
                contents.entries.remove(address);
                contents.marks.remove(address);
            }
            AppliedChange::Marked(ClusterMark { address, mark }) => {
                if mark.is_tombstone() {
                    contents.entries.remove(address);
                }
                contents.marks.insert(address.clone(), mark.clone());
            }
            AppliedChange::Unmarked(address) => {
                contents.marks.remove(address);
            }
        }
    }
    contents
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, digest: &str) -> AppliedEntry {
        AppliedEntry {
            address: ClusterName::new("proj-one", "us-central1", id).unwrap(),
            digest: digest.to_owned(),
            applied_at: "2026-11-10T12:00:00Z".to_owned(),
            labels: Vec::new(),
            field_digests: BTreeMap::new(),
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

    fn marked(id: &str, mark: Mark) -> AppliedChange {
        AppliedChange::Marked(ClusterMark {
            address: entry(id, "").address,
            mark,
        })
    }

    fn create_failed() -> Mark {
        Mark::CreateFailed {
            at: "2026-11-10T12:00:00Z".to_owned(),
            error: "the operation failed".to_owned(),
        }
    }

    fn deleted_idle() -> Mark {
        Mark::DeletedIdle {
            at: "2026-11-10T12:00:00Z".to_owned(),
            idle_for: "2h".to_owned(),
            evidence: "no active job or busy node; last busy 3h ago (>= 2h)".to_owned(),
        }
    }

    #[tokio::test]
    async fn marks_round_trip_and_follow_the_clusters_changes() {
        let dir = tempfile::tempdir().unwrap();
        let record = AppliedRecord::open(dir.path());
        record
            .update(&[
                AppliedChange::Applied(entry("a", "1")),
                AppliedChange::Applied(entry("b", "2")),
                marked("a", create_failed()),
                marked("b", deleted_idle()),
                marked(
                    "c",
                    Mark::DeletedForReplacement {
                        at: "2026-11-10T12:00:00Z".to_owned(),
                        error: "no capacity".to_owned(),
                    },
                ),
            ])
            .await
            .unwrap();
        let reopened = AppliedRecord::open(dir.path());
        assert_eq!(reopened.unreadable(), None);
        // A taint keeps the entry; a tombstone drops it.
        assert_eq!(reopened.entries(), vec![entry("a", "1")]);
        assert_eq!(
            reopened.mark(&entry("a", "").address),
            Some(create_failed())
        );
        assert_eq!(reopened.mark(&entry("b", "").address), Some(deleted_idle()));
        assert_eq!(reopened.marks().len(), 3);
        let text = std::fs::read_to_string(AppliedRecord::path_in(dir.path())).unwrap();
        assert!(text.contains("\"kind\": \"deleted_idle\""), "{text}");
        assert!(text.contains("\"version\": 1"), "{text}");
        // A successful create clears the mark; a delete drops it; an unmark only the mark.
        record
            .update(&[
                AppliedChange::Applied(entry("b", "3")),
                AppliedChange::Gone(entry("c", "").address),
                AppliedChange::Unmarked(entry("a", "").address),
            ])
            .await
            .unwrap();
        let reopened = AppliedRecord::open(dir.path());
        assert!(reopened.marks().is_empty());
        assert_eq!(reopened.entries(), vec![entry("a", "1"), entry("b", "3")]);
    }

    #[test]
    fn a_record_written_before_marks_still_reads() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::of(dir.path());
        state.create().unwrap();
        std::fs::write(
            state.applied_file(),
            r#"{"version":1,"clusters":[{"address":{"project":"proj-one","region":"us-central1","id":"a"},"digest":"1","fields":["labels"],"applied_at":"2026-11-10T12:00:00Z"}]}"#,
        )
        .unwrap();
        let record = AppliedRecord::open(dir.path());
        assert_eq!(record.unreadable(), None);
        assert_eq!(record.entries(), vec![entry("a", "1")]);
        assert!(record.marks().is_empty());
    }

    #[tokio::test]
    async fn fields_no_longer_kept_are_read_past_and_dropped_by_the_next_write() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::of(dir.path());
        state.create().unwrap();
        std::fs::write(
            state.applied_file(),
            r#"{"version":1,"clusters":[{"address":{"project":"proj-one","region":"us-central1","id":"a"},"digest":"1","fields":["labels"],"applied_at":"2026-11-10T12:00:00Z","fallback":2}]}"#,
        )
        .unwrap();
        let record = AppliedRecord::open(dir.path());
        assert_eq!(record.unreadable(), None);
        assert_eq!(record.entries(), vec![entry("a", "1")]);
        record
            .update(&[AppliedChange::Applied(entry("b", "2"))])
            .await
            .unwrap();
        let text = std::fs::read_to_string(state.applied_file()).unwrap();
        assert!(!text.contains("\"fields\""), "{text}");
        assert!(!text.contains("\"fallback\""), "{text}");
    }

    #[tokio::test]
    async fn a_record_of_marks_only_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let record = AppliedRecord::open(dir.path());
        record.update(&[marked("a", deleted_idle())]).await.unwrap();
        assert!(AppliedRecord::path_in(dir.path()).exists());
        record
            .update(&[AppliedChange::Gone(entry("a", "").address)])
            .await
            .unwrap();
        assert!(!AppliedRecord::path_in(dir.path()).exists());
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
                applied_at: "2026-11-10T12:00:00Z".to_owned(),
                labels: Vec::new(),
                field_digests: BTreeMap::new(),
            })])
            .await
            .unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        let state = StateDir::of(dir.path());
        assert_eq!(mode(state.path()), 0o700);
        assert_eq!(mode(&state.applied_file()), 0o600);
    }
}
