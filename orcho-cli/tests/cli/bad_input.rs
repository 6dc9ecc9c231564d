//! Bad input is an error message and an exit code, never a panic: 1 for
//! what cannot be done, 2 for malformed arguments (what clap refuses, and
//! names the profile does not declare).

use crate::{
    Result,
    support::{QUICK, REVIEW, Repo, paused_at_review},
};

/// A well-formed run id that no run has.
const UNKNOWN_RUN: &str = "20260101T000000000Z-0123456789abcdef";

#[test]
fn a_missing_profile_file_is_named() -> Result {
    let repo = Repo::new(QUICK)?;
    let out = repo.orcho(&["status", "--profile", "missing.yaml"])?;
    out.expect_code(1);
    assert!(out.stderr.contains("missing.yaml"), "{out}");
    assert!(out.stderr.contains("hint:"), "{out}");
    Ok(())
}

#[test]
fn a_profile_with_a_typo_is_located() -> Result {
    let repo = Repo::new(QUICK)?;
    repo.write("typo.yaml", "schema: 1\nname: typo\nphasez: []\n")?;
    let out = repo.orcho(&["status", "--profile", "typo.yaml"])?;
    out.expect_code(1);
    assert!(out.stderr.contains("typo.yaml"), "{out}");
    assert!(out.stderr.contains("phasez"), "{out}");
    assert!(out.stderr.contains("line 3"), "{out}");
    Ok(())
}

#[test]
fn a_gates_with_block_is_checked_by_every_command_that_reads_the_profile() -> Result {
    let repo = Repo::new(QUICK)?;
    repo.write(
        "gated.yaml",
        "schema: 1\nname: gated\nphases:\n  - name: implement\n    role: implement\n    gates:\n      \
         - { name: style, uses: command, on_fail: halt, with: { argvs: [python3, style.py] } }\n",
    )?;
    for args in [
        &["status", "--profile", "gated.yaml"][..],
        &["profile", "show", "gated.yaml"][..],
    ] {
        let out = repo.orcho(args)?;
        out.expect_no_panic().expect_code(1);
        assert!(out.stderr.contains("line 7"), "{args:?}: {out}");
        assert!(
            out.stderr.contains("did you mean `argv`"),
            "{args:?}: {out}"
        );
    }
    Ok(())
}

#[test]
fn an_unknown_run_points_at_the_inbox() -> Result {
    let repo = Repo::new(REVIEW)?;
    for args in [
        &["resume", UNKNOWN_RUN, "--no-interactive"][..],
        &["handoff", "show", UNKNOWN_RUN],
        &["handoff", "decide", UNKNOWN_RUN, "continue"],
        &["delivery", "show", UNKNOWN_RUN],
        // Run ids are any portable file name, so this one is well formed
        // too: unknown, not a usage error.
        &["handoff", "decide", "not-a-run-id", "continue"],
    ] {
        let out = repo.orcho(args)?;
        out.expect_code(1);
        assert!(out.stderr.contains("no such run"), "{args:?}\n{out}");
        assert!(out.stderr.contains("orcho inbox"), "{args:?}\n{out}");
    }
    // A mistyped `latest` is said to be one.
    let out = repo.orcho(&["run", "--follow-up", "latst"])?;
    out.expect_code(1);
    assert!(out.stderr.contains("did you mean `latest`?"), "{out}");
    Ok(())
}

#[test]
fn malformed_arguments_are_usage_errors() -> Result {
    let repo = Repo::new(REVIEW)?;
    for args in [
        // Not a run id: it would name a path outside the store.
        &["handoff", "decide", "../not-a-run-id", "continue"][..],
        &["resume", "a/b"],
        &["handoff", "decide", UNKNOWN_RUN, "maybe"],
        &["delivery", "decide", UNKNOWN_RUN, "ship-it"],
        &["run", "--no-such-flag"],
    ] {
        let out = repo.orcho(args)?;
        out.expect_code(2);
        assert!(out.stderr.contains("error:"), "{args:?}\n{out}");
    }
    Ok(())
}

#[test]
fn a_corrupt_journal_line_is_an_error_naming_it() -> Result {
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;
    let path = repo.run_dir(&run).join("journal.jsonl");
    let text = std::fs::read_to_string(&path)?;
    let mut lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() > 2, "{text}");
    // Damage in the middle, not a torn last line.
    lines[1] = "{\"schema\":1,\"seq\":2,garbage";
    let damaged = lines.join("\n") + "\n";
    orcho::core::fs::write_atomic(&path, damaged.as_bytes())?;
    for args in [
        &["resume", &run, "--no-interactive"][..],
        &["handoff", "decide", &run, "continue"],
    ] {
        let out = repo.orcho(args)?;
        out.expect_code(1);
        assert!(out.stderr.contains("journal.jsonl"), "{args:?}\n{out}");
        assert!(out.stderr.contains("line 2"), "{args:?}\n{out}");
    }
    Ok(())
}

#[test]
fn a_corrupt_state_snapshot_is_rebuilt_from_the_journal() -> Result {
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;
    let path = repo.run_dir(&run).join("run.json");
    orcho::core::fs::write_atomic(&path, b"{ not json")?;
    // `run.json` is a snapshot; the journal is the source of truth, so the
    // run reopens where it was and the snapshot is written again.
    let out = repo.orcho(&["resume", &run, "--no-interactive", "--json"])?;
    out.expect_code(4);
    assert_eq!(out.json()?["awaiting"], "handoff", "{out}");
    let snapshot: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    assert_eq!(snapshot["state"]["status"], "awaiting_phase_handoff");
    Ok(())
}

#[test]
fn a_corrupt_cli_record_is_an_error_naming_it() -> Result {
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;
    let path = repo.run_dir(&run).join("host.json");
    for damage in [
        &b"[1, 2"[..],
        br#"{"schema":1,"host":{"schema":1,"profile":7}}"#,
    ] {
        orcho::core::fs::write_atomic(&path, damage)?;
        // Driving the run needs the record: said, naming it.
        let out = repo.orcho(&["resume", &run, "--no-interactive"])?;
        out.expect_code(1);
        assert!(out.stderr.contains("host.json"), "{out}");
        // Reading and deciding need no profile, so no record either.
        repo.orcho(&["handoff", "show", &run])?.expect_code(0);
    }
    Ok(())
}

/// The first `orcho` kept what it needs to resume a run in
/// `runs/<id>/cli.json`; such a run still resumes.
#[test]
fn a_run_recorded_by_the_first_cli_resumes() -> Result {
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;
    let host = repo.run_dir(&run).join("host.json");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&host)?)?;
    std::fs::remove_file(&host)?;
    let legacy = repo.run_dir(&run).join("cli.json");
    orcho::core::fs::write_atomic(&legacy, &serde_json::to_vec_pretty(&doc["host"])?)?;
    repo.orcho(&["handoff", "decide", &run, "continue"])?
        .expect_code(0);
    // Driven on with the phase commands and profile the record names, to
    // its end: it changed nothing, so there is nothing to deliver.
    let out = repo.orcho(&["resume", &run, "--no-interactive", "--json"])?;
    out.expect_code(0);
    assert_eq!(out.json()?["status"], "completed", "{out}");
    Ok(())
}

#[test]
fn an_unknown_phase_is_refused_before_a_run_starts() -> Result {
    let repo = Repo::new(REVIEW)?;
    let out = repo.orcho(&["run", "--phase", "deploy=true", "--no-interactive"])?;
    out.expect_code(2);
    assert!(out.stderr.contains("no phase `deploy`"), "{out}");
    assert!(!repo.dir().join(".orcho/runs").exists(), "{out}");
    Ok(())
}

#[test]
fn arguments_that_name_nothing_declared_are_usage_errors_and_run_nothing() -> Result {
    let repo = Repo::new(REVIEW)?;
    for (args, says) in [
        (&["run", "--phase", "review"][..], "must be PHASE=COMMAND"),
        (
            &["run", "--phase", "review=sh -c 'unclosed"][..],
            "unbalanced quote",
        ),
        (
            &["run", "--phase", "reviw=true"][..],
            "did you mean `review`?",
        ),
    ] {
        let out = repo.orcho(args)?;
        out.expect_no_panic().expect_code(2);
        assert!(out.stderr.contains(says), "{args:?}: {out}");
        assert!(!repo.dir().join(".orcho/runs").exists(), "{args:?}: {out}");
    }
    let repo = Repo::new(QUICK)?;
    let out = repo.orcho(&["verify", "tst"])?;
    out.expect_no_panic().expect_code(2);
    assert!(out.stderr.contains("did you mean `test`?"), "{out}");
    assert!(!out.stderr.contains("running"), "{out}");
    Ok(())
}

#[test]
fn a_handoff_action_without_its_text_names_the_flag() -> Result {
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;
    let out = repo.orcho(&["handoff", "decide", &run, "continue_with_waiver"])?;
    out.expect_no_panic().expect_code(2);
    assert!(out.stderr.contains("requires text"), "{out}");
    assert!(out.stderr.contains("--note"), "{out}");
    // The old names still work.
    for flag in ["--text", "--note"] {
        let out = repo.orcho(&[
            "handoff",
            "decide",
            &run,
            "continue_with_waiver",
            flag,
            "known",
        ])?;
        out.expect_no_panic();
        assert_ne!(out.code(), Some(2), "{flag}: {out}");
    }
    Ok(())
}

#[test]
fn every_slip_says_did_you_mean_the_same_way() -> Result {
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;
    for (args, said) in [
        (vec!["stauts"], "(did you mean `status`?)"),
        (vec!["sevre"], "(did you mean `serve`?)"),
        (vec!["status", "--jsn"], "(did you mean `--json`?)"),
        (
            vec!["handoff", "decide", &run, "contnue"],
            "(did you mean `continue`?)",
        ),
        (vec!["decide", &run, "halr"], "(did you mean `halt`?)"),
        (
            vec!["permission", "decide", &run, "alow"],
            "(did you mean `allow`?)",
        ),
        (
            vec!["intake", "decide", &run, "inclde"],
            "(did you mean `include`?)",
        ),
        (
            vec!["delivery", "decide", &run, "aprove"],
            "(did you mean `approve`?)",
        ),
    ] {
        let out = repo.orcho(&args)?;
        out.expect_no_panic();
        assert_ne!(out.code(), Some(0), "{args:?}: {out}");
        assert!(out.stderr.contains(said), "{args:?}: {out}");
        assert!(!out.stderr.contains("tip:"), "{args:?}: {out}");
    }
    // A profile key says it the same way.
    repo.write("orcho.yaml", &REVIEW.replace("phases:", "phasess:"))?;
    let out = repo.orcho(&["status"])?;
    assert!(out.stderr.contains("(did you mean `phases`?)"), "{out}");
    Ok(())
}
