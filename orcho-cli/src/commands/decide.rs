//! `orcho decide`, `orcho handoff decide`, `orcho delivery decide`,
//! `orcho intake`, `orcho plan …`, `orcho answer`, `orcho deviation`:
//! decisions recorded for `orcho resume` to act on, through the library's
//! [`orcho::decide`], with no plan.

use orcho::{
    core::{HandoffId, RunId},
    decide::{Decision, PlanVerdict},
    handoff::{DeliveryAction, HandoffAction, IntakeAction, supervision::DeviationAction},
};

use crate::{
    cli::{DeviationArg, PlanCommand},
    decided::{self, parse_patch_digest, record},
    error::CliError,
    host,
    output::{Report, text},
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
    record(
        place,
        run,
        Decision::Handoff {
            handoff,
            action,
            text: text.map(str::to_owned),
            advice,
        },
    )
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
    let patch = patch.map(parse_patch_digest).transpose()?;
    record(
        place,
        run,
        Decision::Delivery {
            action,
            message,
            note,
            patch,
        },
    )
}

/// Records the pre-run intake decision.
pub(crate) fn intake(
    place: &Place,
    run: &RunId,
    action: IntakeAction,
    message: Option<String>,
) -> Result<Report, CliError> {
    record(place, run, Decision::Intake { action, message })
}

/// Allows or denies an agent's permission question (default: the run's
/// oldest open one).
pub(crate) fn permission(
    place: &Place,
    run: &RunId,
    action: orcho::handoff::ask::AskAction,
    note: Option<String>,
    id: Option<HandoffId>,
) -> Result<Report, CliError> {
    record(place, run, Decision::Permission { id, action, note })
}

/// Answers a plan that waits for approval.
pub(crate) fn plan(place: &Place, cmd: PlanCommand) -> Result<Report, CliError> {
    let (run, verdict, feedback) = match cmd {
        PlanCommand::Approve { run, feedback } => (run, PlanVerdict::Approve, feedback),
        PlanCommand::RequestChanges { run, feedback } => {
            (run, PlanVerdict::RequestChanges, Some(feedback))
        }
        PlanCommand::Reject { run, feedback } => (run, PlanVerdict::Reject, feedback),
    };
    let run = host::find_run(place, &run)?;
    record(place, &run, Decision::Plan { verdict, feedback })
}

/// Records answers to the planner's questions, in order.
pub(crate) fn answer(place: &Place, run: &RunId, given: &[String]) -> Result<Report, CliError> {
    record(
        place,
        run,
        Decision::Questions {
            answers: given.to_vec(),
        },
    )
}

/// Records what to do about a failed step.
pub(crate) fn deviation(
    place: &Place,
    run: &RunId,
    action: DeviationArg,
    note: Option<String>,
) -> Result<Report, CliError> {
    let action = match action {
        DeviationArg::Retry => DeviationAction::Retry,
        DeviationArg::Replan => DeviationAction::Replan,
        DeviationArg::Stop => DeviationAction::Stop,
    };
    record(place, run, Decision::Deviation { action, note })
}

/// `orcho decide RUN [ACTION]`: the point `run` waits at, as the library's
/// view says it; with `action`, that action decided by its name, pinned
/// to the point and digest given.
pub(crate) fn by_name(
    place: &Place,
    run: &RunId,
    action: Option<&str>,
    note: Option<String>,
    point: Option<&str>,
    digest: Option<&str>,
) -> Result<Report, CliError> {
    match action {
        Some(action) => decided::by_name(place, run, action, note, point, digest),
        None => {
            let view = decided::open_point(&place.store(), run)?;
            Ok(Report::new(&view).line(text::point(&view)))
        }
    }
}
