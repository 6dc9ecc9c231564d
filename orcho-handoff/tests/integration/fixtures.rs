//! Fixed ids, times and stores, so that documents are byte-stable.

use std::sync::Arc;

use camino::Utf8PathBuf;
use orcho_core::{Finding, FixedClock, RunId, Severity, Verdict};
use orcho_handoff::handoff::{HandoffPolicy, HandoffSpec, HandoffStore, HandoffTrigger};

pub(crate) const T0: &str = "2026-11-21T12:00:00Z";

pub(crate) struct Fixture {
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) root: Utf8PathBuf,
    pub(crate) clock: Arc<FixedClock>,
    pub(crate) store: HandoffStore,
    pub(crate) run: RunId,
}

pub(crate) fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = Utf8PathBuf::try_from(dir.path().to_owned()).expect("utf-8 temp dir");
    let clock = Arc::new(FixedClock::new(T0.parse().expect("time")));
    let store = HandoffStore::in_dir(root.join(".orcho"), clock.clone());
    Fixture {
        _dir: dir,
        root,
        clock,
        store,
        run: "run-1".parse().expect("run id"),
    }
}

pub(crate) fn finding(title: &str) -> Finding {
    Finding::new("tests", Severity::High, title).with_file("src/parse.rs")
}

/// A rejected `implement` phase triggered by the `tests` gate, with one
/// finding.
pub(crate) fn rejected(run: &RunId) -> HandoffSpec {
    HandoffSpec::new(
        run.clone(),
        "implement".parse().expect("phase"),
        Verdict::Rejected,
    )
    .with_trigger(HandoffTrigger::Gate("tests".parse().expect("gate")))
    .with_findings(vec![finding("test `parse_empty` failed")])
}

pub(crate) fn incomplete(run: &RunId) -> HandoffSpec {
    HandoffSpec::new(
        run.clone(),
        "implement".parse().expect("phase"),
        Verdict::Incomplete,
    )
    .with_findings(vec![finding("the worker stopped before the tests")])
    .with_policy(HandoffPolicy::default())
}
