//! `orcho handoff show`, `orcho handoff advise`, `orcho delivery show`,
//! `orcho intake RUN`:
//! what a decision is about.

use orcho::{Store, core::RunId, handoff::IntakeAction};

use crate::{
    error::CliError,
    gate_now::GateNow,
    host,
    output::{
        Report,
        doc::{GateDoc, HandoffDoc, IntakeDoc, Naming},
        text,
    },
    place::Place,
};

/// The run's open handoff, or its last one, with the decision recorded on
/// it.
pub(crate) fn handoff(place: &Place, run: &RunId) -> Result<Report, CliError> {
    let store = place.store();
    let handoffs = store.handoffs(run)?;
    let Some(last) = handoffs.last() else {
        return Err(CliError::msg(format!("run `{run}` has no handoff")));
    };
    let decision = store.handoff_decision(run, last.id())?;
    let decided = decision.as_ref().map(|d| d.decision().payload());
    let mut shown = text::handoff(last, decided);
    let view = store.status(run)?;
    if decided.is_none() && view.status.is_terminal() {
        shown.push_str("\nthe run is ");
        shown.push_str(view.status.as_str());
        shown.push_str(": nothing to decide");
    }
    Ok(Report::new(&HandoffDoc::new(last, decided, Naming::Cli)).line(shown))
}

/// Asks the run's advisor for a recommendation on its open handoff.
pub(crate) async fn advice(place: &Place, run: &RunId) -> Result<Report, CliError> {
    let engine = host::engine_for(place, run)?;
    if engine.advisor().is_none() {
        return Err(CliError::msg(format!(
            "run `{run}`'s profile declares no `advisor:`, so there is nobody to ask"
        ))
        .with_hint(concat!(
            "add an `advisor:` block (a model and its key variable; ",
            orcho_host::docs_url!("profile.md#advisor"),
            ")"
        )));
    }
    let handoff = open_handoff(engine.store(), run)?;
    place.progress("asking the advisor …");
    let record = engine.advise(run, &handoff).await?;
    Ok(Report::new(&crate::output::doc::AdviceDoc::of(
        run,
        &handoff,
        &record,
        "advice is not a decision",
    ))
    .line(text::advice(run, &record)))
}

/// The handoff `run` is paused at.
pub(crate) fn open_handoff(store: &Store, run: &RunId) -> Result<orcho::core::HandoffId, CliError> {
    let view = store.status(run)?;
    view.handoff()
        .cloned()
        .ok_or_else(|| CliError::msg(format!("run `{run}` is not paused at a handoff")))
}

/// The run's delivery gate.
pub(crate) fn gate(place: &Place, run: &RunId, diff: bool) -> Result<Report, CliError> {
    let store = place.store();
    let gate = store.delivery_gate(run)?;
    let now = GateNow::read(&store, run)?;
    let mut doc = GateDoc::new(&gate).with_now(&gate, &now);
    if !diff {
        return Ok(Report::new(&doc).line(text::gate(&gate, &now)));
    }
    let patch = store.delivery_patch(run)?;
    let text = String::from_utf8_lossy(&patch).into_owned();
    doc.patch = Some(text.clone());
    Ok(Report::new(&doc).line(text.trim_end_matches('\n').to_owned()))
}

/// Runs the missing and stale required commands again in the run's
/// worktree, and shows the gate opened again on their receipts.
pub(crate) async fn rerun(place: &Place, run: &RunId) -> Result<Report, CliError> {
    crate::interrupt::install(place.voice);
    crate::interrupt::driving_run(run);
    let (_, mut driving) = host::open_with(place, run, false)?;
    if let Some(ended) = driving.refusal_if_ended() {
        return Err(ended.into());
    }
    place.progress("running the missing and stale required commands in the run's worktree …");
    let (rerun, gate) = driving.rerun_receipts().await?;
    let store = place.store();
    let now = GateNow::read(&store, run)?;
    let said = if rerun.is_empty() {
        "every required receipt held: nothing was run again".to_owned()
    } else {
        format!(
            "ran again: {}",
            orcho::core::spelling::quoted(rerun.iter().map(ToString::to_string))
        )
    };
    let mut doc = GateDoc::new(&gate).with_now(&gate, &now);
    doc.rerun = rerun.iter().map(ToString::to_string).collect();
    Ok(Report::new(&doc).line(said).line(text::gate(&gate, &now)))
}

/// The run's pre-run intake question and what can be decided.
pub(crate) fn intake(place: &Place, run: &RunId) -> Result<Report, CliError> {
    let report = place.store().intake_report(run)?;
    Ok(Report::new(&IntakeDoc::new(
        run,
        &report,
        Naming::Cli,
        "orcho intake RUN ACTION, then orcho resume RUN",
    ))
    .line(format!(
        "{}\n{}\nnext: orcho intake {run} include|exclude|commit|halt, then `orcho resume {run}`",
        text::intake(&report),
        text::actions(IntakeAction::ALL),
    )))
}
