//! The REST client: one method per API call, each request authenticated, timed out and retried.
//!
//! Requests go to `https://{region}-aiplatform.googleapis.com` or to the endpoint override.
//! Every answer is decoded here, so a server that answers something else than the API (an
//! HTML error page, a proxy's text) becomes a [`TransportError::Decode`] naming the URL instead of a
//! panic or a confusing serde message further up. A server is not trusted to be well-behaved:
//! answers are read with a size cap ([`MAX_ANSWER_BYTES`](crate::MAX_ANSWER_BYTES)), redirects are never followed, the
//! Lists of one refresh together ask for no more pages and read no more bytes than one
//! [`RefreshBudget`], a List ends at the first page token seen twice, and the answer to a
//! create, update or delete must be an operation with a usable name. A quota error
//! from one region holds back every request to that region for a while ([`RegionGates`]).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use clusterform_model::rest::{self, ClusterRequest, HttpMethod, RestCall};
use clusterform_model::{
    Cluster, ClusterName, Code, ErrorEnvelope, Location, Operation, OperationName, Status,
    validate_location,
};
use futures::FutureExt;
use futures::future::RemoteHandle;
use reqwest::{Method, Url};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::transport::auth::TokenSource;
use crate::transport::budget::{BudgetSpent, ListCharge, RefreshBudget, RefreshMeter};
use crate::transport::error::TransportError;
use crate::transport::exchange::{Answer, Body, Exchanging, Request, Unanswered, exchange};
use crate::transport::http::{
    Connection, EndpointRefusal, check_endpoint, describe_transport_error, quote_body,
};
use crate::transport::options::ClientOptions;
use crate::transport::redact::{redact_endpoint, redact_userinfo};
use crate::transport::region_gate::RegionGates;
use crate::transport::retry::CallClass;

/// Items asked for per List page. The service documents no maximum; sibling Vertex AI Lists cap
/// at 100 and some refuse larger sizes, so 100 is the largest size safe to ask for (docs/api.md).
pub const LIST_PAGE_SIZE: u32 = 100;

/// The longest a glance (see [`ApiClient::for_a_glance`]) waits for an answer.
const GLANCE_TIMEOUT: Duration = Duration::from_secs(10);

/// What a create, update or delete request led to.
#[derive(Debug, Clone, PartialEq)]
pub enum Submitted {
    /// The service started (or already finished) an operation.
    Operation(Box<Operation>),
    /// A create lost its answer, and the cluster turned out to exist with our stack label:
    /// the first attempt went through, and there is no operation name to follow.
    Adopted(Box<Cluster>),
}

/// The client. Cheap to clone: clones share the connection pool, the token source (which
/// its `Debug` never shows), the regions' backoff and the Slurm REST version last answered.
#[derive(Debug, Clone)]
pub struct ApiClient {
    endpoint: Option<String>,
    connection: Connection,
    refresh_budget: RefreshBudget,
    gates: RegionGates,
    slurm_version: KnownSlurmVersion,
}

/// The slurmrestd REST version that last answered, shared by every clone of one client: the
/// clusters of a run usually serve the same versions, and each version not served costs a
/// round trip. A cluster that answers 404 at it still gets the whole list.
#[derive(Debug, Clone, Default)]
pub(crate) struct KnownSlurmVersion(Arc<Mutex<Option<&'static str>>>);

impl KnownSlurmVersion {
    /// The version that last answered, if any did.
    pub(crate) fn get(&self) -> Option<&'static str> {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records that `version` answered.
    pub(crate) fn set(&self, version: &'static str) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(version);
    }
}

/// One HTTP request, before it is sent.
struct Call<'a> {
    request: Request<'a>,
    /// The region the request is for, whose backoff it honours.
    region: &'a str,
}

/// A create whose answer may have been lost: the cluster it would make and our label value.
struct LostCreateCheck {
    cluster: ClusterName,
    stack: Option<String>,
}

/// A successful exchange.
enum Reply {
    /// The answer's body.
    Body(Vec<u8>),
    /// See [`Submitted::Adopted`].
    Adopted(Box<Cluster>),
}

/// A List page's clusters, and its token for the next one.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListPage {
    #[serde(default)]
    model_development_clusters: Vec<Cluster>,
    #[serde(default)]
    next_page_token: Option<String>,
}

/// A List page's token for the next one, read (skipping the clusters) before the page's
/// clusters are decoded when the page does not end with it ([`trailing_page_token`]): decoding
/// a page of 500 clusters takes milliseconds, which would hold the next request back.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListPageToken {
    #[serde(default)]
    next_page_token: Option<String>,
}

/// The body of a List page being read on a task of its own; dropping it cancels the request.
type PageRequest = RemoteHandle<Result<Vec<u8>, TransportError>>;

/// slurmrestd's own HTTP status and answer, as `callSlurmRestApi` relays them.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmReply {
    /// slurmrestd's HTTP status; `None` when the relay's `status` is absent or not an HTTP
    /// status (null, a string, a fraction, a number outside 100–599): such an answer is
    /// unreadable, never taken for a 200.
    pub status: Option<u16>,
    /// slurmrestd's JSON, or why the relay's answer does not carry it readably.
    pub body: Result<Value, SlurmBodyError>,
}

/// Why the relay's answer does not give slurmrestd's JSON. The Slurm Job API page of the
/// training-clusters docs answers `{"status": 200, "body": "<slurmrestd's JSON as a string>"}`
/// (its examples parse it with `jq -r '.body | fromjson'`); an older translation of that page
/// names the field `structuredBody`, a JSON object. Both are read; anything else is unreadable,
/// and an unreadable answer is never taken for an empty one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlurmBodyError {
    /// Neither `body` nor `structuredBody`.
    #[error("the answer carries no `body`")]
    Missing,
    /// `body` is a string that does not parse as JSON.
    #[error("`body` is not JSON: {0}")]
    NotJson(String),
    /// A field holds neither a JSON text nor an object.
    #[error("`{field}` is {kind}, not slurmrestd's JSON")]
    WrongKind {
        /// `body` or `structuredBody`.
        field: &'static str,
        /// What it holds instead, e.g. `a number`.
        kind: &'static str,
    },
    /// Both fields are sent and say different things: which one is slurmrestd's answer cannot
    /// be told, so neither is believed.
    #[error("`body` and `structuredBody` disagree")]
    Disagree,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SlurmCallReply {
    #[serde(default)]
    status: Option<Value>,
    #[serde(default)]
    body: Option<Value>,
    #[serde(default)]
    structured_body: Option<Value>,
}

impl SlurmCallReply {
    /// slurmrestd's JSON: `body` parsed (or taken as it is when a relay already sends an
    /// object), else `structuredBody`; both present must agree.
    fn slurm_json(self) -> Result<Value, SlurmBodyError> {
        let body = self.body.map(|body| match body {
            Value::String(text) => serde_json::from_str(&text)
                .map_err(|error| SlurmBodyError::NotJson(error.to_string())),
            object @ Value::Object(_) => Ok(object),
            other => Err(wrong_kind("body", &other)),
        });
        let structured = self.structured_body.map(|structured| match structured {
            object @ Value::Object(_) => Ok(object),
            other => Err(wrong_kind("structuredBody", &other)),
        });
        match (body, structured) {
            (None, None) => Err(SlurmBodyError::Missing),
            (Some(body), None) => body,
            (None, Some(structured)) => structured,
            (Some(body), Some(structured)) => {
                let body = body?;
                if body == structured? {
                    Ok(body)
                } else {
                    Err(SlurmBodyError::Disagree)
                }
            }
        }
    }
}

fn wrong_kind(field: &'static str, value: &Value) -> SlurmBodyError {
    let kind = match value {
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::Array(_) => "a list",
        Value::String(_) => "a string",
        Value::Object(_) => "an object",
        Value::Null => "null",
    };
    SlurmBodyError::WrongKind { field, kind }
}

impl ApiClient {
    /// Builds a client. Refuses an endpoint that would send the bearer token in clear text.
    pub fn new(
        options: ClientOptions,
        tokens: Arc<dyn TokenSource>,
    ) -> Result<Self, TransportError> {
        let endpoint = options
            .endpoint
            .as_deref()
            .map(validate_endpoint)
            .transpose()?;
        let refresh_budget = options.refresh_budget;
        let connection =
            Connection::new(options, tokens).map_err(|e| TransportError::InvalidEndpoint {
                endpoint: endpoint.clone().unwrap_or_default(),
                reason: format!(
                    "cannot build the HTTP client: {}",
                    describe_transport_error(e)
                ),
            })?;
        Ok(Self {
            endpoint,
            connection,
            refresh_budget,
            gates: RegionGates::default(),
            slurm_version: KnownSlurmVersion::default(),
        })
    }

    /// The base URL requests for `region` go to.
    pub fn base_url(&self, region: &str) -> Result<String, TransportError> {
        validate_location(region)?;
        Ok(match &self.endpoint {
            Some(endpoint) => endpoint.clone(),
            None => format!("https://{region}-aiplatform.googleapis.com"),
        })
    }

    /// A fresh count of what one refresh reads, for all its Lists to share.
    pub fn refresh_meter(&self) -> RefreshMeter {
        RefreshMeter::new(self.refresh_budget)
    }

    /// Every cluster of one location, following `nextPageToken` until it is missing or empty;
    /// the List has a refresh's whole budget to itself.
    pub async fn list_clusters(&self, location: &Location) -> Result<Vec<Cluster>, TransportError> {
        let mut clusters = Vec::new();
        self.list_clusters_paged(location, &self.refresh_meter(), |page| {
            clusters.extend(page);
        })
        .await?;
        Ok(clusters)
    }

    /// [`list_clusters`](Self::list_clusters), giving each page's clusters to `on_page` as soon
    /// as the page is decoded, and counting its pages and answer bytes into `meter`, which the
    /// other Lists of the refresh share. The next page is asked for before that, as soon as the
    /// page's token is read, so that it travels while this one is decoded. The checks are the
    /// same (a page token seen twice, the refresh's budget); when one fails after some pages
    /// were given, the error says the list is incomplete and those pages must be discarded.
    pub async fn list_clusters_paged(
        &self,
        location: &Location,
        meter: &RefreshMeter,
        mut on_page: impl FnMut(Vec<Cluster>),
    ) -> Result<(), TransportError> {
        let mut tokens_seen = HashSet::new();
        let first = rest::list_clusters(location, LIST_PAGE_SIZE, None);
        let (mut call, mut request) = self.request_page(location, meter, first)?;
        loop {
            let body = request.await?;
            let token = match trailing_page_token(&body) {
                Some(token) => Some(token),
                None => {
                    decode::<ListPageToken>("a cluster list", &call.request.url, &body)?
                        .next_page_token
                }
            };
            let next = match token.clone().filter(|t| !t.is_empty()) {
                Some(next) if !tokens_seen.insert(next.clone()) => {
                    let token = quote_body(next.as_bytes());
                    return Err(decode_failure(
                        "a cluster list",
                        &call.request.url,
                        &format!("the server returned page token {token:?} a second time"),
                        b"",
                    ));
                }
                Some(next) => {
                    let list = rest::list_clusters(location, LIST_PAGE_SIZE, Some(&next));
                    Some(self.request_page(location, meter, list)?)
                }
                None => None,
            };
            if next.is_some() {
                // A task spawned here waits in this worker's own slot, which no other worker
                // takes, until this task yields: yield once, so the request is sent first.
                tokio::task::yield_now().await;
            }
            let page: ListPage = decode("a cluster list", &call.request.url, &body)?;
            // A page the JSON reader accepts has one token, wherever it was read from.
            debug_assert_eq!(page.next_page_token, token, "{}", quote_body(&body));
            on_page(page.model_development_clusters);
            match next {
                Some(next) => (call, request) = next,
                None => return Ok(()),
            }
        }
    }

    /// The call for a List page, and the page's body being read on a task of its own, so that
    /// it is on the network while the caller decodes the page before it. The page is counted
    /// into `meter` first: a page over the refresh's total is never asked for.
    fn request_page<'r>(
        &self,
        location: &'r Location,
        meter: &RefreshMeter,
        list: RestCall,
    ) -> Result<(Call<'r>, PageRequest), TransportError> {
        let call = self.read_call(location.region(), &list, Body::Empty)?;
        meter
            .take_page(location)
            .map_err(|spent| budget_spent(&call.request, spent))?;
        let (client, location, meter) = (self.clone(), location.clone(), meter.clone());
        let (task, request) = async move {
            let mut call = client.read_call(location.region(), &list, Body::Empty)?;
            call.request.charge = Some(ListCharge {
                meter: &meter,
                location: &location,
            });
            client.body(&call).await
        }
        .remote_handle();
        tokio::spawn(task);
        Ok((call, request))
    }

    /// One cluster; `None` when it does not exist.
    pub async fn get_cluster(&self, name: &ClusterName) -> Result<Option<Cluster>, TransportError> {
        let call = self.read_call(name.region(), &rest::get_cluster(name), Body::Empty)?;
        match self.body(&call).await {
            Ok(body) => decode("a cluster", &call.request.url, &body).map(Some),
            Err(error) if error.is_not_found() => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Sends one create, update or delete exactly as planned, to the region its cluster
    /// lives in.
    pub async fn send(&self, request: &ClusterRequest) -> Result<Submitted, TransportError> {
        self.send_until(request, &CancellationToken::new()).await
    }

    /// [`send`](Self::send), giving up with [`TransportError::Cancelled`] once `stop` is cancelled
    /// while nothing the service may have acted on is outstanding: while the region's gate is
    /// closed after a quota error (see [`RegionGates`]) before the first attempt, and between
    /// attempts as long as every attempt was answered with a refusal that says it was not
    /// processed (`RESOURCE_EXHAUSTED`, `UNAVAILABLE`). Once an attempt got no answer, the
    /// service may have started an operation: the retries then go on whatever `stop` says,
    /// so that their answer names it.
    pub async fn send_until(
        &self,
        request: &ClusterRequest,
        stop: &CancellationToken,
    ) -> Result<Submitted, TransportError> {
        let name = request.name();
        let (class, lost_create) = match request {
            ClusterRequest::Create { name, .. } => {
                let check = LostCreateCheck {
                    cluster: name.clone(),
                    stack: request.stack_label().map(str::to_owned),
                };
                (CallClass::Create, Some(check))
            }
            ClusterRequest::Update { .. } | ClusterRequest::Delete { .. } => {
                (CallClass::Idempotent, None)
            }
        };
        let call = Call {
            request: Request {
                method: reqwest_method(request.method()),
                url: self.url(name.region(), &request.call())?,
                body: request.body().map_or(Body::Empty, Body::Json),
                class,
                timeout: self.connection.request_timeout,
                charge: None,
            },
            region: name.region(),
        };
        match self
            .execute(&call, lost_create.as_ref(), Some(stop))
            .await?
        {
            Reply::Body(body) => accepted_operation(&name.to_string(), &call, &body)
                .map(|operation| Submitted::Operation(Box::new(operation))),
            Reply::Adopted(cluster) => Ok(Submitted::Adopted(cluster)),
        }
    }

    /// `GET /v1/{name}`, on the region the operation name carries.
    pub async fn get_operation(&self, name: &str) -> Result<Operation, TransportError> {
        let parsed: OperationName = name.parse()?;
        let call = self.read_call(&parsed.location, &rest::get_operation(&parsed), Body::Empty)?;
        decode("an operation", &call.request.url, &self.body(&call).await?)
    }

    /// `POST /v1/{name}:wait?timeout=Ns`: returns when the operation is done or the server's
    /// wait ends, whichever comes first.
    pub async fn wait_operation(
        &self,
        name: &str,
        timeout: Duration,
    ) -> Result<Operation, TransportError> {
        let parsed: OperationName = name.parse()?;
        let seconds = timeout.as_secs().max(1);
        let wait = rest::wait_operation(&parsed, seconds);
        let empty = json!({});
        let mut call = self.read_call(&parsed.location, &wait, Body::Json(&empty))?;
        call.request.timeout += Duration::from_secs(seconds);
        decode("an operation", &call.request.url, &self.body(&call).await?)
    }

    /// slurmrestd's answer to `GET slurm_path` on the cluster, through `callSlurmRestApi`. A
    /// non-200 slurmrestd status is an answer, not an error: the caller decides (a 404 may mean
    /// an unsupported REST version).
    pub async fn slurm_get(
        &self,
        name: &ClusterName,
        slurm_path: &str,
    ) -> Result<SlurmReply, TransportError> {
        let relay = rest::call_slurm_rest_api(name);
        let request = json!({"method": "HTTP_METHOD_GET", "path": slurm_path});
        // Listing jobs or nodes has no side effect, whatever the HTTP method carrying it.
        let call = self.read_call(name.region(), &relay, Body::Json(&request))?;
        let body = self.body(&call).await?;
        let reply: SlurmCallReply = decode("a Slurm API answer", &call.request.url, &body)?;
        let status = reply.status.as_ref().and_then(http_status);
        Ok(SlurmReply {
            status,
            body: reply.slurm_json(),
        })
    }

    /// The slurmrestd REST version this client (and every clone of it) last got an answer
    /// from, so that the clusters of one run do not each walk the versions it does not serve.
    pub(crate) fn known_slurm_version(&self) -> &KnownSlurmVersion {
        &self.slurm_version
    }

    /// A copy that sends each request once, with a short timeout: for looking at something
    /// that only informs the user (the jobs shown in a plan), where waiting out retries
    /// would cost more than an "unknown".
    pub fn for_a_glance(&self) -> Self {
        let mut glance = self.clone();
        glance.connection.retry.max_attempts = 1;
        glance.connection.request_timeout = self.connection.request_timeout.min(GLANCE_TIMEOUT);
        glance
    }

    /// A copy whose requests each wait [`GLANCE_TIMEOUT`] at most and are retried as reads
    /// usually are: for a look whose answer decides whether work may be stopped (the jobs a
    /// plan would stop), where one dropped connection must not read as "unknown".
    pub fn for_a_check(&self) -> Self {
        let mut check = self.clone();
        check.connection.request_timeout = self.connection.request_timeout.min(GLANCE_TIMEOUT);
        check
    }

    /// A call without a side effect.
    fn read_call<'a>(
        &self,
        region: &'a str,
        call: &RestCall,
        body: Body<'a>,
    ) -> Result<Call<'a>, TransportError> {
        Ok(Call {
            request: Request {
                method: reqwest_method(call.method),
                url: self.url(region, call)?,
                body,
                class: CallClass::Read,
                timeout: self.connection.request_timeout,
                charge: None,
            },
            region,
        })
    }

    /// The one place a base URL and a model path meet.
    fn url(&self, region: &str, call: &RestCall) -> Result<Url, TransportError> {
        let base = self.base_url(region)?;
        let joined = format!("{base}{}", call.path);
        let mut url = Url::parse(&joined).map_err(|e| {
            let url = redact_userinfo(&joined);
            TransportError::InvalidRequest(format!("bad URL {url}: {e}"))
        })?;
        if !call.query.is_empty() {
            url.query_pairs_mut().extend_pairs(&call.query);
        }
        Ok(url)
    }

    /// The body of a successful answer; reads and idempotent calls only.
    async fn body(&self, call: &Call<'_>) -> Result<Vec<u8>, TransportError> {
        match self.execute(call, None, None).await? {
            Reply::Body(body) => Ok(body),
            Reply::Adopted(_) => unreachable!("only a create with a lost-answer check adopts"),
        }
    }

    /// Sends a call once its region's gate is open, retrying as its class allows. A quota
    /// error closes the region's gate (see [`RegionGates`]) and this call waits with the others.
    /// `stop` ends the waiting as [`send_until`](Self::send_until) says.
    async fn execute(
        &self,
        call: &Call<'_>,
        lost_create: Option<&LostCreateCheck>,
        stop: Option<&CancellationToken>,
    ) -> Result<Reply, TransportError> {
        let mut part = ApiExchange {
            client: self,
            call,
            lost_create,
            stop,
        };
        exchange(&self.connection, &call.request, &mut part).await
    }

    /// The cluster a lost create would have made, if it exists and carries the request's
    /// stack label (so it is ours, not someone else's cluster with the same ID).
    async fn find_own_cluster(
        &self,
        check: &LostCreateCheck,
    ) -> Result<Option<Cluster>, TransportError> {
        let Some(stack) = &check.stack else {
            return Ok(None);
        };
        let cluster = self.get_cluster(&check.cluster).await?;
        Ok(cluster.filter(|c| c.is_owned_by(stack)))
    }

    fn too_large(&self, call: &Call<'_>) -> TransportError {
        TransportError::AnswerTooLarge {
            method: call.request.method.to_string(),
            url: call.request.url.to_string(),
            limit: self.connection.max_answer_bytes,
        }
    }
}

/// The API client's part in an exchange: the region's gate, the caller's `stop` and the
/// lookup of a create that lost its answer.
struct ApiExchange<'a> {
    client: &'a ApiClient,
    call: &'a Call<'a>,
    lost_create: Option<&'a LostCreateCheck>,
    /// Honoured only while no attempt may have been acted on (see `send_until`).
    stop: Option<&'a CancellationToken>,
}

impl Exchanging for ApiExchange<'_> {
    type Reply = Reply;
    type Error = TransportError;

    fn code(&self, answer: &Answer) -> Code {
        error_status(answer.status.as_u16(), &answer.body).canonical_code()
    }

    /// A create or update refused for a quota: retrying for minutes cannot raise it, and the
    /// region's other requests need not wait for it either.
    fn is_final(&self, answer: &Answer) -> bool {
        matches!(
            self.call.request.class,
            CallClass::Create | CallClass::Idempotent
        ) && error_status(answer.status.as_u16(), &answer.body).is_quota_failure()
    }

    fn reply(&mut self, answer: Answer) -> Result<Reply, TransportError> {
        if answer.status.is_success() {
            self.client.gates.answered(self.call.region);
            return Ok(Reply::Body(answer.body));
        }
        Err(TransportError::Api {
            status: Box::new(error_status(answer.status.as_u16(), &answer.body)),
            method: self.call.request.method.to_string(),
            url: self.call.request.url.to_string(),
        })
    }

    fn unanswered(&self, request: &Request<'_>, failure: Unanswered) -> TransportError {
        let (method, url) = (request.method.to_string(), request.url.to_string());
        match failure {
            Unanswered::Auth(error) => error.into(),
            Unanswered::NoAnswer(message) => TransportError::NoAnswer {
                method,
                url,
                message,
            },
            Unanswered::Redirected { status, location } => TransportError::Redirected {
                method,
                url,
                status,
                location,
            },
            Unanswered::TooLarge => self.client.too_large(self.call),
            Unanswered::BudgetSpent(spent) => budget_spent(request, *spent),
        }
    }

    async fn ready(&mut self) -> Result<(), TransportError> {
        unless_stopped(self.stop, self.client.gates.wait_open(self.call.region)).await
    }

    async fn pause(&mut self, delay: Duration) -> Result<(), TransportError> {
        unless_stopped(self.stop, tokio::time::sleep(delay)).await
    }

    fn may_have_acted(&mut self) {
        self.stop = None;
    }

    fn hold_after_quota(&mut self, server_delay: Option<Duration>) -> Option<Duration> {
        let policy = &self.client.connection.retry;
        Some(
            self.client
                .gates
                .close(self.call.region, server_delay, policy),
        )
    }

    async fn look(&mut self) -> Result<Option<Reply>, TransportError> {
        let Some(check) = self.lost_create else {
            return Ok(None);
        };
        // Boxed: the lookup is itself a call through `execute`.
        let cluster = Box::pin(self.client.find_own_cluster(check)).await?;
        Ok(cluster.map(|cluster| Reply::Adopted(Box::new(cluster))))
    }
}

/// The error of a List that passed its refresh's budget, naming the request it stopped at.
fn budget_spent(request: &Request<'_>, spent: BudgetSpent) -> TransportError {
    TransportError::RefreshBudgetSpent {
        method: request.method.to_string(),
        url: request.url.to_string(),
        spent: Box::new(spent),
    }
}

/// Waits for `wait`, or fails with [`TransportError::Cancelled`] as soon as `stop` (if any) is
/// cancelled.
async fn unless_stopped<T>(
    stop: Option<&CancellationToken>,
    wait: impl Future<Output = T>,
) -> Result<T, TransportError> {
    let Some(stop) = stop else {
        return Ok(wait.await);
    };
    tokio::select! {
        biased;
        () = stop.cancelled() => Err(TransportError::Cancelled),
        value = wait => Ok(value),
    }
}

/// The operation a create, update or delete started. A success answer that is no operation,
/// or one whose name the client could not follow (`{}`, an empty name, a path or URL of its
/// own), is an error: it would otherwise be taken as "accepted" and journaled unusable.
fn accepted_operation(
    cluster: &str,
    call: &Call<'_>,
    body: &[u8],
) -> Result<Operation, TransportError> {
    let not_an_operation = |reason: String| TransportError::NotAnOperation {
        cluster: cluster.to_owned(),
        method: call.request.method.to_string(),
        url: call.request.url.to_string(),
        reason,
        body_start: quote_body(body),
    };
    let operation: Operation =
        serde_json::from_slice(body).map_err(|e| not_an_operation(e.to_string()))?;
    operation
        .name
        .parse::<OperationName>()
        .map_err(|e| not_an_operation(format!("its operation name is unusable: {e}")))?;
    Ok(operation)
}

/// Checks an endpoint override (see [`check_endpoint`]); answers it without a trailing `/`.
fn validate_endpoint(raw: &str) -> Result<String, TransportError> {
    let url = check_endpoint(raw).map_err(|refusal| {
        let endpoint = redact_endpoint(raw);
        match refusal {
            EndpointRefusal::Insecure => TransportError::InsecureEndpoint { endpoint },
            EndpointRefusal::Invalid(reason) => {
                TransportError::InvalidEndpoint { endpoint, reason }
            }
        }
    })?;
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

/// reqwest's spelling of a method.
fn reqwest_method(method: HttpMethod) -> Method {
    match method {
        HttpMethod::Get => Method::GET,
        HttpMethod::Post => Method::POST,
        HttpMethod::Patch => Method::PATCH,
        HttpMethod::Delete => Method::DELETE,
    }
}

/// The Google status of an error answer; a body that is not Google's error JSON (a proxy's
/// page) still yields the HTTP code and a canonical name derived from it.
fn error_status(http_status: u16, body: &[u8]) -> Status {
    if let Ok(envelope) = serde_json::from_slice::<ErrorEnvelope>(body) {
        return envelope.error;
    }
    Status {
        code: i64::from(http_status),
        message: quote_body(body),
        status: Some(Code::of_http(http_status).as_str().to_owned()),
        details: Vec::new(),
    }
}

/// An HTTP status as the relay's `status` field gives it: a whole JSON number from 100 to 599.
fn http_status(value: &Value) -> Option<u16> {
    value
        .as_u64()
        .and_then(|n| u16::try_from(n).ok())
        .filter(|n| (100..=599).contains(n))
}

fn decode<T: DeserializeOwned>(
    what: &'static str,
    url: &Url,
    body: &[u8],
) -> Result<T, TransportError> {
    // The body is checked as UTF-8 once: reading a `str`, serde_json skips checking each string
    // of a List page again. A body that is not UTF-8 is read as bytes, for serde_json's error.
    let decoded = match std::str::from_utf8(body) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(body),
    };
    decoded.map_err(|e| decode_failure(what, url, &e.to_string(), body))
}

/// A List page's token when it is the page's last member, `"nextPageToken": "…"}` at the end
/// of the body, as the service and the emulator write it: found without reading the clusters
/// before it. `None` when the body ends otherwise, or the token holds an escape; the page's
/// token is then read by skipping its clusters. The whole page's reading checks it after.
fn trailing_page_token(body: &[u8]) -> Option<String> {
    let before_end = body.trim_ascii_end().strip_suffix(b"}")?;
    let value = before_end.trim_ascii_end().strip_suffix(b"\"")?;
    let open = value.iter().rposition(|&byte| byte == b'"')?;
    let token = &value[open + 1..];
    // Without a backslash in the token, the quote found is the one that opens it.
    if token.contains(&b'\\') {
        return None;
    }
    let before_value = value[..open].trim_ascii_end().strip_suffix(b":")?;
    let before_key = before_value
        .trim_ascii_end()
        .strip_suffix(b"\"nextPageToken\"")?
        .trim_ascii_end();
    if !(before_key.ends_with(b",") || before_key.ends_with(b"{")) {
        return None;
    }
    std::str::from_utf8(token).ok().map(str::to_owned)
}

fn decode_failure(what: &'static str, url: &Url, reason: &str, body: &[u8]) -> TransportError {
    TransportError::Decode {
        what,
        url: url.to_string(),
        reason: reason.to_owned(),
        body_start: quote_body(body),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_read_as_text_and_one_that_is_not_utf8_gets_the_json_readers_error() {
        let url = Url::parse("http://127.0.0.1:9/v1beta1/x").unwrap();
        let read: Value = decode("a thing", &url, b"{\"a\":\"\\u00e9t\xc3\xa9\"}").unwrap();
        assert_eq!(read, json!({"a": "\u{e9}t\u{e9}"}));
        let error = decode::<Value>("a thing", &url, b"{\"a\":\"\xff\"}").unwrap_err();
        let TransportError::Decode { reason, .. } = error else {
            panic!("{error:?}");
        };
        assert!(reason.contains("invalid unicode code point"), "{reason}");
    }

    #[test]
    fn a_trailing_page_token_is_read_from_the_end_of_the_page() {
        let read = |body: &str| trailing_page_token(body.as_bytes());
        assert_eq!(
            read(r#"{"modelDevelopmentClusters":[{"name":"x"}],"nextPageToken":"abc"}"#),
            Some("abc".to_owned())
        );
        assert_eq!(
            read("{ \"nextPageToken\" : \"t-1\" }\n"),
            Some("t-1".to_owned())
        );
        assert_eq!(read(r#"{"a":[],"nextPageToken":""}"#), Some(String::new()));
        for body in [
            // Not the last member, or no token: the page is read to find it.
            r#"{"nextPageToken":"abc","modelDevelopmentClusters":[]}"#,
            r#"{"modelDevelopmentClusters":[]}"#,
            // Escapes are left to the JSON reader.
            r#"{"nextPageToken":"a\"b"}"#,
            r#"{"nextPageToken":"a\\"}"#,
            r#"{"next\u0050ageToken":"abc"}"#,
            // A value that only ends like a token.
            r#"{"labels":{"k":"x\",\"nextPageToken\":\"abc"}}"#,
            r#"{"k":"v\"nextPageToken":"abc"}"#,
            r#"["nextPageToken","abc"]"#,
            "",
        ] {
            assert_eq!(read(body), None, "{body}");
        }
    }

    #[test]
    fn only_a_whole_number_from_100_to_599_is_a_relayed_status() {
        for (status, read) in [
            (json!(200), Some(200)),
            (json!(404), Some(404)),
            (json!(500.0), None),
            (json!(70000), None),
            (json!("200"), None),
            (Value::Null, None),
            (json!(99), None),
            (json!(-1), None),
        ] {
            assert_eq!(http_status(&status), read, "{status}");
        }
    }

    fn slurm_json(envelope: Value) -> Result<Value, SlurmBodyError> {
        serde_json::from_value::<SlurmCallReply>(envelope)
            .unwrap()
            .slurm_json()
    }

    #[test]
    fn the_documented_body_is_a_json_string_to_parse() {
        let jobs = || json!({"jobs": [{"job_id": 1}]});
        assert_eq!(
            slurm_json(json!({"status": 200, "body": jobs().to_string()})),
            Ok(jobs())
        );
        assert_eq!(
            slurm_json(json!({"status": 200, "body": jobs()})),
            Ok(jobs()),
            "a relay that already decoded it"
        );
        assert_eq!(
            slurm_json(json!({"status": 200, "structuredBody": jobs()})),
            Ok(jobs()),
            "the older page's field"
        );
        assert_eq!(
            slurm_json(json!({"body": jobs().to_string(), "structuredBody": jobs()})),
            Ok(jobs())
        );
    }

    #[test]
    fn a_body_that_is_not_slurmrestd_json_is_unreadable() {
        assert!(matches!(
            slurm_json(json!({"status": 200, "body": "Unable find requested URL."})),
            Err(SlurmBodyError::NotJson(_))
        ));
        assert!(matches!(
            slurm_json(json!({"status": 200, "body": ""})),
            Err(SlurmBodyError::NotJson(_))
        ));
        assert_eq!(
            slurm_json(json!({"body": 3})),
            Err(SlurmBodyError::WrongKind {
                field: "body",
                kind: "a number"
            })
        );
        assert_eq!(
            slurm_json(json!({"structuredBody": "{\"jobs\": []}"})),
            Err(SlurmBodyError::WrongKind {
                field: "structuredBody",
                kind: "a string"
            })
        );
        assert_eq!(
            slurm_json(json!({"status": 200})),
            Err(SlurmBodyError::Missing)
        );
        assert_eq!(
            slurm_json(json!({"status": 200, "body": null})),
            Err(SlurmBodyError::Missing)
        );
    }

    #[test]
    fn a_body_and_a_structured_body_that_disagree_are_not_believed() {
        let busy = json!({"jobs": [{"job_id": 1, "job_state": ["RUNNING"]}]});
        let empty = json!({"jobs": []});
        assert_eq!(
            slurm_json(json!({"body": empty.to_string(), "structuredBody": busy})),
            Err(SlurmBodyError::Disagree)
        );
        assert!(matches!(
            slurm_json(json!({"body": "not json", "structuredBody": empty})),
            Err(SlurmBodyError::NotJson(_))
        ));
    }

    /// The rule itself is `http::check_endpoint`'s (tested there); this is its mapping.
    #[test]
    fn refused_endpoints_become_typed_errors() {
        assert!(validate_endpoint("http://127.0.0.1:8080").is_ok());
        assert!(matches!(
            validate_endpoint("http://example.com"),
            Err(TransportError::InsecureEndpoint { .. })
        ));
        assert!(matches!(
            validate_endpoint("ftp://x"),
            Err(TransportError::InvalidEndpoint { .. })
        ));
    }

    #[test]
    fn credentials_in_an_endpoint_are_refused_and_never_echoed() {
        for endpoint in [
            "https://user:secret@example.com",
            "https://secret@example.com",
            "http://user:secret@10.0.0.1",
            "http://user:secret@127.0.0.1:8080",
            "https://user:secret@exa mple.com",
        ] {
            let err = validate_endpoint(endpoint).unwrap_err();
            let shown = format!("{err} {err:?}");
            assert!(!shown.contains("secret"), "{shown}");
            assert!(shown.contains("***@"), "{shown}");
        }
        let options = ClientOptions {
            endpoint: Some("https://user:secret@example.com".into()),
            ..ClientOptions::default()
        };
        assert!(!format!("{options:?}").contains("secret"));
    }

    #[test]
    fn trailing_slash_is_dropped() {
        assert_eq!(
            validate_endpoint("http://127.0.0.1:8080/").unwrap(),
            "http://127.0.0.1:8080"
        );
    }

    #[test]
    fn non_google_error_bodies_keep_the_http_code() {
        let status = error_status(502, b"<html>Bad Gateway</html>");
        assert_eq!(status.code, 502);
        assert_eq!(status.code_name(), "INTERNAL");
        assert!(status.message.contains("Bad Gateway"));
        let status = error_status(
            409,
            br#"{"error":{"code":409,"message":"exists","status":"ALREADY_EXISTS"}}"#,
        );
        assert_eq!(status.code_name(), "ALREADY_EXISTS");
    }
}
