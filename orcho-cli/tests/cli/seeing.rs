//! Seeing what happened: every failure shows the end of its output and
//! where the full output is; gate results print as attempts settle; a gate
//! that cannot run says why in its handoff; `orcho log` and
//! `orcho evidence` tell a run's history.

use crate::{
    Result,
    support::{QUICK, Repo, run_id},
};

/// One implement phase whose `tests` gate runs a program that does not
/// exist; the handoff pauses on it.
const MISSING_TOOL: &str = "\
schema: 1
name: missing-tool
phases:
  - name: implement
    role: implement
    max_attempts: 1
    gates:
      - { name: lint, uses: tests, on_fail: feed_into_next, with: { command: lint } }
    handoff: { pause: on_rejected, on_exhausted: pause }
verification:
  commands:
    - { name: lint, argv: [no-such-linter-anywhere] }
  required: [lint]
";

#[test]
fn a_failing_phase_shows_its_output_apart_and_where_the_rest_is() -> Result {
    let repo = Repo::new(QUICK)?;
    let out = repo.orcho(&[
        "run",
        "--phase",
        r#"implement=sh -c "echo 'out line'; echo 'err line' >&2; exit 3""#,
        "--no-interactive",
    ])?;
    out.expect_code(4);
    assert!(out.stderr.contains("stdout:\n    out line"), "{out}");
    assert!(out.stderr.contains("stderr:\n    err line"), "{out}");
    assert!(!out.stderr.contains("out lineerr line"), "{out}");
    let log = out
        .stderr
        .split("(full output: ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .ok_or(format!("no log path\n{out}"))?;
    assert!(std::fs::read_to_string(log)?.contains("out line"), "{log}");
    Ok(())
}

#[test]
fn gate_results_print_as_each_attempt_settles() -> Result {
    let repo = Repo::new(QUICK)?;
    let out = repo.orcho(&["run", "--phase", "implement=true", "--no-interactive"])?;
    out.expect_code(4);
    let first = out
        .stderr
        .find("attempt 2")
        .ok_or(format!("no attempt 2\n{out}"))?;
    let before = &out.stderr[..first];
    assert!(before.contains("gate `tests`: failed"), "{out}");
    assert!(
        before.contains("`test` failed: exited with code 1"),
        "{out}"
    );
    assert!(before.contains("→ retry"), "{out}");
    Ok(())
}

#[test]
fn a_gate_that_cannot_run_says_why_in_its_handoff() -> Result {
    let repo = Repo::new(MISSING_TOOL)?;
    let out = repo.orcho(&[
        "run",
        "--phase",
        "implement=true",
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    let run = run_id(&out.json()?)?;
    let shown = repo.orcho(&["handoff", "show", &run, "--json"])?;
    shown.expect_code(0);
    let findings = shown.json()?["findings"].clone();
    let titles: Vec<&str> = findings
        .as_array()
        .ok_or("no findings")?
        .iter()
        .filter_map(|f| f["title"].as_str())
        .collect();
    assert!(
        titles
            .iter()
            .any(|t| t.contains("could not run") && t.contains("no-such-linter-anywhere")),
        "{titles:?}"
    );
    Ok(())
}

#[test]
fn a_failed_verify_shows_the_output_and_log() -> Result {
    let repo = Repo::new(QUICK)?;
    let out = repo.orcho(&["verify"])?;
    out.expect_code(3);
    assert!(out.stdout.contains("✗ `test`"), "{out}");
    assert!(out.stdout.contains("(full output: "), "{out}");
    Ok(())
}

#[test]
fn log_and_evidence_tell_a_runs_history() -> Result {
    let repo = Repo::new(QUICK)?;
    let out = repo.orcho(&[
        "run",
        "--phase",
        "implement=touch ok",
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    let out = repo.orcho(&["log", "latest"])?;
    out.expect_code(0);
    assert!(
        out.stdout.contains("  1  started plan `cli-quick`"),
        "{out}"
    );
    assert!(out.stdout.contains("gate `tests` passed"), "{out}");
    let out = repo.orcho(&["evidence", "latest"])?;
    out.expect_code(0);
    assert!(
        out.stdout
            .contains("implement attempt 1 (round 1): approved; gate `tests` passed"),
        "{out}"
    );
    assert!(out.stdout.contains("evidence: "), "{out}");
    let out = repo.orcho(&["evidence", "latest", "--json"])?;
    assert_eq!(out.json()?["status"], "awaiting_delivery", "{out}");
    Ok(())
}

/// An implement phase, then final acceptance with no command of its own.
const ACCEPTED_BY_RECEIPTS: &str = "\
schema: 1
name: accepted-by-receipts
phases:
  - name: implement
    role: implement
  - name: final_acceptance
    role: final_acceptance
    handoff: { pause: on_rejected, on_exhausted: pause }
verification:
  commands:
    - { name: test, argv: [\"false\"] }
  required: [test]
";

#[test]
fn final_acceptance_without_a_command_says_the_receipts_decide() -> Result {
    let repo = Repo::new(ACCEPTED_BY_RECEIPTS)?;
    let out = repo.orcho(&["run", "--phase", "implement=true", "--no-interactive"])?;
    out.expect_code(4);
    // It does not say "approved" just before the receipts reject it.
    assert!(
        out.stderr.contains(
            "phase `final_acceptance` attempt 1 (round 1): no command given; the receipts decide"
        ),
        "{out}"
    );
    assert!(out.stderr.contains("is not proven"), "{out}");
    Ok(())
}
