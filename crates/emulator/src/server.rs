//! Serving the router on a TCP port with our own accept loop (hyper HTTP/1.1
//! connections), which is what makes injected connection drops possible: when
//! a response carries the drop marker the service returns an error, and hyper
//! closes the connection without writing anything.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, Response};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tower::ServiceExt;

use crate::emulator::Emulator;
use crate::error::EmulatorError;
use crate::request_middleware::DropConnection;

/// How long [`EmulatorHandle::shutdown`] lets connections finish: a client holding a
/// half-sent request open must not keep the server from stopping.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// A running emulator server. Dropping the handle leaves the server running
/// until the Tokio runtime ends; [`EmulatorHandle::shutdown`] stops it.
#[derive(Debug)]
pub struct EmulatorHandle {
    local_addr: SocketAddr,
    emulator: Emulator,
    stop: watch::Sender<bool>,
    accept_loop: JoinHandle<()>,
}

impl EmulatorHandle {
    /// `http://127.0.0.1:PORT`, the base URL clients use.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.local_addr)
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The emulator being served.
    pub fn emulator(&self) -> &Emulator {
        &self.emulator
    }

    /// Stops accepting connections, lets requests in progress finish, closes
    /// idle connections, and returns when all of them are done or, at the latest,
    /// after [`SHUTDOWN_GRACE`], closing those still open.
    pub async fn shutdown(self) {
        // The receivers live in the tasks we are about to await, so the send cannot fail.
        let _ = self.stop.send(true);
        // A join error means a connection task panicked; the server is stopped either way.
        let _ = self.accept_loop.await;
    }
}

/// Why a connection is being closed without an answer.
#[derive(Debug, thiserror::Error)]
#[error("connection dropped by fault injection")]
struct DroppedOnPurpose;

impl Emulator {
    /// Binds `addr` (use `127.0.0.1:0` for a free port), starts serving in a
    /// background task and returns at once.
    pub async fn serve(&self, addr: SocketAddr) -> Result<EmulatorHandle, EmulatorError> {
        let bind_error = |source| EmulatorError::Bind { addr, source };
        let listener = TcpListener::bind(addr).await.map_err(bind_error)?;
        let local_addr = listener.local_addr().map_err(bind_error)?;
        let (stop, stop_signal) = watch::channel(false);
        let accept_loop = tokio::spawn(accept_connections(listener, self.router(), stop_signal));
        Ok(EmulatorHandle {
            local_addr,
            emulator: self.clone(),
            stop,
            accept_loop,
        })
    }
}

async fn accept_connections(
    listener: TcpListener,
    router: Router,
    stop_signal: watch::Receiver<bool>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = stopped(stop_signal.clone()) => break,
            accepted = listener.accept() => {
                // An accept error concerns one client (e.g. it reset the
                // connection) or a momentary lack of file descriptors; keep serving.
                if let Ok((stream, _)) = accepted {
                    connections.spawn(serve_connection(stream, router.clone(), stop_signal.clone()));
                }
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    let drained = async { while connections.join_next().await.is_some() {} };
    // Past the grace period the remaining connections are aborted when the set is dropped.
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, drained).await;
}

async fn serve_connection(stream: TcpStream, router: Router, stop_signal: watch::Receiver<bool>) {
    // Small request/response exchanges: do not let Nagle's algorithm delay them.
    let _ = stream.set_nodelay(true);
    let service =
        service_fn(move |request: Request<Incoming>| answer_or_drop(router.clone(), request));
    let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    // Connection errors (client went away, or our own deliberate drop) end
    // this connection only; there is nobody to report them to.
    tokio::select! {
        _ = connection.as_mut() => {}
        () = stopped(stop_signal) => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
}

async fn answer_or_drop(
    router: Router,
    request: Request<Incoming>,
) -> Result<Response<Body>, DroppedOnPurpose> {
    let response = match router.oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    if response.extensions().get::<DropConnection>().is_some() {
        Err(DroppedOnPurpose)
    } else {
        Ok(response)
    }
}

/// Resolves when a stop is requested; never, if the handle was dropped without one.
async fn stopped(mut stop_signal: watch::Receiver<bool>) {
    if stop_signal.wait_for(|stop| *stop).await.is_err() {
        std::future::pending::<()>().await;
    }
}
