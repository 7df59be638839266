//! Fault injection: the `FaultSpec` (parsed from strings such as
//! `503=0.2,429=0.1,drop=0.05,opfail=0.5,retry-after=1,jitter-ms=200,seed=7`, and
//! optionally `location=us-east1` to fault one location only) and the seeded dice that decide, request by request, how long to delay it and
//! whether to answer normally, with an error status, or by dropping the
//! connection. One RNG, seeded from the spec, makes every run with the same seed
//! and request sequence identical.

use std::str::FromStr;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::api_error::{ApiError, Code};

/// HTTP statuses the injector can answer with.
/// 401 stands for a credential that expired or was revoked while the client runs.
const FAULT_STATUSES: [u16; 4] = [401, 429, 500, 503];

/// What can go wrong, and how often.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultSpec {
    /// Seed of the fault RNG.
    pub seed: u64,
    /// `(HTTP status, probability)` pairs; statuses 401, 429, 500 and 503.
    pub error_rates: Vec<(u16, f64)>,
    /// Probability that a request's connection is closed without an answer.
    pub drop_rate: f64,
    /// Probability that a new create/update/delete operation finishes with an error.
    pub operation_failure_rate: f64,
    /// The `Retry-After` value (seconds) of injected 429 answers.
    pub retry_after_seconds: u64,
    /// Each request is delayed by a random time from zero to this, on top of the latency.
    pub jitter: Duration,
    /// The only location whose requests and operations the faults (and jitter) touch; `None`
    /// for every request. A request is for a location when its path has
    /// `/locations/{location}/` (or ends with `/locations/{location}`).
    pub location: Option<String>,
}

/// A fault spec item that could not be understood.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad fault item `{item}`: {problem}")]
pub struct FaultSpecError {
    /// The offending `key=value` item as written.
    pub item: String,
    /// What is wrong with it.
    pub problem: String,
}

impl FromStr for FaultSpec {
    type Err = FaultSpecError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut spec = FaultSpec::default();
        let mut seen_keys: Vec<String> = Vec::new();
        for item in text
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
        {
            let fail = |problem: String| FaultSpecError {
                item: item.to_owned(),
                problem,
            };
            let (key, value) = item
                .split_once('=')
                .map(|(key, value)| (key.trim(), value.trim()))
                .ok_or_else(|| fail("expected KEY=VALUE".to_owned()))?;
            if seen_keys.iter().any(|seen| seen == key) {
                return Err(fail(format!("`{key}` is given more than once")));
            }
            seen_keys.push(key.to_owned());
            spec.set(key, value).map_err(fail)?;
        }
        spec.check_total().map_err(|problem| FaultSpecError {
            item: text.trim().to_owned(),
            problem,
        })?;
        Ok(spec)
    }
}

impl FaultSpec {
    fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        match key {
            "seed" => self.seed = parse_integer(value)?,
            "retry-after" => self.retry_after_seconds = parse_integer(value)?,
            "jitter-ms" => self.jitter = Duration::from_millis(parse_integer(value)?),
            "location" if value.is_empty() || value.contains('/') => {
                return Err(format!("`{value}` is not a location"));
            }
            "location" => self.location = Some(value.to_owned()),
            "drop" => self.drop_rate = parse_probability(value)?,
            "opfail" => self.operation_failure_rate = parse_probability(value)?,
            status => {
                let status: u16 = status.parse().map_err(|_| {
                    format!("unknown key `{status}`; expected 401, 429, 500, 503, drop, opfail, retry-after, jitter-ms, location or seed")
                })?;
                if !FAULT_STATUSES.contains(&status) {
                    return Err(format!(
                        "status {status} cannot be injected; use 401, 429, 500 or 503"
                    ));
                }
                self.error_rates.push((status, parse_probability(value)?));
            }
        }
        Ok(())
    }

    /// The request-level probabilities share one roll of the dice, so they
    /// must not add up to more than 1.
    fn check_total(&self) -> Result<(), String> {
        let total = self.drop_rate + self.error_rates.iter().map(|(_, rate)| rate).sum::<f64>();
        if total > 1.0 + f64::EPSILON {
            return Err(format!(
                "error and drop rates add up to {total}, more than 1"
            ));
        }
        Ok(())
    }

    /// Whether the faults apply to a request on `path`.
    pub(crate) fn applies_to_path(&self, path: &str) -> bool {
        let Some(location) = &self.location else {
            return true;
        };
        let segment = format!("/locations/{location}");
        path.match_indices(&segment).any(|(at, _)| {
            let rest = &path[at + segment.len()..];
            rest.is_empty() || rest.starts_with('/') || rest.starts_with(':')
        })
    }

    /// Whether the faults apply to operations in `location`.
    pub(crate) fn applies_to_location(&self, location: &str) -> bool {
        self.location.as_deref().is_none_or(|only| only == location)
    }

    fn request_fault_rate(&self) -> f64 {
        self.drop_rate + self.error_rates.iter().map(|(_, rate)| rate).sum::<f64>()
    }
}

fn parse_integer(value: &str) -> Result<u64, String> {
    value
        .parse()
        .map_err(|_| format!("`{value}` is not a non-negative integer"))
}

fn parse_probability(value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(rate) if (0.0..=1.0).contains(&rate) => Ok(rate),
        _ => Err(format!("`{value}` is not a probability between 0 and 1")),
    }
}

/// What the injector decided for one request.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum RequestFault {
    /// Close the connection without answering.
    Drop,
    /// Answer with this error instead of handling the request.
    Error(ApiError),
}

/// A fault spec with its RNG.
#[derive(Debug)]
pub(crate) struct FaultDice {
    spec: FaultSpec,
    rng: SmallRng,
}

impl FaultDice {
    pub(crate) fn new(spec: FaultSpec) -> Self {
        let rng = SmallRng::seed_from_u64(spec.seed);
        FaultDice { spec, rng }
    }

    /// The spec the dice roll for.
    pub(crate) fn spec(&self) -> &FaultSpec {
        &self.spec
    }

    /// Rolls once for an API request; no roll is spent when no request fault is configured.
    pub(crate) fn roll_request(&mut self) -> Option<RequestFault> {
        if self.spec.request_fault_rate() <= 0.0 {
            return None;
        }
        let roll: f64 = self.rng.random();
        let mut threshold = self.spec.drop_rate;
        if roll < threshold {
            return Some(RequestFault::Drop);
        }
        for (status, rate) in &self.spec.error_rates {
            threshold += rate;
            if roll < threshold {
                return Some(RequestFault::Error(self.injected_error(*status)));
            }
        }
        None
    }

    /// Rolls the extra delay of one request; no roll is spent without jitter.
    pub(crate) fn roll_jitter(&mut self) -> Duration {
        if self.spec.jitter.is_zero() {
            return Duration::ZERO;
        }
        let most = u64::try_from(self.spec.jitter.as_millis()).unwrap_or(u64::MAX);
        Duration::from_millis(self.rng.random_range(0..=most))
    }

    /// Rolls once for a new operation: whether it will finish with an error.
    pub(crate) fn roll_operation_failure(&mut self) -> bool {
        if self.spec.operation_failure_rate <= 0.0 {
            return false;
        }
        self.rng.random::<f64>() < self.spec.operation_failure_rate
    }

    fn injected_error(&self, status: u16) -> ApiError {
        let code = Code::for_fault_status(status).unwrap_or(Code::Internal);
        let error = ApiError::new(code, format!("Injected fault: HTTP {status}."));
        if code == Code::ResourceExhausted {
            error.with_retry_after(self.spec.retry_after_seconds)
        } else {
            error
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_syntax_parses() {
        let spec: FaultSpec =
            "503=0.2, 429=0.1,500=0.05,drop=0.1,opfail=0.5,retry-after=1,jitter-ms=200,seed=7"
                .parse()
                .unwrap();
        assert_eq!(
            spec,
            FaultSpec {
                seed: 7,
                error_rates: vec![(503, 0.2), (429, 0.1), (500, 0.05)],
                drop_rate: 0.1,
                operation_failure_rate: 0.5,
                retry_after_seconds: 1,
                jitter: Duration::from_millis(200),
                location: None,
            }
        );
    }

    #[test]
    fn a_location_limits_the_faults_to_its_paths_and_operations() {
        let spec: FaultSpec = "429=1,location=us-east1".parse().unwrap();
        assert_eq!(spec.location.as_deref(), Some("us-east1"));
        for faulted in [
            "/v1beta1/projects/p/locations/us-east1/modelDevelopmentClusters",
            "/v1beta1/projects/p/locations/us-east1/operations/op-1:wait",
            "/v1beta1/projects/p/locations/us-east1",
        ] {
            assert!(spec.applies_to_path(faulted), "{faulted}");
        }
        for spared in [
            "/v1beta1/projects/p/locations/us-east11/modelDevelopmentClusters",
            "/v1beta1/projects/p/locations/europe-west4/modelDevelopmentClusters/us-east1",
            "/storage/v1/b/bucket/o",
        ] {
            assert!(!spec.applies_to_path(spared), "{spared}");
        }
        assert!(spec.applies_to_location("us-east1"));
        assert!(!spec.applies_to_location("europe-west4"));
        let everywhere = FaultSpec::default();
        assert!(everywhere.applies_to_path("/storage/v1/b/bucket/o"));
        assert!(everywhere.applies_to_location("europe-west4"));
        assert_eq!(
            "location=".parse::<FaultSpec>().unwrap_err().to_string(),
            "bad fault item `location=`: `` is not a location"
        );
    }

    #[test]
    fn a_401_fault_answers_unauthenticated() {
        let mut dice = FaultDice::new("401=1".parse().unwrap());
        let Some(RequestFault::Error(error)) = dice.roll_request() else {
            panic!("every request is faulted");
        };
        assert_eq!(error.code, Code::Unauthenticated);
    }

    #[test]
    fn an_empty_spec_means_no_faults() {
        assert_eq!("".parse::<FaultSpec>().unwrap(), FaultSpec::default());
    }

    #[test]
    fn errors_name_the_bad_item() {
        let cases = [
            (
                "503=0.2,404=0.1",
                "bad fault item `404=0.1`: status 404 cannot be injected; use 401, 429, 500 or 503",
            ),
            ("drop", "bad fault item `drop`: expected KEY=VALUE"),
            (
                "drop=2",
                "bad fault item `drop=2`: `2` is not a probability between 0 and 1",
            ),
            (
                "opfail=x",
                "bad fault item `opfail=x`: `x` is not a probability between 0 and 1",
            ),
            (
                "seed=-1",
                "bad fault item `seed=-1`: `-1` is not a non-negative integer",
            ),
            (
                "latency=5",
                "bad fault item `latency=5`: unknown key `latency`; expected 401, 429, 500, 503, drop, opfail, retry-after, jitter-ms, location or seed",
            ),
            (
                "seed=1,seed=2",
                "bad fault item `seed=2`: `seed` is given more than once",
            ),
            (
                "503=0.7,drop=0.5",
                "bad fault item `503=0.7,drop=0.5`: error and drop rates add up to 1.2, more than 1",
            ),
        ];
        for (text, message) in cases {
            assert_eq!(
                text.parse::<FaultSpec>().unwrap_err().to_string(),
                message,
                "{text}"
            );
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_faults() {
        let spec: FaultSpec = "503=0.3,drop=0.2,seed=11".parse().unwrap();
        let rolls = |spec: &FaultSpec| {
            let mut dice = FaultDice::new(spec.clone());
            (0..50).map(|_| dice.roll_request()).collect::<Vec<_>>()
        };
        let first = rolls(&spec);
        assert_eq!(first, rolls(&spec));
        assert!(first.contains(&None));
        assert!(first.contains(&Some(RequestFault::Drop)));
        assert!(
            first
                .iter()
                .any(|fault| matches!(fault, Some(RequestFault::Error(_))))
        );
    }

    #[test]
    fn injected_429_carries_retry_after() {
        let mut dice = FaultDice::new("429=1,retry-after=3".parse().unwrap());
        let Some(RequestFault::Error(error)) = dice.roll_request() else {
            panic!("a rate of 1 must always fault");
        };
        assert_eq!(error.code, Code::ResourceExhausted);
        assert_eq!(error.retry_after_seconds, Some(3));
    }

    #[test]
    fn jitter_stays_within_its_bound_and_varies() {
        let mut dice = FaultDice::new("jitter-ms=200,seed=4".parse().unwrap());
        let delays: Vec<Duration> = (0..200).map(|_| dice.roll_jitter()).collect();
        assert!(delays.iter().all(|d| *d <= Duration::from_millis(200)));
        assert!(delays.iter().any(|d| *d < Duration::from_millis(50)));
        assert!(delays.iter().any(|d| *d > Duration::from_millis(150)));
        let mut none = FaultDice::new(FaultSpec::default());
        assert_eq!(none.roll_jitter(), Duration::ZERO);
    }

    #[test]
    fn no_faults_never_fault() {
        let mut dice = FaultDice::new(FaultSpec::default());
        assert!((0..100).all(|_| dice.roll_request().is_none() && !dice.roll_operation_failure()));
    }
}
