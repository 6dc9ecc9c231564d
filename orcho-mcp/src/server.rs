//! The server: its tools, as the client sees them.

use camino::Utf8PathBuf;
use rmcp::{
    Peer, RoleServer, ServerHandler, ServiceExt,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig},
    tool, tool_handler, tool_router,
};

use super::{
    input::{
        AdviceInput, DecideInput, DeliveryDecideInput, EvidenceInput, HandoffDecideInput,
        IntakeDecideInput, RunInput, RunStartInput, StatusInput, TouchpointAnswerInput,
        VerifyInput,
    },
    tools::{ToolResult, status_doc},
};
use orcho_host::{error::CliError, exit::Exit, place::Place};

/// Serves the tools on standard input and output until the client closes
/// the connection.
pub async fn serve(place: Place) -> Result<Exit, CliError> {
    let place = Place {
        voice: orcho_host::place::Voice::Quiet,
        ..place
    };
    let service = OrchoMcp::new(place)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(CliError::failed)?;
    service.waiting().await?;
    Ok(Exit::Ok)
}

/// The MCP server: one checkout and its store. Serve it on any rmcp
/// transport (`orcho mcp` uses standard input and output).
#[derive(Debug, Clone)]
pub struct OrchoMcp {
    pub(super) place: Place,
    tool_router: ToolRouter<Self>,
}

impl OrchoMcp {
    /// Sends what a tool call opened, decided or ended in the background
    /// (see [`orcho_host::notifying`]), and returns its result.
    fn kick<T>(&self, result: T) -> T {
        orcho_host::notifying::kick(&self.place);
        result
    }

    /// A server for `checkout`, with its store at `store` (default:
    /// `.orcho` in the checkout).
    pub fn for_checkout(checkout: Utf8PathBuf, store: Option<Utf8PathBuf>) -> Self {
        let store = store.unwrap_or_else(|| checkout.join(orcho::core::layout::DEFAULT_STORE_DIR));
        Self::new(Place {
            checkout,
            store,
            shared: None,
            store_named: None,
            actor: orcho_host::place::Actor::default(),
            voice: orcho_host::place::Voice::Quiet,
        })
    }

    /// Signs and checks receipts with `key` instead of the one `orcho`
    /// reads from `ORCHO_RECEIPT_KEY` or its key file: for a host that
    /// embeds the server and keeps its own key.
    #[must_use]
    pub fn with_receipt_key(mut self, key: orcho::receipts::ReceiptKey) -> Self {
        self.place.actor.receipt_key = Some(key);
        self
    }
}

fn respond(result: ToolResult) -> CallToolResult {
    match result {
        Ok(value) => CallToolResult::structured(value),
        Err(e) => e.result(),
    }
}

/// The client a decision over MCP is recorded as: its name and version,
/// as it gave them at `initialize`.
fn client_of(peer: &Peer<RoleServer>) -> String {
    peer.peer_info().map_or_else(
        || "an MCP client that did not name itself".to_owned(),
        |info| format!("{} {}", info.client_info.name, info.client_info.version),
    )
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
        respond(self.kick(self.start_run(input).await))
    }

    #[tool(
        name = "orcho_run_status",
        description = "A run's status, reason, current phase and attempt; when paused at a phase handoff, meta.phase_handoff = {handoff_id, phase, verdict, available_actions, findings}; at the delivery gate, meta.delivery_gate."
    )]
    fn orcho_run_status(&self, Parameters(input): Parameters<RunInput>) -> CallToolResult {
        respond(
            self.find_run("run_id", &input.run_id)
                .and_then(|run| status_doc(&self.store(), &run)),
        )
    }

    #[tool(
        name = "orcho_run_evidence",
        description = "A run's evidence bundle, or one slice of it: findings (of the open handoff and the last phase attempts), phases, handoffs, handoff_advice (did advice help), touchpoints, receipts, delivery, cost, all."
    )]
    fn orcho_run_evidence(&self, Parameters(input): Parameters<EvidenceInput>) -> CallToolResult {
        respond(self.evidence(&input))
    }

    #[tool(
        name = "orcho_phase_handoff_decide",
        description = "Record a decision on a phase handoff (continue, retry_feedback, continue_with_waiver, halt). It does NOT resume the run: call orcho_run_resume next. Deciding again with a different payload is refused (decision_conflict). Recorded as decided by this client (its name and version), not by an operator."
    )]
    #[expect(
        clippy::needless_pass_by_value,
        reason = "rmcp hands a tool its peer by value"
    )]
    fn orcho_phase_handoff_decide(
        &self,
        Parameters(input): Parameters<HandoffDecideInput>,
        peer: Peer<RoleServer>,
    ) -> CallToolResult {
        respond(self.kick(self.decide_handoff(&input, &client_of(&peer))))
    }

    #[tool(
        name = "orcho_run_resume",
        description = "Act on the recorded decisions and drive the run on until it finishes or pauses (like `orcho resume --no-interactive`). Refused while a decision is still missing (awaiting_decision) or when the run has ended (run_terminal)."
    )]
    async fn orcho_run_resume(&self, Parameters(input): Parameters<RunInput>) -> CallToolResult {
        respond(self.kick(self.resume_run(input).await))
    }

    #[tool(
        name = "orcho_handoff_advice",
        description = "Ask the profile's advisor (its `advisor:` block: a model) for a recommendation on a paused handoff; the advice is recorded with an advice_id, never applied (pass advice_id to orcho_phase_handoff_decide to follow it). Without an advisor the call is refused (no_advisor)."
    )]
    async fn orcho_handoff_advice(
        &self,
        Parameters(input): Parameters<AdviceInput>,
    ) -> CallToolResult {
        respond(self.advise(input).await)
    }

    #[tool(
        name = "orcho_review_paused_run",
        description = "The guided review of a paused run: status, findings, and a PROPOSED decision (from the profile's advisor, asked now when it has not been, else deterministic from the verdict and findings). It decides nothing: confirm with the operator, then call orcho_phase_handoff_decide."
    )]
    async fn orcho_review_paused_run(
        &self,
        Parameters(input): Parameters<RunInput>,
    ) -> CallToolResult {
        respond(self.review(&input).await)
    }

    #[tool(
        name = "orcho_delivery_gate",
        description = "A run's delivery gate: release verdict, diff, gaps, findings, available and blocked actions, and the recorded decision."
    )]
    fn orcho_delivery_gate(&self, Parameters(input): Parameters<RunInput>) -> CallToolResult {
        respond(self.gate(&input))
    }

    #[tool(
        name = "orcho_delivery_rerun",
        description = "At a run's delivery gate, before it is decided: run again, in the run's worktree, the required commands whose receipts are missing or stale, then return the gate as it is now (its `rerun` lists what ran). For a gate that shows gaps with next action re-run."
    )]
    async fn orcho_delivery_rerun(
        &self,
        Parameters(input): Parameters<RunInput>,
    ) -> CallToolResult {
        respond(self.rerun_at_gate(&input).await)
    }

    #[tool(
        name = "orcho_delivery_decide",
        description = "Record the delivery decision (approve, apply, fix, skip, halt). It does NOT deliver: call orcho_run_resume next. The engine delivers exactly the run's diff. Recorded as decided by this client; a profile may let only an operator approve (operator_required)."
    )]
    #[expect(
        clippy::needless_pass_by_value,
        reason = "rmcp hands a tool its peer by value"
    )]
    fn orcho_delivery_decide(
        &self,
        Parameters(input): Parameters<DeliveryDecideInput>,
        peer: Peer<RoleServer>,
    ) -> CallToolResult {
        respond(self.kick(self.decide_delivery(input, &client_of(&peer))))
    }

    #[tool(
        name = "orcho_touchpoint",
        description = "The supervision touchpoint a run waits at: plan_approval (the plan, bound to its digest), planner_questions, or deviation (the failed step); its questions with their options, and how to answer with orcho_touchpoint_answer."
    )]
    fn orcho_touchpoint(&self, Parameters(input): Parameters<RunInput>) -> CallToolResult {
        respond(self.touchpoint(&input))
    }

    #[tool(
        name = "orcho_touchpoint_answer",
        description = "Answer the run's open touchpoint: one answer per question, in order. Plan approval: [\"Approve\"|\"Request Changes\"|\"Reject\", feedback]; deviation: [\"Retry\"|\"Replan\"|\"Stop\", note]; planner questions: the answers. It does NOT resume the run: call orcho_run_resume next. Recorded as decided by a client."
    )]
    #[expect(
        clippy::needless_pass_by_value,
        reason = "rmcp hands a tool its peer by value"
    )]
    fn orcho_touchpoint_answer(
        &self,
        Parameters(input): Parameters<TouchpointAnswerInput>,
        peer: Peer<RoleServer>,
    ) -> CallToolResult {
        respond(self.kick(self.answer_touchpoint(&input, &client_of(&peer))))
    }

    #[tool(
        name = "orcho_point",
        description = "The decision point a run waits at, whatever its kind (handoff, intake, plan approval, planner questions, deviation, delivery): what waits in one line, each action with what it does and whether it needs a note, the questions a touchpoint asks, and what a decision is pinned to by digest. `point` is null when nothing waits."
    )]
    fn orcho_point(&self, Parameters(input): Parameters<RunInput>) -> CallToolResult {
        respond(self.point(&input))
    }

    #[tool(
        name = "orcho_decide",
        description = "Decide the run's open point by an action's name from orcho_point, with its note where it takes one; `point_id` and `digest` (from orcho_point) refuse a decision on a point that moved or changed since. It does NOT move the run: call orcho_run_resume next. Recorded as decided by this client."
    )]
    #[expect(
        clippy::needless_pass_by_value,
        reason = "rmcp hands a tool its peer by value"
    )]
    fn orcho_decide(
        &self,
        Parameters(input): Parameters<DecideInput>,
        peer: Peer<RoleServer>,
    ) -> CallToolResult {
        respond(self.kick(self.decide_point(&input, &client_of(&peer))))
    }

    #[tool(
        name = "orcho_intake_gate",
        description = "A run's pre-run intake question: the uncommitted changes in its target checkout, and the actions (include, exclude, commit, halt)."
    )]
    fn orcho_intake_gate(&self, Parameters(input): Parameters<RunInput>) -> CallToolResult {
        respond(self.intake_gate(&input))
    }

    #[tool(
        name = "orcho_intake_decide",
        description = "Record the pre-run intake decision (include, exclude, commit with a message, halt). It does NOT start the run: call orcho_run_resume next. Recorded as decided by this client."
    )]
    #[expect(
        clippy::needless_pass_by_value,
        reason = "rmcp hands a tool its peer by value"
    )]
    fn orcho_intake_decide(
        &self,
        Parameters(input): Parameters<IntakeDecideInput>,
        peer: Peer<RoleServer>,
    ) -> CallToolResult {
        respond(self.kick(self.decide_intake(input, &client_of(&peer))))
    }

    #[tool(
        name = "orcho_verify",
        description = "Run the profile's declared verification commands (default: the required ones) in this checkout and write their receipts, as `orcho verify` does. Returns each command's result and `passed`; a command that exits 0 having run no test is not a pass (vacuous)."
    )]
    async fn orcho_verify(&self, Parameters(input): Parameters<VerifyInput>) -> CallToolResult {
        respond(self.verify(input).await)
    }

    #[tool(
        name = "orcho_status",
        description = "Whether this checkout is proven ready, as `orcho status` does: every declared command's receipt status (present, missing, failed, vacuous, stale, invalid) with its reason and next action, and `ready`. With `commit`, from the signed attestations in that commit's git notes instead (`orcho status --commit`)."
    )]
    async fn orcho_status(&self, Parameters(input): Parameters<StatusInput>) -> CallToolResult {
        respond(self.status(input).await)
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
