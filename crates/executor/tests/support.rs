//! Shared test fixtures: the testkit's emulator harness and constants, a client with short
//! retry and wait intervals, planned requests built by hand, and a progress sink that records
//! events.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use clusterform_emulator::{Emulator, EmulatorOptions};
use clusterform_executor::{
    ApiClient, ClientOptions, ProgressEvent, ProgressSink, RetryPolicy, StaticToken, WaitOptions,
};
use clusterform_model::fields::UpdateMaskPath;
use clusterform_model::rest::{ClusterRequest, UpdateMask};
use clusterform_model::{Action, ClusterName, Location, UpdateMode};
use clusterform_planner::{ClusterChange, Plan, PlannedTimeouts};
use clusterform_testkit::{PARENT, TestEmulator, options_with_token};
use serde_json::{Value, json};

pub use clusterform_testkit::{PROJECT, REGION, STACK, TOKEN, cluster_name};

/// A running emulator and a client pointed at it.
pub struct Harness {
    pub server: TestEmulator,
    pub emulator: Emulator,
    pub client: ApiClient,
}

impl Harness {
    /// An emulator whose operations take `operation_duration`.
    pub async fn start(operation_duration: Duration) -> Self {
        Self::with_options(options_with_token(operation_duration)).await
    }

    pub async fn with_options(options: EmulatorOptions) -> Self {
        let server = TestEmulator::start(options).await;
        let emulator = server.emulator().clone();
        let client = client_for(&server.base_url(), fast_retry());
        Self {
            server,
            emulator,
            client,
        }
    }

    /// A second client on the same emulator.
    pub fn client(&self, retry: RetryPolicy) -> ApiClient {
        client_for(&self.server.base_url(), retry)
    }

    /// Requests whose method is `method` and whose path ends with `path_end`.
    pub fn count(&self, method: &str, path_end: &str) -> usize {
        self.emulator
            .requests()
            .iter()
            .filter(|r| r.method == method && r.path.ends_with(path_end))
            .count()
    }

    /// Statuses answered to those requests, in order.
    pub fn statuses(&self, method: &str, path_end: &str) -> Vec<u16> {
        self.emulator
            .requests()
            .iter()
            .filter(|r| r.method == method && r.path.ends_with(path_end))
            .map(|r| r.status)
            .collect()
    }

    /// The cluster `id` as the emulator holds it now, read through the model.
    pub fn live(&self, id: &str) -> clusterform_model::Cluster {
        let json = self
            .emulator
            .cluster(&cluster_name(id))
            .expect("the cluster");
        serde_json::from_value(json).expect("a cluster the model reads")
    }

    /// Seeds a running cluster owned by [`STACK`].
    pub fn insert(&self, id: &str) {
        self.emulator
            .insert_cluster(&cluster_name(id), cluster_body(id, Some(STACK)));
    }
}

pub fn client_for(base_url: &str, retry: RetryPolicy) -> ApiClient {
    ApiClient::new(
        client_options(base_url, retry),
        Arc::new(StaticToken::new(TOKEN)),
    )
    .unwrap()
}

/// Options for a client of the server at `base_url` (the cluster or the storage client).
pub fn client_options(base_url: &str, retry: RetryPolicy) -> ClientOptions {
    ClientOptions {
        endpoint: Some(base_url.to_owned()),
        request_timeout: Duration::from_secs(10),
        retry,
        ..ClientOptions::default()
    }
}

pub fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 6,
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(40),
        max_elapsed: Duration::from_secs(10),
    }
}

pub fn fast_wait() -> WaitOptions {
    WaitOptions {
        long_poll: Duration::from_secs(5),
        poll_initial: Duration::from_millis(20),
        poll_max: Duration::from_millis(80),
        not_found_grace: Duration::from_secs(2),
        errors_before_polling: 3,
    }
}

pub fn parsed_name(id: &str) -> ClusterName {
    cluster_name(id).parse().unwrap()
}

/// The testkit's canonical cluster as a request body, its display name `id`, labelled for
/// `stack`.
pub fn cluster_body(id: &str, stack: Option<&str>) -> Value {
    let mut body = clusterform_testkit::seed();
    body["displayName"] = json!(id);
    if let Some(stack) = stack {
        body["labels"]["clusterform-stack"] = json!(stack);
    }
    body
}

pub fn collection_path() -> String {
    format!("/v1beta1/{PARENT}/modelDevelopmentClusters")
}

pub fn create_request(id: &str) -> ClusterRequest {
    ClusterRequest::Create {
        name: address(id),
        body: cluster_body(id, Some(STACK)),
    }
}

pub fn update_labels_request(id: &str, team: &str) -> ClusterRequest {
    let mut body = cluster_body(id, Some(STACK));
    body["labels"]["team"] = json!(team);
    ClusterRequest::Update {
        name: address(id),
        mask: UpdateMask::new(vec![UpdateMaskPath::Labels]),
        mode: UpdateMode::UserAndService,
        body,
    }
}

pub fn delete_request(id: &str) -> ClusterRequest {
    ClusterRequest::Delete { name: address(id) }
}

pub fn address(id: &str) -> ClusterName {
    ClusterName::new(PROJECT, REGION, id).unwrap()
}

/// The testkit's project and region.
pub fn location() -> Location {
    Location::new(PROJECT, REGION).unwrap()
}

pub fn change(id: &str, action: Action, requests: Vec<ClusterRequest>) -> ClusterChange {
    ClusterChange {
        address: address(id),
        action,
        reason: None,
        fields: vec![],
        impacts: vec![],
        warnings: vec![],
        requests,
        live_update_time: None,
        timeouts: PlannedTimeouts::default(),
        unchanged_attributes: Default::default(),
        capacity: Default::default(),
        desired_digest: None,
        drift: vec![],
        in_error: None,
        declared_labels: vec![],
    }
}

pub fn plan(changes: Vec<ClusterChange>) -> Plan {
    Plan {
        format_version: clusterform_planner::PLAN_FORMAT_VERSION,
        stack: STACK.into(),
        config_digest: "test".into(),
        config_files: Default::default(),
        directory: Default::default(),
        variables: Default::default(),
        flags: Default::default(),
        flags_digest: String::new(),
        endpoint: None,
        changes,
        unreadable_locations: Vec::new(),
    }
}

/// Records every progress event.
#[derive(Default)]
pub struct RecordingSink(pub Mutex<Vec<ProgressEvent>>);

impl RecordingSink {
    pub fn events(&self) -> Vec<ProgressEvent> {
        self.0.lock().unwrap().clone()
    }
}

impl ProgressSink for RecordingSink {
    fn event(&self, event: &ProgressEvent) {
        self.0.lock().unwrap().push(event.clone());
    }
}
