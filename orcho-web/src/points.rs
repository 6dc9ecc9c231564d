//! The decision points besides handoffs and the delivery gate: plan
//! approval, planner questions and deviations (the run's touchpoints, one
//! form drawn from their own questions), and the pre-run intake. The same
//! rules as on the command line: the store checks the answers against the
//! touchpoint's questions (feedback where it is required, the deviation
//! cap, an option's label), and records one decision per point.

use axum::{
    Form,
    extract::{Path, State},
    response::{IntoResponse, Redirect, Response},
};
use maud::{Markup, html};
use orcho::point::{Note, PointKind, PointView};
use orcho::{
    Store,
    core::{RunId, RunStatus},
    handoff::{
        IntakeAction,
        decision::DecidedBy,
        point::Action,
        supervision::{
            Answer, DeviationOutcome, OpenTouchpoint, Plan, Question, Resolution, Touchpoint,
            TouchpointAction,
        },
    },
};
use serde::Deserialize;

use super::{
    Web,
    pages::{deciding_place, failed},
    session::Caller,
};
use orcho_host::{error::CliError, output::Report, place::Place};

/// The section of the run's page for its open touchpoint or intake
/// question: what it is about and its form, or who decided it.
pub(super) fn open_point(store: &Store, caller: &Caller, run: &RunId) -> Result<Markup, CliError> {
    let view = store.status(run)?;
    if view.status == RunStatus::AwaitingIntake {
        return intake_section(store, caller, run);
    }
    let Some((id, _)) = view.touchpoint() else {
        return Ok(html! {});
    };
    let Some(open) = store.touchpoints(run)?.into_iter().find(|t| &t.id == id) else {
        return Ok(html! {});
    };
    let questions = open
        .touchpoint
        .questions()
        .map_err(|e| CliError::msg(e.to_string()))?;
    Ok(html! {
        section aria-labelledby="point" {
            h2 #point { (heading(&open.touchpoint)) }
            (about(&open.touchpoint))
            @if let Some(resolution) = &open.resolution {
                p.note role="status" { "Decided: " (resolved(resolution))
                    ". The run goes on when its host resumes it." }
            } @else {
                form method="post" action={ "/runs/" (run) "/decisions/touchpoint" } {
                    input type="hidden" name="csrf" value=(caller.csrf.as_deref().unwrap_or(""));
                    input type="hidden" name="touchpoint" value=(open.id);
                    @for (i, q) in questions.questions().iter().enumerate() {
                        (question(i, q))
                    }
                    button type="submit" { "Record the decision" }
                }
            }
        }
    })
}

fn heading(touchpoint: &Touchpoint) -> &'static str {
    match touchpoint {
        Touchpoint::PlannerQuestions { .. } => "The planner asks",
        Touchpoint::PlanApproval { .. } => "Approve the plan",
        Touchpoint::Deviation { .. } => "A step failed",
    }
}

/// What the touchpoint is about, above its questions.
fn about(touchpoint: &Touchpoint) -> Markup {
    match touchpoint {
        Touchpoint::PlannerQuestions { .. } => html! {},
        Touchpoint::PlanApproval { plan } => plan_markup(plan),
        Touchpoint::Deviation {
            deviation, spent, ..
        } => html! {
            p { "Step " (deviation.step) ": " (deviation.description) }
            pre { (deviation.error) }
            p { "Retried " (deviation.retries) " time(s); the plan has spent "
                (spent.retries) " retries and " (spent.replans) " replans." }
        },
    }
}

/// A plan: its goal, steps, the files it expects to touch and its risks.
pub(super) fn plan_markup(plan: &Plan) -> Markup {
    html! {
        p { strong { "Goal: " } (plan.goal) }
        @if !plan.steps.is_empty() {
            ol { @for step in &plan.steps { li { em { (step.role) } ": " (step.description) } } }
        }
        @if !plan.files_affected.is_empty() {
            p { "Files: " @for (i, f) in plan.files_affected.iter().enumerate() {
                @if i > 0 { ", " } code { (f) } } }
        }
        @if !plan.risks.is_empty() {
            p { "Risks:" }
            ul { @for r in &plan.risks { li { (r) } } }
        }
    }
}

/// One question: its options (one, or several where it allows), and a
/// box for one's own words where it takes them.
fn question(i: usize, q: &Question) -> Markup {
    let kind = if q.multiple() { "checkbox" } else { "radio" };
    let required = !q.multiple() && !q.custom() && !q.options().is_empty();
    html! {
        fieldset {
            legend { strong { (q.header()) } " — " (q.question()) }
            @for option in q.options() {
                label {
                    input type=(kind) name={ "q" (i) } value=(option.label) required[required];
                    " " (option.label)
                    @if let Some(d) = &option.description { " — " (d) }
                }
            }
            @if q.custom() {
                label for={ "t" (i) } {
                    @if q.options().is_empty() { "Your answer" } @else { "Or in your own words" }
                }
                textarea id={ "t" (i) } name={ "t" (i) } {}
            }
        }
    }
}

/// A recorded resolution, in a few words.
pub(super) fn resolved(resolution: &Resolution) -> String {
    match resolution {
        Resolution::Answers(answers) => answers
            .answers()
            .iter()
            .map(answer_text)
            .collect::<Vec<_>>()
            .join("; "),
        Resolution::Plan(decision) => match &decision.feedback {
            Some(note) => format!("{} ({note})", decision.action.label()),
            None => decision.action.label().to_owned(),
        },
        Resolution::Deviation(outcome) => match outcome {
            DeviationOutcome::Retry { guidance, .. } => with_note("Retry", guidance.as_deref()),
            DeviationOutcome::Replan { guidance, .. } => with_note("Replan", guidance.as_deref()),
            _ => "Stop".to_owned(),
        },
        _ => "answered".to_owned(),
    }
}

fn with_note(action: &str, note: Option<&str>) -> String {
    note.map_or_else(|| action.to_owned(), |n| format!("{action} ({n})"))
}

fn answer_text(answer: &Answer) -> String {
    let mut parts = answer.selected.clone();
    parts.extend(answer.custom_text().map(str::to_owned));
    if parts.is_empty() {
        "(no answer)".to_owned()
    } else {
        parts.join(", ")
    }
}

/// Every touchpoint of the run and how it was resolved, for its page.
pub(super) fn history(touchpoints: &[OpenTouchpoint]) -> Markup {
    html! {
        @if !touchpoints.is_empty() {
            h2 { "Plan and questions" }
            @for t in touchpoints {
                h3 { (heading(&t.touchpoint)) " (" (t.id) ")" }
                @if let Touchpoint::PlanApproval { plan } = &t.touchpoint { (plan_markup(plan)) }
                @if let Touchpoint::PlannerQuestions { questions } = &t.touchpoint {
                    ul { @for q in questions.batch().questions() { li { (q.header()) ": " (q.question()) } } }
                }
                p { @match &t.resolution {
                    Some(r) => { "Decided: " (resolved(r)) }
                    None => { "Waiting for a decision." }
                } }
            }
        }
    }
}

/// The pre-run intake: the uncommitted changes, and what to do with them.
fn intake_section(store: &Store, caller: &Caller, run: &RunId) -> Result<Markup, CliError> {
    let report = store.intake_report(run)?;
    let decided = store.intake_decision(run)?;
    Ok(html! {
        section aria-labelledby="point" {
            h2 #point { "Start from uncommitted changes?" }
            pre { (orcho_host::output::text::intake(&report)) }
            @if let Some(d) = decided {
                p.note role="status" { "Decided " (d.decision().payload().action())
                    ". The run goes on when its host resumes it." }
            } @else {
                form method="post" action={ "/runs/" (run) "/decisions/intake" } {
                    input type="hidden" name="csrf" value=(caller.csrf.as_deref().unwrap_or(""));
                    fieldset {
                        legend { "Action" }
                        @for action in IntakeAction::ALL {
                            label {
                                input type="radio" name="action" value=(action.as_str()) required;
                                " " (action.as_str()) " — " (action.description())
                            }
                        }
                    }
                    label for="message" { "Commit message (for commit)" }
                    textarea #message name="message" {}
                    button type="submit" { "Record the decision" }
                }
            }
        }
    })
}

/// The answers of a touchpoint form: `q{i}` for the options picked (one
/// field per option), `t{i}` for the text, in question order.
fn answers_of(fields: &[(String, String)], count: usize) -> Vec<Answer> {
    let mut answers = vec![Answer::none(); count];
    for (name, value) in fields {
        let (kind, index) = name.split_at(name.len().min(1));
        let Ok(i) = index.parse::<usize>() else {
            continue;
        };
        let Some(answer) = answers.get_mut(i) else {
            continue;
        };
        match kind {
            "q" => answer.selected.push(value.clone()),
            "t" if !value.trim().is_empty() => answer.custom = Some(value.trim().to_owned()),
            _ => {}
        }
    }
    answers
}

/// Records the answers to `touchpoint`, when it is still the one the run
/// waits at.
pub(super) fn record_touchpoint(
    place: &Place,
    run: &str,
    touchpoint: Option<&str>,
    fields: &[(String, String)],
) -> Result<String, CliError> {
    let store = place.store();
    let run = store.find_run(run)?;
    let view = store.status(&run)?;
    let Some((open, _)) = view.touchpoint() else {
        return Err(CliError::moved(format!(
            "run `{run}` is not waiting at a plan approval, planner questions or a deviation"
        ))
        .with_hint("reload the page to see where it stands"));
    };
    if let Some(given) = touchpoint
        && given != open.as_str()
    {
        return Err(CliError::moved(format!(
            "run `{run}` has moved on: `{given}` is no longer open, `{open}` is"
        ))
        .with_hint("reload the page and decide what it shows now"));
    }
    let open = open.clone();
    let found = store
        .touchpoints(&run)?
        .into_iter()
        .find(|t| t.id == open)
        .ok_or_else(|| {
            CliError::msg(format!("run `{run}`'s touchpoint `{open}` cannot be found"))
        })?;
    let count = found
        .touchpoint
        .questions()
        .map_err(|e| CliError::msg(e.to_string()))?
        .questions()
        .len();
    let answers = answers_of(fields, count);
    let resolution = store
        .answer(&run, &open, answers, DecidedBy::Operator)
        .map_err(|e| CliError::from(e).with_hint("correct the form and send it again"))?;
    Ok(resolved(&resolution))
}

/// `POST /runs/{run}/decisions/touchpoint`: the touchpoint form.
pub(super) async fn decide_touchpoint(
    State(web): State<Web>,
    caller: Caller,
    Path(run): Path<String>,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    let field = |name: &str| {
        fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    let place = match deciding_place(&web, &caller, field("csrf")) {
        Ok(place) => place,
        Err(refused) => return refused.into_response(),
    };
    match record_touchpoint(&place, &run, field("touchpoint"), &fields) {
        Ok(_) => Redirect::to(&format!("/runs/{run}")).into_response(),
        Err(e) => failed(&caller, &e),
    }
}

#[derive(Debug, Deserialize)]
pub(super) struct IntakeForm {
    csrf: Option<String>,
    action: String,
    #[serde(default)]
    message: Option<String>,
}

/// Records the intake decision as `orcho intake RUN ACTION` does.
pub(super) fn record_intake(
    place: &Place,
    run: &str,
    action: &str,
    message: Option<String>,
) -> Result<Report, CliError> {
    let run = place.store().find_run(run)?;
    let action = IntakeAction::parse(action.trim()).map_err(|e| CliError::usage(e.to_string()))?;
    let message = message
        .map(|m| m.trim().to_owned())
        .filter(|m| !m.is_empty());
    orcho_host::decided::record(
        place,
        &run,
        orcho::decide::Decision::Intake { action, message },
    )
}

/// `POST /runs/{run}/decisions/intake`: the intake form.
pub(super) async fn decide_intake(
    State(web): State<Web>,
    caller: Caller,
    Path(run): Path<String>,
    Form(form): Form<IntakeForm>,
) -> Response {
    let place = match deciding_place(&web, &caller, form.csrf.as_deref()) {
        Ok(place) => place,
        Err(refused) => return refused.into_response(),
    };
    match record_intake(&place, &run, &form.action, form.message) {
        Ok(_) => Redirect::to(&format!("/runs/{run}")).into_response(),
        Err(e) => failed(&caller, &e),
    }
}

/// A point of a kind this page has no section of its own for, drawn from
/// the library's view: what waits, each action with what it does and the
/// note it takes, and a form pinned to the point and its digest.
pub(super) fn any_point(caller: &Caller, view: &PointView) -> Markup {
    let run = &view.run;
    html! {
        section aria-labelledby="any-point" {
            h2 #any-point { "Decide: " (view.kind) }
            p { (view.headline) }
            form method="post" action={ "/runs/" (run) "/decisions/point" } {
                input type="hidden" name="csrf" value=(caller.csrf.as_deref().unwrap_or(""));
                @if let Some(id) = &view.id { input type="hidden" name="point" value=(id); }
                @if let Some(pinned) = view.pinned.first() {
                    input type="hidden" name="digest" value=(pinned.digest.to_string());
                }
                fieldset {
                    legend { "Action" }
                    @for action in &view.actions {
                        label {
                            input type="radio" name="action" value=(action.name) required;
                            " " (action.name) " — " (action.does)
                            @match action.note {
                                Note::Required(what) => { " (needs a note: " (what) ")" }
                                Note::Optional(what) => { " (a note: " (what) ")" }
                                _ => {}
                            }
                        }
                    }
                }
                label for="note" { "Note" }
                textarea #note name="note" {}
                button type="submit" { "Record the decision" }
            }
        }
    }
}

/// Whether the page has a section of its own for points of `kind`.
pub(super) fn has_section(kind: PointKind) -> bool {
    matches!(
        kind,
        PointKind::Handoff
            | PointKind::Intake
            | PointKind::Delivery
            | PointKind::PlanApproval
            | PointKind::PlannerQuestions
            | PointKind::Deviation
    )
}

#[derive(Debug, Deserialize)]
pub(super) struct PointForm {
    csrf: Option<String>,
    action: String,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    point: Option<String>,
    #[serde(default)]
    digest: Option<String>,
}

/// `POST /runs/{run}/decisions/point`: any point's action, by its name,
/// pinned to the point and digest the form was drawn for.
pub(super) async fn decide_point(
    State(web): State<Web>,
    caller: Caller,
    Path(run): Path<String>,
    Form(form): Form<PointForm>,
) -> Response {
    let place = match deciding_place(&web, &caller, form.csrf.as_deref()) {
        Ok(place) => place,
        Err(refused) => return refused.into_response(),
    };
    let recorded = place
        .store()
        .find_run(&run)
        .map_err(CliError::from)
        .and_then(|found| {
            orcho_host::decided::by_name(
                &place,
                &found,
                &form.action,
                form.note,
                form.point.as_deref(),
                form.digest.as_deref(),
            )
        });
    match recorded {
        Ok(_) => Redirect::to(&format!("/runs/{run}")).into_response(),
        Err(e) => failed(&caller, &e),
    }
}

#[cfg(test)]
mod tests {
    use orcho::{
        Engine, PhasePlan, PhaseReport, PhaseRole, RunPlan, Step, core::Verdict,
        gates::PhaseOutcome, point::PointView,
    };

    use super::{Caller, any_point};
    use crate::tokens::Access;

    /// The generic section says what waits and each action with its note,
    /// and pins its form to the point.
    #[tokio::test]
    async fn any_point_is_drawn_from_its_view() {
        let dir = tempfile::tempdir().unwrap();
        let checkout = camino::Utf8PathBuf::try_from(dir.path().to_owned()).unwrap();
        let plan = RunPlan::new(
            "page",
            vec![PhasePlan::new("review".parse().unwrap(), PhaseRole::Review)],
        );
        let engine = Engine::builder(plan, checkout.join(".orcho"))
            .build()
            .unwrap();
        let mut run = engine.start(&checkout).unwrap();
        let Step::RunPhase(_) = run.next().await.unwrap() else {
            panic!("the review runs first");
        };
        let outcome = PhaseOutcome::new(Verdict::Rejected);
        let step = run.complete_phase(PhaseReport::new(outcome)).await.unwrap();
        let view = PointView::of(run.id(), &step).unwrap();
        let caller = Caller {
            name: "alice".to_owned(),
            access: Access::Decide,
            csrf: Some("token".to_owned()),
        };
        let html = any_point(&caller, &view).into_string();
        assert!(html.contains("Decide: handoff"), "{html}");
        assert!(
            html.contains("name=\"point\" value=\"0001-review\""),
            "{html}"
        );
        assert!(
            html.contains(
                "retry_feedback — run `review` again with your feedback (needs a note: the \
                 feedback for the next attempt)"
            ),
            "{html}"
        );
        assert!(html.contains("name=\"csrf\" value=\"token\""), "{html}");
    }
}
