//! Where the journal is kept: the local file `.clusterform/journal.json` (one machine; the run
//! lock keeps other runs out), or a Cloud Storage object shared by every machine that runs the
//! stack. A change to the object is written with optimistic concurrency: the upload carries
//! the generation last read (`ifGenerationMatch`), and when another machine wrote in between
//! (`412`) the object is read again and the changes of the write (records and removals of
//! operations) are applied on top of what is there, so that another machine's entries are
//! never dropped. The object is written at most once per [`OBJECT_WRITE_INTERVAL`]; changes
//! asked for meanwhile go out together (see `Journal::commit`).

use std::path::{Path, PathBuf};

use clusterform_files::{Access, remove_durably, write_atomic};
use tokio::time::Instant;

use crate::state::error::StateError;
use crate::state::journal::{Change, JournalLocation, Slot, encode, parse};
use crate::state::state_dir::{MAX_STATE_FILE_BYTES, StateDir};
use crate::transport::storage::{Generation, OBJECT_WRITE_INTERVAL, StorageClient, StorageError};

/// How many times one change is attempted while other machines keep replacing the object: each
/// lost race means another machine's write went through, so the journal as a whole progresses.
const MAX_WRITE_ATTEMPTS: usize = 16;

/// The journal's persistence.
#[derive(Debug)]
pub(crate) enum JournalStore {
    /// A local file, replaced atomically.
    File(PathBuf),
    /// A Cloud Storage object, replaced under a generation precondition (boxed: a client is
    /// much larger than a path).
    Object(Box<ObjectStore>),
}

impl JournalStore {
    /// Applies `changes` in order to `current` (the journal as this store last read or wrote
    /// it) and persists the result in one write; answers the journal as it is now stored, which
    /// for an object includes what other machines wrote meanwhile.
    pub(crate) async fn commit(
        &mut self,
        current: Vec<Slot>,
        changes: &[Change],
    ) -> Result<Vec<Slot>, StateError> {
        match self {
            Self::File(path) => {
                let Some(updated) = Change::apply_all(changes, &current) else {
                    return Ok(current);
                };
                write_file(path, &updated)?;
                Ok(updated)
            }
            Self::Object(object) => object.commit(current, changes).await,
        }
    }

    /// Waits until the store takes another write: at once for the file; for the object, until
    /// [`OBJECT_WRITE_INTERVAL`] after its last write.
    pub(crate) async fn ready_to_write(&self) {
        if let Self::Object(object) = self {
            object.ready_to_write().await;
        }
    }
}

/// Reads the journal file; a missing file is an empty journal.
pub(crate) fn read_file(path: &Path) -> Result<Vec<Slot>, StateError> {
    let location = JournalLocation::File(path.to_owned());
    match clusterform_files::read_capped(path, MAX_STATE_FILE_BYTES) {
        Ok(bytes) => parse(&location, &bytes),
        Err(clusterform_files::ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok(Vec::new())
        }
        Err(e) => Err(journal_error(location, format!("cannot read it: {e}"))),
    }
}

/// Replaces the file atomically; an empty journal removes it.
fn write_file(path: &Path, slots: &[Slot]) -> Result<(), StateError> {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        journal_error(
            JournalLocation::File(path.to_owned()),
            format!("{what}: {e}"),
        )
    };
    if slots.is_empty() {
        return match remove_durably(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(fail("cannot remove it", &e)),
        };
    }
    if let Some(config_dir) = path.parent().and_then(Path::parent) {
        StateDir::of(config_dir)
            .create()
            .map_err(|e| fail("cannot create its directory", &e))?;
    }
    let text = encode(slots).map_err(|e| fail("cannot encode it", &e))?;
    write_atomic(path, text.as_bytes(), Access::Private).map_err(|e| fail("cannot write it", &e))
}

/// The journal as one object of a bucket.
#[derive(Debug)]
pub(crate) struct ObjectStore {
    client: StorageClient,
    object: String,
    /// The generation last read or written; `None` while the object is absent.
    generation: Option<Generation>,
    /// When this run last asked for a write of the object.
    last_write: Option<Instant>,
}

impl ObjectStore {
    /// Reads the object; a missing object is an empty journal.
    pub(crate) async fn open(
        client: StorageClient,
        object: String,
    ) -> Result<(Self, Vec<Slot>), StateError> {
        let mut store = Self {
            client,
            object,
            generation: None,
            last_write: None,
        };
        let slots = store.reload().await?;
        Ok((store, slots))
    }

    /// `gs://BUCKET/OBJECT`.
    pub(crate) fn location(&self) -> JournalLocation {
        JournalLocation::Object {
            bucket: self.client.bucket().to_owned(),
            object: self.object.clone(),
        }
    }

    async fn commit(
        &mut self,
        current: Vec<Slot>,
        changes: &[Change],
    ) -> Result<Vec<Slot>, StateError> {
        let mut slots = current;
        for _ in 0..MAX_WRITE_ATTEMPTS {
            let Some(updated) = Change::apply_all(changes, &slots) else {
                return Ok(slots);
            };
            let content = if updated.is_empty() {
                None
            } else {
                let text = encode(&updated).map_err(|e| {
                    journal_error(self.location(), format!("cannot encode it: {e}"))
                })?;
                Some(text.into_bytes())
            };
            match self.write(content.as_deref()).await {
                Ok(()) => return Ok(updated),
                Err(StorageError::PreconditionFailed { .. }) => slots = self.reload().await?,
                Err(e) => return Err(StateError::JournalStorage(Box::new(e))),
            }
        }
        Err(journal_error(
            self.location(),
            format!("gave up after {MAX_WRITE_ATTEMPTS} attempts: other runs kept replacing it"),
        ))
    }

    /// Reads the live object and remembers its generation.
    async fn reload(&mut self) -> Result<Vec<Slot>, StateError> {
        let live = self
            .client
            .read(&self.object)
            .await
            .map_err(|e| StateError::JournalStorage(Box::new(e)))?;
        let Some((bytes, generation)) = live else {
            self.generation = None;
            return Ok(Vec::new());
        };
        let slots = parse(&self.location(), &bytes)?;
        self.generation = Some(generation);
        Ok(slots)
    }

    /// Waits until [`OBJECT_WRITE_INTERVAL`] has passed since this run's last write.
    async fn ready_to_write(&self) {
        if let Some(last) = self.last_write {
            tokio::time::sleep_until(last + OBJECT_WRITE_INTERVAL).await;
        }
    }

    /// Writes `content` only over the generation last seen: creates the object when it was
    /// absent; `None` (an empty journal) deletes it. Keeps to [`OBJECT_WRITE_INTERVAL`]
    /// (a write lost to another machine's counts too).
    async fn write(&mut self, content: Option<&[u8]>) -> Result<(), StorageError> {
        if content.is_none() && self.generation.is_none() {
            return Ok(());
        }
        self.ready_to_write().await;
        let (client, object) = (&self.client, self.object.as_str());
        let written = match (content, self.generation) {
            (None, None) => Ok(None),
            (None, Some(generation)) => client.delete_if(object, generation).await.map(|()| None),
            (Some(content), None) => client.create_if_absent(object, content).await.map(Some),
            (Some(content), Some(generation)) => client
                .replace_if(object, content, generation)
                .await
                .map(Some),
        };
        // Counted from the answer, not the request: the service changed the object at some
        // moment before it answered, and a request delayed on its way (a loaded machine, a slow
        // network) must not bring the next write within the interval of that change.
        self.last_write = Some(Instant::now());
        self.generation = written?;
        Ok(())
    }
}

fn journal_error(journal: JournalLocation, reason: String) -> StateError {
    StateError::Journal { journal, reason }
}
