//! [`PlanBuilder`]: a plan made while the live clusters are still being read.
//!
//! Each declared cluster is planned on its own, from its configuration and its live
//! counterpart. So a declared cluster found in a List page can be planned as soon as that page
//! arrives ([`PlanBuilder::add_live`]), while the next pages are still on the network; the
//! rest — declared clusters found in no page, undeclared or removed live clusters, and every
//! check that needs the whole live set — waits for [`PlanBuilder::finish`]. `finish` gives
//! exactly what [`plan`](crate::plan) gives for the same live set, whatever pages were added
//! and in whatever order: `plan` is a builder finished without pages.
//!
//! An address seen twice (in two pages, or twice in one) is planned again at the end, against
//! the cluster the whole live set picks for it (its first occurrence).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use clusterform_config::{Config, DesiredCluster, RemovedCluster};
use clusterform_model::{Cluster, ClusterName, STACK_LABEL};
use rayon::prelude::*;

use crate::error::PlanError;
use crate::live::LiveCluster;
use crate::options::PlanOptions;
use crate::plan::{ChangeReason, ClusterChange, PLAN_FORMAT_VERSION, Plan, PlannedTimeouts};
use crate::planning::{address_of, deletion, plan_declared, release, removed_address};

/// What planning one declared cluster gave: its change (`None` when destroying a cluster that is
/// not live) or why it cannot be planned.
type Planned = Result<Option<ClusterChange>, PlanError>;

/// A plan built page by page: declared clusters are planned as their live counterparts arrive.
#[derive(Debug)]
pub struct PlanBuilder<'a> {
    desired: &'a Config,
    options: &'a PlanOptions,
    /// The declared clusters in scope, in the configuration's order, with their addresses.
    declared: Vec<(&'a DesiredCluster, ClusterName)>,
    /// The position in `declared` of each declared address.
    positions: HashMap<ClusterName, usize>,
    /// What the pages told about each declared cluster, by position in `declared`.
    early: Vec<Early>,
}

/// What the pages added so far told about one declared cluster.
#[derive(Debug)]
enum Early {
    /// Its address was in no page.
    Unseen,
    /// Its address was in exactly one page, once: planned against that cluster.
    Planned(Box<Planned>),
    /// Its address was seen more than once: `finish` plans it against the whole live set.
    SeenTwice,
}

impl<'a> PlanBuilder<'a> {
    /// A builder for the plan of `desired` with `options`, no live cluster seen yet.
    pub fn new(desired: &'a Config, options: &'a PlanOptions) -> Self {
        let declared: Vec<(&DesiredCluster, ClusterName)> = desired
            .clusters
            .iter()
            .filter(|c| in_scope(options, &c.id))
            .map(|c| (c, address_of(c)))
            .collect();
        let positions = declared
            .iter()
            .enumerate()
            .map(|(position, (_, address))| (address.clone(), position))
            .collect();
        let early = declared.iter().map(|_| Early::Unseen).collect();
        Self {
            desired,
            options,
            declared,
            positions,
            early,
        }
    }

    /// Plans, on every core, each declared cluster whose live counterpart is in `page` (one
    /// page of a List, or any part of the live set). Every page added must be part of the live
    /// set later given to [`finish`](Self::finish).
    pub fn add_live(&mut self, page: &[LiveCluster]) {
        let mut found: BTreeMap<usize, &Cluster> = BTreeMap::new();
        for live in page {
            let Some(&position) = self.positions.get(&live.address) else {
                continue;
            };
            let first_sighting =
                matches!(self.early[position], Early::Unseen) && !found.contains_key(&position);
            if first_sighting {
                found.insert(position, &live.cluster);
            } else {
                found.remove(&position);
                self.early[position] = Early::SeenTwice;
            }
        }
        let (desired, options, declared) = (self.desired, self.options, &self.declared);
        let planned: Vec<(usize, Planned)> = found
            .into_par_iter()
            .map(|(position, live)| {
                let cluster = declared[position].0;
                (
                    position,
                    plan_declared(desired, cluster, Some(live), options),
                )
            })
            .collect();
        for (position, planned) in planned {
            self.early[position] = Early::Planned(Box::new(planned));
        }
    }

    /// The plan against `all_live`, the whole live set (which holds every page added): exactly
    /// what [`plan`](crate::plan) gives for it. Declared clusters planned from the pages are
    /// kept, the others are planned now, then the whole-plan checks run.
    pub fn finish(self, all_live: &[LiveCluster]) -> Result<Plan, PlanError> {
        let stack = self.desired.provider.stack.as_str();
        let (live_by_address, repeated) = index_live(all_live);
        check_targets(self.desired, &live_by_address, stack, self.options)?;
        let (desired, options) = (self.desired, self.options);
        // Clusters are planned independently: a large configuration plans on every core.
        let planned: Vec<Planned> = self
            .declared
            .par_iter()
            .zip(self.early)
            .map(|((cluster, address), early)| match early {
                Early::Planned(planned) if !repeated.contains(address) => *planned,
                Early::Unseen | Early::Planned(_) | Early::SeenTwice => {
                    let live = live_by_address.get(address).copied();
                    plan_declared(desired, cluster, live, options)
                }
            })
            .collect();
        let mut changes = Vec::new();
        let mut errors = Vec::new();
        for change in planned {
            match change {
                Ok(change) => changes.extend(change),
                Err(error) => errors.push(error),
            }
        }
        if let Some(error) = PlanError::combine(errors) {
            return Err(error);
        }
        changes.extend(undeclared_changes(
            self.desired,
            &self.positions,
            &live_by_address,
            self.options,
        ));
        check_replacements(&changes, self.options)?;
        changes.sort_by(|a, b| a.address.cmp(&b.address));
        Ok(Plan {
            format_version: PLAN_FORMAT_VERSION,
            stack: stack.to_owned(),
            config_digest: self.desired.digest.clone(),
            directory: self.desired.root.clone(),
            variables: self.desired.variables.clone(),
            destroy: self.options.destroy,
            changes,
        })
    }
}

fn in_scope(options: &PlanOptions, id: &str) -> bool {
    options.targets.is_empty() || options.targets.iter().any(|t| t == id)
}

/// The live clusters of this stack that are not declared (in scope): released when a
/// `removed` block names them, deleted otherwise.
fn undeclared_changes(
    desired: &Config,
    declared: &HashMap<ClusterName, usize>,
    live_by_address: &BTreeMap<ClusterName, &Cluster>,
    options: &PlanOptions,
) -> Vec<ClusterChange> {
    let stack = desired.provider.stack.as_str();
    let removed: BTreeMap<ClusterName, &RemovedCluster> = desired
        .removed
        .iter()
        .filter(|r| in_scope(options, &r.id))
        .map(|r| (removed_address(r), r))
        .collect();
    let mut changes = Vec::new();
    for (address, current) in live_by_address {
        let owned = current.label(STACK_LABEL) == Some(stack);
        if !owned || declared.contains_key(address) || !in_scope(options, &address.cluster_id) {
            continue;
        }
        if removed.contains_key(address) {
            changes.push(release(address.clone(), current));
        } else {
            let reason = ChangeReason::NoLongerDeclared {
                stack: stack.to_owned(),
            };
            changes.push(deletion(
                address.clone(),
                current,
                PlannedTimeouts::default(),
                reason,
            ));
        }
    }
    changes
}

/// Live clusters by the address they were read at (never by their `name` string, which may
/// spell the project as a number), the first one read winning; and the addresses read more
/// than once.
fn index_live(live: &[LiveCluster]) -> (BTreeMap<ClusterName, &Cluster>, BTreeSet<ClusterName>) {
    let mut by_address = BTreeMap::new();
    let mut repeated = BTreeSet::new();
    for live in live {
        if by_address.contains_key(&live.address) {
            repeated.insert(live.address.clone());
        } else {
            by_address.insert(live.address.clone(), &live.cluster);
        }
    }
    (by_address, repeated)
}

fn check_targets(
    desired: &Config,
    live: &BTreeMap<ClusterName, &Cluster>,
    stack: &str,
    options: &PlanOptions,
) -> Result<(), PlanError> {
    for target in &options.targets {
        let declared = desired.clusters.iter().any(|c| c.id == *target);
        let owned = live
            .iter()
            .any(|(a, c)| a.cluster_id == *target && c.label(STACK_LABEL) == Some(stack));
        if !declared && !owned {
            return Err(PlanError::UnknownTarget { id: target.clone() });
        }
    }
    Ok(())
}

fn check_replacements(changes: &[ClusterChange], options: &PlanOptions) -> Result<(), PlanError> {
    for id in &options.replace {
        if !changes.iter().any(|c| c.address.cluster_id == *id) {
            return Err(PlanError::UnknownReplace { id: id.clone() });
        }
    }
    Ok(())
}
