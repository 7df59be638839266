//! The validated, high-level form of a configuration: what the planner consumes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use clusterform_model::duration::Seconds;
use clusterform_model::paths::IgnorePath;
use clusterform_model::preflight::PreflightApi;
use clusterform_model::pricing::PriceList;
use clusterform_model::{
    Cluster, ClusterName, Endpoint, EndpointUrl, Location, NodePool, RefreshLocations, UpdateMode,
};

/// A whole configuration directory, evaluated and validated.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    /// The configuration directory.
    pub root: PathBuf,
    /// The `provider "google"` block, with defaults applied.
    pub provider: Provider,
    /// The declared clusters, in source order (`for_each` instances in key order).
    pub clusters: Vec<DesiredCluster>,
    /// The `removed` blocks: clusters this stack releases without deleting them.
    pub removed: Vec<RemovedCluster>,
    /// SHA-256 (hex) over every file's name and bytes and every variable value, so a saved plan
    /// can tell whether it was made from this configuration.
    pub digest: String,
    /// SHA-256 (hex) of each file's text, by its name relative to [`Config::root`] (`/`
    /// between directories), so a saved plan can name the files that changed since.
    pub file_digests: BTreeMap<String, String>,
    /// Every declared variable's value, as JSON: a saved plan records them so that applying
    /// it loads the configuration with exactly these values ([`VariableInputs::saved`]).
    pub variables: BTreeMap<String, serde_json::Value>,
}

impl Config {
    /// The declared cluster with this ID.
    pub fn cluster(&self, id: &str) -> Option<&DesiredCluster> {
        self.clusters.iter().find(|c| c.name.id().as_str() == id)
    }

    /// Every location the declared and the removed clusters live in, sorted, without repeats.
    /// With no cluster at all, the provider's location (when it names both): a configuration
    /// whose last cluster block was removed must still see, and delete, the clusters of its
    /// stack there.
    pub fn locations(&self) -> BTreeSet<Location> {
        let declared = self.clusters.iter().map(|c| c.name.location());
        let removed = self.removed.iter().map(|r| r.name.location());
        let mut locations: BTreeSet<Location> = declared.chain(removed).cloned().collect();
        if locations.is_empty() {
            locations.extend(self.provider.location());
        }
        locations
    }

    /// Every project the configuration names: the declared clusters', the `removed` blocks'
    /// and the provider's (when it is a valid project ID or number), sorted, without repeats.
    pub fn projects(&self) -> BTreeSet<&str> {
        let declared = self.clusters.iter().map(|c| c.name.project());
        let removed = self.removed.iter().map(|r| r.name.project());
        let provider = self
            .provider
            .project
            .as_deref()
            .filter(|p| clusterform_model::validate_project(p).is_ok());
        declared.chain(removed).chain(provider).collect()
    }

    /// Where a refresh of this configuration lists: every region the service runs in
    /// ([`SERVICE_REGIONS`](clusterform_model::SERVICE_REGIONS)) and every region the
    /// configuration names (its clusters', its `removed` blocks', the provider's), in every
    /// project it names ([`projects`](Self::projects)) — a stack owns its clusters wherever they
    /// are, so a cluster whose region the configuration no longer names is still seen, and
    /// deleted. [`locations`](Self::locations) are the named ones: a List that fails there
    /// fails the refresh, while one refused elsewhere is only reported.
    pub fn refresh_locations(&self) -> RefreshLocations {
        let provider_region = self
            .provider
            .region
            .as_deref()
            .filter(|r| clusterform_model::validate_location(r).is_ok());
        match &self.provider.regions {
            Some(regions) => RefreshLocations::within(
                self.locations(),
                self.projects(),
                regions.iter().map(String::as_str).chain(provider_region),
            ),
            None => {
                RefreshLocations::everywhere(self.locations(), self.projects(), provider_region)
            }
        }
    }
}

/// The `provider "google"` block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Provider {
    /// Default project of every cluster.
    pub project: Option<String>,
    /// Default region of every cluster.
    pub region: Option<String>,
    /// Value of the `clusterform-stack` ownership label: the `stack` attribute, or the
    /// directory name where that is allowed (`endpoint = "local"`).
    pub stack: String,
    /// Where `stack` came from.
    pub stack_origin: StackOrigin,
    /// Default update mode of every cluster.
    pub update_mode: Option<UpdateMode>,
    /// The built-in emulator, or a base URL.
    pub endpoint: Option<Endpoint>,
    /// `lock "gcs" { ... }`: where the stack's lock (and journal) live on Cloud Storage;
    /// `None` keeps them in the configuration directory's `.clusterform/`.
    pub lock: Option<RemoteState>,
    /// `regions = [...]`: the regions the stack's clusters are looked for in, in every
    /// configured project (beside the locations the configuration names); `None`: every
    /// region the service documents.
    pub regions: Option<Vec<String>>,
    /// `preflight_endpoints { ... }`: the base URL of each API preflight reads that the
    /// configuration redirects (the others take `CLUSTERFORM_<API>_ENDPOINT`, else Google's).
    pub preflight_endpoints: BTreeMap<PreflightApi, String>,
    /// `pricing { ... }`: hourly prices per machine type and per accelerator type, for the
    /// costs plans, `list` and `status` show; `None`: no costs, GPU counts only.
    pub pricing: Option<PriceList>,
}

impl Provider {
    /// The provider's project and region, when it names both and both are valid: the only
    /// location of a configuration without clusters. An invalid one is reported at each
    /// cluster that uses it, so without clusters it lists nothing.
    pub fn location(&self) -> Option<Location> {
        let (project, region) = self.project.as_ref().zip(self.region.as_ref())?;
        Location::new(project, region).ok()
    }
}

/// The Cloud Storage location of a stack's shared state: the lock is the object
/// `{prefix}/{stack}.lock` of `bucket` (and the journal sits next to it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemoteState {
    /// The bucket (Cloud Storage's naming rules are checked when the configuration loads).
    pub bucket: String,
    /// The folder of the objects, without leading or trailing `/`; empty for the bucket's root.
    pub prefix: String,
    /// The Storage base URL, overriding `CLUSTERFORM_STORAGE_ENDPOINT` and the default.
    pub endpoint: Option<EndpointUrl>,
}

/// Where the stack name came from. Only a stack set explicitly may own clusters of a real
/// endpoint: two directories that share a name must never own each other's clusters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StackOrigin {
    /// `stack = "..."` in the provider block.
    #[default]
    Explicit,
    /// The configuration directory's name (only with `endpoint = "local"`).
    DirectoryName,
}

/// One declared cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct DesiredCluster {
    /// Where the cluster lives (its own project and region, else the provider's) and its ID
    /// (the block label, or the `for_each` instance's evaluated label).
    pub name: ClusterName,
    /// The desired resource: only what the configuration sets is `Some`. Its labels do not
    /// include the ownership label; the planner adds it.
    pub cluster: Cluster,
    /// The cluster's `update_mode`, else the provider's, if either is set.
    pub update_mode: Option<UpdateMode>,
    /// The `timeouts` block.
    pub timeouts: Timeouts,
    /// The `lifecycle` block.
    pub lifecycle: Lifecycle,
    /// snake_case field paths (as in the field table, with selectors such as
    /// `node_pools[cpu].startup_script`) whose value came from a sensitive variable.
    pub sensitive_paths: BTreeSet<String>,
    /// The `fallback` blocks of its node pools, pools in declaration order, only pools that
    /// have some.
    pub fallbacks: Vec<PoolFallbacks>,
    /// Where the `cluster` block starts.
    pub location: SourceLocation,
}

/// The node-pool attributes and blocks a `fallback` block may set; everything else of an
/// alternative is its pool's.
pub const FALLBACK_FIELDS: &[&str] = &[
    "machine_spec",
    "provisioning_model",
    "flex_start_max_duration",
    "boot_disk",
    "scaling_spec",
];

/// A node pool's `fallback` blocks: what a create tries, in order, when the pool's machines
/// are out of capacity or quota.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolFallbacks {
    /// The pool's ID.
    pub pool: String,
    /// Each `fallback` block, in order, as the whole pool it makes: what the block sets (each
    /// of [`FALLBACK_FIELDS`], whole) in place of the pool's, everything else the pool's.
    pub alternatives: Vec<NodePool>,
}

impl DesiredCluster {
    /// The fallbacks a create tries: those of the pools that ask for machines at create
    /// ([`NodePool::has_static_nodes`]). A pool that starts empty gets no machines at create,
    /// so a create never fails for its capacity and never moves to its alternatives; its
    /// shortage shows later, as nodes that do not start (`status`).
    pub fn create_fallbacks(&self) -> impl Iterator<Item = &PoolFallbacks> {
        self.fallbacks.iter().filter(|fallbacks| {
            self.cluster
                .node_pool(&fallbacks.pool)
                .is_some_and(NodePool::has_static_nodes)
        })
    }

    /// How many creates its fallbacks allow: one more than the most `fallback` blocks any of
    /// its pools with static nodes has (1 without such fallbacks).
    pub fn attempts(&self) -> usize {
        1 + self
            .create_fallbacks()
            .map(|pool| pool.alternatives.len())
            .max()
            .unwrap_or(0)
    }

    /// The cluster attempt `attempt` creates (0: as declared): each pool of
    /// [`Self::create_fallbacks`] as its `attempt`-th alternative, or its last when it has
    /// fewer; the other pools as declared.
    pub fn attempt(&self, attempt: usize) -> Cluster {
        let mut cluster = self.cluster.clone();
        if attempt == 0 {
            return cluster;
        }
        for pool in cluster.node_pools.iter_mut().flatten() {
            let alternative = self
                .create_fallbacks()
                .find(|fallbacks| fallbacks.pool == pool.id)
                .and_then(|fallbacks| {
                    let alternatives = &fallbacks.alternatives;
                    alternatives[..attempt.min(alternatives.len())].last()
                });
            if let Some(alternative) = alternative {
                pool.clone_from(alternative);
            }
        }
        cluster
    }
}

/// `timeouts { create update delete }`; unset means the executor's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timeouts {
    /// For a create (default 120 minutes).
    pub create: Option<Seconds>,
    /// For an update (default 60 minutes).
    pub update: Option<Seconds>,
    /// For a delete (default 120 minutes).
    pub delete: Option<Seconds>,
}

/// `lifecycle { prevent_destroy ignore_changes }`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lifecycle {
    /// Refuse to delete (or replace) the cluster.
    pub prevent_destroy: bool,
    /// Paths left out of the comparison, e.g. `labels` or `node_pool.cpu.scaling_spec`.
    pub ignore_changes: Vec<IgnorePath>,
}

/// A `removed { cluster = "ID" }` block: the cluster leaves this stack (its ownership label is
/// dropped) without being deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemovedCluster {
    /// The cluster: its ID, in the block's own project and region, else the provider's.
    pub name: ClusterName,
    /// Where the `removed` block starts.
    pub location: SourceLocation,
}

/// A position in a configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SourceLocation {
    /// The file, relative to the configuration directory.
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

/// Variable values from outside the configuration, in increasing precedence: the environment
/// (`CLUSTERFORM_VAR_name`), then the directory's `clusterform.cfvars` and `*.auto.cfvars`
/// (which [`load`](crate::load) finds itself), `--var-file` files, `--var name=value` flags,
/// and the values a saved plan recorded.
///
/// The library never prompts: a variable without a value is a diagnostic, and the CLI (which
/// knows whether a terminal is attached) may ask for it and load again.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VariableInputs {
    /// `--var name=value`, in command-line order.
    pub cli: Vec<(String, String)>,
    /// `--var-file FILE`, in command-line order.
    pub files: Vec<PathBuf>,
    /// `CLUSTERFORM_VAR_*` from the environment, name without the prefix.
    pub env: BTreeMap<String, String>,
    /// The values a saved plan was made with ([`Config::variables`]): applying it must load
    /// the configuration exactly as it was planned, whatever else is set.
    pub saved: BTreeMap<String, serde_json::Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pool with one static node.
    fn pool(id: &str, zone: &str) -> NodePool {
        NodePool {
            id: id.to_owned(),
            zone: Some(zone.to_owned()),
            scaling_spec: Some(clusterform_model::ScalingSpec {
                min_node_count: Some(1),
                ..Default::default()
            }),
            ..NodePool::default()
        }
    }

    /// Pools `a` (two alternatives), `b` (one) and `c` (none), told apart by their zones.
    fn cluster_with_fallbacks() -> DesiredCluster {
        let cluster = Cluster {
            node_pools: Some(vec![pool("a", "a0"), pool("b", "b0"), pool("c", "c0")]),
            ..Cluster::default()
        };
        DesiredCluster {
            name: ClusterName::at(
                Location::new("my-proj", "us-central1").unwrap(),
                clusterform_model::ClusterId::parse("c1", true).unwrap(),
            ),
            cluster,
            update_mode: None,
            timeouts: Timeouts::default(),
            lifecycle: Lifecycle::default(),
            sensitive_paths: BTreeSet::new(),
            fallbacks: vec![
                PoolFallbacks {
                    pool: "a".to_owned(),
                    alternatives: vec![pool("a", "a1"), pool("a", "a2")],
                },
                PoolFallbacks {
                    pool: "b".to_owned(),
                    alternatives: vec![pool("b", "b1")],
                },
            ],
            location: SourceLocation::default(),
        }
    }

    fn zones(cluster: &Cluster) -> Vec<&str> {
        cluster
            .node_pools
            .iter()
            .flatten()
            .filter_map(|pool| pool.zone.as_deref())
            .collect()
    }

    #[test]
    fn attempt_k_takes_each_pools_kth_alternative_or_its_last() {
        let desired = cluster_with_fallbacks();
        assert_eq!(desired.attempts(), 3);
        assert_eq!(desired.attempt(0), desired.cluster);
        assert_eq!(zones(&desired.attempt(1)), ["a1", "b1", "c0"]);
        assert_eq!(zones(&desired.attempt(2)), ["a2", "b1", "c0"]);
        assert_eq!(zones(&desired.attempt(9)), ["a2", "b1", "c0"]);
    }

    #[test]
    fn a_pool_that_starts_empty_keeps_its_declaration_in_every_attempt() {
        let mut desired = cluster_with_fallbacks();
        for pool in desired.cluster.node_pools.iter_mut().flatten() {
            if pool.id == "b" {
                pool.scaling_spec = None;
            }
        }
        assert_eq!(desired.attempts(), 3);
        assert_eq!(zones(&desired.attempt(1)), ["a1", "b0", "c0"]);
        let only_a: Vec<&str> = desired
            .create_fallbacks()
            .map(|f| f.pool.as_str())
            .collect();
        assert_eq!(only_a, ["a"]);
        desired.fallbacks.remove(0);
        assert_eq!(
            desired.attempts(),
            1,
            "b's fallback is never tried at create"
        );
        assert_eq!(desired.attempt(1), desired.cluster);
    }

    #[test]
    fn without_fallbacks_there_is_one_attempt() {
        let desired = DesiredCluster {
            fallbacks: Vec::new(),
            ..cluster_with_fallbacks()
        };
        assert_eq!(desired.attempts(), 1);
        assert_eq!(desired.attempt(1), desired.cluster);
    }

    #[test]
    fn without_clusters_the_provider_location_is_refreshed() {
        let provider = Provider {
            project: Some("acme-ml".to_owned()),
            region: Some("us-central1".to_owned()),
            ..Provider::default()
        };
        let config = Config {
            provider,
            ..Config::default()
        };
        let locations: Vec<_> = config.locations().into_iter().collect();
        assert_eq!(
            locations,
            [Location::new("acme-ml", "us-central1").unwrap()]
        );
        assert!(Config::default().locations().is_empty());
    }

    #[test]
    fn a_refresh_lists_every_service_region_of_every_named_project() {
        let provider = Provider {
            project: Some("acme-ml".to_owned()),
            region: Some("me-west9".to_owned()),
            ..Provider::default()
        };
        let elsewhere = DesiredCluster {
            name: ClusterName::new("proj-two", "europe-west4", "c1").unwrap(),
            ..cluster_with_fallbacks()
        };
        let config = Config {
            provider,
            clusters: vec![cluster_with_fallbacks(), elsewhere],
            ..Config::default()
        };
        assert_eq!(
            config.projects().into_iter().collect::<Vec<_>>(),
            ["acme-ml", "my-proj", "proj-two"]
        );
        let refresh = config.refresh_locations();
        // Three projects; the twelve service regions and the provider's `me-west9`.
        assert_eq!(refresh.len(), 3 * 13);
        let named: Vec<_> = refresh.named_locations().iter().cloned().collect();
        assert_eq!(
            named,
            [
                Location::new("my-proj", "us-central1").unwrap(),
                Location::new("proj-two", "europe-west4").unwrap(),
            ]
        );
        assert!(!refresh.is_named(&Location::new("acme-ml", "me-west9").unwrap()));
        assert!(!refresh.is_named(&Location::new("my-proj", "europe-west4").unwrap()));
    }
}
