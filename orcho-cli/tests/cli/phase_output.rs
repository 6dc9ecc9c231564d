//! The phase output document: a phase command that writes a plan, asks
//! questions or reports a failed step reaches plan approval, planner
//! questions and deviation handling, decided with `orcho plan`, `orcho
//! answer` and `orcho deviation`.

use crate::{
    Result,
    support::{Out, Repo},
};

/// A plan phase and an implement phase; `SUPERVISION` is replaced by the
/// supervision block.
pub(crate) const PROFILE: &str = "\
schema: 1
name: supervised
phases:
  - name: plan
    role: plan
    max_attempts: 3
  - name: implement
    role: implement
    max_attempts: 3
supervision:
SUPERVISION
";

/// Writes a plan, and keeps the plain-text input of each attempt.
const PLANNER: &str = r#"#!/bin/sh
printf '%s' "$ORCHO_INPUT_TEXT" > "@CTL@/plan-input-$ORCHO_ATTEMPT.txt"
cat > "$ORCHO_OUTPUT" <<'JSON'
{
  "schema": 1,
  "summary": "a plan in two steps",
  "plan": {
    "goal": "Parse empty input as an empty list",
    "steps": [
      {"role": "coder", "description": "Return [] for empty input"},
      {"role": "tester", "description": "Test the empty case"}
    ],
    "files_affected": ["src/parse.py"],
    "risks": ["callers that expect None"]
  }
}
JSON
"#;

pub(crate) const IMPLEMENTER: &str =
    "#!/bin/sh\necho \"implement $ORCHO_ATTEMPT\" >> \"@CTL@/log\"\n";

pub(crate) fn run(repo: &Repo) -> Result<(Out, String)> {
    let out = repo.orcho(&[
        "run",
        "--in-place",
        "--no-interactive",
        "--phase",
        "plan=./plan.sh",
        "--phase",
        "implement=./implement.sh",
    ])?;
    out.expect_no_panic();
    // The store has this one run.
    Ok((out, "latest".to_owned()))
}

fn resume(repo: &Repo, run: &str) -> Result<Out> {
    let out = repo.orcho(&["resume", run, "--no-interactive"])?;
    out.expect_no_panic();
    Ok(out)
}

#[test]
fn a_plan_waits_for_approval_and_request_changes_reaches_the_planner() -> Result {
    let repo = Repo::with_files(
        &PROFILE.replace("SUPERVISION", "  plan_approval: true"),
        &[("plan.sh", PLANNER), ("implement.sh", IMPLEMENTER)],
    )?;
    let (out, run) = run(&repo)?;
    out.expect_code(4);
    assert!(
        out.stderr
            .contains("Goal: Parse empty input as an empty list"),
        "{out}"
    );
    assert!(
        out.stderr.contains("2. [tester] Test the empty case"),
        "{out}"
    );
    assert!(
        out.stdout
            .contains("orcho plan approve|request-changes|reject"),
        "{out}"
    );
    assert!(
        !repo.ctl("log").exists(),
        "nothing was implemented before approval"
    );
    // The inbox lists it with the handoffs.
    let inbox = repo.orcho(&["inbox", "--json"])?;
    inbox.expect_code(0);
    assert!(inbox.stdout.contains("plan_approval"), "{inbox}");
    assert!(inbox.stdout.contains("Request Changes"), "{inbox}");

    repo.orcho(&[
        "plan",
        "request-changes",
        &run,
        "--feedback",
        "test None callers too",
    ])?
    .expect_code(0);
    resume(&repo, &run)?.expect_code(4);
    let input = std::fs::read_to_string(repo.ctl("plan-input-2.txt"))?;
    assert!(input.contains("test None callers too"), "{input}");

    repo.orcho(&["plan", "approve", &run])?.expect_code(0);
    resume(&repo, &run)?.expect_code(0);
    assert_eq!(std::fs::read_to_string(repo.ctl("log"))?, "implement 1\n");
    Ok(())
}

/// Asks two questions until it has answers, then keeps them.
pub(crate) const ASKER: &str = r#"#!/bin/sh
case "$ORCHO_INPUT" in
  *answers*) printf '%s' "$ORCHO_INPUT_TEXT" > "@CTL@/answers.txt" ;;
  *) cat > "$ORCHO_OUTPUT" <<'JSON'
{"schema": 1, "questions": [
  {"header": "Storage", "question": "Where do results go?",
   "options": [{"label": "Files"}, {"label": "SQLite", "description": "one database file"}]},
  {"header": "Name", "question": "What is the module called?"}
]}
JSON
  ;;
esac
"#;

#[test]
fn planner_questions_round_trip_through_orcho_answer() -> Result {
    let repo = Repo::with_files(
        &PROFILE.replace("SUPERVISION", "  plan_approval: false"),
        &[("plan.sh", ASKER), ("implement.sh", IMPLEMENTER)],
    )?;
    let (out, run) = run(&repo)?;
    out.expect_code(4);
    assert!(
        out.stderr.contains("[Storage] Where do results go?"),
        "{out}"
    );
    assert!(
        out.stderr.contains("2) SQLite — one database file"),
        "{out}"
    );
    assert!(out.stdout.contains("--answer … --answer …"), "{out}");
    // One answer for two questions is refused, listing them.
    let short = repo.orcho(&["answer", &run, "--answer", "2"])?;
    short.expect_code(2);
    assert!(short.stderr.contains("2. [Name]"), "{short}");
    // A number that names no option is a slip, not free text.
    let slip = repo.orcho(&["answer", &run, "--answer", "7", "--answer", "results"])?;
    slip.expect_code(2);
    assert!(
        slip.stderr
            .contains("answer 1 ([Storage]): `7` names no option: choose 1-2"),
        "{slip}"
    );
    assert!(slip.stderr.contains("2) SQLite"), "{slip}");
    repo.orcho(&["answer", &run, "--answer", "2", "--answer", "results"])?
        .expect_code(0);
    // The same answers again change nothing; different ones are refused
    // and named, before the run is resumed as after.
    repo.orcho(&["answer", &run, "--answer", "2", "--answer", "results"])?
        .expect_code(0);
    let other = repo.orcho(&["answer", &run, "--answer", "1", "--answer", "results"])?;
    other.expect_code(6);
    assert!(
        other
            .stderr
            .contains("a different decision is already recorded"),
        "{other}"
    );
    assert!(
        other.stderr.contains("answers are recorded once"),
        "{other}"
    );
    resume(&repo, &run)?.expect_code(0);
    let answers = std::fs::read_to_string(repo.ctl("answers.txt"))?;
    assert!(answers.contains("SQLite"), "{answers}");
    assert!(answers.contains("results"), "{answers}");
    Ok(())
}

/// Step 1 always fails.
pub(crate) const FAILING: &str = r#"#!/bin/sh
echo "implement $ORCHO_ATTEMPT" >> "@CTL@/log"
printf '%s' "$ORCHO_INPUT_TEXT" > "@CTL@/implement-input-$ORCHO_ATTEMPT.txt"
echo '{"schema": 1, "deviation": {"step": 1, "description": "Write the lexer", "error": "no module named lexer"}}' > "$ORCHO_OUTPUT"
"#;

#[test]
fn a_deviation_offers_retry_until_the_cap_of_its_step() -> Result {
    let repo = Repo::with_files(
        &PROFILE.replace("SUPERVISION", "  plan_approval: false\n  retry_cap: 1"),
        &[("plan.sh", "#!/bin/sh\n"), ("implement.sh", FAILING)],
    )?;
    let (out, run) = run(&repo)?;
    out.expect_code(4);
    assert!(
        out.stderr.contains("step 1 failed (0 retries so far)"),
        "{out}"
    );
    assert!(out.stdout.contains("orcho deviation"), "{out}");
    repo.orcho(&[
        "deviation",
        &run,
        "retry",
        "--note",
        "write the lexer first",
    ])?
    .expect_code(0);
    let out = resume(&repo, &run)?;
    out.expect_code(4);
    let input = std::fs::read_to_string(repo.ctl("implement-input-2.txt"))?;
    assert!(input.contains("write the lexer first"), "{input}");
    // The step's cap is spent: retry is no longer offered.
    assert!(
        out.stderr.contains("step 1 failed (1 retries so far)"),
        "{out}"
    );
    let refused = repo.orcho(&["deviation", &run, "retry"])?;
    refused.expect_code(1);
    assert!(
        refused
            .stderr
            .contains("`Retry` is not one of its options (`Replan`, `Stop`)"),
        "{refused}"
    );
    repo.orcho(&["deviation", &run, "stop", "--note", "rethink"])?
        .expect_code(0);
    resume(&repo, &run)?.expect_code(5);
    Ok(())
}

#[test]
fn an_invalid_output_document_stops_the_run_where_it_is_wrong() -> Result {
    let broken =
        "#!/bin/sh\nprintf '{\"schema\": 1,\\n \"verdikt\": \"approved\"}' > \"$ORCHO_OUTPUT\"\n";
    let repo = Repo::with_files(
        &PROFILE.replace("SUPERVISION", "  plan_approval: false"),
        &[("plan.sh", broken), ("implement.sh", IMPLEMENTER)],
    )?;
    let (out, _) = run(&repo)?;
    out.expect_code(1);
    assert!(
        out.stderr
            .contains("line 2, column 10: unknown field `verdikt`"),
        "{out}"
    );
    assert!(out.stderr.contains("orcho schema phase-output"), "{out}");
    // Fixed, the same attempt runs again and the run goes on.
    repo.write(
        "plan.sh",
        "#!/bin/sh\necho '{\"schema\": 1}' > \"$ORCHO_OUTPUT\"\n",
    )?;
    let out = resume(&repo, "latest")?;
    out.expect_code(0);
    // The earlier document is kept beside the new one.
    let runs = std::fs::read_dir(repo.dir().join(".orcho/runs"))?
        .filter_map(std::result::Result::ok)
        .map(|e| e.path().join("logs/plan-r1-a1.output.json.1"))
        .filter(|p| p.exists())
        .count();
    assert_eq!(runs, 1);
    Ok(())
}

#[test]
fn the_schema_is_printed_and_matches_the_shipped_file() -> Result {
    let repo = Repo::new(&PROFILE.replace("SUPERVISION", "  plan_approval: false"))?;
    let out = repo.orcho(&["schema", "phase-output"])?;
    out.expect_code(0);
    let schema: serde_json::Value = serde_json::from_str(&out.stdout)?;
    assert_eq!(schema["title"], "Orcho phase output");
    Ok(())
}

#[test]
fn a_committed_script_fixed_in_the_checkout_is_told_where_its_run_runs_it() -> Result {
    let broken =
        "#!/bin/sh\nprintf '{\"schema\": 1,\\n \"verdikt\": \"approved\"}' > \"$ORCHO_OUTPUT\"\n";
    let repo = Repo::with_files(
        &PROFILE.replace("SUPERVISION", "  plan_approval: false"),
        &[("plan.sh", broken), ("implement.sh", IMPLEMENTER)],
    )?;
    // In a worktree: the scripts run as they were committed.
    let out = repo.orcho(&[
        "run",
        "--no-interactive",
        "--phase",
        "plan=./plan.sh --fast",
        "--phase",
        "implement=./implement.sh",
    ])?;
    out.expect_code(1);
    let worktree_copy = "/.orcho/worktrees/";
    assert!(
        out.stderr
            .contains("`./plan.sh` runs from the run's worktree, as it was when the run started")
            && out.stderr.contains(worktree_copy),
        "{out}"
    );
    let fixed = repo.dir().join("plan.sh");
    let suggested = format!("--phase plan='{fixed} --fast'");
    assert!(out.stderr.contains(&suggested), "{out}");
    // Fixed here, and run as the hint says: the run goes on.
    repo.write(
        "plan.sh",
        "#!/bin/sh\necho '{\"schema\": 1}' > \"$ORCHO_OUTPUT\"\n",
    )?;
    let out = repo.orcho(&[
        "resume",
        "latest",
        "--no-interactive",
        "--phase",
        &format!("plan={fixed} --fast"),
    ])?;
    out.expect_no_panic();
    assert_ne!(out.code(), Some(1), "{out}");
    Ok(())
}
