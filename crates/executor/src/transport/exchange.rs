//! The one retrying exchange both clients send through: a request is sent with a fresh token,
//! its answer read with the size cap, and a failed attempt tried again as its [`CallClass`]
//! allows (AIP-194, see [`classify_status`]), after the server's `Retry-After` or the policy's
//! backoff, until the retry budget of time and attempts is used up.
//!
//! What an answer means is each client's own: an [`Exchanging`] part turns final answers and
//! failures into its reply and error, and may hold requests back (the API's region gates),
//! end the waiting early (a cancelled apply) or look whether a request that lost its answer
//! was carried out (a create).

use std::fmt;
use std::time::Duration;

use clusterform_model::Code;
use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode, Url};
use serde_json::Value;

use crate::transport::auth::AuthError;
use crate::transport::budget::{BudgetSpent, ListCharge};
use crate::transport::http::{
    CappedReadError, Connection, describe_transport_error, quote_body, retry_after,
};
use crate::transport::redact::redact_userinfo;
use crate::transport::retry::{CallClass, Verdict, classify_status, classify_transport};

/// How much of a redirect's `Location` is kept.
const LOCATION_QUOTE_CHARS: usize = 200;

/// One request, as every attempt sends it.
#[derive(Debug)]
pub(crate) struct Request<'a> {
    pub(crate) method: Method,
    pub(crate) url: Url,
    pub(crate) body: Body<'a>,
    /// What repeating it does, which decides what is retried.
    pub(crate) class: CallClass,
    /// Timeout of one attempt.
    pub(crate) timeout: Duration,
    /// The refresh budget a List page's answers count against; `None` for any other request.
    pub(crate) charge: Option<ListCharge<'a>>,
}

/// What a request carries.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Body<'a> {
    /// Nothing.
    Empty,
    /// A JSON document.
    Json(&'a Value),
    /// Bytes sent as they are, with their content type.
    Bytes {
        content: &'a [u8],
        content_type: &'static str,
    },
}

/// An answer read whole.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Vec<u8>,
    /// The server's `Retry-After`, if it gave a usable one.
    pub(crate) retry_after: Option<Duration>,
    /// Whether an earlier attempt failed, so the request may have been carried out before
    /// this answer.
    pub(crate) after_retry: bool,
}

/// An attempt that got no usable answer.
#[derive(Debug)]
pub(crate) enum Unanswered {
    /// No token could be had; nothing was sent.
    Auth(AuthError),
    /// The connection failed or timed out: what the HTTP stack said.
    NoAnswer(String),
    /// A 3xx, never followed: following would re-send the request (its body and the bearer
    /// token included) to wherever the server points.
    Redirected {
        status: u16,
        /// The `Location` header, user name and password redacted.
        location: String,
    },
    /// The answer passed the size cap.
    TooLarge,
    /// A List page's answer took the refresh's answers past their total.
    BudgetSpent(Box<BudgetSpent>),
}

impl Unanswered {
    fn verdict(&self, class: CallClass) -> Verdict {
        match self {
            Self::NoAnswer(_) => classify_transport(class),
            // Asking again would meet the same token source, redirect or flood.
            Self::Auth(_) | Self::Redirected { .. } | Self::TooLarge | Self::BudgetSpent(_) => {
                Verdict::Fail
            }
        }
    }
}

impl fmt::Display for Unanswered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Auth(error) => write!(f, "{error}"),
            Self::NoAnswer(message) => write!(f, "no answer: {message}"),
            Self::Redirected { status, location } => write!(f, "a {status} redirect to {location}"),
            Self::TooLarge => write!(f, "an answer over the size cap"),
            Self::BudgetSpent(spent) => write!(f, "{spent}"),
        }
    }
}

/// A client's part in an exchange: what its answers mean, and how it holds requests back.
pub(crate) trait Exchanging {
    /// What a finished exchange gives the client.
    type Reply;
    /// The client's error.
    type Error;

    /// The canonical code of an error answer.
    fn code(&self, answer: &Answer) -> Code;

    /// The reply to the last answer: a success, an error status that is not retried, or one
    /// whose retries ran out.
    fn reply(&mut self, answer: Answer) -> Result<Self::Reply, Self::Error>;

    /// The error of an attempt without a usable answer that is not, or no longer, retried.
    fn unanswered(&self, request: &Request<'_>, failure: Unanswered) -> Self::Error;

    /// Waits until the request may be sent.
    async fn ready(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }

    /// Waits `delay` before the next attempt.
    async fn pause(&mut self, delay: Duration) -> Result<(), Self::Error> {
        tokio::time::sleep(delay).await;
        Ok(())
    }

    /// Told once an attempt may have been acted on by the service (it was not answered with
    /// a refusal that says it was not processed).
    fn may_have_acted(&mut self) {}

    /// Whether an error answer is final whatever its status says about retrying (a quota
    /// that waiting cannot raise).
    fn is_final(&self, answer: &Answer) -> bool {
        let _ = answer;
        false
    }

    /// The delay before retrying after a quota error, from the server's.
    fn hold_after_quota(&mut self, server_delay: Option<Duration>) -> Option<Duration> {
        server_delay
    }

    /// After an attempt that may or may not have been carried out ([`Verdict::LookFirst`]):
    /// the reply when it was, `None` to send it again.
    async fn look(&mut self) -> Result<Option<Self::Reply>, Self::Error> {
        Ok(None)
    }
}

/// A failed attempt that is retried, or whose retries may run out.
enum Failure {
    Status(Answer),
    Unanswered(Unanswered),
}

impl Failure {
    /// Whether the service answered that it did not process the request: nothing was started.
    fn was_refused(&self, verdict: Verdict) -> bool {
        matches!(verdict, Verdict::Retry { .. }) && matches!(self, Self::Status(_))
    }

    fn is_quota_error(&self, code: Option<Code>) -> bool {
        match self {
            Self::Status(answer) => {
                answer.status == StatusCode::TOO_MANY_REQUESTS
                    || code == Some(Code::ResourceExhausted)
            }
            Self::Unanswered(_) => false,
        }
    }

    fn end<P: Exchanging>(self, request: &Request<'_>, part: &mut P) -> Result<P::Reply, P::Error> {
        match self {
            Self::Status(answer) => part.reply(answer),
            Self::Unanswered(failure) => Err(part.unanswered(request, failure)),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Status(answer) => write!(f, "HTTP {}", answer.status.as_u16()),
            Self::Unanswered(failure) => write!(f, "{failure}"),
        }
    }
}

/// Sends `request` until an answer is final for `part`, retrying under the connection's
/// policy what the request's class allows.
pub(crate) async fn exchange<P: Exchanging>(
    connection: &Connection,
    request: &Request<'_>,
    part: &mut P,
) -> Result<P::Reply, P::Error> {
    let mut budget = connection.retry_budget();
    loop {
        part.ready().await?;
        let started = std::time::Instant::now();
        let attempted = attempt(connection, request).await;
        log_attempt(request, &attempted, started.elapsed());
        let (failure, code, verdict) = match attempted {
            Ok(mut answer) => {
                answer.after_retry = budget.failed_attempts() > 0;
                if answer.status.is_success() {
                    return part.reply(answer);
                }
                let code = part.code(&answer);
                let verdict = if part.is_final(&answer) {
                    Verdict::Fail
                } else {
                    classify_status(
                        answer.status.as_u16(),
                        code,
                        request.class,
                        answer.retry_after,
                    )
                };
                (Failure::Status(answer), Some(code), verdict)
            }
            Err(failure) => {
                let verdict = failure.verdict(request.class);
                (Failure::Unanswered(failure), None, verdict)
            }
        };
        if !failure.was_refused(verdict) {
            part.may_have_acted();
        }
        let server_delay = match verdict {
            Verdict::Fail => return failure.end(request, part),
            Verdict::Retry { after } => after,
            Verdict::LookFirst => {
                if let Some(reply) = part.look().await? {
                    return Ok(reply);
                }
                None
            }
        };
        let server_delay = if failure.is_quota_error(code) {
            part.hold_after_quota(server_delay)
        } else {
            server_delay
        };
        let Some(delay) = budget.next_delay(server_delay) else {
            return failure.end(request, part);
        };
        tracing::debug!(
            method = %request.method, url = %request.url, attempt = budget.failed_attempts(),
            ?delay, error = %failure, "retrying"
        );
        part.pause(delay).await?;
    }
}

/// `-v`: each request with its status (or why it got none) and how long it took; `-vv` adds the
/// bodies, cut short. The URL is shown without user information; the token is never logged,
/// and the log lines hide the configuration's sensitive values as every stderr line does.
fn log_attempt(request: &Request<'_>, attempted: &Result<Answer, Unanswered>, took: Duration) {
    let url = redact_userinfo(request.url.as_str());
    let millis = took.as_millis();
    if let Body::Json(body) = request.body {
        tracing::trace!(method = %request.method, %url, body = %quote_body(body.to_string().as_bytes()), "request body");
    }
    match attempted {
        Ok(answer) => {
            tracing::debug!(method = %request.method, %url, status = answer.status.as_u16(), millis, "answered");
            tracing::trace!(method = %request.method, %url, body = %quote_body(&answer.body), "answer body");
        }
        Err(failure) => {
            tracing::debug!(method = %request.method, %url, millis, error = %failure, "no answer");
        }
    }
}

/// One HTTP exchange: the answer, whatever its status, unless it is a redirect.
async fn attempt(connection: &Connection, request: &Request<'_>) -> Result<Answer, Unanswered> {
    let mut builder = connection
        .request(request.method.clone(), request.url.clone(), request.timeout)
        .await
        .map_err(Unanswered::Auth)?;
    builder = match request.body {
        Body::Empty => builder,
        Body::Json(value) => builder.json(value),
        Body::Bytes {
            content,
            content_type,
        } => builder
            .header(reqwest::header::CONTENT_TYPE, content_type)
            .body(content.to_vec()),
    };
    let mut response = builder.send().await.map_err(no_answer)?;
    let status = response.status();
    if status.is_redirection() {
        return Err(Unanswered::Redirected {
            status: status.as_u16(),
            location: location(&response),
        });
    }
    let retry_after = retry_after(&response);
    let headers = response.headers().clone();
    let body = connection
        .read_capped(&mut response, request.charge)
        .await
        .map_err(|error| match error {
            CappedReadError::Transport(e) => no_answer(e),
            CappedReadError::TooLarge => Unanswered::TooLarge,
            CappedReadError::BudgetSpent(spent) => Unanswered::BudgetSpent(spent),
        })?;
    Ok(Answer {
        status,
        headers,
        body,
        retry_after,
        after_retry: false,
    })
}

fn no_answer(error: reqwest::Error) -> Unanswered {
    Unanswered::NoAnswer(describe_transport_error(error))
}

/// A redirect's `Location`, redacted and cut short.
fn location(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(reqwest::header::LOCATION)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .map(|l| {
            redact_userinfo(&l)
                .chars()
                .take(LOCATION_QUOTE_CHARS)
                .collect()
        })
        .unwrap_or_else(|| "nowhere (no Location header)".to_owned())
}
