//! The handoff store on a real file system: decide, resume, replay,
//! conflicts, waivers, and what a new process sees.

use std::time::Duration;

use orcho_core::{Severity, error_chain};
use orcho_handoff::{
    Advice, Confidence, HandoffAction,
    decision::{DecidedBy, DecisionRequest},
    handoff::{
        HandoffChoice, HandoffRefusal, HandoffStateName, HandoffStore, JournalEvent, NextStep,
    },
    point::PointErrorKind,
};

use crate::{
    Result,
    fixtures::{finding, fixture, incomplete, rejected},
};

fn operator(choice: HandoffChoice) -> DecisionRequest<HandoffChoice> {
    DecisionRequest::new(choice, DecidedBy::Operator)
}

#[test]
fn decide_records_without_advancing_and_resume_returns_the_next_step() -> Result {
    let f = fixture();
    let h = f.store.open(rejected(&f.run))?;
    assert_eq!(h.id().as_str(), "0001-implement");

    let recorded = f.store.decide(
        &f.run,
        h.id(),
        operator(HandoffChoice::retry("cover empty input")?),
    )?;
    assert!(!recorded.is_replay());
    assert_eq!(
        f.store.state(&f.run, h.id())?.name(),
        HandoffStateName::Decided
    );
    let events: Vec<_> = f
        .store
        .journal(&f.run)?
        .into_iter()
        .map(|e| e.event().clone())
        .collect();
    assert_eq!(
        events,
        [JournalEvent::Opened],
        "decide does not advance the run"
    );

    let NextStep::Retry(grant) = f.store.resume(&recorded)? else {
        panic!("expected a retry");
    };
    assert_eq!(grant.feedback(), "cover empty input");
    assert_eq!(grant.extra_attempts(), 1);
    assert_eq!(
        grant.round(),
        1,
        "the grant names the round that paused; the limit is not raised"
    );
    assert_eq!(
        f.store.state(&f.run, h.id())?.name(),
        HandoffStateName::Resumed
    );
    let events: Vec<_> = f
        .store
        .journal(&f.run)?
        .into_iter()
        .map(|e| e.event().clone())
        .collect();
    assert!(
        matches!(
            events.as_slice(),
            [
                JournalEvent::Opened,
                JournalEvent::Decided {
                    action: HandoffAction::RetryFeedback,
                    ..
                },
                JournalEvent::Resumed {
                    action: HandoffAction::RetryFeedback
                }
            ]
        ),
        "{events:?}"
    );

    // A new rejection after the retry is a new handoff with a new id.
    let again = f.store.open(rejected(&f.run).with_round(2))?;
    assert_eq!(again.id().as_str(), "0002-implement");
    assert_eq!(
        f.store.state(&f.run, again.id())?.name(),
        HandoffStateName::Open
    );
    Ok(())
}

#[test]
fn resume_while_pending_names_the_handoff_and_its_actions() -> Result {
    let f = fixture();
    let h = f.store.open(incomplete(&f.run))?;
    let err = f.store.resume_handoff(&f.run, h.id()).unwrap_err();
    assert!(err.is_pending());
    assert_eq!(err.handoff(), Some(h.id()));
    assert_eq!(err.available_actions(), Some(h.available_actions()));
    insta::assert_snapshot!(error_chain(&err), @"cannot resume handoff `0001-implement` of run `run-1`: caused by: a decision is pending; decide one of retry_feedback, continue_with_waiver, halt first");
    assert!(f.store.recorded_decision(&f.run, h.id())?.is_none());
    assert_eq!(
        f.store.state(&f.run, h.id())?.name(),
        HandoffStateName::Open,
        "nothing changed"
    );
    Ok(())
}

#[test]
fn resume_after_halt_is_refused_because_the_run_is_terminal() -> Result {
    let f = fixture();
    let h = f.store.open(rejected(&f.run))?;
    let halt = f
        .store
        .decide(&f.run, h.id(), operator(HandoffChoice::Halt))?;
    assert_eq!(
        f.store.state(&f.run, h.id())?.name(),
        HandoffStateName::Halted
    );

    let err = f.store.resume(&halt).unwrap_err();
    assert!(err.is_terminal());
    insta::assert_snapshot!(error_chain(&err), @"cannot resume handoff `0001-implement` of run `run-1`: caused by: it was halted; the run is terminal and cannot be resumed");
    assert!(
        f.store
            .resume_handoff(&f.run, h.id())
            .unwrap_err()
            .is_terminal()
    );

    // The halt stands: the same decision replays, another conflicts.
    assert!(
        f.store
            .decide(&f.run, h.id(), operator(HandoffChoice::Halt))?
            .is_replay()
    );
    let err = f
        .store
        .decide(&f.run, h.id(), operator(HandoffChoice::Continue))
        .unwrap_err();
    assert!(err.is_conflict());
    assert_eq!(
        f.store.state(&f.run, h.id())?.name(),
        HandoffStateName::Halted
    );
    Ok(())
}

#[test]
fn a_second_resume_is_refused() -> Result {
    let f = fixture();
    let h = f.store.open(rejected(&f.run))?;
    let d = f
        .store
        .decide(&f.run, h.id(), operator(HandoffChoice::Continue))?;
    assert_eq!(f.store.resume(&d)?, NextStep::Continue);
    let err = f.store.resume(&d).unwrap_err();
    assert!(err.is_already_resumed());
    let resumed = f
        .store
        .journal(&f.run)?
        .iter()
        .filter(|e| matches!(e.event(), JournalEvent::Resumed { .. }))
        .count();
    assert_eq!(resumed, 1, "the refused resume journaled nothing");
    Ok(())
}

#[test]
fn decisions_are_validated_against_the_persisted_menu() -> Result {
    let f = fixture();
    let h = f.store.open(incomplete(&f.run))?;
    let err = f
        .store
        .decide(&f.run, h.id(), operator(HandoffChoice::Continue))
        .unwrap_err();
    assert!(err.is_not_available());
    insta::assert_snapshot!(error_chain(&err), @"cannot decide handoff `0001-implement` of run `run-1`: caused by: `continue` is not available; available: retry_feedback, continue_with_waiver, halt");
    assert!(
        f.store.recorded_decision(&f.run, h.id())?.is_none(),
        "nothing was written"
    );

    let missing = f
        .store
        .decide(&f.run, &"9999-nope".parse()?, operator(HandoffChoice::Halt))
        .unwrap_err();
    assert!(missing.is_not_found());
    Ok(())
}

#[test]
fn an_identical_decision_replays_with_its_original_time_and_a_different_one_conflicts() -> Result {
    let f = fixture();
    let h = f.store.open(rejected(&f.run))?;
    let first = f.store.decide(
        &f.run,
        h.id(),
        operator(HandoffChoice::waive("known flaky on CI")?),
    )?;
    f.clock.advance(Duration::from_secs(3600));
    let again = f.store.decide(
        &f.run,
        h.id(),
        operator(HandoffChoice::waive("known flaky on CI")?),
    )?;
    assert!(again.is_replay());
    assert_eq!(again.decision().decided_at(), first.decision().decided_at());
    assert_eq!(again.decision(), first.decision());

    let err = f
        .store
        .decide(
            &f.run,
            h.id(),
            operator(HandoffChoice::waive("something else")?),
        )
        .unwrap_err();
    assert!(err.is_conflict());
    let shown = error_chain(&err).replace(f.root.as_str(), "<root>");
    insta::assert_snapshot!(shown, @"cannot decide handoff `0001-implement` of run `run-1`: caused by: cannot use the decision record of `0001-implement` at `<root>/.orcho/runs/run-1/decisions/0001-implement.json`: caused by: a different decision is already recorded (`continue_with_waiver with its note` by operator at 2026-11-21T12:00:00.000Z); refusing `continue_with_waiver with another note or text`");
    Ok(())
}

#[test]
fn decisions_keep_the_advice_they_used_and_refuse_unknown_advice() -> Result {
    let f = fixture();
    let h = f.store.open(rejected(&f.run))?;
    let other = f.store.open(rejected(&f.run))?;
    let advice = Advice::new(
        HandoffAction::RetryFeedback,
        Confidence::score(0.9),
        "specific failure",
    )
    .with_retry_feedback("handle empty input");
    let record = f
        .store
        .record_advice(&f.run, h.id(), "reviewer", &advice, DecidedBy::Operator)?;
    assert_eq!(record.id().as_str(), "0001-0001-implement");
    assert_eq!(f.store.advice(&f.run, record.id())?, record);

    let err = f
        .store
        .decide(
            &f.run,
            h.id(),
            operator(HandoffChoice::Halt).with_advice("0042-x".parse()?),
        )
        .unwrap_err();
    assert!(
        matches!(err.refusal(), Some(HandoffRefusal::UnknownAdvice(_))),
        "{}",
        error_chain(&err)
    );
    let err = f
        .store
        .decide(
            &f.run,
            other.id(),
            operator(HandoffChoice::Halt).with_advice(record.id().clone()),
        )
        .unwrap_err();
    insta::assert_snapshot!(error_chain(&err), @"cannot decide handoff `0002-implement` of run `run-1`: caused by: advice `0001-0001-implement` is about handoff `0001-implement`");

    let d = f.store.decide(
        &f.run,
        h.id(),
        operator(HandoffChoice::retry("handle empty input")?).with_advice(record.id().clone()),
    )?;
    assert_eq!(d.decision().advice(), Some(record.id()));
    // Advice is never applied by itself: recording it decided nothing.
    assert!(f.store.recorded_decision(&f.run, other.id())?.is_none());
    Ok(())
}

#[test]
fn waivers_are_durable_and_cover_only_what_was_waived() -> Result {
    let f = fixture();
    let h = f.store.open(rejected(&f.run))?;
    assert!(f.store.waivers(&f.run)?.is_empty());
    let d = f.store.decide(
        &f.run,
        h.id(),
        operator(HandoffChoice::waive(
            "parse_empty is flaky; tracked in #12",
        )?),
    )?;
    let NextStep::ContinueWithWaiver(waiver) = f.store.resume(&d)? else {
        panic!("expected a waiver");
    };
    let set = f.store.waivers(&f.run)?;
    assert_eq!(
        set.waivers(),
        std::slice::from_ref(&waiver),
        "what resume returned is on disk"
    );
    assert_eq!(waiver.handoff(), h.id());
    assert_eq!(waiver.reason(), "parse_empty is flaky; tracked in #12");
    assert_eq!(waiver.waived_by(), DecidedBy::Operator);

    assert!(set.covers_finding(&finding("test `parse_empty` failed").with_line(99)));
    assert!(
        !set.covers_finding(&finding("test `parse_list` failed")),
        "another finding is not covered"
    );
    assert!(
        !set.covers_finding(
            &orcho_core::Finding::new("lint", Severity::High, "test `parse_empty` failed")
                .with_file("src/parse.rs")
        ),
        "same title from another source is another finding"
    );
    assert!(set.covers_gate(&"tests".parse()?));
    assert!(
        !set.covers_gate(&"lint".parse()?),
        "another gate is not covered"
    );
    Ok(())
}

#[test]
fn a_new_process_sees_the_same_state_and_can_resume_a_decision_made_by_another() -> Result {
    let f = fixture();
    let h = f.store.open(rejected(&f.run))?;
    f.store
        .decide(&f.run, h.id(), operator(HandoffChoice::Continue))?;

    // "Another process": a fresh store over the same root.
    let other = HandoffStore::new(f.store.storage().clone(), f.clock.clone());
    assert_eq!(other.state(&f.run, h.id())?, f.store.state(&f.run, h.id())?);
    let token = other
        .recorded_decision(&f.run, h.id())?
        .ok_or("decision missing")?;
    assert!(token.is_replay(), "read back, not created");
    assert_eq!(other.resume(&token)?, NextStep::Continue);
    assert_eq!(
        f.store.state(&f.run, h.id())?.name(),
        HandoffStateName::Resumed
    );
    assert_eq!(f.store.handoffs(&f.run)?, vec![h]);
    Ok(())
}

#[test]
fn a_journal_that_disagrees_with_the_decision_record_is_reported() -> Result {
    let f = fixture();
    let h = f.store.open(rejected(&f.run))?;
    let d = f
        .store
        .decide(&f.run, h.id(), operator(HandoffChoice::Continue))?;
    f.store.resume(&d)?;
    // Replace the decision record with a different, self-consistent one.
    std::fs::remove_file(d.path())?;
    f.store
        .decide(&f.run, h.id(), operator(HandoffChoice::Halt))?;
    let err = f.store.state(&f.run, h.id()).unwrap_err();
    assert!(
        matches!(err.kind(), PointErrorKind::Corrupt(_)),
        "{}",
        error_chain(&err)
    );
    Ok(())
}

#[test]
fn threads_racing_to_resume_or_open_stay_consistent() -> Result {
    let f = fixture();
    let h = f.store.open(rejected(&f.run))?;
    let d = f.store.decide(
        &f.run,
        h.id(),
        operator(HandoffChoice::retry("one extra attempt")?),
    )?;
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..6).map(|_| s.spawn(|| f.store.resume(&d))).collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });
    let granted = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(granted, 1, "exactly one resume grants the extra attempt");
    assert!(
        results
            .iter()
            .filter_map(|r| r.as_ref().err())
            .all(|e| e.is_already_resumed())
    );

    let opened: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..6)
            .map(|_| s.spawn(|| f.store.open(rejected(&f.run))))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("no panic"))
            .collect()
    });
    let mut ids: Vec<String> = opened
        .into_iter()
        .map(|r| r.map(|h| h.id().to_string()))
        .collect::<std::result::Result<_, _>>()?;
    ids.sort();
    assert_eq!(
        ids,
        [
            "0002-implement",
            "0003-implement",
            "0004-implement",
            "0005-implement",
            "0006-implement",
            "0007-implement"
        ]
    );
    assert_eq!(f.store.handoffs(&f.run)?.len(), 7);
    Ok(())
}
