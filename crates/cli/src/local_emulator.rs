//! `endpoint = "local"`: the emulator running inside the CLI process, its state kept in
//! `.clusterform/emulator.json` of the configuration directory so clusters survive between
//! runs, with short operations so the quick start finishes in seconds, and answering with
//! project numbers where the configuration names project IDs, as the real service may.

use std::path::Path;
use std::time::Duration;

use clusterform_emulator::{Emulator, EmulatorHandle, EmulatorOptions};
use clusterform_executor::StateDir;
use clusterform_model::preflight::PreflightApi;

use crate::error::CliError;

/// How long local operations take unless `CLUSTERFORM_LOCAL_OPERATION_SECONDS` says otherwise:
/// long enough to watch the progress, short enough for a quick start.
const DEFAULT_OPERATION_SECONDS: f64 = 8.0;

/// The in-process emulator.
#[derive(Debug)]
pub struct LocalEmulator {
    handle: EmulatorHandle,
}

impl LocalEmulator {
    /// The token the CLI sends to its own emulator.
    pub const TOKEN: &'static str = "local-emulator";

    /// Starts the emulator on a free loopback port with its state in `dir/.clusterform`.
    pub async fn start(dir: &Path) -> Result<Self, CliError> {
        let state_dir = StateDir::of(dir);
        state_dir.create().map_err(|source| CliError::Io {
            action: "could not create",
            path: state_dir.path().to_path_buf(),
            source,
        })?;
        let seconds = crate::environment::var("CLUSTERFORM_LOCAL_OPERATION_SECONDS")?
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .unwrap_or(DEFAULT_OPERATION_SECONDS);
        let options = EmulatorOptions {
            operation_duration: Duration::from_secs_f64(seconds),
            state_file: Some(state_dir.emulator_state_file()),
            required_token: Some(Self::TOKEN.to_owned()),
            // Names carry project numbers, as the real service's may.
            project_numbers: true,
            ..EmulatorOptions::default()
        };
        let emulator = Emulator::new(options)?;
        let handle = emulator
            .serve(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
            .await?;
        Ok(Self { handle })
    }

    /// A Cloud Storage emulator for a stack lock when the API is the built-in emulator: kept
    /// in memory and private to this process, its buckets created on first use so any
    /// configured bucket works.
    pub async fn start_storage() -> Result<Self, CliError> {
        let options = EmulatorOptions {
            required_token: Some(Self::TOKEN.to_owned()),
            create_buckets_on_use: true,
            ..EmulatorOptions::default()
        };
        let handle = Emulator::new(options)?
            .serve(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
            .await?;
        Ok(Self { handle })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        self.handle.base_url()
    }

    /// Where the emulator serves `api`, one of preflight's: each under its own path prefix
    /// (Service Usage under `/serviceusage`, Filestore under `/file`, Managed Lustre under
    /// `/lustre`, Resource Manager under `/cloudresourcemanager`, IAM under `/iam`; Compute
    /// Engine and Cloud Storage under their own `/compute/v1` and `/storage/v1`), so that the
    /// client's paths, joined to this, reach it.
    pub fn preflight_endpoint(&self, api: PreflightApi) -> String {
        let prefix = match api {
            PreflightApi::ServiceUsage => "/serviceusage",
            PreflightApi::Filestore => "/file",
            PreflightApi::Lustre => "/lustre",
            PreflightApi::ResourceManager => "/cloudresourcemanager",
            PreflightApi::Iam => "/iam",
            PreflightApi::Compute | PreflightApi::Storage => "",
        };
        format!("{}{prefix}", self.base_url())
    }
}
