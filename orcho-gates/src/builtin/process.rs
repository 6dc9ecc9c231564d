//! Running a gate's blocking process so that the gate's cancellation, or
//! the gate being given up on, stops it; and what of its output a gate
//! reports.

use orcho_core::error_chain;
use orcho_receipts::exec::CancelToken;

use crate::{GateContext, GateError};

/// Cancels the command when the gate's future is dropped before it ends.
struct KillOnDrop(CancelToken);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Runs `work` on the blocking pool with a token that `ctx.cancel()` fires,
/// and that fires too when this future is dropped (the scheduler gave up on
/// the gate): the process `work` starts never outlives the gate.
pub(super) async fn run_cancellable<T, E>(
    ctx: &GateContext,
    work: impl FnOnce(CancelToken) -> Result<T, E> + Send + 'static,
) -> Result<T, GateError>
where
    T: Send + 'static,
    E: std::error::Error + Send + 'static,
{
    let token = CancelToken::new();
    let run = {
        let token = token.clone();
        tokio::task::spawn_blocking(move || work(token))
    };
    let cancel = ctx.cancel().clone();
    let bridge = tokio::spawn({
        let token = token.clone();
        async move {
            cancel.cancelled().await;
            token.cancel();
        }
    });
    let _kill_on_drop = KillOnDrop(token);
    let joined = run.await;
    bridge.abort();
    joined
        .map_err(|e| GateError::msg(format!("the command task failed: {e}")))?
        .map_err(|e| GateError::msg(error_chain(&e)))
}

/// The end of a command's output as a gate reports it: standard error's
/// tail, then standard output's, each trimmed, empty ones left out.
pub(super) fn output_tail(stderr: &str, stdout: &str) -> String {
    [stderr.trim_end(), stdout.trim_end()]
        .into_iter()
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}
