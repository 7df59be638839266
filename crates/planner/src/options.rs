//! What `plan` is asked to do beyond the configuration: the choices the command line makes
//! ([`PlanOptions`]).

use clusterform_model::UpdateMode;

/// Command-line choices that shape a plan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanOptions {
    /// `--target ID`: consider only these cluster IDs (empty: every cluster).
    pub targets: Vec<String>,
    /// `--replace ID`: replace these clusters even if nothing differs.
    pub replace: Vec<String>,
    /// `--update-mode M`: overrides every cluster's and the provider's update mode.
    pub update_mode: Option<UpdateMode>,
    /// `destroy`: delete the declared (or targeted) clusters instead of converging them.
    pub destroy: bool,
    /// With `destroy`: leave out the clusters `lifecycle { prevent_destroy }` protects
    /// instead of refusing the plan (`destroy --idle-for`, which deletes only some clusters
    /// and shows the protected ones as kept).
    pub keep_protected: bool,
}
