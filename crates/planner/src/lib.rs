//! The planner: desired clusters and live clusters in, a [`Plan`] out — pure, no network.
//!
//! For each cluster it picks one action (create, update in place, replace, delete, no-op),
//! lists the field changes with their impact, derives the smallest set of allowed update-mask
//! paths, the update mode, the warnings, and the exact REST requests the executor will send.
//! Plans can be saved to and read back from a plan file, whose freshness against the live
//! clusters can be checked. A plan can also be built while the live clusters arrive, page by
//! page ([`PlanBuilder`]). Given the digests an earlier apply recorded ([`AppliedDigests`]),
//! a change also names what was changed outside clusterform ([`Drift`]); the digests never
//! change what a plan does. It renders nothing: the binary's views show plans to people.

mod builder;
mod costs;
mod derived;
mod diff;
mod document;
mod drift;
mod error;
mod fallbacks;
mod field_digests;
mod field_index;
mod file;
mod gpus;
mod ignore;
mod options;
mod plan;
mod plan_warning;
mod planning;
pub mod preflight;
mod removed;
mod requests;
mod stale;
mod stopped_work;
mod warnings;

pub use builder::{PlanBuilder, plan};
pub use costs::CostChange;
pub use derived::{SavedPlanMismatch, saved_plan_mismatches};
pub use document::plan_document;
pub use drift::{AppliedDigests, IdleDeletion, desired_digest};
pub use error::PlanError;
pub use field_digests::{FieldDigests, field_digests};
pub use file::{PlanFileError, load_plan, save_plan};
pub use gpus::{GpuChange, GpuShift, Shift, UnknownPool};
pub use options::{PlanFlags, PlanOptions};
pub use plan::{
    CapacityPlan, ChangeReason, ChangedFile, ClusterChange, Disruption, Drift, DriftKind,
    FieldChange, Impact, InError, PLAN_FORMAT_VERSION, Plan, PlanEndpoint, PlannedTimeouts,
    PoolAlternative, PoolChain, PoolDisruption, PoolHarm, RunningAlternative, Summary,
};
pub use plan_warning::{CarriedValue, PlanWarning};
pub use removed::{Unmatched, UnmatchedRemoved, unmatched_removed};
pub use requests::adopt;
pub use stale::{Staleness, StalenessKind, stale_clusters};
pub use stopped_work::{StoppedJobs, StoppedWork, stopped_work};
