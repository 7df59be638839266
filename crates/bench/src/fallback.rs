//! A capacity fallback: `clusterform apply --auto-approve` of one new GPU cluster whose primary
//! machine type stocks out (its GPU pool's nodes are static: asked for at create), against the
//! floor — the refresh's List page, then three requests
//! one after another, each one round trip plus its operation: the create that fails, the
//! delete of the cluster it left behind, and the create of the fallback alternative. Following
//! each operation adds nothing to the floor (a `:wait` sent while it runs answers when it
//! ends), so what the tool adds is its own round trips and its noticing.

use std::time::Duration;

use clusterform_emulator::{CapacityFailure, CapacityFailureKind};

use crate::child::Tool;
use crate::error::BenchError;
use crate::fleet::{Member, PROJECT, REGIONS, STACK};
use crate::progress::progress;
use crate::server;
use crate::stats::Summary;

/// The machine type that stocks out.
pub const PRIMARY: &str = "a4-highgpu-8g";
/// The fallback alternative's machine type, which the emulator has.
pub const FALLBACK: &str = "a3-ultragpu-8g";
/// The requests (with an operation each) the floor holds: failed create, delete, create.
pub const OPERATIONS: u32 = 3;

/// The fallback case.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FallbackCase {
    /// How long each operation ran (the failed create's, the delete's and the create's).
    pub operation: Duration,
    /// Wall time of `clusterform apply`, in seconds.
    pub ours: Summary,
    /// The floor, in seconds.
    pub floor: f64,
}

/// The floor of a create that stocks out and falls back once: one List page, then
/// [`OPERATIONS`] requests of one round trip and `operation` each.
pub fn floor(latency: Duration, operation: Duration) -> f64 {
    (latency + (latency + operation) * OPERATIONS).as_secs_f64()
}

/// Measures `samples` applies, each on a fresh emulator whose [`PRIMARY`] machines are out of
/// stock, and checks that each one ended on the fallback.
pub async fn measure(
    tool: &Tool,
    operation: Duration,
    latency: Duration,
    samples: usize,
) -> Result<FallbackCase, BenchError> {
    progress(&format!(
        "fallback: a create that stocks out and falls back, {} s operations, {samples} samples",
        operation.as_secs_f64()
    ));
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        times.push(apply_once(tool, operation, latency).await?);
    }
    Ok(FallbackCase {
        operation,
        ours: Summary::of(&times).ok_or_else(|| BenchError::Unexpected("no samples".to_owned()))?,
        floor: floor(latency, operation),
    })
}

async fn apply_once(
    tool: &Tool,
    operation: Duration,
    latency: Duration,
) -> Result<f64, BenchError> {
    let member = Member {
        id: "gpu00".to_owned(),
        region: REGIONS[0],
    };
    let handle = server::start(latency, operation).await?;
    handle
        .emulator()
        .set_capacity_failures(vec![CapacityFailure {
            machine_type: PRIMARY.to_owned(),
            zone: None,
            kind: CapacityFailureKind::Stockout,
            times: None,
        }]);
    let dir = tempfile::tempdir().map_err(|e| BenchError::io("creating a temp dir", e))?;
    std::fs::write(dir.path().join("main.hcl"), hcl(&member))
        .map_err(|e| BenchError::io("writing the configuration", e))?;
    let run = tool
        .run(
            dir.path(),
            Some(&handle.base_url()),
            &["apply", "--auto-approve"],
            0,
        )
        .await;
    let landed = handle.emulator().cluster(&member.name());
    handle.shutdown().await;
    let run = run?;
    let machine = landed
        .as_ref()
        .and_then(|cluster| cluster["nodePools"][1]["machineSpec"]["machineType"].as_str());
    if machine != Some(FALLBACK) {
        return Err(BenchError::Unexpected(format!(
            "the apply did not end on the fallback: {landed:?}"
        )));
    }
    Ok(run.wall)
}

/// One cluster whose GPU pool asks for [`PRIMARY`] machines and falls back to [`FALLBACK`]. Its
/// nodes are static (`min_node_count` 2): a create asks only for a pool's static nodes, so
/// only such a pool can stock out at create and walk the chain.
fn hcl(member: &Member) -> String {
    let Member { id, region } = member;
    format!(
        r#"provider "google" {{
  project = "{PROJECT}"
  region  = "{region}"
  stack   = "{STACK}"
}}

cluster "{id}" {{
  network {{
    network    = "projects/{PROJECT}/global/networks/default"
    subnetwork = "projects/{PROJECT}/regions/{region}/subnetworks/default"
  }}

  node_pool "login" {{
    machine_spec {{ machine_type = "n2-standard-8" }}
    scaling_spec {{
      min_node_count = 1
      max_node_count = 1
    }}
    zone = "{region}-b"
  }}

  node_pool "gpu" {{
    machine_spec {{
      machine_type      = "{PRIMARY}"
      accelerator_type  = "NVIDIA_B200"
      accelerator_count = 8
    }}
    scaling_spec {{
      min_node_count = 2
      max_node_count = 2
    }}
    provisioning_model = "SPOT"
    zone               = "{region}-b"

    fallback {{
      machine_spec {{
        machine_type      = "{FALLBACK}"
        accelerator_type  = "NVIDIA_H200_141GB"
        accelerator_count = 8
      }}
    }}
  }}

  orchestrator_spec {{
    slurm_spec {{
      home_directory_storage = "projects/{PROJECT}/locations/{region}-b/instances/home"
      login_node_pool_id     = "login"
      partition "gpu" {{
        node_pool_ids = ["gpu"]
      }}
    }}
  }}
}}
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_is_one_page_and_three_operations_one_after_another() {
        // 50 ms + 3 × (50 ms + 2 s)
        let floor = floor(Duration::from_millis(50), Duration::from_secs(2));
        assert!((floor - 6.2).abs() < 1e-9, "{floor}");
    }
}
