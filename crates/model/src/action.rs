//! What a run does to one cluster, in terms of the API calls it takes: the word a plan, the
//! journal of operations in flight and progress events all use.

use serde::{Deserialize, Serialize};

/// The one action a cluster gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// `+`: a create; the cluster is wanted and does not exist.
    Create,
    /// `~`: an update in place; what differs is reachable by allowed update-mask paths.
    Update,
    /// `-/+`: a delete, then a create; a changed field is immutable, or a replacement was
    /// asked for.
    Replace,
    /// `-`: a delete of a cluster the stack owns and no longer wants.
    Delete,
    /// The ownership label is dropped with a `labels` PATCH; the cluster keeps running, no
    /// longer managed by its stack.
    Release,
    /// Nothing differs: no call.
    NoOp,
}
