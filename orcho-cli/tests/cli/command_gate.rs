//! A gate written in Python, through the built-in `command` gate: it halts,
//! feeds and replans as its `on_fail` declares, seen from outside through
//! `orcho`.

use crate::{
    Result,
    support::{Out, Repo},
};

/// Reads the gate context on stdin, keeps it, and fails with a finding
/// while `good` is missing from the checkout.
const GATE: &str = r#"import json, os, sys
ctx = json.load(sys.stdin)
with open("@CTL@/context.json", "w") as f:
    json.dump(ctx, f)
if os.path.exists("good"):
    print(json.dumps({"schema": 1, "outcome": "passed", "summary": "good is there"}))
else:
    print(json.dumps({"schema": 1, "outcome": "failed", "summary": "good is missing",
        "findings": [{"title": "create the file `good`", "severity": "high", "file": "good", "line": 1,
                      "detail": "the checker looked for " + ctx["config"]["wanted"]}]}))
"#;

/// Logs `<phase> r<round> a<attempt>`; `implement` writes `good` once it is
/// told about the finding (fed in) or works in a later round (replanned).
const PHASE: &str = r#"#!/bin/sh
echo "$ORCHO_PHASE r$ORCHO_ROUND a$ORCHO_ATTEMPT" >> "@CTL@/log"
if [ "$ORCHO_PHASE" = implement ]; then
  case "$ORCHO_INPUT_TEXT" in *"create the file"*) touch good ;; esac
  [ "$ORCHO_ROUND" -gt 1 ] && touch good
fi
exit 0
"#;

const PROFILE: &str = "\
schema: 1
name: python-gate
phases:
  - name: plan
    role: plan
  - name: implement
    role: implement
    max_attempts: 2
    max_rounds: 2
    gates:
      - name: checker
        uses: command
        on_fail: ON_FAIL
        with:
          argv: [python3, gates/check.py]
          config: { wanted: good }
supervision:
  plan_approval: false
";

fn run(on_fail: &str) -> Result<(Repo, Out)> {
    let repo = Repo::with_files(
        &PROFILE.replace("ON_FAIL", on_fail),
        &[("gates/check.py", GATE), ("phase.sh", PHASE)],
    )?;
    let out = repo.orcho(&[
        "run",
        "--in-place",
        "--no-interactive",
        "--phase",
        "plan=./phase.sh",
        "--phase",
        "implement=./phase.sh",
    ])?;
    out.expect_no_panic();
    Ok((repo, out))
}

fn log(repo: &Repo) -> Result<String> {
    Ok(std::fs::read_to_string(repo.ctl("log"))?)
}

#[test]
fn a_python_gate_that_halts_stops_the_run_with_its_finding() -> Result {
    let (repo, out) = run("halt")?;
    out.expect_code(5);
    // The finding, where it points, and what it says.
    assert!(
        out.stderr.contains("- create the file `good` (good:1)"),
        "{out}"
    );
    assert!(out.stderr.contains("the checker looked for good"), "{out}");
    assert_eq!(log(&repo)?, "plan r1 a1\nimplement r1 a1\n");
    // It got the context: the phase, the attempt and its `config`.
    let ctx: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo.ctl("context.json"))?)?;
    assert_eq!(ctx["gate"], "checker");
    assert_eq!(ctx["phase"], "implement");
    assert_eq!(ctx["config"]["wanted"], "good");
    Ok(())
}

#[test]
fn a_python_gate_that_feeds_hands_its_finding_to_the_next_attempt() -> Result {
    let (repo, out) = run("feed_into_next")?;
    out.expect_code(0);
    assert_eq!(
        log(&repo)?,
        "plan r1 a1\nimplement r1 a1\nimplement r1 a2\n"
    );
    Ok(())
}

#[test]
fn a_python_gate_that_replans_sends_the_run_back_to_its_plan() -> Result {
    let (repo, out) = run("trigger_replan")?;
    out.expect_code(0);
    assert_eq!(
        log(&repo)?,
        "plan r1 a1\nimplement r1 a1\nplan r2 a1\nimplement r2 a1\n"
    );
    Ok(())
}
