//! The executor's error type: what failed, on which request or cluster, and a hint for the user.
//!
//! Errors carry the method and URL of the request (never its `Authorization` header), the
//! Google status name and message, and for operations the cluster they were acting on.

use std::path::PathBuf;
use std::time::Duration;

use clusterform_model::duration::Seconds;
use clusterform_model::fields::{MaskSource, UpdateMaskPath, camel_case};
use clusterform_model::rest::ClusterRequest;
use clusterform_model::{Code, NameError, Status};

use crate::state::journal::JournalLocation;
use crate::state::lock::LockInfo;
use crate::transport::auth::AuthError;
use crate::transport::storage::{Generation, StorageError};

/// Everything that can go wrong while talking to the API or running a plan.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The API answered with an error status.
    #[error("{method} {url} failed: {status}")]
    Api {
        /// Google's status (HTTP code, canonical name, message); boxed to keep errors small.
        status: Box<Status>,
        /// HTTP method.
        method: String,
        /// Request URL, query included.
        url: String,
    },
    /// The request did not get an answer (connection refused or dropped, request timeout).
    #[error("{method} {url} got no answer: {message}")]
    Transport {
        /// HTTP method.
        method: String,
        /// Request URL, query included.
        url: String,
        /// What the HTTP stack said.
        message: String,
    },
    /// Waiting for something took longer than its timeout.
    #[error("{what} did not finish within {}", Seconds::from(*after))]
    Timeout {
        /// What was being waited for.
        what: String,
        /// The timeout.
        after: Duration,
    },
    /// A long-running operation finished with an error.
    #[error("{cluster}: operation {operation} failed: {code_name}: {message}")]
    OperationFailed {
        /// The cluster acted on.
        cluster: String,
        /// The operation's name.
        operation: String,
        /// Canonical code name, e.g. `RESOURCE_EXHAUSTED`.
        code_name: String,
        /// The service's message.
        message: String,
    },
    /// The cluster went to state `ERROR` while we waited for it.
    #[error("{cluster} is in state ERROR: {detail}")]
    ClusterFailed {
        /// The cluster.
        cluster: String,
        /// `clusterStatus.detail` or its error message.
        detail: String,
    },
    /// A cluster the plan expected to be deleting is there, no longer being deleted.
    #[error("{cluster} was being deleted when the plan was made, but is {state} now")]
    NoLongerDeleting {
        /// The cluster.
        cluster: String,
        /// Its state now.
        state: String,
    },
    /// A journaled operation is no longer known to the service, and the cluster does not look
    /// like it succeeded.
    #[error("{cluster}: operation {operation} is no longer known and {detail}")]
    OperationLost {
        /// The cluster.
        cluster: String,
        /// The operation's name.
        operation: String,
        /// What the cluster looks like.
        detail: String,
    },
    /// A plain `http://` endpoint that is not loopback would expose the bearer token.
    #[error("refusing to send credentials over plain http to {endpoint}")]
    InsecureEndpoint {
        /// The endpoint as given.
        endpoint: String,
    },
    /// The endpoint override is not a usable base URL.
    #[error("invalid endpoint `{endpoint}`: {reason}")]
    InvalidEndpoint {
        /// The endpoint as given.
        endpoint: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A plan request the client refuses to send (bad method or path).
    #[error("invalid request in plan: {0}")]
    InvalidRequest(String),
    /// A resource name (from the server or the journal) is malformed.
    #[error("malformed resource name: {0}")]
    Name(#[from] NameError),
    /// The service refused an update because of one of its mask paths, one that only the
    /// Terraform provider vouches for; a refused PATCH changes nothing.
    #[error(
        "the service does not update `{path}` in place: it refused the update and nothing \
         changed ({status})"
    )]
    MaskPathRefused {
        /// The refused path.
        path: UpdateMaskPath,
        /// The cluster the update was for.
        id: String,
        /// Google's status.
        status: Box<Status>,
    },
    /// One List answered the same cluster twice: which copy is the cluster cannot be known,
    /// so nothing is planned or applied from that refresh.
    #[error(
        "the List of {}/{} answered cluster {} twice (pages {first_page} and {second_page}): \
         nothing is planned from an inconsistent List",
        name.project,
        name.location,
        name.cluster_id
    )]
    ListedTwice {
        /// The cluster listed twice.
        name: clusterform_model::ClusterName,
        /// The page (from 1) of its first listing.
        first_page: usize,
        /// The page (from 1) that listed it again.
        second_page: usize,
    },
    /// A live cluster that carries an ownership label has a name that cannot be addressed.
    #[error(transparent)]
    UnreadableLiveName(#[from] clusterform_model::UnreadableName),
    /// No token could be obtained.
    #[error(transparent)]
    Auth(#[from] AuthError),
    /// The server answered something that is not what the API returns.
    #[error("could not read {what} from {url}: {reason} (answer began: {body_start:?})")]
    Decode {
        /// What was expected, e.g. "a cluster list".
        what: &'static str,
        /// Request URL.
        url: String,
        /// The parser's complaint.
        reason: String,
        /// The first characters of the answer.
        body_start: String,
    },
    /// The answer to a create, update or delete was a success, but not an operation the
    /// client can follow: nothing was journaled, and whether the change was made is unknown.
    #[error(
        "{cluster}: {method} {url} was accepted, but the answer is not a usable operation: \
         {reason} (answer began: {body_start:?})"
    )]
    NotAnOperation {
        /// The cluster acted on.
        cluster: String,
        /// HTTP method.
        method: String,
        /// Request URL.
        url: String,
        /// What is wrong with the answer.
        reason: String,
        /// The first characters of the answer.
        body_start: String,
    },
    /// An operation is marked done but says neither how it failed nor what it produced.
    #[error("{cluster}: operation {operation} is done but has neither an error nor a response")]
    OperationWithoutResult {
        /// The cluster acted on.
        cluster: String,
        /// The operation's name.
        operation: String,
    },
    /// The server answered more than the client reads.
    #[error("{method} {url}: the answer is larger than the limit of {limit} bytes")]
    AnswerTooLarge {
        /// HTTP method.
        method: String,
        /// Request URL.
        url: String,
        /// The cap, in bytes.
        limit: usize,
    },
    /// The server answered a redirect, which the client never follows.
    #[error(
        "{method} {url} answered a {status} redirect to {location}; redirects are not followed"
    )]
    Redirected {
        /// HTTP method.
        method: String,
        /// Request URL.
        url: String,
        /// The 3xx status.
        status: u16,
        /// The `Location` header, user name and password redacted.
        location: String,
    },
    /// One entry of the journal cannot be used; the cluster it names is left alone.
    #[error("journal {journal}: entry {entry} ({cluster}) cannot be used: {reason}")]
    UnusableJournalEntry {
        /// The journal file or object.
        journal: JournalLocation,
        /// The entry's position in the file, from 1.
        entry: usize,
        /// The cluster the entry names, as far as it can be read.
        cluster: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The journal of in-flight operations cannot be read or written.
    #[error("journal {journal}: {reason}")]
    Journal {
        /// The journal file or object.
        journal: JournalLocation,
        /// What went wrong.
        reason: String,
    },
    /// The journal's Cloud Storage object cannot be read or written (the error names it);
    /// boxed to keep errors small.
    #[error("journal {0}")]
    JournalStorage(#[source] Box<StorageError>),
    /// Another clusterform run holds this configuration's lock.
    #[error("{}", locked_message(path, holder.as_deref(), *waited))]
    Locked {
        /// The lock file.
        path: PathBuf,
        /// Who holds it, when its record could be read; boxed to keep errors small.
        holder: Option<Box<LockInfo>>,
        /// How long this run waited for it: the whole `--lock-timeout` (zero: not at all).
        waited: Duration,
    },
    /// The lock file could not be created or locked.
    #[error("cannot lock {path}: {reason}")]
    Lock {
        /// The lock file.
        path: PathBuf,
        /// What the system said.
        reason: String,
    },
    /// Another clusterform run, perhaps on another machine, holds the stack's lock on Cloud
    /// Storage.
    #[error("{}", remote_locked_message(object, holder.as_deref(), *generation, *waited))]
    RemoteLocked {
        /// The lock object, `gs://BUCKET/OBJECT`.
        object: String,
        /// Who holds it, when the object holds a record; boxed to keep errors small.
        holder: Option<Box<LockInfo>>,
        /// The object's generation when it was last read: the lock's ID for `force-unlock`
        /// when it holds no record (`None` when it was gone by then).
        generation: Option<Generation>,
        /// How long this run waited for it: the whole `--lock-timeout` (zero: not at all).
        waited: Duration,
    },
    /// Reading, taking or releasing the lock on Cloud Storage failed; boxed to keep errors
    /// small.
    #[error(transparent)]
    LockStorage(Box<StorageError>),
    /// The run was cancelled (Ctrl-C) while this action was in progress.
    #[error("interrupted")]
    Cancelled,
}

impl ExecError {
    /// The canonical code of an API error, if this is one.
    pub fn api_code(&self) -> Option<Code> {
        match self {
            Self::Api { status, .. } => Some(status.canonical_code()),
            _ => None,
        }
    }

    /// Whether another operation holds the resource (`ABORTED`).
    pub fn is_aborted(&self) -> bool {
        self.api_code() == Some(Code::Aborted)
    }

    /// Whether the service refused for quota or rate (HTTP 429 or `RESOURCE_EXHAUSTED`).
    pub fn is_quota_exhausted(&self) -> bool {
        match self {
            Self::Api { status, .. } => {
                status.code == 429 || status.canonical_code() == Code::ResourceExhausted
            }
            _ => false,
        }
    }

    /// Whether this is an API `NOT_FOUND`.
    pub fn is_not_found(&self) -> bool {
        self.api_code() == Some(Code::NotFound)
    }

    /// The error of a refused `request`, told apart when the service refused an update for a
    /// mask path that only the Terraform provider vouches for: an `INVALID_ARGUMENT` whose
    /// message or details name one of the update's provider-only paths (snake_case or
    /// lowerCamelCase). Any other error is returned as it is.
    pub(crate) fn for_request(self, request: &ClusterRequest) -> Self {
        let Self::Api { status, .. } = &self else {
            return self;
        };
        let ClusterRequest::Update { name, mask, .. } = request else {
            return self;
        };
        if status.canonical_code() != Code::InvalidArgument {
            return self;
        }
        let said = format!(
            "{} {}",
            status.message,
            serde_json::Value::Array(status.details.clone())
        );
        let refused = mask.paths().iter().copied().find(|path| {
            path.source() == MaskSource::TerraformProvider
                && (said.contains(path.as_str()) || said.contains(&camel_case(path.as_str())))
        });
        match (refused, self) {
            (Some(path), Self::Api { status, .. }) => Self::MaskPathRefused {
                path,
                id: name.cluster_id.clone(),
                status,
            },
            (_, error) => error,
        }
    }
}

/// `the stack is locked by alice@laptop (pid 4242) running `apply` since … (lock ID …)`, or
/// only that the lock is held when the holder's record cannot be read; after a wait, how long
/// this run waited.
fn locked_message(path: &std::path::Path, holder: Option<&LockInfo>, waited: Duration) -> String {
    let mut message = match holder {
        Some(holder) => format!("the stack is locked by {holder}"),
        None => format!(
            "the stack is locked by another clusterform run (lock {} is held)",
            path.display()
        ),
    };
    if !waited.is_zero() {
        message.push_str(&format!(
            "; still locked after waiting {}",
            Seconds::from(waited)
        ));
    }
    message
}

fn remote_locked_message(
    object: &str,
    holder: Option<&LockInfo>,
    generation: Option<Generation>,
    waited: Duration,
) -> String {
    let mut message = match (holder, generation) {
        (Some(holder), _) => format!("the stack is locked by {holder} at {object}"),
        (None, Some(generation)) => format!(
            "the stack is locked: {object} exists but holds no lock record that can be read \
             (lock ID {generation}, the object's generation)"
        ),
        (None, None) => {
            format!("the stack is locked by another clusterform run (lock {object} exists)")
        }
    };
    if !waited.is_zero() {
        message.push_str(&format!(
            "; still locked after waiting {}",
            Seconds::from(waited)
        ));
    }
    message
}
