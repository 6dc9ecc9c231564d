//! Schema 1 of the run store: the journal's lines and the snapshot, as
//! their own types. The domain types ([`RunEvent`], [`RunState`]) convert
//! to and from these, so changing a domain type never changes what is on
//! disk by accident.

use camino::Utf8PathBuf;
use orcho_core::{
    Cost, Finding, HandoffId, PhaseName, RunId, RunStatus, SchemaVersion, Timestamp, Verdict,
    schema::Document,
};
use orcho_handoff::{DeliveryAction, decision::DecidedBy};
use serde::{Deserialize, Serialize};

use super::{
    gates::{GateFailureV1, GateRecordV1, PhaseOutcomeV1},
    touchpoint::{PlanV1, TouchpointV1},
};
use crate::state::{
    Cursor, Ending, FollowUpOf, InFlight, Pause, PauseTrigger, PhaseInput, Release, Resumption,
    RunEvent, RunState, Stage, Supervised, TouchpointKind, Transition, Workspace,
};

/// The newest schema of run journals and snapshots: what this build reads.
///
/// Version 1: the first format. Touchpoints and plans inside events are
/// the journal's own types ([`TouchpointV1`], [`PlanV1`]), written as
/// `orcho-handoff`'s touchpoint format was when version 1 was made.
///
/// Version 2 adds two optional fields: a run's task (`task` on `started`
/// and in the snapshot) and a failed step's input (`deviation` in the
/// snapshot's `input`). A line or snapshot that holds neither is written as
/// version 1, so an older build reads every run that does not use them, and
/// refuses, as newer, one that does.
pub(crate) const RUN_SCHEMA: SchemaVersion = SchemaVersion::new(2);

const FIRST: SchemaVersion = SchemaVersion::new(1);

impl EventLineV1 {
    /// The line of event `seq`, at `at`, with the schema its event needs.
    pub(crate) fn new(seq: u64, at: Timestamp, event: &RunEvent) -> Self {
        let event = EventV1::from(event);
        Self {
            schema: event.schema(),
            seq,
            at,
            event,
        }
    }
}

impl HostDocV1 {
    /// The schema `host.json` is written with: it has not changed.
    pub(crate) const WRITTEN: SchemaVersion = FIRST;
}

impl EventV1 {
    /// The schema a line holding this event is written with.
    pub(crate) fn schema(&self) -> SchemaVersion {
        match self {
            Self::Started { task: Some(_), .. } => RUN_SCHEMA,
            _ => FIRST,
        }
    }
}

impl StateV1 {
    /// The schema a snapshot of this state is written with.
    pub(crate) fn schema(&self) -> SchemaVersion {
        if self.task.is_some() || self.input.deviation.is_some() {
            RUN_SCHEMA
        } else {
            FIRST
        }
    }
}

/// One line of `journal.jsonl`: `schema`, `seq`, `at`, `event`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EventLineV1 {
    pub(crate) schema: SchemaVersion,
    pub(crate) seq: u64,
    pub(crate) at: Timestamp,
    pub(crate) event: EventV1,
}

/// An event, tagged by `kind`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum EventV1 {
    Started {
        checkout: Utf8PathBuf,
        plan: String,
        phases: Vec<PhaseName>,
        workspace: Option<WorkspaceV1>,
        follow_up: Option<FollowUpOfV1>,
        /// Version 2.
        task: Option<String>,
    },
    IntakeOpened,
    IntakeHalted,
    WorkspaceReady {
        base: String,
        intake: Option<String>,
    },
    ReceiptsRerun {
        commands: Vec<String>,
    },
    PhaseReported {
        phase: PhaseName,
        attempt: u32,
        round: u32,
        outcome: PhaseOutcomeV1,
        cost: Cost,
        plan: Option<PlanV1>,
    },
    PhaseInterrupted {
        phase: PhaseName,
        attempt: u32,
        cost: Cost,
        touchpoint: TouchpointV1,
    },
    GateRecorded {
        record: GateRecordV1,
    },
    AcceptanceMerged {
        reviewer: Verdict,
        verdict: Verdict,
        gaps: Vec<Finding>,
    },
    PhaseSettled {
        effect: String,
        transition: TransitionV1,
    },
    HandoffOpened {
        handoff: HandoffId,
    },
    HandoffResumed {
        handoff: HandoffId,
        resumption: ResumptionV1,
    },
    TouchpointOpened {
        id: HandoffId,
    },
    TouchpointResolved {
        id: HandoffId,
        resolution: SupervisedV1,
    },
    DeliveryOpened {
        verdict: Verdict,
    },
    Delivered {
        action: DeliveryAction,
        detail: String,
    },
    Interrupted {
        phase: PhaseName,
        attempt: u32,
        reason: String,
    },
    Cancelled {
        reason: String,
        by: DecidedBy,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorkspaceV1 {
    target: Utf8PathBuf,
    worktree: Utf8PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FollowUpOfV1 {
    parent: RunId,
    generation: u32,
    brief: String,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PhaseInputV1 {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    fed_failures: Vec<GateFailureV1>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    critique: Vec<GateFailureV1>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    findings: Vec<Finding>,
    feedback: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    waivers: Vec<String>,
    readiness: Option<String>,
    answers: Option<String>,
    follow_up: Option<String>,
    /// Version 2, in snapshots only.
    deviation: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum TransitionV1 {
    Retry {
        input: PhaseInputV1,
    },
    Advance,
    Feed {
        to: usize,
        input: PhaseInputV1,
        attempts: Vec<u32>,
    },
    Replan {
        to: usize,
        input: PhaseInputV1,
    },
    Pause {
        trigger: PauseTriggerV1,
        verdict: Verdict,
        findings: Vec<Finding>,
    },
    Halt {
        reason: String,
    },
    Supervise {
        touchpoint: TouchpointV1,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum PauseTriggerV1 {
    Verdict,
    Gate { gate: orcho_core::GateName },
    Always,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum ResumptionV1 {
    Continue,
    Retry { feedback: String },
    ContinueWithWaiver { reason: String },
    Halt,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum SupervisedV1 {
    Answered {
        answers: String,
    },
    PlanApproved {
        feedback: Option<String>,
    },
    PlanRevised {
        feedback: String,
    },
    PlanRejected {
        feedback: Option<String>,
    },
    DeviationRetry {
        context: String,
        #[serde(default, skip_serializing_if = "is_zero")]
        step: u32,
    },
    DeviationReplan {
        to: usize,
        failure: String,
    },
    DeviationStopped {
        note: Option<String>,
    },
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct InFlightV1 {
    outcome: PhaseOutcomeV1,
    cost: Cost,
    records: Vec<GateRecordV1>,
    acceptance: Option<(Verdict, Vec<Finding>)>,
    plan: Option<PlanV1>,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReleaseV1 {
    verdict: Verdict,
    /// The reviewer's verdict, written when it differs from `verdict`
    /// (snapshots written before it was kept have none: the same).
    reviewer: Option<Verdict>,
    findings: Vec<Finding>,
}

/// `host.json`: `schema` and what the host that started the run keeps with
/// it, as the host wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HostDocV1 {
    pub(crate) schema: SchemaVersion,
    pub(crate) host: serde_json::Value,
}

impl Document for HostDocV1 {
    const KIND: &'static str = "host metadata";
    const SCHEMA: SchemaVersion = RUN_SCHEMA;
}

/// `run.json`: `schema` and the state, every field flat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StateDocV1 {
    pub(crate) schema: SchemaVersion,
    pub(crate) state: StateV1,
}

impl Document for StateDocV1 {
    const KIND: &'static str = "run state";
    const SCHEMA: SchemaVersion = RUN_SCHEMA;
}

/// The state, flat: the stage is spread over `status`, `reason`,
/// `in_flight`, `handoff`, `pending_pause`, `touchpoint`,
/// `pending_touchpoint` and `delivery_opened`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StateV1 {
    run: RunId,
    checkout: Utf8PathBuf,
    plan: String,
    phases: Vec<PhaseName>,
    status: RunStatus,
    reason: Option<String>,
    seq: u64,
    phase: usize,
    attempt: u32,
    round: u32,
    extra_attempts: u32,
    /// The last attempt of each phase in this round, once a feed went back
    /// to an earlier phase.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    attempts: Vec<u32>,
    input: PhaseInputV1,
    in_flight: Option<InFlightV1>,
    handoff: Option<HandoffId>,
    pending_pause: Option<TransitionV1>,
    receipts_rerun_at: Option<(usize, u32, u32)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    waivers: Vec<String>,
    handoffs_opened: u32,
    cost: Cost,
    workspace: Option<WorkspaceV1>,
    base: Option<String>,
    follow_up: Option<FollowUpOfV1>,
    /// Version 2.
    task: Option<String>,
    touchpoint: Option<HandoffId>,
    pending_touchpoint: Option<TouchpointV1>,
    #[serde(default)]
    touchpoints_opened: u32,
    #[serde(default)]
    deviation_retries: u32,
    #[serde(default)]
    deviation_replans: u32,
    release: Option<ReleaseV1>,
    #[serde(default)]
    delivery_opened: bool,
}

// ---- domain → format ----

impl From<&Workspace> for WorkspaceV1 {
    fn from(w: &Workspace) -> Self {
        Self {
            target: w.target.clone(),
            worktree: w.worktree.clone(),
        }
    }
}

impl From<&FollowUpOf> for FollowUpOfV1 {
    fn from(f: &FollowUpOf) -> Self {
        Self {
            parent: f.parent.clone(),
            generation: f.generation,
            brief: f.brief.clone(),
        }
    }
}

impl From<&PhaseInput> for PhaseInputV1 {
    fn from(i: &PhaseInput) -> Self {
        Self {
            fed_failures: i.fed_failures.iter().map(Into::into).collect(),
            critique: i.critique.iter().map(Into::into).collect(),
            findings: i.findings.clone(),
            feedback: i.feedback.clone(),
            waivers: i.waivers.clone(),
            readiness: i.readiness.clone(),
            answers: i.answers.clone(),
            follow_up: i.follow_up.clone(),
            deviation: i.deviation.clone(),
        }
    }
}

impl From<&PauseTrigger> for PauseTriggerV1 {
    fn from(t: &PauseTrigger) -> Self {
        match t {
            PauseTrigger::Verdict => Self::Verdict,
            PauseTrigger::Gate { gate } => Self::Gate { gate: gate.clone() },
            PauseTrigger::Always => Self::Always,
        }
    }
}

impl From<&Transition> for TransitionV1 {
    fn from(t: &Transition) -> Self {
        match t {
            Transition::Retry { input } => Self::Retry {
                input: input.into(),
            },
            Transition::Advance => Self::Advance,
            Transition::Feed {
                to,
                input,
                attempts,
            } => Self::Feed {
                to: *to,
                input: input.into(),
                attempts: attempts.clone(),
            },
            Transition::Replan { to, input } => Self::Replan {
                to: *to,
                input: input.into(),
            },
            Transition::Pause {
                trigger,
                verdict,
                findings,
            } => Self::Pause {
                trigger: trigger.into(),
                verdict: *verdict,
                findings: findings.clone(),
            },
            Transition::Halt { reason } => Self::Halt {
                reason: reason.clone(),
            },
            Transition::Supervise { touchpoint } => Self::Supervise {
                touchpoint: touchpoint.into(),
            },
        }
    }
}

impl From<&Resumption> for ResumptionV1 {
    fn from(r: &Resumption) -> Self {
        match r {
            Resumption::Continue => Self::Continue,
            Resumption::Retry { feedback } => Self::Retry {
                feedback: feedback.clone(),
            },
            Resumption::ContinueWithWaiver { reason } => Self::ContinueWithWaiver {
                reason: reason.clone(),
            },
            Resumption::Halt => Self::Halt,
        }
    }
}

impl From<&Supervised> for SupervisedV1 {
    fn from(s: &Supervised) -> Self {
        match s.clone() {
            Supervised::Answered { answers } => Self::Answered { answers },
            Supervised::PlanApproved { feedback } => Self::PlanApproved { feedback },
            Supervised::PlanRevised { feedback } => Self::PlanRevised { feedback },
            Supervised::PlanRejected { feedback } => Self::PlanRejected { feedback },
            Supervised::DeviationRetry { context, step } => Self::DeviationRetry { context, step },
            Supervised::DeviationReplan { to, failure } => Self::DeviationReplan { to, failure },
            Supervised::DeviationStopped { note } => Self::DeviationStopped { note },
        }
    }
}

impl From<&RunEvent> for EventV1 {
    fn from(e: &RunEvent) -> Self {
        match e {
            RunEvent::Started {
                checkout,
                plan,
                phases,
                workspace,
                follow_up,
                task,
            } => Self::Started {
                checkout: checkout.clone(),
                plan: plan.clone(),
                phases: phases.clone(),
                workspace: workspace.as_ref().map(Into::into),
                follow_up: follow_up.as_ref().map(Into::into),
                task: task.clone(),
            },
            RunEvent::IntakeOpened => Self::IntakeOpened,
            RunEvent::IntakeHalted => Self::IntakeHalted,
            RunEvent::WorkspaceReady { base, intake } => Self::WorkspaceReady {
                base: base.clone(),
                intake: intake.clone(),
            },
            RunEvent::ReceiptsRerun { commands } => Self::ReceiptsRerun {
                commands: commands.clone(),
            },
            RunEvent::PhaseReported {
                phase,
                attempt,
                round,
                outcome,
                cost,
                plan,
            } => Self::PhaseReported {
                phase: phase.clone(),
                attempt: *attempt,
                round: *round,
                outcome: outcome.into(),
                cost: *cost,
                plan: plan.as_ref().map(Into::into),
            },
            RunEvent::PhaseInterrupted {
                phase,
                attempt,
                cost,
                touchpoint,
            } => Self::PhaseInterrupted {
                phase: phase.clone(),
                attempt: *attempt,
                cost: *cost,
                touchpoint: touchpoint.into(),
            },
            RunEvent::GateRecorded { record } => Self::GateRecorded {
                record: record.into(),
            },
            RunEvent::AcceptanceMerged {
                reviewer,
                verdict,
                gaps,
            } => Self::AcceptanceMerged {
                reviewer: *reviewer,
                verdict: *verdict,
                gaps: gaps.clone(),
            },
            RunEvent::PhaseSettled { effect, transition } => Self::PhaseSettled {
                effect: effect.clone(),
                transition: transition.into(),
            },
            RunEvent::HandoffOpened { handoff } => Self::HandoffOpened {
                handoff: handoff.clone(),
            },
            RunEvent::HandoffResumed {
                handoff,
                resumption,
            } => Self::HandoffResumed {
                handoff: handoff.clone(),
                resumption: resumption.into(),
            },
            RunEvent::TouchpointOpened { id } => Self::TouchpointOpened { id: id.clone() },
            RunEvent::TouchpointResolved { id, resolution } => Self::TouchpointResolved {
                id: id.clone(),
                resolution: resolution.into(),
            },
            RunEvent::DeliveryOpened { verdict } => Self::DeliveryOpened { verdict: *verdict },
            RunEvent::Delivered { action, detail } => Self::Delivered {
                action: *action,
                detail: detail.clone(),
            },
            RunEvent::Interrupted {
                phase,
                attempt,
                reason,
            } => Self::Interrupted {
                phase: phase.clone(),
                attempt: *attempt,
                reason: reason.clone(),
            },
            RunEvent::Cancelled { reason, by } => Self::Cancelled {
                reason: reason.clone(),
                by: *by,
            },
        }
    }
}

impl From<RunEvent> for EventV1 {
    fn from(e: RunEvent) -> Self {
        Self::from(&e)
    }
}

impl From<&InFlight> for InFlightV1 {
    fn from(f: &InFlight) -> Self {
        Self {
            outcome: (&f.outcome).into(),
            cost: f.cost,
            records: f.records.iter().map(Into::into).collect(),
            acceptance: f.acceptance.clone(),
            plan: f.plan.as_ref().map(Into::into),
        }
    }
}

impl From<&RunState> for StateV1 {
    fn from(s: &RunState) -> Self {
        let cursor = s.cursor();
        Self {
            run: s.run().clone(),
            checkout: s.checkout().to_owned(),
            plan: s.plan().to_owned(),
            phases: s.phases().to_vec(),
            status: s.status(),
            reason: s.reason().map(str::to_owned),
            seq: s.seq(),
            phase: cursor.phase,
            attempt: cursor.attempt,
            round: cursor.round,
            extra_attempts: cursor.extra_attempts,
            attempts: s.attempts.clone(),
            input: s.input().into(),
            in_flight: s.in_flight().map(Into::into),
            handoff: s.handoff().cloned(),
            pending_pause: s.pending_pause().map(|p| {
                (&Transition::Pause {
                    trigger: p.trigger.clone(),
                    verdict: p.verdict,
                    findings: p.findings.clone(),
                })
                    .into()
            }),
            receipts_rerun_at: s.receipts_rerun_at(),
            waivers: s.waivers().to_vec(),
            handoffs_opened: s.handoffs_opened(),
            cost: s.cost(),
            workspace: s.workspace().map(Into::into),
            base: s.base().map(str::to_owned),
            follow_up: s.follow_up().map(Into::into),
            task: s.task().map(str::to_owned),
            touchpoint: s.touchpoint().cloned(),
            pending_touchpoint: s.pending_touchpoint().map(Into::into),
            touchpoints_opened: s.touchpoints_opened(),
            deviation_retries: s.deviation_retries(),
            deviation_replans: s.deviation_replans(),
            release: s.release().map(|r| ReleaseV1 {
                verdict: r.verdict,
                reviewer: (r.reviewer != r.verdict).then_some(r.reviewer),
                findings: r.findings.clone(),
            }),
            delivery_opened: s.delivery_opened(),
        }
    }
}

// ---- format → domain ----

impl From<WorkspaceV1> for Workspace {
    fn from(w: WorkspaceV1) -> Self {
        Self {
            target: w.target,
            worktree: w.worktree,
        }
    }
}

impl From<FollowUpOfV1> for FollowUpOf {
    fn from(f: FollowUpOfV1) -> Self {
        Self {
            parent: f.parent,
            generation: f.generation,
            brief: f.brief,
        }
    }
}

fn failures(list: Vec<GateFailureV1>) -> Result<Vec<orcho_gates::GateFailure>, String> {
    list.into_iter().map(TryInto::try_into).collect()
}

impl TryFrom<PhaseInputV1> for PhaseInput {
    type Error = String;

    fn try_from(i: PhaseInputV1) -> Result<Self, Self::Error> {
        Ok(Self {
            fed_failures: failures(i.fed_failures)?,
            critique: failures(i.critique)?,
            findings: i.findings,
            feedback: i.feedback,
            waivers: i.waivers,
            readiness: i.readiness,
            answers: i.answers,
            follow_up: i.follow_up,
            deviation: i.deviation,
            ..Self::default()
        })
    }
}

impl From<PauseTriggerV1> for PauseTrigger {
    fn from(t: PauseTriggerV1) -> Self {
        match t {
            PauseTriggerV1::Verdict => Self::Verdict,
            PauseTriggerV1::Gate { gate } => Self::Gate { gate },
            PauseTriggerV1::Always => Self::Always,
        }
    }
}

impl TryFrom<TransitionV1> for Transition {
    type Error = String;

    fn try_from(t: TransitionV1) -> Result<Self, Self::Error> {
        Ok(match t {
            TransitionV1::Retry { input } => Self::Retry {
                input: input.try_into()?,
            },
            TransitionV1::Advance => Self::Advance,
            TransitionV1::Feed {
                to,
                input,
                attempts,
            } => Self::Feed {
                to,
                input: input.try_into()?,
                attempts,
            },
            TransitionV1::Replan { to, input } => Self::Replan {
                to,
                input: input.try_into()?,
            },
            TransitionV1::Pause {
                trigger,
                verdict,
                findings,
            } => Self::Pause {
                trigger: trigger.into(),
                verdict,
                findings,
            },
            TransitionV1::Halt { reason } => Self::Halt { reason },
            TransitionV1::Supervise { touchpoint } => Self::Supervise {
                touchpoint: touchpoint.try_into()?,
            },
        })
    }
}

impl From<ResumptionV1> for Resumption {
    fn from(r: ResumptionV1) -> Self {
        match r {
            ResumptionV1::Continue => Self::Continue,
            ResumptionV1::Retry { feedback } => Self::Retry { feedback },
            ResumptionV1::ContinueWithWaiver { reason } => Self::ContinueWithWaiver { reason },
            ResumptionV1::Halt => Self::Halt,
        }
    }
}

impl From<SupervisedV1> for Supervised {
    fn from(s: SupervisedV1) -> Self {
        match s {
            SupervisedV1::Answered { answers } => Self::Answered { answers },
            SupervisedV1::PlanApproved { feedback } => Self::PlanApproved { feedback },
            SupervisedV1::PlanRevised { feedback } => Self::PlanRevised { feedback },
            SupervisedV1::PlanRejected { feedback } => Self::PlanRejected { feedback },
            SupervisedV1::DeviationRetry { context, step } => {
                Self::DeviationRetry { context, step }
            }
            SupervisedV1::DeviationReplan { to, failure } => Self::DeviationReplan { to, failure },
            SupervisedV1::DeviationStopped { note } => Self::DeviationStopped { note },
        }
    }
}

impl TryFrom<EventV1> for RunEvent {
    type Error = String;

    fn try_from(e: EventV1) -> Result<Self, Self::Error> {
        Ok(match e {
            EventV1::Started {
                checkout,
                plan,
                phases,
                workspace,
                follow_up,
                task,
            } => Self::Started {
                checkout,
                plan,
                phases,
                workspace: workspace.map(Into::into),
                follow_up: follow_up.map(Into::into),
                task,
            },
            EventV1::IntakeOpened => Self::IntakeOpened,
            EventV1::IntakeHalted => Self::IntakeHalted,
            EventV1::WorkspaceReady { base, intake } => Self::WorkspaceReady { base, intake },
            EventV1::ReceiptsRerun { commands } => Self::ReceiptsRerun { commands },
            EventV1::PhaseReported {
                phase,
                attempt,
                round,
                outcome,
                cost,
                plan,
            } => Self::PhaseReported {
                phase,
                attempt,
                round,
                outcome: outcome.into(),
                cost,
                plan: plan.map(Into::into),
            },
            EventV1::PhaseInterrupted {
                phase,
                attempt,
                cost,
                touchpoint,
            } => Self::PhaseInterrupted {
                phase,
                attempt,
                cost,
                touchpoint: touchpoint.try_into()?,
            },
            EventV1::GateRecorded { record } => Self::GateRecorded {
                record: record.try_into()?,
            },
            EventV1::AcceptanceMerged {
                reviewer,
                verdict,
                gaps,
            } => Self::AcceptanceMerged {
                reviewer,
                verdict,
                gaps,
            },
            EventV1::PhaseSettled { effect, transition } => Self::PhaseSettled {
                effect,
                transition: transition.try_into()?,
            },
            EventV1::HandoffOpened { handoff } => Self::HandoffOpened { handoff },
            EventV1::HandoffResumed {
                handoff,
                resumption,
            } => Self::HandoffResumed {
                handoff,
                resumption: resumption.into(),
            },
            EventV1::TouchpointOpened { id } => Self::TouchpointOpened { id },
            EventV1::TouchpointResolved { id, resolution } => Self::TouchpointResolved {
                id,
                resolution: resolution.into(),
            },
            EventV1::DeliveryOpened { verdict } => Self::DeliveryOpened { verdict },
            EventV1::Delivered { action, detail } => Self::Delivered { action, detail },
            EventV1::Interrupted {
                phase,
                attempt,
                reason,
            } => Self::Interrupted {
                phase,
                attempt,
                reason,
            },
            EventV1::Cancelled { reason, by } => Self::Cancelled { reason, by },
        })
    }
}

impl TryFrom<InFlightV1> for InFlight {
    type Error = String;

    fn try_from(f: InFlightV1) -> Result<Self, Self::Error> {
        Ok(Self {
            outcome: f.outcome.into(),
            cost: f.cost,
            records: f
                .records
                .into_iter()
                .map(TryInto::try_into)
                .collect::<Result<_, _>>()?,
            acceptance: f.acceptance,
            plan: f.plan.map(Into::into),
        })
    }
}

impl TryFrom<StateV1> for RunState {
    type Error = String;

    /// A state from its flat form, checked: the stage must be one the
    /// fields describe (a `running` run with an open handoff, say, is
    /// refused).
    fn try_from(s: StateV1) -> Result<Self, Self::Error> {
        let invalid = |why: &str| format!("a `{}` run {why}", s.status);
        let stage = match s.status {
            RunStatus::Created => Stage::Created,
            RunStatus::AwaitingIntake => Stage::AwaitingIntake,
            RunStatus::Running => match s.in_flight.clone() {
                Some(flight) => Stage::Gating(Box::new(flight.try_into()?)),
                None => Stage::Ready,
            },
            RunStatus::AwaitingPhaseHandoff => match (&s.handoff, &s.pending_pause) {
                (Some(id), _) => Stage::AtHandoff(id.clone()),
                (
                    None,
                    Some(TransitionV1::Pause {
                        trigger,
                        verdict,
                        findings,
                    }),
                ) => Stage::Pausing(Pause {
                    trigger: trigger.clone().into(),
                    verdict: *verdict,
                    findings: findings.clone(),
                }),
                (None, _) => return Err(invalid("has neither a handoff nor a pending pause")),
            },
            status @ (RunStatus::AwaitingQuestions
            | RunStatus::AwaitingPlanApproval
            | RunStatus::AwaitingDeviation) => match (&s.touchpoint, &s.pending_touchpoint) {
                (Some(id), _) => Stage::AtTouchpoint {
                    id: id.clone(),
                    kind: match status {
                        RunStatus::AwaitingQuestions => TouchpointKind::Questions,
                        RunStatus::AwaitingPlanApproval => TouchpointKind::PlanApproval,
                        _ => TouchpointKind::Deviation,
                    },
                },
                (None, Some(touchpoint)) => Stage::Asking(touchpoint.clone().try_into()?),
                (None, None) => return Err(invalid("has no touchpoint")),
            },
            RunStatus::AwaitingDelivery => Stage::AtDelivery {
                opened: s.delivery_opened,
            },
            status @ (RunStatus::Halted
            | RunStatus::Completed
            | RunStatus::Failed
            | RunStatus::Cancelled) => Stage::Ended(Ending {
                status,
                reason: s.reason.clone().unwrap_or_default(),
                delivered: s.delivery_opened,
            }),
        };
        Ok(Self {
            run: s.run,
            checkout: s.checkout,
            plan: s.plan,
            phases: s.phases,
            workspace: s.workspace.map(Into::into),
            follow_up: s.follow_up.map(Into::into),
            task: s.task,
            seq: s.seq,
            stage,
            cursor: Cursor {
                phase: s.phase,
                attempt: s.attempt,
                round: s.round,
                extra_attempts: s.extra_attempts,
            },
            attempts: s.attempts,
            input: s.input.try_into()?,
            receipts_rerun_at: s.receipts_rerun_at,
            waivers: s.waivers,
            handoffs_opened: s.handoffs_opened,
            touchpoints_opened: s.touchpoints_opened,
            deviation_retries: s.deviation_retries,
            deviation_replans: s.deviation_replans,
            cost: s.cost,
            base: s.base,
            release: s.release.map(|r| Release {
                verdict: r.verdict,
                reviewer: r.reviewer.unwrap_or(r.verdict),
                findings: r.findings,
            }),
        })
    }
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero(n: &u32) -> bool {
    *n == 0
}
