//! Which documented reads a plan needs, and what each is read for, per cluster.

use std::collections::{BTreeMap, BTreeSet};

use clusterform_config::{Config, DesiredCluster};
use clusterform_model::fields::ImpactClass;
use clusterform_model::preflight::{
    BucketName, ClusterPermission, InstanceName, NetworkName, PreflightRead, ReservationName,
    Service, ServiceAccountEmail, SubnetworkName,
};
use clusterform_model::{Action, Attempt, Cluster, ClusterName, NodePool, ProvisioningModel};

use super::{
    Alternative, EXPORT_BUCKET_FIELD, EXPORT_LUSTRES_FIELD, HOME_FIELD, NETWORK_FIELD,
    SERVICE_ACCOUNT_FIELD, SUBNETWORK_FIELD,
};
use crate::fallbacks::FallbackChain;
use crate::plan::{FieldChange, Plan};

/// What one read is checked for, for one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Check {
    /// The service is enabled.
    ServiceEnabled(Service),
    /// Filestore is enabled, for a home directory that is a Filestore instance unless `lustre`
    /// finds it.
    HomeService { lustre: PreflightRead },
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
    /// The home directory, a Filestore or a Managed Lustre instance of the same name: this read
    /// is one of the two, `other` the other.
    Home {
        placement: Placement,
        other: PreflightRead,
    },
    /// A Managed Lustre instance the pools or the export name.
    Lustre(Placement),
    /// The bucket exists.
    BucketExists,
    /// The reservation suits `pool`.
    Reservation(ReservedPool),
    /// The caller has `needed` on the project.
    Permissions(Vec<ClusterPermission>),
    /// The service account exists.
    ServiceAccountExists,
    /// The caller may act as the service account.
    ActAs,
    /// What the cluster's GPU pools would take of the region's quotas (for an alternative:
    /// what it alone would take).
    Quota(Vec<GpuDemand>),
}

/// Where an instance must be for the cluster: on its network, beside its pools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Placement {
    pub(super) network: Option<NetworkName>,
    pub(super) pool_zones: Vec<String>,
}

/// A pool on a specific reservation, as the reservation must suit it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ReservedPool {
    pub(super) pool: String,
    pub(super) zone: Option<String>,
    pub(super) machine_type: Option<String>,
    pub(super) min_node_count: u64,
}

/// GPUs a cluster's pools would take of one quota metric at their `max_node_count`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct GpuDemand {
    pub(super) metric: String,
    pub(super) adds: u64,
}

/// One read one cluster needs, and what for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The cluster.
    pub cluster: ClusterName,
    /// The read.
    pub read: PreflightRead,
    /// The configuration field a finding points at (`""`: the cluster block).
    pub(super) field: String,
    pub(super) check: Check,
    /// The `fallback` alternative it checks; `None`: the pools as declared.
    pub(super) alternative: Option<Alternative>,
}

/// The reads `plan` needs: for every cluster it creates or replaces, all of its checks; for
/// an update, the caller's permission to update, and for the pools it adds without public
/// IPs, the subnetwork's Private Google Access. None for a plan that changes nothing.
pub fn plan_requirements(config: &Config, plan: &Plan) -> Vec<Requirement> {
    let mut requirements = Vec::new();
    let changing = plan.changes.iter().filter(|change| {
        matches!(
            change.action,
            Action::Create | Action::Replace | Action::Update
        )
    });
    // Looked up by address once: a fleet's plan must not search the configuration per change.
    let mut declared_at: Option<BTreeMap<&ClusterName, &DesiredCluster>> = None;
    for change in changing {
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
            Action::Create => requirements.extend(cluster_requirements(declared)),
            Action::Replace => {
                let mut replacing = creation_requirements(declared);
                replacing.push(permissions(
                    declared,
                    vec![
                        ClusterPermission::Create,
                        ClusterPermission::Delete,
                        ClusterPermission::Get,
                        ClusterPermission::List,
                    ],
                ));
                requirements.extend(replacing);
            }
            Action::Update => {
                let added = added_pools(&change.fields);
                requirements.extend(added_pool_requirements(declared, &added));
                let chain = FallbackChain::of_added_pools(declared, &added);
                requirements.extend(alternative_requirements(declared, &chain));
                requirements.push(permissions(declared, vec![ClusterPermission::Update]));
            }
            _ => {}
        }
    }
    requirements
}

/// The reads a declared cluster needs if it is created: for starting them before the plan
/// knows (beside the Lists) when it is likely to be.
pub fn cluster_requirements(declared: &DesiredCluster) -> Vec<Requirement> {
    let mut requirements = creation_requirements(declared);
    requirements.push(permissions(
        declared,
        vec![
            ClusterPermission::Create,
            ClusterPermission::Get,
            ClusterPermission::List,
        ],
    ));
    requirements
}

/// The permissions read of `declared`'s project, for `needed`.
fn permissions(declared: &DesiredCluster, needed: Vec<ClusterPermission>) -> Requirement {
    Requirement {
        cluster: declared.name.clone(),
        read: PreflightRead::ProjectPermissions {
            project: declared.name.project().to_owned(),
        },
        field: String::new(),
        check: Check::Permissions(needed),
        alternative: None,
    }
}

/// Every read a created cluster needs but the permissions on its project.
fn creation_requirements(declared: &DesiredCluster) -> Vec<Requirement> {
    let name = &declared.name;
    let cluster = &declared.cluster;
    let mut requirements = Vec::new();
    let mut require = |read, field: &str, check| {
        requirements.push(Requirement {
            cluster: name.clone(),
            read,
            field: field.to_owned(),
            check,
            alternative: None,
        });
    };
    let network = cluster_network(cluster);
    let placement = Placement {
        network: network.clone(),
        pool_zones: pool_zones(cluster),
    };
    let lustres = named_lustres(cluster);
    let home = home_instance(cluster);
    let home_is_lustre = home
        .as_ref()
        .is_some_and(|home| lustres.iter().any(|(lustre, _)| lustre == home));
    let services = Service::ALWAYS
        .into_iter()
        .chain((!lustres.is_empty()).then_some(Service::Lustre))
        .chain(export_bucket(cluster).is_some().then_some(Service::Storage));
    for service in services {
        let field = if service == Service::Storage {
            EXPORT_BUCKET_FIELD
        } else {
            ""
        };
        require(
            service_read(name, service),
            field,
            Check::ServiceEnabled(service),
        );
    }
    if let Some(network) = &network {
        require(
            PreflightRead::Network(network.clone()),
            NETWORK_FIELD,
            Check::NetworkExists,
        );
    }
    if let Some(subnetwork) = cluster_subnetwork(cluster) {
        let check = Check::Subnetwork {
            region: name.region().to_owned(),
            network,
            private_pools: private_pools(cluster.node_pools.iter().flatten()),
            pools_only: false,
        };
        require(
            PreflightRead::Subnetwork(subnetwork),
            SUBNETWORK_FIELD,
            check,
        );
    }
    if let Some(home) = home.filter(|_| !home_is_lustre) {
        let filestore = PreflightRead::Filestore(home.clone());
        let lustre = PreflightRead::Lustre(home);
        require(
            service_read(name, Service::Filestore),
            HOME_FIELD,
            Check::HomeService {
                lustre: lustre.clone(),
            },
        );
        for (read, other) in [(filestore.clone(), lustre.clone()), (lustre, filestore)] {
            let placement = placement.clone();
            require(read, HOME_FIELD, Check::Home { placement, other });
        }
    }
    for (instance, field) in lustres {
        let check = Check::Lustre(placement.clone());
        require(PreflightRead::Lustre(instance), &field, check);
    }
    if let Some(bucket) = export_bucket(cluster) {
        require(
            PreflightRead::Bucket(bucket),
            EXPORT_BUCKET_FIELD,
            Check::BucketExists,
        );
    }
    for (reservation, reserved) in reserved_pools(cluster.node_pools.iter().flatten()) {
        let field = format!(
            "node_pools[{}].machine_spec.reservation_affinity",
            reserved.pool
        );
        require(
            PreflightRead::Reservation(reservation),
            &field,
            Check::Reservation(reserved),
        );
    }
    if let Some(email) = service_account(cluster) {
        require(
            PreflightRead::ServiceAccount(email.clone()),
            SERVICE_ACCOUNT_FIELD,
            Check::ServiceAccountExists,
        );
        require(
            PreflightRead::ActAs(email),
            SERVICE_ACCOUNT_FIELD,
            Check::ActAs,
        );
    }
    let demands = gpu_demands(cluster.node_pools.iter().flatten());
    if let Some((_, field)) = demands.first() {
        let field = field.clone();
        let read = PreflightRead::RegionQuotas {
            project: name.project().to_owned(),
            region: name.region().to_owned(),
        };
        let demands = demands.into_iter().map(|(demand, _)| demand).collect();
        require(read, &field, Check::Quota(demands));
    }
    requirements.extend(alternative_requirements(
        declared,
        &FallbackChain::of_create(declared),
    ));
    requirements
}

/// The reservation and GPU quota reads of each alternative `chain` tries, with what the
/// alternative must find there, at its `fallback` block: an alternative that cannot work is
/// told before the apply, not after its primary failed. What an alternative shares with its
/// pool as declared (the same reservation for the same pool, the same GPU demand) is the
/// declared pool's check alone, so nothing is told twice.
fn alternative_requirements(
    declared: &DesiredCluster,
    chain: &FallbackChain<'_>,
) -> Vec<Requirement> {
    let cluster = &declared.cluster;
    let mut requirements = Vec::new();
    for position in 1..chain.attempts() {
        let attempted = chain.attempt(cluster, position);
        for id in chain.fallbacks_at(position) {
            let (Some(primary), Some(pool)) = (cluster.node_pool(id), attempted.node_pool(id))
            else {
                continue;
            };
            let alternative = Alternative {
                pool: id.to_owned(),
                attempt: Attempt::at(position),
            };
            let field = format!("node_pools[{id}].fallback[{position}]");
            let require = |read, check| Requirement {
                cluster: declared.name.clone(),
                read,
                field: field.clone(),
                check,
                alternative: Some(alternative.clone()),
            };
            for (reservation, reserved) in alternative_reservations(primary, pool) {
                let read = PreflightRead::Reservation(reservation);
                requirements.push(require(read, Check::Reservation(reserved)));
            }
            if let Some(demands) = alternative_demands(primary, pool) {
                let read = PreflightRead::RegionQuotas {
                    project: declared.name.project().to_owned(),
                    region: declared.name.region().to_owned(),
                };
                requirements.push(require(read, Check::Quota(demands)));
            }
        }
    }
    requirements
}

/// The reservations `alternative` names, with what each must suit, but those its pool as
/// `declared` names for the same machines (the declared pool's check tells them).
fn alternative_reservations(
    declared: &NodePool,
    alternative: &NodePool,
) -> Vec<(ReservationName, ReservedPool)> {
    let own = reserved_pools([declared]);
    reserved_pools([alternative])
        .into_iter()
        .filter(|reserved| !own.contains(reserved))
        .collect()
}

/// What `alternative` alone takes of the GPU quotas; `None` when it takes none, or what its
/// pool as `declared` takes (the plan's sum counts that).
fn alternative_demands(declared: &NodePool, alternative: &NodePool) -> Option<Vec<GpuDemand>> {
    let demands = |pool| -> Vec<GpuDemand> {
        gpu_demands([pool])
            .into_iter()
            .map(|(demand, _)| demand)
            .collect()
    };
    let taken = demands(alternative);
    (!taken.is_empty() && taken != demands(declared)).then_some(taken)
}

fn service_read(name: &ClusterName, service: Service) -> PreflightRead {
    PreflightRead::Service {
        project: name.project().to_owned(),
        service,
    }
}

/// The subnetwork check of an update that adds `added` pools, when one has no public IPs.
pub(super) fn added_pool_requirements(
    declared: &DesiredCluster,
    added: &[&str],
) -> Option<Requirement> {
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
        field: SUBNETWORK_FIELD.to_owned(),
        check: Check::Subnetwork {
            region: declared.name.region().to_owned(),
            network: cluster_network(cluster),
            private_pools: private,
            pools_only: true,
        },
        alternative: None,
    })
}

/// The IDs of the pools an update's `fields` add whole (each of their leaves is a change of
/// impact [`ImpactClass::AddsPool`]), each once.
pub(super) fn added_pools(fields: &[FieldChange]) -> Vec<&str> {
    let mut added: Vec<&str> = Vec::new();
    for field in fields {
        if field.impact.class == ImpactClass::AddsPool
            && let Some(pool) = field.impact.pool.as_deref()
            && !added.contains(&pool)
        {
            added.push(pool);
        }
    }
    added
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

/// The distinct zones of the cluster's pools, in their order.
fn pool_zones(cluster: &Cluster) -> Vec<String> {
    let mut zones: Vec<String> = Vec::new();
    for zone in cluster
        .node_pools
        .iter()
        .flatten()
        .filter_map(|p| p.zone.as_ref())
    {
        if !zones.contains(zone) {
            zones.push(zone.clone());
        }
    }
    zones
}

/// The home directory's instance: a Filestore or a Managed Lustre instance, named alike.
fn home_instance(cluster: &Cluster) -> Option<InstanceName> {
    let slurm = cluster.orchestrator_spec.as_ref()?.slurm_spec.as_ref()?;
    InstanceName::parse(slurm.home_directory_storage.as_deref()?)
}

/// The Managed Lustre instances the pools and the export name, each once, with the field that
/// names it first.
fn named_lustres(cluster: &Cluster) -> Vec<(InstanceName, String)> {
    let pools = cluster.node_pools.iter().flatten().flat_map(|pool| {
        let field = format!("node_pools[{}].lustres", pool.id);
        pool.lustres
            .iter()
            .flatten()
            .map(move |lustre| (lustre, field.clone()))
    });
    let exported = cluster
        .lustre_export_config
        .iter()
        .flat_map(|export| export.lustres.iter().flatten())
        .map(|lustre| (lustre, EXPORT_LUSTRES_FIELD.to_owned()));
    let mut named: Vec<(InstanceName, String)> = Vec::new();
    for (lustre, field) in pools.chain(exported) {
        if let Some(instance) = InstanceName::parse(lustre)
            && !named.iter().any(|(known, _)| *known == instance)
        {
            named.push((instance, field));
        }
    }
    named
}

fn export_bucket(cluster: &Cluster) -> Option<BucketName> {
    BucketName::parse(
        cluster
            .lustre_export_config
            .as_ref()?
            .destination_bucket
            .as_deref()?,
    )
}

fn service_account(cluster: &Cluster) -> Option<ServiceAccountEmail> {
    ServiceAccountEmail::parse(cluster.runtime_spec.as_ref()?.service_account.as_deref()?)
}

/// Each reservation one of `pools` names with `SPECIFIC_RESERVATION`, with what it must suit.
fn reserved_pools<'p>(
    pools: impl IntoIterator<Item = &'p NodePool>,
) -> Vec<(ReservationName, ReservedPool)> {
    let mut reserved = Vec::new();
    for pool in pools {
        let Some(machine) = &pool.machine_spec else {
            continue;
        };
        let Some(affinity) = machine.reservation_affinity.as_ref().filter(|affinity| {
            affinity.reservation_affinity_type.as_deref() == Some("SPECIFIC_RESERVATION")
        }) else {
            continue;
        };
        let min_node_count = pool
            .scaling_spec
            .as_ref()
            .and_then(|scaling| scaling.min_node_count)
            .and_then(|count| u64::try_from(count).ok())
            .unwrap_or(0);
        for value in affinity.values.iter().flatten() {
            if let Some(reservation) = ReservationName::parse(value) {
                reserved.push((
                    reservation,
                    ReservedPool {
                        pool: pool.id.clone(),
                        zone: pool.zone.clone(),
                        machine_type: machine.machine_type.clone(),
                        min_node_count,
                    },
                ));
            }
        }
    }
    reserved
}

/// What GPU `pools` take of each quota metric at `max_node_count`, with the field of the
/// first pool that takes it. Pools on a reservation (which holds its own quota) and
/// `FLEX_START` pools (whose quota is not documented either way) take none here.
fn gpu_demands<'p>(pools: impl IntoIterator<Item = &'p NodePool>) -> Vec<(GpuDemand, String)> {
    let mut demands: Vec<(GpuDemand, String)> = Vec::new();
    for pool in pools {
        let spot = match &pool.provisioning_model {
            None | Some(ProvisioningModel::OnDemand) => false,
            Some(ProvisioningModel::Spot) => true,
            Some(_) => continue,
        };
        let Some((accelerator, per_machine)) =
            pool.machine_spec.as_ref().and_then(|m| m.accelerators())
        else {
            continue;
        };
        let machines = pool
            .scaling_spec
            .as_ref()
            .and_then(|scaling| scaling.max_node_count.or(scaling.min_node_count))
            .and_then(|count| u64::try_from(count).ok())
            .unwrap_or(0);
        let metric = quota_metric(accelerator, spot);
        let adds = machines.saturating_mul(per_machine);
        match demands
            .iter_mut()
            .find(|(demand, _)| demand.metric == metric)
        {
            Some((demand, _)) => demand.adds = demand.adds.saturating_add(adds),
            None => demands.push((
                GpuDemand { metric, adds },
                format!("node_pools[{}].machine_spec", pool.id),
            )),
        }
    }
    demands
}

/// The Compute Engine quota metric an accelerator type is inferred to count against: the type
/// without its memory size, with `_GPUS` (`NVIDIA_H100_MEGA_80GB` → `NVIDIA_H100_MEGA_GPUS`),
/// and `PREEMPTIBLE_` before it for Spot.
pub(super) fn quota_metric(accelerator: &str, spot: bool) -> String {
    let family = match accelerator.rsplit_once('_') {
        Some((head, size))
            if size.len() > 2
                && size.ends_with("GB")
                && size[..size.len() - 2].chars().all(|c| c.is_ascii_digit()) =>
        {
            head
        }
        _ => accelerator,
    };
    let preemptible = if spot { "PREEMPTIBLE_" } else { "" };
    format!("{preemptible}{family}_GPUS")
}

/// The distinct reads of `requirements`, each once.
pub fn distinct_reads(requirements: &[Requirement]) -> BTreeSet<PreflightRead> {
    requirements.iter().map(|r| r.read.clone()).collect()
}
