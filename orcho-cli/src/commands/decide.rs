//! `orcho handoff decide`, `orcho delivery decide`, `orcho intake`,
//! `orcho plan …`: decisions recorded for `orcho resume` to act on.

use orcho::{
    TouchpointKind,
    core::{HandoffId, RunId},
    handoff::{
        DecidedBy, DecisionRequest, DeliveryAction, DeliveryChoice, HandoffAction, HandoffChoice,
        IntakeAction, IntakeChoice, supervision::Answer,
    },
};

use crate::{
    cli::{DeviationArg, PlanCommand},
    error::CliError,
    exit::Exit,
    host,
    output::{self, doc::DecidedDoc, text},
    place::Place,
};

/// Records a decision on `handoff` (default: the run's open handoff).
pub(crate) fn handoff(
    place: &Place,
    run: &RunId,
    action: HandoffAction,
    text: Option<&str>,
    handoff: Option<HandoffId>,
    advice: Option<orcho::handoff::AdviceId>,
) -> Result<Exit, CliError> {
    let engine = host::engine_for(place, run)?;
    let handoff = match handoff {
        Some(h) => h,
        None => match host::decision_handoff(&engine, run)? {
            Some(h) => h,
            None => {
                return Err(CliError::msg(format!(
                    "run `{run}` is not paused at a handoff"
                )));
            }
        },
    };
    let choice = HandoffChoice::new(action, text).map_err(|e| {
        CliError::usage(e.to_string()).with_hint(format!(
            "give it with `--text`: orcho handoff decide {run} {action} --text '…'"
        ))
    })?;
    // The recorded decision again is a replay: it succeeds and changes
    // nothing (also after the run acted on it); a different one conflicts.
    let mut request = DecisionRequest::new(choice, DecidedBy::Operator);
    if let Some(advice) = advice {
        // The advice must exist, and be about this handoff.
        let known = engine
            .store()
            .advice(run)?
            .into_iter()
            .any(|a| *a.id() == advice && *a.handoff() == handoff);
        if !known {
            return Err(CliError::msg(format!(
                "run `{run}` has no advice `{advice}` on handoff `{handoff}`"
            ))
            .with_hint(format!(
                "`orcho handoff advise {run}` asks for advice and prints its id"
            )));
        }
        request = request.with_advice(advice);
    }
    let recorded = engine.store().decide(run, &handoff, request)?;
    if recorded.is_replay() {
        return replayed(place, run, "handoff", action.as_str());
    }
    decided(place, run, "handoff", action.as_str())
}

/// Records the delivery decision.
pub(crate) fn delivery(
    place: &Place,
    run: &RunId,
    action: DeliveryAction,
    message: Option<String>,
    note: Option<String>,
) -> Result<Exit, CliError> {
    let engine = host::engine_for(place, run)?;
    let choice = DeliveryChoice::from_parts(action, message, note)?;
    engine
        .store()
        .decide_delivery(run, DecisionRequest::new(choice, DecidedBy::Operator))?;
    decided(place, run, "delivery", action.as_str())
}

/// Records the pre-run intake decision.
pub(crate) fn intake(
    place: &Place,
    run: &RunId,
    action: IntakeAction,
    message: Option<String>,
) -> Result<Exit, CliError> {
    let choice = IntakeChoice::from_parts(action, message)?;
    let engine = host::engine_for(place, run)?;
    engine
        .store()
        .decide_intake(run, DecisionRequest::new(choice, DecidedBy::Operator))?;
    decided(place, run, "intake", action.as_str())
}

/// Answers a plan that waits for approval.
pub(crate) fn plan(place: &Place, cmd: PlanCommand) -> Result<Exit, CliError> {
    let (run, label, feedback) = match cmd {
        PlanCommand::Approve { run, feedback } => (run, "Approve", feedback),
        PlanCommand::RequestChanges { run, feedback } => (run, "Request Changes", Some(feedback)),
        PlanCommand::Reject { run, feedback } => (run, "Reject", feedback),
    };
    let run = host::find_run(place, &run)?;
    let engine = host::engine_for(place, &run)?;
    let view = engine.store().status(&run)?;
    let touchpoint = match view.touchpoint() {
        Some((id, TouchpointKind::PlanApproval)) => id.clone(),
        _ => {
            return Err(CliError::msg(format!(
                "run `{run}` has no plan waiting for approval"
            )));
        }
    };
    let context = feedback.map_or_else(Answer::none, Answer::text);
    engine.store().answer(
        &run,
        &touchpoint,
        vec![Answer::select(label), context],
        DecidedBy::Operator,
    )?;
    decided(place, &run, "plan", label)
}

/// The run's open touchpoint of `kind`, or an error saying there is none.
fn open_touchpoint(
    engine: &orcho::Engine,
    run: &RunId,
    kind: TouchpointKind,
) -> Result<orcho::handoff::supervision::OpenTouchpoint, CliError> {
    let waiting = engine.store().status(run)?;
    let id = match waiting.touchpoint() {
        Some((id, k)) if k == kind => id.clone(),
        _ => {
            return Err(CliError::msg(format!(
                "run `{run}` is not waiting at {}",
                match kind {
                    TouchpointKind::Questions => "planner questions",
                    TouchpointKind::PlanApproval => "a plan approval",
                    _ => "a deviation",
                }
            ))
            .with_hint(format!("`orcho log {run}` shows where it stands")));
        }
    };
    engine
        .store()
        .touchpoints(run)?
        .into_iter()
        .find(|t| t.id == id)
        .ok_or_else(|| CliError::msg(format!("run `{run}`'s touchpoint `{id}` cannot be found")))
}

/// Records answers to the planner's questions, in order.
pub(crate) fn answer(place: &Place, run: &RunId, given: &[String]) -> Result<Exit, CliError> {
    let engine = host::engine_for(place, run)?;
    let open = open_touchpoint(&engine, run, TouchpointKind::Questions)?;
    let batch = open
        .touchpoint
        .questions()
        .map_err(|e| CliError::msg(e.to_string()))?;
    let questions = batch.questions();
    if given.len() != questions.len() {
        let asked: Vec<String> = questions
            .iter()
            .enumerate()
            .map(|(i, q)| format!("  {}. [{}] {}", i + 1, q.header(), q.question()))
            .collect();
        return Err(CliError::usage(format!(
            "the planner asked {} question(s) and {} answer(s) were given:\n{}",
            questions.len(),
            given.len(),
            asked.join("\n")
        ))
        .with_hint(format!(
            "give one `--answer` per question, in order: `orcho answer {run} --answer … --answer …`"
        )));
    }
    let answers = questions
        .iter()
        .zip(given)
        .enumerate()
        .map(|(i, (q, text))| {
            crate::prompt::parse_answer(q, text.trim()).map_err(|slip| {
                CliError::usage(format!("answer {} ([{}]): {slip}", i + 1, q.header()))
                    .with_hint(options_hint(q))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    engine
        .store()
        .answer(run, &open.id, answers, DecidedBy::Operator)?;
    decided(place, run, "questions", "answered")
}

/// The options of `question`, numbered, for a hint.
fn options_hint(question: &orcho::handoff::supervision::Question) -> String {
    let options: Vec<String> = question
        .options()
        .iter()
        .enumerate()
        .map(|(i, o)| format!("{}) {}", i + 1, o.label))
        .collect();
    format!("the options: {}", options.join(", "))
}

/// Records what to do about a failed step.
pub(crate) fn deviation(
    place: &Place,
    run: &RunId,
    action: DeviationArg,
    note: Option<String>,
) -> Result<Exit, CliError> {
    let engine = host::engine_for(place, run)?;
    let open = open_touchpoint(&engine, run, TouchpointKind::Deviation)?;
    let label = match action {
        DeviationArg::Retry => "Retry",
        DeviationArg::Replan => "Replan",
        DeviationArg::Stop => "Stop",
    };
    let context = note.map_or_else(Answer::none, Answer::text);
    engine.store().answer(
        run,
        &open.id,
        vec![Answer::select(label), context],
        DecidedBy::Operator,
    )?;
    decided(place, run, "deviation", label)
}

fn decided(place: &Place, run: &RunId, point: &str, action: &str) -> Result<Exit, CliError> {
    said(place, run, point, action, true)
}

/// The decision was recorded before, identically: nothing changed.
fn replayed(place: &Place, run: &RunId, point: &str, action: &str) -> Result<Exit, CliError> {
    said(place, run, point, action, false)
}

fn said(
    place: &Place,
    run: &RunId,
    point: &str,
    action: &str,
    recorded: bool,
) -> Result<Exit, CliError> {
    if place.json {
        output::json(&DecidedDoc {
            run,
            point,
            decision: action,
            recorded,
        });
    } else if recorded {
        output::out(&text::decided(run, point, action));
    } else {
        output::out(&format!(
            "`{action}` was recorded on the {point} of run {run} already; nothing changed"
        ));
    }
    Ok(Exit::Ok)
}
