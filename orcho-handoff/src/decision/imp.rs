//! Decisions, their records and the slot that holds a point's one decision.

use std::{fmt, marker::PhantomData, sync::Arc};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{
    Clock, Digest, HandoffId, RunId, StoreError, Timestamp, schema,
    storage::{self, Created, FsStorage, Item, Storage},
};
use serde::{Deserialize, Serialize, de::DeserializeOwned};

use super::{
    error::{DecisionError, DecisionErrorKind},
    format::{DecisionDigestInput, DecisionDoc},
};
use crate::advisor::AdviceId;

/// The context string of decision digests. Bump its version when what is
/// hashed changes.
pub const DECISION_DIGEST_CONTEXT: &str = "orcho decision v1";

/// The payload of one kind of decision.
///
/// It is written inside the decision record as `payload`, so its serde shape
/// is an on-disk format: keep it stable, snake_case, and give it a
/// conversion layer (`#[serde(into = …, try_from = …)]`) when the domain
/// type should not be the format.
pub trait DecisionPayload:
    Clone + PartialEq + fmt::Debug + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// The kind of decision point, written as the record's `kind` and
    /// checked on read, for example `"phase_handoff"`.
    const KIND: &'static str;

    /// A short label for messages, for example the action's name.
    fn label(&self) -> String;
}

/// Who made a decision.
///
/// On disk: `operator`, `ci_agent` or `client`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// A person, through a host's UI.
    Operator,
    /// The CI autopilot, with no operator present.
    CiAgent,
    /// A program through a client connection (an agent over MCP, say),
    /// named by [`Decision::client`]: not a person at a terminal.
    Client,
}

orcho_core::spelled!(DecidedBy {
    Operator => "operator",
    CiAgent => "ci_agent",
    Client => "client",
});

/// What a caller asks to record: the payload, who decides, and the advice
/// that was used, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionRequest<P> {
    payload: P,
    decided_by: DecidedBy,
    client: Option<String>,
    by: Option<String>,
    advice: Option<AdviceId>,
    note: Option<String>,
}

impl<P: DecisionPayload> DecisionRequest<P> {
    /// A decision without advice.
    pub fn new(payload: P, decided_by: DecidedBy) -> Self {
        Self {
            payload,
            decided_by,
            client: None,
            by: None,
            advice: None,
            note: None,
        }
    }

    /// A decision by the client `name` (its name and version, as it gave
    /// them), recorded as [`DecidedBy::Client`] with that name.
    pub fn by_client(payload: P, name: impl Into<String>) -> Self {
        Self {
            client: Some(name.into()),
            ..Self::new(payload, DecidedBy::Client)
        }
    }

    /// The client that decides, if a client does.
    pub fn client(&self) -> Option<&str> {
        self.client.as_deref()
    }

    /// Records who decided, in words (`alice@build-3`, an operator's user
    /// and machine): kept with the decision and shown in the log and the
    /// evidence. It is not part of what was decided: the same payload from
    /// another person replays the decision recorded first.
    #[must_use]
    pub fn by(mut self, who: impl Into<String>) -> Self {
        self.by = Some(who.into());
        self
    }

    /// Who decided, in words, when the host said ([`by`](Self::by)).
    pub fn who(&self) -> Option<&str> {
        self.by.as_deref()
    }

    /// Records a note for the record with the decision (why a run was
    /// halted, say), where the payload carries no text of its own. It is
    /// part of what was decided: the same payload with another note is a
    /// different decision. A blank note is none.
    #[must_use]
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        let note = note.into();
        self.note = (!note.trim().is_empty()).then_some(note);
        self
    }

    /// The note recorded with the decision ([`with_note`](Self::with_note)).
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// Records that this advice was used to make the decision.
    #[must_use]
    pub fn with_advice(mut self, advice: AdviceId) -> Self {
        self.advice = Some(advice);
        self
    }

    orcho_core::getters! {
        /// The payload.
        pub fn payload(&self) -> &P;
        /// Who decides.
        pub fn decided_by(&self) -> DecidedBy;
    }

    /// The advice used, if any.
    pub fn advice(&self) -> Option<&AdviceId> {
        self.advice.as_ref()
    }

    /// The same request with its payload changed by `f` (a point that binds
    /// the payload to what it was decided on).
    #[must_use]
    pub fn map_payload(self, f: impl FnOnce(P) -> P) -> Self {
        Self {
            payload: f(self.payload),
            ..self
        }
    }
}

/// One decision: what was decided at which point, by whom, with which
/// advice, when, and the digest that identifies its payload.
///
/// A `Decision` value is not proof that it is on disk; a
/// [`RecordedDecision`] is.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision<P> {
    run: RunId,
    point: HandoffId,
    request: DecisionRequest<P>,
    decided_at: Timestamp,
    digest: Digest,
}

impl<P: DecisionPayload> Decision<P> {
    /// A decision made at `decided_at`; computes its digest.
    ///
    /// # Errors
    ///
    /// When the payload cannot be encoded as JSON (a failing custom
    /// `Serialize`).
    pub fn new(
        run: RunId,
        point: HandoffId,
        request: DecisionRequest<P>,
        decided_at: Timestamp,
    ) -> Result<Self, DecisionError> {
        let digest = digest_of(&run, &point, &request).map_err(|e| {
            DecisionError::new(&point, None, DecisionErrorKind::Encode(Box::new(e)))
        })?;
        Ok(Self {
            run,
            point,
            request,
            decided_at,
            digest,
        })
    }

    orcho_core::getters! {
        /// The run.
        pub fn run(&self) -> &RunId;
        /// The decision point (handoff) id.
        pub fn point(&self) -> &HandoffId;
        /// What was asked to be recorded: the payload, who decided (a client
        /// as it named itself, `name version`, for [`DecidedBy::Client`]), and
        /// the advice used.
        pub fn request(&self) -> &DecisionRequest<P>;
    }

    /// What was decided.
    pub fn payload(&self) -> &P {
        self.request.payload()
    }

    /// Who decided.
    pub fn decided_by(&self) -> DecidedBy {
        self.request.decided_by()
    }

    /// The advice used, if any.
    pub fn advice(&self) -> Option<&AdviceId> {
        self.request.advice()
    }

    /// The client that decided, as it named itself (`name version`), for a
    /// decision by [`DecidedBy::Client`].
    pub fn client(&self) -> Option<&str> {
        self.request.client()
    }

    /// Who decided, in words, when the host said
    /// ([`DecisionRequest::by`]).
    pub fn who(&self) -> Option<&str> {
        self.request.who()
    }

    /// The note recorded with it ([`DecisionRequest::with_note`]).
    pub fn note(&self) -> Option<&str> {
        self.request.note()
    }

    orcho_core::getters! {
        /// When it was first recorded.
        pub fn decided_at(&self) -> Timestamp;
        /// The digest of everything but the time: equal digests mean the same
        /// decision.
        pub fn digest(&self) -> Digest;
    }

    /// Whether `other` is the same decision (the same digest), whatever its
    /// time.
    pub fn same_as(&self, other: &Self) -> bool {
        self.digest == other.digest
    }

    pub(crate) fn into_doc(self) -> DecisionDoc<P> {
        DecisionDoc {
            schema: <DecisionDoc<P> as schema::Document>::SCHEMA,
            kind: P::KIND.to_owned(),
            run_id: self.run,
            handoff_id: self.point,
            payload: self.request.payload,
            decided_by: self.request.decided_by,
            client: self.request.client,
            by: self.request.by,
            note: self.request.note,
            advice_id: self.request.advice,
            decided_at: self.decided_at,
            digest: self.digest,
        }
    }

    pub(crate) fn from_doc(doc: DecisionDoc<P>, path: &Utf8Path) -> Result<Self, DecisionError> {
        let err = |kind| DecisionError::new(&doc.handoff_id, Some(path), kind);
        if doc.kind != P::KIND {
            return Err(err(DecisionErrorKind::WrongKind {
                expected: P::KIND,
                found: doc.kind.clone(),
            }));
        }
        let request = DecisionRequest {
            payload: doc.payload,
            decided_by: doc.decided_by,
            client: doc.client,
            by: doc.by,
            advice: doc.advice_id,
            note: doc.note,
        };
        let computed = digest_of(&doc.run_id, &doc.handoff_id, &request)
            .map_err(|e| err(DecisionErrorKind::Encode(Box::new(e))))?;
        if computed != doc.digest {
            return Err(err(DecisionErrorKind::DigestMismatch {
                recorded: doc.digest,
                computed,
            }));
        }
        Ok(Self {
            run: doc.run_id,
            point: doc.handoff_id,
            request,
            decided_at: doc.decided_at,
            digest: doc.digest,
        })
    }
}

fn digest_of<P: DecisionPayload>(
    run: &RunId,
    point: &HandoffId,
    request: &DecisionRequest<P>,
) -> Result<Digest, serde_json::Error> {
    let bytes = serde_json::to_vec(&DecisionDigestInput {
        kind: P::KIND,
        run_id: run,
        handoff_id: point,
        payload: &request.payload,
        decided_by: request.decided_by,
        client: request.client.as_deref(),
        advice_id: request.advice.as_ref(),
        note: request.note.as_deref(),
    })?;
    Ok(Digest::derive(DECISION_DIGEST_CONTEXT, &bytes))
}

/// Proof that a decision is durably on disk.
///
/// Only [`DecisionSlot::record`] and [`DecisionSlot::read`] (and the stores
/// of this crate built on them) construct one, after the record was created
/// or read back and its digest checked. Operations that act on a decision,
/// such as [`HandoffStore::resume`](crate::handoff::HandoffStore::resume), take it, so
/// that acting on an unrecorded decision does not compile.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedDecision<P> {
    decision: Decision<P>,
    path: Utf8PathBuf,
    replay: bool,
}

impl<P> RecordedDecision<P> {
    orcho_core::getters! {
        /// The decision.
        pub fn decision(&self) -> &Decision<P>;
        /// Where the record is kept (its file, in a directory store).
        pub fn path(&self) -> &Utf8Path;
        /// Whether the call that returned this found the decision already
        /// recorded (an idempotent replay, or a read), rather than creating it.
        pub fn is_replay(&self) -> bool => replay;
    }

    /// The decision, giving up the proof.
    pub fn into_decision(self) -> Decision<P> {
        self.decision
    }
}

/// Where the one decision of one decision point lives, and the operations
/// on it.
///
/// See the [module docs](crate::decision) for the rules and an example.
#[derive(Debug, Clone)]
pub struct DecisionSlot<P> {
    run: RunId,
    point: HandoffId,
    storage: Arc<dyn Storage>,
    path: Utf8PathBuf,
    payload: PhantomData<fn() -> P>,
}

impl<P: DecisionPayload> DecisionSlot<P> {
    /// The slot of `point` of `run` in `storage`.
    pub fn new(storage: Arc<dyn Storage>, run: RunId, point: HandoffId) -> Self {
        let path = storage.locate(&run, Item::Decision(&point));
        Self {
            run,
            point,
            storage,
            path,
            payload: PhantomData,
        }
    }

    /// The slot in the directory store at `store`:
    /// `<store>/runs/<run>/decisions/<point>.json`.
    pub fn in_run(store: &Utf8Path, run: &RunId, point: &HandoffId) -> Self {
        Self::new(Arc::new(FsStorage::new(store)), run.clone(), point.clone())
    }

    orcho_core::getters! {
        /// Where the record is kept (its file, in a directory store).
        pub fn path(&self) -> &Utf8Path;
        /// The decision point.
        pub fn point(&self) -> &HandoffId;
        /// The run.
        pub fn run(&self) -> &RunId;
    }

    /// Records a decision made now (by `clock`).
    ///
    /// Of any number of processes recording at once, exactly one creates
    /// the record. A caller whose decision has the same digest as the one
    /// recorded gets the recorded one back ([`RecordedDecision::is_replay`],
    /// with the original time); any other decision is a conflict.
    ///
    /// # Errors
    ///
    /// [`DecisionError::is_conflict`] for a different recorded decision, a
    /// digest mismatch when the record on disk was altered, or a storage
    /// error.
    pub fn record(
        &self,
        request: DecisionRequest<P>,
        clock: &dyn Clock,
    ) -> Result<RecordedDecision<P>, DecisionError> {
        let decision = Decision::new(self.run.clone(), self.point.clone(), request, clock.now())?;
        self.record_decision(decision)
    }

    /// Records a decision that already carries its time.
    ///
    /// # Errors
    ///
    /// As [`record`](Self::record), and
    /// [`DecisionErrorKind::WrongPoint`] for a decision about another point.
    pub fn record_decision(
        &self,
        decision: Decision<P>,
    ) -> Result<RecordedDecision<P>, DecisionError> {
        if decision.run != self.run || decision.point != self.point {
            return Err(self.error(DecisionErrorKind::WrongPoint {
                run: decision.run,
                point: decision.point,
            }));
        }
        let wanted = decision.digest;
        let bytes = schema::encode(&decision.clone().into_doc())
            .map_err(|e| self.error(DecisionErrorKind::Store(e.into())))?;
        let created = self
            .storage
            .create(&self.run, Item::Decision(&self.point), &bytes)
            .map_err(|e| self.error(DecisionErrorKind::Store(e)))?;
        if created == Created::New {
            return Ok(RecordedDecision {
                decision,
                path: self.path.clone(),
                replay: false,
            });
        }
        let existing = self.read()?.ok_or_else(|| {
            self.error(DecisionErrorKind::Store(StoreError::backend(
                "the decision record was there and is gone",
                None,
            )))
        })?;
        if existing.decision.digest == wanted {
            Ok(existing)
        } else {
            // The same action with another note or text: said, so that
            // `halt` refusing `halt` reads as what it is.
            let (mut recorded, mut attempted) = (
                existing.decision.payload().label(),
                decision.payload().label(),
            );
            if recorded == attempted {
                recorded.push_str(" with its note");
                attempted.push_str(" with another note or text");
            }
            Err(self.error(DecisionErrorKind::Conflict {
                recorded,
                recorded_by: existing.decision.decided_by(),
                recorded_at: existing.decision.decided_at,
                attempted,
            }))
        }
    }

    /// The recorded decision, if any, with its digest checked.
    ///
    /// # Errors
    ///
    /// A record that cannot be read, is about another point or kind, or
    /// whose digest does not match its content.
    pub fn read(&self) -> Result<Option<RecordedDecision<P>>, DecisionError> {
        let doc = match storage::get_document::<DecisionDoc<P>>(
            &*self.storage,
            &self.run,
            Item::Decision(&self.point),
        ) {
            Ok(Some(doc)) => doc,
            Ok(None) => return Ok(None),
            Err(e) => return Err(self.error(DecisionErrorKind::Store(e))),
        };
        if doc.run_id != self.run || doc.handoff_id != self.point {
            return Err(self.error(DecisionErrorKind::WrongPoint {
                run: doc.run_id,
                point: doc.handoff_id,
            }));
        }
        let decision = Decision::from_doc(doc, &self.path)?;
        Ok(Some(RecordedDecision {
            decision,
            path: self.path.clone(),
            replay: true,
        }))
    }

    fn error(&self, kind: DecisionErrorKind) -> DecisionError {
        DecisionError::new(&self.point, Some(&self.path), kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orcho_core::{FixedClock, error_chain, fs};
    use std::time::Duration;

    #[test]
    fn decided_by_is_spelled_alike_by_serde() {
        for &by in DecidedBy::ALL {
            assert_eq!(serde_json::to_value(by).unwrap(), by.as_str());
        }
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Note {
        text: String,
    }

    impl DecisionPayload for Note {
        const KIND: &'static str = "note";
        fn label(&self) -> String {
            self.text.clone()
        }
    }

    fn setup() -> (tempfile::TempDir, DecisionSlot<Note>, FixedClock) {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::try_from(dir.path().to_owned()).unwrap();
        let slot = DecisionSlot::in_run(
            &root,
            &"run-1".parse().unwrap(),
            &"point-1".parse().unwrap(),
        );
        let clock = FixedClock::new("2026-11-21T12:00:00Z".parse().unwrap());
        (dir, slot, clock)
    }

    fn note(text: &str) -> DecisionRequest<Note> {
        DecisionRequest::new(
            Note {
                text: text.to_owned(),
            },
            DecidedBy::Operator,
        )
    }

    #[test]
    fn a_replay_keeps_the_original_time() {
        let (_dir, slot, clock) = setup();
        let first = slot.record(note("a"), &clock).unwrap();
        clock.advance(Duration::from_secs(60));
        let again = slot.record(note("a"), &clock).unwrap();
        assert!(again.is_replay());
        assert_eq!(again.decision().decided_at(), first.decision().decided_at());
        assert_eq!(again.decision(), first.decision());
    }

    #[test]
    fn who_decided_is_kept_but_is_not_what_was_decided() {
        let (_dir, slot, clock) = setup();
        let first = slot.record(note("a").by("alice@m1"), &clock).unwrap();
        assert_eq!(first.decision().who(), Some("alice@m1"));
        // The same decision by somebody else replays the first, and keeps
        // who made it.
        let again = slot.record(note("a").by("bob@m2"), &clock).unwrap();
        assert!(again.is_replay());
        assert_eq!(again.decision().who(), Some("alice@m1"));
        let read = slot.read().unwrap().expect("recorded");
        assert_eq!(read.decision().who(), Some("alice@m1"));
        assert!(
            slot.record(note("b").by("alice@m1"), &clock)
                .unwrap_err()
                .is_conflict()
        );
    }

    #[test]
    fn provenance_is_part_of_identity() {
        let (_dir, slot, clock) = setup();
        slot.record(note("a"), &clock).unwrap();
        let by_ci = DecisionRequest::new(Note { text: "a".into() }, DecidedBy::CiAgent);
        assert!(slot.record(by_ci, &clock).unwrap_err().is_conflict());
        let with_advice = note("a").with_advice("a1".parse().unwrap());
        assert!(slot.record(with_advice, &clock).unwrap_err().is_conflict());
    }

    #[test]
    fn conflicts_say_what_is_recorded() {
        let (_dir, slot, clock) = setup();
        slot.record(note("approve"), &clock).unwrap();
        let err = slot.record(note("skip"), &clock).unwrap_err();
        let root = slot.path().parent().unwrap().to_string();
        insta::assert_snapshot!(error_chain(&err).replace(&root, "<decisions>"), @"cannot use the decision record of `point-1` at `<decisions>/point-1.json`: caused by: a different decision is already recorded (`approve` by operator at 2026-11-21T12:00:00.000Z); refusing `skip`");
        assert_eq!(err.point().as_str(), "point-1");
    }

    #[test]
    fn an_edited_record_is_refused() {
        let (_dir, slot, clock) = setup();
        slot.record(note("approve"), &clock).unwrap();
        let text = std::fs::read_to_string(slot.path()).unwrap();
        fs::write_atomic(slot.path(), text.replace("approve", "skip").as_bytes()).unwrap();
        let err = slot.read().unwrap_err();
        assert!(err.is_digest_mismatch(), "{}", error_chain(&err));
        // And a replay attempt does not treat the edited record as its own.
        assert!(slot.record(note("skip"), &clock).is_err());
    }

    #[test]
    fn a_record_for_another_point_or_kind_is_refused() {
        let (dir, slot, clock) = setup();
        slot.record(note("a"), &clock).unwrap();
        let root = Utf8PathBuf::try_from(dir.path().to_owned()).unwrap();
        let other = DecisionSlot::<Note>::in_run(
            &root,
            &"run-1".parse().unwrap(),
            &"point-2".parse().unwrap(),
        );
        // point-1's record where point-2's belongs.
        fs::write_atomic(other.path(), &std::fs::read(slot.path()).unwrap()).unwrap();
        assert!(matches!(
            other.read().unwrap_err().kind(),
            DecisionErrorKind::WrongPoint { .. }
        ));

        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        struct Other {
            text: String,
        }
        impl DecisionPayload for Other {
            const KIND: &'static str = "other";
            fn label(&self) -> String {
                self.text.clone()
            }
        }
        let wrong_kind = DecisionSlot::<Other>::in_run(
            &root,
            &"run-1".parse().unwrap(),
            &"point-1".parse().unwrap(),
        );
        assert!(matches!(
            wrong_kind.read().unwrap_err().kind(),
            DecisionErrorKind::WrongKind { .. }
        ));
    }

    #[test]
    fn missing_records_read_as_none_and_future_ones_are_refused() {
        let (_dir, slot, _clock) = setup();
        assert!(slot.read().unwrap().is_none());
        fs::create_dir_all(slot.path().parent().unwrap()).unwrap();
        fs::write_atomic(
            slot.path(),
            br#"{"schema": 2, "kind": "note", "quorum": ["a", "b"]}"#,
        )
        .unwrap();
        let err = slot.read().unwrap_err();
        assert!(err.is_too_new(), "{}", error_chain(&err));
    }

    #[test]
    fn threads_racing_leave_one_decision() {
        let (_dir, slot, clock) = setup();
        let results: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|i| {
                    let (slot, clock) = (&slot, &clock);
                    s.spawn(move || slot.record(note(if i % 2 == 0 { "a" } else { "b" }), clock))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let winner = slot.read().unwrap().unwrap();
        let created = results
            .iter()
            .filter(|r| matches!(r, Ok(d) if !d.is_replay()))
            .count();
        assert_eq!(created, 1);
        for result in &results {
            match result {
                Ok(d) => assert_eq!(d.decision(), winner.decision()),
                Err(e) => assert!(e.is_conflict(), "{}", error_chain(e)),
            }
        }
    }
}
