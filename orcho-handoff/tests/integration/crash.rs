//! A process may die at any line: a child opening, deciding and resuming
//! handoffs in a loop is SIGKILLed at many different moments, and after
//! each kill a fresh store reads every handoff into a legal state and
//! finishes what the child left half done.

use std::{sync::Arc, thread::sleep, time::Duration};

use camino::Utf8PathBuf;
use orcho_core::{FixedClock, RunId, error_chain};
use orcho_handoff::{
    decision::{DecidedBy, DecisionRequest},
    handoff::{HandoffChoice, HandoffState, HandoffStore, NextStep},
};

use crate::{
    Result,
    child::{child_arg, spawn},
    fixtures::{T0, rejected},
};

const KILLS: u64 = 16;

fn store(dir: &Utf8PathBuf) -> Result<HandoffStore> {
    Ok(HandoffStore::in_dir(
        dir.join(".orcho"),
        Arc::new(FixedClock::new(T0.parse()?)),
    ))
}

fn choice(i: usize) -> Result<HandoffChoice> {
    Ok(match i % 4 {
        0 => HandoffChoice::retry(format!("attempt {i}: cover the empty case"))?,
        1 => HandoffChoice::waive(format!("attempt {i}: known flake"))?,
        2 => HandoffChoice::Continue,
        _ => HandoffChoice::Halt,
    })
}

#[test]
#[ignore = "child process of a_process_killed_at_any_line_leaves_a_store_that_replays"]
fn child_handoff_loop() -> Result {
    let Some(arg) = child_arg() else {
        return Ok(());
    };
    let dir = Utf8PathBuf::from(arg.into_string().map_err(|_| "non-UTF-8 argument")?);
    let store = store(&dir)?;
    let run: RunId = "crash".parse()?;
    for i in 0..100_000 {
        let h = store.open(rejected(&run))?;
        let d = store.decide(
            &run,
            h.id(),
            DecisionRequest::new(choice(i)?, DecidedBy::Operator),
        )?;
        if d.decision().payload() != &HandoffChoice::Halt {
            store.resume(&d)?;
        }
    }
    Ok(())
}

/// A deterministic spread of small numbers, so kills land at many points.
fn spread(i: u64, modulo: u64) -> u64 {
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17) % modulo
}

#[test]
fn a_process_killed_at_any_line_leaves_a_store_that_replays() -> Result {
    let tmp = tempfile::tempdir()?;
    let dir = Utf8PathBuf::try_from(tmp.path().to_owned())?;
    let run: RunId = "crash".parse()?;
    for kill in 0..KILLS {
        let mut child = spawn("crash::child_handoff_loop", dir.as_str())?;
        sleep(Duration::from_millis(5 + spread(kill, 40)));
        child.kill()?;
        child.wait()?;

        // A new process takes over.
        let store = store(&dir)?;
        for h in store.handoffs(&run)? {
            let state = store
                .state(&run, h.id())
                .map_err(|e| format!("after kill {kill}: {}", error_chain(&e)))?;
            match state {
                HandoffState::Open(_) => {
                    // Killed before (or while) deciding: decide it now.
                    let d = store.decide(
                        &run,
                        h.id(),
                        DecisionRequest::new(HandoffChoice::Continue, DecidedBy::Operator),
                    )?;
                    assert_eq!(store.resume(&d)?, NextStep::Continue);
                }
                HandoffState::Decided { .. } => {
                    // Killed before (or while) resuming: resume it now.
                    store
                        .resume_handoff(&run, h.id())
                        .map_err(|e| format!("after kill {kill}: {}", error_chain(&e)))?;
                }
                HandoffState::Resumed {
                    next: NextStep::ContinueWithWaiver(w),
                    ..
                } => {
                    assert!(
                        store.waivers(&run)?.waivers().contains(&w),
                        "a journaled waiver resume has its waiver on disk"
                    );
                }
                HandoffState::Resumed { .. } | HandoffState::Halted { .. } => {}
            }
        }
    }
    let store = store(&dir)?;
    let handoffs = store.handoffs(&run)?;
    assert!(
        handoffs.len() > KILLS as usize,
        "the children made progress"
    );
    for h in handoffs {
        let state = store.state(&run, h.id())?;
        assert!(
            matches!(
                state,
                HandoffState::Resumed { .. } | HandoffState::Halted { .. }
            ),
            "{}: {}",
            h.id(),
            state.name()
        );
    }
    Ok(())
}
