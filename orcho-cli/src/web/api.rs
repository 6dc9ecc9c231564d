//! The JSON API under `/api/`: the documents `orcho … --json` prints, for
//! chat bots and scripts.

use axum::{
    Json,
    extract::{Path, State, rejection::JsonRejection},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
};
use serde::Deserialize;

use super::{
    Web,
    session::{Caller, Refused},
};
use crate::{error::CliError, output::Report};

/// A command's report as an answer: its JSON document, or its error with
/// the status that says what kind it is.
pub(super) fn answer(result: Result<Report, CliError>) -> Response {
    match result {
        Ok(report) => {
            let (json, _) = report.into_document();
            (
                [(axum::http::header::CONTENT_TYPE, "application/json")],
                json.unwrap_or_else(|| "{}".to_owned()),
            )
                .into_response()
        }
        Err(e) => error(&e),
    }
}

/// An error as the API says it: `{"error", "hint", "exit_code"}` with the
/// HTTP status of its kind.
pub(super) fn error(e: &CliError) -> Response {
    (
        status_of(e),
        Json(serde_json::json!({
            "error": e.message(),
            "hint": e.hint(),
            "exit_code": e.exit_code(),
        })),
    )
        .into_response()
}

/// The HTTP status of a command's error.
pub(super) fn status_of(e: &CliError) -> StatusCode {
    if e.is_unknown_run() {
        return StatusCode::NOT_FOUND;
    }
    match e.exit_code() {
        crate::exit::CONFLICT => StatusCode::CONFLICT,
        crate::exit::USAGE => StatusCode::BAD_REQUEST,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    }
}

/// The place a caller decides in: decisions are recorded as the caller's.
pub(super) fn place_of(web: &Web, caller: &Caller) -> crate::place::Place {
    let mut place = (*web.place).clone();
    place.json = true;
    place.decider = Some(format!("{} (web)", caller.name));
    place
}

/// `GET /api/inbox`: what `orcho inbox --json` prints.
pub(super) async fn inbox(State(web): State<Web>, caller: Result<Caller, Refused>) -> Response {
    let caller = match caller {
        Ok(caller) => caller,
        Err(refused) => return refused.json(),
    };
    let place = place_of(&web, &caller);
    answer(crate::commands::inbox::inbox(
        &place,
        &crate::commands::inbox::Filter::default(),
    ))
}

/// `GET /api/runs/{run}`: where the run stands and its evidence.
pub(super) async fn run(
    State(web): State<Web>,
    caller: Caller,
    Path(run): Path<String>,
) -> Response {
    let place = place_of(&web, &caller);
    let store = place.store();
    let found = match store.find_run(&run) {
        Ok(run) => run,
        Err(e) => return error(&e.into()),
    };
    let doc = store.status(&found).and_then(|view| {
        let evidence = store.evidence(&found, None)?;
        Ok(serde_json::json!({ "run": view, "evidence": evidence }))
    });
    match doc {
        Ok(doc) => Json(doc).into_response(),
        Err(e) => error(&e.into()),
    }
}

/// A handoff decision, as the API takes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HandoffDecision {
    action: String,
    #[serde(default)]
    text: Option<String>,
}

/// A delivery decision, as the API takes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DeliveryDecision {
    action: String,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    note: Option<String>,
    /// The patch digest the decision was taken on (the gate's
    /// `patch_digest`): a gate that now holds another patch refuses it.
    #[serde(default)]
    patch_digest: Option<String>,
}

/// The caller, allowed to decide, or why not.
fn decider(caller: Result<Caller, Refused>, headers: &HeaderMap) -> Result<Caller, Refused> {
    let caller = caller?;
    let csrf = headers.get("x-csrf-token").and_then(|v| v.to_str().ok());
    caller.may_decide().and_then(|()| caller.check_csrf(csrf))?;
    Ok(caller)
}

/// A body that is not a decision, as the API says it.
fn not_a_decision(rejection: &JsonRejection, shape: &str) -> Response {
    let status = if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        StatusCode::PAYLOAD_TOO_LARGE
    } else {
        StatusCode::BAD_REQUEST
    };
    let body = serde_json::json!({
        "error": rejection.body_text(),
        "hint": format!("send {shape} as application/json, under 64 KiB"),
        "exit_code": crate::exit::USAGE,
    });
    (status, Json(body)).into_response()
}

/// `POST /api/runs/{run}/decisions/delivery`: records the delivery
/// decision, as `orcho delivery decide` does.
pub(super) async fn decide_delivery(
    State(web): State<Web>,
    caller: Result<Caller, Refused>,
    headers: HeaderMap,
    Path(run): Path<String>,
    decision: Result<Json<DeliveryDecision>, JsonRejection>,
) -> Response {
    let caller = match decider(caller, &headers) {
        Ok(caller) => caller,
        Err(refused) => return refused.json(),
    };
    let Json(d) = match decision {
        Ok(decision) => decision,
        Err(rejection) => {
            return not_a_decision(
                &rejection,
                "{\"action\": ACTION, \"message\", \"note\", \"patch_digest\"}",
            );
        }
    };
    let place = place_of(&web, &caller);
    answer(super::pages::record_delivery(
        &place,
        &run,
        &d.action,
        d.message,
        d.note,
        d.patch_digest.as_deref(),
    ))
}

/// `POST /api/runs/{run}/decisions/handoff`: records a decision on the
/// run's open handoff, as `orcho handoff decide` does.
pub(super) async fn decide_handoff(
    State(web): State<Web>,
    caller: Result<Caller, Refused>,
    headers: HeaderMap,
    Path(run): Path<String>,
    decision: Result<Json<HandoffDecision>, JsonRejection>,
) -> Response {
    let caller = match decider(caller, &headers) {
        Ok(caller) => caller,
        Err(refused) => return refused.json(),
    };
    let Json(decision) = match decision {
        Ok(decision) => decision,
        Err(rejection) => {
            return not_a_decision(&rejection, "{\"action\": ACTION, \"text\": FEEDBACK}");
        }
    };
    let place = place_of(&web, &caller);
    answer(super::pages::record_handoff(
        &place,
        &run,
        &decision.action,
        decision.text.as_deref(),
    ))
}
