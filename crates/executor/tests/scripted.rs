//! A scripted HTTP server for hostile-answer tests: every request is recorded and answered by
//! a closure the test writes, so a test can play a server that lies, loops or floods. Streamed
//! answers count the bytes they actually handed to the connection, so a test can check that
//! the client stopped reading instead of swallowing the whole flood.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use serde_json::Value;

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: Method,
    pub path: String,
    pub query: String,
    /// The request body, when it was JSON.
    pub body: Option<Value>,
}

impl Seen {
    /// The value of query parameter `key`, if sent.
    pub fn param(&self, key: &str) -> Option<String> {
        let url = reqwest::Url::parse(&format!("http://query/?{}", self.query)).ok()?;
        url.query_pairs()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.into_owned())
    }

    /// Whether this is a `:wait` or GET on an operation.
    pub fn is_operation_poll(&self) -> bool {
        self.path.starts_with("/v1/")
    }
}

type Script = dyn Fn(&Seen, &Tools) -> Response + Send + Sync;

/// What a script can use to build its answers.
#[derive(Clone, Default)]
pub struct Tools {
    streamed: Arc<AtomicUsize>,
}

impl Tools {
    /// A 200 answer of `total` bytes sent in `chunk`-sized pieces, without `Content-Length`;
    /// only the pieces the connection accepts are counted as streamed.
    pub fn flood(&self, total: usize, chunk: usize) -> Response {
        let streamed = self.streamed.clone();
        let piece = Bytes::from(vec![b' '; chunk]);
        let pieces = total / chunk;
        let stream = futures::stream::iter(0..pieces).map(move |_| {
            streamed.fetch_add(piece.len(), Ordering::Relaxed);
            Ok::<_, std::io::Error>(piece.clone())
        });
        (StatusCode::OK, Body::from_stream(stream)).into_response()
    }
}

/// A 200 answer whose body breaks off after its first bytes: the client gets no whole answer,
/// as when a connection drops while the answer is on its way.
pub fn cut_short() -> Response {
    let pieces: [Result<Bytes, std::io::Error>; 2] = [
        Ok(Bytes::from_static(b"{\"name\": ")),
        Err(std::io::Error::other("the connection dropped")),
    ];
    (
        StatusCode::OK,
        Body::from_stream(futures::stream::iter(pieces)),
    )
        .into_response()
}

/// A running scripted server.
pub struct Scripted {
    base_url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    tools: Tools,
}

impl Scripted {
    /// Starts a server on a loopback port answering every request with `script`.
    pub async fn start(script: impl Fn(&Seen, &Tools) -> Response + Send + Sync + 'static) -> Self {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let tools = Tools::default();
        let state = ServerState {
            script: Arc::new(script),
            seen: seen.clone(),
            tools: tools.clone(),
        };
        let app = axum::Router::new().fallback(answer).with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self {
            base_url: format!("http://{address}"),
            seen,
            tools,
        }
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// Bytes of flood answers handed to connections so far.
    pub fn streamed(&self) -> usize {
        self.tools.streamed.load(Ordering::Relaxed)
    }
}

#[derive(Clone)]
struct ServerState {
    script: Arc<Script>,
    seen: Arc<Mutex<Vec<Seen>>>,
    tools: Tools,
}

/// The most of a request body kept for [`Seen::body`]; the client's requests are small.
const MAX_SEEN_BODY: usize = 1024 * 1024;

async fn answer(State(server): State<ServerState>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, MAX_SEEN_BODY).await.ok();
    let seen = Seen {
        method: parts.method,
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().unwrap_or_default().to_owned(),
        body: body.and_then(|bytes| serde_json::from_slice(&bytes).ok()),
    };
    server.seen.lock().unwrap().push(seen.clone());
    (server.script)(&seen, &server.tools)
}

/// A 200 answer with this JSON.
pub fn json(value: Value) -> Response {
    (StatusCode::OK, axum::Json(value)).into_response()
}

/// A 200 answer with this text as `content_type`.
pub fn text(content_type: &'static str, body: &'static str) -> Response {
    (StatusCode::OK, [(header::CONTENT_TYPE, content_type)], body).into_response()
}

/// An error answer in Google's error JSON.
pub fn google_error(status: u16, name: &str, message: &str) -> Response {
    let code = StatusCode::from_u16(status).unwrap();
    let body = serde_json::json!({"error": {"code": status, "message": message, "status": name}});
    (code, axum::Json(body)).into_response()
}

/// A redirect to `location`.
pub fn redirect(status: u16, location: &str) -> Response {
    let code = StatusCode::from_u16(status).unwrap();
    (code, [(header::LOCATION, location.to_owned())], "").into_response()
}
