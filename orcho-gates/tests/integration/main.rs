//! Integration tests of `orcho-gates`: the scheduler with scripted gates, a
//! gate written the way a third party writes one, lock groups across two
//! processes, and the registry.

mod command_gate;
mod lock_group;
mod plugin;
mod registry;
mod schedule;
mod tests_gate;

pub(crate) type Result<T = (), E = Box<dyn std::error::Error>> = std::result::Result<T, E>;

use camino::Utf8PathBuf;
use orcho_core::{GateName, Verdict};
use orcho_gates::{GateContext, PhaseOutcome};

pub(crate) fn name(s: &str) -> GateName {
    s.parse().expect("valid gate name")
}

/// A context in a fresh temp dir (kept alive by the returned guard).
pub(crate) fn context() -> (tempfile::TempDir, GateContext) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = Utf8PathBuf::try_from(dir.path().to_owned()).expect("utf-8 temp dir");
    let ctx = GateContext::new(
        "20261121T120000000Z-00000000000000aa"
            .parse()
            .expect("run id"),
        "implement".parse().expect("phase"),
        &root,
        PhaseOutcome::new(Verdict::Approved),
    );
    (dir, ctx)
}
