//! Two processes contend for one exclusive lock and are never both inside.

use std::{fs::OpenOptions, io::Write, thread::sleep, time::Duration};

use camino::Utf8PathBuf;
use orcho_core::fs::LockFile;

use crate::{
    Result,
    child::{child_arg, spawn},
};

const ROUNDS: usize = 40;

#[test]
#[ignore = "child process of two_processes_never_hold_one_exclusive_lock_together"]
fn child_lock_loop() -> Result {
    let Some(arg) = child_arg() else {
        return Ok(());
    };
    let dir = Utf8PathBuf::try_from(std::path::PathBuf::from(arg))?;
    let lock = LockFile::new(dir.join("x.lock"));
    let pid = std::process::id();
    let mut log = OpenOptions::new()
        .append(true)
        .create(true)
        .open(dir.join("log"))?;
    for _ in 0..ROUNDS {
        let guard = lock.lock_exclusive()?;
        log.write_all(format!("enter {pid}\n").as_bytes())?;
        sleep(Duration::from_millis(2));
        log.write_all(format!("leave {pid}\n").as_bytes())?;
        drop(guard);
    }
    Ok(())
}

#[test]
fn two_processes_never_hold_one_exclusive_lock_together() -> Result {
    let dir = tempfile::tempdir()?;
    let root = Utf8PathBuf::try_from(dir.path().to_owned())?;
    let mut a = spawn("lock::child_lock_loop", &root)?;
    let mut b = spawn("lock::child_lock_loop", &root)?;
    assert!(a.wait()?.success());
    assert!(b.wait()?.success());

    let log = std::fs::read_to_string(root.join("log"))?;
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(
        lines.len(),
        4 * ROUNDS,
        "both children finished every round"
    );
    let mut holder = None;
    for line in &lines {
        let (what, pid) = line.split_once(' ').ok_or("malformed log line")?;
        match (what, holder) {
            ("enter", None) => holder = Some(pid),
            ("leave", Some(h)) if h == pid => holder = None,
            _ => panic!("overlap at `{line}` while {holder:?} held the lock:\n{log}"),
        }
    }
    Ok(())
}
