//! Shared test fixtures: the testkit's emulator harness with a reqwest client that
//! authenticates, request helpers answering `(status, JSON)`, and sample clusters. The testkit
//! is used without its `typed` feature: these tests see JSON only, never our model.

use std::time::Duration;

use clusterform_emulator::{Emulator, EmulatorOptions};
use clusterform_testkit::TestEmulator;
use reqwest::Method;
use serde_json::Value;

pub use clusterform_testkit::{PARENT, PROJECT, TOKEN, cluster_name, seed};

/// Options with operations short enough for tests.
pub fn fast_options() -> EmulatorOptions {
    EmulatorOptions {
        operation_duration: Duration::from_millis(100),
        ..EmulatorOptions::default()
    }
}

/// Options for tests that look at a cluster while its operation runs: the
/// operation lasts long enough that a slow, loaded machine still sees it running.
pub fn transition_options() -> EmulatorOptions {
    EmulatorOptions {
        operation_duration: Duration::from_millis(600),
        ..EmulatorOptions::default()
    }
}

pub fn cluster_path(id: &str) -> String {
    format!("/v1beta1/{}", cluster_name(id))
}

pub fn create_path(id: &str) -> String {
    format!("/v1beta1/{PARENT}/modelDevelopmentClusters?modelDevelopmentClusterId={id}")
}

/// The field violations of an error answer's `google.rpc.BadRequest` detail,
/// one `field: description` a line.
pub fn violations(error: &Value) -> String {
    let detail = &error["error"]["details"][0];
    assert_eq!(detail["@type"], "type.googleapis.com/google.rpc.BadRequest");
    detail["fieldViolations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            format!(
                "{}: {}\n",
                v["field"].as_str().unwrap(),
                v["description"].as_str().unwrap()
            )
        })
        .collect()
}

/// Replaces every timestamp field with `[time]` so snapshots are stable.
pub fn redact_times(mut value: Value) -> Value {
    redact_in_place(&mut value);
    value
}

fn redact_in_place(value: &mut Value) {
    match value {
        Value::Object(object) => {
            for (key, field) in object.iter_mut() {
                if key.ends_with("Time") && field.is_string() {
                    *field = Value::from("[time]");
                } else {
                    redact_in_place(field);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_in_place),
        _ => {}
    }
}

/// A served emulator and a client for it.
pub struct TestServer {
    pub server: TestEmulator,
    pub client: reqwest::Client,
}

impl TestServer {
    pub async fn start(options: EmulatorOptions) -> TestServer {
        TestServer::serve(Emulator::new(options).unwrap()).await
    }

    pub async fn serve(emulator: Emulator) -> TestServer {
        TestServer {
            server: TestEmulator::serve(&emulator).await,
            client: reqwest::Client::new(),
        }
    }

    pub fn emulator(&self) -> &Emulator {
        self.server.emulator()
    }

    pub fn url(&self, path: &str) -> String {
        self.server.url(path)
    }

    /// An authenticated request; answers the status and the JSON body (`null` if none).
    pub async fn call(&self, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut request = self
            .client
            .request(method, self.url(path))
            .bearer_auth(TOKEN);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        let json = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap()
        };
        (status, json)
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.call(Method::GET, path, None).await
    }

    pub async fn create(&self, id: &str, cluster: Value) -> (u16, Value) {
        self.call(Method::POST, &create_path(id), Some(cluster))
            .await
    }

    /// Creates a cluster and waits for it to be RUNNING; answers the finished operation.
    pub async fn create_running(&self, id: &str, cluster: Value) -> Value {
        let (status, operation) = self.create(id, cluster).await;
        assert_eq!(status, 200, "{operation}");
        self.wait_done(&operation).await
    }

    /// Long-polls the operation until it is done (bounded).
    pub async fn wait_done(&self, operation: &Value) -> Value {
        let name = operation["name"].as_str().unwrap();
        for _ in 0..20 {
            let (status, polled) = self
                .call(Method::POST, &format!("/v1/{name}:wait?timeout=5s"), None)
                .await;
            assert_eq!(status, 200, "{polled}");
            if polled["done"] == true {
                return polled;
            }
        }
        panic!("operation {name} did not finish");
    }
}
