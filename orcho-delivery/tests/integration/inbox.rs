//! The decision inbox over a store with good, decided, finished and corrupt
//! runs.

use std::{fmt::Write as _, sync::Arc, time::Duration};

use orcho_core::{FixedClock, RunId, Verdict, error_chain};
use orcho_delivery::{DeliveryGates, DeliverySpec, Intakes, detect_intake, pending_decisions};
use orcho_handoff::{
    IntakeAction,
    decision::{DecidedBy, DecisionRequest},
    delivery::DeliveryChoice,
    handoff::{HandoffChoice, HandoffSpec, HandoffStore},
    inbox::{InboxEntry, SuggestedStep},
    intake::IntakeChoice,
};

use crate::{
    Result,
    delivery::ready,
    fixtures::{T0, rejected},
    repo::{repo, write},
};

fn id(s: &str) -> RunId {
    s.parse().expect("run id")
}

fn operator<P: orcho_handoff::decision::DecisionPayload>(p: P) -> DecisionRequest<P> {
    DecisionRequest::new(p, DecidedBy::Operator)
}

fn render(inbox: &orcho_handoff::inbox::Inbox) -> String {
    let mut out = String::new();
    for entry in inbox.entries() {
        match entry {
            InboxEntry::Pending(p) => {
                let _ = writeln!(
                    out,
                    "{} | {} | {} | {} | [{}] | decided: {} | next: {}",
                    p.run(),
                    p.phase(),
                    p.trigger(),
                    p.verdict().map_or("-", Verdict::as_str),
                    p.available_actions().join(", "),
                    p.decision().unwrap_or("no"),
                    p.next_step(),
                );
            }
            InboxEntry::Degraded(d) => {
                let _ = writeln!(
                    out,
                    "DEGRADED {} | {}",
                    d.dir().file_name().unwrap_or_default(),
                    d.reason()
                        .replace(d.dir().parent().map_or("", |p| p.as_str()), "<runs>")
                );
            }
            _ => out.push_str("unknown entry\n"),
        }
    }
    out
}

#[test]
fn the_inbox_lists_good_decided_and_corrupt_runs() -> Result {
    let r = repo();
    let clock = Arc::new(FixedClock::new(T0.parse()?));
    let store = HandoffStore::in_dir(r.store.clone(), clock.clone());
    let gates = DeliveryGates::in_dir(r.store.clone(), clock.clone());
    let tick = || clock.advance(Duration::from_secs(60));

    // An open handoff: decide.
    store.open(rejected(&id("run-a")))?;
    tick();
    // A decided handoff, not resumed: resume.
    let b = store.open(rejected(&id("run-b")))?;
    store.decide(
        b.run(),
        b.id(),
        operator(HandoffChoice::retry("cover empty input")?),
    )?;
    tick();
    // A resumed handoff: nothing to do.
    let c = store.open(rejected(&id("run-c")))?;
    let recorded = store.decide(c.run(), c.id(), operator(HandoffChoice::Continue))?;
    store.resume(&recorded)?;
    // A halt not resumed yet: resume (the run ends only then).
    let d = store.open(rejected(&id("run-d")))?;
    store.decide(d.run(), d.id(), operator(HandoffChoice::Halt))?;
    tick();
    // A run whose second handoff is open after a resumed first one.
    let e1 = store.open(rejected(&id("run-e")))?;
    let recorded = store.decide(e1.run(), e1.id(), operator(HandoffChoice::retry("again")?))?;
    store.resume(&recorded)?;
    store.open(HandoffSpec::new(
        id("run-e"),
        "review".parse()?,
        Verdict::Incomplete,
    ))?;
    tick();
    // Delivery gates: open, decided, delivered.
    r.run_changes();
    let spec = |run: &str| {
        DeliverySpec::new(
            id(run),
            Verdict::Approved,
            r.worktree.clone(),
            "HEAD",
            r.target.clone(),
            &ready(),
        )
    };
    gates.open(spec("run-f"))?;
    tick();
    gates.open(spec("run-g"))?;
    gates.decide(&id("run-g"), operator(DeliveryChoice::skip()))?;
    tick();
    gates.open(spec("run-h"))?;
    let skip = gates.decide(&id("run-h"), operator(DeliveryChoice::skip()))?;
    gates.deliver(&skip)?;
    tick();
    // An intake question.
    let intakes = Intakes::in_dir(r.store.clone(), clock.clone());
    write(&r.target.join("wip.txt"), b"wip\n");
    intakes.open(&id("run-i"), &detect_intake(&r.target, &r.store)?)?;
    tick();
    let intake_done = &id("run-j");
    intakes.open(intake_done, &detect_intake(&r.target, &r.store)?)?;
    let decided = intakes.decide(
        intake_done,
        operator(IntakeChoice::new(IntakeAction::Exclude)),
    )?;
    intakes.apply(&decided)?;

    // Corrupt runs: a garbage handoff, a garbage gate, an unreadable
    // decision, a directory that is not a run id.
    let runs = r.store.join("runs");
    write(
        &runs.join("run-x/handoffs/0001-implement.json"),
        b"{not json",
    );
    write(
        &runs.join("run-y/delivery/gate.json"),
        br#"{"schema": 1, "run_id": "run-y"}"#,
    );
    let z = store.open(rejected(&id("run-z")))?;
    write(
        &runs
            .join("run-z/decisions")
            .join(format!("{}.json", z.id())),
        b"[]",
    );
    write(&runs.join("bad..name/handoffs/x.json"), b"{}");
    // Files and hidden entries beside the runs are ignored.
    write(&runs.join("README"), b"not a run\n");
    write(&runs.join(".tmp/handoffs/x.json"), b"{}");

    let inbox = pending_decisions(&crate::dir_store(&r.store))?;
    insta::assert_snapshot!(render(&inbox), @"
    run-i | intake | uncommitted_changes | - | [include, exclude, commit, halt] | decided: no | next: decide
    run-g | delivery | release | approved | [approve, apply, skip, halt] | decided: skip | next: deliver
    run-f | delivery | release | approved | [approve, apply, skip, halt] | decided: no | next: decide
    run-e | review | verdict | incomplete | [retry_feedback, continue_with_waiver, halt] | decided: no | next: decide
    run-d | implement | gate `tests` | rejected | [continue, retry_feedback, continue_with_waiver, halt] | decided: halt | next: resume
    run-b | implement | gate `tests` | rejected | [continue, retry_feedback, continue_with_waiver, halt] | decided: retry_feedback | next: resume
    run-a | implement | gate `tests` | rejected | [continue, retry_feedback, continue_with_waiver, halt] | decided: no | next: decide
    DEGRADED run-z | cannot use the decision record of `0001-implement` at `<runs>/run-z/decisions/0001-implement.json`: caused by: cannot use decision `<runs>/run-z/decisions/0001-implement.json`: caused by: it is not valid at line 1, column 0: caused by: invalid type: sequence, expected a JSON object with a `schema` field at line 1 column 0
    DEGRADED run-y | the delivery gate cannot be read: cannot use delivery gate `<runs>/run-y/delivery/gate.json`: caused by: it is not valid at line 1, column 32: caused by: missing field `reviewer_verdict` at line 1 column 32
    DEGRADED run-x | cannot read handoff `0001-implement` of run `run-x`: caused by: cannot use phase handoff `<runs>/run-x/handoffs/0001-implement.json`: caused by: it is not valid at line 1, column 2: caused by: key must be a string at line 1 column 2
    DEGRADED bad..name | invalid run id `bad..name`: contains `..`
    ");

    let pending: Vec<_> = inbox.pending().map(|p| p.run().as_str()).collect();
    assert_eq!(
        pending,
        [
            "run-i", "run-g", "run-f", "run-e", "run-d", "run-b", "run-a"
        ]
    );
    let b = inbox
        .pending()
        .find(|p| p.run().as_str() == "run-b")
        .ok_or("run-b")?;
    assert!(b.is_decided());
    assert_eq!(b.next_step(), SuggestedStep::Resume);
    let g = inbox
        .pending()
        .find(|p| p.run().as_str() == "run-g")
        .ok_or("run-g")?;
    assert_eq!(g.next_step(), SuggestedStep::Deliver);
    let degraded: Vec<_> = inbox
        .degraded()
        .map(|d| d.dir().file_name().unwrap_or_default())
        .collect();
    assert_eq!(degraded, ["run-z", "run-y", "run-x", "bad..name"]);
    assert_eq!(
        inbox
            .degraded()
            .find(|d| d.run().is_none())
            .map(|d| d.dir().file_name()),
        Some(Some("bad..name"))
    );
    Ok(())
}

#[test]
fn an_empty_or_missing_store_has_an_empty_inbox() -> Result {
    let dir = tempfile::tempdir()?;
    let root = camino::Utf8PathBuf::try_from(dir.path().to_owned())?;
    assert!(pending_decisions(&crate::dir_store(&root))?.is_empty());
    assert!(pending_decisions(&crate::dir_store(&root.join("nowhere")))?.is_empty());
    // A `runs` that is a file cannot be listed: the one error of the scan.
    write(&root.join("store/runs"), b"");
    let err = pending_decisions(&crate::dir_store(&root.join("store"))).unwrap_err();
    assert!(
        error_chain(&err).starts_with("cannot list the runs in"),
        "{}",
        error_chain(&err)
    );
    Ok(())
}
