//! The JSON API under `/api/`: the documents `orcho … --json` prints, for
//! chat bots and scripts.

use axum::{
    Json,
    extract::{Path, State, rejection::JsonRejection},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
};
use orcho::{
    decide::{Decision, PlanVerdict},
    handoff::supervision::DeviationAction,
};
use serde::Deserialize;

use super::{
    Web,
    session::{Caller, Refused},
};
use orcho_host::{
    error::{CliError, CliErrorKind},
    output::Report,
};

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

/// The HTTP status of an error, by its kind: an unknown run is not found,
/// a decision recorded first or a point that moved on is a conflict, a
/// malformed request is bad, and anything else the request could not do.
pub(super) fn status_of(e: &CliError) -> StatusCode {
    match e.kind() {
        CliErrorKind::Engine(e) if e.is_unknown_run() => StatusCode::NOT_FOUND,
        CliErrorKind::Engine(e) if e.is_conflict() => StatusCode::CONFLICT,
        CliErrorKind::Moved(_) => StatusCode::CONFLICT,
        CliErrorKind::Usage(_) => StatusCode::BAD_REQUEST,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    }
}

/// The place a caller decides in: decisions are recorded as the caller's.
pub(super) fn place_of(web: &Web, caller: &Caller) -> orcho_host::place::Place {
    let mut place = (*web.place).clone();
    place.voice = orcho_host::place::Voice::Quiet;
    place.actor = orcho_host::place::Actor::named(format!("{} (web)", caller.name));
    place
}

/// What a request to the inbox names in its query string: the filters
/// (`kind`, `repo`, `older_than` and `newer_than` as `30m`, `2h`, `1d`) and
/// the page (`page` from 1, `per_page`). An empty value is no filter.
#[derive(Debug, Default, Clone, serde::Deserialize)]
pub(super) struct InboxQuery {
    #[serde(default)]
    pub(super) kind: String,
    #[serde(default)]
    pub(super) repo: String,
    #[serde(default)]
    pub(super) older_than: String,
    #[serde(default)]
    pub(super) newer_than: String,
    #[serde(default)]
    pub(super) page: String,
    #[serde(default)]
    pub(super) per_page: String,
}

impl InboxQuery {
    /// The filter, and the page: the one the query names, else pages of
    /// `size` when given, else everything. A value that does not read is
    /// said, naming its parameter.
    pub(super) fn read(
        &self,
        size: Option<usize>,
    ) -> Result<(orcho::InboxFilter, Option<orcho::InboxPage>), String> {
        fn given(s: &str) -> Option<&str> {
            Some(s.trim()).filter(|s| !s.is_empty())
        }
        let age = |name: &str, s: &str| {
            given(s)
                .map(|s| {
                    s.parse::<orcho::receipts::HumanDuration>()
                        .map(orcho::receipts::HumanDuration::get)
                        .map_err(|e| format!("{name}: {e}"))
                })
                .transpose()
        };
        let number = |name: &str, s: &str| {
            given(s)
                .map(|s| match s.parse::<usize>() {
                    Ok(n) if n > 0 => Ok(n),
                    _ => Err(format!("{name}: `{s}` is no number from 1")),
                })
                .transpose()
        };
        let mut filter = orcho::InboxFilter::all();
        if let Some(kind) = given(&self.kind) {
            filter.kind = Some(
                kind.parse()
                    .map_err(|e: orcho::point::UnknownKind| format!("kind: {e}"))?,
            );
        }
        filter.repo = given(&self.repo).map(str::to_owned);
        filter.older_than = age("older_than", &self.older_than)?;
        filter.newer_than = age("newer_than", &self.newer_than)?;
        let (page, per_page) = (
            number("page", &self.page)?,
            number("per_page", &self.per_page)?,
        );
        let page = match (page, per_page.or(size)) {
            (None, None) => None,
            (page, size) => Some(orcho::InboxPage::new(
                page.unwrap_or(1),
                size.unwrap_or(PER_PAGE).min(500),
            )),
        };
        Ok((filter, page))
    }

    /// This query's string with page `n`, for a link.
    pub(super) fn with_page(&self, n: usize) -> String {
        let mut parts = Vec::new();
        for (name, value) in [
            ("kind", &self.kind),
            ("repo", &self.repo),
            ("older_than", &self.older_than),
            ("newer_than", &self.newer_than),
            ("per_page", &self.per_page),
        ] {
            if !value.trim().is_empty() {
                parts.push(format!("{name}={}", encode(value.trim())));
            }
        }
        parts.push(format!("page={n}"));
        format!("?{}", parts.join("&"))
    }
}

/// What the inbox's query takes, said when a value does not read.
pub(super) const INBOX_QUERY: &str = "the inbox takes kind (intake, planner_questions, plan_approval, handoff, deviation, delivery), repo, older_than and newer_than (30m, 2h, 1d), page and per_page (numbers from 1)";

/// How many entries a page of the web inbox holds.
pub(super) const PER_PAGE: usize = 25;

/// `s` as a query string's value: every byte but the unreserved ones
/// percent-encoded.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = std::fmt::Write::write_fmt(&mut out, format_args!("%{b:02X}"));
        }
    }
    out
}

/// `GET /api/inbox`: what `orcho inbox --json` prints; with `page` (and
/// `per_page`) in the query, one page of it, and filtered by `kind`,
/// `repo`, `older_than`, `newer_than`.
pub(super) async fn inbox(
    State(web): State<Web>,
    caller: Result<Caller, Refused>,
    axum::extract::Query(query): axum::extract::Query<InboxQuery>,
) -> Response {
    let caller = match caller {
        Ok(caller) => caller,
        Err(refused) => return refused.json(),
    };
    let (filter, page) = match query.read(None) {
        Ok(read) => read,
        Err(reason) => {
            return (
                StatusCode::BAD_REQUEST,
                Json(serde_json::json!({
                    "error": reason,
                    "hint": INBOX_QUERY,
                    "exit_code": 2,
                })),
            )
                .into_response();
        }
    };
    let place = place_of(&web, &caller);
    let store = place.team_store();
    answer(
        match page {
            Some(page) => store.team_inbox_page(&filter, page),
            None => store.team_inbox(&filter),
        }
        .map_err(CliError::from)
        .map(|team| {
            Report::new(&orcho_host::output::doc::InboxDoc::of(
                &team,
                orcho_host::output::doc::Naming::Cli,
            ))
        }),
    )
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
        // The point it waits at, with its questions, so that a client can
        // answer it.
        let open = match view.touchpoint() {
            Some((id, _)) => store
                .touchpoints(&found)?
                .into_iter()
                .find(|t| &t.id == id)
                .map(|t| {
                    serde_json::json!({
                        "id": t.id,
                        "opened_at": t.opened_at.to_string(),
                        "touchpoint": t.touchpoint,
                        "questions": t.touchpoint.questions().ok().map(|b| b.questions().to_vec()),
                    })
                }),
            None => None,
        };
        Ok(serde_json::json!({ "run": view, "evidence": evidence, "touchpoint": open }))
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
    /// The advice the decision follows (its id), recorded as its
    /// provenance.
    #[serde(default)]
    advice: Option<String>,
    /// The handoff the decision was taken on (its id): a handoff decided
    /// differently before is a conflict (409), never a decision on the one
    /// open now.
    #[serde(default)]
    handoff: Option<String>,
}

/// A decision on any point by an action's name, as `orcho decide` takes
/// it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PointDecision {
    action: String,
    #[serde(default)]
    note: Option<String>,
    /// The point's id the decision was taken on: another point open now
    /// is a conflict (409).
    #[serde(default)]
    point: Option<String>,
    /// The digest the decision was taken on (the view's `pinned`): changed
    /// since, a conflict (409).
    #[serde(default)]
    digest: Option<String>,
}

/// `GET /api/runs/{run}/point`: the point the run waits at, as the
/// library's view says it (`null` when none is open).
pub(super) async fn point(
    State(web): State<Web>,
    caller: Result<Caller, Refused>,
    Path(run): Path<String>,
) -> Response {
    let caller = match caller {
        Ok(caller) => caller,
        Err(refused) => return refused.json(),
    };
    let store = place_of(&web, &caller).store();
    let found = match store.find_run(&run) {
        Ok(found) => found,
        Err(e) => return error(&e.into()),
    };
    match store.open_point(&found) {
        Ok(view) => Json(serde_json::json!({ "run": found, "point": view })).into_response(),
        Err(e) => error(&e.into()),
    }
}

/// `POST /api/runs/{run}/decisions`: any point's action by its name, as
/// `orcho decide RUN ACTION` records it.
pub(super) async fn decide_point(
    State(web): State<Web>,
    caller: Result<Caller, Refused>,
    headers: HeaderMap,
    Path(run): Path<String>,
    decision: Result<Json<PointDecision>, JsonRejection>,
) -> Response {
    decide_with(
        &web,
        caller,
        &headers,
        decision,
        "{\"action\": ACTION, \"note\": NOTE, \"point\": POINT_ID, \"digest\": DIGEST}",
        |place, d| {
            let found = place.store().find_run(&run)?;
            orcho_host::decided::by_name(
                place,
                &found,
                &d.action,
                d.note,
                d.point.as_deref(),
                d.digest.as_deref(),
            )
        },
    )
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
        "exit_code": orcho_host::exit::USAGE,
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
    decide_with(
        &web,
        caller,
        &headers,
        decision,
        "{\"action\": ACTION, \"message\", \"note\", \"patch_digest\"}",
        |place, d| {
            super::pages::record_delivery(
                place,
                &run,
                &d.action,
                d.message,
                d.note,
                d.patch_digest.as_deref(),
            )
        },
    )
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
    decide_with(
        &web,
        caller,
        &headers,
        decision,
        "{\"action\": ACTION, \"text\": FEEDBACK, \"advice\": ADVICE_ID, \"handoff\": HANDOFF_ID}",
        |place, d| {
            super::pages::record_handoff(
                place,
                &run,
                &d.action,
                d.text.as_deref(),
                d.advice.as_deref(),
                d.handoff.as_deref(),
            )
        },
    )
}

/// A plan approval, as the API takes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PlanDecision {
    /// `approve`, `request_changes` or `reject`.
    action: String,
    #[serde(default)]
    note: Option<String>,
    /// The digest of the plan the decision was taken on: a plan that has
    /// changed since refuses it.
    #[serde(default)]
    plan_digest: Option<String>,
    /// The touchpoint the decision was taken on (its id): another one open
    /// now refuses it.
    #[serde(default)]
    touchpoint: Option<String>,
}

/// Answers to the planner's questions, as `orcho answer` takes them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct QuestionsDecision {
    answers: Vec<String>,
    /// The touchpoint the answers are about (its id): another one open now
    /// refuses them.
    #[serde(default)]
    touchpoint: Option<String>,
}

/// What to do about a failed step, as `orcho deviation` takes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DeviationDecision {
    /// `retry`, `replan` or `stop`.
    action: String,
    #[serde(default)]
    note: Option<String>,
    /// The touchpoint the decision was taken on (its id): another one open
    /// now refuses it.
    #[serde(default)]
    touchpoint: Option<String>,
}

/// The intake decision, as `orcho intake RUN ACTION` takes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct IntakeDecision {
    action: String,
    #[serde(default)]
    message: Option<String>,
}

/// A decision through the API: the caller may decide, the body is the
/// decision `shape` describes, and `record` records it.
fn decide_with<T>(
    web: &Web,
    caller: Result<Caller, Refused>,
    headers: &HeaderMap,
    body: Result<Json<T>, JsonRejection>,
    shape: &str,
    record: impl FnOnce(&orcho_host::place::Place, T) -> Result<Report, CliError>,
) -> Response {
    let caller = match decider(caller, headers) {
        Ok(caller) => caller,
        Err(refused) => return refused.json(),
    };
    let Json(body) = match body {
        Ok(body) => body,
        Err(rejection) => return not_a_decision(&rejection, shape),
    };
    answer(record(&place_of(web, &caller), body))
}

/// Checks that the point the decision names (`touchpoint`, `digest`) is the
/// one `run` waits at: another one is a conflict (409), and nothing is
/// recorded. Without either, nothing is checked; without an open point,
/// the decision itself says where the run stands.
fn seen(
    place: &orcho_host::place::Place,
    run: &orcho::core::RunId,
    touchpoint: Option<&str>,
    digest: Option<&str>,
) -> Result<(), CliError> {
    if touchpoint.is_none() && digest.is_none() {
        return Ok(());
    }
    let Some(view) = place.store().open_point(run)? else {
        return Ok(());
    };
    view.check_seen(touchpoint, digest).map_err(|e| match e {
        orcho::decide::DecideError::NothingPinned { .. } => CliError::usage(e.to_string()),
        e => CliError::moved(e.to_string()).with_hint(format!(
            "read the point again (`GET /api/runs/{run}/point`) and decide on what it shows"
        )),
    })
}

fn given(text: Option<String>) -> Option<String> {
    text.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty())
}

/// Records a plan decision as `orcho plan` does.
pub(super) fn record_plan(
    place: &orcho_host::place::Place,
    run: &str,
    d: PlanDecision,
) -> Result<Report, CliError> {
    let note = given(d.note);
    let found = place.store().find_run(run)?;
    seen(
        place,
        &found,
        d.touchpoint.as_deref(),
        d.plan_digest.as_deref(),
    )?;
    let verdict = match d.action.trim() {
        "approve" => PlanVerdict::Approve,
        "request_changes" => {
            if note.is_none() {
                return Err(
                    CliError::usage("`request_changes` needs its note: what to change")
                        .with_hint("send {\"action\": \"request_changes\", \"note\": \"…\"}"),
                );
            }
            PlanVerdict::RequestChanges
        }
        "reject" => PlanVerdict::Reject,
        other => {
            return Err(CliError::usage(format!(
                "`{other}` is not a plan decision: approve, request_changes or reject"
            )));
        }
    };
    orcho_host::decided::record(
        place,
        &found,
        Decision::Plan {
            verdict,
            feedback: note,
        },
    )
}

/// `POST /api/runs/{run}/decisions/plan`: approves the plan, sends it
/// back, or rejects it, as `orcho plan` does.
pub(super) async fn decide_plan(
    State(web): State<Web>,
    caller: Result<Caller, Refused>,
    headers: HeaderMap,
    Path(run): Path<String>,
    decision: Result<Json<PlanDecision>, JsonRejection>,
) -> Response {
    decide_with(
        &web,
        caller,
        &headers,
        decision,
        "{\"action\": \"approve\"|\"request_changes\"|\"reject\", \"note\", \"plan_digest\", \"touchpoint\"}",
        |place, d| record_plan(place, &run, d),
    )
}

/// `POST /api/runs/{run}/decisions/questions`: answers the planner's
/// questions, as `orcho answer` does.
pub(super) async fn decide_questions(
    State(web): State<Web>,
    caller: Result<Caller, Refused>,
    headers: HeaderMap,
    Path(run): Path<String>,
    decision: Result<Json<QuestionsDecision>, JsonRejection>,
) -> Response {
    decide_with(
        &web,
        caller,
        &headers,
        decision,
        "{\"answers\": [ANSWER, …], \"touchpoint\": ID} (one answer per question, in order)",
        |place, d| {
            let found = place.store().find_run(&run)?;
            seen(place, &found, d.touchpoint.as_deref(), None)?;
            orcho_host::decided::record(place, &found, Decision::Questions { answers: d.answers })
        },
    )
}

/// `POST /api/runs/{run}/decisions/deviation`: decides a failed step, as
/// `orcho deviation` does.
pub(super) async fn decide_deviation(
    State(web): State<Web>,
    caller: Result<Caller, Refused>,
    headers: HeaderMap,
    Path(run): Path<String>,
    decision: Result<Json<DeviationDecision>, JsonRejection>,
) -> Response {
    decide_with(
        &web,
        caller,
        &headers,
        decision,
        "{\"action\": \"retry\"|\"replan\"|\"stop\", \"note\", \"touchpoint\"}",
        |place, d| {
            let found = place.store().find_run(&run)?;
            seen(place, &found, d.touchpoint.as_deref(), None)?;
            let action = match d.action.trim().to_ascii_lowercase().as_str() {
                "retry" => DeviationAction::Retry,
                "replan" => DeviationAction::Replan,
                "stop" => DeviationAction::Stop,
                _ => {
                    return Err(CliError::usage(format!(
                        "`{}` is not a deviation decision: retry, replan or stop",
                        d.action
                    )));
                }
            };
            let note = given(d.note);
            orcho_host::decided::record(place, &found, Decision::Deviation { action, note })
        },
    )
}

/// `POST /api/runs/{run}/decisions/intake`: decides the pre-run intake
/// question, as `orcho intake RUN ACTION` does.
pub(super) async fn decide_intake(
    State(web): State<Web>,
    caller: Result<Caller, Refused>,
    headers: HeaderMap,
    Path(run): Path<String>,
    decision: Result<Json<IntakeDecision>, JsonRejection>,
) -> Response {
    decide_with(
        &web,
        caller,
        &headers,
        decision,
        "{\"action\": \"include\"|\"exclude\"|\"commit\"|\"halt\", \"message\"}",
        |place, d| super::points::record_intake(place, &run, &d.action, d.message),
    )
}
