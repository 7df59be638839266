//! The run's error: what failed while reading the live clusters, following an operation or
//! running a plan, and on which cluster. A failure of a call or of the journal and locks is
//! the lower layer's error, kept whole ([`TransportError`], [`StateError`]).

use std::time::Duration;

use clusterform_model::duration::Seconds;
use clusterform_model::fields::{MaskSource, UpdateMaskPath, camel_case};
use clusterform_model::rest::ClusterRequest;
use clusterform_model::{
    Attempt, ClusterName, Code, NameError, ProvisioningModel, Shortage, Status, UnreadableName,
};

use crate::state::error::StateError;
use crate::transport::error::TransportError;

/// Everything that can go wrong while talking to the API or running a plan. A cluster's name
/// is boxed: it is three strings, and the error travels in every `Result` of a run.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// A call to the API failed.
    #[error(transparent)]
    Transport(TransportError),
    /// A cluster's address (from a plan or the caller) is malformed.
    #[error("malformed resource name: {0}")]
    Name(#[from] NameError),
    /// The journal, a lock or the state directory cannot be used.
    #[error(transparent)]
    State(#[from] StateError),
    /// Waiting for something took longer than its timeout.
    #[error("{what} did not finish within {}", Seconds::from(*after))]
    Timeout {
        /// What was being waited for.
        what: String,
        /// The timeout.
        after: Duration,
    },
    /// A long-running operation finished with an error.
    #[error("{cluster}: operation {operation} failed: {}: {}", status.code_name(), status.message)]
    OperationFailed {
        /// The cluster acted on.
        cluster: Box<ClusterName>,
        /// The operation's name.
        operation: String,
        /// The operation's `error`: its code (a `google.rpc.Code` number, and the canonical
        /// name when the service sent one, both kept as sent even when this version does not
        /// know them; [`Status::canonical_code`] types it) and message; boxed to keep errors
        /// small.
        status: Box<Status>,
    },
    /// The cluster went to state `ERROR` while we waited for it.
    #[error("{cluster} is in state ERROR: {detail}")]
    ClusterFailed {
        /// The cluster.
        cluster: Box<ClusterName>,
        /// `clusterStatus.detail` or its error message.
        detail: String,
    },
    /// A cluster the plan expected to be deleting is there, no longer being deleted.
    #[error("{cluster} was being deleted when the plan was made, but is {state} now")]
    NoLongerDeleting {
        /// The cluster.
        cluster: Box<ClusterName>,
        /// Its state now.
        state: String,
    },
    /// A journaled operation is no longer known to the service, and the cluster does not look
    /// like it succeeded.
    #[error("{cluster}: operation {operation} is no longer known and {detail}")]
    OperationLost {
        /// The cluster.
        cluster: Box<ClusterName>,
        /// The operation's name.
        operation: String,
        /// What the cluster looks like.
        detail: String,
    },
    /// The service refused an update because of one of its mask paths, one that only the
    /// Terraform provider vouches for; a refused PATCH changes nothing.
    #[error(
        "the service does not update `{path}` in place: it refused the update and nothing \
         changed ({status})"
    )]
    MaskPathRefused {
        /// The refused path.
        path: UpdateMaskPath,
        /// The cluster the update was for.
        cluster: Box<ClusterName>,
        /// Google's status.
        status: Box<Status>,
    },
    /// One List answered the same cluster twice: which copy is the cluster cannot be known,
    /// so nothing is planned or applied from that refresh.
    #[error(
        "the List of {}/{} answered cluster {} twice (pages {first_page} and {second_page}): \
         nothing is planned from an inconsistent List",
        name.project(),
        name.region(),
        name.id()
    )]
    ListedTwice {
        /// The cluster listed twice.
        name: ClusterName,
        /// The page (from 1) of its first listing.
        first_page: usize,
        /// The page (from 1) that listed it again.
        second_page: usize,
    },
    /// A live cluster that carries an ownership label has a name that cannot be addressed.
    #[error(transparent)]
    UnreadableLiveName(#[from] UnreadableName),
    /// An operation is marked done but says neither how it failed nor what it produced.
    #[error("{cluster}: operation {operation} is done but has neither an error nor a response")]
    OperationWithoutResult {
        /// The cluster acted on.
        cluster: Box<ClusterName>,
        /// The operation's name.
        operation: String,
    },
    /// A create (or an update adding node pools) found no machines for any of its attempts.
    #[error("{cluster}: {}; {left}", tried(attempts))]
    OutOfMachines {
        /// The cluster.
        cluster: Box<ClusterName>,
        /// Every attempt that was made, in order, each with why it failed.
        attempts: Vec<FailedAttempt>,
        /// What is left of the cluster.
        left: LeftBehind,
    },
    /// Between two attempts of a fallback chain, a cluster of another owner (another stack's
    /// label, or none) took the ID the chain had freed: the chain cannot go on there.
    #[error(
        "{cluster}: while the fallback chain waited for the ID to be free, a cluster {} took it; the chain stops",
        owned_by(owner.as_deref())
    )]
    TakenByAnother {
        /// The cluster ID the chain creates.
        cluster: Box<ClusterName>,
        /// The stack label of the cluster that took it, if it has one.
        owner: Option<String>,
    },
    /// The run was cancelled (Ctrl-C) while this action was in progress.
    #[error("interrupted")]
    Cancelled,
}

/// One attempt of a create (or of an update adding node pools) that found no machines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedAttempt {
    /// The attempt (1: the pools as declared).
    pub attempt: Attempt,
    /// Capacity, quota, or a machine type not allowed.
    pub shortage: Shortage,
    /// The service's message.
    pub message: String,
    /// The HTTP status of a refusal answered at once; `None` for a failed operation.
    pub code: Option<u16>,
    /// The canonical status name (`RESOURCE_EXHAUSTED`, `INVALID_ARGUMENT`), when given.
    pub status: Option<String>,
    /// What the attempt asked for, pool by pool (the pools with fallbacks; none for a chain
    /// of one).
    pub pools: Vec<AttemptedPool>,
}

/// What one pool asked for in an attempt, as its request had it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptedPool {
    /// The pool's ID.
    pub pool: String,
    /// `machineSpec.machineType`.
    pub machine_type: Option<String>,
    /// `provisioningModel`, when set.
    pub provisioning_model: Option<ProvisioningModel>,
    /// `zone`, when set.
    pub zone: Option<String>,
}

impl std::fmt::Display for AttemptedPool {
    /// `gpu: a3-megagpu-8g SPOT in us-central1-a`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {}",
            self.pool,
            self.machine_type.as_deref().unwrap_or("?")
        )?;
        if let Some(model) = &self.provisioning_model {
            write!(f, " {model}")?;
        }
        if let Some(zone) = &self.zone {
            write!(f, " in {zone}")?;
        }
        Ok(())
    }
}

impl FailedAttempt {
    /// `attempt 2 (gpu: a3-megagpu-8g SPOT in us-central1-a) found no capacity (STOCKOUT in
    /// us-central1-a)`; `the create (…)` for a chain of one.
    fn line(&self, chained: bool) -> String {
        let which = if chained {
            self.attempt.to_string()
        } else {
            "the create".to_owned()
        };
        let pools: Vec<String> = self.pools.iter().map(ToString::to_string).collect();
        let asked = match pools.as_slice() {
            [] => String::new(),
            pools => format!(" ({})", pools.join("; ")),
        };
        format!(
            "{which}{asked} {} ({})",
            self.shortage.outcome(),
            clusterform_model::shortage_brief(&self.message)
        )
    }
}

/// What a create that found no machines left of its cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeftBehind {
    /// Nothing: the service refused at once, or the cluster was there before (an update).
    Nothing,
    /// The cluster the failed create left in `ERROR` was deleted.
    Deleted,
    /// The cluster the failed create left in `ERROR` is kept (`prevent_destroy`).
    Kept,
    /// The change was a replacement: it deleted the live cluster first, and no attempt made
    /// the new one (any cluster a failed attempt left was deleted), so the cluster is missing.
    Missing,
}

impl std::fmt::Display for LeftBehind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Nothing => "nothing was left behind",
            Self::Deleted => "the cluster the failed create left in ERROR was deleted",
            Self::Kept => {
                "the cluster the failed create left in ERROR is kept (lifecycle prevent_destroy)"
            }
            Self::Missing => "the replacement had deleted the cluster first, so it is now missing",
        })
    }
}

/// `managed by another stack, `S`,` or `that no clusterform stack manages`.
fn owned_by(owner: Option<&str>) -> String {
    match owner {
        Some(stack) => format!("managed by another stack, `{stack}`,"),
        None => "that no clusterform stack manages".to_owned(),
    }
}

/// Every attempt in one line each, briefly, then each distinct service text once.
fn tried(attempts: &[FailedAttempt]) -> String {
    let chained = attempts.len() > 1 || attempts.iter().any(|a| a.attempt > Attempt::DECLARED);
    let lines: Vec<String> = attempts.iter().map(|a| a.line(chained)).collect();
    let mut texts: Vec<&str> = Vec::new();
    for attempt in attempts {
        if !texts.contains(&attempt.message.as_str()) {
            texts.push(&attempt.message);
        }
    }
    // Each quotation is joined to what follows by `, then ` or `; `: its closing full stop
    // goes, so that the error never reads `….; …`.
    let said: Vec<String> = texts
        .iter()
        .map(|text| format!("\"{}\"", text.trim_end().trim_end_matches('.')))
        .collect();
    let heading = if chained {
        "no attempt found machines: "
    } else {
        ""
    };
    format!(
        "{heading}{}; the service said {}",
        lines.join("; "),
        said.join(", then ")
    )
}

impl ExecError {
    /// The failure as a progress line says it: an exhausted chain in a few words (its error,
    /// printed once after the run, names every attempt), any other error whole.
    pub fn progress_text(&self) -> String {
        match self {
            Self::OutOfMachines { attempts, .. } => match attempts.as_slice() {
                [only] => format!(
                    "{} ({})",
                    only.shortage.outcome(),
                    clusterform_model::shortage_brief(&only.message)
                ),
                all => format!("no attempt of {} found machines", all.len()),
            },
            other => other.to_string(),
        }
    }
}

impl From<TransportError> for ExecError {
    /// A call the caller stopped is the run's interruption, the same error whichever layer
    /// noticed it.
    fn from(error: TransportError) -> Self {
        match error {
            TransportError::Cancelled => Self::Cancelled,
            other => Self::Transport(other),
        }
    }
}

impl ExecError {
    /// The canonical code of an API error, if this is one.
    pub fn api_code(&self) -> Option<Code> {
        match self {
            Self::Transport(error) => error.api_code(),
            _ => None,
        }
    }

    /// Whether another operation holds the resource (`ABORTED`).
    pub fn is_aborted(&self) -> bool {
        matches!(self, Self::Transport(error) if error.is_aborted())
    }

    /// Whether the service refused for quota or rate (HTTP 429 or `RESOURCE_EXHAUSTED`).
    pub fn is_quota_exhausted(&self) -> bool {
        matches!(self, Self::Transport(error) if error.is_quota_exhausted())
    }

    /// Whether this is an API `NOT_FOUND`.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::Transport(error) if error.is_not_found())
    }

    /// The shortage of machines a failed create or update reports: a quota refused at once,
    /// an operation failing for capacity or quota, a cluster gone to `ERROR` with a capacity
    /// text, or a chain that ran out of alternatives.
    pub fn shortage(&self) -> Option<Shortage> {
        match self {
            Self::Transport(TransportError::Api { status, .. }) => status.refusal_shortage(),
            Self::OperationFailed { status, .. } => status.operation_shortage(),
            Self::ClusterFailed { detail, .. } => Status {
                message: detail.clone(),
                ..Status::default()
            }
            .refusal_shortage(),
            Self::OutOfMachines { attempts, .. } => attempts.last().map(|a| a.shortage),
            _ => None,
        }
    }

    /// The service's message of a shortage, without our own words around it.
    pub(crate) fn shortage_message(&self) -> String {
        match self {
            Self::Transport(TransportError::Api { status, .. }) => status.message.clone(),
            Self::OperationFailed { status, .. } => status.message.clone(),
            Self::ClusterFailed { detail, .. } => detail.clone(),
            other => other.to_string(),
        }
    }

    /// The status of an API error, or of the refused update of a mask path.
    pub fn api_status(&self) -> Option<&Status> {
        match self {
            Self::Transport(TransportError::Api { status, .. })
            | Self::MaskPathRefused { status, .. } => Some(status),
            _ => None,
        }
    }

    /// The error of a refused `request`, told apart when the service refused an update for a
    /// mask path that only the Terraform provider vouches for: an `INVALID_ARGUMENT` whose
    /// message or details name one of the update's provider-only paths (snake_case or
    /// lowerCamelCase). Any other error is returned as it is.
    pub(crate) fn for_request(self, request: &ClusterRequest) -> Self {
        let Self::Transport(TransportError::Api { status, .. }) = &self else {
            return self;
        };
        let ClusterRequest::Update { name, mask, .. } = request else {
            return self;
        };
        if status.canonical_code() != Code::InvalidArgument {
            return self;
        }
        let said = format!(
            "{} {}",
            status.message,
            serde_json::Value::Array(status.details.clone())
        );
        let refused = mask.paths().iter().copied().find(|path| {
            path.source() == MaskSource::TerraformProvider
                && (said.contains(path.as_str()) || said.contains(&camel_case(path.as_str())))
        });
        match (refused, self) {
            (Some(path), Self::Transport(TransportError::Api { status, .. })) => {
                Self::MaskPathRefused {
                    path,
                    cluster: Box::new(name.clone()),
                    status,
                }
            }
            (_, error) => error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_quoted_before_what_was_left_has_no_full_stop_before_the_semicolon() {
        let error = ExecError::OutOfMachines {
            cluster: Box::new(ClusterName::new("my-proj", "us-central1", "train01").unwrap()),
            attempts: vec![FailedAttempt {
                attempt: Attempt::DECLARED,
                shortage: Shortage::Quota,
                message: "Quota 'GPUS_PER_GPU_FAMILY' exceeded. Limit: 0.0 in region us-central1."
                    .to_owned(),
                code: Some(429),
                status: Some("RESOURCE_EXHAUSTED".to_owned()),
                pools: Vec::new(),
            }],
            left: LeftBehind::Nothing,
        };
        let text = error.to_string();
        assert!(
            text.ends_with("in region us-central1\"; nothing was left behind"),
            "{text}"
        );
    }
}
