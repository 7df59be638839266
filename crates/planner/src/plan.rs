//! The plan data structure, shared by the planner (which builds it), the renderers, saved plan
//! files and the executor (which runs its requests). It serialises as the versioned JSON plan
//! document described in `docs/plan-json.md`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use clusterform_model::fields::{ImpactClass, UpdateMaskPath};
use clusterform_model::paths::FieldPath;
use clusterform_model::rest::ClusterRequest;
use clusterform_model::{Action, ClusterName, UpdateMode, cluster_address};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Version of the JSON plan document and of saved plan files.
/// Version 2 added what applying a saved plan needs: the directory, the variable values and
/// whether it is a destroy plan.
pub const PLAN_FORMAT_VERSION: u32 = 2;

/// Everything a run would do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// [`PLAN_FORMAT_VERSION`].
    pub format_version: u32,
    /// The stack whose clusters this plan manages (the ownership label's value).
    pub stack: String,
    /// The configuration digest the plan was made from.
    pub config_digest: String,
    /// The configuration directory the plan was made from. The planner records
    /// [`Config::root`](clusterform_config::Config::root); the binary makes it absolute so that
    /// a saved plan can be applied from any working directory.
    pub directory: PathBuf,
    /// Every declared variable's value when the plan was made: applying a saved plan loads
    /// the configuration with exactly these. May hold values of `sensitive` variables.
    pub variables: BTreeMap<String, Value>,
    /// A destroy plan (`plan --destroy`, `destroy`): it only deletes.
    pub destroy: bool,
    /// Where the live clusters it was made from were read: `google` (the regional Google
    /// endpoints), `local` (the built-in emulator) or the endpoint's base URL. The binary
    /// records it; applying a saved plan against another endpoint is refused. `None` in plans
    /// saved before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// One entry per cluster considered, no-ops included, sorted by address.
    pub changes: Vec<ClusterChange>,
}

impl Plan {
    /// Counts of each action.
    pub fn summary(&self) -> Summary {
        let mut summary = Summary::default();
        for change in &self.changes {
            match change.action {
                Action::Create => summary.add += 1,
                Action::Update => summary.change += 1,
                Action::Replace => summary.replace += 1,
                Action::Delete => summary.destroy += 1,
                Action::Release => summary.release += 1,
                Action::NoOp => {}
            }
        }
        summary
    }

    /// Whether the plan would do anything.
    pub fn has_changes(&self) -> bool {
        self.changes.iter().any(|c| c.action != Action::NoOp)
    }
}

/// Counts of actions, as in `Plan: 1 to add, 0 to change, 0 to replace, 0 to destroy.`
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Creates.
    pub add: usize,
    /// In-place updates.
    pub change: usize,
    /// Replacements.
    pub replace: usize,
    /// Deletes.
    pub destroy: usize,
    /// Clusters released from this stack without being deleted (`removed` blocks).
    #[serde(default)]
    pub release: usize,
}

/// What happens to one cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterChange {
    /// The cluster, written `{"project", "region", "id"}`.
    #[serde(with = "cluster_address")]
    pub address: ClusterName,
    /// The action.
    pub action: Action,
    /// Why the cluster gets this action, where the fields alone do not say it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<ChangeReason>,
    /// Every changed field (for a create: every set field; for a delete: none).
    pub fields: Vec<FieldChange>,
    /// For an update: the smallest set of allowed mask paths covering `fields`.
    pub update_mask: Vec<UpdateMaskPath>,
    /// For an update: the `updateMode` sent.
    pub update_mode: Option<UpdateMode>,
    /// Distinct impacts of the change, most severe last.
    pub impacts: Vec<Impact>,
    /// Things the user should know before applying.
    pub warnings: Vec<String>,
    /// The requests the executor sends, in order (a replacement: delete, then create).
    pub requests: Vec<ClusterRequest>,
    /// The live cluster's `updateTime` the plan was computed from (`None`: absent live).
    pub live_update_time: Option<String>,
    /// Per-action timeouts in seconds (`create`, `update`, `delete`), after defaults.
    pub timeouts: PlannedTimeouts,
    /// For each block that was compared (`""` = the cluster, `node_pools[cpu]`,
    /// `orchestrator_spec.slurm_spec`, …), how many of its attributes are set in the
    /// configuration and equal live; the text rendering hides them behind a count.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unchanged_attributes: BTreeMap<String, usize>,
}

impl ClusterChange {
    /// Whether applying the change can kill jobs: a delete, a replacement, or an update that
    /// recreates nodes, deletes a pool or lowers a pool's `max_node_count` (Slurm may stop the
    /// jobs running on the nodes that go).
    pub fn is_disruptive(&self) -> bool {
        match self.action {
            Action::Delete | Action::Replace => true,
            Action::Update => {
                self.impacts.iter().any(|impact| {
                    matches!(
                        impact.class,
                        ImpactClass::RecreatesNodes
                            | ImpactClass::DeletesPool
                            | ImpactClass::ReplacesCluster
                    )
                }) || self.fields.iter().any(FieldChange::shrinks_pool)
            }
            Action::Create | Action::Release | Action::NoOp => false,
        }
    }
}

/// The Slurm settings that the service validates one parameter at a time: a combination it
/// accepts may still stop slurmctld while the operation reports success (*Create cluster*,
/// "Slurm configuration maps").
const SLURM_SETTINGS: &[&str] = &[
    "orchestrator_spec.slurm_spec.config",
    "orchestrator_spec.slurm_spec.node_sets",
    "orchestrator_spec.slurm_spec.scheduling",
    "orchestrator_spec.slurm_spec.accounting",
];

impl ClusterChange {
    /// The first Slurm setting the change sets or changes (a partition's `config` included),
    /// whose effect on the controller only a look at Slurm after the operation can tell.
    pub fn changed_slurm_setting(&self) -> Option<&str> {
        self.fields
            .iter()
            .map(|field| &field.path)
            .find(|path| {
                SLURM_SETTINGS.iter().any(|setting| path.is_within(setting))
                    || (path.is_within("orchestrator_spec.slurm_spec.partitions")
                        && path.segments().get(3).is_some_and(|s| s.name == "config"))
            })
            .map(FieldPath::as_str)
    }
}

impl FieldChange {
    /// Whether this change lowers a pool's `max_node_count`: the nodes above the new maximum
    /// are removed, with whatever runs on them.
    pub fn shrinks_pool(&self) -> bool {
        let count = |value: &Option<Value>| {
            value.as_ref().and_then(|v| {
                v.as_i64()
                    .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
            })
        };
        self.path.as_str().ends_with(".scaling_spec.max_node_count")
            && matches!((count(&self.before), count(&self.after)), (Some(before), Some(after)) if after < before)
    }
}

/// Why a cluster gets its action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ChangeReason {
    /// Deleted: the cluster carries this stack's label and is no longer declared.
    NoLongerDeclared {
        /// The stack that owns it.
        stack: String,
    },
    /// Deleted: `destroy` was asked for this declared cluster.
    DestroyRequested,
    /// Replaced: `--replace` asked for it.
    ReplaceRequested,
    /// Replaced: the live cluster is broken, whatever its fields say.
    Broken {
        /// `clusterStatus.state`, e.g. `ERROR`.
        state: String,
        /// The service's `clusterStatus.detail` and error message, when given.
        detail: Option<String>,
    },
    /// The cluster is being deleted already (`STOPPING`): no DELETE is sent; apply waits for
    /// it to be gone (and, for a declared cluster, then creates it).
    BeingDeleted,
    /// Released by a `removed` block.
    Removed,
}

/// Timeouts, in seconds, after defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedTimeouts {
    /// Create.
    pub create: u64,
    /// Update.
    pub update: u64,
    /// Delete.
    pub delete: u64,
}

impl Default for PlannedTimeouts {
    fn default() -> Self {
        Self {
            create: 120 * 60,
            update: 60 * 60,
            delete: 120 * 60,
        }
    }
}

/// One changed field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldChange {
    /// snake_case path with selectors, e.g. `node_pools[cpu].scaling_spec.max_node_count`.
    pub path: FieldPath,
    /// Live value (JSON, normalised); `None` when absent.
    pub before: Option<Value>,
    /// Desired value; `None` when removed.
    pub after: Option<Value>,
    /// The field is immutable: this change is why the cluster is replaced.
    pub forces_replacement: bool,
    /// The value came from a sensitive variable: render `(sensitive)`.
    pub sensitive: bool,
    /// What the change does.
    pub impact: Impact,
}

/// An impact class, with the pool it concerns.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Impact {
    /// The class.
    pub class: ImpactClass,
    /// The node pool, for pool impacts.
    pub pool: Option<String>,
    /// The impact is our inference: the product documentation does not state it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inferred: bool,
}

impl fmt::Display for Impact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.class.describe(self.pool.as_deref()))?;
        if self.inferred {
            f.write_str(" (inferred)")?;
        }
        Ok(())
    }
}
