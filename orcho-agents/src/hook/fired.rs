//! Whether the gate fired: in a runner phase (an agent Orcho started for a
//! phase, with its hooks installed for that attempt), every hook event the
//! agent sent is recorded in the attempt's artifacts (`hook-events.jsonl`),
//! each line sealed with a key derived from the receipt key. When the agent
//! has exited, the attempt is read back: an agent that ended without its
//! Stop guard answering (its hooks untrusted, switched off or skipped), or
//! right after the guard refused its stop (released by the agent's own cap
//! on stop hooks), did not prove its work, and the attempt is rejected with
//! that reason.

use std::{collections::BTreeMap, io::Write as _};

use camino::{Utf8Path, Utf8PathBuf};
use orcho::core::Timestamp;
use serde::{Deserialize, Serialize};

use super::Answer;

/// The file of an attempt's artifacts that holds its hook events.
pub const EVENTS_FILE: &str = "hook-events.jsonl";

/// The context of the key each event is sealed with.
const SEAL: &str = "orcho runner hook event seal v1";

/// The most event lines read back: an agent that sent more is judged by
/// the first of them, and that is said.
const MAX_EVENTS: usize = 100_000;

/// One hook event of a runner phase's attempt.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FiredV1 {
    at: Timestamp,
    /// The event (`Stop`, `PreToolUse`, …).
    event: String,
    /// How Orcho answered it: `allow`, `block`, `warn`, `deny`, `ask`,
    /// `context`, `refused`.
    answer: String,
    /// The keyed digest of the attempt and the fields above.
    seal: String,
}

/// The attempt a hook runs in, from the variables Orcho gives a runner
/// phase's agent (which pass to its hooks): its artifacts, and which run,
/// phase and attempt it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    artifacts: Utf8PathBuf,
    id: String,
}

impl Attempt {
    /// The attempt of this process's environment, if it runs in one.
    pub fn from_env() -> Option<Self> {
        let var = crate::env_text;
        let artifacts = Utf8PathBuf::from(var("ORCHO_ARTIFACTS")?);
        Some(Self::new(
            artifacts,
            &var("ORCHO_RUN")?,
            &var("ORCHO_PHASE")?,
            &var("ORCHO_ATTEMPT")?,
        ))
    }

    /// Attempt `attempt` of `phase` of `run`, keeping its artifacts in
    /// `artifacts`.
    pub fn new(artifacts: Utf8PathBuf, run: &str, phase: &str, attempt: &str) -> Self {
        Self {
            artifacts,
            id: format!("{run}\0{phase}\0{attempt}"),
        }
    }

    fn seal(&self, key: &[u8; 32], at: &Timestamp, event: &str, answer: &str) -> String {
        let mut hasher = blake3::Hasher::new_keyed(key);
        for part in [self.id.as_str(), &at.to_string(), event, answer] {
            hasher.update(part.as_bytes()).update(&[0]);
        }
        hasher.finalize().to_hex().to_string()
    }

    /// Records that `event` arrived and was answered `answer`. Best effort:
    /// a line that cannot be written is an event that did not arrive.
    pub fn record(&self, key: &orcho::receipts::ReceiptKey, event: &str, answer: &Answer) {
        let key = key.derive(SEAL);
        let at = Timestamp::now();
        let answer = answer_word(event, answer);
        let line = FiredV1 {
            seal: self.seal(&key, &at, event, answer),
            at,
            event: event.to_owned(),
            answer: answer.to_owned(),
        };
        let Ok(mut text) = serde_json::to_string(&line) else {
            return;
        };
        text.push('\n');
        // One `write` of one line, appended: the hooks of one agent run
        // one at a time, and a torn line is only an event not counted.
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.artifacts.join(EVENTS_FILE))
            .and_then(|mut f| f.write_all(text.as_bytes()));
    }

    /// What arrived, as read back with `key`.
    pub fn read(&self, key: &orcho::receipts::ReceiptKey) -> Fired {
        let key = key.derive(SEAL);
        let mut fired = Fired::default();
        let Ok(text) = std::fs::read_to_string(self.artifacts.join(EVENTS_FILE)) else {
            return fired;
        };
        for line in text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .take(MAX_EVENTS)
        {
            let Ok(event) = serde_json::from_str::<FiredV1>(line) else {
                fired.unsealed += 1;
                continue;
            };
            let expected = self.seal(&key, &event.at, &event.event, &event.answer);
            if !orcho::proof::sealed(&expected, &event.seal) {
                fired.unsealed += 1;
                continue;
            }
            *fired.counts.entry(event.event.clone()).or_default() += 1;
            if event.event == "Stop" {
                fired.last_stop = Some(event.answer);
            }
        }
        fired
    }

    /// The attempt's events file.
    pub fn file(&self) -> Utf8PathBuf {
        self.artifacts.join(EVENTS_FILE)
    }
}

/// How an answer reads in the record.
fn answer_word(event: &str, answer: &Answer) -> &'static str {
    match answer {
        Answer::Silent if event == "Stop" || event == "SubagentStop" => "allow",
        Answer::Silent => "silent",
        Answer::Tool { verdict, .. } => match verdict.action {
            orcho::permissions::PermissionAction::Allow => "allow",
            orcho::permissions::PermissionAction::Ask => "ask",
            _ => "deny",
        },
        Answer::BlockStop { .. } => "block",
        Answer::WarnStop { .. } => "warn",
        Answer::Context { .. } => "context",
        _ => "refused",
    }
}

/// The hook events of an attempt.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Fired {
    /// How many of each event arrived.
    pub counts: BTreeMap<String, usize>,
    /// How the last `Stop` was answered.
    pub last_stop: Option<String>,
    /// Lines that are not a sealed event of this attempt (written by
    /// something other than Orcho's hook): never counted.
    pub unsealed: usize,
}

impl Fired {
    /// Why an attempt whose stops Orcho guards did not prove its work by
    /// its hooks, if it did not: no `Stop` answered, or the last one was
    /// refused.
    pub fn unguarded(&self, agent: &str, file: &Utf8Path) -> Option<String> {
        let arrived = if self.counts.is_empty() {
            "no hook event arrived".to_owned()
        } else {
            let each: Vec<String> = self
                .counts
                .iter()
                .map(|(event, n)| format!("{event} ×{n}"))
                .collect();
            format!("the events that arrived: {}", each.join(", "))
        };
        let forged = if self.unsealed > 0 {
            format!(
                "; {} line(s) of `{file}` are not Orcho's and were not counted",
                self.unsealed
            )
        } else {
            String::new()
        };
        match self.last_stop.as_deref() {
            None => Some(format!(
                "{agent} ended without its Stop guard answering: its hooks did not run (not \
                 trusted, switched off in its settings, or skipped), so nothing checked its \
                 proof before it stopped ({arrived}{forged})"
            )),
            Some("block") => Some(format!(
                "{agent} ended right after its Stop guard refused the stop: the agent let \
                 itself stop (its own limit on stop hooks) without the proof the guard asked \
                 for ({arrived}{forged})"
            )),
            Some(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> orcho::receipts::ReceiptKey {
        orcho::receipts::ReceiptKey::derive_from_secret(b"a test secret that is long enough")
    }

    #[test]
    fn what_arrived_is_read_back_and_judged() {
        let dir = tempfile::tempdir().unwrap();
        let artifacts = Utf8PathBuf::try_from(dir.path().to_owned()).unwrap();
        let attempt = Attempt::new(artifacts.clone(), "r", "implement", "1");
        let file = attempt.file();
        // Nothing arrived.
        let fired = attempt.read(&key());
        let why = fired.unguarded("Codex", &file).unwrap();
        assert!(why.contains("no hook event arrived"), "{why}");

        attempt.record(
            &key(),
            "SessionStart",
            &Answer::Context {
                text: String::new(),
            },
        );
        attempt.record(
            &key(),
            "Stop",
            &Answer::BlockStop {
                reason: String::new(),
            },
        );
        let fired = attempt.read(&key());
        let why = fired.unguarded("Codex", &file).unwrap();
        assert!(
            why.contains("right after its Stop guard refused")
                && why.contains("SessionStart ×1, Stop ×1"),
            "{why}"
        );
        attempt.record(&key(), "Stop", &Answer::Silent);
        assert_eq!(attempt.read(&key()).unguarded("Codex", &file), None);

        // A line written by hand, or sealed for another attempt, or with
        // another key, counts for nothing.
        orcho::core::fs::write_atomic(&file, b"").unwrap();
        attempt.record(
            &orcho::receipts::ReceiptKey::derive_from_secret(b"the agent's own guess of a key"),
            "Stop",
            &Answer::Silent,
        );
        Attempt::new(artifacts, "r", "implement", "2").record(&key(), "Stop", &Answer::Silent);
        let mut text = std::fs::read_to_string(&file).unwrap();
        text.push_str("{\"at\":\"2026-11-27T00:00:00Z\",\"event\":\"Stop\",\"answer\":\"allow\",\"seal\":\"00\"}\n");
        orcho::core::fs::write_atomic(&file, text.as_bytes()).unwrap();
        let fired = attempt.read(&key());
        assert_eq!(fired.unsealed, 3, "{fired:?}");
        assert!(fired.unguarded("Codex", &file).is_some());
    }
}
