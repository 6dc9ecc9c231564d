//! Fixed ids, times and stores, so that documents are byte-stable.

use orcho_core::{Finding, RunId, Severity, Verdict};
use orcho_handoff::handoff::{HandoffSpec, HandoffTrigger};

pub(crate) const T0: &str = "2026-11-21T12:00:00Z";

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
