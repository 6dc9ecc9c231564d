//! Process groups left running by a process that was killed.
//!
//! Every command runs in a process group of its own, so a `SIGKILL` of the
//! process that started it leaves it running, possibly still writing in a
//! checkout. A [`GroupMarker`] given to the request
//! ([`ExecRequest::group_marker`](super::ExecRequest::group_marker)) names
//! the group and when its leader started while the command runs;
//! [`GroupMarker::stop_leftover`] in the next process stops what is left of
//! that group (`SIGTERM`, then `SIGKILL` after a grace period) before it
//! runs the command again.
//!
//! The group is signalled only when its leader is still the recorded
//! process (the same start time in the same boot), alive or exited but not
//! yet reaped, so a later process that reuses the id is never signalled. A
//! group whose leader has been reaped cannot be told from a later one and is
//! left alone. Linux only: elsewhere nothing is recorded.

use std::time::{Duration, Instant};

use camino::{Utf8Path, Utf8PathBuf};
use rustix::process::{Pid, Signal};
use serde::{Deserialize, Serialize};

/// How long a left-over group gets between `SIGTERM` and `SIGKILL` unless
/// the caller says otherwise.
pub const LEFTOVER_GRACE: Duration = Duration::from_secs(5);

/// A file that names a command's process group while the command runs.
///
/// ```
/// use orcho_receipts::exec::{self, BaseEnv, ExecRequest, GroupMarker, Leftover};
/// # let dir = tempfile::tempdir()?;
/// # let path = camino::Utf8PathBuf::try_from(dir.path().join("phase.json"))?;
/// let marker = GroupMarker::new(&path);
/// // Before running the command again: stop what a killed process left.
/// assert_eq!(marker.stop_leftover(exec::LEFTOVER_GRACE)?, Leftover::Nothing);
/// let outcome = exec::run(&ExecRequest::new(["true"]).envs(BaseEnv::inherit()).group_marker(marker))?;
/// assert!(outcome.status.success());
/// assert!(!path.exists(), "the marker is removed when the command ends");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMarker {
    path: Utf8PathBuf,
}

/// What [`GroupMarker::stop_leftover`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Leftover {
    /// No marker, or one naming a group that is gone or was never ours.
    Nothing,
    /// This process group was left running, and is stopped now.
    Stopped(u32),
    /// The marker could not be read; it is removed. The reason, for a
    /// warning.
    Unreadable(String),
}

/// A left-over process group could not be stopped. The marker stays, so
/// that the next attempt tries again.
#[derive(Debug, thiserror::Error)]
#[error("cannot stop process group {group} left running by a killed process (marker `{marker}`)")]
pub struct LeftoverError {
    group: u32,
    marker: Utf8PathBuf,
    #[source]
    kind: LeftoverErrorKind,
}

/// Why a left-over group could not be stopped; see [`LeftoverError`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LeftoverErrorKind {
    /// It could not be signalled.
    #[error("it cannot be signalled")]
    Signal(#[source] std::io::Error),
    /// It outlived `SIGKILL`.
    #[error("it outlived SIGKILL; stop it, then remove the marker")]
    Survived,
    /// The marker could not be removed.
    #[error("the marker cannot be removed")]
    Remove(#[source] std::io::Error),
}

impl LeftoverError {
    orcho_core::getters! {
        /// The process group.
        pub fn group(&self) -> u32;
        /// What failed.
        pub fn kind(&self) -> &LeftoverErrorKind;
    }
}

/// Who the command is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Recorded {
    /// Its process id, which is also its process group id.
    pgid: u32,
    /// When it started, in clock ticks since boot.
    started: u64,
    /// The boot it started in.
    boot: String,
}

impl GroupMarker {
    /// A marker at `path` (its directory is created when it is written).
    pub fn new(path: impl Into<Utf8PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The marker's file.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }

    /// Records the command `pid` (its group's leader). A process that is
    /// already gone, or a system that cannot tell when it started, records
    /// nothing.
    pub(crate) fn record(&self, pid: u32) -> std::io::Result<()> {
        let (Some(process), Some(boot)) = (process(pid), boot_id()) else {
            return Ok(());
        };
        let recorded = Recorded {
            pgid: pid,
            started: process.start,
            boot,
        };
        if let Some(dir) = self.path.parent() {
            orcho_core::fs::create_dir_all(dir).map_err(std::io::Error::other)?;
        }
        let bytes = serde_json::to_vec(&recorded).map_err(std::io::Error::other)?;
        orcho_core::fs::write_atomic(&self.path, &bytes).map_err(std::io::Error::other)
    }

    /// Removes the marker once the command `pid` has ended, unless it names
    /// another command by then.
    pub(crate) fn clear(&self, pid: u32) -> std::io::Result<()> {
        match self.read() {
            Ok(Some(recorded)) if recorded.pgid != pid => Ok(()),
            Ok(_) | Err(_) => self.remove(),
        }
    }

    fn remove(&self) -> std::io::Result<()> {
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }

    fn read(&self) -> Result<Option<Recorded>, String> {
        let bytes = match std::fs::read(&self.path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(format!(
                    "the process marker `{}` cannot be read: {e}",
                    self.path
                ));
            }
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| format!("the process marker `{}` is not valid: {e}", self.path))
    }

    /// Stops what is left of the group the marker names, when its leader is
    /// the recorded process (`SIGTERM`, then `SIGKILL` after `grace`), and
    /// removes the marker.
    ///
    /// # Errors
    ///
    /// The group cannot be signalled or outlives `SIGKILL`, or the marker
    /// cannot be removed; the marker stays, so that the next attempt tries
    /// again.
    pub fn stop_leftover(&self, grace: Duration) -> Result<Leftover, LeftoverError> {
        let fail = |group, kind| LeftoverError {
            group,
            marker: self.path.clone(),
            kind,
        };
        let removed = |leftover| {
            self.remove()
                .map(|()| leftover)
                .map_err(|e| fail(0, LeftoverErrorKind::Remove(e)))
        };
        let recorded = match self.read() {
            Ok(Some(recorded)) => recorded,
            Ok(None) => return Ok(Leftover::Nothing),
            Err(reason) => return removed(Leftover::Unreadable(reason)),
        };
        let ours = process(recorded.pgid).is_some_and(|p| p.start == recorded.started)
            && boot_id().is_some_and(|b| b == recorded.boot);
        let group = i32::try_from(recorded.pgid).ok().and_then(Pid::from_raw);
        let (true, Some(group)) = (ours, group) else {
            return removed(Leftover::Nothing);
        };
        if members(recorded.pgid) == 0 {
            return removed(Leftover::Nothing);
        }
        for (signal, wait) in [
            (Signal::TERM, grace),
            (Signal::KILL, Duration::from_secs(2)),
        ] {
            match rustix::process::kill_process_group(group, signal) {
                Ok(()) => {}
                Err(rustix::io::Errno::SRCH) => break,
                Err(e) => {
                    return Err(fail(recorded.pgid, LeftoverErrorKind::Signal(e.into())));
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
            return Err(fail(recorded.pgid, LeftoverErrorKind::Survived));
        }
        removed(Leftover::Stopped(recorded.pgid))
    }
}

/// How many live processes (not exited ones waiting to be reaped) are in
/// process group `pgid`.
fn members(pgid: u32) -> usize {
    super::tree::processes()
        .values()
        .filter(|p| u32::try_from(p.pgrp) == Ok(pgid) && !p.zombie)
        .count()
}

/// The process `pid`, as `/proc` says it.
fn process(pid: u32) -> Option<super::tree::Process> {
    super::tree::process(i32::try_from(pid).ok()?)
}

#[cfg(target_os = "linux")]
fn boot_id() -> Option<String> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(boot.trim().to_owned())
}

#[cfg(not(target_os = "linux"))]
fn boot_id() -> Option<String> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn temp_marker() -> (tempfile::TempDir, GroupMarker) {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = Utf8PathBuf::try_from(dir.path().to_owned()).expect("utf-8");
        (
            dir,
            GroupMarker::new(root.join("host").join("run.phase.json")),
        )
    }

    #[test]
    fn this_process_is_read_from_proc() {
        let me = process(std::process::id()).expect("this process exists");
        assert!(!me.zombie);
        assert!(me.start > 0);
        assert_eq!(process(std::process::id()), Some(me));
        assert!(members(u32::try_from(me.pgrp).expect("a group id")) >= 1);
        assert!(boot_id().is_some_and(|b| !b.is_empty()));
    }

    #[test]
    fn a_marker_of_a_reused_process_id_is_cleared_without_a_signal() {
        let (_dir, marker) = temp_marker();
        marker.record(std::process::id()).expect("record");
        let mut recorded = marker.read().expect("read").expect("recorded");
        // This process's id, but started at another time: a reused id.
        recorded.started += 1;
        orcho_core::fs::write_atomic(marker.path(), &serde_json::to_vec(&recorded).expect("json"))
            .expect("write");
        assert_eq!(
            marker.stop_leftover(LEFTOVER_GRACE).expect("stop"),
            Leftover::Nothing
        );
        assert!(!marker.path().exists());
        assert_eq!(
            marker.stop_leftover(LEFTOVER_GRACE).expect("no marker"),
            Leftover::Nothing
        );
    }

    #[test]
    fn a_corrupt_marker_is_removed_and_blocks_nothing() {
        let (_dir, marker) = temp_marker();
        orcho_core::fs::create_dir_all(marker.path().parent().expect("parent")).expect("mkdir");
        orcho_core::fs::write_atomic(marker.path(), b"{not json").expect("write");
        assert!(matches!(
            marker
                .stop_leftover(LEFTOVER_GRACE)
                .expect("a warning, not an error"),
            Leftover::Unreadable(_)
        ));
        assert!(!marker.path().exists());
    }

    #[test]
    fn clear_leaves_a_marker_of_another_command() {
        let (_dir, marker) = temp_marker();
        marker.record(std::process::id()).expect("record");
        marker.clear(std::process::id() + 1).expect("clear");
        assert!(marker.path().exists());
        marker.clear(std::process::id()).expect("clear");
        assert!(!marker.path().exists());
    }
}
