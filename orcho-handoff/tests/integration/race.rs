//! Two processes decide the same handoffs at the same moment, many times
//! over: exactly one decision is on disk each time, and the other process
//! sees an idempotent replay (same payload) or a conflict (different one).

use std::{
    fs::OpenOptions,
    io::Write,
    sync::Arc,
    thread,
    time::{Duration, Instant},
};

use camino::Utf8PathBuf;
use orcho_core::{FixedClock, HandoffId, RunId, error_chain};
use orcho_handoff::{
    decision::{DecidedBy, DecisionRequest},
    handoff::{HandoffChoice, HandoffStore},
};

use crate::{
    Result,
    child::{child_arg, spawn},
    fixtures::{T0, rejected},
};

const ROUNDS: usize = 40;

/// Even rounds: both processes decide the same thing. Odd rounds: each its
/// own feedback.
fn choice(round: usize, who: &str) -> Result<HandoffChoice> {
    Ok(if round.is_multiple_of(2) {
        HandoffChoice::retry(format!("round {round}: cover the empty case"))?
    } else {
        HandoffChoice::retry(format!("round {round}: feedback from {who}"))?
    })
}

/// Waits until the other process reached round `round` too, so that both
/// decide it at the same moment.
fn barrier(dir: &Utf8PathBuf, who: &str, other: &str, round: usize) -> Result {
    OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(dir.join(format!("ready-{who}-{round}")))?;
    let deadline = Instant::now() + Duration::from_secs(30);
    while !dir.join(format!("ready-{other}-{round}")).exists() {
        if Instant::now() > deadline {
            return Err(format!("{who} waited too long for {other} at round {round}").into());
        }
        thread::yield_now();
    }
    Ok(())
}

#[test]
#[ignore = "child process of two_processes_deciding_one_handoff_leave_exactly_one_decision"]
fn child_decide_loop() -> Result {
    let Some(arg) = child_arg() else {
        return Ok(());
    };
    let arg = arg.into_string().map_err(|_| "non-UTF-8 child argument")?;
    let (who, dir) = arg.split_once(':').ok_or("malformed child argument")?;
    let other = if who == "a" { "b" } else { "a" };
    let dir = Utf8PathBuf::from(dir);
    let store = HandoffStore::in_dir(dir.join(".orcho"), Arc::new(FixedClock::new(T0.parse()?)));
    let run: RunId = "race".parse()?;
    let mut log = OpenOptions::new()
        .append(true)
        .create(true)
        .open(dir.join(format!("log-{who}")))?;
    for round in 0..ROUNDS {
        let id: HandoffId = format!("{:04}-implement", round + 1).parse()?;
        barrier(&dir, who, other, round)?;
        let request = DecisionRequest::new(choice(round, who)?, DecidedBy::Operator);
        let outcome = match store.decide(&run, &id, request) {
            Ok(d) if d.is_replay() => "replay",
            Ok(_) => "created",
            Err(e) if e.is_conflict() => "conflict",
            Err(e) => return Err(error_chain(&e).into()),
        };
        writeln!(log, "{round} {outcome}")?;
    }
    Ok(())
}

#[test]
fn two_processes_deciding_one_handoff_leave_exactly_one_decision() -> Result {
    let tmp = tempfile::tempdir()?;
    let dir = Utf8PathBuf::try_from(tmp.path().to_owned())?;
    let store = HandoffStore::in_dir(dir.join(".orcho"), Arc::new(FixedClock::new(T0.parse()?)));
    let run: RunId = "race".parse()?;
    let handoffs: Vec<_> = (0..ROUNDS)
        .map(|_| store.open(rejected(&run)))
        .collect::<std::result::Result<_, _>>()?;

    let mut a = spawn("race::child_decide_loop", &format!("a:{dir}"))?;
    let mut b = spawn("race::child_decide_loop", &format!("b:{dir}"))?;
    assert!(a.wait()?.success(), "child a failed");
    assert!(b.wait()?.success(), "child b failed");

    let read = |who: &str| -> Result<Vec<String>> {
        let text = std::fs::read_to_string(dir.join(format!("log-{who}")))?;
        Ok(text
            .lines()
            .map(|l| l.split_once(' ').map_or("", |(_, o)| o).to_owned())
            .collect())
    };
    let (log_a, log_b) = (read("a")?, read("b")?);
    assert_eq!(
        (log_a.len(), log_b.len()),
        (ROUNDS, ROUNDS),
        "both finished every round"
    );

    for (round, handoff) in handoffs.iter().enumerate() {
        let (oa, ob) = (log_a[round].as_str(), log_b[round].as_str());
        let (("created", loser) | (loser, "created")) = (oa, ob) else {
            panic!("round {round}: nobody created the decision ({oa}, {ob})");
        };
        let expected = if round.is_multiple_of(2) {
            "replay"
        } else {
            "conflict"
        };
        assert_eq!(loser, expected, "round {round}: ({oa}, {ob})");

        let decisions = std::fs::read_dir(dir.join(".orcho/runs/race/decisions"))?
            .filter_map(|e| e.ok())
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(handoff.id().as_str())
            })
            .count();
        assert_eq!(decisions, 1, "round {round}: exactly one decision file");
        let recorded = store
            .recorded_decision(&run, handoff.id())?
            .ok_or("no decision")?;
        let winner = if oa == "created" { "a" } else { "b" };
        assert_eq!(
            recorded.decision().payload(),
            &choice(round, winner)?,
            "round {round}: the decision on disk is the creator's"
        );
    }
    let strays: Vec<_> = std::fs::read_dir(dir.join(".orcho/runs/race/decisions"))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(strays.is_empty(), "no temporary files left: {strays:?}");
    Ok(())
}
