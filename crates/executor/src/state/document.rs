//! A JSON document kept in a local file or a Cloud Storage object: the journal and the applied
//! record are its two uses, each with its own content and its own way of making its changes.
//!
//! The file (one machine; the run lock keeps other runs out) is read within
//! [`MAX_STATE_FILE_BYTES`] and replaced atomically, 0600 in the private state directory. The
//! object is shared by every machine that runs the stack, so a write carries the generation last
//! read (`ifGenerationMatch`); when another machine wrote in between (`412`), the object is read
//! again and the caller's changes are made again on top of what it holds, so that another
//! machine's are never dropped. One retry policy for every use: at most [`MAX_WRITE_ATTEMPTS`]
//! writes of one change, each at least [`OBJECT_WRITE_INTERVAL`] after this document's last
//! write, Cloud Storage's rate for one object. Empty content removes the file or object.

use std::marker::PhantomData;
use std::path::PathBuf;

use clusterform_files::{Access, ReadError, read_capped, remove_durably, write_atomic};
use tokio::time::Instant;

use crate::state::error::DocumentError;
use crate::state::location::DocumentLocation;
use crate::state::state_dir::{MAX_STATE_FILE_BYTES, StateDir};
use crate::transport::storage::{Generation, OBJECT_WRITE_INTERVAL, StorageClient, StorageError};

/// How many times one change is written while other machines keep replacing the object: each
/// lost race means another machine's write went through, so the document as a whole progresses.
pub(crate) const MAX_WRITE_ATTEMPTS: usize = 16;

/// What a stored document holds, and how it is read and written.
pub(crate) trait DocumentContent: Clone + Default {
    /// Whether the document is advisory: one that cannot be read is then replaced by the next
    /// write. Any other is never written over, since what it held may still matter.
    const ADVISORY: bool;

    /// The content of the document's bytes, or why they cannot be used.
    fn decode(bytes: &[u8]) -> Result<Self, String>;

    /// The document's bytes; `None` when there is nothing to keep (the file or object goes).
    fn encode(&self) -> Result<Option<Vec<u8>>, String>;
}

/// One stored document of content `C`, as one run reads and writes it.
#[derive(Debug)]
pub(crate) struct StoredDocument<C> {
    location: DocumentLocation,
    store: Store,
    content: PhantomData<fn() -> C>,
}

#[derive(Debug)]
enum Store {
    File(FileStore),
    /// Boxed: a client is much larger than a path.
    Object(Box<ObjectStore>),
}

/// A file of the state directory, replaced atomically.
#[derive(Debug)]
struct FileStore {
    state: StateDir,
    path: PathBuf,
}

/// An object, replaced under a generation precondition.
#[derive(Debug)]
struct ObjectStore {
    client: StorageClient,
    object: String,
    /// The generation last read or written; `None` while the object is absent.
    generation: Option<Generation>,
    /// When this document last asked for a write of the object.
    last_write: Option<Instant>,
}

impl<C: DocumentContent> StoredDocument<C> {
    /// The document kept as `path` in the state directory `state`, and what it holds now (a
    /// missing file holds the empty content).
    pub(crate) fn open_file(state: StateDir, path: PathBuf) -> (Self, Result<C, DocumentError>) {
        let location = DocumentLocation::File(path.clone());
        let store = FileStore { state, path };
        let content = store.read(&location);
        let document = Self {
            location,
            store: Store::File(store),
            content: PhantomData,
        };
        (document, content)
    }

    /// The document kept as `object` in the client's bucket, and what it holds now (a missing
    /// object holds the empty content).
    pub(crate) async fn open_object(
        client: StorageClient,
        object: String,
    ) -> (Self, Result<C, DocumentError>) {
        let location = DocumentLocation::Object {
            bucket: client.bucket().to_owned(),
            object: object.clone(),
        };
        let mut store = ObjectStore {
            client,
            object,
            generation: None,
            last_write: None,
        };
        let content = store.reload(&location).await;
        let document = Self {
            location,
            store: Store::Object(Box::new(store)),
            content: PhantomData,
        };
        (document, content)
    }

    /// Where the document is kept.
    pub(crate) fn location(&self) -> &DocumentLocation {
        &self.location
    }

    /// Makes the caller's changes on `current` (the content as this document last read or
    /// wrote it) with `change`, which answers `None` when they change nothing, and writes the
    /// result in one write; answers the content now stored. For an object, a write lost to
    /// another machine reads the object again and makes the changes again on top of it.
    pub(crate) async fn write_changed(
        &mut self,
        current: C,
        change: impl Fn(&C) -> Option<C>,
    ) -> Result<C, DocumentError> {
        let location = &self.location;
        let store = match &mut self.store {
            Store::File(file) => {
                let Some(updated) = change(&current) else {
                    return Ok(current);
                };
                file.write(location, &updated)?;
                return Ok(updated);
            }
            Store::Object(object) => object,
        };
        let mut base = current;
        for _ in 0..MAX_WRITE_ATTEMPTS {
            let Some(updated) = change(&base) else {
                return Ok(base);
            };
            let bytes = encode(location, &updated)?;
            match store.write(bytes.as_deref()).await {
                Ok(()) => return Ok(updated),
                Err(StorageError::PreconditionFailed { .. }) => {
                    base = store.reload_to_merge(location).await?;
                }
                Err(error) => return Err(storage_error(location, error)),
            }
        }
        Err(DocumentError::Contended {
            location: location.clone(),
            attempts: MAX_WRITE_ATTEMPTS,
        })
    }

    /// Waits until the document takes another write: at once for a file; for an object, until
    /// [`OBJECT_WRITE_INTERVAL`] after this document's last write, so that a caller gathering
    /// changes meanwhile writes them together.
    pub(crate) async fn ready_to_write(&self) {
        if let Store::Object(object) = &self.store {
            object.ready_to_write().await;
        }
    }
}

impl FileStore {
    fn read<C: DocumentContent>(&self, location: &DocumentLocation) -> Result<C, DocumentError> {
        match read_capped(&self.path, MAX_STATE_FILE_BYTES) {
            Ok(bytes) => decode(location, &bytes),
            Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(C::default()),
            Err(e) => Err(DocumentError::Unreadable {
                location: location.clone(),
                reason: format!("cannot read it: {e}"),
            }),
        }
    }

    /// Replaces the file atomically (0600, its directory created private); empty content
    /// removes it.
    fn write<C: DocumentContent>(
        &self,
        location: &DocumentLocation,
        content: &C,
    ) -> Result<(), DocumentError> {
        let fail = |what: &str, e: &dyn std::fmt::Display| DocumentError::Unwritable {
            location: location.clone(),
            reason: format!("{what}: {e}"),
        };
        let Some(bytes) = encode(location, content)? else {
            return match remove_durably(&self.path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(fail("cannot remove it", &e)),
            };
        };
        self.state
            .create()
            .map_err(|e| fail("cannot create its directory", &e))?;
        write_atomic(&self.path, &bytes, Access::Private).map_err(|e| fail("cannot write it", &e))
    }
}

impl ObjectStore {
    /// Reads the live object. Its generation is remembered when its content can be used, or
    /// when the document is advisory (the next write then replaces it): a document that must
    /// not be written over keeps the generation it knew, so that its next write fails and reads
    /// it again.
    async fn reload<C: DocumentContent>(
        &mut self,
        location: &DocumentLocation,
    ) -> Result<C, DocumentError> {
        let live = self.client.read(&self.object).await;
        let Some((bytes, generation)) = live.map_err(|error| storage_error(location, error))?
        else {
            self.generation = None;
            return Ok(C::default());
        };
        let content = decode(location, &bytes);
        if content.is_ok() || C::ADVISORY {
            self.generation = Some(generation);
        }
        content
    }

    /// [`Self::reload`] after a lost race: an advisory document that cannot be read is merged
    /// into as if it were empty.
    async fn reload_to_merge<C: DocumentContent>(
        &mut self,
        location: &DocumentLocation,
    ) -> Result<C, DocumentError> {
        match self.reload(location).await {
            Err(DocumentError::Unreadable { .. }) if C::ADVISORY => Ok(C::default()),
            read => read,
        }
    }

    /// Waits until [`OBJECT_WRITE_INTERVAL`] has passed since this document's last write.
    async fn ready_to_write(&self) {
        if let Some(last) = self.last_write {
            tokio::time::sleep_until(last + OBJECT_WRITE_INTERVAL).await;
        }
    }

    /// Writes `content` only over the generation last seen: creates the object when it was
    /// absent; `None` deletes it. Keeps to [`OBJECT_WRITE_INTERVAL`] (a write lost to another
    /// machine's counts too).
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

fn decode<C: DocumentContent>(
    location: &DocumentLocation,
    bytes: &[u8],
) -> Result<C, DocumentError> {
    C::decode(bytes).map_err(|reason| DocumentError::Unreadable {
        location: location.clone(),
        reason,
    })
}

fn encode<C: DocumentContent>(
    location: &DocumentLocation,
    content: &C,
) -> Result<Option<Vec<u8>>, DocumentError> {
    content.encode().map_err(|e| DocumentError::Unwritable {
        location: location.clone(),
        reason: format!("cannot encode it: {e}"),
    })
}

fn storage_error(location: &DocumentLocation, error: StorageError) -> DocumentError {
    DocumentError::Storage {
        location: location.clone(),
        error: Box::new(error),
    }
}
