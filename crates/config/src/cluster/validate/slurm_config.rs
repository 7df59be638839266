//! The Slurm configuration maps (`slurm_spec.config`, each partition's `config`, each node
//! set's `config`): the keys the service refuses at request time, and two keys that are one
//! parameter. Keys are Slurm parameter names compared "without matching case and ignoring
//! underscores" (*Create cluster*, "Slurm configuration maps"): `health_check_program` is
//! `HealthCheckProgram`. Each problem points at the key.

use std::collections::BTreeMap;

use clusterform_model::fields::slurm_parameter_key;

use super::ClusterChecks;

/// Which map a key is in.
#[derive(Debug, Clone, Copy)]
pub(super) enum MapScope<'a> {
    Cluster,
    Partition(&'a str),
    NodeSet(&'a str),
}

impl std::fmt::Display for MapScope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Cluster => f.write_str("slurm_spec's config"),
            Self::Partition(id) => write!(f, "the config of partition `{id}`"),
            Self::NodeSet(pool) => write!(f, "the config of node_set `{pool}`"),
        }
    }
}

/// Why the service refuses a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    /// Health checks and requeueing are the service's.
    ServiceManaged,
    /// `Prolog` and `Epilog`: the script lists take their place.
    Script(&'static str),
    /// A `slurmdbd.conf` parameter: the maps hold `slurm.conf` settings.
    Slurmdbd,
    /// `Default` on a partition line: `default_partition_id` names the default partition.
    PartitionDefault,
}

/// Refused everywhere (*Create cluster*, "Slurm configuration maps").
const SERVICE_MANAGED: [&str; 4] = [
    "HealthCheckProgram",
    "HealthCheckInterval",
    "HealthCheckNodeState",
    "RequeueExit",
];

/// The parameters of slurmdbd.conf(5) (Slurm 24.11) that slurm.conf(5) does not also have;
/// shared names such as `AuthType`, `DebugFlags`, `PrivateData`, `SlurmUser` or `TrackWCKey`
/// are left out, since they are valid `slurm.conf` settings. The *Create cluster* page names
/// `StorageHost` and `PurgeJobAfter` as examples of the refused `slurmdbd.conf` parameters.
const SLURMDBD_ONLY: [&str; 39] = [
    "AllowNoDefAcct",
    "AllResourcesAbsolute",
    "ArchiveDir",
    "ArchiveEvents",
    "ArchiveJobs",
    "ArchiveResvs",
    "ArchiveScript",
    "ArchiveSteps",
    "ArchiveSuspend",
    "ArchiveTXN",
    "ArchiveUsage",
    "CommitDelay",
    "DbdAddr",
    "DbdBackupHost",
    "DbdHost",
    "DbdPort",
    "DebugLevel",
    "DebugLevelSyslog",
    "DefaultQOS",
    "DisableCoordDBD",
    "LogFile",
    "MaxQueryTimeRange",
    "PidFile",
    "PurgeEventAfter",
    "PurgeJobAfter",
    "PurgeResvAfter",
    "PurgeStepAfter",
    "PurgeSuspendAfter",
    "PurgeTXNAfter",
    "PurgeUsageAfter",
    "StorageBackupHost",
    "StorageHost",
    "StorageLoc",
    "StorageParameters",
    "StoragePass",
    "StoragePort",
    "StorageType",
    "StorageUser",
    "TrackSlurmctldDown",
];

/// Why the service refuses `key` in a map of `scope`, if it does.
fn refusal(key: &str, scope: MapScope<'_>) -> Option<Refusal> {
    let key = slurm_parameter_key(key);
    let is = |name: &str| slurm_parameter_key(name) == key;
    if SERVICE_MANAGED.iter().any(|name| is(name)) {
        Some(Refusal::ServiceManaged)
    } else if is("Prolog") {
        Some(Refusal::Script("prolog_bash_scripts"))
    } else if is("Epilog") {
        Some(Refusal::Script("epilog_bash_scripts"))
    } else if SLURMDBD_ONLY.iter().any(|name| is(name)) {
        Some(Refusal::Slurmdbd)
    } else if is("Default") && matches!(scope, MapScope::Partition(_)) {
        Some(Refusal::PartitionDefault)
    } else {
        None
    }
}

impl Refusal {
    /// The message and hint for `key` in `scope`.
    fn explain(self, key: &str, scope: MapScope<'_>) -> (String, String) {
        match self {
            Self::ServiceManaged => (
                format!(
                    "`{key}` cannot be set in {scope}: the service manages health checks and requeueing"
                ),
                format!(
                    "remove `{key}`; the service runs its own health checks and requeues jobs itself"
                ),
            ),
            Self::Script(list) => (
                format!(
                    "`{key}` cannot be set in {scope}: the service runs its own {}",
                    key.to_lowercase()
                ),
                format!("remove `{key}` and put the script in `{list}` of slurm_spec"),
            ),
            Self::Slurmdbd => (
                format!("`{key}` is a slurmdbd.conf parameter; {scope} holds slurm.conf settings"),
                format!("remove `{key}`: the service runs the accounting database"),
            ),
            Self::PartitionDefault => (
                format!("`{key}` cannot be set in {scope}"),
                "name the default partition with `default_partition_id` in slurm_spec".to_owned(),
            ),
        }
    }
}

impl ClusterChecks<'_> {
    /// The checks of the map at `path`.
    pub(super) fn slurm_config(
        &mut self,
        path: &str,
        scope: MapScope<'_>,
        config: Option<&BTreeMap<String, String>>,
    ) {
        let Some(config) = config else {
            return;
        };
        for key in config.keys() {
            if let Some(refusal) = refusal(key, scope) {
                let (message, hint) = refusal.explain(key, scope);
                self.key_error(path, key, message, hint);
            }
        }
        self.same_parameter_twice(path, scope, config);
    }

    /// Keys that are one parameter under the service's comparison: every one but the first
    /// written is an error.
    fn same_parameter_twice(
        &mut self,
        path: &str,
        scope: MapScope<'_>,
        config: &BTreeMap<String, String>,
    ) {
        let mut parameters: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        for key in config.keys() {
            parameters
                .entry(slurm_parameter_key(key))
                .or_default()
                .push(key);
        }
        for mut keys in parameters.into_values().filter(|keys| keys.len() > 1) {
            // In the order written; keys without a position (a computed map) last.
            keys.sort_by_key(|key| {
                self.spans
                    .map_key(path, key)
                    .map_or(usize::MAX, |range| range.start)
            });
            let first = keys[0];
            for key in &keys[1..] {
                self.key_error(
                    path,
                    key,
                    format!("`{key}` and `{first}` in {scope} are the same Slurm parameter"),
                    "keys are compared without case and underscores: keep one of them".to_owned(),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_compare_keys_without_case_and_underscores() {
        let partition = MapScope::Partition("p");
        assert_eq!(
            refusal("health_check_program", MapScope::Cluster),
            Some(Refusal::ServiceManaged)
        );
        assert_eq!(
            refusal("EPILOG", MapScope::Cluster),
            Some(Refusal::Script("epilog_bash_scripts"))
        );
        assert_eq!(
            refusal("purge_job_after", partition),
            Some(Refusal::Slurmdbd)
        );
        assert_eq!(
            refusal("Default", partition),
            Some(Refusal::PartitionDefault)
        );
        assert_eq!(refusal("Default", MapScope::NodeSet("n")), None);
        assert_eq!(refusal("DefMemPerCPU", MapScope::Cluster), None);
        assert_eq!(refusal("PrivateData", MapScope::Cluster), None);
    }
}
