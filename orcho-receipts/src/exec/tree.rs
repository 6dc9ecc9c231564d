//! Every process a command started, followed even where it left the
//! command's process group: a coding agent starts each shell command in a
//! session of its own, which a signal to the group does not reach.
//!
//! A [`Tree`] looks at `/proc` for the descendants of the command's first
//! process, now and then while it runs and before it is stopped, and keeps
//! each one it saw with its start time, so that a process whose parent
//! died (reparented to init) is still found, and a process id the system
//! has since given to another program is never signalled. Elsewhere than
//! Linux it sees nothing, and the process group is all there is.

use std::{collections::HashMap, time::Duration};

use rustix::process::{Pid, Signal};

/// How often a running command's tree is looked at.
pub(super) const SCAN_EVERY: Duration = Duration::from_millis(500);

/// The processes seen below one root, each with its start time (clock
/// ticks since boot).
#[derive(Debug, Default)]
pub(super) struct Tree {
    root: Option<Pid>,
    seen: HashMap<i32, u64>,
}

impl Tree {
    /// The tree below `root` (the command's first process).
    pub(super) fn new(root: Option<Pid>) -> Self {
        Self {
            root,
            seen: HashMap::new(),
        }
    }

    /// Looks again: every process below the root now is kept.
    pub(super) fn scan(&mut self) {
        let Some(root) = self.root else { return };
        let table = processes();
        let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
        for (pid, (ppid, _)) in &table {
            children.entry(*ppid).or_default().push(*pid);
        }
        // Below the root, and below what was seen before (its parent may
        // have died meanwhile).
        let mut queue: Vec<i32> = vec![root.as_raw_nonzero().get()];
        queue.extend(
            self.seen
                .iter()
                .filter(|(pid, start)| table.get(pid).is_some_and(|(_, s)| s == *start))
                .map(|(pid, _)| *pid),
        );
        while let Some(pid) = queue.pop() {
            for child in children.get(&pid).into_iter().flatten() {
                if let Some((_, start)) = table.get(child)
                    && self.seen.insert(*child, *start).is_none()
                {
                    queue.push(*child);
                }
            }
        }
    }

    /// Sends `signal` to every process seen that still runs (the same
    /// program: its start time has not changed), and to the process group
    /// each leads; the processes that were signalled.
    pub(super) fn signal(&mut self, signal: Signal) -> usize {
        self.scan();
        let table = processes();
        let mut sent = 0;
        self.seen.retain(|pid, start| {
            let alive = table.get(pid).is_some_and(|(_, s)| s == start);
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
}

/// Every process: its id, its parent's and its start time.
#[cfg(target_os = "linux")]
fn processes() -> HashMap<i32, (i32, u64)> {
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
        if let Some((ppid, start)) = parse_stat(&stat) {
            out.insert(pid, (ppid, start));
        }
    }
    out
}

#[cfg(not(target_os = "linux"))]
fn processes() -> HashMap<i32, (i32, u64)> {
    HashMap::new()
}

/// The parent's id and the start time from a `/proc/PID/stat` line; the
/// command name (in parentheses, which it may itself hold) is skipped.
fn parse_stat(stat: &str) -> Option<(i32, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state (3), ppid (4), …, starttime (22).
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    // A zombie has ended: nothing to stop.
    if fields.first() == Some(&"Z") {
        return None;
    }
    Some((ppid, start))
}

#[cfg(test)]
mod tests {
    use super::parse_stat;

    #[test]
    fn a_stat_line_is_read_past_a_name_with_parentheses() {
        let line = "4242 (my (odd) prog) S 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100";
        assert_eq!(parse_stat(line), Some((17, 987_654)));
        let zombie = "4243 (sh) Z 17 4243 4243 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 5 0 0";
        assert_eq!(parse_stat(zombie), None);
        assert_eq!(parse_stat("garbage"), None);
    }
}
