//! Durable, idempotent decisions: the primitive every decision point of
//! Orcho is built on.
//!
//! A decision point (a phase handoff, a delivery gate, an intake question, a
//! plan approval, …) has an id ([`HandoffId`](orcho_core::HandoffId)) and accepts **exactly one**
//! decision, ever. [`DecisionSlot::record`] writes it with an exclusive
//! create ([`orcho_core::fs::write_new_atomic`]):
//!
//! - the first writer wins, across threads and processes, and the file is
//!   never visible half-written;
//! - a later call with an **identical payload** (same payload, same
//!   decider, same advice id) is an idempotent replay: it returns the
//!   recorded decision unchanged, with its original time;
//! - a later call with a different payload gets a typed conflict
//!   ([`DecisionError::is_conflict`]) and changes nothing.
//!
//! "Identical" is decided by the decision's [`Digest`](orcho_core::Digest): a blake3 digest of
//! the canonical JSON of the kind, run, point id, payload, decider and advice
//! id — everything but the time. The digest is stored in the record and
//! checked on every read, so a hand-edited record is refused rather than
//! acted on.
//!
//! The payload is any type implementing [`DecisionPayload`]; the phase
//! handoff uses [`HandoffChoice`](crate::handoff::HandoffChoice). A new kind of
//! decision point reuses the mechanism by defining its payload type and a
//! slot path:
//!
//! ```
//! use orcho_core::{FixedClock, HandoffId, RunId};
//! use orcho_handoff::decision::{DecidedBy, DecisionPayload, DecisionRequest, DecisionSlot};
//! use serde::{Deserialize, Serialize};
//!
//! /// The payload of a (hypothetical) delivery decision.
//! #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
//! struct Delivery { action: String, note: Option<String> }
//!
//! impl DecisionPayload for Delivery {
//!     const KIND: &'static str = "delivery";
//!     fn label(&self) -> String { self.action.clone() }
//! }
//!
//! # let tmp = tempfile::tempdir()?;
//! # let store = camino::Utf8PathBuf::try_from(tmp.path().to_owned())?;
//! let clock = FixedClock::new("2026-11-21T12:00:00Z".parse()?);
//! let run: RunId = "run-1".parse()?;
//! let gate: HandoffId = "delivery".parse()?;
//! let slot = DecisionSlot::<Delivery>::in_run(&store, &run, &gate);
//!
//! let approve = Delivery { action: "approve".into(), note: None };
//! let first = slot.record(DecisionRequest::new(approve.clone(), DecidedBy::Operator), &clock)?;
//! assert!(!first.is_replay());
//!
//! // The same payload again: an idempotent replay of the recorded decision.
//! let again = slot.record(DecisionRequest::new(approve, DecidedBy::Operator), &clock)?;
//! assert!(again.is_replay());
//! assert_eq!(again.decision(), first.decision());
//!
//! // A different payload: a typed conflict; the first decision stands.
//! let skip = Delivery { action: "skip".into(), note: None };
//! let err = slot.record(DecisionRequest::new(skip, DecidedBy::Operator), &clock).unwrap_err();
//! assert!(err.is_conflict());
//! assert_eq!(slot.read()?.expect("recorded").decision().payload().action, "approve");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
pub(crate) mod format;
mod imp;

pub use error::{DecisionError, DecisionErrorKind};
pub use imp::{
    DECISION_DIGEST_CONTEXT, DecidedBy, Decision, DecisionPayload, DecisionRequest, DecisionSlot,
    RecordedDecision,
};
