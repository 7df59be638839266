//! What the readings mean for each requirement: the findings.

use std::collections::BTreeMap;

use clusterform_model::ClusterName;
use clusterform_model::preflight::{
    ClusterPermission, InstanceName, NetworkName, PreflightApi, PreflightRead, Quota, Reading,
    ReservationName, ReservationReading, SubnetworkName,
};

use super::requirements::{Check, GpuDemand, Placement, Requirement, ReservedPool};
use super::{Finding, Problem, StorageKind};

/// What the readings mean for each requirement, in the requirements' order (GPU quotas last,
/// each metric of a region once for the whole plan; a `fallback` alternative's alone, in its
/// order, wrapped as [`Problem::InAlternative`] like every finding about an alternative). Reads that could not be made are one
/// warning per API and reason, at the first cluster that needed one: an API that cannot be
/// reached is told once, not once per read. A read without a reading is taken as not made.
pub fn findings(
    requirements: &[Requirement],
    readings: &BTreeMap<PreflightRead, Reading>,
) -> Vec<Finding> {
    let mut found = Vec::new();
    // (API, reason) → the index of its finding in `found`.
    let mut unchecked: BTreeMap<(PreflightApi, String), usize> = BTreeMap::new();
    let mut quotas = QuotaTally::default();
    for requirement in requirements {
        if moot(requirement, readings) {
            continue;
        }
        let reason = match readings.get(&requirement.read) {
            Some(Reading::Unchecked(reason)) => reason.clone(),
            None => "it was not read".to_owned(),
            Some(Reading::Quotas(listed))
                if matches!(requirement.check, Check::Quota(_))
                    && requirement.alternative.is_none() =>
            {
                quotas.add(requirement, listed);
                continue;
            }
            Some(reading) => {
                let problems = problems(requirement, reading, readings);
                found.extend(problems.into_iter().map(|problem| Finding {
                    cluster: requirement.cluster.clone(),
                    field: requirement.field.clone(),
                    problem: in_alternative(requirement, problem),
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
                    field: requirement.field.clone(),
                    problem: Problem::NotChecked {
                        api,
                        reads: vec![requirement.read.clone()],
                        reason,
                    },
                });
            }
        }
    }
    found.extend(quotas.findings());
    found
}

/// `problem` as found for the requirement's alternative, if it checks one. A reading that is
/// not what the read gives is about the read, whoever needed it.
fn in_alternative(requirement: &Requirement, problem: Problem) -> Problem {
    match &requirement.alternative {
        Some(alternative) if !matches!(problem, Problem::NotChecked { .. }) => {
            Problem::InAlternative {
                alternative: alternative.clone(),
                problem: Box::new(problem),
            }
        }
        _ => problem,
    }
}

/// Whether another reading settles what `requirement` would check: a home directory found as
/// one kind of instance is not looked for as the other.
fn moot(requirement: &Requirement, readings: &BTreeMap<PreflightRead, Reading>) -> bool {
    let is_lustre = |read| matches!(readings.get(read), Some(Reading::Lustre { .. }));
    let is_filestore = |read| matches!(readings.get(read), Some(Reading::Filestore { .. }));
    match (&requirement.check, &requirement.read) {
        (Check::HomeService { lustre }, _) => is_lustre(lustre),
        (Check::Home { other, .. }, PreflightRead::Filestore(_)) => {
            is_lustre(other) && !is_filestore(&requirement.read)
        }
        // Found as Filestore, it is Filestore's; missing from Filestore, Filestore's finding
        // says what Lustre's reading means unless Lustre found it.
        (Check::Home { other, .. }, PreflightRead::Lustre(_)) => {
            is_filestore(other)
                || (matches!(readings.get(other), Some(Reading::Missing))
                    && !is_lustre(&requirement.read))
        }
        _ => false,
    }
}

/// What `reading` means for `requirement`.
fn problems(
    requirement: &Requirement,
    reading: &Reading,
    readings: &BTreeMap<PreflightRead, Reading>,
) -> Vec<Problem> {
    let unexpected = || Problem::NotChecked {
        api: requirement.read.api(),
        reads: vec![requirement.read.clone()],
        reason: "the answer is not what this read gives".to_owned(),
    };
    let found = match (&requirement.check, &requirement.read) {
        (Check::ServiceEnabled(service), PreflightRead::Service { project, .. })
        | (Check::HomeService { .. }, PreflightRead::Service { project, service }) => {
            match reading {
                Reading::Service { enabled: true } => Some(Vec::new()),
                // Service Usage answers DISABLED for a service never enabled; a 404 is the same.
                Reading::Service { enabled: false } | Reading::Missing => {
                    Some(vec![Problem::ServiceDisabled {
                        project: project.clone(),
                        service: *service,
                    }])
                }
                _ => None,
            }
        }
        (Check::NetworkExists, PreflightRead::Network(network)) => match reading {
            Reading::Network => Some(Vec::new()),
            Reading::Missing => Some(vec![Problem::NetworkMissing(network.clone())]),
            _ => None,
        },
        (check @ Check::Subnetwork { .. }, PreflightRead::Subnetwork(name)) => {
            subnetwork_problems(check, name, reading)
        }
        (Check::Home { placement, other }, PreflightRead::Filestore(instance)) => match reading {
            Reading::Missing => Some(vec![match readings.get(other) {
                Some(Reading::Missing) => Problem::HomeMissing(instance.clone()),
                _ => Problem::FilestoreMissing(instance.clone()),
            }]),
            Reading::Filestore { state, networks } => {
                Some(filestore_problems(instance, state, networks, placement))
            }
            _ => None,
        },
        (Check::Home { placement, .. }, PreflightRead::Lustre(instance)) => match reading {
            // Filestore's reading says what is missing.
            Reading::Missing => Some(Vec::new()),
            Reading::Lustre { state, network } => Some(lustre_problems(
                instance,
                state,
                network.as_deref(),
                placement,
            )),
            _ => None,
        },
        (Check::Lustre(placement), PreflightRead::Lustre(instance)) => match reading {
            Reading::Missing => Some(vec![Problem::LustreMissing(instance.clone())]),
            Reading::Lustre { state, network } => Some(lustre_problems(
                instance,
                state,
                network.as_deref(),
                placement,
            )),
            _ => None,
        },
        (Check::BucketExists, PreflightRead::Bucket(bucket)) => match reading {
            Reading::Exists => Some(Vec::new()),
            Reading::Missing => Some(vec![Problem::BucketMissing(bucket.clone())]),
            _ => None,
        },
        (Check::Reservation(reserved), PreflightRead::Reservation(reservation)) => match reading {
            Reading::Missing => Some(vec![Problem::ReservationMissing {
                reservation: reservation.clone(),
                pool: reserved.pool.clone(),
            }]),
            Reading::Reservation(offered) => {
                Some(reservation_problems(reservation, offered, reserved))
            }
            _ => None,
        },
        (Check::Permissions(needed), PreflightRead::ProjectPermissions { project }) => {
            match reading {
                Reading::Permissions { granted } => {
                    let missing: Vec<ClusterPermission> = needed
                        .iter()
                        .copied()
                        .filter(|permission| !granted.iter().any(|g| g == permission.name()))
                        .collect();
                    Some(if missing.is_empty() {
                        Vec::new()
                    } else {
                        vec![Problem::PermissionsMissing {
                            project: project.clone(),
                            missing,
                        }]
                    })
                }
                _ => None,
            }
        }
        // Only an alternative's demand gets here: the declared pools' is summed over the plan.
        (Check::Quota(demands), PreflightRead::RegionQuotas { project, region }) => match reading {
            Reading::Quotas(listed) => Some(
                demands
                    .iter()
                    .filter_map(|demand| quota_problem(project, region, demand, listed))
                    .collect(),
            ),
            _ => None,
        },
        (Check::ServiceAccountExists, PreflightRead::ServiceAccount(email)) => match reading {
            Reading::Exists => Some(Vec::new()),
            Reading::Missing => Some(vec![Problem::ServiceAccountMissing(email.clone())]),
            _ => None,
        },
        (Check::ActAs, PreflightRead::ActAs(email)) => match reading {
            Reading::Permissions { granted } => Some(
                if granted
                    .iter()
                    .any(|g| g == clusterform_model::preflight::ACT_AS)
                {
                    Vec::new()
                } else {
                    vec![Problem::ActAsMissing(email.clone())]
                },
            ),
            // A missing account is the account's finding.
            Reading::Missing => Some(Vec::new()),
            _ => None,
        },
        _ => None,
    };
    found.unwrap_or_else(|| vec![unexpected()])
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

/// What a Filestore instance's reading means for a home directory placed as `placement`.
fn filestore_problems(
    instance: &InstanceName,
    state: &str,
    networks: &[String],
    placement: &Placement,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    if state != "READY" {
        problems.push(Problem::FilestoreNotReady {
            instance: instance.clone(),
            state: state.to_owned(),
        });
    }
    if let Some(network) = &placement.network
        && !networks.iter().any(|on| same_network(on, network))
    {
        problems.push(Problem::FilestoreOnOtherNetwork {
            instance: instance.clone(),
            networks: networks.to_vec(),
            cluster_network: network.clone(),
        });
    }
    problems.extend(zone_problem(StorageKind::Filestore, instance, placement));
    problems
}

/// What a Managed Lustre instance's reading means for a cluster placed as `placement`.
fn lustre_problems(
    instance: &InstanceName,
    state: &str,
    network: Option<&str>,
    placement: &Placement,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    if state != "ACTIVE" {
        problems.push(Problem::LustreNotActive {
            instance: instance.clone(),
            state: state.to_owned(),
        });
    }
    if let Some(cluster_network) = &placement.network
        && !network.is_some_and(|on| same_network(on, cluster_network))
    {
        problems.push(Problem::LustreOnOtherNetwork {
            instance: instance.clone(),
            network: network.map(str::to_owned),
            cluster_network: cluster_network.clone(),
        });
    }
    problems.extend(zone_problem(StorageKind::Lustre, instance, placement));
    problems
}

/// The instance's zone (its name's) when no pool is there. No public page says that the
/// instance must be in a pool's zone (docs/preflight.md), so this is a warning.
fn zone_problem(
    kind: StorageKind,
    instance: &InstanceName,
    placement: &Placement,
) -> Option<Problem> {
    let elsewhere = !placement.pool_zones.is_empty()
        && !placement
            .pool_zones
            .iter()
            .any(|zone| zone == instance.zone());
    elsewhere.then(|| Problem::StorageInOtherZone {
        kind,
        instance: instance.clone(),
        pool_zones: placement.pool_zones.clone(),
    })
}

/// What a reservation's reading means for the pool on it.
fn reservation_problems(
    reservation: &ReservationName,
    offered: &ReservationReading,
    reserved: &ReservedPool,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    if let Some(pool_zone) = &reserved.zone
        && *pool_zone != offered.zone
    {
        problems.push(Problem::ReservationInOtherZone {
            reservation: reservation.clone(),
            zone: offered.zone.clone(),
            pool: reserved.pool.clone(),
            pool_zone: pool_zone.clone(),
        });
    }
    if let (Some(machine_type), Some(pool_machine_type)) =
        (&offered.machine_type, &reserved.machine_type)
        && machine_type != pool_machine_type
    {
        problems.push(Problem::ReservationForOtherMachine {
            reservation: reservation.clone(),
            machine_type: machine_type.clone(),
            pool: reserved.pool.clone(),
            pool_machine_type: pool_machine_type.clone(),
        });
    }
    if offered.free() < reserved.min_node_count {
        problems.push(Problem::ReservationTooSmall {
            reservation: reservation.clone(),
            pool: reserved.pool.clone(),
            count: offered.count,
            in_use: offered.in_use,
            min_node_count: reserved.min_node_count,
        });
    }
    problems
}

/// Whether Filestore's or Lustre's spelling of a network (a bare name in the instance's
/// project, or a full resource name for a Shared VPC) is `network`.
fn same_network(spelled: &str, network: &NetworkName) -> bool {
    match NetworkName::parse(spelled) {
        Some(full) => full == *network,
        None => spelled == network.network(),
    }
}

/// What one pool's `demand` alone would find of the region's `listed` quotas: more than is
/// free, or no such quota.
fn quota_problem(
    project: &str,
    region: &str,
    demand: &GpuDemand,
    listed: &[Quota],
) -> Option<Problem> {
    match listed.iter().find(|quota| quota.metric == demand.metric) {
        None => Some(Problem::QuotaUnlisted {
            project: project.to_owned(),
            region: region.to_owned(),
            metric: demand.metric.clone(),
            adds: demand.adds,
        }),
        Some(quota) if demand.adds > quota.limit.saturating_sub(quota.usage) => {
            Some(Problem::QuotaShort {
                project: project.to_owned(),
                region: region.to_owned(),
                metric: demand.metric.clone(),
                limit: quota.limit,
                usage: quota.usage,
                adds: demand.adds,
                clusters: 1,
            })
        }
        Some(_) => None,
    }
}

/// The GPUs a plan's clusters add to each quota of a region, summed over the plan.
#[derive(Default)]
struct QuotaTally {
    /// (the region's read, metric) → the first cluster and field, what is added, by how many
    /// clusters, and the quota as the region lists it.
    metrics: BTreeMap<(PreflightRead, String), Tallied>,
}

struct Tallied {
    cluster: ClusterName,
    field: String,
    adds: u64,
    clusters: usize,
    quota: Option<Quota>,
}

impl QuotaTally {
    fn add(&mut self, requirement: &Requirement, listed: &[Quota]) {
        let Check::Quota(demands) = &requirement.check else {
            return;
        };
        for GpuDemand { metric, adds } in demands {
            let key = (requirement.read.clone(), metric.clone());
            let tallied = self.metrics.entry(key).or_insert_with(|| Tallied {
                cluster: requirement.cluster.clone(),
                field: requirement.field.clone(),
                adds: 0,
                clusters: 0,
                quota: listed.iter().find(|quota| quota.metric == *metric).cloned(),
            });
            tallied.adds = tallied.adds.saturating_add(*adds);
            tallied.clusters += 1;
        }
    }

    /// A warning for each metric the plan adds more of than is free, or that is not listed.
    fn findings(self) -> Vec<Finding> {
        self.metrics
            .into_iter()
            .filter_map(|((read, metric), tallied)| {
                let PreflightRead::RegionQuotas { project, region } = read else {
                    return None;
                };
                let demand = GpuDemand {
                    metric,
                    adds: tallied.adds,
                };
                let mut problem =
                    quota_problem(&project, &region, &demand, tallied.quota.as_slice())?;
                if let Problem::QuotaShort { clusters, .. } = &mut problem {
                    *clusters = tallied.clusters;
                }
                Some(Finding {
                    cluster: tallied.cluster,
                    field: tallied.field,
                    problem,
                })
            })
            .collect()
    }
}
