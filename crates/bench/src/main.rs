//! clusterform-bench: measures the release `clusterform` binary side by side with the
//! baselines it is meant to beat, against the API emulator with injected latency, and writes
//! one Markdown section (see docs/benchmarks.md). Progress goes to stderr; the section goes to
//! stdout or into the `--out` file, between its markers.

mod apply;
mod child;
mod error;
mod fallback;
mod fleet;
mod machine;
mod noticing;
mod plan_scale;
mod progress;
mod report;
mod serve;
mod server;
mod startup;
mod stats;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::child::Tool;
use crate::error::BenchError;
use crate::progress::progress;
use crate::report::{Results, Settings};

/// Side-by-side benchmarks of the clusterform binary against an emulator with injected latency.
#[derive(Debug, Parser)]
#[command(version, args_conflicts_with_subcommands = true)]
struct Cli {
    /// Write the section into this Markdown file, replacing the one between the markers (or
    /// appending it); without it, print the section on stdout.
    #[arg(long)]
    out: Option<PathBuf>,
    /// A fast smoke run: small sizes, short operations, two samples.
    #[arg(long)]
    quick: bool,
    /// Latency the emulator adds to every request, in milliseconds.
    #[arg(long, default_value_t = 50)]
    latency_ms: u64,
    /// Samples per figure (default 5, or 2 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    samples: Option<u16>,
    /// The clusterform binary to measure (default: `clusterform` beside this binary, built
    /// first in this profile when run by cargo).
    #[arg(long)]
    clusterform: Option<PathBuf>,
    #[command(subcommand)]
    internal: Option<Internal>,
}

#[derive(Debug, Subcommand)]
enum Internal {
    /// Runs COMMAND and writes its wall time, CPU time and peak RSS to REPORT.
    #[command(hide = true)]
    Measure {
        /// Where the figures go.
        #[arg(long)]
        report: PathBuf,
        /// The command and its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        command: Vec<OsString>,
    },
    /// Serves the plan-at-scale world (the fleet's configuration written to DIR, an emulator
    /// seeded with its live clusters) until interrupted, for profiling a plan by hand.
    #[command(hide = true)]
    Serve {
        /// Where the fleet's `main.hcl` goes.
        #[arg(long)]
        dir: PathBuf,
        /// Clusters in the fleet.
        #[arg(long, default_value_t = 10_000)]
        clusters: usize,
        /// Regions they are dealt over (1 to 10).
        #[arg(long, default_value_t = 1)]
        regions: usize,
        /// Latency the emulator adds to every request, in milliseconds.
        #[arg(long, default_value_t = 50)]
        latency_ms: u64,
    },
}

/// What a run measures.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Sizes {
    plan: Vec<usize>,
    operations: Vec<Duration>,
    apply_clusters: usize,
    apply_operation: Duration,
    samples: usize,
}

impl Sizes {
    fn of(cli: &Cli) -> Self {
        let samples = |default: usize| cli.samples.map_or(default, usize::from);
        if cli.quick {
            Self {
                plan: vec![10, 100],
                operations: vec![Duration::from_secs(1)],
                apply_clusters: 12,
                apply_operation: Duration::from_millis(500),
                samples: samples(2),
            }
        } else {
            Self {
                plan: vec![10, 100, 1_000, 10_000],
                operations: [2, 10, 60].map(Duration::from_secs).to_vec(),
                apply_clusters: 100,
                apply_operation: Duration::from_secs(2),
                samples: samples(5),
            }
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match &cli.internal {
        Some(Internal::Measure { report, command }) => child::measure(report, command)
            .map(|code| ExitCode::from(u8::try_from(code).unwrap_or(1))),
        Some(Internal::Serve {
            dir,
            clusters,
            regions,
            latency_ms,
        }) => runtime()
            .and_then(|runtime| {
                runtime.block_on(serve::serve(
                    dir,
                    *clusters,
                    *regions,
                    Duration::from_millis(*latency_ms),
                ))
            })
            .map(|()| ExitCode::SUCCESS),
        None => run(&cli).map(|()| ExitCode::SUCCESS),
    };
    outcome.unwrap_or_else(|error| {
        progress(&format!("error: {error}"));
        ExitCode::FAILURE
    })
}

fn run(cli: &Cli) -> Result<(), BenchError> {
    let tool = locate_tool(cli.clusterform.as_deref())?;
    let sizes = Sizes::of(cli);
    let latency = Duration::from_millis(cli.latency_ms);
    let results = runtime()?.block_on(measure_all(&tool, &sizes, latency))?;
    let settings = Settings {
        latency,
        samples: sizes.samples,
        command: reproducing_command(cli),
        date: time::OffsetDateTime::now_utc().date().to_string(),
        machine: machine::Machine::current(),
        page_cap: server::list_page_cap(),
    };
    let section = report::render(&results, &settings);
    write_section(cli.out.as_deref(), &section)
}

fn runtime() -> Result<tokio::runtime::Runtime, BenchError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| BenchError::io("starting the async runtime", e))
}

async fn measure_all(tool: &Tool, sizes: &Sizes, latency: Duration) -> Result<Results, BenchError> {
    let startup = startup::measure(tool, sizes.samples).await?;
    let plan = plan_scale::measure(tool, &sizes.plan, latency, sizes.samples).await?;
    let page_caps = match page_cap_case(&plan) {
        Some(case) => plan_scale::measure_page_caps(tool, case, latency, sizes.samples).await?,
        None => Vec::new(),
    };
    let apply = apply::measure(
        tool,
        sizes.apply_clusters,
        sizes.apply_operation,
        latency,
        sizes.samples,
    )
    .await?;
    let fallback = fallback::measure(tool, sizes.apply_operation, latency, sizes.samples).await?;
    let noticing = noticing::measure(&sizes.operations, latency, sizes.samples).await?;
    Ok(Results {
        plan,
        page_caps,
        noticing,
        apply,
        fallback,
        startup,
    })
}

/// The one-region case whose plan is measured again at other List page caps: the size of the
/// Get-per-cluster target, or the largest measured below it (in a quick run).
fn page_cap_case(plan: &[plan_scale::PlanCase]) -> Option<&plan_scale::PlanCase> {
    plan.iter()
        .filter(|case| case.regions == 1 && case.size <= report::GET_TARGET_SIZE)
        .max_by_key(|case| case.size)
}

/// The binary to measure: the one given, or `clusterform` beside this one — built first when
/// cargo runs this benchmark, so that the figures are always of the current source.
fn locate_tool(given: Option<&Path>) -> Result<Tool, BenchError> {
    let wrapper =
        std::env::current_exe().map_err(|e| BenchError::io("finding this executable", e))?;
    let exe = match given {
        Some(path) => path.to_owned(),
        None => {
            let beside =
                wrapper.with_file_name(format!("clusterform{}", std::env::consts::EXE_SUFFIX));
            if let Some(cargo) = std::env::var_os("CARGO") {
                build_tool(&cargo, &wrapper)?;
            }
            beside
        }
    };
    if !exe.is_file() {
        return Err(BenchError::MissingTool(exe));
    }
    Ok(Tool { exe, wrapper })
}

/// `cargo build -p clusterform` in the profile this binary was built in (its directory's name).
fn build_tool(cargo: &OsString, wrapper: &Path) -> Result<(), BenchError> {
    let release = wrapper
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|name| name == "release");
    progress("building the clusterform binary to measure");
    let mut command = std::process::Command::new(cargo);
    command.args([
        "build",
        "--quiet",
        "-p",
        "clusterform",
        "--bin",
        "clusterform",
    ]);
    if release {
        command.arg("--release");
    }
    let status = command
        .stdout(Stdio::null())
        .status()
        .map_err(|e| BenchError::io("running cargo build", e))?;
    if !status.success() {
        return Err(BenchError::Unexpected(format!(
            "cargo build -p clusterform failed ({status})"
        )));
    }
    Ok(())
}

/// The command line that reproduces this run.
fn reproducing_command(cli: &Cli) -> String {
    let mut command = String::from("cargo run --release -p clusterform-bench --");
    if cli.quick {
        command.push_str(" --quick");
    }
    if cli.latency_ms != 50 {
        command.push_str(&format!(" --latency-ms {}", cli.latency_ms));
    }
    if let Some(samples) = cli.samples {
        command.push_str(&format!(" --samples {samples}"));
    }
    if let Some(out) = &cli.out {
        command.push_str(&format!(" --out {}", out.display()));
    }
    command
}

fn write_section(out: Option<&Path>, section: &str) -> Result<(), BenchError> {
    let Some(path) = out else {
        return std::io::stdout()
            .lock()
            .write_all(section.as_bytes())
            .map_err(|e| BenchError::io("writing to stdout", e));
    };
    let existing = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(BenchError::io(format!("reading {}", path.display()), error)),
    };
    std::fs::write(path, report::splice(&existing, section))
        .map_err(|e| BenchError::io(format!("writing {}", path.display()), e))?;
    progress(&format!("wrote {}", path.display()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_runs_are_small_and_full_runs_measure_the_issues_sizes() {
        let quick = Sizes::of(&Cli::parse_from(["clusterform-bench", "--quick"]));
        assert_eq!((quick.plan.as_slice(), quick.samples), (&[10, 100][..], 2));
        let full = Sizes::of(&Cli::parse_from(["clusterform-bench", "--samples", "3"]));
        assert_eq!(full.plan, [10, 100, 1_000, 10_000]);
        assert_eq!(full.operations, [2, 10, 60].map(Duration::from_secs));
        assert_eq!((full.apply_clusters, full.samples), (100, 3));
    }

    #[test]
    fn the_reproducing_command_names_every_non_default_option() {
        let cli = Cli::parse_from([
            "clusterform-bench",
            "--out",
            "docs/benchmarks.md",
            "--latency-ms",
            "20",
        ]);
        assert_eq!(
            reproducing_command(&cli),
            "cargo run --release -p clusterform-bench -- --latency-ms 20 --out docs/benchmarks.md"
        );
    }

    #[test]
    fn measure_takes_the_command_after_a_double_dash() {
        let cli = Cli::parse_from([
            "clusterform-bench",
            "measure",
            "--report",
            "r",
            "--",
            "x",
            "--y",
        ]);
        let Some(Internal::Measure { command, .. }) = cli.internal else {
            panic!("not measure: {cli:?}");
        };
        assert_eq!(command, ["x", "--y"]);
    }
}
