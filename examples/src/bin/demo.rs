//! The README's demo: what Orcho's durable core does, in one short run.
//!
//! ```text
//! cargo run -p orcho-examples --bin demo
//! ```
//!
//! It creates a store in a temporary directory, drives a run's state through
//! the same primitives the engine uses (a run lock, an fsynced journal,
//! atomic state snapshots), simulates a crash that tears the journal, and
//! shows that nothing persisted is lost. The store is left on disk so it can
//! be inspected.
#![expect(clippy::print_stdout, reason = "a demo talks to its reader")]

use std::{fs::OpenOptions, io::Write, process::ExitCode};

use camino::{Utf8Path, Utf8PathBuf};
use orcho::core::{
    Clock, Finding, RunId, RunStatus, SchemaVersion, Severity, SystemClock, Timestamp, error_chain,
    fs::{self, Journal, LockFile},
    schema::Document,
};
use serde::{Deserialize, Serialize};

/// The demo's state snapshot (`run.json`).
#[derive(Serialize, Deserialize)]
struct RunState {
    schema: SchemaVersion,
    run: RunId,
    status: RunStatus,
    updated_at: Timestamp,
}

impl Document for RunState {
    const KIND: &'static str = "run state";
    const SCHEMA: SchemaVersion = SchemaVersion::new(1);
}

/// One journal line.
#[derive(Serialize, Deserialize)]
struct Transition {
    schema: SchemaVersion,
    at: Timestamp,
    to: RunStatus,
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            println!("demo failed: {}", error_chain(e.as_ref()));
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let clock = SystemClock::new();
    let tmp = tempfile::Builder::new()
        .prefix("orcho-demo-")
        .tempdir()?
        .keep();
    let store = Utf8PathBuf::try_from(tmp)?.join(".orcho");

    println!("Orcho demo: the durable core every run stands on\n");

    let run = RunId::generate(&clock);
    let dir = store.join("runs").join(run.as_str());
    fs::create_dir_all(&dir)?;
    println!("1. A new run: {run}");
    println!("   Run ids sort by creation time and are checked before they touch the disk:");
    for hostile in ["../../etc", "a/b", ".."] {
        let err = hostile.parse::<RunId>().unwrap_err();
        println!("   - {err}");
    }

    let lock = LockFile::new(dir.join("run.lock"));
    let guard = lock.lock_exclusive()?;
    let busy = lock.try_lock_exclusive()?.is_none();
    println!(
        "\n2. This process holds the run's exclusive lock; a second driver would be told the run is busy: {busy}"
    );

    let journal_path = dir.join("journal.jsonl");
    let mut journal = Journal::open(&journal_path)?;
    println!(
        "\n3. Every transition is journalled (one fsynced JSON line) before the state snapshot is replaced atomically:"
    );
    for to in [RunStatus::Running, RunStatus::AwaitingPhaseHandoff] {
        journal.append(&Transition {
            schema: SchemaVersion::new(1),
            at: clock.now(),
            to,
        })?;
        let state = RunState {
            schema: RunState::SCHEMA,
            run: run.clone(),
            status: to,
            updated_at: clock.now(),
        };
        fs::write_document(&dir.join("run.json"), &state)?;
        println!("   → {to}");
    }
    drop(journal);

    println!("\n4. A crash in the middle of an append leaves a torn last line. Simulating one:");
    tear(&journal_path)?;
    let read = Journal::read::<Transition>(&journal_path, SchemaVersion::new(1))?;
    let torn = read.torn_tail.map_or(0, |t| t.len);
    println!(
        "   the reader keeps all {} complete transitions and reports {torn} torn bytes instead of failing",
        read.records.len()
    );
    let journal = Journal::open(&journal_path)?;
    if let Some(repaired) = journal.repaired() {
        println!(
            "   the next writer cuts the torn line off at byte {} before appending",
            repaired.offset
        );
    }

    let first = Finding::new("tests", Severity::High, "test `parse_empty` failed")
        .with_file("src/parse.rs")
        .with_line(10);
    let again = Finding::new("tests", Severity::High, "test `parse_empty`  failed")
        .with_file("src/parse.rs")
        .with_line(12);
    println!(
        "\n5. Findings carry a stable fingerprint, so a blocker that repeats across attempts is recognised:"
    );
    println!("   attempt 1: {}", first.fingerprint());
    println!("   attempt 2: {}", again.fingerprint());

    let future = dir.join("from-the-future.json");
    fs::write_atomic(&future, br#"{"schema": 7, "status": {"nested": "shape"}}"#)?;
    let err = fs::read_document::<RunState>(&future)
        .err()
        .ok_or("a newer document was accepted")?;
    println!("\n6. A document from a newer Orcho is refused, never mis-read:");
    println!("   {}", error_chain(&err).replace(store.as_str(), ".orcho"));
    std::fs::remove_file(&future)?;

    drop(guard);
    let state: RunState = fs::read_document(&dir.join("run.json"))?;
    println!(
        "\nThe run is {} and everything above is on disk:",
        state.status
    );
    list(&store)?;
    println!(
        "\nNext: `cargo test --workspace --all-features` runs the tests, including the SIGKILL crash tests."
    );
    Ok(())
}

/// Appends half a line, as a crash mid-append would leave it.
fn tear(path: &Utf8Path) -> std::io::Result<()> {
    let mut file = OpenOptions::new().append(true).open(path)?;
    file.write_all(br#"{"schema":1,"at":"2026-11-2"#)
}

fn list(dir: &Utf8Path) -> Result<(), Box<dyn std::error::Error>> {
    let mut entries: Vec<_> = dir.read_dir_utf8()?.collect::<Result<_, _>>()?;
    entries.sort_by(|a, b| a.file_name().cmp(b.file_name()));
    for entry in entries {
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            list(path)?;
        } else {
            println!("   {path}");
        }
    }
    Ok(())
}
