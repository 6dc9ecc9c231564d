//! `orcho handoff show`, `orcho handoff advise`, `orcho delivery show`,
//! `orcho intake RUN`:
//! what a decision is about.

use orcho::{
    Overridden, Store,
    core::{RunId, RunStatus},
    delivery::TargetStatus,
    handoff::{DeliveryAction, IntakeAction},
};

use crate::{
    error::CliError,
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
            crate::error::docs_url!("profile.md#advisor"),
            ")"
        )));
    }
    let handoff = open_handoff(engine.store(), run)?;
    place.progress("asking the advisor …");
    let record = engine.advise(run, &handoff).await?;
    Ok(Report::new(&crate::mcp::AdviceDoc::of(
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
    crate::interrupt::install(place.json);
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

/// What a delivery gate is shown with beside what it recorded: the
/// target's status checked now, and the handoffs the run was moved past.
#[derive(Debug, Default)]
pub(crate) struct GateNow {
    /// The decision recorded on the gate, waiting for a resume.
    pub(crate) decided: Option<Decided>,
    /// The run has ended: how, in a few words.
    pub(crate) ended: Option<String>,
    /// `None` once the run is past its gate (the target no longer matters
    /// to it) or when the target cannot be read (the gate is still worth
    /// showing; deciding says what is wrong).
    pub(crate) target: Option<TargetStatus>,
    pub(crate) overridden: Vec<Overridden>,
    /// What the run was started to do.
    pub(crate) task: Option<String>,
}

impl GateNow {
    pub(crate) fn read(store: &Store, run: &RunId) -> Result<Self, CliError> {
        let view = store.status(run)?;
        let waits = view.status == RunStatus::AwaitingDelivery;
        let ended = view.status.is_terminal().then(|| match &view.reason {
            Some(reason) => format!("the run is {} ({reason})", view.status),
            None => format!("the run is {}", view.status),
        });
        let decided = if waits {
            store.delivery_decision(run)?.map(|recorded| {
                let decision = recorded.decision();
                Decided {
                    action: decision.payload().action(),
                    by: who_decided(decision),
                    at: decision.decided_at().to_string(),
                }
            })
        } else {
            None
        };
        Ok(Self {
            target: waits.then(|| store.delivery_target(run).ok()).flatten(),
            overridden: store.overridden(run)?,
            decided,
            ended,
            task: view.task,
        })
    }
}

/// Who took `decision`, in words: the client's name or the kind of
/// decider, then the person where the host said (`operator alice@build-1`).
pub(crate) fn who_decided<P: orcho::handoff::decision::DecisionPayload>(
    decision: &orcho::handoff::decision::Decision<P>,
) -> String {
    let by = decision
        .client()
        .map_or_else(|| decision.decided_by().to_string(), str::to_owned);
    match decision.who() {
        Some(who) => format!("{by} {who}"),
        None => by,
    }
}

/// A decision recorded on a delivery gate.
#[derive(Debug, serde::Serialize)]
pub(crate) struct Decided {
    pub(crate) action: DeliveryAction,
    pub(crate) by: String,
    pub(crate) at: String,
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
