//! The decisions of preflight, on readings made up as the APIs answer.
use std::collections::BTreeMap;

use clusterform_config::DesiredCluster;
use clusterform_model::preflight::{
    ACT_AS, ClusterPermission, NetworkName, PreflightApi, PreflightRead, Quota, Reading,
    ReservationReading, Service,
};

use super::requirements::{added_pool_requirements, quota_metric};
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

/// A GPU cluster on a reservation, with a Lustre pool, an export and a service account.
fn gpu_declared() -> DesiredCluster {
    clusterform_testkit::desired(
        "train01",
        serde_json::json!({
            "network": {
                "network": "projects/my-proj/global/networks/default",
                "subnetwork": "projects/my-proj/regions/us-central1/subnetworks/default"
            },
            "nodePools": [
                {"id": "login", "enablePublicIps": true, "zone": "us-central1-a"},
                {
                    "id": "gpu",
                    "zone": "us-central1-a",
                    "lustres": ["projects/my-proj/locations/us-central1-a/instances/scratch"],
                    "machineSpec": {
                        "machineType": "a3-megagpu-8g",
                        "reservationAffinity": {
                            "reservationAffinityType": "SPECIFIC_RESERVATION",
                            "key": "compute.googleapis.com/reservation-name",
                            "values": ["projects/my-proj/zones/us-central1-a/reservations/h100/reservationBlocks/b1"]
                        }
                    },
                    "provisioningModel": "RESERVATION",
                    "scalingSpec": {"minNodeCount": 4, "maxNodeCount": 4}
                },
                {
                    "id": "spot",
                    "zone": "us-central1-a",
                    "machineSpec": {"machineType": "a3-megagpu-8g"},
                    "provisioningModel": "SPOT",
                    "scalingSpec": {"minNodeCount": 0, "maxNodeCount": 2}
                }
            ],
            "orchestratorSpec": {"slurmSpec": {
                "homeDirectoryStorage": "projects/my-proj/locations/us-central1-a/instances/home"
            }},
            "runtimeSpec": {"serviceAccount": "nodes@my-proj.iam.gserviceaccount.com"},
            "lustreExportConfig": {
                "destinationBucket": "my-proj-export",
                "lustres": ["projects/my-proj/locations/us-central1-a/instances/scratch"]
            }
        }),
    )
}

fn read_of(requirements: &[Requirement], field: &str) -> PreflightRead {
    requirements
        .iter()
        .find(|r| r.field == field)
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
                PreflightRead::Lustre(_) => Reading::Lustre {
                    state: "ACTIVE".to_owned(),
                    network: Some("projects/my-proj/global/networks/default".to_owned()),
                },
                PreflightRead::Bucket(_) | PreflightRead::ServiceAccount(_) => Reading::Exists,
                PreflightRead::Reservation(_) => Reading::Reservation(ReservationReading {
                    zone: "us-central1-a".to_owned(),
                    machine_type: Some("a3-megagpu-8g".to_owned()),
                    count: 8,
                    in_use: 2,
                }),
                PreflightRead::RegionQuotas { .. } => Reading::Quotas(vec![Quota {
                    metric: "PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS".to_owned(),
                    limit: 64,
                    usage: 0,
                }]),
                PreflightRead::ProjectPermissions { .. } => Reading::Permissions {
                    granted: ClusterPermission::ALL
                        .iter()
                        .map(|p| p.name().to_owned())
                        .collect(),
                },
                PreflightRead::ActAs(_) => Reading::Permissions {
                    granted: vec![ACT_AS.to_owned()],
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
            "projects/my-proj/locations/us-central1-a/instances/home",
            "the caller's permissions on projects/my-proj",
        ]
    );
    let twice = [requirements.clone(), requirements].concat();
    assert_eq!(distinct_reads(&twice).len(), 9);
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

/// The home directory's Filestore read and its Lustre read.
fn home_reads(requirements: &[Requirement]) -> (PreflightRead, PreflightRead) {
    let find = |lustre: bool| {
        requirements
            .iter()
            .find(|r| match r.read {
                PreflightRead::Filestore(_) => !lustre,
                PreflightRead::Lustre(_) => lustre,
                _ => false,
            })
            .unwrap()
            .read
            .clone()
    };
    (find(false), find(true))
}

#[test]
fn the_home_filestore_must_exist_be_ready_and_be_on_the_network() {
    let requirements = cluster_requirements(&declared(Some(true)));
    let (filestore, lustre) = home_reads(&requirements);
    let creating = Reading::Filestore {
        state: "CREATING".to_owned(),
        networks: vec!["projects/my-proj/global/networks/other".to_owned()],
    };
    let found = findings(
        &requirements,
        &readings(
            &requirements,
            &[(filestore, creating), (lustre, Reading::Missing)],
        ),
    );
    assert_eq!(found.len(), 2, "{found:?}");
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
fn a_home_directory_found_in_neither_filestore_nor_lustre_is_an_error() {
    let requirements = cluster_requirements(&declared(Some(true)));
    let (filestore, lustre) = home_reads(&requirements);
    let neither = [
        (filestore.clone(), Reading::Missing),
        (lustre.clone(), Reading::Missing),
    ];
    let found = findings(&requirements, &readings(&requirements, &neither));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(matches!(found[0].problem, Problem::HomeMissing(_)));
    assert_eq!(found[0].certainty(), Certainty::Error);

    let as_lustre = [(filestore.clone(), Reading::Missing)];
    let found = findings(&requirements, &readings(&requirements, &as_lustre));
    assert_eq!(found, [], "found as a Managed Lustre instance, it is fine");

    let lustre_unread = [
        (filestore, Reading::Missing),
        (lustre, Reading::Unchecked("HTTP 403".to_owned())),
    ];
    let found = findings(&requirements, &readings(&requirements, &lustre_unread));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(matches!(found[0].problem, Problem::FilestoreMissing(_)));
    assert_eq!(found[0].certainty(), Certainty::Warning);
}

#[test]
fn a_lustre_home_directory_must_be_active_on_the_network_and_need_not_enable_filestore() {
    let requirements = cluster_requirements(&declared(Some(true)));
    let (filestore, lustre) = home_reads(&requirements);
    let file_service = PreflightRead::Service {
        project: "my-proj".to_owned(),
        service: Service::Filestore,
    };
    let changed = [
        (
            filestore,
            Reading::Unchecked("HTTP 403: SERVICE_DISABLED".to_owned()),
        ),
        (file_service, Reading::Service { enabled: false }),
        (
            lustre,
            Reading::Lustre {
                state: "CREATING".to_owned(),
                network: Some("projects/my-proj/global/networks/other".to_owned()),
            },
        ),
    ];
    let found = findings(&requirements, &readings(&requirements, &changed));
    let problems: Vec<&Problem> = found.iter().map(|f| &f.problem).collect();
    assert!(
        matches!(
            problems.as_slice(),
            [
                Problem::LustreNotActive { .. },
                Problem::LustreOnOtherNetwork { .. }
            ]
        ),
        "{found:?}"
    );
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
fn an_added_private_pool_needs_only_private_google_access() {
    let declared = declared(Some(false));
    let requirement = added_pool_requirements(&declared, &["gpu"]).unwrap();
    let readings = BTreeMap::from([(requirement.read.clone(), Reading::Missing)]);
    assert_eq!(findings(std::slice::from_ref(&requirement), &readings), []);
    assert!(added_pool_requirements(&declared, &["login"]).is_none());
}

#[test]
fn a_gpu_cluster_reads_its_lustre_bucket_reservation_account_and_quotas_and_passes_as_seeded() {
    let requirements = cluster_requirements(&gpu_declared());
    let reads: Vec<String> = distinct_reads(&requirements)
        .iter()
        .map(ToString::to_string)
        .collect();
    for expected in [
        "projects/my-proj/services/lustre.googleapis.com",
        "projects/my-proj/services/storage.googleapis.com",
        "projects/my-proj/locations/us-central1-a/instances/scratch",
        "gs://my-proj-export",
        "projects/my-proj/zones/us-central1-a/reservations/h100",
        "the quotas of projects/my-proj/regions/us-central1",
        "the service account nodes@my-proj.iam.gserviceaccount.com",
        "the caller's permission to act as nodes@my-proj.iam.gserviceaccount.com",
    ] {
        assert!(
            reads.iter().any(|read| read == expected),
            "{expected}: {reads:?}"
        );
    }
    assert_eq!(
        findings(&requirements, &readings(&requirements, &[])),
        [],
        "the pool on the reservation takes no quota; the spot pool's 16 GPUs fit in 64"
    );
}

/// The findings of `gpu_declared` with one reading changed.
fn gpu_findings(pick: impl Fn(&PreflightRead) -> bool, reading: Reading) -> Vec<Finding> {
    let requirements = cluster_requirements(&gpu_declared());
    let read = distinct_reads(&requirements)
        .into_iter()
        .find(|read| pick(read))
        .unwrap();
    findings(&requirements, &readings(&requirements, &[(read, reading)]))
}

#[test]
fn a_missing_or_inactive_lustre_instance_is_an_error_at_the_pool_that_mounts_it() {
    let scratch = |read: &PreflightRead| {
        matches!(read, PreflightRead::Lustre(_)) && read.to_string().ends_with("/scratch")
    };
    let found = gpu_findings(scratch, Reading::Missing);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(matches!(found[0].problem, Problem::LustreMissing(_)));
    assert_eq!(found[0].field, "node_pools[gpu].lustres");
    assert_eq!(found[0].certainty(), Certainty::Error);
    let creating = Reading::Lustre {
        state: "CREATING".to_owned(),
        network: Some("projects/my-proj/global/networks/default".to_owned()),
    };
    let found = gpu_findings(scratch, creating);
    assert!(matches!(
        found[..],
        [Finding {
            problem: Problem::LustreNotActive { .. },
            ..
        }]
    ));
}

#[test]
fn a_missing_export_bucket_is_an_error_at_destination_bucket() {
    let found = gpu_findings(
        |read| matches!(read, PreflightRead::Bucket(_)),
        Reading::Missing,
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(matches!(found[0].problem, Problem::BucketMissing(_)));
    assert_eq!(found[0].field, EXPORT_BUCKET_FIELD);
}

#[test]
fn a_reservation_elsewhere_for_other_machines_or_too_full_is_an_error() {
    let reservation = |read: &PreflightRead| matches!(read, PreflightRead::Reservation(_));
    let found = gpu_findings(reservation, Reading::Missing);
    assert!(matches!(
        found[..],
        [Finding {
            problem: Problem::ReservationMissing { .. },
            ..
        }]
    ));
    assert_eq!(
        found[0].field,
        "node_pools[gpu].machine_spec.reservation_affinity"
    );
    let wrong = Reading::Reservation(ReservationReading {
        zone: "us-central1-b".to_owned(),
        machine_type: Some("a4-highgpu-8g".to_owned()),
        count: 8,
        in_use: 5,
    });
    let found = gpu_findings(reservation, wrong);
    let problems: Vec<&Problem> = found.iter().map(|f| &f.problem).collect();
    assert!(
        matches!(
            problems.as_slice(),
            [
                Problem::ReservationInOtherZone { .. },
                Problem::ReservationForOtherMachine { .. },
                Problem::ReservationTooSmall {
                    count: 8,
                    in_use: 5,
                    min_node_count: 4,
                    ..
                }
            ]
        ),
        "{found:?}"
    );
    assert!(found.iter().all(|f| f.certainty() == Certainty::Error));
}

#[test]
fn a_permission_the_caller_lacks_is_an_error_and_a_replace_needs_delete_too() {
    let permissions =
        |read: &PreflightRead| matches!(read, PreflightRead::ProjectPermissions { .. });
    let only_create = Reading::Permissions {
        granted: vec![
            ClusterPermission::Create.name().to_owned(),
            ClusterPermission::Get.name().to_owned(),
        ],
    };
    let found = gpu_findings(permissions, only_create);
    assert!(
        matches!(&found[..], [Finding { problem: Problem::PermissionsMissing { missing, .. }, .. }] if missing == &[ClusterPermission::List]),
        "{found:?}"
    );
    let found = gpu_findings(
        permissions,
        Reading::Unchecked("HTTP 403: denied".to_owned()),
    );
    assert!(matches!(
        found[..],
        [Finding {
            problem: Problem::NotChecked {
                api: PreflightApi::ResourceManager,
                ..
            },
            ..
        }]
    ));
    assert_eq!(found[0].certainty(), Certainty::Warning);
}

#[test]
fn a_missing_service_account_or_one_the_caller_cannot_act_as_is_an_error() {
    let found = gpu_findings(
        |read| matches!(read, PreflightRead::ServiceAccount(_)),
        Reading::Missing,
    );
    assert!(matches!(
        found[..],
        [Finding {
            problem: Problem::ServiceAccountMissing(_),
            ..
        }]
    ));
    assert_eq!(found[0].field, SERVICE_ACCOUNT_FIELD);
    let found = gpu_findings(
        |read| matches!(read, PreflightRead::ActAs(_)),
        Reading::Permissions {
            granted: Vec::new(),
        },
    );
    assert!(matches!(
        found[..],
        [Finding {
            problem: Problem::ActAsMissing(_),
            ..
        }]
    ));
}

#[test]
fn gpu_quota_short_for_the_whole_plan_is_one_warning_with_the_numbers() {
    let one = cluster_requirements(&gpu_declared());
    let mut other = gpu_declared();
    other.name = clusterform_testkit::address("train02");
    let requirements = [one, cluster_requirements(&other)].concat();
    let quotas = requirements
        .iter()
        .find(|r| matches!(r.read, PreflightRead::RegionQuotas { .. }))
        .unwrap()
        .read
        .clone();
    let tight = Reading::Quotas(vec![Quota {
        metric: "PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS".to_owned(),
        limit: 40,
        usage: 10,
    }]);
    let found = findings(
        &requirements,
        &readings(&requirements, &[(quotas.clone(), tight)]),
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].problem,
        Problem::QuotaShort {
            project: "my-proj".to_owned(),
            region: "us-central1".to_owned(),
            metric: "PREEMPTIBLE_NVIDIA_H100_MEGA_GPUS".to_owned(),
            limit: 40,
            usage: 10,
            adds: 32,
            clusters: 2,
        }
    );
    assert_eq!(found[0].certainty(), Certainty::Warning);
    assert_eq!(found[0].field, "node_pools[spot].machine_spec");
    let found = findings(
        &requirements,
        &readings(&requirements, &[(quotas, Reading::Quotas(Vec::new()))]),
    );
    assert!(matches!(
        found[..],
        [Finding {
            problem: Problem::QuotaUnlisted { adds: 32, .. },
            ..
        }]
    ));
}

#[test]
fn a_quota_metric_is_the_accelerator_family_without_its_memory() {
    assert_eq!(
        quota_metric("NVIDIA_H100_MEGA_80GB", false),
        "NVIDIA_H100_MEGA_GPUS"
    );
    assert_eq!(
        quota_metric("NVIDIA_H200_141GB", true),
        "PREEMPTIBLE_NVIDIA_H200_GPUS"
    );
    assert_eq!(quota_metric("NVIDIA_B200", false), "NVIDIA_B200_GPUS");
}

#[test]
fn an_instance_in_no_pools_zone_is_a_warning() {
    let mut declared = gpu_declared();
    for pool in declared.cluster.node_pools.as_mut().unwrap() {
        pool.zone = Some("us-central1-b".to_owned());
    }
    let mut requirements = cluster_requirements(&declared);
    requirements.retain(|r| !matches!(r.read, PreflightRead::Reservation(_)));
    let found = findings(&requirements, &readings(&requirements, &[]));
    let zones: Vec<&Finding> = found
        .iter()
        .filter(|f| matches!(f.problem, Problem::StorageInOtherZone { .. }))
        .collect();
    assert_eq!(
        zones.len(),
        2,
        "the home Filestore and the Lustre instance: {found:?}"
    );
    assert!(found.iter().all(|f| f.certainty() == Certainty::Warning));
}

/// `config` planned against the testkit's live `train01`.
fn planned(config: &clusterform_config::Config) -> crate::Plan {
    crate::plan(
        config,
        &[clusterform_testkit::live_seed("train01")],
        &crate::PlanOptions::default(),
    )
    .unwrap()
}

#[test]
fn an_update_reads_only_the_update_permission_and_no_change_reads_nothing() {
    let mut wanted = clusterform_testkit::seed();
    wanted["labels"]["team"] = serde_json::json!("vision");
    let declared = clusterform_testkit::desired("train01", wanted.clone());
    let config = clusterform_testkit::config(vec![declared]);
    let plan = planned(&config);
    let requirements = plan_requirements(&config, &plan);
    let reads: Vec<String> = distinct_reads(&requirements)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(reads, ["the caller's permissions on projects/my-proj"]);
    let denied = [(
        requirements[0].read.clone(),
        Reading::Permissions {
            granted: Vec::new(),
        },
    )];
    let found = findings(&requirements, &BTreeMap::from(denied));
    assert!(
        matches!(&found[..], [Finding { problem: Problem::PermissionsMissing { missing, .. }, .. }] if missing == &[ClusterPermission::Update]),
        "{found:?}"
    );

    let unchanged = clusterform_testkit::seed();
    let config =
        clusterform_testkit::config(vec![clusterform_testkit::desired("train01", unchanged)]);
    let plan = planned(&config);
    assert_eq!(plan_requirements(&config, &plan), []);
}

/// `pool` of `cluster` with each of `fallbacks` (node-pool JSON members) in place of its own,
/// as the pool's alternatives, in order.
fn with_fallbacks(
    mut declared: DesiredCluster,
    pool: &str,
    fallbacks: &[serde_json::Value],
) -> DesiredCluster {
    let own = serde_json::to_value(declared.cluster.node_pool(pool).unwrap()).unwrap();
    let alternatives = fallbacks
        .iter()
        .map(|sets| {
            let mut alternative = own.clone();
            for (member, value) in sets.as_object().unwrap() {
                alternative[member] = value.clone();
            }
            serde_json::from_value(alternative).unwrap()
        })
        .collect();
    declared.fallbacks.push(clusterform_config::PoolFallbacks {
        pool: pool.to_owned(),
        alternatives,
    });
    declared
}

/// A `machineSpec` on the reservation `reservation` of `zone`, for `machine_type` machines.
fn reserved_spec(machine_type: &str, zone: &str, reservation: &str) -> serde_json::Value {
    serde_json::json!({
        "machineType": machine_type,
        "reservationAffinity": {
            "reservationAffinityType": "SPECIFIC_RESERVATION",
            "key": "compute.googleapis.com/reservation-name",
            "values": [format!("projects/my-proj/zones/{zone}/reservations/{reservation}")]
        }
    })
}

/// `gpu_declared`'s `gpu` pool falling back to Spot machines, then to another reservation.
fn gpu_with_fallbacks() -> DesiredCluster {
    with_fallbacks(
        gpu_declared(),
        "gpu",
        &[
            serde_json::json!({
                "machineSpec": {"machineType": "a3-megagpu-8g"},
                "provisioningModel": "SPOT"
            }),
            serde_json::json!({
                "machineSpec": reserved_spec("a3-megagpu-8g", "us-central1-b", "other")
            }),
        ],
    )
}

fn reservation_named(name: &str) -> impl Fn(&PreflightRead) -> bool {
    let suffix = format!("/reservations/{name}");
    move |read| matches!(read, PreflightRead::Reservation(_)) && read.to_string().ends_with(&suffix)
}

#[test]
fn alternatives_that_would_work_find_nothing() {
    let requirements = cluster_requirements(&gpu_with_fallbacks());
    assert_eq!(
        findings(&requirements, &readings(&requirements, &[])),
        [],
        "the Spot alternative's 32 GPUs alone fit in the 64 free; the other reservation is as seeded"
    );
}

#[test]
fn an_alternative_whose_reservation_is_elsewhere_is_a_warning_at_its_fallback_block() {
    let requirements = cluster_requirements(&gpu_with_fallbacks());
    let other = distinct_reads(&requirements)
        .into_iter()
        .find(reservation_named("other"))
        .unwrap();
    let elsewhere = Reading::Reservation(ReservationReading {
        zone: "us-central1-b".to_owned(),
        machine_type: Some("a3-megagpu-8g".to_owned()),
        count: 8,
        in_use: 0,
    });
    let found = findings(
        &requirements,
        &readings(&requirements, &[(other.clone(), elsewhere)]),
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].field, "node_pools[gpu].fallback[2]");
    assert_eq!(found[0].certainty(), Certainty::Warning);
    let Problem::InAlternative {
        alternative,
        problem,
    } = &found[0].problem
    else {
        panic!("{found:?}");
    };
    assert_eq!(alternative.pool, "gpu");
    assert_eq!(alternative.attempt.fallback(), Some(2));
    assert_eq!(alternative.attempt.number(), 3);
    assert!(
        matches!(&**problem, Problem::ReservationInOtherZone { zone, pool_zone, .. } if zone == "us-central1-b" && pool_zone == "us-central1-a"),
        "{problem:?}"
    );
    let found = findings(
        &requirements,
        &readings(&requirements, &[(other, Reading::Missing)]),
    );
    assert!(
        matches!(&found[..], [Finding { problem: Problem::InAlternative { problem, .. }, .. }] if matches!(**problem, Problem::ReservationMissing { .. })),
        "a missing reservation of an alternative is a warning too: {found:?}"
    );
    assert!(found.iter().all(|f| f.certainty() == Certainty::Warning));
}

#[test]
fn a_reservation_shared_by_the_pool_and_its_alternative_is_read_once_and_checked_for_each() {
    let declared = with_fallbacks(
        gpu_declared(),
        "gpu",
        &[serde_json::json!({
            "machineSpec": {
                "machineType": "a3-highgpu-8g",
                "reservationAffinity": gpu_declared().cluster.node_pool("gpu").unwrap()
                    .machine_spec.as_ref().unwrap().reservation_affinity
            }
        })],
    );
    let requirements = cluster_requirements(&declared);
    let reservation_reads = distinct_reads(&requirements)
        .into_iter()
        .filter(|read| matches!(read, PreflightRead::Reservation(_)))
        .count();
    assert_eq!(reservation_reads, 1);
    let found = findings(&requirements, &readings(&requirements, &[]));
    assert!(
        matches!(&found[..], [Finding { field, problem: Problem::InAlternative { problem, .. }, .. }]
            if field == "node_pools[gpu].fallback[1]"
            && matches!(&**problem, Problem::ReservationForOtherMachine { pool_machine_type, .. } if pool_machine_type == "a3-highgpu-8g")),
        "the reservation suits the pool, not its alternative: {found:?}"
    );
}

#[test]
fn an_alternative_short_of_gpu_quota_alone_is_a_warning_and_adds_nothing_to_the_plans_demand() {
    let declared = with_fallbacks(
        gpu_declared(),
        "gpu",
        &[serde_json::json!({
            "machineSpec": {"machineType": "a3-megagpu-8g"},
            "provisioningModel": "SPOT",
            "scalingSpec": {"minNodeCount": 4, "maxNodeCount": 10}
        })],
    );
    let requirements = cluster_requirements(&declared);
    assert_eq!(
        distinct_reads(&requirements)
            .iter()
            .filter(|read| matches!(read, PreflightRead::RegionQuotas { .. }))
            .count(),
        1
    );
    let found = findings(&requirements, &readings(&requirements, &[]));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].field, "node_pools[gpu].fallback[1]");
    let Problem::InAlternative { problem, .. } = &found[0].problem else {
        panic!("{found:?}");
    };
    assert!(
        matches!(
            **problem,
            Problem::QuotaShort {
                adds: 80,
                limit: 64,
                clusters: 1,
                ..
            }
        ),
        "its 80 GPUs alone, not the Spot pool's 16 beside them: {problem:?}"
    );
}

#[test]
fn a_pool_an_update_adds_has_its_private_access_and_its_alternatives_checked() {
    let mut wanted = clusterform_testkit::seed();
    wanted["nodePools"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "id": "gpu",
            "zone": "us-central1-a",
            "machineSpec": reserved_spec("a3-megagpu-8g", "us-central1-a", "h100"),
            "provisioningModel": "RESERVATION",
            "scalingSpec": {"minNodeCount": 2, "maxNodeCount": 2}
        }));
    let declared = with_fallbacks(
        clusterform_testkit::desired("train01", wanted),
        "gpu",
        &[serde_json::json!({
            "machineSpec": reserved_spec("a3-megagpu-8g", "us-central1-b", "other")
        })],
    );
    let config = clusterform_testkit::config(vec![declared]);
    let plan = planned(&config);
    let requirements = plan_requirements(&config, &plan);
    assert!(
        requirements
            .iter()
            .any(|r| r.field == SUBNETWORK_FIELD && r.alternative.is_none()),
        "the added pool has no public IPs: {requirements:?}"
    );
    let alternative: Vec<&Requirement> = requirements
        .iter()
        .filter(|r| r.alternative.is_some())
        .collect();
    assert!(
        matches!(&alternative[..], [r] if reservation_named("other")(&r.read) && r.field == "node_pools[gpu].fallback[1]"),
        "{requirements:?}"
    );
}
