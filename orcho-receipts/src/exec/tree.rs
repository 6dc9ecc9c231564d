//! Every process a command started, followed even where it left the
//! command's process group: a coding agent starts each shell command in a
//! session of its own, which a signal to the group does not reach.
//!
//! A [`Tree`] looks at `/proc` for the descendants of the command's first
//! process, now and then while it runs and before it is stopped, and keeps
//! each one it saw with its start time, so that a process whose parent
//! died is still found, and a process id the system has since given to
//! another program is never signalled.
//!
//! A process can also leave before it is ever seen: it starts a child and
//! ends at once (`(setsid cmd &)`), between two looks. So that such a
//! child is not reparented to init, out of sight, the process that
//! follows a tree becomes a *child subreaper* (`PR_SET_CHILD_SUBREAPER`):
//! what its commands' processes leave behind becomes its own child. A
//! tree claims each such adopted process that started after the tree's
//! first process and that either left this process's session or stayed in
//! the tree's process group (a process this program started itself stays
//! in its session, in a group of its own), or every one when the program
//! declared that it starts processes only through this module
//! ([`claim_every_orphan`]). Claimed processes are stopped with the tree
//! and reaped. Elsewhere than Linux a tree sees nothing, and the process
//! group is all there is.

use std::{
    collections::HashMap,
    sync::{
        Mutex, OnceLock, PoisonError,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use rustix::process::{Pid, Signal, WaitOptions};

/// How often a running command's tree is looked at.
pub(super) const SCAN_EVERY: Duration = Duration::from_millis(500);

/// The processes this program started itself (through this module), by
/// id, with their start times: they are never taken for adopted ones.
static STARTED: Mutex<Option<HashMap<i32, u64>>> = Mutex::new(None);

/// Whether every adopted process is claimed ([`claim_every_orphan`]).
static CLAIM_EVERY: AtomicBool = AtomicBool::new(false);

/// Declares that this program starts processes only through
/// [`exec`](super): a tree then claims every process its commands leave to
/// this program, also one that moved to a process group of its own within
/// this program's session (which a host's own child might otherwise be).
/// The `orcho` program calls it; a host that starts processes of its own
/// beside Orcho's should not.
pub fn claim_every_orphan() {
    CLAIM_EVERY.store(true, Ordering::Relaxed);
}

/// Notes a process this program started (`pid`), so that no tree takes it
/// for one a command left behind. Only once this program adopts what its
/// commands leave: a process started before the first tree is older than
/// every tree's first process, and never claimed.
pub(super) fn started(pid: u32) {
    if ADOPTING.get() != Some(&true) {
        return;
    }
    let Ok(pid) = i32::try_from(pid) else { return };
    let Some(start) = start_of(pid) else { return };
    STARTED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashMap::new)
        .insert(pid, start);
}

/// Forgets a process this program started, once it is reaped.
pub(super) fn reaped(pid: u32) {
    let Ok(pid) = i32::try_from(pid) else { return };
    if let Some(started) = STARTED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_mut()
    {
        started.remove(&pid);
    }
}

/// Whether `pid`, started at `start`, is one this program started itself.
fn started_here(pid: i32, start: u64) -> bool {
    STARTED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
        .is_some_and(|started| started.get(&pid) == Some(&start))
}

/// Whether this process is the reaper of what its commands leave behind
/// (set by the first tree).
static ADOPTING: OnceLock<bool> = OnceLock::new();

/// Makes this process the reaper of what its commands leave behind, once,
/// before a command whose tree is followed starts; whether it is.
pub(super) fn adopt() -> bool {
    *ADOPTING.get_or_init(|| {
        cfg!(target_os = "linux")
            && rustix::process::set_child_subreaper(Some(rustix::process::getpid())).is_ok()
    })
}

/// The processes seen below one root, each with its start time (clock
/// ticks since boot).
#[derive(Debug, Default)]
pub(super) struct Tree {
    root: Option<Pid>,
    /// When the root started: an adopted process older than it is not
    /// this tree's.
    root_start: Option<u64>,
    seen: HashMap<i32, u64>,
    /// Every process the tree ever saw or claimed, kept after it ended: one
    /// left to this program is its child, reaped here once it ends.
    ever: HashMap<i32, u64>,
}

impl Tree {
    /// The tree below `root` (the command's first process).
    pub(super) fn new(root: Option<Pid>) -> Self {
        let root_start = root
            .filter(|_| ADOPTING.get() == Some(&true))
            .and_then(|root| start_of(root.as_raw_nonzero().get()));
        Self {
            root,
            root_start,
            seen: HashMap::new(),
            ever: HashMap::new(),
        }
    }

    /// Looks again: every process below the root now is kept, and every
    /// process left to this program that is the tree's.
    pub(super) fn scan(&mut self) {
        let Some(root) = self.root else { return };
        let root = root.as_raw_nonzero().get();
        let table = processes();
        let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
        for (pid, process) in table.iter().filter(|(_, p)| !p.zombie) {
            children.entry(process.ppid).or_default().push(*pid);
        }
        // Below the root, and below what was seen before (its parent may
        // have died meanwhile).
        let mut queue: Vec<i32> = vec![root];
        queue.extend(
            self.seen
                .iter()
                .filter(|(pid, start)| table.get(pid).is_some_and(|p| p.runs_since(**start)))
                .map(|(pid, _)| *pid),
        );
        // Left to this program by a process of the tree that ended.
        if let Some(root_start) = self.root_start {
            let me = rustix::process::getpid().as_raw_nonzero().get();
            // Read from `/proc` like the others: in a PID namespace whose
            // session leader lives outside it, the session reads as 0 for
            // this program and for every process still in its session
            // (`getsid` would answer 0, which is no process id).
            let my_session = table.get(&me).map(|p| p.session);
            let every = CLAIM_EVERY.load(Ordering::Relaxed);
            for (pid, process) in &table {
                let claimed = !process.zombie
                    && process.ppid == me
                    && *pid != root
                    && process.start >= root_start
                    && !started_here(*pid, process.start)
                    && (every || process.pgrp == root || Some(process.session) != my_session);
                if claimed && self.seen.insert(*pid, process.start).is_none() {
                    queue.push(*pid);
                }
            }
        }
        while let Some(pid) = queue.pop() {
            for child in children.get(&pid).into_iter().flatten() {
                if let Some(process) = table.get(child)
                    && self.seen.insert(*child, process.start).is_none()
                {
                    queue.push(*child);
                }
            }
        }
        self.ever.extend(&self.seen);
        self.reap(&table);
    }

    /// Sends `signal` to every process seen that still runs (the same
    /// program: its start time has not changed), and to the process group
    /// each leads; the processes that were signalled.
    pub(super) fn signal(&mut self, signal: Signal) -> usize {
        self.scan();
        let table = processes();
        let mut sent = 0;
        self.seen.retain(|pid, start| {
            let alive = table.get(pid).is_some_and(|p| p.runs_since(*start));
            if alive && let Some(p) = Pid::from_raw(*pid) {
                let _ = rustix::process::kill_process(p, signal);
                // A session or group of its own: what it started there too.
                let _ = rustix::process::kill_process_group(p, signal);
                sent += 1;
            }
            alive
        });
        sent
    }

    /// Signals every process seen with `SIGKILL`, and reaps those left to
    /// this program as they end (for a moment: one that does not end at
    /// once is reaped by a later look, or with this program).
    pub(super) fn kill(&mut self) {
        self.signal(Signal::KILL);
        for _ in 0..20 {
            if self.reap(&processes()) == 0 {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Reaps the processes of the tree that were left to this program and
    /// ended; how many of them still run.
    fn reap(&mut self, table: &HashMap<i32, Process>) -> usize {
        let me = rustix::process::getpid().as_raw_nonzero().get();
        let mut running = 0;
        self.ever.retain(|pid, start| {
            let Some(process) = table.get(pid).filter(|p| p.start == *start) else {
                // Gone: reaped, by this program or another.
                return false;
            };
            if process.ppid != me {
                return true;
            }
            if !process.zombie {
                running += 1;
                return true;
            }
            if let Some(p) = Pid::from_raw(*pid) {
                let _ = rustix::process::waitpid(Some(p), WaitOptions::NOHANG);
            }
            false
        });
        running
    }
}

/// A process as `/proc/PID/stat` describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Process {
    /// Its parent.
    pub(super) ppid: i32,
    /// Its process group.
    pub(super) pgrp: i32,
    /// Its session.
    pub(super) session: i32,
    /// When it started, in clock ticks since boot.
    pub(super) start: u64,
    /// It has ended and waits for its parent to reap it.
    pub(super) zombie: bool,
}

impl Process {
    /// Whether it still runs the program that started at `start`.
    fn runs_since(&self, start: u64) -> bool {
        !self.zombie && self.start == start
    }
}

/// When `pid` started (clock ticks since boot), if it is there.
fn start_of(pid: i32) -> Option<u64> {
    process(pid).map(|p| p.start)
}

/// The process `pid`, also one that ended and waits to be reaped; `None`
/// when it is gone, or elsewhere than Linux.
pub(super) fn process(pid: i32) -> Option<Process> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&stat)
}

/// Every process, zombies too.
#[cfg(target_os = "linux")]
pub(super) fn processes() -> HashMap<i32, Process> {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        if let Some(process) = parse_stat(&stat) {
            out.insert(pid, process);
        }
    }
    out
}

#[cfg(not(target_os = "linux"))]
pub(super) fn processes() -> HashMap<i32, Process> {
    HashMap::new()
}

/// The parent, group, session and start time from a `/proc/PID/stat` line;
/// the command name (in parentheses, which it may itself hold) is skipped.
fn parse_stat(stat: &str) -> Option<Process> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state (3), ppid (4), pgrp (5), session (6), …,
    // starttime (22).
    Some(Process {
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        session: fields.get(3)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
        zombie: matches!(fields.first(), Some(&"Z" | &"X")),
    })
}

#[cfg(test)]
mod tests {
    use super::{Process, parse_stat};

    #[test]
    fn a_stat_line_is_read_past_a_name_with_parentheses() {
        let line = "4242 (my (odd) prog) S 17 4242 4241 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100";
        assert_eq!(
            parse_stat(line),
            Some(Process {
                ppid: 17,
                pgrp: 4242,
                session: 4241,
                start: 987_654,
                zombie: false,
            })
        );
        let zombie = "4243 (sh) Z 17 4243 4243 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 5 0 0";
        assert!(parse_stat(zombie).is_some_and(|p| p.zombie));
        assert_eq!(parse_stat("garbage"), None);
    }
}
