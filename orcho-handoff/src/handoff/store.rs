//! [`HandoffStore`]: phase handoffs on the shared decision-point lifecycle.

use std::{collections::HashSet, sync::Arc};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{
    Clock, Digest, DocumentError, HandoffId, PhaseName, RunId, Timestamp, Usd, schema,
    storage::{self, Created, FsStorage, Held, Item, Log, PointKind, Set, Storage},
};

use super::{
    action::{HandoffAction, HandoffChoice},
    error::{HandoffError, HandoffRefusal, TransitionErrorKind},
    state::{HandoffEvent, HandoffSpec, HandoffState, NextStep, PhaseHandoff},
};
use crate::{
    advisor::{Advice, AdviceId, AdviceRecord},
    decision::{DecidedBy, Decision, DecisionRequest, DecisionSlot, RecordedDecision},
    format::{
        advice::AdviceDoc,
        handoff::HandoffDoc,
        journal::{JOURNAL_SCHEMA, JournalLine},
        waiver::WaiverDoc,
    },
    point::{DecisionPoint, PointError, PointErrorKind, Points},
    waiver::{Waiver, WaiverSet},
};

type Kind = PointErrorKind<HandoffRefusal>;

/// An error about handoff `id` of `run` (or the run's handoffs as a whole).
#[cold]
fn error(op: &'static str, run: &RunId, id: Option<&HandoffId>, kind: Kind) -> HandoffError {
    match id {
        Some(id) => PointError::named(op, PhaseHandoffs::WHAT, run, id, kind),
        None => PointError::in_run(op, run, kind),
    }
}

#[cold]
fn refused(kind: TransitionErrorKind) -> Kind {
    Kind::Refused(HandoffRefusal::Transition(kind))
}

/// One event of a run's handoff journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalEntry {
    pub(crate) at: Timestamp,
    pub(crate) handoff: HandoffId,
    pub(crate) event: JournalEvent,
}

impl JournalEntry {
    orcho_core::getters! {
        /// When it happened.
        pub fn at(&self) -> Timestamp;
        /// The handoff.
        pub fn handoff(&self) -> &HandoffId;
        /// What happened.
        pub fn event(&self) -> &JournalEvent;
    }
}

/// What a journal line records.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum JournalEvent {
    /// The handoff opened.
    Opened,
    /// A decision was recorded (journaled when the handoff is resumed).
    Decided {
        /// The action.
        action: HandoffAction,
        /// The decision's digest, matched against the decision record.
        digest: Digest,
    },
    /// The run was resumed past the handoff.
    Resumed {
        /// The decided action.
        action: HandoffAction,
    },
    /// The CI autopilot stopped and left the handoff pending.
    AutopilotStopped {
        /// The stop reason's code, for example `low_confidence`.
        reason: String,
        /// The stop reason, as text.
        detail: String,
        /// The advice the autopilot got, if it got that far.
        advice: Option<AdviceId>,
    },
}

/// Phase handoffs as a kind of decision point: the question is the
/// [`PhaseHandoff`], the choice a [`HandoffChoice`], and acting on the
/// decision resumes the run with a [`NextStep`], recorded in the run's
/// handoff journal (with the waiver first, for `continue_with_waiver`).
#[derive(Debug)]
pub enum PhaseHandoffs {}

impl DecisionPoint for PhaseHandoffs {
    const WHAT: &'static str = "handoff";
    const NOT_FOUND: &'static str = "no such handoff";
    const ALREADY_OPEN: &'static str = "a handoff with this id is already open";

    type Question = PhaseHandoff;
    type Choice = HandoffChoice;
    type Outcome = NextStep;
    type Refusal = HandoffRefusal;
    const KIND: PointKind = PointKind::Handoff;

    fn encode_question(
        _run: &RunId,
        _id: &HandoffId,
        handoff: &PhaseHandoff,
        _at: Timestamp,
    ) -> Result<Vec<u8>, DocumentError> {
        schema::encode(&HandoffDoc::from(handoff.clone()))
    }

    fn decode_question(
        bytes: &[u8],
        at: &Utf8Path,
        run: &RunId,
        id: &HandoffId,
    ) -> Result<(PhaseHandoff, Timestamp), Kind> {
        let doc = schema::decode::<HandoffDoc>(bytes, Some(at))?;
        if doc.handoff_id != *id || doc.run_id != *run {
            return Err(Kind::Corrupt(format!(
                "the file names handoff `{}` of run `{}`",
                doc.handoff_id, doc.run_id
            )));
        }
        let handoff = PhaseHandoff::from(doc);
        let at = handoff.created_at;
        Ok((handoff, at))
    }

    /// A handoff was acted on when its journal says it was resumed.
    fn read_outcome(
        points: &Points<Self>,
        run: &RunId,
        id: &HandoffId,
    ) -> Result<Option<NextStep>, Kind> {
        let resumed = read_journal(&**points.storage(), run)?
            .iter()
            .any(|e| e.handoff == *id && matches!(e.event, JournalEvent::Resumed { .. }));
        if !resumed {
            return Ok(None);
        }
        let (handoff, _) = points.question(run, id)?;
        let decision = points.recorded(run, id)?.ok_or_else(|| {
            Kind::Corrupt("the journal resumed a handoff that has no decision".to_owned())
        })?;
        Ok(NextStep::after(&handoff, decision.decision()))
    }

    /// Resuming writes the waiver first (so a journaled resume always has
    /// its waiver on disk), then journals `decided` (unless the journal has
    /// it) and `resumed`.
    fn write_outcome(
        points: &Points<Self>,
        decision: &Decision<HandoffChoice>,
        next: &NextStep,
    ) -> Result<(), Kind> {
        let (run, id) = (decision.run(), decision.point());
        let storage = &**points.storage();
        if let NextStep::ContinueWithWaiver(waiver) = next {
            storage::put_document(
                storage,
                run,
                Item::Waiver(id),
                &WaiverDoc::from(waiver.clone()),
            )?;
        }
        let action = decision.payload().action();
        let journaled = read_journal(storage, run)?
            .iter()
            .any(|e| e.handoff == *id && matches!(e.event, JournalEvent::Decided { .. }));
        if !journaled {
            append(
                storage,
                run,
                JournalEntry {
                    at: decision.decided_at(),
                    handoff: id.clone(),
                    event: JournalEvent::Decided {
                        action,
                        digest: decision.digest(),
                    },
                },
            )?;
        }
        append(
            storage,
            run,
            JournalEntry {
                at: points.clock().now(),
                handoff: id.clone(),
                event: JournalEvent::Resumed { action },
            },
        )
    }
}

fn read_journal(storage: &dyn Storage, run: &RunId) -> Result<Vec<JournalEntry>, Kind> {
    let read = storage::read_log::<JournalLine>(storage, run, Log::Handoffs, JOURNAL_SCHEMA)?;
    let mut entries = Vec::with_capacity(read.records.len());
    for (i, line) in read.records.into_iter().enumerate() {
        match line.into_entry() {
            Ok(Some(entry)) => entries.push(entry),
            Ok(None) => {}
            Err(field) => {
                return Err(Kind::Corrupt(format!(
                    "journal record {} lacks its `{field}`",
                    i + 1
                )));
            }
        }
    }
    Ok(entries)
}

fn append(storage: &dyn Storage, run: &RunId, entry: JournalEntry) -> Result<(), Kind> {
    storage::append_record(storage, run, Log::Handoffs, &JournalLine::from(entry))?;
    Ok(())
}

/// The handoff store: phase handoffs, their decisions, advice and waivers in
/// a [`Storage`], on the shared decision-point lifecycle ([`Points`]).
///
/// Layout of a directory store (`.orcho/` by default):
///
/// ```text
/// runs/<run>/handoffs/<handoff>.json   the handoff, written once when it opens
/// runs/<run>/handoffs/journal.jsonl    opened / decided / resumed / autopilot_stopped events
/// runs/<run>/handoffs/.lock            serialises opening and resuming across processes
/// runs/<run>/decisions/<handoff>.json  the one decision (exclusive create)
/// runs/<run>/advice/<advice>.json      advice artifacts
/// runs/<run>/waivers/<handoff>.json    waivers written by resuming a waiver decision
/// ```
///
/// # How transitions are persisted
///
/// - **open** writes the handoff document (exclusive create), then journals
///   `opened`.
/// - **decide** is one durable write: the exclusive create of the decision
///   record. That write-once record *is* the `decided` event (it cannot be
///   half-written, and never changes), so `decide` costs about what one
///   atomic file write costs. It does not advance the run.
/// - **resume**, under the run's handoff lock, journals `decided` (if the
///   journal does not have it yet) and `resumed`; a waiver decision writes its
///   waiver first, so a journaled resume always has its waiver on disk.
///
/// The live state ([`HandoffStore::state`]) replays the handoff's journal
/// events through the pure state machine, then applies the decision record if
/// the journal has not seen it yet. A process that dies at any line leaves a
/// store that replays to a legal state.
///
/// Synchronous; cheap to clone. See the [crate docs](crate) for a complete
/// example.
#[derive(Debug, Clone)]
pub struct HandoffStore {
    points: Points<PhaseHandoffs>,
}

impl HandoffStore {
    /// The handoffs kept in `storage`, stamping documents with `clock`.
    pub fn new(storage: Arc<dyn Storage>, clock: Arc<dyn Clock>) -> Self {
        Self {
            points: Points::new(storage, clock),
        }
    }

    /// The handoffs of the directory store at `root` (for example
    /// `.orcho`).
    pub fn in_dir(root: impl Into<Utf8PathBuf>, clock: Arc<dyn Clock>) -> Self {
        Self::new(Arc::new(FsStorage::new(root)), clock)
    }

    /// Where they are kept.
    pub fn storage(&self) -> &Arc<dyn Storage> {
        self.points.storage()
    }

    fn storage_ref(&self) -> &dyn Storage {
        &**self.points.storage()
    }

    /// The clock.
    pub fn clock(&self) -> &dyn Clock {
        self.points.clock()
    }

    /// The lifecycle the handoffs run on.
    pub fn points(&self) -> &Points<PhaseHandoffs> {
        &self.points
    }

    /// Where a handoff is kept (its file, in a directory store).
    pub fn handoff_path(&self, run: &RunId, handoff: &HandoffId) -> Utf8PathBuf {
        self.storage_ref()
            .locate(run, Item::Question(PointKind::Handoff, handoff))
    }

    /// Where the run's handoff journal is kept.
    pub fn journal_path(&self, run: &RunId) -> Utf8PathBuf {
        self.storage_ref().locate_log(run, Log::Handoffs)
    }

    /// The decision slot of a handoff (see [`DecisionSlot`]).
    pub fn decision_slot(&self, run: &RunId, handoff: &HandoffId) -> DecisionSlot<HandoffChoice> {
        self.points.slot(run, handoff)
    }

    /// Takes the run's handoff lock.
    fn lock_run(&self, run: &RunId) -> Result<Box<dyn Held>, Kind> {
        Ok(self.storage_ref().lock(run, PointKind::Handoff)?)
    }

    /// Opens a handoff: chooses its id (`NNNN-<phase>`, numbered in the
    /// run), computes its menu, writes it and journals `opened`.
    ///
    /// Every call opens a new handoff with a new id: a new rejection after a
    /// retry is a new handoff.
    ///
    /// # Errors
    ///
    /// A [`HandoffError`] when the files cannot be written.
    pub fn open(&self, spec: HandoffSpec) -> Result<PhaseHandoff, HandoffError> {
        let run = spec.run.clone();
        let err = |kind| error("open a", &run, None, kind);
        let _guard = self.lock_run(&run).map_err(err)?;
        let mut seq = self.list_ids(&run).map_err(err)?.len() as u32 + 1;
        let phase = spec.phase.clone();
        let mut handoff = PhaseHandoff::new(
            numbered_id(seq, &phase).map_err(err)?,
            spec,
            self.points.clock().now(),
        );
        loop {
            handoff.id = numbered_id(seq, &phase).map_err(err)?;
            match self.points.open(&run, &handoff.id, &handoff) {
                Ok(_) => break,
                Err(Kind::AlreadyOpen(_)) if seq < u32::MAX => seq += 1,
                Err(kind) => return Err(err(kind)),
            }
        }
        append(
            self.storage_ref(),
            &run,
            JournalEntry {
                at: handoff.created_at,
                handoff: handoff.id.clone(),
                event: JournalEvent::Opened,
            },
        )
        .map_err(err)?;
        Ok(handoff)
    }

    fn list_ids(&self, run: &RunId) -> Result<Vec<HandoffId>, Kind> {
        self.storage_ref()
            .list(run, Set::Questions(PointKind::Handoff))?
            .into_iter()
            .map(|stem| {
                stem.parse::<HandoffId>().map_err(|e| {
                    Kind::Corrupt(format!(
                        "`{stem}.json` in the handoffs directory is not named by a handoff id ({e})"
                    ))
                })
            })
            .collect()
    }

    /// Reads one handoff.
    ///
    /// # Errors
    ///
    /// [`HandoffError::is_not_found`](PointError::is_not_found) when there
    /// is no such handoff; a document error when it cannot be read.
    pub fn handoff(&self, run: &RunId, id: &HandoffId) -> Result<PhaseHandoff, HandoffError> {
        self.read_handoff(run, id)
            .map_err(|kind| error("read", run, Some(id), kind))
    }

    fn read_handoff(&self, run: &RunId, id: &HandoffId) -> Result<PhaseHandoff, Kind> {
        Ok(self.points.question(run, id)?.0)
    }

    /// Every handoff of a run, in the order they opened.
    ///
    /// # Errors
    ///
    /// When the directory or a handoff cannot be read.
    pub fn handoffs(&self, run: &RunId) -> Result<Vec<PhaseHandoff>, HandoffError> {
        let err = |kind| error("list the handoffs", run, None, kind);
        let mut ids = self.list_ids(run).map_err(err)?;
        ids.sort_by_key(|id| (seq_of(id.as_str()), id.clone()));
        ids.iter().map(|id| self.handoff(run, id)).collect()
    }

    /// Every event of the run's handoff journal, in order. Events from a
    /// newer Orcho are skipped; a torn last line is ignored.
    ///
    /// # Errors
    ///
    /// When the journal cannot be read or a complete line is corrupt.
    pub fn journal(&self, run: &RunId) -> Result<Vec<JournalEntry>, HandoffError> {
        read_journal(self.storage_ref(), run)
            .map_err(|kind| error("read the journal", run, None, kind))
    }

    /// The handoffs of a run that were resumed.
    pub(crate) fn resumed(&self, run: &RunId) -> Result<HashSet<HandoffId>, HandoffError> {
        Ok(self
            .journal(run)?
            .into_iter()
            .filter(|e| matches!(e.event, JournalEvent::Resumed { .. }))
            .map(|e| e.handoff)
            .collect())
    }

    /// The live state of a handoff: its journal events replayed through the
    /// state machine, then its decision record if the journal has not seen
    /// it yet.
    ///
    /// # Errors
    ///
    /// When a file cannot be read, or the journal and the records disagree
    /// (a journaled decision whose record is missing or different).
    pub fn state(&self, run: &RunId, id: &HandoffId) -> Result<HandoffState, HandoffError> {
        self.load_state(run, id)
            .map_err(|kind| error("read the state of", run, Some(id), kind))
    }

    fn load_state(&self, run: &RunId, id: &HandoffId) -> Result<HandoffState, Kind> {
        let handoff = self.read_handoff(run, id)?;
        let recorded = self
            .points
            .recorded(run, id)?
            .map(RecordedDecision::into_decision);
        let mut state = HandoffState::open(handoff);
        for entry in read_journal(self.storage_ref(), run)? {
            if entry.handoff != *id {
                continue;
            }
            let event = match entry.event {
                JournalEvent::Opened | JournalEvent::AutopilotStopped { .. } => continue,
                JournalEvent::Decided { digest, .. } => match &recorded {
                    Some(d) if d.digest() == digest => HandoffEvent::Decide(Box::new(d.clone())),
                    Some(_) => {
                        return Err(Kind::Corrupt(format!(
                            "the journal's decision {digest} is not the recorded one"
                        )));
                    }
                    None => {
                        return Err(Kind::Corrupt(format!(
                            "the journal's decision {digest} has no record"
                        )));
                    }
                },
                JournalEvent::Resumed { .. } => HandoffEvent::Resume,
            };
            state = state.apply(event).map_err(|e| {
                Kind::Corrupt(format!(
                    "the journal replays an illegal event: {}",
                    orcho_core::error_chain(&e)
                ))
            })?;
        }
        if let (HandoffState::Open(_), Some(decision)) = (&state, recorded) {
            state = state
                .apply(HandoffEvent::Decide(Box::new(decision)))
                .map_err(|e| {
                    Kind::Corrupt(format!(
                        "the decision record is not valid for the handoff: {}",
                        orcho_core::error_chain(&e)
                    ))
                })?;
        }
        Ok(state)
    }

    /// Records a decision on a handoff. Does not advance the run: call
    /// [`resume`](Self::resume) next.
    ///
    /// The decision is validated against the handoff's persisted
    /// [`available_actions`](PhaseHandoff::available_actions), and against
    /// the advice it names, if any. Then it is created exclusively: of two
    /// processes racing, one creates it; the other gets the recorded
    /// decision back if its payload is identical
    /// ([`RecordedDecision::is_replay`], time not refreshed), or a conflict.
    ///
    /// # Errors
    ///
    /// [`HandoffError::is_not_available`] for an action not on the menu,
    /// [`HandoffError::is_conflict`](PointError::is_conflict) when a
    /// different decision is recorded, [`HandoffRefusal::UnknownAdvice`] /
    /// [`HandoffRefusal::AdviceForOtherHandoff`], not found, or I/O.
    pub fn decide(
        &self,
        run: &RunId,
        id: &HandoffId,
        request: DecisionRequest<HandoffChoice>,
    ) -> Result<RecordedDecision<HandoffChoice>, HandoffError> {
        let err = |kind| error("decide", run, Some(id), kind);
        if let Some(advice) = request.advice() {
            let record = self.read_advice(run, advice).map_err(err)?;
            if record.handoff != *id {
                return Err(err(Kind::Refused(HandoffRefusal::AdviceForOtherHandoff {
                    advice: advice.clone(),
                    handoff: record.handoff,
                })));
            }
        }
        let now = self.points.clock().now();
        self.points
            .decide(run, id, request, |handoff, request, _recorded| {
                // The menu holds whatever is recorded: an action it does not
                // offer is refused as such, before any conflict.
                let decision = Decision::new(run.clone(), id.clone(), request.clone(), now)?;
                HandoffState::open(handoff.clone())
                    .apply(HandoffEvent::Decide(Box::new(decision)))
                    .map(drop)
                    .map_err(|e| refused(e.into_kind()))
            })
            .map_err(err)
    }

    /// The recorded decision of a handoff, if there is one: the proof token
    /// [`resume`](Self::resume) takes, for a process that did not record it
    /// itself.
    ///
    /// # Errors
    ///
    /// Not found, or when the record cannot be read or was altered.
    pub fn recorded_decision(
        &self,
        run: &RunId,
        id: &HandoffId,
    ) -> Result<Option<RecordedDecision<HandoffChoice>>, HandoffError> {
        let err = |kind| error("read the decision of", run, Some(id), kind);
        self.read_handoff(run, id).map_err(err)?;
        self.points.recorded(run, id).map_err(err)
    }

    /// Resumes the run past a decided handoff and returns what the engine
    /// must do next.
    ///
    /// # Errors
    ///
    /// [`HandoffError::is_terminal`] after `halt` (the run is terminal),
    /// [`HandoffError::is_already_resumed`] the second time,
    /// [`PointErrorKind::DecisionMismatch`] when `decision` is not the
    /// decision on disk, or I/O.
    pub fn resume(
        &self,
        decision: &RecordedDecision<HandoffChoice>,
    ) -> Result<NextStep, HandoffError> {
        let run = decision.decision().run();
        let id = decision.decision().point();
        self.resume_with(decision)
            .map_err(|kind| error("resume", run, Some(id), kind))
    }

    /// Resumes the run past a handoff, reading its decision from disk.
    ///
    /// # Errors
    ///
    /// [`HandoffError::is_pending`] while no decision is recorded (the error
    /// names the handoff and its [available
    /// actions](HandoffError::available_actions)), and every error of
    /// [`resume`](Self::resume).
    pub fn resume_handoff(&self, run: &RunId, id: &HandoffId) -> Result<NextStep, HandoffError> {
        let err = |kind| error("resume", run, Some(id), kind);
        let handoff = self.read_handoff(run, id).map_err(err)?;
        let Some(recorded) = self.points.recorded(run, id).map_err(err)? else {
            return Err(err(refused(TransitionErrorKind::Pending {
                available: handoff.available_actions,
            })));
        };
        self.resume_with(&recorded).map_err(err)
    }

    fn resume_with(&self, decision: &RecordedDecision<HandoffChoice>) -> Result<NextStep, Kind> {
        let acted = self.points.act(decision, |handoff, decision| {
            let resumed = HandoffState::open(handoff.clone())
                .apply(HandoffEvent::Decide(Box::new(decision.clone())))
                .and_then(|state| state.apply(HandoffEvent::Resume))
                .map_err(|e| refused(e.into_kind()))?;
            resumed
                .next_step()
                .cloned()
                .ok_or_else(|| Kind::Corrupt("resume did not reach the resumed state".to_owned()))
        })?;
        if acted.is_replay() {
            return Err(refused(TransitionErrorKind::AlreadyResumed));
        }
        Ok(acted.into_outcome())
    }

    /// Every waiver of a run, for gates and acceptance.
    ///
    /// # Errors
    ///
    /// When a waiver cannot be read.
    pub fn waivers(&self, run: &RunId) -> Result<WaiverSet, HandoffError> {
        let err = |kind| error("read the waivers", run, None, kind);
        let storage = self.storage_ref();
        let mut stems = storage.list(run, Set::Waivers).map_err(|e| err(e.into()))?;
        stems.sort_by_key(|s| (seq_of(s), s.clone()));
        let mut waivers = Vec::with_capacity(stems.len());
        for stem in &stems {
            let id = stem.parse::<HandoffId>().map_err(|e| {
                err(Kind::Corrupt(format!(
                    "waiver `{stem}` is not named by a handoff id ({e})"
                )))
            })?;
            if let Some(doc) = storage::get_document::<WaiverDoc>(storage, run, Item::Waiver(&id))
                .map_err(|e| err(e.into()))?
            {
                waivers.push(Waiver::from(doc));
            }
        }
        Ok(WaiverSet::new(waivers))
    }

    /// Writes advice as an artifact with its provenance. The advice is not
    /// applied: a decision that uses it names its id
    /// ([`DecisionRequest::with_advice`]).
    ///
    /// # Errors
    ///
    /// [`HandoffRefusal::Advice`] when the advice is malformed, not found
    /// when the handoff does not exist, or I/O.
    pub fn record_advice(
        &self,
        run: &RunId,
        handoff: &HandoffId,
        advisor: &str,
        advice: &Advice,
        requested_by: DecidedBy,
    ) -> Result<AdviceRecord, HandoffError> {
        let err = |kind| error("record advice for", run, Some(handoff), kind);
        advice
            .validate()
            .map_err(|e| err(PointErrorKind::Refused(HandoffRefusal::Advice(e))))?;
        self.read_handoff(run, handoff).map_err(err)?;
        let storage = self.storage_ref();
        let _guard = self.lock_run(run).map_err(err)?;
        let mut seq = storage
            .list(run, Set::Advice)
            .map_err(|e| err(e.into()))?
            .len() as u32
            + 1;
        loop {
            let record = AdviceRecord {
                id: AdviceId::numbered(seq, handoff),
                run: run.clone(),
                handoff: handoff.clone(),
                advisor: advisor.to_owned(),
                requested_by,
                created_at: self.points.clock().now(),
                advice: advice.clone(),
            };
            let created = storage::create_document(
                storage,
                run,
                Item::Advice(record.id.as_str()),
                &AdviceDoc::from(record.clone()),
            )
            .map_err(|e| err(e.into()))?;
            match created {
                Created::New => return Ok(record),
                _ if seq < u32::MAX => seq += 1,
                _ => {
                    return Err(err(Kind::Corrupt(
                        "no advice id is free in the run".to_owned(),
                    )));
                }
            }
        }
    }

    /// Reads one advice artifact.
    ///
    /// # Errors
    ///
    /// [`HandoffRefusal::UnknownAdvice`] when it does not exist, or a
    /// document error.
    pub fn advice(&self, run: &RunId, id: &AdviceId) -> Result<AdviceRecord, HandoffError> {
        self.read_advice(run, id)
            .map_err(|kind| error("read advice", run, None, kind))
    }

    fn read_advice(&self, run: &RunId, id: &AdviceId) -> Result<AdviceRecord, Kind> {
        let storage = self.storage_ref();
        let item = Item::Advice(id.as_str());
        match storage::get_document::<AdviceDoc>(storage, run, item)? {
            Some(doc) if doc.advice_id == *id && doc.run_id == *run => Ok(doc.into()),
            Some(doc) => Err(Kind::Corrupt(format!(
                "`{}` holds advice `{}` of run `{}`",
                storage.locate(run, item),
                doc.advice_id,
                doc.run_id
            ))),
            None => Err(Kind::Refused(HandoffRefusal::UnknownAdvice(id.clone()))),
        }
    }

    /// Every advice artifact of a run, in the order they were written.
    ///
    /// # Errors
    ///
    /// When an artifact cannot be read.
    pub fn advice_records(&self, run: &RunId) -> Result<Vec<AdviceRecord>, HandoffError> {
        let err = |kind| error("list the advice", run, None, kind);
        let mut stems = self
            .storage_ref()
            .list(run, Set::Advice)
            .map_err(|e| err(e.into()))?;
        stems.sort_by_key(|s| (seq_of(s), s.clone()));
        stems
            .iter()
            .map(|stem| {
                let id = AdviceId::new(stem.as_str()).map_err(|e| {
                    err(Kind::Corrupt(format!(
                        "`{stem}.json` in the advice directory is not named by an advice id ({e})"
                    )))
                })?;
                self.read_advice(run, &id).map_err(err)
            })
            .collect()
    }

    /// Journals that the CI autopilot stopped on a handoff.
    pub(crate) fn note_autopilot_stop(
        &self,
        run: &RunId,
        handoff: &HandoffId,
        reason: &str,
        detail: String,
        advice: Option<AdviceId>,
    ) -> Result<(), HandoffError> {
        let err = |kind| error("journal the autopilot stop on", run, Some(handoff), kind);
        let _guard = self.lock_run(run).map_err(err)?;
        append(
            self.storage_ref(),
            run,
            JournalEntry {
                at: self.points.clock().now(),
                handoff: handoff.clone(),
                event: JournalEvent::AutopilotStopped {
                    reason: reason.to_owned(),
                    detail,
                    advice,
                },
            },
        )
        .map_err(err)
    }

    /// How many `retry_feedback` decisions the CI agent recorded in a run.
    pub(crate) fn ci_retries(&self, run: &RunId) -> Result<u32, HandoffError> {
        let mut n = 0;
        for handoff in self.handoffs(run)? {
            if let Some(recorded) = self.recorded_decision(run, &handoff.id)? {
                let d = recorded.decision();
                if d.decided_by() == DecidedBy::CiAgent
                    && d.payload().action() == HandoffAction::RetryFeedback
                {
                    n += 1;
                }
            }
        }
        Ok(n)
    }

    /// The money advisors cost in a run, from the advice artifacts.
    pub(crate) fn advice_spend(&self, run: &RunId) -> Result<Usd, HandoffError> {
        Ok(self
            .advice_records(run)?
            .iter()
            .filter_map(|r| r.advice.usage.and_then(|u| u.usd))
            .fold(Usd::default(), |a, b| a + b))
    }

    /// The handoffs of `phase` that opened before `handoff`, oldest first.
    pub(crate) fn earlier_handoffs(
        &self,
        run: &RunId,
        phase: &PhaseName,
        handoff: &HandoffId,
    ) -> Result<Vec<PhaseHandoff>, HandoffError> {
        let all = self.handoffs(run)?;
        Ok(all
            .into_iter()
            .take_while(|h| h.id != *handoff)
            .filter(|h| h.phase == *phase)
            .collect())
    }
}

/// `NNNN-<phase>`, cut to the longest id allowed. A phase name is a valid
/// id, and so is `NNNN-` followed by any prefix of it.
fn numbered_id(seq: u32, phase: &PhaseName) -> Result<HandoffId, Kind> {
    let mut id = format!("{seq:04}-{phase}");
    while id.len() > orcho_core::ids::MAX_ID_LEN {
        id.pop();
    }
    HandoffId::new(id).map_err(|e| Kind::Refused(HandoffRefusal::Id(e)))
}

/// The numeric prefix of a numbered id, for ordering.
fn seq_of(id: &str) -> u64 {
    id.split('-')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX)
}
