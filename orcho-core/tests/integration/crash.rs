//! A child process is killed with SIGKILL in the middle of a loop of durable
//! writes; afterwards every file is consistent.

use std::{thread::sleep, time::Duration};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{
    SchemaVersion,
    fs::{self, Journal},
    schema::Document,
};
use serde::{Deserialize, Serialize};

use crate::{
    Result,
    child::{child_arg, spawn, spread},
};

#[derive(Serialize, Deserialize, Debug)]
struct Version {
    schema: SchemaVersion,
    n: u64,
    pad: String,
}

impl Document for Version {
    const KIND: &'static str = "crash test document";
    const SCHEMA: SchemaVersion = SchemaVersion::new(1);
}

impl Version {
    /// Version `n`, with a size that varies from a few bytes to ~96 KiB so
    /// that writes span many pages.
    fn new(n: u64) -> Self {
        let len = usize::try_from(spread(n, 96 * 1024)).unwrap_or(0);
        let c = char::from(b'a' + u8::try_from(n % 26).unwrap_or(0));
        Self {
            schema: Self::SCHEMA,
            n,
            pad: std::iter::repeat_n(c, len).collect(),
        }
    }

    fn check(&self) {
        assert_eq!(
            self.pad,
            Self::new(self.n).pad,
            "version {} was torn",
            self.n
        );
    }
}

fn wait_for(path: &Utf8Path) {
    for _ in 0..2000 {
        if path.exists() {
            return;
        }
        sleep(Duration::from_millis(1));
    }
    panic!("the child never created `{path}`");
}

#[test]
#[ignore = "child process of write_atomic_survives_sigkill"]
fn child_write_atomic_loop() -> Result {
    let Some(arg) = child_arg() else {
        return Ok(());
    };
    let path = Utf8PathBuf::try_from(std::path::PathBuf::from(arg))?;
    for n in 0.. {
        fs::write_document(&path, &Version::new(n))?;
    }
    Ok(())
}

#[test]
fn write_atomic_survives_sigkill() -> Result {
    let dir = tempfile::tempdir()?;
    let root = Utf8PathBuf::try_from(dir.path().to_owned())?;
    for round in 0..25u64 {
        let path = root.join(format!("doc-{round}.json"));
        let mut child = spawn("crash::child_write_atomic_loop", &path)?;
        wait_for(&path);
        sleep(Duration::from_millis(spread(round, 40)));
        child.kill()?;
        child.wait()?;
        let doc: Version = fs::read_document(&path)?;
        doc.check();
    }
    Ok(())
}

#[derive(Serialize, Deserialize, Debug)]
struct Record {
    schema: SchemaVersion,
    n: u64,
    pad: String,
}

impl Record {
    /// Record `n`; every fourth one is several MiB, so that a kill often
    /// lands inside its `write` and leaves a torn line.
    fn new(n: u64) -> Self {
        let v = Version::new(n);
        let pad = if n % 4 == 3 {
            v.pad.repeat(64).chars().take(4 << 20).collect()
        } else {
            v.pad
        };
        Self {
            schema: v.schema,
            n,
            pad,
        }
    }
}

#[test]
#[ignore = "child process of journal_survives_sigkill"]
fn child_journal_loop() -> Result {
    let Some(arg) = child_arg() else {
        return Ok(());
    };
    let path = Utf8PathBuf::try_from(std::path::PathBuf::from(arg))?;
    let mut journal = Journal::open(&path)?;
    let start = Journal::read::<Record>(&path, SchemaVersion::new(1))?
        .records
        .len() as u64;
    for n in start.. {
        journal.append(&Record::new(n))?;
    }
    Ok(())
}

#[test]
fn journal_survives_sigkill() -> Result {
    let dir = tempfile::tempdir()?;
    let root = Utf8PathBuf::try_from(dir.path().to_owned())?;
    let path = root.join("journal.jsonl");
    let mut torn_seen = 0;
    let mut expected_at_least = 0usize;
    for round in 0..25u64 {
        let mut child = spawn("crash::child_journal_loop", &path)?;
        wait_for(&path);
        sleep(Duration::from_millis(spread(round, 40)));
        child.kill()?;
        child.wait()?;

        let read = Journal::read::<Record>(&path, SchemaVersion::new(1))?;
        // Every complete record is there, in order, and intact; records from
        // earlier rounds were never lost.
        assert!(read.records.len() >= expected_at_least);
        for (i, record) in read.records.iter().enumerate() {
            assert_eq!(record.n, i as u64, "records are consecutive");
            assert_eq!(
                record.pad,
                Record::new(record.n).pad,
                "record {i} is intact"
            );
        }
        if let Some(torn) = read.torn_tail {
            torn_seen += 1;
            // The next writer cuts the torn line off before appending.
            let journal = Journal::open(&path)?;
            assert_eq!(journal.repaired(), Some(torn));
        }
        expected_at_least = read.records.len();
    }
    eprintln!("journal crash test: {torn_seen} of 25 kills left a torn line");
    Ok(())
}
