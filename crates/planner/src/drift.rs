//! Drift: telling a change made outside clusterform from a change of the configuration.
//!
//! After each successful create or update the executor records, per cluster, the digest of the
//! declared cluster it applied ([`desired_digest`]) and the digest of each field of the cluster
//! the operation returned ([`field_digests`](crate::field_digests)). The binary reads that
//! record and hands the digests to the planner ([`AppliedDigests`],
//! [`PlanBuilder::with_applied`]). Drift is judged per field: each field the configuration
//! sets whose live value is not the recorded one was changed outside clusterform, even when the
//! configuration changed too, and the change names it ([`ClusterChange::drift`]). A pool that
//! runs the alternative clusterform fell back to holds that alternative's values in the record
//! too, so it is never drift. An entry written before the fields were kept is judged whole: a
//! live cluster that differs from a declaration whose digest is the recorded one differs where
//! it was changed outside (each pool running an alternative compared with that alternative),
//! and nothing is said once the configuration changed. The record only words the plan:
//! actions, fields, masks and requests are the same with it, without it, and with a record
//! that is stale.
//!
//! [`PlanBuilder::with_applied`]: crate::PlanBuilder::with_applied
//! [`ClusterChange::drift`]: crate::ClusterChange::drift

use std::collections::{BTreeMap, HashMap, HashSet};

use clusterform_config::DesiredCluster;
use clusterform_model::ClusterName;
use clusterform_model::fields::{FieldKind, ImpactClass, lookup};
use clusterform_model::paths::{FieldPath, IgnorePath, Segment, Selector};
use serde_json::{Map, Value};
use sha2::{Digest as _, Sha256};

use crate::field_digests::{FieldDigests, digests_of, fields_of, write_canonical};
use crate::plan::{Drift, DriftKind, FieldChange};

/// What earlier applies recorded: for each cluster, the digest of the declared cluster that was
/// applied to it last; which clusters a create of clusterform's left failed (tainted: replaced
/// while they are in `ERROR`); and which clusters `destroy --idle-for` deleted. The binary
/// reads them from the applied record and the journal; a record that cannot be read hands
/// none, so that no cluster is replaced for it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppliedDigests {
    digests: HashMap<ClusterName, String>,
    fields: HashMap<ClusterName, FieldDigests>,
    tainted: HashSet<ClusterName>,
    idle_deletions: HashMap<ClusterName, IdleDeletion>,
    managed_labels: HashMap<ClusterName, Vec<String>>,
}

/// A cluster `destroy --idle-for` deleted, as the applied record remembers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdleDeletion {
    /// When, RFC 3339.
    pub deleted_at: String,
    /// The threshold (`2h`).
    pub idle_for: String,
    /// What its Slurm showed.
    pub evidence: String,
}

impl AppliedDigests {
    /// These digests, with `tainted` marked as left failed by a create of clusterform's.
    #[must_use]
    pub fn with_tainted(mut self, tainted: impl IntoIterator<Item = ClusterName>) -> Self {
        self.tainted.extend(tainted);
        self
    }

    /// These digests, with `address` remembered as deleted for being idle.
    #[must_use]
    pub fn with_idle_deletion(mut self, address: ClusterName, deletion: IdleDeletion) -> Self {
        self.idle_deletions.insert(address, deletion);
        self
    }

    /// These digests, with `keys` remembered as the labels an apply of clusterform's set on
    /// `address` (a label it set and the configuration no longer declares is removed; any
    /// other undeclared label is someone else's and is kept).
    #[must_use]
    pub fn with_managed_labels(mut self, address: ClusterName, keys: Vec<String>) -> Self {
        self.managed_labels.insert(address, keys);
        self
    }

    /// These digests, with `fields` remembered as the digest of each field of `address` as
    /// clusterform's last apply left it ([`field_digests`](crate::field_digests)): drift is
    /// then judged field by field, whatever the configuration changed since. An entry without
    /// them (a record written before they were kept) is judged by its whole digest.
    #[must_use]
    pub fn with_field_digests(mut self, address: ClusterName, fields: FieldDigests) -> Self {
        if !fields.is_empty() {
            self.fields.insert(address, fields);
        }
        self
    }

    /// The digest of each field of `address` as clusterform's last apply left it, if recorded.
    pub fn field_digests(&self, address: &ClusterName) -> Option<&FieldDigests> {
        self.fields.get(address)
    }

    /// The labels an apply of clusterform's set on `address`, if the record knows them.
    pub fn managed_labels(&self, address: &ClusterName) -> &[String] {
        self.managed_labels.get(address).map_or(&[], Vec::as_slice)
    }

    /// Whether a create of clusterform's left `address` failed.
    pub fn is_tainted(&self, address: &ClusterName) -> bool {
        self.tainted.contains(address)
    }

    /// How `destroy --idle-for` deleted `address`, if it did.
    pub fn idle_deletion(&self, address: &ClusterName) -> Option<&IdleDeletion> {
        self.idle_deletions.get(address)
    }

    /// The digest recorded for `address`, if any.
    pub fn get(&self, address: &ClusterName) -> Option<&str> {
        self.digests.get(address).map(String::as_str)
    }

    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.digests.is_empty()
    }

    /// How many clusters have a digest.
    pub fn len(&self) -> usize {
        self.digests.len()
    }
}

impl FromIterator<(ClusterName, String)> for AppliedDigests {
    fn from_iter<I: IntoIterator<Item = (ClusterName, String)>>(iter: I) -> Self {
        Self {
            digests: iter.into_iter().collect(),
            ..Self::default()
        }
    }
}

/// The digest of a declared cluster: SHA-256 (hex) of the canonical JSON (object keys sorted,
/// no whitespace) of what decides how it is compared with its live cluster — the cluster as the
/// configuration declares it (lowerCamelCase, as its create request sends it, without the
/// ownership label), its node pools' `fallback` alternatives and its `ignore_changes` paths.
/// Stable across runs, machines and builds whose model encodes the cluster alike; anything else
/// of the cluster block (timeouts, update mode, `prevent_destroy`) is left out.
///
/// # Errors
///
/// When the cluster cannot be encoded as JSON (it always can: it holds only strings, numbers
/// and string-keyed maps).
pub fn desired_digest(cluster: &DesiredCluster) -> Result<String, serde_json::Error> {
    let declared = serde_json::to_value(&cluster.cluster)?;
    digest_of(&declared, cluster)
}

/// [`desired_digest`] of `cluster`, whose declared cluster is already encoded as `declared`.
pub(crate) fn digest_of(
    declared: &Value,
    cluster: &DesiredCluster,
) -> Result<String, serde_json::Error> {
    let fallbacks = cluster
        .fallbacks
        .iter()
        .map(|pool| {
            let alternatives = pool
                .alternatives
                .iter()
                .map(serde_json::to_value)
                .collect::<Result<Vec<Value>, _>>()?;
            Ok(serde_json::json!({"pool": pool.pool, "alternatives": alternatives}))
        })
        .collect::<Result<Vec<Value>, serde_json::Error>>()?;
    let ignored: Vec<String> = cluster
        .lifecycle
        .ignore_changes
        .iter()
        .map(ToString::to_string)
        .collect();
    let mut hasher = Sha256::new();
    let mut canonical = String::new();
    write_canonical(declared, &mut canonical);
    hasher.update(b"cluster\0");
    hasher.update(canonical.as_bytes());
    canonical.clear();
    write_canonical(&Value::from(fallbacks), &mut canonical);
    hasher.update(b"\0fallbacks\0");
    hasher.update(canonical.as_bytes());
    canonical.clear();
    write_canonical(&Value::from(ignored), &mut canonical);
    hasher.update(b"\0ignore_changes\0");
    hasher.update(canonical.as_bytes());
    Ok(hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect())
}

/// The fields of a change as changes made outside clusterform: what the live cluster (the
/// change's `before`) has that the configuration (`after`) does not set is `added`, and so on.
/// A map (labels, a Slurm `config`) is told key by key; a node pool added or deleted outside
/// clusterform is one entry, `node_pools[gpu]`.
pub(crate) fn drift_of(fields: &[FieldChange]) -> Vec<Drift> {
    let mut drift: Vec<Drift> = Vec::new();
    let mut push = |path: FieldPath, how: DriftKind| {
        if !drift.iter().any(|d| d.path == path) {
            drift.push(Drift { path, how });
        }
    };
    for field in fields {
        let whole_pool = match field.impact.class {
            // The plan adds a pool the live cluster lacks: it was deleted outside.
            ImpactClass::AddsPool => Some(DriftKind::Removed),
            ImpactClass::DeletesPool => Some(DriftKind::Added),
            _ => None,
        };
        if let (Some(how), Some(pool)) = (whole_pool, element_of(&field.path)) {
            push(pool, how);
            continue;
        }
        match (&field.before, &field.after) {
            (Some(Value::Object(live)), Some(Value::Object(wanted))) => {
                for (key, how) in map_drift(live, wanted) {
                    push(field.path.child(key), how);
                }
            }
            (Some(_), None) => push(field.path.clone(), DriftKind::Added),
            (None, Some(_)) => push(field.path.clone(), DriftKind::Removed),
            _ => push(field.path.clone(), DriftKind::Changed),
        }
    }
    drift
}

/// The fields the plan changes whose live value is not the one clusterform's last apply left
/// (`recorded`): changed outside clusterform, whatever the configuration asks of them now.
/// `compared` is the desired cluster as compared with `live` (both JSON), and `planned` the
/// differences between them. A field the configuration does not set is not judged (the
/// service fills those in as it likes); each key of a map it sets is, and so is an element of
/// a keyed list it sets: a field of an element present on every side, or the element whole
/// (`node_pools[gpu] removed`) when it is missing on a side or no longer declared. A field the
/// configuration now matches is not named: an outside change the configuration adopted cannot
/// be told from an apply of clusterform's that the record missed (an interrupted run).
pub(crate) fn drift_by_field(
    recorded: &FieldDigests,
    live: &Value,
    compared: &Value,
    planned: &[FieldChange],
    ignored: &[IgnorePath],
) -> Vec<Drift> {
    let planned = planned_paths(planned);
    let is_planned = |path: &FieldPath| {
        planned
            .iter()
            .any(|changed| changed.is_within(path.as_str()) || path.is_within(changed.as_str()))
    };
    let live = digests_of(live);
    let judged = Judged::of(compared);
    let differing = recorded
        .keys()
        .chain(live.keys().filter(|path| !recorded.contains_key(*path)))
        .filter(|path| recorded.get(*path) != live.get(*path));
    let mut drift: Vec<Drift> = Vec::new();
    for path in differing {
        // A path this version cannot read (a record edited by hand) is nobody's field.
        let Ok(path) = path.parse::<FieldPath>() else {
            continue;
        };
        if is_ignored(&path, ignored) {
            continue;
        }
        let Some(path) = judged.unit_of(path, recorded, &live).filter(is_planned) else {
            continue;
        };
        let how = match (
            recorded.contains_key(path.as_str()),
            live.contains_key(path.as_str()),
        ) {
            (true, true) => DriftKind::Changed,
            (true, false) => DriftKind::Removed,
            (false, _) => DriftKind::Added,
        };
        if !drift.iter().any(|d| d.path == path) {
            drift.push(Drift { path, how });
        }
    }
    drift.sort_by(|a, b| a.path.cmp(&b.path));
    drift
}

/// What the configuration sets, as [`drift_by_field`] judges it.
#[derive(Debug, Default)]
struct Judged {
    /// The fields it sets, maps as one field.
    fields: HashSet<String>,
    /// The keyed lists' elements it declares.
    elements: HashSet<String>,
    /// The keyed lists it sets.
    lists: HashSet<String>,
}

impl Judged {
    fn of(compared: &Value) -> Self {
        let mut judged = Self::default();
        for (path, _) in fields_of(compared) {
            if element_of(&path).as_ref() == Some(&path) {
                judged.lists.insert(list_of(&path).to_string());
                judged.elements.insert(path.to_string());
            }
            let field = map_of(&path).unwrap_or(path);
            judged.fields.insert(field.to_string());
        }
        judged
    }

    /// What a differing `path` is named as: itself, the element it lies in, or nothing when
    /// the configuration does not set it.
    fn unit_of(
        &self,
        path: FieldPath,
        recorded: &FieldDigests,
        live: &FieldDigests,
    ) -> Option<FieldPath> {
        if let Some(element) = element_of(&path) {
            let key = element.as_str();
            let on_every_side =
                self.elements.contains(key) && recorded.contains_key(key) && live.contains_key(key);
            if !on_every_side {
                return self
                    .lists
                    .contains(list_of(&element).as_str())
                    .then_some(element);
            }
        }
        let field = map_of(&path).unwrap_or_else(|| path.clone());
        self.fields.contains(field.as_str()).then_some(path)
    }
}

/// The paths of the differences `fields`, a map's key by key (`labels.team`, not `labels`).
fn planned_paths(fields: &[FieldChange]) -> Vec<FieldPath> {
    let mut paths = Vec::new();
    for field in fields {
        match (&field.before, &field.after) {
            (Some(Value::Object(live)), Some(Value::Object(wanted))) => paths.extend(
                map_drift(live, wanted)
                    .into_iter()
                    .map(|(key, _)| field.path.child(key)),
            ),
            _ => paths.push(field.path.clone()),
        }
    }
    paths
}

/// Whether `path` lies within an `ignore_changes` path (an ignored element is replaced by its
/// live counterpart in the comparison, so it is set there, yet never judged).
fn is_ignored(path: &FieldPath, ignored: &[IgnorePath]) -> bool {
    ignored.iter().any(|ignore| {
        let (ignore, segments) = (ignore.segments(), path.segments());
        ignore.len() <= segments.len()
            && ignore.iter().zip(segments).all(|(ignore, segment)| {
                ignore.name == segment.name
                    && match (&ignore.selector, &segment.selector) {
                        (None, _) | (Some(Selector::Any), Some(_)) => true,
                        (Some(Selector::Key(a)), Some(Selector::Key(b))) => a == b,
                        (Some(_), _) => false,
                    }
            })
    })
}

/// The map a key's path names a key of (`labels` for `labels.team`), if it is one.
fn map_of(path: &FieldPath) -> Option<FieldPath> {
    let (_, parent) = path.segments().split_last()?;
    let map = path_of(parent);
    lookup(map.as_str())
        .is_some_and(|spec| matches!(spec.kind, FieldKind::StringMap | FieldKind::SlurmConfig))
        .then_some(map)
}

/// The keyed list an element's path selects in (`node_pools` for `node_pools[gpu]`).
fn list_of(element: &FieldPath) -> FieldPath {
    let mut segments = element.segments().to_vec();
    if let Some(last) = segments.last_mut() {
        last.selector = None;
    }
    path_of(&segments)
}

/// The path of `segments`.
fn path_of(segments: &[Segment]) -> FieldPath {
    segments.iter().fold(FieldPath::default(), |path, segment| {
        let path = path.child(&segment.name);
        match &segment.selector {
            Some(Selector::Key(key)) => path.element(key),
            Some(Selector::Any) | None => path,
        }
    })
}

/// The element path a field of a keyed list's element lies in (`node_pools[gpu]` for
/// `node_pools[gpu].zone`): the path up to its first selected segment.
fn element_of(path: &FieldPath) -> Option<FieldPath> {
    let mut element = FieldPath::default();
    for segment in path.segments() {
        element = element.child(&segment.name);
        if let Some(Selector::Key(key)) = &segment.selector {
            return Some(element.element(key));
        }
    }
    None
}

/// A map's keys that differ, in key order: live only (added), configured only (removed), or
/// both with other values (changed; values compared as text, as Slurm reads `1024` and
/// `"1024"` alike).
fn map_drift<'m>(
    live: &'m Map<String, Value>,
    wanted: &'m Map<String, Value>,
) -> Vec<(&'m str, DriftKind)> {
    let text = |value: &Value| match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let mut keys: BTreeMap<&str, DriftKind> = BTreeMap::new();
    for (key, value) in live {
        match wanted.get(key) {
            None => {
                keys.insert(key, DriftKind::Added);
            }
            Some(other) if text(other) != text(value) => {
                keys.insert(key, DriftKind::Changed);
            }
            Some(_) => {}
        }
    }
    for key in wanted.keys() {
        if !live.contains_key(key) {
            keys.insert(key, DriftKind::Removed);
        }
    }
    keys.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let mut out = String::new();
        write_canonical(
            &json!({"b": 1, "a": {"d": [true, null, "x"], "c": 2.5}}),
            &mut out,
        );
        assert_eq!(out, r#"{"a":{"c":2.5,"d":[true,null,"x"]},"b":1}"#);
    }

    #[test]
    fn a_map_drifts_key_by_key() {
        let live = json!({"team": "ml", "hotfix": "1", "tier": "gold"});
        let wanted = json!({"team": "ml", "tier": "silver", "cost": "a"});
        let drift = map_drift(live.as_object().unwrap(), wanted.as_object().unwrap());
        assert_eq!(
            drift,
            vec![
                ("cost", DriftKind::Removed),
                ("hotfix", DriftKind::Added),
                ("tier", DriftKind::Changed),
            ]
        );
    }

    #[test]
    fn numbers_and_their_text_are_no_drift_in_a_map() {
        let live = json!({"DefMemPerCPU": "1024"});
        let wanted = json!({"DefMemPerCPU": 1024});
        assert!(map_drift(live.as_object().unwrap(), wanted.as_object().unwrap()).is_empty());
    }
}
