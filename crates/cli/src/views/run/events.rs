//! `apply --json` and `destroy --json`: the run as a stream of JSON events, one object per line
//! on stdout and nothing else there, for CI systems and dashboards (as Terraform's
//! `apply -json`). Every event has `type` and `@timestamp` (RFC 3339), and the cluster's
//! `address` when it concerns one; the schema is documented in `docs/events.md`.
//!
//! [`JsonEvents`] is the executor's [`ProgressSink`] for such a run: every step of every action
//! as it happens, a failed action with its typed error (`failed`) the moment it fails, and,
//! told by the commands, the plan (`planned`) and how the command ended (`summary`).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use clusterform_executor::{ApplyReport, ExecError, ProgressEvent, ProgressSink, Remains, Step};
use clusterform_model::rest::RequestKind;
use clusterform_model::{Action, ClusterName};
use clusterform_planner::{CapacityPlan, Plan, StoppedJobs, StoppedWork};
use serde_json::{Map, Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::error::CliError;
use crate::exit_status::ExitStatus;
use crate::printer::Printer;
use crate::views::Counts;

/// Writes a run's events as JSON lines on stdout.
#[derive(Debug)]
pub struct JsonEvents {
    printer: Printer,
    /// Method and path of each planned request, by cluster and kind: the engine's
    /// `Submitted` step names only the kind.
    requests: Mutex<HashMap<(ClusterName, RequestKind), (String, String)>>,
    /// The fallback plan of each planned change that has one: `fell_back` names what won.
    capacity: Mutex<HashMap<ClusterName, CapacityPlan>>,
    /// The clusters a failed replacement deleted and could not create again, for `summary`.
    missing: Mutex<Vec<ClusterName>>,
}

impl JsonEvents {
    /// Events written through `printer` as results: a printer that prints nothing else on
    /// stdout.
    pub fn new(printer: Printer) -> Self {
        Self {
            printer,
            requests: Mutex::new(HashMap::new()),
            capacity: Mutex::new(HashMap::new()),
            missing: Mutex::new(Vec::new()),
        }
    }

    /// Remembers, for `summary`, the clusters that `report`'s failed replacements deleted and
    /// could not create again.
    pub fn executed(&self, report: &ApplyReport) {
        lock(&self.missing).extend(
            report
                .outcomes
                .iter()
                .filter(|outcome| outcome.remains == Some(Remains::Missing))
                .map(|outcome| outcome.address.clone()),
        );
    }

    /// `planned`: the counts and every change that will run; remembers the requests so that
    /// `request_sent` can name their method and path.
    pub fn planned(&self, plan: &Plan) {
        let mut requests = lock(&self.requests);
        for change in &plan.changes {
            for request in &change.requests {
                requests.insert(
                    (change.address.clone(), request.kind()),
                    (request.method().to_string(), request.path()),
                );
            }
        }
        drop(requests);
        lock(&self.capacity).extend(
            plan.changes
                .iter()
                .filter(|change| !change.capacity.chains.is_empty())
                .map(|change| (change.address.clone(), change.capacity.clone())),
        );
        self.emit("planned", planned_fields(plan));
    }

    /// `summary`: what was done, and whether the command succeeded (with its error when not).
    pub fn summary(&self, result: &Result<ExitStatus, CliError>, counts: Counts) {
        let mut fields = summary_fields(counts, result);
        let missing = lock(&self.missing);
        if !missing.is_empty() {
            fields["missing"] = missing
                .iter()
                .map(|name| {
                    json!({
                        "address": address(name),
                        "reason": "deleted_for_replacement",
                        "message": clusterform::format::notes::missing_after_replacement(name.id()),
                    })
                })
                .collect();
        }
        drop(missing);
        self.emit("summary", fields);
    }

    /// `disruption_refused` (or, when not `refused`, `disruption_allowed`): a change that stops
    /// running work in a run nobody is asked in, with the jobs it stops or why they are unknown.
    pub fn stopped_work(&self, work: &StoppedWork<'_>, refused: bool) {
        let kind = if refused {
            "disruption_refused"
        } else {
            "disruption_allowed"
        };
        let address = address(&work.change.address);
        let fields = match &work.jobs {
            StoppedJobs::Known(jobs) => json!({"address": address, "jobs": jobs}),
            StoppedJobs::Unknown { reason } => {
                json!({"address": address, "jobs": Value::Null, "jobs_unknown": reason})
            }
        };
        self.emit(kind, fields);
    }

    fn emit(&self, kind: &str, fields: Value) {
        let now = OffsetDateTime::now_utc();
        let now = now.replace_millisecond(now.millisecond()).unwrap_or(now);
        let mut event = stamped(kind, now, fields);
        hide_secrets_in(&mut event);
        self.printer.result(&event.to_string());
    }
}

impl ProgressSink for JsonEvents {
    fn event(&self, event: &ProgressEvent) {
        let requests = lock(&self.requests);
        if let Some((kind, mut fields)) = progress_fields(event, &requests) {
            drop(requests);
            if let Step::FellBack { attempt, .. } = event.step {
                let capacity = lock(&self.capacity);
                let pools: Vec<Value> = capacity
                    .get(&event.address)
                    .map(|plan| plan.alternatives_at(attempt))
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(pool, alternative)| {
                        json!({"pool": pool, "machine_type": alternative.machine_type,
                               "provisioning_model": alternative.provisioning_model})
                    })
                    .collect();
                fields["pools"] = Value::from(pools);
            }
            self.emit(kind, fields);
        }
    }

    fn failed(&self, event: &ProgressEvent, error: &ExecError) {
        self.emit("failed", failed_fields(event, error));
    }
}

/// Every text of an event with the configuration's sensitive values hidden: an event quotes
/// servers' messages, which may echo one (events hold no value of the plan itself).
fn hide_secrets_in(value: &mut Value) {
    match value {
        Value::String(text) => {
            if let Cow::Owned(hidden) = crate::printer::without_secrets(text) {
                *text = hidden;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(hide_secrets_in),
        Value::Object(fields) => fields.values_mut().for_each(hide_secrets_in),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Locks a mutex, also after a panic elsewhere: the data are counts and lookups.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// `{"type": kind, "@timestamp": now, …fields}`.
fn stamped(kind: &str, now: OffsetDateTime, fields: Value) -> Value {
    let mut event = Map::new();
    event.insert("type".to_owned(), Value::from(kind));
    event.insert(
        "@timestamp".to_owned(),
        Value::from(now.format(&Rfc3339).unwrap_or_default()),
    );
    if let Value::Object(fields) = fields {
        event.extend(fields);
    }
    Value::Object(event)
}

/// `{"project", "region", "id"}`, as in plans.
fn address(name: &ClusterName) -> Value {
    json!({"project": name.project(), "region": name.region(), "id": name.id().as_str()})
}

/// Seconds with millisecond precision.
fn seconds(duration: Duration) -> f64 {
    duration.as_millis() as f64 / 1000.0
}

fn planned_fields(plan: &Plan) -> Value {
    let changes: Vec<Value> = plan
        .changes
        .iter()
        .filter(|change| change.action != Action::NoOp)
        .map(|change| {
            let mut fields = json!({
                "address": address(&change.address),
                "action": change.action,
                "reason": change.reason,
            });
            if !change.capacity.chains.is_empty() {
                fields["fallbacks"] = json!(change.capacity.chains);
            }
            if !change.drift.is_empty() {
                fields["drift"] = json!(change.drift);
            }
            fields
        })
        .collect();
    json!({
        "summary": plan.summary(),
        "changes": changes,
        "unreadable_locations": clusterform::format::status_json::unreadable_locations(
            &plan.unreadable_locations
        ),
    })
}

/// The event of one engine step; `None` for a failure, which the sink's `failed` reports with
/// its typed error.
fn progress_fields(
    event: &ProgressEvent,
    requests: &HashMap<(ClusterName, RequestKind), (String, String)>,
) -> Option<(&'static str, Value)> {
    let mut fields = json!({"address": address(&event.address), "action": event.action});
    let (kind, extra) = match &event.step {
        Step::Started => ("started", json!({})),
        Step::Resumed { operation } => ("resumed", json!({"operation": operation})),
        Step::Settling { state } => ("settling", json!({"state": state})),
        Step::IdNotFree => ("id_not_free", json!({})),
        Step::Submitted { request, operation } => {
            let (method, path) = requests
                .get(&(event.address.clone(), *request))
                .cloned()
                .unwrap_or_else(|| (request.method().to_string(), String::new()));
            let sent =
                json!({"kind": request, "method": method, "path": path, "operation": operation});
            ("request_sent", sent)
        }
        Step::Waiting {
            operation,
            state,
            message,
        } => (
            "operation_progress",
            json!({"operation": operation, "state": state, "message": message}),
        ),
        Step::StepDone { request } => ("request_done", json!({"kind": request})),
        Step::FellShort {
            attempt,
            attempts,
            shortage,
            message,
            next,
            deleting,
        } => (
            "attempt_failed",
            json!({"attempt": attempt, "attempts": attempts, "shortage": shortage,
                   "message": message, "next_attempt": next, "deleting_its_cluster": deleting}),
        ),
        Step::FellBack { attempt, attempts } => (
            "fell_back",
            json!({"attempt": attempt, "attempts": attempts}),
        ),
        Step::ChainPaused {
            attempt,
            shortage,
            message,
        } => (
            "chain_paused",
            json!({"attempt": attempt, "shortage": shortage, "message": message}),
        ),
        Step::Finished => ("done", json!({})),
        Step::Failed(_) => return None,
    };
    if let (Value::Object(fields), Value::Object(extra)) = (&mut fields, extra) {
        fields.extend(extra);
        fields.insert(
            "elapsed_seconds".to_owned(),
            Value::from(seconds(event.elapsed)),
        );
    }
    Some((kind, fields))
}

fn failed_fields(event: &ProgressEvent, error: &ExecError) -> Value {
    let (code, status, violations) = match (error, error.api_status()) {
        (_, Some(status)) => (
            Some(status.code),
            Some(status.code_name().to_owned()),
            status.field_violations(),
        ),
        (ExecError::OperationFailed { status, .. }, None) => {
            (None, Some(status.code_name().to_owned()), vec![])
        }
        // An exhausted chain ends with its last attempt's answer.
        (ExecError::OutOfMachines { attempts, .. }, None) => match attempts.last() {
            Some(last) => (last.code.map(i64::from), last.status.clone(), vec![]),
            None => (None, None, vec![]),
        },
        _ => (None, None, vec![]),
    };
    let violations: Vec<Value> = violations
        .into_iter()
        .map(|v| json!({"field": v.field, "description": v.description}))
        .collect();
    json!({
        "address": address(&event.address),
        "action": event.action,
        "elapsed_seconds": seconds(event.elapsed),
        "error": {
            "code": code,
            "status": status,
            "message": error.to_string(),
            "field_violations": violations,
        },
        "hint": crate::hints::exec_hint(error),
    })
}

fn summary_fields(counts: Counts, result: &Result<ExitStatus, CliError>) -> Value {
    let mut fields = json!({
        "success": matches!(result, Ok(ExitStatus::Success)),
        "counts": {
            "add": counts.add,
            "change": counts.change,
            "replace": counts.replace,
            "destroy": counts.destroy,
            "release": counts.release,
            "failed": counts.failed,
        },
    });
    if let (Value::Object(fields), Err(error)) = (&mut fields, result) {
        fields.insert(
            "error".to_owned(),
            json!({"message": error.to_string(), "hint": error.hint()}),
        );
    }
    fields
}

#[cfg(test)]
mod tests {
    use clusterform_executor::TransportError;
    use clusterform_model::Status;
    use time::macros::datetime;

    use super::*;

    fn train01() -> ClusterName {
        ClusterName::new("acme-ml", "us-central1", "train01").unwrap()
    }

    fn step(step: Step) -> ProgressEvent {
        ProgressEvent {
            address: train01(),
            action: Action::Update,
            step,
            elapsed: Duration::from_millis(12_345),
        }
    }

    #[test]
    fn a_refusal_carries_the_fields_the_service_named() {
        let field = "model_development_cluster.node_pools[1].boot_disk.boot_disk_type";
        let error = ExecError::Transport(TransportError::Api {
            status: Box::new(Status {
                code: 400,
                message: "List of found errors".into(),
                status: Some("INVALID_ARGUMENT".into()),
                details: vec![json!({
                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": [{"field": field, "description": "needs hyperdisk"}]
                })],
            }),
            method: "POST".into(),
            url: "https://x".into(),
        });
        let fields = failed_fields(&step(Step::Started), &error);
        assert_eq!(
            fields["error"]["field_violations"],
            json!([{"field": field, "description": "needs hyperdisk"}])
        );
    }

    #[test]
    fn every_event_starts_with_its_type_and_timestamp() {
        let event = stamped(
            "done",
            datetime!(2026-11-30 22:00:00 UTC),
            json!({"address": address(&train01())}),
        );
        assert_eq!(
            event.to_string(),
            r#"{"type":"done","@timestamp":"2026-11-30T22:00:00Z","address":{"project":"acme-ml","region":"us-central1","id":"train01"}}"#
        );
    }

    #[test]
    fn a_sent_request_names_its_method_path_and_operation() {
        let path =
            "/v1beta1/projects/acme-ml/locations/us-central1/modelDevelopmentClusters/train01";
        let requests = HashMap::from([(
            (train01(), RequestKind::Update),
            ("PATCH".to_owned(), path.to_owned()),
        )]);
        let (kind, fields) = progress_fields(
            &step(Step::Submitted {
                request: RequestKind::Update,
                operation: Some("projects/1/locations/us-central1/operations/7".into()),
            }),
            &requests,
        )
        .unwrap();
        assert_eq!(kind, "request_sent");
        assert_eq!(
            fields,
            json!({
                "address": address(&train01()),
                "action": "update",
                "kind": "update",
                "method": "PATCH",
                "path": path,
                "operation": "projects/1/locations/us-central1/operations/7",
                "elapsed_seconds": 12.345,
            })
        );
    }

    #[test]
    fn progress_carries_state_message_and_elapsed_seconds() {
        let (kind, fields) = progress_fields(
            &step(Step::Waiting {
                operation: "operations/7".into(),
                state: Some("UPDATING".into()),
                message: None,
            }),
            &HashMap::new(),
        )
        .unwrap();
        assert_eq!(kind, "operation_progress");
        assert_eq!(fields["state"], "UPDATING");
        assert_eq!(fields["message"], Value::Null);
        assert_eq!(fields["elapsed_seconds"], 12.345);
        assert!(progress_fields(&step(Step::Failed("quota".into())), &HashMap::new()).is_none());
    }

    #[test]
    fn a_failure_carries_the_api_status_and_the_hint() {
        let error = ExecError::Transport(TransportError::Api {
            status: Box::new(Status {
                code: 429,
                message: "Quota exceeded".into(),
                status: Some("RESOURCE_EXHAUSTED".into()),
                details: Vec::new(),
            }),
            method: "PATCH".into(),
            url: "https://example/v1beta1/x".into(),
        });
        let event = ProgressEvent {
            address: train01(),
            action: Action::Update,
            step: Step::Failed(error.to_string()),
            elapsed: Duration::from_secs(3),
        };
        let fields = failed_fields(&event, &error);
        assert_eq!(fields["error"]["code"], 429);
        assert_eq!(fields["error"]["status"], "RESOURCE_EXHAUSTED");
        assert_eq!(fields["error"]["message"], error.to_string());
        assert_eq!(
            fields["hint"],
            json!(crate::hints::exec_hint(&error)),
            "the same hint as the human output"
        );
    }

    #[test]
    fn the_summary_counts_what_was_done_and_says_why_a_run_failed() {
        let counts = Counts {
            add: 1,
            replace: 1,
            failed: 1,
            ..Counts::default()
        };
        let failed = summary_fields(
            counts,
            &Err(CliError::ActionsFailed {
                failed: 1,
                total: 3,
            }),
        );
        assert_eq!(failed["success"], false);
        assert_eq!(
            failed["counts"],
            json!({"add": 1, "change": 0, "replace": 1, "destroy": 0, "release": 0, "failed": 1})
        );
        assert_eq!(failed["error"]["message"], "1 of 3 actions failed");
        let succeeded = summary_fields(Counts::default(), &Ok(ExitStatus::Success));
        assert_eq!(succeeded["success"], true);
        assert!(succeeded.get("error").is_none());
    }
}
