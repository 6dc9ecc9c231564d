//! The runtime the database client runs on, apart from the caller's.
//!
//! The storage seam is synchronous and is called from plain threads, from
//! `spawn_blocking` and briefly from async code. A blocking client that
//! starts its own runtime per call would panic inside the caller's runtime,
//! so the connections live on one thread of their own, with a
//! current-thread runtime, and a call hands it a future and waits for the
//! answer on a channel.

use std::{future::Future, io, sync::mpsc, thread};

use tokio::{runtime, sync::oneshot};

/// A runtime on a thread of its own, stopped when dropped.
#[derive(Debug)]
pub(crate) struct Bridge {
    handle: runtime::Handle,
    stop: Option<oneshot::Sender<()>>,
}

impl Bridge {
    /// Starts the thread and its runtime.
    pub(crate) fn start() -> io::Result<Self> {
        let runtime = runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        thread::Builder::new()
            .name("orcho-pg".to_owned())
            .spawn(move || {
                runtime.block_on(async {
                    // Both a send and a dropped sender stop it.
                    let _ = stopped.await;
                });
                // The runtime is dropped here, on its own thread, where
                // blocking is allowed; the connections it drove close.
            })?;
        Ok(Self {
            handle,
            stop: Some(stop),
        })
    }

    /// Runs `future` on the bridge's runtime and waits for its output;
    /// `None` when the runtime is gone (the process is exiting).
    pub(crate) fn run<T: Send + 'static>(
        &self,
        future: impl Future<Output = T> + Send + 'static,
    ) -> Option<T> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.handle.spawn(async move {
            let _ = tx.send(future.await);
        });
        rx.recv().ok()
    }

    /// Starts `future` on the bridge's runtime without waiting for it.
    pub(crate) fn spawn(&self, future: impl Future<Output = ()> + Send + 'static) {
        self.handle.spawn(future);
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
