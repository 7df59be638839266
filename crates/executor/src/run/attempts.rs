//! A create (or an update adding node pools) that walks its pools' `fallback` alternatives.
//!
//! Attempt 1 sends the change's request; when it finds no machines (a quota refused at once,
//! or an operation failing for capacity or quota), the cluster that attempt's create left
//! behind in `ERROR` is deleted — only a cluster this run's own create made, never after a
//! refusal, and never with `prevent_destroy` — and the next attempt is sent once the ID is
//! free again. Any other failure ends the chain at once. The journal holds the chain's place
//! (see [`JournalEntry::attempt`](crate::JournalEntry::attempt)): a run interrupted between
//! two attempts goes on with the next one, never one already tried; when the journal lost an
//! accepted attempt (a kill while its answer was in flight), the plan knows from the cluster
//! it left how many attempts are out (`CapacityPlan::known_out`). Every attempt has the
//! action's timeout, and the chain ends after its last alternative.

use std::time::Duration;

use clusterform_model::rest::{ClusterRequest, RequestKind};
use clusterform_model::{
    Action, Attempt, Cluster, ClusterName, ClusterState, Code, ProvisioningModel,
};
use clusterform_planner::ClusterChange;
use tokio::time::Instant;

use crate::run::engine::{ApplyEngine, Remains, Step, Tracker, timeout_of};
use crate::run::error::{AttemptedPool, ExecError, FailedAttempt, LeftBehind};
use crate::transport::error::TransportError;

/// The longest a create waits for its ID to be free after the delete of the cluster an
/// earlier attempt left behind: the service may refuse the ID (`409 ALREADY_EXISTS`) for a
/// while after the delete ended.
const ID_FREE_WAIT: Duration = Duration::from_secs(600);

impl ApplyEngine {
    /// Sends `first` (the change's create or update) and, while attempts find no machines,
    /// the change's fallbacks in turn, starting after the last attempt an earlier run saw fail.
    pub(super) async fn run_attempts(
        &self,
        tracker: &Tracker<'_>,
        change: &ClusterChange,
        first: &ClusterRequest,
    ) -> Result<Option<Cluster>, ExecError> {
        let attempts: Vec<&ClusterRequest> = std::iter::once(first)
            .chain(&change.capacity.fallbacks)
            .collect();
        let name = &change.address;
        let journaled = match self.journal().failed_attempt(name) {
            Some(failed) if failed + 1 < attempts.len() => failed + 1,
            _ => {
                self.journal().end_chain(name).await?;
                0
            }
        };
        // Attempts the plan knows to be out (the cluster a lost attempt left shows it) are
        // not sent again.
        let known_out = change
            .capacity
            .known_out
            .filter(|out| out.number() < attempts.len())
            .map_or(0, |out| out.next().position());
        let start = journaled.max(known_out);
        let chained = first.kind() == RequestKind::Create || attempts.len() > 1;
        let mut failures = Vec::new();
        // A chain resumed after its first attempt follows a delete (this run's replacement
        // or an earlier run's), whose cluster's ID the service may still hold.
        let mut after_a_delete = start > 0;
        for (attempt, request) in attempts.iter().enumerate().skip(start) {
            tracker.check_cancelled()?;
            let place = chained.then_some(attempt);
            let error = match self
                .send_attempt(tracker, name, request, change, (place, after_a_delete))
                .await
            {
                Ok(live) => {
                    self.journal().end_chain(name).await?;
                    if attempt > 0 {
                        tracker.won_with(Attempt::at(attempt));
                        tracker.emit(Step::FellBack {
                            attempt: Attempt::at(attempt),
                            attempts: attempts.len(),
                        });
                    }
                    return Ok(live);
                }
                Err(error) => error,
            };
            if left_a_cluster(request, &error) {
                tracker.left(Some(Remains::FailedCluster));
            }
            let Some(shortage) = error.shortage() else {
                if ends_chain(&error) {
                    self.journal().end_chain(name).await?;
                } else {
                    // An operation may still be running: the journal knows it, the run not.
                    tracker.left(None);
                }
                return Err(error);
            };
            failures.push(failed_attempt(
                Attempt::at(attempt),
                shortage,
                &error,
                request,
                change,
            ));
            let next = (attempt + 1 < attempts.len()).then(|| Attempt::at(attempt).next());
            let left_one = left_a_cluster(request, &error);
            let kept = left_one && change.capacity.keep_failed;
            tracker.emit(Step::FellShort {
                attempt: Attempt::at(attempt),
                attempts: attempts.len(),
                shortage,
                message: error.shortage_message(),
                next: next.filter(|_| !kept),
                deleting: left_one && !kept,
            });
            let replacing = change.action == Action::Replace;
            let left = match (left_one, change.capacity.keep_failed) {
                (false, _) if replacing => LeftBehind::Missing,
                (false, _) => LeftBehind::Nothing,
                (true, true) => LeftBehind::Kept,
                (true, false) => {
                    self.remove_failed(tracker, name, change, attempt).await?;
                    tracker.left(replacing.then_some(Remains::Missing));
                    if replacing {
                        LeftBehind::Missing
                    } else {
                        LeftBehind::Deleted
                    }
                }
            };
            after_a_delete = left_one && left != LeftBehind::Kept;
            if next.is_none() || left == LeftBehind::Kept {
                self.journal().end_chain(name).await?;
                return Err(ExecError::OutOfMachines {
                    cluster: Box::new(name.clone()),
                    attempts: failures,
                    left,
                });
            }
        }
        unreachable!("the last attempt returns whatever its outcome")
    }

    /// Sends one attempt (`attempt`: its place in the chain, if journaled as one); a create
    /// sent `after_a_delete` of the cluster the attempt before left behind waits, within a
    /// bound, for its ID to be free.
    async fn send_attempt(
        &self,
        tracker: &Tracker<'_>,
        name: &ClusterName,
        request: &ClusterRequest,
        change: &ClusterChange,
        (attempt, after_a_delete): (Option<usize>, bool),
    ) -> Result<Option<Cluster>, ExecError> {
        let timeout = timeout_of(request.kind(), &change.timeouts);
        let after_a_delete = after_a_delete && request.kind() == RequestKind::Create;
        let deadline = Instant::now() + ID_FREE_WAIT.min(timeout);
        let mut pause = self.wait_options().poll_initial;
        loop {
            let sent = self
                .run_request(tracker, name, request, timeout, attempt)
                .await;
            match sent {
                Err(error) if after_a_delete && is_taken(&error) && Instant::now() < deadline => {
                    self.check_not_taken_by_another(tracker, request).await?;
                    tracker.emit(Step::IdNotFree);
                    let remaining = deadline.saturating_duration_since(Instant::now());
                    tracker
                        .cancellable(async {
                            tokio::time::sleep(pause.min(remaining)).await;
                            Ok(())
                        })
                        .await?;
                    pause = (pause * 2).min(self.wait_options().poll_max);
                }
                sent => return sent,
            }
        }
    }

    /// The ID is still taken after the delete: fails at once with
    /// [`ExecError::TakenByAnother`] when a cluster of another owner holds it (waiting would
    /// only run out the create's timeout), goes on waiting while what holds it is the deleted
    /// cluster (gone, or still `STOPPING`) or one of this stack's.
    async fn check_not_taken_by_another(
        &self,
        tracker: &Tracker<'_>,
        create: &ClusterRequest,
    ) -> Result<(), ExecError> {
        let name = create.name();
        let holder = tracker
            .cancellable(async { Ok(self.client.get_cluster(name).await?) })
            .await?;
        let Some(holder) = holder else {
            return Ok(());
        };
        let owner = holder.owner();
        if holder.cluster_state() == Some(ClusterState::Stopping) || owner == create.stack_label() {
            return Ok(());
        }
        Err(ExecError::TakenByAnother {
            cluster: Box::new(name.clone()),
            owner: owner.map(str::to_owned),
        })
    }

    /// Deletes the cluster that attempt `attempt`'s failed create left behind, and waits
    /// until it is gone; the journal keeps the delete as the chain's place until the next
    /// attempt is sent.
    async fn remove_failed(
        &self,
        tracker: &Tracker<'_>,
        name: &ClusterName,
        change: &ClusterChange,
        attempt: usize,
    ) -> Result<(), ExecError> {
        let delete = ClusterRequest::Delete { name: name.clone() };
        let timeout = timeout_of(RequestKind::Delete, &change.timeouts);
        self.run_request(tracker, name, &delete, timeout, Some(attempt))
            .await?;
        tracker.emit(Step::StepDone {
            request: RequestKind::Delete,
        });
        Ok(())
    }
}

/// `attempt`, which met `shortage` with `error`: what it asked for and what the service
/// answered.
fn failed_attempt(
    attempt: Attempt,
    shortage: clusterform_model::Shortage,
    error: &ExecError,
    request: &ClusterRequest,
    change: &ClusterChange,
) -> FailedAttempt {
    let (code, status) = match (error.api_status(), error) {
        (Some(status), _) => (
            u16::try_from(status.code).ok(),
            Some(status.code_name().to_owned()),
        ),
        (None, ExecError::OperationFailed { status, .. }) => {
            (None, Some(status.code_name().to_owned()))
        }
        (None, _) => (None, None),
    };
    FailedAttempt {
        attempt,
        shortage,
        message: error.shortage_message(),
        code,
        status,
        pools: attempted_pools(request, change),
    }
}

/// The pools with fallbacks as `request` asks for them (none, for a chain of one: its text
/// says which machines it lacked).
fn attempted_pools(request: &ClusterRequest, change: &ClusterChange) -> Vec<AttemptedPool> {
    let body = match request {
        ClusterRequest::Create { body, .. } | ClusterRequest::Update { body, .. } => body,
        ClusterRequest::Delete { .. } => return Vec::new(),
    };
    let chained: Vec<&str> = change
        .capacity
        .chains
        .iter()
        .map(|chain| chain.pool.as_str())
        .collect();
    let text = |pool: &serde_json::Value, pointer: &str| {
        pool.pointer(pointer)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    body.get("nodePools")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|pool| {
            let id = text(pool, "/id")?;
            chained.contains(&id.as_str()).then(|| AttemptedPool {
                machine_type: text(pool, "/machineSpec/machineType"),
                provisioning_model: text(pool, "/provisioningModel")
                    .map(|model| ProvisioningModel::from_api(&model)),
                zone: text(pool, "/zone"),
                pool: id,
            })
        })
        .collect()
}

/// Whether the failed attempt left a cluster registered that it made: its create was
/// accepted and its operation (or the cluster itself) failed afterwards. A refusal answered at
/// once made nothing, and a failed update leaves a cluster that was there before.
fn left_a_cluster(request: &ClusterRequest, error: &ExecError) -> bool {
    request.kind() == RequestKind::Create
        && matches!(
            error,
            ExecError::OperationFailed { .. } | ExecError::ClusterFailed { .. }
        )
}

/// A create refused because the ID is still taken.
fn is_taken(error: &ExecError) -> bool {
    error.api_code() == Some(Code::AlreadyExists)
}

/// Whether a failure ends its cluster's chain: the service answered it. A timeout, an
/// interruption or an unwritable journal may leave an operation running, whose journal entry
/// must stay.
fn ends_chain(error: &ExecError) -> bool {
    matches!(
        error,
        ExecError::OperationFailed { .. }
            | ExecError::ClusterFailed { .. }
            | ExecError::OperationWithoutResult { .. }
            | ExecError::MaskPathRefused { .. }
            | ExecError::Transport(TransportError::Api { .. })
    )
}
