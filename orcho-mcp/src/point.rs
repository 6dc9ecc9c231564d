//! `orcho_point` and `orcho_decide`: any decision point a run waits at, as
//! the library's view says it, decided by an action's name. A kind of
//! point the library adds is shown and decided here without a change.

use orcho::{
    core::RunId,
    decide::{DecideError, Decider},
    point::PointView,
};
use serde::Serialize;

use super::{
    error::ToolError,
    input::{DecideInput, RunInput},
    server::OrchoMcp,
    tools::{ToolResult, value},
};

#[derive(Serialize)]
struct PointDoc<'a> {
    run_id: &'a RunId,
    status: &'static str,
    point: Option<&'a PointView>,
    next: &'static str,
}

#[derive(Serialize)]
struct DecidedDoc<'a> {
    run_id: &'a RunId,
    point: &'static str,
    id: Option<String>,
    action: &'a str,
    recorded: bool,
    halted: bool,
    next: &'static str,
}

/// A refused decision as a tool error: what it was about moved or
/// changed, or its parts break the action's rules.
pub(super) fn decide_error(e: DecideError) -> ToolError {
    match e {
        DecideError::Engine(e) => ToolError::from(e),
        e @ DecideError::PointMoved { .. } => {
            ToolError::new("point_moved", orcho::core::error_chain(&e))
                .hint("call orcho_point and decide on the point the run waits at now")
        }
        e @ DecideError::Stale { .. } => ToolError::new("stale", orcho::core::error_chain(&e))
            .hint("call orcho_point, read what changed, and decide with its `pinned` digest"),
        other => ToolError::invalid(orcho::core::error_chain(&other)),
    }
}

impl OrchoMcp {
    pub(super) fn point(&self, input: &RunInput) -> ToolResult {
        let run = self.find_run("run_id", &input.run_id)?;
        let store = self.store();
        let status = store.status(&run)?.status;
        let point = store.open_point(&run)?;
        value(&PointDoc {
            run_id: &run,
            status: status.as_str(),
            point: point.as_ref(),
            next: if point.is_some() {
                "call orcho_decide with an action's name (and its note where it needs one), \
                 then orcho_run_resume"
            } else {
                "nothing waits for a decision: orcho_run_status says where the run stands"
            },
        })
    }

    pub(super) fn decide_point(&self, input: &DecideInput, client: &str) -> ToolResult {
        let run = self.find_run("run_id", &input.run_id)?;
        let store = self.store();
        let Some(point) = store.open_point(&run)? else {
            let status = store.status(&run)?.status;
            return Err(ToolError::new(
                "no_open_point",
                format!("run `{run}` waits at no open decision point: it is {status}"),
            )
            .hint("orcho_run_status says where the run stands; a recorded decision waits for orcho_run_resume"));
        };
        point
            .check_seen(input.point_id.as_deref(), input.digest.as_deref())
            .map_err(decide_error)?;
        let decision = point
            .decision(&input.action, input.note.clone())
            .map_err(decide_error)?;
        let decided = orcho::decide::decide(&store, &run, decision, Decider::Client(client.into()))
            .map_err(decide_error)?;
        value(&DecidedDoc {
            run_id: &run,
            point: point.kind.as_str(),
            id: point.id.as_ref().map(ToString::to_string),
            action: &decided.action,
            recorded: decided.recorded,
            halted: decided.halted,
            next: if decided.halted {
                "the run has ended"
            } else {
                "call orcho_run_resume to act on it"
            },
        })
    }
}
