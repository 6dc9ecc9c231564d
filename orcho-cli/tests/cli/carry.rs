//! A run carries the work from its task to its delivery: the task and the
//! approved plan reach every later phase, the planner sent back sees its
//! own plan, and what a phase keeps in `ORCHO_ARTIFACTS` is listed with the
//! run and never delivered.

use crate::{
    Result,
    support::{Out, Repo},
};

const PROFILE: &str = "\
schema: 1
name: carried
phases:
  - name: plan
    role: plan
    max_attempts: 3
  - name: implement
    role: implement
supervision:
  plan_approval: true
";

/// Keeps its input, writes its plan as Markdown into its artifacts and
/// reports it.
const PLANNER: &str = r#"#!/bin/sh
cp "$ORCHO_INPUT_FILE" "@CTL@/plan-input-$ORCHO_ATTEMPT.json"
printf '%s' "$ORCHO_INPUT_TEXT" > "@CTL@/plan-input-$ORCHO_ATTEMPT.txt"
printf '# The plan\n\nReturn [] for empty input.\n' > "$ORCHO_ARTIFACTS/plan.md"
cat > "$ORCHO_OUTPUT" <<'JSON'
{"schema": 1, "summary": "plan in plan.md",
 "plan": {"goal": "Parse empty input as an empty list",
          "steps": [{"role": "coder", "description": "Return [] for empty input"}],
          "files_affected": ["parse.py"], "risks": ["callers that expect None"]}}
JSON
"#;

/// Keeps its input (from the environment) and does the work.
const IMPLEMENTER: &str = r#"#!/bin/sh
printf '%s' "$ORCHO_INPUT" > "@CTL@/implement-input.json"
printf '%s' "$ORCHO_INPUT_TEXT" > "@CTL@/implement-input.txt"
printf 'def parse(text):\n    return []\n' > parse.py
"#;

fn json(path: &camino::Utf8Path) -> Result<serde_json::Value> {
    Ok(serde_json::from_str(&std::fs::read_to_string(path)?)?)
}

fn ok(out: Out, code: i32) -> Result<Out> {
    out.expect_no_panic();
    out.expect_code(code);
    Ok(out)
}

#[test]
fn the_task_and_the_approved_plan_reach_the_implementer_and_artifacts_stay_behind() -> Result {
    let repo = Repo::with_files(
        PROFILE,
        &[("plan.sh", PLANNER), ("implement.sh", IMPLEMENTER)],
    )?;
    let task = "Parse empty input as []\n\nparse('') raises today.";
    ok(
        repo.orcho(&[
            "run",
            "--no-interactive",
            "--task",
            task,
            "--phase",
            "plan=./plan.sh",
            "--phase",
            "implement=./implement.sh",
        ])?,
        4,
    )?;
    let first = json(&repo.ctl("plan-input-1.json"))?;
    assert_eq!(first["task"], task, "{first}");
    assert_eq!(first["schema"], 1);
    assert!(first.get("previous_plan").is_none(), "{first}");

    // Sent back: the planner sees its plan and what to change.
    ok(
        repo.orcho(&[
            "plan",
            "request-changes",
            "latest",
            "--feedback",
            "test the None callers too",
        ])?,
        0,
    )?;
    ok(repo.orcho(&["resume", "latest", "--no-interactive"])?, 4)?;
    let second = json(&repo.ctl("plan-input-2.json"))?;
    assert_eq!(
        second["previous_plan"]["goal"], "Parse empty input as an empty list",
        "{second}"
    );
    assert_eq!(second["feedback"], "test the None callers too");
    assert_eq!(second["task"], task);
    let text = std::fs::read_to_string(repo.ctl("plan-input-2.txt"))?;
    assert!(
        text.starts_with("## Task\n\nParse empty input as []"),
        "{text}"
    );
    assert!(text.contains("## Your previous plan"), "{text}");

    // Approved with notes: the implementer has the task, the plan and the
    // notes, in its environment and as text.
    ok(
        repo.orcho(&["plan", "approve", "latest", "--feedback", "keep it small"])?,
        0,
    )?;
    ok(repo.orcho(&["resume", "latest", "--no-interactive"])?, 4)?;
    let implement = json(&repo.ctl("implement-input.json"))?;
    assert_eq!(implement["task"], task, "{implement}");
    let plan = &implement["plan"];
    assert_eq!(
        plan["goal"], "Parse empty input as an empty list",
        "{implement}"
    );
    assert_eq!(plan["steps"][0]["role"], "coder");
    assert_eq!(plan["files_affected"][0], "parse.py");
    assert_eq!(plan["approved"], true);
    assert_eq!(plan["notes"], "keep it small");
    assert!(
        plan["digest"].as_str().is_some_and(|d| d.len() > 20),
        "{implement}"
    );
    let text = std::fs::read_to_string(repo.ctl("implement-input.txt"))?;
    assert!(
        text.contains("## The approved plan (carry it out)"),
        "{text}"
    );
    assert!(
        text.contains("1. [coder] Return [] for empty input"),
        "{text}"
    );

    // The run shows its task, and its evidence lists the plan the planner
    // kept as an artifact.
    let runs = ok(repo.orcho(&["runs"])?, 0)?;
    assert!(
        runs.stdout.contains("task: Parse empty input as [] …"),
        "{runs}"
    );
    let evidence = ok(repo.orcho(&["evidence", "latest", "--json"])?, 0)?.json()?;
    assert_eq!(evidence["task"], task);
    let artifacts = evidence["artifacts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let files: Vec<(&str, &str)> = artifacts
        .iter()
        .filter_map(|a| Some((a["attempt"].as_str()?, a["file"].as_str()?)))
        .collect();
    assert_eq!(
        files,
        [("plan-r1-a1", "plan.md"), ("plan-r1-a2", "plan.md")]
    );
    let shown = ok(repo.orcho(&["evidence", "latest"])?, 0)?;
    assert!(shown.stdout.contains("plan-r1-a2/plan.md"), "{shown}");

    // The gate shows the task; approve commits the work with the task as
    // its subject, and no artifact.
    let gate = ok(repo.orcho(&["delivery", "show", "latest"])?, 0)?;
    assert!(
        gate.stdout.contains("task: Parse empty input as [] …"),
        "{gate}"
    );
    ok(repo.orcho(&["delivery", "decide", "latest", "approve"])?, 0)?;
    ok(repo.orcho(&["resume", "latest", "--no-interactive"])?, 0)?;
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s"])?,
        "Parse empty input as []"
    );
    let delivered = repo.git(&["show", "--name-only", "--format=", "HEAD"])?;
    assert_eq!(delivered, "parse.py", "only the work is delivered");
    Ok(())
}

#[test]
fn a_task_comes_from_a_file_or_standard_input_and_a_blank_one_is_refused() -> Result {
    let repo = Repo::with_files(PROFILE, &[("implement.sh", IMPLEMENTER)])?;
    repo.write("../task.txt", "Handle the empty case\n")?;
    let out = ok(
        repo.orcho(&[
            "run",
            "--in-place",
            "--no-interactive",
            "--task-file",
            "../task.txt",
            "--phase",
            "implement=./implement.sh",
        ])?,
        0,
    )?;
    drop(out);
    let view = ok(repo.orcho(&["runs", "--json"])?, 0)?.json()?;
    assert_eq!(view[0]["task"], "Handle the empty case\n", "{view}");

    let piped = repo.orcho_with_input(
        &["run", "--in-place", "--no-interactive", "--task-file", "-"],
        "From standard input",
    )?;
    piped.expect_no_panic();
    piped.expect_code(0);
    let view = ok(repo.orcho(&["runs", "--json"])?, 0)?.json()?;
    assert_eq!(view[0]["task"], "From standard input", "{view}");

    for (args, said) in [
        (vec!["--task", "  "], "`--task` is empty"),
        (
            vec!["--task-file", "missing.txt"],
            "`--task-file missing.txt`: cannot read it",
        ),
        (
            vec!["--task", "a", "--task-file", "-"],
            "cannot be used with",
        ),
    ] {
        let mut all = vec!["run", "--in-place", "--no-interactive"];
        all.extend(args);
        let out = repo.orcho(&all)?;
        out.expect_no_panic();
        out.expect_code(2);
        assert!(
            out.stderr.contains(said) || out.stdout.contains(said),
            "{out}"
        );
    }
    let long = "x".repeat(70 * 1024);
    let out = repo.orcho(&["run", "--in-place", "--no-interactive", "--task", &long])?;
    out.expect_code(2);
    assert!(out.stderr.contains("more than the 64 KiB"), "{out}");
    Ok(())
}

/// Writes a file and edits the README: what a read-only phase may not do.
const WRITER: &str = "#!/bin/sh\necho draft > notes.txt\necho edited >> README\n";

#[test]
fn a_read_only_phase_that_writes_is_rejected_and_the_checkout_is_given_back() -> Result {
    for profile in [
        // Every phase of a profile under the read-only preset.
        "schema: 1\nname: ro\nphases:\n  - name: review\n    role: review\n    handoff: {pause: never, on_exhausted: halt}\n\
         permissions:\n  preset: read_only\nsupervision:\n  plan_approval: false\n",
        // One phase that says so.
        "schema: 1\nname: ro\nphases:\n  - name: review\n    role: review\n    read_only: true\n    \
         handoff: {pause: never, on_exhausted: halt}\nsupervision:\n  plan_approval: false\n",
    ] {
        let repo = Repo::with_files(profile, &[("review.sh", WRITER)])?;
        let out = repo.orcho(&[
            "run",
            "--in-place",
            "--no-interactive",
            "--phase",
            "review=./review.sh",
        ])?;
        out.expect_no_panic();
        out.expect_code(5);
        assert!(
            out.stderr
                .contains("a read-only phase changed the checkout: `README`, `notes.txt`"),
            "{out}"
        );
        // The checkout is as it was, and the change is kept with the run.
        assert_eq!(repo.git(&["status", "--porcelain"])?, "", "{out}");
        let evidence = repo.orcho(&["evidence", "latest", "--json"])?.json()?;
        let artifacts = evidence["artifacts"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let patch = artifacts
            .iter()
            .find(|a| a["file"] == "read-only-changes.patch")
            .and_then(|a| a["path"].as_str())
            .ok_or("the patch is listed")?;
        let patch = std::fs::read_to_string(patch)?;
        assert!(patch.contains("+edited"), "{patch}");
        assert!(patch.contains("+draft"), "{patch}");
    }
    Ok(())
}

/// Reports through `orcho report`, with a document that says more than
/// its exit code.
const REPORTER: &str = r#"#!/bin/sh
"@ORCHO@" report '{"schema": 1, "verdict": "rejected", "summary": "found one", "findings": [{"title": "no test"}]}'
"#;

#[test]
fn orcho_report_writes_the_phase_output_document_and_checks_it_first() -> Result {
    let orcho = env!("CARGO_BIN_EXE_orcho");
    let repo = Repo::with_files(
        "schema: 1\nname: r\nphases:\n  - name: review\n    role: review\n    handoff: {pause: never, on_exhausted: halt}\nsupervision:\n  plan_approval: false\n",
        &[("review.sh", &REPORTER.replace("@ORCHO@", orcho))],
    )?;
    let out = repo.orcho(&[
        "run",
        "--in-place",
        "--no-interactive",
        "--phase",
        "review=./review.sh",
    ])?;
    out.expect_no_panic();
    out.expect_code(5);
    assert!(out.stderr.contains("no test"), "{out}");
    // Outside a phase it says what it is for; a bad document is refused
    // with where it is wrong, and nothing is written.
    let out = repo.orcho(&["report", "{}"])?;
    out.expect_no_panic();
    out.expect_code(2);
    assert!(out.stderr.contains("ORCHO_OUTPUT is not set"), "{out}");
    let target = repo.ctl("out.json");
    let out = repo.orcho_in(
        ".",
        &[("ORCHO_OUTPUT", target.as_str())],
        &["report", r#"{"schema": 1, "verdikt": "approved"}"#],
    )?;
    out.expect_code(2);
    assert!(out.stderr.contains("unknown field `verdikt`"), "{out}");
    assert!(!target.exists());
    let out = repo.orcho_with_input(&["report", "--file", "-"], r#"{"schema": 1}"#)?;
    out.expect_code(2);
    Ok(())
}

#[test]
fn an_agent_that_cannot_start_is_said_before_anything_runs() -> Result {
    let repo = Repo::new(
        "schema: 1\nname: a\nphases:\n  - name: implement\n    role: implement\n    runner: codex\nsupervision:\n  plan_approval: false\n",
    )?;
    // The profile's agent is not installed.
    let out = repo.orcho_in(
        ".",
        &[("ORCHO_CODEX", "/nonexistent/codex")],
        &["run", "--no-interactive"],
    )?;
    out.expect_no_panic();
    out.expect_code(1);
    assert!(out.stderr.contains("phase `implement` runs Codex"), "{out}");
    assert!(out.stderr.contains("npm install -g @openai/codex"), "{out}");
    let runs = repo.orcho(&["runs"])?;
    assert!(
        runs.stdout.contains("no run"),
        "nothing was started: {runs}"
    );
    // A misspelt agent on the command line.
    let out = repo.orcho(&["run", "--no-interactive", "--phase", "implement=@claude"])?;
    out.expect_code(2);
    assert!(out.stderr.contains("did you mean `@claude-code`?"), "{out}");
    Ok(())
}
