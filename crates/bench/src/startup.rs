//! Start-up cost of the tool: `clusterform --version`, which loads nothing and asks nothing.

use crate::child::{Run, Tool};
use crate::error::BenchError;
use crate::progress::progress;
use crate::stats::Summary;

/// What `--version` costs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Startup {
    /// Wall time, in seconds.
    pub wall: Summary,
    /// CPU time, in seconds.
    pub cpu: Summary,
    /// Peak RSS, in KiB.
    pub rss_kib: Summary,
}

/// Runs `clusterform --version` `samples` times (it talks to no endpoint).
pub async fn measure(tool: &Tool, samples: usize) -> Result<Startup, BenchError> {
    progress(&format!(
        "start-up: `clusterform --version`, {samples} samples"
    ));
    let dir = std::env::temp_dir();
    let mut runs: Vec<Run> = Vec::with_capacity(samples);
    for _ in 0..samples {
        runs.push(tool.run(&dir, None, &["--version"], 0).await?);
    }
    let figure = |pick: fn(&Run) -> f64| {
        let values: Vec<f64> = runs.iter().map(pick).collect();
        Summary::of(&values).ok_or_else(|| BenchError::Unexpected("no samples".to_owned()))
    };
    Ok(Startup {
        wall: figure(|run| run.wall)?,
        cpu: figure(|run| run.cpu)?,
        rss_kib: figure(|run| kib(run.max_rss_kib))?,
    })
}

/// KiB as an f64 (exact: a process's KiB count is far below 2^53).
pub fn kib(value: u64) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let value = value as f64;
    value
}
