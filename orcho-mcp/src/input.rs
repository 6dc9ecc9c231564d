//! What each tool takes.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

/// A phase's command: an argv array, or one string split into words as a
/// POSIX shell would (never run by a shell).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum PhaseCommand {
    /// The argv.
    Argv(Vec<String>),
    /// A command line, split into shell words.
    Line(String),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunStartInput {
    /// The profile: a YAML file (relative to the checkout) or
    /// `builtin:<name>`; default `./orcho.yaml` when it exists, else
    /// `builtin:default`.
    #[serde(default)]
    pub(crate) profile: Option<String>,
    /// The command each phase runs, by phase name (exit 0 approves,
    /// anything else rejects). Phases without one are approved.
    #[serde(default)]
    pub(crate) phases: BTreeMap<String, PhaseCommand>,
    /// Work in the checkout itself: no worktree, no intake, no delivery
    /// gate.
    #[serde(default)]
    pub(crate) in_place: bool,
    /// Start the correction follow-up of this run, whose delivery was
    /// decided `fix`: its profile and phase commands (`phases` here replace
    /// some), a worktree that starts from its diff, and what it was
    /// rejected for as the phases' input. Leave `profile` and `in_place`
    /// out.
    #[serde(default)]
    pub(crate) parent_run_id: Option<String>,
    /// What the run is to do: every phase receives it, the run keeps it,
    /// and its first line is the subject of the delivered commit. A
    /// follow-up has its parent's unless given one.
    #[serde(default)]
    pub(crate) task: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct VerifyInput {
    /// The declared commands to run; default: the required ones.
    #[serde(default)]
    pub(crate) commands: Vec<String>,
    /// The protected branch whose declarations to run them as (`main`).
    #[serde(default)]
    pub(crate) base: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StatusInput {
    /// A commit (hash, branch, `HEAD`): classify from the attestations in
    /// its notes instead of the receipts on disk.
    #[serde(default)]
    pub(crate) commit: Option<String>,
    /// The protected branch to judge by (`main`): its trusted keys,
    /// required commands and declarations, never the change's own.
    #[serde(default)]
    pub(crate) base: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunInput {
    /// The run: its id, the start of one, or `latest`.
    #[serde(alias = "run")]
    pub(crate) run_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TouchpointAnswerInput {
    /// The run: its id, the start of one, or `latest`.
    #[serde(alias = "run")]
    pub(crate) run_id: String,
    /// One answer per question of the run's open touchpoint, in order (see
    /// orcho_touchpoint): an option's label or number, several
    /// comma-separated where the question allows it, or free text; "" for
    /// none. Plan approval: ["Approve" | "Request Changes" | "Reject",
    /// feedback]. Deviation: ["Retry" | "Replan" | "Stop", note].
    pub(crate) answers: Vec<String>,
    /// For a plan approval, the `plan_digest` of `orcho_touchpoint` the
    /// answers are about: a plan that has changed since refuses them.
    #[serde(default)]
    pub(crate) plan_digest: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DecideInput {
    /// The run: its id, the start of one, or `latest`.
    #[serde(alias = "run")]
    pub(crate) run_id: String,
    /// The action, by its name among orcho_point's `actions`.
    pub(crate) action: String,
    /// The action's note, where it takes one (orcho_point says which need
    /// one and what it is). Planner questions: one answer per line.
    #[serde(default)]
    pub(crate) note: Option<String>,
    /// The point's `id` orcho_point showed: refused when the run waits at
    /// another point since.
    #[serde(default)]
    pub(crate) point_id: Option<String>,
    /// The digest in orcho_point's `pinned` (a plan's, a patch's): refused
    /// when it changed since.
    #[serde(default)]
    pub(crate) digest: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct IntakeDecideInput {
    /// The run: its id, the start of one, or `latest`.
    #[serde(alias = "run")]
    pub(crate) run_id: String,
    /// `include`, `exclude`, `commit` or `halt`.
    pub(crate) action: String,
    /// The commit message (`commit` only).
    #[serde(default)]
    pub(crate) message: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EvidenceInput {
    /// The run: its id, the start of one, or `latest`.
    #[serde(alias = "run")]
    pub(crate) run_id: String,
    /// Which part of the evidence bundle: `findings`, `phases`, `handoffs`,
    /// `handoff_advice` (advice calls, recommended against applied actions,
    /// retry outcomes), `touchpoints`, `receipts`, `delivery`, `cost` or
    /// `all` (the default).
    #[serde(default)]
    pub(crate) slice: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HandoffDecideInput {
    /// The run: its id, the start of one, or `latest`.
    #[serde(alias = "run")]
    pub(crate) run_id: String,
    /// The handoff; default: the run's open handoff.
    #[serde(default)]
    pub(crate) handoff_id: Option<String>,
    /// `continue`, `retry_feedback`, `continue_with_waiver` or `halt`
    /// (one of the handoff's `available_actions`).
    pub(crate) action: String,
    /// The decision's note: feedback for the next attempt
    /// (`retry_feedback`) or the waiver's reason (`continue_with_waiver`);
    /// required for those two. Also taken as `feedback`.
    #[serde(default, alias = "feedback")]
    pub(crate) note: Option<String>,
    /// The advice this decision follows (from orcho_handoff_advice), kept
    /// as its provenance.
    #[serde(default)]
    pub(crate) advice_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AdviceInput {
    /// The run: its id, the start of one, or `latest`.
    #[serde(alias = "run")]
    pub(crate) run_id: String,
    /// The handoff; default: the run's open handoff.
    #[serde(default)]
    pub(crate) handoff_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeliveryDecideInput {
    /// The run: its id, the start of one, or `latest`.
    #[serde(alias = "run")]
    pub(crate) run_id: String,
    /// `approve`, `apply`, `fix`, `skip` or `halt` (one of the gate's
    /// `available_actions`).
    pub(crate) action: String,
    /// A note for the record (and for the follow-up after `fix`).
    #[serde(default)]
    pub(crate) note: Option<String>,
    /// The commit message (`approve` only).
    #[serde(default)]
    pub(crate) message: Option<String>,
    /// The `patch_digest` of `orcho_delivery_gate` the decision is about:
    /// refused when the gate now holds another patch.
    #[serde(default)]
    pub(crate) patch_digest: Option<String>,
}

/// Reads `json` as the arguments of tool `tool` (for the fuzz targets);
/// an unknown tool is refused.
#[cfg(feature = "fuzzing")]
pub fn arguments(tool: &str, json: &[u8]) -> Result<(), String> {
    fn read<'a, T: Deserialize<'a>>(json: &'a [u8]) -> Result<(), String> {
        serde_json::from_slice::<T>(json)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
    match tool {
        "orcho_run_start" => read::<RunStartInput>(json),
        "orcho_run_evidence" => read::<EvidenceInput>(json),
        "orcho_phase_handoff_decide" => read::<HandoffDecideInput>(json),
        "orcho_handoff_advice" => read::<AdviceInput>(json),
        "orcho_delivery_decide" => read::<DeliveryDecideInput>(json),
        "orcho_touchpoint_answer" => read::<TouchpointAnswerInput>(json),
        "orcho_intake_decide" => read::<IntakeDecideInput>(json),
        "orcho_decide" => read::<DecideInput>(json),
        "orcho_run_status"
        | "orcho_point"
        | "orcho_run_resume"
        | "orcho_review_paused_run"
        | "orcho_delivery_gate"
        | "orcho_delivery_rerun"
        | "orcho_touchpoint"
        | "orcho_intake_gate" => read::<RunInput>(json),
        other => Err(format!("no tool `{other}`")),
    }
}
