//! [`RunState`]: where a run stands, as a [`Stage`] and the progress that
//! outlives every stage.

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{Cost, Finding, HandoffId, PhaseName, RunId, RunStatus, Verdict};
use orcho_gates::{GateRecord, PhaseOutcome};
use orcho_handoff::supervision::{Plan, Touchpoint};

use super::{
    event::{FollowUpOf, PauseTrigger, Release, Workspace},
    input::PhaseInput,
};

/// A phase attempt that was reported and whose gates are running.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct InFlight {
    /// What the host reported.
    pub outcome: PhaseOutcome,
    /// Its cost.
    pub cost: Cost,
    /// The gates recorded so far.
    pub records: Vec<GateRecord>,
    /// The merged acceptance, for final acceptance: the verdict that stands
    /// and the computed gaps.
    pub acceptance: Option<(Verdict, Vec<Finding>)>,
    /// The plan a planning phase reported.
    pub plan: Option<Plan>,
}

/// A settled attempt that pauses: what its phase handoff will show.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Pause {
    /// Why.
    pub trigger: PauseTrigger,
    /// The verdict the handoff shows.
    pub verdict: Verdict,
    /// The findings it shows.
    pub findings: Vec<Finding>,
}

/// Which kind of supervision touchpoint a run waits at: `questions`,
/// `plan_approval` or `deviation` in JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TouchpointKind {
    /// A planner's clarifying questions.
    Questions,
    /// A plan waiting for approval.
    PlanApproval,
    /// A failed step: retry, replan or stop.
    Deviation,
}

impl TouchpointKind {
    /// The kind of `touchpoint`.
    pub fn of(touchpoint: &Touchpoint) -> Self {
        match touchpoint {
            Touchpoint::PlannerQuestions { .. } => Self::Questions,
            Touchpoint::PlanApproval { .. } => Self::PlanApproval,
            _ => Self::Deviation,
        }
    }

    /// The status of a run waiting at a touchpoint of this kind.
    pub fn status(self) -> RunStatus {
        match self {
            Self::Questions => RunStatus::AwaitingQuestions,
            Self::PlanApproval => RunStatus::AwaitingPlanApproval,
            Self::Deviation => RunStatus::AwaitingDeviation,
        }
    }

    /// How it is named in messages: `planner questions`, `plan approval`,
    /// `deviation`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Questions => "planner questions",
            Self::PlanApproval => "plan approval",
            Self::Deviation => "deviation",
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Ending {
    /// Its final status: halted, completed, failed or cancelled.
    pub status: RunStatus,
    /// Why it ended.
    pub reason: String,
    /// Whether it ended by acting on its delivery decision.
    pub delivered: bool,
}

/// Where a run stands. Every variant carries what only that stage has, so a
/// state that breaks the run's rules cannot be built; the
/// [`status`](RunState::status) hosts see is derived from it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Stage {
    /// A run in a worktree, before pre-run intake looked at its target.
    Created,
    /// Waiting for the pre-run intake decision.
    AwaitingIntake,
    /// Ready for the next attempt of the current phase.
    Ready,
    /// An attempt was reported; its gates are running.
    Gating(Box<InFlight>),
    /// The attempt settled on a pause; its handoff is yet to be opened (a
    /// crash here reopens the same pause).
    Pausing(Pause),
    /// Paused at an open phase handoff.
    AtHandoff(HandoffId),
    /// A touchpoint was asked for and is yet to be opened (a crash here
    /// reopens the same question).
    Asking(Touchpoint),
    /// Paused at an open supervision touchpoint.
    AtTouchpoint {
        /// Its id.
        id: HandoffId,
        /// Its kind.
        kind: TouchpointKind,
    },
    /// At the release state: the delivery gate, opened once `opened`.
    AtDelivery {
        /// Whether the gate is open.
        opened: bool,
    },
    /// Ended. Terminal.
    Ended(Ending),
}

impl Stage {
    /// The status of a run at this stage.
    pub fn status(&self) -> RunStatus {
        match self {
            Self::Created => RunStatus::Created,
            Self::AwaitingIntake => RunStatus::AwaitingIntake,
            Self::Ready | Self::Gating(_) => RunStatus::Running,
            Self::Pausing(_) | Self::AtHandoff(_) => RunStatus::AwaitingPhaseHandoff,
            Self::Asking(touchpoint) => TouchpointKind::of(touchpoint).status(),
            Self::AtTouchpoint { kind, .. } => kind.status(),
            Self::AtDelivery { .. } => RunStatus::AwaitingDelivery,
            Self::Ended(ending) => ending.status,
        }
    }

    /// The stage's name, for messages.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::AwaitingIntake => "awaiting_intake",
            Self::Ready => "ready",
            Self::Gating(_) => "gating",
            Self::Pausing(_) => "pausing",
            Self::AtHandoff(_) => "at_handoff",
            Self::Asking(_) => "asking",
            Self::AtTouchpoint { .. } => "at_touchpoint",
            Self::AtDelivery { .. } => "at_delivery",
            Self::Ended(_) => "ended",
        }
    }
}

/// Where the run is in its phases: the current phase, attempt and round,
/// and the extra attempts decisions granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Cursor {
    /// The current phase (an index into the run's phases).
    pub phase: usize,
    /// The current attempt of the phase (1-based).
    pub attempt: u32,
    /// The current round (1-based; a replan advances it).
    pub round: u32,
    /// Extra attempts granted by decisions for the current phase.
    pub extra_attempts: u32,
}

impl Cursor {
    pub(crate) const START: Self = Self {
        phase: 0,
        attempt: 1,
        round: 1,
        extra_attempts: 0,
    };
}

/// A run's state, rebuilt from its journal: the [`Stage`] it is at and the
/// progress that outlives every stage (its cursor, what the next attempt
/// receives, costs, waivers, counters).
///
/// It changes only through [`apply`](Self::apply), a pure, consuming
/// transition that hands the state back inside its error.
#[derive(Debug, Clone, PartialEq)]
pub struct RunState {
    pub(crate) run: RunId,
    pub(crate) checkout: Utf8PathBuf,
    pub(crate) plan: String,
    pub(crate) phases: Vec<PhaseName>,
    pub(crate) workspace: Option<Workspace>,
    pub(crate) follow_up: Option<FollowUpOf>,
    pub(crate) task: Option<String>,
    pub(crate) seq: u64,
    pub(crate) stage: Stage,
    pub(crate) cursor: Cursor,
    /// The last attempt of each phase in this round, by phase index, kept
    /// once the round went back to an earlier phase (a feed); empty
    /// otherwise, when every phase starts at attempt 1.
    pub(crate) attempts: Vec<u32>,
    pub(crate) input: PhaseInput,
    pub(crate) receipts_rerun_at: Option<(usize, u32, u32)>,
    pub(crate) waivers: Vec<String>,
    pub(crate) handoffs_opened: u32,
    pub(crate) touchpoints_opened: u32,
    pub(crate) deviation_retries: u32,
    pub(crate) deviation_replans: u32,
    pub(crate) cost: Cost,
    pub(crate) base: Option<String>,
    pub(crate) release: Option<Release>,
}

impl RunState {
    orcho_core::getters! {
        /// The run.
        pub fn run(&self) -> &RunId;
        /// Where phases and gates run: the checkout, or the run's worktree.
        pub fn checkout(&self) -> &Utf8Path;
        /// The plan's name.
        pub fn plan(&self) -> &str;
        /// The phases, in order.
        pub fn phases(&self) -> &[PhaseName];
        /// The stage the run is at.
        pub fn stage(&self) -> &Stage;
    }

    /// Where the run stands, derived from its stage.
    pub fn status(&self) -> RunStatus {
        self.stage.status()
    }

    /// Why it ended, once it has.
    pub fn reason(&self) -> Option<&str> {
        match &self.stage {
            Stage::Ended(ending) => Some(&ending.reason),
            _ => None,
        }
    }

    /// How it ended, once it has.
    pub fn ending(&self) -> Option<&Ending> {
        match &self.stage {
            Stage::Ended(ending) => Some(ending),
            _ => None,
        }
    }

    orcho_core::getters! {
        /// The number of events applied.
        pub fn seq(&self) -> u64;
        /// The current phase, attempt and round.
        pub fn cursor(&self) -> Cursor;
    }

    /// The current phase's index.
    pub fn phase_index(&self) -> usize {
        self.cursor.phase
    }

    /// The current attempt of the phase (1-based).
    pub fn attempt(&self) -> u32 {
        self.cursor.attempt
    }

    /// The current round (1-based).
    pub fn round(&self) -> u32 {
        self.cursor.round
    }

    /// The current phase's name, if the run is not past its last phase.
    pub fn current_phase(&self) -> Option<&PhaseName> {
        self.phases.get(self.cursor.phase)
    }

    /// What the next attempt receives.
    pub fn input(&self) -> &PhaseInput {
        &self.input
    }

    /// The attempt whose gates are running, if any.
    pub fn in_flight(&self) -> Option<&InFlight> {
        match &self.stage {
            Stage::Gating(flight) => Some(flight),
            _ => None,
        }
    }

    /// The open phase handoff, if paused at one.
    pub fn handoff(&self) -> Option<&HandoffId> {
        match &self.stage {
            Stage::AtHandoff(id) => Some(id),
            _ => None,
        }
    }

    /// The pause whose handoff is not opened yet, if any.
    pub fn pending_pause(&self) -> Option<&Pause> {
        match &self.stage {
            Stage::Pausing(pause) => Some(pause),
            _ => None,
        }
    }

    /// The touchpoint asked for and not opened yet, if any.
    pub fn pending_touchpoint(&self) -> Option<&Touchpoint> {
        match &self.stage {
            Stage::Asking(touchpoint) => Some(touchpoint),
            _ => None,
        }
    }

    /// The open supervision touchpoint, if paused at one.
    pub fn touchpoint(&self) -> Option<&HandoffId> {
        match &self.stage {
            Stage::AtTouchpoint { id, .. } => Some(id),
            _ => None,
        }
    }

    orcho_core::getters! {
        /// The (phase, round, attempt) whose receipts were re-run before final
        /// acceptance.
        pub fn receipts_rerun_at(&self) -> Option<(usize, u32, u32)>;
        /// Reasons of the waivers granted so far.
        pub fn waivers(&self) -> &[String];
        /// How many phase handoffs the run has opened.
        pub fn handoffs_opened(&self) -> u32;
        /// How many touchpoints the run has opened.
        pub fn touchpoints_opened(&self) -> u32;
        /// Deviation retries granted so far.
        pub fn deviation_retries(&self) -> u32;
        /// Deviation replans granted so far.
        pub fn deviation_replans(&self) -> u32;
        /// What the run has cost so far (phases and gates).
        pub fn cost(&self) -> Cost;
    }

    /// For a run that delivers: its worktree and target.
    pub fn workspace(&self) -> Option<&Workspace> {
        self.workspace.as_ref()
    }

    /// The commit the worktree started from, once ready.
    pub fn base(&self) -> Option<&str> {
        self.base.as_deref()
    }

    /// What the run was started to do, if it was told.
    pub fn task(&self) -> Option<&str> {
        self.task.as_deref()
    }

    /// For a correction follow-up: its parent.
    pub fn follow_up(&self) -> Option<&FollowUpOf> {
        self.follow_up.as_ref()
    }

    /// The latest release verdict of final acceptance.
    pub fn release(&self) -> Option<&Release> {
        self.release.as_ref()
    }

    /// Whether the delivery gate has been opened.
    pub fn delivery_opened(&self) -> bool {
        match &self.stage {
            Stage::AtDelivery { opened } => *opened,
            Stage::Ended(ending) => ending.delivered,
            _ => false,
        }
    }
}
