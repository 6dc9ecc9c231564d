//! The delivery gate against a target checkout that changes while the gate
//! waits: what the gate shows, what deciding refuses and how, and that
//! clearing the target lets the run deliver.

use serde_json::json;

use crate::{
    Result,
    support::{QUICK, REVIEW, Repo, run_id},
};

/// The run writes `notes.txt` (and `ok`, which its gate wants).
const WRITES_NOTES: &str = "implement=sh -c 'touch ok && echo run > notes.txt'";

#[test]
fn a_target_edited_while_the_gate_waits_takes_approve_and_apply_off_the_list() -> Result {
    let repo = Repo::new(QUICK)?;
    let run = at_the_gate(&repo)?;
    // Meanwhile the user writes the same file in the target.
    repo.write("notes.txt", "mine\n")?;

    let out = repo.orcho(&["delivery", "show", &run])?;
    out.expect_code(0);
    assert!(
        out.stdout.contains(
            "`approve`, `apply` refused now: commit or stash the target's changes to `notes.txt`"
        ),
        "{out}"
    );
    assert!(out.stdout.contains(": conflicting: "), "{out}");
    assert!(
        out.stdout.trim_end().ends_with(
            "actions:\n  skip  close the gate and change nothing\n  halt  stop; keep the worktree for inspection"
        ),
        "{out}"
    );
    let gate = repo.orcho(&["delivery", "show", &run, "--json"])?.json()?;
    assert_eq!(gate["target_status"]["state"], "conflicting", "{gate}");
    assert_eq!(
        gate["target_status"]["refused"],
        json!(["approve", "apply"])
    );
    assert_eq!(gate["target_status"]["overlapping"], json!(["notes.txt"]));
    // The gate's menu itself is what it was when it opened.
    assert_eq!(
        gate["available_actions"],
        json!(["approve", "apply", "skip", "halt"])
    );

    let out = repo.orcho(&["delivery", "decide", &run, "approve"])?;
    out.expect_code(1);
    assert!(
        out.stderr.contains(
            "hint: commit or stash the target's changes to `notes.txt`, then decide again"
        ),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.dir().join("notes.txt"))?,
        "mine\n"
    );

    // Cleared, the same decision goes through and delivers.
    std::fs::remove_file(repo.dir().join("notes.txt"))?;
    let gate = repo.orcho(&["delivery", "show", &run, "--json"])?.json()?;
    assert_eq!(gate["target_status"]["state"], "clean", "{gate}");
    assert_eq!(gate["target_status"]["refused"], json!([]));
    repo.orcho(&["delivery", "decide", &run, "approve"])?
        .expect_code(0);
    repo.orcho(&["resume", &run, "--json"])?.expect_code(0);
    assert_eq!(repo.git(&["show", "HEAD:notes.txt"])?, "run");
    // Once delivered, the target is no longer the gate's business.
    let gate = repo.orcho(&["delivery", "show", &run, "--json"])?.json()?;
    assert!(gate.get("target_status").is_none(), "{gate}");
    Ok(())
}

#[test]
fn the_gate_names_the_handoffs_the_run_was_moved_past() -> Result {
    let repo = Repo::new(REVIEW)?;
    let out = repo.orcho(&[
        "run",
        "--phase",
        "review=sh -c 'echo draft > notes.txt; exit 1'",
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    let run = run_id(&out.json()?)?;
    repo.orcho(&["handoff", "decide", &run, "continue"])?
        .expect_code(0);
    let out = repo.orcho(&["resume", &run, "--no-interactive"])?;
    out.expect_code(4);
    // The prompt-less pause shows the gate with the override too.
    assert!(out.stderr.contains("after 1 handoff overridden"), "{out}");

    let out = repo.orcho(&["delivery", "show", &run])?;
    out.expect_code(0);
    assert!(
        out.stdout.contains(
            "overridden: handoff 0001-review — `review` rejected (trigger: verdict), continued by operator"
        ),
        "{out}"
    );
    let gate = repo.orcho(&["delivery", "show", &run, "--json"])?.json()?;
    assert_eq!(gate["overridden"][0]["handoff"], "0001-review", "{gate}");
    assert_eq!(gate["overridden"][0]["verdict"], "rejected", "{gate}");
    assert_eq!(gate["overridden"][0]["decided_by"], "operator", "{gate}");
    Ok(())
}

#[test]
fn approve_commits_as_the_identity_git_would_use_there() -> Result {
    let repo = Repo::new(QUICK)?;
    let run = at_the_gate(&repo)?;
    repo.orcho(&["delivery", "decide", &run, "approve"])?
        .expect_code(0);
    // A CI job that names its identity in the environment alone.
    let identity = [
        ("GIT_AUTHOR_NAME", "Release Bot"),
        ("GIT_AUTHOR_EMAIL", "bot@example.com"),
        ("GIT_COMMITTER_NAME", "Release Bot"),
        ("GIT_COMMITTER_EMAIL", "bot@example.com"),
    ];
    repo.orcho_in(".", &identity, &["resume", &run, "--json"])?
        .expect_code(0);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%an <%ae> / %cn <%ce>"])?,
        "Release Bot <bot@example.com> / Release Bot <bot@example.com>"
    );
    Ok(())
}

/// A run of [`QUICK`] that writes `notes.txt`, at its delivery gate; its id.
fn at_the_gate(repo: &Repo) -> Result<String> {
    let out = repo.orcho(&["run", "--phase", WRITES_NOTES, "--no-interactive", "--json"])?;
    out.expect_code(4);
    run_id(&out.json()?)
}

#[test]
fn a_recorded_decision_stands_and_the_target_is_told_to_make_way() -> Result {
    let repo = Repo::new(QUICK)?;
    let run = at_the_gate(&repo)?;
    repo.orcho(&["delivery", "decide", &run, "approve"])?
        .expect_code(0);
    repo.write("notes.txt", "mine\n")?;

    let out = repo.orcho(&["delivery", "show", &run])?;
    out.expect_code(0);
    assert!(
        out.stdout.contains("decided: approve (by operator ") && out.stdout.contains(" at "),
        "{out}"
    );
    assert!(
        out.stdout.contains(
            "the recorded decision stands: commit or stash the target's changes to `notes.txt`"
        ),
        "{out}"
    );
    assert!(
        !out.stdout.lines().any(|l| l.starts_with("available:")),
        "{out}"
    );
    let gate = repo.orcho(&["delivery", "show", &run, "--json"])?.json()?;
    assert_eq!(gate["decision"]["action"], "approve", "{gate}");

    let out = repo.orcho(&["resume", &run])?;
    out.expect_code(1);
    assert!(
        out.stderr
            .contains(&format!("hint: the recorded decision stands: commit or stash the target's changes to `notes.txt`, then `orcho resume {run}` again")),
        "{out}"
    );
    std::fs::remove_file(repo.dir().join("notes.txt"))?;
    repo.orcho(&["resume", &run, "--json"])?.expect_code(0);
    assert_eq!(repo.git(&["show", "HEAD:notes.txt"])?, "run");
    Ok(())
}

#[test]
fn a_cancelled_run_takes_no_decision() -> Result {
    let repo = Repo::new(QUICK)?;
    let run = at_the_gate(&repo)?;
    repo.orcho(&["cancel", &run])?.expect_code(0);
    let out = repo.orcho(&["delivery", "decide", &run, "approve"])?;
    out.expect_code(1);
    assert!(out.stderr.contains("the run is cancelled"), "{out}");
    let out = repo.orcho(&["delivery", "show", &run])?;
    out.expect_code(0);
    assert!(out.stdout.contains("nothing to decide"), "{out}");
    assert!(
        !out.stdout.lines().any(|l| l.starts_with("available:")),
        "{out}"
    );
    let gate = repo.orcho(&["delivery", "show", &run, "--json"])?.json()?;
    assert!(
        gate["ended"]
            .as_str()
            .is_some_and(|e| e.contains("cancelled")),
        "{gate}"
    );
    Ok(())
}

#[test]
fn a_decided_delivery_halt_ends_the_run_and_keeps_the_worktree() -> Result {
    let repo = Repo::new(QUICK)?;
    let run = at_the_gate(&repo)?;
    let out = repo.orcho(&["delivery", "decide", &run, "halt", "--json"])?;
    out.expect_code(0);
    assert_eq!(out.json()?["status"], "halted", "{out}");
    let runs = repo.orcho(&["runs", "--json"])?.json()?;
    assert_eq!(runs[0]["status"], "halted", "{runs}");
    let log = repo.orcho(&["log", &run])?;
    assert!(log.stdout.contains("delivered: halt"), "{log}");
    let out = repo.orcho(&["resume", &run, "--no-interactive"])?;
    out.expect_code(5);
    // The target is as it was.
    assert!(!repo.dir().join("notes.txt").exists());
    Ok(())
}

#[test]
fn the_gate_shows_its_diff_and_a_decision_pins_the_patch() -> Result {
    let repo = Repo::new(QUICK)?;
    let run = at_the_gate(&repo)?;
    let out = repo.orcho(&["delivery", "show", &run, "--diff"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("+++ b/notes.txt"), "{out}");
    assert!(out.stdout.contains("+run"), "{out}");
    let doc = repo
        .orcho(&["delivery", "show", &run, "--diff", "--json"])?
        .json()?;
    assert!(
        doc["patch"]
            .as_str()
            .is_some_and(|p| p.contains("notes.txt")),
        "{doc}"
    );
    let digest = doc["patch_digest"].as_str().ok_or("no digest")?.to_owned();
    assert!(digest.starts_with("blake3:"), "{doc}");
    // Another patch's digest is refused; a malformed one is a usage error.
    let other = format!("blake3:{}", "0".repeat(64));
    let out = repo.orcho(&["delivery", "decide", &run, "approve", "--patch", &other])?;
    out.expect_code(1);
    assert!(out.stderr.contains("patch"), "{out}");
    let out = repo.orcho(&["delivery", "decide", &run, "approve", "--patch", "nope"])?;
    out.expect_code(2);
    assert!(out.stderr.contains("patch_digest"), "{out}");
    repo.orcho(&["delivery", "decide", &run, "approve", "--patch", &digest])?
        .expect_code(0);
    Ok(())
}

#[test]
fn runs_after_gc_do_not_name_a_worktree_as_kept() -> Result {
    let repo = Repo::new(QUICK)?;
    let run = at_the_gate(&repo)?;
    repo.orcho(&["delivery", "decide", &run, "halt"])?
        .expect_code(0);
    let before = repo.orcho(&["runs"])?;
    assert!(
        before.stdout.contains("the worktree is kept at"),
        "{before}"
    );
    assert!(!before.stdout.contains("removed since"), "{before}");
    repo.orcho(&["gc"])?.expect_code(0);
    let after = repo.orcho(&["runs"])?;
    assert!(after.stdout.contains("(removed since)"), "{after}");
    Ok(())
}

#[test]
fn a_target_whose_head_moved_says_so_not_commit_or_stash() -> Result {
    let repo = Repo::new(QUICK)?;
    let run = at_the_gate(&repo)?;
    // Meanwhile the target commits its own `notes.txt`: clean, but the
    // run's diff no longer applies.
    repo.write("notes.txt", "the target's own\n")?;
    repo.git(&["add", "notes.txt"])?;
    repo.git(&["commit", "-q", "-m", "moved on"])?;
    let out = repo.orcho(&["delivery", "show", &run])?;
    out.expect_code(0);
    assert!(
        out.stdout.contains("HEAD moved on since the run's base"),
        "{out}"
    );
    assert!(!out.stdout.contains("commit or stash"), "{out}");
    let out = repo.orcho(&["delivery", "decide", &run, "approve"])?;
    assert_ne!(out.code(), Some(0), "{out}");
    assert!(out.stderr.contains("HEAD moved on"), "{out}");
    Ok(())
}

/// One phase and a required command the run never runs itself: its gate
/// has a missing receipt.
pub(crate) const UNPROVEN: &str = "\
schema: 1
name: unproven
phases:
  - name: implement
    role: implement
verification:
  commands:
    - { name: test, argv: [sh, -c, \"test -f done.txt\"] }
  required: [test]
";

#[test]
fn rerun_at_the_gate_runs_the_missing_receipts_and_shows_the_gate_again() -> Result {
    let repo = Repo::new(UNPROVEN)?;
    let out = repo.orcho(&[
        "run",
        "--no-interactive",
        "--json",
        "--phase",
        "implement=sh -c 'echo x > done.txt'",
    ])?;
    out.expect_code(4);
    let run = run_id(&out.json()?)?;
    let gate = repo.orcho(&["delivery", "show", &run, "--json"])?.json()?;
    assert_eq!(gate["verdict"], "rejected", "{gate}");
    assert_eq!(gate["gaps"].as_array().map(Vec::len), Some(1), "{gate}");
    let shown = repo.orcho(&["delivery", "show", &run])?;
    assert!(
        shown
            .stdout
            .contains(&format!("`orcho delivery rerun {run}`")),
        "{shown}"
    );

    let out = repo.orcho(&["delivery", "rerun", &run, "--json"])?;
    out.expect_code(0);
    let gate = out.json()?;
    assert_eq!(gate["rerun"], json!(["test"]), "{gate}");
    assert_eq!(gate["verdict"], "approved", "{gate}");
    assert_eq!(gate["gaps"], json!([]), "{gate}");
    let again = repo.orcho(&["delivery", "rerun", &run])?;
    again.expect_code(0);
    assert!(again.stdout.contains("nothing was run again"), "{again}");
    let log = repo.orcho(&["log", &run])?;
    assert!(log.stdout.contains("receipts re-run"), "{log}");

    repo.orcho(&["delivery", "decide", &run, "approve"])?
        .expect_code(0);
    let refused = repo.orcho(&["delivery", "rerun", &run])?;
    assert_ne!(refused.code(), Some(0), "{refused}");
    assert!(refused.stderr.contains("decided already"), "{refused}");
    repo.orcho(&["resume", &run, "--no-interactive"])?
        .expect_code(0);
    assert!(repo.dir().join("done.txt").is_file());
    Ok(())
}

#[test]
fn status_in_the_checkout_names_a_run_waiting_at_its_delivery_gate() -> Result {
    let repo = Repo::new(QUICK)?;
    let run = at_the_gate(&repo)?;
    // The run's receipts are in its worktree: here, nothing is proven yet,
    // and status says where the proven work waits.
    let out = repo.orcho(&["status"])?;
    out.expect_code(3);
    assert!(
        out.stdout.contains(&format!(
            "run {run} waits at its delivery gate: its work and its receipts are in its worktree, not here yet"
        )),
        "{out}"
    );
    assert!(
        out.stdout.contains(&format!(
            "`orcho delivery decide {run} approve` brings it here"
        )),
        "{out}"
    );
    let doc = repo.orcho(&["status", "--json"])?.json()?;
    assert_eq!(doc["at_delivery"], serde_json::json!([run]), "{doc}");
    // Once delivered, nothing waits.
    repo.orcho(&["delivery", "decide", &run, "approve"])?
        .expect_code(0);
    repo.orcho(&["resume", &run, "--no-interactive"])?;
    let doc = repo.orcho(&["status", "--json"])?.json()?;
    assert!(doc.get("at_delivery").is_none(), "{doc}");
    Ok(())
}
