//! Why `plan` can refuse ([`PlanError`]). The binary adds hints for the user (what command or
//! setting fixes each refusal).

/// Why no plan could be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// A declared cluster exists live without this stack's ownership label.
    #[error(
        "cluster `{id}` exists in projects/{project}/locations/{region} but is not managed by stack `{stack}`"
    )]
    Unowned {
        /// The cluster ID.
        id: String,
        /// Its project.
        project: String,
        /// Its region.
        region: String,
        /// This configuration's stack.
        stack: String,
    },
    /// A declared cluster exists live and belongs to another stack.
    #[error("cluster `{id}` is managed by another stack, `{stack}`")]
    OwnedByOtherStack {
        /// The cluster ID.
        id: String,
        /// The stack named by its `clusterform-stack` label.
        stack: String,
    },
    /// The plan would delete or replace a cluster whose `lifecycle` forbids it.
    #[error("cluster `{id}` has lifecycle.prevent_destroy set, but this plan would {action} it")]
    PreventDestroy {
        /// The cluster ID.
        id: String,
        /// `destroy` or `replace`.
        action: &'static str,
    },
    /// A declared cluster is broken and must be replaced, but its `lifecycle` forbids it.
    #[error("cluster `{id}` is in {state}{}, and lifecycle.prevent_destroy forbids replacing it", detail.as_ref().map(|d| format!(" ({d})")).unwrap_or_default())]
    BrokenButProtected {
        /// The cluster ID.
        id: String,
        /// `clusterStatus.state`.
        state: String,
        /// The service's detail, when given.
        detail: Option<String>,
    },
    /// An update would remove a node pool that the login pool or a partition still uses.
    #[error("cluster `{id}`: {}", problems.join("; "))]
    RemovedPoolStillReferenced {
        /// The cluster ID.
        id: String,
        /// One sentence per dangling reference.
        problems: Vec<String>,
    },
    /// `--target ID` names no declared cluster and no cluster of this stack.
    #[error("--target `{id}` matches no declared cluster and no live cluster of this stack")]
    UnknownTarget {
        /// The target.
        id: String,
        /// The known cluster ID closest to it, when one is close enough to be a typo of it.
        closest: Option<String>,
    },
    /// `--replace ID` names no cluster this plan considers.
    #[error("--replace `{id}` matches no declared cluster in this plan")]
    UnknownReplace {
        /// The ID given.
        id: String,
        /// The planned cluster ID closest to it, when one is close enough to be a typo of it.
        closest: Option<String>,
    },
    /// Several clusters cannot be planned; each is reported.
    #[error("{} clusters cannot be planned:\n{}", .0.len(), .0.iter().map(|e| format!("  - {e}")).collect::<Vec<_>>().join("\n"))]
    Several(Vec<PlanError>),
    /// A cluster could not be turned into JSON (a map key that is not a string).
    #[error("cluster `{id}` cannot be encoded as JSON: {message}")]
    Encode {
        /// The cluster ID.
        id: String,
        /// serde_json's explanation.
        message: String,
    },
}

impl PlanError {
    /// One error for all the problems found: the error itself when there is one.
    pub(crate) fn combine(mut errors: Vec<PlanError>) -> Option<PlanError> {
        match errors.len() {
            0 => None,
            1 => errors.pop(),
            _ => Some(Self::Several(errors)),
        }
    }
}
