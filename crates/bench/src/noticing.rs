//! Noticing that an operation finished: the delay between the emulator finishing an
//! operation (its `genericMetadata.updateTime` once done) and the client knowing it, for three
//! ways of following an operation. The samples of one duration run concurrently, one
//! operation each, so a 60 s case takes about a minute whatever the sample count.

use std::time::Duration;

use clusterform_executor::{ApiClient, OperationWaiter, WaitOptions};
use clusterform_model::Operation;
use futures::future::try_join_all;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::child::TOKEN;
use crate::error::BenchError;
use crate::fleet::{Member, REGIONS};
use crate::progress::progress;
use crate::server;
use crate::stats::Summary;

/// How long one `:wait` call blocks when the CLI follows an operation (it long-polls 5 s at a
/// time to refresh its progress lines; see docs/commands.md).
pub const CLI_LONG_POLL: Duration = Duration::from_secs(5);

/// The first pause of the Terraform-style polling baseline.
pub const TERRAFORM_FIRST_POLL: Duration = Duration::from_secs(2);
/// The longest pause of the Terraform-style polling baseline.
pub const TERRAFORM_MAX_POLL: Duration = Duration::from_secs(10);

/// A way to follow an operation to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follower {
    /// The executor's waiter, long-polling `operations/{id}:wait`.
    Wait,
    /// The executor's waiter against a server whose `:wait` is unimplemented: its GET
    /// polling fallback.
    PollingFallback,
    /// GET polling with pauses from 2 s doubling to 10 s, as the Terraform provider does.
    TerraformBackoff,
}

/// The delays for one operation duration, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NoticeCase {
    /// How long the operations ran.
    pub operation: Duration,
    /// With `:wait`.
    pub wait: Summary,
    /// With the executor's polling fallback.
    pub fallback: Summary,
    /// With 2 s → 10 s polling.
    pub terraform: Summary,
}

/// Measures every operation duration, the three followers of one duration side by side.
pub async fn measure(
    durations: &[Duration],
    latency: Duration,
    samples: usize,
) -> Result<Vec<NoticeCase>, BenchError> {
    let mut cases = Vec::new();
    for &operation in durations {
        progress(&format!(
            "noticing: operations of {} s, {samples} samples per follower, all at once",
            operation.as_secs_f64()
        ));
        let (wait, fallback, terraform) = futures::try_join!(
            follow_all(Follower::Wait, operation, latency, samples),
            follow_all(Follower::PollingFallback, operation, latency, samples),
            follow_all(Follower::TerraformBackoff, operation, latency, samples),
        )?;
        cases.push(NoticeCase {
            operation,
            wait,
            fallback,
            terraform,
        });
    }
    Ok(cases)
}

/// The pause of the Terraform-style baseline after `pause`: doubled, at most 10 s.
pub fn next_pause(pause: Duration) -> Duration {
    (pause * 2).min(TERRAFORM_MAX_POLL)
}

async fn follow_all(
    follower: Follower,
    operation: Duration,
    latency: Duration,
    samples: usize,
) -> Result<Summary, BenchError> {
    let handle = server::start(latency, operation).await?;
    if follower == Follower::PollingFallback {
        handle.emulator().set_wait_unimplemented(true);
    }
    let base_url = handle.base_url();
    let client = server::api_client(&base_url)?;
    let http = reqwest::Client::new();
    let delays = try_join_all((0..samples).map(|index| {
        let member = Member {
            id: format!("n{index:04}"),
            region: REGIONS[0],
        };
        notice_one(follower, &client, &http, &base_url, member, operation)
    }))
    .await?;
    handle.shutdown().await;
    Summary::of(&delays).ok_or_else(|| BenchError::Unexpected("no samples".to_owned()))
}

/// Creates one cluster, follows its operation, and returns how long after the operation
/// finished the follower knew, in seconds.
async fn notice_one(
    follower: Follower,
    client: &ApiClient,
    http: &reqwest::Client,
    base_url: &str,
    member: Member,
    operation: Duration,
) -> Result<f64, BenchError> {
    let name = create(http, base_url, &member).await?;
    let give_up = operation + Duration::from_secs(120);
    let metadata = match follower {
        Follower::Wait | Follower::PollingFallback => {
            let options = WaitOptions {
                long_poll: CLI_LONG_POLL,
                ..WaitOptions::default()
            };
            let waiter = OperationWaiter::new(client, options);
            let done = waiter
                .wait(&name, give_up, async |_: &Operation| {})
                .await?;
            done.metadata.unwrap_or(Value::Null)
        }
        Follower::TerraformBackoff => {
            poll_with_backoff(http, base_url, &name).await?["metadata"].take()
        }
    };
    let known = OffsetDateTime::now_utc();
    let finished = finish_time(&metadata)?;
    Ok((known - finished).as_seconds_f64().max(0.0))
}

/// When a done operation finished: its `genericMetadata.updateTime`.
fn finish_time(metadata: &Value) -> Result<OffsetDateTime, BenchError> {
    let text = metadata["genericMetadata"]["updateTime"]
        .as_str()
        .ok_or_else(|| BenchError::Unexpected(format!("operation metadata {metadata}")))?;
    OffsetDateTime::parse(text, &Rfc3339)
        .map_err(|e| BenchError::Unexpected(format!("updateTime {text:?}: {e}")))
}

/// Creates `member` with plain HTTP and returns its operation's name.
async fn create(
    http: &reqwest::Client,
    base_url: &str,
    member: &Member,
) -> Result<String, BenchError> {
    let url = format!(
        "{base_url}/v1beta1/projects/{}/locations/{}/modelDevelopmentClusters?modelDevelopmentClusterId={}",
        crate::fleet::PROJECT,
        member.region,
        member.id
    );
    let answer = json_of(
        http.post(&url).bearer_auth(TOKEN).json(&member.resource(4)),
        "create",
    )
    .await?;
    answer["name"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| BenchError::Unexpected(format!("create answered {answer}")))
}

/// GET polling with the Terraform-style pauses until the operation is done; returns it.
async fn poll_with_backoff(
    http: &reqwest::Client,
    base_url: &str,
    name: &str,
) -> Result<Value, BenchError> {
    let url = format!("{base_url}/v1/{name}");
    let mut pause = TERRAFORM_FIRST_POLL;
    loop {
        tokio::time::sleep(pause).await;
        let operation = json_of(http.get(&url).bearer_auth(TOKEN), "operation GET").await?;
        if operation["done"] == Value::Bool(true) {
            return Ok(operation);
        }
        pause = next_pause(pause);
    }
}

async fn json_of(request: reqwest::RequestBuilder, what: &str) -> Result<Value, BenchError> {
    request
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| BenchError::http(what, e))?
        .json()
        .await
        .map_err(|e| BenchError::http(what, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terraform_pauses_double_from_two_seconds_to_ten() {
        let pauses: Vec<u64> =
            std::iter::successors(Some(TERRAFORM_FIRST_POLL), |p| Some(next_pause(*p)))
                .take(6)
                .map(|p| p.as_secs())
                .collect();
        assert_eq!(pauses, [2, 4, 8, 10, 10, 10]);
    }

    #[test]
    fn the_finish_time_is_the_done_operations_update_time() {
        let metadata =
            serde_json::json!({"genericMetadata": {"updateTime": "1970-01-01T00:00:02.5Z"}});
        let finished = finish_time(&metadata).unwrap();
        assert_eq!(finished.unix_timestamp_nanos(), 2_500_000_000);
        assert!(finish_time(&Value::Null).is_err());
    }
}
