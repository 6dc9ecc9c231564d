//! The stop guard's memory, in the store's `agent-hooks/` directory:
//!
//! - `stops/<session>.json`: how many times in a row the hook refused this
//!   session's stop (the loop guard; removed when a stop goes through);
//! - `unproven-stops.jsonl`: every stop let through while a required receipt
//!   was not present, which `orcho status` shows until they are
//!   acknowledged (`orcho status --ack-stops`) or a later stop is proven;
//!   then they move to `unproven-stops.acknowledged.jsonl`.

use camino::{Utf8Path, Utf8PathBuf};
use orcho::core::{
    SchemaVersion, Timestamp,
    fs::{self, Journal},
    schema::Document,
};
use serde::{Deserialize, Serialize};

use crate::Error;

const BLOCKS_SCHEMA: SchemaVersion = SchemaVersion::new(1);
const UNPROVEN_SCHEMA: SchemaVersion = SchemaVersion::new(1);

/// The store's directory for agent hooks, as its layout names it.
fn dir(store: &Utf8Path) -> Utf8PathBuf {
    orcho::core::layout::StoreDir::new(store).agent_hooks()
}

/// A session's refused stops in a row.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BlocksV1 {
    schema: SchemaVersion,
    blocks: u32,
}

impl Document for BlocksV1 {
    const KIND: &'static str = "stop-hook counter";
    const SCHEMA: SchemaVersion = BLOCKS_SCHEMA;
}

/// A stop the hook let through while the checkout was not proven ready.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnprovenStop {
    /// The record's version.
    pub schema: SchemaVersion,
    /// When.
    pub at: Timestamp,
    /// Which agent (`claude-code`, `codex`).
    pub agent: String,
    /// Its session, if it said.
    pub session_id: Option<String>,
    /// How many times the stop had been refused before.
    pub blocks: u32,
    /// Each required command that was not present, as `name: status`.
    pub unproven: Vec<String>,
}

/// The loop guard of one session's stops.
#[derive(Debug)]
pub struct StopGuard {
    counter: Utf8PathBuf,
    log: Utf8PathBuf,
}

impl StopGuard {
    /// The guard of `session`, or of one subagent in it (unnamed sessions
    /// share one counter): a subagent's stops never count against its
    /// session's.
    pub fn new(store: &Utf8Path, session: Option<&str>, subagent: Option<&str>) -> Self {
        let dir = dir(store);
        let mut name = file_name(session.unwrap_or("unnamed"));
        if let Some(agent) = subagent {
            name.push_str("--");
            name.push_str(&file_name(agent));
        }
        Self {
            counter: dir.join("stops").join(format!("{name}.json")),
            log: dir.join("unproven-stops.jsonl"),
        }
    }

    /// The stops refused in a row so far; a counter that cannot be read
    /// counts as none (it only bounds refusals).
    pub fn blocks(&self) -> u32 {
        fs::read_document::<BlocksV1>(&self.counter).map_or(0, |d| d.blocks)
    }

    /// Records one more refusal.
    ///
    /// # Errors
    ///
    /// When the counter cannot be written.
    pub fn refused(&self, blocks: u32) -> Result<(), Error> {
        if let Some(parent) = self.counter.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write_document(
            &self.counter,
            &BlocksV1 {
                schema: BLOCKS_SCHEMA,
                blocks,
            },
        )?;
        Ok(())
    }

    /// Forgets the refusals (the stop went through).
    pub fn reset(&self) {
        // A counter that is already gone is what we want.
        let _ = std::fs::remove_file(&self.counter);
    }

    /// Records a stop let through unproven.
    ///
    /// # Errors
    ///
    /// When the log cannot be written.
    pub fn record(&self, stop: &UnprovenStop) -> Result<(), Error> {
        if let Some(parent) = self.log.parent() {
            fs::create_dir_all(parent)?;
        }
        Journal::open(&self.log)?.append(stop)?;
        Ok(())
    }
}

impl UnprovenStop {
    /// A record of now.
    pub fn new(
        agent: &str,
        session_id: Option<String>,
        blocks: u32,
        unproven: Vec<String>,
    ) -> Self {
        Self {
            schema: UNPROVEN_SCHEMA,
            at: Timestamp::now(),
            agent: agent.to_owned(),
            session_id,
            blocks,
            unproven,
        }
    }
}

/// Moves the unproven stops out of what `orcho status` shows, into the
/// acknowledged log; how many there were.
///
/// # Errors
///
/// When a log cannot be read or written.
pub fn acknowledge_stops(store: &Utf8Path) -> Result<usize, Error> {
    let log = dir(store).join("unproven-stops.jsonl");
    let stops = unproven_stops(store)?;
    if stops.is_empty() {
        return Ok(0);
    }
    let mut acknowledged = Journal::open(&dir(store).join("unproven-stops.acknowledged.jsonl"))?;
    for stop in &stops {
        acknowledged.append(stop)?;
    }
    match std::fs::remove_file(&log) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => return Err(Error::Remove { path: log, source }),
    }
    Ok(stops.len())
}

/// Every stop let through unproven, oldest first.
///
/// # Errors
///
/// When the log cannot be read, or a line before the last is damaged.
pub fn unproven_stops(store: &Utf8Path) -> Result<Vec<UnprovenStop>, Error> {
    let read =
        Journal::read::<UnprovenStop>(&dir(store).join("unproven-stops.jsonl"), UNPROVEN_SCHEMA)?;
    Ok(read.records)
}

/// A session id as a file name: kept when it is plain, else its digest.
fn file_name(session: &str) -> String {
    let plain = !session.is_empty()
        && session.len() <= 128
        && session
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if plain {
        session.to_owned()
    } else {
        let digest = orcho::core::Digest::derive("orcho agent-hook session v1", session.as_bytes());
        digest.to_string().replace(':', "-")
    }
}

/// Notes that `agent`'s hooks called Orcho in the checkout of `store`:
/// `orcho status` warns about hooks installed that never did (Codex skips
/// untrusted project hooks without a word). A file made once; nothing when
/// it is there (a stat per hook call).
pub fn note_called(store: &Utf8Path, agent: &str) {
    let mark = dir(store).join(format!("called-{agent}"));
    if mark.exists() {
        return;
    }
    // Only a warning depends on it: failing to write it costs nothing else.
    let _ = fs::create_dir_all(&dir(store)).and_then(|()| fs::write_atomic(&mark, b""));
}

/// Whether `agent`'s hooks ever called Orcho in the checkout of `store`.
pub fn was_called(store: &Utf8Path, agent: &str) -> bool {
    dir(store).join(format!("called-{agent}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guard_counts_resets_and_records() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Utf8Path::from_path(tmp.path()).unwrap();
        let guard = StopGuard::new(store, Some("../../etc/passwd"), None);
        let sub = StopGuard::new(store, Some("s"), Some("a1"));
        assert_ne!(sub.counter, StopGuard::new(store, Some("s"), None).counter);
        assert!(guard.counter.starts_with(store.join("agent-hooks/stops")));
        assert_eq!(guard.blocks(), 0);
        guard.refused(2).unwrap();
        assert_eq!(guard.blocks(), 2);
        guard.reset();
        assert_eq!(guard.blocks(), 0);
        guard
            .record(&UnprovenStop::new(
                "codex",
                None,
                3,
                vec!["test: stale".to_owned()],
            ))
            .unwrap();
        let read = unproven_stops(store).unwrap();
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].unproven, ["test: stale"]);
    }
}
