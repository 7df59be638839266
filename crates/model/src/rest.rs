//! The REST vocabulary: the one place where the API's request paths and query parameters are
//! spelled. A plan's create, update and delete are a typed [`ClusterRequest`]; every other call
//! the client makes (list, get, operation polling, `:wait`, `:callSlurmRestApi`) is a
//! [`RestCall`] built by a function of this module, and the slurmrestd paths such a relay
//! carries are spelled here too. Paths are relative (`/v1beta1/…`): only the
//! executor's `ApiClient` joins them with a base URL.
//!
//! A request serialises as the plan document shows it (`kind`, `method`, `path`, `query`,
//! `body`), and deserialising checks it back into the typed form: the path must name a valid
//! cluster, the method must be the kind's, the mask paths and the mode must be known, so that a
//! tampered saved plan is refused when it is loaded rather than sent.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::fields::{NotAllowedMaskPath, UpdateMaskPath};
use crate::names::{ClusterName, Location, NameError, OperationName};
use crate::update_mode::{UnknownUpdateMode, UpdateMode};

/// The API version of every cluster call.
const CLUSTERS_VERSION: &str = "v1beta1";

/// The API version of operation calls (the service answers them on `v1`).
const OPERATIONS_VERSION: &str = "v1";

/// The last segment of a cluster collection path.
const COLLECTION: &str = "modelDevelopmentClusters";

/// The query parameter naming a new cluster's ID.
const CLUSTER_ID_PARAM: &str = "modelDevelopmentClusterId";

/// The query parameter of an update's mask.
const UPDATE_MASK_PARAM: &str = "updateMask";

/// The query parameter of an update's mode.
const UPDATE_MODE_PARAM: &str = "updateMode";

/// An HTTP method the client uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HttpMethod {
    /// `GET`.
    Get,
    /// `POST`.
    Post,
    /// `PATCH`.
    Patch,
    /// `DELETE`.
    Delete,
}

impl HttpMethod {
    /// The method as sent.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Patch => "PATCH",
            Self::Delete => "DELETE",
        }
    }
}

impl fmt::Display for HttpMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One call, relative to the endpoint's base URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestCall {
    /// The method.
    pub method: HttpMethod,
    /// The path, starting with `/v1beta1/` or `/v1/`.
    pub path: String,
    /// Query parameters in order, unencoded.
    pub query: Vec<(String, String)>,
}

impl RestCall {
    fn new(method: HttpMethod, path: String) -> Self {
        Self {
            method,
            path,
            query: Vec::new(),
        }
    }

    fn with(mut self, key: &str, value: impl Into<String>) -> Self {
        self.query.push((key.to_owned(), value.into()));
        self
    }
}

/// `GET /v1beta1/projects/{P}/locations/{R}/modelDevelopmentClusters?pageSize=N[&pageToken=T]`.
pub fn list_clusters(location: &Location, page_size: u32, page_token: Option<&str>) -> RestCall {
    let call = RestCall::new(HttpMethod::Get, collection_path(location))
        .with("pageSize", page_size.to_string());
    match page_token {
        Some(token) => call.with("pageToken", token),
        None => call,
    }
}

/// `GET /v1beta1/{cluster}`.
pub fn get_cluster(name: &ClusterName) -> RestCall {
    RestCall::new(HttpMethod::Get, cluster_path(name))
}

/// `GET /v1/{operation}`.
pub fn get_operation(name: &OperationName) -> RestCall {
    RestCall::new(HttpMethod::Get, format!("/{OPERATIONS_VERSION}/{name}"))
}

/// `POST /v1/{operation}:wait?timeout={N}s`.
pub fn wait_operation(name: &OperationName, timeout_seconds: u64) -> RestCall {
    RestCall::new(
        HttpMethod::Post,
        format!("/{OPERATIONS_VERSION}/{name}:wait"),
    )
    .with("timeout", format!("{timeout_seconds}s"))
}

/// `POST /v1beta1/{cluster}:callSlurmRestApi`.
pub fn call_slurm_rest_api(name: &ClusterName) -> RestCall {
    RestCall::new(
        HttpMethod::Post,
        format!("{}:callSlurmRestApi", cluster_path(name)),
    )
}

/// slurmrestd's job list at REST `version` (e.g. `v0.0.42`): the `path` a
/// [`call_slurm_rest_api`] relays.
pub fn slurm_jobs_path(version: &str) -> String {
    format!("/slurm/{version}/jobs")
}

/// slurmrestd's node list at REST `version`: the `path` a [`call_slurm_rest_api`] relays.
pub fn slurm_nodes_path(version: &str) -> String {
    format!("/slurm/{version}/nodes")
}

/// slurmrestd's ping of its controllers (slurmctld) at REST `version`: the `path` a
/// [`call_slurm_rest_api`] relays.
pub fn slurm_ping_path(version: &str) -> String {
    format!("/slurm/{version}/ping")
}

fn collection_path(location: &Location) -> String {
    format!("/{CLUSTERS_VERSION}/{location}/{COLLECTION}")
}

fn cluster_path(name: &ClusterName) -> String {
    format!("/{CLUSTERS_VERSION}/{name}")
}

/// Which API call a [`ClusterRequest`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestKind {
    /// `POST …/modelDevelopmentClusters?modelDevelopmentClusterId=ID`.
    Create,
    /// `PATCH …/modelDevelopmentClusters/ID?updateMask=…&updateMode=…`.
    Update,
    /// `DELETE …/modelDevelopmentClusters/ID`.
    Delete,
}

impl RequestKind {
    /// The HTTP method of this kind of request.
    pub const fn method(self) -> HttpMethod {
        match self {
            Self::Create => HttpMethod::Post,
            Self::Update => HttpMethod::Patch,
            Self::Delete => HttpMethod::Delete,
        }
    }

    const fn noun(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Update => "update",
            Self::Delete => "delete",
        }
    }
}

/// The `updateMask` of an update: allowed mask paths, written comma-joined.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UpdateMask(Vec<UpdateMaskPath>);

impl UpdateMask {
    /// A mask of these paths, in this order.
    pub fn new(paths: Vec<UpdateMaskPath>) -> Self {
        Self(paths)
    }

    /// The paths, in order.
    pub fn paths(&self) -> &[UpdateMaskPath] {
        &self.0
    }
}

impl fmt::Display for UpdateMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, path) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str(",")?;
            }
            f.write_str(path.as_str())?;
        }
        Ok(())
    }
}

impl FromStr for UpdateMask {
    type Err = NotAllowedMaskPath;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.split(',')
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map(Self)
    }
}

/// One create, update or delete of a cluster, exactly as the executor sends it.
#[derive(Debug, Clone, PartialEq)]
pub enum ClusterRequest {
    /// `POST …/modelDevelopmentClusters?modelDevelopmentClusterId=ID` with the new cluster.
    Create {
        /// The cluster made.
        name: ClusterName,
        /// The cluster, lowerCamelCase JSON.
        body: Value,
    },
    /// `PATCH …/ID?updateMask=…&updateMode=…` with the complete cluster after the update.
    Update {
        /// The cluster changed.
        name: ClusterName,
        /// What changes.
        mask: UpdateMask,
        /// Which fields the service applies.
        mode: UpdateMode,
        /// The cluster, lowerCamelCase JSON.
        body: Value,
    },
    /// `DELETE …/ID`, without a body.
    Delete {
        /// The cluster deleted.
        name: ClusterName,
    },
}

impl ClusterRequest {
    /// Which call this is.
    pub fn kind(&self) -> RequestKind {
        match self {
            Self::Create { .. } => RequestKind::Create,
            Self::Update { .. } => RequestKind::Update,
            Self::Delete { .. } => RequestKind::Delete,
        }
    }

    /// The HTTP method.
    pub fn method(&self) -> HttpMethod {
        self.kind().method()
    }

    /// The cluster the request is about.
    pub fn name(&self) -> &ClusterName {
        match self {
            Self::Create { name, .. } | Self::Update { name, .. } | Self::Delete { name } => name,
        }
    }

    /// The owner a create labels its cluster with (its `clusterform-stack` label), if any.
    pub fn stack_label(&self) -> Option<&str> {
        match self {
            Self::Create { body, .. } => body.get("labels")?.get(crate::STACK_LABEL)?.as_str(),
            Self::Update { .. } | Self::Delete { .. } => None,
        }
    }

    /// The path: the collection for a create, the cluster otherwise.
    pub fn path(&self) -> String {
        match self {
            Self::Create { name, .. } => collection_path(name.location()),
            Self::Update { name, .. } | Self::Delete { name } => cluster_path(name),
        }
    }

    /// The query parameters, in order.
    pub fn query(&self) -> Vec<(String, String)> {
        match self {
            Self::Create { name, .. } => {
                vec![(CLUSTER_ID_PARAM.to_owned(), name.id().to_string())]
            }
            Self::Update { mask, mode, .. } => vec![
                (UPDATE_MASK_PARAM.to_owned(), mask.to_string()),
                (UPDATE_MODE_PARAM.to_owned(), mode.as_str().to_owned()),
            ],
            Self::Delete { .. } => Vec::new(),
        }
    }

    /// The JSON body, if the call has one.
    pub fn body(&self) -> Option<&Value> {
        match self {
            Self::Create { body, .. } | Self::Update { body, .. } => Some(body),
            Self::Delete { .. } => None,
        }
    }

    /// Method, path and query as one call.
    pub fn call(&self) -> RestCall {
        RestCall {
            method: self.method(),
            path: self.path(),
            query: self.query(),
        }
    }
}

/// Why a serialised request was refused; each message names the field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// `method` is not the one of `kind`.
    #[error("`method` `{method}` does not match `kind` {kind:?}: a {noun} is sent with {expected}", noun = kind.noun(), expected = kind.method())]
    Method {
        /// The request's kind.
        kind: RequestKind,
        /// The method found.
        method: String,
    },
    /// `path` is not the path of the request's kind.
    #[error("`path` `{path}` is not {expected}")]
    Path {
        /// The path found.
        path: String,
        /// What it should have been.
        expected: &'static str,
    },
    /// `path` has the right shape but names no valid cluster.
    #[error("`path` `{path}`: {source}")]
    Name {
        /// The path found.
        path: String,
        /// What is wrong with the name.
        source: NameError,
    },
    /// `query` lacks, repeats or adds a parameter.
    #[error("`query` must hold exactly {expected} for a {noun}", noun = kind.noun())]
    Query {
        /// The request's kind.
        kind: RequestKind,
        /// The parameters expected.
        expected: &'static str,
    },
    /// `query` has an `updateMask` naming a path that cannot be updated.
    #[error("`query` parameter `updateMask`: {0}")]
    Mask(#[from] NotAllowedMaskPath),
    /// `query` has an `updateMode` that is not one of the API's.
    #[error("`query` parameter `updateMode`: {0}")]
    Mode(#[from] UnknownUpdateMode),
    /// `body` is missing where the call needs one, or present on a delete.
    #[error("`body` must be {expected} for a {noun}", noun = kind.noun())]
    Body {
        /// The request's kind.
        kind: RequestKind,
        /// What it should have been.
        expected: &'static str,
    },
}

/// A request as the plan document writes it.
#[derive(Serialize, Deserialize)]
struct SerialisedRequest {
    kind: RequestKind,
    method: String,
    path: String,
    query: Vec<(String, String)>,
    body: Option<Value>,
}

impl Serialize for ClusterRequest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        SerialisedRequest {
            kind: self.kind(),
            method: self.method().as_str().to_owned(),
            path: self.path(),
            query: self.query(),
            body: self.body().cloned(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ClusterRequest {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let serialised = SerialisedRequest::deserialize(deserializer)?;
        Self::try_from(serialised).map_err(serde::de::Error::custom)
    }
}

impl TryFrom<SerialisedRequest> for ClusterRequest {
    type Error = RequestError;

    fn try_from(request: SerialisedRequest) -> Result<Self, RequestError> {
        let SerialisedRequest {
            kind,
            method,
            path,
            query,
            body,
        } = request;
        if method != kind.method().as_str() {
            return Err(RequestError::Method { kind, method });
        }
        let body_error = |expected| RequestError::Body { kind, expected };
        match kind {
            RequestKind::Create => {
                let [(key, id)] = query.as_slice() else {
                    return Err(create_query_error());
                };
                if key != CLUSTER_ID_PARAM {
                    return Err(create_query_error());
                }
                let name = parse_collection_path(&path, id)?;
                let body = body.ok_or_else(|| body_error("the new cluster"))?;
                Ok(Self::Create { name, body })
            }
            RequestKind::Update => {
                let [(mask_key, mask), (mode_key, mode)] = query.as_slice() else {
                    return Err(update_query_error());
                };
                if mask_key != UPDATE_MASK_PARAM || mode_key != UPDATE_MODE_PARAM {
                    return Err(update_query_error());
                }
                let name = parse_cluster_path(&path)?;
                let mask = mask.parse()?;
                let mode = mode.parse()?;
                let body = body.ok_or_else(|| body_error("the updated cluster"))?;
                Ok(Self::Update {
                    name,
                    mask,
                    mode,
                    body,
                })
            }
            RequestKind::Delete => {
                if !query.is_empty() {
                    return Err(RequestError::Query {
                        kind,
                        expected: "no parameter",
                    });
                }
                if body.is_some() {
                    return Err(body_error("null"));
                }
                Ok(Self::Delete {
                    name: parse_cluster_path(&path)?,
                })
            }
        }
    }
}

fn create_query_error() -> RequestError {
    RequestError::Query {
        kind: RequestKind::Create,
        expected: "`modelDevelopmentClusterId`",
    }
}

fn update_query_error() -> RequestError {
    RequestError::Query {
        kind: RequestKind::Update,
        expected: "`updateMask` then `updateMode`",
    }
}

/// `/v1beta1/projects/{P}/locations/{R}/modelDevelopmentClusters` and the new cluster's ID.
fn parse_collection_path(path: &str, id: &str) -> Result<ClusterName, RequestError> {
    let shape = || RequestError::Path {
        path: path.to_owned(),
        expected: "`/v1beta1/projects/{P}/locations/{R}/modelDevelopmentClusters`",
    };
    let parent = path
        .strip_prefix(&format!("/{CLUSTERS_VERSION}/"))
        .and_then(|rest| rest.strip_suffix(&format!("/{COLLECTION}")))
        .ok_or_else(shape)?;
    let ["projects", project, "locations", location] = parent.split('/').collect::<Vec<_>>()[..]
    else {
        return Err(shape());
    };
    ClusterName::new(project, location, id).map_err(|source| RequestError::Name {
        path: path.to_owned(),
        source,
    })
}

/// `/v1beta1/projects/{P}/locations/{R}/modelDevelopmentClusters/{ID}`.
fn parse_cluster_path(path: &str) -> Result<ClusterName, RequestError> {
    let name = path
        .strip_prefix(&format!("/{CLUSTERS_VERSION}/"))
        .ok_or_else(|| RequestError::Path {
            path: path.to_owned(),
            expected: "`/v1beta1/projects/{P}/locations/{R}/modelDevelopmentClusters/{ID}`",
        })?;
    name.parse().map_err(|source| RequestError::Name {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn name() -> ClusterName {
        ClusterName::new("my-proj", "us-central1", "train01").unwrap()
    }

    fn operation() -> OperationName {
        "projects/1059558423163/locations/us-central1/operations/42"
            .parse()
            .unwrap()
    }

    fn pair(key: &str, value: &str) -> (String, String) {
        (key.to_owned(), value.to_owned())
    }

    fn update() -> ClusterRequest {
        ClusterRequest::Update {
            name: name(),
            mask: UpdateMask::new(vec![UpdateMaskPath::Labels, UpdateMaskPath::NodePools]),
            mode: UpdateMode::UserOnly,
            body: json!({"labels": {}}),
        }
    }

    #[test]
    fn list_pages_carry_size_and_token() {
        let first = list_clusters(name().location(), 500, None);
        assert_eq!(first.method, HttpMethod::Get);
        assert_eq!(
            first.path,
            "/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters"
        );
        assert_eq!(first.query, [pair("pageSize", "500")]);
        let next = list_clusters(name().location(), 500, Some("t2"));
        assert_eq!(
            next.query,
            [pair("pageSize", "500"), pair("pageToken", "t2")]
        );
    }

    #[test]
    fn cluster_operation_and_slurm_paths() {
        let get = get_cluster(&name());
        assert_eq!(get.method, HttpMethod::Get);
        assert_eq!(
            get.path,
            "/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01"
        );
        assert!(get.query.is_empty());
        let poll = get_operation(&operation());
        assert_eq!(
            (poll.method, poll.path.as_str()),
            (
                HttpMethod::Get,
                "/v1/projects/1059558423163/locations/us-central1/operations/42"
            )
        );
        let wait = wait_operation(&operation(), 30);
        assert_eq!(wait.method, HttpMethod::Post);
        assert_eq!(
            wait.path,
            "/v1/projects/1059558423163/locations/us-central1/operations/42:wait"
        );
        assert_eq!(wait.query, [pair("timeout", "30s")]);
        let slurm = call_slurm_rest_api(&name());
        assert_eq!(slurm.method, HttpMethod::Post);
        assert_eq!(
            slurm.path,
            "/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01:callSlurmRestApi"
        );
        assert_eq!(slurm_jobs_path("v0.0.42"), "/slurm/v0.0.42/jobs");
        assert_eq!(slurm_nodes_path("v0.0.41"), "/slurm/v0.0.41/nodes");
        assert_eq!(slurm_ping_path("v0.0.44"), "/slurm/v0.0.44/ping");
    }

    #[test]
    fn create_update_and_delete_paths() {
        let create = ClusterRequest::Create {
            name: name(),
            body: json!({}),
        };
        assert_eq!(create.method(), HttpMethod::Post);
        assert_eq!(
            create.path(),
            "/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters"
        );
        assert_eq!(
            create.query(),
            [pair("modelDevelopmentClusterId", "train01")]
        );
        let update = update();
        assert_eq!(update.method(), HttpMethod::Patch);
        assert_eq!(update.path(), get_cluster(&name()).path);
        assert_eq!(
            update.query(),
            [
                pair("updateMask", "labels,node_pools"),
                pair("updateMode", "USER_ONLY")
            ]
        );
        let delete = ClusterRequest::Delete { name: name() };
        assert_eq!(delete.method(), HttpMethod::Delete);
        assert_eq!(delete.path(), get_cluster(&name()).path);
        assert!(delete.query().is_empty());
        assert_eq!(delete.body(), None);
        assert_eq!(delete.name(), &name());
    }

    #[test]
    fn serialises_as_the_plan_document_shows_it() {
        assert_eq!(
            serde_json::to_value(update()).unwrap(),
            json!({
                "kind": "update",
                "method": "PATCH",
                "path": "/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters/train01",
                "query": [["updateMask", "labels,node_pools"], ["updateMode", "USER_ONLY"]],
                "body": {"labels": {}}
            })
        );
        assert_eq!(
            serde_json::to_value(ClusterRequest::Delete { name: name() }).unwrap()["body"],
            Value::Null
        );
    }

    #[test]
    fn every_request_round_trips() {
        for request in [
            ClusterRequest::Create {
                name: name(),
                body: json!({"labels": {"a": "b"}}),
            },
            update(),
            ClusterRequest::Delete { name: name() },
        ] {
            let json = serde_json::to_value(&request).unwrap();
            assert_eq!(
                serde_json::from_value::<ClusterRequest>(json).unwrap(),
                request
            );
        }
    }

    /// The update's JSON with `field` replaced, and the error deserialising it.
    fn tampered(base: &ClusterRequest, field: &str, value: Value) -> String {
        let mut json = serde_json::to_value(base).unwrap();
        json[field] = value;
        serde_json::from_value::<ClusterRequest>(json)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_tampered_request_is_refused_naming_the_field() {
        let update = update();
        let create = ClusterRequest::Create {
            name: name(),
            body: json!({}),
        };
        let delete = ClusterRequest::Delete { name: name() };
        let cases = [
            (&update, "method", json!("DELETE"), "`method`"),
            (&update, "kind", json!("delete"), "`method`"),
            (
                &update,
                "path",
                json!(
                    "/v1beta1/projects/my-proj/locations/us-central1/modelDevelopmentClusters/../x"
                ),
                "`path`",
            ),
            (
                &update,
                "path",
                json!("https://evil.example/v1beta1/x"),
                "`path`",
            ),
            (
                &delete,
                "path",
                json!("/v1beta1/projects/p/locations/r/clusters/x"),
                "`path`",
            ),
            (
                &update,
                "query",
                json!([["updateMask", "network"], ["updateMode", "USER_ONLY"]]),
                "`updateMask`",
            ),
            (
                &update,
                "query",
                json!([["updateMask", "labels"], ["updateMode", "ALL"]]),
                "`updateMode`",
            ),
            (
                &update,
                "query",
                json!([["updateMask", "labels"]]),
                "`query`",
            ),
            (&update, "body", Value::Null, "`body`"),
            (&delete, "body", json!({}), "`body`"),
            (&delete, "query", json!([["force", "true"]]), "`query`"),
            (
                &create,
                "query",
                json!([["modelDevelopmentClusterId", "a/b"]]),
                "`path`",
            ),
            (&create, "query", json!([["id", "train01"]]), "`query`"),
            (
                &create,
                "path",
                json!(
                    "/v1beta1/projects/my-proj/locations/us-central1/x/y/modelDevelopmentClusters"
                ),
                "`path`",
            ),
        ];
        for (base, field, value, named) in cases {
            let error = tampered(base, field, value.clone());
            assert!(error.contains(named), "{field} = {value}: {error}");
        }
    }

    #[test]
    fn masks_print_comma_joined_and_parse_back() {
        let mask: UpdateMask = "labels,orchestrator_spec.slurm_spec.partitions"
            .parse()
            .unwrap();
        assert_eq!(
            mask.paths(),
            [UpdateMaskPath::Labels, UpdateMaskPath::Partitions]
        );
        assert_eq!(
            mask.to_string(),
            "labels,orchestrator_spec.slurm_spec.partitions"
        );
        assert!("".parse::<UpdateMask>().is_err());
        assert!("labels,,node_pools".parse::<UpdateMask>().is_err());
    }
}
