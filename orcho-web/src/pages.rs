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
use orcho_host::{error::CliError, output::Report, place::Place};

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
.cards{list-style:none;padding:0;margin:0;display:grid;gap:.8em}
.card{border:1px solid #bbb;border-radius:.5em;padding:.7em .9em}
.card h2{font-size:1.05em;margin:0 0 .2em}
.card p{margin:.2em 0}.meta{color:#444;font-size:.9em}
.actions{display:flex;flex-wrap:wrap;gap:.5em;margin-top:.6em}
.actions form{margin:0}.actions button{padding:.5em .9em}
.id{font-family:ui-monospace,monospace}
.add{color:#0a5c2b}.del{color:#a1150f}.hunk{color:#5a3d99}.file{font-weight:bold}
pre.diff .add{background:#e6ffec}pre.diff .del{background:#ffebe9}pre.diff span{display:inline}
.filters{display:flex;flex-wrap:wrap;gap:.2em 1em;align-items:end;margin:0 0 .8em}
.filters label{margin:0}.filters input,.filters select{font:inherit;max-width:12em}
.pager{margin:1em 0;display:flex;gap:1em;align-items:center}
@media (min-width:600px){.cards{grid-template-columns:repeat(auto-fill,minmax(26em,1fr))}}
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

/// The inbox's digest now, when it can be read.
fn seen_now(place: &Place) -> Option<String> {
    place
        .team_store()
        .team_inbox(&orcho::InboxFilter::all())
        .ok()
        .map(|team| team.revision)
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

/// `GET /`: the pending points across runs (and machines), newest first,
/// a page at a time, each as a card: what waits in words, the task, since
/// when, where, and the point's actions (those that take no note are a
/// button each). The query filters by kind, repository and age.
pub(super) async fn inbox(
    State(web): State<Web>,
    caller: Caller,
    Query(query): Query<api::InboxQuery>,
) -> Response {
    let place = api::place_of(&web, &caller);
    let store = place.team_store();
    let (filter, shown) = match query.read(Some(api::PER_PAGE)) {
        Ok((filter, Some(page))) => (filter, page),
        Ok((filter, None)) => (filter, orcho::InboxPage::new(1, api::PER_PAGE)),
        Err(reason) => {
            let body = html! {
                h1 { "That filter does not read" }
                p.error role="alert" { (reason) }
                p { (api::INBOX_QUERY) }
                p { a href="/" { "The whole inbox" } }
            };
            return (
                StatusCode::BAD_REQUEST,
                layout("inbox", &caller, &body, None),
            )
                .into_response();
        }
    };
    let team = match store.team_inbox_page(&filter, shown) {
        Ok(found) => found,
        Err(e) => return failed(&caller, &e.into()),
    };
    let orcho::TeamInbox {
        inbox,
        stopped,
        origins,
        total,
        ..
    } = &team;
    let pending: Vec<_> = inbox.pending().collect();
    let now = orcho::core::Timestamp::now();
    let where_of = |run: &RunId| {
        origins.get(run).map_or_else(
            || "here".to_owned(),
            |o| {
                o.repository.clone().map_or_else(
                    || format!("{} on {}", o.checkout, o.machine),
                    |r| format!("{r} on {}", o.machine),
                )
            },
        )
    };
    let pages = shown.count(*total);
    let filtered = filter != orcho::InboxFilter::all();
    let body = html! {
        h1 { "Waiting for a decision" }
        (filter_form(&query))
        @if pending.is_empty() && stopped.is_empty() {
            @if *total > 0 {
                p { "Page " (shown.number) " is past the last (" (pages) ")." }
            } @else if filtered {
                p { "Nothing waiting matches the filter." }
            } @else {
                p { "No run is waiting for a decision." }
            }
        } @else {
            p.meta { (total) " waiting" @if filtered { " (filtered)" } @if pages > 1 { ", page " (shown.number) " of " (pages) } }
            ul.cards {
                @for p in &pending {
                    @let run = p.run();
                    @let view = team.views.get(run);
                    @let task = view.and_then(|v| v.task.clone());
                    @let point = match view { Some(view) if p.decision().is_none() => store.open_point_of(view).ok().flatten(), _ => None };
                    li.card {
                        h2 {
                            a href={ "/runs/" (run) } title=(run) { "Run " span.id { (short_id(run)) } }
                            ": " (point.as_ref().map_or_else(|| waits_for(p), |v| v.headline.clone()))
                        }
                        @if let Some(task) = &task { p { (first_line(task)) } }
                        p.meta { "waiting " (since(p.opened_at(), now)) " · " (where_of(run)) }
                        @if let Some(decided) = p.decision() {
                            p.note { "Decided " (decided) "; it goes on when its host resumes it." }
                        } @else if let Some(view) = &point {
                            (card_actions(&caller, view))
                        }
                    }
                }
                @for view in stopped {
                    li.card {
                        h2 {
                            a href={ "/runs/" (view.run) } title=(view.run) { "Run " span.id { (short_id(&view.run)) } }
                            ": stopped"
                        }
                        @if let Some(task) = &view.task { p { (first_line(task)) } }
                        p.meta { "stopped while it ran · " (where_of(&view.run)) }
                        p { "Nothing to decide: it goes on when it is resumed where it runs." }
                    }
                }
            }
        }
        @if pages > 1 {
            nav.pager aria-label="pages" {
                @if shown.number > 1 { a rel="prev" href=(query.with_page(shown.number.min(pages + 1) - 1)) { "Newer" } }
                " Page " (shown.number.min(pages)) " of " (pages) " "
                @if shown.number < pages { a rel="next" href=(query.with_page(shown.number + 1)) { "Older" } }
            }
        }
    };
    page("inbox", &caller, &body, Some(&team.revision))
}

/// The inbox's filters as a form that asks for the page again.
fn filter_form(query: &api::InboxQuery) -> Markup {
    let kind = query.kind.trim();
    let age = query.older_than.trim();
    html! {
        form.filters method="get" action="/" {
            label { "Kind "
                select name="kind" {
                    option value="" selected[kind.is_empty()] { "any" }
                    @for k in orcho::point::PointKind::ALL {
                        option value=(k.name()) selected[kind == k.name()] { (k.as_str()) }
                    }
                }
            }
            label { "Repository " input type="search" name="repo" value=(query.repo) placeholder="any"; }
            label { "Waiting "
                select name="older_than" {
                    option value="" selected[age.is_empty()] { "any time" }
                    @for (value, words) in [("1h", "over an hour"), ("1d", "over a day"), ("7d", "over a week")] {
                        option value=(value) selected[age == value] { (words) }
                    }
                    @if !age.is_empty() && !["1h", "1d", "7d"].contains(&age) {
                        option value=(age) selected { "over " (age) }
                    }
                }
            }
            button type="submit" { "Filter" }
        }
    }
}

/// A run's id as people tell runs apart: the random part's first eight
/// characters (the full id is the link's title).
fn short_id(run: &RunId) -> &str {
    let id = run.as_str();
    id.rsplit_once('-')
        .and_then(|(_, random)| random.get(..8))
        .unwrap_or(id)
}

/// What a pending point waits for, in words, when its view cannot be read.
fn waits_for(p: &orcho::handoff::inbox::PendingDecision) -> String {
    let (phase, trigger) = (p.phase(), p.trigger());
    if phase == trigger {
        trigger
    } else {
        format!("{phase}: {trigger}")
    }
}

/// How long ago `at` was, in words.
fn since(at: orcho::core::Timestamp, now: orcho::core::Timestamp) -> String {
    let secs = (now.unix_millis() - at.unix_millis()).max(0) / 1000;
    match secs {
        0..=59 => "for less than a minute".to_owned(),
        60..=3599 => format!("for {} min", secs / 60),
        3600..=86_399 => format!("for {} h", secs / 3600),
        _ => format!("for {} days", secs / 86_400),
    }
}

/// The point's actions on its card: one button each for an action that
/// needs no note, pinned to the point as shown; the others on its page.
fn card_actions(caller: &Caller, view: &orcho::point::PointView) -> Markup {
    let run = &view.run;
    let with_note: Vec<&str> = view
        .actions
        .iter()
        .filter(|a| a.note.required())
        .map(|a| a.name.as_str())
        .collect();
    html! {
        div.actions {
            @if caller.may_decide().is_ok() {
                @for action in view.actions.iter().filter(|a| !a.note.required()) {
                    form method="post" action={ "/runs/" (run) "/decisions/point" } {
                        input type="hidden" name="csrf" value=(caller.csrf.as_deref().unwrap_or(""));
                        @if let Some(id) = &view.id { input type="hidden" name="point" value=(id); }
                        @if let Some(pinned) = view.pinned.first() {
                            input type="hidden" name="digest" value=(pinned.digest.to_string());
                        }
                        button type="submit" name="action" value=(action.name) title=(action.does) { (action.name) }
                    }
                }
            }
            @if !with_note.is_empty() || caller.may_decide().is_err() {
                a href={ "/runs/" (run) } { "open it" @if !with_note.is_empty() { " (" (with_note.join(", ")) ")" } }
            }
        }
    }
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
        && orcho_host::host::engine_for(place, &run).is_ok_and(|engine| engine.advisor().is_some());
    let touchpoints = store.touchpoints(&run)?;
    let point = super::points::open_point(&store, caller, &run)?;
    let any = store
        .open_point(&run)?
        .filter(|view| !super::points::has_section(view.kind));
    Ok(html! {
        h1 { "Run " span.id title=(run) { (short_id(&run)) } }
        p.meta { "id " code { (run) } }
        @if let Some(said) = said { p.note role="status" { (said) } }
        dl {
            dt { "Status" } dd { (view.status.as_str()) @if let Some(r) = &view.reason { " — " (r) } }
            @if let Some(origin) = &origin { dt { "Started on" } dd { (origin) } }
            dt { "Plan" } dd { (view.plan) }
        }
        @if let Some(task) = &view.task { h2 { "Task" } pre { (task) } }
        @if let Some(id) = &open {
            @if let Some(h) = handoffs.iter().find(|h| h.id() == id) {
                @let decided = store.handoff_decision(&run, id)?;
                @let headline = store.open_point(&run)?.filter(|v| v.id.as_ref() == Some(id)).map(|v| v.headline);
                section aria-labelledby="decide" {
                    h2 #decide {
                        @if decided.is_some() { "Decided: phase " (h.phase()) }
                        @else { "Decide: " (headline.unwrap_or_else(|| format!("phase {} ({})", h.phase(), h.trigger()))) }
                    }
                    @if let Some(d) = decided {
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
                        // What is delivered first, then what to do with it.
                        @if let Some(patch) = &patch { (diff_view(patch)) }
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
            @if view.status != orcho::core::RunStatus::AwaitingDelivery {
                h2 { "Diff" }
                (diff_view(patch))
            }
        }
        h2 { "Timeline" }
        ol { @for line in trace.lines() { li { (line) } } }
    })
}

/// A patch as a person reads it: each file with the lines it adds and
/// removes, then the patch, its added and removed lines coloured.
fn diff_view(patch: &[u8]) -> Markup {
    let text = String::from_utf8_lossy(patch);
    let mut files: Vec<(String, usize, usize)> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let name = rest.rsplit_once(" b/").map_or(rest, |(_, b)| b).to_owned();
            files.push((name, 0, 0));
        } else if let Some(file) = files.last_mut() {
            if line.starts_with('+') && !line.starts_with("+++") {
                file.1 += 1;
            } else if line.starts_with('-') && !line.starts_with("---") {
                file.2 += 1;
            }
        }
    }
    let (added, removed) = files
        .iter()
        .fold((0, 0), |(a, r), (_, fa, fr)| (a + fa, r + fr));
    html! {
        p { (files.len()) " file(s) changed, "
            span.add { "+" (added) } " " span.del { "−" (removed) } }
        ul.files {
            @for (name, a, r) in &files {
                li { code { (name) } " " span.add { "+" (a) } " " span.del { "−" (r) } }
            }
        }
        pre.diff {
            @for line in text.lines() {
                @if line.starts_with("+++") || line.starts_with("---") || line.starts_with("diff --git") {
                    span.file { (line) } "\n"
                } @else if line.starts_with('+') {
                    span.add { (line) } "\n"
                } @else if line.starts_with('-') {
                    span.del { (line) } "\n"
                } @else if line.starts_with("@@") {
                    span.hunk { (line) } "\n"
                } @else {
                    (line) "\n"
                }
            }
        }
    }
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
    let engine = orcho_host::host::engine_for(place, run)?;
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
    let patch = patch
        .map(orcho_host::decided::parse_patch_digest)
        .transpose()?;
    orcho_host::decided::record(
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
    orcho_host::decided::record(place, &run, decision).map_err(|e| {
        if matches!(e.kind(), orcho_host::error::CliErrorKind::Usage(_)) && action.requires_text() {
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
