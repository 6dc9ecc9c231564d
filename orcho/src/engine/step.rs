//! What the engine tells a host to do next.

use orcho_core::{Cost, HandoffId, PhaseName, RunId, RunStatus, Verdict};
use orcho_delivery::{DeliveryGate, IntakeReport};
use orcho_gates::PhaseOutcome;
use orcho_handoff::{
    handoff::PhaseHandoff,
    supervision::{Deviation, Plan, QuestionBatch, Touchpoint},
};

use crate::{plan::PhaseRole, state::PhaseInput};

/// The next thing a run needs from its host.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Step {
    /// Run this phase attempt, then report it with
    /// [`Run::complete_phase`](crate::Run::complete_phase).
    RunPhase(PhaseRequest),
    /// A phase handoff is open: show it, get a decision recorded with
    /// [`Store::decide`](crate::Store::decide), then
    /// [`Run::resume`](crate::Run::resume) (which returns this step again
    /// while nobody has decided).
    DecideHandoff(PhaseHandoff),
    /// The target checkout has uncommitted changes: decide what the run
    /// starts from with [`Store::decide_intake`](crate::Store::decide_intake),
    /// then [`Run::resume`](crate::Run::resume).
    DecideIntake(IntakeReport),
    /// The planner asked questions: record answers with
    /// [`Store::answer`](crate::Store::answer), then
    /// [`Run::resume`](crate::Run::resume); the same attempt runs again with
    /// the answers.
    AnswerQuestions(SupervisionRequest),
    /// A plan waits for approval: answer with
    /// [`Store::answer`](crate::Store::answer), then
    /// [`Run::resume`](crate::Run::resume).
    ApprovePlan(SupervisionRequest),
    /// A step failed: retry, replan or stop, answered with
    /// [`Store::answer`](crate::Store::answer), then
    /// [`Run::resume`](crate::Run::resume).
    HandleDeviation(SupervisionRequest),
    /// The run reached its release state: decide delivery with
    /// [`Store::decide_delivery`](crate::Store::decide_delivery), then
    /// [`Run::resume`](crate::Run::resume) delivers.
    DecideDelivery(DeliveryGate),
    /// The run has ended.
    Finished {
        /// Its final status.
        status: RunStatus,
        /// Why.
        reason: String,
    },
}

impl Step {
    /// The decision point the run waits at, for a step that is one: what
    /// tells "still waiting here" from "moved on" after
    /// [`Run::resume`](crate::Run::resume).
    pub fn waiting(&self) -> Option<crate::Waiting> {
        Some(match self {
            Self::DecideHandoff(handoff) => crate::Waiting::PhaseHandoff {
                id: Some(handoff.id().clone()),
            },
            Self::DecideIntake(_) => crate::Waiting::Intake,
            Self::AnswerQuestions(request)
            | Self::ApprovePlan(request)
            | Self::HandleDeviation(request) => crate::Waiting::Touchpoint {
                id: Some(request.id.clone()),
                kind: crate::TouchpointKind::of(&request.touchpoint),
            },
            Self::DecideDelivery(_) => crate::Waiting::Delivery,
            Self::RunPhase(_) | Self::Finished { .. } => return None,
        })
    }
}

/// A supervision touchpoint for the host to render: its questions follow
/// the one question schema (a header, options, `multi_select`, `custom`).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SupervisionRequest {
    /// The run.
    pub run: RunId,
    /// The touchpoint's id, for [`Store::answer`](crate::Store::answer).
    pub id: HandoffId,
    /// The phase that asked.
    pub phase: Option<PhaseName>,
    /// What is asked, typed.
    pub touchpoint: Touchpoint,
    /// The questions to render.
    pub questions: QuestionBatch,
}

/// Why a host stopped a phase attempt to ask the operator.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Interruption {
    /// The planner needs answers before it can plan.
    Questions(QuestionBatch),
    /// A step of the phase failed; the operator chooses retry, replan or
    /// stop (the engine sets the retries already spent).
    Deviation(Deviation),
}

/// One phase attempt for the host to run.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PhaseRequest {
    /// The run.
    pub run: RunId,
    /// The phase.
    pub phase: PhaseName,
    /// Its role.
    pub role: PhaseRole,
    /// The attempt (1-based; counts retries granted by decisions too).
    pub attempt: u32,
    /// The round (1-based; a replan advances it).
    pub round: u32,
    /// What the attempt receives: fed-in failures, critique, feedback,
    /// waivers, and for final acceptance the readiness summary.
    pub input: PhaseInput,
    /// The permission rules the phase's session runs under (the plan's
    /// [`permissions`](crate::RunPlan::permissions)): what a host enforces
    /// on the agent's tool calls, e.g. through an agent's hooks. `None`: no
    /// rules.
    pub permissions: Option<orcho_permissions::RuleSet>,
    /// Whether the phase may not change the checkout
    /// ([`PhasePlan::read_only`](crate::PhasePlan::read_only)): the engine
    /// rejects an attempt that did, and takes its change back out.
    pub read_only: bool,
}

/// What the host reports after running a phase attempt.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PhaseReport {
    /// The verdict, findings and summary.
    pub outcome: PhaseOutcome,
    /// What the attempt cost.
    pub cost: Cost,
    /// The plan a planning phase produced (plan approval shows it).
    pub plan: Option<Plan>,
    /// Set when the attempt stopped to ask the operator instead of
    /// finishing: no gates run and the attempt is not spent.
    pub interruption: Option<Interruption>,
}

impl PhaseReport {
    /// A report of `outcome` with no cost.
    pub fn new(outcome: PhaseOutcome) -> Self {
        Self {
            outcome,
            cost: Cost::default(),
            plan: None,
            interruption: None,
        }
    }

    /// A report of an attempt that stopped to ask the operator.
    pub fn interrupted(interruption: Interruption) -> Self {
        Self {
            interruption: Some(interruption),
            ..Self::new(PhaseOutcome::new(Verdict::Incomplete))
        }
    }
}

impl PhaseReport {
    orcho_core::setters! {
        /// Attaches the plan a planning phase produced.
        pub fn with_plan(plan: Some(Plan));
        /// Sets the cost.
        pub fn with_cost(cost: Cost);
    }
}
