//! A handoff decided from the command line: two `orcho handoff decide`
//! processes race with different decisions; exactly one is recorded, the
//! other gets exit 6, and repeating the recorded one is idempotent.

use crate::{
    Result,
    support::{REVIEW, Repo, WAIT, finish, paused_at_review},
};

#[test]
fn racing_decisions_record_exactly_one() -> Result {
    let repo = Repo::new(REVIEW)?;
    // Paused at its handoff (the helper checks that it waits there).
    let run = paused_at_review(&repo)?;

    let out = repo.orcho(&["handoff", "show", &run, "--json"])?;
    out.expect_code(0);
    let shown = out.json()?;
    assert_eq!(shown["phase"], "review", "{out}");
    assert_eq!(shown["verdict"], "rejected", "{out}");
    assert_eq!(shown["decision"], serde_json::Value::Null, "{out}");
    assert_eq!(
        shown["available_actions"],
        serde_json::json!(["continue", "retry_feedback", "continue_with_waiver", "halt"]),
        "{out}"
    );
    assert!(
        shown["findings"][0]["title"]
            .as_str()
            .is_some_and(|t| t.contains("false")),
        "{out}"
    );

    // Both start before either can finish.
    let halt = ["handoff", "decide", &run, "halt", "--json"];
    let retry = [
        "handoff",
        "decide",
        &run,
        "retry_feedback",
        "--text",
        "try again",
        "--json",
    ];
    let first = repo.spawn(&halt)?;
    let second = repo.spawn(&retry)?;
    let halted = finish(first, WAIT)?;
    let retried = finish(second, WAIT)?;
    halted.expect_no_panic();
    retried.expect_no_panic();
    let codes = (halted.code(), retried.code());
    let (winner, loser, winner_args, action, text) = match codes {
        (Some(0), Some(6)) => (&halted, &retried, &halt[..], "halt", None),
        (Some(6), Some(0)) => (
            &retried,
            &halted,
            &retry[..],
            "retry_feedback",
            Some("try again"),
        ),
        _ => panic!("expected one 0 and one 6\n{halted}\n{retried}"),
    };
    assert_eq!(winner.json()?["recorded"], true, "{winner}");
    let refused = loser.json()?;
    assert_eq!(refused["kind"], "conflict", "{loser}");
    assert!(
        refused["error"]
            .as_str()
            .is_some_and(|e| e.contains("a different decision is already recorded")),
        "{loser}"
    );

    // `show` has the winner's decision.
    let out = repo.orcho(&["handoff", "show", &run, "--json"])?;
    out.expect_code(0);
    let shown = out.json()?;
    assert_eq!(shown["decision"]["action"], action, "{out}");
    assert_eq!(
        shown["decision"]["text"],
        text.map_or(serde_json::Value::Null, serde_json::Value::from),
        "{out}"
    );

    // The winner's exact decision again is idempotent; the loser's is
    // still refused.
    repo.orcho(winner_args)?.expect_code(0);
    let loser_args = if action == "halt" {
        &retry[..]
    } else {
        &halt[..]
    };
    repo.orcho(loser_args)?.expect_code(6);
    let out = repo.orcho(&["handoff", "show", &run, "--json"])?;
    assert_eq!(out.json()?["decision"]["action"], action, "{out}");
    Ok(())
}

#[test]
fn a_decided_halt_ends_the_run_with_no_resume() -> Result {
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;
    let out = repo.orcho(&["handoff", "decide", &run, "halt", "--json"])?;
    out.expect_code(0);
    assert_eq!(out.json()?["status"], "halted", "{out}");
    let said = repo.orcho(&["log", &run])?;
    assert!(said.stdout.contains("halt"), "{said}");
    // Nothing waits: not in the inbox, halted in the list.
    let inbox = repo.orcho(&["inbox", "--json"])?.json()?;
    assert_eq!(inbox["pending"], serde_json::json!([]), "{inbox}");
    assert_eq!(inbox["stopped"], serde_json::json!([]), "{inbox}");
    let runs = repo.orcho(&["runs", "--json"])?.json()?;
    assert_eq!(runs[0]["status"], "halted", "{runs}");
    // A later resume says it halted, with the halted exit code.
    let out = repo.orcho(&["resume", &run, "--no-interactive"])?;
    out.expect_code(5);
    assert!(out.stderr.contains("halted"), "{out}");
    // The same `halt` again is a replay: exit 0, nothing changes.
    let replay = repo.orcho(&["handoff", "decide", &run, "halt", "--json"])?;
    replay.expect_code(0);
    assert_eq!(replay.json()?["recorded"], false, "{replay}");
    let said = repo.orcho(&["handoff", "decide", &run, "halt"])?;
    assert!(said.stdout.contains("already; nothing changed"), "{said}");
    // A different decision conflicts with the recorded one.
    repo.orcho(&["handoff", "decide", &run, "continue"])?
        .expect_code(6);
    let status = repo.orcho(&["runs", "--json"])?.json()?;
    assert_eq!(status[0]["status"], "halted", "{status}");
    Ok(())
}
