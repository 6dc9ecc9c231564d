//! The pages: server-rendered HTML (maud escapes every value), readable on
//! a phone, usable with the keyboard, with no script but the one that
//! reloads a page when the store changes.

use std::{convert::Infallible, time::Duration};

use axum::{
    Form,
    extract::{Path, Query, State},
    http::{StatusCode, header},
    response::{
        IntoResponse, Redirect, Response,
        sse::{Event, KeepAlive, Sse},
    },
};
use maud::{DOCTYPE, Markup, PreEscaped, html};
use orcho::{core::RunId, handoff::HandoffAction};
use serde::Deserialize;

use super::{LIVE_SLICE, Web, api, session::Caller};
use crate::{error::CliError, output::Report, place::Place};

/// Plain, legible, high-contrast; narrow screens first.
const CSS: &str = "
body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#111;background:#fff}
header{display:flex;gap:1em;align-items:center;flex-wrap:wrap;padding:.6em 1em;background:#102a43;color:#fff}
header a{color:#fff;font-weight:bold}header form{margin-left:auto}
main{padding:1em;max-width:60em;overflow-wrap:anywhere}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.4em;border-bottom:1px solid #ccc;vertical-align:top}
th{white-space:nowrap}
pre{background:#f4f4f4;padding:.6em;overflow-x:auto;white-space:pre-wrap}
.note{padding:.6em;border-left:4px solid #1f6feb;background:#eef4ff}
.error{padding:.6em;border-left:4px solid #b3261e;background:#fdecea}
label{display:block;margin:.3em 0}textarea{width:100%;min-height:5em;font:inherit}
button{font:inherit;padding:.4em 1em}a{color:#0b4f9c}
";

fn layout(title: &str, caller: &Caller, body: &Markup, seen: Option<&str>) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                // What the page was made from: the live stream tells a page
                // that missed a change while it loaded.
                @if let Some(seen) = seen { meta name="orcho-inbox" content=(seen); }
                title { (title) " · orcho" }
                style { (PreEscaped(CSS)) }
                script src="/static/live.js" defer {}
            }
            body {
                header {
                    a href="/" { "orcho inbox" }
                    span { "signed in as " (caller.name) }
                    form method="post" action="/logout" {
                        input type="hidden" name="csrf" value=(caller.csrf.as_deref().unwrap_or(""));
                        button type="submit" { "Log out" }
                    }
                }
                main { (body) }
            }
        }
    }
}

fn page(title: &str, caller: &Caller, body: &Markup, seen: Option<&str>) -> Response {
    layout(title, caller, body, seen).into_response()
}

/// The place a form's caller decides in, once the form's CSRF token and
/// the caller's right to decide are checked; the refusal otherwise.
pub(super) fn deciding_place(
    web: &Web,
    caller: &Caller,
    csrf: Option<&str>,
) -> Result<Place, super::session::Refused> {
    caller.check_csrf(csrf).and_then(|()| caller.may_decide())?;
    Ok(api::place_of(web, caller))
}

/// A digest of the inbox as the store's team inbox found it: what the live stream
/// compares, and what a page says it was made from.
fn inbox_digest(inbox: &orcho::handoff::inbox::Inbox, stopped: &[orcho::RunView]) -> String {
    blake3::hash(format!("{inbox:?}{stopped:?}").as_bytes())
        .to_hex()
        .to_string()
}

/// The inbox's digest now, when it can be read.
fn seen_now(place: &Place) -> Option<String> {
    place
        .team_store()
        .team_inbox(&orcho::InboxFilter::all())
        .ok()
        .map(|team| inbox_digest(&team.inbox, &team.stopped))
}

pub(super) fn failed(caller: &Caller, e: &CliError) -> Response {
    let body = html! {
        h1 { "Something is in the way" }
        p.error role="alert" { (e.message()) }
        @if let Some(hint) = e.hint() { p { (hint) } }
        p { a href="/" { "Back to the inbox" } }
    };
    (api::status_of(e), layout("error", caller, &body, None)).into_response()
}

/// `GET /`: every pending point across runs (and machines), newest first.
pub(super) async fn inbox(State(web): State<Web>, caller: Caller) -> Response {
    let place = api::place_of(&web, &caller);
    let store = place.team_store();
    let orcho::TeamInbox {
        inbox,
        stopped,
        origins,
        ..
    } = match store.team_inbox(&orcho::InboxFilter::all()) {
        Ok(found) => found,
        Err(e) => return failed(&caller, &e.into()),
    };
    let pending: Vec<_> = inbox.pending().collect();
    let body = html! {
        h1 { "Waiting for a decision" }
        @if pending.is_empty() && stopped.is_empty() {
            p { "No run is waiting for a decision." }
        } @else {
            div.scroll { table {
                thead { tr { th { "Run" } th { "Point" } th { "Task" } th { "Where" } th { "Since" } } }
                tbody {
                    @for p in &pending {
                        @let task = store.status(p.run()).ok().and_then(|v| v.task);
                        tr {
                            td { a href={ "/runs/" (p.run()) } { (p.run()) } }
                            td {
                                (p.phase()) ": " (p.trigger())
                                @if let Some(decided) = p.decision() {
                                    br; em { "decided " (decided) ", waiting for its host to go on" }
                                }
                            }
                            td { (task.as_deref().map(first_line).unwrap_or("")) }
                            td { (origins.get(p.run()).map(ToString::to_string).unwrap_or_else(|| "here".to_owned())) }
                            td { (p.opened_at()) }
                        }
                    }
                    @for view in &stopped {
                        tr {
                            td { a href={ "/runs/" (view.run) } { (view.run) } }
                            td { "stopped: resume it where it runs" }
                            td { (view.task.as_deref().map(first_line).unwrap_or("")) }
                            td { (origins.get(&view.run).map(ToString::to_string).unwrap_or_else(|| "here".to_owned())) }
                            td {}
                        }
                    }
                }
            } }
        }
    };
    page(
        "inbox",
        &caller,
        &body,
        Some(&inbox_digest(&inbox, &stopped)),
    )
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

/// What the run's page says after a decision: only an action it knows,
/// so that nobody can put words on the page with a link.
#[derive(Debug, Deserialize)]
pub(super) struct Said {
    #[serde(default)]
    decided: Option<String>,
}

/// `GET /runs/{run}`: the run's task, where it stands, its timeline,
/// phases with gates and findings, decisions, the diff, and the form for
/// the point it waits at.
pub(super) async fn run(
    State(web): State<Web>,
    caller: Caller,
    Path(run): Path<String>,
    Query(said): Query<Said>,
) -> Response {
    let place = api::place_of(&web, &caller);
    let said = said
        .decided
        .and_then(|a| a.parse::<HandoffAction>().ok())
        .map(|action| format!("Recorded: {action}. The run goes on when its host resumes it."));
    match run_page(&place, &caller, &run, said.as_deref()) {
        Ok(body) => page(&run, &caller, &body, seen_now(&place).as_deref()),
        Err(e) => failed(&caller, &e),
    }
}

fn run_page(
    place: &Place,
    caller: &Caller,
    run: &str,
    said: Option<&str>,
) -> Result<Markup, CliError> {
    let store = place.store();
    let run = store.find_run(run)?;
    let view = store.status(&run)?;
    let evidence = store.evidence(&run, None)?;
    let trace = store.trace(&run)?;
    let handoffs = store.handoffs(&run)?;
    let open = orcho::decide::decision_handoff(&store, &run)?;
    let patch = store.delivery_patch(&run).ok().filter(|p| !p.is_empty());
    let origin = store.origin(&run)?;
    let advice = store.advice(&run)?;
    let can_ask = open.is_some()
        && crate::host::engine_for(place, &run).is_ok_and(|engine| engine.advisor().is_some());
    let touchpoints = store.touchpoints(&run)?;
    let point = super::points::open_point(&store, caller, &run)?;
    let any = store
        .open_point(&run)?
        .filter(|view| !super::points::has_section(view.kind));
    Ok(html! {
        h1 { "Run " (run) }
        @if let Some(said) = said { p.note role="status" { (said) } }
        dl {
            dt { "Status" } dd { (view.status.as_str()) @if let Some(r) = &view.reason { " — " (r) } }
            @if let Some(origin) = &origin { dt { "Started on" } dd { (origin) } }
            dt { "Plan" } dd { (view.plan) }
        }
        @if let Some(task) = &view.task { h2 { "Task" } pre { (task) } }
        @if let Some(id) = &open {
            @if let Some(h) = handoffs.iter().find(|h| h.id() == id) {
                section aria-labelledby="decide" {
                    h2 #decide { "Decide: phase " (h.phase()) " (" (h.trigger()) ")" }
                    @if let Some(d) = store.handoff_decision(&run, id)? {
                        p.note { "Decided " (d.decision().payload().action())
                            " by " (d.decision().who().unwrap_or(d.decision().decided_by().as_str()))
                            " — " a href={ "/runs/" (run) } { "reload" } " to follow the run." }
                    } @else {
                        (findings(h.findings()))
                        (advice_box(caller, &run, id, &advice, can_ask))
                        @if let Some(point) = store.open_point(&run)? {
                            (handoff_form(caller, &point))
                        }
                    }
                }
            }
        }
        (point)
        @if let Some(any) = &any { (super::points::any_point(caller, any)) }
        @if view.status == orcho::core::RunStatus::AwaitingDelivery {
            @if let Ok(gate) = store.delivery_gate(&run) {
                section aria-labelledby="deliver" {
                    h2 #deliver { "Decide the delivery (release " (gate.verdict().as_str()) ")" }
                    @if let Some(d) = store.delivery_decision(&run)? {
                        p.note { "Decided " (d.decision().payload().action())
                            " by " (d.decision().who().unwrap_or(d.decision().decided_by().as_str())) "." }
                    } @else {
                        (delivery_form(caller, &run, &gate))
                    }
                }
            }
        }
        h2 { "Phases" }
        @if evidence.phases.is_empty() { p { "No phase has run yet." } }
        @for p in &evidence.phases {
            h3 { (p.phase) " — attempt " (p.attempt) ": " (p.verdict.as_str()) }
            @if !p.summary.is_empty() { p { (p.summary) } }
            @for g in &p.gates {
                p { "gate " (g.result.gate) ": " (g.result.outcome.as_str())
                    @if !g.result.summary.is_empty() { " — " (g.result.summary) } }
                (findings(&g.result.findings))
                @if !g.result.output_tail.is_empty() && g.result.outcome.as_str() != "passed" {
                    details { summary { "output (the end)" } pre { (g.result.output_tail) } }
                }
            }
        }
        (super::points::history(&touchpoints))
        @if let Some(receipts) = &evidence.receipts {
            h2 { "Receipts" }
            table {
                thead { tr { th { "Command" } th { "Receipt" } th { "Required" } } }
                tbody {
                    @for r in &receipts.required {
                        tr { td { code { (r.command) } } td { (r.status.as_str()) } td { "yes" } }
                    }
                    @for r in &receipts.optional {
                        tr { td { code { (r.command) } } td { (r.status.as_str()) } td { "no" } }
                    }
                }
            }
        }
        @if !evidence.decisions.is_empty() {
            h2 { "Decisions" }
            ul {
                @for d in &evidence.decisions {
                    li { (d.point) ": " (d.action.as_deref().unwrap_or("answered")) " by "
                        (d.by.as_deref().unwrap_or(d.decided_by.as_str())) " at " (d.decided_at) }
                }
            }
        }
        @if let Some(patch) = &patch {
            h2 { "Diff" }
            @let text = String::from_utf8_lossy(patch);
            ul { @for file in text.lines().filter_map(|l| l.strip_prefix("diff --git ")) { li { code { (file) } } } }
            pre { (text) }
        }
        h2 { "Timeline" }
        ol { @for line in trace.lines() { li { (line) } } }
    })
}

fn findings(findings: &[orcho::core::Finding]) -> Markup {
    html! {
        @if !findings.is_empty() {
            ul {
                @for f in findings {
                    li {
                        strong { (f.severity.as_str()) } " " (f.title)
                        @if let Some(file) = &f.file { " (" code { (file) } @if let Some(l) = f.line { ":" (l) } ")" }
                        @if !f.detail.is_empty() { pre { (f.detail) } }
                    }
                }
            }
        }
    }
}

/// The advisor's last advice on the open handoff, beside its form:
/// "Use this advice" records the decision it recommends with the advice as
/// its provenance. Advice recommends; only the button decides.
fn advice_box(
    caller: &Caller,
    run: &RunId,
    handoff: &orcho::core::HandoffId,
    advice: &[orcho::handoff::advisor::AdviceRecord],
    can_ask: bool,
) -> Markup {
    let last = advice.iter().rev().find(|a| a.handoff() == handoff);
    html! {
        @if let Some(record) = last {
            @let a = record.advice();
            aside.note aria-labelledby="advice" {
                h3 #advice { "The advisor recommends " (a.recommended_action) }
                p { (a.rationale) }
                @if !a.risks.is_empty() { p { "Risks:" } ul { @for r in &a.risks { li { (r) } } } }
                @if let Some(feedback) = &a.retry_feedback { p { "Feedback for the retry:" } pre { (feedback) } }
                p { small { "by " (record.advisor()) " at " (record.created_at()) } }
                form method="post" action={ "/runs/" (run) "/decisions/handoff" } {
                    input type="hidden" name="csrf" value=(caller.csrf.as_deref().unwrap_or(""));
                    input type="hidden" name="action" value=(a.recommended_action);
                    input type="hidden" name="text" value=(a.retry_feedback.as_deref().unwrap_or(""));
                    input type="hidden" name="advice" value=(record.id());
                    button type="submit" { "Use this advice" }
                }
            }
        } @else if can_ask {
            form method="post" action={ "/runs/" (run) "/advice" } {
                input type="hidden" name="csrf" value=(caller.csrf.as_deref().unwrap_or(""));
                button type="submit" { "Ask the advisor" }
            }
        }
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct AskForm {
    csrf: Option<String>,
}

/// `POST /runs/{run}/advice`: asks the run's advisor about its open
/// handoff, as `orcho handoff advise` does; the advice shows beside the
/// form.
pub(super) async fn ask_advice(
    State(web): State<Web>,
    caller: Caller,
    Path(run): Path<String>,
    Form(form): Form<AskForm>,
) -> Response {
    let place = match deciding_place(&web, &caller, form.csrf.as_deref()) {
        Ok(place) => place,
        Err(refused) => return refused.into_response(),
    };
    let asked = match place.store().find_run(&run) {
        Ok(found) => advise(&place, &found).await,
        Err(e) => Err(e.into()),
    };
    match asked {
        Ok(_) => Redirect::to(&format!("/runs/{run}")).into_response(),
        Err(e) => failed(&caller, &e),
    }
}

/// Asks the run's advisor about the handoff it is paused at.
async fn advise(place: &Place, run: &RunId) -> Result<(), CliError> {
    let engine = crate::host::engine_for(place, run)?;
    let handoff = engine
        .store()
        .status(run)?
        .handoff()
        .cloned()
        .ok_or_else(|| CliError::msg(format!("run `{run}` is not paused at a handoff")))?;
    engine.advise(run, &handoff).await?;
    Ok(())
}

/// The open handoff's form, drawn from the library's view of the point:
/// each action with what it does, and the handoff it was shown for, so
/// that a form sent after the run moved on decides nothing it did not show.
fn handoff_form(caller: &Caller, point: &orcho::point::PointView) -> Markup {
    let run = &point.run;
    html! {
        form method="post" action={ "/runs/" (run) "/decisions/handoff" } {
            input type="hidden" name="csrf" value=(caller.csrf.as_deref().unwrap_or(""));
            @if let Some(id) = &point.id {
                input type="hidden" name="handoff" value=(id);
            }
            fieldset {
                legend { "Action" }
                @for action in &point.actions {
                    label {
                        input type="radio" name="action" value=(action.name) required;
                        " " (action.name) " — " (action.does)
                        @if action.note.required() { " (needs the text below)" }
                    }
                }
            }
            label for="text" { "Feedback or the waiver's reason" }
            textarea #text name="text" {}
            button type="submit" { "Record the decision" }
        }
    }
}

fn delivery_form(caller: &Caller, run: &RunId, gate: &orcho::delivery::DeliveryGate) -> Markup {
    html! {
        form method="post" action={ "/runs/" (run) "/decisions/delivery" } {
            input type="hidden" name="csrf" value=(caller.csrf.as_deref().unwrap_or(""));
            input type="hidden" name="patch_digest" value=(gate.patch_digest().to_string());
            fieldset {
                legend { "Action" }
                @for action in gate.available_actions().iter() {
                    label { input type="radio" name="action" value=(action) required; " " (action) }
                }
            }
            label for="message" { "Commit message (optional)" }
            textarea #message name="message" {}
            label for="note" { "Note (optional)" }
            textarea #note name="note" {}
            button type="submit" { "Record the decision" }
        }
    }
}

/// Records the delivery decision as `orcho delivery decide` does.
pub(super) fn record_delivery(
    place: &Place,
    run: &str,
    action: &str,
    message: Option<String>,
    note: Option<String>,
    patch: Option<&str>,
) -> Result<Report, CliError> {
    let run = place.store().find_run(run)?;
    let action = action
        .parse::<orcho::handoff::DeliveryAction>()
        .map_err(|e| CliError::usage(e.to_string()))?;
    let given = |t: Option<String>| t.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty());
    let patch = patch.map(crate::decided::parse_patch_digest).transpose()?;
    crate::decided::record(
        place,
        &run,
        orcho::decide::Decision::Delivery {
            action,
            message: given(message),
            note: given(note),
            patch,
        },
    )
}

#[derive(Debug, Deserialize)]
pub(super) struct DeliveryForm {
    csrf: Option<String>,
    action: String,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    patch_digest: Option<String>,
}

/// `POST /runs/{run}/decisions/delivery`: the form's delivery decision.
pub(super) async fn decide_delivery(
    State(web): State<Web>,
    caller: Caller,
    Path(run): Path<String>,
    Form(form): Form<DeliveryForm>,
) -> Response {
    let place = match deciding_place(&web, &caller, form.csrf.as_deref()) {
        Ok(place) => place,
        Err(refused) => return refused.into_response(),
    };
    match record_delivery(
        &place,
        &run,
        &form.action,
        form.message,
        form.note,
        form.patch_digest.as_deref(),
    ) {
        Ok(_) => Redirect::to(&format!("/runs/{run}")).into_response(),
        Err(e) => failed(&caller, &e),
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct HandoffForm {
    csrf: Option<String>,
    action: String,
    #[serde(default)]
    text: Option<String>,
    /// Set by "Use this advice": the advice the decision follows.
    #[serde(default)]
    advice: Option<String>,
    /// The handoff the form was shown for.
    #[serde(default)]
    handoff: Option<String>,
}

/// Records a handoff decision as `orcho handoff decide` does, on
/// `handoff` when the decision names the one it was taken on: a handoff
/// decided differently before is a conflict, never a decision on the one
/// open now.
pub(super) fn record_handoff(
    place: &Place,
    run: &str,
    action: &str,
    text: Option<&str>,
    advice: Option<&str>,
    handoff: Option<&str>,
) -> Result<Report, CliError> {
    let run = place.store().find_run(run)?;
    let handoff = handoff
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .map(|h| {
            h.parse::<orcho::core::HandoffId>()
                .map_err(|e| CliError::usage(format!("`{h}` is not a handoff id: {e}")))
        })
        .transpose()?;
    let action = action
        .parse::<HandoffAction>()
        .map_err(|e| CliError::usage(e.to_string()))?;
    let text = text.map(str::trim).filter(|t| !t.is_empty());
    let advice = advice
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(|a| {
            a.parse::<orcho::handoff::advisor::AdviceId>()
                .map_err(|e| CliError::usage(format!("`{a}` is not an advice id: {e}")))
        })
        .transpose()?;
    let decision = orcho::decide::Decision::Handoff {
        handoff,
        action,
        text: text.map(str::to_owned),
        advice,
    };
    crate::decided::record(place, &run, decision).map_err(|e| {
        if matches!(e.kind(), crate::error::CliErrorKind::Usage(_)) && action.requires_text() {
            e.with_hint(format!(
                "`{action}` needs its text: the feedback, or the waiver's reason"
            ))
        } else {
            e
        }
    })
}

/// `POST /runs/{run}/decisions/handoff`: the form's decision.
pub(super) async fn decide_handoff(
    State(web): State<Web>,
    caller: Caller,
    Path(run): Path<String>,
    Form(form): Form<HandoffForm>,
) -> Response {
    let place = match deciding_place(&web, &caller, form.csrf.as_deref()) {
        Ok(place) => place,
        Err(refused) => return refused.into_response(),
    };
    match record_handoff(
        &place,
        &run,
        &form.action,
        form.text.as_deref(),
        form.advice.as_deref(),
        form.handoff.as_deref(),
    ) {
        Ok(_) => {
            Redirect::to(&format!("/runs/{run}?decided={}", form.action.trim())).into_response()
        }
        Err(e) => failed(&caller, &e),
    }
}

/// What a page says it was made from, when it asks for the live stream.
#[derive(Debug, Deserialize)]
pub(super) struct Seen {
    #[serde(default)]
    since: Option<String>,
}

/// `GET /events?since=DIGEST`: a `changed` event whenever the inbox
/// changes, and at once when it is not what the page was made from (a
/// change while the page loaded is not missed).
pub(super) async fn events(
    State(web): State<Web>,
    caller: Caller,
    Query(seen): Query<Seen>,
) -> Sse<impl tokio_stream::Stream<Item = Result<Event, Infallible>>> {
    let place = api::place_of(&web, &caller);
    let mut stopping = web.stopping;
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Event, Infallible>>(4);
    tokio::spawn(async move {
        let store = place.team_store();
        let Ok(mut watch) = store.subscribe() else {
            return;
        };
        let mut last = seen_now(&place);
        if let Some(since) = seen.since
            && last.as_deref() != Some(since.as_str())
            && tx
                .send(Ok(Event::default().event("changed").data("inbox")))
                .await
                .is_err()
        {
            return;
        }
        loop {
            tokio::select! {
                _ = watch.changed(LIVE_SLICE) => {}
                // The server stops: the stream ends, and the page with it.
                _ = stopping.wait_for(|stop| *stop) => return,
            }
            let now = seen_now(&place);
            if now != last {
                last = now;
                if tx
                    .send(Ok(Event::default().event("changed").data("inbox")))
                    .await
                    .is_err()
                {
                    return;
                }
            } else if tx.is_closed() {
                return;
            }
        }
    });
    Sse::new(tokio_stream::wrappers::ReceiverStream::new(rx))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// `GET /static/live.js`: reloads the page when the inbox changes (not
/// while a form is being filled in).
pub(super) async fn live_js() -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        "const seen = document.querySelector('meta[name=orcho-inbox]');\n\
         const since = seen ? '?since=' + encodeURIComponent(seen.content) : '';\n\
         const events = new EventSource('/events' + since);\n\
         events.addEventListener('changed', () => {\n\
         \x20 const typing = document.activeElement && document.activeElement.form;\n\
         \x20 const written = [...document.querySelectorAll('textarea')].some(t => t.value);\n\
         \x20 if (!typing && !written) { location.reload(); }\n\
         });\n",
    )
        .into_response()
}
