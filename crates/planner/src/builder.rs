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

use std::collections::{BTreeMap, HashMap};

use clusterform_config::{Config, DesiredCluster, RemovedCluster};
use clusterform_model::{Cluster, ClusterName, LiveCluster, Location};
use rayon::prelude::*;

use crate::drift::AppliedDigests;
use crate::error::PlanError;
use crate::options::{PlanFlags, PlanOptions};
use crate::plan::{ChangeReason, ClusterChange, PLAN_FORMAT_VERSION, Plan, PlannedTimeouts};
use crate::planning::{deletion, hide_possible_secrets, plan_declared, release};

/// Computes what it takes to bring the live clusters to the desired configuration (or, with
/// `options.destroy`, to delete the declared ones).
pub fn plan(
    desired: &Config,
    live: &[LiveCluster],
    options: &PlanOptions,
) -> Result<Plan, PlanError> {
    PlanBuilder::new(desired, options).finish(live)
}

/// What planning one declared cluster gave: its change (`None` when destroying a cluster that is
/// not live) or why it cannot be planned.
type Planned = Result<Option<ClusterChange>, PlanError>;

/// A plan built page by page: declared clusters are planned as their live counterparts arrive.
#[derive(Debug)]
pub struct PlanBuilder<'a> {
    desired: &'a Config,
    options: &'a PlanOptions,
    /// The declared clusters in scope, in the configuration's order.
    declared: Vec<&'a DesiredCluster>,
    /// The position in `declared` of each declared address.
    positions: HashMap<&'a ClusterName, usize>,
    /// What the pages told about each declared cluster, by position in `declared`.
    early: Vec<Early>,
    /// What earlier applies recorded, if the caller read it: it only words the plan.
    applied: Option<&'a AppliedDigests>,
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

/// The whole live set sorted out: the declared clusters' counterparts, the rest by address.
struct LiveSet<'l> {
    /// Each declared cluster's first live counterpart, by position in `declared`.
    declared: Vec<Option<&'l Cluster>>,
    /// Whether a declared cluster's address is in the live set more than once.
    repeated: Vec<bool>,
    /// Live clusters at no declared address, the first one read at each address.
    undeclared: BTreeMap<&'l ClusterName, &'l Cluster>,
}

impl<'a> PlanBuilder<'a> {
    /// A builder for the plan of `desired` with `options`, no live cluster seen yet.
    pub fn new(desired: &'a Config, options: &'a PlanOptions) -> Self {
        let declared: Vec<&DesiredCluster> = desired
            .clusters
            .iter()
            .filter(|c| in_scope(options, c.name.id().as_str()))
            .collect();
        let positions = declared
            .iter()
            .enumerate()
            .map(|(position, c)| (&c.name, position))
            .collect();
        let early = declared.iter().map(|_| Early::Unseen).collect();
        Self {
            desired,
            options,
            declared,
            positions,
            early,
            applied: None,
        }
    }

    /// Words the plan with what earlier applies recorded (the digest of the declared cluster
    /// each applied): a cluster that differs from a declaration whose digest is the recorded
    /// one was changed outside clusterform, and its change says so
    /// ([`ClusterChange::drift`]). Actions, fields, masks and requests are the same with or
    /// without it. Give it before adding pages.
    #[must_use]
    pub fn with_applied(mut self, applied: &'a AppliedDigests) -> Self {
        self.applied = Some(applied);
        self
    }

    /// Plans, on every core, each declared cluster whose live counterpart is in `page` (one
    /// page of a List, or any part of the live set). Every page added must be part of the live
    /// set later given to [`finish`](Self::finish); a cluster planned from a page whose address
    /// that set lacks is planned again against the set.
    pub fn add_live(&mut self, page: &[LiveCluster]) {
        let mut found: BTreeMap<usize, &Cluster> = BTreeMap::new();
        for live in page {
            let Some(position) = self.position(&live.address) else {
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
        let applied = self.applied;
        let planned: Vec<(usize, Planned)> = found
            .into_par_iter()
            .map(|(position, live)| {
                let cluster = declared[position];
                (
                    position,
                    plan_declared(desired, cluster, Some(live), options, applied),
                )
            })
            .collect();
        for (position, planned) in planned {
            self.early[position] = Early::Planned(Box::new(planned));
        }
    }

    /// The plan against `all_live`, the whole live set (which holds every page added): exactly
    /// what [`plan`](crate::plan) gives for it. Declared clusters planned from the pages are
    /// kept, the others are planned now, then the whole-plan checks run. The set is read once,
    /// in order, so it may be given page by page.
    pub fn finish<'l>(
        self,
        all_live: impl IntoIterator<Item = &'l LiveCluster>,
    ) -> Result<Plan, PlanError> {
        self.finish_without(all_live, &[])
    }

    /// [`finish`](Self::finish) when the Lists of `unread` gave nothing: the declared clusters
    /// there are not planned at all — neither created (they may well exist) nor changed — and
    /// nothing else there is seen to be planned.
    pub fn finish_without<'l>(
        self,
        all_live: impl IntoIterator<Item = &'l LiveCluster>,
        unread: &[Location],
    ) -> Result<Plan, PlanError> {
        let stack = self.desired.provider.stack.as_str();
        let live = self.sort_out(all_live);
        check_targets(self.desired, &self.declared, &live, stack, self.options)?;
        let (desired, options, applied) = (self.desired, self.options, self.applied);
        // Clusters are planned independently: a large configuration plans on every core.
        let planned: Vec<Planned> = self
            .declared
            .par_iter()
            .zip(self.early)
            .zip(&live.declared)
            .zip(&live.repeated)
            .filter(|(((cluster, _), _), _)| !unread.contains(cluster.name.location()))
            .map(|(((cluster, early), current), repeated)| match early {
                // Kept only if the whole set agrees: read there once, at the same address. (A
                // page outside the whole set breaks `add_live`'s contract; the whole set wins.)
                Early::Planned(planned) if !repeated && current.is_some() => *planned,
                Early::Unseen | Early::Planned(_) | Early::SeenTwice => {
                    plan_declared(desired, cluster, *current, options, applied)
                }
            })
            .collect();
        let mut changes = Vec::with_capacity(planned.len() + live.undeclared.len());
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
        changes.extend(undeclared_changes(self.desired, &live.undeclared, options));
        check_replacements(&changes, options)?;
        let flags = PlanFlags::of(options);
        Ok(Plan {
            format_version: PLAN_FORMAT_VERSION,
            stack: stack.to_owned(),
            config_digest: self.desired.digest.clone(),
            config_files: self.desired.file_digests.clone(),
            directory: self.desired.root.clone(),
            variables: self.desired.variables.clone(),
            flags_digest: flags.digest(&self.desired.digest),
            flags,
            endpoint: None,
            changes: sorted_by_address(changes),
            unreadable_locations: Vec::new(),
        })
    }

    /// The position in `declared` of the cluster declared at `address`, if one is.
    fn position(&self, address: &ClusterName) -> Option<usize> {
        self.positions.get(address).copied()
    }

    /// Matches every live cluster with the declared cluster at its address (live clusters are
    /// matched by the address they were read at, never by their `name` string, which may spell
    /// the project as a number); the first one read at an address wins.
    fn sort_out<'l>(&self, all_live: impl IntoIterator<Item = &'l LiveCluster>) -> LiveSet<'l> {
        let mut live = LiveSet {
            declared: vec![None; self.declared.len()],
            repeated: vec![false; self.declared.len()],
            undeclared: BTreeMap::new(),
        };
        for current in all_live {
            match self.position(&current.address) {
                Some(position) if live.declared[position].is_some() => {
                    live.repeated[position] = true;
                }
                Some(position) => live.declared[position] = Some(&current.cluster),
                None => {
                    live.undeclared
                        .entry(&current.address)
                        .or_insert(&current.cluster);
                }
            }
        }
        live
    }
}

fn in_scope(options: &PlanOptions, id: &str) -> bool {
    options.targets.is_empty() || options.targets.iter().any(|t| t == id)
}

/// The live clusters of this stack that are not declared (in scope): released when a
/// `removed` block names them, deleted otherwise.
fn undeclared_changes(
    desired: &Config,
    undeclared: &BTreeMap<&ClusterName, &Cluster>,
    options: &PlanOptions,
) -> Vec<ClusterChange> {
    let stack = desired.provider.stack.as_str();
    let removed: BTreeMap<ClusterName, &RemovedCluster> = desired
        .removed
        .iter()
        .filter(|r| in_scope(options, r.name.id().as_str()))
        .map(|r| (r.name.clone(), r))
        .collect();
    let mut changes = Vec::new();
    for (&address, &current) in undeclared {
        let owned = current.is_owned_by(stack);
        if !owned || !in_scope(options, address.id().as_str()) {
            continue;
        }
        if removed.contains_key(address) {
            changes.push(release(address.clone(), current));
        } else {
            let reason = ChangeReason::NoLongerDeclared {
                stack: stack.to_owned(),
            };
            let mut change = deletion(address.clone(), current, PlannedTimeouts::default(), reason);
            hide_possible_secrets(&mut change);
            changes.push(change);
        }
    }
    changes
}

/// A target must be declared, or be the ID of a live cluster this stack owns.
fn check_targets(
    desired: &Config,
    declared: &[&DesiredCluster],
    live: &LiveSet<'_>,
    stack: &str,
    options: &PlanOptions,
) -> Result<(), PlanError> {
    let owns = |target: &str| {
        let declared_live = declared
            .iter()
            .zip(&live.declared)
            .filter_map(|(cluster, current)| Some((cluster.name.id().as_str(), (*current)?)));
        let undeclared_live = live
            .undeclared
            .iter()
            .map(|(address, &current)| (address.id().as_str(), current));
        declared_live
            .chain(undeclared_live)
            .any(|(id, current)| id == target && current.is_owned_by(stack))
    };
    for target in &options.targets {
        let declared = desired
            .clusters
            .iter()
            .any(|c| c.name.id().as_str() == target);
        if !declared && !owns(target) {
            let known = desired
                .clusters
                .iter()
                .map(|cluster| cluster.name.id().as_str())
                .chain(
                    live.undeclared
                        .iter()
                        .filter(|(_, current)| current.is_owned_by(stack))
                        .map(|(address, _)| address.id().as_str()),
                );
            return Err(PlanError::UnknownTarget {
                id: target.clone(),
                closest: clusterform_config::closest(target, known).map(str::to_owned),
            });
        }
    }
    Ok(())
}

fn check_replacements(changes: &[ClusterChange], options: &PlanOptions) -> Result<(), PlanError> {
    for id in &options.replace {
        if !changes.iter().any(|c| c.address.id().as_str() == id) {
            let planned = changes.iter().map(|change| change.address.id().as_str());
            return Err(PlanError::UnknownReplace {
                id: id.clone(),
                closest: clusterform_config::closest(id, planned).map(str::to_owned),
            });
        }
    }
    Ok(())
}

/// The changes in address order (a stable sort). Sorting positions, then moving each change
/// once, is cheaper than moving large changes around while sorting.
fn sorted_by_address(changes: Vec<ClusterChange>) -> Vec<ClusterChange> {
    let mut order: Vec<usize> = (0..changes.len()).collect();
    order.sort_by(|&a, &b| changes[a].address.cmp(&changes[b].address));
    let mut slots: Vec<Option<ClusterChange>> = changes.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}
