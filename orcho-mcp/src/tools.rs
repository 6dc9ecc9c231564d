//! What each tool does, and the documents it answers with.

use std::collections::BTreeMap;

use orcho::{
    PhaseReport, PhaseRequest, Run, RunView, Step, Store,
    core::{HandoffId, RunId, RunStatus},
    decide::{DecideError, Decider, Decision},
    handoff::{
        DeliveryAction, HandoffAction, IntakeAction,
        decision::DecidedBy,
        handoff::{HandoffChoice, PhaseHandoff},
        supervision::Touchpoint,
    },
};
use serde::Serialize;
use serde_json::Value;

use super::{
    OrchoMcp,
    doc::{
        AttemptDoc, ConfirmDoc, DecideArgs, DeliveryDecidedDoc, FindingsDoc, FollowUpDoc,
        HandoffDecidedDoc, MetaDoc, ProposalDoc, ReviewDoc, StatusDoc, TouchpointDoc,
    },
    error::ToolError,
    input::{
        AdviceInput, DeliveryDecideInput, EvidenceInput, HandoffDecideInput, IntakeDecideInput,
        PhaseCommand, RunInput, RunStartInput, StatusInput, TouchpointAnswerInput, VerifyInput,
    },
};
use orcho_host::{
    error::CliError,
    host::{self, RunConfig},
    output::doc::{
        AdviceDoc, CommitStatusDoc, GateDoc, HandoffDoc, InboxDoc, IntakeDoc, Naming,
        StatusDoc as CheckoutStatusDoc, VerifyDoc,
    },
    phase,
    place::{Loaded, Place},
};

/// A tool's structured result, or why it was refused.
pub(super) type ToolResult = Result<Value, ToolError>;

/// A document as the tool's structured result.
pub(super) fn value(doc: &impl Serialize) -> ToolResult {
    serde_json::to_value(doc).map_err(|e| ToolError::internal(&e))
}

/// The run's open touchpoint.
fn open_touchpoint(
    store: &Store,
    run: &RunId,
) -> Result<orcho::handoff::supervision::OpenTouchpoint, ToolError> {
    let waiting = store.status(run)?;
    let Some((id, _)) = waiting.touchpoint() else {
        return Err(ToolError::invalid(format!(
            "run `{run}` is not waiting at a touchpoint (it is {})",
            waiting.status
        )));
    };
    let id = id.clone();
    store
        .touchpoints(run)?
        .into_iter()
        .find(|t| t.id == id)
        .ok_or_else(|| {
            ToolError::invalid(format!("run `{run}`'s touchpoint `{id}` cannot be found"))
        })
}

#[serde_with::skip_serializing_none]
#[derive(Serialize)]
struct OpenTouchpointDoc<'a> {
    run_id: &'a RunId,
    touchpoint_id: &'a HandoffId,
    kind: &'static str,
    plan: Option<&'a orcho::handoff::supervision::Plan>,
    plan_digest: Option<String>,
    deviation: Option<&'a orcho::handoff::supervision::Deviation>,
    questions: &'a [orcho::handoff::supervision::Question],
    answered: bool,
    how_to_answer: &'static str,
    next: &'static str,
}

#[derive(Serialize)]
struct TouchpointAnsweredDoc<'a> {
    run_id: &'a RunId,
    touchpoint_id: &'a HandoffId,
    recorded: bool,
    next: &'static str,
}

fn parse_handoff(handoff: &str) -> Result<HandoffId, ToolError> {
    handoff.parse().map_err(|e| {
        ToolError::invalid(format!("`handoff_id` `{handoff}` is not a handoff id: {e}"))
    })
}

/// The handoff a tool call names, else the one the run is paused at.
fn handoff_of(view: &RunView, named: Option<&str>) -> Result<HandoffId, ToolError> {
    match named {
        Some(h) => parse_handoff(h),
        None => view.handoff().cloned().ok_or_else(|| {
            ToolError::invalid(format!(
                "run `{}` is not paused at a phase handoff (it is {})",
                view.run, view.status
            ))
            .hint("orcho_run_status says what the run waits on")
        }),
    }
}

/// The profile a client names: `builtin:<name>`, or a file inside the
/// workspace (relative to the checkout), else the checkout's own. A client
/// reads nothing outside the workspace through this, and its errors never
/// repeat what a file says.
fn client_profile(place: &Place, profile: Option<&str>) -> Result<Loaded, ToolError> {
    let outside = || {
        ToolError::invalid(format!(
            "`profile` must be `builtin:<name>` or a profile file inside the workspace `{}`",
            place.checkout
        ))
    };
    let spec = match profile {
        None => return Ok(place.load_profile(None)?),
        Some(p) if p.starts_with("builtin:") => p.to_owned(),
        Some(p) => {
            let path = place.checkout.join(p);
            let (Ok(path), Ok(root)) =
                (path.canonicalize_utf8(), place.checkout.canonicalize_utf8())
            else {
                return Err(outside());
            };
            if !path.starts_with(&root) || !path.is_file() {
                return Err(outside());
            }
            path.to_string()
        }
    };
    Ok(orcho_host::place::load(&spec)?)
}

/// The handoff `id` of `run`, and the decision recorded on it.
struct Shown {
    handoff: PhaseHandoff,
    decided: Option<HandoffChoice>,
}

impl Shown {
    fn read(store: &Store, run: &RunId, handoff: PhaseHandoff) -> Result<Self, ToolError> {
        let decided = store
            .handoff_decision(run, handoff.id())?
            .map(|d| d.decision().payload().clone());
        Ok(Self { handoff, decided })
    }

    fn doc(&self) -> HandoffDoc<'_> {
        HandoffDoc::new(&self.handoff, self.decided.as_ref(), Naming::Mcp)
    }
}

/// The handoff `run` is paused at, if it is.
fn open_handoff(store: &Store, view: &RunView) -> Result<Option<PhaseHandoff>, ToolError> {
    Ok(view
        .handoff()
        .map(|id| store.handoff(&view.run, id))
        .transpose()?)
}

/// What the run waits on, as `awaiting` names it.
fn awaiting(status: RunStatus) -> Option<&'static str> {
    match status {
        RunStatus::AwaitingPhaseHandoff => Some("phase_handoff"),
        RunStatus::AwaitingDelivery => Some("delivery_gate"),
        RunStatus::AwaitingIntake => Some("intake"),
        RunStatus::AwaitingQuestions
        | RunStatus::AwaitingPlanApproval
        | RunStatus::AwaitingDeviation => Some("touchpoint"),
        _ => None,
    }
}

/// Where the run stands and what it waits on.
pub(super) fn status_doc(store: &Store, run: &RunId) -> ToolResult {
    let view = store.status(run)?;
    let mut next = Vec::new();
    let shown = open_handoff(store, &view)?
        .map(|h| Shown::read(store, run, h))
        .transpose()?;
    if let Some(shown) = &shown {
        next.push(if shown.decided.is_none() {
            "read the findings (orcho_run_evidence slice=findings), decide with orcho_phase_handoff_decide, then orcho_run_resume"
        } else {
            "a decision is recorded: call orcho_run_resume"
        });
    }
    let gate = if view.status == RunStatus::AwaitingDelivery {
        next.push("decide the delivery with orcho_delivery_decide, then orcho_run_resume");
        Some(store.delivery_gate(run)?)
    } else {
        None
    };
    let touchpoint = view.touchpoint().map(|(id, _)| TouchpointDoc {
        id,
        status: view.status.as_str(),
    });
    if touchpoint.is_some() {
        next.push("read it with orcho_touchpoint, answer with orcho_touchpoint_answer, then orcho_run_resume");
    }
    if view.status == RunStatus::AwaitingIntake {
        next.push("read it with orcho_intake_gate, decide with orcho_intake_decide, then orcho_run_resume");
    }
    if view.status.is_terminal() {
        next.push("the run has ended; orcho_run_evidence has its evidence");
        if store.follow_up(run).is_ok() && host::follow_up_child(store, run)?.is_none() {
            next.push("its delivery was decided `fix`: orcho_run_start with parent_run_id starts the correction follow-up");
        }
    }
    value(&StatusDoc {
        run_id: run,
        status: view.status.as_str(),
        reason: view.reason.as_deref(),
        plan: &view.plan,
        task: view.task.as_deref(),
        phase: view.phase.as_ref().map(|p| p.as_str()),
        attempt: view.attempt,
        round: view.round,
        awaiting: awaiting(view.status),
        follow_up_of: view
            .follow_up_of
            .as_ref()
            .zip(view.follow_up_generation)
            .map(|(parent_run_id, generation)| FollowUpDoc {
                parent_run_id,
                generation,
            }),
        meta: MetaDoc {
            phase_handoff: shown.as_ref().map(Shown::doc),
            delivery_gate: gate.as_ref().map(GateDoc::new),
            touchpoint,
        },
        next,
    })
}

/// The findings a decision is about: the open (or last) handoff's, and the
/// last reported attempt of each phase.
fn findings_doc(store: &Store, run: &RunId) -> ToolResult {
    let view = store.status(run)?;
    let mut handoffs = store.handoffs(run)?;
    let handoff = match view.handoff() {
        Some(id) => handoffs
            .iter()
            .position(|h| h.id() == id)
            .map(|i| handoffs.swap_remove(i)),
        None => handoffs.pop(),
    };
    let shown = handoff.map(|h| Shown::read(store, run, h)).transpose()?;
    let attempts = store.attempts(run)?;
    let mut last: BTreeMap<&str, AttemptDoc<'_>> = BTreeMap::new();
    for attempt in &attempts {
        last.insert(attempt.phase.as_str(), AttemptDoc::new(attempt));
    }
    value(&FindingsDoc {
        run_id: run,
        open: view.handoff().is_some(),
        handoff: shown.as_ref().map(Shown::doc),
        attempts: last.into_values().collect(),
    })
}

impl OrchoMcp {
    /// The workspace's store.
    pub(super) fn store(&self) -> Store {
        self.place.store()
    }

    /// The run `reference` names, as the CLI reads it: an id, the start of
    /// one, or `latest`. `key` is the argument's name, for the error.
    pub(super) fn find_run(&self, key: &str, reference: &str) -> Result<RunId, ToolError> {
        let is_word = |c: char| c.is_ascii_alphanumeric() || c == '-';
        if reference.is_empty() || !reference.chars().all(is_word) {
            return Err(ToolError::invalid(format!(
                "`{key}` `{reference}` is not a run id, the start of one, or `latest`"
            )));
        }
        Ok(self.store().find_run(reference)?)
    }

    /// Drives a run with [`orcho::drive`] until it finishes or pauses, then
    /// releases it: phases run as commands, and every decision point is
    /// left to the client (or to anyone else who decides it).
    async fn drive_on(&self, run: &mut Run, config: &RunConfig) -> Result<Step, ToolError> {
        let mut host = McpHost {
            place: &self.place,
            config,
            engine: run.engine().clone(),
        };
        Ok(orcho::drive(run, &mut host).await.map_err(CliError::from)?)
    }

    pub(super) fn decide_handoff(&self, input: &HandoffDecideInput, client: &str) -> ToolResult {
        let run = self.find_run("run_id", &input.run_id)?;
        let store = self.store();
        let view = store.status(&run)?;
        let handoff = input.handoff_id.as_deref().map(parse_handoff).transpose()?;
        let action: HandoffAction = input.action.parse().map_err(|e| {
            ToolError::bad_action(
                &e,
                <HandoffAction as orcho::handoff::point::Action>::SPELLINGS,
            )
        })?;
        let feedback = input.note.as_deref().filter(|f| !f.trim().is_empty());
        let advice = input
            .advice_id
            .as_deref()
            .map(|advice| {
                advice
                    .parse::<orcho::handoff::advisor::AdviceId>()
                    .map_err(|e| ToolError::invalid(format!("`advice_id`: {e}")))
            })
            .transpose()?;
        // The store refuses a first decision on an ended run, and advice
        // that is not about this handoff.
        let decision = Decision::Handoff {
            handoff,
            action,
            text: feedback.map(str::to_owned),
            advice,
        };
        let decided = orcho::decide::decide(&store, &run, decision, Decider::Client(client.into()))
            .map_err(|e| match e {
                DecideError::NotWaiting { .. } => match handoff_of(&view, None) {
                    Err(e) => e,
                    Ok(_) => ToolError::invalid(orcho::core::error_chain(&e)),
                },
                DecideError::Engine(e) => ToolError::from(e),
                other => ToolError::invalid(orcho::core::error_chain(&other)),
            })?;
        let handoff = decided.id.clone().ok_or_else(|| {
            ToolError::invalid(format!("run `{run}` is not paused at a phase handoff"))
        })?;
        let replay = !decided.recorded;
        value(&HandoffDecidedDoc {
            run_id: &run,
            handoff_id: &handoff,
            action: action.as_str(),
            feedback,
            recorded: !replay,
            next: if view.status.is_terminal() {
                "the decision was recorded already and the run acted on it; nothing changed"
            } else if replay {
                "the decision was recorded already; call orcho_run_resume to act on it"
            } else if action == HandoffAction::Halt {
                "call orcho_run_resume to stop the run at this handoff"
            } else {
                "call orcho_run_resume to act on it"
            },
        })
    }

    pub(super) async fn start_run(&self, input: RunStartInput) -> ToolResult {
        let mut phases = BTreeMap::new();
        for (phase, command) in input.phases {
            let argv: Vec<String> = match command {
                PhaseCommand::Argv(argv) => argv,
                PhaseCommand::Line(line) => host::split_command(&line).unwrap_or_default(),
            };
            if argv.is_empty() || argv.iter().any(String::is_empty) {
                return Err(ToolError::invalid(format!(
                    "`phases.{phase}`: the command is empty"
                )));
            }
            if let Some(Err(why)) = orcho_host::runner::agent_of(&argv) {
                return Err(ToolError::invalid(format!("`phases.{phase}`: {why}")));
            }
            phases.insert(phase, argv);
        }
        let task = input
            .task
            .map(|task| host::check_task(task, "`task`"))
            .transpose()?;
        let (config, mut run) = if let Some(parent) = &input.parent_run_id {
            if input.profile.is_some() || input.in_place {
                return Err(ToolError::invalid(
                    "a follow-up runs with its parent's profile in a worktree: leave `profile` \
                     and `in_place` out",
                ));
            }
            let parent = self.find_run("parent_run_id", parent)?;
            let launch = host::Launch {
                phases,
                task,
                ..host::Launch::default()
            };
            let (config, run, _) = host::begin_follow_up(&self.place, &parent, launch)?;
            (config, run)
        } else {
            // Unknown phase names are bad input, said before anything starts.
            let profile = client_profile(&self.place, input.profile.as_deref())?;
            if let Some((name, why)) = host::unknown_phase(&profile.1, &phases) {
                return Err(ToolError::invalid(format!("`phases.{name}`: {why}")));
            }
            let launch = host::Launch {
                phases,
                in_place: input.in_place,
                task,
                ..host::Launch::default()
            };
            host::begin(&self.place, profile, launch)?
        };
        let id = run.id().clone();
        self.drive_on(&mut run, &config).await?;
        drop(run);
        status_doc(&self.store(), &id)
    }

    pub(super) async fn resume_run(&self, input: RunInput) -> ToolResult {
        let id = self.find_run("run_id", &input.run_id)?;
        if host::read_config(&self.place, &id)?.is_none() {
            return Err(ToolError::invalid(format!(
                "run `{id}` was not started by `orcho run` or orcho_run_start (it has no run \
                 configuration); drive it with its own host"
            )));
        }
        let (config, mut run) = host::open(&self.place, &id)?;
        // A run that is over has nothing to resume.
        if let Some(ended) = run.refusal_if_ended() {
            return Err(ended.into());
        }
        let before = run.view().waiting;
        let end = self.drive_on(&mut run, &config).await?;
        drop(run);
        // Still where it waited, nobody having decided: said as a refusal,
        // naming what to decide.
        if let (Some(before), Some(after)) = (&before, end.waiting())
            && same_point(before, &after)
        {
            return Err(ToolError::awaiting(&id, &end));
        }
        status_doc(&self.store(), &id)
    }

    pub(super) fn evidence(&self, input: &EvidenceInput) -> ToolResult {
        const SLICES: [&str; 9] = [
            "findings",
            "phases",
            "handoffs",
            "handoff_advice",
            "touchpoints",
            "receipts",
            "delivery",
            "cost",
            "all",
        ];
        let run = self.find_run("run_id", &input.run_id)?;
        let slice = input.slice.as_deref().unwrap_or("all");
        if !SLICES.contains(&slice) {
            return Err(ToolError::invalid(format!(
                "`slice` `{slice}` is not one of {}",
                SLICES.join(", ")
            )));
        }
        let store = self.place.keyed_store()?;
        if slice == "findings" {
            return findings_doc(&store, &run);
        }
        // The receipts are classified under the contract of the run's
        // profile.
        let contract = host::read_config(&self.place, &run)?
            .map(|config| orcho_host::place::load(&config.profile))
            .transpose()?
            .and_then(|(_, plan)| plan.verification);
        let evidence = store.evidence(&run, contract.as_ref())?;
        store.write_evidence(&evidence)?;
        let mut all = value(&evidence)?;
        if slice == "all" {
            return Ok(all);
        }
        // One part of the bundle, with what names it.
        let mut part = serde_json::Map::new();
        part.insert("run_id".to_owned(), Value::from(run.as_str()));
        part.insert("status".to_owned(), all["status"].take());
        part.insert(slice.to_owned(), all[slice].take());
        Ok(Value::Object(part))
    }

    pub(super) async fn review(&self, input: &RunInput) -> ToolResult {
        let run = self.find_run("run_id", &input.run_id)?;
        let engine = host::engine_for(&self.place, &run)?;
        let store = engine.store();
        let status = status_doc(store, &run)?;
        let view = store.status(&run)?;
        let Some(handoff) = open_handoff(store, &view)? else {
            return value(&ReviewDoc {
                run_id: &run,
                status,
                findings: None,
                proposal: None,
                note: "the run is not paused at a phase handoff; nothing to propose",
            });
        };
        let findings = findings_doc(store, &run)?;
        let mut advice = store
            .advice(&run)?
            .into_iter()
            .rfind(|a| a.handoff() == handoff.id());
        // With an advisor and no advice yet, ask it; when it fails, the
        // proposal is the rule advisor's and says why.
        let mut advice_error = None;
        if advice.is_none() && engine.advisor().is_some() {
            match engine
                .advise_for(&run, handoff.id(), DecidedBy::Client)
                .await
            {
                Ok(record) => advice = Some(record),
                Err(e) => advice_error = Some(orcho::core::error_chain(&e)),
            }
        }
        let proposal = match &advice {
            Some(record) => record.advice().clone(),
            None => {
                use orcho::handoff::Advisor as _;
                orcho::handoff::advisor::RuleAdvisor
                    .advise(&orcho::handoff::AdviceRequest::new(&handoff, "", &[]))
                    .await
                    .map_err(|e| ToolError::internal(&e))?
            }
        };
        value(&ReviewDoc {
            run_id: &run,
            status,
            findings: Some(findings),
            proposal: Some(ProposalDoc {
                kind: "proposal",
                applied: false,
                requires_confirmation: true,
                source: if advice.is_some() {
                    "advice"
                } else {
                    "deterministic"
                },
                advice_id: advice.as_ref().map(|a| a.id().to_string()),
                advice_error: advice_error.as_deref(),
                action: proposal.recommended_action.as_str(),
                feedback: proposal.retry_feedback.as_deref(),
                rationale: &proposal.rationale,
                confirm_with: ConfirmDoc {
                    tool: "orcho_phase_handoff_decide",
                    arguments: DecideArgs {
                        run_id: &run,
                        handoff_id: handoff.id(),
                        action: proposal.recommended_action.as_str(),
                        feedback: proposal.retry_feedback.as_deref(),
                        advice_id: advice.as_ref().map(|a| a.id().to_string()),
                    },
                },
                then: "orcho_run_resume",
            }),
            note: "PROPOSED decision only: nothing was decided. Confirm with the operator, then call orcho_phase_handoff_decide.",
        })
    }

    pub(super) async fn advise(&self, input: AdviceInput) -> ToolResult {
        let run = self.find_run("run_id", &input.run_id)?;
        let engine = host::engine_for(&self.place, &run)?;
        let view = engine.store().status(&run)?;
        let handoff = handoff_of(&view, input.handoff_id.as_deref())?;
        let record = engine.advise_for(&run, &handoff, DecidedBy::Client).await?;
        value(&AdviceDoc::of(
            &run,
            &handoff,
            &record,
            "advice is not a decision; confirm with the operator, then call orcho_phase_handoff_decide with this advice_id",
        ))
    }

    pub(super) fn gate(&self, input: &RunInput) -> ToolResult {
        let run = self.find_run("run_id", &input.run_id)?;
        let store = self.store();
        let gate = store.delivery_gate(&run)?;
        let now = orcho_host::gate_now::GateNow::read(&store, &run)?;
        let mut doc = GateDoc::new(&gate).with_now(&gate, &now);
        // A client is not an operator: where only one may approve, it is
        // not offered to a client.
        if gate.approve_requires_operator() && doc.available_actions.contains(&"approve") {
            doc.available_actions.retain(|a| *a != "approve");
            doc.blocked.push(orcho_host::output::doc::BlockedDoc {
                action: "approve",
                reason: "the profile lets only an operator approve \
                         (`delivery.approve_requires_operator`): a person decides it with \
                         `orcho delivery decide`"
                    .to_owned(),
            });
        }
        value(&doc)
    }

    /// `orcho delivery rerun`: the missing and stale required commands run
    /// again in the run's worktree, and the gate as it is then.
    pub(super) async fn rerun_at_gate(&self, input: &RunInput) -> ToolResult {
        let id = self.find_run("run_id", &input.run_id)?;
        let (_, mut run) = host::open(&self.place, &id)?;
        if let Some(ended) = run.refusal_if_ended() {
            return Err(ended.into());
        }
        let (rerun, gate) = run.rerun_receipts().await?;
        drop(run);
        let store = self.store();
        let now = orcho_host::gate_now::GateNow::read(&store, &id)?;
        let mut doc = GateDoc::new(&gate).with_now(&gate, &now);
        doc.rerun = rerun.iter().map(ToString::to_string).collect();
        if gate.approve_requires_operator() {
            doc.available_actions.retain(|a| *a != "approve");
        }
        value(&doc)
    }

    /// Records `decision` on `run` as the client `client`.
    fn decide(&self, run: &RunId, decision: Decision, client: &str) -> Result<(), ToolError> {
        orcho::decide::decide(&self.store(), run, decision, Decider::Client(client.into()))
            .map(drop)
            .map_err(super::point::decide_error)
    }

    pub(super) fn decide_delivery(&self, input: DeliveryDecideInput, client: &str) -> ToolResult {
        let run = self.find_run("run_id", &input.run_id)?;
        let view = self.store().status(&run)?;
        if !view.status.is_terminal() && view.status != RunStatus::AwaitingDelivery {
            let hint = match view.status {
                RunStatus::AwaitingIntake => {
                    "it waits for its intake decision: orcho_intake_gate, then orcho_intake_decide"
                }
                _ => "orcho_run_status says what it waits for",
            };
            return Err(ToolError::new(
                "not_at_delivery",
                format!(
                    "run `{run}` is not at its delivery gate: it is {}",
                    view.status
                ),
            )
            .hint(hint));
        }
        let action: DeliveryAction = input.action.parse().map_err(|e| {
            ToolError::bad_action(
                &e,
                <DeliveryAction as orcho::handoff::point::Action>::SPELLINGS,
            )
        })?;
        let patch = input
            .patch_digest
            .as_deref()
            .map(|patch| {
                patch.parse().map_err(|e| {
                    ToolError::invalid(format!("`{patch}` is not a patch digest: {e}"))
                        .hint("give the gate's `patch_digest` (orcho_delivery_gate)")
                })
            })
            .transpose()?;
        let decision = Decision::Delivery {
            action,
            message: input.message,
            note: input.note,
            patch,
        };
        self.decide(&run, decision, client)?;
        value(&DeliveryDecidedDoc {
            run_id: &run,
            action: action.as_str(),
            recorded: true,
            next: "call orcho_run_resume to deliver it",
        })
    }

    pub(super) fn touchpoint(&self, input: &RunInput) -> ToolResult {
        let run = self.find_run("run_id", &input.run_id)?;
        let open = open_touchpoint(&self.store(), &run)?;
        let questions = open
            .touchpoint
            .questions()
            .map_err(|e| ToolError::internal(&e))?;
        let (kind, answer) = match &open.touchpoint {
            Touchpoint::PlanApproval { .. } => (
                "plan_approval",
                "answers: [\"Approve\" | \"Request Changes\" | \"Reject\", feedback or \"\"]",
            ),
            Touchpoint::PlannerQuestions { .. } => (
                "planner_questions",
                "answers: one per question, in order (a label, a number, or free text)",
            ),
            _ => (
                "deviation",
                "answers: [\"Retry\" | \"Replan\" | \"Stop\", a note or \"\"] (Retry only while offered)",
            ),
        };
        value(&OpenTouchpointDoc {
            run_id: &run,
            touchpoint_id: &open.id,
            kind,
            plan: match &open.touchpoint {
                Touchpoint::PlanApproval { plan } => Some(plan),
                _ => None,
            },
            plan_digest: match &open.touchpoint {
                Touchpoint::PlanApproval { plan } => Some(plan.digest().to_string()),
                _ => None,
            },
            deviation: match &open.touchpoint {
                Touchpoint::Deviation { deviation, .. } => Some(deviation),
                _ => None,
            },
            questions: questions.questions(),
            answered: open.resolution.is_some(),
            how_to_answer: answer,
            next: "call orcho_touchpoint_answer, then orcho_run_resume",
        })
    }

    pub(super) fn answer_touchpoint(
        &self,
        input: &TouchpointAnswerInput,
        client: &str,
    ) -> ToolResult {
        let run = self.find_run("run_id", &input.run_id)?;
        let store = self.store();
        let open = open_touchpoint(&store, &run)?;
        let batch = open
            .touchpoint
            .questions()
            .map_err(|e| ToolError::internal(&e))?;
        let questions = batch.questions();
        // A two-question touchpoint (plan approval, a deviation) takes its
        // action alone when its context is left empty.
        let two_questions = matches!(
            open.touchpoint,
            Touchpoint::PlanApproval { .. } | Touchpoint::Deviation { .. }
        );
        if let Some(pinned) = input.plan_digest.as_deref() {
            let Touchpoint::PlanApproval { plan } = &open.touchpoint else {
                return Err(ToolError::invalid(format!(
                    "`plan_digest` pins a plan, and the run waits at a {}",
                    open.touchpoint.kind()
                ))
                .hint("leave `plan_digest` out, or answer the plan approval it names"));
            };
            let current = plan.digest().to_string();
            if current != pinned.trim() {
                return Err(ToolError::new(
                    "stale_plan",
                    format!(
                        "the plan changed: the answers are about {pinned}, the plan is now {current}"
                    ),
                )
                .hint("call orcho_touchpoint, read the plan, and answer with its plan_digest"));
            }
        }
        let mut given = input.answers.clone();
        if two_questions && given.len() == 1 && questions.len() == 2 {
            given.push(String::new());
        }
        if given.len() != questions.len() {
            return Err(ToolError::invalid(format!(
                "the touchpoint has {} question(s) and {} answer(s) were given; orcho_touchpoint lists them",
                questions.len(),
                input.answers.len()
            )));
        }
        let answers = questions
            .iter()
            .zip(&given)
            .enumerate()
            .map(|(i, (q, a))| {
                orcho::decide::parse_answer(q, a.trim()).map_err(|slip| {
                    ToolError::invalid(format!("answer {} ([{}]): {slip}", i + 1, q.header()))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        store
            .answer_with(
                &run,
                &open.id,
                orcho::handoff::decision::DecisionRequest::by_client(
                    orcho::handoff::supervision::TouchpointAnswers::new(answers),
                    client,
                ),
            )
            .map_err(|e| {
                if e.is_conflict() || e.refusal().is_some() {
                    ToolError::from(e)
                } else {
                    ToolError::invalid(orcho::core::error_chain(&e))
                }
            })?;
        value(&TouchpointAnsweredDoc {
            run_id: &run,
            touchpoint_id: &open.id,
            recorded: true,
            next: "call orcho_run_resume to act on it",
        })
    }

    pub(super) fn intake_gate(&self, input: &RunInput) -> ToolResult {
        let run = self.find_run("run_id", &input.run_id)?;
        let report = self.store().intake_report(&run)?;
        value(&IntakeDoc::new(
            &run,
            &report,
            Naming::Mcp,
            "call orcho_intake_decide, then orcho_run_resume",
        ))
    }

    pub(super) fn decide_intake(&self, input: IntakeDecideInput, client: &str) -> ToolResult {
        let run = self.find_run("run_id", &input.run_id)?;
        let action: IntakeAction = input.action.parse().map_err(|e| {
            ToolError::bad_action(
                &e,
                <IntakeAction as orcho::handoff::point::Action>::SPELLINGS,
            )
        })?;
        let decision = Decision::Intake {
            action,
            message: input.message,
        };
        self.decide(&run, decision, client)?;
        value(&DeliveryDecidedDoc {
            run_id: &run,
            action: action.as_str(),
            recorded: true,
            next: "call orcho_run_resume to start the run from it",
        })
    }

    /// `orcho verify`, its document as the result.
    pub(super) async fn verify(&self, input: VerifyInput) -> ToolResult {
        let verifier = orcho_host::proof::verifier(&self.place, None, input.base.as_deref())?;
        let names = orcho::checkout::commands_to_verify(verifier.contract(), &input.commands)
            .map_err(CliError::from)?;
        let checkout = orcho_host::key::checkout(&self.place)?;
        let all_environments = input.commands.is_empty();
        let v = std::sync::Arc::clone(&verifier);
        let verified = tokio::task::spawn_blocking(move || {
            checkout.verify(&v, &names, all_environments, None, &mut |_| {})
        })
        .await
        .map_err(CliError::from)?
        .map_err(CliError::from)?;
        let mut doc = VerifyDoc::of(&verified);
        if verified.passed {
            doc.attested =
                orcho_host::proof::attest_verified(&self.place, &verifier, false).await?;
        }
        value(&doc)
    }

    /// `orcho status` (or `orcho status --commit`), its document as the
    /// result.
    pub(super) async fn status(&self, input: StatusInput) -> ToolResult {
        let base = input.base.as_deref();
        if let Some(rev) = &input.commit {
            let (proof, weakenings) =
                orcho_host::proof::commit_status(&self.place, None, rev, base)?;
            let weakenings = weakenings.unwrap_or_default();
            return value(&CommitStatusDoc::of(&proof, &weakenings));
        }
        let (readiness, hooks) = orcho_host::proof::readiness(&self.place, None, base).await?;
        let at_delivery = orcho_host::proof::at_delivery(&self.place);
        value(&CheckoutStatusDoc {
            summary: &readiness.summary,
            ready: readiness.ready(),
            hooks: &hooks,
            weakenings: &readiness.weakened,
            at_delivery: &at_delivery,
        })
    }

    pub(super) fn inbox(&self) -> ToolResult {
        let team = self
            .place
            .team_store()
            .team_inbox(&orcho::InboxFilter::all())?;
        value(&InboxDoc::of(&team, Naming::Mcp))
    }
}

/// Whether a run that waited at `before` waits at the same point `after`
/// (a pause whose handoff or touchpoint opened meanwhile is the same
/// point).
fn same_point(before: &orcho::Waiting, after: &orcho::Waiting) -> bool {
    use orcho::Waiting;
    match (before, after) {
        (Waiting::PhaseHandoff { id: None }, Waiting::PhaseHandoff { .. })
        | (Waiting::Intake, Waiting::Intake)
        | (Waiting::Delivery, Waiting::Delivery) => true,
        (Waiting::PhaseHandoff { id: Some(a) }, Waiting::PhaseHandoff { id: Some(b) }) => a == b,
        (Waiting::Touchpoint { id: None, kind: a }, Waiting::Touchpoint { kind: b, .. }) => a == b,
        (Waiting::Touchpoint { id: Some(a), .. }, Waiting::Touchpoint { id: Some(b), .. }) => {
            a == b
        }
        _ => false,
    }
}

/// `orcho mcp` as a host of [`orcho::drive`]: phases run as commands, and
/// every decision point is left open for the client.
struct McpHost<'a> {
    place: &'a Place,
    config: &'a RunConfig,
    engine: orcho::Engine,
}

impl orcho::Host for McpHost<'_> {
    type Error = CliError;

    async fn run_phase(&mut self, request: &PhaseRequest) -> Result<PhaseReport, CliError> {
        phase::run_phase(self.place, &self.engine, self.config, request).await
    }

    fn answered_by(&self) -> DecidedBy {
        DecidedBy::Client
    }
}
