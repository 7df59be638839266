//! Preflight's decisions, without I/O: which documented reads a plan needs before it creates
//! something (a cluster it creates or replaces, a pool an update adds), each once however many
//! clusters share it, and what the readings mean for each cluster — a [`Finding`] at the
//! configuration field it concerns. A documented impossibility is [`Certainty::Error`]; a read
//! that could not be made is one [`Problem::NotChecked`] warning per read. The executor makes
//! the reads (`clusterform_executor::read_preflight`); the binary words the findings.

use std::collections::{BTreeMap, BTreeSet};

use clusterform_config::{Config, DesiredCluster};
use clusterform_model::preflight::{
    InstanceName, NetworkName, PreflightApi, PreflightRead, Reading, Service, SubnetworkName,
};
use clusterform_model::{Action, Cluster, ClusterName, NodePool};

use crate::plan::Plan;

/// Where the cluster names its network.
pub const NETWORK_FIELD: &str = "network.network";
/// Where the cluster names its subnetwork.
pub const SUBNETWORK_FIELD: &str = "network.subnetwork";
/// Where the cluster names its home directory.
pub const HOME_FIELD: &str = "orchestrator_spec.slurm_spec.home_directory_storage";

/// What one read is checked for, for one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Check {
    /// The service is enabled.
    ServiceEnabled(Service),
    /// The network exists.
    NetworkExists,
    /// The subnetwork exists, in `region` and on `network`, with Private Google Access when
    /// `private_pools` is not empty.
    Subnetwork {
        region: String,
        network: Option<NetworkName>,
        private_pools: Vec<String>,
        /// Only the pools matter (an update that adds them): the rest was checked at create.
        pools_only: bool,
    },
    /// The home directory's Filestore instance exists, is READY and is on `network`.
    HomeFilestore { network: Option<NetworkName> },
}

/// One read one cluster needs, and what for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The cluster.
    pub cluster: ClusterName,
    /// The read.
    pub read: PreflightRead,
    check: Check,
}

impl Requirement {
    /// The configuration field the finding points at (`""`: the cluster block).
    fn field(&self) -> &'static str {
        match &self.check {
            Check::ServiceEnabled(Service::Filestore) => HOME_FIELD,
            Check::ServiceEnabled(_) => "",
            Check::NetworkExists => NETWORK_FIELD,
            Check::Subnetwork { .. } => SUBNETWORK_FIELD,
            Check::HomeFilestore { .. } => HOME_FIELD,
        }
    }
}

/// How sure a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Certainty {
    /// A documented impossibility: the create would fail.
    Error,
    /// Not known: a check that could not run.
    Warning,
}

/// What a check found wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The service is not enabled in the project.
    ServiceDisabled {
        /// The project.
        project: String,
        /// The service.
        service: Service,
    },
    /// The network does not exist.
    NetworkMissing(NetworkName),
    /// The subnetwork does not exist.
    SubnetworkMissing(SubnetworkName),
    /// The subnetwork is in another region than the cluster.
    SubnetworkInOtherRegion {
        /// The subnetwork.
        subnetwork: SubnetworkName,
        /// Its region.
        region: String,
        /// The cluster's.
        cluster_region: String,
    },
    /// The subnetwork is on another network than the cluster names.
    SubnetworkOnOtherNetwork {
        /// The subnetwork.
        subnetwork: SubnetworkName,
        /// Its network.
        network: NetworkName,
        /// The cluster's.
        cluster_network: NetworkName,
    },
    /// Pools without public IPs on a subnetwork without Private Google Access: the create
    /// fails with "Subnetwork does not allow private IP Google access".
    PrivateAccessOff {
        /// The subnetwork.
        subnetwork: SubnetworkName,
        /// The pools without public IPs.
        pools: Vec<String>,
    },
    /// The home directory's Filestore instance does not exist.
    FilestoreMissing(InstanceName),
    /// The home directory's Filestore instance is not READY.
    FilestoreNotReady {
        /// The instance.
        instance: InstanceName,
        /// Its state.
        state: String,
    },
    /// The home directory's Filestore instance is on none of the cluster's network.
    FilestoreOnOtherNetwork {
        /// The instance.
        instance: InstanceName,
        /// Its networks, as Filestore spells them.
        networks: Vec<String>,
        /// The cluster's.
        cluster_network: NetworkName,
    },
    /// Reads of one API that could not be made, for one reason: what they would have checked
    /// is not known.
    NotChecked {
        /// The API.
        api: PreflightApi,
        /// The reads, in the order the plan needed them.
        reads: Vec<PreflightRead>,
        /// What happened.
        reason: String,
    },
}

/// One thing preflight found, at the configuration field of the cluster it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The cluster.
    pub cluster: ClusterName,
    /// The field (a concrete path such as `network.subnetwork`; `""`: the cluster block).
    pub field: &'static str,
    /// What is wrong.
    pub problem: Problem,
}

impl Finding {
    /// Whether the create would fail for it, or it is only not known.
    pub fn certainty(&self) -> Certainty {
        match self.problem {
            // The Create cluster page allows a Filestore or a Managed Lustre instance as the home
            // directory, in the same shape: one that no Filestore holds may be a Lustre home,
            // which preflight does not read yet, so its absence is not known to be fatal.
            Problem::NotChecked { .. } | Problem::FilestoreMissing(_) => Certainty::Warning,
            _ => Certainty::Error,
        }
    }
}

/// The reads `plan` needs: for every cluster it creates or replaces, all of its checks; for
/// an update that adds pools without public IPs, its subnetwork's Private Google Access. None
/// for a plan that creates nothing.
pub fn plan_requirements(config: &Config, plan: &Plan) -> Vec<Requirement> {
    let mut requirements = Vec::new();
    let creating = plan.changes.iter().filter(|change| {
        matches!(
            change.action,
            Action::Create | Action::Replace | Action::Update
        )
    });
    // Looked up by address once: a fleet's plan must not search the configuration per change.
    let mut declared_at: Option<BTreeMap<&ClusterName, &DesiredCluster>> = None;
    for change in creating {
        let declared_at = declared_at.get_or_insert_with(|| {
            config
                .clusters
                .iter()
                .map(|declared| (&declared.name, declared))
                .collect()
        });
        let Some(&declared) = declared_at.get(&change.address) else {
            continue;
        };
        match change.action {
            Action::Create | Action::Replace => {
                requirements.extend(cluster_requirements(declared));
            }
            Action::Update => {
                let paths: Vec<String> = change
                    .fields
                    .iter()
                    .filter(|field| field.before.is_none())
                    .map(|field| field.path.to_string())
                    .collect();
                let added: Vec<&str> = paths.iter().filter_map(|p| added_pool(p)).collect();
                requirements.extend(added_pool_requirements(declared, &added));
            }
            _ => {}
        }
    }
    requirements
}

/// The reads a declared cluster needs if it is created: for starting them before the plan
/// knows (beside the Lists) when it is likely to be.
pub fn cluster_requirements(declared: &DesiredCluster) -> Vec<Requirement> {
    let name = &declared.name;
    let cluster = &declared.cluster;
    let requirement = |read, check| Requirement {
        cluster: name.clone(),
        read,
        check,
    };
    let mut requirements = Vec::new();
    let home = home_filestore(cluster);
    let services = Service::ALWAYS
        .into_iter()
        .chain(home.is_some().then_some(Service::Filestore));
    for service in services {
        let read = PreflightRead::Service {
            project: name.project().to_owned(),
            service,
        };
        requirements.push(requirement(read, Check::ServiceEnabled(service)));
    }
    let network = cluster_network(cluster);
    if let Some(network) = &network {
        requirements.push(requirement(
            PreflightRead::Network(network.clone()),
            Check::NetworkExists,
        ));
    }
    if let Some(subnetwork) = cluster_subnetwork(cluster) {
        let check = Check::Subnetwork {
            region: name.region().to_owned(),
            network: network.clone(),
            private_pools: private_pools(cluster.node_pools.iter().flatten()),
            pools_only: false,
        };
        requirements.push(requirement(PreflightRead::Subnetwork(subnetwork), check));
    }
    if let Some(instance) = home {
        let check = Check::HomeFilestore { network };
        requirements.push(requirement(PreflightRead::Filestore(instance), check));
    }
    requirements
}

/// The subnetwork check of an update that adds `added` pools, when one has no public IPs.
fn added_pool_requirements(declared: &DesiredCluster, added: &[&str]) -> Option<Requirement> {
    let cluster = &declared.cluster;
    let pools = cluster
        .node_pools
        .iter()
        .flatten()
        .filter(|pool| added.contains(&pool.id.as_str()));
    let private = private_pools(pools);
    let subnetwork = cluster_subnetwork(cluster)?;
    (!private.is_empty()).then(|| Requirement {
        cluster: declared.name.clone(),
        read: PreflightRead::Subnetwork(subnetwork),
        check: Check::Subnetwork {
            region: declared.name.region().to_owned(),
            network: cluster_network(cluster),
            private_pools: private,
            pools_only: true,
        },
    })
}

/// `node_pools[ID]` (a whole pool) as `ID`.
fn added_pool(path: &str) -> Option<&str> {
    let id = path.strip_prefix("node_pools[")?.strip_suffix(']')?;
    (!id.contains(['[', ']', '.'])).then_some(id)
}

/// The pools without public IPs: `enable_public_ips` false or unset (the API's default for
/// the bool is false).
fn private_pools<'p>(pools: impl IntoIterator<Item = &'p NodePool>) -> Vec<String> {
    pools
        .into_iter()
        .filter(|pool| pool.enable_public_ips != Some(true))
        .map(|pool| pool.id.clone())
        .collect()
}

fn cluster_network(cluster: &Cluster) -> Option<NetworkName> {
    NetworkName::parse(cluster.network.as_ref()?.network.as_deref()?)
}

fn cluster_subnetwork(cluster: &Cluster) -> Option<SubnetworkName> {
    SubnetworkName::parse(cluster.network.as_ref()?.subnetwork.as_deref()?)
}

/// The home directory as a Filestore instance: `home_directory_storage` names a Filestore or
/// a Managed Lustre instance in the same shape, so one that a pool or the Lustre export also
/// names as a Lustre instance is taken for Lustre (not checked yet).
fn home_filestore(cluster: &Cluster) -> Option<InstanceName> {
    let slurm = cluster.orchestrator_spec.as_ref()?.slurm_spec.as_ref()?;
    let home = slurm.home_directory_storage.as_deref()?;
    let pool_lustres = cluster
        .node_pools
        .iter()
        .flatten()
        .flat_map(|pool| pool.lustres.iter().flatten());
    let exported = cluster
        .lustre_export_config
        .iter()
        .flat_map(|export| export.lustres.iter().flatten());
    let lustre = pool_lustres.chain(exported).any(|lustre| lustre == home);
    if lustre {
        None
    } else {
        InstanceName::parse(home)
    }
}

/// The distinct reads of `requirements`, each once.
pub fn distinct_reads(requirements: &[Requirement]) -> BTreeSet<PreflightRead> {
    requirements.iter().map(|r| r.read.clone()).collect()
}

/// What the readings mean for each requirement, in the requirements' order. Reads that could
/// not be made are one warning per API and reason, at the first cluster that needed one: an
/// API that cannot be reached is told once, not once per read. A read without a reading is
/// taken as not made.
pub fn findings(
    requirements: &[Requirement],
    readings: &BTreeMap<PreflightRead, Reading>,
) -> Vec<Finding> {
    let mut found = Vec::new();
    // (API, reason) → the index of its finding in `found`.
    let mut unchecked: BTreeMap<(PreflightApi, String), usize> = BTreeMap::new();
    for requirement in requirements {
        let reason =
            match readings.get(&requirement.read) {
                Some(Reading::Unchecked(reason)) => reason.clone(),
                None => "it was not read".to_owned(),
                Some(reading) => {
                    found.extend(problems(requirement, reading).into_iter().map(|problem| {
                        Finding {
                            cluster: requirement.cluster.clone(),
                            field: requirement.field(),
                            problem,
                        }
                    }));
                    continue;
                }
            };
        let api = requirement.read.api();
        match unchecked.get(&(api, reason.clone())) {
            Some(&index) => {
                if let Problem::NotChecked { reads, .. } = &mut found[index].problem
                    && !reads.contains(&requirement.read)
                {
                    reads.push(requirement.read.clone());
                }
            }
            None => {
                unchecked.insert((api, reason.clone()), found.len());
                found.push(Finding {
                    cluster: requirement.cluster.clone(),
                    field: requirement.field(),
                    problem: Problem::NotChecked {
                        api,
                        reads: vec![requirement.read.clone()],
                        reason,
                    },
                });
            }
        }
    }
    found
}

/// What `reading` means for `requirement`.
fn problems(requirement: &Requirement, reading: &Reading) -> Vec<Problem> {
    let unexpected = || Problem::NotChecked {
        api: requirement.read.api(),
        reads: vec![requirement.read.clone()],
        reason: "the answer is not what this read gives".to_owned(),
    };
    match (&requirement.check, &requirement.read, reading) {
        (Check::ServiceEnabled(service), PreflightRead::Service { project, .. }, reading) => {
            match reading {
                Reading::Service { enabled: true } => Vec::new(),
                // Service Usage answers DISABLED for a service never enabled; a 404 is the same.
                Reading::Service { enabled: false } | Reading::Missing => {
                    vec![Problem::ServiceDisabled {
                        project: project.clone(),
                        service: *service,
                    }]
                }
                _ => vec![unexpected()],
            }
        }
        (Check::NetworkExists, PreflightRead::Network(network), reading) => match reading {
            Reading::Network => Vec::new(),
            Reading::Missing => vec![Problem::NetworkMissing(network.clone())],
            _ => vec![unexpected()],
        },
        (check @ Check::Subnetwork { .. }, PreflightRead::Subnetwork(name), reading) => {
            subnetwork_problems(check, name, reading).unwrap_or_else(|| vec![unexpected()])
        }
        (Check::HomeFilestore { network }, PreflightRead::Filestore(instance), reading) => {
            match reading {
                Reading::Missing => vec![Problem::FilestoreMissing(instance.clone())],
                Reading::Filestore { state, networks } => {
                    filestore_problems(instance, state, networks, network.as_ref())
                }
                _ => vec![unexpected()],
            }
        }
        _ => vec![unexpected()],
    }
}

/// What a subnetwork's reading means; `None` for a reading of something else.
fn subnetwork_problems(
    check: &Check,
    name: &SubnetworkName,
    reading: &Reading,
) -> Option<Vec<Problem>> {
    let Check::Subnetwork {
        region,
        network,
        private_pools,
        pools_only,
    } = check
    else {
        return None;
    };
    let (live_network, live_region, private_access) = match reading {
        Reading::Missing if *pools_only => return Some(Vec::new()),
        Reading::Missing => return Some(vec![Problem::SubnetworkMissing(name.clone())]),
        Reading::Subnetwork {
            network,
            region,
            private_ip_google_access,
        } => (network, region, *private_ip_google_access),
        _ => return None,
    };
    let mut problems = Vec::new();
    if !pools_only && live_region != region {
        problems.push(Problem::SubnetworkInOtherRegion {
            subnetwork: name.clone(),
            region: live_region.clone(),
            cluster_region: region.clone(),
        });
    }
    if let Some(network) = network
        && !pools_only
        && live_network != network
    {
        problems.push(Problem::SubnetworkOnOtherNetwork {
            subnetwork: name.clone(),
            network: live_network.clone(),
            cluster_network: network.clone(),
        });
    }
    if !private_access && !private_pools.is_empty() {
        problems.push(Problem::PrivateAccessOff {
            subnetwork: name.clone(),
            pools: private_pools.clone(),
        });
    }
    Some(problems)
}

/// What a Filestore instance's reading means for a home directory on `network`.
fn filestore_problems(
    instance: &InstanceName,
    state: &str,
    networks: &[String],
    network: Option<&NetworkName>,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    if state != "READY" {
        problems.push(Problem::FilestoreNotReady {
            instance: instance.clone(),
            state: state.to_owned(),
        });
    }
    if let Some(network) = network
        && !networks.iter().any(|on| same_network(on, network))
    {
        problems.push(Problem::FilestoreOnOtherNetwork {
            instance: instance.clone(),
            networks: networks.to_vec(),
            cluster_network: network.clone(),
        });
    }
    problems
}

/// Whether Filestore's spelling of a network (a bare name in the instance's project, or a
/// full resource name for a Shared VPC) is `network`.
fn same_network(spelled: &str, network: &NetworkName) -> bool {
    match NetworkName::parse(spelled) {
        Some(full) => full == *network,
        None => spelled == network.network(),
    }
}

#[cfg(test)]
mod tests {
    use clusterform_model::preflight::{PreflightRead, Reading};

    use super::*;

    fn declared(public_ips: Option<bool>) -> DesiredCluster {
        clusterform_testkit::desired(
            "train01",
            serde_json::json!({
                "network": {
                    "network": "projects/my-proj/global/networks/default",
                    "subnetwork": "projects/my-proj/regions/us-central1/subnetworks/default"
                },
                "nodePools": [
                    {"id": "login", "enablePublicIps": true},
                    {"id": "gpu", "enablePublicIps": public_ips}
                ],
                "orchestratorSpec": {"slurmSpec": {
                    "homeDirectoryStorage": "projects/my-proj/locations/us-central1-a/instances/home"
                }}
            }),
        )
    }

    fn read_of(requirements: &[Requirement], field: &str) -> PreflightRead {
        requirements
            .iter()
            .find(|r| r.field() == field)
            .map(|r| r.read.clone())
            .unwrap()
    }

    /// Every read answered as the quick start's world is, but for `changed`.
    fn readings(
        requirements: &[Requirement],
        changed: &[(PreflightRead, Reading)],
    ) -> BTreeMap<PreflightRead, Reading> {
        let mut readings: BTreeMap<PreflightRead, Reading> = distinct_reads(requirements)
            .into_iter()
            .map(|read| {
                let reading = match &read {
                    PreflightRead::Service { .. } => Reading::Service { enabled: true },
                    PreflightRead::Network(_) => Reading::Network,
                    PreflightRead::Subnetwork(_) => Reading::Subnetwork {
                        network: NetworkName::parse("projects/my-proj/global/networks/default")
                            .unwrap(),
                        region: "us-central1".to_owned(),
                        private_ip_google_access: true,
                    },
                    PreflightRead::Filestore(_) => Reading::Filestore {
                        state: "READY".to_owned(),
                        networks: vec!["default".to_owned()],
                    },
                };
                (read, reading)
            })
            .collect();
        readings.extend(changed.iter().cloned());
        readings
    }

    #[test]
    fn a_cluster_needs_its_services_network_subnetwork_and_home_each_read_once() {
        let declared = declared(Some(false));
        let requirements = cluster_requirements(&declared);
        let reads: Vec<String> = distinct_reads(&requirements)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            reads,
            [
                "projects/my-proj/services/aiplatform.googleapis.com",
                "projects/my-proj/services/hypercomputecluster.googleapis.com",
                "projects/my-proj/services/compute.googleapis.com",
                "projects/my-proj/services/file.googleapis.com",
                "projects/my-proj/global/networks/default",
                "projects/my-proj/regions/us-central1/subnetworks/default",
                "projects/my-proj/locations/us-central1-a/instances/home",
            ]
        );
        let twice = [requirements.clone(), requirements].concat();
        assert_eq!(distinct_reads(&twice).len(), 7);
    }

    #[test]
    fn the_quick_starts_world_finds_nothing() {
        let requirements = cluster_requirements(&declared(None));
        assert_eq!(
            findings(&requirements, &readings(&requirements, &[])),
            Vec::new()
        );
    }

    #[test]
    fn a_disabled_service_is_an_error_at_the_cluster_block() {
        let requirements = cluster_requirements(&declared(Some(true)));
        let read = PreflightRead::Service {
            project: "my-proj".to_owned(),
            service: Service::ClusterDirector,
        };
        let found = findings(
            &requirements,
            &readings(
                &requirements,
                &[(read, Reading::Service { enabled: false })],
            ),
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].field, "");
        assert_eq!(found[0].certainty(), Certainty::Error);
        assert!(matches!(
            found[0].problem,
            Problem::ServiceDisabled {
                service: Service::ClusterDirector,
                ..
            }
        ));
    }

    #[test]
    fn private_pools_need_private_google_access_unset_public_ips_being_private() {
        for public_ips in [Some(false), None] {
            let requirements = cluster_requirements(&declared(public_ips));
            let read = read_of(&requirements, SUBNETWORK_FIELD);
            let off = Reading::Subnetwork {
                network: NetworkName::parse("projects/my-proj/global/networks/default").unwrap(),
                region: "us-central1".to_owned(),
                private_ip_google_access: false,
            };
            let found = findings(&requirements, &readings(&requirements, &[(read, off)]));
            assert_eq!(found.len(), 1, "{found:?}");
            assert!(
                matches!(&found[0].problem, Problem::PrivateAccessOff { pools, .. } if pools == &["gpu"])
            );
        }
    }

    #[test]
    fn a_subnetwork_elsewhere_or_missing_is_an_error() {
        let requirements = cluster_requirements(&declared(Some(true)));
        let read = read_of(&requirements, SUBNETWORK_FIELD);
        let elsewhere = Reading::Subnetwork {
            network: NetworkName::parse("projects/my-proj/global/networks/other").unwrap(),
            region: "europe-west4".to_owned(),
            private_ip_google_access: true,
        };
        let found = findings(
            &requirements,
            &readings(&requirements, &[(read.clone(), elsewhere)]),
        );
        assert!(matches!(
            found[0].problem,
            Problem::SubnetworkInOtherRegion { .. }
        ));
        assert!(matches!(
            found[1].problem,
            Problem::SubnetworkOnOtherNetwork { .. }
        ));
        let found = findings(
            &requirements,
            &readings(&requirements, &[(read, Reading::Missing)]),
        );
        assert!(matches!(found[0].problem, Problem::SubnetworkMissing(_)));
        assert_eq!(found[0].field, SUBNETWORK_FIELD);
    }

    #[test]
    fn the_home_filestore_must_exist_be_ready_and_be_on_the_network() {
        let requirements = cluster_requirements(&declared(Some(true)));
        let read = read_of(&requirements, HOME_FIELD);
        let read = match read {
            PreflightRead::Filestore(_) => read,
            // The Filestore service check comes first at that field.
            _ => requirements
                .iter()
                .find(|r| matches!(r.read, PreflightRead::Filestore(_)))
                .unwrap()
                .read
                .clone(),
        };
        let found = findings(
            &requirements,
            &readings(&requirements, &[(read.clone(), Reading::Missing)]),
        );
        assert!(matches!(found[0].problem, Problem::FilestoreMissing(_)));
        assert_eq!(
            found[0].certainty(),
            Certainty::Warning,
            "it may be a Lustre home directory"
        );
        let creating = Reading::Filestore {
            state: "CREATING".to_owned(),
            networks: vec!["projects/my-proj/global/networks/other".to_owned()],
        };
        let found = findings(&requirements, &readings(&requirements, &[(read, creating)]));
        assert!(matches!(
            found[0].problem,
            Problem::FilestoreNotReady { .. }
        ));
        assert!(matches!(
            found[1].problem,
            Problem::FilestoreOnOtherNetwork { .. }
        ));
    }

    #[test]
    fn a_home_directory_the_pools_mount_as_lustre_is_not_read_as_filestore() {
        let mut declared = declared(Some(true));
        let home = "projects/my-proj/locations/us-central1-a/instances/home".to_owned();
        declared.cluster.node_pools.as_mut().unwrap()[1].lustres = Some(vec![home]);
        let requirements = cluster_requirements(&declared);
        assert!(
            !requirements
                .iter()
                .any(|r| matches!(r.read, PreflightRead::Filestore(_)))
        );
        assert!(!requirements.iter().any(|r| matches!(
            r.read,
            PreflightRead::Service {
                service: Service::Filestore,
                ..
            }
        )));
    }

    #[test]
    fn reads_that_could_not_be_made_are_one_warning_per_api_and_reason() {
        let requirements = [
            cluster_requirements(&declared(Some(true))),
            cluster_requirements(&declared(Some(true))),
        ]
        .concat();
        let forbidden = || Reading::Unchecked("HTTP 403".to_owned());
        let network = read_of(&requirements, NETWORK_FIELD);
        let subnetwork = read_of(&requirements, SUBNETWORK_FIELD);
        let changed = [(network, forbidden()), (subnetwork, forbidden())];
        let found = findings(&requirements, &readings(&requirements, &changed));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].certainty(), Certainty::Warning);
        let Problem::NotChecked { api, reads, .. } = &found[0].problem else {
            panic!("{found:?}");
        };
        assert_eq!((*api, reads.len()), (PreflightApi::Compute, 2));
    }

    #[test]
    fn an_added_pool_is_named_by_its_whole_path() {
        assert_eq!(added_pool("node_pools[gpu]"), Some("gpu"));
        assert_eq!(added_pool("node_pools[gpu].zone"), None);
        assert_eq!(added_pool("labels.team"), None);
    }

    #[test]
    fn an_added_private_pool_needs_only_private_google_access() {
        let declared = declared(Some(false));
        let requirement = added_pool_requirements(&declared, &["gpu"]).unwrap();
        let readings = BTreeMap::from([(requirement.read.clone(), Reading::Missing)]);
        assert_eq!(findings(std::slice::from_ref(&requirement), &readings), []);
        assert!(added_pool_requirements(&declared, &["login"]).is_none());
    }
}
