//! The one emulator harness: an in-process emulator serving on a free port of 127.0.0.1 for
//! the length of a test, with its base URL and a clean shutdown. Crates wrap it with their
//! own clients (the executor's `ApiClient`, the emulator tests' raw HTTP calls).

use std::time::Duration;

use clusterform_emulator::{Emulator, EmulatorHandle, EmulatorOptions};

use crate::TOKEN;

/// Options whose operations take `operation_duration` and that require [`TOKEN`].
pub fn options_with_token(operation_duration: Duration) -> EmulatorOptions {
    EmulatorOptions {
        operation_duration,
        required_token: Some(TOKEN.to_owned()),
        ..EmulatorOptions::default()
    }
}

/// An emulator serving on a free loopback port.
#[derive(Debug)]
pub struct TestEmulator {
    handle: EmulatorHandle,
}

impl TestEmulator {
    /// A new emulator with `options`, served.
    pub async fn start(options: EmulatorOptions) -> Self {
        Self::serve(&Emulator::new(options).expect("emulator options")).await
    }

    /// Serves `emulator` (one made by the test, e.g. on a state file).
    pub async fn serve(emulator: &Emulator) -> Self {
        let handle = emulator
            .serve("127.0.0.1:0".parse().expect("loopback address"))
            .await
            .expect("the emulator serves on a free loopback port");
        Self { handle }
    }

    /// The served emulator, to seed it or read its request log.
    pub fn emulator(&self) -> &Emulator {
        self.handle.emulator()
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        self.handle.base_url()
    }

    /// The base URL followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url())
    }

    /// The server's socket address.
    pub fn local_addr(&self) -> std::net::SocketAddr {
        self.handle.local_addr()
    }

    /// Stops serving and waits for the server to end.
    pub async fn shutdown(self) {
        self.handle.shutdown().await;
    }
}
