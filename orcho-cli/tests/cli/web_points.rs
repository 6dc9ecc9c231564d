//! The web inbox's other decision points through its API and pages: plan
//! approval, planner questions, deviations and the pre-run intake, with the
//! command line's rules, recorded as the token's person, and every text
//! from a run (plans, answers, file names) escaped on the page.

use serde_json::{Value, json};

use crate::{
    Result,
    advisor::{KEY, Llm, PHASE, advice, profile},
    phase_output::{ASKER, FAILING, IMPLEMENTER, PROFILE},
    support::{Out, Repo, run_id},
    web::{Served, agent, serve, serve_with, status},
};

/// Text that would run, or add an attribute, if a page did not escape it.
pub(crate) const HOSTILE: &str = "<script>window.pwned=1</script>\"onmouseover=\"window.pwned=1";

/// A planner whose plan is all [`HOSTILE`] text.
pub(crate) fn hostile_planner() -> String {
    let text = serde_json::to_string(HOSTILE).unwrap_or_default();
    format!(
        "#!/bin/sh\ncat > \"$ORCHO_OUTPUT\" <<'JSON'\n{{\"schema\": 1, \"summary\": {text}, \
         \"plan\": {{\"goal\": {text}, \"steps\": [{{\"role\": \"coder\", \"description\": {text}}}], \
         \"files_affected\": [{text}], \"risks\": [{text}]}}}}\nJSON\n"
    )
}

/// Starts a run in place that stops at its first decision point; its id.
pub(crate) fn paused(repo: &Repo) -> Result<String> {
    let out = repo.orcho(&[
        "run",
        "--in-place",
        "--no-interactive",
        "--json",
        "--phase",
        "plan=./plan.sh",
        "--phase",
        "implement=./implement.sh",
    ])?;
    out.expect_no_panic();
    out.expect_code(4);
    run_id(&out.json()?)
}

/// `POST` `body` to `path` as `token`: the status and the JSON answer.
fn post(served: &Served, token: &str, path: &str, body: &Value) -> Result<(u16, Value)> {
    let mut answer = agent()
        .post(format!("{}{path}", served.base))
        .header("Authorization", format!("Bearer {token}"))
        .header("Content-Type", "application/json")
        .send(body.to_string())?;
    let code = status(&answer);
    let text = answer.body_mut().read_to_string()?;
    Ok((
        code,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    ))
}

/// `GET` `path` as `token`: the status and the body.
fn get(served: &Served, token: &str, path: &str) -> Result<(u16, String)> {
    let mut answer = agent()
        .get(format!("{}{path}", served.base))
        .header("Authorization", format!("Bearer {token}"))
        .call()?;
    Ok((status(&answer), answer.body_mut().read_to_string()?))
}

/// The run's page, checked to show `HOSTILE` only as text.
fn page(served: &Served, run: &str) -> Result<String> {
    let (code, html) = get(served, &served.read_only, &format!("/runs/{run}"))?;
    assert_eq!(code, 200, "{html}");
    assert!(!html.contains("<script>window"), "{html}");
    assert!(!html.contains("\"onmouseover="), "{html}");
    Ok(html)
}

fn ok(out: &Out, code: i32) {
    out.expect_no_panic();
    out.expect_code(code);
}

#[test]
fn a_plan_is_approved_through_the_api_with_the_clis_rules() -> Result {
    let repo = Repo::with_files(
        &PROFILE.replace("SUPERVISION", "  plan_approval: true"),
        &[
            ("plan.sh", &hostile_planner()),
            ("implement.sh", IMPLEMENTER),
        ],
    )?;
    let run = paused(&repo)?;
    let served = serve(&repo)?;
    let path = format!("/api/runs/{run}/decisions/plan");

    // The run's document has the point and its questions.
    let (code, shown) = get(&served, &served.read_only, &format!("/api/runs/{run}"))?;
    assert_eq!(code, 200);
    let shown: Value = serde_json::from_str(&shown)?;
    assert_eq!(
        shown["touchpoint"]["touchpoint"]["kind"], "plan_approval",
        "{shown}"
    );
    assert_eq!(shown["touchpoint"]["touchpoint"]["plan"]["goal"], HOSTILE);
    assert_eq!(
        shown["touchpoint"]["questions"].as_array().map(Vec::len),
        Some(2)
    );

    // The page shows the plan as text, and the form its options.
    let html = page(&served, &run)?;
    assert!(
        html.contains("&lt;script&gt;window.pwned=1&lt;/script&gt;"),
        "{html}"
    );
    assert!(html.contains("name=\"q0\" value=\"Approve\""), "{html}");

    // The rules: a read-only token, a note missing where it is required, an
    // action that is none, a plan that has changed since.
    let (code, _) = post(
        &served,
        &served.read_only,
        &path,
        &json!({"action": "approve"}),
    )?;
    assert_eq!(code, 403);
    let (code, said) = post(
        &served,
        &served.decide,
        &path,
        &json!({"action": "request_changes"}),
    )?;
    assert_eq!(code, 400, "{said}");
    assert!(
        said["error"]
            .as_str()
            .is_some_and(|e| e.contains("needs its note")),
        "{said}"
    );
    let (code, said) = post(
        &served,
        &served.decide,
        &path,
        &json!({"action": "sideways"}),
    )?;
    assert_eq!(code, 400, "{said}");
    let stale = format!("blake3:{}", "0".repeat(64));
    let (code, said) = post(
        &served,
        &served.decide,
        &path,
        &json!({"action": "approve", "plan_digest": stale}),
    )?;
    assert_eq!(code, 409, "{said}");
    assert!(
        said["error"]
            .as_str()
            .is_some_and(|e| e.contains("the plan changed")),
        "{said}"
    );
    // A decision on another touchpoint than the one open: 409 too.
    let (code, said) = post(
        &served,
        &served.decide,
        &path,
        &json!({"action": "approve", "touchpoint": "touchpoint-9"}),
    )?;
    assert_eq!(code, 409, "{said}");
    assert!(
        said["error"]
            .as_str()
            .is_some_and(|e| e.contains("the decision is about `touchpoint-9`")),
        "{said}"
    );

    // Pinned to the plan shown: recorded, as alice; again: a replay;
    // another decision: a conflict naming what was recorded.
    let approve = json!({"action": "approve", "note": "keep it small"});
    let (code, said) = post(&served, &served.decide, &path, &approve)?;
    assert_eq!(code, 200, "{said}");
    assert_eq!(said["decision"], "Approve", "{said}");
    let (code, _) = post(&served, &served.decide, &path, &approve)?;
    assert_eq!(code, 200);
    let (code, said) = post(&served, &served.decide, &path, &json!({"action": "reject"}))?;
    assert_eq!(code, 409, "{said}");

    let html = page(&served, &run)?;
    assert!(html.contains("Decided: Approve (keep it small)"), "{html}");
    let log = repo.orcho(&["log", &run])?;
    assert!(log.stdout.contains("alice (web)"), "{log}");
    ok(&repo.orcho(&["resume", &run, "--no-interactive"])?, 0);
    Ok(())
}

#[test]
fn questions_and_deviations_are_decided_through_the_api() -> Result {
    // Planner questions: as many answers as questions, an option by its
    // number, text as it is.
    let repo = Repo::with_files(
        &PROFILE.replace("SUPERVISION", "  plan_approval: false"),
        &[("plan.sh", ASKER), ("implement.sh", IMPLEMENTER)],
    )?;
    let run = paused(&repo)?;
    let served = serve(&repo)?;
    let html = page(&served, &run)?;
    assert!(html.contains("Where do results go?"), "{html}");
    assert!(html.contains("value=\"SQLite\""), "{html}");
    let path = format!("/api/runs/{run}/decisions/questions");
    let (code, said) = post(&served, &served.decide, &path, &json!({"answers": ["2"]}))?;
    assert_eq!(code, 400, "{said}");
    assert!(
        said["error"]
            .as_str()
            .is_some_and(|e| e.contains("2. [Name]")),
        "{said}"
    );
    let (code, said) = post(
        &served,
        &served.decide,
        &path,
        &json!({"answers": ["2", HOSTILE]}),
    )?;
    assert_eq!(code, 200, "{said}");
    let html = page(&served, &run)?;
    assert!(html.contains("Decided: SQLite; &lt;script&gt;"), "{html}");
    ok(&repo.orcho(&["resume", &run, "--no-interactive"])?, 0);
    let answers = std::fs::read_to_string(repo.ctl("answers.txt"))?;
    assert!(answers.contains(HOSTILE), "{answers}");
    drop(served);

    // A deviation: retry until the step's cap, then only replan or stop.
    let repo = Repo::with_files(
        &PROFILE.replace("SUPERVISION", "  plan_approval: false\n  retry_cap: 1"),
        &[("plan.sh", "#!/bin/sh\n"), ("implement.sh", FAILING)],
    )?;
    let run = paused(&repo)?;
    let served = serve(&repo)?;
    let html = page(&served, &run)?;
    assert!(html.contains("no module named lexer"), "{html}");
    let path = format!("/api/runs/{run}/decisions/deviation");
    let (code, _) = post(&served, &served.decide, &path, &json!({"action": "later"}))?;
    assert_eq!(code, 400);
    let retry = json!({"action": "retry", "note": "write the lexer first"});
    let (code, said) = post(&served, &served.decide, &path, &retry)?;
    assert_eq!(code, 200, "{said}");
    ok(&repo.orcho(&["resume", &run, "--no-interactive"])?, 4);
    let (code, said) = post(&served, &served.decide, &path, &json!({"action": "retry"}))?;
    assert_eq!(code, 422, "{said}");
    assert!(
        said["error"]
            .as_str()
            .is_some_and(|e| e.contains("`Replan`, `Stop`")),
        "{said}"
    );
    let html = page(&served, &run)?;
    assert!(
        !html.contains("value=\"Retry\""),
        "the cap is spent: {html}"
    );
    let (code, said) = post(&served, &served.decide, &path, &json!({"action": "stop"}))?;
    assert_eq!(code, 200, "{said}");
    ok(&repo.orcho(&["resume", &run, "--no-interactive"])?, 5);
    Ok(())
}

/// One phase, in a worktree: a dirty checkout asks the intake question.
const ONE_PHASE: &str = "\
schema: 1
name: one-phase
phases:
  - name: implement
    role: implement
";

#[test]
fn the_intake_is_decided_through_the_api_and_file_names_are_text() -> Result {
    let repo = Repo::with_files(ONE_PHASE, &[("a.txt", "one\n")])?;
    repo.write("a.txt", "one\ntwo\n")?;
    let name = "<b onmouseover=\"window.pwned=1\">x.txt";
    repo.write(name, "new\n")?;
    let out = repo.orcho(&[
        "run",
        "--no-interactive",
        "--json",
        "--phase",
        "implement=true",
    ])?;
    ok(&out, 4);
    let run = run_id(&out.json()?)?;
    let served = serve(&repo)?;
    let html = page(&served, &run)?;
    assert!(html.contains("Start from uncommitted changes?"), "{html}");
    assert!(html.contains("&lt;b onmouseover="), "{html}");
    assert!(html.contains("value=\"exclude\""), "{html}");

    let path = format!("/api/runs/{run}/decisions/intake");
    let (code, _) = post(
        &served,
        &served.decide,
        &path,
        &json!({"action": "sideways"}),
    )?;
    assert_eq!(code, 400);
    let (code, _) = post(
        &served,
        &served.read_only,
        &path,
        &json!({"action": "exclude"}),
    )?;
    assert_eq!(code, 403);
    let (code, said) = post(
        &served,
        &served.decide,
        &path,
        &json!({"action": "exclude"}),
    )?;
    assert_eq!(code, 200, "{said}");
    let html = page(&served, &run)?;
    assert!(html.contains("Decided exclude"), "{html}");
    let (code, said) = post(&served, &served.decide, &path, &json!({"action": "halt"}))?;
    assert_eq!(code, 409, "{said}");
    Ok(())
}

/// `POST` the form `fields` to `path` as `token` (a bearer token needs no
/// CSRF token): the status.
fn post_form(served: &Served, token: &str, path: &str, fields: &[(&str, &str)]) -> Result<u16> {
    let body: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{k}={}", v.replace(' ', "+")))
        .collect();
    let answer = agent()
        .post(format!("{}{path}", served.base))
        .header("Authorization", format!("Bearer {token}"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .send(body.join("&"))?;
    Ok(status(&answer))
}

#[test]
fn the_advisor_is_asked_from_the_page_and_its_advice_used_with_its_provenance() -> Result {
    let llm = Llm::start(vec![advice(
        "retry_feedback",
        0.8,
        Some("handle empty input"),
    )]);
    let repo = Repo::with_files(&profile(&llm.base_url), &[("phase.sh", PHASE)])?;
    let out = repo.orcho_in(
        ".",
        &[KEY],
        &[
            "run",
            "--in-place",
            "--no-interactive",
            "--json",
            "--phase",
            "implement=./phase.sh",
        ],
    )?;
    ok(&out, 4);
    let run = run_id(&out.json()?)?;
    let served = serve_with(&repo, &[KEY])?;
    let html = page(&served, &run)?;
    assert!(html.contains("Ask the advisor"), "{html}");

    // Asking costs money: a read-only token may not.
    let ask = format!("/runs/{run}/advice");
    assert_eq!(post_form(&served, &served.read_only, &ask, &[])?, 403);
    assert_eq!(post_form(&served, &served.decide, &ask, &[])?, 303);
    let html = page(&served, &run)?;
    assert!(
        html.contains("The advisor recommends retry_feedback"),
        "{html}"
    );
    assert!(html.contains("handle empty input"), "{html}");
    let id = html
        .split("name=\"advice\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .ok_or("the advice's id in its form")?
        .to_owned();

    // "Use this advice" sends what the advice says, and its id.
    let decided = post_form(
        &served,
        &served.decide,
        &format!("/runs/{run}/decisions/handoff"),
        &[
            ("action", "retry_feedback"),
            ("text", "handle empty input"),
            ("advice", &id),
        ],
    )?;
    assert_eq!(decided, 303);
    ok(
        &repo.orcho_in(".", &[KEY], &["resume", &run, "--no-interactive"])?,
        0,
    );
    let evidence = repo.orcho(&["--json", "evidence", &run])?.json()?;
    let decision = &evidence["handoffs"][0]["decision"];
    assert_eq!(decision["advice"], id.as_str(), "{evidence}");
    assert_eq!(decision["by"], "alice (web)", "{evidence}");
    Ok(())
}
