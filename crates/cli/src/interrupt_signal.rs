//! Ctrl-C, listened for from the moment it is asked for.
//!
//! `tokio::signal::ctrl_c()` installs its handler when its future is first polled, not when it is
//! called. Until then a Ctrl-C takes the default action and kills the process without a word: a
//! server that already answers connections, or a run that already holds its lock, would end
//! unannounced (a test that stopped the emulator right after it answered saw exactly that under
//! load).

use std::future::Future;
use std::io;

use futures::FutureExt;

/// The next Ctrl-C, its handler installed before this returns.
pub fn next_ctrl_c() -> impl Future<Output = io::Result<()>> {
    let mut signal = Box::pin(tokio::signal::ctrl_c());
    let early = signal.as_mut().now_or_never();
    async move {
        match early {
            Some(result) => result,
            None => signal.await,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Sent to ourselves right after the call, before anything polls: without the handler
    /// installed by then, SIGINT would end the test process.
    #[tokio::test]
    async fn a_ctrl_c_right_after_the_call_is_caught_not_fatal() {
        let interrupted = next_ctrl_c();
        let sent = std::process::Command::new("kill")
            .args(["-INT", &std::process::id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        tokio::time::timeout(Duration::from_secs(10), interrupted)
            .await
            .expect("the Ctrl-C was caught")
            .unwrap();
    }
}
