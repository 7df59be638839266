//! The `Emulator` handle: shared state behind one mutex, its options, the
//! request log, and the test-control methods (fault switches, Slurm job, node,
//! controller and REST-version injection, seeding clusters and setting their status, capacity
//! failures, Cloud Storage buckets); the admin HTTP API (`admin`) calls the same methods.
//! HTTP handling lives in `routes`, serving in `server`.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::api_error::{ApiError, Code};
use crate::capacity::{CapacityFailure, take_capacity_failure};
use crate::casing::camel_case_keys;
use crate::clock::{Millis, duration_millis, now_millis, rfc3339};
use crate::error::EmulatorError;
use crate::faults::{FaultDice, FaultSpec};
use crate::persist;
use crate::preflight::PreflightWorld;
use crate::project::{numbered_name, project_number_of};
use crate::refusals::RefusedLocation;
use crate::resource::{Parent, complete_cluster};
use crate::slurm::{DEFAULT_API_VERSIONS, compute_pools};
use crate::start_failures::{
    StartFailure, start_failure_event, start_failure_message, start_failure_reason,
};
use crate::store::{
    NewOperation, OperationKind, SlurmState, Store, StoredCluster, StoredOperation, mark_running,
};

/// The request log keeps at most this many entries (the oldest go first), so
/// a long-running emulator does not grow without bound.
const MAX_RECORDED_REQUESTS: usize = 100_000;

/// How the emulator behaves.
#[derive(Clone, Debug, PartialEq)]
pub struct EmulatorOptions {
    /// How long create, update and delete operations run.
    pub operation_duration: Duration,
    /// Fixed latency added before every request is handled.
    pub latency: Duration,
    /// Injected faults.
    pub faults: FaultSpec,
    /// List page size when the request gives none (or 0).
    pub default_page_size: usize,
    /// The largest page List returns, whatever the request asks for.
    pub max_page_size: usize,
    /// The only accepted bearer token; `None` accepts any non-empty token.
    pub required_token: Option<String>,
    /// Where state is persisted after every change (and loaded from at start).
    pub state_file: Option<PathBuf>,
    /// Whether `operations/{id}:wait` answers `501 UNIMPLEMENTED`.
    pub wait_unimplemented: bool,
    /// The project number in operation names (and the default service account)
    /// when `project_numbers` is off.
    pub project_number: String,
    /// Slurm's `MinJobAge`: finished jobs leave `/slurm/{version}/jobs` this long after they end.
    pub min_job_age: Duration,
    /// Answer with project numbers where requests name project IDs (as Google
    /// does): every name the emulator writes carries
    /// [`project_number_of`](crate::project_number_of) the request's project,
    /// and the ID and the number address the same clusters and operations.
    pub project_numbers: bool,
    /// Cloud Storage buckets that exist from the start (created if the state has not got them).
    pub buckets: Vec<String>,
    /// Create a Cloud Storage bucket the first time a request names it, instead of answering
    /// `404` (as `endpoint = "local"` does, so any configured bucket works).
    pub create_buckets_on_use: bool,
    /// Answer `429 rateLimitExceeded` to a create, update or delete of a Cloud Storage object
    /// asked less than [`OBJECT_MUTATION_INTERVAL`] after the previous one of the same object
    /// name, as Cloud Storage limits each object to about one mutation a second. Off by default:
    /// how much of a burst Google tolerates is not documented, and refusing every quick second
    /// write would slow every short run by a retry.
    pub object_mutation_limit: bool,
    /// The slurmrestd REST versions (`v0.0.42`, …) every cluster serves unless a test sets its
    /// own: by default v0.0.40 to v0.0.42, those of Slurm 24.11.
    pub slurm_api_versions: Vec<String>,
    /// Machine types that cannot be had: a create with such a node pool, or an update adding
    /// one, fails as each entry's kind says (a stockout, a quota refusal, not allowed).
    pub capacity_failures: Vec<CapacityFailure>,
    /// Machine types whose dynamic nodes do not start (a shortage on day two): see
    /// [`StartFailure`].
    pub start_failures: Vec<StartFailure>,
    /// How long a cluster ID stays taken after its delete completed: a create of it meanwhile
    /// answers `409 ALREADY_EXISTS` as if the cluster were still there, so that a client can
    /// rehearse waiting for an ID to be free. Zero: free at once.
    pub id_blocked_after_delete: Duration,
    /// Update-mask paths answered `400 INVALID_ARGUMENT` naming the path, although the emulator
    /// can apply them: rehearses a service that refuses a path only the Terraform provider
    /// sends (`display_name`, `lustre_export_config`, …).
    pub refused_update_paths: Vec<String>,
    /// Store and answer every Slurm configuration map key folded (lowercase, no underscores:
    /// `DefMemPerCPU` → `defmempercpu`), as a service that does not echo the request's
    /// spelling would; the service compares keys that way (*Create cluster*, "Slurm
    /// configuration maps"), so a client must too.
    pub fold_slurm_config_keys: bool,
    /// Locations (of one project, or of every project) whose every cluster API request is
    /// refused — `403 PERMISSION_DENIED`, or `400 INVALID_ARGUMENT` for a region the project
    /// may not use — as the service refuses a caller without permission there or a project
    /// that is not allowlisted in the region.
    pub refused_locations: Vec<RefusedLocation>,
    /// What the reads of preflight (Service Usage, Compute Engine networks and subnetworks,
    /// Filestore instances) find: by default every service enabled and the quick start's
    /// network, subnetwork and home instance in every project.
    pub preflight: PreflightWorld,
}

/// The least time between two mutations of one Cloud Storage object with
/// [`EmulatorOptions::object_mutation_limit`].
pub const OBJECT_MUTATION_INTERVAL: Duration = Duration::from_secs(1);

impl Default for EmulatorOptions {
    fn default() -> Self {
        EmulatorOptions {
            operation_duration: Duration::from_secs(2),
            latency: Duration::ZERO,
            faults: FaultSpec::default(),
            default_page_size: 10,
            max_page_size: 50,
            required_token: None,
            state_file: None,
            wait_unimplemented: false,
            project_number: "123456789012".to_owned(),
            min_job_age: Duration::from_secs(300),
            project_numbers: false,
            buckets: Vec::new(),
            create_buckets_on_use: false,
            object_mutation_limit: false,
            slurm_api_versions: DEFAULT_API_VERSIONS
                .iter()
                .map(|v| (*v).to_owned())
                .collect(),
            capacity_failures: Vec::new(),
            start_failures: Vec::new(),
            id_blocked_after_delete: Duration::ZERO,
            refused_update_paths: Vec::new(),
            fold_slurm_config_keys: false,
            refused_locations: Vec::new(),
            preflight: PreflightWorld::default(),
        }
    }
}

/// One API request as the emulator received it.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedRequest {
    /// HTTP method, e.g. `PATCH`.
    pub method: String,
    /// URL path as sent (percent-encoding kept).
    pub path: String,
    /// Raw query string without `?`; empty when there is none.
    pub query: String,
    /// The body, when it was JSON.
    pub body: Option<Value>,
    /// The HTTP status answered; 0 when the connection was dropped on purpose.
    pub status: u16,
}

/// A local stand-in for the Model Development Cluster API. Cheap to clone:
/// all clones share one state.
#[derive(Clone, Debug)]
pub struct Emulator {
    shared: Arc<Mutex<State>>,
}

/// Everything behind the emulator's lock.
#[derive(Debug)]
pub(crate) struct State {
    pub(crate) store: Store,
    pub(crate) options: EmulatorOptions,
    pub(crate) dice: FaultDice,
    requests: VecDeque<(u64, RecordedRequest)>,
    next_request_number: u64,
    /// Buckets whose every Storage request answers `403` (not persisted).
    pub(crate) forbidden_buckets: BTreeSet<String>,
    /// When each object (bucket, name) was last asked to change, for
    /// [`EmulatorOptions::object_mutation_limit`] (not persisted).
    pub(crate) object_mutations: HashMap<(String, String), Instant>,
    /// Held so that no other emulator uses the state file meanwhile.
    _state_lock: Option<std::fs::File>,
}

impl State {
    /// Persists the store if a state file is configured.
    pub(crate) fn save(&self) -> Result<(), EmulatorError> {
        match &self.options.state_file {
            Some(path) => persist::save(path, &self.store),
            None => Ok(()),
        }
    }

    /// Makes `change` and saves the store; if the save fails, the store is put back as it was
    /// and the save's error answered. A request answered `500` must have changed nothing: a
    /// retry that found the change made would answer success for what a restart loses.
    pub(crate) fn commit<T, E: From<EmulatorError>>(
        &mut self,
        change: impl FnOnce(&mut Self) -> Result<T, E>,
    ) -> Result<T, E> {
        let Some(path) = self.options.state_file.clone() else {
            return change(self);
        };
        let before = self.store.clone();
        let changed = change(self)?;
        if let Err(error) = persist::save(&path, &self.store) {
            self.store = before;
            return Err(error.into());
        }
        Ok(changed)
    }

    /// Starts an operation on `cluster_name` at `now`; whether it will fail is rolled now, and
    /// `failure` (a capacity failure's error) makes it fail with that error.
    pub(crate) fn start_operation(
        &mut self,
        kind: OperationKind,
        cluster_name: &str,
        parent: &Parent,
        update: Option<(Option<String>, Value)>,
        failure: Option<Value>,
        now: Millis,
    ) -> StoredOperation {
        // The dice are rolled whatever happens next, so a capacity failure does not shift
        // the faults of later operations.
        let rolled = self.dice.spec().applies_to_location(&parent.location)
            && self.dice.roll_operation_failure();
        let (update_mode, target) = match update {
            Some((mode, target)) => (mode, Some(target)),
            None => (None, None),
        };
        self.store.start_operation(NewOperation {
            kind,
            cluster_name: cluster_name.to_owned(),
            parent: format!(
                "projects/{}/locations/{}",
                self.project_number(parent),
                parent.location
            ),
            started_at: now,
            finishes_at: now.saturating_add(duration_millis(self.options.operation_duration)),
            fails: rolled || failure.is_some(),
            failure,
            update_mode,
            target,
        })
    }

    /// The capacity failure that the first of `pools` matches, if any, using up one of its
    /// times: see [`take_capacity_failure`].
    pub(crate) fn take_capacity_failure<'a>(
        &mut self,
        pools: impl IntoIterator<Item = &'a Value>,
        parent: &Parent,
    ) -> Result<Option<Value>, ApiError> {
        take_capacity_failure(&mut self.options.capacity_failures, pools, parent)
    }

    /// Records, once per pool, the event of each `RUNNING` cluster's pool whose dynamic nodes
    /// [`EmulatorOptions::start_failures`] keep from starting, at `now`; saves when it
    /// recorded one.
    fn record_start_failures(&mut self, now: Millis) {
        let failures = &self.options.start_failures;
        let mut recorded = Vec::new();
        for (name, cluster) in &self.store.clusters {
            let resource = cluster.resource();
            let running = resource.pointer("/clusterStatus/state") == Some(&json!("RUNNING"));
            let Some(parent) = Parent::of_cluster_name(name).filter(|_| running) else {
                continue;
            };
            let events = resource.get("clusterEvents").and_then(Value::as_array);
            for pool in compute_pools(resource) {
                let Some(reason) = start_failure_reason(failures, pool, &parent) else {
                    continue;
                };
                let pool_id = pool.get("id").and_then(Value::as_str).unwrap_or_default();
                let message = start_failure_message(pool_id, &reason);
                let told = events.into_iter().flatten().any(|event| {
                    event.get("eventMessage").and_then(Value::as_str) == Some(message.as_str())
                });
                if !told {
                    recorded.push((
                        name.clone(),
                        start_failure_event(pool_id, &reason, &rfc3339(now)),
                    ));
                }
            }
        }
        for (name, event) in &recorded {
            if let Some(cluster) = self.store.clusters.get_mut(name) {
                let resource = cluster.resource_mut();
                match resource["clusterEvents"].as_array_mut() {
                    Some(events) => events.push(event.clone()),
                    None => resource["clusterEvents"] = json!([event]),
                }
            }
        }
        if !recorded.is_empty() {
            save_best_effort(self);
        }
    }

    /// Whether a create of `cluster_name` at `now` must still find its ID taken: the cluster
    /// exists (a delete that has not finished included), or its delete completed less than
    /// [`EmulatorOptions::id_blocked_after_delete`] ago.
    pub(crate) fn cluster_id_taken(&self, cluster_name: &str, now: Millis) -> bool {
        let blocked_for = duration_millis(self.options.id_blocked_after_delete);
        self.store.clusters.contains_key(cluster_name)
            || self
                .store
                .deleted_at(cluster_name)
                .is_some_and(|deleted_at| now < deleted_at.saturating_add(blocked_for))
    }

    /// The project number the emulator uses for `parent`'s project: derived
    /// from it with `project_numbers`, else the configured `project_number`.
    pub(crate) fn project_number(&self, parent: &Parent) -> String {
        if self.options.project_numbers {
            project_number_of(&parent.project)
        } else {
            self.options.project_number.clone()
        }
    }

    /// A full resource name as the emulator stores it: with `project_numbers`,
    /// the project ID becomes its number.
    pub(crate) fn stored_name(&self, name: &str) -> String {
        if self.options.project_numbers {
            numbered_name(name)
        } else {
            name.to_owned()
        }
    }

    /// Logs a request on arrival and returns its number for [`State::record_status`].
    pub(crate) fn record_request(&mut self, request: RecordedRequest) -> u64 {
        let number = self.next_request_number;
        self.next_request_number += 1;
        if self.requests.len() >= MAX_RECORDED_REQUESTS {
            self.requests.pop_front();
        }
        self.requests.push_back((number, request));
        number
    }

    /// Sets the answered status of request `number`, if it is still in the log.
    pub(crate) fn record_status(&mut self, number: u64, status: u16) {
        if let Some((_, request)) = self.requests.iter_mut().rev().find(|(n, _)| *n == number) {
            request.status = status;
        }
    }
}

impl From<EmulatorError> for ApiError {
    fn from(error: EmulatorError) -> Self {
        ApiError::new(Code::Internal, error.to_string())
    }
}

impl Emulator {
    /// Creates an emulator, loading `options.state_file` if it exists. The
    /// state file is locked for as long as the emulator (any clone of it)
    /// lives: a second emulator on the same file fails with
    /// [`EmulatorError::StateInUse`].
    pub fn new(options: EmulatorOptions) -> Result<Self, EmulatorError> {
        if let Some(path) = &options.state_file {
            persist::check_kind(path)?;
        }
        let state_lock = options
            .state_file
            .as_deref()
            .map(persist::lock)
            .transpose()?;
        let mut store = match &options.state_file {
            Some(path) => persist::load(path)?.unwrap_or_default(),
            None => Store::default(),
        };
        if options.project_numbers {
            // A state file written without project numbers keeps its clusters.
            store.rename_clusters(numbered_name);
        }
        let new_buckets = options
            .buckets
            .iter()
            .filter(|bucket| store.storage.create_bucket(bucket))
            .count();
        let state = State {
            store,
            dice: FaultDice::new(options.faults.clone()),
            options,
            requests: VecDeque::new(),
            next_request_number: 0,
            forbidden_buckets: BTreeSet::new(),
            object_mutations: HashMap::new(),
            _state_lock: state_lock,
        };
        if new_buckets > 0 {
            state.save()?;
        }
        Ok(Emulator {
            shared: Arc::new(Mutex::new(state)),
        })
    }

    /// The state, with every operation that is due completed.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the JSON state half
        // updated in a way later requests could not cope with, so keep going.
        let mut state = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        let now = now_millis();
        state.store.settle(now);
        if !state.options.start_failures.is_empty() {
            state.record_start_failures(now);
        }
        state
    }

    /// Replaces the fault spec and reseeds the fault RNG from it.
    pub fn set_faults(&self, faults: FaultSpec) {
        let mut state = self.lock();
        state.dice = FaultDice::new(faults.clone());
        state.options.faults = faults;
    }

    /// Switches `operations/{id}:wait` between working and `501 UNIMPLEMENTED`.
    pub fn set_wait_unimplemented(&self, on: bool) {
        self.lock().options.wait_unimplemented = on;
    }

    /// Sets the slurmrestd job objects that `callSlurmRestApi` returns for
    /// `cluster_name` (the full resource name).
    /// (With `project_numbers`, every test-control method taking a cluster name
    /// accepts the project ID or the number.)
    pub fn set_slurm_jobs(&self, cluster_name: &str, jobs: Vec<Value>) {
        self.change_slurm(cluster_name, |slurm| slurm.jobs = jobs);
    }

    /// Sets the slurmrestd node objects that `callSlurmRestApi` returns for `cluster_name`.
    pub fn set_slurm_nodes(&self, cluster_name: &str, nodes: Vec<Value>) {
        self.change_slurm(cluster_name, |slurm| slurm.nodes = Some(nodes));
    }

    /// Sets the slurmrestd REST versions (`v0.0.40`, …) that `cluster_name` serves; any other
    /// version in a Slurm path answers 404. The default is [`EmulatorOptions::slurm_api_versions`].
    pub fn set_slurm_api_versions(&self, cluster_name: &str, versions: &[&str]) {
        let versions = versions.iter().map(|v| (*v).to_owned()).collect();
        self.change_slurm(cluster_name, |slurm| slurm.api_versions = Some(versions));
    }

    /// Makes the relay refuse every Slurm path of `cluster_name` that starts with one of
    /// `prefixes` (`/slurm/v0.0.42/nodes`, `/slurm/v0.0.45/`) with `400 INVALID_ARGUMENT` "The
    /// path is not a valid Slurm path"; an empty list relays every path again.
    pub fn set_slurm_refused_paths(&self, cluster_name: &str, prefixes: Vec<String>) {
        self.change_slurm(cluster_name, |slurm| slurm.refused_paths = prefixes);
    }

    /// Makes `callSlurmRestApi` on `cluster_name` answer `503 UNAVAILABLE` (or work again).
    pub fn set_slurm_unreachable(&self, cluster_name: &str, unreachable: bool) {
        self.change_slurm(cluster_name, |slurm| slurm.unreachable = unreachable);
    }

    /// Takes `cluster_name`'s slurmctld down (or up again): slurmrestd still answers, its
    /// ping reports the controller `DOWN`, and the job and node listings answer 500.
    pub fn set_slurm_controller_down(&self, cluster_name: &str, down: bool) {
        self.change_slurm(cluster_name, |slurm| slurm.controller_down = down);
    }

    /// Replaces the capacity failures: a create with a node pool that one of them matches, or
    /// an update adding such a pool, fails as the entry's kind says (see [`CapacityFailure`]).
    pub fn set_capacity_failures(&self, failures: Vec<CapacityFailure>) {
        self.lock().options.capacity_failures = failures;
    }

    /// The capacity failures in force.
    pub fn capacity_failures(&self) -> Vec<CapacityFailure> {
        self.lock().options.capacity_failures.clone()
    }

    /// Replaces [`EmulatorOptions::start_failures`]: from now on, the dynamic nodes of the
    /// pools they match are listed by Slurm as failed to start, and each running cluster with
    /// such a pool records an event for it (once per pool).
    pub fn set_start_failures(&self, failures: Vec<StartFailure>) {
        self.lock().options.start_failures = failures;
    }

    /// The start failures in force.
    pub fn start_failures(&self) -> Vec<StartFailure> {
        self.lock().options.start_failures.clone()
    }

    /// Replaces [`EmulatorOptions::preflight`]: what the reads of preflight find from now on.
    pub fn set_preflight_world(&self, world: PreflightWorld) {
        self.lock().options.preflight = world;
    }

    /// What the reads of preflight find.
    pub fn preflight_world(&self) -> PreflightWorld {
        self.lock().options.preflight.clone()
    }

    /// Replaces [`EmulatorOptions::refused_locations`]: every cluster API request for one of
    /// them is refused from now on.
    pub fn set_refused_locations(&self, refused: Vec<RefusedLocation>) {
        self.lock().options.refused_locations = refused;
    }

    /// The refused locations in force.
    pub fn refused_locations(&self) -> Vec<RefusedLocation> {
        self.lock().options.refused_locations.clone()
    }

    /// Sets [`EmulatorOptions::id_blocked_after_delete`].
    pub fn set_id_blocked_after_delete(&self, blocked_for: Duration) {
        self.lock().options.id_blocked_after_delete = blocked_for;
    }

    /// [`EmulatorOptions::id_blocked_after_delete`] in force.
    pub fn id_blocked_after_delete(&self) -> Duration {
        self.lock().options.id_blocked_after_delete
    }

    /// Seeds a `RUNNING` cluster under the full resource name `cluster_name`,
    /// replacing any cluster of that name. Keys are normalised to camelCase,
    /// server defaults are filled, and `name`, `createTime`, `updateTime`,
    /// `startTime` and `clusterStatus` are set. No validation is done, so
    /// tests can seed clusters the API would refuse.
    pub fn insert_cluster(&self, cluster_name: &str, cluster: Value) {
        let mut state = self.lock();
        let cluster_name = state.stored_name(cluster_name);
        let mut resource = seeded_resource(&cluster_name, cluster);
        let parent = Parent::of_cluster_name(&cluster_name);
        let project_number = match &parent {
            Some(parent) => state.project_number(parent),
            None => state.options.project_number.clone(),
        };
        complete_cluster(&mut resource, parent.as_ref(), &project_number);
        mark_running(&mut resource, now_millis());
        state
            .store
            .clusters
            .insert(cluster_name, StoredCluster::new(resource));
        save_best_effort(&state);
    }

    /// The cluster as Get would return it.
    pub fn cluster(&self, cluster_name: &str) -> Option<Value> {
        let state = self.lock();
        state
            .store
            .clusters
            .get(&state.stored_name(cluster_name))
            .map(|cluster| cluster.resource().clone())
    }

    /// Puts a stored cluster into `state` (`ERROR`, `UPDATING`, `PROVISIONING`,
    /// `STOPPING`, `RUNNING`, …) with an optional `clusterStatus.detail`, as if
    /// the service had; no operation is started or finished. `ERROR` also sets
    /// `clusterStatus.error` (`code` 13 and the detail as `message`); `RUNNING`
    /// lists the nodes again. A cluster in a transitional state refuses updates
    /// and deletes with `ABORTED` until it is set back. Answers whether the
    /// cluster exists.
    pub fn set_cluster_status(
        &self,
        cluster_name: &str,
        state: &str,
        detail: Option<&str>,
    ) -> bool {
        let mut shared = self.lock();
        let name = shared.stored_name(cluster_name);
        let Some(cluster) = shared.store.clusters.get_mut(&name) else {
            return false;
        };
        set_cluster_state(cluster.resource_mut(), state, detail);
        save_best_effort(&shared);
        true
    }

    /// Sets `clusterStatus.nodesStatus` of a stored cluster, as the service reports its
    /// nodes (`nodePoolId`, `nodeState`, `instanceName`, …; not checked). Answers whether the
    /// cluster exists.
    pub fn set_nodes_status(&self, cluster_name: &str, nodes: Vec<Value>) -> bool {
        self.change_resource(cluster_name, |resource| {
            resource["clusterStatus"]["nodesStatus"] = Value::from(nodes);
        })
    }

    /// Sets `clusterEvents` of a stored cluster (not checked). Answers whether the cluster
    /// exists.
    pub fn set_cluster_events(&self, cluster_name: &str, events: Vec<Value>) -> bool {
        self.change_resource(cluster_name, |resource| {
            resource["clusterEvents"] = Value::from(events);
        })
    }

    /// Whether a cluster of that name is stored.
    pub fn has_cluster(&self, cluster_name: &str) -> bool {
        let state = self.lock();
        state
            .store
            .clusters
            .contains_key(&state.stored_name(cluster_name))
    }

    /// Creates the Cloud Storage bucket `bucket` (nothing happens if it exists).
    pub fn create_bucket(&self, bucket: &str) {
        let mut state = self.lock();
        if state.store.storage.create_bucket(bucket) {
            save_best_effort(&state);
        }
    }

    /// Makes every Storage request on `bucket` answer `403 forbidden` (or work again), as for
    /// a caller without the `storage.objects.*` permissions.
    pub fn set_bucket_forbidden(&self, bucket: &str, forbidden: bool) {
        let mut state = self.lock();
        if forbidden {
            state.forbidden_buckets.insert(bucket.to_owned());
        } else {
            state.forbidden_buckets.remove(bucket);
        }
    }

    /// The content and generation of the live object `object` in `bucket`, as
    /// `GET …?alt=media` would return them.
    pub fn object(&self, bucket: &str, object: &str) -> Option<(Vec<u8>, i64)> {
        let state = self.lock();
        let stored = state.store.storage.get(bucket, object, None).ok()?;
        Some((stored.content.clone(), stored.generation))
    }

    /// Every API request received so far (up to the last 100,000), in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock()
            .requests
            .iter()
            .map(|(_, request)| request.clone())
            .collect()
    }

    /// Empties the request log.
    pub fn clear_requests(&self) {
        self.lock().requests.clear();
    }

    fn change_resource(&self, cluster_name: &str, change: impl FnOnce(&mut Value)) -> bool {
        let mut state = self.lock();
        let name = state.stored_name(cluster_name);
        let Some(cluster) = state.store.clusters.get_mut(&name) else {
            return false;
        };
        change(cluster.resource_mut());
        save_best_effort(&state);
        true
    }

    fn change_slurm(&self, cluster_name: &str, change: impl FnOnce(&mut SlurmState)) {
        let mut state = self.lock();
        let cluster_name = state.stored_name(cluster_name);
        change(state.store.slurm.entry(cluster_name).or_default());
        save_best_effort(&state);
    }
}

fn save_best_effort(state: &State) {
    // The test-control methods cannot report errors; if this save fails, the
    // next API mutation saves the whole store again and reports the failure
    // as `500 INTERNAL`.
    let _ = state.save();
}

/// Replaces `clusterStatus` with `state`, its detail and, for `ERROR`, an error.
fn set_cluster_state(resource: &mut Value, state: &str, detail: Option<&str>) {
    if state == "RUNNING" {
        mark_running(resource, now_millis());
    } else {
        let mut status = json!({"state": state});
        if state == "ERROR" {
            status["error"] = json!({
                "code": Code::Internal.rpc_number(),
                "message": detail.unwrap_or("The cluster is in an error state."),
                "details": [],
            });
        }
        resource["clusterStatus"] = status;
    }
    if let Some(detail) = detail {
        resource["clusterStatus"]["detail"] = Value::from(detail);
    }
}

/// `cluster` in camelCase with `name` first and `createTime` set, ready to be stored.
fn seeded_resource(cluster_name: &str, cluster: Value) -> Value {
    let camel = camel_case_keys(&cluster, "").unwrap_or(cluster);
    let mut resource = Map::new();
    resource.insert("name".to_owned(), Value::from(cluster_name));
    if let Value::Object(fields) = camel {
        resource.extend(fields.into_iter().filter(|(key, _)| key != "name"));
    }
    resource.insert("createTime".to_owned(), Value::from(rfc3339(now_millis())));
    Value::Object(resource)
}
