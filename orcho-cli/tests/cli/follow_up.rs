//! `fix` at the delivery gate, then `orcho run --follow-up RUN`: the child
//! run starts from the parent's diff with what the parent was rejected for,
//! once, and the non-convergence guard is in sight.

use crate::{
    Result,
    support::{Out, Repo},
};

/// `implement` writes `work.txt`, and `fixed` once its input carries the
/// note of a `fix` that says "handle the empty input"; `final_acceptance`
/// rejects until `fixed` exists.
const PHASE: &str = r#"#!/bin/sh
echo "$ORCHO_RUN $ORCHO_PHASE" >> "@CTL@/log"
if [ "$ORCHO_PHASE" = implement ]; then
  echo work >> work.txt
  printf '%s' "$ORCHO_INPUT_TEXT" > "@CTL@/input-$ORCHO_RUN.txt"
  case "$ORCHO_INPUT_TEXT" in *"note: handle the empty input"*) touch fixed ;; esac
  exit 0
fi
test -f fixed || { echo "parse() ignores empty input"; exit 1; }
"#;

const PROFILE: &str = "\
schema: 1
name: correcting
phases:
  - name: implement
    role: implement
  - name: final_acceptance
    role: final_acceptance
    handoff:
      pause: on_rejected
      on_exhausted: pause
      actions: [continue_with_waiver, retry_feedback, halt]
supervision:
  plan_approval: false
";

fn orcho(repo: &Repo, args: &[&str]) -> Result<Out> {
    orcho_in(repo, &[], args)
}

/// `orcho ARGS` in `repo` with `envs` set (a shared store's URL).
fn orcho_in(repo: &Repo, envs: &[(&str, &str)], args: &[&str]) -> Result<Out> {
    let out = crate::support::finish(repo.spawn_with(envs, args)?, crate::support::WAIT)?;
    out.expect_no_panic();
    Ok(out)
}

/// Waives the rejection at the run's final-acceptance handoff, which
/// brings it to its delivery gate with a rejected release.
fn waive_to_the_gate(repo: &Repo, envs: &[(&str, &str)], run: &str) -> Result {
    orcho_in(
        repo,
        envs,
        &[
            "handoff",
            "decide",
            run,
            "continue_with_waiver",
            "--text",
            "known gap",
        ],
    )?
    .expect_code(0);
    orcho_in(repo, envs, &["resume", run, "--no-interactive"])?.expect_code(4);
    Ok(())
}

/// Runs the parent to its rejected release and decides `fix` with `note`.
fn rejected_parent(repo: &Repo, note: &str) -> Result<String> {
    rejected_parent_in(repo, &[], note)
}

/// [`rejected_parent`] with `envs` set.
fn rejected_parent_in(repo: &Repo, envs: &[(&str, &str)], note: &str) -> Result<String> {
    let orcho = |repo: &Repo, args: &[&str]| orcho_in(repo, envs, args);
    let out = orcho(
        repo,
        &[
            "--json",
            "run",
            "--no-interactive",
            "--phase",
            "implement=./phase.sh",
            "--phase",
            "final_acceptance=./phase.sh",
        ],
    )?;
    out.expect_code(4);
    let parent = crate::support::run_id(&out.json()?)?;
    waive_to_the_gate(repo, envs, &parent)?;
    // The waiver brought the rejection to the gate; it stays a rejection,
    // and the header says what was waived.
    let shown = orcho(repo, &["delivery", "show", &parent])?;
    assert!(
        shown
            .stdout
            .contains("release rejected (reviewer rejected, 1 finding waived)"),
        "{shown}"
    );
    orcho(
        repo,
        &["delivery", "decide", &parent, "fix", "--note", note],
    )?
    .expect_code(0);
    let out = orcho(repo, &["resume", &parent, "--no-interactive"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("correction-ready"), "{out}");
    assert!(
        out.stdout.contains(&format!(
            "next: `orcho run --follow-up {parent}` starts the correction follow-up"
        )),
        "{out}"
    );
    Ok(parent)
}

#[test]
fn fix_then_follow_up_starts_the_child_once_with_its_blockers() -> Result {
    let repo = Repo::with_files(PROFILE, &[("phase.sh", PHASE)])?;
    let parent = rejected_parent(&repo, "handle the empty input")?;

    let out = orcho(&repo, &["run", "--follow-up", &parent, "--no-interactive"])?;
    // The parent's phase commands, its diff, and its brief as input.
    assert!(
        out.stderr
            .contains(&format!("follow-up generation 1 of run {parent}")),
        "{out}"
    );
    out.expect_code(4);
    let child = orcho(&repo, &["--json", "runs"])?.json()?;
    let child = child
        .as_array()
        .and_then(|runs| {
            runs.iter()
                .find(|r| r["follow_up_of"] == parent.as_str())
                .and_then(|r| r["run"].as_str().map(str::to_owned))
        })
        .ok_or("the follow-up is listed")?;
    let input = std::fs::read_to_string(repo.ctl(&format!("input-{child}.txt")))?;
    assert!(input.contains("handle the empty input"), "{input}");
    // Every blocker of the parent is named, the waived one marked so, with
    // the output it failed with; the count is never "0 blockers".
    assert!(input.contains("## What this follow-up corrects"), "{input}");
    assert!(input.contains("Waived in the parent"), "{input}");
    assert!(
        input.contains("- [waived] [high] final_acceptance: `./phase.sh` exit code 1"),
        "{input}"
    );
    assert!(input.contains("parse() ignores empty input"), "{input}");
    assert!(!out.stderr.contains("0 blocker"), "{out}");
    assert!(out.stderr.contains("for 1 waived blocker"), "{out}");
    // The child's acceptance passed; approving it delivers the parent's
    // work and the correction.
    orcho(&repo, &["delivery", "decide", &child, "approve"])?.expect_code(0);
    orcho(&repo, &["resume", &child, "--no-interactive"])?.expect_code(0);
    assert!(repo.dir().join("fixed").exists());
    assert_eq!(
        std::fs::read_to_string(repo.dir().join("work.txt"))?,
        "work\nwork\n",
        "the parent's line, then the child's"
    );

    // Once: a second follow-up of the same parent is refused, naming the
    // first.
    let again = orcho(&repo, &["run", "--follow-up", &parent, "--no-interactive"])?;
    again.expect_code(1);
    assert!(
        again
            .stderr
            .contains(&format!("already has its follow-up: run `{child}`")),
        "{again}"
    );
    assert!(
        again.stderr.contains(&format!("orcho resume {child}")),
        "{again}"
    );
    Ok(())
}

#[test]
fn a_follow_up_rejected_again_cannot_fix_again() -> Result {
    // The note does not say what to do: the child changes nothing that
    // matters and is rejected again.
    let repo = Repo::with_files(PROFILE, &[("phase.sh", PHASE)])?;
    let parent = rejected_parent(&repo, "try harder")?;
    let out = orcho(
        &repo,
        &["--json", "run", "--follow-up", &parent, "--no-interactive"],
    )?;
    out.expect_code(4);
    let child = crate::support::run_id(&out.json()?)?;
    waive_to_the_gate(&repo, &[], &child)?;
    // The guard, in sight at the child's gate: no `fix` for a follow-up that
    // made no progress.
    let gate = orcho(&repo, &["delivery", "show", &child])?;
    assert!(
        gate.stdout.contains("`fix` unavailable")
            && gate.stdout.contains(&format!(
                "follow-up generation 1 of run `{parent}` was rejected again"
            )),
        "{gate}"
    );
    let refused = orcho(&repo, &["delivery", "decide", &child, "fix"])?;
    refused.expect_code(1);
    Ok(())
}

#[test]
fn a_follow_up_needs_a_fix_and_keeps_the_parents_profile() -> Result {
    let repo = Repo::with_files(PROFILE, &[("phase.sh", PHASE)])?;
    let out = orcho(
        &repo,
        &[
            "--json",
            "run",
            "--no-interactive",
            "--phase",
            "implement=./phase.sh",
            "--phase",
            "final_acceptance=./phase.sh",
        ],
    )?;
    let parent = crate::support::run_id(&out.json()?)?;
    // Paused at its handoff: no `fix` was decided.
    let refused = orcho(&repo, &["run", "--follow-up", &parent])?;
    refused.expect_code(1);
    assert!(
        refused
            .stderr
            .contains("its delivery was not decided `fix`"),
        "{refused}"
    );
    assert!(
        refused
            .stderr
            .contains(&format!("orcho delivery show {parent}")),
        "{refused}"
    );
    // The profile is the parent's: another one is a usage error.
    orcho(
        &repo,
        &["run", "--follow-up", &parent, "--profile", "builtin:quick"],
    )?
    .expect_code(2);
    orcho(&repo, &["run", "--follow-up", &parent, "--in-place"])?.expect_code(2);
    Ok(())
}

/// On a store a team shares on PostgreSQL, processes that start the same
/// parent's follow-up at the same instant get one child: the store itself
/// refuses the others, naming it.
#[test]
fn racing_follow_ups_on_a_shared_store_start_one_child() -> Result {
    let Some(server) = orcho_pg::testing::Server::shared() else {
        return Ok(());
    };
    let url = server.new_database();
    let envs = [("ORCHO_STORE", url.as_str())];
    let repo = Repo::with_files(PROFILE, &[("phase.sh", PHASE)])?;
    let parent = rejected_parent_in(&repo, &envs, "handle the empty input")?;
    let args = [
        "--json",
        "run",
        "--follow-up",
        parent.as_str(),
        "--no-interactive",
    ];
    let racers: Vec<_> = (0..4)
        .map(|_| repo.spawn_with(&envs, &args))
        .collect::<Result<_>>()?;
    let outs: Vec<Out> = racers
        .into_iter()
        .map(|child| crate::support::finish(child, crate::support::WAIT))
        .collect::<Result<_>>()?;
    // One started (and waits at its delivery gate); the others were
    // refused, naming it.
    let (started, refused): (Vec<&Out>, Vec<&Out>) =
        outs.iter().partition(|o| o.stdout.contains("\"awaiting\""));
    assert_eq!(started.len(), 1, "{outs:#?}");
    let child = crate::support::run_id(&started[0].json()?)?;
    for out in refused {
        assert!(
            out.stdout
                .contains(&format!("already has its follow-up: run `{child}`")),
            "refused, naming the child: {out}"
        );
    }
    Ok(())
}
