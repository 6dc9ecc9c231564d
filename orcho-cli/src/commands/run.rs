//! `orcho run` and `orcho resume`: driving a run through the step API, with
//! phases run as commands and decisions asked at a terminal prompt.

use std::collections::BTreeMap;
use std::io::IsTerminal;

use orcho::{
    Engine, PhaseRequest, Run, Step,
    core::{RunId, RunStatus},
    handoff::{
        AdviceRecord, AutopilotOutcome, DecidedBy, DecisionRequest, Ineligible, StopReason,
        supervision::Touchpoint,
    },
};

use crate::{
    cli::RunArgs,
    error::CliError,
    exit::Exit,
    host::{self, RunConfig},
    interrupt,
    output::{
        self,
        doc::{FinishedDoc, PausedDoc},
        text,
    },
    phase,
    place::Place,
    prompt,
};

use super::show;

/// Parses `--phase PHASE=COMMAND` arguments.
fn parse_phases(specs: &[String]) -> Result<BTreeMap<String, Vec<String>>, CliError> {
    let mut phases = BTreeMap::new();
    for spec in specs {
        let Some((phase, command)) = spec.split_once('=') else {
            return Err(
                CliError::usage(format!("`--phase {spec}` must be PHASE=COMMAND"))
                    .with_hint("for example --phase 'implement=./agent.sh'"),
            );
        };
        let Some(argv) = host::split_command(command) else {
            return Err(CliError::usage(format!(
                "`--phase {spec}` has an empty command or an unbalanced quote"
            ))
            .with_hint("quote the command as a shell would: --phase 'test=sh -c \"echo hi\"'"));
        };
        phases.insert(phase.trim().to_owned(), argv);
    }
    Ok(phases)
}

/// `orcho run`: starts a run and drives it.
pub(crate) async fn start(place: &Place, args: &RunArgs) -> Result<Exit, CliError> {
    let phases = parse_phases(&args.phases)?;
    if let Some(parent) = &args.follow_up {
        let parent = host::find_run(place, parent)?;
        interrupt::install(place.json);
        let (config, mut run, spec) =
            host::begin_follow_up(place, &parent, phases, args.autopilot)?;
        check_autopilot(&run, args.autopilot)?;
        interrupt::driving_run(run.id());
        place.progress(&format!(
            "run {} started: follow-up generation {} of run {parent}, with {} blocker(s) to resolve",
            run.id(),
            spec.generation(),
            spec.blockers().len()
        ));
        let step = run.next().await?;
        return drive(
            place,
            &config,
            &mut run,
            step,
            interactive(args.no_interactive),
        )
        .await;
    }
    let (name, mut plan) = place.load_profile(args.profile.profile.as_deref())?;
    if let Some((name, why)) = host::unknown_phase(&plan, &phases) {
        return Err(CliError::usage(format!("`--phase {name}=…`: {why}")));
    }
    if args.autopilot {
        plan = plan.with_autopilot_enabled(true);
    }
    interrupt::install(place.json);
    let (config, mut run) = host::begin(place, (name, plan), phases, args.in_place)?;
    check_autopilot(&run, args.autopilot)?;
    interrupt::driving_run(run.id());
    place.progress(&format!("run {} started", run.id()));
    let step = run.next().await?;
    drive(
        place,
        &config,
        &mut run,
        step,
        interactive(args.no_interactive),
    )
    .await
}

/// `orcho resume`: acts on recorded decisions and drives the run on.
pub(crate) async fn resume(
    place: &Place,
    id: &RunId,
    no_interactive: bool,
    autopilot: bool,
    phases: &[String],
) -> Result<Exit, CliError> {
    interrupt::install(place.json);
    interrupt::driving_run(id);
    let (mut config, mut run) = host::open_with(place, id, autopilot)?;
    check_autopilot(&run, autopilot)?;
    let phases = parse_phases(phases)?;
    let plan = run.engine().plan();
    if let Some((name, why)) = host::unknown_phase(plan, &phases) {
        return Err(CliError::usage(format!("`--phase {name}=…`: {why}")));
    }
    config.phases.extend(phases);
    let step = match host::resume(&mut run).await {
        Ok(step) => step,
        // Nobody has decided yet: ask again (or pause again).
        Err(e) if e.is_awaiting_decision() => run.next().await?,
        // The recorded decision stands; the target has to make way for it.
        Err(e) if e.target_conflict().is_some() => {
            let remedy = e.target_conflict().map(text::target_remedy_decided);
            let error = CliError::from(e);
            return Err(match remedy {
                Some(remedy) => error.with_hint(format!("{remedy} `orcho resume {id}` again")),
                None => error,
            });
        }
        Err(e) => return Err(e.into()),
    };
    drive(place, &config, &mut run, step, interactive(no_interactive)).await
}

/// `--autopilot` needs an advisor to ask; a profile that turns the
/// autopilot on without one is said once.
fn check_autopilot(run: &Run, asked: bool) -> Result<(), CliError> {
    let plan = run.engine().plan();
    if plan.advisor_config.is_some() || !plan.autopilot_enabled {
        return Ok(());
    }
    if asked {
        return Err(CliError::msg(
            "`--autopilot` needs an advisor to ask, and the profile declares no `advisor:`",
        )
        .with_hint("add an `advisor:` block (a model and its key variable; docs/profile.md)"));
    }
    // `autopilot.enabled` in the profile, without an advisor: nothing acts.
    if plan.autopilot_enabled && !plan.phases.is_empty() {
        output::err(
            "note: the profile turns the autopilot on but declares no `advisor:`, so it never acts",
        );
    }
    Ok(())
}

fn interactive(no_interactive: bool) -> bool {
    !no_interactive && std::io::stdin().is_terminal()
}

/// Drives `run` from `step` until it finishes, or pauses at a decision
/// nobody took (asked at the terminal when `interactive`).
async fn drive(
    place: &Place,
    config: &RunConfig,
    run: &mut Run,
    mut step: Step,
    interactive: bool,
) -> Result<Exit, CliError> {
    let engine = run.engine().clone();
    loop {
        step = match step {
            Step::RunPhase(request) => {
                let report = phase::run_phase(place, &engine, config, &request).await?;
                let next = run.complete_phase(report).await?;
                show_settled(place, &engine, &request)?;
                next
            }
            Step::Finished { status, reason } => return finished(place, run, status, &reason),
            step => {
                // At a terminal the prompt shows a touchpoint's questions.
                if !(interactive && is_touchpoint(&step)) {
                    show_point(place, run, &step);
                }
                if let Some(next) = host::decided_elsewhere(run).await? {
                    next
                } else if !interactive
                    && matches!(step, Step::DecideHandoff(_))
                    && autopilot_acts(run)
                {
                    match autopilot(run).await? {
                        Some(next) => next,
                        None => {
                            let (point, hint) = pause_hint(&step, run.id())?;
                            return paused(place, run, point, &hint);
                        }
                    }
                } else if !interactive {
                    let (point, hint) = pause_hint(&step, run.id())?;
                    return paused(place, run, point, &hint);
                } else {
                    match ask(run, &step).await {
                        // Ctrl-D: nobody decided, as without a terminal.
                        Err(e) if e.get_ref().is::<prompt::InputClosed>() => {
                            let (point, hint) = pause_hint(&step, run.id())?;
                            return paused(place, run, point, &hint);
                        }
                        other => other?,
                    }
                    host::resume_past(run).await?
                }
            }
        };
    }
}

/// Shows how the attempt `request` asked for settled: each gate as it
/// ended (with why, when it failed) and where the run goes next.
fn show_settled(place: &Place, engine: &Engine, request: &PhaseRequest) -> Result<(), CliError> {
    if place.json {
        return Ok(());
    }
    let phases = engine.store().phases(&request.run)?;
    let Some(attempt) = phases.iter().rev().find(|p| {
        p.phase == request.phase && p.attempt == request.attempt && p.round == request.round
    }) else {
        return Ok(());
    };
    for record in &attempt.gates {
        output::err(&text::gate_result(record, phase::TAIL_LINES));
    }
    if let Some(next) = &attempt.next {
        output::err(&format!("  → {next}"));
    }
    Ok(())
}

/// At a terminal, the profile's advisor's advice on `handoff`, shown; `None`
/// without an advisor, or when it gave none (said, not fatal: the person
/// decides anyway).
async fn advise(run: &Run, handoff: &orcho::handoff::PhaseHandoff) -> Option<AdviceRecord> {
    run.engine().plan().advisor_config.as_ref()?;
    output::err("asking the advisor …");
    match run.engine().advise(run.id(), handoff.id()).await {
        Ok(record) => {
            output::err(&text::advice_shown(&record));
            Some(record)
        }
        Err(e) => {
            output::err(&format!(
                "the advisor gave no advice: {}",
                orcho::core::error_chain(&e)
            ));
            None
        }
    }
}

/// Whether the CI autopilot acts at this run's handoffs: on in the plan,
/// with an advisor to ask.
fn autopilot_acts(run: &Run) -> bool {
    let plan = run.engine().plan();
    plan.autopilot_enabled && plan.advisor_config.is_some()
}

/// The CI autopilot at the open handoff: the next step after a retry it
/// decided, or `None` when it stopped (the handoff stays open), each step
/// said.
async fn autopilot(run: &mut Run) -> Result<Option<Step>, CliError> {
    let id = run.id().clone();
    let (outcome, next) = run.autopilot().await?;
    match outcome {
        AutopilotOutcome::Retried { advice, .. } => {
            say(&format!(
                "autopilot: advice {} recommends a retry (confidence {}); the safety checks \
                 passed; retrying with its feedback:\n  {}",
                advice.id(),
                advice
                    .advice()
                    .confidence
                    .value()
                    .map_or_else(|| "unknown".to_owned(), |c| format!("{c:.2}")),
                advice
                    .advice()
                    .retry_feedback
                    .as_deref()
                    .unwrap_or_default()
            ));
            Ok(Some(next))
        }
        AutopilotOutcome::Stopped { reason, advice } => {
            let advice = advice
                .map(|a| format!(" (advice {})", a.id()))
                .unwrap_or_default();
            say(&format!(
                "autopilot stopped: {} — {reason}{advice}\n  what to do: {}",
                reason.code(),
                stop_hint(&reason, &id)
            ));
            Ok(None)
        }
        AutopilotOutcome::NotEligible(why) => {
            let why = match why {
                Ineligible::Disabled => "the profile turns it off (`autopilot.enabled: false`)",
                Ineligible::Approved => "the verdict is approved: nothing to retry",
                Ineligible::RetryUnavailable => "`retry_feedback` is not on this handoff's menu",
                Ineligible::NoFindings => "there are no findings to give feedback on",
                _ => "the handoff is not open",
            };
            say(&format!("autopilot: not acting here: {why}"));
            Ok(None)
        }
        _ => Ok(None),
    }
}

/// An autopilot step, on standard error also under `--json` (where
/// progress is otherwise quiet): what the autopilot did is never hidden.
fn say(line: &str) {
    output::err(line);
}

/// What an operator does after the autopilot stopped for `reason`.
fn stop_hint(reason: &StopReason, run: &RunId) -> String {
    let decide = format!("`orcho handoff decide {run} <ACTION>`");
    match reason.code() {
        "low_confidence" | "repeated_blocker" | "files_out_of_scope" | "destructive_action" => {
            format!(
                "read the findings and the advice (`orcho handoff show {run}`), then decide with \
                 {decide}; `--advice ID` records which advice you followed"
            )
        }
        "retry_budget_exhausted" | "cost_budget_exhausted" => format!(
            "the autopilot's budget for this run is spent; decide with {decide}, or raise the \
             budget in the profile's `autopilot:`"
        ),
        "advisor_failed" | "malformed_advice" => format!(
            "the advisor gave no usable advice; decide with {decide}, and check the `advisor:` \
             block (`orcho handoff advise {run}` asks again)"
        ),
        _ => format!(
            "the advice is for a person to weigh; decide with {decide} (`--advice ID` follows it)"
        ),
    }
}

fn is_touchpoint(step: &Step) -> bool {
    matches!(
        step,
        Step::AnswerQuestions(_) | Step::ApprovePlan(_) | Step::HandleDeviation(_)
    )
}

/// Shows the decision point `step` stops at (when the output is text).
fn show_point(place: &Place, run: &Run, step: &Step) {
    if place.json {
        return;
    }
    match step {
        Step::DecideHandoff(handoff) => output::err(&text::handoff(handoff, None)),
        Step::DecideIntake(report) => output::err(&text::intake(report)),
        Step::DecideDelivery(gate) => {
            let now = show::GateNow::read(run.engine(), run.id()).unwrap_or_default();
            output::err(&text::gate(gate, &now));
        }
        Step::AnswerQuestions(request)
        | Step::ApprovePlan(request)
        | Step::HandleDeviation(request) => output::err(&text::touchpoint(request)),
        _ => {}
    }
}

/// Which decision `step` waits on, and the command that takes it.
fn pause_hint(step: &Step, run: &RunId) -> Result<(&'static str, String), CliError> {
    Ok(match step {
        Step::DecideHandoff(_) => ("handoff", format!("orcho handoff decide {run} <ACTION>")),
        Step::DecideIntake(_) => (
            "intake",
            format!("orcho intake {run} include|exclude|commit|halt"),
        ),
        Step::DecideDelivery(_) => ("delivery", format!("orcho delivery decide {run} <ACTION>")),
        Step::AnswerQuestions(request)
        | Step::ApprovePlan(request)
        | Step::HandleDeviation(request) => match request.touchpoint {
            Touchpoint::PlanApproval { .. } => (
                "plan approval",
                format!("orcho plan approve|request-changes|reject {run}"),
            ),
            Touchpoint::PlannerQuestions { .. } => (
                "planner questions",
                format!(
                    "orcho answer {run}{}",
                    " --answer …".repeat(request.questions.questions().len().max(1))
                ),
            ),
            _ => (
                "deviation",
                format!("orcho deviation {run} retry|replan|stop"),
            ),
        },
        other => return Err(unknown_step(other)),
    })
}

/// Asks the operator at the terminal and records the answer. When a
/// different decision was recorded meanwhile (from another terminal, or
/// over MCP), that one stands: it is said, and the run goes on with it.
async fn ask(run: &Run, step: &Step) -> Result<(), CliError> {
    let engine = run.engine();
    let id = run.id();
    let recorded = match step {
        Step::DecideHandoff(handoff) => {
            let advice = advise(run, handoff).await;
            let (choice, took) = prompt::handoff(handoff, advice.as_ref().map(|a| a.advice()))?;
            let mut request = DecisionRequest::new(choice, DecidedBy::Operator);
            if let Some(record) = advice.filter(|_| took) {
                request = request.with_advice(record.id().clone());
            }
            engine.store().decide(id, handoff.id(), request).map(drop)
        }
        Step::DecideIntake(_) => {
            let request = DecisionRequest::new(prompt::intake()?, DecidedBy::Operator);
            engine.store().decide_intake(id, request).map(drop)
        }
        Step::DecideDelivery(gate) => loop {
            let now = show::GateNow::read(engine, id).unwrap_or_default();
            let choice = prompt::delivery(gate, now.target.as_ref(), || {
                Ok(engine.store().delivery_patch(id)?)
            })?;
            match engine
                .store()
                .decide_delivery(id, DecisionRequest::new(choice, DecidedBy::Operator))
            {
                // The target changed while the prompt waited: say so and
                // ask again with what it refuses now.
                Err(e) if e.target_conflict().is_some() => {
                    let e = CliError::from(e);
                    output::err(&format!("not recorded: {}", e.message()));
                    if let Some(hint) = e.hint() {
                        output::err(&format!("hint: {hint}"));
                    }
                    let now = show::GateNow::read(engine, id).unwrap_or_default();
                    output::err(&text::gate(gate, &now));
                }
                other => break other.map(drop),
            }
        },
        Step::AnswerQuestions(request)
        | Step::ApprovePlan(request)
        | Step::HandleDeviation(request) => {
            let answers = prompt::questions(request)?;
            engine
                .store()
                .answer(id, &request.id, answers, DecidedBy::Operator)
                .map(drop)
        }
        other => return Err(unknown_step(other)),
    };
    match recorded {
        Err(e) if e.is_conflict() => {
            output::err(
                "a different decision was recorded meanwhile (from another terminal or a client); \
                 the run goes on with that one",
            );
            Ok(())
        }
        other => Ok(other?),
    }
}

fn unknown_step(step: &Step) -> CliError {
    CliError::msg(format!("this CLI does not know the step {step:?}"))
}

fn paused(place: &Place, run: &Run, point: &str, hint: &str) -> Result<Exit, CliError> {
    let status = run.view().status;
    if place.json {
        output::json(&PausedDoc {
            run: run.id(),
            status: status.as_str(),
            awaiting: point,
            hint,
        });
    } else {
        output::out(&text::paused(run.id(), status.as_str(), point, hint));
    }
    Ok(Exit::Paused)
}

fn finished(place: &Place, run: &Run, status: RunStatus, reason: &str) -> Result<Exit, CliError> {
    let engine = run.engine();
    let evidence = engine.evidence(run.id())?;
    engine.store().write_evidence(&evidence)?;
    let path = engine.store().evidence_path(run.id());
    // After `fix`: the command that starts the correction follow-up.
    let next = (engine.store().follow_up(run.id()).is_ok()
        && host::follow_up_child(engine.store(), run.id())?.is_none())
    .then(|| format!("orcho run --follow-up {}", run.id()));
    if place.json {
        output::json(&FinishedDoc {
            run: run.id(),
            status: status.as_str(),
            reason,
            evidence: path.as_str(),
            cost_usd: evidence.cost.usd.map(|u| u.to_string()),
            next: next.as_deref(),
        });
    } else {
        output::out(&text::finished(
            run.id(),
            status.as_str(),
            reason,
            path.as_str(),
        ));
        if let Some(next) = &next {
            output::out(&format!("next: `{next}` starts the correction follow-up"));
        }
    }
    Ok(if status == RunStatus::Halted {
        Exit::Halted
    } else {
        Exit::Ok
    })
}
