//! A phase command left running by an `orcho` process that was killed.
//!
//! A phase command runs in a process group of its own, so a `SIGKILL` of
//! `orcho` leaves it running, possibly still writing in the run's checkout.
//! While it runs, a marker under `<store>/host/` names its group and when
//! its leader started; the next `orcho` to run a phase of that run stops
//! that group first (`SIGTERM`, then `SIGKILL` after [`GRACE`]). The start
//! time and the boot id tell the same process from a later one that reuses
//! its id, so nothing else is ever signalled.

use std::time::{Duration, Instant};

use camino::{Utf8Path, Utf8PathBuf};
use orcho::core::RunId;
use serde::{Deserialize, Serialize};

use super::BoxError;

/// How long a left-over group gets between `SIGTERM` and `SIGKILL`.
pub(crate) const GRACE: Duration = Duration::from_secs(5);

/// Where the marker of `run`'s phase command lives.
pub(crate) fn marker(store: &Utf8Path, run: &RunId) -> Utf8PathBuf {
    store.join("host").join(format!("{run}.phase.json"))
}

/// Who the phase command is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Recorded {
    /// Its process id, which is also its process group id.
    pgid: u32,
    /// When it started, in clock ticks since boot.
    started: u64,
    /// The boot it started in.
    boot: String,
}

/// Records the phase command `pid` at `marker`.
pub(crate) fn record(marker: &Utf8Path, pid: u32) -> Result<(), BoxError> {
    let Some(recorded) = identify(pid) else {
        // Gone already, or not a system that tells: nothing to stop later.
        return Ok(());
    };
    if let Some(dir) = marker.parent() {
        orcho::core::fs::create_dir_all(dir)?;
    }
    orcho::core::fs::write_atomic(marker, &serde_json::to_vec(&recorded)?)?;
    Ok(())
}

/// Removes the marker once the phase command has ended.
pub(crate) fn clear(marker: &Utf8Path) -> Result<(), BoxError> {
    match std::fs::remove_file(marker) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Stops the group a marker names when its leader is still the process
/// that was recorded, and removes the marker. Returns the group it stopped.
///
/// # Errors
///
/// The marker cannot be read or parsed, the group cannot be signalled, or
/// it outlives `SIGKILL`.
pub(crate) fn stop(marker: &Utf8Path) -> Result<Option<u32>, BoxError> {
    let bytes = match std::fs::read(marker) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let recorded: Recorded = serde_json::from_slice(&bytes)
        .map_err(|e| format!("the phase process marker `{marker}` is not valid: {e}"))?;
    let alive = || identify(recorded.pgid).is_some_and(|now| now == recorded);
    if !alive() {
        clear(marker)?;
        return Ok(None);
    }
    let group = i32::try_from(recorded.pgid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .ok_or("the phase process marker names no process")?;
    for (signal, wait) in [
        (rustix::process::Signal::TERM, GRACE),
        (rustix::process::Signal::KILL, Duration::from_secs(2)),
    ] {
        match rustix::process::kill_process_group(group, signal) {
            Ok(()) => {}
            Err(rustix::io::Errno::SRCH) => break,
            Err(e) => return Err(format!("cannot stop process group {group:?}: {e}").into()),
        }
        let until = Instant::now() + wait;
        while alive() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        if !alive() {
            break;
        }
    }
    if alive() {
        return Err(format!("process group {} outlived SIGKILL", recorded.pgid).into());
    }
    clear(marker)?;
    Ok(Some(recorded.pgid))
}

/// Who `pid` is now: `None` when it does not exist or has exited (a zombie
/// waiting for its new parent counts as exited).
#[cfg(target_os = "linux")]
fn identify(pid: u32) -> Option<Recorded> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields are counted
    // after its closing parenthesis, which starts with field 3 (the state).
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    if matches!(fields.first(), Some(&("Z" | "X"))) {
        return None;
    }
    let started = fields.get(22 - 3)?.parse().ok()?;
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(Recorded {
        pgid: pid,
        started,
        boot: boot.trim().to_owned(),
    })
}

/// Elsewhere a process cannot be told from a later one with the same id, so
/// nothing is recorded and nothing is stopped.
#[cfg(not(target_os = "linux"))]
fn identify(_pid: u32) -> Option<Recorded> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_identified_the_same_way_twice() {
        let me = std::process::id();
        let first = identify(me).expect("this process exists");
        assert_eq!(identify(me), Some(first.clone()));
        assert!(first.started > 0);
        assert!(!first.boot.is_empty());
    }

    #[test]
    fn a_marker_of_a_process_that_is_gone_is_cleared_without_a_signal() {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = Utf8PathBuf::try_from(dir.path().to_owned()).expect("utf-8");
        let run: RunId = "20261121T120000000Z-00000000000000aa"
            .parse()
            .expect("run id");
        let marker = marker(&root, &run);
        let mut recorded = identify(std::process::id()).expect("this process");
        // This process, but started at another time: a reused id.
        recorded.started += 1;
        orcho::core::fs::create_dir_all(marker.parent().expect("parent")).expect("mkdir");
        orcho::core::fs::write_atomic(&marker, &serde_json::to_vec(&recorded).expect("json"))
            .expect("write");
        assert_eq!(stop(&marker).expect("stop"), None);
        assert!(!marker.exists());
        assert_eq!(stop(&marker).expect("no marker"), None);
    }
}
