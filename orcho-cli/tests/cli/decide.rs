//! `orcho decide`: any point a run waits at, shown as the library's view
//! says it and decided by an action's name, with the action's note rules,
//! pinned to the point shown; refused to an agent.

use crate::{
    Result,
    support::{REVIEW, Repo, paused_at_review},
};

#[test]
fn a_point_is_shown_with_what_each_action_does_and_decided_by_name() -> Result {
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;

    let out = repo.orcho(&["decide", &run])?;
    out.expect_code(0);
    assert!(
        out.stdout.contains(&format!(
            "handoff of run {run} (0001-review): phase `review` rejected"
        )),
        "{out}"
    );
    assert!(
        out.stdout.contains(
            "retry_feedback        run `review` again with your feedback (needs --note: the \
             feedback for the next attempt)"
        ),
        "{out}"
    );
    assert!(
        out.stdout.contains(&format!(
            "decide: orcho decide {run} <ACTION> [--note TEXT]"
        )),
        "{out}"
    );
    let out = repo.orcho(&["decide", &run, "--json"])?;
    out.expect_code(0);
    let view = out.json()?;
    assert_eq!(view["kind"], "handoff", "{out}");
    assert_eq!(view["actions"][1]["note"]["note"], "required", "{out}");

    // A slip, a note against the rules, another point: refused, with what
    // to do, and nothing recorded.
    let out = repo.orcho(&["decide", &run, "contnue"])?;
    out.expect_code(2);
    assert!(out.stderr.contains("did you mean `continue`?"), "{out}");
    assert!(out.stderr.contains("lists the actions"), "{out}");
    let out = repo.orcho(&["decide", &run, "retry_feedback"])?;
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("`retry_feedback` needs a note: the feedback for the next attempt"),
        "{out}"
    );
    let out = repo.orcho(&["decide", &run, "halt", "--point", "0002-review"])?;
    out.expect_code(6);
    assert!(
        out.stderr.contains(
            "the decision is about `0002-review`, and the run now waits at `0001-review`"
        ),
        "{out}"
    );
    let out = repo.orcho(&["decide", &run, "halt", "--digest", "blake3:00"])?;
    out.expect_code(2);
    assert!(
        out.stderr
            .contains("the handoff pins no digest, and the decision names `blake3:00`"),
        "{out}"
    );
    let out = repo.orcho_in(".", &[("CLAUDECODE", "1")], &["decide", &run, "halt"])?;
    out.expect_code(1);
    assert!(out.stderr.contains("records a person's decision"), "{out}");
    repo.orcho(&["decide", &run])?.expect_code(0);

    let out = repo.orcho(&[
        "decide",
        &run,
        "retry_feedback",
        "--note",
        "say why",
        "--point",
        "0001-review",
    ])?;
    out.expect_code(0);
    assert!(
        out.stdout.contains(&format!(
            "recorded `retry_feedback` on the handoff of run {run}"
        )),
        "{out}"
    );
    // Decided: nothing is open until the run acts on it.
    let out = repo.orcho(&["decide", &run])?;
    out.expect_code(1);
    assert!(
        out.stderr
            .contains("has its decision recorded (awaiting_phase_handoff)"),
        "{out}"
    );
    assert!(out.stderr.contains(&format!("orcho resume {run}")), "{out}");
    Ok(())
}
