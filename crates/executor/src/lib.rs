//! The executor: the only crate that talks to the network.
//!
//! It is built in three layers, each importing only the ones below it. `transport` sends:
//! it authenticates ([`TokenSource`]), and both clients, the API's ([`ApiClient`]) and Cloud
//! Storage's ([`StorageClient`]), send through one exchange that retries by AIP-194. `state`
//! keeps what outlives a run: the journal of operations in flight ([`Journal`]) and the record
//! of applied changes ([`AppliedRecord`]), each a file or a Cloud Storage object whose objects
//! [`StackObjects`] names, and the stack's lock ([`RunLock`], [`StorageLock`]). `run` reads the live clusters for the planner
//! page by page, in every location of a `RefreshLocations` at once, reporting the Lists
//! refused where the configuration names nothing ([`refresh_paged`], [`RefusedList`]),
//! follows long-running operations ([`OperationWaiter`]), runs a plan with bounded concurrency
//! ([`ApplyEngine`]), reads clusters' Slurm jobs and nodes ([`read_jobs`], [`read_nodes`],
//! [`running_jobs`] for plans) and pings their controllers ([`ping`]), and decides which
//! clusters are idle for `destroy --idle-for` ([`idle_verdict`], [`inspect_idle`]), and reads
//! how healthy clusters are for `status` ([`inspect_health`], [`ClusterHealth`]). Errors
//! follow the layers: [`TransportError`], [`StateError`], and the run's [`ExecError`] holding
//! either. It never prints: progress goes through [`ProgressSink`], notes and errors are
//! returned. Decisions are documented in `docs/executor.md`.

mod run;
mod state;
mod transport;

pub use run::engine::{
    ActionOutcome, ApplyEngine, ApplyReport, DEFAULT_PARALLELISM, ProgressEvent, ProgressSink,
    Remains, Step,
};
pub use run::error::{AttemptedPool, ExecError, FailedAttempt, LeftBehind};
pub use run::health::{
    ClusterHealth, FleetTotals, Idleness, NodesNotStarting, PoolNodes, Problem, SlurmHealth,
    SlurmJobCounts, SlurmNodeCounts, SlurmReport, StartFailure, StateReading, inspect_health,
};
pub use run::idle::{IdleReport, IdleVerdict, SlurmEvidence, idle_verdict, inspect_idle};
pub use run::login::{LoginInstance, LoginNode};
pub use run::operations::{OperationWaiter, WaitOptions};
pub use run::preflight::read_preflight;
pub use run::refresh::{
    FIRST_PAGE_WITHIN, LivePages, PagePosition, RefreshWatcher, Refreshed, RefusedList, UnreadKind,
    is_refusal, refresh, refresh_paged,
};
pub use run::slurm::{
    SLURM_API_VERSIONS, SlurmJob, SlurmNode, SlurmReadError, parse_jobs, parse_nodes, ping,
    read_jobs, read_nodes, running_jobs,
};
pub use state::applied::{
    AppliedChange, AppliedEntry, AppliedRecord, AppliedRecordError, ClusterMark, Mark,
};
pub use state::error::{DocumentError, StateError};
pub use state::journal::{Journal, JournalEntry, UnusableEntry};
pub use state::location::{DocumentLocation, StackObjects};
pub use state::lock::RunLock;
pub use state::lock_info::LockInfo;
pub use state::remote_lock::{HeldLock, StorageLock};
pub use state::state_dir::StateDir;
pub use transport::api::{ApiClient, LIST_PAGE_SIZE, SlurmBodyError, SlurmReply, Submitted};
pub use transport::auth::{
    AuthEnvironment, AuthError, GcloudCli, ResolvedTokenSource, StaticToken, Token, TokenNote,
    TokenSource, default_token_source, resolve_token_source,
};
pub use transport::budget::{
    BudgetLimit, BudgetSpent, REFRESH_ANSWER_BYTES, REFRESH_PAGES, RefreshBudget, RefreshMeter,
};
pub use transport::error::TransportError;
pub use transport::options::{ClientOptions, MAX_ANSWER_BYTES};
pub use transport::preflight::{
    PreflightClient, PreflightEndpointError, emulator_preflight_endpoint,
    emulator_preflight_variables,
};
pub use transport::redact::{redact_endpoint, redact_userinfo};
pub use transport::retry::RetryPolicy;
pub use transport::storage::{Generation, STORAGE_ENDPOINT, StorageClient, StorageError};
