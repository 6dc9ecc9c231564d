//! Cancelling a running command from another thread.

use std::{
    io::{PipeReader, PipeWriter, Write},
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
};

/// A handle that cancels the commands it was given to, from any thread.
///
/// Clone it freely: every clone cancels the same commands. Cancelling is
/// sticky: a command given an already-cancelled token is never started and
/// reports [`ExitStatus::Cancelled`](super::ExitStatus::Cancelled).
/// A cancelled command's whole process group gets `SIGTERM`, then `SIGKILL`
/// after the grace period.
///
/// ```
/// use std::{thread, time::Duration};
/// use orcho_receipts::exec::{self, BaseEnv, CancelToken, ExecRequest, ExitStatus};
///
/// let token = CancelToken::new();
/// let canceller = token.clone();
/// let t = thread::spawn(move || {
///     thread::sleep(Duration::from_millis(100));
///     canceller.cancel();
/// });
/// let outcome = exec::run(&ExecRequest::new(["sleep", "600"]).envs(BaseEnv::inherit()).cancel(token))?;
/// assert_eq!(outcome.status, ExitStatus::Cancelled);
/// t.join().unwrap();
/// # Ok::<(), orcho_receipts::ExecError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct CancelToken {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    cancelled: AtomicBool,
    next_id: AtomicU64,
    /// One pipe per command waiting on this token; a byte written wakes its
    /// `poll`.
    wakers: Mutex<Vec<(u64, PipeWriter)>>,
}

impl CancelToken {
    /// A token that is not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels every command running with this token, now and later.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        let wakers = self
            .inner
            .wakers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for (_, writer) in wakers.iter() {
            // A full pipe already wakes the reader; nothing else can fail
            // usefully here.
            let _ = (&*writer).write(&[1]);
        }
    }

    /// Whether [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Registers a waker for one command; dropped when it finishes.
    pub(crate) fn register(&self) -> std::io::Result<Registration> {
        let (reader, writer) = std::io::pipe()?;
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        self.inner
            .wakers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((id, writer));
        Ok(Registration {
            token: self.clone(),
            id,
            reader,
        })
    }
}

/// A command's registration with a [`CancelToken`].
#[derive(Debug)]
pub(crate) struct Registration {
    token: CancelToken,
    id: u64,
    pub(crate) reader: PipeReader,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.token
            .inner
            .wakers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(id, _)| *id != self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_is_sticky_and_shared() {
        let a = CancelToken::new();
        let b = a.clone();
        assert!(!b.is_cancelled());
        let reg = b.register().unwrap();
        a.cancel();
        assert!(b.is_cancelled());
        let mut byte = [0u8; 1];
        std::io::Read::read_exact(&mut &reg.reader, &mut byte).unwrap();
        drop(reg);
        assert!(a.inner.wakers.lock().unwrap().is_empty());
    }
}
