//! `orcho run` and `orcho resume`: driving a run through the step API, with
//! phases run as commands and decisions asked at a terminal prompt.

use std::fmt::Write as _;
use std::{
    collections::BTreeMap,
    io::{BufRead, IsTerminal, Write},
    sync::{
        Arc,
        atomic::{AtomicU32, Ordering},
    },
};

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{
    Engine, PhaseReport, PhaseRequest, Run, RunPlan, Start, Step, SupervisionRequest,
    core::{Cost, Finding, RunId, RunStatus, Severity, Verdict},
    delivery::DeliveryGate,
    gates::PhaseOutcome,
    handoff::{
        DecidedBy, DecisionRequest, DeliveryChoice, HandoffAction, HandoffChoice, IntakeAction,
        IntakeChoice, PhaseHandoff, supervision::Answer,
    },
    receipts::exec::{self, BaseEnv, ExecRequest},
};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{
    BoxError, Exit,
    args::{Place, RunArgs, load_profile},
    leftover, show,
};

/// What `orcho run` remembers of a run so that `orcho resume` drives it the
/// same way: `runs/<id>/cli.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunConfig {
    schema: u32,
    profile: String,
    phases: BTreeMap<String, Vec<String>>,
}

/// An engine for `run`'s profile (from its `cli.json`), or for no phases
/// when only decisions and the inbox are needed.
pub(crate) fn engine_for(place: &Place, run: Option<&RunId>) -> Result<Engine, BoxError> {
    let config = run.map(|r| read_config(place, r)).transpose()?.flatten();
    let plan = match &config {
        Some(config) => load_profile(place, Some(&config.profile))?.1,
        None => RunPlan::new("cli", Vec::new()),
    };
    let engine = Engine::builder(plan, &place.store).build()?;
    if let (Some(run), None) = (run, &config) {
        known(&engine, run)?;
    }
    Ok(engine)
}

/// Fails with the engine's "no such run" error (which the CLI answers with
/// a hint) when `run` is not in the store.
fn known(engine: &Engine, run: &RunId) -> Result<(), BoxError> {
    if !engine.runs().run_dir(run).is_dir() {
        // Reading an absent run is what names it unknown.
        engine.runs().read(run)?;
    }
    Ok(())
}

fn config_path(place: &Place, run: &RunId) -> Utf8PathBuf {
    place.store.join("runs").join(run.as_str()).join("cli.json")
}

pub(crate) fn read_config(place: &Place, run: &RunId) -> Result<Option<RunConfig>, BoxError> {
    match std::fs::read(config_path(place, run)) {
        Ok(bytes) => Ok(Some(serde_json::from_slice(&bytes).map_err(|e| {
            format!(
                "{} is not a valid run configuration: {e}",
                config_path(place, run)
            )
        })?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

fn parse_phases(specs: &[String]) -> Result<BTreeMap<String, Vec<String>>, BoxError> {
    let mut phases = BTreeMap::new();
    for spec in specs {
        let Some((phase, command)) = spec.split_once('=') else {
            return Err(format!("`--phase {spec}` must be PHASE=COMMAND").into());
        };
        let argv: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
        if argv.is_empty() {
            return Err(format!("`--phase {spec}` has an empty command").into());
        }
        phases.insert(phase.trim().to_owned(), argv);
    }
    Ok(phases)
}

pub(crate) async fn start(place: &Place, args: &RunArgs) -> Result<Exit, BoxError> {
    let phases = parse_phases(&args.phases)?;
    let (config, mut run) = begin(
        place,
        args.profile.profile.as_deref(),
        phases,
        args.in_place,
    )?;
    if !place.json {
        show::err(&format!("run {} started", run.id()));
    }
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

/// Starts a run of `profile` whose phases run `phases`, and records them in
/// the run's `cli.json` so that a resume drives it the same way.
pub(crate) fn begin(
    place: &Place,
    profile: Option<&str>,
    phases: BTreeMap<String, Vec<String>>,
    in_place: bool,
) -> Result<(RunConfig, Run), BoxError> {
    let (profile, plan) = load_profile(place, profile)?;
    for name in phases.keys() {
        if !plan.phases.iter().any(|p| p.name.as_str() == name) {
            let known: Vec<&str> = plan.phases.iter().map(|p| p.name.as_str()).collect();
            return Err(format!(
                "`--phase {name}=…`: the profile has no phase `{name}` (its phases: {})",
                known.join(", ")
            )
            .into());
        }
    }
    let engine = Engine::builder(plan, &place.store).build()?;
    let start = if in_place {
        Start::in_place(&place.checkout)
    } else {
        Start::in_worktree(&place.checkout)
    };
    let run = engine.start_with(start)?;
    let config = RunConfig {
        schema: 1,
        profile,
        phases,
    };
    let mut bytes = serde_json::to_vec_pretty(&config)?;
    bytes.push(b'\n');
    orcho::core::fs::write_atomic(&config_path(place, run.id()), &bytes)?;
    Ok((config, run))
}

pub(crate) async fn resume(
    place: &Place,
    id: &RunId,
    no_interactive: bool,
) -> Result<Exit, BoxError> {
    let Some(config) = read_config(place, id)? else {
        known(&engine_for(place, None)?, id)?;
        return Err(format!(
            "run `{id}` was not started by `orcho run` (no cli.json); drive it with its own host"
        )
        .into());
    };
    let (_, plan) = load_profile(place, Some(&config.profile))?;
    let engine = Engine::builder(plan, &place.store).build()?;
    let mut run = engine.open(id)?;
    let ended = run.state().status().is_terminal();
    let step = match run.resume().await {
        Ok(step) => step,
        Err(e) if matches!(e.kind(), orcho::EngineErrorKind::WrongState { .. }) => {
            run.next().await?
        }
        Err(e) if e.is_awaiting_decision() => run.next().await?,
        // A recorded `halt` ends the run on this resume: that is its
        // outcome (exit 5), not an error. A run that had already ended
        // stays an error.
        Err(e) if e.is_terminal() && !ended => run.next().await?,
        Err(e) => return Err(e.into()),
    };
    drive(place, &config, &mut run, step, interactive(no_interactive)).await
}

fn interactive(no_interactive: bool) -> bool {
    !no_interactive && std::io::stdin().is_terminal()
}

async fn drive(
    place: &Place,
    config: &RunConfig,
    run: &mut Run,
    mut step: Step,
    interactive: bool,
) -> Result<Exit, BoxError> {
    let engine = run.engine().clone();
    loop {
        step = match step {
            Step::RunPhase(request) => {
                let report = run_phase(place, config, run.state().checkout(), &request).await?;
                run.complete_phase(report).await?
            }
            Step::DecideHandoff(handoff) => {
                if !place.json {
                    show::err(&show::handoff_text(&handoff, None));
                }
                match decided_elsewhere(run).await? {
                    Some(step) => step,
                    None if !interactive => {
                        let hint = format!("orcho handoff decide {} <ACTION>", run.id());
                        return paused(place, run, "handoff", &hint);
                    }
                    None => {
                        let choice = ask_handoff(&handoff)?;
                        let request = DecisionRequest::new(choice, DecidedBy::Operator);
                        engine.decide(run.id(), handoff.id(), request)?;
                        resume_past(run).await?
                    }
                }
            }
            Step::DecideIntake(report) => {
                if !place.json {
                    show::err(&show::intake_text(&report));
                }
                match decided_elsewhere(run).await? {
                    Some(step) => step,
                    None if !interactive => {
                        let hint = format!("orcho intake {} <ACTION>", run.id());
                        return paused(place, run, "intake", &hint);
                    }
                    None => {
                        let choice = ask_intake()?;
                        let request = DecisionRequest::new(choice, DecidedBy::Operator);
                        engine.decide_intake(run.id(), request)?;
                        resume_past(run).await?
                    }
                }
            }
            Step::AnswerQuestions(request)
            | Step::ApprovePlan(request)
            | Step::HandleDeviation(request) => match decided_elsewhere(run).await? {
                Some(step) => step,
                None if !interactive => {
                    let hint = match request.touchpoint {
                        orcho::handoff::supervision::Touchpoint::PlanApproval { .. } => {
                            format!("orcho plan approve {}", run.id())
                        }
                        _ => format!("answer it at a terminal: orcho resume {}", run.id()),
                    };
                    return paused(place, run, "touchpoint", &hint);
                }
                None => {
                    let answers = ask_questions(&request)?;
                    engine.answer(run.id(), &request.id, answers, DecidedBy::Operator)?;
                    resume_past(run).await?
                }
            },
            Step::DecideDelivery(gate) => {
                if !place.json {
                    show::err(&show::gate_text(&gate));
                }
                match decided_elsewhere(run).await? {
                    Some(step) => step,
                    None if !interactive => {
                        let hint = format!("orcho delivery decide {} <ACTION>", run.id());
                        return paused(place, run, "delivery", &hint);
                    }
                    None => {
                        let choice = ask_delivery(&gate)?;
                        let request = DecisionRequest::new(choice, DecidedBy::Operator);
                        engine.decide_delivery(run.id(), request)?;
                        resume_past(run).await?
                    }
                }
            }
            Step::Finished { status, reason } => {
                let evidence = engine.evidence(run.id())?;
                let evidence_path = run.dir().join("evidence.json");
                if place.json {
                    show::out(
                        &json!({
                            "run": run.id().as_str(),
                            "status": status.to_string(),
                            "reason": reason,
                            "evidence": evidence_path.as_str(),
                            "cost_usd": evidence.cost.usd.map(|u| u.to_string()),
                        })
                        .to_string(),
                    );
                } else {
                    show::out(&format!("run {} {status}: {reason}", run.id()));
                    show::out(&format!("evidence: {evidence_path}"));
                }
                return Ok(if status == RunStatus::Halted {
                    Exit::Halted
                } else {
                    Exit::Ok
                });
            }
            other => return Err(format!("this CLI does not know the step {other:?}").into()),
        };
    }
}

/// Resumes when a decision was recorded (by another process, or before a
/// restart); `None` while nobody has decided.
pub(crate) async fn decided_elsewhere(run: &mut Run) -> Result<Option<Step>, BoxError> {
    match resume_past(run).await {
        Ok(step) => Ok(Some(step)),
        Err(e) if e.is_awaiting_decision() => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Resumes; a `halt` decision ends the run, which is a step, not an error.
async fn resume_past(run: &mut Run) -> Result<Step, orcho::EngineError> {
    match run.resume().await {
        Err(e) if e.is_terminal() => run.next().await,
        other => other,
    }
}

fn paused(place: &Place, run: &Run, point: &str, hint: &str) -> Result<Exit, BoxError> {
    if place.json {
        show::out(
            &json!({
                "run": run.id().as_str(),
                "status": run.state().status().to_string(),
                "awaiting": point,
                "hint": hint,
            })
            .to_string(),
        );
    } else {
        show::out(&format!(
            "run {} is paused awaiting a {point} decision ({}).\nnext: {hint}, then `orcho resume {}`",
            run.id(),
            run.state().status(),
            run.id()
        ));
    }
    Ok(Exit::Paused)
}

/// Runs a phase's command in `checkout` (the run's worktree, or the
/// checkout itself for a run in place); exit 0 approves.
pub(crate) async fn run_phase(
    place: &Place,
    config: &RunConfig,
    checkout: &Utf8Path,
    request: &PhaseRequest,
) -> Result<PhaseReport, BoxError> {
    let label = format!(
        "phase `{}` attempt {} (round {})",
        request.phase, request.attempt, request.round
    );
    let Some(argv) = config.phases.get(request.phase.as_str()) else {
        if !place.json {
            show::err(&format!("{label}: no command given; approved"));
        }
        return Ok(PhaseReport::new(
            PhaseOutcome::new(Verdict::Approved).with_summary("no command given; approved"),
        ));
    };
    if !place.json {
        show::err(&format!("{label}: running `{}` …", argv.join(" ")));
    }
    // A command of this run left behind by a killed `orcho` would still be
    // writing in the checkout: it is stopped before the phase runs again.
    let marker = leftover::marker(&place.store, &request.run);
    let stale = marker.clone();
    let stopped = tokio::task::spawn_blocking(move || leftover::stop(&stale)).await??;
    if let Some(group) = stopped
        && !place.json
    {
        show::err(&format!(
            "{label}: stopped process group {group}, left running by an `orcho` that was killed"
        ));
    }
    let input = serde_json::to_string(&request.input)?;
    let started = marker.clone();
    let pid = Arc::new(AtomicU32::new(0));
    let recorded = Arc::clone(&pid);
    let request_exec = ExecRequest::new(argv.iter().map(String::as_str))
        .cwd(checkout.to_owned())
        .envs(BaseEnv::inherit())
        .env("ORCHO_RUN", request.run.as_str())
        .env("ORCHO_PHASE", request.phase.as_str())
        .env("ORCHO_ATTEMPT", request.attempt.to_string())
        .env("ORCHO_ROUND", request.round.to_string())
        .env("ORCHO_INPUT", input)
        .tail_bytes(4 * 1024)
        .on_start(move |pid| {
            recorded.store(pid, Ordering::Relaxed);
            if let Err(e) = leftover::record(&started, pid) {
                show::err(&format!(
                    "warning: the phase command's process group could not be recorded \
                     ({e}); if this `orcho` is killed, it may keep running"
                ));
            }
        });
    let outcome = tokio::task::spawn_blocking(move || {
        let outcome = exec::run(&request_exec);
        if let Err(e) = leftover::clear(&marker, pid.load(Ordering::Relaxed)) {
            show::err(&format!(
                "warning: the phase process marker `{marker}` could not be removed ({e})"
            ));
        }
        outcome
    })
    .await??;
    let tail = outcome.stdout.tail_lossy();
    let summary = tail.trim().lines().last().unwrap_or("").to_owned();
    let report = if outcome.status.success() {
        PhaseOutcome::new(Verdict::Approved).with_summary(summary)
    } else {
        PhaseOutcome::new(Verdict::Rejected)
            .with_summary(summary)
            .with_findings([Finding::new(
                request.phase.as_str(),
                Severity::High,
                format!("`{}` {}", argv.join(" "), outcome.status),
            )
            .with_detail(format!(
                "{}{}",
                tail.trim(),
                outcome.stderr.tail_lossy().trim()
            ))])
    };
    if !place.json {
        show::err(&format!("{label}: {}", report.verdict));
    }
    // A phase command is not a model: its cost is its wall time.
    Ok(PhaseReport::new(report).with_cost(Cost::wall(outcome.duration)))
}

fn prompt(question: &str) -> Result<String, BoxError> {
    let mut err = std::io::stderr().lock();
    write!(err, "{question}")?;
    err.flush()?;
    let mut line = String::new();
    let read = std::io::stdin().lock().read_line(&mut line)?;
    if read == 0 {
        return Err("standard input closed before an answer was given".into());
    }
    Ok(line.trim().to_owned())
}

/// Asks for one of `options` by number (or by name), until one is given.
fn choose<T: Copy + std::fmt::Display>(title: &str, options: &[T]) -> Result<T, BoxError> {
    let mut menu = format!("{title}\n");
    for (i, o) in options.iter().enumerate() {
        let _ = writeln!(menu, "  {}) {o}", i + 1);
    }
    show::err(menu.trim_end());
    loop {
        let answer = prompt(&format!("choose 1-{}: ", options.len()))?;
        if let Ok(n) = answer.parse::<usize>()
            && let Some(o) = n.checked_sub(1).and_then(|i| options.get(i))
        {
            return Ok(*o);
        }
        if let Some(o) = options.iter().find(|o| o.to_string() == answer) {
            return Ok(*o);
        }
        show::err(&format!("`{answer}` is not one of the choices"));
    }
}

fn ask_handoff(handoff: &PhaseHandoff) -> Result<HandoffChoice, BoxError> {
    let actions: Vec<HandoffAction> = handoff.available_actions().iter().collect();
    loop {
        let action = choose("decide the handoff:", &actions)?;
        let text = match action {
            HandoffAction::RetryFeedback => Some(prompt("feedback for the next attempt: ")?),
            HandoffAction::ContinueWithWaiver => Some(prompt("the waiver's reason: ")?),
            _ => None,
        };
        match HandoffChoice::new(action, text.as_deref()) {
            Ok(choice) => return Ok(choice),
            Err(e) => show::err(&format!("{e}")),
        }
    }
}

fn ask_intake() -> Result<IntakeChoice, BoxError> {
    let action = choose(
        "the checkout has uncommitted changes; the run starts from:",
        IntakeAction::ALL,
    )?;
    let message = (action == IntakeAction::Commit)
        .then(|| prompt("commit message (empty for the default): "))
        .transpose()?
        .filter(|m| !m.is_empty());
    Ok(IntakeChoice::from_parts(action, message)?)
}

fn ask_delivery(gate: &DeliveryGate) -> Result<DeliveryChoice, BoxError> {
    let actions: Vec<_> = gate.available_actions().iter().collect();
    let action = choose("decide the delivery:", &actions)?;
    let note = prompt("a note for the record (empty for none): ")?;
    let note = (!note.is_empty()).then_some(note);
    Ok(DeliveryChoice::from_parts(action, None, note)?)
}

/// Renders a question batch: numbered options, several numbers separated
/// by commas where several may be chosen, free text where allowed.
fn ask_questions(request: &SupervisionRequest) -> Result<Vec<Answer>, BoxError> {
    let mut answers = Vec::new();
    for question in request.questions.questions() {
        show::err(&format!("[{}] {}", question.header(), question.question()));
        for (i, option) in question.options().iter().enumerate() {
            match &option.description {
                Some(d) => show::err(&format!("  {}) {} — {d}", i + 1, option.label)),
                None => show::err(&format!("  {}) {}", i + 1, option.label)),
            }
        }
        loop {
            let hint = match (question.options().is_empty(), question.custom()) {
                (true, _) => "your answer (empty for none): ".to_owned(),
                (false, true) => format!(
                    "choose 1-{}{}, or type your own answer: ",
                    question.options().len(),
                    if question.multiple() {
                        " (comma-separated)"
                    } else {
                        ""
                    }
                ),
                (false, false) => format!(
                    "choose 1-{}{}: ",
                    question.options().len(),
                    if question.multiple() {
                        " (comma-separated)"
                    } else {
                        ""
                    }
                ),
            };
            let line = prompt(&hint)?;
            let answer = parse_answer(question, &line);
            match question.check(&answer) {
                Ok(()) => {
                    answers.push(answer);
                    break;
                }
                Err(e) => show::err(&format!("{e}")),
            }
        }
    }
    Ok(answers)
}

fn parse_answer(question: &orcho::handoff::supervision::Question, line: &str) -> Answer {
    if line.is_empty() {
        return Answer::none();
    }
    let picks: Option<Vec<String>> = line
        .split(',')
        .map(|p| {
            p.trim()
                .parse::<usize>()
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|i| question.options().get(i))
                .map(|o| o.label.clone())
        })
        .collect();
    match picks {
        Some(selected) if !selected.is_empty() => Answer::select_all(selected),
        _ => Answer::text(line),
    }
}
