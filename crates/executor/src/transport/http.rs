//! The HTTP conventions the cluster client ([`crate::ApiClient`]) and the Cloud Storage client
//! ([`crate::StorageClient`]) share, written once: which endpoint overrides are accepted
//! (https, or plain http only to loopback, never credentials, because the bearer token
//! travels in a header), the [`Connection`] both send with (a `reqwest` client that never
//! follows redirects, the token source, the timeout, answers read with a size cap),
//! `Retry-After`, the retry budget, and how an error quotes a body or a transport failure.
//! Each client keeps its own error type and maps these outcomes into it.

use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use reqwest::{Method, RequestBuilder, Url};
use tokio::time::Instant;

use crate::transport::auth::{AuthError, TokenSource};
use crate::transport::budget::{BudgetSpent, ListCharge};
use crate::transport::options::ClientOptions;
use crate::transport::retry::{RetryPolicy, parse_retry_after};

/// The most an answer's announced length reserves before its bytes arrive: a server that
/// claims a huge body must send it to take that memory.
const MAX_RESERVED_BYTES: usize = 4 << 20;

/// How much of an unusable answer an error quotes.
const BODY_QUOTE_CHARS: usize = 120;

/// Why an endpoint override is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EndpointRefusal {
    /// Plain http to a host that is not loopback: the token would travel in clear text.
    Insecure,
    /// Not a usable base URL; the reason says why.
    Invalid(String),
}

/// Checks an endpoint override: an absolute http(s) URL without query, fragment or
/// credentials, plain http only to a loopback host.
pub(crate) fn check_endpoint(raw: &str) -> Result<Url, EndpointRefusal> {
    let invalid = |reason: &str| EndpointRefusal::Invalid(reason.to_owned());
    let url = Url::parse(raw).map_err(|e| invalid(&e.to_string()))?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("it must not have a query or fragment"));
    }
    // reqwest would send them as a second `Authorization` header next to the bearer token.
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(
            "it must not carry a user name or password (clusterform authenticates with a bearer token)",
        ));
    }
    match url.scheme() {
        "https" => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        "http" => Err(EndpointRefusal::Insecure),
        other => Err(invalid(&format!("scheme `{other}` is not http or https"))),
    }
}

/// Whether an endpoint override is a plain `http` URL (checked by [`check_endpoint`]).
fn is_plain_http(endpoint: &str) -> bool {
    Url::parse(endpoint).is_ok_and(|url| url.scheme() == "http")
}

fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// What both clients send with: the HTTP client, the token source and the limits of
/// [`ClientOptions`]. Cheap to clone: clones share the connection pool and the token source.
#[derive(Clone)]
pub(crate) struct Connection {
    http: reqwest::Client,
    tokens: Arc<dyn TokenSource>,
    /// Timeout of one request (a caller may give one request more).
    pub(crate) request_timeout: Duration,
    /// Retry limits.
    pub(crate) retry: RetryPolicy,
    /// The largest answer body read.
    pub(crate) max_answer_bytes: usize,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("request_timeout", &self.request_timeout)
            .field("retry", &self.retry)
            .field("max_answer_bytes", &self.max_answer_bytes)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// A connection with the limits of `options` (its endpoint is the caller's to check). Its
    /// HTTP client never follows a redirect: following one would re-send the request, its body
    /// and the bearer token wherever the server points (a 3xx is reported instead).
    pub(crate) fn new(
        options: ClientOptions,
        tokens: Arc<dyn TokenSource>,
    ) -> reqwest::Result<Self> {
        let builder = reqwest::Client::builder()
            .user_agent(options.user_agent)
            .redirect(reqwest::redirect::Policy::none());
        // Loading the system's CA roots reads every file of /etc/ssl/certs (a few
        // milliseconds, a quarter of a small plan's CPU), and a client whose endpoint is plain
        // http never makes a TLS connection: it sends nothing but to that endpoint, and
        // follows no redirect. Without roots, a broken certificate store (`SSL_CERT_FILE`)
        // does not stop it either.
        let builder = if options.endpoint.as_deref().is_some_and(is_plain_http) {
            builder.tls_certs_only([])
        } else {
            builder
        };
        let http = builder.build()?;
        Ok(Self {
            http,
            tokens,
            request_timeout: options.request_timeout,
            retry: options.retry,
            max_answer_bytes: options.max_answer_bytes,
        })
    }

    /// A request carrying a fresh bearer token, timed out after `timeout`.
    pub(crate) async fn request(
        &self,
        method: Method,
        url: Url,
        timeout: Duration,
    ) -> Result<RequestBuilder, AuthError> {
        let token = self.tokens.token().await?;
        Ok(self
            .http
            .request(method, url)
            .bearer_auth(token.secret())
            .timeout(timeout))
    }

    /// The answer's body, read chunk by chunk and abandoned as soon as it passes
    /// `max_answer_bytes`, or takes the refresh's answers past their total (`charge`, for a
    /// List page), so that an endless answer costs at most that in memory.
    pub(crate) async fn read_capped(
        &self,
        response: &mut reqwest::Response,
        charge: Option<ListCharge<'_>>,
    ) -> Result<Vec<u8>, CappedReadError> {
        // Sized once for the length the server announces (a List page is tens of kilobytes),
        // but never beyond what a claimed length alone may make the tool reserve.
        let announced = response.content_length().unwrap_or(0);
        let reserved = usize::try_from(announced)
            .unwrap_or(usize::MAX)
            .min(MAX_RESERVED_BYTES)
            .min(self.max_answer_bytes);
        let mut body = Vec::with_capacity(reserved);
        while let Some(chunk) = response.chunk().await.map_err(CappedReadError::Transport)? {
            if body.len() + chunk.len() > self.max_answer_bytes {
                return Err(CappedReadError::TooLarge);
            }
            if let Some(charge) = charge {
                charge
                    .bytes(chunk.len())
                    .map_err(|spent| CappedReadError::BudgetSpent(Box::new(spent)))?;
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// The retry budget of one request, starting now.
    pub(crate) fn retry_budget(&self) -> RetryBudget {
        RetryBudget::start(self.retry)
    }
}

/// The server's `Retry-After`, if it gave a usable one.
pub(crate) fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .and_then(parse_retry_after)
}

/// Why an answer's body could not be read whole.
#[derive(Debug)]
pub(crate) enum CappedReadError {
    /// The connection failed while reading.
    Transport(reqwest::Error),
    /// The body passed the cap.
    TooLarge,
    /// The body took the refresh's answers past their total.
    BudgetSpent(Box<BudgetSpent>),
}

/// The time and attempts one request has left under a [`RetryPolicy`].
#[derive(Debug)]
pub(crate) struct RetryBudget {
    policy: RetryPolicy,
    started: Instant,
    failed_attempts: u32,
}

impl RetryBudget {
    /// A budget that starts now.
    pub(crate) fn start(policy: RetryPolicy) -> Self {
        Self {
            policy,
            started: Instant::now(),
            failed_attempts: 0,
        }
    }

    /// Attempts that failed so far.
    pub(crate) fn failed_attempts(&self) -> u32 {
        self.failed_attempts
    }

    /// Counts a failed attempt; answers how long to wait before the next one (the server's
    /// delay if it gave one, else the policy's backoff), or `None` when the attempts or the
    /// time are used up.
    pub(crate) fn next_delay(&mut self, server_delay: Option<Duration>) -> Option<Duration> {
        self.failed_attempts += 1;
        let delay = server_delay.unwrap_or_else(|| self.policy.backoff(self.failed_attempts));
        let exhausted = self.failed_attempts >= self.policy.max_attempts
            || self.started.elapsed() + delay > self.policy.max_elapsed;
        (!exhausted).then_some(delay)
    }
}

/// The start of a body, for an error message.
pub(crate) fn quote_body(body: &[u8]) -> String {
    String::from_utf8_lossy(body)
        .chars()
        .take(BODY_QUOTE_CHARS)
        .collect()
}

/// What a request that got no answer ran into. reqwest's own message ("error sending
/// request") hides the cause and names the URL, which the caller's error names already; its
/// sources say the cause.
pub(crate) fn describe_transport_error(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut parts = vec![if error.is_timeout() {
        "request timed out".to_owned()
    } else {
        error.to_string()
    }];
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        parts.push(cause.to_string());
        source = cause.source();
    }
    parts.dedup();
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_only_to_loopback() {
        for ok in [
            "http://127.0.0.1:8080",
            "http://127.1.2.3",
            "http://[::1]:9000/",
            "http://localhost:1",
            "https://example.com",
        ] {
            assert!(check_endpoint(ok).is_ok(), "{ok} refused");
        }
        for insecure in ["http://10.0.0.1", "http://example.com", "http://[::2]"] {
            assert_eq!(
                check_endpoint(insecure),
                Err(EndpointRefusal::Insecure),
                "{insecure}"
            );
        }
        for invalid in [
            "ftp://x",
            "not a url",
            "https://x/?a=b",
            "https://x/#f",
            "https://u:p@x",
        ] {
            assert!(
                matches!(check_endpoint(invalid), Err(EndpointRefusal::Invalid(_))),
                "{invalid}"
            );
        }
    }

    #[test]
    fn the_budget_ends_at_the_attempt_limit() {
        let mut budget = RetryBudget::start(RetryPolicy {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(1),
            max_elapsed: Duration::from_secs(60),
        });
        assert!(budget.next_delay(None).is_some());
        assert_eq!(
            budget.next_delay(Some(Duration::from_millis(7))),
            Some(Duration::from_millis(7))
        );
        assert_eq!(budget.next_delay(None), None);
        assert_eq!(budget.failed_attempts(), 3);
    }

    #[test]
    fn the_budget_ends_when_the_wait_would_pass_the_time_limit() {
        let mut budget = RetryBudget::start(RetryPolicy {
            max_elapsed: Duration::from_secs(1),
            ..RetryPolicy::default()
        });
        assert_eq!(budget.next_delay(Some(Duration::from_secs(2))), None);
    }

    #[test]
    fn bodies_are_quoted_short() {
        assert_eq!(quote_body(&[b'x'; 500]).len(), BODY_QUOTE_CHARS);
    }
}
