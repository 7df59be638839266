//! The hidden `serve` command: the plan-at-scale world without the measuring, so that a
//! profiler can run `clusterform plan` against it by hand (docs/benchmarks.md, "Where the
//! plan's CPU goes").

use std::path::Path;
use std::time::Duration;

use crate::child::{TOKEN, emulator_env};
use crate::error::BenchError;
use crate::fleet::Fleet;
use crate::progress::progress;
use crate::server;

/// Writes the fleet of `size` clusters over `regions` regions to `dir/main.hcl`, serves an
/// emulator seeded with the matching live clusters, prints the environment a run needs on
/// stderr, and serves until interrupted.
pub async fn serve(
    dir: &Path,
    size: usize,
    regions: usize,
    latency: Duration,
) -> Result<(), BenchError> {
    let fleet = Fleet::new(size, regions);
    std::fs::create_dir_all(dir).map_err(|e| BenchError::io("creating the directory", e))?;
    std::fs::write(dir.join("main.hcl"), fleet.hcl(4))
        .map_err(|e| BenchError::io("writing the configuration", e))?;
    let handle = server::start(latency, Duration::from_secs(1)).await?;
    for member in &fleet.members {
        handle
            .emulator()
            .insert_cluster(&member.name(), member.resource(4));
    }
    let mut lines = vec![format!("CLUSTERFORM_ACCESS_TOKEN={TOKEN}")];
    lines.extend(
        emulator_env(&handle.base_url())
            .into_iter()
            .map(|(name, value)| format!("{name}={value}")),
    );
    progress(&format!(
        "serving {size} clusters over {regions} region(s); in {}, run with:\n  env {} clusterform plan",
        dir.display(),
        lines.join(" ")
    ));
    tokio::signal::ctrl_c()
        .await
        .map_err(|e| BenchError::io("waiting for an interrupt", e))?;
    handle.shutdown().await;
    Ok(())
}
