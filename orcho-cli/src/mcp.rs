//! `orcho mcp`: the run's decision points as MCP tools, over stdio.
//!
//! The tools follow the handoff rules: a decision tool records a decision
//! and never moves the run; `orcho_run_resume` acts on it. Proposals and
//! advice are shown, never applied. Deliveries go through the engine's
//! delivery gate only. Standard output is the protocol channel, so nothing
//! here prints to it; phase commands run with their output captured.
//!
//! A refused call is a tool result with `isError: true` whose structured
//! content is `{ "code", "message", "hint", "details" }`; `code` is one of
//! `decision_conflict`, `awaiting_decision`, `run_terminal`, `unknown_run`,
//! `run_busy`, `invalid_input`, `not_found`, `no_advisor`, `internal_error`.

use std::collections::BTreeMap;

use orcho::{
    Engine, EngineError, EngineErrorKind, Run, RunEvent, Step,
    core::{Finding, HandoffId, RunId, RunStatus, Verdict},
    handoff::{
        DecidedBy, DecisionRequest, DeliveryAction, DeliveryChoice, HandoffAction, HandoffChoice,
        PhaseHandoff,
    },
};
use rmcp::{
    ServerHandler, ServiceExt,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig},
    tool, tool_handler, tool_router,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{BoxError, Exit, args::Place, drive, show};

/// Serves the tools on standard input and output until the client closes
/// the connection.
pub(crate) async fn serve(place: Place) -> Result<Exit, BoxError> {
    let place = Place {
        json: true,
        ..place
    };
    let service = OrchoMcp::new(place).serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(Exit::Ok)
}

/// The MCP server: one checkout and its store. Serve it on any rmcp
/// transport (`orcho mcp` uses standard input and output).
#[derive(Debug, Clone)]
pub struct OrchoMcp {
    place: Place,
    tool_router: ToolRouter<Self>,
}

impl OrchoMcp {
    /// A server for `checkout`, with its store at `store` (default:
    /// `.orcho` in the checkout).
    pub fn for_checkout(checkout: camino::Utf8PathBuf, store: Option<camino::Utf8PathBuf>) -> Self {
        let store = store.unwrap_or_else(|| checkout.join(".orcho"));
        Self::new(Place {
            checkout,
            store,
            json: true,
        })
    }
}

/// A phase's command: an argv array, or one string split on whitespace
/// (never run by a shell).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
enum PhaseCommand {
    /// The argv.
    Argv(Vec<String>),
    /// A command line, split on whitespace.
    Line(String),
}

#[derive(Debug, Deserialize, JsonSchema)]
struct RunStartInput {
    /// The profile: a YAML file (relative to the checkout) or
    /// `builtin:<name>`; default `./orcho.yaml` when it exists, else
    /// `builtin:default`.
    #[serde(default)]
    profile: Option<String>,
    /// The command each phase runs, by phase name (exit 0 approves,
    /// anything else rejects). Phases without one are approved.
    #[serde(default)]
    phases: BTreeMap<String, PhaseCommand>,
    /// Work in the checkout itself: no worktree, no intake, no delivery
    /// gate.
    #[serde(default)]
    in_place: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct RunInput {
    /// The run id.
    run_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct EvidenceInput {
    /// The run id.
    run_id: String,
    /// Which part of the evidence bundle: `findings`, `phases`, `handoffs`,
    /// `receipts`, `delivery` or `all` (the default).
    #[serde(default)]
    slice: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct HandoffDecideInput {
    /// The run id.
    run_id: String,
    /// The handoff; default: the run's open handoff.
    #[serde(default)]
    handoff_id: Option<String>,
    /// `continue`, `retry_feedback`, `continue_with_waiver` or `halt`
    /// (one of the handoff's `available_actions`).
    action: String,
    /// The feedback for the next attempt (`retry_feedback`) or the
    /// waiver's reason (`continue_with_waiver`); required for those two.
    #[serde(default)]
    feedback: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct AdviceInput {
    /// The run id.
    run_id: String,
    /// The handoff; default: the run's open handoff.
    #[serde(default)]
    handoff_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct DeliveryDecideInput {
    /// The run id.
    run_id: String,
    /// `approve`, `apply`, `fix`, `skip` or `halt` (one of the gate's
    /// `available_actions`).
    action: String,
    /// A note for the record (and for the follow-up after `fix`).
    #[serde(default)]
    note: Option<String>,
    /// The commit message (`approve` only).
    #[serde(default)]
    message: Option<String>,
}

/// A refused call: a stable code a client can act on.
#[derive(Debug)]
struct ToolError {
    code: &'static str,
    message: String,
    hint: Option<String>,
    details: Value,
}

impl ToolError {
    fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            hint: None,
            details: Value::Null,
        }
    }

    fn invalid(message: impl Into<String>) -> Self {
        Self::new("invalid_input", message)
    }

    fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    fn details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }

    fn result(self) -> CallToolResult {
        CallToolResult::structured_error(json!({
            "code": self.code,
            "message": self.message,
            "hint": self.hint,
            "details": self.details,
        }))
    }
}

impl From<EngineError> for ToolError {
    fn from(e: EngineError) -> Self {
        let message = orcho::core::error_chain(&e);
        if e.is_conflict() {
            return Self::new("decision_conflict", message).hint(
                "a decision is recorded once; read it with orcho_run_status and resume with orcho_run_resume",
            );
        }
        match e.kind() {
            EngineErrorKind::Busy => Self::new("run_busy", message)
                .hint("another process is driving this run; retry when it stops"),
            EngineErrorKind::UnknownRun => Self::new("unknown_run", message)
                .hint("orcho_workspace_pending_decisions lists the runs waiting for a decision"),
            EngineErrorKind::AwaitingDecision { handoff, available } => {
                Self::new("awaiting_decision", message)
                    .hint("decide it with orcho_phase_handoff_decide, then call orcho_run_resume")
                    .details(json!({
                        "point": "phase_handoff",
                        "handoff_id": handoff.as_str(),
                        "available_actions": available.iter().map(|a| a.as_str()).collect::<Vec<_>>(),
                    }))
            }
            EngineErrorKind::AwaitingAnswer {
                point,
                id,
                available,
            } => Self::new("awaiting_decision", message)
                .hint(match *point {
                    "delivery gate" => {
                        "decide it with orcho_delivery_decide, then call orcho_run_resume"
                    }
                    _ => "answer it with the `orcho` CLI (`orcho intake`, `orcho plan …`, or `orcho resume` at a terminal), then call orcho_run_resume",
                })
                .details(json!({ "point": point, "id": id, "available_actions": available })),
            EngineErrorKind::Terminal { status, reason } => Self::new("run_terminal", message)
                .hint("the run has ended; start a new one with orcho_run_start")
                .details(json!({ "status": status.as_str(), "reason": reason })),
            EngineErrorKind::NoAdvisor => Self::new("no_advisor", message).hint(
                "`orcho mcp` has no LLM advisor: use orcho_review_paused_run for a deterministic proposal, \
                 or read the findings and decide with orcho_phase_handoff_decide",
            ),
            EngineErrorKind::Handoff(h) if h.is_terminal() => {
                Self::new("run_terminal", message)
                    .hint("the handoff was halted; start a new run with orcho_run_start")
            }
            EngineErrorKind::Handoff(h) if h.is_not_available() => {
                Self::new("invalid_input", message).details(json!({
                    "available_actions": h.available_actions().map(|a| a.iter().map(|a| a.as_str()).collect::<Vec<_>>()),
                }))
            }
            EngineErrorKind::Handoff(h) if h.is_not_found() => Self::new("not_found", message),
            EngineErrorKind::Delivery(d)
                if d.is_refused(orcho::delivery::DeliveryRefusal::is_not_available) =>
            {
                Self::new("invalid_input", message)
            }
            EngineErrorKind::Delivery(d) if d.is_not_found() => Self::new("not_found", message)
                .hint("the run has not reached its delivery gate; see orcho_run_status"),
            EngineErrorKind::NoDelivery => Self::new("not_found", message),
            _ => Self::new("internal_error", message),
        }
    }
}

impl From<BoxError> for ToolError {
    fn from(e: BoxError) -> Self {
        match e.downcast::<EngineError>() {
            Ok(engine) => Self::from(*engine),
            Err(other) => {
                let message = orcho::core::error_chain(other.as_ref());
                if other
                    .downcast_ref::<orcho::profile::ProfileError>()
                    .is_some()
                {
                    Self::invalid(message).hint(
                        "`profile` takes a YAML file or `builtin:default`, `builtin:quick`, `builtin:read_only_review`",
                    )
                } else {
                    Self::new("internal_error", message)
                }
            }
        }
    }
}

type ToolResult = Result<Value, ToolError>;

fn respond(result: ToolResult) -> CallToolResult {
    match result {
        Ok(value) => CallToolResult::structured(value),
        Err(e) => e.result(),
    }
}

fn parse_run(run: &str) -> Result<RunId, ToolError> {
    run.parse()
        .map_err(|e| ToolError::invalid(format!("`run_id` `{run}` is not a run id: {e}")))
}

fn parse_handoff(handoff: &str) -> Result<HandoffId, ToolError> {
    handoff.parse().map_err(|e| {
        ToolError::invalid(format!("`handoff_id` `{handoff}` is not a handoff id: {e}"))
    })
}

/// Refuses a decision on a run that has ended.
fn refuse_terminal(run: &RunId, status: RunStatus, reason: Option<&str>) -> Result<(), ToolError> {
    if status.is_terminal() {
        return Err(ToolError::new(
            "run_terminal",
            format!(
                "run `{run}` is {status}{}",
                reason.map(|r| format!(": {r}")).unwrap_or_default()
            ),
        )
        .hint("the run has ended; start a new one with orcho_run_start")
        .details(json!({ "status": status.as_str(), "reason": reason })));
    }
    Ok(())
}

fn handoff_doc(engine: &Engine, run: &RunId, handoff: &PhaseHandoff) -> ToolResult {
    let decision = engine
        .handoffs()
        .recorded_decision(run, handoff.id())
        .map_err(|e| ToolError::new("internal_error", orcho::core::error_chain(&e)))?;
    let decided = decision.as_ref().map(|d| d.decision().payload().clone());
    let shown = show::handoff_json(handoff, decided.as_ref());
    Ok(json!({
        "handoff_id": handoff.id().as_str(),
        "phase": handoff.phase().as_str(),
        "verdict": handoff.verdict().as_str(),
        "trigger": handoff.trigger().to_string(),
        "available_actions": shown["available_actions"],
        "findings": handoff.findings(),
        "decision": shown["decision"],
    }))
}

fn open_handoff(engine: &Engine, run: &RunId) -> Result<Option<PhaseHandoff>, ToolError> {
    let state = engine.runs().read(run)?;
    match state.handoff() {
        Some(id) => Ok(Some(engine.handoffs().handoff(run, id).map_err(|e| {
            ToolError::new("internal_error", orcho::core::error_chain(&e))
        })?)),
        None => Ok(None),
    }
}

/// Where the run stands and what it waits on.
fn status_doc(engine: &Engine, run: &RunId) -> ToolResult {
    let state = engine.runs().read(run)?;
    let awaiting = match state.status() {
        RunStatus::AwaitingPhaseHandoff => Some("phase_handoff"),
        RunStatus::AwaitingDelivery => Some("delivery_gate"),
        RunStatus::AwaitingIntake => Some("intake"),
        RunStatus::AwaitingQuestions
        | RunStatus::AwaitingPlanApproval
        | RunStatus::AwaitingDeviation => Some("touchpoint"),
        _ => None,
    };
    let mut meta = serde_json::Map::new();
    let mut next = Vec::new();
    if let Some(handoff) = open_handoff(engine, run)? {
        let doc = handoff_doc(engine, run, &handoff)?;
        if doc["decision"].is_null() {
            next.push(
                "read the findings (orcho_run_evidence slice=findings), decide with orcho_phase_handoff_decide, then orcho_run_resume",
            );
        } else {
            next.push("a decision is recorded: call orcho_run_resume");
        }
        meta.insert("phase_handoff".to_owned(), doc);
    }
    if state.status() == RunStatus::AwaitingDelivery {
        let gate = engine.delivery_gate(run)?;
        meta.insert("delivery_gate".to_owned(), show::gate_json(&gate));
        next.push("decide the delivery with orcho_delivery_decide, then orcho_run_resume");
    }
    if let Some(id) = &state.touchpoint() {
        meta.insert(
            "touchpoint".to_owned(),
            json!({ "id": id.as_str(), "status": state.status().as_str() }),
        );
        next.push("answer it with the `orcho` CLI, then orcho_run_resume");
    }
    if state.status() == RunStatus::AwaitingIntake {
        next.push("decide it with `orcho intake <run> <action>`, then orcho_run_resume");
    }
    if state.status().is_terminal() {
        next.push("the run has ended; orcho_run_evidence has its evidence");
    }
    Ok(json!({
        "run_id": run.as_str(),
        "status": state.status().as_str(),
        "reason": state.reason(),
        "plan": state.plan(),
        "phase": state.current_phase().map(|p| p.as_str()),
        "attempt": state.attempt(),
        "round": state.round(),
        "awaiting": awaiting,
        "meta": meta,
        "next": next,
    }))
}

/// The findings a decision is about: the open (or last) handoff's, and the
/// last reported attempt of each phase.
fn findings_doc(engine: &Engine, run: &RunId) -> ToolResult {
    let handoffs = engine
        .handoffs()
        .handoffs(run)
        .map_err(|e| ToolError::new("internal_error", orcho::core::error_chain(&e)))?;
    let state = engine.runs().read(run)?;
    let handoff = match &state.handoff() {
        Some(id) => handoffs.iter().find(|h| h.id() == *id),
        None => handoffs.last(),
    };
    let handoff = handoff.map(|h| handoff_doc(engine, run, h)).transpose()?;
    let mut last: BTreeMap<String, Value> = BTreeMap::new();
    for (_, event) in engine.runs().events(run)? {
        if let RunEvent::PhaseReported {
            phase,
            attempt,
            round,
            outcome,
            ..
        } = event
        {
            last.insert(
                phase.to_string(),
                json!({
                    "phase": phase.as_str(),
                    "attempt": attempt,
                    "round": round,
                    "verdict": outcome.verdict.as_str(),
                    "summary": outcome.summary,
                    "findings": outcome.findings,
                }),
            );
        }
    }
    Ok(json!({
        "run_id": run.as_str(),
        "open": state.handoff().is_some(),
        "handoff": handoff,
        "attempts": last.into_values().collect::<Vec<_>>(),
    }))
}

/// A deterministic proposal for a handoff, from its verdict and findings.
fn propose(handoff: &PhaseHandoff) -> (HandoffAction, Option<String>, String) {
    let available = handoff.available_actions();
    let findings = handoff.findings();
    if handoff.verdict() == Verdict::Approved && available.contains(HandoffAction::Continue) {
        return (
            HandoffAction::Continue,
            None,
            format!("the phase `{}` was approved", handoff.phase()),
        );
    }
    if available.contains(HandoffAction::RetryFeedback) {
        let feedback = if findings.is_empty() {
            format!(
                "The phase `{}` was {} without findings: find what blocks it and fix it.",
                handoff.phase(),
                handoff.verdict()
            )
        } else {
            let items: Vec<String> = findings.iter().map(finding_item).collect();
            format!("Fix these findings: {}", items.join("; "))
        };
        return (
            HandoffAction::RetryFeedback,
            Some(feedback),
            format!(
                "the phase `{}` was {} with {} finding(s); retrying with them as feedback is the smallest honest step",
                handoff.phase(),
                handoff.verdict(),
                findings.len()
            ),
        );
    }
    if available.contains(HandoffAction::Halt) {
        return (
            HandoffAction::Halt,
            None,
            format!(
                "the phase `{}` was {} and no retry is offered",
                handoff.phase(),
                handoff.verdict()
            ),
        );
    }
    (
        HandoffAction::Continue,
        None,
        "continue is the only action offered".to_owned(),
    )
}

fn finding_item(f: &Finding) -> String {
    match (&f.file, f.line) {
        (Some(file), Some(line)) => format!("[{}] {} ({file}:{line})", f.severity, f.title),
        (Some(file), None) => format!("[{}] {} ({file})", f.severity, f.title),
        _ => format!("[{}] {}", f.severity, f.title),
    }
}

impl OrchoMcp {
    fn engine(&self, run: &RunId) -> Result<Engine, ToolError> {
        let engine = drive::engine_for(&self.place, Some(run))?;
        Ok(engine)
    }

    /// Drives a run until it finishes or pauses, then releases it.
    async fn drive_on(
        &self,
        run: &mut Run,
        mut step: Step,
        config: &drive::RunConfig,
    ) -> Result<(), ToolError> {
        loop {
            step = match step {
                Step::RunPhase(request) => {
                    let report =
                        drive::run_phase(&self.place, config, run.state().checkout(), &request)
                            .await?;
                    run.complete_phase(report).await?
                }
                Step::Finished { .. } => return Ok(()),
                _ => match drive::decided_elsewhere(run).await? {
                    Some(step) => step,
                    None => return Ok(()),
                },
            };
        }
    }

    /// Recording a handoff decision, shared by the decide tool.
    fn decide_handoff(&self, input: &HandoffDecideInput) -> ToolResult {
        let run = parse_run(&input.run_id)?;
        let engine = self.engine(&run)?;
        let state = engine.runs().read(&run)?;
        refuse_terminal(&run, state.status(), state.reason())?;
        let handoff = match input.handoff_id.as_deref() {
            Some(h) => parse_handoff(h)?,
            None => state.handoff().cloned().ok_or_else(|| {
                ToolError::invalid(format!(
                    "run `{run}` is not paused at a phase handoff (it is {})",
                    state.status()
                ))
                .hint("orcho_run_status says what the run waits on")
            })?,
        };
        let action: HandoffAction = input.action.parse().map_err(|e| {
            ToolError::invalid(format!("`action`: {e}")).details(json!({
                "actions": HandoffAction::ALL.iter().map(|a| a.as_str()).collect::<Vec<_>>(),
            }))
        })?;
        let feedback = input.feedback.as_deref().filter(|f| !f.trim().is_empty());
        let choice = HandoffChoice::new(action, feedback)
            .map_err(|e| ToolError::invalid(orcho::core::error_chain(&e)))?;
        engine.decide(
            &run,
            &handoff,
            DecisionRequest::new(choice, DecidedBy::Operator),
        )?;
        Ok(json!({
            "run_id": run.as_str(),
            "handoff_id": handoff.as_str(),
            "action": action.as_str(),
            "feedback": feedback,
            "recorded": true,
            "next": if action == HandoffAction::Halt {
                "call orcho_run_resume to stop the run at this handoff"
            } else {
                "call orcho_run_resume to act on it"
            },
        }))
    }

    async fn start_run(&self, input: RunStartInput) -> ToolResult {
        let mut phases = BTreeMap::new();
        for (phase, command) in input.phases {
            let argv: Vec<String> = match command {
                PhaseCommand::Argv(argv) => argv,
                PhaseCommand::Line(line) => line.split_whitespace().map(str::to_owned).collect(),
            };
            if argv.is_empty() || argv.iter().any(String::is_empty) {
                return Err(ToolError::invalid(format!(
                    "`phases.{phase}`: the command is empty"
                )));
            }
            phases.insert(phase, argv);
        }
        // Unknown phase names are bad input, said before anything starts.
        let (_, plan) = super::args::load_profile(&self.place, input.profile.as_deref())?;
        if let Some(name) = phases
            .keys()
            .find(|name| !plan.phases.iter().any(|p| p.name.as_str() == name.as_str()))
        {
            let known: Vec<&str> = plan.phases.iter().map(|p| p.name.as_str()).collect();
            return Err(ToolError::invalid(format!(
                "`phases.{name}`: the profile has no phase `{name}` (its phases: {})",
                known.join(", ")
            )));
        }
        let (config, mut run) = drive::begin(
            &self.place,
            input.profile.as_deref(),
            phases,
            input.in_place,
        )?;
        let id = run.id().clone();
        let step = run.next().await?;
        self.drive_on(&mut run, step, &config).await?;
        let engine = run.engine().clone();
        drop(run);
        status_doc(&engine, &id)
    }

    async fn resume_run(&self, input: RunInput) -> ToolResult {
        let id = parse_run(&input.run_id)?;
        let engine = self.engine(&id)?;
        let state = engine.runs().read(&id)?;
        refuse_terminal(&id, state.status(), state.reason())?;
        let config = drive::read_config(&self.place, &id)?.ok_or_else(|| {
            ToolError::invalid(format!(
                "run `{id}` was not started by `orcho run` or orcho_run_start (no cli.json); drive it with its own host"
            ))
        })?;
        let mut run = engine.open(&id)?;
        let step = match run.resume().await {
            Ok(step) => step,
            Err(e) if matches!(e.kind(), EngineErrorKind::WrongState { .. }) => run.next().await?,
            Err(e) if e.is_terminal() => run.next().await?,
            Err(e) => return Err(e.into()),
        };
        self.drive_on(&mut run, step, &config).await?;
        drop(run);
        status_doc(&engine, &id)
    }

    fn evidence(&self, input: &EvidenceInput) -> ToolResult {
        let run = parse_run(&input.run_id)?;
        let slice = input.slice.as_deref().unwrap_or("all");
        if !matches!(
            slice,
            "findings" | "phases" | "handoffs" | "receipts" | "delivery" | "all"
        ) {
            return Err(ToolError::invalid(format!(
                "`slice` `{slice}` is not one of findings, phases, handoffs, receipts, delivery, all"
            )));
        }
        let engine = self.engine(&run)?;
        if slice == "findings" {
            return findings_doc(&engine, &run);
        }
        let evidence = engine.evidence(&run)?;
        let all = serde_json::to_value(&evidence)
            .map_err(|e| ToolError::new("internal_error", e.to_string()))?;
        Ok(match slice {
            "all" => all,
            part => json!({ "run_id": run.as_str(), "status": all["status"], part: all[part] }),
        })
    }

    fn review(&self, input: &RunInput) -> ToolResult {
        let run = parse_run(&input.run_id)?;
        let engine = self.engine(&run)?;
        let status = status_doc(&engine, &run)?;
        let Some(handoff) = open_handoff(&engine, &run)? else {
            return Ok(json!({
                "run_id": run.as_str(),
                "status": status,
                "findings": null,
                "proposal": null,
                "note": "the run is not paused at a phase handoff; nothing to propose",
            }));
        };
        let findings = findings_doc(&engine, &run)?;
        let advice = engine
            .handoffs()
            .advice_records(&run)
            .map_err(|e| ToolError::new("internal_error", orcho::core::error_chain(&e)))?
            .into_iter()
            .rfind(|a| a.handoff() == handoff.id());
        let (action, feedback, rationale, source, advice_id) = match &advice {
            Some(record) => {
                let a = record.advice();
                (
                    a.recommended_action,
                    a.retry_feedback.clone(),
                    a.rationale.clone(),
                    "advice",
                    Some(record.id().to_string()),
                )
            }
            None => {
                let (action, feedback, rationale) = propose(&handoff);
                (action, feedback, rationale, "deterministic", None)
            }
        };
        let mut arguments = json!({
            "run_id": run.as_str(),
            "handoff_id": handoff.id().as_str(),
            "action": action.as_str(),
        });
        if let Some(f) = &feedback {
            arguments["feedback"] = json!(f);
        }
        Ok(json!({
            "run_id": run.as_str(),
            "status": status,
            "findings": findings,
            "proposal": {
                "kind": "proposal",
                "applied": false,
                "requires_confirmation": true,
                "source": source,
                "advice_id": advice_id,
                "action": action.as_str(),
                "feedback": feedback,
                "rationale": rationale,
                "confirm_with": { "tool": "orcho_phase_handoff_decide", "arguments": arguments },
                "then": "orcho_run_resume",
            },
            "note": "PROPOSED decision only: nothing was decided. Confirm with the operator, then call orcho_phase_handoff_decide.",
        }))
    }

    async fn advise(&self, input: AdviceInput) -> ToolResult {
        let run = parse_run(&input.run_id)?;
        let engine = self.engine(&run)?;
        let state = engine.runs().read(&run)?;
        let handoff = match input.handoff_id.as_deref() {
            Some(h) => parse_handoff(h)?,
            None => state.handoff().cloned().ok_or_else(|| {
                ToolError::invalid(format!(
                    "run `{run}` is not paused at a phase handoff (it is {})",
                    state.status()
                ))
            })?,
        };
        let record = engine.advise(&run, &handoff).await?;
        let a = record.advice();
        Ok(json!({
            "run_id": run.as_str(),
            "handoff_id": handoff.as_str(),
            "advice_id": record.id().to_string(),
            "advisor": record.advisor(),
            "recommended_action": a.recommended_action.as_str(),
            "confidence": a.confidence.value(),
            "rationale": a.rationale,
            "risks": a.risks,
            "retry_feedback": a.retry_feedback,
            "expected_files": a.expected_files,
            "applied": false,
            "note": "advice is not a decision; confirm with the operator, then call orcho_phase_handoff_decide",
        }))
    }

    fn gate(&self, input: &RunInput) -> ToolResult {
        let run = parse_run(&input.run_id)?;
        let engine = self.engine(&run)?;
        engine.runs().read(&run)?;
        let gate = engine.delivery_gate(&run)?;
        Ok(show::gate_json(&gate))
    }

    fn decide_delivery(&self, input: DeliveryDecideInput) -> ToolResult {
        let run = parse_run(&input.run_id)?;
        let engine = self.engine(&run)?;
        let state = engine.runs().read(&run)?;
        refuse_terminal(&run, state.status(), state.reason())?;
        let action: DeliveryAction = input.action.parse().map_err(|e| {
            ToolError::invalid(format!("`action`: {e}")).details(json!({
                "actions": DeliveryAction::ALL.iter().map(|a| a.as_str()).collect::<Vec<_>>(),
            }))
        })?;
        let choice = DeliveryChoice::from_parts(action, input.message, input.note)
            .map_err(|e| ToolError::invalid(orcho::core::error_chain(&e)))?;
        engine.decide_delivery(&run, DecisionRequest::new(choice, DecidedBy::Operator))?;
        Ok(json!({
            "run_id": run.as_str(),
            "action": action.as_str(),
            "recorded": true,
            "next": "call orcho_run_resume to deliver it",
        }))
    }

    fn inbox(&self) -> ToolResult {
        let engine = drive::engine_for(&self.place, None)?;
        let inbox = engine.inbox()?;
        Ok(show::inbox_json(&inbox, "run_id"))
    }
}

#[tool_router]
impl OrchoMcp {
    fn new(place: Place) -> Self {
        Self {
            place,
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        name = "orcho_run_start",
        description = "Start a run (like `orcho run --no-interactive`) and drive it until it finishes or pauses at a decision point. Returns the run's status, what it awaits, and its run id."
    )]
    async fn orcho_run_start(
        &self,
        Parameters(input): Parameters<RunStartInput>,
    ) -> CallToolResult {
        respond(self.start_run(input).await)
    }

    #[tool(
        name = "orcho_run_status",
        description = "A run's status, reason, current phase and attempt; when paused at a phase handoff, meta.phase_handoff = {handoff_id, phase, verdict, available_actions, findings}; at the delivery gate, meta.delivery_gate."
    )]
    fn orcho_run_status(&self, Parameters(input): Parameters<RunInput>) -> CallToolResult {
        respond(parse_run(&input.run_id).and_then(|run| status_doc(&self.engine(&run)?, &run)))
    }

    #[tool(
        name = "orcho_run_evidence",
        description = "A run's evidence bundle, or one slice of it: findings (of the open handoff and the last phase attempts), phases, handoffs, receipts, delivery, all."
    )]
    fn orcho_run_evidence(&self, Parameters(input): Parameters<EvidenceInput>) -> CallToolResult {
        respond(self.evidence(&input))
    }

    #[tool(
        name = "orcho_phase_handoff_decide",
        description = "Record a decision on a phase handoff (continue, retry_feedback, continue_with_waiver, halt). It does NOT resume the run: call orcho_run_resume next. Deciding again with a different payload is refused (decision_conflict)."
    )]
    fn orcho_phase_handoff_decide(
        &self,
        Parameters(input): Parameters<HandoffDecideInput>,
    ) -> CallToolResult {
        respond(self.decide_handoff(&input))
    }

    #[tool(
        name = "orcho_run_resume",
        description = "Act on the recorded decisions and drive the run on until it finishes or pauses (like `orcho resume --no-interactive`). Refused while a decision is still missing (awaiting_decision) or when the run has ended (run_terminal)."
    )]
    async fn orcho_run_resume(&self, Parameters(input): Parameters<RunInput>) -> CallToolResult {
        respond(self.resume_run(input).await)
    }

    #[tool(
        name = "orcho_handoff_advice",
        description = "Ask the configured advisor for a recommendation on a paused handoff; the advice is recorded, never applied. This server has no advisor configured and says so (no_advisor)."
    )]
    async fn orcho_handoff_advice(
        &self,
        Parameters(input): Parameters<AdviceInput>,
    ) -> CallToolResult {
        respond(self.advise(input).await)
    }

    #[tool(
        name = "orcho_review_paused_run",
        description = "The guided review of a paused run: status, findings, and a PROPOSED decision (from recorded advice, or deterministic from the verdict and findings). It decides nothing: confirm with the operator, then call orcho_phase_handoff_decide."
    )]
    fn orcho_review_paused_run(&self, Parameters(input): Parameters<RunInput>) -> CallToolResult {
        respond(self.review(&input))
    }

    #[tool(
        name = "orcho_delivery_gate",
        description = "A run's delivery gate: release verdict, diff, gaps, findings, available and blocked actions, and the recorded decision."
    )]
    fn orcho_delivery_gate(&self, Parameters(input): Parameters<RunInput>) -> CallToolResult {
        respond(self.gate(&input))
    }

    #[tool(
        name = "orcho_delivery_decide",
        description = "Record the delivery decision (approve, apply, fix, skip, halt). It does NOT deliver: call orcho_run_resume next. The engine delivers exactly the run's diff."
    )]
    fn orcho_delivery_decide(
        &self,
        Parameters(input): Parameters<DeliveryDecideInput>,
    ) -> CallToolResult {
        respond(self.decide_delivery(input))
    }

    #[tool(
        name = "orcho_workspace_pending_decisions",
        description = "Every run of this checkout's store that waits for a decision, newest first, with the suggested next step."
    )]
    fn orcho_workspace_pending_decisions(&self) -> CallToolResult {
        respond(self.inbox())
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for OrchoMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("orcho", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Orcho's decision points for the runs of one checkout. To handle a paused run: \
                 orcho_run_status, orcho_run_evidence (slice=findings), orcho_phase_handoff_decide, \
                 orcho_run_resume. Decisions are recorded, not applied: only resume moves a run.",
            )
    }
}
