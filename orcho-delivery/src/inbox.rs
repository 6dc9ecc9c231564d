//! The delivery gate and the intake question in the decision inbox.

use std::sync::Arc;

use orcho_core::{
    RunId, SystemClock, error_chain,
    storage::{PointKind, Set, Storage},
};
use orcho_handoff::{
    inbox::{
        Inbox, InboxError, PendingDecision, PendingPoint, Scanner, pending_decisions_with,
        scan_handoffs,
    },
    point::PointErrorKind,
};

use crate::{
    gate::{DeliveryGates, delivery_point},
    intake::Intakes,
};

/// Every kind of decision point a run can wait on: phase handoffs, the
/// delivery gate, the intake question, supervision touchpoints, and the
/// permission questions its agents asked.
pub const SCANNERS: &[Scanner] = &[
    scan_handoffs,
    scan_delivery,
    scan_intake,
    orcho_handoff::supervision::SupervisionStore::scan,
    orcho_handoff::ask::Asks::scan,
];

/// Lists every run of `storage` paused on an actionable phase handoff,
/// delivery gate, intake question or touchpoint, newest first (see
/// [`orcho_handoff::inbox`]).
///
/// # Errors
///
/// Only when the runs cannot be listed.
pub fn pending_decisions(storage: &Arc<dyn Storage>) -> Result<Inbox, InboxError> {
    pending_decisions_with(storage, SCANNERS)
}

/// The [`Scanner`] of delivery gates: a gate that is open, or decided and
/// not delivered.
pub fn scan_delivery(
    storage: &Arc<dyn Storage>,
    run: &RunId,
) -> Result<Vec<PendingDecision>, String> {
    let gates = DeliveryGates::new(Arc::clone(storage), Arc::new(SystemClock::new()));
    let points = gates.points();
    let point = delivery_point();
    let gate = match points.question(run, &point) {
        Ok((gate, _)) => gate,
        Err(PointErrorKind::NotFound(_)) => return Ok(Vec::new()),
        Err(e) => {
            return Err(format!(
                "the delivery gate cannot be read: {}",
                error_chain(&e)
            ));
        }
    };
    let delivered = points
        .outcome(run, &point)
        .map_err(|e| format!("the delivery outcome cannot be read: {}", error_chain(&e)))?;
    if delivered.is_some() {
        return Ok(Vec::new());
    }
    let decision = points.recorded(run, &point).map_err(|e| error_chain(&e))?;
    Ok(vec![PendingDecision::new(
        run.clone(),
        PendingPoint::Delivery {
            actions: gate.available_actions(),
        },
        Some(gate.verdict()),
        decision.map(|d| d.decision().payload().action().as_str().to_owned()),
        gate.created_at(),
    )])
}

/// The [`Scanner`] of intake questions: a question that is not applied.
pub fn scan_intake(
    storage: &Arc<dyn Storage>,
    run: &RunId,
) -> Result<Vec<PendingDecision>, String> {
    let asked = storage
        .list(run, Set::Questions(PointKind::Intake))
        .map_err(|e| error_chain(&e))?;
    if asked.is_empty() {
        return Ok(Vec::new());
    }
    let intakes = Intakes::new(Arc::clone(storage), Arc::new(SystemClock::new()));
    if intakes.outcome(run).map_err(|e| error_chain(&e))?.is_some() {
        return Ok(Vec::new());
    }
    let (report, asked_at) = intakes.question(run).map_err(|e| error_chain(&e))?;
    let decision = intakes
        .recorded_decision(run)
        .map_err(|e| error_chain(&e))?;
    Ok(vec![PendingDecision::new(
        run.clone(),
        PendingPoint::Intake {
            count: report.count(),
        },
        None,
        decision.map(|d| d.decision().payload().action().as_str().to_owned()),
        asked_at,
    )])
}
