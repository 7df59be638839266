//! Semantic checks of one decoded cluster, offline: the cluster ID format, references between
//! pools, partitions and node sets, node counts, zones inside the region, resource-name
//! formats, label syntax, the provisioning-model rules, what the service refuses at request
//! time (boot disks of the newest GPU machines, reservation names, the login pool's counts,
//! flex-start durations, the Slurm configuration maps, ...), and as warnings what it may refuse
//! (machine specs outside the catalogue of training machine types, regions outside the
//! documented list, A4X node counts). Each problem points at the field it concerns (a map's
//! key, a list's element, falling back to its enclosing block). A pool's alternatives (its
//! `fallback` blocks) are checked as pools, at the `fallback` block.

mod fallbacks;
mod machines;
pub(crate) mod regions;
mod slurm_config;

use std::collections::BTreeMap;
use std::ops::Range;

use clusterform_model::duration;
use clusterform_model::{
    Cluster, ClusterId, NodePool, ProvisioningModel, ProvisioningProblem, STACK_LABEL, SlurmSpec,
};

use crate::cluster::catalogue::{MachineChoice, catalogue};
use crate::cluster::fallback::PoolFallbackBlocks;
use crate::cluster::spans::Spans;
use crate::diagnostic::{Diagnostic, Severity, SourceFile, did_you_mean};
use slurm_config::MapScope;

/// What the checks of one cluster need besides the cluster itself.
pub(crate) struct ClusterChecks<'a> {
    pub file: &'a SourceFile,
    pub spans: Spans<'a>,
    /// The `cluster "ID"` head, where problems without a closer position point.
    pub head: Option<Range<usize>>,
    /// The label, where ID problems point.
    pub label: Option<Range<usize>>,
    /// The resolved project, when known.
    pub project: Option<&'a str>,
    /// The resolved region, when known.
    pub region: Option<&'a str>,
    pub diagnostics: &'a mut Vec<Diagnostic>,
}

const NETWORK_PATTERN: &str = "projects/{P}/global/networks/{N}";
const SUBNETWORK_PATTERN: &str = "projects/{P}/regions/{R}/subnetworks/{S}";
const STORAGE_PATTERN: &str = "projects/{P}/locations/{ZONE}/instances/{NAME}";
/// The longest display name the API takes, in characters.
const MAX_DISPLAY_NAME_CHARS: usize = 128;
/// `flex_start_max_duration` bounds: 30 s to 7 days (*Using Flex Start VMs*).
const FLEX_START_SECONDS: std::ops::RangeInclusive<u64> = 30..=604_800;

impl ClusterChecks<'_> {
    /// Runs every check on `cluster` with ID `id` and its pools' `fallbacks`; the cluster's ID
    /// when it is valid.
    pub fn run(
        &mut self,
        id: &str,
        cluster: &Cluster,
        fallbacks: &[PoolFallbackBlocks],
    ) -> Option<ClusterId> {
        let id = self.cluster_id(id, cluster);
        self.own_region();
        self.display_name(cluster);
        self.labels("labels", cluster.labels.as_ref(), true);
        self.network(cluster);
        for pool in cluster.node_pools.as_deref().unwrap_or_default() {
            self.pool(&pool_path(pool), pool);
        }
        self.fallbacks(cluster, fallbacks);
        self.slurm(cluster);
        self.lustre_export(cluster);
        id
    }

    fn range(&self, path: &str) -> Option<Range<usize>> {
        let mut path = path;
        loop {
            if let Some(range) = self.spans.get(path) {
                return Some(range);
            }
            match path.rfind(['.', '[']) {
                Some(cut) => path = &path[..cut],
                None => return self.head.clone(),
            }
        }
    }

    fn error(&mut self, path: &str, message: String, hint: Option<String>) {
        let range = self.range(path);
        self.diagnostics.push(self.file.error(range, message, hint));
    }

    fn warning(&mut self, path: &str, message: String, hint: String) {
        let range = self.range(path);
        let warning = self
            .file
            .diagnostic(Severity::Warning, range, message, Some(hint));
        self.diagnostics.push(warning);
    }

    /// An error at the key `key` of the map at `path` (at the map when no key is written).
    fn key_error(&mut self, path: &str, key: &str, message: String, hint: String) {
        let range = self.spans.map_key(path, key).or_else(|| self.range(path));
        self.diagnostics
            .push(self.file.error(range, message, Some(hint)));
    }

    /// An error at element `index` of the list at `path` (at the list when it is computed).
    fn element_error(&mut self, path: &str, index: usize, message: String, hint: String) {
        let range = self
            .spans
            .list_element(path, index)
            .or_else(|| self.range(path));
        self.diagnostics
            .push(self.file.error(range, message, Some(hint)));
    }

    /// The cluster's own `region` outside the documented list; a region from the provider is
    /// warned about once, at the provider.
    fn own_region(&mut self) {
        if self.spans.get("region").is_none() {
            return;
        }
        if let Some((message, hint)) = self.region.and_then(regions::unknown_region) {
            self.warning("region", message, hint);
        }
    }

    fn display_name(&mut self, cluster: &Cluster) {
        let Some(name) = &cluster.display_name else {
            return;
        };
        let length = name.chars().count();
        if length > MAX_DISPLAY_NAME_CHARS {
            self.error(
                "display_name",
                format!("display_name is {length} characters long; the API takes at most {MAX_DISPLAY_NAME_CHARS}"),
                Some(format!("shorten it to {MAX_DISPLAY_NAME_CHARS} characters")),
            );
        }
    }

    fn cluster_id(&mut self, id: &str, cluster: &Cluster) -> Option<ClusterId> {
        let slurm = cluster.slurm_spec().is_some();
        let error = match ClusterId::parse(id, slurm) {
            Ok(id) => return Some(id),
            Err(error) => error,
        };
        let hint = if slurm && id.contains('-') {
            format!(
                "Slurm cluster IDs cannot contain hyphens; try `{}`",
                id.replace('-', "")
            )
        } else {
            "use 1 to 10 lowercase letters and digits, starting with a letter".to_owned()
        };
        let range = self.label.clone();
        self.diagnostics
            .push(self.file.error(range, error.to_string(), Some(hint)));
        None
    }

    /// Node pool and partition IDs: refused unless plain, so that no ID can change the meaning
    /// of a URL or a path it ends up in (`/`, `..`, `%2F`, `?`, `#`, spaces).
    fn member_id(&mut self, path: &str, kind: &str, id: &str) {
        if !member_id_ok(id) {
            self.error(
                path,
                format!("`{id}` is not a valid {kind} ID"),
                Some(MEMBER_ID_RULE.to_owned()),
            );
        }
    }

    fn labels(&mut self, path: &str, labels: Option<&BTreeMap<String, String>>, reserved: bool) {
        for (key, value) in labels.into_iter().flatten() {
            if reserved && key == STACK_LABEL {
                self.error(
                    path,
                    format!("the label `{STACK_LABEL}` is reserved: clusterform sets it to the stack name"),
                    Some("set `stack` in the provider block instead".to_owned()),
                );
            } else if let Some(problem) = label_key_problem(key) {
                self.error(
                    path,
                    format!("invalid label key `{key}`: {problem}"),
                    Some(LABEL_RULE.to_owned()),
                );
            } else if let Some(problem) = label_value_problem(value) {
                self.error(
                    path,
                    format!("invalid value `{value}` of label `{key}`: {problem}"),
                    Some(LABEL_RULE.to_owned()),
                );
            }
        }
    }

    fn network(&mut self, cluster: &Cluster) {
        let Some(network) = &cluster.network else {
            return;
        };
        if let Some(name) = &network.network
            && resource_segments(name, NETWORK_PATTERN).is_none()
        {
            self.error(
                "network.network",
                shape_error(name, "network", NETWORK_PATTERN),
                None,
            );
        }
        if let Some(name) = &network.subnetwork {
            match resource_segments(name, SUBNETWORK_PATTERN) {
                None => self.error(
                    "network.subnetwork",
                    shape_error(name, "subnetwork", SUBNETWORK_PATTERN),
                    None,
                ),
                Some(segments) => {
                    if let Some(region) = self.region
                        && segments[1] != region
                    {
                        let hint = regions::outside_region_hint(
                            region,
                            format!("use a subnetwork of `{region}`"),
                        );
                        self.error(
                            "network.subnetwork",
                            format!("the subnetwork is in region `{}`, but the cluster is in `{region}`", segments[1]),
                            Some(hint),
                        );
                    }
                }
            }
        }
    }

    /// The checks of one pool, or of one of its alternatives, written at `path`.
    fn pool(&mut self, path: &str, pool: &NodePool) {
        self.member_id(path, "node pool", &pool.id);
        self.scaling(path, pool);
        let machine = pool.machine_spec.as_ref();
        let disk = pool.boot_disk.as_ref();
        for (field, value) in [
            (
                "machine_spec.accelerator_count",
                machine.and_then(|m| m.accelerator_count),
            ),
            (
                "boot_disk.boot_disk_size_gb",
                disk.and_then(|d| d.boot_disk_size_gb),
            ),
            (
                "scaling_spec.max_node_count",
                pool.scaling_spec.as_ref().and_then(|s| s.max_node_count),
            ),
        ] {
            if let Some(value) = value.filter(|v| *v < 0) {
                let name = field.rsplit('.').next().unwrap_or(field);
                self.error(
                    &format!("{path}.{field}"),
                    format!(
                        "{name} of pool `{}` is {value}; it cannot be negative",
                        pool.id
                    ),
                    None,
                );
            }
        }
        if let (Some(zone), Some(region)) = (&pool.zone, self.region)
            && zone
                .strip_prefix(region)
                .is_none_or(|rest| !rest.starts_with('-'))
        {
            let hint =
                regions::outside_region_hint(region, format!("use a zone such as `{region}-a`"));
            self.error(
                &format!("{path}.zone"),
                format!(
                    "zone `{zone}` of pool `{}` is not in the cluster's region `{region}`",
                    pool.id
                ),
                Some(hint),
            );
        }
        self.provisioning(path, pool);
        self.flex_start_duration(path, pool);
        self.machine(path, pool);
        self.boot_disk(path, pool);
        self.reservation(path, pool);
        self.nvlink_domains(path, pool);
        self.labels(&format!("{path}.labels"), pool.labels.as_ref(), false);
    }

    fn scaling(&mut self, path: &str, pool: &NodePool) {
        let Some(scaling) = &pool.scaling_spec else {
            return;
        };
        if let Some(min) = scaling.min_node_count
            && min < 0
        {
            self.error(
                &format!("{path}.scaling_spec.min_node_count"),
                format!(
                    "min_node_count of pool `{}` is {min}; it cannot be negative",
                    pool.id
                ),
                None,
            );
        }
        if let (Some(min), Some(max)) = (scaling.min_node_count, scaling.max_node_count)
            && min > max
        {
            self.error(
                &format!("{path}.scaling_spec.max_node_count"),
                format!(
                    "max_node_count ({max}) of pool `{}` is below min_node_count ({min})",
                    pool.id
                ),
                Some("0 ≤ min_node_count ≤ max_node_count".to_owned()),
            );
        }
    }

    /// Warnings where the machine spec strays from the catalogue of training machine types.
    fn machine(&mut self, path: &str, pool: &NodePool) {
        let Some(spec) = &pool.machine_spec else {
            return;
        };
        let Some(machine_type) = spec.machine_type.as_deref() else {
            return;
        };
        let choice = MachineChoice {
            machine_type,
            accelerator_type: spec.accelerator_type.as_deref(),
            accelerator_count: spec.accelerator_count,
        };
        for warning in catalogue().check(choice) {
            let field = format!("{path}.machine_spec.{}", warning.field.attribute());
            let message = format!("pool `{}`: {}", pool.id, warning.message);
            self.warning(&field, message, warning.hint);
        }
    }

    /// The pool's provisioning-model rules, as the model states them.
    fn provisioning(&mut self, path: &str, pool: &NodePool) {
        let machine = pool.machine_spec.as_ref();
        let id = &pool.id;
        for problem in pool.provisioning_problems() {
            match problem {
                ProvisioningProblem::NoReservationAffinity(model) => self.error(
                    &format!("{path}.provisioning_model"),
                    format!("pool `{id}` uses provisioning_model {model} without a reservation_affinity"),
                    Some("add `reservation_affinity { ... }` inside machine_spec".to_owned()),
                ),
                ProvisioningProblem::UnusedReservationAffinity(model) => self.error(
                    &format!("{path}.machine_spec.reservation_affinity"),
                    format!("pool `{id}` sets reservation_affinity, which provisioning_model {model} does not use"),
                    Some(format!(
                        "remove reservation_affinity, or use provisioning_model = \"{}\"",
                        ProvisioningModel::Reservation
                    )),
                ),
                ProvisioningProblem::AcceleratorsWithoutModel => self.error(
                    &gpu_field(path, machine),
                    format!("pool `{id}` has accelerators but neither provisioning_model nor reservation_affinity"),
                    Some(format!(
                        "set provisioning_model ({}) or a reservation_affinity",
                        ProvisioningModel::without_reservation()
                            .map(|model| model.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                ),
                ProvisioningProblem::FlexStartDurationWithoutFlexStart => self.error(
                    &format!("{path}.flex_start_max_duration"),
                    format!(
                        "flex_start_max_duration of pool `{id}` needs provisioning_model {}",
                        ProvisioningModel::FlexStart
                    ),
                    Some(format!(
                        "set provisioning_model = \"{}\" or remove flex_start_max_duration",
                        ProvisioningModel::FlexStart
                    )),
                ),
            }
        }
    }

    /// `flex_start_max_duration` within the service's bounds (the decode has normalised it to
    /// whole seconds, `"Ns"`).
    fn flex_start_duration(&mut self, path: &str, pool: &NodePool) {
        let Some(seconds) = pool
            .flex_start_max_duration
            .as_deref()
            .and_then(|text| duration::parse(text).ok())
        else {
            return;
        };
        if !FLEX_START_SECONDS.contains(&seconds.0) {
            self.error(
                &format!("{path}.flex_start_max_duration"),
                format!(
                    "flex_start_max_duration of pool `{}` is {}; it must be between 30s and 7 days (604800s)",
                    pool.id,
                    seconds.to_units(2)
                ),
                Some("write a duration such as \"24h\"; without one, the service uses 7 days".to_owned()),
            );
        }
    }

    /// The login pool's node counts are equal: "For the login node pool, the MAX_NODE_COUNT
    /// must be the same as the MIN_NODE_COUNT" (*Create cluster*). Unset counts are sent as 0.
    /// `path` is where the pool, or one of its alternatives, is written.
    fn login_pool(&mut self, path: &str, pool: &NodePool) {
        let scaling = pool.scaling_spec.as_ref();
        let min = scaling.and_then(|s| s.min_node_count).unwrap_or(0);
        let max = scaling.and_then(|s| s.max_node_count).unwrap_or(0);
        // A max below the min is reported by `scaling` already.
        if min < max {
            self.error(
                &format!("{path}.scaling_spec.max_node_count"),
                format!(
                    "the login pool `{}` has min_node_count {min} and max_node_count {max}; the login pool's counts must be equal",
                    pool.id
                ),
                Some(format!("set max_node_count = {min}, or min_node_count = {max}: login nodes do not autoscale")),
            );
        }
    }

    fn slurm(&mut self, cluster: &Cluster) {
        let Some(slurm) = cluster.slurm_spec() else {
            return;
        };
        let base = "orchestrator_spec.slurm_spec";
        let pools: Vec<&str> = cluster
            .node_pools
            .as_deref()
            .unwrap_or_default()
            .iter()
            .map(|p| p.id.as_str())
            .collect();
        if let Some(storage) = &slurm.home_directory_storage
            && resource_segments(storage, STORAGE_PATTERN).is_none()
        {
            self.error(
                &format!("{base}.home_directory_storage"),
                shape_error(storage, "Filestore or Lustre instance", STORAGE_PATTERN),
                None,
            );
        }
        if let Some(login) = &slurm.login_node_pool_id {
            self.reference(
                &format!("{base}.login_node_pool_id"),
                "login_node_pool_id",
                login,
                "node pool",
                &pools,
            );
            if let Some(pool) = cluster.node_pool(login) {
                self.login_pool(&pool_path(pool), pool);
            }
        }
        let partitions = slurm.partitions.as_deref().unwrap_or_default();
        for partition in partitions {
            let path = format!("{base}.partitions[{}]", partition.id);
            self.member_id(&path, "partition", &partition.id);
            let path = format!("{base}.partitions[{}].node_pool_ids", partition.id);
            for pool in partition.node_pool_ids.iter().flatten() {
                let what = format!("partition `{}`", partition.id);
                self.reference(&path, &what, pool, "node pool", &pools);
            }
            self.slurm_config(
                &format!("{base}.partitions[{}].config", partition.id),
                MapScope::Partition(&partition.id),
                partition.config.as_ref(),
            );
        }
        for node_set in slurm.node_sets.as_deref().unwrap_or_default() {
            let path = format!("{base}.node_sets[{}]", node_set.node_pool_id);
            self.reference(
                &path,
                "node_set",
                &node_set.node_pool_id,
                "node pool",
                &pools,
            );
            self.node_set_pool(&path, &node_set.node_pool_id, slurm);
            self.slurm_config(
                &format!("{path}.config"),
                MapScope::NodeSet(&node_set.node_pool_id),
                node_set.config.as_ref(),
            );
        }
        self.slurm_config(
            &format!("{base}.config"),
            MapScope::Cluster,
            slurm.config.as_ref(),
        );
        self.superseded(base, slurm);
        if let Some(default) = &slurm.default_partition_id {
            let ids: Vec<&str> = partitions.iter().map(|p| p.id.as_str()).collect();
            self.reference(
                &format!("{base}.default_partition_id"),
                "default_partition_id",
                default,
                "partition",
                &ids,
            );
        }
    }

    /// `scheduling` and `accounting` are superseded by `config`: they "still work for clusters
    /// that use them" (a warning), but never together with it (*Create cluster*, "Slurm
    /// configuration maps").
    fn superseded(&mut self, base: &str, slurm: &SlurmSpec) {
        let config_set = slurm.config.as_ref().is_some_and(|c| !c.is_empty());
        for (name, set, parameters) in [
            (
                "scheduling",
                slurm.scheduling.is_some(),
                "`PriorityType`, `PriorityWeightAge`, `PreemptMode`, ...",
            ),
            (
                "accounting",
                slurm.accounting.is_some(),
                "`AccountingStorageEnforce`",
            ),
        ] {
            if !set {
                continue;
            }
            let path = format!("{base}.{name}");
            let hint = format!(
                "write its settings in `config` as slurm.conf parameters ({parameters}) and remove the `{name}` block"
            );
            if config_set {
                self.error(
                    &path,
                    format!("`{name}` cannot be set together with `config`, which supersedes it"),
                    Some(hint),
                );
            } else {
                self.warning(
                    &path,
                    format!("`{name}` is superseded by `config`; it still works for clusters that use it"),
                    hint,
                );
            }
        }
    }

    /// A node set describes a compute pool, never the login pool (*Create cluster*, "Slurm
    /// configuration maps").
    fn node_set_pool(&mut self, path: &str, pool: &str, slurm: &SlurmSpec) {
        if slurm.login_node_pool_id.as_deref() == Some(pool) {
            self.error(
                path,
                format!(
                    "node_set `{pool}` names the login pool; node sets describe compute pools only"
                ),
                Some("remove this node_set, or label it with a compute pool".to_owned()),
            );
        }
    }

    fn reference(&mut self, path: &str, what: &str, target: &str, kind: &str, existing: &[&str]) {
        if existing.contains(&target) {
            return;
        }
        let hint = did_you_mean(target, existing.iter().copied()).or_else(|| {
            Some(if existing.is_empty() {
                format!("declare the {kind} first")
            } else {
                format!("declared: {}", existing.join(", "))
            })
        });
        self.error(
            path,
            format!("{what} refers to {kind} `{target}`, which does not exist"),
            hint,
        );
    }

    fn lustre_export(&mut self, cluster: &Cluster) {
        let Some(export) = cluster.lustre_export_config.as_ref() else {
            return;
        };
        if let Some(bucket) = &export.destination_bucket {
            self.destination_bucket(bucket);
        }
        let Some(time) = export.start_time.as_ref() else {
            return;
        };
        let base = "lustre_export_config.start_time";
        if let Some(hours) = time.hours.filter(|h| !(0..=23).contains(h)) {
            self.error(
                &format!("{base}.hours"),
                format!("hours must be 0 to 23, not {hours}"),
                None,
            );
        }
        if let Some(minutes) = time.minutes.filter(|m| !(0..=59).contains(m)) {
            self.error(
                &format!("{base}.minutes"),
                format!("minutes must be 0 to 59, not {minutes}"),
                None,
            );
        }
    }

    /// The API takes the bucket's name, not a `gs://` URL.
    fn destination_bucket(&mut self, bucket: &str) {
        let Some(url) = bucket.strip_prefix("gs://") else {
            return;
        };
        let name = url.split('/').next().unwrap_or_default();
        let hint = if name.is_empty() {
            "write the bucket's name, without `gs://`".to_owned()
        } else {
            format!("write the bucket's name alone: destination_bucket = \"{name}\"")
        };
        self.error(
            "lustre_export_config.destination_bucket",
            format!("destination_bucket `{bucket}` is a URL; the API takes the bucket's name without `gs://`"),
            Some(hint),
        );
    }
}

/// Where a pool is written: `node_pools[ID]`.
fn pool_path(pool: &NodePool) -> String {
    format!("node_pools[{}]", pool.id)
}

const MEMBER_ID_RULE: &str = "node pool and partition IDs: 1 to 63 lowercase letters, digits, `-` and `_`, starting with a letter";

fn member_id_ok(id: &str) -> bool {
    id.len() <= 63
        && id.starts_with(|c: char| c.is_ascii_lowercase())
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

const LABEL_RULE: &str = "label keys: 1 to 63 lowercase letters (of any script), digits, `_` and `-`, starting with a letter; values: at most 64 of the same";

/// A character labels may hold: a lowercase letter ("International characters are allowed":
/// a letter of a script without case counts), a digit, `_` or `-`.
fn label_char_ok(c: char) -> bool {
    is_lowercase_letter(c) || c.is_numeric() || c == '_' || c == '-'
}

fn is_lowercase_letter(c: char) -> bool {
    c.is_alphabetic() && !c.is_uppercase()
}

/// The longest label value, in code points (*Create cluster*).
const MAX_LABEL_VALUE_CHARS: usize = 64;

/// Why a label key is invalid, if it is.
pub(crate) fn label_key_problem(key: &str) -> Option<&'static str> {
    if key.is_empty() || key.chars().count() > 63 {
        Some("it must be 1 to 63 characters long")
    } else if !key.starts_with(is_lowercase_letter) {
        Some("it must start with a lowercase letter")
    } else if !key.chars().all(label_char_ok) {
        Some("it may contain only lowercase letters, digits, `_` and `-`")
    } else {
        None
    }
}

/// Why a label value (such as a stack name) is invalid, if it is.
pub fn label_value_problem(value: &str) -> Option<&'static str> {
    if value.chars().count() > MAX_LABEL_VALUE_CHARS {
        Some("it must be at most 64 characters long")
    } else if !value.chars().all(label_char_ok) {
        Some("it may contain only lowercase letters, digits, `_` and `-`")
    } else {
        None
    }
}

/// The variable segments of `name` when it has the shape of `pattern` (`{X}` segments are
/// variables, others literal), `None` otherwise.
fn resource_segments<'n>(name: &'n str, pattern: &str) -> Option<Vec<&'n str>> {
    let mut parts = name.split('/');
    let mut variables = Vec::with_capacity(3);
    for expected in pattern.split('/') {
        let part = parts.next()?;
        if expected.starts_with('{') {
            if !is_variable_segment(part) {
                return None;
            }
            variables.push(part);
        } else if part != expected {
            return None;
        }
    }
    // As many segments as the pattern, no more.
    parts.next().is_none().then_some(variables)
}

/// Whether `part` may stand for a `{X}` segment: not empty, without whitespace, `?` or `#`.
/// Names are ASCII as a rule, and checked byte by byte then: every cluster's network,
/// subnetwork and storage names are checked.
fn is_variable_segment(part: &str) -> bool {
    let forbidden = |c: char| c.is_whitespace() || matches!(c, '?' | '#');
    !part.is_empty()
        && if part.is_ascii() {
            !part.bytes().any(|byte| forbidden(char::from(byte)))
        } else {
            !part.chars().any(forbidden)
        }
}

fn shape_error(name: &str, kind: &str, pattern: &str) -> String {
    format!("`{name}` is not a {kind} name: expected `{pattern}`")
}

/// Where a GPU pool's accelerators are written: its `accelerator_type`, or its `machine_type`
/// when the accelerators are the machine type's own.
fn gpu_field(path: &str, machine: Option<&clusterform_model::MachineSpec>) -> String {
    match machine.and_then(|m| m.accelerator_type.as_ref()) {
        Some(_) => format!("{path}.machine_spec.accelerator_type"),
        None => format!("{path}.machine_spec.machine_type"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_names_match_their_pattern() {
        assert_eq!(
            resource_segments(
                "projects/p/regions/us-central1/subnetworks/s",
                SUBNETWORK_PATTERN
            ),
            Some(vec!["p", "us-central1", "s"])
        );
        assert!(resource_segments("projects/p/global/networks/", NETWORK_PATTERN).is_none());
        assert!(resource_segments("default", NETWORK_PATTERN).is_none());
        for bad in [
            "a b",
            "a\tb",
            "a\x0bb",
            "a?b",
            "a#b",
            "a\u{a0}b",
            "é\u{2003}",
        ] {
            let name = format!("projects/p/global/networks/{bad}");
            assert!(
                resource_segments(&name, NETWORK_PATTERN).is_none(),
                "{bad:?}"
            );
        }
        assert_eq!(
            resource_segments("projects/p/global/networks/réseau", NETWORK_PATTERN),
            Some(vec!["p", "réseau"])
        );
    }

    #[test]
    fn label_rules() {
        assert!(label_key_problem("team").is_none());
        assert!(label_key_problem("Team").is_some());
        assert!(label_key_problem("1team").is_some());
        assert!(label_value_problem("").is_none());
        assert!(label_value_problem(&"a".repeat(64)).is_none());
        assert!(label_value_problem(&"a".repeat(65)).is_some());
        assert!(label_value_problem("研究-é").is_none());
        assert!(label_key_problem("équipe").is_none());
        assert!(label_value_problem("a.b").is_some());
    }
}
