//! Freshness of a saved plan: before applying it, the executor reads the live clusters again
//! and asks which of the plan's clusters changed since the plan was made. There is no etag;
//! the live `updateTime` is the marker (AIP-154 style), and a cluster that appeared or
//! disappeared counts as changed too.

use std::fmt;

use clusterform_model::{Action, ClusterName, LiveCluster};

use crate::plan::Plan;

/// One cluster of a plan that no longer matches what the plan was computed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Staleness {
    /// The cluster.
    pub address: ClusterName,
    /// What changed.
    pub kind: StalenessKind,
}

/// How a cluster moved on since the plan was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StalenessKind {
    /// It was modified: its `updateTime` differs.
    Changed {
        /// `updateTime` when the plan was made (`None`: the service reported none).
        planned: Option<String>,
        /// `updateTime` now.
        now: Option<String>,
    },
    /// It was absent and exists now.
    Appeared,
    /// It existed and is gone now.
    Disappeared,
}

impl fmt::Display for Staleness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = self.address.id();
        match &self.kind {
            StalenessKind::Changed { planned, now } => write!(
                f,
                "cluster {id} changed since the plan was made (updateTime {} -> {})",
                planned.as_deref().unwrap_or("unset"),
                now.as_deref().unwrap_or("unset")
            ),
            StalenessKind::Appeared => write!(
                f,
                "cluster {id} was created by someone else since the plan was made"
            ),
            StalenessKind::Disappeared => {
                write!(f, "cluster {id} was deleted since the plan was made")
            }
        }
    }
}

/// The plan's clusters that changed live since the plan was made. Clusters the plan leaves
/// alone (no-ops) are not checked: applying the plan does nothing to them either way.
pub fn stale_clusters(plan: &Plan, live: &[LiveCluster]) -> Vec<Staleness> {
    plan.changes
        .iter()
        .filter(|change| change.action != Action::NoOp)
        .filter_map(|change| {
            let current = live
                .iter()
                .find(|c| c.address == change.address)
                .map(|c| &c.cluster);
            let created = change.action == Action::Create;
            let kind = match (change.live_update_time.as_ref(), current) {
                (_, None) if created => return None,
                (_, None) => StalenessKind::Disappeared,
                (_, Some(_)) if created => StalenessKind::Appeared,
                (planned, Some(current)) if planned != current.update_time.as_ref() => {
                    StalenessKind::Changed {
                        planned: planned.cloned(),
                        now: current.update_time.clone(),
                    }
                }
                _ => return None,
            };
            Some(Staleness {
                address: change.address.clone(),
                kind,
            })
        })
        .collect()
}
