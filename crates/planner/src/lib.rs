//! The planner: desired clusters and live clusters in, a [`Plan`] out — pure, no network.
//!
//! For each cluster it picks one action (create, update in place, replace, delete, no-op),
//! lists the field changes with their impact, derives the smallest set of allowed update-mask
//! paths, the update mode, the warnings, and the exact REST requests the executor will send.
//! Plans render as Terraform-style text or as a versioned JSON document, and can be saved to
//! and read back from a plan file, whose freshness against the live clusters can be checked.

mod diff;
mod error;
mod file;
mod ignore;
mod json;
mod live;
mod paths;
mod plan;
mod planning;
mod requests;
mod stale;
mod table;
mod text;
mod warnings;

pub use error::{PlanError, PlanOptions};
pub use file::{PlanFileError, load_plan, save_plan};
pub use json::render_json;
pub use live::{LiveCluster, UnreadableName};
pub use plan::{
    Action, ChangeReason, ClusterAddress, ClusterChange, FieldChange, Impact, PLAN_FORMAT_VERSION,
    Plan, PlannedRequest, PlannedTimeouts, RequestKind, RunningJob, RunningJobs, Summary,
};
pub use planning::plan;
pub use stale::{Staleness, StalenessKind, stale_clusters};
pub use text::render_text;
