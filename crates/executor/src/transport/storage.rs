//! A Cloud Storage client for the shared lock and journal: four typed operations on the
//! objects of one bucket, each guarded by a generation precondition (`ifGenerationMatch`), so
//! that two machines racing on one object can never both win.
//!
//! It follows the cluster client's conventions (`docs/executor.md`), written once in
//! `http.rs` (a bearer token on every request, a per-request timeout, answers read with a size
//! cap, redirects never followed, plain http only to loopback), and sends through the same
//! retrying exchange (`exchange.rs`: retries with backoff). Because every write and delete
//! carries a precondition, each call may be repeated safely: 429, 500, 502, 503, 504 and lost
//! connections are retried, a `412` never is, nor a `429` on the lock's create (it means the
//! lock is being taken or released). A write that lost its answer and meets `412` on
//! the retry is looked up: if the live object holds exactly our bytes, the first attempt went
//! through and its generation is the answer. Errors name the bucket and the object.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use clusterform_model::Code;
use reqwest::{Method, StatusCode, Url};
use serde_json::Value;

use crate::transport::auth::{AuthError, TokenSource};
use crate::transport::exchange::{Answer, Body, Exchanging, Request, Unanswered, exchange};
use crate::transport::http::{Connection, EndpointRefusal, check_endpoint, quote_body};
use crate::transport::options::ClientOptions;
use crate::transport::redact::redact_endpoint;
use crate::transport::retry::CallClass;

/// The least time between two writes of one object: Cloud Storage documents "an update limit on
/// each object of once per second" and answers `429` ("exceeded the rate limit for object
/// mutation operations") to more. The journal paces its writes by it and the lock its release.
pub(crate) const OBJECT_WRITE_INTERVAL: Duration = Duration::from_secs(1);

/// Where requests go unless [`ClientOptions::endpoint`] overrides it.
pub const STORAGE_ENDPOINT: &str = "https://storage.googleapis.com";

/// The longest object name Cloud Storage accepts, in bytes of UTF-8.
const MAX_OBJECT_NAME_BYTES: usize = 1024;

/// The message Cloud Storage gives a `404` for a missing bucket (a missing object says
/// `No such object: …`); both carry the reason `notFound`, so the message tells them apart.
const NO_SUCH_BUCKET: &str = "The specified bucket does not exist.";

/// The content type of what is written: the lock and the journal are JSON.
const CONTENT_TYPE: &str = "application/json";

/// An object's generation: int64, strictly increasing each time the object is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Generation(i64);

impl Generation {
    /// A generation; Cloud Storage's are positive (`0` means "no live object" in preconditions).
    pub fn new(value: i64) -> Option<Self> {
        (value > 0).then_some(Self(value))
    }

    /// The number.
    pub fn get(self) -> i64 {
        self.0
    }
}

impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What can go wrong with an object. Every variant names the object as `gs://BUCKET/OBJECT`.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StorageError {
    /// The object is not as the precondition required: it exists (`expected: None`, the
    /// create of something absent) or its live generation is another one.
    #[error("gs://{bucket}/{object}: precondition failed: {}", describe_expected(*expected))]
    PreconditionFailed {
        /// The bucket.
        bucket: String,
        /// The object.
        object: String,
        /// The generation required; `None` when the object had to be absent.
        expected: Option<Generation>,
    },
    /// The bucket does not exist.
    #[error("gs://{bucket}/{object}: the bucket `{bucket}` does not exist")]
    BucketNotFound {
        /// The bucket.
        bucket: String,
        /// The object.
        object: String,
    },
    /// The caller may not do this (`403`).
    #[error("gs://{bucket}/{object}: permission denied: {message}")]
    Forbidden {
        /// The bucket.
        bucket: String,
        /// The object.
        object: String,
        /// Cloud Storage's message (it names the missing permission).
        message: String,
    },
    /// The request got no answer (connection refused or dropped, timeout), after retries.
    #[error("gs://{bucket}/{object}: {method} {url} got no answer: {message}")]
    Transport {
        /// The bucket.
        bucket: String,
        /// The object.
        object: String,
        /// HTTP method.
        method: String,
        /// Request URL.
        url: String,
        /// What the HTTP stack said.
        message: String,
    },
    /// Any other error status (after retries, for the retried ones).
    #[error("gs://{bucket}/{object}: {method} {url} failed: HTTP {status}: {message}")]
    Api {
        /// The bucket.
        bucket: String,
        /// The object.
        object: String,
        /// HTTP method.
        method: String,
        /// Request URL.
        url: String,
        /// HTTP status.
        status: u16,
        /// Cloud Storage's message, or the start of the body.
        message: String,
    },
    /// A success answer the client cannot use (not JSON, no generation, a redirect, too large).
    #[error("gs://{bucket}/{object}: {method} {url} answered something unusable: {reason}")]
    BadAnswer {
        /// The bucket.
        bucket: String,
        /// The object.
        object: String,
        /// HTTP method.
        method: String,
        /// Request URL.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No token could be had.
    #[error("gs://{bucket}/{object}: {source}")]
    Auth {
        /// The bucket.
        bucket: String,
        /// The object.
        object: String,
        /// Why.
        source: AuthError,
    },
    /// The bucket or object name cannot be sent.
    #[error("gs://{bucket}/{object}: {reason}")]
    InvalidName {
        /// The bucket.
        bucket: String,
        /// The object.
        object: String,
        /// Which rule it breaks.
        reason: String,
    },
    /// The endpoint override is unusable (or would send the token in clear text).
    #[error("invalid storage endpoint `{endpoint}`: {reason}")]
    InvalidEndpoint {
        /// The endpoint, user information shown as `***`.
        endpoint: String,
        /// Why.
        reason: String,
    },
}

impl StorageError {
    /// Whether Cloud Storage refused for rate (`429`): an object takes about one write a
    /// second.
    pub fn is_rate_limited(&self) -> bool {
        matches!(self, Self::Api { status: 429, .. })
    }
}

fn describe_expected(expected: Option<Generation>) -> String {
    match expected {
        None => "the object already exists".to_owned(),
        Some(generation) => {
            format!("the live object is not generation {generation} (it was replaced or deleted)")
        }
    }
}

/// A client for the objects of one bucket. Cheap to clone.
#[derive(Clone)]
pub struct StorageClient {
    base: Url,
    bucket: String,
    connection: Connection,
}

impl fmt::Debug for StorageClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StorageClient")
            .field("base", &self.base.as_str())
            .field("bucket", &self.bucket)
            .field("connection", &self.connection)
            .finish()
    }
}

/// One request, before it is sent.
struct Call<'a> {
    request: Request<'a>,
    object: &'a str,
}

impl StorageClient {
    /// A client for `bucket`. `options.endpoint` overrides [`STORAGE_ENDPOINT`] under the same
    /// rules as the cluster API's: https, or http only to a loopback host, no credentials.
    pub fn new(
        bucket: &str,
        options: ClientOptions,
        tokens: Arc<dyn TokenSource>,
    ) -> Result<Self, StorageError> {
        check_bucket_name(bucket).map_err(|reason| StorageError::InvalidName {
            bucket: bucket.to_owned(),
            object: String::new(),
            reason,
        })?;
        let base = match options.endpoint.as_deref() {
            Some(endpoint) => validate_endpoint(endpoint)?,
            None => Url::parse(STORAGE_ENDPOINT)
                .map_err(|e| invalid_endpoint(STORAGE_ENDPOINT, &e.to_string()))?,
        };
        let connection = Connection::new(options, tokens).map_err(|e| {
            invalid_endpoint(base.as_str(), &format!("cannot build the HTTP client: {e}"))
        })?;
        Ok(Self {
            base,
            bucket: bucket.to_owned(),
            connection,
        })
    }

    /// The bucket this client works on.
    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// Writes `content` as `object` only if no such object exists; answers its generation.
    pub async fn create_if_absent(
        &self,
        object: &str,
        content: &[u8],
    ) -> Result<Generation, StorageError> {
        self.write(object, content, None, CallClass::Guarded).await
    }

    /// [`Self::create_if_absent`] for a lock: a `429` is answered at once rather than retried.
    /// Cloud Storage refuses for rate a create of an object written within the last second,
    /// which for a lock means another run is taking or releasing it; retrying would keep the
    /// caller away for the whole retry budget and compete with the holder's release.
    pub async fn take_if_absent(
        &self,
        object: &str,
        content: &[u8],
    ) -> Result<Generation, StorageError> {
        self.write(object, content, None, CallClass::LockCreate)
            .await
    }

    /// Replaces `object` with `content` only if its live generation is `generation`; answers
    /// the new generation.
    pub async fn replace_if(
        &self,
        object: &str,
        content: &[u8],
        generation: Generation,
    ) -> Result<Generation, StorageError> {
        self.write(object, content, Some(generation), CallClass::Guarded)
            .await
    }

    /// The content and generation of `object`, or `None` if it does not exist.
    pub async fn read(&self, object: &str) -> Result<Option<(Vec<u8>, Generation)>, StorageError> {
        let mut url = self.object_url(object)?;
        url.query_pairs_mut().append_pair("alt", "media");
        let call = self.call(Method::GET, url, object, Body::Empty, CallClass::Guarded);
        let answer = self.exchange(&call).await?;
        if answer.status == StatusCode::NOT_FOUND && !is_missing_bucket(&answer.body) {
            return Ok(None);
        }
        self.check_status(&call, &answer, None)?;
        let generation = answer
            .headers
            .get("x-goog-generation")
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse().ok())
            .and_then(Generation::new)
            .ok_or_else(|| {
                self.bad_answer(&call, "no usable x-goog-generation header".to_owned())
            })?;
        Ok(Some((answer.body, generation)))
    }

    /// Deletes `object` only if its live generation is `generation`. An object that no longer
    /// exists counts as deleted: the generation asked for is gone either way (and a retried
    /// delete whose first attempt went through meets exactly that).
    pub async fn delete_if(
        &self,
        object: &str,
        generation: Generation,
    ) -> Result<(), StorageError> {
        let mut url = self.object_url(object)?;
        url.query_pairs_mut()
            .append_pair("ifGenerationMatch", &generation.to_string());
        let call = self.call(Method::DELETE, url, object, Body::Empty, CallClass::Guarded);
        let answer = self.exchange(&call).await?;
        if answer.status == StatusCode::NOT_FOUND && !is_missing_bucket(&answer.body) {
            return Ok(());
        }
        self.check_status(&call, &answer, Some(Some(generation)))
    }

    /// A media upload with `ifGenerationMatch` (`0` when `expected` is `None`).
    async fn write(
        &self,
        object: &str,
        content: &[u8],
        expected: Option<Generation>,
        class: CallClass,
    ) -> Result<Generation, StorageError> {
        self.check_object_name(object)?;
        let mut url = self.url(&["upload", "storage", "v1", "b", &self.bucket, "o"]);
        url.query_pairs_mut()
            .append_pair("uploadType", "media")
            .append_pair("name", object)
            .append_pair(
                "ifGenerationMatch",
                &expected.map_or(0, Generation::get).to_string(),
            );
        let body = Body::Bytes {
            content,
            content_type: CONTENT_TYPE,
        };
        let call = self.call(Method::POST, url, object, body, class);
        let answer = self.exchange(&call).await?;
        // A 412 (or a 429 the lock's create answers at once: the object was just written)
        // after a retry may be our own first attempt, which landed but lost its answer.
        let maybe_ours = answer.status == StatusCode::PRECONDITION_FAILED
            || (answer.status == StatusCode::TOO_MANY_REQUESTS && class == CallClass::LockCreate);
        if maybe_ours
            && answer.after_retry
            && let Some((live, generation)) = self.read(object).await?
            && live == content
        {
            return Ok(generation);
        }
        self.check_status(&call, &answer, Some(expected))?;
        let resource: Value = serde_json::from_slice(&answer.body).map_err(|e| {
            self.bad_answer(
                &call,
                format!("{e} (answer starts: {})", quote_body(&answer.body)),
            )
        })?;
        written_generation(&resource).ok_or_else(|| {
            self.bad_answer(
                &call,
                format!("no usable generation in {}", quote_body(&answer.body)),
            )
        })
    }

    /// `…/storage/v1/b/{bucket}/o/{object}`, the object name as one encoded segment.
    fn object_url(&self, object: &str) -> Result<Url, StorageError> {
        self.check_object_name(object)?;
        Ok(self.url(&["storage", "v1", "b", &self.bucket, "o", object]))
    }

    /// Cloud Storage's rule: 1 to 1,024 bytes of UTF-8.
    fn check_object_name(&self, object: &str) -> Result<(), StorageError> {
        if object.is_empty() || object.len() > MAX_OBJECT_NAME_BYTES {
            return Err(StorageError::InvalidName {
                bucket: self.bucket.clone(),
                object: object.to_owned(),
                reason: format!("an object name is 1 to {MAX_OBJECT_NAME_BYTES} bytes long"),
            });
        }
        Ok(())
    }

    /// The base URL with `segments` appended, each percent-encoded (a `/` becomes `%2F`).
    fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url
    }

    /// A call on `object`, sent with the connection's request timeout.
    fn call<'a>(
        &self,
        method: Method,
        url: Url,
        object: &'a str,
        body: Body<'a>,
        class: CallClass,
    ) -> Call<'a> {
        Call {
            request: Request {
                method,
                url,
                body,
                class,
                timeout: self.connection.request_timeout,
                charge: None,
            },
            object,
        }
    }

    /// Sends a call, retrying what is safe to retry; answers the first answer not retried.
    async fn exchange(&self, call: &Call<'_>) -> Result<Answer, StorageError> {
        let mut part = StorageExchange { client: self, call };
        exchange(&self.connection, &call.request, &mut part).await
    }

    /// `Ok` for a success; else the typed error. `precondition` is the expectation a `412`
    /// reports (`None` for a call without one).
    fn check_status(
        &self,
        call: &Call<'_>,
        answer: &Answer,
        precondition: Option<Option<Generation>>,
    ) -> Result<(), StorageError> {
        let bucket = self.bucket.clone();
        let object = call.object.to_owned();
        match (answer.status, precondition) {
            (status, _) if status.is_success() => Ok(()),
            (StatusCode::PRECONDITION_FAILED, Some(expected)) => {
                Err(StorageError::PreconditionFailed {
                    bucket,
                    object,
                    expected,
                })
            }
            (StatusCode::NOT_FOUND, _) if is_missing_bucket(&answer.body) => {
                Err(StorageError::BucketNotFound { bucket, object })
            }
            (StatusCode::FORBIDDEN, _) => Err(StorageError::Forbidden {
                bucket,
                object,
                message: error_message(&answer.body),
            }),
            _ => Err(self.api_error(call, answer)),
        }
    }

    fn api_error(&self, call: &Call<'_>, answer: &Answer) -> StorageError {
        StorageError::Api {
            bucket: self.bucket.clone(),
            object: call.object.to_owned(),
            method: call.request.method.to_string(),
            url: call.request.url.to_string(),
            status: answer.status.as_u16(),
            message: error_message(&answer.body),
        }
    }

    fn bad_answer(&self, call: &Call<'_>, reason: String) -> StorageError {
        StorageError::BadAnswer {
            bucket: self.bucket.clone(),
            object: call.object.to_owned(),
            method: call.request.method.to_string(),
            url: call.request.url.to_string(),
            reason,
        }
    }
}

/// The storage client's part in an exchange: every answer not retried is the caller's to
/// read (a `404` or `412` is an answer, not a failure).
struct StorageExchange<'a> {
    client: &'a StorageClient,
    call: &'a Call<'a>,
}

impl Exchanging for StorageExchange<'_> {
    type Reply = Answer;
    type Error = StorageError;

    /// Cloud Storage's error JSON carries no canonical name.
    fn code(&self, answer: &Answer) -> Code {
        Code::of_http(answer.status.as_u16())
    }

    fn reply(&mut self, answer: Answer) -> Result<Answer, StorageError> {
        Ok(answer)
    }

    fn unanswered(&self, request: &Request<'_>, failure: Unanswered) -> StorageError {
        let client = self.client;
        let (bucket, object) = (client.bucket.clone(), self.call.object.to_owned());
        match failure {
            Unanswered::Auth(source) => StorageError::Auth {
                bucket,
                object,
                source,
            },
            Unanswered::NoAnswer(message) => StorageError::Transport {
                bucket,
                object,
                method: request.method.to_string(),
                url: request.url.to_string(),
                message,
            },
            Unanswered::Redirected { status, .. } => client.bad_answer(
                self.call,
                format!("a redirect ({status}), which is never followed"),
            ),
            Unanswered::TooLarge => client.bad_answer(
                self.call,
                format!("more than {} bytes", client.connection.max_answer_bytes),
            ),
            // Only a List page draws on a refresh's budget.
            Unanswered::BudgetSpent(spent) => client.bad_answer(self.call, spent.to_string()),
        }
    }
}

/// The generation of the object resource an upload answers (a string, or a number).
fn written_generation(resource: &Value) -> Option<Generation> {
    let value = resource.get("generation")?;
    let number = match value {
        Value::String(text) => text.parse().ok()?,
        other => other.as_i64()?,
    };
    Generation::new(number)
}

fn is_missing_bucket(body: &[u8]) -> bool {
    error_message(body) == NO_SUCH_BUCKET
}

/// `error.message` of Cloud Storage's error JSON, or the start of a body that is not one.
fn error_message(body: &[u8]) -> String {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|value| {
            value
                .get("error")?
                .get("message")?
                .as_str()
                .map(str::to_owned)
        })
        .unwrap_or_else(|| quote_body(body))
}

/// Cloud Storage's rule: 3 to 63 characters of lowercase letters, digits, `-`, `_` and `.`,
/// starting and ending with a letter or digit.
fn check_bucket_name(bucket: &str) -> Result<(), String> {
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c);
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let valid = (3..=63).contains(&bucket.len())
        && bucket.chars().all(allowed)
        && edge(bucket.chars().next())
        && edge(bucket.chars().last());
    if valid {
        Ok(())
    } else {
        Err("a bucket name is 3 to 63 lowercase letters, digits, `-`, `_` or `.`, starting and ending with a letter or digit".to_owned())
    }
}

fn invalid_endpoint(endpoint: &str, reason: &str) -> StorageError {
    StorageError::InvalidEndpoint {
        endpoint: redact_endpoint(endpoint),
        reason: reason.to_owned(),
    }
}

/// The endpoint override, under the cluster client's rules (see [`check_endpoint`]).
fn validate_endpoint(raw: &str) -> Result<Url, StorageError> {
    check_endpoint(raw).map_err(|refusal| match refusal {
        EndpointRefusal::Insecure => invalid_endpoint(
            raw,
            "plain http is only allowed to a loopback host: the bearer token would travel in clear text",
        ),
        EndpointRefusal::Invalid(reason) => invalid_endpoint(raw, &reason),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::auth::StaticToken;

    fn client(endpoint: Option<&str>) -> Result<StorageClient, StorageError> {
        StorageClient::new(
            "team-infra",
            ClientOptions {
                endpoint: endpoint.map(str::to_owned),
                ..ClientOptions::default()
            },
            Arc::new(StaticToken::new("secret-token")),
        )
    }

    #[test]
    fn object_names_are_one_encoded_path_segment() {
        let client = client(None).unwrap();
        let url = client.object_url("clusterform/prod/a b.lock").unwrap();
        assert_eq!(
            url.as_str(),
            "https://storage.googleapis.com/storage/v1/b/team-infra/o/clusterform%2Fprod%2Fa%20b.lock"
        );
        assert!(client.object_url("").is_err());
        assert!(client.object_url(&"x".repeat(1025)).is_err());
    }

    #[test]
    fn an_endpoint_with_a_path_keeps_it() {
        let client = client(Some("http://127.0.0.1:9/proxy/")).unwrap();
        assert_eq!(
            client.object_url("o").unwrap().as_str(),
            "http://127.0.0.1:9/proxy/storage/v1/b/team-infra/o/o"
        );
    }

    #[test]
    fn endpoints_follow_the_cluster_clients_rules_and_never_echo_credentials() {
        assert!(client(Some("http://localhost:8080")).is_ok());
        assert!(client(Some("https://storage.example.com")).is_ok());
        for refused in [
            "http://storage.example.com",
            "ftp://127.0.0.1",
            "https://host/?x=1",
            "https://user:hunter2@host",
        ] {
            let error = client(Some(refused)).unwrap_err().to_string();
            assert!(!error.contains("hunter2"), "{error}");
        }
    }

    #[test]
    fn the_token_never_shows_in_debug() {
        let debug = format!("{:?}", client(None).unwrap());
        assert!(!debug.contains("secret-token"), "{debug}");
    }

    #[test]
    fn bucket_names_are_checked_before_any_request() {
        let error = StorageClient::new(
            "Team_Infra",
            ClientOptions::default(),
            Arc::new(StaticToken::new("t")),
        )
        .unwrap_err();
        assert!(matches!(error, StorageError::InvalidName { .. }), "{error}");
    }

    #[test]
    fn generations_are_positive_and_read_from_strings_or_numbers() {
        assert_eq!(Generation::new(0), None);
        assert_eq!(
            written_generation(&serde_json::json!({"generation": "17"})),
            Generation::new(17)
        );
        assert_eq!(
            written_generation(&serde_json::json!({"generation": 17})),
            Generation::new(17)
        );
        assert_eq!(
            written_generation(&serde_json::json!({"generation": "x"})),
            None
        );
    }
}
