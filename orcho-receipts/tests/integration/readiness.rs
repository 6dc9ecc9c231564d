//! The readiness summary, the exploratory log and the acceptance rule.

use orcho_core::{Timestamp, Verdict};
use orcho_receipts::{
    ExploratoryEntry, ExploratoryLog, NextAction, ReceiptStatus, apply_acceptance,
};

use crate::{
    Result,
    receipts::{fixture, name},
};

#[test]
fn summary_snapshots_and_forced_rejection() -> Result {
    let f = fixture()?;
    let v = f.verifier()?;
    v.check_environment(&"default".parse()?)?;
    v.run_command(&name("test"), None)?;
    v.run_command(&name("lint"), None)?;
    v.run_command(&name("formatter"), None)?;
    let log = ExploratoryLog::new(v.store());
    for argv in [["cargo", "test"], ["cargo", "check"]] {
        log.record(&ExploratoryEntry::new(
            "2026-11-21T12:00:00Z".parse::<Timestamp>()?,
            argv.iter().map(ToString::to_string).collect(),
            Some(0),
        ))?;
    }
    let summary = v.readiness()?;
    assert!(!summary.is_ready());
    assert_eq!(summary.exploratory_commands, 2);
    assert_eq!(summary.required.len(), 2);
    assert_eq!(summary.optional.len(), 4);
    insta::assert_snapshot!("summary_json", summary.to_json());
    insta::assert_snapshot!("summary_markdown", summary.to_markdown());

    let acceptance = apply_acceptance(Verdict::Approved, &summary);
    assert_eq!(acceptance.verdict, Verdict::Rejected);
    assert!(acceptance.was_forced());
    // `lint` failed; `test` passed; the formatter changed the subject after
    // both ran, so both say to run again (the change may fix `lint`).
    assert_eq!(acceptance.gaps.len(), 2);
    let gap = acceptance
        .gaps_for("lint")
        .next()
        .ok_or("no gap for lint")?;
    assert_eq!(gap.next_action(), NextAction::Rerun);
    let gap = acceptance
        .gaps_for("test")
        .next()
        .ok_or("no gap for test")?;
    assert_eq!(gap.next_action(), NextAction::Rerun);
    assert!(
        acceptance.gaps_for("formatter").next().is_none(),
        "optional commands never block"
    );
    Ok(())
}

#[test]
fn next_actions_per_status() -> Result {
    let f = fixture()?;
    let v = f.verifier()?;
    v.run_command(&name("test"), None)?;
    // missing (lint never ran) -> re-run
    let acceptance = apply_acceptance(Verdict::Approved, &v.readiness()?);
    assert_eq!(
        acceptance
            .gaps_for("lint")
            .next()
            .ok_or("gap")?
            .next_action(),
        NextAction::Rerun
    );
    // stale -> re-run
    crate::write(&f.checkout, "src/lib.rs", "edited\n", 0o644)?;
    let acceptance = apply_acceptance(Verdict::Approved, &v.readiness()?);
    assert_eq!(
        acceptance
            .gaps_for("test")
            .next()
            .ok_or("gap")?
            .next_action(),
        NextAction::Rerun
    );
    // invalid -> investigate
    crate::write_bytes(f.latest("test"), b"{\"schema\": 1")?;
    let acceptance = apply_acceptance(Verdict::Incomplete, &v.readiness()?);
    assert_eq!(acceptance.verdict, Verdict::Rejected);
    assert_eq!(
        acceptance
            .gaps_for("test")
            .next()
            .ok_or("gap")?
            .next_action(),
        NextAction::Investigate
    );
    Ok(())
}

#[test]
fn exploratory_commands_never_satisfy_a_requirement() -> Result {
    let f = fixture()?;
    let v = f.verifier()?;
    let log = ExploratoryLog::new(v.store());
    // The agent ran the very same argv by hand, and it passed.
    let entry = ExploratoryEntry::new(
        "2026-11-21T12:00:00Z".parse::<Timestamp>()?,
        vec![
            "sh".into(),
            "-c".into(),
            "test -f src/lib.rs && echo ok".into(),
        ],
        Some(0),
    );
    assert!(!entry.is_authoritative());
    log.record(&entry)?;
    assert_eq!(log.entries()?, [entry]);
    let summary = v.readiness()?;
    assert_eq!(summary.exploratory_commands, 1);
    assert_eq!(summary.required[0].status, ReceiptStatus::Missing);
    assert_eq!(
        apply_acceptance(Verdict::Approved, &summary).verdict,
        Verdict::Rejected
    );
    Ok(())
}

#[test]
fn all_present_keeps_the_reviewer_verdict() -> Result {
    let f = fixture()?;
    let contract = super::receipts::CONTRACT.replace("required: [test, lint]", "required: [test]");
    let v = f.verifier_with(&contract, f.store())?;
    v.run_command(&name("test"), None)?;
    let summary = v.readiness()?;
    assert!(summary.is_ready());
    for reviewer in [Verdict::Approved, Verdict::Rejected, Verdict::Incomplete] {
        let acceptance = apply_acceptance(reviewer, &summary);
        assert_eq!(acceptance.verdict, reviewer);
        assert!(!acceptance.was_forced());
    }
    Ok(())
}

#[test]
fn run_exploratory_shows_the_output_logs_it_and_proves_nothing() -> Result {
    let f = fixture()?;
    let v = f.verifier()?;
    let (mut out, mut err) = (Vec::new(), Vec::new());
    // The same argv as the declared `test`, run by hand, from the declared
    // environment's working directory.
    let argv: Vec<String> = ["sh", "-c", "test -f src/lib.rs && echo ok; echo side >&2"]
        .map(str::to_owned)
        .to_vec();
    let (entry, outcome) = v.run_exploratory(
        &argv,
        None,
        None,
        &mut |b| out.extend_from_slice(b),
        &mut |b| err.extend_from_slice(b),
    )?;
    assert_eq!(out, b"ok\n");
    assert_eq!(err, b"side\n");
    assert!(outcome.status.success());
    assert_eq!(entry.exit_code, Some(0));
    assert_eq!(ExploratoryLog::new(v.store()).entries()?, [entry]);
    let summary = v.readiness()?;
    assert_eq!(summary.exploratory_commands, 1);
    assert_eq!(summary.required[0].status, ReceiptStatus::Missing);

    // Cancelled: logged without an exit code.
    let token = orcho_receipts::exec::CancelToken::new();
    token.cancel();
    let (entry, outcome) = v.run_exploratory(
        &["sleep".to_owned(), "30".to_owned()],
        Some(&"default".parse()?),
        Some(&token),
        &mut |_| {},
        &mut |_| {},
    )?;
    assert_eq!(outcome.status, orcho_receipts::exec::ExitStatus::Cancelled);
    assert_eq!(entry.exit_code, None);
    // An environment that is not declared is refused, and not logged.
    let refused = v.run_exploratory(
        &argv,
        Some(&"nope".parse()?),
        None,
        &mut |_| {},
        &mut |_| {},
    );
    assert!(refused.is_err_and(|e| e.is_not_declared()));
    assert_eq!(ExploratoryLog::new(v.store()).count()?, 2);
    Ok(())
}
