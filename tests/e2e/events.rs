//! `apply --json` and `destroy --json`: stdout holds one JSON event per line and nothing else,
//! in the documented order, for a create, an update, a failed operation and a destroy.

use clusterform_emulator::FaultSpec;
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use std::process::Output;

use crate::support::{
    ClusterSpec, Env, Transcript, apply_ok, assert_succeeded, config, stderr, stdout, two_clusters,
};

/// Every line of stdout, parsed; each must be a JSON object with a type and an RFC 3339 time.
fn events(output: &Output) -> Vec<Value> {
    let text = stdout(output);
    let events: Vec<Value> = text
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}\n{text}"))
        })
        .collect();
    for event in &events {
        assert!(event["type"].is_string(), "{event}");
        let time = event["@timestamp"].as_str().unwrap_or_default();
        OffsetDateTime::parse(time, &Rfc3339).unwrap_or_else(|e| panic!("{e}: {event}"));
    }
    events
}

/// The run with its events one a line for a snapshot: each time and elapsed time replaced,
/// and a run of `operation_progress` (as many as the binary polled) kept once.
fn events_transcript(env: &Env, output: &Output) -> Transcript {
    let mut events = events(output);
    events.dedup_by(|a, b| a["type"] == "operation_progress" && b["type"] == "operation_progress");
    let mut lines = String::new();
    for mut event in events {
        event["@timestamp"] = json!("[TIME]");
        if let Some(elapsed) = event.get_mut("elapsed_seconds") {
            *elapsed = json!("[N]");
        }
        lines.push_str(&format!("{event}\n"));
    }
    env.transcript_of(&Output {
        stdout: lines.into_bytes(),
        ..output.clone()
    })
}

/// The event types in order, a run of `operation_progress` counted once.
fn sequence(events: &[Value]) -> Vec<&str> {
    let mut types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    types.dedup_by(|a, b| *a == "operation_progress" && a == b);
    types
}

/// An emulator that does not block in `operations/{id}:wait`, so the binary polls and reports
/// the operation's progress at least once before it is done.
fn polling_env() -> Env {
    let env = Env::new(800);
    env.emulator().set_wait_unimplemented(true);
    env
}

/// The events of a run of one action that succeeds, its operation's progress seen.
const ONE_ACTION: [&str; 7] = [
    "planned",
    "started",
    "request_sent",
    "operation_progress",
    "request_done",
    "done",
    "summary",
];

fn train01_address() -> Value {
    serde_json::json!({"project": "my-proj", "region": "us-central1", "id": "train01"})
}

#[test]
fn a_create_is_planned_sent_followed_and_summarised() {
    let env = polling_env();
    env.write_config(&config(&[ClusterSpec::default()]));
    let output = env.run(&["apply", "--json", "--auto-approve"]);
    assert_succeeded(&output);
    insta::assert_snapshot!(events_transcript(&env, &output), @r#"
    {"type":"planned","@timestamp":"[TIME]","summary":{"add":1,"change":0,"replace":0,"destroy":0,"release":0},"changes":[{"address":{"project":"my-proj","region":"us-central1","id":"train01"},"action":"create","reason":null}],"unreadable_locations":[]}
    {"type":"started","@timestamp":"[TIME]","address":{"project":"my-proj","region":"us-central1","id":"train01"},"action":"create","elapsed_seconds":"[N]"}
    {"type":"request_sent","@timestamp":"[TIME]","address":{"project":"my-proj","region":"us-central1","id":"train01"},"action":"create","kind":"create","method":"POST","path":"/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters","operation":"projects/253589482369/locations/us-central1/operations/1","elapsed_seconds":"[N]"}
    {"type":"operation_progress","@timestamp":"[TIME]","address":{"project":"my-proj","region":"us-central1","id":"train01"},"action":"create","operation":"projects/253589482369/locations/us-central1/operations/1","state":"PROVISIONING","message":"Validating the cluster request.","elapsed_seconds":"[N]"}
    {"type":"request_done","@timestamp":"[TIME]","address":{"project":"my-proj","region":"us-central1","id":"train01"},"action":"create","kind":"create","elapsed_seconds":"[N]"}
    {"type":"done","@timestamp":"[TIME]","address":{"project":"my-proj","region":"us-central1","id":"train01"},"action":"create","elapsed_seconds":"[N]"}
    {"type":"summary","@timestamp":"[TIME]","success":true,"counts":{"add":1,"change":0,"replace":0,"destroy":0,"release":0,"failed":0}}
    "#);
    let events = events(&output);
    assert_eq!(sequence(&events), ONE_ACTION, "{}", stdout(&output));
    let planned = &events[0];
    assert_eq!(planned["summary"]["add"], 1);
    assert_eq!(planned["changes"][0]["address"], train01_address());
    assert_eq!(planned["changes"][0]["action"], "create");
    let sent = &events[2];
    assert_eq!(sent["address"], train01_address());
    assert_eq!(sent["kind"], "create");
    assert_eq!(sent["method"], "POST");
    assert_eq!(
        sent["path"],
        "/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters"
    );
    let progress = &events[3];
    assert!(progress["elapsed_seconds"].is_number(), "{progress}");
    assert_eq!(progress["operation"], sent["operation"]);
    let summary = events.last().unwrap();
    assert_eq!(summary["success"], true);
    assert_eq!(summary["counts"]["add"], 1);
    assert_eq!(summary["counts"]["failed"], 0);
}

#[test]
fn an_update_names_its_patch_and_its_reasonless_change() {
    let env = polling_env();
    apply_ok(&env, &[ClusterSpec::default()]);
    env.write_config(&config(&[ClusterSpec {
        max_nodes: 8,
        ..ClusterSpec::default()
    }]));
    let output = env.run(&["apply", "-json", "-auto-approve"]);
    assert_succeeded(&output);
    let events = events(&output);
    assert_eq!(sequence(&events), ONE_ACTION);
    assert_eq!(events[0]["summary"]["change"], 1);
    assert_eq!(events[0]["changes"][0]["action"], "update");
    assert_eq!(events[0]["changes"][0]["reason"], Value::Null);
    assert_eq!(events[2]["method"], "PATCH");
    assert_eq!(
        events[2]["path"],
        "/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01"
    );
    assert_eq!(events.last().unwrap()["counts"]["change"], 1);
}

#[test]
fn a_failed_operation_is_an_event_with_its_status_and_hint() {
    let env = polling_env();
    env.emulator().set_faults(FaultSpec {
        operation_failure_rate: 1.0,
        ..FaultSpec::default()
    });
    env.write_config(&config(&[ClusterSpec::default()]));
    let output = env.run(&["apply", "--json", "--auto-approve"]);
    insta::assert_snapshot!(events_transcript(&env, &output), @r#"
    {"type":"planned","@timestamp":"[TIME]","summary":{"add":1,"change":0,"replace":0,"destroy":0,"release":0},"changes":[{"address":{"project":"my-proj","region":"us-central1","id":"train01"},"action":"create","reason":null}],"unreadable_locations":[]}
    {"type":"started","@timestamp":"[TIME]","address":{"project":"my-proj","region":"us-central1","id":"train01"},"action":"create","elapsed_seconds":"[N]"}
    {"type":"request_sent","@timestamp":"[TIME]","address":{"project":"my-proj","region":"us-central1","id":"train01"},"action":"create","kind":"create","method":"POST","path":"/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters","operation":"projects/253589482369/locations/us-central1/operations/1","elapsed_seconds":"[N]"}
    {"type":"operation_progress","@timestamp":"[TIME]","address":{"project":"my-proj","region":"us-central1","id":"train01"},"action":"create","operation":"projects/253589482369/locations/us-central1/operations/1","state":"PROVISIONING","message":"Validating the cluster request.","elapsed_seconds":"[N]"}
    {"type":"failed","@timestamp":"[TIME]","address":{"project":"my-proj","region":"us-central1","id":"train01"},"action":"create","elapsed_seconds":"[N]","error":{"code":null,"status":"INTERNAL","message":"projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01: operation projects/253589482369/locations/us-central1/operations/1 failed: INTERNAL: The operation failed (injected by the emulator's opfail fault).","field_violations":[]},"hint":"the service failed on its side (INTERNAL), not because of the configuration: run `clusterform apply` again (what finished is not redone); if it fails again, see `clusterform status --target train01` and give Google Cloud support the operation projects/253589482369/locations/us-central1/operations/1"}
    {"type":"summary","@timestamp":"[TIME]","success":false,"counts":{"add":0,"change":0,"replace":0,"destroy":0,"release":0,"failed":1},"error":{"message":"1 of 1 actions failed","hint":"fix the cause above and run `clusterform apply` again; finished clusters are not touched twice"}}
    [stderr]
    Error: Creation of cluster train01 failed: projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01: operation projects/253589482369/locations/us-central1/operations/1 failed: INTERNAL: The operation failed (injected by the emulator's opfail fault).
      hint: the service failed on its side (INTERNAL), not because of the configuration: run `clusterform apply` again (what finished is not redone); if it fails again, see `clusterform status --target train01` and give Google Cloud support the operation projects/253589482369/locations/us-central1/operations/1
    Error: 1 of 1 actions failed
      hint: fix the cause above and run `clusterform apply` again; finished clusters are not touched twice
    [exit status: 1]
    "#);
    let events = events(&output);
    let failed = &events[events.len() - 2];
    assert_eq!(failed["address"], train01_address());
    assert_eq!(failed["action"], "create");
    assert!(failed["error"]["status"].is_string(), "{failed}");
    assert!(failed["error"]["message"].is_string(), "{failed}");
    assert!(failed.get("hint").is_some(), "{failed}");
    let summary = events.last().unwrap();
    assert_eq!(summary["success"], false);
    assert_eq!(summary["counts"]["failed"], 1);
    assert_eq!(summary["error"]["message"], "1 of 1 actions failed");
}

#[test]
fn a_failure_is_reported_when_it_happens_not_at_the_end_of_the_run() {
    let env = polling_env();
    env.emulator().set_faults(FaultSpec {
        operation_failure_rate: 1.0,
        ..FaultSpec::default()
    });
    env.write_config(&config(&two_clusters()));
    // One at a time: the second create starts only after the first has failed.
    let output = env.run(&["apply", "--json", "--auto-approve", "--parallelism", "1"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let events = events(&output);
    let of = |kind: &str| -> Vec<String> {
        events
            .iter()
            .filter(|e| e["type"] == kind)
            .map(|e| e["address"]["id"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(of("failed"), ["train01", "train02"]);
    let position = |kind: &str, id: &str| {
        events
            .iter()
            .position(|e| e["type"] == kind && e["address"]["id"] == id)
            .unwrap_or_else(|| panic!("no {kind} event for {id}: {:?}", sequence(&events)))
    };
    assert!(
        position("failed", "train01") < position("started", "train02"),
        "{:?}",
        sequence(&events)
    );
    assert_eq!(events.last().unwrap()["counts"]["failed"], 2);
}

#[test]
fn a_destroy_reports_its_deletions() {
    let env = polling_env();
    apply_ok(&env, &[ClusterSpec::default()]);
    let output = env.run(&["destroy", "--json", "--auto-approve"]);
    assert_succeeded(&output);
    let events = events(&output);
    assert_eq!(events[0]["type"], "planned");
    assert_eq!(events[0]["changes"][0]["action"], "delete");
    assert_eq!(
        events[0]["changes"][0]["reason"]["kind"],
        "destroy_requested"
    );
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "request_sent" && e["method"] == "DELETE")
    );
    let summary = events.last().unwrap();
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["counts"]["destroy"], 1);
}

/// With nothing to destroy, stdout still holds events only: the plan and the summary, no
/// sentence for people.
#[test]
fn a_destroy_with_nothing_to_destroy_prints_only_events() {
    let env = polling_env();
    apply_ok(&env, &[ClusterSpec::default()]);
    assert_succeeded(&env.run(&["destroy", "--auto-approve"]));
    let output = env.run(&["destroy", "--json", "--auto-approve"]);
    assert_succeeded(&output);
    let events = events(&output);
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["planned", "summary"]);
    assert_eq!(events[0]["changes"], json!([]));
    assert_eq!(events[1]["success"], true);
}

#[test]
fn json_without_approval_is_a_usage_error_and_sends_nothing() {
    let env = Env::new(100);
    env.write_config(&config(&[ClusterSpec::default()]));
    let mut transcripts = String::new();
    for command in ["apply", "destroy"] {
        transcripts.push_str(&format!(
            "$ clusterform {command} --json\n{}",
            env.transcript(&[command, "--json"])
        ));
    }
    insta::assert_snapshot!(transcripts, @"
    $ clusterform apply --json
    [stderr]
    Error: `apply --json` cannot ask for confirmation: give --auto-approve, or apply a saved plan (`plan --out FILE`, then `apply --json FILE`)
    [exit status: 1]
    $ clusterform destroy --json
    [stderr]
    Error: `destroy --json` cannot ask for confirmation: give --auto-approve
    [exit status: 1]
    ");
    assert!(env.emulator().requests().is_empty());
}

#[test]
fn an_error_before_planning_still_ends_with_a_summary() {
    let env = Env::new(100);
    env.write_config("cluster {");
    let output = env.run(&["apply", "--json", "--auto-approve"]);
    assert_eq!(output.status.code(), Some(1));
    let events = events(&output);
    assert_eq!(sequence(&events), ["summary"]);
    assert_eq!(events[0]["success"], false);
    assert!(events[0]["error"]["message"].is_string());
}

#[test]
fn operations_an_earlier_run_left_are_followed_as_events() {
    let env = Env::new(1500);
    env.write_config(&config(&[ClusterSpec::default()]));
    crate::support::apply_killed_once_journaled(&env, "train01");

    let output = env.run(&["apply", "--json", "--auto-approve"]);
    assert_succeeded(&output);
    insta::assert_snapshot!(events_transcript(&env, &output), @r#"
    {"type":"resumed","@timestamp":"[TIME]","address":{"project":"my-proj","region":"us-central1","id":"train01"},"action":"create","operation":"projects/253589482369/locations/us-central1/operations/1","elapsed_seconds":"[N]"}
    {"type":"done","@timestamp":"[TIME]","address":{"project":"my-proj","region":"us-central1","id":"train01"},"action":"create","elapsed_seconds":"[N]"}
    {"type":"planned","@timestamp":"[TIME]","summary":{"add":0,"change":0,"replace":0,"destroy":0,"release":0},"changes":[],"unreadable_locations":[]}
    {"type":"summary","@timestamp":"[TIME]","success":true,"counts":{"add":1,"change":0,"replace":0,"destroy":0,"release":0,"failed":0}}
    [stderr]
    Warning: an earlier run left operation projects/253589482369/locations/us-central1/operations/1 (creating train01) in flight; `clusterform apply` and `destroy` wait for it before changing anything
    "#);
}

#[test]
fn a_configuration_warning_reaches_stderr_while_stdout_holds_only_events() {
    let env = Env::new(100);
    // A cluster in us-west2, a region the service's documented list does not name: the
    // configuration warns about it, as `plan` shows.
    let west = crate::support::cluster_hcl(&ClusterSpec {
        id: "west01",
        extra_cluster_settings: "  region = \"us-central1\"\n",
        ..ClusterSpec::default()
    })
    .replace("us-central1", "us-west2");
    env.write_config(&format!("{}{west}", crate::support::PROVIDER));
    let output = env.run(&["apply", "--json", "--auto-approve"]);
    assert_succeeded(&output);
    assert_eq!(
        sequence(&events(&output)),
        [
            "planned",
            "started",
            "request_sent",
            "request_done",
            "done",
            "summary"
        ]
    );
    insta::assert_snapshot!(stderr(&output), @r"
    Warning: region `us-west2` is not one of the regions the Get started page lists for training clusters
      at main.hcl:54:12
      hint: did you mean `us-west4`? documented: us-central1, us-east1, us-east4, us-east5, us-south1, us-west1, us-west4, asia-southeast1, asia-south2, europe-west1, europe-west4, europe-north1; the service adds regions over time: if `us-west2` offers training clusters, ignore this warning
    ");
}
