//! [`Points`]: the lifecycle every decision point shares, generic over the
//! kind of point.

use std::{marker::PhantomData, sync::Arc};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{
    Clock, DocumentError, HandoffId, RunId, Timestamp,
    schema::Document,
    storage::{self, Created, FsStorage, Held, Item, PointKind, Storage},
};

use super::error::{PointError, PointErrorKind};
use crate::decision::{Decision, DecisionPayload, DecisionRequest, DecisionSlot, RecordedDecision};

/// One kind of decision point: what it asks, what can be decided, what
/// acting on the decision did, and how its documents read and write.
///
/// [`Points`] runs the lifecycle on top of it — open the question, record
/// the decision once ([`DecisionSlot`]), read it back, act on it under the
/// point's lock and record the outcome — so that a kind of point only says
/// what is its own: its documents and how its outcome is kept (most keep an
/// outcome document, written with [`Points::write_outcome_document`]; a
/// phase handoff journals it). Where they are kept is the [`Storage`]'s
/// business. Phase handoffs, delivery gates, intake questions and
/// supervision touchpoints are kinds of points.
pub trait DecisionPoint: Sized + Send + Sync + 'static {
    /// The kind of point in messages, for example `delivery gate` or
    /// `handoff`.
    const WHAT: &'static str;
    /// Why a point of this kind cannot be found, for example "the run has no
    /// delivery gate".
    const NOT_FOUND: &'static str;
    /// Why a point of this kind cannot be opened twice.
    const ALREADY_OPEN: &'static str;

    /// What the point asks.
    type Question: Clone + std::fmt::Debug + Send + Sync;
    /// What is decided: the payload of the decision record.
    type Choice: DecisionPayload;
    /// What acting on the decision did.
    type Outcome: Clone + std::fmt::Debug + Send + Sync;
    /// What only this kind of point refuses.
    type Refusal: super::Refusal;

    /// Which kind of point it is, to the [`Storage`].
    const KIND: PointKind;

    /// The question's document, asked at `at`, encoded.
    ///
    /// # Errors
    ///
    /// When it cannot be encoded.
    fn encode_question(
        run: &RunId,
        id: &HandoffId,
        question: &Self::Question,
        at: Timestamp,
    ) -> Result<Vec<u8>, DocumentError>;

    /// Decodes the question's document (`bytes`, kept at `at`) with the
    /// time it was asked, checked to be about `run` and `id`.
    ///
    /// # Errors
    ///
    /// A document error, [`PointErrorKind::Misplaced`] for a document about
    /// another run or point, [`PointErrorKind::Invalid`] for a value this
    /// build cannot use.
    fn decode_question(
        bytes: &[u8],
        at: &Utf8Path,
        run: &RunId,
        id: &HandoffId,
    ) -> Result<(Self::Question, Timestamp), PointErrorKind<Self::Refusal>>;

    /// The recorded outcome of point `id`, if it was acted on.
    ///
    /// # Errors
    ///
    /// When the outcome cannot be read.
    fn read_outcome(
        points: &Points<Self>,
        run: &RunId,
        id: &HandoffId,
    ) -> Result<Option<Self::Outcome>, PointErrorKind<Self::Refusal>>;

    /// Records the outcome of acting on `decision`; called under the point's
    /// lock, once.
    ///
    /// # Errors
    ///
    /// When the outcome cannot be written.
    fn write_outcome(
        points: &Points<Self>,
        decision: &Decision<Self::Choice>,
        outcome: &Self::Outcome,
    ) -> Result<(), PointErrorKind<Self::Refusal>>;
}

/// Where a decision point stands.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum PointState<P: DecisionPoint> {
    /// Open: nobody decided yet.
    Open {
        /// The question.
        question: P::Question,
        /// When it was asked.
        opened_at: Timestamp,
    },
    /// Decided, not acted on yet.
    Decided {
        /// The question.
        question: P::Question,
        /// When it was asked.
        opened_at: Timestamp,
        /// The decision.
        decision: Decision<P::Choice>,
    },
    /// Decided and acted on.
    Done {
        /// The question.
        question: P::Question,
        /// When it was asked.
        opened_at: Timestamp,
        /// The decision.
        decision: Decision<P::Choice>,
        /// What acting on it did.
        outcome: P::Outcome,
    },
}

impl<P: DecisionPoint> PointState<P> {
    /// The question.
    pub fn question(&self) -> &P::Question {
        match self {
            Self::Open { question, .. }
            | Self::Decided { question, .. }
            | Self::Done { question, .. } => question,
        }
    }

    /// When the question was asked.
    pub fn opened_at(&self) -> Timestamp {
        match self {
            Self::Open { opened_at, .. }
            | Self::Decided { opened_at, .. }
            | Self::Done { opened_at, .. } => *opened_at,
        }
    }

    /// The decision, once recorded.
    pub fn decision(&self) -> Option<&Decision<P::Choice>> {
        match self {
            Self::Open { .. } => None,
            Self::Decided { decision, .. } | Self::Done { decision, .. } => Some(decision),
        }
    }

    /// The outcome, once acted on.
    pub fn outcome(&self) -> Option<&P::Outcome> {
        match self {
            Self::Open { .. } | Self::Decided { .. } => None,
            Self::Done { outcome, .. } => Some(outcome),
        }
    }

    /// Whether the point still waits for somebody: open, or decided and not
    /// acted on.
    pub fn is_pending(&self) -> bool {
        match self {
            Self::Open { .. } | Self::Decided { .. } => true,
            Self::Done { .. } => false,
        }
    }
}

/// What [`Points::act`] did: the outcome, and whether it was already
/// recorded by an earlier call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acted<O> {
    outcome: O,
    replayed: bool,
}

impl<O> Acted<O> {
    /// The outcome.
    pub fn outcome(&self) -> &O {
        &self.outcome
    }

    /// The outcome, giving up the rest.
    pub fn into_outcome(self) -> O {
        self.outcome
    }

    /// Whether an earlier call had already acted and this one only read the
    /// recorded outcome.
    pub fn is_replay(&self) -> bool {
        self.replayed
    }
}

/// The decision points of one kind in a [`Storage`]: the lifecycle, once.
/// Synchronous; cheap to clone.
///
/// - [`open`](Self::open) writes the question with an exclusive create;
/// - [`decide`](Self::decide) admits a first decision through the point's
///   own check, then records it in the point's [`DecisionSlot`] (the same
///   decision again is an idempotent replay, another one a conflict);
/// - [`act`](Self::act), under the point's lock, returns the recorded
///   outcome if there is one, checks that the decision given is the one on
///   disk, runs the action and records its outcome — so acting twice never
///   acts twice;
/// - [`state`](Self::state) reads where the point stands.
#[derive(Debug)]
pub struct Points<P> {
    storage: Arc<dyn Storage>,
    clock: Arc<dyn Clock>,
    point: PhantomData<fn() -> P>,
}

impl<P> Clone for Points<P> {
    fn clone(&self) -> Self {
        Self {
            storage: Arc::clone(&self.storage),
            clock: Arc::clone(&self.clock),
            point: PhantomData,
        }
    }
}

impl<P: DecisionPoint> Points<P> {
    /// The points of this kind kept in `storage`, stamping documents with
    /// `clock`.
    pub fn new(storage: Arc<dyn Storage>, clock: Arc<dyn Clock>) -> Self {
        Self {
            storage,
            clock,
            point: PhantomData,
        }
    }

    /// The points of this kind in the directory store at `root`.
    pub fn in_dir(root: impl Into<Utf8PathBuf>, clock: Arc<dyn Clock>) -> Self {
        Self::new(Arc::new(FsStorage::new(root)), clock)
    }

    /// Where they are kept.
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    /// The clock.
    pub fn clock(&self) -> &dyn Clock {
        &*self.clock
    }

    /// The decision slot of point `id`.
    pub fn slot(&self, run: &RunId, id: &HandoffId) -> DecisionSlot<P::Choice> {
        DecisionSlot::new(Arc::clone(&self.storage), run.clone(), id.clone())
    }

    /// Reads an outcome document of point `id`, `None` when there is none:
    /// the usual [`DecisionPoint::read_outcome`].
    ///
    /// # Errors
    ///
    /// When the document cannot be read.
    pub fn read_outcome_document<D: Document>(
        &self,
        run: &RunId,
        id: &HandoffId,
    ) -> Result<Option<D>, PointErrorKind<P::Refusal>> {
        Ok(storage::get_document(
            &*self.storage,
            run,
            Item::Outcome(P::KIND, id),
        )?)
    }

    /// Creates the outcome document of point `id`; it is written once: the
    /// usual [`DecisionPoint::write_outcome`].
    ///
    /// # Errors
    ///
    /// When the document cannot be encoded or written, or one exists.
    pub fn write_outcome_document<D: Document>(
        &self,
        run: &RunId,
        id: &HandoffId,
        doc: &D,
    ) -> Result<(), PointErrorKind<P::Refusal>> {
        match storage::create_document(&*self.storage, run, Item::Outcome(P::KIND, id), doc)? {
            Created::New => Ok(()),
            _ => Err(PointErrorKind::Corrupt(
                "an outcome was recorded already".to_owned(),
            )),
        }
    }

    /// Takes the point's lock, which serialises acting on points of this
    /// kind in `run`.
    ///
    /// # Errors
    ///
    /// When it cannot be taken.
    pub fn lock(
        &self,
        run: &RunId,
        _id: &HandoffId,
    ) -> Result<Box<dyn Held>, PointErrorKind<P::Refusal>> {
        Ok(self.storage.lock(run, P::KIND)?)
    }

    /// An error about point `id` of `run`, named as this kind of point.
    #[cold]
    pub fn error(
        op: &'static str,
        run: &RunId,
        id: &HandoffId,
        kind: PointErrorKind<P::Refusal>,
    ) -> PointError<P::Refusal> {
        PointError::named(op, P::WHAT, run, id, kind)
    }

    /// Opens point `id`: writes its question with an exclusive create.
    ///
    /// # Errors
    ///
    /// [`PointErrorKind::AlreadyOpen`] when the point exists (read it with
    /// [`question`](Self::question) to tell a replay from another
    /// question), or a storage error.
    pub fn open(
        &self,
        run: &RunId,
        id: &HandoffId,
        question: &P::Question,
    ) -> Result<Timestamp, PointErrorKind<P::Refusal>> {
        let at = self.clock.now();
        let bytes = P::encode_question(run, id, question, at)?;
        match self
            .storage
            .create(run, Item::Question(P::KIND, id), &bytes)?
        {
            Created::New => Ok(at),
            _ => Err(PointErrorKind::AlreadyOpen(P::ALREADY_OPEN)),
        }
    }

    /// The question of point `id` and when it was asked.
    ///
    /// # Errors
    ///
    /// [`PointErrorKind::NotFound`] when it was never opened, a misplaced or
    /// unreadable document.
    pub fn question(
        &self,
        run: &RunId,
        id: &HandoffId,
    ) -> Result<(P::Question, Timestamp), PointErrorKind<P::Refusal>> {
        let item = Item::Question(P::KIND, id);
        let Some(bytes) = self.storage.get(run, item)? else {
            return Err(PointErrorKind::NotFound(P::NOT_FOUND));
        };
        P::decode_question(&bytes, &self.storage.locate(run, item), run, id)
    }

    /// Records a decision on point `id`. Does not act on it: call
    /// [`act`](Self::act) next.
    ///
    /// `admit` checks it first against the question (the menu, the target,
    /// …) and the decision already recorded, if any; a refused decision
    /// records nothing. Once one is recorded, the same decision again is an
    /// idempotent replay ([`RecordedDecision::is_replay`], the original
    /// time) and any other is a conflict.
    ///
    /// # Errors
    ///
    /// Not found, the refusal `admit` returns, a conflict
    /// ([`PointError::is_conflict`]), or a storage error.
    pub fn decide(
        &self,
        run: &RunId,
        id: &HandoffId,
        request: DecisionRequest<P::Choice>,
        admit: impl FnOnce(
            &P::Question,
            &DecisionRequest<P::Choice>,
            Option<&Decision<P::Choice>>,
        ) -> Result<(), PointErrorKind<P::Refusal>>,
    ) -> Result<RecordedDecision<P::Choice>, PointErrorKind<P::Refusal>> {
        let (question, _) = self.question(run, id)?;
        let slot = self.slot(run, id);
        let recorded = slot.read()?;
        admit(
            &question,
            &request,
            recorded.as_ref().map(RecordedDecision::decision),
        )?;
        Ok(slot.record(request, &*self.clock)?)
    }

    /// The recorded decision of point `id`, if any: the proof token
    /// [`act`](Self::act) takes, for a process that did not record it.
    ///
    /// # Errors
    ///
    /// When the record cannot be read or was altered.
    pub fn recorded(
        &self,
        run: &RunId,
        id: &HandoffId,
    ) -> Result<Option<RecordedDecision<P::Choice>>, PointErrorKind<P::Refusal>> {
        Ok(self.slot(run, id).read()?)
    }

    /// The recorded outcome of point `id`, once acted on.
    ///
    /// # Errors
    ///
    /// When the outcome cannot be read.
    pub fn outcome(
        &self,
        run: &RunId,
        id: &HandoffId,
    ) -> Result<Option<P::Outcome>, PointErrorKind<P::Refusal>> {
        P::read_outcome(self, run, id)
    }

    /// Acts on a recorded decision, once, under the point's lock: a
    /// recorded outcome is returned as it is (acting again never acts
    /// again); otherwise the decision must be the one on disk, `act` runs
    /// and its outcome is recorded.
    ///
    /// # Errors
    ///
    /// [`PointErrorKind::DecisionMismatch`] when `decision` is not the one
    /// on disk, what `act` returns, or a storage error.
    pub fn act(
        &self,
        decision: &RecordedDecision<P::Choice>,
        act: impl FnOnce(
            &P::Question,
            &Decision<P::Choice>,
        ) -> Result<P::Outcome, PointErrorKind<P::Refusal>>,
    ) -> Result<Acted<P::Outcome>, PointErrorKind<P::Refusal>> {
        let (run, id) = (decision.decision().run(), decision.decision().point());
        let (question, _) = self.question(run, id)?;
        let _guard = self.lock(run, id)?;
        if let Some(outcome) = P::read_outcome(self, run, id)? {
            return Ok(Acted {
                outcome,
                replayed: true,
            });
        }
        let on_disk = self.slot(run, id).read()?;
        if on_disk.map(|d| d.decision().digest()) != Some(decision.decision().digest()) {
            return Err(PointErrorKind::DecisionMismatch);
        }
        let outcome = act(&question, decision.decision())?;
        P::write_outcome(self, decision.decision(), &outcome)?;
        Ok(Acted {
            outcome,
            replayed: false,
        })
    }

    /// Where point `id` stands.
    ///
    /// # Errors
    ///
    /// Not found, or when a document cannot be read.
    pub fn state(
        &self,
        run: &RunId,
        id: &HandoffId,
    ) -> Result<PointState<P>, PointErrorKind<P::Refusal>> {
        let (question, opened_at) = self.question(run, id)?;
        let Some(decision) = self.recorded(run, id)?.map(RecordedDecision::into_decision) else {
            return Ok(PointState::Open {
                question,
                opened_at,
            });
        };
        Ok(match P::read_outcome(self, run, id)? {
            Some(outcome) => PointState::Done {
                question,
                opened_at,
                decision,
                outcome,
            },
            None => PointState::Decided {
                question,
                opened_at,
                decision,
            },
        })
    }
}
