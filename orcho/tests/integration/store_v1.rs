//! A store written by the first run-store format (schema 1), kept as a
//! fixture: every run in it still opens, replays to the state it had, and
//! gets its snapshot written again byte for byte. The fixture's runs cover
//! every kind of journal event (gates that feed, replan and halt; handoffs
//! resumed with every action; receipts re-run before acceptance; planner
//! questions, plan approval and deviations; intake, delivery and a
//! correction follow-up).

use std::fmt::Write as _;

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{Engine, RunPlan, Store};

use crate::{Result, copy_dir};

#[test]
fn a_store_written_with_schema_1_opens_replays_and_keeps_its_snapshots() -> Result {
    let fixture = Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/store-v1");
    let tmp = tempfile::tempdir()?;
    let root = Utf8PathBuf::try_from(tmp.path().to_owned())?.join("store");
    copy_dir(&fixture, &root)?;
    let store = Store::open(&root);
    let engine = Engine::builder(RunPlan::new("fixture", Vec::new()), &root).build()?;
    let runs = store
        .list()?
        .iter()
        .rev()
        .map(|l| l.run().clone())
        .collect::<Vec<_>>();
    assert_eq!(runs.len(), 17, "every run of the fixture is listed");
    let mut summary = String::new();
    for run in &runs {
        let state = store.state(run)?;
        assert_eq!(
            store.snapshot(run)?,
            state,
            "the snapshot of `{run}` reads back as the replayed state"
        );
        writeln!(
            summary,
            "{} | {} | {}",
            state.status(),
            state.reason().unwrap_or_default(),
            state.current_phase().map_or("-", |p| p.as_str())
        )?;
        summary.push_str(&engine.store().trace(run)?);
        summary.push('\n');
        // Opening a run rewrites its snapshot from the replayed journal: the
        // bytes are the ones the first format wrote.
        drop(engine.open(run)?);
        let written =
            std::fs::read_to_string(root.join("runs").join(run.as_str()).join("run.json"))?;
        let original =
            std::fs::read_to_string(fixture.join("runs").join(run.as_str()).join("run.json"))?;
        assert_eq!(written, original, "the snapshot of `{run}` is unchanged");
    }
    insta::assert_snapshot!(summary);
    Ok(())
}

#[test]
fn a_snapshot_that_describes_no_stage_is_refused() -> Result {
    let fixture = Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/store-v1");
    let tmp = tempfile::tempdir()?;
    let root = Utf8PathBuf::try_from(tmp.path().to_owned())?.join("store");
    copy_dir(&fixture, &root)?;
    let store = Store::open(&root);
    let run = store
        .list()?
        .into_iter()
        .map(|l| l.run().clone())
        .find(|r| store.state(r).is_ok_and(|s| s.handoff().is_some()))
        .ok_or("a run paused at a handoff")?;
    let path = root.join("runs").join(run.as_str()).join("run.json");
    let text = std::fs::read_to_string(&path)?;
    let broken = text.replace("\"awaiting_phase_handoff\"", "\"awaiting_deviation\"");
    orcho::core::fs::write_atomic(&path, broken.as_bytes())?;
    let err = store.snapshot(&run).unwrap_err();
    insta::assert_snapshot!(
        orcho::core::error_chain(&err).replace(run.as_str(), "<run>"),
        @"run `<run>`: caused by: its snapshot is invalid: a `awaiting_deviation` run has no touchpoint"
    );
    // The journal is the source of truth: the run still replays.
    assert!(store.state(&run)?.handoff().is_some());
    Ok(())
}

#[test]
fn only_a_run_with_a_task_is_written_with_schema_2() -> Result {
    let tmp = tempfile::tempdir()?;
    let root = Utf8PathBuf::try_from(tmp.path().to_owned())?;
    let checkout = root.join("checkout");
    std::fs::create_dir_all(&checkout)?;
    let engine = Engine::builder(
        RunPlan::new(
            "p",
            vec![super::phase("implement", orcho::PhaseRole::Implement)],
        ),
        root.join("store"),
    )
    .build()?;
    let read = |run: &orcho::core::RunId, file: &str| {
        std::fs::read_to_string(root.join("store/runs").join(run.as_str()).join(file))
    };
    let plain = engine.start_with(orcho::Start::in_place(&checkout))?;
    assert!(read(plain.id(), "journal.jsonl")?.starts_with("{\"schema\":1,"));
    assert!(read(plain.id(), "run.json")?.contains("\"schema\": 1"));
    let blank = engine.start_with(orcho::Start::in_place(&checkout).task("  \n"))?;
    assert_eq!(blank.state().task(), None, "blank text is no task");
    assert!(read(blank.id(), "journal.jsonl")?.starts_with("{\"schema\":1,"));

    let tasked = engine.start_with(orcho::Start::in_place(&checkout).task("Parse empty input"))?;
    let journal = read(tasked.id(), "journal.jsonl")?;
    assert!(journal.starts_with("{\"schema\":2,"), "{journal}");
    assert!(
        journal.contains("\"task\":\"Parse empty input\""),
        "{journal}"
    );
    assert!(read(tasked.id(), "run.json")?.contains("\"schema\": 2"));
    let id = tasked.id().clone();
    drop(tasked);
    let store = Store::open(root.join("store"));
    assert_eq!(store.state(&id)?.task(), Some("Parse empty input"));
    assert_eq!(store.snapshot(&id)?.task(), Some("Parse empty input"));
    Ok(())
}
