//! Running the `clusterform` binary as users run it, and measuring what one run costs.
//!
//! `getrusage(RUSAGE_CHILDREN)` adds up every child a process has waited for and keeps the
//! largest peak RSS among them, so the benchmark cannot read one run's figures from it
//! directly. Each run therefore goes through this same binary's hidden `measure` command: a
//! fresh process whose only child is that run, which writes the run's wall time, CPU time and
//! peak RSS to a report file.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::time::TimeVal;

use crate::error::BenchError;

/// The bearer token every benchmark emulator requires.
pub const TOKEN: &str = "bench-token";

/// What one run of `clusterform` took.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// Wall time from spawn to exit, in seconds.
    pub wall: f64,
    /// User plus system CPU time, in seconds.
    pub cpu: f64,
    /// Peak resident set size, in KiB.
    pub max_rss_kib: u64,
}

/// The `clusterform` binary under measurement.
#[derive(Debug, Clone)]
pub struct Tool {
    /// The `clusterform` executable.
    pub exe: PathBuf,
    /// This benchmark's own executable, which runs `measure`.
    pub wrapper: PathBuf,
}

impl Tool {
    /// `clusterform ARGS` in `dir`, against the emulator at `endpoint` when given; fails
    /// unless it exits with `expected`.
    pub async fn run(
        &self,
        dir: &Path,
        endpoint: Option<&str>,
        args: &[&str],
        expected: i32,
    ) -> Result<Run, BenchError> {
        let report = tempfile::NamedTempFile::new()
            .map_err(|e| BenchError::io("creating a report file", e))?;
        let mut command = tokio::process::Command::new(&self.wrapper);
        command
            .arg("measure")
            .arg("--report")
            .arg(report.path())
            .arg("--")
            .arg(&self.exe)
            .args(args)
            .current_dir(dir)
            .env_remove("CLUSTERFORM_ENDPOINT")
            .env("CLUSTERFORM_ACCESS_TOKEN", TOKEN)
            .env("NO_COLOR", "1")
            .env_remove("GOOGLE_OAUTH_ACCESS_TOKEN")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null());
        if let Some(endpoint) = endpoint {
            // Preflight's reads go to the benchmark's emulator too, as a user of an emulator
            // sends them: the API's endpoint never redirects them.
            command
                .env("CLUSTERFORM_ENDPOINT", endpoint)
                .env(
                    "CLUSTERFORM_SERVICE_USAGE_ENDPOINT",
                    format!("{endpoint}/serviceusage"),
                )
                .env("CLUSTERFORM_COMPUTE_ENDPOINT", endpoint)
                .env("CLUSTERFORM_FILESTORE_ENDPOINT", format!("{endpoint}/file"))
                .env("CLUSTERFORM_LUSTRE_ENDPOINT", format!("{endpoint}/lustre"))
                .env(
                    "CLUSTERFORM_RESOURCE_MANAGER_ENDPOINT",
                    format!("{endpoint}/cloudresourcemanager"),
                )
                .env("CLUSTERFORM_IAM_ENDPOINT", format!("{endpoint}/iam"));
        }
        let output = command
            .output()
            .await
            .map_err(|e| BenchError::io(format!("running {}", self.exe.display()), e))?;
        let code = output.status.code();
        if code != Some(expected) {
            return Err(BenchError::ToolFailed {
                command: args.join(" "),
                code,
                expected,
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            });
        }
        let text = std::fs::read_to_string(report.path())
            .map_err(|e| BenchError::io("reading a run's report", e))?;
        let (wall, cpu, max_rss_kib) = parse_report(&text)?;
        Ok(Run {
            wall,
            cpu,
            max_rss_kib,
        })
    }
}

/// The hidden `measure` command: runs `command` with this process's standard streams, writes
/// `WALL CPU MAX_RSS_KIB` to `report` and returns the command's exit code.
pub fn measure(report: &Path, command: &[OsString]) -> Result<i32, BenchError> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| BenchError::Unexpected("measure needs a command".to_owned()))?;
    let started = Instant::now();
    let status = std::process::Command::new(program)
        .args(args)
        .status()
        .map_err(|e| BenchError::io(format!("running {}", program.to_string_lossy()), e))?;
    let wall = started.elapsed().as_secs_f64();
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN)?;
    let cpu = seconds_of(usage.user_time()) + seconds_of(usage.system_time());
    // On Linux `ru_maxrss` is in KiB.
    let max_rss_kib = u64::try_from(usage.max_rss()).unwrap_or(0);
    std::fs::write(report, format!("{wall} {cpu} {max_rss_kib}\n"))
        .map_err(|e| BenchError::io("writing a run's report", e))?;
    Ok(status.code().unwrap_or(1))
}

fn seconds_of(time: TimeVal) -> f64 {
    // Both parts fit an f64 exactly for any realistic run.
    #[allow(clippy::cast_precision_loss)]
    let seconds = time.tv_sec() as f64 + time.tv_usec() as f64 / 1e6;
    seconds
}

fn parse_report(text: &str) -> Result<(f64, f64, u64), BenchError> {
    let bad = || BenchError::Unexpected(format!("a run's report reads {text:?}"));
    let mut fields = text.split_whitespace();
    let mut next = || fields.next().ok_or_else(bad);
    let wall = next()?.parse().map_err(|_| bad())?;
    let cpu = next()?.parse().map_err(|_| bad())?;
    let rss = next()?.parse().map_err(|_| bad())?;
    Ok((wall, cpu, rss))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_is_read_back() {
        assert_eq!(
            parse_report("0.25 0.125 40960\n").unwrap(),
            (0.25, 0.125, 40960)
        );
        assert!(parse_report("0.25").is_err());
    }

    #[test]
    fn measure_reports_the_child_and_its_exit_code() {
        let report = tempfile::NamedTempFile::new().unwrap();
        let code = measure(report.path(), &["sh".into(), "-c".into(), "exit 3".into()]).unwrap();
        assert_eq!(code, 3);
        let (wall, cpu, rss) =
            parse_report(&std::fs::read_to_string(report.path()).unwrap()).unwrap();
        assert!(wall > 0.0 && cpu >= 0.0 && rss > 0, "{wall} {cpu} {rss}");
    }
}
