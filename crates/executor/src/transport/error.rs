//! The API client's error: a request that failed on the wire or was answered with an error,
//! named by its method and URL (never its `Authorization` header), with Google's status.

use clusterform_model::{Code, NameError, Status};

use crate::transport::auth::AuthError;
use crate::transport::budget::BudgetSpent;

/// Everything that can go wrong with one call to the API.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
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
    NoAnswer {
        /// HTTP method.
        method: String,
        /// Request URL, query included.
        url: String,
        /// What the HTTP stack said.
        message: String,
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
    /// A request the client refuses to send (bad method or path).
    #[error("invalid request in plan: {0}")]
    InvalidRequest(String),
    /// A resource name (from the server or the caller) is malformed.
    #[error("malformed resource name: {0}")]
    Name(#[from] NameError),
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
    /// The Lists of one refresh together asked for more pages, or read more bytes of answers,
    /// than its budget; the List named was the one that passed it.
    #[error("{method} {url}: {spent}")]
    RefreshBudgetSpent {
        /// HTTP method.
        method: String,
        /// Request URL: the page asked for over the total, or the answer being read.
        url: String,
        /// Which List passed which total; boxed to keep errors small.
        spent: Box<BudgetSpent>,
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
    /// The caller stopped the call while nothing the service may have acted on was
    /// outstanding.
    #[error("interrupted")]
    Cancelled,
}

impl TransportError {
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
}
