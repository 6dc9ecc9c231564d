//! Random sequences of opens, decisions and resumes against the store and
//! the pure state machine side by side: nothing panics, every call agrees
//! with the model, and replaying the journal (with the decision records it
//! refers to) gives the live state — also for a fresh process.

use std::time::Duration;

use orcho_core::{Clock, HandoffId, error_chain};
use orcho_handoff::{
    decision::{DecidedBy, Decision, DecisionRequest},
    handoff::{
        HandoffChoice, HandoffEvent, HandoffState, HandoffStore, JournalEvent, TransitionErrorKind,
    },
};
use proptest::prelude::*;

use crate::fixtures::{Fixture, fixture, incomplete, rejected};

#[derive(Debug, Clone)]
enum Op {
    Open {
        incomplete: bool,
    },
    Decide {
        handoff: usize,
        choice: usize,
        ci: bool,
    },
    Resume {
        handoff: usize,
    },
    Tick,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => any::<bool>().prop_map(|incomplete| Op::Open { incomplete }),
        4 => (0..4usize, 0..5usize, any::<bool>()).prop_map(|(handoff, choice, ci)| Op::Decide { handoff, choice, ci }),
        3 => (0..4usize).prop_map(|handoff| Op::Resume { handoff }),
        1 => Just(Op::Tick),
    ]
}

fn choice(i: usize) -> HandoffChoice {
    match i {
        0 => HandoffChoice::Continue,
        1 => HandoffChoice::RetryFeedback {
            feedback: "cover the empty case".into(),
        },
        2 => HandoffChoice::RetryFeedback {
            feedback: "rename the helper".into(),
        },
        3 => HandoffChoice::ContinueWithWaiver {
            reason: "known flake".into(),
        },
        _ => HandoffChoice::Halt,
    }
}

/// Replays a handoff's journal lines (and its decision record when the
/// journal has not seen it yet) through the pure state machine.
fn replay_journal(
    store: &HandoffStore,
    f: &Fixture,
    id: &HandoffId,
) -> Result<HandoffState, String> {
    let handoff = store.handoff(&f.run, id).map_err(|e| error_chain(&e))?;
    let record = store
        .recorded_decision(&f.run, id)
        .map_err(|e| error_chain(&e))?
        .map(|r| r.into_decision());
    let mut events = Vec::new();
    let mut decided = false;
    for entry in store.journal(&f.run).map_err(|e| error_chain(&e))? {
        if entry.handoff() != id {
            continue;
        }
        match entry.event() {
            JournalEvent::Decided { digest, .. } => {
                let d = record
                    .clone()
                    .filter(|d| d.digest() == *digest)
                    .ok_or("journaled decision without its record")?;
                events.push(HandoffEvent::Decide(Box::new(d)));
                decided = true;
            }
            JournalEvent::Resumed { .. } => events.push(HandoffEvent::Resume),
            JournalEvent::Opened | JournalEvent::AutopilotStopped { .. } => {}
            other => return Err(format!("unexpected event {other:?}")),
        }
    }
    if !decided && let Some(d) = record {
        events.push(HandoffEvent::Decide(Box::new(d)));
    }
    HandoffState::replay(handoff, events).map_err(|e| error_chain(&e))
}

fn run_ops(ops: &[Op]) -> Result<(), TestCaseError> {
    let f = fixture();
    let mut model: Vec<HandoffState> = Vec::new();
    for op in ops {
        match op {
            Op::Open { incomplete: inc } => {
                let spec = if *inc {
                    incomplete(&f.run)
                } else {
                    rejected(&f.run)
                };
                let h = f
                    .store
                    .open(spec)
                    .map_err(|e| TestCaseError::fail(error_chain(&e)))?;
                prop_assert_eq!(h.id().as_str(), format!("{:04}-implement", model.len() + 1));
                model.push(HandoffState::open(h));
            }
            Op::Decide {
                handoff,
                choice: c,
                ci,
            } => {
                if model.is_empty() {
                    continue;
                }
                let i = handoff % model.len();
                let id = model[i].handoff().id().clone();
                let by = if *ci {
                    DecidedBy::CiAgent
                } else {
                    DecidedBy::Operator
                };
                let request = DecisionRequest::new(choice(*c), by);
                let decision =
                    Decision::new(f.run.clone(), id.clone(), request.clone(), f.clock.now())
                        .map_err(|e| TestCaseError::fail(error_chain(&e)))?;
                let before = model[i].clone();
                let expected = before
                    .clone()
                    .apply(HandoffEvent::Decide(Box::new(decision)));
                let got = f.store.decide(&f.run, &id, request);
                match (expected, got) {
                    (Ok(after), Ok(recorded)) => {
                        prop_assert_eq!(recorded.is_replay(), after == before);
                        prop_assert_eq!(Some(recorded.decision()), after.decision());
                        model[i] = after;
                    }
                    (Err(e), Err(g)) => match e.kind() {
                        TransitionErrorKind::NotAvailable { .. } => {
                            prop_assert!(g.is_not_available(), "{}", error_chain(&g))
                        }
                        TransitionErrorKind::Conflict { .. } => {
                            prop_assert!(g.is_conflict(), "{}", error_chain(&g))
                        }
                        other => prop_assert!(false, "unexpected model error {other:?}"),
                    },
                    (e, g) => prop_assert!(false, "model {e:?} vs store {g:?}"),
                }
            }
            Op::Resume { handoff } => {
                if model.is_empty() {
                    continue;
                }
                let i = handoff % model.len();
                let id = model[i].handoff().id().clone();
                let expected = model[i].clone().apply(HandoffEvent::Resume);
                let got = f.store.resume_handoff(&f.run, &id);
                match (expected, got) {
                    (Ok(after), Ok(next)) => {
                        prop_assert_eq!(after.next_step(), Some(&next));
                        model[i] = after;
                    }
                    (Err(e), Err(g)) => match e.kind() {
                        TransitionErrorKind::Pending { available } => {
                            prop_assert!(g.is_pending());
                            prop_assert_eq!(g.available_actions(), Some(*available));
                        }
                        TransitionErrorKind::Terminal => prop_assert!(g.is_terminal()),
                        TransitionErrorKind::AlreadyResumed => prop_assert!(g.is_already_resumed()),
                        other => prop_assert!(false, "unexpected model error {other:?}"),
                    },
                    (e, g) => prop_assert!(false, "model {e:?} vs store {g:?}"),
                }
            }
            Op::Tick => f.clock.advance(Duration::from_millis(1500)),
        }
    }
    let fresh = HandoffStore::new(f.store.storage().clone(), f.clock.clone());
    for state in &model {
        let id = state.handoff().id();
        let live = f
            .store
            .state(&f.run, id)
            .map_err(|e| TestCaseError::fail(error_chain(&e)))?;
        prop_assert_eq!(&live, state, "live state equals the model");
        let replayed = replay_journal(&fresh, &f, id).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&replayed, state, "journal replay equals the live state");
        let other = fresh
            .state(&f.run, id)
            .map_err(|e| TestCaseError::fail(error_chain(&e)))?;
        prop_assert_eq!(&other, state, "a fresh process sees the same state");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn random_event_sequences_agree_with_the_model_and_replay(ops in prop::collection::vec(op(), 1..24)) {
        run_ops(&ops)?;
    }
}

proptest! {
    /// The pure machine alone, over many more sequences: never panics, and
    /// a refused event always hands back the state it was given.
    #[test]
    fn pure_transitions_never_panic(events in prop::collection::vec((0..6usize, 0..5usize), 0..40)) {
        let f = fixture();
        let h = orcho_handoff::handoff::PhaseHandoff::new("0001-implement".parse().unwrap(), rejected(&f.run), f.clock.now());
        let mut state = HandoffState::open(h);
        for (kind, c) in events {
            let event = if kind == 0 {
                HandoffEvent::Resume
            } else {
                let d = Decision::new(f.run.clone(), "0001-implement".parse().unwrap(), DecisionRequest::new(choice(c), DecidedBy::Operator), f.clock.now()).unwrap();
                HandoffEvent::Decide(Box::new(d))
            };
            let before = state.clone();
            state = match state.apply(event) {
                Ok(next) => next,
                Err(e) => {
                    prop_assert_eq!(e.state(), &before);
                    e.into_state()
                }
            };
        }
    }
}
