//! A decision recorded through [`orcho::decide`], said as this crate's
//! hosts say it (the command line, the web inbox): a line and the
//! `decided` document, or an error with what to do.

use orcho::{
    core::RunId,
    decide::{DecideError, Decided, Decision},
    handoff::decision::DecidedBy,
};

use crate::{
    error::CliError,
    output::{Report, doc::DecidedDoc, text},
    place::Place,
};

/// Records `decision` on `run` as the operator (the place's decider) and
/// says what was recorded.
pub fn record(place: &Place, run: &RunId, decision: Decision) -> Result<Report, CliError> {
    let hint = hint_of(run, &decision);
    orcho::decide::decide(&place.store(), run, decision, DecidedBy::Operator)
        .map(|decided| report(&decided))
        .map_err(|e| error(e, hint))
}

/// Records the action named `action` on the point `run` waits at, with
/// `note`, as the point's view takes it ([`orcho::point`]): pinned to the
/// point `point` and the digest `digest` when given. What a host that
/// decides any point by name records (`orcho decide`, the web's generic
/// form and API).
pub fn by_name(
    place: &Place,
    run: &RunId,
    action: &str,
    note: Option<String>,
    point: Option<&str>,
    digest: Option<&str>,
) -> Result<Report, CliError> {
    let store = place.store();
    let view = open_point(&store, run)?;
    let shown = format!("`orcho decide {run}` shows the point open now");
    view.check_seen(point, digest)
        .map_err(|e| error(e, Some(shown)))?;
    let list = format!("`orcho decide {run}` lists the actions and the notes they take");
    let decision = view
        .decision(action, note)
        .map_err(|e| error(e, Some(list)))?;
    record(place, run, decision)
}

/// The point `run` waits at and nobody decided yet, or why there is none.
pub fn open_point(store: &orcho::Store, run: &RunId) -> Result<orcho::point::PointView, CliError> {
    match store.open_point(run)? {
        Some(view) => Ok(view),
        None => {
            let status = store.status(run)?.status;
            // Waiting, with its decision recorded: nothing is open until the
            // run acts on it.
            if status.is_awaiting_decision() {
                return Err(CliError::refused(format!(
                    "run `{run}` has its decision recorded ({status}): nothing is open until \
                     `orcho resume {run}` acts on it"
                ))
                .with_hint(format!("`orcho resume {run}`")));
            }
            Err(CliError::refused(format!(
                "run `{run}` waits at no open decision point: it is {status}"
            ))
            .with_hint(format!("`orcho log {run}` shows where it stands")))
        }
    }
}

/// What to do about a decision's missing or misplaced text.
fn hint_of(run: &RunId, decision: &Decision) -> Option<String> {
    match decision {
        Decision::Handoff { action, .. } => Some(format!(
            "give it with `--note`: orcho handoff decide {run} {action} --note '…'"
        )),
        Decision::Questions { .. } => Some(format!(
            "give one `--answer` per question, in order: `orcho answer {run} --answer … --answer …`"
        )),
        _ => None,
    }
}

/// A refused decision as the command line says it, with `hint` where the
/// decision's own parts are wrong.
pub fn error(e: DecideError, hint: Option<String>) -> CliError {
    match e {
        DecideError::NotWaiting { run, says } => {
            let e = CliError::msg(format!("run `{run}` {says}"));
            if says.starts_with("is not waiting at") {
                e.with_hint(format!("`orcho log {run}` shows where it stands"))
            } else {
                e
            }
        }
        DecideError::Text(e) => {
            let e = CliError::usage(e.to_string());
            match hint {
                Some(hint) => e.with_hint(hint),
                None => e,
            }
        }
        DecideError::AnswerCount {
            questions,
            asked,
            given,
        } => {
            let listed: Vec<String> = questions.iter().map(|q| format!("  {q}")).collect();
            let e = CliError::usage(format!(
                "the planner asked {asked} question(s) and {given} answer(s) were given:\n{}",
                listed.join("\n")
            ));
            match hint {
                Some(hint) => e.with_hint(hint),
                None => e,
            }
        }
        e @ DecideError::Answer { .. } => {
            let options = match &e {
                DecideError::Answer { options, .. } => options.join(", "),
                _ => String::new(),
            };
            CliError::usage(e.to_string()).with_hint(format!("the options: {options}"))
        }
        e @ (DecideError::UnknownAction { .. }
        | DecideError::NoteRequired { .. }
        | DecideError::NoteRefused { .. }
        | DecideError::NothingPinned { .. }) => {
            let e = CliError::usage(e.to_string());
            match hint {
                Some(hint) => e.with_hint(hint),
                None => e,
            }
        }
        e @ (DecideError::PointMoved { .. } | DecideError::Stale { .. }) => {
            let e = CliError::moved(e.to_string());
            match hint {
                Some(hint) => e.with_hint(hint),
                None => e,
            }
        }
        DecideError::Delivery(e) => e.into(),
        DecideError::Intake(e) => e.into(),
        DecideError::Engine(e) => e.into(),
        other => CliError::msg(other.to_string()),
    }
}

/// What a recorded decision says: recorded now, or recorded before,
/// identically (a replay: nothing changed).
pub fn report(decided: &Decided) -> Report {
    let Decided {
        run,
        point,
        action,
        recorded,
        halted,
        ..
    } = decided;
    let line = if *halted && *recorded {
        format!("recorded `{action}` on the {point} of run {run}: the run is halted")
    } else if *recorded {
        text::decided(run, point, action)
    } else {
        format!("`{action}` was recorded on the {point} of run {run} already; nothing changed")
    };
    Report::new(&DecidedDoc {
        run,
        point,
        decision: action,
        recorded: *recorded,
        status: halted.then_some("halted"),
    })
    .line(line)
}

/// A patch digest as `patch_digest` shows it (`blake3:<hex>`).
pub fn parse_patch_digest(text: &str) -> Result<orcho::core::Digest, CliError> {
    text.parse().map_err(|e| {
        CliError::usage(format!("`{text}` is not a patch digest: {e}")).with_hint(
            "give the `patch_digest` of `orcho delivery show --json` (`blake3:` and 64 hex digits)",
        )
    })
}
