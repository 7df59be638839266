//! The ways a benchmark run fails. Every failure stops the run: a benchmark that measured
//! something other than what it claims (a plan that found changes, an apply that failed) must
//! not produce a table.

use std::path::PathBuf;

/// Why the benchmark could not run to the end.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The emulator could not be started.
    #[error("the emulator: {0}")]
    Emulator(#[from] clusterform_emulator::EmulatorError),
    /// The executor's client failed (a Get).
    #[error("the API client: {0}")]
    Transport(#[from] clusterform_executor::TransportError),
    /// Waiting for an operation failed.
    #[error("the API client: {0}")]
    Exec(#[from] clusterform_executor::ExecError),
    /// A plain HTTP call of a baseline failed.
    #[error("{what}: {source}")]
    Http {
        /// Which call.
        what: String,
        /// The HTTP client's error.
        source: reqwest::Error,
    },
    /// A file or process operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The `clusterform` binary to measure is not there.
    #[error(
        "no clusterform binary at {0}: build it (`cargo build --release -p clusterform`) or pass --clusterform PATH"
    )]
    MissingTool(PathBuf),
    /// A `clusterform` run ended with an unexpected exit code.
    #[error("`clusterform {command}` exited with {code:?} (expected {expected}):\n{stderr}")]
    ToolFailed {
        /// The arguments given.
        command: String,
        /// Its exit code (`None` when killed by a signal).
        code: Option<i32>,
        /// The exit code expected.
        expected: i32,
        /// What it printed on stderr.
        stderr: String,
    },
    /// An answer of the emulator did not have the expected shape.
    #[error("unexpected answer: {0}")]
    Unexpected(String),
    /// The resource usage of a child could not be read.
    #[error("getrusage: {0}")]
    Rusage(#[from] nix::Error),
}

impl BenchError {
    /// An I/O error with what was being done.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            what: what.into(),
            source,
        }
    }

    /// An HTTP error with the call that failed.
    pub fn http(what: impl Into<String>, source: reqwest::Error) -> Self {
        Self::Http {
            what: what.into(),
            source,
        }
    }
}
