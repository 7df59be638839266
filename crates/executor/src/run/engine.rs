//! The apply engine: runs a plan's requests, follows their operations, and resumes what a
//! previous run left in flight.
//!
//! Clusters run concurrently up to a bound, and, when asked, up to a smaller bound per location
//! (project, region), because the service's quotas are per region; the requests of one cluster
//! run in order (a replacement deletes, waits, then creates). Every operation is written to the journal before
//! it is waited on and removed once it is done. A failure in one cluster does not stop the
//! others. Cancellation stops all waiting at once and keeps the journal, so that the next run
//! resumes instead of sending the calls again. Once a plan's changes have ended, what they
//! applied goes to the applied record in one write (when the engine has one): it only words
//! later plans, so failing to write it is a warning of the report, never a failed action.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use clusterform_model::rest::{ClusterRequest, RequestKind};
use clusterform_model::{
    Action, Attempt, Cluster, ClusterName, ClusterState, Code, Location, Operation, Shortage,
};
use clusterform_planner::{ChangeReason, ClusterChange, Plan, PlannedTimeouts};
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio::sync::{Semaphore, SemaphorePermit};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::run::error::ExecError;
use crate::run::operations::{OperationWaiter, WaitOptions};
use crate::state::applied::{
    AppliedChange, AppliedEntry, AppliedRecord, AppliedRecordError, ClusterMark, Mark,
};
use crate::state::journal::{Journal, JournalEntry};
use crate::transport::api::{ApiClient, Submitted};

/// Clusters worked on at once unless told otherwise.
pub const DEFAULT_PARALLELISM: usize = 10;

/// Receives progress; the CLI draws it.
pub trait ProgressSink: Send + Sync {
    /// Called for every step of every action, from many tasks at once.
    fn event(&self, event: &ProgressEvent);

    /// Called once for an action that failed, right after its [`Step::Failed`] event (which
    /// carries only the message), with the typed error. Sinks that draw only the message need
    /// not implement it.
    fn failed(&self, event: &ProgressEvent, error: &ExecError) {
        let _ = (event, error);
    }
}

/// Something that happened to one cluster's action.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressEvent {
    /// The cluster.
    pub address: ClusterName,
    /// Its action.
    pub action: Action,
    /// What happened.
    pub step: Step,
    /// Time since the action started (or was resumed).
    pub elapsed: Duration,
}

/// The steps of an action.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The action started.
    Started,
    /// An operation from the journal is being waited for again.
    Resumed {
        /// The operation.
        operation: String,
    },
    /// Waiting for the cluster to leave a state (busy before an update, or provisioning after
    /// a create whose operation was lost).
    Settling {
        /// The cluster's current state.
        state: String,
    },
    /// A fallback's create waits for the cluster ID to be free: the service still holds it
    /// after the delete of the cluster the attempt before left behind.
    IdNotFree,
    /// A request was accepted (and its operation, if still running, journaled).
    Submitted {
        /// Which request.
        request: RequestKind,
        /// The operation it started, if any.
        operation: Option<String>,
    },
    /// The operation is still running.
    Waiting {
        /// The operation.
        operation: String,
        /// The cluster's state, when it could be read.
        state: Option<String>,
        /// The operation's `progressMessage`.
        message: Option<String>,
    },
    /// One request of the action is complete (a replacement has two).
    StepDone {
        /// Which request.
        request: RequestKind,
    },
    /// An attempt of a create (or of an update adding node pools) found no machines: the
    /// cluster it left behind, if any, is deleted before the next one is sent.
    FellShort {
        /// The attempt (1: the pools as declared, 2: their first `fallback`, …).
        attempt: Attempt,
        /// How many attempts the change has.
        attempts: usize,
        /// Capacity or quota.
        shortage: Shortage,
        /// The service's message.
        message: String,
        /// The attempt sent next, if one is left.
        next: Option<Attempt>,
        /// The cluster the attempt's create left in `ERROR` is deleted now.
        deleting: bool,
    },
    /// A later attempt than the first had machines: a fallback won.
    FellBack {
        /// The attempt that had machines.
        attempt: Attempt,
        /// How many attempts the change has.
        attempts: usize,
    },
    /// A resumed attempt of a fallback chain found no machines: the next `apply` goes on with
    /// the next attempt.
    ChainPaused {
        /// The attempt that found none.
        attempt: Attempt,
        /// Capacity or quota.
        shortage: Shortage,
        /// The service's message.
        message: String,
    },
    /// The action succeeded.
    Finished,
    /// The action failed (or was interrupted); the message says why.
    Failed(String),
}

/// How one action ended.
#[derive(Debug)]
pub struct ActionOutcome {
    /// The cluster.
    pub address: ClusterName,
    /// The action.
    pub action: Action,
    /// Success, or why not.
    pub result: Result<(), ExecError>,
    /// The live cluster after a create or update, as the operation returned it.
    pub live: Option<Cluster>,
    /// The attempt that succeeded, when it was not the first (a fallback won).
    pub fallback_attempt: Option<Attempt>,
    /// For a failed action, what it left of the cluster when the run knows (`None`: as it
    /// was, or not known — an operation may still be running, and the journal holds it).
    pub remains: Option<Remains>,
    /// How long the action took.
    pub duration: Duration,
}

/// What a failed create or replacement left of its cluster, as far as the run saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remains {
    /// A create of ours failed and its cluster is still there, in `ERROR` (kept by
    /// `prevent_destroy`, or its delete failed, or the failure was not a shortage): the
    /// applied record marks it tainted.
    FailedCluster,
    /// The replacement deleted the live cluster and no create made it again: it is missing.
    Missing,
}

/// Every action's outcome.
#[derive(Debug, Default)]
pub struct ApplyReport {
    /// One outcome per action, sorted by address.
    pub outcomes: Vec<ActionOutcome>,
    /// The run was cancelled: operations may still be running, and the journal knows them.
    pub interrupted: bool,
    /// The applied record could not be written: a problem for the user that failed no
    /// action (the next plan cannot tell which differences were made outside clusterform).
    pub record_not_written: Option<AppliedRecordError>,
}

impl ApplyReport {
    /// The actions that failed or were interrupted.
    pub fn failed(&self) -> impl Iterator<Item = &ActionOutcome> {
        self.outcomes.iter().filter(|o| o.result.is_err())
    }

    /// Whether everything succeeded.
    pub fn is_success(&self) -> bool {
        !self.interrupted && self.failed().next().is_none()
    }
}

/// Runs plans against the API.
#[derive(Debug)]
pub struct ApplyEngine {
    pub(super) client: ApiClient,
    journal: Journal,
    parallelism: usize,
    parallelism_per_location: Option<usize>,
    wait: WaitOptions,
    /// Where what the plan's changes applied is recorded, if anywhere.
    applied: Option<AppliedRecord>,
}

/// Reports the steps of one action, and tells it when the run is cancelled.
pub(super) struct Tracker<'a> {
    address: &'a ClusterName,
    action: Action,
    started: Instant,
    sink: &'a dyn ProgressSink,
    pub(super) cancel: &'a CancellationToken,
    /// The attempt that succeeded, when a later one than the first.
    won_with: std::sync::Mutex<Option<Attempt>>,
    /// What the action has left of the cluster so far, should it fail now.
    remains: std::sync::Mutex<Option<Remains>>,
}

impl Tracker<'_> {
    /// Records what the action has left of the cluster so far, should it fail now.
    pub(super) fn left(&self, remains: Option<Remains>) {
        *self.remains.lock().unwrap_or_else(|e| e.into_inner()) = remains;
    }

    /// Records that `attempt` of a fallback chain succeeded.
    pub(super) fn won_with(&self, attempt: Attempt) {
        *self.won_with.lock().unwrap_or_else(|e| e.into_inner()) = Some(attempt);
    }

    /// Fails once the run is cancelled: no new request starts after that.
    pub(super) fn check_cancelled(&self) -> Result<(), ExecError> {
        if self.cancel.is_cancelled() {
            Err(ExecError::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Waiting stops at once on cancellation. Requests are never wrapped in this: a request
    /// already on the wire is finished and its operation journaled, so nothing the service
    /// started is forgotten.
    pub(super) async fn cancellable<T>(
        &self,
        waiting: impl Future<Output = Result<T, ExecError>>,
    ) -> Result<T, ExecError> {
        tokio::select! {
            biased;
            () = self.cancel.cancelled() => Err(ExecError::Cancelled),
            result = waiting => result,
        }
    }

    pub(super) fn emit(&self, step: Step) {
        self.sink.event(&self.event(step));
    }

    /// Reports the action's failure: its step, then the typed error.
    fn fail(&self, error: &ExecError) {
        let event = self.event(Step::Failed(error.progress_text()));
        self.sink.event(&event);
        self.sink.failed(&event, error);
    }

    fn event(&self, step: Step) -> ProgressEvent {
        ProgressEvent {
            address: self.address.clone(),
            action: self.action,
            step,
            elapsed: self.started.elapsed(),
        }
    }
}

impl ApplyEngine {
    /// An engine running up to `parallelism` clusters at once (at least one).
    pub fn new(client: ApiClient, journal: Journal, parallelism: usize) -> Self {
        Self {
            client,
            journal,
            parallelism: parallelism.max(1),
            parallelism_per_location: None,
            wait: WaitOptions::default(),
            applied: None,
        }
    }

    /// Records what each successful create, update or replacement of [`ApplyEngine::apply`]
    /// applied in `record` (and drops the entries of clusters it deletes or releases), in one
    /// write after the plan's changes end.
    #[must_use]
    pub fn with_applied_record(mut self, record: AppliedRecord) -> Self {
        self.applied = Some(record);
        self
    }

    /// The applied record, if the engine has one.
    pub fn applied_record(&self) -> Option<&AppliedRecord> {
        self.applied.as_ref()
    }

    /// Limits how many clusters of one location (project, region) [`ApplyEngine::apply`]
    /// changes at once (at least one), within the global parallelism; `None`, the default,
    /// leaves only the global limit. Resuming and settling only wait, so they are not limited.
    #[must_use]
    pub fn with_parallelism_per_location(mut self, limit: Option<usize>) -> Self {
        self.parallelism_per_location = limit.map(|limit| limit.max(1));
        self
    }

    /// Replaces how operations are waited for.
    #[must_use]
    pub fn with_wait_options(mut self, wait: WaitOptions) -> Self {
        self.wait = wait;
        self
    }

    /// The journal.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// How operations are waited for.
    pub(super) fn wait_options(&self) -> WaitOptions {
        self.wait
    }

    /// Ends the fallback chains an earlier run left open for clusters that `plan` no longer
    /// creates or updates (the configuration changed, or they are being destroyed): there is
    /// nothing left to go on with.
    async fn end_chains_not_in(&self, plan: &Plan) -> Result<(), ExecError> {
        let goes_on = |address: &ClusterName| {
            plan.changes.iter().any(|change| {
                change.address == *address
                    && matches!(
                        change.action,
                        Action::Create | Action::Replace | Action::Update
                    )
            })
        };
        for entry in self.journal.entries() {
            if entry.is_in_chain() && !goes_on(&entry.address) {
                self.journal.end_chain(&entry.address).await?;
            }
        }
        Ok(())
    }

    /// Runs every change of the plan that is not a no-op. Callers resume the journal first
    /// ([`ApplyEngine::resume`]) so that no cluster has an operation in flight. A change to a
    /// cluster that an unusable journal entry may name is refused
    /// ([`ExecError::UnusableJournalEntry`]); the other changes run.
    pub async fn apply(
        &self,
        plan: &Plan,
        progress: Arc<dyn ProgressSink>,
        cancel: CancellationToken,
    ) -> ApplyReport {
        if let Err(error) = self.end_chains_not_in(plan).await {
            tracing::warn!(%error, "could not end the fallback chains an earlier run left open");
        }
        let changes = plan.changes.iter().filter(|c| c.action != Action::NoOp);
        let mut report = self
            .for_each_cluster(
                changes,
                change_subject,
                self.parallelism_per_location,
                &*progress,
                &cancel,
                async |tracker, change| self.run_change(tracker, change).await,
            )
            .await;
        report.record_not_written = self.record_applied(plan, &report).await;
        report
    }

    /// Writes to the applied record, in one write, what every change that ended well applied:
    /// a create, update or replacement its declared cluster's digest, the field paths it set,
    /// the digest of each field of the cluster the operation returned (a fallback's win, which
    /// fallback), a delete or release the end of the cluster's
    /// entry — a delete by `destroy --idle-for` a tombstone saying so. A change without a
    /// digest (a plan made elsewhere) drops the cluster's entry, so that no stale digest words
    /// a later plan. A failed create or replacement marks what it left
    /// ([`ActionOutcome::remains`]): a failed cluster of ours (tainted), or a cluster the
    /// replacement deleted (missing). Answers the error when the write fails.
    async fn record_applied(
        &self,
        plan: &Plan,
        report: &ApplyReport,
    ) -> Option<AppliedRecordError> {
        let record = self.applied.as_ref()?;
        let planned: HashMap<&ClusterName, &ClusterChange> =
            plan.changes.iter().map(|c| (&c.address, c)).collect();
        let applied_at = now_rfc3339();
        let changes: Vec<AppliedChange> = report
            .outcomes
            .iter()
            .filter_map(|outcome| {
                let change = planned.get(&outcome.address)?;
                let error = match &outcome.result {
                    Ok(()) => return applied_change(change, outcome, &applied_at),
                    Err(error) => error,
                };
                let mark = match outcome.remains? {
                    Remains::FailedCluster => Mark::CreateFailed {
                        at: applied_at.clone(),
                        error: error.to_string(),
                    },
                    Remains::Missing => Mark::DeletedForReplacement {
                        at: applied_at.clone(),
                        error: error.to_string(),
                    },
                };
                Some(AppliedChange::Marked(ClusterMark {
                    address: outcome.address.clone(),
                    mark,
                }))
            })
            .collect();
        self.write_record(record, &changes).await
    }

    /// Writes `changes` to `record`; answers the error when the write fails.
    async fn write_record(
        &self,
        record: &AppliedRecord,
        changes: &[AppliedChange],
    ) -> Option<AppliedRecordError> {
        record.update(changes).await.err()
    }

    /// After [`ApplyEngine::resume`]: a create an earlier run left in flight that failed and
    /// left its cluster marks it tainted; one that ended well clears the cluster's mark.
    async fn record_resumed(&self, report: &ApplyReport) -> Option<AppliedRecordError> {
        let record = self.applied.as_ref()?;
        let at = now_rfc3339();
        let changes: Vec<AppliedChange> = report
            .outcomes
            .iter()
            .filter_map(|outcome| match (&outcome.result, outcome.remains) {
                (Err(error), Some(Remains::FailedCluster)) => {
                    Some(AppliedChange::Marked(ClusterMark {
                        address: outcome.address.clone(),
                        mark: Mark::CreateFailed {
                            at: at.clone(),
                            error: error.to_string(),
                        },
                    }))
                }
                (Ok(()), _)
                    if outcome.live.is_some()
                        && record
                            .mark(&outcome.address)
                            .is_some_and(|m| !m.is_tombstone()) =>
                {
                    Some(AppliedChange::Unmarked(outcome.address.clone()))
                }
                _ => None,
            })
            .collect();
        self.write_record(record, &changes).await
    }

    /// Waits for every operation in the journal, without sending any new request, and
    /// reconciles those already finished (or no longer known to the service).
    pub async fn resume(
        &self,
        progress: Arc<dyn ProgressSink>,
        cancel: CancellationToken,
    ) -> ApplyReport {
        let entries = self.journal.entries();
        let mut report = self
            .for_each_cluster(
                entries.iter(),
                entry_subject,
                None,
                &*progress,
                &cancel,
                async |tracker, entry| self.resume_entry(tracker, entry).await,
            )
            .await;
        report.record_not_written = self.record_resumed(&report).await;
        report
    }

    /// Waits, without sending any request, for clusters that need no change but are still
    /// `PROVISIONING` or `UPDATING` (an operation no journal knows is running on them, e.g.
    /// one started by a run killed before it could journal it) to leave that state, each
    /// within the longer of its create and update timeouts. A cluster that ends in `ERROR` or
    /// disappears is a failed outcome.
    pub async fn await_settled(
        &self,
        changes: &[ClusterChange],
        progress: Arc<dyn ProgressSink>,
        cancel: CancellationToken,
    ) -> ApplyReport {
        self.for_each_cluster(
            changes.iter(),
            change_subject,
            None,
            &*progress,
            &cancel,
            async |tracker, change| {
                tracker.emit(Step::Started);
                let name = change.address.clone();
                let timeout =
                    Duration::from_secs(change.timeouts.create.max(change.timeouts.update));
                tracker
                    .cancellable(self.await_ready(tracker, &name, timeout, &ClusterState::WORKING))
                    .await
                    .map(Some)
            },
        )
        .await
    }

    /// Runs `work` for every item, up to the engine's parallelism at once and up to
    /// `per_location` at once per location, each cluster with its own progress tracker, and
    /// reports how each ended: the one fan-out of `apply`, `resume` and `await_settled`.
    async fn for_each_cluster<'a, T: 'a>(
        &self,
        items: impl Iterator<Item = &'a T>,
        subject: impl Fn(&'a T) -> (&'a ClusterName, Action),
        per_location: Option<usize>,
        progress: &dyn ProgressSink,
        cancel: &CancellationToken,
        work: impl AsyncFn(&Tracker<'_>, &'a T) -> Result<Option<Cluster>, ExecError>,
    ) -> ApplyReport {
        let work = &work;
        let subjects: Vec<_> = items.map(|item| (item, subject(item))).collect();
        let slots = Slots::new(
            self.parallelism,
            per_location,
            subjects.iter().map(|(_, (address, _))| *address),
        );
        let slots = &slots;
        let outcomes = subjects
            .into_iter()
            .map(|(item, (address, action))| async move {
                let _held = slots.acquire(address).await;
                let tracker = Tracker {
                    address,
                    action,
                    started: Instant::now(),
                    sink: progress,
                    cancel,
                    won_with: std::sync::Mutex::new(None),
                    remains: std::sync::Mutex::new(None),
                };
                guarded(tracker, async move |tracker: &Tracker<'_>| {
                    work(tracker, item).await
                })
                .await
            })
            .collect::<FuturesUnordered<_>>()
            .collect()
            .await;
        report(outcomes, cancel)
    }

    async fn run_change(
        &self,
        tracker: &Tracker<'_>,
        change: &ClusterChange,
    ) -> Result<Option<Cluster>, ExecError> {
        tracker.emit(Step::Started);
        self.journal.blocked(&change.address)?;
        let name = change.address.clone();
        if change.reason == Some(ChangeReason::BeingDeleted) {
            let timeout = timeout_of(RequestKind::Delete, &change.timeouts);
            tracker
                .cancellable(self.await_deletion(tracker, &name, timeout))
                .await?;
        }
        let mut live = None;
        let last = change.requests.len().saturating_sub(1);
        for (index, request) in change.requests.iter().enumerate() {
            tracker.check_cancelled()?;
            live = if index == last && request.kind() != RequestKind::Delete {
                self.run_attempts(tracker, change, request).await?
            } else {
                let timeout = timeout_of(request.kind(), &change.timeouts);
                self.run_request(tracker, &name, request, timeout, None)
                    .await?
            };
            tracker.emit(Step::StepDone {
                request: request.kind(),
            });
            if index < last && request.kind() == RequestKind::Delete {
                // A replacement's delete: until a create succeeds, the cluster is missing.
                tracker.left(Some(Remains::Missing));
            }
        }
        Ok(live)
    }

    /// Sends one request once the cluster is free: an update or delete first waits for a
    /// running operation to end (a delete that finds the cluster gone is done), and a request
    /// refused with `ABORTED` (another operation took the cluster meanwhile) waits again and is
    /// sent again, for as long as the action's timeout allows. `attempt` is its place in a
    /// fallback chain, for the journal.
    pub(super) async fn run_request(
        &self,
        tracker: &Tracker<'_>,
        name: &ClusterName,
        request: &ClusterRequest,
        timeout: Duration,
        attempt: Option<usize>,
    ) -> Result<Option<Cluster>, ExecError> {
        let deadline = crate::transport::deadline::after(timeout);
        let remaining = || deadline.saturating_duration_since(Instant::now());
        loop {
            if request.kind() != RequestKind::Create {
                let settled = tracker
                    .cancellable(self.poll_cluster(tracker, name, remaining(), &ClusterState::BUSY))
                    .await?;
                if settled.is_none() && request.kind() == RequestKind::Delete {
                    return Ok(None);
                }
                tracker.check_cancelled()?;
            }
            // A region backing off after a quota error may hold a request for a minute or
            // more: an interruption ends the action while nothing the service may have acted
            // on is outstanding (a request that got no answer is never abandoned: the answer
            // of its retry names the operation).
            match self.client.send_until(request, tracker.cancel).await {
                Err(error) if request.kind() == RequestKind::Delete && error.is_not_found() => {
                    return Ok(None);
                }
                Err(error) if error.is_aborted() && !remaining().is_zero() => {
                    tracker.emit(Step::Settling {
                        state: "held by another operation".to_owned(),
                    });
                    tracker
                        .cancellable(async {
                            tokio::time::sleep(self.wait.poll_initial.min(remaining())).await;
                            Ok(())
                        })
                        .await?;
                }
                Err(error) => return Err(ExecError::from(error).for_request(request)),
                Ok(submitted) => {
                    let request = (request.kind(), attempt);
                    return self
                        .submitted(tracker, name, request, submitted, remaining())
                        .await;
                }
            }
        }
    }

    /// Follows what an accepted request started.
    async fn submitted(
        &self,
        tracker: &Tracker<'_>,
        name: &ClusterName,
        (request, attempt): (RequestKind, Option<usize>),
        submitted: Submitted,
        timeout: Duration,
    ) -> Result<Option<Cluster>, ExecError> {
        match submitted {
            Submitted::Adopted(_) => {
                tracker.emit(Step::Submitted {
                    request,
                    operation: None,
                });
                tracker
                    .cancellable(self.await_ready(
                        tracker,
                        name,
                        timeout,
                        &[ClusterState::Provisioning],
                    ))
                    .await
                    .map(Some)
            }
            Submitted::Operation(operation) => {
                self.follow(tracker, name, (request, attempt), *operation, timeout)
                    .await
            }
        }
    }

    /// Waits for a cluster that an earlier run (or someone else) is deleting to be gone.
    async fn await_deletion(
        &self,
        tracker: &Tracker<'_>,
        name: &ClusterName,
        timeout: Duration,
    ) -> Result<(), ExecError> {
        match self
            .poll_cluster(tracker, name, timeout, &[ClusterState::Stopping])
            .await?
        {
            None => Ok(()),
            Some(cluster) => Err(ExecError::NoLongerDeleting {
                cluster: Box::new(name.clone()),
                state: cluster.state().unwrap_or("unknown").to_owned(),
            }),
        }
    }

    /// Journals a new operation, waits for it, and unjournals it once done.
    async fn follow(
        &self,
        tracker: &Tracker<'_>,
        name: &ClusterName,
        (request, attempt): (RequestKind, Option<usize>),
        operation: Operation,
        timeout: Duration,
    ) -> Result<Option<Cluster>, ExecError> {
        if !operation.done {
            self.journal
                .record(JournalEntry {
                    address: tracker.address.clone(),
                    action: tracker.action,
                    request,
                    operation: operation.name.clone(),
                    started_at: now_rfc3339(),
                    timeout_seconds: timeout.as_secs(),
                    attempt,
                })
                .await?;
        }
        tracker.emit(Step::Submitted {
            request,
            operation: Some(operation.name.clone()),
        });
        if operation.done {
            return outcome_of(name, request, &operation.name, &operation);
        }
        let waited = tracker
            .cancellable(self.wait_with_progress(
                tracker,
                name,
                &operation.name,
                timeout,
                self.wait,
            ))
            .await;
        self.conclude(name, (request, attempt), &operation.name, waited)
            .await
    }

    /// Unjournals an operation once waiting for it has ended, and judges its outcome: from the
    /// operation when it is done, from the cluster when the service no longer knows it.
    /// Anything else (a timeout, Ctrl-C) keeps the entry for the next run, and so does the end
    /// of a fallback chain's step that the chain goes on from (see [`JournalEntry::attempt`]).
    async fn conclude(
        &self,
        name: &ClusterName,
        (request, attempt): (RequestKind, Option<usize>),
        operation: &str,
        waited: Result<Operation, ExecError>,
    ) -> Result<Option<Cluster>, ExecError> {
        match waited {
            Ok(done) => {
                let outcome = outcome_of(name, request, operation, &done);
                let chain_goes_on = attempt.is_some()
                    && match (&outcome, request) {
                        (Ok(_), RequestKind::Delete) => true,
                        (Err(error), RequestKind::Create | RequestKind::Update) => {
                            error.shortage().is_some()
                        }
                        _ => false,
                    };
                if !chain_goes_on {
                    self.journal.remove(operation).await?;
                }
                outcome
            }
            Err(error) if error.is_not_found() => {
                self.journal.remove(operation).await?;
                self.reconcile_lost(name, request, operation).await
            }
            Err(error) => Err(error),
        }
    }

    async fn resume_entry(
        &self,
        tracker: &Tracker<'_>,
        entry: &JournalEntry,
    ) -> Result<Option<Cluster>, ExecError> {
        tracker.check_cancelled()?;
        tracker.emit(Step::Resumed {
            operation: entry.operation.clone(),
        });
        let name = entry.address.clone();
        // The operation is not fresh: a 404 means the service no longer knows it.
        let options = WaitOptions {
            not_found_grace: Duration::ZERO,
            ..self.wait
        };
        let timeout = self.remaining_timeout(entry);
        let waiting = self.wait_with_progress(tracker, &name, &entry.operation, timeout, options);
        let waited = tracker.cancellable(waiting).await;
        let concluded = self
            .conclude(
                &name,
                (entry.request, entry.attempt),
                &entry.operation,
                waited,
            )
            .await;
        if let Err(error) = &concluded
            && entry.request == RequestKind::Create
            && matches!(
                error,
                ExecError::OperationFailed { .. } | ExecError::ClusterFailed { .. }
            )
        {
            // A create of ours that an earlier run left in flight failed: its cluster stays.
            tracker.left(Some(Remains::FailedCluster));
        }
        let (Err(error), Some(attempt)) = (&concluded, entry.attempt) else {
            return concluded;
        };
        let Some(shortage) = error.shortage() else {
            return concluded;
        };
        // The chain goes on in the next apply, which plans the cluster again.
        tracker.emit(Step::ChainPaused {
            attempt: Attempt::at(attempt),
            shortage,
            message: error.to_string(),
        });
        Ok(None)
    }

    /// Judges an action whose operation the service no longer knows by the cluster itself.
    async fn reconcile_lost(
        &self,
        name: &ClusterName,
        request: RequestKind,
        operation: &str,
    ) -> Result<Option<Cluster>, ExecError> {
        let cluster = self.client.get_cluster(name).await?;
        let lost = |detail: &str| ExecError::OperationLost {
            cluster: Box::new(name.clone()),
            operation: operation.to_owned(),
            detail: detail.to_owned(),
        };
        match (request, cluster) {
            (RequestKind::Delete, None) => Ok(None),
            (RequestKind::Delete, Some(_)) => Err(lost("the cluster still exists")),
            (RequestKind::Create | RequestKind::Update, Some(cluster)) => Ok(Some(cluster)),
            (RequestKind::Create | RequestKind::Update, None) => {
                Err(lost("the cluster does not exist"))
            }
        }
    }

    /// What is left of an entry's timeout (at least one long poll, to look once).
    fn remaining_timeout(&self, entry: &JournalEntry) -> Duration {
        let timeout = Duration::from_secs(entry.timeout_seconds);
        let elapsed = OffsetDateTime::parse(&entry.started_at, &Rfc3339)
            .ok()
            .and_then(|started| Duration::try_from(OffsetDateTime::now_utc() - started).ok())
            .unwrap_or(Duration::ZERO);
        timeout.saturating_sub(elapsed).max(self.wait.long_poll)
    }

    async fn wait_with_progress(
        &self,
        tracker: &Tracker<'_>,
        name: &ClusterName,
        operation: &str,
        timeout: Duration,
        options: WaitOptions,
    ) -> Result<Operation, ExecError> {
        let waiter = OperationWaiter::new(&self.client, options);
        waiter
            .wait(operation, timeout, async |pending: &Operation| {
                let state = self
                    .client
                    .get_cluster(name)
                    .await
                    .ok()
                    .flatten()
                    .and_then(|c| c.state().map(str::to_owned));
                tracker.emit(Step::Waiting {
                    operation: operation.to_owned(),
                    state,
                    message: pending.progress_message().map(str::to_owned),
                });
            })
            .await
    }

    /// Waits for the cluster to leave `wait_states` (after a create whose answer was lost:
    /// provisioning); a cluster that disappears or ends in `ERROR` has failed.
    async fn await_ready(
        &self,
        tracker: &Tracker<'_>,
        name: &ClusterName,
        timeout: Duration,
        wait_states: &[ClusterState],
    ) -> Result<Cluster, ExecError> {
        let failed = |detail: String| ExecError::ClusterFailed {
            cluster: Box::new(name.clone()),
            detail,
        };
        let cluster = self
            .poll_cluster(tracker, name, timeout, wait_states)
            .await?
            .ok_or_else(|| {
                failed(format!(
                    "the cluster disappeared while {}",
                    joined(wait_states).to_lowercase()
                ))
            })?;
        if cluster.cluster_state() == Some(ClusterState::Error) {
            let status = cluster.cluster_status.as_ref();
            let detail = status
                .and_then(|s| s.detail.clone())
                .unwrap_or_else(|| "no detail given".to_owned());
            return Err(failed(detail));
        }
        Ok(cluster)
    }

    /// Polls the cluster until its state is none of `wait_states`; `None` if it does not exist.
    async fn poll_cluster(
        &self,
        tracker: &Tracker<'_>,
        name: &ClusterName,
        timeout: Duration,
        wait_states: &[ClusterState],
    ) -> Result<Option<Cluster>, ExecError> {
        let polling = async {
            let mut pause = self.wait.poll_initial;
            loop {
                let Some(cluster) = self.client.get_cluster(name).await? else {
                    return Ok(None);
                };
                match cluster.cluster_state() {
                    Some(current) if wait_states.contains(&current) => {
                        tracker.emit(Step::Settling {
                            state: current.as_str().to_owned(),
                        });
                    }
                    _ => return Ok(Some(cluster)),
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(self.wait.poll_max);
            }
        };
        tokio::time::timeout(timeout, polling)
            .await
            .unwrap_or_else(|_elapsed| {
                Err(ExecError::Timeout {
                    what: format!("{name} leaving state {}", joined(wait_states)),
                    after: timeout,
                })
            })
    }
}

/// `PROVISIONING/UPDATING`, for messages.
fn joined(states: &[ClusterState]) -> String {
    let names: Vec<&str> = states.iter().map(|s| s.as_str()).collect();
    names.join("/")
}

/// The slots a cluster's work holds while it runs: one of the run's, and, with a per-location
/// limit, one of its location's.
struct Slots<'a> {
    global: Semaphore,
    per_location: HashMap<&'a Location, Semaphore>,
}

/// What a cluster holds while its work runs; dropping it frees the slots.
struct HeldSlots<'s> {
    _location: Option<SemaphorePermit<'s>>,
    _global: SemaphorePermit<'s>,
}

impl<'a> Slots<'a> {
    fn new(
        global: usize,
        per_location: Option<usize>,
        addresses: impl Iterator<Item = &'a ClusterName>,
    ) -> Self {
        let per_location = match per_location {
            Some(limit) => addresses
                .map(|address| (address.location(), Semaphore::new(limit)))
                .collect(),
            None => HashMap::new(),
        };
        Self {
            global: Semaphore::new(global),
            per_location,
        }
    }

    /// Waits for the location's slot first and only then for a global one, so that a
    /// cluster held back by its location's limit does not keep a global slot from the
    /// clusters of other locations meanwhile. Both queues are first come, first served.
    async fn acquire(&self, address: &'a ClusterName) -> HeldSlots<'_> {
        let location = match self.per_location.get(address.location()) {
            Some(slots) => Some(acquired(slots).await),
            None => None,
        };
        HeldSlots {
            _location: location,
            _global: acquired(&self.global).await,
        }
    }
}

/// A permit of a semaphore that is never closed.
async fn acquired(semaphore: &Semaphore) -> SemaphorePermit<'_> {
    semaphore
        .acquire()
        .await
        .expect("the engine never closes its semaphores")
}

/// The cluster and action of a change, for its progress tracker.
fn change_subject(change: &ClusterChange) -> (&ClusterName, Action) {
    (&change.address, change.action)
}

/// The cluster and action of a journal entry, for its progress tracker.
fn entry_subject(entry: &JournalEntry) -> (&ClusterName, Action) {
    (&entry.address, entry.action)
}

/// Runs one action's work (which stops waiting when cancelled), and reports how it ended.
async fn guarded<'t>(
    tracker: Tracker<'t>,
    work: impl AsyncFnOnce(&Tracker<'t>) -> Result<Option<Cluster>, ExecError>,
) -> ActionOutcome {
    let result = work(&tracker).await;
    match &result {
        Ok(_) => tracker.emit(Step::Finished),
        Err(error) => tracker.fail(error),
    }
    let (result, live) = match result {
        Ok(live) => (Ok(()), live),
        Err(error) => (Err(error), None),
    };
    let fallback_attempt = *tracker.won_with.lock().unwrap_or_else(|e| e.into_inner());
    let remains = match result {
        Ok(()) => None,
        Err(_) => *tracker.remains.lock().unwrap_or_else(|e| e.into_inner()),
    };
    ActionOutcome {
        address: tracker.address.clone(),
        action: tracker.action,
        result,
        live,
        fallback_attempt,
        remains,
        duration: tracker.started.elapsed(),
    }
}

/// What a change that ended well does to the applied record.
fn applied_change(
    change: &ClusterChange,
    outcome: &ActionOutcome,
    applied_at: &str,
) -> Option<AppliedChange> {
    let gone = AppliedChange::Gone(outcome.address.clone());
    match change.action {
        Action::Create | Action::Update | Action::Replace => {
            let Some(digest) = change.desired_digest.clone() else {
                return Some(gone);
            };
            Some(AppliedChange::Applied(AppliedEntry {
                address: outcome.address.clone(),
                digest,
                applied_at: applied_at.to_owned(),
                labels: change.declared_labels.clone(),
                field_digests: outcome
                    .live
                    .as_ref()
                    .map(clusterform_planner::field_digests)
                    .unwrap_or_default(),
            }))
        }
        Action::Delete => match &change.reason {
            Some(ChangeReason::Idle { evidence, idle_for }) => {
                Some(AppliedChange::Marked(ClusterMark {
                    address: outcome.address.clone(),
                    mark: Mark::DeletedIdle {
                        at: applied_at.to_owned(),
                        idle_for: idle_for.clone().unwrap_or_default(),
                        evidence: evidence.clone(),
                    },
                }))
            }
            _ => Some(gone),
        },
        Action::Release => Some(gone),
        Action::NoOp => None,
    }
}

fn report(mut outcomes: Vec<ActionOutcome>, cancel: &CancellationToken) -> ApplyReport {
    outcomes.sort_by(|a, b| a.address.cmp(&b.address));
    ApplyReport {
        outcomes,
        interrupted: cancel.is_cancelled(),
        record_not_written: None,
    }
}

/// A finished operation's meaning: the new cluster, nothing (a delete), or its error. `name`
/// is the operation as submitted (the server's answer may not repeat it). Done without an
/// error or a response says nothing about the change, so it is not taken as success.
fn outcome_of(
    cluster: &ClusterName,
    request: RequestKind,
    name: &str,
    operation: &Operation,
) -> Result<Option<Cluster>, ExecError> {
    match (&operation.error, &operation.response) {
        // Someone else deleted it first: the cluster is gone, which is what was asked.
        (Some(status), _)
            if request == RequestKind::Delete && status.canonical_code() == Code::NotFound =>
        {
            Ok(None)
        }
        (Some(status), _) => Err(ExecError::OperationFailed {
            cluster: Box::new(cluster.clone()),
            operation: name.to_owned(),
            status: Box::new(status.clone()),
        }),
        (None, Some(_)) => Ok(operation.response_cluster()),
        (None, None) => Err(ExecError::OperationWithoutResult {
            cluster: Box::new(cluster.clone()),
            operation: name.to_owned(),
        }),
    }
}

pub(super) fn timeout_of(request: RequestKind, timeouts: &PlannedTimeouts) -> Duration {
    Duration::from_secs(match request {
        RequestKind::Create => timeouts.create,
        RequestKind::Update => timeouts.update,
        RequestKind::Delete => timeouts.delete,
    })
}

/// Now, to the second: these times are shown to people (a tombstone's "deleted at"), where
/// nanoseconds are noise.
fn now_rfc3339() -> String {
    let now = OffsetDateTime::now_utc();
    let now = now.replace_nanosecond(0).unwrap_or(now);
    // Formatting the current time as RFC 3339 only fails for years beyond 9999.
    now.format(&Rfc3339).unwrap_or_default()
}
