//! Hints: what a user can do about a library's error, worded in terms of this binary's commands
//! and flags (`clusterform import`, `--target`). The libraries say what went wrong; only the
//! binary knows how its user can fix it.

use std::path::Path;

use clusterform_config::{CommandLineReason, Diagnostic};
use clusterform_executor::{ExecError, FailedAttempt, LeftBehind, StateError, TransportError};
use clusterform_model::{Attempt, Code, Shortage};
use clusterform_planner::PlanError;

/// `destroy` with nobody to confirm it: approve it on the command line, or review it first as a
/// saved destroy plan.
pub const DESTROY_WITHOUT_TERMINAL: &str = "run with --auto-approve, or review the destroy first: \
`clusterform plan --destroy --out FILE`, then `clusterform apply FILE`";

/// The hint of an idle destroy without a terminal: the same idle destroy, unattended or saved
/// for review; never a plan of a wider scope.
pub fn idle_destroy_without_terminal(seconds: u64) -> String {
    let threshold = clusterform_model::duration::Seconds(seconds);
    format!(
        "run with --auto-approve, or review the idle destroy first: `clusterform plan --destroy \
         --idle-for {threshold} --out FILE`, then `clusterform apply FILE` (which deletes only \
         the clusters still idle then)"
    )
}

/// A configuration diagnostic worded for this binary: one whose [`CommandLineReason`] names the
/// command line gets the message or hint that names its flags and commands.
pub fn worded_diagnostic(mut item: Diagnostic) -> Diagnostic {
    let Some(reason) = &item.reason else {
        return item;
    };
    match reason {
        CommandLineReason::NoConfigurationFiles => {
            item.hint = Some(
                "run clusterform in a directory holding your configuration, or pass it as an argument"
                    .to_owned(),
            );
        }
        CommandLineReason::FileForDirectory { parent } => {
            item.hint = Some(format!(
                "pass the directory that holds it (`{parent}`): clusterform reads every *.hcl file there"
            ));
        }
        CommandLineReason::MisnamedVarFile => {
            item.hint = Some(
                "every *.hcl file is read as configuration; variables files are named *.cfvars: \
                 clusterform.cfvars and *.auto.cfvars in the configuration directory are loaded \
                 automatically, any other with --var-file"
                    .to_owned(),
            );
        }
        CommandLineReason::MissingValue { variable } => {
            item.hint = Some(format!(
                "pass `--var {variable}=VALUE`, set CLUSTERFORM_VAR_{variable}, add `{variable} = VALUE` to clusterform.cfvars or a --var-file, or give it a default"
            ));
        }
        CommandLineReason::UndeclaredVariable { variable } => {
            item.message = format!("--var sets `{variable}`, which no variable block declares");
        }
        CommandLineReason::InvalidValue { variable, problem } => {
            item.message = format!(
                "invalid value for variable `{variable}` from --var {variable}=...: {problem}"
            );
        }
        CommandLineReason::InvalidSavedValue => {
            item.hint = Some("make the plan again with `clusterform plan --out FILE`".to_owned());
        }
        _ => {}
    }
    item
}

/// The hint for a planning error.
pub fn plan_hint(error: &PlanError) -> Option<String> {
    match error {
        PlanError::Unowned { id, .. } => Some(format!(
            "run `clusterform import {id}` to adopt it into this stack, or pick another cluster ID"
        )),
        PlanError::OwnedByOtherStack { stack, .. } => Some(format!(
            "manage it from the configuration of stack `{stack}`, or pick another cluster ID"
        )),
        PlanError::PreventDestroy { .. } => Some(
            "remove `prevent_destroy = true` from the cluster's lifecycle block first, if this is intended"
                .to_owned(),
        ),
        PlanError::BrokenButProtected { .. } => Some(
            "repair the cluster in the console, or remove `prevent_destroy = true` to let clusterform replace it"
                .to_owned(),
        ),
        PlanError::RemovedPoolStillReferenced { .. } => Some(
            "set `partition` blocks and `login_node_pool_id` in the configuration so that nothing refers to the removed pool"
                .to_owned(),
        ),
        PlanError::UnknownTarget {
            closest: Some(id), ..
        } => Some(format!("did you mean `--target {id}`?")),
        PlanError::UnknownReplace {
            closest: Some(id), ..
        } => Some(format!("did you mean `--replace {id}`?")),
        PlanError::UnknownTarget { .. } | PlanError::UnknownReplace { .. } => {
            Some("use a cluster ID from the configuration (see `clusterform list`)".to_owned())
        }
        PlanError::Several(errors) => {
            let mut hints: Vec<String> = errors.iter().filter_map(plan_hint).collect();
            hints.dedup();
            (!hints.is_empty()).then(|| hints.join("\n  "))
        }
        PlanError::Encode { .. } => None,
    }
}

/// The hint for an error of the API client or the apply engine.
pub fn exec_hint(error: &ExecError) -> Option<String> {
    let hint = match error {
        ExecError::Transport(error) => return transport_hint(error),
        ExecError::State(error) => return state_hint(error),
        ExecError::Timeout { .. } => {
            "the operation may still be running: run `clusterform apply` again to resume \
             waiting, or raise the cluster's `timeouts` block"
        }
        ExecError::OperationFailed {
            cluster,
            operation,
            status,
        } if failed_on_the_service_side(status.canonical_code()) => {
            return Some(format!(
                "the service failed on its side ({}), not because of the configuration: run `clusterform apply` again (what finished is not redone); if it fails again, see `clusterform status --target {}` and give Google Cloud support the operation {operation}",
                status.code_name(),
                cluster.id()
            ));
        }
        ExecError::OperationFailed { cluster, .. }
        | ExecError::ClusterFailed { cluster, .. }
        | ExecError::OperationLost { cluster, .. } => {
            return Some(format!(
                "see the cluster's state, node errors and events with `clusterform status --target {}`; fix the configuration and apply again",
                cluster.id()
            ));
        }
        ExecError::OperationWithoutResult { .. } => NOT_SAID_WHETHER_CHANGED,
        ExecError::NoLongerDeleting { .. } => {
            "someone else acted on the cluster: run `clusterform plan` again"
        }
        ExecError::Cancelled => {
            "operations keep running on the server: run the same command again (`clusterform \
             destroy` after an interrupted destroy, else `clusterform apply`) to resume waiting"
        }
        ExecError::ListedTwice { .. } => {
            "the service's answer was inconsistent (perhaps the collection changed while it was \
             paged): run the command again; if it persists, report the List to the service's \
             support"
        }
        ExecError::UnreadableLiveName(_) => {
            "clusterform cannot address this cluster, so it stops rather than plan without it; report the name to the service's support"
        }
        ExecError::MaskPathRefused { path, cluster, .. } => {
            let id = cluster.id();
            return Some(format!(
                "only the Terraform provider's update mask vouches for `{path}`; to change it \
                 anyway, replace the cluster (this deletes it and its running jobs): \
                 `clusterform apply --replace {id}`, or undo the change in the configuration"
            ));
        }
        ExecError::OutOfMachines { attempts, left, .. } => {
            return Some(out_of_machines_hint(attempts, *left));
        }
        ExecError::TakenByAnother { .. } => {
            "the cluster ID is someone else's now: give this cluster block another ID, or ask              the owner of the cluster now under it"
        }
        ExecError::Name(_) => return None,
    };
    Some(hint.to_owned())
}

/// What to do when no attempt found machines: a quota must be raised, capacity may come back,
/// a machine type not allowed must be changed; a fallback gives the next create somewhere else
/// to go, but a chain that had several alternatives is not told to add one.
fn out_of_machines_hint(attempts: &[FailedAttempt], left: LeftBehind) -> String {
    let met = |shortage| attempts.iter().any(|a| a.shortage == shortage);
    let chained = attempts.len() > 1 || attempts.iter().any(|a| a.attempt > Attempt::DECLARED);
    let mut hints: Vec<String> = Vec::new();
    if met(Shortage::Quota) {
        hints.push(if chained {
            "request more quota for the region (Google Cloud console, IAM & Admin → Quotas)".to_owned()
        } else {
            "request more quota for the region (Google Cloud console, IAM & Admin → Quotas), or add a `fallback` block to the pool with a machine type that has quota".to_owned()
        });
    }
    if met(Shortage::Capacity) {
        hints.push(if chained {
            "the zones have none of these machines now: run `clusterform apply` again later, or change an alternative (another zone, machine type or provisioning model)".to_owned()
        } else {
            "the zone has no such machines now: run `clusterform apply` again later, or add a `fallback` block to the pool (another machine type, or another provisioning model such as FLEX_START or SPOT)".to_owned()
        });
    }
    for attempt in attempts
        .iter()
        .filter(|a| a.shortage == Shortage::NotAllowed)
    {
        hints.extend(not_allowed_hint(attempt));
    }
    if left == LeftBehind::Kept {
        hints.push(
            "the cluster stays in ERROR because of `prevent_destroy`: delete it in the console or lift the protection before the next create can use its ID".to_owned(),
        );
    }
    hints.join("\n  ")
}

/// A machine type the zone does not allow: waiting never helps; the catalogue's replacement
/// when it knows one.
fn not_allowed_hint(attempt: &FailedAttempt) -> Option<String> {
    let machine = attempt.pools.iter().find_map(|pool| {
        let machine = pool.machine_type.as_deref()?;
        attempt.message.contains(machine).then_some(machine)
    })?;
    let instead = clusterform_config::machine_caution_hint(machine)
        .map(|hint| format!(": {hint}"))
        .unwrap_or_else(|| ": choose another machine type for the pool".to_owned());
    Some(format!(
        "{machine} is not allowed for VMs there, and waiting does not change that{instead}"
    ))
}

/// A failure the service reports as its own (AIP-193: `INTERNAL`, `UNAVAILABLE`, `UNKNOWN`,
/// `DEADLINE_EXCEEDED`), where no change to the configuration helps.
fn failed_on_the_service_side(code: Code) -> bool {
    matches!(
        code,
        Code::Internal | Code::Unavailable | Code::Unknown | Code::DeadlineExceeded
    )
}

/// The commands whose last word may be the configuration directory.
const TAKES_A_DIRECTORY: &[&str] = &[
    "plan",
    "apply",
    "destroy",
    "status",
    "validate",
    "list",
    "import",
    "fmt",
    "force-unlock",
];

/// `hint` with the directory the user gave (`dir`, unless `.`) added to every command it
/// names in backticks that reads a configuration (`clusterform fmt` →
/// `clusterform fmt ex2/quickstart`), so that it can be run from where the user is. A
/// command that names a placeholder (`FILE`, `LOCK_ID`) or already names the directory is
/// left as it is.
pub fn in_directory(hint: &str, dir: Option<&Path>) -> String {
    let Some(dir) = dir.filter(|dir| *dir != Path::new(".")) else {
        return hint.to_owned();
    };
    let shown = dir.to_string_lossy();
    let quoted = shlex::try_quote(&shown).map_or_else(|_| shown.to_string(), |q| q.into_owned());
    hint.split('`')
        .enumerate()
        .map(|(index, part)| {
            let code = index % 2 == 1;
            if code && names_a_directory_command(part) && !part.contains(quoted.as_str()) {
                format!("{part} {quoted}")
            } else {
                part.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("`")
}

fn names_a_directory_command(code: &str) -> bool {
    let mut words = code.split_whitespace();
    words.next() == Some("clusterform")
        && words
            .next()
            .is_some_and(|command| TAKES_A_DIRECTORY.contains(&command))
        && !code
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(is_placeholder)
}

/// `FILE`, `LOCK_ID`, `ID`: a word the user replaces.
fn is_placeholder(word: &str) -> bool {
    word.len() > 1 && word.chars().all(|c| c.is_ascii_uppercase() || c == '_')
}

/// How an unattended `apply` or `destroy` goes ahead when it would stop running work.
pub const SAME_COMMAND_ALLOWING: &str = "run the same command with --allow-disruption";

/// The server did not say whether a change was made.
const NOT_SAID_WHETHER_CHANGED: &str = "the server did not say whether the change was made: run \
`clusterform plan` to see the cluster as it is now";

/// The server does not answer like the API.
const NOT_THE_API: &str =
    "the endpoint does not answer like the Model Development Cluster API; check --endpoint";

/// The hint for a failed call to the API.
fn transport_hint(error: &TransportError) -> Option<String> {
    let hint = match error {
        TransportError::Api { status, .. } => return api_hint(status.canonical_code()),
        TransportError::NoAnswer { .. } => {
            "check the network connection and the endpoint (--endpoint, CLUSTERFORM_ENDPOINT)"
        }
        TransportError::InsecureEndpoint { .. } => {
            "use an https:// endpoint, or http:// only to a loopback address (127.0.0.1, ::1, localhost)"
        }
        TransportError::InvalidEndpoint { .. } => {
            "an endpoint is a base URL such as https://host:port"
        }
        TransportError::Auth(_) => {
            "run `gcloud auth application-default login`, or set CLUSTERFORM_ACCESS_TOKEN"
        }
        TransportError::Decode { .. }
        | TransportError::AnswerTooLarge { .. }
        | TransportError::RefreshBudgetSpent { .. }
        | TransportError::Redirected { .. } => NOT_THE_API,
        TransportError::NotAnOperation { .. } => NOT_SAID_WHETHER_CHANGED,
        TransportError::Cancelled => return exec_hint(&ExecError::Cancelled),
        TransportError::InvalidRequest(_) | TransportError::Name(_) => return None,
    };
    Some(hint.to_owned())
}

/// The hint for an unusable journal or lock.
fn state_hint(error: &StateError) -> Option<String> {
    let hint = match error {
        StateError::Journal { .. } => {
            "check in the console that no operation is still running, then fix or delete the \
             journal (the file or object named)"
        }
        StateError::JournalStorage(_) => {
            "check that the bucket exists and that the account may read, create and delete its \
             objects (the `cloud-platform` scope covers Cloud Storage)"
        }
        StateError::UnusableJournalEntry { .. } => {
            "the operation it recorded may still be running: check the cluster in the console, \
             then fix or delete that entry; other clusters are not affected"
        }
        StateError::Locked { .. } => {
            "wait for the other run to finish (`--lock-timeout 10m` waits for it); the lock is released when it exits"
        }
        StateError::RemoteLocked {
            holder: None,
            generation,
            ..
        } => {
            return Some(format!(
                "nothing says which run wrote it: if no run is using the stack, remove it with \
                 `clusterform force-unlock {generation}`"
            ));
        }
        StateError::RemoteLocked {
            holder: Some(holder),
            ..
        } => {
            return Some(format!(
                "wait for the other run to finish (`--lock-timeout 10m` waits for it); if it died, \
                 remove its lock with `clusterform force-unlock {}`",
                holder.id
            ));
        }
        StateError::LockRateLimited { .. } => {
            "Cloud Storage takes about one write of an object a second, and something keeps \
             writing the lock object (runs started one right after another, or another tool): \
             try again in a few seconds; there is no lock to force-unlock"
        }
        StateError::LockStorage(_) => {
            "check the `lock` block's bucket, and that your credentials may create and delete its objects"
        }
        StateError::Lock { .. } => "check that the configuration directory is writable",
    };
    Some(hint.to_owned())
}

/// The hint for an API error, by its canonical code.
fn api_hint(code: Code) -> Option<String> {
    let hint = match code {
        Code::Unauthenticated => {
            "the access token was rejected: run `gcloud auth application-default login` or refresh CLUSTERFORM_ACCESS_TOKEN"
        }
        Code::PermissionDenied => {
            "the caller needs aiplatform.modelDevelopmentClusters.* permissions on the project"
        }
        Code::AlreadyExists => {
            "a cluster with this ID already exists: `clusterform import ID` adopts it"
        }
        Code::Aborted => {
            "another operation is running on the cluster: apply again once it finishes"
        }
        Code::ResourceExhausted => "a quota or rate limit was hit: check the project's quotas",
        Code::FailedPrecondition => "the cluster is not in a state that allows this change",
        Code::Unavailable => "the service is unavailable: try again later",
        _ => return None,
    };
    Some(hint.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clusterform_model::Status;

    #[test]
    fn commands_in_a_hint_are_given_the_directory_the_user_named() {
        let hint = "run `clusterform fmt` to rewrite them; see `clusterform status --target a`, \
                    `clusterform apply FILE` and `clusterform show PLANFILE`";
        assert_eq!(
            in_directory(hint, Some(Path::new("ex2/quickstart"))),
            "run `clusterform fmt ex2/quickstart` to rewrite them; see \
             `clusterform status --target a ex2/quickstart`, `clusterform apply FILE` and \
             `clusterform show PLANFILE`"
        );
        assert_eq!(in_directory(hint, Some(Path::new("."))), hint);
        assert_eq!(in_directory(hint, None), hint);
        assert_eq!(
            in_directory("run `clusterform plan`", Some(Path::new("my dir"))),
            "run `clusterform plan 'my dir'`"
        );
        let named = "run `clusterform force-unlock 4f6c envs/prod --auto-approve`";
        assert_eq!(in_directory(named, Some(Path::new("envs/prod"))), named);
    }

    #[test]
    fn a_failure_on_the_service_side_is_not_blamed_on_the_configuration() {
        let failed = |code: i64, name: Option<&str>| ExecError::OperationFailed {
            cluster: Box::new(
                "projects/my-proj/locations/us-central1/modelDevelopmentClusters/a"
                    .parse()
                    .unwrap(),
            ),
            operation: "operations/op-1".into(),
            status: Box::new(Status {
                code,
                message: "boom".into(),
                status: name.map(str::to_owned),
                details: Vec::new(),
            }),
        };
        // An operation's error numbers its code (13 is INTERNAL, 3 INVALID_ARGUMENT).
        let internal = exec_hint(&failed(13, None)).unwrap();
        assert!(
            internal.contains("failed on its side (INTERNAL), not because of the configuration"),
            "{internal}"
        );
        assert!(internal.contains("operations/op-1"), "{internal}");
        let invalid = exec_hint(&failed(3, None)).unwrap();
        assert!(invalid.contains("fix the configuration"), "{invalid}");
        // A name this version does not know is shown as the service sent it.
        let unknown = exec_hint(&failed(13, Some("BRAND_NEW"))).unwrap();
        assert!(unknown.contains("(BRAND_NEW)"), "{unknown}");
    }

    fn reasoned(message: &str, hint: Option<&str>, reason: CommandLineReason) -> Diagnostic {
        Diagnostic {
            severity: clusterform_config::Severity::Error,
            message: message.into(),
            file: "<command line>".into(),
            line: 0,
            column: 0,
            range: None,
            hint: hint.map(Into::into),
            reason: Some(reason),
        }
    }

    #[test]
    fn configuration_diagnostics_name_the_flags_that_fix_them() {
        let worded = |message, hint, reason| worded_diagnostic(reasoned(message, hint, reason));
        let missing = worded(
            "no value for variable `zone`",
            None,
            CommandLineReason::MissingValue {
                variable: "zone".into(),
            },
        );
        assert_eq!(
            missing.hint.as_deref(),
            Some(
                "pass `--var zone=VALUE`, set CLUSTERFORM_VAR_zone, add `zone = VALUE` to \
                 clusterform.cfvars or a --var-file, or give it a default"
            )
        );
        let undeclared = worded(
            "the command line sets `nope`, which no variable block declares",
            Some("declare it with `variable \"nope\" {}`"),
            CommandLineReason::UndeclaredVariable {
                variable: "nope".into(),
            },
        );
        assert_eq!(
            undeclared.message,
            "--var sets `nope`, which no variable block declares"
        );
        assert_eq!(
            undeclared.hint.as_deref(),
            Some("declare it with `variable \"nope\" {}`")
        );
        let invalid = worded(
            "invalid value for variable `count` from the command line: expected a number",
            Some("the variable's type is number"),
            CommandLineReason::InvalidValue {
                variable: "count".into(),
                problem: "expected a number, found `seven`".into(),
            },
        );
        assert_eq!(
            invalid.message,
            "invalid value for variable `count` from --var count=...: expected a number, found `seven`"
        );
        let saved = worded(
            "invalid value for variable `n` in the saved plan: expected a number",
            None,
            CommandLineReason::InvalidSavedValue,
        );
        assert_eq!(
            saved.hint.as_deref(),
            Some("make the plan again with `clusterform plan --out FILE`")
        );
    }

    #[test]
    fn configuration_files_are_named_as_the_directory_argument_takes_them() {
        let worded = |reason| worded_diagnostic(reasoned("m", None, reason)).hint.unwrap();
        assert_eq!(
            worded(CommandLineReason::NoConfigurationFiles),
            "run clusterform in a directory holding your configuration, or pass it as an argument"
        );
        assert_eq!(
            worded(CommandLineReason::FileForDirectory {
                parent: "infra".into()
            }),
            "pass the directory that holds it (`infra`): clusterform reads every *.hcl file there"
        );
        assert_eq!(
            worded(CommandLineReason::MisnamedVarFile),
            "every *.hcl file is read as configuration; variables files are named *.cfvars: \
             clusterform.cfvars and *.auto.cfvars in the configuration directory are loaded \
             automatically, any other with --var-file"
        );
    }

    fn unowned(id: &str) -> PlanError {
        PlanError::Unowned {
            id: id.into(),
            project: "p".into(),
            region: "r".into(),
            stack: "s".into(),
        }
    }

    #[test]
    fn planning_errors_point_at_the_command_that_fixes_them() {
        let hint = plan_hint(&unowned("train01")).unwrap();
        assert!(hint.contains("clusterform import train01"), "{hint}");
        let several = PlanError::Several(vec![
            unowned("train01"),
            PlanError::OwnedByOtherStack {
                id: "train02".into(),
                stack: "prod".into(),
            },
        ]);
        let hint = plan_hint(&several).unwrap();
        assert!(hint.contains("clusterform import train01"), "{hint}");
        assert!(hint.contains("stack `prod`"), "{hint}");
        let dangling = PlanError::RemovedPoolStillReferenced {
            id: "train01".into(),
            problems: vec![],
        };
        assert!(plan_hint(&dangling).unwrap().contains("login_node_pool_id"));
    }

    #[test]
    fn client_errors_point_at_the_flag_or_command_that_fixes_them() {
        let insecure = ExecError::Transport(TransportError::InsecureEndpoint {
            endpoint: "http://example.com".into(),
        });
        assert!(exec_hint(&insecure).unwrap().contains("loopback"));
        let locked = ExecError::State(StateError::Locked {
            path: "/x/.clusterform/lock".into(),
            holder: None,
            waited: std::time::Duration::ZERO,
        });
        assert!(exec_hint(&locked).unwrap().contains("--lock-timeout"));
        assert!(exec_hint(&ExecError::Cancelled).unwrap().contains("resume"));
        let unauthenticated = ExecError::Transport(TransportError::Api {
            status: Box::new(Status {
                code: 401,
                message: "no".into(),
                status: Some("UNAUTHENTICATED".into()),
                details: vec![],
            }),
            method: "GET".into(),
            url: "https://x".into(),
        });
        assert!(
            exec_hint(&unauthenticated)
                .unwrap()
                .contains("CLUSTERFORM_ACCESS_TOKEN")
        );
    }

    #[test]
    fn a_rate_limited_lock_object_is_not_said_to_need_a_force_unlock() {
        let rate_limited = ExecError::State(StateError::LockRateLimited {
            object: "gs://team-infra/clusterform/prod/ml.lock".into(),
            creates: 3,
        });
        let hint = exec_hint(&rate_limited).unwrap();
        assert!(hint.contains("try again in a few seconds"), "{hint}");
        assert!(hint.contains("no lock to force-unlock"), "{hint}");
    }
}
