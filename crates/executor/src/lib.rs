//! The executor: the only crate that talks to the network.
//!
//! It authenticates ([`auth`]), sends the API's calls with retries by AIP-194 ([`ApiClient`]),
//! reads the live clusters for the planner ([`refresh`], with Lists started while the
//! configuration still loads: [`ListPrefetch`]), follows long-running operations
//! ([`OperationWaiter`]), runs a plan with bounded concurrency while journaling every operation
//! in flight ([`ApplyEngine`], [`Journal`]), reads clusters' Slurm jobs and nodes ([`read_jobs`],
//! [`read_nodes`], [`running_jobs`] for plans) and pings their controllers ([`ping`]), and decides which clusters are idle for
//! `destroy --idle-for` ([`idle_verdict`], [`inspect_idle`]). It never prints: progress goes
//! through [`ProgressSink`], notes and errors are returned. Decisions are documented in
//! `docs/executor.md`.

pub mod auth;
mod client;
mod deadline;
mod engine;
mod error;
mod http;
mod idle;
mod journal;
mod journal_store;
mod lock;
mod operations;
mod refresh;
mod region_gate;
mod remote_lock;
mod retry;
mod slurm;
mod state_dir;
mod storage;

pub use auth::{
    AuthEnvironment, AuthError, GcloudCli, ResolvedTokenSource, StaticToken, Token, TokenSource,
    default_token_source, resolve_token_source,
};
pub use client::{
    ApiClient, ClientOptions, LIST_PAGE_SIZE, MAX_ANSWER_BYTES, MAX_LIST_PAGES, SlurmBodyError,
    SlurmReply, Submitted,
};
pub use engine::{
    ActionOutcome, ApplyEngine, ApplyReport, DEFAULT_PARALLELISM, ProgressEvent, ProgressSink, Step,
};
pub use error::ExecError;
pub use http::redact_userinfo;
pub use idle::{IdleReport, IdleVerdict, SlurmEvidence, idle_verdict, inspect_idle};
pub use journal::{Journal, JournalEntry, JournalLocation, UnusableEntry};
pub use lock::{LockInfo, RunLock};
pub use operations::{OperationWaiter, WaitOptions};
pub use refresh::{
    ListPrefetch, LivePages, PagePosition, refresh, refresh_paged, refresh_prefetched,
};
pub use remote_lock::{HeldLock, StorageLock};
pub use retry::RetryPolicy;
pub use slurm::{
    SLURM_API_VERSIONS, SlurmJob, SlurmNode, SlurmReadError, parse_jobs, parse_nodes, ping,
    read_jobs, read_nodes, running_jobs,
};
pub use state_dir::StateDir;
pub use storage::{Generation, STORAGE_ENDPOINT, StorageClient, StorageError};
