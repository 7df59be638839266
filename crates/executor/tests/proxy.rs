//! A small HTTP proxy in front of the emulator that misbehaves on chosen requests: it loses
//! answers, or answers a server error before or after passing the request on. It records
//! every request it sees, so tests can compare what the client sent with what reached the
//! emulator.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};

/// How long a "lost" answer hangs: far beyond any client's request timeout in these tests.
const HANG: Duration = Duration::from_secs(30);

/// What the proxy does to a request its rule picks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mischief {
    /// Forward it, then never answer (the request happened, its answer is lost).
    LoseAnswer,
    /// Never forward it and never answer (the request did not happen).
    Swallow,
    /// Forward it, then answer this HTTP status instead of the emulator's answer.
    ReplaceAnswer(u16),
    /// Answer this HTTP status without forwarding it.
    Refuse(u16),
}

/// Which requests misbehave, how, and how many times.
pub struct Rule {
    /// Picks requests by method and path.
    pub applies_to: fn(&Method, &str) -> bool,
    /// What happens to them.
    pub mischief: Mischief,
    /// How many picked requests misbehave; later ones are forwarded untouched.
    pub times: usize,
}

/// A create: `POST …/modelDevelopmentClusters`.
pub fn is_create(method: &Method, path: &str) -> bool {
    method == Method::POST && path.ends_with("/modelDevelopmentClusters")
}

/// A delete: `DELETE …/modelDevelopmentClusters/{id}`.
pub fn is_delete(method: &Method, _path: &str) -> bool {
    method == Method::DELETE
}

/// An operation long poll: `POST …/operations/{id}:wait`.
pub fn is_wait(method: &Method, path: &str) -> bool {
    method == Method::POST && path.ends_with(":wait")
}

/// One request as the proxy saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: Method,
    pub path: String,
}

/// A running proxy.
pub struct Proxy {
    base_url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Proxy {
    /// Starts a proxy to `upstream` on a loopback port.
    pub async fn start(upstream: String, rule: Rule) -> Self {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let state = ProxyState {
            upstream,
            http: reqwest::Client::new(),
            rule: Arc::new(Mutex::new(rule)),
            seen: seen.clone(),
        };
        let app = axum::Router::new().fallback(forward).with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self {
            base_url: format!("http://{address}"),
            seen,
        }
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Requests the client sent whose method is `method` and whose path ends with `path_end`.
    pub fn count(&self, method: &str, path_end: &str) -> usize {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.method == method && s.path.ends_with(path_end))
            .count()
    }
}

#[derive(Clone)]
struct ProxyState {
    upstream: String,
    http: reqwest::Client,
    rule: Arc<Mutex<Rule>>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl ProxyState {
    /// The mischief for this request, if the rule picks it and has turns left.
    fn mischief_for(&self, method: &Method, path: &str) -> Option<Mischief> {
        let mut rule = self.rule.lock().unwrap();
        if rule.times == 0 || !(rule.applies_to)(method, path) {
            return None;
        }
        rule.times -= 1;
        Some(rule.mischief)
    }
}

async fn forward(State(proxy): State<ProxyState>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body: Bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
    proxy.seen.lock().unwrap().push(Seen {
        method: parts.method.clone(),
        path: parts.uri.path().to_owned(),
    });
    let mischief = proxy.mischief_for(&parts.method, parts.uri.path());
    match mischief {
        Some(Mischief::Swallow) => tokio::time::sleep(HANG).await,
        Some(Mischief::Refuse(status)) => return server_error(status),
        _ => {}
    }
    let url = format!("{}{}", proxy.upstream, parts.uri);
    let mut upstream = proxy.http.request(parts.method.clone(), url).body(body);
    for (name, value) in &parts.headers {
        if name != "host" {
            upstream = upstream.header(name, value);
        }
    }
    let answer = upstream.send().await.unwrap();
    match mischief {
        Some(Mischief::LoseAnswer) => tokio::time::sleep(HANG).await,
        Some(Mischief::ReplaceAnswer(status)) => return server_error(status),
        _ => {}
    }
    let status = StatusCode::from_u16(answer.status().as_u16()).unwrap();
    (status, answer.bytes().await.unwrap()).into_response()
}

/// A server error as a Google front end sends it: Google's error JSON, except a gateway
/// error, which comes as an HTML page from the load balancer.
fn server_error(status: u16) -> Response {
    let code = StatusCode::from_u16(status).unwrap();
    let body = match status {
        502 => "<html><body>502 Bad Gateway</body></html>".to_owned(),
        _ => {
            let name = match status {
                409 => "ABORTED",
                503 => "UNAVAILABLE",
                504 => "DEADLINE_EXCEEDED",
                _ => "INTERNAL",
            };
            serde_json::json!({"error": {
                "code": status,
                "message": "injected by the test proxy",
                "status": name,
            }})
            .to_string()
        }
    };
    (code, body).into_response()
}
