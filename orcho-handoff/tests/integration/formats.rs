//! Every on-disk document, byte for byte (fixed ids and clock), and
//! hand-written documents from a future Orcho.

use orcho_core::{Cost, Tokens, Usd, error_chain, fs};
use orcho_handoff::{
    Advice, Confidence, HandoffAction,
    advisor::ConfidenceBand,
    decision::{DecidedBy, DecisionRequest},
    handoff::HandoffChoice,
};

use crate::{
    Result,
    fixtures::{fixture, rejected},
};

fn read(path: &camino::Utf8Path) -> Result<String> {
    Ok(std::fs::read_to_string(path)?)
}

#[test]
fn documents_on_disk() -> Result {
    let f = fixture();
    let h = f.store.open(rejected(&f.run))?;
    insta::assert_snapshot!("handoff", read(&f.store.handoff_path(&f.run, h.id()))?);

    let advice = Advice::new(
        HandoffAction::ContinueWithWaiver,
        Confidence::score(0.75).with_band(ConfidenceBand::Medium),
        "the failure is a known flake",
    )
    .with_risks(vec!["a real regression would be hidden".into()])
    .with_expected_files(vec!["src/parse.rs".into()])
    .with_usage(
        Cost::wall(std::time::Duration::from_millis(2300))
            .with_usd(Usd::new(0.0125)?)
            .with_tokens(Tokens::new(1800, 240)),
    );
    let record = f.store.record_advice(
        &f.run,
        h.id(),
        "claude-reviewer",
        &advice,
        DecidedBy::Operator,
    )?;
    insta::assert_snapshot!(
        "advice",
        read(
            &f.root
                .join(".orcho")
                .join("runs/run-1/advice")
                .join(format!("{}.json", record.id()))
        )?
    );

    let d = f.store.decide(
        &f.run,
        h.id(),
        DecisionRequest::new(
            HandoffChoice::waive("known flake, tracked in #12")?,
            DecidedBy::Operator,
        )
        .with_advice(record.id().clone()),
    )?;
    insta::assert_snapshot!("decision", read(d.path())?);

    f.store.resume(&d)?;
    insta::assert_snapshot!(
        "waiver",
        read(
            &f.root
                .join(".orcho")
                .join("runs/run-1/waivers/0001-implement.json")
        )?
    );
    insta::assert_snapshot!("journal", read(&f.store.journal_path(&f.run))?);
    Ok(())
}

#[test]
fn an_autopilot_stop_journal_line() -> Result {
    let f = fixture();
    let h = f.store.open(rejected(&f.run))?;
    let rt = tokio::runtime::Builder::new_current_thread().build()?;
    let advisor = std::sync::Arc::new(
        orcho_handoff::testing::ScriptedAdvisor::new("scripted").then_fail("quota exceeded"),
    );
    let pilot = orcho_handoff::autopilot::Autopilot::new(
        f.store.clone(),
        advisor,
        orcho_handoff::autopilot::AutopilotPolicy::default(),
    );
    rt.block_on(pilot.run(&f.run, h.id(), ""))?;
    let journal = read(&f.store.journal_path(&f.run))?;
    insta::assert_snapshot!(
        "journal_autopilot_stop",
        journal.lines().last().ok_or("empty journal")?
    );
    Ok(())
}

#[test]
fn documents_from_a_newer_orcho_are_refused_not_misread() -> Result {
    let f = fixture();
    let h = f.store.open(rejected(&f.run))?;
    let d = f.store.decide(
        &f.run,
        h.id(),
        DecisionRequest::new(HandoffChoice::Continue, DecidedBy::Operator),
    )?;

    // A future decision record: new schema, a field this build does not know,
    // a payload it could not parse.
    fs::write_atomic(d.path(), br#"{"schema": 2, "kind": "phase_handoff", "run_id": "run-1", "handoff_id": "0001-implement", "payload": {"action": "delegate", "to": "team-b"}, "quorum": 2}"#)?;
    let err = f.store.recorded_decision(&f.run, h.id()).unwrap_err();
    let shown = error_chain(&err).replace(f.root.as_str(), "<root>");
    insta::assert_snapshot!(shown, @"cannot read the decision of handoff `0001-implement` of run `run-1`: caused by: cannot use the decision record of `0001-implement` at `<root>/.orcho/runs/run-1/decisions/0001-implement.json`: caused by: cannot use decision `<root>/.orcho/runs/run-1/decisions/0001-implement.json`: caused by: it was written with schema 2, newer than 1, the newest this build reads; upgrade Orcho to read it");
    // And a writer never replaces it.
    assert!(
        f.store
            .decide(
                &f.run,
                h.id(),
                DecisionRequest::new(HandoffChoice::Continue, DecidedBy::Operator)
            )
            .is_err()
    );
    assert!(read(d.path())?.contains("quorum"));

    // A future handoff document.
    fs::write_atomic(
        &f.store.handoff_path(&f.run, h.id()),
        br#"{"schema": 3, "handoff_id": "0001-implement", "menu": {"v2": true}}"#,
    )?;
    let err = f.store.handoff(&f.run, h.id()).unwrap_err();
    assert!(
        error_chain(&err).contains("written with schema 3, newer than 1"),
        "{}",
        error_chain(&err)
    );

    // A future advice artifact.
    let advice_dir = f.root.join(".orcho").join("runs/run-1/advice");
    fs::create_dir_all(&advice_dir)?;
    fs::write_atomic(
        &advice_dir.join("0001-0001-implement.json"),
        br#"{"schema": 2, "advice_id": "0001-0001-implement", "plan": []}"#,
    )?;
    let err = f
        .store
        .advice(&f.run, &"0001-0001-implement".parse()?)
        .unwrap_err();
    assert!(
        error_chain(&err).contains("written with schema 2, newer than 1"),
        "{}",
        error_chain(&err)
    );

    // A future waiver.
    let waivers = f.root.join(".orcho").join("runs/run-1/waivers");
    fs::create_dir_all(&waivers)?;
    fs::write_atomic(
        &waivers.join("0001-implement.json"),
        br#"{"schema": 2, "scope": "everything"}"#,
    )?;
    let err = f.store.waivers(&f.run).unwrap_err();
    assert!(
        error_chain(&err).contains("written with schema 2, newer than 1"),
        "{}",
        error_chain(&err)
    );
    Ok(())
}

#[test]
fn journal_lines_from_a_newer_orcho_are_skipped() -> Result {
    let f = fixture();
    let h = f.store.open(rejected(&f.run))?;
    let path = f.store.journal_path(&f.run);
    let mut text = read(&path)?;
    text.push_str(r#"{"schema":2,"at":"2026-11-21T12:00:00.000Z","handoff_id":"0001-implement","event":"escalated","to":"team-b"}"#);
    text.push('\n');
    text.push_str(r#"{"schema":1,"at":"2026-11-21T12:00:00.000Z","handoff_id":"0001-implement","event":"reassigned"}"#);
    text.push('\n');
    fs::write_atomic(&path, text.as_bytes())?;
    // Unknown events and newer lines do not break the state or the journal.
    assert_eq!(f.store.journal(&f.run)?.len(), 1);
    assert_eq!(
        f.store.state(&f.run, h.id())?.name(),
        orcho_handoff::handoff::HandoffStateName::Open
    );
    // A torn last line (a crash mid-append) is ignored, then repaired.
    let mut text = read(&path)?;
    text.push_str(r#"{"schema":1,"at":"2026-11-2"#);
    fs::write_atomic(&path, text.as_bytes())?;
    assert_eq!(f.store.journal(&f.run)?.len(), 1);
    let d = f.store.decide(
        &f.run,
        h.id(),
        DecisionRequest::new(HandoffChoice::Continue, DecidedBy::Operator),
    )?;
    f.store.resume(&d)?;
    assert_eq!(f.store.journal(&f.run)?.len(), 3);
    Ok(())
}
