//! The checks every [`Storage`] backend passes: one suite, run against the
//! directory store here and against every other backend in its own tests.
//!
//! ```
//! use std::sync::Arc;
//! use orcho_core::storage::{FsStorage, Storage, conformance};
//!
//! let dirs = std::sync::Mutex::new(Vec::new());
//! conformance::check(&|| {
//!     let dir = tempfile::tempdir().expect("a temporary directory");
//!     let root = camino::Utf8PathBuf::try_from(dir.path().to_owned()).expect("UTF-8");
//!     dirs.lock().expect("not poisoned").push(dir);
//!     Arc::new(FsStorage::new(root)) as Arc<dyn Storage>
//! });
//! ```
//!
//! Each check starts from a new, empty store made by the closure, and
//! panics with what the backend did wrong.

use std::{
    sync::{
        Arc, Barrier,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use super::seam::{Created, Item, Log, NewRun, PointKind, Set, Storage, StoreLog, StoreSet};
use crate::{HandoffId, RunId};

/// A store that a check starts from.
pub type MakeStorage<'a> = dyn Fn() -> Arc<dyn Storage> + Sync + 'a;

/// Runs every check against stores made by `make`.
///
/// # Panics
///
/// When the backend breaks a rule, naming it.
pub fn check(make: &MakeStorage<'_>) {
    a_run_is_created_whole_with_its_lease(make);
    a_run_is_created_once(make);
    a_lease_is_exclusive_until_dropped(make);
    of_racing_drivers_one_gets_the_lease(make);
    the_run_log_keeps_every_line_in_order(make);
    a_first_write_wins_and_changes_nothing_after(make);
    of_racing_first_writes_exactly_one_wins(make);
    a_put_replaces_the_document(make);
    a_removed_document_is_gone_and_its_neighbours_stay(make);
    a_superseded_decision_is_no_longer_the_points(make);
    sets_list_what_was_written(make);
    the_handoff_log_keeps_every_line_in_order(make);
    a_point_lock_is_exclusive(make);
    runs_are_listed_oldest_first_and_apart(make);
    an_exported_run_imports_whole(make);
    store_wide_documents_are_written_once_listed_and_removed(make);
    the_store_wide_log_keeps_every_line_of_every_writer(make);
    the_store_wide_lock_is_exclusive(make);
}

fn run(name: &str) -> RunId {
    name.parse().expect("a valid run id")
}

fn id(name: &str) -> HandoffId {
    name.parse().expect("a valid point id")
}

const FIRST: &[u8] = br#"{"schema":1,"seq":1,"event":"started"}"#;

fn with_newline(line: &[u8]) -> Vec<u8> {
    let mut out = line.to_vec();
    out.push(b'\n');
    out
}

/// Creates a run: its journal, snapshot and host metadata are there, and
/// its lease is held.
pub fn a_run_is_created_whole_with_its_lease(make: &MakeStorage<'_>) {
    let storage = make();
    let r = run("run-1");
    assert!(
        !storage.has_run(&r).expect("has_run"),
        "a new store has no run"
    );
    let lease = storage
        .create_run(
            &r,
            NewRun::new(FIRST, b"{\"snapshot\":1}\n").with_host_metadata(Some(b"{\"host\":1}\n")),
        )
        .expect("create_run");
    assert_eq!(lease.run(), &r);
    assert!(storage.has_run(&r).expect("has_run"), "the run exists");
    assert_eq!(
        storage.read_log(&r, Log::Run).expect("read_log"),
        with_newline(FIRST)
    );
    assert_eq!(
        storage.get(&r, Item::Snapshot).expect("get"),
        Some(b"{\"snapshot\":1}\n".to_vec())
    );
    assert_eq!(
        storage.get(&r, Item::HostMetadata).expect("get"),
        Some(b"{\"host\":1}\n".to_vec())
    );
    assert!(storage.is_leased(&r), "the creator holds the lease");
    drop(lease);
    assert!(!storage.is_leased(&r), "a dropped lease is let go");
}

/// Creating a run that exists fails and changes nothing.
pub fn a_run_is_created_once(make: &MakeStorage<'_>) {
    let storage = make();
    let r = run("run-1");
    drop(
        storage
            .create_run(&r, NewRun::new(FIRST, b"{}\n"))
            .expect("create_run"),
    );
    assert!(
        storage
            .create_run(&r, NewRun::new(br#"{"schema":1,"seq":9}"#, b"[]\n"))
            .is_err(),
        "a second create_run of the same run is refused"
    );
    assert_eq!(
        storage.read_log(&r, Log::Run).expect("read_log"),
        with_newline(FIRST)
    );
    assert_eq!(
        storage.get(&r, Item::Snapshot).expect("get"),
        Some(b"{}\n".to_vec())
    );
}

/// While a lease is held, nobody else gets it; once dropped, the next
/// asker does.
pub fn a_lease_is_exclusive_until_dropped(make: &MakeStorage<'_>) {
    let storage = make();
    let r = run("run-1");
    let held = storage
        .create_run(&r, NewRun::new(FIRST, b"{}\n"))
        .expect("create_run");
    assert!(
        storage
            .lease(&r, Duration::from_millis(50))
            .expect("lease")
            .is_none(),
        "a held lease is not given twice"
    );
    drop(held);
    let again = storage.lease(&r, Duration::ZERO).expect("lease");
    assert!(again.is_some(), "a dropped lease can be taken");
    assert!(storage.is_leased(&r));
}

/// Of drivers racing for a lease, exactly one gets it.
pub fn of_racing_drivers_one_gets_the_lease(make: &MakeStorage<'_>) {
    let storage = make();
    let r = run("run-1");
    drop(
        storage
            .create_run(&r, NewRun::new(FIRST, b"{}\n"))
            .expect("create_run"),
    );
    let n = 4;
    let barrier = Barrier::new(n);
    let won = AtomicUsize::new(0);
    let leases = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..n {
            s.spawn(|| {
                barrier.wait();
                if let Some(lease) = storage.lease(&r, Duration::ZERO).expect("lease") {
                    won.fetch_add(1, Ordering::SeqCst);
                    leases.lock().expect("not poisoned").push(lease);
                }
            });
        }
    });
    assert_eq!(
        won.load(Ordering::SeqCst),
        1,
        "exactly one driver holds the lease"
    );
}

/// The run's journal holds every appended line, in order; a snapshot
/// written through the lease replaces the last.
pub fn the_run_log_keeps_every_line_in_order(make: &MakeStorage<'_>) {
    let storage = make();
    let r = run("run-1");
    let mut lease = storage
        .create_run(&r, NewRun::new(FIRST, b"{}\n"))
        .expect("create_run");
    let mut expected = with_newline(FIRST);
    for seq in 2..=20 {
        let line = format!(r#"{{"schema":1,"seq":{seq}}}"#);
        lease.append(line.as_bytes()).expect("append");
        expected.extend(with_newline(line.as_bytes()));
        lease
            .write_snapshot(format!("{{\"seq\":{seq}}}\n").as_bytes())
            .expect("write_snapshot");
    }
    assert_eq!(storage.read_log(&r, Log::Run).expect("read_log"), expected);
    assert_eq!(
        storage.get(&r, Item::Snapshot).expect("get"),
        Some(b"{\"seq\":20}\n".to_vec())
    );
    // A lease taken again appends after what is there.
    drop(lease);
    let mut lease = storage
        .lease(&r, Duration::ZERO)
        .expect("lease")
        .expect("free");
    lease.append(br#"{"schema":1,"seq":21}"#).expect("append");
    expected.extend(with_newline(br#"{"schema":1,"seq":21}"#));
    assert_eq!(storage.read_log(&r, Log::Run).expect("read_log"), expected);
}

/// A first write creates a document; a second one changes nothing and says
/// so. What was never written reads as nothing.
pub fn a_first_write_wins_and_changes_nothing_after(make: &MakeStorage<'_>) {
    let storage = make();
    let r = run("run-1");
    let point = id("0001-implement");
    for item in [
        Item::Decision(&point),
        Item::Question(PointKind::Handoff, &point),
        Item::Question(PointKind::Touchpoint, &point),
        Item::Question(PointKind::Delivery, &point),
        Item::Question(PointKind::Intake, &point),
        Item::Outcome(PointKind::Delivery, &point),
        Item::Outcome(PointKind::Intake, &point),
        Item::Advice("0001-0001-implement"),
    ] {
        assert_eq!(
            storage.get(&r, item).expect("get"),
            None,
            "{item:?} is not there yet"
        );
        assert_eq!(
            storage.create(&r, item, b"first\n").expect("create"),
            Created::New,
            "{item:?}"
        );
        assert_eq!(
            storage.create(&r, item, b"second\n").expect("create"),
            Created::Exists,
            "{item:?} is written once"
        );
        assert_eq!(
            storage.get(&r, item).expect("get"),
            Some(b"first\n".to_vec()),
            "{item:?}"
        );
    }
}

/// Of processes racing to write a document first, exactly one wins, and
/// the document is the winner's.
pub fn of_racing_first_writes_exactly_one_wins(make: &MakeStorage<'_>) {
    let storage = make();
    let r = run("run-1");
    let point = id("delivery");
    let n = 8;
    let barrier = Barrier::new(n);
    let winners = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for i in 0..n {
            let (storage, barrier, winners, r, point) = (&storage, &barrier, &winners, &r, &point);
            s.spawn(move || {
                barrier.wait();
                let bytes = format!("decision {i}\n");
                if storage
                    .create(r, Item::Decision(point), bytes.as_bytes())
                    .expect("create")
                    == Created::New
                {
                    winners.lock().expect("not poisoned").push(bytes);
                }
            });
        }
    });
    let winners = winners.into_inner().expect("not poisoned");
    assert_eq!(winners.len(), 1, "exactly one first write: {winners:?}");
    assert_eq!(
        storage.get(&r, Item::Decision(&point)).expect("get"),
        Some(winners[0].clone().into_bytes())
    );
}

/// A put replaces what was there.
pub fn a_put_replaces_the_document(make: &MakeStorage<'_>) {
    let storage = make();
    let r = run("run-1");
    let handoff = id("0001-implement");
    for item in [
        Item::Evidence,
        Item::Waiver(&handoff),
        Item::DeliveryPatch,
        Item::IntakeSeed,
    ] {
        storage.put(&r, item, b"one\n").expect("put");
        storage.put(&r, item, b"two\0binary\n").expect("put");
        assert_eq!(
            storage.get(&r, item).expect("get"),
            Some(b"two\0binary\n".to_vec()),
            "{item:?}"
        );
    }
}

/// A removed document is gone (removing it again says it was not there);
/// the run's other documents, and another run's same one, stay.
pub fn a_removed_document_is_gone_and_its_neighbours_stay(make: &MakeStorage<'_>) {
    let storage = make();
    let (one, two) = (run("run-1"), run("run-2"));
    for r in [&one, &two] {
        storage.put(r, Item::IntakeSeed, b"seed\n").expect("put");
        storage.put(r, Item::Evidence, b"{}").expect("put");
    }
    assert!(storage.remove(&one, Item::IntakeSeed).expect("remove"));
    assert_eq!(storage.get(&one, Item::IntakeSeed).expect("get"), None);
    assert!(
        !storage
            .remove(&one, Item::IntakeSeed)
            .expect("remove again")
    );
    assert_eq!(
        storage.get(&one, Item::Evidence).expect("get"),
        Some(b"{}".to_vec())
    );
    assert_eq!(
        storage.get(&two, Item::IntakeSeed).expect("get"),
        Some(b"seed\n".to_vec())
    );
}

/// Each set lists the ids of what was written into it, and only those.
pub fn sets_list_what_was_written(make: &MakeStorage<'_>) {
    let storage = make();
    let r = run("run-1");
    let sorted = |set| {
        let mut names = storage.list(&r, set).expect("list");
        names.sort();
        names
    };
    assert!(sorted(Set::Questions(PointKind::Handoff)).is_empty());
    for name in ["0001-implement", "0002-review"] {
        storage
            .create(&r, Item::Question(PointKind::Handoff, &id(name)), b"{}\n")
            .expect("create");
    }
    storage
        .create(
            &r,
            Item::Question(PointKind::Touchpoint, &id("touchpoint-1")),
            b"{}\n",
        )
        .expect("create");
    storage
        .create(
            &r,
            Item::Question(PointKind::Delivery, &id("delivery")),
            b"{}\n",
        )
        .expect("create");
    storage
        .create(&r, Item::Advice("0001-0001-implement"), b"{}\n")
        .expect("create");
    storage
        .put(&r, Item::Waiver(&id("0001-implement")), b"{}\n")
        .expect("put");
    assert_eq!(
        sorted(Set::Questions(PointKind::Handoff)),
        ["0001-implement", "0002-review"]
    );
    assert_eq!(
        sorted(Set::Questions(PointKind::Touchpoint)),
        ["touchpoint-1"]
    );
    assert_eq!(sorted(Set::Questions(PointKind::Delivery)), ["delivery"]);
    assert!(sorted(Set::Questions(PointKind::Intake)).is_empty());
    assert_eq!(sorted(Set::Advice), ["0001-0001-implement"]);
    assert_eq!(sorted(Set::Waivers), ["0001-implement"]);
}

/// The handoffs' log keeps every appended line in order, from any number
/// of writers.
pub fn the_handoff_log_keeps_every_line_in_order(make: &MakeStorage<'_>) {
    let storage = make();
    let r = run("run-1");
    assert!(
        storage
            .read_log(&r, Log::Handoffs)
            .expect("read_log")
            .is_empty()
    );
    let mut expected = Vec::new();
    for n in 1..=10 {
        let line = format!(r#"{{"schema":1,"n":{n}}}"#);
        storage
            .append_log(&r, Log::Handoffs, line.as_bytes())
            .expect("append_log");
        expected.extend(with_newline(line.as_bytes()));
    }
    assert_eq!(
        storage.read_log(&r, Log::Handoffs).expect("read_log"),
        expected
    );
}

/// A point lock is held by one holder at a time.
pub fn a_point_lock_is_exclusive(make: &MakeStorage<'_>) {
    let storage = make();
    let r = run("run-1");
    let inside = AtomicUsize::new(0);
    let most = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..5 {
                    let _held = storage.lock(&r, PointKind::Handoff).expect("lock");
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(1));
                    inside.fetch_sub(1, Ordering::SeqCst);
                }
            });
        }
    });
    assert_eq!(most.load(Ordering::SeqCst), 1, "never two holders at once");
}

/// Runs are listed oldest first (by id), and what one run keeps is not
/// another's.
pub fn runs_are_listed_oldest_first_and_apart(make: &MakeStorage<'_>) {
    let storage = make();
    let (older, newer) = (
        run("20261126T100000000Z-aaaaaaaaaaaaaaaa"),
        run("20261126T100001000Z-bbbbbbbbbbbbbbbb"),
    );
    drop(
        storage
            .create_run(&newer, NewRun::new(FIRST, b"{}\n"))
            .expect("create_run"),
    );
    drop(
        storage
            .create_run(&older, NewRun::new(FIRST, b"{}\n"))
            .expect("create_run"),
    );
    assert_eq!(
        storage.runs().expect("runs").runs,
        [older.clone(), newer.clone()]
    );
    let point = id("delivery");
    storage
        .create(&older, Item::Decision(&point), b"older\n")
        .expect("create");
    assert_eq!(
        storage.get(&newer, Item::Decision(&point)).expect("get"),
        None
    );
    assert!(storage.list(&newer, Set::Advice).expect("list").is_empty());
}

/// A decision set aside is no longer the point's: the next decision is a
/// first one.
pub fn a_superseded_decision_is_no_longer_the_points(make: &MakeStorage<'_>) {
    let storage = make();
    let r = run("run-1");
    let point = id("delivery");
    storage
        .supersede_decision(&r, &point)
        .expect("nothing to set aside is fine");
    storage
        .create(&r, Item::Decision(&point), b"old\n")
        .expect("create");
    storage
        .supersede_decision(&r, &point)
        .expect("supersede_decision");
    assert_eq!(storage.get(&r, Item::Decision(&point)).expect("get"), None);
    assert_eq!(
        storage
            .create(&r, Item::Decision(&point), b"new\n")
            .expect("create"),
        Created::New
    );
    storage
        .supersede_decision(&r, &point)
        .expect("a second one is set aside too");
    assert_eq!(storage.get(&r, Item::Decision(&point)).expect("get"), None);
}

/// A run exported from one store and imported into another is the same
/// run: its journals line for line and every document byte for byte.
pub fn an_exported_run_imports_whole(make: &MakeStorage<'_>) {
    use super::archive::{Imported, export_run, import_run};

    let from = make();
    let r = run("run-1");
    let mut lease = from
        .create_run(
            &r,
            NewRun::new(FIRST, b"{}\n").with_host_metadata(Some(b"{\"host\":1}\n")),
        )
        .expect("create_run");
    lease.append(br#"{"schema":1,"seq":2}"#).expect("append");
    lease
        .write_snapshot(b"{\"seq\":2}\n")
        .expect("write_snapshot");
    drop(lease);
    from.append_log(&r, Log::Handoffs, br#"{"schema":1,"opened":1}"#)
        .expect("append_log");
    let (handoff, delivery) = (id("0001-implement"), id("delivery"));
    let binary: &[u8] = b"\x00\xffpatch\n";
    for (item, bytes) in [
        (
            Item::Question(PointKind::Handoff, &handoff),
            &b"question\n"[..],
        ),
        (Item::Decision(&handoff), b"decision\n"),
        (Item::Outcome(PointKind::Handoff, &handoff), b"outcome\n"),
        (Item::Question(PointKind::Delivery, &delivery), b"gate\n"),
        (Item::Decision(&delivery), b"approve\n"),
        (Item::Advice("0001-0001-implement"), b"advice\n"),
        (Item::Waiver(&handoff), b"waiver\n"),
        (Item::Evidence, b"evidence\n"),
        (Item::DeliveryPatch, binary),
    ] {
        from.create(&r, item, bytes).expect("create");
    }
    let archive = export_run(&*from, &r).expect("export");
    let line = serde_json::to_string(&archive).expect("an archive line");
    let read: super::archive::RunArchive = serde_json::from_str(&line).expect("reads back");
    let to = make();
    assert_eq!(import_run(&*to, &read).expect("import"), Imported::New);
    assert_eq!(
        import_run(&*to, &read).expect("import again"),
        Imported::Exists
    );
    assert_eq!(export_run(&*to, &r).expect("export again"), archive);
    assert_eq!(
        to.read_log(&r, Log::Run).expect("read_log"),
        from.read_log(&r, Log::Run).expect("read_log")
    );
    assert_eq!(
        to.get(&r, Item::DeliveryPatch).expect("get").as_deref(),
        Some(binary)
    );
    assert!(!to.is_leased(&r), "an imported run is not driven");
}

/// A store-wide document is written once (of racing writers, exactly one
/// wins), listed by name, kept apart from every run, and removed.
pub fn store_wide_documents_are_written_once_listed_and_removed(make: &MakeStorage<'_>) {
    let storage = make();
    assert_eq!(
        storage.store_names(StoreSet::Notifiers).expect("list"),
        Vec::<String>::new()
    );
    assert_eq!(
        storage.store_get(StoreSet::Notifiers, "team").expect("get"),
        None
    );
    let wins = AtomicUsize::new(0);
    let barrier = Barrier::new(4);
    std::thread::scope(|s| {
        for n in 0..4 {
            let (storage, wins, barrier) = (&storage, &wins, &barrier);
            s.spawn(move || {
                barrier.wait();
                let body = format!("{{\"writer\":{n}}}\n");
                if storage
                    .store_create(StoreSet::Notifiers, "team", body.as_bytes())
                    .expect("create")
                    == Created::New
                {
                    wins.fetch_add(1, Ordering::SeqCst);
                }
            });
        }
    });
    assert_eq!(
        wins.load(Ordering::SeqCst),
        1,
        "exactly one first write wins"
    );
    let kept = storage
        .store_get(StoreSet::Notifiers, "team")
        .expect("get")
        .expect("written");
    assert!(
        kept.starts_with(b"{\"writer\":"),
        "a whole document: {kept:?}"
    );
    storage
        .store_create(StoreSet::Notifiers, "alerts", b"{}\n")
        .expect("create");
    assert_eq!(
        storage.store_names(StoreSet::Notifiers).expect("list"),
        ["alerts", "team"],
        "sorted by name"
    );
    assert!(
        storage.runs().expect("runs").runs.is_empty(),
        "a store-wide document is no run"
    );
    assert!(
        storage
            .store_remove(StoreSet::Notifiers, "team")
            .expect("remove")
    );
    assert!(
        !storage
            .store_remove(StoreSet::Notifiers, "team")
            .expect("remove again")
    );
    assert_eq!(
        storage.store_names(StoreSet::Notifiers).expect("list"),
        ["alerts"]
    );
    assert!(
        storage.store_get(StoreSet::Notifiers, "../x").is_err(),
        "a name that is no plain name is refused"
    );
}

/// The store-wide log keeps every line of racing writers, whole (each line
/// a JSON document with its `schema`, as every log's).
pub fn the_store_wide_log_keeps_every_line_of_every_writer(make: &MakeStorage<'_>) {
    let storage = make();
    assert!(
        storage
            .store_read(StoreLog::Notifications)
            .expect("read")
            .is_empty()
    );
    std::thread::scope(|s| {
        for writer in 0..4 {
            let storage = &storage;
            s.spawn(move || {
                for n in 0..10 {
                    let line = format!("{{\"schema\":1,\"writer\":{writer},\"n\":{n}}}\n");
                    storage
                        .store_append(StoreLog::Notifications, line.as_bytes())
                        .expect("append");
                }
            });
        }
    });
    let read = storage.store_read(StoreLog::Notifications).expect("read");
    let text = String::from_utf8(read).expect("UTF-8");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 40, "every line: {text}");
    for writer in 0..4 {
        let own: Vec<&&str> = lines
            .iter()
            .filter(|l| l.starts_with(&format!("{{\"schema\":1,\"writer\":{writer},")))
            .collect();
        let expected: Vec<String> = (0..10)
            .map(|n| format!("{{\"schema\":1,\"writer\":{writer},\"n\":{n}}}"))
            .collect();
        assert_eq!(own.len(), 10, "whole lines of writer {writer}: {text}");
        assert!(
            own.iter().zip(&expected).all(|(a, b)| **a == b.as_str()),
            "each writer's lines in its order: {text}"
        );
    }
}

/// One holder of the store-wide lock at a time; a second one asking gets
/// `None` within its wait, and gets it once the first lets go.
pub fn the_store_wide_lock_is_exclusive(make: &MakeStorage<'_>) {
    let storage = make();
    let held = storage
        .store_lock(StoreLog::Notifications, Duration::ZERO)
        .expect("lock")
        .expect("free");
    let other = std::thread::scope(|s| {
        s.spawn(|| {
            storage
                .store_lock(StoreLog::Notifications, Duration::from_millis(50))
                .expect("lock")
                .is_some()
        })
        .join()
        .expect("no panic")
    });
    assert!(!other, "held elsewhere");
    drop(held);
    assert!(
        storage
            .store_lock(StoreLog::Notifications, Duration::from_secs(5))
            .expect("lock")
            .is_some(),
        "free again once dropped"
    );
}
