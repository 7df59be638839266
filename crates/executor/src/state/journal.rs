//! The journal of operations in flight: `.clusterform/journal.json` in the configuration
//! directory, or a Cloud Storage object shared by every machine that runs the stack, a stored
//! document (`state/document.rs`) whose changes are records and removals of operations.
//!
//! An entry is written **before** the executor starts waiting on an operation and removed when
//! the operation is seen done, so that after a crash, a lost connection or Ctrl-C the next run
//! (on this machine or, with the object, any other) knows what is still running and waits for
//! it instead of sending the call again. Every write replaces the file atomically (temporary
//! file in the same directory, fsync, rename, fsync of the directory), or the object under a
//! generation precondition: a crash leaves either the old or the new journal, never half of
//! one. A journal that cannot be read as a whole is an error naming the file or object; it is
//! never silently
//! discarded, because discarding it could start a second create. One entry that cannot be used
//! (a malformed operation name, an unknown field, a wrong type) is kept in the file as it is and
//! reported with the file and its position; it blocks only the cluster it names (every cluster,
//! when not even its address can be read), never the others.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use clusterform_model::rest::RequestKind;
use clusterform_model::{Action, ClusterName, OperationName, cluster_address};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::state::document::{DocumentContent, StoredDocument};
use crate::state::error::{DocumentError, StateError};
use crate::state::location::DocumentLocation;
use crate::state::state_dir::StateDir;
use crate::transport::storage::StorageClient;

/// Version of the journal file format.
const JOURNAL_VERSION: u32 = 1;

/// One operation in flight.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JournalEntry {
    /// The cluster, written `{"project", "region", "id"}`.
    #[serde(with = "cluster_address")]
    pub address: ClusterName,
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
    /// For a create (or an update adding node pools) walking its pools' fallbacks: the attempt
    /// (0: as declared) the operation belongs to. A delete with an attempt removes the cluster
    /// that attempt's failed create left behind. Such an entry outlives its operation when
    /// the chain goes on (the attempt failed for capacity or quota, or its cluster is deleted),
    /// so that a run interrupted between two attempts starts the next one, never one again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<usize>,
}

impl JournalEntry {
    /// Whether the entry holds a place in its cluster's fallback chain.
    pub fn is_in_chain(&self) -> bool {
        self.attempt.is_some()
    }
}

/// An entry of the file that cannot be used, as [`Journal::unusable`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnusableEntry {
    /// Its position in the file's `entries`, from 1.
    pub entry: usize,
    /// The cluster it names, when that much can be read.
    pub address: Option<ClusterName>,
    /// What is wrong with it.
    pub reason: String,
}

#[derive(Serialize, Deserialize)]
struct JournalFile {
    version: u32,
    entries: Vec<Value>,
}

/// One entry of the file, in file order.
#[derive(Debug, Clone)]
enum Slot {
    Usable(JournalEntry),
    /// Kept verbatim, so that whoever fixes the file by hand still has what it said.
    Unusable {
        raw: Value,
        address: Option<ClusterName>,
        reason: String,
    },
}

/// One change to the journal, applied on top of whatever the store holds when it is written.
#[derive(Debug, Clone)]
enum Change {
    /// Adds an entry (replacing one of the same operation).
    Record(JournalEntry),
    /// Removes the entry of an operation.
    Remove(String),
    /// Removes every fallback-chain entry of a cluster (its chain ended).
    EndChain(ClusterName),
}

impl Change {
    /// `slots` with `changes` made in order, or `None` when they change nothing.
    fn apply_all(changes: &[Change], slots: &[Slot]) -> Option<Vec<Slot>> {
        let mut updated: Option<Vec<Slot>> = None;
        for change in changes {
            if let Some(next) = change.apply(updated.as_deref().unwrap_or(slots)) {
                updated = Some(next);
            }
        }
        updated
    }

    /// `slots` with this change made, or `None` when it changes nothing.
    fn apply(&self, slots: &[Slot]) -> Option<Vec<Slot>> {
        let mut updated = slots.to_vec();
        match self {
            Self::Record(entry) => {
                // A later place in a chain takes the earlier one's in the same write.
                let taken = |slot: &Slot| {
                    is_entry_of(slot, &entry.operation)
                        || (entry.is_in_chain() && is_chain_entry_of(slot, &entry.address))
                };
                updated.retain(|slot| !taken(slot));
                updated.push(Slot::Usable(entry.clone()));
            }
            Self::Remove(operation) => {
                updated.retain(|slot| !is_entry_of(slot, operation));
                if updated.len() == slots.len() {
                    return None;
                }
            }
            Self::EndChain(address) => {
                updated.retain(|slot| !is_chain_entry_of(slot, address));
                if updated.len() == slots.len() {
                    return None;
                }
            }
        }
        Some(updated)
    }
}

/// The journal of one configuration directory, or of one stack in Cloud Storage.
#[derive(Debug)]
pub struct Journal {
    location: DocumentLocation,
    /// The entries as last read or written; never locked across an await.
    slots: Mutex<Vec<Slot>>,
    /// Held across a write, so that writes are made one at a time.
    document: tokio::sync::Mutex<StoredDocument<Vec<Slot>>>,
    /// Changes asked for and not yet taken by a write, each with where its outcome goes.
    queued: Mutex<Vec<QueuedChange>>,
}

/// A change waiting for a write, and the sender of its outcome to whoever asked for it.
#[derive(Debug)]
struct QueuedChange {
    change: Change,
    outcome: oneshot::Sender<Result<(), DocumentError>>,
}

impl Journal {
    /// Where the journal of a configuration directory lives: `CONFIG_DIR/.clusterform/journal.json`.
    pub fn path_in(config_dir: &Path) -> PathBuf {
        StateDir::of(config_dir).journal_file()
    }

    /// Opens the journal of `config_dir` ([`Journal::path_in`]); a missing file is an empty
    /// journal.
    pub fn open(config_dir: &Path) -> Result<Self, StateError> {
        let state = StateDir::of(config_dir);
        let path = state.journal_file();
        let (document, slots) = StoredDocument::open_file(state, path);
        Ok(Self::with_document(document, slots?))
    }

    /// Opens the journal kept as `object` in the client's bucket (for a stack,
    /// `{prefix}/{stack}.journal.json`: [`crate::StackObjects`]); a missing object is an empty
    /// journal. Errors name `gs://BUCKET/OBJECT`.
    pub async fn open_in_storage(
        client: StorageClient,
        object: String,
    ) -> Result<Self, StateError> {
        let (document, slots) = StoredDocument::open_object(client, object).await;
        Ok(Self::with_document(document, slots?))
    }

    fn with_document(document: StoredDocument<Vec<Slot>>, slots: Vec<Slot>) -> Self {
        Self {
            location: document.location().clone(),
            slots: Mutex::new(slots),
            document: tokio::sync::Mutex::new(document),
            queued: Mutex::new(Vec::new()),
        }
    }

    /// Where the journal is kept.
    pub fn location(&self) -> &DocumentLocation {
        &self.location
    }

    /// The operations in flight (the usable entries).
    pub fn entries(&self) -> Vec<JournalEntry> {
        self.lock()
            .iter()
            .filter_map(|slot| match slot {
                Slot::Usable(entry) => Some(entry.clone()),
                Slot::Unusable { .. } => None,
            })
            .collect()
    }

    /// The entries that cannot be used.
    pub fn unusable(&self) -> Vec<UnusableEntry> {
        self.lock()
            .iter()
            .enumerate()
            .filter_map(|(index, slot)| match slot {
                Slot::Usable(_) => None,
                Slot::Unusable {
                    address, reason, ..
                } => Some(UnusableEntry {
                    entry: index + 1,
                    address: address.clone(),
                    reason: reason.clone(),
                }),
            })
            .collect()
    }

    /// Whether the journal holds no entry at all, usable or not.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// The error refusing any action on `address`, when an unusable entry names that cluster
    /// or cannot say which cluster it names: the operation it recorded may still be running.
    pub fn blocked(&self, address: &ClusterName) -> Result<(), StateError> {
        let Some(unusable) = self
            .unusable()
            .into_iter()
            .find(|u| u.address.as_ref().is_none_or(|a| a == address))
        else {
            return Ok(());
        };
        Err(StateError::UnusableJournalEntry {
            journal: self.location.clone(),
            entry: unusable.entry,
            cluster: unusable.address.map_or_else(
                || "cluster unknown".to_owned(),
                |a| format!("{}/{}/{}", a.project(), a.region(), a.id()),
            ),
            reason: unusable.reason,
        })
    }

    /// Adds an entry and writes the journal before returning. An entry that a later run could
    /// not use is refused: writing it would leave the operation unfollowable.
    pub async fn record(&self, entry: JournalEntry) -> Result<(), StateError> {
        check_entry(&entry).map_err(|reason| {
            StateError::Journal(DocumentError::Unwritable {
                location: self.location.clone(),
                reason: format!(
                    "refusing to record an unusable entry for {}: {reason}",
                    entry.address.id()
                ),
            })
        })?;
        self.commit(Change::Record(entry)).await
    }

    /// Removes the entry of a finished operation and writes the journal before returning.
    pub async fn remove(&self, operation: &str) -> Result<(), StateError> {
        self.commit(Change::Remove(operation.to_owned())).await
    }

    /// The last attempt of `address`'s fallback chain that an earlier run saw fail (its entry
    /// outlived its operation), if the chain is still open.
    pub fn failed_attempt(&self, address: &ClusterName) -> Option<usize> {
        self.entries()
            .into_iter()
            .filter(|entry| entry.address == *address)
            .filter_map(|entry| entry.attempt)
            .max()
    }

    /// Ends `address`'s fallback chain: removes its chain entries, and writes the journal
    /// (only when there were some) before returning.
    pub async fn end_chain(&self, address: &ClusterName) -> Result<(), StateError> {
        if self.failed_attempt(address).is_none() {
            return Ok(());
        }
        self.commit(Change::EndChain(address.clone())).await
    }

    /// Writes `change` through the store and returns once a write holding it is done; the
    /// entries become what the store now holds. Changes asked for while another write is in
    /// progress are written together by the next one (a group commit): many operations
    /// starting or ending at once cost one write, where Cloud Storage takes about one write of
    /// an object a second and the local file one fsync per write.
    async fn commit(&self, change: Change) -> Result<(), StateError> {
        let (sender, mut outcome) = oneshot::channel();
        self.queue().push(QueuedChange {
            change,
            outcome: sender,
        });
        let mut document = self.document.lock().await;
        // A write that held the lock before us may have taken our change; if not, ours takes it.
        if outcome.is_empty() {
            self.write_queued(&mut document).await;
        }
        let written = outcome.try_recv().unwrap_or_else(|_| {
            Err(DocumentError::Unwritable {
                location: self.location.clone(),
                reason: "a change was left out of every write".to_owned(),
            })
        });
        Ok(written?)
    }

    /// Writes every queued change in one write, once the store takes one, and tells each
    /// asker how it went.
    async fn write_queued(&self, document: &mut StoredDocument<Vec<Slot>>) {
        document.ready_to_write().await;
        let batch = std::mem::take(&mut *self.queue());
        let changes: Vec<Change> = batch.iter().map(|queued| queued.change.clone()).collect();
        let current = self.lock().clone();
        let written = document
            .write_changed(current, |slots| Change::apply_all(&changes, slots))
            .await;
        if let Ok(stored) = &written {
            self.lock().clone_from(stored);
        }
        for queued in batch {
            // Whoever asked may have stopped waiting; the change is written all the same.
            let _ = queued
                .outcome
                .send(written.as_ref().map(|_| ()).map_err(Clone::clone));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Slot>> {
        // A panic elsewhere while holding the lock leaves the entries as last written.
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, Vec<QueuedChange>> {
        self.queued.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The journal's document: a missing one is an empty journal, and an empty journal removes it.
impl DocumentContent for Vec<Slot> {
    /// A journal that cannot be read is never written over: it may name operations still
    /// running.
    const ADVISORY: bool = false;

    fn decode(bytes: &[u8]) -> Result<Self, String> {
        parse(bytes)
    }

    fn encode(&self) -> Result<Option<Vec<u8>>, String> {
        if self.is_empty() {
            return Ok(None);
        }
        let text = encode(self).map_err(|e| e.to_string())?;
        Ok(Some(text.into_bytes()))
    }
}

/// The journal document of `slots`, unusable entries verbatim, ending with a newline.
fn encode(slots: &[Slot]) -> Result<String, serde_json::Error> {
    let entries = slots
        .iter()
        .map(|slot| match slot {
            Slot::Usable(entry) => serde_json::to_value(entry),
            Slot::Unusable { raw, .. } => Ok(raw.clone()),
        })
        .collect::<Result<_, _>>()?;
    let document = JournalFile {
        version: JOURNAL_VERSION,
        entries,
    };
    Ok(format!("{}\n", serde_json::to_string_pretty(&document)?))
}

fn is_entry_of(slot: &Slot, operation: &str) -> bool {
    matches!(slot, Slot::Usable(entry) if entry.operation == operation)
}

fn is_chain_entry_of(slot: &Slot, address: &ClusterName) -> bool {
    matches!(slot, Slot::Usable(entry) if entry.is_in_chain() && entry.address == *address)
}

/// The whole journal: it must be JSON of this version with a list of entries; each entry is
/// then judged on its own.
fn parse(bytes: &[u8]) -> Result<Vec<Slot>, String> {
    let document: JournalFile =
        serde_json::from_slice(bytes).map_err(|e| format!("it is corrupt ({e})"))?;
    if document.version != JOURNAL_VERSION {
        return Err(format!(
            "format version {} is not supported (expected {JOURNAL_VERSION})",
            document.version
        ));
    }
    Ok(document.entries.into_iter().map(parse_entry).collect())
}

fn parse_entry(raw: Value) -> Slot {
    let entry = serde_json::from_value::<JournalEntry>(raw.clone()).map_err(|e| e.to_string());
    match entry.and_then(|entry| check_entry(&entry).map(|()| entry)) {
        Ok(entry) => Slot::Usable(entry),
        Err(reason) => Slot::Unusable {
            address: raw
                .get("address")
                .and_then(|a| cluster_address::deserialize(a).ok()),
            raw,
            reason,
        },
    }
}

/// What a later run needs of an entry: an operation it can ask about (its cluster's name is
/// valid by construction).
fn check_entry(entry: &JournalEntry) -> Result<(), String> {
    entry
        .operation
        .parse::<OperationName>()
        .map_err(|e| e.to_string())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, operation: &str) -> JournalEntry {
        JournalEntry {
            address: ClusterName::new("proj-one", "us-central1", id).unwrap(),
            action: Action::Create,
            request: RequestKind::Create,
            operation: format!("projects/123/locations/us-central1/operations/{operation}"),
            started_at: "2026-11-10T12:00:00Z".into(),
            timeout_seconds: 7200,
            attempt: None,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn changes_asked_for_at_once_all_land_whichever_write_takes_them() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path()).unwrap();
        let entries: Vec<JournalEntry> = (0..40)
            .map(|n| entry(&format!("c{n}"), &n.to_string()))
            .collect();
        let records = entries.iter().map(|e| journal.record(e.clone()));
        for recorded in futures::future::join_all(records).await {
            recorded.unwrap();
        }
        let mut reopened = Journal::open(dir.path()).unwrap().entries();
        reopened.sort_by(|a, b| a.operation.cmp(&b.operation));
        let mut expected = entries.clone();
        expected.sort_by(|a, b| a.operation.cmp(&b.operation));
        assert_eq!(reopened, expected);

        let removals = entries.iter().map(|e| journal.remove(&e.operation));
        for removed in futures::future::join_all(removals).await {
            removed.unwrap();
        }
        assert!(journal.is_empty());
        assert!(!Journal::path_in(dir.path()).exists());
    }

    #[tokio::test]
    async fn entries_survive_reopening_and_removal_deletes_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path()).unwrap();
        assert!(journal.is_empty());
        journal.record(entry("a", "1")).await.unwrap();
        journal.record(entry("b", "2")).await.unwrap();
        let reopened = Journal::open(dir.path()).unwrap();
        assert_eq!(reopened.entries(), vec![entry("a", "1"), entry("b", "2")]);
        journal.remove(&entry("a", "1").operation).await.unwrap();
        assert_eq!(
            Journal::open(dir.path()).unwrap().entries(),
            vec![entry("b", "2")]
        );
        journal.remove(&entry("b", "2").operation).await.unwrap();
        assert!(!Journal::path_in(dir.path()).exists());
    }

    #[tokio::test]
    async fn writes_leave_no_temporary_files() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path()).unwrap();
        for n in 0..5 {
            journal.record(entry("a", &n.to_string())).await.unwrap();
        }
        let files: Vec<_> = std::fs::read_dir(StateDir::of(dir.path()).path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(files, vec!["journal.json"]);
    }

    #[test]
    fn a_corrupt_journal_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::of(dir.path());
        state.create().unwrap();
        let path = state.journal_file();
        for corrupt in [
            "{\"version\":1,\"entries\":[",
            "{\"version\":9,\"entries\":[]}",
            "{\"version\":1,\"entries\":{}}",
            "[]",
            "",
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

    fn with_operation(mut entry: JournalEntry, operation: &str) -> Value {
        entry.operation = operation.to_owned();
        serde_json::to_value(entry).unwrap()
    }

    /// A file whose second entry is `bad`, around two good ones.
    fn write_with_bad_entry(dir: &Path, bad: &Value) -> PathBuf {
        let state = StateDir::of(dir);
        state.create().unwrap();
        let path = state.journal_file();
        let document = serde_json::json!({"version": 1, "entries": [
            serde_json::to_value(entry("a", "1")).unwrap(),
            bad,
            serde_json::to_value(entry("c", "3")).unwrap(),
        ]});
        std::fs::write(&path, document.to_string()).unwrap();
        path
    }

    #[test]
    fn an_unusable_entry_is_reported_and_the_others_stay_usable() {
        let mut unknown_field = serde_json::to_value(entry("b", "2")).unwrap();
        unknown_field["extra"] = serde_json::json!(1);
        let mut wrong_type = serde_json::to_value(entry("b", "2")).unwrap();
        wrong_type["timeout_seconds"] = serde_json::json!("soon");
        let mut bad_address = serde_json::to_value(entry("b", "2")).unwrap();
        bad_address["address"]["id"] = serde_json::json!("../x");
        for bad in [
            with_operation(entry("b", "2"), ""),
            with_operation(entry("b", "2"), "../x"),
            with_operation(entry("b", "2"), "https://evil.example/operations/1"),
            with_operation(
                entry("b", "2"),
                "projects/1/locations/us-central1/operations/../../x",
            ),
            unknown_field,
            wrong_type,
            bad_address,
        ] {
            let dir = tempfile::tempdir().unwrap();
            write_with_bad_entry(dir.path(), &bad);
            let journal = Journal::open(dir.path()).unwrap();
            assert_eq!(journal.entries(), vec![entry("a", "1"), entry("c", "3")]);
            let unusable = journal.unusable();
            assert_eq!(unusable.len(), 1, "{bad}");
            assert_eq!(unusable[0].entry, 2);
            assert!(!unusable[0].reason.is_empty());
        }
    }

    #[tokio::test]
    async fn an_unusable_entry_survives_every_write_verbatim() {
        let dir = tempfile::tempdir().unwrap();
        let bad = with_operation(entry("b", "2"), "../x");
        let path = write_with_bad_entry(dir.path(), &bad);
        let journal = Journal::open(dir.path()).unwrap();
        journal.remove(&entry("a", "1").operation).await.unwrap();
        journal.record(entry("d", "4")).await.unwrap();
        journal.remove(&entry("c", "3").operation).await.unwrap();
        journal.remove(&entry("d", "4").operation).await.unwrap();
        let document: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(document["entries"], serde_json::json!([bad]));
        assert!(!journal.is_empty());
        assert_eq!(journal.unusable()[0].entry, 1);
    }

    #[test]
    fn an_unusable_entry_blocks_only_its_own_cluster() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_with_bad_entry(dir.path(), &with_operation(entry("b", "2"), "../x"));
        let journal = Journal::open(dir.path()).unwrap();
        assert!(journal.blocked(&entry("a", "1").address).is_ok());
        let err = journal.blocked(&entry("b", "9").address).unwrap_err();
        let message = err.to_string();
        assert!(message.contains(&*path.to_string_lossy()), "{message}");
        assert!(message.contains("entry 2"), "{message}");
        assert!(message.contains("proj-one/us-central1/b"), "{message}");
    }

    #[test]
    fn an_entry_without_a_readable_address_blocks_every_cluster() {
        let dir = tempfile::tempdir().unwrap();
        write_with_bad_entry(dir.path(), &serde_json::json!("not an entry"));
        let journal = Journal::open(dir.path()).unwrap();
        assert_eq!(journal.entries().len(), 2);
        let err = journal.blocked(&entry("a", "1").address).unwrap_err();
        assert!(err.to_string().contains("cluster unknown"), "{err}");
    }

    #[tokio::test]
    async fn recording_an_unusable_entry_is_refused_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path()).unwrap();
        for operation in ["", "../x", "https://evil.example/x"] {
            let mut bad = entry("a", "1");
            bad.operation = operation.to_owned();
            let err = journal.record(bad).await.unwrap_err();
            assert!(matches!(err, StateError::Journal { .. }), "{err}");
        }
        assert!(!Journal::path_in(dir.path()).exists());
        assert!(journal.is_empty());
    }
}
