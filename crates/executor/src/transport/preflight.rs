//! The client of preflight's reads: one documented GET per [`PreflightRead`], each sent to its
//! own API's endpoint ([`PreflightApi`]: Google's, or an override under the rules of `http.rs`:
//! https, or http only to loopback, no credentials in the URL), through the one retrying
//! exchange as a read. What an answer says is a [`Reading`]: the documented fields of a
//! success, `Missing` for a `404`, and `Unchecked` for anything else (a `403`, the API off, no
//! answer after the retries, an answer that is not the documented shape) — never an error:
//! a check that cannot run must not stop a plan.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use clusterform_model::Code;
use clusterform_model::preflight::{PreflightApi, PreflightRead, Reading};
use reqwest::{Method, StatusCode, Url};
use serde_json::Value;

use crate::transport::auth::TokenSource;
use crate::transport::exchange::{Answer, Body, Exchanging, Request, Unanswered, exchange};
use crate::transport::http::{Connection, EndpointRefusal, check_endpoint, quote_body};
use crate::transport::options::ClientOptions;
use crate::transport::redact::redact_endpoint;
use crate::transport::retry::CallClass;

/// A preflight endpoint that cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid {api} endpoint `{endpoint}` for preflight: {reason}")]
pub struct PreflightEndpointError {
    /// The API.
    pub api: PreflightApi,
    /// The endpoint, user information shown as `***`.
    pub endpoint: String,
    /// Why.
    pub reason: String,
}

/// A client for the reads of preflight. Cheap to clone.
#[derive(Clone)]
pub struct PreflightClient {
    bases: BTreeMap<PreflightApi, Url>,
    /// For plain http endpoints (loopback only): without the system's CA roots.
    plain: Connection,
    /// For https endpoints, built at the first read of one: loading the CA roots costs, and a
    /// certificate store that cannot be read must stop only the reads that need it.
    tls: Arc<OnceLock<Result<Connection, String>>>,
    options: ClientOptions,
    tokens: Arc<dyn TokenSource>,
}

impl fmt::Debug for PreflightClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bases: BTreeMap<_, _> = self
            .bases
            .iter()
            .map(|(api, url)| (api.key(), url.as_str()))
            .collect();
        f.debug_struct("PreflightClient")
            .field("bases", &bases)
            .field("plain", &self.plain)
            .finish_non_exhaustive()
    }
}

impl PreflightClient {
    /// Checks the endpoint overrides under the rules of `http.rs` without building a client.
    pub fn check_endpoints(
        endpoints: &BTreeMap<PreflightApi, String>,
    ) -> Result<(), PreflightEndpointError> {
        bases(endpoints).map(drop)
    }

    /// A client whose API `api` is reached at `endpoints[api]`, else at Google's endpoint.
    /// `options.endpoint` is ignored: the cluster API's endpoint never redirects these.
    pub fn new(
        endpoints: &BTreeMap<PreflightApi, String>,
        options: ClientOptions,
        tokens: Arc<dyn TokenSource>,
    ) -> Result<Self, PreflightEndpointError> {
        let bases = bases(endpoints)?;
        // A connection whose endpoint is plain http loads no CA roots (see `Connection`).
        let plain_options = ClientOptions {
            endpoint: Some("http://127.0.0.1".to_owned()),
            ..options.clone()
        };
        let plain =
            Connection::new(plain_options, tokens.clone()).map_err(|e| PreflightEndpointError {
                api: PreflightApi::Compute,
                endpoint: String::new(),
                reason: format!("cannot build the HTTP client: {e}"),
            })?;
        Ok(Self {
            bases,
            plain,
            tls: Arc::new(OnceLock::new()),
            options: ClientOptions {
                endpoint: None,
                ..options
            },
            tokens,
        })
    }

    /// The connection `url` is sent through; `Err` says why an https one cannot be built.
    fn connection(&self, url: &Url) -> Result<&Connection, String> {
        if url.scheme() == "http" {
            return Ok(&self.plain);
        }
        self.tls
            .get_or_init(|| {
                Connection::new(self.options.clone(), self.tokens.clone())
                    .map_err(|e| format!("no HTTPS client could be built: {e}"))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The URL of `read`: its API's base with the read's path.
    fn url(&self, read: &PreflightRead) -> Url {
        let mut url = self.bases[&read.api()].clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(read.path_segments());
        }
        url
    }

    /// What `read` finds; a read that cannot be made says why, as [`Reading::Unchecked`].
    /// A `testIamPermissions` read is a POST that changes nothing, so it is retried as a read.
    pub async fn read(&self, read: &PreflightRead) -> Reading {
        let json = read.body();
        let (method, body) = match &json {
            Some(json) => (Method::POST, Body::Json(json)),
            None => (Method::GET, Body::Empty),
        };
        let url = self.url(read);
        let connection = match self.connection(&url) {
            Ok(connection) => connection,
            Err(reason) => return Reading::Unchecked(reason),
        };
        let request = Request {
            method,
            url,
            body,
            class: CallClass::Read,
            timeout: connection.request_timeout,
            charge: None,
        };
        let mut part = PreflightExchange;
        let answer = match exchange(connection, &request, &mut part).await {
            Ok(answer) => answer,
            Err(unanswered) => return Reading::Unchecked(unanswered),
        };
        match answer.status {
            StatusCode::OK => match serde_json::from_slice::<Value>(&answer.body) {
                Ok(value) => read.reading(&value).unwrap_or_else(|reason| {
                    Reading::Unchecked(format!("an answer it cannot read: {reason}"))
                }),
                Err(error) => Reading::Unchecked(format!(
                    "an answer that is not JSON ({error}): {}",
                    quote_body(&answer.body)
                )),
            },
            StatusCode::NOT_FOUND => Reading::Missing,
            status => Reading::Unchecked(format!(
                "HTTP {}: {}",
                status.as_u16(),
                error_message(&answer.body)
            )),
        }
    }
}

/// The base URL of every API: its override, checked, else Google's endpoint.
fn bases(
    endpoints: &BTreeMap<PreflightApi, String>,
) -> Result<BTreeMap<PreflightApi, Url>, PreflightEndpointError> {
    let mut bases = BTreeMap::new();
    for api in PreflightApi::ALL {
        let endpoint = endpoints
            .get(&api)
            .map_or(api.google_endpoint(), String::as_str);
        let base = check_endpoint(endpoint).map_err(|refusal| PreflightEndpointError {
            api,
            endpoint: redact_endpoint(endpoint),
            reason: match refusal {
                EndpointRefusal::Insecure => "plain http is only allowed to a loopback host: the bearer token would travel in clear text".to_owned(),
                EndpointRefusal::Invalid(reason) => reason,
            },
        })?;
        bases.insert(api, base);
    }
    Ok(bases)
}

/// Preflight's part in an exchange: every answer not retried is the caller's to read, and an
/// attempt without one is described in words.
struct PreflightExchange;

impl Exchanging for PreflightExchange {
    type Reply = Answer;
    type Error = String;

    fn code(&self, answer: &Answer) -> Code {
        Code::of_http(answer.status.as_u16())
    }

    fn reply(&mut self, answer: Answer) -> Result<Answer, String> {
        Ok(answer)
    }

    fn unanswered(&self, _request: &Request<'_>, failure: Unanswered) -> String {
        failure.to_string()
    }
}

/// `error.message` of Google's error JSON (AIP-193, and Compute Engine's), or the start of a
/// body that is not one.
fn error_message(body: &[u8]) -> String {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|value| Some(value.get("error")?.get("message")?.as_str()?.to_owned()))
        .unwrap_or_else(|| quote_body(body))
}

/// Where an emulator serving at `base` (`clusterform emulator`, the built-in one, a test's)
/// answers `api`, one of preflight's: each under its own path prefix (Service Usage under
/// `/serviceusage`, Filestore under `/file`, Managed Lustre under `/lustre`, Resource Manager
/// under `/cloudresourcemanager`, IAM under `/iam`; Compute Engine and Cloud Storage at
/// `base`, since their paths start with their own `/compute/v1` and `/storage/v1`), so that
/// the client's paths, joined to this, reach it.
pub fn emulator_preflight_endpoint(base: &str, api: PreflightApi) -> String {
    let prefix = match api {
        PreflightApi::ServiceUsage => "/serviceusage",
        PreflightApi::Filestore => "/file",
        PreflightApi::Lustre => "/lustre",
        PreflightApi::ResourceManager => "/cloudresourcemanager",
        PreflightApi::Iam => "/iam",
        PreflightApi::Compute | PreflightApi::Storage => "",
    };
    format!("{base}{prefix}")
}

/// The `CLUSTERFORM_<API>_ENDPOINT` variables, with their values, that send preflight's reads
/// to an emulator serving at `base`: an API endpoint never redirects them. Cloud Storage's
/// variable is the stack lock's too.
pub fn emulator_preflight_variables(base: &str) -> Vec<(String, String)> {
    PreflightApi::ALL
        .into_iter()
        .map(|api| {
            (
                api.environment_variable(),
                emulator_preflight_endpoint(base, api),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use clusterform_model::preflight::{NetworkName, Service};

    use super::*;
    use crate::transport::auth::StaticToken;
    use crate::transport::retry::RetryPolicy;
    use std::time::Duration;

    fn client(
        endpoints: &[(PreflightApi, &str)],
    ) -> Result<PreflightClient, PreflightEndpointError> {
        let endpoints = endpoints
            .iter()
            .map(|(api, url)| (*api, (*url).to_owned()))
            .collect();
        PreflightClient::new(
            &endpoints,
            ClientOptions::default(),
            Arc::new(StaticToken::new("t")),
        )
    }

    #[test]
    fn each_api_goes_to_its_own_endpoint_or_googles() {
        let client = client(&[(
            PreflightApi::ServiceUsage,
            "http://127.0.0.1:9/serviceusage",
        )])
        .unwrap();
        let service = PreflightRead::Service {
            project: "p".to_owned(),
            service: Service::VertexAi,
        };
        assert_eq!(
            client.url(&service).as_str(),
            "http://127.0.0.1:9/serviceusage/v1/projects/p/services/aiplatform.googleapis.com"
        );
        let network =
            PreflightRead::Network(NetworkName::parse("projects/p/global/networks/n").unwrap());
        assert_eq!(
            client.url(&network).as_str(),
            "https://compute.googleapis.com/compute/v1/projects/p/global/networks/n"
        );
    }

    /// A timeout is a check that cannot run, as a 403 is: the reading says so, the plan goes
    /// on (the CLI's options bound it: `preflight_client_options`).
    #[tokio::test]
    async fn a_read_whose_api_never_answers_is_unchecked_once_its_time_is_up() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        // Accepts and never answers, for as long as the test runs.
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                open.push(stream);
            }
        });
        let endpoints = BTreeMap::from([(PreflightApi::Compute, base)]);
        let options = ClientOptions {
            request_timeout: Duration::from_millis(200),
            retry: RetryPolicy {
                max_elapsed: Duration::from_secs(1),
                ..RetryPolicy::default()
            },
            ..ClientOptions::default()
        };
        let client =
            PreflightClient::new(&endpoints, options, Arc::new(StaticToken::new("t"))).unwrap();
        let network =
            PreflightRead::Network(NetworkName::parse("projects/p/global/networks/n").unwrap());
        let reading = client.read(&network).await;
        assert!(matches!(reading, Reading::Unchecked(_)), "{reading:?}");
        held.abort();
    }

    #[test]
    fn an_endpoint_follows_the_http_rules() {
        let refused = client(&[(PreflightApi::Compute, "http://10.0.0.1")]).unwrap_err();
        assert!(refused.reason.contains("loopback"), "{refused}");
        let refused = client(&[(PreflightApi::Filestore, "https://u:secret@x")]).unwrap_err();
        assert!(!refused.to_string().contains("secret"), "{refused}");
    }
}
