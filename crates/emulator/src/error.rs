//! The errors of the emulator library itself (as opposed to the API errors it
//! answers over HTTP, see `api_error`).

use std::net::SocketAddr;
use std::path::PathBuf;

/// What can go wrong starting, loading or persisting the emulator.
#[derive(Debug, thiserror::Error)]
pub enum EmulatorError {
    /// The state file exists but could not be read.
    #[error("cannot read the emulator state file {path}: {source}")]
    ReadState {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The state file exists but is a device, FIFO, socket or directory.
    #[error("the emulator state file {path} is {kind}, not a regular file")]
    StateNotAFile { path: PathBuf, kind: &'static str },
    /// The state file is not valid emulator state.
    #[error("the emulator state file {path} is corrupt: {source}")]
    CorruptState {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// The state file was written by an incompatible emulator.
    #[error(
        "the emulator state file {path} has format version {found}; this emulator reads version {expected}"
    )]
    StateVersion {
        path: PathBuf,
        found: u32,
        expected: u32,
    },
    /// Another emulator (another process, or another emulator in this one) serves from the
    /// same state file: two writers would lose each other's updates.
    #[error("the emulator state file {path} is in use by another emulator (locked through {lock})")]
    StateInUse { path: PathBuf, lock: PathBuf },
    /// The state file's lock could not be taken.
    #[error("cannot lock the emulator state file {path} through {lock}: {source}")]
    LockState {
        path: PathBuf,
        lock: PathBuf,
        source: std::io::Error,
    },
    /// The state could not be written.
    #[error("cannot write the emulator state file {path}: {source}")]
    WriteState {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A preflight world (`--preflight-world`) is not the JSON the admin API takes.
    #[error("invalid preflight world: {reason}")]
    PreflightWorld { reason: String },
    /// The listening socket could not be opened.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}
