//! A phase command left running by an `orcho` process that was killed.
//!
//! A phase command runs in a process group of its own, so a `SIGKILL` of
//! `orcho` leaves it running, possibly still writing in the run's checkout.
//! While it runs, a marker under `<store>/host/` names its group and when
//! its leader started; the next `orcho` to run a phase of that run stops
//! what is left of that group first (`SIGTERM`, then `SIGKILL` after
//! [`GRACE`]).
//!
//! The group is signalled only when its leader is still the recorded
//! process (the same start time in the same boot), alive or exited but not
//! yet reaped, so a later process that reuses the id is never signalled. A
//! group whose leader has been reaped cannot be told from a later one and is
//! left alone. Linux only: elsewhere nothing is recorded.

use std::time::{Duration, Instant};

use camino::{Utf8Path, Utf8PathBuf};
use orcho::core::RunId;
use rustix::process::{Pid, Signal};
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
struct Recorded {
    /// Its process id, which is also its process group id.
    pgid: u32,
    /// When it started, in clock ticks since boot.
    started: u64,
    /// The boot it started in.
    boot: String,
}

/// What `/proc/<pid>/stat` says of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    /// It has exited and waits to be reaped.
    exited: bool,
    /// Its process group.
    pgrp: u32,
    /// When it started, in clock ticks since boot.
    started: u64,
}

/// Records the phase command `pid` at `marker`.
pub(crate) fn record(marker: &Utf8Path, pid: u32) -> Result<(), BoxError> {
    let (Some(stat), Some(boot)) = (stat(pid), boot_id()) else {
        // Gone already, or not a system that tells: nothing to stop later.
        return Ok(());
    };
    let recorded = Recorded {
        pgid: pid,
        started: stat.started,
        boot,
    };
    if let Some(dir) = marker.parent() {
        orcho::core::fs::create_dir_all(dir)?;
    }
    orcho::core::fs::write_atomic(marker, &serde_json::to_vec(&recorded)?)?;
    Ok(())
}

/// Removes the marker once the phase command `pid` has ended, unless it
/// names another command by then.
pub(crate) fn clear(marker: &Utf8Path, pid: u32) -> Result<(), BoxError> {
    match read(marker) {
        Ok(Some(recorded)) if recorded.pgid != pid => Ok(()),
        Ok(_) | Err(_) => remove(marker),
    }
}

fn remove(marker: &Utf8Path) -> Result<(), BoxError> {
    match std::fs::remove_file(marker) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e.into()),
    }
}

fn read(marker: &Utf8Path) -> Result<Option<Recorded>, BoxError> {
    let bytes = match std::fs::read(marker) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    Ok(Some(serde_json::from_slice(&bytes).map_err(|e| {
        format!("the phase process marker `{marker}` is not valid: {e}")
    })?))
}

/// Stops what is left of the group a marker names, when its leader is the
/// recorded process, and removes the marker. Returns the group it stopped.
///
/// A marker that cannot be read or parsed names nothing that could be
/// checked: it is removed with a warning.
///
/// # Errors
///
/// The group cannot be signalled or outlives `SIGKILL`; the marker stays,
/// so that the next attempt tries again.
pub(crate) fn stop(marker: &Utf8Path) -> Result<Option<u32>, BoxError> {
    let recorded = match read(marker) {
        Ok(Some(recorded)) => recorded,
        Ok(None) => return Ok(None),
        Err(e) => {
            remove(marker)?;
            super::show::err(&format!("warning: {e}; removed"));
            return Ok(None);
        }
    };
    let ours = stat(recorded.pgid).is_some_and(|s| s.started == recorded.started)
        && boot_id().is_some_and(|b| b == recorded.boot);
    let group = i32::try_from(recorded.pgid).ok().and_then(Pid::from_raw);
    let (true, Some(group)) = (ours, group) else {
        remove(marker)?;
        return Ok(None);
    };
    if members(recorded.pgid) == 0 {
        remove(marker)?;
        return Ok(None);
    }
    for (signal, wait) in [
        (Signal::TERM, GRACE),
        (Signal::KILL, Duration::from_secs(2)),
    ] {
        match rustix::process::kill_process_group(group, signal) {
            Ok(()) => {}
            Err(rustix::io::Errno::SRCH) => break,
            Err(e) => {
                return Err(format!(
                    "cannot stop process group {} left running by a killed `orcho` ({e}); \
                     stop it, then remove `{marker}`",
                    recorded.pgid
                )
                .into());
            }
        }
        let until = Instant::now() + wait;
        while members(recorded.pgid) > 0 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        if members(recorded.pgid) == 0 {
            break;
        }
    }
    if members(recorded.pgid) > 0 {
        return Err(format!(
            "process group {} left running by a killed `orcho` outlived SIGKILL; \
             stop it, then remove `{marker}`",
            recorded.pgid
        )
        .into());
    }
    remove(marker)?;
    Ok(Some(recorded.pgid))
}

/// How many live processes (not exited ones waiting to be reaped) are in
/// process group `pgid`.
#[cfg(target_os = "linux")]
fn members(pgid: u32) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(stat)
        .filter(|s| s.pgrp == pgid && !s.exited)
        .count()
}

#[cfg(target_os = "linux")]
fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields are counted
    // after its closing parenthesis, which starts with field 3 (the state).
    let fields: Vec<&str> = text[text.rfind(')')? + 1..].split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3).copied();
    Some(Stat {
        exited: matches!(field(3)?, "Z" | "X"),
        pgrp: field(5)?.parse().ok()?,
        started: field(22)?.parse().ok()?,
    })
}

#[cfg(target_os = "linux")]
fn boot_id() -> Option<String> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(boot.trim().to_owned())
}

#[cfg(not(target_os = "linux"))]
fn members(_pgid: u32) -> usize {
    0
}

#[cfg(not(target_os = "linux"))]
fn stat(_pid: u32) -> Option<Stat> {
    None
}

#[cfg(not(target_os = "linux"))]
fn boot_id() -> Option<String> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn temp_marker() -> (tempfile::TempDir, Utf8PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = Utf8PathBuf::try_from(dir.path().to_owned()).expect("utf-8");
        let run: RunId = "20261121T120000000Z-00000000000000aa"
            .parse()
            .expect("run id");
        (dir, marker(&root, &run))
    }

    #[test]
    fn this_process_is_read_from_proc() {
        let me = stat(std::process::id()).expect("this process exists");
        assert!(!me.exited);
        assert!(me.started > 0);
        assert_eq!(stat(std::process::id()), Some(me));
        assert!(members(me.pgrp) >= 1);
        assert!(boot_id().is_some_and(|b| !b.is_empty()));
    }

    #[test]
    fn a_marker_of_a_reused_process_id_is_cleared_without_a_signal() {
        let (_dir, marker) = temp_marker();
        record(&marker, std::process::id()).expect("record");
        let mut recorded = read(&marker).expect("read").expect("recorded");
        // This process's id, but started at another time: a reused id.
        recorded.started += 1;
        orcho::core::fs::write_atomic(&marker, &serde_json::to_vec(&recorded).expect("json"))
            .expect("write");
        assert_eq!(stop(&marker).expect("stop"), None);
        assert!(!marker.exists());
        assert_eq!(stop(&marker).expect("no marker"), None);
    }

    #[test]
    fn a_corrupt_marker_is_removed_and_blocks_nothing() {
        let (_dir, marker) = temp_marker();
        orcho::core::fs::create_dir_all(marker.parent().expect("parent")).expect("mkdir");
        orcho::core::fs::write_atomic(&marker, b"{not json").expect("write");
        assert_eq!(stop(&marker).expect("a warning, not an error"), None);
        assert!(!marker.exists());
    }

    #[test]
    fn clear_leaves_a_marker_of_another_command() {
        let (_dir, marker) = temp_marker();
        record(&marker, std::process::id()).expect("record");
        clear(&marker, std::process::id() + 1).expect("clear");
        assert!(marker.exists());
        clear(&marker, std::process::id()).expect("clear");
        assert!(!marker.exists());
    }
}
