//! The documents the tools answer with.

use orcho::{
    AttemptView,
    core::{Finding, HandoffId, RunId},
};
use serde::Serialize;
use serde_json::Value;

use orcho_host::output::doc::{GateDoc, HandoffDoc};

/// `orcho_run_status`: where the run stands and what it waits on.
#[derive(Debug, Serialize)]
pub(crate) struct StatusDoc<'a> {
    pub(crate) run_id: &'a RunId,
    pub(crate) status: &'static str,
    pub(crate) reason: Option<&'a str>,
    pub(crate) plan: &'a str,
    /// What the run was started to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) task: Option<&'a str>,
    pub(crate) phase: Option<&'a str>,
    pub(crate) attempt: u32,
    pub(crate) round: u32,
    /// `phase_handoff`, `delivery_gate`, `intake` or `touchpoint`.
    pub(crate) awaiting: Option<&'static str>,
    /// For a correction follow-up: its parent and generation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) follow_up_of: Option<FollowUpDoc<'a>>,
    pub(crate) meta: MetaDoc<'a>,
    /// What to do next, in order.
    pub(crate) next: Vec<&'static str>,
}

/// The parent of a correction follow-up.
#[derive(Debug, Serialize)]
pub(crate) struct FollowUpDoc<'a> {
    pub(crate) parent_run_id: &'a RunId,
    pub(crate) generation: u32,
}

/// The decision point the run waits at, in full.
#[serde_with::skip_serializing_none]
#[derive(Debug, Default, Serialize)]
pub(crate) struct MetaDoc<'a> {
    pub(crate) phase_handoff: Option<HandoffDoc<'a>>,
    pub(crate) delivery_gate: Option<GateDoc<'a>>,
    pub(crate) touchpoint: Option<TouchpointDoc<'a>>,
}

/// An open supervision touchpoint.
#[derive(Debug, Serialize)]
pub(crate) struct TouchpointDoc<'a> {
    pub(crate) id: &'a HandoffId,
    pub(crate) status: &'static str,
}

/// `orcho_run_evidence slice=findings`: the open (or last) handoff, and
/// the last reported attempt of each phase.
#[derive(Debug, Serialize)]
pub(crate) struct FindingsDoc<'a> {
    pub(crate) run_id: &'a RunId,
    pub(crate) open: bool,
    pub(crate) handoff: Option<HandoffDoc<'a>>,
    pub(crate) attempts: Vec<AttemptDoc<'a>>,
}

/// What a phase attempt reported.
#[derive(Debug, Serialize)]
pub(crate) struct AttemptDoc<'a> {
    pub(crate) phase: &'a str,
    pub(crate) attempt: u32,
    pub(crate) round: u32,
    pub(crate) verdict: &'static str,
    pub(crate) summary: &'a str,
    pub(crate) findings: &'a [Finding],
}

impl<'a> AttemptDoc<'a> {
    pub(crate) fn new(a: &'a AttemptView) -> Self {
        Self {
            phase: a.phase.as_str(),
            attempt: a.attempt,
            round: a.round,
            verdict: a.outcome.verdict.as_str(),
            summary: &a.outcome.summary,
            findings: &a.outcome.findings,
        }
    }
}

/// `orcho_review_paused_run`.
#[derive(Debug, Serialize)]
pub(crate) struct ReviewDoc<'a> {
    pub(crate) run_id: &'a RunId,
    pub(crate) status: Value,
    pub(crate) findings: Option<Value>,
    pub(crate) proposal: Option<ProposalDoc<'a>>,
    pub(crate) note: &'static str,
}

/// A proposed handoff decision: shown, never applied.
#[derive(Debug, Serialize)]
pub(crate) struct ProposalDoc<'a> {
    /// Always `proposal`.
    pub(crate) kind: &'static str,
    /// Always `false`.
    pub(crate) applied: bool,
    /// Always `true`.
    pub(crate) requires_confirmation: bool,
    /// `advice` (the advisor's) or `deterministic`.
    pub(crate) source: &'static str,
    pub(crate) advice_id: Option<String>,
    /// Why the advisor gave no advice, when it was asked and failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) advice_error: Option<&'a str>,
    pub(crate) action: &'static str,
    pub(crate) feedback: Option<&'a str>,
    pub(crate) rationale: &'a str,
    pub(crate) confirm_with: ConfirmDoc<'a>,
    pub(crate) then: &'static str,
}

/// The tool call that would confirm a proposal.
#[derive(Debug, Serialize)]
pub(crate) struct ConfirmDoc<'a> {
    pub(crate) tool: &'static str,
    pub(crate) arguments: DecideArgs<'a>,
}

/// The arguments of `orcho_phase_handoff_decide`.
#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize)]
pub(crate) struct DecideArgs<'a> {
    pub(crate) run_id: &'a RunId,
    pub(crate) handoff_id: &'a HandoffId,
    pub(crate) action: &'static str,
    pub(crate) feedback: Option<&'a str>,
    /// The advice the decision follows, kept as its provenance.
    pub(crate) advice_id: Option<String>,
}

/// `orcho_phase_handoff_decide`.
#[derive(Debug, Serialize)]
pub(crate) struct HandoffDecidedDoc<'a> {
    pub(crate) run_id: &'a RunId,
    pub(crate) handoff_id: &'a HandoffId,
    pub(crate) action: &'static str,
    pub(crate) feedback: Option<&'a str>,
    /// Always `true`.
    pub(crate) recorded: bool,
    pub(crate) next: &'static str,
}

/// `orcho_delivery_decide`.
#[derive(Debug, Serialize)]
pub(crate) struct DeliveryDecidedDoc<'a> {
    pub(crate) run_id: &'a RunId,
    pub(crate) action: &'static str,
    /// Always `true`.
    pub(crate) recorded: bool,
    pub(crate) next: &'static str,
}
