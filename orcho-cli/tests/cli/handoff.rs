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

#[test]
fn the_inbox_reads_a_page_at_a_time_and_filters_by_kind_and_age() -> Result {
    let repo = Repo::new(REVIEW)?;
    let runs = [
        paused_at_review(&repo)?,
        paused_at_review(&repo)?,
        paused_at_review(&repo)?,
    ];
    // Pages of two, newest first: each run once, and the count of all.
    let first = repo
        .orcho(&["inbox", "--page", "1", "--per-page", "2", "--json"])?
        .json()?;
    assert_eq!(first["total"], 3, "{first}");
    assert_eq!(
        first["page"],
        serde_json::json!({"number": 1, "size": 2, "pages": 2})
    );
    assert_eq!(first["pending"][0]["run"], runs[2].as_str(), "{first}");
    assert_eq!(first["pending"][0]["kind"], "handoff", "{first}");
    assert_eq!(first["pending"][1]["run"], runs[1].as_str(), "{first}");
    let second = repo
        .orcho(&["inbox", "--page", "2", "--per-page", "2", "--json"])?
        .json()?;
    assert_eq!(
        second["pending"].as_array().map(Vec::len),
        Some(1),
        "{second}"
    );
    assert_eq!(second["pending"][0]["run"], runs[0].as_str(), "{second}");
    let text = repo.orcho(&["inbox", "--page", "1", "--per-page", "2"])?;
    text.expect_code(0);
    assert!(
        text.stdout
            .contains("page 1 of 2 (3 waiting); `--page 2` for the next"),
        "{text}"
    );
    let past = repo.orcho(&["inbox", "--page", "5", "--per-page", "2"])?;
    assert!(
        past.stdout
            .contains("page 5 is past the last (2 of 3 entries)"),
        "{past}"
    );
    // Without `--page`, everything, and the count.
    let all = repo.orcho(&["inbox", "--json"])?.json()?;
    assert_eq!(all["total"], 3, "{all}");
    assert!(all.get("page").is_none(), "{all}");

    // By kind and by age.
    let delivery = repo
        .orcho(&["inbox", "--kind", "delivery", "--json"])?
        .json()?;
    assert_eq!(delivery["total"], 0, "{delivery}");
    let handoffs = repo
        .orcho(&["inbox", "--kind", "handoff", "--json"])?
        .json()?;
    assert_eq!(handoffs["total"], 3, "{handoffs}");
    let young = repo
        .orcho(&["inbox", "--newer-than", "1h", "--json"])?
        .json()?;
    assert_eq!(young["total"], 3, "{young}");
    let old = repo.orcho(&["inbox", "--older-than", "1h"])?;
    assert!(old.stdout.contains("no run is waiting"), "{old}");

    // Slips are refused with what would read.
    let slip = repo.orcho(&["inbox", "--kind", "handof"])?;
    slip.expect_code(2);
    assert!(slip.stderr.contains("did you mean `handoff`"), "{slip}");
    let age = repo.orcho(&["inbox", "--older-than", "an hour"])?;
    age.expect_code(2);
    assert!(age.stderr.contains("--older-than"), "{age}");
    let alone = repo.orcho(&["inbox", "--per-page", "2"])?;
    alone.expect_code(2);
    assert!(alone.stderr.contains("--page"), "{alone}");
    Ok(())
}

#[test]
fn resume_after_a_decision_made_here_acts_on_it_without_showing_the_question_again() -> Result {
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;
    repo.orcho(&[
        "handoff",
        "decide",
        &run,
        "retry_feedback",
        "--note",
        "again",
    ])?
    .expect_code(0);
    let out = repo.orcho(&["resume", &run, "--no-interactive", "--phase", "review=true"])?;
    out.expect_no_panic();
    assert!(!out.stderr.contains("handoff 0001-review —"), "{out}");
    assert!(!out.stderr.contains("actions:"), "{out}");
    assert!(!out.stderr.contains("decided elsewhere"), "{out}");
    assert!(
        out.stderr
            .contains("the handoff is decided; the run goes on with that decision"),
        "{out}"
    );
    assert!(out.stderr.contains("phase `review` attempt 2"), "{out}");
    Ok(())
}

#[test]
fn halt_and_continue_take_a_note_kept_with_the_decision() -> Result {
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;
    let why = "wrong approach: rethinking the parser";
    repo.orcho(&["handoff", "decide", &run, "halt", "--note", why])?
        .expect_code(0);
    // The same again replays; another note is another decision.
    repo.orcho(&["handoff", "decide", &run, "halt", "--note", why])?
        .expect_code(0);
    let other = repo.orcho(&["handoff", "decide", &run, "halt", "--note", "no"])?;
    other.expect_code(6);
    assert!(
        other.stderr.contains("`halt with its note`")
            && other
                .stderr
                .contains("refusing `halt with another note or text`"),
        "{other}"
    );
    let log = repo.orcho(&["log", &run])?;
    assert!(log.stdout.contains("halt by operator"), "{log}");
    assert!(log.stdout.contains(why), "{log}");
    let evidence = repo.orcho(&["--json", "evidence", &run])?.json()?;
    assert_eq!(
        evidence["handoffs"][0]["decision"]["text"], why,
        "{evidence}"
    );
    let audit = repo.orcho(&["--json", "log", &run])?.json()?;
    assert_eq!(audit["decisions"][0]["note"], why, "{audit}");

    // `continue` too, through `orcho decide`.
    let run = paused_at_review(&repo)?;
    repo.orcho(&[
        "decide",
        &run,
        "continue",
        "--note",
        "the reviewer is wrong here",
    ])?
    .expect_code(0);
    let log = repo.orcho(&["log", &run])?;
    assert!(log.stdout.contains("the reviewer is wrong here"), "{log}");
    Ok(())
}
