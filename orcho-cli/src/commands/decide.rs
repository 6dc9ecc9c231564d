//! `orcho handoff decide`, `orcho delivery decide`, `orcho intake`,
//! `orcho plan …`, `orcho answer`, `orcho deviation`: decisions recorded
//! for `orcho resume` to act on, through the store, with no plan.

use orcho::{
    Store, TouchpointKind,
    core::{HandoffId, RunId},
    handoff::{
        DeliveryAction, HandoffAction, IntakeAction,
        decision::{DecidedBy, DecisionRequest},
        delivery::DeliveryChoice,
        handoff::HandoffChoice,
        intake::IntakeChoice,
        supervision::Answer,
    },
};

use crate::{
    cli::{DeviationArg, PlanCommand},
    error::CliError,
    host,
    output::{Report, doc::DecidedDoc, text},
    place::Place,
};

/// Records a decision on `handoff` (default: the run's open handoff).
pub(crate) fn handoff(
    place: &Place,
    run: &RunId,
    action: HandoffAction,
    text: Option<&str>,
    handoff: Option<HandoffId>,
    advice: Option<orcho::handoff::advisor::AdviceId>,
) -> Result<Report, CliError> {
    let store = place.store();
    let handoff = match handoff {
        Some(h) => h,
        None => match host::decision_handoff(&store, run)? {
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
            "give it with `--note`: orcho handoff decide {run} {action} --note '…'"
        ))
    })?;
    // The recorded decision again is a replay: it succeeds and changes
    // nothing (also after the run acted on it); a different one conflicts.
    // The store refuses advice that is not about this handoff.
    let mut request = DecisionRequest::new(choice, DecidedBy::Operator);
    if let Some(advice) = advice {
        request = request.with_advice(advice);
    }
    let recorded = store.decide(run, &handoff, request)?;
    let said = said(run, "handoff", action.as_str(), !recorded.is_replay());
    Ok(if action == HandoffAction::Halt {
        said.ended(&store, run)
    } else {
        said
    }
    .into())
}

/// Records the delivery decision.
pub(crate) fn delivery(
    place: &Place,
    run: &RunId,
    action: DeliveryAction,
    message: Option<String>,
    note: Option<String>,
    patch: Option<&str>,
) -> Result<Report, CliError> {
    let mut choice = DeliveryChoice::from_parts(action, message, note)?;
    if let Some(patch) = patch {
        choice = choice.for_patch(parse_patch_digest(patch)?);
    }
    place
        .store()
        .decide_delivery(run, DecisionRequest::new(choice, DecidedBy::Operator))?;
    Ok(said(run, "delivery", action.as_str(), true)
        .ended(&place.store(), run)
        .into())
}

/// Records the pre-run intake decision.
pub(crate) fn intake(
    place: &Place,
    run: &RunId,
    action: IntakeAction,
    message: Option<String>,
) -> Result<Report, CliError> {
    let choice = IntakeChoice::from_parts(action, message)?;
    place
        .store()
        .decide_intake(run, DecisionRequest::new(choice, DecidedBy::Operator))?;
    Ok(said(run, "intake", action.as_str(), true)
        .ended(&place.store(), run)
        .into())
}

/// Answers a plan that waits for approval.
pub(crate) fn plan(place: &Place, cmd: PlanCommand) -> Result<Report, CliError> {
    let (run, label, feedback) = match cmd {
        PlanCommand::Approve { run, feedback } => (run, "Approve", feedback),
        PlanCommand::RequestChanges { run, feedback } => (run, "Request Changes", Some(feedback)),
        PlanCommand::Reject { run, feedback } => (run, "Reject", feedback),
    };
    let run = host::find_run(place, &run)?;
    let store = place.store();
    let view = store.status(&run)?;
    let touchpoint = match view.touchpoint() {
        Some((id, TouchpointKind::PlanApproval)) => id.clone(),
        _ => {
            return Err(CliError::msg(format!(
                "run `{run}` has no plan waiting for approval"
            )));
        }
    };
    let context = feedback.map_or_else(Answer::none, Answer::text);
    store.answer(
        &run,
        &touchpoint,
        vec![Answer::select(label), context],
        DecidedBy::Operator,
    )?;
    Ok(said(&run, "plan", label, true).into())
}

/// The run's open touchpoint of `kind`, or an error saying there is none.
fn open_touchpoint(
    store: &Store,
    run: &RunId,
    kind: TouchpointKind,
) -> Result<orcho::handoff::supervision::OpenTouchpoint, CliError> {
    let waiting = store.status(run)?;
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
    store
        .touchpoints(run)?
        .into_iter()
        .find(|t| t.id == id)
        .ok_or_else(|| CliError::msg(format!("run `{run}`'s touchpoint `{id}` cannot be found")))
}

/// Records answers to the planner's questions, in order.
pub(crate) fn answer(place: &Place, run: &RunId, given: &[String]) -> Result<Report, CliError> {
    let store = place.store();
    let open = open_touchpoint(&store, run, TouchpointKind::Questions)?;
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
    store.answer(run, &open.id, answers, DecidedBy::Operator)?;
    Ok(said(run, "questions", "answered", true).into())
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
) -> Result<Report, CliError> {
    let store = place.store();
    let open = open_touchpoint(&store, run, TouchpointKind::Deviation)?;
    let label = match action {
        DeviationArg::Retry => "Retry",
        DeviationArg::Replan => "Replan",
        DeviationArg::Stop => "Stop",
    };
    let context = note.map_or_else(Answer::none, Answer::text);
    store.answer(
        run,
        &open.id,
        vec![Answer::select(label), context],
        DecidedBy::Operator,
    )?;
    Ok(said(run, "deviation", label, true).into())
}

/// The report of a decision: recorded now, or recorded before, identically
/// (a replay: nothing changed).
fn said<'a>(run: &'a RunId, point: &'a str, action: &'a str, recorded: bool) -> Said<'a> {
    Said {
        run,
        point,
        action,
        recorded,
        halted: false,
    }
}

/// What a recorded decision says.
struct Said<'a> {
    run: &'a RunId,
    point: &'a str,
    action: &'a str,
    recorded: bool,
    /// The decision ended the run: a halt is terminal when decided.
    halted: bool,
}

impl Said<'_> {
    /// The same, saying so when the decision ended the run.
    fn ended(mut self, store: &Store, run: &RunId) -> Self {
        self.halted = store
            .status(run)
            .is_ok_and(|view| view.status == orcho::core::RunStatus::Halted);
        self
    }
}

impl From<Said<'_>> for Report {
    fn from(said: Said<'_>) -> Self {
        let Said {
            run,
            point,
            action,
            recorded,
            halted,
        } = said;
        let line = if halted && recorded {
            format!("recorded `{action}` on the {point} of run {run}: the run is halted")
        } else if recorded {
            text::decided(run, point, action)
        } else {
            format!("`{action}` was recorded on the {point} of run {run} already; nothing changed")
        };
        Self::new(&DecidedDoc {
            run,
            point,
            decision: action,
            recorded,
            status: halted.then_some("halted"),
        })
        .line(line)
    }
}

/// A patch digest as `patch_digest` shows it (`blake3:<hex>`).
pub(crate) fn parse_patch_digest(text: &str) -> Result<orcho::core::Digest, CliError> {
    text.parse().map_err(|e| {
        CliError::usage(format!("`{text}` is not a patch digest: {e}")).with_hint(
            "give the `patch_digest` of `orcho delivery show --json` (`blake3:` and 64 hex digits)",
        )
    })
}
