//! The words of the disruption guard: the running work a plan would stop, in the confirmation
//! question and in the refusal of an unattended run.

use clusterform_model::RunningJob;
use clusterform_model::duration::Seconds;
use clusterform_planner::{StoppedJobs, StoppedWork};
use time::OffsetDateTime;

/// Jobs named in a question or a refusal; the rest are counted.
pub const MAX_JOBS_NAMED: usize = 10;

/// `17 train-llm (alice, RUNNING for 2d3h)`: the job's ID, name, user and how long it has
/// run, each part only when Slurm gave it.
pub fn job_text(job: &RunningJob, now: OffsetDateTime) -> String {
    let id = job.id.map_or_else(|| "?".to_owned(), |id| id.to_string());
    let name = job
        .name
        .as_deref()
        .map(|name| format!(" {name}"))
        .unwrap_or_default();
    let mut about: Vec<String> = job.user.iter().cloned().collect();
    let elapsed = job
        .started_at
        .and_then(|start| u64::try_from(now.unix_timestamp() - start).ok())
        .map(|seconds| format!(" for {}", Seconds(seconds).to_units(2)))
        .unwrap_or_default();
    about.push(format!("{}{elapsed}", job.state));
    format!("{id}{name} ({})", about.join(", "))
}

/// What one change stops, in a sentence: `2 running Slurm jobs: 17 train-llm (…), 18 …`, or
/// that its jobs could not be read.
pub fn stopped_text(work: &StoppedWork<'_>, now: OffsetDateTime) -> String {
    match &work.jobs {
        StoppedJobs::Known(jobs) => format!(
            "{} {}: {}",
            jobs.len(),
            if jobs.len() == 1 {
                "Slurm job that holds nodes"
            } else {
                "Slurm jobs that hold nodes"
            },
            named_jobs(jobs, now)
        ),
        StoppedJobs::Unknown { reason } => {
            format!("Slurm jobs that may be running, since they cannot be read ({reason})")
        }
    }
}

/// Up to [`MAX_JOBS_NAMED`] jobs, then how many more.
fn named_jobs(jobs: &[RunningJob], now: OffsetDateTime) -> String {
    let mut named: Vec<String> = jobs
        .iter()
        .take(MAX_JOBS_NAMED)
        .map(|job| job_text(job, now))
        .collect();
    if jobs.len() > MAX_JOBS_NAMED {
        named.push(format!("and {} more", jobs.len() - MAX_JOBS_NAMED));
    }
    named.join(", ")
}

/// The lines the confirmation question adds when the plan stops running work: how many jobs
/// in all, then each cluster with the jobs it stops (ten named at most in all).
pub fn question_lines(stopped: &[StoppedWork<'_>], now: OffsetDateTime) -> Vec<String> {
    if stopped.is_empty() {
        return Vec::new();
    }
    let known: usize = stopped.iter().map(|work| work.jobs.known().len()).sum();
    let unknown = stopped
        .iter()
        .filter(|work| matches!(work.jobs, StoppedJobs::Unknown { .. }))
        .count();
    let mut total = Vec::new();
    if known > 0 {
        total.push(format!(
            "stops {known} running Slurm {}",
            if known == 1 { "job" } else { "jobs" }
        ));
    }
    if unknown > 0 {
        total.push(format!(
            "takes nodes from {unknown} {} whose jobs cannot be read",
            if unknown == 1 { "cluster" } else { "clusters" }
        ));
    }
    let mut lines = vec![format!("This plan {}:", total.join(" and "))];
    let mut left = MAX_JOBS_NAMED;
    for work in stopped {
        let id = work.change.address.id();
        match &work.jobs {
            StoppedJobs::Known(jobs) => {
                for job in jobs.iter().take(left) {
                    lines.push(format!("  {id}: {}", job_text(job, now)));
                }
                left = left.saturating_sub(jobs.len());
            }
            StoppedJobs::Unknown { reason } => {
                lines.push(format!("  {id}: jobs not known ({reason})"));
            }
        }
    }
    if known > MAX_JOBS_NAMED {
        lines.push(format!("  and {} more jobs", known - MAX_JOBS_NAMED));
    }
    lines
}

#[cfg(test)]
mod tests {
    use clusterform_testkit::slurm_job;

    use super::*;

    fn job(id: i64, started_ago: Option<i64>, now: OffsetDateTime) -> RunningJob {
        RunningJob {
            name: Some("train-llm".to_owned()),
            user: Some("alice".to_owned()),
            started_at: started_ago.map(|ago| now.unix_timestamp() - ago),
            ..slurm_job(id, "RUNNING")
        }
    }

    #[test]
    fn a_job_is_named_with_its_user_and_how_long_it_has_run() {
        let now = OffsetDateTime::now_utc();
        assert_eq!(
            job_text(&job(17, Some(2 * 86_400 + 3 * 3600 + 5), now), now),
            "17 train-llm (alice, RUNNING for 2d3h)"
        );
        let unnamed = RunningJob {
            name: None,
            user: None,
            ..job(18, None, now)
        };
        assert_eq!(job_text(&unnamed, now), "18 (RUNNING)");
    }

    #[test]
    fn no_more_than_ten_jobs_are_named() {
        let now = OffsetDateTime::now_utc();
        let jobs: Vec<RunningJob> = (1..=12).map(|id| job(id, None, now)).collect();
        let text = named_jobs(&jobs, now);
        assert!(
            text.ends_with("10 train-llm (alice, RUNNING), and 2 more"),
            "{text}"
        );
    }
}
