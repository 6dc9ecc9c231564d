//! Stopping a gate's process when the gate is given up on.

use orcho_receipts::exec::CancelToken;

/// Cancels the command when the gate's future is dropped before it ends.
pub(super) struct KillOnDrop(pub(super) CancelToken);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}
