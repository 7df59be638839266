//! A run's one Ctrl-C listener: started the first time a step can be interrupted, it cancels the
//! run's one token on the first Ctrl-C (saying which command resumes) and exits the process on
//! the second.

use std::sync::Once;

use tokio_util::sync::CancellationToken;

use crate::interrupt_signal;
use crate::printer;
use crate::stack_lock;

/// The run's cancellation token and its listener.
pub struct Interrupts {
    token: CancellationToken,
    listening: Once,
}

impl Interrupts {
    pub fn new() -> Self {
        Self {
            token: CancellationToken::new(),
            listening: Once::new(),
        }
    }

    /// The run's token, cancelled by the first Ctrl-C; the first call starts the listener,
    /// whose message names `rerun`, the command that waits for what the run leaves running.
    pub fn token(&self, rerun: &'static str) -> CancellationToken {
        self.listening.call_once(|| self.listen(rerun));
        self.token.clone()
    }

    fn listen(&self, rerun: &'static str) {
        let token = self.token.clone();
        stack_lock::interrupts_handled_by_command();
        let interrupted = interrupt_signal::next_ctrl_c();
        tokio::spawn(async move {
            if interrupted.await.is_err() {
                return;
            }
            printer::interrupted(rerun);
            token.cancel();
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        });
    }
}
