//! Ctrl-C (and `SIGTERM`, `SIGHUP`) while a run is driven.
//!
//! A phase command runs in a process group of its own, so the terminal's
//! `SIGINT` reaches `orcho` alone. `orcho` forwards it: the phase command's
//! group is cancelled (`SIGTERM`, then `SIGKILL` after the grace period)
//! and the command ends with [`INTERRUPTED`](crate::exit::INTERRUPTED),
//! naming the run and how to resume it. Outside a phase (at a prompt, say),
//! or at a second Ctrl-C, `orcho` says the same and exits at once: every
//! transition is on disk before it is acted on, so the run resumes from
//! where it stood. `SIGTERM` (a `timeout`, a cancelled CI job, `docker
//! stop`) and `SIGHUP` (the terminal closed) are handled the same way, so
//! that no phase command or agent is left running without its `orcho`.

use std::sync::{Mutex, PoisonError};

use orcho::{core::RunId, receipts::exec::CancelToken};

use crate::{error::CliError, exit, output};

/// What Ctrl-C has to know: the run being driven, and the phase command
/// running for it.
#[derive(Debug, Default)]
struct Driving {
    run: Option<RunId>,
    phase: Option<CancelToken>,
    json: bool,
}

static DRIVING: Mutex<Driving> = Mutex::new(Driving {
    run: None,
    phase: None,
    json: false,
});

fn driving() -> std::sync::MutexGuard<'static, Driving> {
    DRIVING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Handles Ctrl-C from now on, for the run this process drives.
///
/// The handler runs on a thread of its own, with a runtime of its own: a
/// prompt blocks a worker of the command's runtime while it reads a line,
/// and Ctrl-C must still act at once there.
pub fn install(voice: crate::place::Voice) {
    driving().json = voice.is_json();
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let spawned = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()
            .and_then(|runtime| {
                // Listening before this returns: a Ctrl-C from now on is
                // handled here, never by the default that kills.
                let signals = {
                    let _inside = runtime.enter();
                    use tokio::signal::unix::{SignalKind, signal};
                    [
                        signal(SignalKind::interrupt())?,
                        signal(SignalKind::terminate())?,
                        signal(SignalKind::hangup())?,
                    ]
                };
                std::thread::Builder::new()
                    .name("ctrl-c".to_owned())
                    .spawn(move || runtime.block_on(handle(signals)))
            });
        if let Err(e) = spawned {
            // Ctrl-C then ends the process as it does any program.
            output::err(&format!("warning: Ctrl-C is not handled: {e}"));
        }
    });
}

/// What stopped the phase last, in words: `Ctrl-C`, `SIGTERM` or
/// `SIGHUP`.
static STOPPED_BY: Mutex<&str> = Mutex::new("Ctrl-C");

/// What stopped the phase command, in words, for the run's journal.
pub fn what_stopped() -> &'static str {
    *STOPPED_BY.lock().unwrap_or_else(PoisonError::into_inner)
}

async fn handle(signals: [tokio::signal::unix::Signal; 3]) {
    let [mut interrupt, mut terminate, mut hangup] = signals;
    loop {
        let by = tokio::select! {
            got = interrupt.recv() => if got.is_none() { return } else { "Ctrl-C" },
            got = terminate.recv() => if got.is_none() { return } else { "SIGTERM" },
            got = hangup.recv() => if got.is_none() { return } else { "SIGHUP" },
        };
        *STOPPED_BY.lock().unwrap_or_else(PoisonError::into_inner) = by;
        let mut state = driving();
        match state.phase.take() {
            Some(phase) if !phase.is_cancelled() => {
                if !state.json {
                    output::err("interrupted: stopping the command …");
                }
                phase.cancel();
            }
            _ => {
                report(state.run.as_ref(), state.json);
                std::process::exit(i32::from(exit::INTERRUPTED));
            }
        }
    }
}

/// The run this process drives from now on.
pub fn driving_run(run: &RunId) {
    driving().run = Some(run.clone());
}

/// A token that Ctrl-C cancels, for the phase command about to start.
pub fn phase_started() -> CancelToken {
    let token = CancelToken::new();
    driving().phase = Some(token.clone());
    token
}

/// The phase command has ended.
pub fn phase_ended() {
    driving().phase = None;
}

/// The error a command interrupted by Ctrl-C ends with.
pub fn error(run: &RunId) -> CliError {
    CliError::interrupted(format!("interrupted: run {run} stopped"))
        .with_hint(format!("`orcho resume {run}` continues it"))
}

fn report(run: Option<&RunId>, json: bool) {
    let error = match run {
        Some(run) => error(run),
        None => CliError::interrupted("interrupted"),
    };
    output::report_error(&error, json);
}
