//! The binary's error type: wraps each library's typed error and adds hints for the user.

use std::path::{Path, PathBuf};

use clusterform_config::Diagnostics;
use clusterform_executor::{ExecError, StateError, TransportError};
use clusterform_model::Location;
use clusterform_planner::{ChangedFile, PlanError, PlanFileError};

/// Everything that can make a command fail.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The async runtime could not start.
    #[error("could not start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The configuration has errors (rendered by the printer as diagnostics).
    #[error("{0}")]
    Diagnostics(Diagnostics),
    /// Planning failed.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A plan file could not be written or read.
    #[error(transparent)]
    PlanFile(#[from] PlanFileError),
    /// A call to the API failed.
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// No credentials could be found.
    #[error(transparent)]
    Auth(#[from] clusterform_executor::AuthError),
    /// No credentials could be found for an endpoint on this machine, an emulator's most likely.
    #[error(transparent)]
    NoTokenForLoopback(clusterform_executor::AuthError),
    /// Another command in the same directory serves the built-in emulator from its state.
    #[error(
        "another clusterform command in {} is using the built-in emulator (`endpoint = \"local\"`): it serves one command at a time from {}",
        dir.display(),
        state_file.display()
    )]
    LocalEmulatorBusy {
        /// The configuration directory.
        dir: PathBuf,
        /// The emulator's state file there.
        state_file: PathBuf,
    },
    /// The local emulator failed.
    #[error("the local emulator failed: {0}")]
    Emulator(#[from] clusterform_emulator::EmulatorError),
    /// A preflight endpoint cannot be used.
    #[error(transparent)]
    PreflightEndpoint(#[from] clusterform_executor::PreflightEndpointError),
    /// Preflight found what would make the plan's creates fail (each told above).
    #[error("preflight found {errors} problem{} that would make applying this plan fail", if *.errors == 1 { "" } else { "s" })]
    Preflight {
        /// How many.
        errors: usize,
    },
    /// A file could not be read or written.
    #[error("{action} {path}: {source}")]
    Io {
        /// What we were doing.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// Confirmation is needed but nobody can give it.
    #[error("no terminal to ask for confirmation, and --auto-approve was not given")]
    NoTerminalToConfirm,
    /// `destroy` needs confirmation but nobody can give it.
    #[error("no terminal to ask for confirmation, and --auto-approve was not given")]
    NoTerminalToConfirmDestroy {
        /// `--idle-for`, in seconds, when the destroy deletes only idle clusters.
        idle_for: Option<u64>,
    },
    /// `force-unlock` needs confirmation but nobody can give it.
    #[error("no terminal to ask for confirmation, and --auto-approve was not given")]
    NoTerminalToConfirmUnlock {
        /// The lock ID given, which the hint repeats.
        lock_id: String,
        /// The configuration directory given.
        dir: PathBuf,
    },
    /// A saved plan no longer matches the live clusters.
    #[error("the saved plan is stale:\n  {}", .0.join("\n  "))]
    StalePlan(Vec<String>),
    /// A saved plan's changes are not what its configuration and the live clusters give.
    #[error(
        "the saved plan does not match what its configuration gives now; nothing was applied:\n  {}",
        .0.join("\n  ")
    )]
    SavedPlanMismatch(Vec<String>),
    /// A saved plan was made from another configuration.
    #[error(
        "the saved plan was made from a different configuration in {}: {}",
        directory.display(),
        changed_files(files, planned, current)
    )]
    ConfigChanged {
        /// The configuration directory the plan records.
        directory: PathBuf,
        /// The files that are not as they were when the plan was made.
        files: Vec<ChangedFile>,
        /// Digest in the plan.
        planned: String,
        /// Digest of the configuration now.
        current: String,
    },
    /// A saved plan's configuration directory is no longer where the plan records it.
    #[error(
        "the saved plan records its configuration directory as {}, and there is no directory there now",
        .0.display()
    )]
    PlanDirectoryGone(PathBuf),
    /// A saved plan was made against another endpoint.
    #[error(
        "the saved plan was made against endpoint `{planned}`, not `{current}`: its live clusters were read there"
    )]
    PlanEndpointChanged {
        /// The endpoint in the plan.
        planned: String,
        /// The endpoint this run would use.
        current: String,
    },
    /// One cluster's action failed.
    #[error("{action} of cluster {cluster} failed: {reason}")]
    ActionFailed {
        /// "Creation", "Update", …
        action: &'static str,
        /// The cluster ID.
        cluster: String,
        /// Why (the executor's error, rendered).
        reason: String,
        /// The executor's hint.
        hint: Option<String>,
    },
    /// An unattended run would stop running work on a cluster (printed once per cluster,
    /// before [`CliError::DisruptionRefused`]).
    #[error("{verb} cluster {cluster} would stop {stopped}")]
    StopsRunningWork {
        /// "replacing", "destroying", "updating".
        verb: &'static str,
        /// The cluster ID.
        cluster: String,
        /// What it stops, in words.
        stopped: String,
    },
    /// An unattended run refused changes that stop running work; nothing was sent.
    #[error(
        "{clusters} {} would stop running work, and nobody was asked: nothing was changed",
        if *clusters == 1 { "change" } else { "changes" }
    )]
    DisruptionRefused {
        /// How many changes were refused.
        clusters: usize,
        /// How to go ahead all the same, e.g. "run the same command with --allow-disruption".
        go_ahead: String,
    },
    /// The cluster belongs to another stack.
    #[error("cluster {cluster} belongs to stack {owner}")]
    OwnedElsewhere {
        /// The cluster ID.
        cluster: String,
        /// The stack in its label.
        owner: String,
    },
    /// An operation finished with an error.
    #[error("{what} failed: {status}")]
    OperationFailed {
        /// What was being done.
        what: String,
        /// The operation's error.
        status: clusterform_model::Status,
    },
    /// Some actions failed (each was already reported).
    #[error("{failed} of {total} actions failed")]
    ActionsFailed {
        /// How many failed.
        failed: usize,
        /// How many ran.
        total: usize,
    },
    /// The user interrupted waiting. Not printed: the first Ctrl-C already said so, in one
    /// line ([`crate::printer::Printer::interrupted`]).
    #[error("interrupted; operations still running are recorded in the journal")]
    Interrupted,
    /// A destroy could not list some locations the configuration does not name: clusters of
    /// the stack there, if any, were not destroyed.
    #[error(
        "destroy incomplete: {destroyed} destroyed, but the clusters of {} could not be listed; any clusters of this stack there were not destroyed",
        shown_locations(unread)
    )]
    DestroyIncomplete {
        /// How many clusters this run destroyed.
        destroyed: usize,
        /// The locations whose List was refused.
        unread: Vec<Location>,
    },
    /// `list` or `status` printed what it could read, but the Lists of some locations the
    /// configuration does not name kept failing: the view lacks whatever is there.
    #[error(
        "the clusters of {} could not be listed (the List kept failing): what is shown lacks any cluster there",
        shown_locations(failing)
    )]
    ViewIncomplete {
        /// The locations whose List kept failing.
        failing: Vec<Location>,
    },
    /// Locations that the configuration names, or that hold clusters of the stack, could not be
    /// listed: their clusters were left as they are; the rest of the plan ran.
    #[error("{}", unread_text(unread))]
    LocationsUnread {
        /// Each such location, with the clusters known to be there.
        unread: Vec<clusterform_model::UnreadLocation>,
    },
    /// The stack is the directory's name (allowed only with the local emulator), but the
    /// endpoint was overridden to a real one.
    #[error(
        "the stack `{stack}` is only the directory's name, which may not own clusters at {endpoint}"
    )]
    DirectoryNameStack {
        /// The stack name taken from the directory.
        stack: String,
        /// The effective endpoint (`--endpoint` / `CLUSTERFORM_ENDPOINT`).
        endpoint: String,
    },
    /// An environment variable clusterform reads is not UTF-8 (its value is never shown: it
    /// may be a token).
    #[error("the environment variable {0} is not valid UTF-8")]
    NonUnicodeVariable(String),
    /// Arguments that do not fit together or a value that is wrong.
    #[error("{0}")]
    Usage(String),
    /// A cluster asked for does not exist.
    #[error("cluster {0} was not found")]
    ClusterNotFound(String),
    /// `import ID` without `--region` found the ID in several locations.
    #[error("cluster {id} exists in {} locations: {}", .at.len(), .at.iter().map(|a| format!("{}/{}", a.project(), a.region())).collect::<Vec<_>>().join(", "))]
    FoundInSeveral {
        /// The cluster ID.
        id: String,
        /// Where it was found, in address order.
        at: Vec<clusterform_model::ClusterName>,
    },
    /// `import ID` without `--region` found the ID in none of the locations it looked in.
    #[error("cluster {id} was not found in any of the {searched} locations looked in{}", unread_suffix(.unread))]
    NotFoundAnywhere {
        /// The cluster ID.
        id: String,
        /// How many locations were looked in.
        searched: usize,
        /// The locations that could not be read, each with why.
        unread: Vec<(Location, String)>,
    },
    /// Files that `fmt --check` would change.
    #[error("{} file(s) are not formatted: {}", .0.len(), .0.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    Unformatted(Vec<PathBuf>),
    /// `fmt --check` of a directory that holds no `*.hcl` file: passing would check nothing.
    #[error("{} holds no *.hcl file: fmt --check has nothing to check", .0.display())]
    NothingToCheck(PathBuf),
    /// The failure was already shown in full (e.g. `validate --json`); exit 1 silently.
    #[error("")]
    AlreadyReported,
    /// `force-unlock` of a configuration whose lock is local.
    #[error("{} has no remote lock: its lock is local, and the operating system releases it when the run holding it ends", .0.display())]
    LocalLockNotForced(PathBuf),
    /// `force-unlock` found no lock to remove.
    #[error("the stack is not locked: {0} does not exist")]
    NotLocked(String),
    /// `force-unlock` was given another ID than the lock's.
    #[error("the lock {location} has another ID than {given}: it is held by {holder}")]
    LockIdMismatch {
        /// The ID given.
        given: String,
        /// `gs://BUCKET/OBJECT`.
        location: String,
        /// Who holds it now.
        holder: String,
    },
    /// The prompt failed.
    #[error("could not read the answer: {0}")]
    Prompt(#[from] dialoguer::Error),
}

/// `main.hcl changed; extra.hcl is new`: each file that is not as it was; the digests when
/// every file is (what differs is then a variable's value).
fn changed_files(files: &[ChangedFile], planned: &str, current: &str) -> String {
    if files.is_empty() {
        return format!("its digest was {planned}, it is {current} now");
    }
    files
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// `; 2 could not be read: my-proj/us-east1 (…), …` for the locations `import` could not read.
fn unread_suffix(unread: &[(Location, String)]) -> String {
    if unread.is_empty() {
        return String::new();
    }
    format!(
        "; {} could not be read: {}",
        unread.len(),
        unread_places(unread)
    )
}

/// `my-proj/us-east1 (why), …`: locations that could not be read, each with why.
pub fn unread_places(unread: &[(Location, String)]) -> String {
    unread
        .iter()
        .map(|(location, why)| format!("{}/{} ({why})", location.project(), location.region()))
        .collect::<Vec<_>>()
        .join(", ")
}

impl From<TransportError> for CliError {
    fn from(error: TransportError) -> Self {
        Self::Exec(error.into())
    }
}

impl From<StateError> for CliError {
    fn from(error: StateError) -> Self {
        Self::Exec(error.into())
    }
}

impl CliError {
    /// What the user can do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            Self::Plan(err) => crate::hints::plan_hint(err),
            Self::Exec(err) => crate::hints::exec_hint(err),
            Self::ActionFailed { hint, .. } => hint.clone(),
            Self::StopsRunningWork { .. } => None,
            Self::NoTokenForLoopback(_) => Some(
                "an emulator on this machine accepts any token: `export CLUSTERFORM_ACCESS_TOKEN=anything` (clusterform emulator says so when it starts)".to_owned(),
            ),
            Self::PreflightEndpoint(error) => Some(format!(
                "fix `{key} = ...` in the provider's `preflight_endpoints` block, or {variable}",
                key = error.api.key(),
                variable = error.api.environment_variable()
            )),
            Self::Preflight { .. } => Some(
                "fix what each error above names, or run again with --skip-preflight to go ahead all the same (the errors are then warnings)".into(),
            ),
            Self::DisruptionRefused { go_ahead, .. } => Some(format!(
                "wait for the jobs to end (or drain the pools) and run again; to stop them all the same, {go_ahead}"
            )),
            Self::FoundInSeveral { id, at } => at.first().map(|first| {
                format!(
                    "pick one with --project and --region, e.g. `clusterform import {id} --project {} --region {}`",
                    first.project(),
                    first.region()
                )
            }),
            Self::NotFoundAnywhere { .. } => Some(
                "check the ID; a cluster in a project or region the configuration does not name is imported with --project P --region R"
                    .into(),
            ),
            Self::OwnedElsewhere { cluster, owner } => Some(format!(
                "release it in stack {owner}'s configuration first: replace its cluster block there with `removed {{ cluster = \"{cluster}\" }}` and apply (the cluster is kept, only its label goes), then import it here. Deleting its block there instead would destroy the cluster"
            )),
            Self::LocalEmulatorBusy { state_file, .. } => Some(format!(
                "wait for that command to finish; if it is a `clusterform emulator` serving this state, give this command the `--endpoint` it printed; to run commands side by side, serve the state with `clusterform emulator --state {}` and give each command that `--endpoint`",
                state_file.display()
            )),
            Self::NoTerminalToConfirm => {
                Some("run with --auto-approve, or save a plan with `plan --out FILE` and `apply FILE`".into())
            }
            Self::NoTerminalToConfirmDestroy { idle_for: None } => {
                Some(crate::hints::DESTROY_WITHOUT_TERMINAL.into())
            }
            Self::NoTerminalToConfirmDestroy {
                idle_for: Some(seconds),
            } => Some(crate::hints::idle_destroy_without_terminal(*seconds)),
            Self::NoTerminalToConfirmUnlock { lock_id, dir } => {
                let dir = if dir == Path::new(".") {
                    String::new()
                } else {
                    format!(" {}", dir.display())
                };
                Some(format!(
                    "check that no run holds the lock any more, then run `clusterform force-unlock {lock_id}{dir} --auto-approve`"
                ))
            }
            Self::PlanEndpointChanged { planned, .. } => Some(format!(
                "apply it against `{planned}` (set --endpoint, CLUSTERFORM_ENDPOINT or the provider's \
                 `endpoint` as when it was made), or run `clusterform plan --out FILE` again here"
            )),
            Self::SavedPlanMismatch(_) => Some(
                "a plan file is applied only as `clusterform plan --out FILE` wrote it: make the \
                 plan again, review it with `clusterform show FILE`, then apply the new file"
                    .into(),
            ),
            Self::PlanDirectoryGone(directory) => Some(format!(
                "a saved plan applies to the directory it was made in: move the configuration back to {}, or make the plan again where it is now (`clusterform plan --out FILE`)",
                directory.display()
            )),
            Self::StalePlan(_) | Self::ConfigChanged { .. } => {
                Some("run `clusterform plan --out FILE` again, review it, then apply the new plan".into())
            }
            Self::LocationsUnread { .. } => Some(
                "run the command again once the service answers there (the warning above has its answer); nothing else waits for it: the other clusters were planned as usual".into(),
            ),
            Self::ViewIncomplete { .. } => Some(
                "run the command again once the service answers there; the warning above has its last answer".into(),
            ),
            Self::DestroyIncomplete { .. } => Some(
                "the warning above says why each List was refused; run `clusterform destroy` again once they answer (or once the caller may list them)".into(),
            ),
            Self::DirectoryNameStack { stack, .. } => Some(format!(
                "set `stack = \"...\"` in the provider block, a name unique to this configuration \
                 (it labels the clusters it owns; two directories called `{stack}` must not share one), \
                 or drop --endpoint / CLUSTERFORM_ENDPOINT to use the built-in emulator"
            )),
            Self::NonUnicodeVariable(name) => {
                Some(format!("set {name} to UTF-8 text, or unset it"))
            }
            Self::LocalLockNotForced(_) => Some(
                "nothing to remove: a local lock never outlives its run; wait for that run to finish (`--lock-timeout`)"
                    .into(),
            ),
            Self::LockIdMismatch { .. } => Some(
                "the lock was taken again since that ID was printed; only remove a lock whose run is known to be dead, by the ID shown now"
                    .into(),
            ),
            Self::Unformatted(_) => Some("run `clusterform fmt` to rewrite them".into()),
            Self::NothingToCheck(_) => {
                Some("name the configuration directory, or the files to check".into())
            }
            Self::ActionsFailed { .. } => Some(
                "fix the cause above and run `clusterform apply` again; finished clusters are not touched twice"
                    .into(),
            ),
            _ => None,
        }
    }
}

/// `P/R, P/R and P/R`.
/// `the clusters of my-proj/us-central1 (train01, train02) could not be read: …`.
fn unread_text(unread: &[clusterform_model::UnreadLocation]) -> String {
    let each: Vec<String> = unread
        .iter()
        .map(|location| {
            let place = format!(
                "{}/{}",
                location.location.project(),
                location.location.region()
            );
            if location.held.is_empty() {
                place
            } else {
                let ids: Vec<String> = location.held.iter().map(ToString::to_string).collect();
                format!("{place} ({})", ids.join(", "))
            }
        })
        .collect();
    format!(
        "the clusters of {} could not be listed: they were left as they are, and the run is \
         incomplete",
        each.join("; ")
    )
}

fn shown_locations(locations: &[Location]) -> String {
    let shown: Vec<String> = locations
        .iter()
        .map(|location| format!("{}/{}", location.project(), location.region()))
        .collect();
    match shown.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}
