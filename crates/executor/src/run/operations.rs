//! Following a long-running operation to its end.
//!
//! The waiter long-polls `operations/{id}:wait` first, which notices completion within one
//! round trip. When the server answers `UNIMPLEMENTED`, or `:wait` keeps failing after the
//! client's own retries, it falls back to GET polling with a backoff from 1 s doubling to a
//! cap of 10 s. A 404 shortly after the operation was created means "not visible yet"
//! (eventual consistency) rather than "gone". The whole wait is bounded by the action's
//! timeout.

use std::time::Duration;

use clusterform_model::{Code, Operation};
use tokio::time::Instant;

use crate::run::error::ExecError;
use crate::transport::api::ApiClient;
use crate::transport::error::TransportError;

/// How operations are waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitOptions {
    /// How long one `:wait` call asks the server to block.
    pub long_poll: Duration,
    /// First pause between GET polls.
    pub poll_initial: Duration,
    /// Longest pause between GET polls.
    pub poll_max: Duration,
    /// How long a 404 on the operation means "not visible yet".
    pub not_found_grace: Duration,
    /// Consecutive failed `:wait` calls before switching to GET polling.
    pub errors_before_polling: u32,
}

impl Default for WaitOptions {
    fn default() -> Self {
        Self {
            long_poll: Duration::from_secs(30),
            poll_initial: Duration::from_secs(1),
            poll_max: Duration::from_secs(10),
            not_found_grace: Duration::from_secs(60),
            errors_before_polling: 3,
        }
    }
}

/// How the waiter currently asks about the operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    LongPoll,
    Poll,
}

/// Waits for operations through one client.
#[derive(Debug)]
pub struct OperationWaiter<'a> {
    client: &'a ApiClient,
    options: WaitOptions,
}

impl<'a> OperationWaiter<'a> {
    /// A waiter using `client`.
    pub fn new(client: &'a ApiClient, options: WaitOptions) -> Self {
        Self { client, options }
    }

    /// Waits until the operation is done and returns it (its `error` or `response` set), or
    /// fails with [`ExecError::Timeout`] after `timeout`. `on_pending` sees every answer that
    /// is not done yet, for progress reports.
    pub async fn wait(
        &self,
        name: &str,
        timeout: Duration,
        on_pending: impl AsyncFnMut(&Operation),
    ) -> Result<Operation, ExecError> {
        let deadline = crate::transport::deadline::after(timeout);
        match tokio::time::timeout_at(deadline, self.wait_until(name, deadline, on_pending)).await {
            Ok(result) => result,
            Err(_elapsed) => Err(ExecError::Timeout {
                what: format!("operation {name}"),
                after: timeout,
            }),
        }
    }

    /// One question about the operation: a `:wait` blocking until `deadline` at most (and at
    /// most the long poll), or a plain GET.
    async fn ask(
        &self,
        mode: Mode,
        name: &str,
        deadline: Instant,
        now: Instant,
    ) -> Result<Operation, TransportError> {
        match mode {
            Mode::LongPoll => {
                let wait_for = self
                    .options
                    .long_poll
                    .min(deadline.saturating_duration_since(now))
                    .max(Duration::from_secs(1));
                self.client.wait_operation(name, wait_for).await
            }
            Mode::Poll => self.client.get_operation(name).await,
        }
    }

    async fn wait_until(
        &self,
        name: &str,
        deadline: Instant,
        mut on_pending: impl AsyncFnMut(&Operation),
    ) -> Result<Operation, ExecError> {
        let started = Instant::now();
        let mut mode = Mode::LongPoll;
        let mut failed_waits = 0;
        let mut pause = self.options.poll_initial;
        // A pending answer of a `:wait` that blocked is reported while the next `:wait` is
        // already in flight: the report (a Get of the cluster, in the apply engine) must not
        // delay noticing the end by its round trip.
        let mut unreported: Option<Operation> = None;
        loop {
            let call_started = Instant::now();
            let call = self.ask(mode, name, deadline, call_started);
            let answer = match unreported.take() {
                Some(pending) => beside(call, on_pending(&pending)).await,
                None => call.await,
            };
            match answer {
                Ok(operation) if operation.done => return Ok(operation),
                Ok(operation) => {
                    failed_waits = 0;
                    // A `:wait` that blocked for a while is its own pacing; one that came back
                    // at once (a server that does not block) gets the polling pause.
                    if mode == Mode::LongPoll && call_started.elapsed() >= self.options.poll_initial
                    {
                        unreported = Some(operation);
                        continue;
                    }
                    on_pending(&operation).await;
                }
                Err(error) if error.is_not_found() => {
                    if started.elapsed() >= self.options.not_found_grace {
                        if mode == Mode::Poll {
                            return Err(error.into());
                        }
                        // Confirm with a plain GET before calling the operation gone.
                        mode = Mode::Poll;
                        continue;
                    }
                }
                Err(error) if mode == Mode::LongPoll => {
                    failed_waits += 1;
                    if error.api_code() == Some(Code::Unimplemented) {
                        mode = Mode::Poll;
                        continue;
                    }
                    if !is_transient(&error) {
                        return Err(error.into());
                    }
                    if failed_waits >= self.options.errors_before_polling {
                        tracing::debug!(operation = name, %error, "`:wait` keeps failing; polling instead");
                        mode = Mode::Poll;
                    } else {
                        // The client gave up on this call; say so, as it does for its own retries.
                        tracing::debug!(operation = name, %error, "`:wait` failed; retrying");
                    }
                }
                Err(error) => return Err(error.into()),
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(self.options.poll_max);
        }
    }
}

/// The answer of `call`, with `report` driven beside it until the answer arrives; a report not
/// finished by then is dropped (it only informs, and a newer answer has come).
async fn beside<T>(call: impl Future<Output = T>, report: impl Future<Output = ()>) -> T {
    tokio::pin!(call, report);
    let mut reported = false;
    loop {
        tokio::select! {
            biased;
            answer = &mut call => return answer,
            () = &mut report, if !reported => reported = true,
        }
    }
}

/// Errors that say nothing about the operation itself: worth another try by another way.
fn is_transient(error: &TransportError) -> bool {
    match error {
        TransportError::NoAnswer { .. } | TransportError::Decode { .. } => true,
        TransportError::Api { status, .. } => {
            status.code >= 500
                || matches!(
                    status.canonical_code(),
                    Code::Unavailable | Code::ResourceExhausted | Code::Internal
                )
        }
        _ => false,
    }
}
