//! The emulator's durable state: clusters (as JSON), operations with their
//! start and finish timestamps, the operation-ID counter and injected Slurm
//! jobs. Operations are settled lazily: whenever the store is looked at, every
//! operation whose finish time has passed is completed, so no timer is needed
//! and an operation persisted before a restart still finishes on time. Cloud
//! Storage buckets and objects (`objects`) are kept here too.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::api_error::Code;
use crate::clock::{Millis, rfc3339};
use crate::objects::ObjectStore;
use crate::resource::node_count;

const CLUSTER_TYPE: &str =
    "type.googleapis.com/google.cloud.aiplatform.v1beta1.ModelDevelopmentCluster";
const EMPTY_TYPE: &str = "type.googleapis.com/google.protobuf.Empty";
const INJECTED_FAILURE_MESSAGE: &str =
    "The operation failed (injected by the emulator's opfail fault).";
/// `clusterStatus.detail` of a cluster whose create operation failed.
const FAILED_CREATE_DETAIL: &str =
    "Cluster creation failed; the cluster cannot be used and should be deleted.";
/// The version of the persisted JSON layout.
pub(crate) const STORE_FORMAT_VERSION: u32 = 1;

/// Everything the emulator persists.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Store {
    pub(crate) version: u32,
    pub(crate) last_operation_id: u64,
    pub(crate) clusters: BTreeMap<String, StoredCluster>,
    pub(crate) operations: BTreeMap<String, StoredOperation>,
    #[serde(default)]
    pub(crate) slurm: BTreeMap<String, SlurmState>,
    /// Cloud Storage buckets and objects.
    #[serde(default)]
    pub(crate) storage: ObjectStore,
    /// When the delete of each deleted cluster (by name) completed, so that its ID can stay
    /// taken a while after (`EmulatorOptions::id_blocked_after_delete`); an entry goes when
    /// the ID is created again.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) deletions: BTreeMap<String, Millis>,
    /// The operations not done yet, by finish time: all that [`Store::settle`] looks at, so
    /// that thousands of finished operations cost nothing per request. Built from `operations`
    /// when missing (after loading a state file).
    #[serde(skip)]
    unsettled: Option<BTreeSet<(Millis, String)>>,
}

impl Default for Store {
    fn default() -> Self {
        Store {
            version: STORE_FORMAT_VERSION,
            last_operation_id: 0,
            clusters: BTreeMap::new(),
            operations: BTreeMap::new(),
            slurm: BTreeMap::new(),
            storage: ObjectStore::default(),
            deletions: BTreeMap::new(),
            unsettled: None,
        }
    }
}

/// A cluster resource (camelCase JSON, as Get returns it) and the operation running on it.
///
/// The resource's JSON text is kept once written, until the resource changes: a List page is
/// then written by copying bytes, not by serialising fifty clusters while every other request
/// waits for the store (the service answers Lists of different regions independently, and a
/// benchmark against the emulator should not measure the emulator's own serialising).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StoredCluster {
    resource: Value,
    #[serde(skip)]
    encoded: OnceLock<Box<str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) active_operation: Option<String>,
}

impl StoredCluster {
    pub(crate) fn new(resource: Value) -> Self {
        Self {
            resource,
            encoded: OnceLock::new(),
            active_operation: None,
        }
    }

    /// The resource as Get returns it.
    pub(crate) fn resource(&self) -> &Value {
        &self.resource
    }

    /// The resource, to change it (its JSON text is written again when next needed).
    pub(crate) fn resource_mut(&mut self) -> &mut Value {
        self.encoded.take();
        &mut self.resource
    }

    /// The resource's JSON text.
    pub(crate) fn encoded(&self) -> &str {
        self.encoded
            .get_or_init(|| self.resource.to_string().into_boxed_str())
    }
}

/// Test-injected Slurm state of one cluster.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct SlurmState {
    pub(crate) jobs: Vec<Value>,
    pub(crate) unreachable: bool,
    /// slurmrestd node objects served by `/slurm/{version}/nodes`; `None` until a test sets
    /// them, when the nodes of the cluster's compute pools are served instead.
    pub(crate) nodes: Option<Vec<Value>>,
    /// The REST versions this cluster's slurmrestd serves; `None` means the default ones.
    pub(crate) api_versions: Option<Vec<String>>,
    /// slurmctld does not answer: the ping says so, and the listings answer 500.
    pub(crate) controller_down: bool,
    /// Slurm paths the relay refuses as "not a valid Slurm path" (`400 INVALID_ARGUMENT`, the
    /// relay's documented answer), by prefix: `/slurm/v0.0.42/nodes`, `/slurm/v0.0.45/`.
    pub(crate) refused_paths: Vec<String>,
}

/// What a long-running operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum OperationKind {
    Create,
    Update,
    Delete,
}

impl OperationKind {
    fn metadata_type(self) -> &'static str {
        match self {
            OperationKind::Create => {
                "type.googleapis.com/google.cloud.aiplatform.v1beta1.CreateModelDevelopmentClusterOperationMetadata"
            }
            OperationKind::Update => {
                "type.googleapis.com/google.cloud.aiplatform.v1beta1.UpdateModelDevelopmentClusterOperationMetadata"
            }
            OperationKind::Delete => {
                "type.googleapis.com/google.cloud.aiplatform.v1beta1.DeleteModelDevelopmentClusterOperationMetadata"
            }
        }
    }

    /// The cluster state while the operation runs.
    fn running_state(self) -> &'static str {
        match self {
            OperationKind::Create => "PROVISIONING",
            OperationKind::Update => "UPDATING",
            OperationKind::Delete => "STOPPING",
        }
    }

    /// Progress messages for the first, second and last third of the operation.
    fn progress_steps(self) -> [&'static str; 3] {
        match self {
            OperationKind::Create => [
                "Validating the cluster request.",
                "Provisioning node pools.",
                "Configuring Slurm.",
            ],
            OperationKind::Update => [
                "Validating the update.",
                "Updating node pools.",
                "Synchronising the Slurm configuration.",
            ],
            OperationKind::Delete => [
                "Draining Slurm jobs.",
                "Deleting node pools.",
                "Releasing cluster resources.",
            ],
        }
    }

    fn finished_message(self, failed: bool) -> &'static str {
        match (self, failed) {
            (_, true) => "The operation failed.",
            (OperationKind::Create, false) => "The cluster is running.",
            (OperationKind::Update, false) => "The cluster is updated.",
            (OperationKind::Delete, false) => "The cluster is deleted.",
        }
    }
}

/// A long-running operation and, once finished, its result.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StoredOperation {
    pub(crate) name: String,
    pub(crate) kind: OperationKind,
    pub(crate) cluster_name: String,
    pub(crate) started_at: Millis,
    pub(crate) finishes_at: Millis,
    /// Decided when the operation starts, so the outcome survives a restart.
    pub(crate) fails: bool,
    /// The `error` a failing operation reports; `None`: the `opfail` fault's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) failure: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) update_mode: Option<String>,
    /// For an update: the cluster as it will be once the update succeeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) target: Option<Value>,
    /// The cluster status to restore if the operation fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) status_before: Option<Value>,
    /// Once finished: an object with either `response` or `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) result: Option<Value>,
}

impl StoredOperation {
    /// The operation as `GET /v1/{name}` returns it at `now`.
    pub(crate) fn render(&self, now: Millis) -> Value {
        let mut metadata = json!({
            "@type": self.kind.metadata_type(),
            "genericMetadata": {
                "createTime": rfc3339(self.started_at),
                "updateTime": rfc3339(now.clamp(self.started_at, self.finishes_at)),
            },
            "progressMessage": self.progress_message(now),
        });
        if let Some(mode) = &self.update_mode {
            metadata["updateMode"] = Value::from(mode.as_str());
        }
        let mut operation = json!({"name": self.name, "metadata": metadata});
        if let Some(Value::Object(result)) = &self.result {
            operation["done"] = Value::Bool(true);
            for (key, value) in result {
                operation[key] = value.clone();
            }
        }
        operation
    }

    pub(crate) fn is_done(&self) -> bool {
        self.result.is_some()
    }

    fn progress_message(&self, now: Millis) -> &'static str {
        if self.is_done() {
            return self.kind.finished_message(self.fails);
        }
        let total = (self.finishes_at - self.started_at).max(1);
        let elapsed = (now - self.started_at).clamp(0, total - 1);
        let steps = self.kind.progress_steps();
        let step = usize::try_from(elapsed * 3 / total)
            .unwrap_or(0)
            .min(steps.len() - 1);
        steps[step]
    }
}

/// What a new operation needs besides the cluster it works on.
#[derive(Debug)]
pub(crate) struct NewOperation {
    pub(crate) kind: OperationKind,
    pub(crate) cluster_name: String,
    /// `projects/{NUMBER}/locations/{R}`, the operation's parent.
    pub(crate) parent: String,
    pub(crate) started_at: Millis,
    pub(crate) finishes_at: Millis,
    pub(crate) fails: bool,
    /// See [`StoredOperation::failure`].
    pub(crate) failure: Option<Value>,
    pub(crate) update_mode: Option<String>,
    pub(crate) target: Option<Value>,
}

impl Store {
    /// Completes every operation whose finish time is not after `now`, oldest first.
    pub(crate) fn settle(&mut self, now: Millis) {
        let due: Vec<String> = self
            .unsettled()
            .iter()
            .take_while(|(finishes_at, _)| *finishes_at <= now)
            .map(|(_, name)| name.clone())
            .collect();
        for name in due {
            self.finish_operation(&name);
        }
    }

    /// The index of operations not done yet, built on first use.
    fn unsettled(&mut self) -> &mut BTreeSet<(Millis, String)> {
        let operations = &self.operations;
        self.unsettled.get_or_insert_with(|| {
            operations
                .values()
                .filter(|operation| !operation.is_done())
                .map(|operation| (operation.finishes_at, operation.name.clone()))
                .collect()
        })
    }

    /// Renames every stored cluster with `rename` (its key, `name`, its
    /// operations' and Slurm state's references), e.g. to project numbers.
    pub(crate) fn rename_clusters(&mut self, rename: impl Fn(&str) -> String) {
        let clusters = std::mem::take(&mut self.clusters);
        for (name, mut cluster) in clusters {
            let renamed = rename(&name);
            if let Some(object) = cluster.resource_mut().as_object_mut() {
                object.insert("name".to_owned(), Value::from(renamed.as_str()));
            }
            self.clusters.insert(renamed, cluster);
        }
        for operation in self.operations.values_mut() {
            operation.cluster_name = rename(&operation.cluster_name);
        }
        self.slurm = std::mem::take(&mut self.slurm)
            .into_iter()
            .map(|(name, slurm)| (rename(&name), slurm))
            .collect();
        self.deletions = std::mem::take(&mut self.deletions)
            .into_iter()
            .map(|(name, deleted_at)| (rename(&name), deleted_at))
            .collect();
    }

    /// When the delete of the cluster `name` completed, if it was deleted and not created again.
    pub(crate) fn deleted_at(&self, name: &str) -> Option<Millis> {
        self.deletions.get(name).copied()
    }

    /// Records a new operation and puts its cluster in the operation's running state.
    pub(crate) fn start_operation(&mut self, new: NewOperation) -> StoredOperation {
        self.last_operation_id += 1;
        let name = format!("{}/operations/{}", new.parent, self.last_operation_id);
        let status_before = self.clusters.get_mut(&new.cluster_name).map(|cluster| {
            cluster.active_operation = Some(name.clone());
            let before = cluster
                .resource()
                .get("clusterStatus")
                .cloned()
                .unwrap_or(Value::Null);
            set_status(
                cluster.resource_mut(),
                json!({"state": new.kind.running_state()}),
            );
            before
        });
        let operation = StoredOperation {
            name: name.clone(),
            kind: new.kind,
            cluster_name: new.cluster_name,
            started_at: new.started_at,
            finishes_at: new.finishes_at,
            fails: new.fails,
            failure: new.failure,
            update_mode: new.update_mode,
            target: new.target,
            status_before,
            result: None,
        };
        self.unsettled()
            .insert((operation.finishes_at, name.clone()));
        self.operations.insert(name, operation.clone());
        operation
    }

    fn finish_operation(&mut self, name: &str) {
        let Some(operation) = self.operations.get(name).cloned() else {
            return;
        };
        self.unsettled()
            .remove(&(operation.finishes_at, operation.name.clone()));
        let result = if operation.fails {
            self.fail_operation(&operation)
        } else {
            self.complete_operation(&operation)
        };
        if let Some(cluster) = self.clusters.get_mut(&operation.cluster_name) {
            cluster.active_operation = None;
        }
        if let Some(stored) = self.operations.get_mut(name) {
            stored.result = Some(result);
            stored.target = None;
        }
    }

    /// Applies a successful operation and returns its `{"response": ...}`.
    fn complete_operation(&mut self, operation: &StoredOperation) -> Value {
        if operation.kind == OperationKind::Delete {
            self.clusters.remove(&operation.cluster_name);
            // Slurm went with the cluster: a cluster created again under the name starts
            // without the jobs and nodes injected into the deleted one.
            self.slurm.remove(&operation.cluster_name);
            self.deletions
                .insert(operation.cluster_name.clone(), operation.finishes_at);
            return json!({"response": {"@type": EMPTY_TYPE}});
        }
        let Some(cluster) = self.clusters.get_mut(&operation.cluster_name) else {
            return json!({"response": {"@type": EMPTY_TYPE}});
        };
        if let Some(target) = &operation.target {
            *cluster.resource_mut() = target.clone();
        }
        mark_running(cluster.resource_mut(), operation.finishes_at);
        json!({"response": with_type(cluster.resource(), CLUSTER_TYPE)})
    }

    /// Applies an injected failure and returns its `{"error": ...}`: a failed
    /// create leaves the cluster in `ERROR`, a failed update or delete leaves it as it was.
    fn fail_operation(&mut self, operation: &StoredOperation) -> Value {
        let error = operation.failure.clone().unwrap_or_else(|| {
            json!({"code": Code::Internal.rpc_number(), "message": INJECTED_FAILURE_MESSAGE, "details": []})
        });
        if let Some(cluster) = self.clusters.get_mut(&operation.cluster_name) {
            let status = match operation.kind {
                OperationKind::Create => json!({
                    "state": "ERROR",
                    "detail": FAILED_CREATE_DETAIL,
                    "error": error,
                }),
                OperationKind::Update | OperationKind::Delete => operation
                    .status_before
                    .clone()
                    .unwrap_or_else(|| json!({"state": "RUNNING"})),
            };
            set_status(cluster.resource_mut(), status);
        }
        json!({"error": error})
    }
}

/// The cluster reaches `RUNNING` at `at`: `updateTime` moves, `startTime` is set the first time.
pub(crate) fn mark_running(resource: &mut Value, at: Millis) {
    let Some(object) = resource.as_object_mut() else {
        return;
    };
    object.insert("updateTime".to_owned(), Value::from(rfc3339(at)));
    object
        .entry("startTime")
        .or_insert_with(|| Value::from(rfc3339(at)));
    let nodes = running_nodes(object, at);
    object.insert(
        "clusterStatus".to_owned(),
        json!({"state": "RUNNING", "nodesStatus": nodes}),
    );
}

/// Nodes listed per pool in `nodesStatus`, at most: enough to look real, bounded in size.
const MAX_NODES_LISTED_PER_POOL: u64 = 64;

/// One `RUNNING` node per node a pool keeps at its minimum, as `clusterStatus.nodesStatus`
/// lists them (the login pool's nodes are `NODE_POOL_TYPE_LOGIN`).
fn running_nodes(cluster: &Map<String, Value>, at: Millis) -> Vec<Value> {
    let id = cluster
        .get("name")
        .and_then(Value::as_str)
        .and_then(|name| name.rsplit('/').next())
        .unwrap_or("cluster");
    let login = cluster
        .get("orchestratorSpec")
        .and_then(|o| o.get("slurmSpec"))
        .and_then(|s| s.get("loginNodePoolId"))
        .and_then(Value::as_str);
    let pools = cluster.get("nodePools").and_then(Value::as_array);
    let mut nodes = Vec::new();
    for pool in pools.into_iter().flatten() {
        let pool_id = pool.get("id").and_then(Value::as_str).unwrap_or_default();
        let minimum = node_count(pool, "minNodeCount").min(MAX_NODES_LISTED_PER_POOL);
        let kind = if Some(pool_id) == login {
            "NODE_POOL_TYPE_LOGIN"
        } else {
            "NODE_POOL_TYPE_COMPUTE"
        };
        for index in 0..minimum {
            nodes.push(json!({
                "nodePoolId": pool_id,
                "nodePoolType": kind,
                "nodeState": "RUNNING",
                "instanceName": format!("{id}-{pool_id}-{index}"),
                "createTime": rfc3339(at),
                "lastUpdateTime": rfc3339(at),
            }));
        }
    }
    nodes
}

fn set_status(resource: &mut Value, status: Value) {
    if let Some(object) = resource.as_object_mut() {
        if status.is_null() {
            object.shift_remove("clusterStatus");
        } else {
            object.insert("clusterStatus".to_owned(), status);
        }
    }
}

/// `value` with `@type` as its first field, as an `Any` is rendered.
fn with_type(value: &Value, type_url: &str) -> Value {
    let mut typed = Map::new();
    typed.insert("@type".to_owned(), Value::from(type_url));
    if let Some(object) = value.as_object() {
        typed.extend(object.clone());
    }
    Value::Object(typed)
}

#[cfg(test)]
mod tests {

    #[test]
    fn running_clusters_list_the_minimum_nodes_of_each_pool() {
        let mut resource = json!({
            "name": "projects/p/locations/r/modelDevelopmentClusters/c1",
            "nodePools": [
                {"id": "login", "scalingSpec": {"minNodeCount": "1", "maxNodeCount": "1"}},
                {"id": "cpu", "scalingSpec": {"minNodeCount": 2, "maxNodeCount": 4}},
                {"id": "gpu", "scalingSpec": {"maxNodeCount": "8"}}
            ],
            "orchestratorSpec": {"slurmSpec": {"loginNodePoolId": "login"}}
        });
        mark_running(&mut resource, 0);
        let nodes = resource["clusterStatus"]["nodesStatus"].as_array().unwrap();
        let names: Vec<_> = nodes
            .iter()
            .map(|n| n["instanceName"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["c1-login-0", "c1-cpu-0", "c1-cpu-1"]);
        assert_eq!(nodes[0]["nodePoolType"], "NODE_POOL_TYPE_LOGIN");
        assert_eq!(nodes[1]["nodePoolType"], "NODE_POOL_TYPE_COMPUTE");
    }

    use super::*;

    fn store_with_cluster() -> Store {
        let mut store = Store::default();
        store.clusters.insert(
            "c".to_owned(),
            StoredCluster::new(
                json!({"name": "c", "createTime": rfc3339(0), "clusterStatus": {"state": "RUNNING"}}),
            ),
        );
        store
    }

    fn start(store: &mut Store, kind: OperationKind, fails: bool) -> StoredOperation {
        store.start_operation(NewOperation {
            kind,
            cluster_name: "c".to_owned(),
            parent: "projects/1/locations/r".to_owned(),
            started_at: 1_000,
            finishes_at: 4_000,
            fails,
            failure: None,
            update_mode: None,
            target: None,
        })
    }

    #[test]
    fn an_operation_finishes_only_when_its_time_has_come() {
        let mut store = store_with_cluster();
        let operation = start(&mut store, OperationKind::Update, false);
        assert_eq!(operation.name, "projects/1/locations/r/operations/1");
        assert!(store.clusters["c"].active_operation.is_some());
        store.settle(3_999);
        assert_eq!(
            store.clusters["c"].resource()["clusterStatus"]["state"],
            "UPDATING"
        );
        store.settle(4_000);
        assert!(store.clusters["c"].active_operation.is_none());
        assert_eq!(
            store.clusters["c"].resource()["clusterStatus"]["state"],
            "RUNNING"
        );
        assert_eq!(store.clusters["c"].resource()["updateTime"], rfc3339(4_000));
    }

    /// A List page is written from each cluster's kept JSON text: every change made through
    /// the store (an operation starting and finishing) shows in it.
    #[test]
    fn the_kept_json_text_follows_every_change() {
        let mut store = store_with_cluster();
        let text = |store: &Store| -> Value {
            serde_json::from_str(store.clusters["c"].encoded()).unwrap()
        };
        assert_eq!(text(&store), *store.clusters["c"].resource());
        start(&mut store, OperationKind::Update, false);
        assert_eq!(text(&store)["clusterStatus"]["state"], "UPDATING");
        store.settle(4_000);
        assert_eq!(text(&store)["clusterStatus"]["state"], "RUNNING");
        assert_eq!(text(&store), *store.clusters["c"].resource());
    }

    #[test]
    fn an_operation_loaded_from_a_state_file_still_finishes_on_time() {
        let mut store = store_with_cluster();
        let operation = start(&mut store, OperationKind::Update, false);
        store.settle(3_999);
        // A state file does not keep the index of unsettled operations.
        let text = serde_json::to_string(&store).unwrap();
        let mut loaded: Store = serde_json::from_str(&text).unwrap();
        loaded.settle(3_999);
        assert!(!loaded.operations[&operation.name].is_done());
        loaded.settle(4_000);
        assert!(loaded.operations[&operation.name].is_done());
        assert!(loaded.clusters["c"].active_operation.is_none());
    }

    #[test]
    fn operations_finish_in_the_order_of_their_finish_times() {
        let mut store = store_with_cluster();
        let update = |finishes_at, display_name: &str| NewOperation {
            kind: OperationKind::Update,
            cluster_name: "c".to_owned(),
            parent: "projects/1/locations/r".to_owned(),
            started_at: 1_000,
            finishes_at,
            fails: false,
            failure: None,
            update_mode: None,
            target: Some(json!({"name": "c", "displayName": display_name})),
        };
        store.start_operation(update(5_000, "later"));
        store.start_operation(update(4_000, "sooner"));
        store.settle(6_000);
        assert_eq!(
            store.clusters["c"].resource()["displayName"],
            "later",
            "the operation that finished last was applied last"
        );
        assert!(store.operations.values().all(StoredOperation::is_done));
    }

    #[test]
    fn progress_messages_change_over_the_operation_life() {
        let mut store = store_with_cluster();
        let operation = start(&mut store, OperationKind::Create, false);
        let messages: Vec<Value> = [1_000, 2_500, 3_500]
            .map(|now| operation.render(now)["metadata"]["progressMessage"].clone())
            .to_vec();
        assert_eq!(
            messages,
            [
                "Validating the cluster request.",
                "Provisioning node pools.",
                "Configuring Slurm."
            ]
        );
        assert!(operation.render(3_500).get("done").is_none());
    }

    #[test]
    fn a_failed_create_leaves_the_cluster_in_error() {
        let mut store = store_with_cluster();
        let operation = start(&mut store, OperationKind::Create, true);
        store.settle(5_000);
        let rendered = store.operations[&operation.name].render(5_000);
        assert_eq!(rendered["done"], true);
        assert_eq!(rendered["error"]["code"], 13);
        assert_eq!(
            store.clusters["c"].resource()["clusterStatus"]["state"],
            "ERROR"
        );
        assert_eq!(
            store.clusters["c"].resource()["clusterStatus"]["detail"],
            FAILED_CREATE_DETAIL
        );
        assert_eq!(
            store.clusters["c"].resource()["clusterStatus"]["error"]["code"],
            13
        );
    }

    #[test]
    fn a_failed_operation_reports_the_error_it_was_given() {
        let mut store = store_with_cluster();
        let stockout = json!({"code": 8, "message": "(state:STOCKOUT)", "details": []});
        let operation = store.start_operation(NewOperation {
            kind: OperationKind::Create,
            cluster_name: "c".to_owned(),
            parent: "projects/1/locations/r".to_owned(),
            started_at: 1_000,
            finishes_at: 4_000,
            fails: true,
            failure: Some(stockout.clone()),
            update_mode: None,
            target: None,
        });
        store.settle(5_000);
        assert_eq!(
            store.operations[&operation.name].render(5_000)["error"],
            stockout
        );
        let status = &store.clusters["c"].resource()["clusterStatus"];
        assert_eq!(
            (&status["state"], &status["error"]),
            (&json!("ERROR"), &stockout)
        );
    }

    #[test]
    fn renaming_clusters_follows_every_reference() {
        let mut store = store_with_cluster();
        start(&mut store, OperationKind::Update, false);
        store.slurm.insert("c".to_owned(), SlurmState::default());
        store.rename_clusters(|name| format!("{name}2"));
        assert_eq!(store.clusters["c2"].resource()["name"], "c2");
        assert!(store.operations.values().all(|op| op.cluster_name == "c2"));
        assert!(store.slurm.contains_key("c2"));
    }

    #[test]
    fn when_a_delete_completed_is_kept_and_survives_a_state_file() {
        let mut store = store_with_cluster();
        start(&mut store, OperationKind::Delete, false);
        store.settle(3_999);
        assert_eq!(store.deleted_at("c"), None, "still deleting");
        store.settle(5_000);
        assert!(!store.clusters.contains_key("c"));
        assert_eq!(store.deleted_at("c"), Some(4_000), "its finish time");
        let text = serde_json::to_string(&store).unwrap();
        let loaded: Store = serde_json::from_str(&text).unwrap();
        assert_eq!(loaded.deleted_at("c"), Some(4_000));
    }

    #[test]
    fn a_failed_delete_restores_the_previous_status() {
        let mut store = store_with_cluster();
        start(&mut store, OperationKind::Delete, true);
        store.settle(5_000);
        assert_eq!(
            store.clusters["c"].resource()["clusterStatus"],
            json!({"state": "RUNNING"})
        );
    }
}
