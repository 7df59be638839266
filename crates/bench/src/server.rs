//! The emulator each benchmark case talks to: in this process, on a free loopback port, with
//! the injected latency, answering with project numbers as Google does.

use std::sync::Arc;
use std::time::Duration;

use clusterform_emulator::{Emulator, EmulatorHandle, EmulatorOptions};
use clusterform_executor::{ApiClient, ClientOptions, StaticToken};

use crate::child::TOKEN;
use crate::error::BenchError;

/// An emulator with `latency` before every request and operations of `operation`, served on
/// 127.0.0.1, with its default List page cap.
pub async fn start(latency: Duration, operation: Duration) -> Result<EmulatorHandle, BenchError> {
    start_with_page_cap(latency, operation, list_page_cap()).await
}

/// [`start`] with List pages of at most `page_cap` clusters.
pub async fn start_with_page_cap(
    latency: Duration,
    operation: Duration,
    page_cap: usize,
) -> Result<EmulatorHandle, BenchError> {
    let emulator = Emulator::new(EmulatorOptions {
        latency,
        operation_duration: operation,
        max_page_size: page_cap,
        required_token: Some(TOKEN.to_owned()),
        project_numbers: true,
        ..EmulatorOptions::default()
    })?;
    let loopback = "127.0.0.1:0".parse().expect("a literal socket address");
    Ok(emulator.serve(loopback).await?)
}

/// The most clusters one List page returns: the emulator's cap, as the real API has one.
pub fn list_page_cap() -> usize {
    EmulatorOptions::default().max_page_size
}

/// The executor's client pointed at `base_url`, with the benchmark's token.
pub fn api_client(base_url: &str) -> Result<ApiClient, BenchError> {
    let options = ClientOptions {
        endpoint: Some(base_url.to_owned()),
        ..ClientOptions::default()
    };
    Ok(ApiClient::new(options, Arc::new(StaticToken::new(TOKEN)))?)
}
