//! The handoff journal: `runs/<run>/handoffs/journal.jsonl`, one JSON line
//! per event.

use orcho_core::{Digest, HandoffId, SchemaVersion, Timestamp};
use serde::{Deserialize, Serialize};

use crate::{
    HandoffAction,
    advisor::AdviceId,
    handoff::{JournalEntry, JournalEvent},
};

/// Version 1: schema, at, handoff_id, event (`opened`, `decided`,
/// `resumed`, `autopilot_stopped`), and per event: `action` and `digest`
/// (decided), `action` (resumed), `stop` (autopilot_stopped).
pub(crate) const JOURNAL_SCHEMA: SchemaVersion = SchemaVersion::new(1);

#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct JournalLine {
    pub(crate) schema: SchemaVersion,
    pub(crate) at: Timestamp,
    pub(crate) handoff_id: HandoffId,
    pub(crate) event: EventKind,
    pub(crate) action: Option<HandoffAction>,
    pub(crate) digest: Option<Digest>,
    pub(crate) stop: Option<StopRepr>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EventKind {
    Opened,
    Decided,
    Resumed,
    AutopilotStopped,
    /// An event this build does not know; skipped on replay.
    #[serde(other)]
    Unknown,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct StopRepr {
    pub(crate) reason: String,
    pub(crate) detail: String,
    pub(crate) advice_id: Option<AdviceId>,
}

impl From<JournalEntry> for JournalLine {
    fn from(e: JournalEntry) -> Self {
        let mut line = Self {
            schema: JOURNAL_SCHEMA,
            at: e.at,
            handoff_id: e.handoff,
            event: EventKind::Opened,
            action: None,
            digest: None,
            stop: None,
        };
        match e.event {
            JournalEvent::Opened => {}
            JournalEvent::Decided { action, digest } => {
                line.event = EventKind::Decided;
                line.action = Some(action);
                line.digest = Some(digest);
            }
            JournalEvent::Resumed { action } => {
                line.event = EventKind::Resumed;
                line.action = Some(action);
            }
            JournalEvent::AutopilotStopped {
                reason,
                detail,
                advice,
            } => {
                line.event = EventKind::AutopilotStopped;
                line.stop = Some(StopRepr {
                    reason,
                    detail,
                    advice_id: advice,
                });
            }
        }
        line
    }
}

impl JournalLine {
    /// The domain entry, `Ok(None)` for an event this build does not know,
    /// or the name of a field the event needs and the line lacks.
    pub(crate) fn into_entry(self) -> Result<Option<JournalEntry>, &'static str> {
        let event = match self.event {
            EventKind::Opened => JournalEvent::Opened,
            EventKind::Decided => JournalEvent::Decided {
                action: self.action.ok_or("action")?,
                digest: self.digest.ok_or("digest")?,
            },
            EventKind::Resumed => JournalEvent::Resumed {
                action: self.action.ok_or("action")?,
            },
            EventKind::AutopilotStopped => {
                let stop = self.stop.ok_or("stop")?;
                JournalEvent::AutopilotStopped {
                    reason: stop.reason,
                    detail: stop.detail,
                    advice: stop.advice_id,
                }
            }
            EventKind::Unknown => return Ok(None),
        };
        Ok(Some(JournalEntry {
            at: self.at,
            handoff: self.handoff_id,
            event,
        }))
    }
}
