//! The open decision point of a run, as every host shows it.
//!
//! A [`PointView`] says what waits (one line), which actions are on offer
//! and what each does, which of them need a note, and what the decision is
//! pinned to by digest. A host renders it: a command line as a menu, a web
//! page as a form, an MCP server as JSON. None of them matches point kinds
//! or [`Step`] variants to build it, so a new kind of decision point is
//! added here, with its tests, and every host shows it unchanged.
//!
//! Deciding by name goes through the same view: [`PointView::decision`]
//! turns an action's name and its note into the typed
//! [`Decision`] that
//! [`decide`](crate::decide::decide) records, with the note rules of the
//! action.
//!
//! ```no_run
//! # fn host(store: &orcho::Store, run: &orcho::core::RunId) -> Result<(), Box<dyn std::error::Error>> {
//! use orcho::handoff::decision::DecidedBy;
//!
//! if let Some(point) = store.open_point(run)? {
//!     println!("{}: {}", point.kind, point.headline);
//!     for action in &point.actions {
//!         println!("  {:<22} {}", action.name, action.does);
//!     }
//!     let decision = point.decision("halt", None)?;
//!     orcho::decide::decide(store, run, decision, DecidedBy::Operator)?;
//! }
//! # Ok(()) }
//! ```

use std::fmt;

use orcho_core::{Digest, HandoffId, PhaseName, RunId};
use orcho_delivery::{DeliveryGate, IntakeReport};
use orcho_handoff::{
    DeliveryAction, HandoffAction, IntakeAction,
    handoff::{HandoffTrigger, PhaseHandoff},
    point::Action as _,
    supervision::{DeviationAction, Touchpoint},
};
use serde::Serialize;

use crate::{
    EngineError, Step, Store, TouchpointKind, Waiting,
    decide::{DecideError, Decision, PlanVerdict},
};

/// The kinds of decision point a run can wait at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PointKind {
    /// Pre-run intake: what to do with the target's uncommitted changes.
    Intake,
    /// A phase handoff: a phase's verdict waits for a person.
    Handoff,
    /// A plan waits for approval.
    PlanApproval,
    /// The planner asks questions before it plans.
    PlannerQuestions,
    /// A step of the plan failed.
    Deviation,
    /// The delivery gate: what becomes of the run's diff.
    Delivery,
    /// An agent a phase runs asks to use a tool the rules answer `ask`
    /// for; the run goes on, the agent waits.
    Permission,
}

impl PointKind {
    /// How messages name it: `intake`, `handoff`, `plan approval`, `planner
    /// questions`, `deviation`, `delivery`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Intake => "intake",
            Self::Handoff => "handoff",
            Self::PlanApproval => "plan approval",
            Self::PlannerQuestions => "planner questions",
            Self::Deviation => "deviation",
            Self::Delivery => "delivery",
            Self::Permission => "permission",
        }
    }

    /// Every kind, in the order a run meets them.
    pub const ALL: [Self; 7] = [
        Self::Intake,
        Self::PlannerQuestions,
        Self::PlanApproval,
        Self::Permission,
        Self::Handoff,
        Self::Deviation,
        Self::Delivery,
    ];

    /// The name a filter or a URL gives it: `intake`, `handoff`,
    /// `plan_approval`, `planner_questions`, `deviation`, `delivery`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Intake => "intake",
            Self::Handoff => "handoff",
            Self::PlanApproval => "plan_approval",
            Self::PlannerQuestions => "planner_questions",
            Self::Deviation => "deviation",
            Self::Delivery => "delivery",
            Self::Permission => "permission",
        }
    }

    /// The kind of a point the inbox lists.
    pub fn of_pending(point: &orcho_handoff::inbox::PendingPoint) -> Option<Self> {
        use orcho_handoff::inbox::PendingPoint;
        Some(match point {
            PendingPoint::PhaseHandoff { .. } => Self::Handoff,
            PendingPoint::Delivery { .. } => Self::Delivery,
            PendingPoint::Intake { .. } => Self::Intake,
            PendingPoint::Permission { .. } => Self::Permission,
            PendingPoint::Touchpoint { kind, .. } => {
                return Self::ALL
                    .into_iter()
                    .find(|k| k.name() == *kind && k.is_touchpoint());
            }
            _ => return None,
        })
    }

    fn is_touchpoint(self) -> bool {
        matches!(
            self,
            Self::PlanApproval | Self::PlannerQuestions | Self::Deviation
        )
    }

    /// The kind of a supervision touchpoint.
    fn of_touchpoint(kind: TouchpointKind) -> Self {
        match kind {
            TouchpointKind::Questions => Self::PlannerQuestions,
            TouchpointKind::PlanApproval => Self::PlanApproval,
            TouchpointKind::Deviation => Self::Deviation,
        }
    }
}

impl std::str::FromStr for PointKind {
    type Err = UnknownKind;

    /// A kind by its [`name`](Self::name), or as messages say it (`plan
    /// approval`, `plan-approval`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let given = s.trim().to_lowercase().replace([' ', '-'], "_");
        Self::ALL
            .into_iter()
            .find(|k| k.name() == given)
            .ok_or_else(|| UnknownKind {
                given: s.to_owned(),
                near: orcho_core::nearest(&given, Self::ALL.iter().map(|k| k.name()))
                    .or_else(|| {
                        // A part of the name: `plan`, `questions`.
                        Self::ALL
                            .iter()
                            .map(|k| k.name())
                            .find(|k| !given.is_empty() && k.split('_').any(|part| part == given))
                    })
                    .map(str::to_owned),
            })
    }
}

/// A name that is no kind of decision point.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{given}` is no kind of decision point{}; the kinds: intake, planner_questions, plan_approval, permission, handoff, deviation, delivery",
    near.as_ref().map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default()
)]
#[non_exhaustive]
pub struct UnknownKind {
    /// What was given.
    pub given: String,
    /// The nearest kind's name.
    pub near: Option<String>,
}

impl fmt::Display for PointKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether an action takes a note, and what the note is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "note", content = "what", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Note {
    /// It takes none: a note given is refused, never dropped.
    None,
    /// It may have one: what it is.
    Optional(&'static str),
    /// It needs one: what it is.
    Required(&'static str),
}

impl Note {
    /// What the note is, when the action takes one.
    pub fn what(self) -> Option<&'static str> {
        match self {
            Self::None => None,
            Self::Optional(what) | Self::Required(what) => Some(what),
        }
    }

    /// Whether the action needs a note.
    pub fn required(self) -> bool {
        matches!(self, Self::Required(_))
    }
}

/// One action on offer at a decision point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ActionView {
    /// Its name, as a decision names it (`retry_feedback`, `approve`).
    pub name: String,
    /// What it does, in one line.
    pub does: String,
    /// Whether it takes a note.
    pub note: Note,
}

impl ActionView {
    fn new(name: impl Into<String>, does: impl Into<String>, note: Note) -> Self {
        Self {
            name: name.into(),
            does: does.into(),
            note,
        }
    }
}

/// What a decision is pinned to: refused when it changed since the point
/// was shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Pinned {
    /// What is pinned: `plan` (the plan under approval) or `patch` (the
    /// diff the delivery gate offers).
    pub what: &'static str,
    /// Its digest.
    pub digest: Digest,
}

/// A question of a supervision touchpoint, with the options an answer
/// names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct QuestionView {
    /// A short header.
    pub header: String,
    /// The question.
    pub question: String,
    /// The options' labels, in order (none: the answer is free text).
    pub options: Vec<String>,
    /// Whether several options may be chosen.
    pub multiple: bool,
}

/// A run's open decision point: what waits, the actions with one line each
/// and their note rules, what a decision is pinned to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PointView {
    /// The run.
    pub run: RunId,
    /// The kind of point.
    pub kind: PointKind,
    /// The handoff's or touchpoint's id (the intake question and the
    /// delivery gate are one per run: none).
    pub id: Option<HandoffId>,
    /// The phase it is about, when it is about one.
    pub phase: Option<PhaseName>,
    /// What waits, in one line.
    pub headline: String,
    /// The actions on offer, in menu order.
    pub actions: Vec<ActionView>,
    /// The questions a touchpoint asks (planner questions: answered one by
    /// one; plan approval and deviation: their action is the first).
    pub questions: Vec<QuestionView>,
    /// What a decision is pinned to.
    pub pinned: Vec<Pinned>,
    /// What the point is about, as findings: a handoff's, the most severe
    /// first as the phase and its gates reported them.
    pub findings: Vec<orcho_core::Finding>,
}

impl PointView {
    /// The point `step` waits at; `None` for a step that is no decision
    /// point (a phase to run, a finished run).
    pub fn of(run: &RunId, step: &Step) -> Option<Self> {
        Some(match step {
            Step::DecideHandoff(handoff) => Self::handoff(run, handoff),
            Step::DecideIntake(report) => Self::intake(run, report),
            Step::DecideDelivery(gate) => Self::delivery(run, gate),
            Step::AnswerQuestions(request)
            | Step::ApprovePlan(request)
            | Step::HandleDeviation(request) => {
                Self::touchpoint(run, &request.id, request.phase.clone(), &request.touchpoint)
            }
            Step::RunPhase(_) | Step::Finished { .. } => return None,
        })
    }

    /// The view of `handoff`, open or not (a host showing a handoff it
    /// holds).
    pub fn of_handoff(handoff: &PhaseHandoff) -> Self {
        Self::handoff(handoff.run(), handoff)
    }

    /// The view of `run`'s delivery gate `gate`.
    pub fn of_gate(run: &RunId, gate: &DeliveryGate) -> Self {
        Self::delivery(run, gate)
    }

    /// The action named `name` (any ASCII case).
    ///
    /// # Errors
    ///
    /// [`DecideError::UnknownAction`] naming the actions on offer, and the
    /// nearest one to a slip.
    pub fn action(&self, name: &str) -> Result<&ActionView, DecideError> {
        self.actions
            .iter()
            .find(|a| a.name.eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| {
                let offered: Vec<String> = self.actions.iter().map(|a| a.name.clone()).collect();
                DecideError::UnknownAction {
                    point: self.kind,
                    given: name.to_owned(),
                    nearest: orcho_core::nearest(name, offered.iter().map(String::as_str))
                        .map(str::to_owned),
                    offered,
                }
            })
    }

    /// Checks that the point a person or a client decides on is the one
    /// open now: `id` the handoff or touchpoint id it was shown, `digest`
    /// what it pinned (the plan's, the patch's). What is not given is not
    /// checked.
    ///
    /// # Errors
    ///
    /// [`DecideError::PointMoved`] when the run waits at another point
    /// than the one shown (a form loaded at `0001-review` and sent once
    /// the run reached `0002-review`), [`DecideError::Stale`] when what was
    /// pinned changed since, [`DecideError::NothingPinned`] for a digest
    /// given to a point that pins none.
    pub fn check_seen(&self, id: Option<&str>, digest: Option<&str>) -> Result<(), DecideError> {
        if let Some(seen) = id.map(str::trim) {
            let open = self.id.as_ref().map(HandoffId::as_str);
            if open != Some(seen) {
                return Err(DecideError::PointMoved {
                    seen: seen.to_owned(),
                    open: open.map_or_else(|| self.kind.to_string(), str::to_owned),
                });
            }
        }
        if let Some(seen) = digest.map(str::trim) {
            let Some(pinned) = self.pinned.first() else {
                return Err(DecideError::NothingPinned {
                    point: self.kind,
                    seen: seen.to_owned(),
                });
            };
            let now = pinned.digest.to_string();
            if now != seen {
                return Err(DecideError::Stale {
                    what: pinned.what,
                    seen: seen.to_owned(),
                    now,
                });
            }
        }
        Ok(())
    }

    /// The decision of action `name` with `note`, by the note rules of the
    /// action: a required note must say something, and a note given to an
    /// action that takes none is refused (never dropped). Planner
    /// questions take `answer`, its note one answer per line. A delivery
    /// decision is pinned to the patch shown.
    ///
    /// # Errors
    ///
    /// An action not on offer, or a note against its rules.
    pub fn decision(&self, name: &str, note: Option<String>) -> Result<Decision, DecideError> {
        let action = self.action(name)?;
        let note = note.filter(|n| !n.trim().is_empty());
        match (action.note, &note) {
            (Note::Required(what), None) => {
                return Err(DecideError::NoteRequired {
                    action: action.name.clone(),
                    what,
                });
            }
            (Note::None, Some(_)) => {
                return Err(DecideError::NoteRefused {
                    action: action.name.clone(),
                });
            }
            _ => {}
        }
        let name = action.name.as_str();
        let unknown = || self.action("").unwrap_err();
        Ok(match self.kind {
            PointKind::Handoff => Decision::Handoff {
                handoff: self.id.clone(),
                action: HandoffAction::parse(name).map_err(|_| unknown())?,
                text: note,
                advice: None,
            },
            PointKind::Delivery => Decision::Delivery {
                action: DeliveryAction::parse(name).map_err(|_| unknown())?,
                message: None,
                note,
                patch: self
                    .pinned
                    .iter()
                    .find(|p| p.what == "patch")
                    .map(|p| p.digest),
            },
            PointKind::Intake => Decision::Intake {
                action: IntakeAction::parse(name).map_err(|_| unknown())?,
                message: note,
            },
            PointKind::PlanApproval => Decision::Plan {
                verdict: match name {
                    "approve" => PlanVerdict::Approve,
                    "request_changes" => PlanVerdict::RequestChanges,
                    _ => PlanVerdict::Reject,
                },
                feedback: note,
            },
            PointKind::PlannerQuestions => Decision::Questions {
                answers: note
                    .as_deref()
                    .unwrap_or_default()
                    .lines()
                    .map(str::to_owned)
                    .collect(),
            },
            PointKind::Deviation => Decision::Deviation {
                action: match name {
                    "retry" => DeviationAction::Retry,
                    "replan" => DeviationAction::Replan,
                    _ => DeviationAction::Stop,
                },
                note,
            },
            PointKind::Permission => Decision::Permission {
                id: self.id.clone(),
                action: orcho_handoff::ask::AskAction::parse(name).map_err(|_| unknown())?,
                note,
            },
        })
    }

    /// The view of an agent's permission question.
    pub fn permission(run: &RunId, asked: &orcho_handoff::ask::Asked) -> Self {
        use orcho_handoff::ask::AskAction;
        let q = &asked.question;
        let actions = AskAction::ALL
            .iter()
            .map(|action| {
                let note = match action {
                    AskAction::Allow => Note::Optional("a note for the record"),
                    AskAction::Deny => Note::Optional("what the agent should do instead"),
                };
                ActionView::new(action.as_str(), action.description(), note)
            })
            .collect();
        Self {
            run: run.clone(),
            kind: PointKind::Permission,
            id: Some(asked.id.clone()),
            phase: q.phase.parse().ok(),
            headline: format!(
                "{} in `{}` asks to use {} on `{}` ({}); it is denied if nobody answers within {}",
                orcho_handoff::ask::shown(&q.agent),
                orcho_handoff::ask::shown(&q.phase),
                orcho_handoff::ask::shown(&q.tool),
                q.subject_shown(),
                orcho_handoff::ask::shown(&q.rule),
                orcho_handoff::ask::in_words(q.timeout())
            ),
            actions,
            questions: Vec::new(),
            pinned: Vec::new(),
            findings: Vec::new(),
        }
    }

    fn handoff(run: &RunId, handoff: &PhaseHandoff) -> Self {
        let phase = handoff.phase();
        let actions = handoff
            .available_actions()
            .iter()
            .map(|action| {
                let (does, note) = match action {
                    HandoffAction::RetryFeedback => (
                        format!("run `{phase}` again with your feedback"),
                        Note::Required("the feedback for the next attempt"),
                    ),
                    HandoffAction::ContinueWithWaiver => (
                        action.description().to_owned(),
                        Note::Required("why the findings are a risk to accept"),
                    ),
                    // `continue` and `halt`: why, for the record.
                    _ => (
                        action.description().to_owned(),
                        Note::Optional("why, kept with the decision"),
                    ),
                };
                ActionView::new(action.as_str(), does, note)
            })
            .collect();
        Self {
            run: run.clone(),
            kind: PointKind::Handoff,
            id: Some(handoff.id().clone()),
            phase: Some(phase.clone()),
            headline: match handoff.trigger() {
                HandoffTrigger::Gate(gate) => format!(
                    "phase `{phase}` {}: its gate `{gate}` failed",
                    handoff.verdict()
                ),
                HandoffTrigger::AlwaysPause => format!(
                    "phase `{phase}` {}; the profile pauses after every attempt",
                    handoff.verdict()
                ),
                _ => format!("phase `{phase}` {}", handoff.verdict()),
            },
            actions,
            questions: Vec::new(),
            pinned: Vec::new(),
            findings: handoff.findings().to_vec(),
        }
    }

    fn intake(run: &RunId, report: &IntakeReport) -> Self {
        let actions = IntakeAction::ALL
            .iter()
            .map(|action| {
                let note = match action {
                    IntakeAction::Commit => Note::Optional("the commit message"),
                    _ => Note::None,
                };
                ActionView::new(action.as_str(), action.description(), note)
            })
            .collect();
        Self {
            run: run.clone(),
            kind: PointKind::Intake,
            id: None,
            phase: None,
            headline: format!(
                "{} has uncommitted changes: {} tracked file(s) changed, {} untracked",
                report.checkout(),
                report.tracked().len(),
                report.untracked().len()
            ),
            actions,
            questions: Vec::new(),
            pinned: Vec::new(),
            findings: Vec::new(),
        }
    }

    fn delivery(run: &RunId, gate: &DeliveryGate) -> Self {
        let actions = gate
            .available_actions()
            .iter()
            .map(|action| {
                let note = match action {
                    DeliveryAction::Fix => Note::Optional("what the follow-up run fixes"),
                    _ => Note::Optional("a note for the record"),
                };
                ActionView::new(action.as_str(), action.description(), note)
            })
            .collect();
        Self {
            run: run.clone(),
            kind: PointKind::Delivery,
            id: None,
            phase: None,
            headline: format!(
                "release {}: {} file(s) changed, to deliver to {}",
                gate.verdict(),
                gate.diff().files_changed(),
                gate.target()
            ),
            actions,
            questions: Vec::new(),
            pinned: vec![Pinned {
                what: "patch",
                digest: gate.patch_digest(),
            }],
            findings: Vec::new(),
        }
    }

    fn touchpoint(
        run: &RunId,
        id: &HandoffId,
        phase: Option<PhaseName>,
        touchpoint: &Touchpoint,
    ) -> Self {
        let kind = PointKind::of_touchpoint(TouchpointKind::of(touchpoint));
        let questions: Vec<QuestionView> = touchpoint
            .questions()
            .map(|batch| {
                batch
                    .questions()
                    .iter()
                    .map(|q| QuestionView {
                        header: q.header().to_owned(),
                        question: q.question().to_owned(),
                        options: q.options().iter().map(|o| o.label.clone()).collect(),
                        multiple: q.multiple(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let (headline, actions, pinned) = match touchpoint {
            Touchpoint::PlanApproval { plan } => (
                format!("the plan waits for approval: {}", plan.goal),
                first_options(touchpoint, |label| match label {
                    "request_changes" => Note::Required("what the planner changes"),
                    "approve" => Note::Optional("feedback for the phases that carry it out"),
                    _ => Note::Optional("why"),
                }),
                vec![Pinned {
                    what: "plan",
                    digest: plan.digest(),
                }],
            ),
            Touchpoint::PlannerQuestions { .. } => (
                format!("the planner asks {} question(s)", questions.len()),
                vec![ActionView::new(
                    "answer",
                    "answer the questions; the planner runs again with the answers",
                    Note::Required("one answer per question, one per line"),
                )],
                Vec::new(),
            ),
            Touchpoint::Deviation { deviation, .. } => (
                format!(
                    "step {} failed ({}): {}",
                    deviation.step, deviation.description, deviation.error
                ),
                first_options(touchpoint, |label| match label {
                    "retry" => Note::Optional("guidance for the retry"),
                    _ => Note::Optional("a note for the record"),
                }),
                Vec::new(),
            ),
        };
        Self {
            run: run.clone(),
            kind,
            id: Some(id.clone()),
            phase,
            headline,
            actions,
            questions,
            pinned,
            findings: Vec::new(),
        }
    }
}

/// The actions a touchpoint's first question offers, named in snake case
/// from their labels, with the option's description.
fn first_options(touchpoint: &Touchpoint, note: impl Fn(&str) -> Note) -> Vec<ActionView> {
    let Ok(batch) = touchpoint.questions() else {
        return Vec::new();
    };
    batch
        .questions()
        .first()
        .map(|q| {
            q.options()
                .iter()
                .map(|o| {
                    let name = o.label.to_ascii_lowercase().replace(' ', "_");
                    let does = o.description.clone().unwrap_or_else(|| o.label.clone());
                    let rule = note(&name);
                    ActionView::new(name, does, rule)
                })
                .collect()
        })
        .unwrap_or_default()
}

impl Store {
    /// The decision point `run` waits at and nobody decided yet, read from
    /// the store (no plan needed): `None` when it waits at none, at one not
    /// yet opened, or at one decided and not yet acted on.
    ///
    /// # Errors
    ///
    /// An unknown run, or a point that cannot be read.
    pub fn open_point(&self, run: &RunId) -> Result<Option<PointView>, EngineError> {
        self.open_point_of(&self.status(run)?)
    }

    /// [`open_point`](Self::open_point) of a run whose view the host has
    /// read already (a page of [`team_inbox_page`](Self::team_inbox_page)
    /// holds them): one read of the run fewer.
    ///
    /// # Errors
    ///
    /// When the point's documents cannot be read.
    pub fn open_point_of(&self, view: &crate::RunView) -> Result<Option<PointView>, EngineError> {
        let run = &view.run;
        if view.status.is_terminal() {
            return Ok(None);
        }
        // An agent of the running phase asks: its oldest open question.
        if view.status == orcho_core::RunStatus::Running
            && let Some(asked) = self.asks(run)?.into_iter().find(|a| a.is_pending())
        {
            return Ok(Some(PointView::permission(run, &asked)));
        }
        Ok(match view.waiting.clone() {
            Some(Waiting::Intake) if self.intake_decision(run)?.is_none() => {
                Some(PointView::intake(run, &self.intake_report(run)?))
            }
            Some(Waiting::PhaseHandoff { id: Some(id) })
                if self.handoff_decision(run, &id)?.is_none() =>
            {
                self.handoffs(run)?
                    .iter()
                    .find(|h| h.id() == &id)
                    .map(|h| PointView::handoff(run, h))
            }
            Some(Waiting::Touchpoint { id: Some(id), .. }) => self
                .touchpoints(run)?
                .into_iter()
                .find(|t| t.id == id && t.resolution.is_none())
                .map(|t| PointView::touchpoint(run, &t.id, view.phase.clone(), &t.touchpoint)),
            Some(Waiting::Delivery) if self.delivery_decision(run)?.is_none() => {
                match self.deliveries.gate(run) {
                    Ok(gate) => Some(PointView::delivery(run, &gate)),
                    // The run reached its gate and is writing it: nothing
                    // to decide yet.
                    Err(e) if e.is_not_found() => None,
                    Err(e) => {
                        return Err(EngineError::run(
                            run,
                            crate::error::EngineErrorKind::Delivery(Box::new(e)),
                        ));
                    }
                }
            }
            _ => None,
        })
    }
}
