//! Durable supervision pauses: a touchpoint opened before a restart is still
//! pending after it, and its answers are recorded exactly once.
//!
//! Layout of a directory store:
//!
//! ```text
//! runs/<run_id>/supervision/<id>.json   the open touchpoint (created exclusively)
//! runs/<run_id>/decisions/<id>.json     its answers, through the shared decision slot
//! ```
//!
//! Answers are validated against the touchpoint (the question schema, the
//! plan-approval and deviation rules) *before* they are recorded, so a
//! recorded answer always maps to an outcome. Recording goes through
//! [`DecisionSlot`]: the first answer wins, an identical one is an
//! idempotent replay, a different one is a conflict.

use std::sync::Arc;

use camino::Utf8Path;
use orcho_core::{
    Clock, DocumentError, HandoffId, RunId, SchemaVersion, Timestamp,
    schema::{self, Document},
    storage::{FsStorage, PointKind, Set, Storage},
};
use serde::{Deserialize, Serialize};

use super::{
    deviation::{Deviation, DeviationOutcome, DeviationPolicy, DeviationPrompt, DeviationSpent},
    error::{SupervisionStoreError, TouchpointError, TouchpointRefusal},
    plan::{Plan, PlanApproval, PlanDecision},
    planner::{PlannerAnswers, PlannerQuestions},
    question::{Answer, QuestionBatch},
};
use crate::{
    decision::{DecidedBy, Decision, DecisionPayload, DecisionRequest},
    point::{DecisionPoint, PointError, PointErrorKind, Points},
};

type Kind = PointErrorKind<TouchpointRefusal>;

/// A supervision touchpoint, as persisted when it opens.
///
/// Exhaustive on purpose: a run's journal records touchpoints in its own
/// format, and a new kind must be taught to it (and to every host that
/// renders touchpoints), so adding one should break the build there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Touchpoint {
    /// A planner asked clarifying questions.
    PlannerQuestions {
        /// The questions.
        questions: PlannerQuestions,
    },
    /// A plan waits for approval.
    PlanApproval {
        /// The plan under review.
        plan: Plan,
    },
    /// A step failed.
    Deviation {
        /// The failure.
        deviation: Deviation,
        /// The limits in force.
        policy: DeviationPolicy,
        /// What the plan had spent when the step failed.
        spent: DeviationSpent,
    },
}

impl Touchpoint {
    /// The questions a host renders for this touchpoint.
    ///
    /// # Errors
    ///
    /// A [`TouchpointError`] only if the touchpoint's own text is invalid,
    /// which the constructors of its parts prevent.
    pub fn questions(&self) -> Result<QuestionBatch, TouchpointError> {
        Ok(match self {
            Self::PlannerQuestions { questions } => questions.batch().clone(),
            Self::PlanApproval { plan } => PlanApproval::new(plan)?.questions().batch().clone(),
            Self::Deviation {
                deviation,
                policy,
                spent,
            } => DeviationPrompt::new(deviation, policy, *spent)?
                .questions()
                .batch()
                .clone(),
        })
    }

    /// Maps answers to this touchpoint's outcome, validating them.
    ///
    /// # Errors
    ///
    /// A [`TouchpointError`] when the answers do not fit.
    pub fn resolve(&self, answers: &[Answer]) -> Result<Resolution, TouchpointError> {
        Ok(match self {
            Self::PlannerQuestions { questions } => {
                Resolution::Answers(questions.answer(answers.to_vec())?)
            }
            Self::PlanApproval { plan } => {
                Resolution::Plan(PlanApproval::new(plan)?.decide(answers)?)
            }
            Self::Deviation {
                deviation,
                policy,
                spent,
            } => Resolution::Deviation(
                DeviationPrompt::new(deviation, policy, *spent)?.decide(answers)?,
            ),
        })
    }

    /// `planner_questions`, `plan_approval` or `deviation`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::PlannerQuestions { .. } => "planner_questions",
            Self::PlanApproval { .. } => "plan_approval",
            Self::Deviation { .. } => "deviation",
        }
    }
}

/// What a touchpoint's answers mean.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Resolution {
    /// Answers for the planner.
    Answers(PlannerAnswers),
    /// A decision on the plan (bound to its digest).
    Plan(PlanDecision),
    /// What to do about the failed step.
    Deviation(DeviationOutcome),
}

/// The payload recorded in a touchpoint's decision slot: the answers as
/// given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct TouchpointAnswers {
    /// One answer per question, in order.
    pub answers: Vec<Answer>,
}

impl TouchpointAnswers {
    /// The answers, one per question, in order.
    pub fn new(answers: Vec<Answer>) -> Self {
        Self { answers }
    }
}

impl DecisionPayload for TouchpointAnswers {
    const KIND: &'static str = "supervision";

    fn label(&self) -> String {
        self.answers
            .first()
            .and_then(|a| {
                a.selected
                    .first()
                    .cloned()
                    .or_else(|| a.custom_text().map(str::to_owned))
            })
            .unwrap_or_else(|| "no answer".to_owned())
    }
}

/// The on-disk shape of an open touchpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TouchpointDoc {
    schema: SchemaVersion,
    run: RunId,
    id: HandoffId,
    opened_at: Timestamp,
    touchpoint: Touchpoint,
}

impl Document for TouchpointDoc {
    const KIND: &'static str = "supervision touchpoint";
    /// Version 1: the first format.
    const SCHEMA: SchemaVersion = SchemaVersion::new(1);
}

/// Supervision touchpoints as a kind of decision point: the question is the
/// [`Touchpoint`], the choice its [`TouchpointAnswers`]. The engine acts on
/// a touchpoint's [`Resolution`] and records that in the run's journal, so
/// the touchpoint keeps no outcome of its own.
#[derive(Debug)]
pub enum Touchpoints {}

impl DecisionPoint for Touchpoints {
    const WHAT: &'static str = "supervision touchpoint";
    const NOT_FOUND: &'static str = "no such touchpoint was opened";
    const ALREADY_OPEN: &'static str = "a touchpoint with this id is already open";

    type Question = Touchpoint;
    type Choice = TouchpointAnswers;
    type Outcome = Resolution;
    type Refusal = TouchpointRefusal;
    const KIND: PointKind = PointKind::Touchpoint;

    fn encode_question(
        run: &RunId,
        id: &HandoffId,
        touchpoint: &Touchpoint,
        at: Timestamp,
    ) -> Result<Vec<u8>, DocumentError> {
        schema::encode(&TouchpointDoc {
            schema: TouchpointDoc::SCHEMA,
            run: run.clone(),
            id: id.clone(),
            opened_at: at,
            touchpoint: touchpoint.clone(),
        })
    }

    fn decode_question(
        bytes: &[u8],
        at: &Utf8Path,
        run: &RunId,
        id: &HandoffId,
    ) -> Result<(Touchpoint, Timestamp), Kind> {
        let doc = schema::decode::<TouchpointDoc>(bytes, Some(at))?;
        if doc.id != *id || doc.run != *run {
            return Err(Kind::misplaced(&doc.run, Some(&doc.id)));
        }
        Ok((doc.touchpoint, doc.opened_at))
    }

    fn read_outcome(
        _points: &Points<Self>,
        _run: &RunId,
        _id: &HandoffId,
    ) -> Result<Option<Resolution>, Kind> {
        Ok(None)
    }

    fn write_outcome(
        _points: &Points<Self>,
        _decision: &Decision<TouchpointAnswers>,
        _outcome: &Resolution,
    ) -> Result<(), Kind> {
        Ok(())
    }
}

/// A touchpoint that has been opened, with its answers if they are recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpenTouchpoint {
    /// Its id.
    pub id: HandoffId,
    /// When it opened.
    pub opened_at: Timestamp,
    /// What it asks.
    pub touchpoint: Touchpoint,
    /// Its resolution, once answers are recorded.
    pub resolution: Option<Resolution>,
}

/// The supervision touchpoints of one run, on the shared decision-point
/// lifecycle ([`Points`]).
///
/// ```
/// use std::sync::Arc;
/// use orcho_core::{FixedClock, HandoffId, RunId};
/// use orcho_handoff::{decision::DecidedBy, supervision::{Answer, Plan, PlanStep, Resolution, SupervisionStore, Touchpoint}};
///
/// # let tmp = tempfile::tempdir()?;
/// # let store_dir = camino::Utf8PathBuf::try_from(tmp.path().to_owned())?;
/// let clock = Arc::new(FixedClock::new("2026-11-21T12:00:00Z".parse()?));
/// let store = SupervisionStore::in_dir(&store_dir, "run-1".parse()?, clock.clone());
/// let id: HandoffId = "plan-1".parse()?;
/// let plan = Plan::new("Add auth").with_step(PlanStep::new("coder", "Implement middleware"));
/// store.open(&id, Touchpoint::PlanApproval { plan })?;
///
/// // After a restart, a new process finds it still pending.
/// let again = SupervisionStore::in_dir(&store_dir, "run-1".parse()?, clock);
/// assert_eq!(again.pending()?.len(), 1);
///
/// let resolution = again.answer(&id, vec![Answer::select("Approve"), Answer::none()], DecidedBy::Operator)?;
/// assert!(matches!(resolution, Resolution::Plan(_)));
/// assert!(again.pending()?.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct SupervisionStore {
    points: Points<Touchpoints>,
    run: RunId,
}

impl SupervisionStore {
    /// The touchpoints of `run` kept in `storage`, stamped with `clock`.
    pub fn new(storage: Arc<dyn Storage>, run: RunId, clock: Arc<dyn Clock>) -> Self {
        Self {
            points: Points::new(storage, clock),
            run,
        }
    }

    /// The touchpoints of `run` in the directory store at `store`.
    pub fn in_dir(store: &Utf8Path, run: RunId, clock: Arc<dyn Clock>) -> Self {
        Self::new(Arc::new(FsStorage::new(store)), run, clock)
    }

    fn err(&self, op: &'static str, id: &HandoffId, kind: Kind) -> SupervisionStoreError {
        Points::<Touchpoints>::error(op, &self.run, id, kind)
    }

    /// Opens a touchpoint, durably. Opening the same touchpoint again under
    /// the same id is a no-op that returns the first opening; a different
    /// touchpoint under an id in use is refused.
    ///
    /// # Errors
    ///
    /// [`TouchpointRefusal::IdInUse`], or a storage error.
    pub fn open(
        &self,
        id: &HandoffId,
        touchpoint: Touchpoint,
    ) -> Result<OpenTouchpoint, SupervisionStoreError> {
        match self.points.open(&self.run, id, &touchpoint) {
            Ok(opened_at) => Ok(OpenTouchpoint {
                id: id.clone(),
                opened_at,
                touchpoint,
                resolution: None,
            }),
            Err(Kind::AlreadyOpen(_)) => {
                let existing = self.get(id)?;
                if existing.touchpoint == touchpoint {
                    Ok(existing)
                } else {
                    Err(self.err(
                        "open",
                        id,
                        Kind::Refused(TouchpointRefusal::IdInUse {
                            kind: existing.touchpoint.kind(),
                        }),
                    ))
                }
            }
            Err(kind) => Err(self.err("open", id, kind)),
        }
    }

    /// The touchpoint `id`, with its resolution if answered.
    ///
    /// # Errors
    ///
    /// Not found, or an unreadable document or decision.
    pub fn get(&self, id: &HandoffId) -> Result<OpenTouchpoint, SupervisionStoreError> {
        let err = |kind| self.err("read", id, kind);
        let (touchpoint, opened_at) = self.points.question(&self.run, id).map_err(err)?;
        let resolution = match self.points.recorded(&self.run, id).map_err(err)? {
            Some(recorded) => Some(
                touchpoint
                    .resolve(&recorded.decision().payload().answers)
                    .map_err(|e| err(Kind::Refused(TouchpointRefusal::Touchpoint(e))))?,
            ),
            None => None,
        };
        Ok(OpenTouchpoint {
            id: id.clone(),
            opened_at,
            touchpoint,
            resolution,
        })
    }

    /// The decision recorded on touchpoint `id`, with who took it, if any.
    ///
    /// # Errors
    ///
    /// A record that cannot be read or was altered.
    pub fn recorded(
        &self,
        id: &HandoffId,
    ) -> Result<Option<crate::decision::RecordedDecision<TouchpointAnswers>>, SupervisionStoreError>
    {
        self.points
            .recorded(&self.run, id)
            .map_err(|kind| self.err("read", id, kind))
    }

    /// The [`Scanner`](crate::inbox::Scanner) of supervision touchpoints: every
    /// touchpoint of `run`, answered or not (a host keeps those its run
    /// still waits at).
    ///
    /// # Errors
    ///
    /// When one cannot be read.
    pub fn scan(
        storage: &Arc<dyn Storage>,
        run: &RunId,
    ) -> Result<Vec<crate::inbox::PendingDecision>, String> {
        let touchpoints = Self::new(
            Arc::clone(storage),
            run.clone(),
            Arc::new(orcho_core::SystemClock::new()),
        )
        .all()
        .map_err(|e| orcho_core::error_chain(&e))?;
        Ok(touchpoints
            .into_iter()
            .map(|open| {
                let (kind, actions) = match &open.touchpoint {
                    Touchpoint::PlanApproval { .. } => (
                        "plan_approval",
                        vec!["Approve", "Request Changes", "Reject"],
                    ),
                    Touchpoint::PlannerQuestions { .. } => ("planner_questions", vec!["answer"]),
                    Touchpoint::Deviation {
                        deviation,
                        policy,
                        spent,
                    } => (
                        "deviation",
                        policy
                            .available(deviation, *spent)
                            .iter()
                            .map(|a| super::pattern::TouchpointAction::label(*a))
                            .collect(),
                    ),
                };
                let decision = open.resolution.as_ref().map(|_| "answered".to_owned());
                crate::inbox::PendingDecision::new(
                    run.clone(),
                    crate::inbox::PendingPoint::Touchpoint {
                        touchpoint: open.id,
                        kind,
                        actions,
                    },
                    None,
                    decision,
                    open.opened_at,
                )
            })
            .collect())
    }

    /// Every touchpoint of the run, oldest first.
    ///
    /// # Errors
    ///
    /// The first touchpoint that cannot be read.
    pub fn all(&self) -> Result<Vec<OpenTouchpoint>, SupervisionStoreError> {
        let names = self
            .points
            .storage()
            .list(&self.run, Set::Questions(PointKind::Touchpoint))
            .map_err(|e| {
                PointError::in_run(
                    "list the supervision touchpoints",
                    &self.run,
                    Kind::Store(e),
                )
            })?;
        let mut out = Vec::new();
        for name in names {
            let Ok(id) = name.parse::<HandoffId>() else {
                continue;
            };
            out.push(self.get(&id)?);
        }
        out.sort_by(|a, b| (a.opened_at, a.id.as_str()).cmp(&(b.opened_at, b.id.as_str())));
        Ok(out)
    }

    /// The touchpoints still waiting for answers, oldest first.
    ///
    /// # Errors
    ///
    /// As [`all`](Self::all).
    pub fn pending(&self) -> Result<Vec<OpenTouchpoint>, SupervisionStoreError> {
        Ok(self
            .all()?
            .into_iter()
            .filter(|t| t.resolution.is_none())
            .collect())
    }

    /// Validates `answers` against touchpoint `id` and records them. The
    /// first answers win; identical answers again are an idempotent replay
    /// returning the same resolution; different answers are a conflict.
    ///
    /// # Errors
    ///
    /// [`TouchpointRefusal::Touchpoint`] when the answers do not fit
    /// (nothing is recorded), a conflict
    /// ([`PointError::is_conflict`]), or a read error.
    pub fn answer(
        &self,
        id: &HandoffId,
        answers: Vec<Answer>,
        decided_by: DecidedBy,
    ) -> Result<Resolution, SupervisionStoreError> {
        self.answer_by(id, answers, decided_by, None)
    }

    /// [`answer`](Self::answer), recording who answered in words
    /// ([`DecisionRequest::by`]).
    ///
    /// # Errors
    ///
    /// As [`answer`](Self::answer).
    pub fn answer_by(
        &self,
        id: &HandoffId,
        answers: Vec<Answer>,
        decided_by: DecidedBy,
        by: Option<&str>,
    ) -> Result<Resolution, SupervisionStoreError> {
        let request = DecisionRequest::new(TouchpointAnswers { answers }, decided_by);
        self.answer_with(
            id,
            match by {
                Some(who) => request.by(who),
                None => request,
            },
        )
    }

    /// Like [`answer_by`](Self::answer_by), with the whole request: a
    /// client's answers keep the client's name
    /// ([`DecisionRequest::by_client`]).
    ///
    /// # Errors
    ///
    /// As [`answer_by`](Self::answer_by).
    pub fn answer_with(
        &self,
        id: &HandoffId,
        request: DecisionRequest<TouchpointAnswers>,
    ) -> Result<Resolution, SupervisionStoreError> {
        let err = |kind| self.err("answer", id, kind);
        let (touchpoint, _) = self.points.question(&self.run, id).map_err(err)?;
        let resolution = touchpoint
            .resolve(&request.payload().answers)
            .map_err(|e| err(Kind::Refused(TouchpointRefusal::Touchpoint(e))))?;
        self.points
            .slot(&self.run, id)
            .record(request, self.points.clock())
            .map_err(|e| err(e.into()))?;
        Ok(resolution)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::supervision::{DeviationAction, PlanOutcome, PlanStep, Question, QuestionOption};
    use camino::Utf8PathBuf;
    use orcho_core::FixedClock;

    fn setup() -> (tempfile::TempDir, Utf8PathBuf, Arc<FixedClock>) {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::try_from(dir.path().to_owned()).unwrap();
        (
            dir,
            root,
            Arc::new(FixedClock::new("2026-11-21T12:00:00Z".parse().unwrap())),
        )
    }

    fn run() -> RunId {
        "20261121T120000000Z-0000000000000001".parse().unwrap()
    }

    fn id(s: &str) -> HandoffId {
        s.parse().unwrap()
    }

    fn questions() -> Touchpoint {
        let batch = QuestionBatch::new([Question::new(
            "Auth Type",
            "What authentication approach do you want?",
            [QuestionOption::new("OAuth"), QuestionOption::new("JWT")],
        )
        .unwrap()])
        .unwrap();
        Touchpoint::PlannerQuestions {
            questions: PlannerQuestions::new(batch).unwrap(),
        }
    }

    #[test]
    fn a_pending_batch_survives_a_restart_and_is_answered_once() {
        let (_dir, root, clock) = setup();
        SupervisionStore::in_dir(&root, run(), clock.clone())
            .open(&id("questions-1"), questions())
            .unwrap();

        let reopened = SupervisionStore::in_dir(&root, run(), clock.clone());
        let pending = reopened.pending().unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].touchpoint, questions());

        let answers = vec![Answer::select("JWT")];
        let first = reopened
            .answer(&id("questions-1"), answers.clone(), DecidedBy::Operator)
            .unwrap();
        let Resolution::Answers(a) = &first else {
            panic!("planner answers expected")
        };
        assert_eq!(a.answers(), answers.as_slice());
        assert!(reopened.pending().unwrap().is_empty());

        // The same answers again: an idempotent replay.
        clock.advance(std::time::Duration::from_secs(60));
        assert_eq!(
            reopened
                .answer(&id("questions-1"), answers, DecidedBy::Operator)
                .unwrap(),
            first
        );
        // Different answers: a conflict, and the first answers stand.
        let err = reopened
            .answer(
                &id("questions-1"),
                vec![Answer::select("OAuth")],
                DecidedBy::Operator,
            )
            .unwrap_err();
        assert!(err.is_conflict(), "{err}");
        assert_eq!(
            reopened.get(&id("questions-1")).unwrap().resolution,
            Some(first)
        );
    }

    #[test]
    fn invalid_answers_are_never_recorded() {
        let (_dir, root, clock) = setup();
        let store = SupervisionStore::in_dir(&root, run(), clock);
        let plan = Plan::new("Add auth").with_step(PlanStep::new("coder", "Implement middleware"));
        store
            .open(
                &id("plan-1"),
                Touchpoint::PlanApproval { plan: plan.clone() },
            )
            .unwrap();
        let err = store
            .answer(
                &id("plan-1"),
                vec![Answer::select("Request Changes"), Answer::none()],
                DecidedBy::Operator,
            )
            .unwrap_err();
        insta::assert_snapshot!(orcho_core::error_chain(&err), @"cannot answer supervision touchpoint `plan-1` of run `20261121T120000000Z-0000000000000001`: caused by: `request_changes` needs feedback text saying what to change");
        assert_eq!(store.pending().unwrap().len(), 1, "still pending");
        let resolution = store
            .answer(
                &id("plan-1"),
                vec![Answer::select("Request Changes"), Answer::text("split it")],
                DecidedBy::Operator,
            )
            .unwrap();
        let Resolution::Plan(decision) = resolution else {
            panic!("plan decision expected")
        };
        assert_eq!(
            decision.apply(&plan).unwrap(),
            PlanOutcome::Revise {
                feedback: "split it".into()
            }
        );
    }

    #[test]
    fn deviation_touchpoints_keep_their_menu() {
        let (_dir, root, clock) = setup();
        let store = SupervisionStore::in_dir(&root, run(), clock);
        let touchpoint = Touchpoint::Deviation {
            deviation: Deviation::new(2, "Implement auth middleware", "Cannot find module")
                .with_retries(10),
            policy: DeviationPolicy::default(),
            spent: DeviationSpent::default(),
        };
        store.open(&id("deviation-1"), touchpoint).unwrap();
        let batch = store
            .get(&id("deviation-1"))
            .unwrap()
            .touchpoint
            .questions()
            .unwrap();
        let labels: Vec<&str> = batch.questions()[0]
            .options()
            .iter()
            .map(|o| o.label.as_str())
            .collect();
        assert_eq!(labels, ["Replan", "Stop"]);
        assert!(
            store
                .answer(
                    &id("deviation-1"),
                    vec![Answer::select("Retry"), Answer::none()],
                    DecidedBy::Operator
                )
                .is_err()
        );
        let r = store
            .answer(
                &id("deviation-1"),
                vec![Answer::select("Stop"), Answer::none()],
                DecidedBy::Operator,
            )
            .unwrap();
        assert_eq!(
            r,
            Resolution::Deviation(DeviationOutcome::Stop { note: None })
        );
        let _ = DeviationAction::Stop;
    }

    #[test]
    fn reopening_is_idempotent_and_ids_are_not_reused() {
        let (_dir, root, clock) = setup();
        let store = SupervisionStore::in_dir(&root, run(), clock.clone());
        let first = store.open(&id("t-1"), questions()).unwrap();
        clock.advance(std::time::Duration::from_secs(5));
        assert_eq!(
            store.open(&id("t-1"), questions()).unwrap(),
            first,
            "replay keeps the first opening"
        );
        let plan = Touchpoint::PlanApproval {
            plan: Plan::new("x").with_step(PlanStep::new("a", "b")),
        };
        let err = store.open(&id("t-1"), plan).unwrap_err();
        insta::assert_snapshot!(orcho_core::error_chain(&err), @"cannot open supervision touchpoint `t-1` of run `20261121T120000000Z-0000000000000001`: caused by: the id is already used by a different planner_questions touchpoint");
        let missing = store.get(&id("t-2")).unwrap_err();
        assert!(missing.is_not_found());
    }

    #[test]
    fn touchpoint_document_shape() {
        let (_dir, root, clock) = setup();
        let store = SupervisionStore::in_dir(&root, run(), clock);
        store.open(&id("questions-1"), questions()).unwrap();
        let text = std::fs::read_to_string(store.points.storage().locate(
            &run(),
            orcho_core::storage::Item::Question(PointKind::Touchpoint, &id("questions-1")),
        ))
        .unwrap();
        insta::assert_snapshot!(text);
    }
}
