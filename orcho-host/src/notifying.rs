//! Sending the store's events in the background: after a command that may
//! have opened, decided or ended something, `orcho` starts `orcho notify
//! deliver` and lets it go, so a slow or dead endpoint never holds up a
//! run or a decision. `orcho serve` delivers all along instead.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::place::Place;

/// Whether this process is the `orcho` program (not a host that embeds
/// the library): only then is it started again to deliver.
static BINARY: AtomicBool = AtomicBool::new(false);

/// Marks this process as the `orcho` program.
pub fn set_binary() {
    BINARY.store(true, Ordering::Relaxed);
}

/// Starts `orcho notify deliver` on the place's store, and lets it go,
/// when the store has notifiers. Never fails: a notification not sent now
/// is sent by the next pass, and `orcho notify log` says what was.
pub fn kick(place: &Place) {
    if !BINARY.load(Ordering::Relaxed) {
        return;
    }
    let has_notifiers = place
        .store()
        .notifiers()
        .is_ok_and(|notifiers| !notifiers.is_empty());
    if !has_notifiers {
        return;
    }
    let Ok(program) = std::env::current_exe() else {
        return;
    };
    let mut argv = vec![
        program.into_os_string(),
        "--checkout".into(),
        place.checkout.as_os_str().to_owned(),
    ];
    // A directory by its absolute path; a database's URL (with its
    // password) in the environment, never on the command line.
    let mut envs = Vec::new();
    match &place.store_named {
        Some(url) if orcho_pg::is_url(url.as_str()) => {
            envs.push(("ORCHO_STORE", url.as_os_str().to_owned()));
        }
        _ => {
            argv.push("--store".into());
            argv.push(place.store.as_os_str().to_owned());
        }
    }
    argv.extend(["notify".into(), "deliver".into()]);
    let _ = orcho::receipts::exec::spawn_detached(argv, envs);
}
