//! A refused tool call: [`ToolError`], with a stable code a client can act
//! on.

use orcho::{EngineError, EngineErrorKind, Refusal, core::RunStatus};
use rmcp::model::CallToolResult;
use serde::Serialize;
use serde_json::Value;

use orcho_host::error::{CliError, CliErrorKind};

/// A refused call: the tool result has `isError: true` and the structured
/// content `{ "code", "message", "hint", "details" }`.
#[derive(Debug, Serialize)]
pub(crate) struct ToolError {
    code: &'static str,
    message: String,
    hint: Option<String>,
    details: Value,
}

/// What can be decided where a run waits.
#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize)]
struct AwaitingDetails<'a> {
    point: &'a str,
    handoff_id: Option<&'a str>,
    id: Option<&'a str>,
    available_actions: Vec<String>,
}

/// How a run ended.
#[derive(Debug, Serialize)]
struct TerminalDetails<'a> {
    status: &'static str,
    reason: Option<&'a str>,
}

/// The actions a handoff offers.
#[derive(Debug, Serialize)]
struct OfferedDetails {
    available_actions: Option<Vec<&'static str>>,
}

/// The spellings an `action` may take.
#[derive(Debug, Serialize)]
struct SpellingsDetails {
    actions: Vec<&'static str>,
}

impl ToolError {
    pub(crate) fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            hint: None,
            details: Value::Null,
        }
    }

    /// `invalid_input`.
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self::new("invalid_input", message)
    }

    /// `internal_error`, with the error's causes.
    pub(crate) fn internal(error: &(dyn std::error::Error + 'static)) -> Self {
        Self::new("internal_error", orcho::core::error_chain(error))
    }

    /// An action that is not one of `spellings`.
    pub(crate) fn bad_action(error: &impl std::fmt::Display, spellings: &[&'static str]) -> Self {
        Self::invalid(format!("`action`: {error}")).details(&SpellingsDetails {
            actions: spellings.to_vec(),
        })
    }

    /// A decision on a run that has ended.
    pub(crate) fn terminal(
        message: impl Into<String>,
        status: RunStatus,
        reason: Option<&str>,
    ) -> Self {
        Self::new("run_terminal", message)
            .hint("the run has ended; start a new one with orcho_run_start")
            .details(&TerminalDetails {
                status: status.as_str(),
                reason,
            })
    }

    /// A resume that found the run still waiting at `step`, with nobody's
    /// decision to act on: the point as the library's view names it, and
    /// the actions on offer.
    pub(crate) fn awaiting(run: &orcho::core::RunId, step: &orcho::Step) -> Self {
        use orcho::point::{PointKind, PointView};
        let Some(point) = PointView::of(run, step) else {
            return Self::new(
                "awaiting_decision",
                format!("run `{run}` waits; orcho_run_status says where"),
            );
        };
        let available: Vec<String> = point.actions.iter().map(|a| a.name.clone()).collect();
        let id = point
            .id
            .as_ref()
            .map_or_else(|| run.to_string(), ToString::to_string);
        let handoff = point.kind == PointKind::Handoff;
        let message = format!(
            "run `{run}`: caused by: the run is awaiting a decision on {} `{id}`; decide it \
             first (available: {})",
            point.kind,
            orcho::core::spelling::quoted(&available)
        );
        // The tool made for the point where there is one; any point, also
        // a kind this server does not know, through orcho_decide.
        let hint = match point.kind {
            PointKind::Handoff => {
                "decide it with orcho_phase_handoff_decide, then call orcho_run_resume"
            }
            PointKind::Delivery => {
                "decide it with orcho_delivery_decide, then call orcho_run_resume"
            }
            _ => {
                "orcho_point shows what each action does; decide it with orcho_decide, then call \
                 orcho_run_resume"
            }
        };
        Self::new("awaiting_decision", message)
            .hint(hint)
            .details(&AwaitingDetails {
                point: if handoff {
                    "phase_handoff"
                } else {
                    point.kind.as_str()
                },
                handoff_id: handoff.then_some(id.as_str()),
                id: (!handoff).then_some(id.as_str()),
                available_actions: available,
            })
    }

    pub(crate) fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    fn details(mut self, details: &impl Serialize) -> Self {
        self.details = serde_json::to_value(details).unwrap_or(Value::Null);
        self
    }

    /// The tool result that reports it.
    pub(crate) fn result(&self) -> CallToolResult {
        CallToolResult::structured_error(serde_json::to_value(self).unwrap_or(Value::Null))
    }
}

impl From<EngineError> for ToolError {
    fn from(e: EngineError) -> Self {
        Self::from_engine(&e)
    }
}

impl ToolError {
    fn from_engine(e: &EngineError) -> Self {
        let message = orcho::core::error_chain(e);
        if e.is_conflict() {
            return Self::new("decision_conflict", message).hint(
                "a decision is recorded once; read it with orcho_run_status and resume with orcho_run_resume",
            );
        }
        match e.kind() {
            EngineErrorKind::Refused(Refusal::Busy) => Self::new("run_busy", message)
                .hint("another process is driving this run; retry when it stops"),
            EngineErrorKind::Refused(Refusal::Elsewhere { .. }) => Self::new("run_elsewhere", message)
                .hint("decide it from here; it is driven only on the machine and checkout that created it"),
            EngineErrorKind::Refused(Refusal::AmbiguousRun { .. }) => Self::invalid(message)
                .hint("give more of the run's id; orcho_workspace_pending_decisions lists runs"),
            EngineErrorKind::Refused(Refusal::UnknownRun) => Self::new("unknown_run", message)
                .hint("orcho_workspace_pending_decisions lists the runs waiting for a decision"),
            EngineErrorKind::Refused(Refusal::Ended { status, reason }) => {
                Self::terminal(message, *status, Some(reason))
            }
            EngineErrorKind::Refused(Refusal::NoAdvisor) => Self::new("no_advisor", message).hint(
                "`orcho mcp` has no LLM advisor: use orcho_review_paused_run for a deterministic proposal, \
                 or read the findings and decide with orcho_phase_handoff_decide",
            ),
            EngineErrorKind::Refused(Refusal::NoDelivery) => Self::new("not_found", message),
            EngineErrorKind::Handoff(h) if h.is_terminal() => {
                Self::new("run_terminal", message)
                    .hint("the handoff was halted; start a new run with orcho_run_start")
            }
            EngineErrorKind::Handoff(h) if h.is_not_available() => {
                Self::invalid(message).details(&OfferedDetails {
                    available_actions: h
                        .available_actions()
                        .map(|a| a.iter().map(|a| a.as_str()).collect()),
                })
            }
            EngineErrorKind::Handoff(h) if h.is_not_found() => Self::new("not_found", message),
            EngineErrorKind::Handoff(h)
                if h.is_refused(|r| {
                    matches!(
                        r,
                        orcho::handoff::handoff::HandoffRefusal::UnknownAdvice(_)
                            | orcho::handoff::handoff::HandoffRefusal::AdviceForOtherHandoff { .. }
                    )
                }) =>
            {
                Self::invalid(message)
                    .hint("orcho_handoff_advice asks for advice and returns its advice_id")
            }
            EngineErrorKind::Delivery(d)
                if d.is_refused(|r| {
                    matches!(r, orcho::delivery::DeliveryRefusal::OperatorRequired { .. })
                }) =>
            {
                Self::new("operator_required", message)
                    .hint("an operator decides it with `orcho delivery decide` at a terminal")
            }
            EngineErrorKind::Delivery(d)
                if d.is_refused(orcho::delivery::DeliveryRefusal::is_not_available) =>
            {
                Self::invalid(message)
            }
            EngineErrorKind::Delivery(_) if e.target_conflict().is_some() => {
                Self::new("target_conflict", message).hint(
                    "the target checkout's uncommitted changes stand in the way; nothing was \
                     recorded: ask the operator to commit or stash them (orcho_delivery_gate \
                     shows the target's status), then decide again, or decide `skip`",
                )
            }
            EngineErrorKind::Delivery(d) if d.is_not_found() => Self::new("not_found", message)
                .hint("the run has not reached its delivery gate; see orcho_run_status"),
            _ => Self::new("internal_error", message),
        }
    }
}

impl From<CliError> for ToolError {
    fn from(e: CliError) -> Self {
        let hint = e.hint();
        let message = e.message();
        let error = match e.kind() {
            CliErrorKind::Engine(engine) => return Self::from_engine(engine),
            CliErrorKind::Refused(_) => Self::new("refused", message),
            // Refused before a run was created: no run to stop.
            // Found before a run was created: no run to stop; the error's
            // own hint says how to give one that starts.
            CliErrorKind::NotStartable(_) => {
                return Self::invalid(message).hint(hint.unwrap_or_else(|| {
                    "start a new run with a command that starts where the run runs it (a \
                     committed script, a program on PATH or an absolute path)"
                        .to_owned()
                }));
            }
            CliErrorKind::CannotStart(_) => {
                return Self::invalid(message).hint(
                    "the phase command runs in the run's worktree and must start there; start a \
                     new run with a command that does (this run stays stopped; `orcho cancel RUN` \
                     ends it)",
                );
            }
            CliErrorKind::Profile(_) => {
                return Self::invalid(message).hint(
                    "`profile` takes a YAML file or `builtin:default`, `builtin:quick`, `builtin:read_only_review`",
                );
            }
            CliErrorKind::Usage(_) => Self::invalid(message),
            _ => Self::new("internal_error", message),
        };
        match hint {
            Some(hint) => error.hint(hint),
            None => error,
        }
    }
}
