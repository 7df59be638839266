//! How the clients of this transport talk to their API: the options one client is built with.

use std::fmt;
use std::time::Duration;

use crate::transport::budget::RefreshBudget;
use crate::transport::redact::redact_userinfo;
use crate::transport::retry::RetryPolicy;

/// The largest answer body read from the server: a real answer is kilobytes, and an endless
/// one must not exhaust memory. The pages of a refresh's Lists together are capped by its
/// [`RefreshBudget`].
pub const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;

/// How the client talks to the API.
#[derive(Clone)]
pub struct ClientOptions {
    /// Base URL override (`--endpoint`, `CLUSTERFORM_ENDPOINT`, provider `endpoint`); `None`
    /// means the regional Google endpoint of each request.
    pub endpoint: Option<String>,
    /// `User-Agent` header.
    pub user_agent: String,
    /// Timeout of one HTTP request (a `:wait` call gets its wait time on top).
    pub request_timeout: Duration,
    /// Retry limits.
    pub retry: RetryPolicy,
    /// The largest answer body read ([`MAX_ANSWER_BYTES`] unless a test lowers it).
    pub max_answer_bytes: usize,
    /// What the Lists of one refresh may read together (the default unless a test lowers it).
    pub refresh_budget: RefreshBudget,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            endpoint: None,
            user_agent: format!("clusterform/{}", env!("CARGO_PKG_VERSION")),
            request_timeout: Duration::from_secs(60),
            retry: RetryPolicy::default(),
            max_answer_bytes: MAX_ANSWER_BYTES,
            refresh_budget: RefreshBudget::default(),
        }
    }
}

impl fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientOptions")
            .field("endpoint", &self.endpoint.as_deref().map(redact_userinfo))
            .field("user_agent", &self.user_agent)
            .field("request_timeout", &self.request_timeout)
            .field("retry", &self.retry)
            .field("max_answer_bytes", &self.max_answer_bytes)
            .field("refresh_budget", &self.refresh_budget)
            .finish()
    }
}
