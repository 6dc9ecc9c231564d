//! The evidence bundle of a run: everything an auditor needs to see why the
//! run ended where it did.

use orcho_core::{Cost, HandoffId, PhaseName, RunId, RunStatus, SchemaVersion, Timestamp, Verdict};
use orcho_gates::GateRecord;
use orcho_handoff::{HandoffAction, decision::DecidedBy, evidence::HandoffAdviceEvidence};
use serde::Serialize;

use crate::state::{FollowUpOf, RunEvent, Supervised};

/// The schema of `evidence.json`.
///
/// Version 1: the first format.
pub const EVIDENCE_SCHEMA: SchemaVersion = SchemaVersion::new(1);

/// One phase attempt in the evidence.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct PhaseEvidence {
    /// The phase.
    pub phase: PhaseName,
    /// The attempt.
    pub attempt: u32,
    /// The round.
    pub round: u32,
    /// The host's verdict.
    pub verdict: Verdict,
    /// The verdict after final acceptance merged receipt gaps, when it did.
    pub merged_verdict: Option<Verdict>,
    /// The host's summary.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub summary: String,
    /// How many findings the host reported.
    pub findings: usize,
    /// Every gate with its outcome, strategy and duration.
    pub gates: Vec<GateRecord>,
    /// The gates' effect.
    pub effect: Option<String>,
    /// Where the attempt sent the run (written as its description, for
    /// example `advance` or `retry, feeding tests`).
    #[serde(serialize_with = "describe_transition")]
    pub next: Option<crate::Transition>,
    /// What the attempt cost (the host's report, not its gates).
    pub cost: Cost,
}

/// One handoff in the evidence, with its decision.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct HandoffEvidence {
    /// Its id.
    pub id: HandoffId,
    /// The phase it paused.
    pub phase: PhaseName,
    /// Why it opened.
    pub trigger: String,
    /// The verdict it showed.
    pub verdict: Verdict,
    /// The menu it offered.
    pub available_actions: Vec<HandoffAction>,
    /// The decision, once recorded.
    pub decision: Option<DecisionEvidence>,
}

/// A recorded decision in the evidence.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct DecisionEvidence {
    /// The action.
    pub action: HandoffAction,
    /// Its text: feedback, a waiver's reason, or the note given with
    /// `continue` or `halt`.
    pub text: Option<String>,
    /// Who decided.
    pub decided_by: DecidedBy,
    /// The client that decided, for a decision by a client.
    pub client: Option<String>,
    /// Who decided, in words (a user and machine), when the host said.
    pub by: Option<String>,
    /// The advice it used.
    pub advice: Option<String>,
    /// When.
    pub decided_at: Timestamp,
}

/// A decision recorded on one of a run's decision points, for the audit:
/// what was decided, by whom, when.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct DecisionAudit {
    /// The decision point.
    pub point: HandoffId,
    /// Its kind: `phase_handoff`, `touchpoint`, `intake`, `delivery`.
    pub kind: String,
    /// The action decided, for points that decide one.
    pub action: Option<String>,
    /// Who decided: an operator, the autopilot, a client.
    pub decided_by: DecidedBy,
    /// The client that decided, by the name it gave.
    pub client: Option<String>,
    /// Who decided, in words (a user and machine), when the host said.
    pub by: Option<String>,
    /// The text the decision carries: feedback, a waiver's reason, a
    /// note for the record (why a run was halted).
    pub note: Option<String>,
    /// When.
    pub decided_at: Timestamp,
}

/// Everything a run did, as one JSON document (`runs/<id>/evidence.json`).
///
/// The bundle is written for people and tools to read; Orcho itself never
/// reads it back, it rebuilds it from the run.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Evidence {
    /// Always [`EVIDENCE_SCHEMA`].
    pub schema: SchemaVersion,
    /// The run.
    pub run: RunId,
    /// The plan's name.
    pub plan: String,
    /// What the run was started to do, if it was told.
    pub task: Option<String>,
    /// Where it stands.
    pub status: RunStatus,
    /// Why it ended.
    pub reason: Option<String>,
    /// Every phase attempt, in order.
    pub phases: Vec<PhaseEvidence>,
    /// The required receipts' classification at the time of the bundle
    /// (absent when the run has no contract, or its checkout is gone).
    pub receipts: Option<orcho_receipts::ReadinessSummary>,
    /// Every handoff and its decision.
    pub handoffs: Vec<HandoffEvidence>,
    /// Every decision recorded on the run's decision points, oldest first:
    /// what, who and when.
    pub decisions: Vec<DecisionAudit>,
    /// Advice calls, recommended vs applied actions and retry outcomes.
    pub handoff_advice: HandoffAdviceEvidence,
    /// What the run cost: phases and gates.
    pub cost: Cost,
    /// The pre-run intake decision, when the target checkout was dirty.
    pub intake: Option<String>,
    /// Supervision touchpoints (planner questions, plan approvals,
    /// deviations) and how each was resolved.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub touchpoints: Vec<TouchpointEvidence>,
    /// The delivery gate: the release verdict and what was delivered.
    pub delivery: Option<DeliveryEvidence>,
    /// For a correction follow-up: its parent.
    pub follow_up_of: Option<FollowUpOf>,
    /// What the phases kept beside the work (plans, transcripts, reports),
    /// never delivered.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<crate::Artifact>,
    /// Phase attempts stopped before they were reported (Ctrl-C, a
    /// signal), each run again on resume.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub interruptions: Vec<InterruptionEvidence>,
}

/// A phase attempt stopped before it was reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct InterruptionEvidence {
    /// The phase.
    pub phase: PhaseName,
    /// Its attempt.
    pub attempt: u32,
    /// What stopped it.
    pub reason: String,
}

/// The interruptions among `events`, in order.
pub(crate) fn interruptions(events: &[(u64, RunEvent)]) -> Vec<InterruptionEvidence> {
    events
        .iter()
        .filter_map(|(_, event)| match event {
            RunEvent::Interrupted {
                phase,
                attempt,
                reason,
            } => Some(InterruptionEvidence {
                phase: phase.clone(),
                attempt: *attempt,
                reason: reason.clone(),
            }),
            _ => None,
        })
        .collect()
}

/// A supervision touchpoint in the evidence.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TouchpointEvidence {
    /// Its id.
    pub id: HandoffId,
    /// How it was resolved, once it was.
    pub resolution: Option<Supervised>,
}

/// The delivery gate in the evidence.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DeliveryEvidence {
    /// The release verdict the gate showed.
    pub verdict: Verdict,
    /// What was delivered, once it was.
    pub action: Option<orcho_handoff::DeliveryAction>,
    /// What delivering did.
    pub detail: Option<String>,
}

impl PhaseEvidence {
    /// Whether the attempt moved the run past its phase.
    pub fn advanced(&self) -> bool {
        matches!(self.next, Some(crate::Transition::Advance))
    }
}

#[expect(
    clippy::ref_option,
    reason = "serde's `serialize_with` passes the field by reference"
)]
fn describe_transition<S: serde::Serializer>(
    next: &Option<crate::Transition>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match next {
        Some(transition) => serializer.serialize_some(&transition.describe()),
        None => serializer.serialize_none(),
    }
}

/// The decision points around the phases: intake, touchpoints, delivery.
pub(crate) fn points(
    events: &[(u64, RunEvent)],
) -> (
    Option<String>,
    Vec<TouchpointEvidence>,
    Option<DeliveryEvidence>,
) {
    let mut intake = None;
    let mut touchpoints: Vec<TouchpointEvidence> = Vec::new();
    let mut delivery: Option<DeliveryEvidence> = None;
    for (_, event) in events {
        match event {
            RunEvent::WorkspaceReady {
                intake: Some(action),
                ..
            } => intake = Some(action.clone()),
            RunEvent::IntakeHalted => intake = Some("halt".to_owned()),
            RunEvent::TouchpointOpened { id } => touchpoints.push(TouchpointEvidence {
                id: id.clone(),
                resolution: None,
            }),
            RunEvent::TouchpointResolved { id, resolution } => {
                if let Some(t) = touchpoints.iter_mut().find(|t| &t.id == id) {
                    t.resolution = Some(resolution.clone());
                }
            }
            RunEvent::DeliveryOpened { verdict } => {
                delivery = Some(DeliveryEvidence {
                    verdict: *verdict,
                    action: None,
                    detail: None,
                });
            }
            RunEvent::Delivered { action, detail } => {
                if let Some(d) = &mut delivery {
                    d.action = Some(*action);
                    d.detail = Some(detail.clone());
                }
            }
            _ => {}
        }
    }
    (intake, touchpoints, delivery)
}

/// The delivery-relevant gates of `round`: every gate that can change the
/// run (all but informational ones) of the last attempt of each phase, in
/// the order the phases ran, each with its summary unless it passed.
pub(crate) fn delivery_gates(
    phases: &[PhaseEvidence],
    round: u32,
) -> Vec<orcho_receipts::GateReadiness> {
    let mut last: Vec<&PhaseEvidence> = Vec::new();
    for attempt in phases.iter().filter(|p| p.round == round) {
        match last.iter_mut().find(|p| p.phase == attempt.phase) {
            Some(slot) => *slot = attempt,
            None => last.push(attempt),
        }
    }
    last.iter()
        .flat_map(|p| p.gates.iter().map(move |g| (p, g)))
        .filter(|(_, g)| g.on_fail != orcho_gates::FailStrategy::Informational)
        .map(|(p, g)| {
            orcho_receipts::GateReadiness::new(
                p.phase.as_str(),
                g.result.gate.as_str(),
                g.result.outcome.as_str(),
                g.on_fail.as_str(),
                // A passing gate's summary only says that it passed.
                match g.result.outcome {
                    orcho_gates::GateOutcome::Passed => "",
                    _ => g.result.summary.lines().next().unwrap_or_default(),
                },
            )
        })
        .collect()
}

/// The phase attempts of a journal.
pub(crate) fn phases(events: &[(u64, RunEvent)]) -> Vec<PhaseEvidence> {
    let mut out: Vec<PhaseEvidence> = Vec::new();
    for (_, event) in events {
        match event {
            RunEvent::PhaseReported {
                phase,
                attempt,
                round,
                outcome,
                cost,
                ..
            } => out.push(PhaseEvidence {
                phase: phase.clone(),
                attempt: *attempt,
                round: *round,
                verdict: outcome.verdict,
                merged_verdict: None,
                summary: outcome.summary.clone(),
                findings: outcome.findings.len(),
                gates: Vec::new(),
                effect: None,
                next: None,
                cost: *cost,
            }),
            RunEvent::GateRecorded { record } => {
                if let Some(last) = out.last_mut() {
                    last.gates.push(record.clone());
                    last.gates.sort_by_key(|g| g.index);
                }
            }
            RunEvent::AcceptanceMerged { verdict, .. } => {
                if let Some(last) = out.last_mut() {
                    last.merged_verdict = Some(*verdict);
                }
            }
            RunEvent::PhaseSettled { effect, transition } => {
                if let Some(last) = out.last_mut() {
                    last.effect = Some(effect.clone());
                    last.next = Some(transition.clone());
                }
            }
            _ => {}
        }
    }
    out
}
