//! Which running work a plan would stop: for each change that takes nodes away
//! ([`ClusterChange::disruption`]), the Slurm jobs that hold nodes there, or the fact that its
//! jobs could not be read on a cluster that may be running them. Unattended runs refuse such
//! changes unless told to go ahead; a person is shown them in the question.

use std::collections::BTreeMap;

use clusterform_model::{
    ClusterName, ClusterState, JobsByCluster, LiveCluster, RunningJob, RunningJobs,
};

use crate::plan::{ClusterChange, Disruption, Plan};

/// What one change would stop.
#[derive(Debug, Clone, PartialEq)]
pub struct StoppedWork<'p> {
    /// The change.
    pub change: &'p ClusterChange,
    /// The jobs it stops, or why they are not known.
    pub jobs: StoppedJobs,
}

/// The jobs a change stops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoppedJobs {
    /// Slurm answered: these jobs hold nodes the change takes away (never empty).
    Known(Vec<RunningJob>),
    /// Slurm could not be read while the cluster may be running jobs: possibly some.
    Unknown {
        /// Why it could not be read.
        reason: String,
    },
}

impl StoppedJobs {
    /// The jobs, when known.
    pub fn known(&self) -> &[RunningJob] {
        match self {
            Self::Known(jobs) => jobs,
            Self::Unknown { .. } => &[],
        }
    }
}

/// The running work each of `plan`'s disruptive changes would stop, in the plan's order:
/// jobs holding nodes on what the change takes away (a job whose pools are not known may be on
/// any of them), or "unknown" when the cluster's jobs could not be read (or were not asked)
/// while the service does not report it in `ERROR` or `STOPPING`, where no Slurm answers.
/// Changes that stop nothing are left out.
pub fn stopped_work<'p, 'l>(
    plan: &'p Plan,
    jobs: &JobsByCluster,
    live: impl IntoIterator<Item = &'l LiveCluster>,
) -> Vec<StoppedWork<'p>> {
    let disruptive: Vec<&ClusterChange> = plan
        .changes
        .iter()
        .filter(|change| change.is_disruptive())
        .collect();
    if disruptive.is_empty() {
        return Vec::new();
    }
    let states: BTreeMap<&ClusterName, Option<ClusterState>> = live
        .into_iter()
        .map(|cluster| (&cluster.address, cluster.cluster.cluster_state()))
        .collect();
    disruptive
        .into_iter()
        .filter_map(|change| {
            let state = states.get(&change.address).copied().flatten();
            let jobs = stopped_jobs(change, jobs.get(&change.address), state)?;
            Some(StoppedWork { change, jobs })
        })
        .collect()
}

fn stopped_jobs(
    change: &ClusterChange,
    jobs: Option<&RunningJobs>,
    state: Option<ClusterState>,
) -> Option<StoppedJobs> {
    let unknown = |reason: String| may_run_jobs(state).then_some(StoppedJobs::Unknown { reason });
    match jobs {
        None => unknown("its Slurm jobs were not read".to_owned()),
        Some(RunningJobs::Unknown { reason }) => unknown(reason.clone()),
        Some(RunningJobs::NotAsked { state }) => {
            unknown(format!("Slurm is not asked while the cluster is {state}"))
        }
        Some(RunningJobs::Known { jobs }) => {
            let disruption = change.disruption();
            let stopped: Vec<RunningJob> = jobs
                .iter()
                .filter(|job| job.holds_nodes() && is_hit(job, &disruption))
                .cloned()
                .collect();
            (!stopped.is_empty()).then_some(StoppedJobs::Known(stopped))
        }
    }
}

/// Whether a cluster in `state` may be running jobs: any state but `ERROR` and `STOPPING`,
/// an unknown or missing one included.
fn may_run_jobs(state: Option<ClusterState>) -> bool {
    !matches!(state, Some(ClusterState::Error | ClusterState::Stopping))
}

/// Whether `job` runs on what `disruption` takes away; a job whose pools are not known may run
/// anywhere.
fn is_hit(job: &RunningJob, disruption: &Disruption) -> bool {
    match disruption {
        Disruption::Nothing => false,
        Disruption::WholeCluster => true,
        Disruption::Pools(pools) => {
            job.pools.is_empty() || pools.iter().any(|pool| job.pools.contains(&pool.pool))
        }
    }
}

#[cfg(test)]
mod tests {
    use clusterform_model::{Action, Cluster};
    use clusterform_testkit::slurm_job;

    use super::*;
    use crate::plan::{PoolDisruption, PoolHarm};

    fn job(id: i64, state: &str, pools: &[&str]) -> RunningJob {
        RunningJob {
            pools: pools.iter().map(|p| (*p).to_owned()).collect(),
            ..slurm_job(id, state)
        }
    }

    fn pools(ids: &[&str]) -> Disruption {
        Disruption::Pools(
            ids.iter()
                .map(|id| PoolDisruption {
                    pool: (*id).to_owned(),
                    harm: PoolHarm::RecreatesNodes,
                })
                .collect(),
        )
    }

    #[test]
    fn a_whole_cluster_stops_every_job_that_holds_nodes() {
        let running = job(1, "RUNNING", &["gpu"]);
        let pending = job(2, "PENDING", &["gpu"]);
        assert!(is_hit(&running, &Disruption::WholeCluster));
        assert!(running.holds_nodes() && !pending.holds_nodes());
    }

    #[test]
    fn a_pool_stops_the_jobs_on_it_and_those_whose_pools_are_not_known() {
        let disruption = pools(&["cpu"]);
        assert!(is_hit(&job(1, "RUNNING", &["cpu", "gpu"]), &disruption));
        assert!(is_hit(&job(2, "RUNNING", &[]), &disruption));
        assert!(!is_hit(&job(3, "RUNNING", &["gpu"]), &disruption));
    }

    #[test]
    fn unreadable_jobs_count_unless_the_cluster_is_in_error_or_being_deleted() {
        assert!(may_run_jobs(Some(ClusterState::Running)));
        assert!(may_run_jobs(Some(ClusterState::Updating)));
        assert!(may_run_jobs(Some(ClusterState::Other)));
        assert!(may_run_jobs(None), "a cluster whose state is not known");
        assert!(!may_run_jobs(Some(ClusterState::Error)));
        assert!(!may_run_jobs(Some(ClusterState::Stopping)));
    }

    fn live(state: &str) -> LiveCluster {
        let cluster: Cluster = serde_json::from_value(serde_json::json!({
            "name": "projects/acme-ml/locations/us-central1/clusters/train01",
            "clusterStatus": {"state": state},
        }))
        .unwrap();
        LiveCluster {
            address: ClusterName::new("acme-ml", "us-central1", "train01").unwrap(),
            cluster,
        }
    }

    fn deleting_plan() -> Plan {
        let address = ClusterName::new("acme-ml", "us-central1", "train01").unwrap();
        let live = live("RUNNING");
        let change = crate::planning::deletion(
            address,
            &live.cluster,
            crate::plan::PlannedTimeouts::default(),
            crate::plan::ChangeReason::DestroyRequested,
        );
        assert_eq!(change.action, Action::Delete);
        Plan {
            format_version: crate::plan::PLAN_FORMAT_VERSION,
            stack: "s".to_owned(),
            config_digest: String::new(),
            config_files: BTreeMap::new(),
            directory: std::path::PathBuf::new(),
            variables: BTreeMap::new(),
            flags: crate::options::PlanFlags {
                destroy: true,
                ..Default::default()
            },
            flags_digest: String::new(),
            endpoint: None,
            changes: vec![change],
            unreadable_locations: Vec::new(),
        }
    }

    #[test]
    fn a_delete_stops_running_jobs_and_not_pending_ones() {
        let plan = deleting_plan();
        let address = plan.changes[0].address.clone();
        let jobs = JobsByCluster::from([(
            address,
            RunningJobs::Known {
                jobs: vec![job(1, "RUNNING", &[]), job(2, "PENDING", &[])],
            },
        )]);
        let stopped = stopped_work(&plan, &jobs, [&live("RUNNING")]);
        assert_eq!(stopped.len(), 1);
        let ids: Vec<_> = stopped[0].jobs.known().iter().map(|j| j.id).collect();
        assert_eq!(ids, [Some(1)]);
    }

    #[test]
    fn a_delete_of_a_cluster_with_only_pending_jobs_stops_nothing() {
        let plan = deleting_plan();
        let jobs = JobsByCluster::from([(
            plan.changes[0].address.clone(),
            RunningJobs::Known {
                jobs: vec![job(2, "PENDING", &[])],
            },
        )]);
        assert!(stopped_work(&plan, &jobs, [&live("RUNNING")]).is_empty());
    }

    #[test]
    fn jobs_not_read_on_a_running_cluster_are_possibly_running() {
        let plan = deleting_plan();
        let unread = stopped_work(&plan, &JobsByCluster::new(), [&live("RUNNING")]);
        assert!(matches!(unread[0].jobs, StoppedJobs::Unknown { .. }));
        let jobs = JobsByCluster::from([(
            plan.changes[0].address.clone(),
            RunningJobs::Unknown {
                reason: "HTTP 503".to_owned(),
            },
        )]);
        assert_eq!(
            stopped_work(&plan, &jobs, [&live("RUNNING")])[0].jobs,
            StoppedJobs::Unknown {
                reason: "HTTP 503".to_owned()
            }
        );
        assert!(stopped_work(&plan, &jobs, [&live("ERROR")]).is_empty());
    }

    #[test]
    fn jobs_not_asked_of_an_updating_cluster_are_possibly_running_and_say_why() {
        let plan = deleting_plan();
        let jobs = JobsByCluster::from([(
            plan.changes[0].address.clone(),
            RunningJobs::NotAsked {
                state: "UPDATING".to_owned(),
            },
        )]);
        assert_eq!(
            stopped_work(&plan, &jobs, [&live("UPDATING")])[0].jobs,
            StoppedJobs::Unknown {
                reason: "Slurm is not asked while the cluster is UPDATING".to_owned()
            }
        );
        assert!(stopped_work(&plan, &jobs, [&live("ERROR")]).is_empty());
    }
}
