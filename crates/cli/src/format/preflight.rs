//! The words of preflight's findings (`clusterform_planner::preflight`): what each says is
//! wrong, how to fix it, and the `preflight` array of `plan --json`.

use clusterform_config::SourceLocation;
use clusterform_planner::preflight::{Alternative, Certainty, Finding, Problem, StorageKind};
use serde_json::{Value, json};

use crate::format::notes;

/// What preflight found for a plan, each finding with where the configuration writes the
/// field it concerns.
#[derive(Debug, Default)]
pub struct PreflightReport {
    /// The findings, in the plan's order.
    pub findings: Vec<(Finding, Option<SourceLocation>)>,
    /// `--skip-preflight`: every finding is a warning.
    pub skipped: bool,
}

impl PreflightReport {
    /// The findings that stop the run.
    pub fn errors(&self) -> usize {
        if self.skipped {
            return 0;
        }
        self.findings
            .iter()
            .filter(|(finding, _)| finding.certainty() == Certainty::Error)
            .count()
    }
}

/// What the finding says, naming the cluster.
pub fn message(finding: &Finding) -> String {
    format!(
        "cluster {}: {}",
        finding.cluster.id(),
        what(&finding.problem)
    )
}

/// What a problem says is wrong.
fn what(problem: &Problem) -> String {
    match problem {
        Problem::ServiceDisabled { project, service } => format!(
            "the service {} is not enabled in project {project}: the create would fail",
            service.name()
        ),
        Problem::NetworkMissing(network) => format!("the network {network} does not exist"),
        Problem::SubnetworkMissing(subnetwork) => {
            format!("the subnetwork {subnetwork} does not exist")
        }
        Problem::SubnetworkInOtherRegion {
            subnetwork,
            region,
            cluster_region,
        } => format!(
            "the subnetwork {subnetwork} is in region {region}, not in the cluster's region {cluster_region}"
        ),
        Problem::SubnetworkOnOtherNetwork {
            subnetwork,
            network,
            cluster_network,
        } => format!(
            "the subnetwork {subnetwork} is on the network {network}, not on the cluster's network {cluster_network}"
        ),
        Problem::PrivateAccessOff { subnetwork, pools } => format!(
            "node pool{} {} no public IPs, and the subnetwork {subnetwork} has Private Google Access off: the create would fail (\"Subnetwork does not allow private IP Google access\")",
            if pools.len() == 1 { "" } else { "s" },
            pools.join(", ") + if pools.len() == 1 { " has" } else { " have" },
        ),
        Problem::FilestoreMissing(instance) => format!(
            "no Filestore instance {instance} exists for the home directory, and whether a Managed Lustre instance does could not be read (unless it is one, the create will fail)"
        ),
        Problem::HomeMissing(instance) => format!(
            "the home directory {instance} does not exist, as a Filestore instance or as a Managed Lustre instance"
        ),
        Problem::FilestoreNotReady { instance, state } => {
            format!("the home directory's Filestore instance {instance} is {state}, not READY")
        }
        Problem::FilestoreOnOtherNetwork {
            instance,
            networks,
            cluster_network,
        } => format!(
            "the home directory's Filestore instance {instance} is on {}, not on the cluster's network {cluster_network}",
            if networks.is_empty() {
                "no network".to_owned()
            } else {
                networks.join(", ")
            }
        ),
        Problem::LustreMissing(instance) => {
            format!("the Managed Lustre instance {instance} does not exist")
        }
        Problem::LustreNotActive { instance, state } => {
            format!("the Managed Lustre instance {instance} is {state}, not ACTIVE")
        }
        Problem::LustreOnOtherNetwork {
            instance,
            network,
            cluster_network,
        } => format!(
            "the Managed Lustre instance {instance} is on {}, not on the cluster's network {cluster_network}",
            network.as_deref().unwrap_or("no network")
        ),
        Problem::StorageInOtherZone {
            kind,
            instance,
            pool_zones,
        } => format!(
            "the {} instance {instance} is in zone {}, where no node pool is (the pools are in {}); nodes would mount it across zones, if the service allows it at all",
            storage_kind(*kind),
            instance.zone(),
            pool_zones.join(", ")
        ),
        Problem::BucketMissing(bucket) => {
            format!("the Lustre export's bucket {bucket} does not exist")
        }
        Problem::ReservationMissing { pool, .. }
        | Problem::ReservationInOtherZone { pool, .. }
        | Problem::ReservationForOtherMachine { pool, .. }
        | Problem::ReservationTooSmall { pool, .. } => {
            format!("node pool {pool}: {}", pool_what(problem))
        }
        Problem::PermissionsMissing { project, missing } => format!(
            "the caller lacks {} on project {project}: apply's calls would be refused",
            missing
                .iter()
                .map(|permission| permission.name())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Problem::ServiceAccountMissing(email) => {
            format!("the service account {email} does not exist")
        }
        Problem::ActAsMissing(email) => format!(
            "the caller lacks iam.serviceAccounts.actAs on the service account {email}: the create would be refused"
        ),
        Problem::InAlternative {
            alternative,
            problem,
        } => alternative_what(alternative, problem),
        Problem::QuotaShort {
            project,
            region,
            metric,
            limit,
            usage,
            adds,
            clusters,
        } => format!(
            "the plan's GPU pools may need {adds} {metric} in {region} at their max_node_count ({clusters} cluster{}), and project {project} has {} free of that quota (limit {limit}, in use {usage}); which quota the service charges is not documented: {metric} is an inference",
            if *clusters == 1 { "" } else { "s" },
            limit.saturating_sub(*usage)
        ),
        Problem::QuotaUnlisted {
            project,
            region,
            metric,
            adds,
        } => format!(
            "the plan's GPU pools may need {adds} {metric} in {region}, and project {project} lists no such quota there (its limit may be 0); which quota the service charges is not documented: {metric} is an inference"
        ),
        Problem::NotChecked { api, reads, reason } => format!(
            "preflight could not read {} from {api}: {}; what {} is not known",
            reads
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            notes::clause(reason),
            if reads.len() == 1 {
                "it checks"
            } else {
                "they check"
            }
        ),
    }
}

/// What a problem of one pool says, without naming the pool.
fn pool_what(problem: &Problem) -> String {
    match problem {
        Problem::ReservationMissing { reservation, .. } => {
            format!("the reservation {reservation} does not exist")
        }
        Problem::ReservationInOtherZone {
            reservation,
            zone,
            pool_zone,
            ..
        } => format!(
            "the reservation {reservation} is in zone {zone}, not in the pool's zone {pool_zone}"
        ),
        Problem::ReservationForOtherMachine {
            reservation,
            machine_type,
            pool_machine_type,
            ..
        } => format!(
            "the reservation {reservation} holds {machine_type} machines, not the pool's {pool_machine_type}"
        ),
        Problem::ReservationTooSmall {
            reservation,
            count,
            in_use,
            min_node_count,
            ..
        } => format!(
            "the reservation {reservation} has {} machine{} free ({count} reserved, {in_use} in use), fewer than the pool's min_node_count {min_node_count}",
            count.saturating_sub(*in_use),
            if count.saturating_sub(*in_use) == 1 {
                ""
            } else {
                "s"
            }
        ),
        Problem::QuotaShort {
            region,
            metric,
            limit,
            usage,
            adds,
            ..
        } => format!(
            "it may need {adds} {metric} in {region} at its max_node_count, and {} of that quota is free (limit {limit}, in use {usage}); {metric} is an inference",
            limit.saturating_sub(*usage)
        ),
        Problem::QuotaUnlisted {
            region,
            metric,
            adds,
            ..
        } => format!(
            "it may need {adds} {metric} in {region}, and the project lists no such quota there (its limit may be 0); {metric} is an inference"
        ),
        other => what(other),
    }
}

/// What a problem of a pool's `fallback` alternative says: which alternative, as the apply
/// numbers its attempts, and that it would (or, for quota, may) fail when its turn comes.
fn alternative_what(alternative: &Alternative, problem: &Problem) -> String {
    let outcome = match problem {
        Problem::QuotaShort { .. } | Problem::QuotaUnlisted { .. } => {
            "this alternative may fail for quota"
        }
        _ => "this alternative would fail",
    };
    format!(
        "fallback {} ({}) of pool `{}`: {}: {outcome}",
        alternative.attempt.fallback().unwrap_or_default(),
        alternative.attempt,
        alternative.pool,
        pool_what(problem)
    )
}

/// How to fix it.
pub fn hint(finding: &Finding) -> Option<String> {
    problem_hint(&finding.problem)
}

/// How to fix a problem.
fn problem_hint(problem: &Problem) -> Option<String> {
    Some(match problem {
        Problem::ServiceDisabled { project, service } => format!(
            "enable it: gcloud services enable {} --project {project}",
            service.name()
        ),
        Problem::NetworkMissing(_) => "create the network, or name one that exists".to_owned(),
        Problem::SubnetworkMissing(_) => {
            "create the subnetwork, or name one that exists".to_owned()
        }
        Problem::SubnetworkInOtherRegion { cluster_region, .. } => {
            format!("name a subnetwork of {cluster_region}")
        }
        Problem::SubnetworkOnOtherNetwork { network, .. } => {
            format!("name a subnetwork of the cluster's network, or set `network` to {network}")
        }
        Problem::PrivateAccessOff { subnetwork, .. } => format!(
            "turn it on: gcloud compute networks subnets update {} --region {} --project {} --enable-private-ip-google-access; or set enable_public_ips = true on those pools",
            subnetwork.subnetwork(),
            subnetwork.region(),
            subnetwork.project()
        ),
        Problem::FilestoreMissing(_) => {
            "create the Filestore instance before the cluster, or name one that exists".to_owned()
        }
        Problem::FilestoreNotReady { .. } => "wait until it is READY".to_owned(),
        Problem::FilestoreOnOtherNetwork { .. } => {
            "name an instance on the cluster's network".to_owned()
        }
        Problem::HomeMissing(_) => {
            "create the Filestore or Managed Lustre instance before the cluster, or name one that exists".to_owned()
        }
        Problem::LustreMissing(_) => {
            "create the Managed Lustre instance before the cluster, or name one that exists"
                .to_owned()
        }
        Problem::LustreNotActive { .. } => "wait until it is ACTIVE".to_owned(),
        Problem::LustreOnOtherNetwork { .. } => {
            "name an instance on the cluster's network".to_owned()
        }
        Problem::StorageInOtherZone { .. } => {
            "put the instance in a pool's zone, or a pool in the instance's zone".to_owned()
        }
        Problem::BucketMissing(bucket) => format!(
            "create it (gcloud storage buckets create {bucket}), or name a bucket that exists"
        ),
        Problem::ReservationMissing { .. } => {
            "name a reservation that exists (gcloud compute reservations list)".to_owned()
        }
        Problem::ReservationInOtherZone { zone, .. } => {
            format!("set the pool's zone to {zone}, or name a reservation of the pool's zone")
        }
        Problem::ReservationForOtherMachine { machine_type, .. } => format!(
            "set the pool's machine_type to {machine_type}, or name a reservation for the pool's"
        ),
        Problem::ReservationTooSmall { .. } => {
            "lower min_node_count, free machines of the reservation, or name a larger one"
                .to_owned()
        }
        Problem::PermissionsMissing { project, .. } => format!(
            "ask for a role that grants them on project {project}"
        ),
        Problem::ServiceAccountMissing(_) => {
            "create the service account, or name one that exists".to_owned()
        }
        Problem::ActAsMissing(email) => format!(
            "ask for roles/iam.serviceAccountUser on {email}"
        ),
        Problem::QuotaShort { metric, region, .. } | Problem::QuotaUnlisted { metric, region, .. } => {
            format!("if creates fail for quota, ask for more {metric} in {region} (IAM & Admin > Quotas)")
        }
        Problem::InAlternative { problem, .. } => alternative_hint(problem)?,
        Problem::NotChecked { .. } => return None,
    })
}

/// How to fix a pool's `fallback` alternative: in its block, since a block cannot move the
/// pool to another zone.
fn alternative_hint(problem: &Problem) -> Option<String> {
    Some(match problem {
        Problem::ReservationMissing { .. }
        | Problem::ReservationInOtherZone { .. }
        | Problem::ReservationForOtherMachine { .. }
        | Problem::ReservationTooSmall { .. } => {
            "in this fallback block, name a reservation of the pool's zone with the alternative's machine type and enough machines free, or remove the block".to_owned()
        }
        other => return problem_hint(other),
    })
}

/// The words for a kind of instance.
fn storage_kind(kind: StorageKind) -> &'static str {
    match kind {
        StorageKind::Filestore => "Filestore",
        StorageKind::Lustre => "Managed Lustre",
    }
}

/// A finding's kind, as `plan --json` names it.
fn kind(problem: &Problem) -> &'static str {
    match problem {
        Problem::ServiceDisabled { .. } => "service_disabled",
        Problem::NetworkMissing(_) => "network_missing",
        Problem::SubnetworkMissing(_) => "subnetwork_missing",
        Problem::SubnetworkInOtherRegion { .. } => "subnetwork_in_other_region",
        Problem::SubnetworkOnOtherNetwork { .. } => "subnetwork_on_other_network",
        Problem::PrivateAccessOff { .. } => "private_google_access_off",
        Problem::FilestoreMissing(_) => "filestore_missing",
        Problem::FilestoreNotReady { .. } => "filestore_not_ready",
        Problem::FilestoreOnOtherNetwork { .. } => "filestore_on_other_network",
        Problem::HomeMissing(_) => "home_missing",
        Problem::LustreMissing(_) => "lustre_missing",
        Problem::LustreNotActive { .. } => "lustre_not_active",
        Problem::LustreOnOtherNetwork { .. } => "lustre_on_other_network",
        Problem::StorageInOtherZone { .. } => "storage_in_other_zone",
        Problem::BucketMissing(_) => "bucket_missing",
        Problem::ReservationMissing { .. } => "reservation_missing",
        Problem::ReservationInOtherZone { .. } => "reservation_in_other_zone",
        Problem::ReservationForOtherMachine { .. } => "reservation_for_other_machine",
        Problem::ReservationTooSmall { .. } => "reservation_too_small",
        Problem::PermissionsMissing { .. } => "permissions_missing",
        Problem::ServiceAccountMissing(_) => "service_account_missing",
        Problem::ActAsMissing(_) => "act_as_missing",
        Problem::QuotaShort { .. } => "gpu_quota_short",
        Problem::QuotaUnlisted { .. } => "gpu_quota_unlisted",
        Problem::InAlternative { problem, .. } => kind(problem),
        Problem::NotChecked { .. } => "not_checked",
    }
}

/// The `fallback` alternative a finding is about, as `{pool, fallback, attempt}`; null for
/// the pools as declared.
fn alternative_json(problem: &Problem) -> Value {
    match problem {
        Problem::InAlternative { alternative, .. } => json!({
            "pool": alternative.pool,
            "fallback": alternative.attempt.fallback(),
            "attempt": alternative.attempt.number(),
        }),
        _ => Value::Null,
    }
}

/// How a finding counts: an error, or a warning (every finding with `skipped`).
pub fn severity(finding: &Finding, skipped: bool) -> &'static str {
    match (finding.certainty(), skipped) {
        (Certainty::Error, false) => "error",
        _ => "warning",
    }
}

/// The `preflight` array of `plan --json`: each finding with its cluster, severity, kind,
/// words and the place in the configuration it concerns.
pub fn render_json(findings: &[(Finding, Option<SourceLocation>)], skipped: bool) -> Value {
    Value::Array(
        findings
            .iter()
            .map(|(finding, place)| {
                json!({
                    "cluster": finding.cluster.id().as_str(),
                    "severity": severity(finding, skipped),
                    "kind": kind(&finding.problem),
                    "field": finding.field,
                    "file": place.as_ref().map(|p| p.file.display().to_string()),
                    "line": place.as_ref().map(|p| p.line),
                    "column": place.as_ref().map(|p| p.column),
                    "message": message(finding),
                    "hint": hint(finding),
                    "alternative": alternative_json(&finding.problem),
                })
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use clusterform_model::preflight::SubnetworkName;
    use clusterform_testkit::address;

    use super::*;

    #[test]
    fn private_access_off_names_the_pools_the_failure_and_the_command_that_fixes_it() {
        let finding = Finding {
            cluster: address("train01"),
            field: "network.subnetwork".to_owned(),
            problem: Problem::PrivateAccessOff {
                subnetwork: SubnetworkName::parse("projects/p/regions/r/subnetworks/s").unwrap(),
                pools: vec!["gpu".to_owned()],
            },
        };
        let message = message(&finding);
        assert!(
            message.starts_with("cluster train01: node pool gpu has no public IPs"),
            "{message}"
        );
        assert!(message.contains("Subnetwork does not allow private IP Google access"));
        assert!(
            hint(&finding)
                .unwrap()
                .contains("--region r --project p --enable-private-ip-google-access")
        );
        let shown = render_json(&[(finding, None)], true);
        assert_eq!(
            shown[0]["severity"], "warning",
            "--skip-preflight makes every finding a warning"
        );
        assert_eq!(shown[0]["kind"], "private_google_access_off");
    }

    #[test]
    fn an_alternative_short_of_quota_names_its_fallback_and_attempt_and_is_a_warning() {
        let finding = Finding {
            cluster: address("train01"),
            field: "node_pools[gpu].fallback[2]".to_owned(),
            problem: Problem::InAlternative {
                alternative: Alternative {
                    pool: "gpu".to_owned(),
                    attempt: clusterform_model::Attempt::at(2),
                },
                problem: Box::new(Problem::QuotaShort {
                    project: "p".to_owned(),
                    region: "r".to_owned(),
                    metric: "NVIDIA_H100_GPUS".to_owned(),
                    limit: 64,
                    usage: 0,
                    adds: 80,
                    clusters: 1,
                }),
            },
        };
        assert_eq!(
            message(&finding),
            "cluster train01: fallback 2 (attempt 3) of pool `gpu`: it may need 80 NVIDIA_H100_GPUS in r at its max_node_count, and 64 of that quota is free (limit 64, in use 0); NVIDIA_H100_GPUS is an inference: this alternative may fail for quota"
        );
        assert!(
            hint(&finding)
                .unwrap()
                .contains("ask for more NVIDIA_H100_GPUS in r")
        );
        let shown = render_json(&[(finding, None)], false);
        assert_eq!(shown[0]["severity"], "warning");
        assert_eq!(shown[0]["kind"], "gpu_quota_short");
        assert_eq!(
            shown[0]["alternative"],
            json!({"pool": "gpu", "fallback": 2, "attempt": 3})
        );
    }
}
