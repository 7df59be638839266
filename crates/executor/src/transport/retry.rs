//! Which failed requests are tried again, and how long to wait before doing so (AIP-194).
//!
//! The decision depends on what the call is: a read (GET, `:wait`, the Slurm job listing) may
//! be repeated freely; an update or delete is idempotent in effect (the same mask and body, or
//! deleting again, lands in the same place); a create is not, so a create that lost its answer
//! is looked up before it is sent again; a Cloud Storage call carries a generation
//! precondition, so repeating it is safe either way. See `docs/executor.md` for the table.

use std::time::Duration;

use clusterform_model::Code;
use rand::Rng;

/// Limits on retrying one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total, the first included.
    pub max_attempts: u32,
    /// Upper bound of the first backoff.
    pub initial_backoff: Duration,
    /// Upper bound of any backoff.
    pub max_backoff: Duration,
    /// No retry starts after this much time since the first attempt.
    pub max_elapsed: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 6,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(16),
            max_elapsed: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// Exponential backoff with full jitter: uniform in `[0, min(max, initial * 2^(n-1))]`
    /// after the `n`th failed attempt, so that many clients do not retry in lockstep.
    pub fn backoff(&self, failed_attempts: u32) -> Duration {
        let exponent = failed_attempts.saturating_sub(1).min(30);
        let ceiling = self
            .initial_backoff
            .saturating_mul(1 << exponent)
            .min(self.max_backoff);
        let millis = u64::try_from(ceiling.as_millis()).unwrap_or(u64::MAX);
        Duration::from_millis(rand::rng().random_range(0..=millis))
    }
}

/// What a call does, as far as repeating it is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallClass {
    /// GET, `:wait`, the Slurm job listing: no side effect.
    Read,
    /// PATCH or DELETE: repeating it has the same effect as sending it once.
    Idempotent,
    /// POST create: repeating it blindly could fail with `ALREADY_EXISTS` on our own cluster.
    Create,
    /// A Cloud Storage read, or a write or delete guarded by a generation precondition:
    /// repeating it is safe whatever an earlier attempt did.
    Guarded,
    /// The create of a lock object: [`Self::Guarded`], but a `429` says another run is taking
    /// or releasing the lock, an answer rather than a refusal to wait out.
    LockCreate,
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Give up and report the error.
    Fail,
    /// Try again, after the server's `Retry-After` if it gave one.
    Retry { after: Option<Duration> },
    /// The request may or may not have been carried out: look at the resource first.
    LookFirst,
}

/// The verdict on an error answer.
pub(crate) fn classify_status(
    http_status: u16,
    code: Code,
    class: CallClass,
    retry_after: Option<Duration>,
) -> Verdict {
    match (http_status, code) {
        // The service did not process the request: safe for every call.
        (503, _) | (_, Code::Unavailable) => Verdict::Retry { after: retry_after },
        (429, _) | (_, Code::ResourceExhausted) => match class {
            CallClass::LockCreate => Verdict::Fail,
            _ => Verdict::Retry { after: retry_after },
        },
        // Another operation holds the cluster. A read may simply be repeated; for a change the
        // engine waits for the cluster to settle (for as long as the action's timeout allows)
        // and sends it again, which a fixed retry window could not do.
        (_, Code::Aborted) => match class {
            CallClass::Read => Verdict::Retry { after: retry_after },
            CallClass::Create
            | CallClass::Idempotent
            | CallClass::Guarded
            | CallClass::LockCreate => Verdict::Fail,
        },
        // The request may have been processed before the server failed.
        (500 | 502 | 504, _) => match class {
            CallClass::Read | CallClass::Guarded | CallClass::LockCreate => {
                Verdict::Retry { after: retry_after }
            }
            CallClass::Create => Verdict::LookFirst,
            CallClass::Idempotent => Verdict::Fail,
        },
        _ => Verdict::Fail,
    }
}

/// The verdict on a request that got no answer.
pub(crate) fn classify_transport(class: CallClass) -> Verdict {
    match class {
        CallClass::Read | CallClass::Idempotent | CallClass::Guarded | CallClass::LockCreate => {
            Verdict::Retry { after: None }
        }
        CallClass::Create => Verdict::LookFirst,
    }
}

/// `Retry-After` in seconds (the HTTP-date form is not used by Google APIs).
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_stays_under_the_exponential_ceiling() {
        let policy = RetryPolicy {
            max_attempts: 10,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(1000),
            max_elapsed: Duration::from_secs(60),
        };
        for _ in 0..100 {
            assert!(policy.backoff(1) <= Duration::from_millis(100));
            assert!(policy.backoff(3) <= Duration::from_millis(400));
            assert!(policy.backoff(20) <= Duration::from_millis(1000));
        }
    }

    /// The largest and smallest of many draws of `policy.backoff(failed_attempts)`.
    fn drawn_range(policy: &RetryPolicy, failed_attempts: u32) -> (Duration, Duration) {
        let draws: Vec<Duration> = (0..500).map(|_| policy.backoff(failed_attempts)).collect();
        let smallest = draws.iter().min().copied().unwrap_or_default();
        let largest = draws.iter().max().copied().unwrap_or_default();
        (smallest, largest)
    }

    #[test]
    fn backoff_doubles_per_failure_up_to_the_cap_with_full_jitter() {
        let policy = RetryPolicy {
            max_attempts: 10,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(1000),
            max_elapsed: Duration::from_secs(60),
        };
        // Uniform draws over [0, ceiling]: with 500 of them, missing both the top and the
        // bottom tenth by chance has a probability below 1e-22.
        for (failed_attempts, ceiling_ms) in [(1, 100), (2, 200), (3, 400), (4, 800), (5, 1000)] {
            let ceiling = Duration::from_millis(ceiling_ms);
            let (smallest, largest) = drawn_range(&policy, failed_attempts);
            assert!(largest <= ceiling, "after {failed_attempts}: {largest:?}");
            assert!(
                largest >= ceiling.mul_f64(0.9),
                "after {failed_attempts}: the ceiling is not reached, {largest:?}"
            );
            assert!(
                smallest <= ceiling.mul_f64(0.1),
                "after {failed_attempts}: jitter does not reach down to zero, {smallest:?}"
            );
        }
    }

    #[test]
    fn backoff_never_overflows() {
        let policy = RetryPolicy {
            max_backoff: Duration::from_secs(u64::MAX),
            ..RetryPolicy::default()
        };
        let (_, largest) = drawn_range(&policy, u32::MAX);
        assert!(largest <= Duration::from_millis(500).saturating_mul(1 << 30));
        assert!(RetryPolicy::default().backoff(0) <= Duration::from_millis(500));
    }

    #[test]
    fn verdicts_follow_aip_194() {
        use CallClass::*;
        let retry = Verdict::Retry { after: None };
        assert_eq!(classify_status(503, Code::Unavailable, Create, None), retry);
        assert_eq!(
            classify_status(
                429,
                Code::ResourceExhausted,
                Idempotent,
                Some(Duration::from_secs(2))
            ),
            Verdict::Retry {
                after: Some(Duration::from_secs(2))
            }
        );
        assert_eq!(classify_status(409, Code::Aborted, Read, None), retry);
        assert_eq!(
            classify_status(409, Code::Aborted, Idempotent, None),
            Verdict::Fail
        );
        assert_eq!(
            classify_status(409, Code::Aborted, Create, None),
            Verdict::Fail
        );
        assert_eq!(classify_status(500, Code::Internal, Read, None), retry);
        assert_eq!(
            classify_status(500, Code::Internal, Idempotent, None),
            Verdict::Fail
        );
        assert_eq!(
            classify_status(504, Code::DeadlineExceeded, Create, None),
            Verdict::LookFirst
        );
        for (code, name) in [
            (400, Code::InvalidArgument),
            (404, Code::NotFound),
            (409, Code::AlreadyExists),
            (403, Code::PermissionDenied),
            (401, Code::Unauthenticated),
            (400, Code::FailedPrecondition),
            (501, Code::Unimplemented),
        ] {
            assert_eq!(
                classify_status(code, name, Read, None),
                Verdict::Fail,
                "{name:?}"
            );
        }
        assert_eq!(classify_transport(Idempotent), retry);
        assert_eq!(classify_transport(LockCreate), retry);
        assert_eq!(classify_transport(Create), Verdict::LookFirst);
    }

    /// Cloud Storage's answers carry no canonical name: the code is the HTTP status's.
    #[test]
    fn guarded_calls_retry_exactly_the_statuses_a_precondition_makes_safe() {
        use CallClass::*;
        for http in [
            100, 400, 401, 403, 404, 409, 412, 499, 501, 503, 429, 500, 502, 504,
        ] {
            let retried = matches!(http, 429 | 500 | 502 | 503 | 504);
            let verdict = classify_status(http, Code::of_http(http), Guarded, None);
            assert_eq!(verdict == Verdict::Retry { after: None }, retried, "{http}");
            let verdict = classify_status(http, Code::of_http(http), LockCreate, None);
            assert_eq!(
                verdict == Verdict::Retry { after: None },
                retried && http != 429,
                "{http}"
            );
        }
    }

    #[test]
    fn retry_after_is_seconds() {
        assert_eq!(parse_retry_after(" 3 "), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }
}
