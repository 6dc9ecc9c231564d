//! Durable supervision pauses: a touchpoint opened before a restart is still
//! pending after it, and its answers are recorded exactly once.
//!
//! Layout, inside the store directory:
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

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{
    Clock, DocumentError, HandoffId, RunId, SchemaVersion, Timestamp, fs, schema::Document,
};
use serde::{Deserialize, Serialize};

use super::{
    deviation::{Deviation, DeviationOutcome, DeviationPolicy, DeviationPrompt, DeviationSpent},
    error::{SupervisionStoreError, SupervisionStoreErrorKind, TouchpointError},
    plan::{Plan, PlanApproval, PlanDecision},
    planner::{PlannerAnswers, PlannerQuestions},
    question::{Answer, QuestionBatch},
};
use crate::decision::{DecidedBy, DecisionPayload, DecisionRequest, DecisionSlot};

/// A supervision touchpoint, as persisted when it opens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
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

    fn kind(&self) -> &'static str {
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

/// The supervision touchpoints of one run.
///
/// ```
/// use orcho_core::{FixedClock, HandoffId, RunId};
/// use orcho_handoff::{decision::DecidedBy, supervision::{Answer, Plan, PlanStep, Resolution, SupervisionStore, Touchpoint}};
///
/// # let tmp = tempfile::tempdir()?;
/// # let store_dir = camino::Utf8PathBuf::try_from(tmp.path().to_owned())?;
/// let clock = FixedClock::new("2026-11-21T12:00:00Z".parse()?);
/// let store = SupervisionStore::new(&store_dir, "run-1".parse()?);
/// let id: HandoffId = "plan-1".parse()?;
/// let plan = Plan::new("Add auth").with_step(PlanStep::new("coder", "Implement middleware"));
/// store.open(&id, Touchpoint::PlanApproval { plan }, &clock)?;
///
/// // After a restart, a new process finds it still pending.
/// let again = SupervisionStore::new(&store_dir, "run-1".parse()?);
/// assert_eq!(again.pending()?.len(), 1);
///
/// let resolution = again.answer(&id, vec![Answer::select("Approve"), Answer::none()], DecidedBy::Operator, &clock)?;
/// assert!(matches!(resolution, Resolution::Plan(_)));
/// assert!(again.pending()?.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct SupervisionStore {
    store: Utf8PathBuf,
    run: RunId,
}

impl SupervisionStore {
    /// The touchpoints of `run` in the store directory `store`.
    pub fn new(store: &Utf8Path, run: RunId) -> Self {
        Self {
            store: store.to_owned(),
            run,
        }
    }

    fn dir(&self) -> Utf8PathBuf {
        self.store
            .join("runs")
            .join(self.run.as_str())
            .join("supervision")
    }

    fn doc_path(&self, id: &HandoffId) -> Utf8PathBuf {
        self.dir().join(format!("{id}.json"))
    }

    fn slot(&self, id: &HandoffId) -> DecisionSlot<TouchpointAnswers> {
        DecisionSlot::in_run(&self.store, &self.run, id)
    }

    fn err(&self, id: &HandoffId, kind: SupervisionStoreErrorKind) -> SupervisionStoreError {
        SupervisionStoreError::new(&self.run, id, kind)
    }

    /// Opens a touchpoint, durably. Opening the same touchpoint again under
    /// the same id is a no-op that returns the first opening; a different
    /// touchpoint under an id in use is refused.
    ///
    /// # Errors
    ///
    /// [`SupervisionStoreErrorKind::IdInUse`], or a file-system error.
    pub fn open(
        &self,
        id: &HandoffId,
        touchpoint: Touchpoint,
        clock: &dyn Clock,
    ) -> Result<OpenTouchpoint, SupervisionStoreError> {
        let doc = TouchpointDoc {
            schema: TouchpointDoc::SCHEMA,
            run: self.run.clone(),
            id: id.clone(),
            opened_at: clock.now(),
            touchpoint,
        };
        let path = self.doc_path(id);
        let doc_err =
            |e: DocumentError| self.err(id, SupervisionStoreErrorKind::Document(Box::new(e)));
        let bytes = orcho_core::schema::encode(&doc).map_err(doc_err)?;
        fs::create_dir_all(&self.dir())
            .map_err(|e| self.err(id, SupervisionStoreErrorKind::Fs(Box::new(e))))?;
        match fs::write_new_atomic(&path, &bytes) {
            Ok(()) => Ok(OpenTouchpoint {
                id: id.clone(),
                opened_at: doc.opened_at,
                touchpoint: doc.touchpoint,
                resolution: None,
            }),
            Err(e) if e.is_already_exists() => {
                let existing = self.get(id)?;
                if existing.touchpoint == doc.touchpoint {
                    Ok(existing)
                } else {
                    Err(self.err(
                        id,
                        SupervisionStoreErrorKind::IdInUse {
                            kind: existing.touchpoint.kind(),
                        },
                    ))
                }
            }
            Err(e) => Err(self.err(id, SupervisionStoreErrorKind::Fs(Box::new(e)))),
        }
    }

    /// The touchpoint `id`, with its resolution if answered.
    ///
    /// # Errors
    ///
    /// [`SupervisionStoreErrorKind::NotFound`], or an unreadable document or
    /// decision.
    pub fn get(&self, id: &HandoffId) -> Result<OpenTouchpoint, SupervisionStoreError> {
        let doc: TouchpointDoc = fs::read_document(&self.doc_path(id)).map_err(|e| {
            if e.is_not_found() {
                self.err(id, SupervisionStoreErrorKind::NotFound)
            } else {
                self.err(id, SupervisionStoreErrorKind::Document(Box::new(e)))
            }
        })?;
        if doc.id != *id || doc.run != self.run {
            return Err(self.err(id, SupervisionStoreErrorKind::Misplaced));
        }
        let resolution = match self
            .slot(id)
            .read()
            .map_err(|e| self.err(id, SupervisionStoreErrorKind::Decision(Box::new(e))))?
        {
            Some(recorded) => Some(
                doc.touchpoint
                    .resolve(&recorded.decision().payload().answers)
                    .map_err(|e| self.err(id, SupervisionStoreErrorKind::Touchpoint(e)))?,
            ),
            None => None,
        };
        Ok(OpenTouchpoint {
            id: doc.id,
            opened_at: doc.opened_at,
            touchpoint: doc.touchpoint,
            resolution,
        })
    }

    /// Every touchpoint of the run, oldest first.
    ///
    /// # Errors
    ///
    /// The first touchpoint that cannot be read.
    pub fn all(&self) -> Result<Vec<OpenTouchpoint>, SupervisionStoreError> {
        let dir = self.dir();
        let entries = match dir.read_dir_utf8() {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(SupervisionStoreError::for_run(
                    &self.run,
                    SupervisionStoreErrorKind::ReadDir(e),
                ));
            }
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(stem) = name.strip_suffix(".json") else {
                continue;
            };
            let Ok(id) = stem.parse::<HandoffId>() else {
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
    /// [`SupervisionStoreErrorKind::Touchpoint`] when the answers do not fit
    /// (nothing is recorded), [`SupervisionStoreErrorKind::Decision`] with a
    /// conflict inside, or a read error.
    pub fn answer(
        &self,
        id: &HandoffId,
        answers: Vec<Answer>,
        decided_by: DecidedBy,
        clock: &dyn Clock,
    ) -> Result<Resolution, SupervisionStoreError> {
        let open = self.get(id)?;
        let resolution = open
            .touchpoint
            .resolve(&answers)
            .map_err(|e| self.err(id, SupervisionStoreErrorKind::Touchpoint(e)))?;
        self.slot(id)
            .record(
                DecisionRequest::new(TouchpointAnswers { answers }, decided_by),
                clock,
            )
            .map_err(|e| self.err(id, SupervisionStoreErrorKind::Decision(Box::new(e))))?;
        Ok(resolution)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::supervision::{DeviationAction, PlanOutcome, PlanStep, Question, QuestionOption};
    use orcho_core::FixedClock;

    fn setup() -> (tempfile::TempDir, Utf8PathBuf, FixedClock) {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::try_from(dir.path().to_owned()).unwrap();
        (
            dir,
            root,
            FixedClock::new("2026-11-21T12:00:00Z".parse().unwrap()),
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
        SupervisionStore::new(&root, run())
            .open(&id("questions-1"), questions(), &clock)
            .unwrap();

        let reopened = SupervisionStore::new(&root, run());
        let pending = reopened.pending().unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].touchpoint, questions());

        let answers = vec![Answer::select("JWT")];
        let first = reopened
            .answer(
                &id("questions-1"),
                answers.clone(),
                DecidedBy::Operator,
                &clock,
            )
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
                .answer(&id("questions-1"), answers, DecidedBy::Operator, &clock)
                .unwrap(),
            first
        );
        // Different answers: a conflict, and the first answers stand.
        let err = reopened
            .answer(
                &id("questions-1"),
                vec![Answer::select("OAuth")],
                DecidedBy::Operator,
                &clock,
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
        let store = SupervisionStore::new(&root, run());
        let plan = Plan::new("Add auth").with_step(PlanStep::new("coder", "Implement middleware"));
        store
            .open(
                &id("plan-1"),
                Touchpoint::PlanApproval { plan: plan.clone() },
                &clock,
            )
            .unwrap();
        let err = store
            .answer(
                &id("plan-1"),
                vec![Answer::select("Request Changes"), Answer::none()],
                DecidedBy::Operator,
                &clock,
            )
            .unwrap_err();
        insta::assert_snapshot!(orcho_core::error_chain(&err), @"supervision touchpoint `plan-1` of run `20261121T120000000Z-0000000000000001`: caused by: `request_changes` needs feedback text saying what to change");
        assert_eq!(store.pending().unwrap().len(), 1, "still pending");
        let resolution = store
            .answer(
                &id("plan-1"),
                vec![Answer::select("Request Changes"), Answer::text("split it")],
                DecidedBy::Operator,
                &clock,
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
        let store = SupervisionStore::new(&root, run());
        let touchpoint = Touchpoint::Deviation {
            deviation: Deviation::new(2, "Implement auth middleware", "Cannot find module")
                .with_retries(10),
            policy: DeviationPolicy::default(),
            spent: DeviationSpent::default(),
        };
        store.open(&id("deviation-1"), touchpoint, &clock).unwrap();
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
                    DecidedBy::Operator,
                    &clock
                )
                .is_err()
        );
        let r = store
            .answer(
                &id("deviation-1"),
                vec![Answer::select("Stop"), Answer::none()],
                DecidedBy::Operator,
                &clock,
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
        let store = SupervisionStore::new(&root, run());
        let first = store.open(&id("t-1"), questions(), &clock).unwrap();
        clock.advance(std::time::Duration::from_secs(5));
        assert_eq!(
            store.open(&id("t-1"), questions(), &clock).unwrap(),
            first,
            "replay keeps the first opening"
        );
        let plan = Touchpoint::PlanApproval {
            plan: Plan::new("x").with_step(PlanStep::new("a", "b")),
        };
        let err = store.open(&id("t-1"), plan, &clock).unwrap_err();
        insta::assert_snapshot!(orcho_core::error_chain(&err), @"supervision touchpoint `t-1` of run `20261121T120000000Z-0000000000000001`: caused by: the id is already used by a different planner_questions touchpoint");
        let missing = store.get(&id("t-2")).unwrap_err();
        assert!(matches!(
            missing.kind(),
            SupervisionStoreErrorKind::NotFound
        ));
    }

    #[test]
    fn touchpoint_document_shape() {
        let (_dir, root, clock) = setup();
        let store = SupervisionStore::new(&root, run());
        store.open(&id("questions-1"), questions(), &clock).unwrap();
        let text = std::fs::read_to_string(store.doc_path(&id("questions-1"))).unwrap();
        insta::assert_snapshot!(text);
    }
}
