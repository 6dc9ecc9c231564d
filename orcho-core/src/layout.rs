//! Where everything lives in a store: the one place that knows the layout.
//!
//! Every crate that persists something under a store root asks these types
//! for the path instead of joining names itself, so the layout below is
//! written once:
//!
//! ```text
//! <store>/
//!   runs/<run>/
//!     journal.jsonl  run.json  run.lock  host.json  evidence.json
//!     phase-group.json  logs/<phase>-r<round>-a<attempt>.{stdout,stderr}.log
//!     handoffs/<handoff>.json  handoffs/journal.jsonl  handoffs/.lock
//!     decisions/<point>.json
//!     advice/<advice>.json
//!     waivers/<handoff>.json
//!     supervision/<touchpoint>.json
//!     delivery/{gate.json, run.patch, outcome.json, .lock}
//!     intake/{intake.json, seed.patch, outcome.json, .lock}
//!   receipts/…  cache/…  worktrees/<run>/  agent-hooks/…
//! ```
//!
//! Run directories are named by validated [`RunId`]s, and every file name
//! built from an id goes through a validated id type, so no path built here
//! can leave the store.
//!
//! ```
//! use orcho_core::{RunId, layout::StoreDir};
//!
//! let store = StoreDir::new(".orcho");
//! let run: RunId = "run-1".parse()?;
//! let dir = store.run(&run);
//! assert_eq!(dir.journal(), ".orcho/runs/run-1/journal.jsonl");
//! assert_eq!(dir.decision(&"delivery".parse()?), ".orcho/runs/run-1/decisions/delivery.json");
//! assert_eq!(store.worktree(&run), ".orcho/worktrees/run-1");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use camino::{Utf8Path, Utf8PathBuf};

use crate::{HandoffId, RunId};

/// The name of a checkout's store directory, unless told otherwise:
/// `.orcho`.
pub const DEFAULT_STORE_DIR: &str = ".orcho";

/// A store root (`.orcho/` in the checkout by default) and the paths under
/// it. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StoreDir {
    root: Utf8PathBuf,
}

impl StoreDir {
    /// The store at `root`.
    pub fn new(root: impl Into<Utf8PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The store root.
    pub fn root(&self) -> &Utf8Path {
        &self.root
    }

    /// `runs/`: one directory per run.
    pub fn runs(&self) -> Utf8PathBuf {
        self.root.join("runs")
    }

    /// The directory of `run`.
    pub fn run(&self, run: &RunId) -> RunDir {
        RunDir {
            path: self.runs().join(run.as_str()),
            run: run.clone(),
        }
    }

    /// `receipts/`: command and environment receipts.
    pub fn receipts(&self) -> Utf8PathBuf {
        self.root.join("receipts")
    }

    /// `cache/`: caches that can be deleted at any time.
    pub fn cache(&self) -> Utf8PathBuf {
        self.root.join("cache")
    }

    /// `worktrees/`: the retained git worktrees of runs that deliver.
    pub fn worktrees(&self) -> Utf8PathBuf {
        self.root.join("worktrees")
    }

    /// The retained worktree of `run`.
    pub fn worktree(&self, run: &RunId) -> Utf8PathBuf {
        self.worktrees().join(run.as_str())
    }

    /// `acknowledged-weakenings.jsonl`: the weakenings of a change a person
    /// acknowledged (`orcho status --ack-weakening`), each sealed.
    pub fn acknowledged_weakenings(&self) -> Utf8PathBuf {
        self.root.join("acknowledged-weakenings.jsonl")
    }

    /// `notify/`: the store's notifiers (`notify/notifiers/<name>.json`),
    /// the log of what was sent to them (`notify/log.jsonl`) and the lock of
    /// the process that sends (`notify/.lock`).
    pub fn notify(&self) -> Utf8PathBuf {
        self.root.join("notify")
    }

    /// `agent-hooks/`: what the hooks installed in coding agents keep
    /// (refused stops, unproven stops).
    pub fn agent_hooks(&self) -> Utf8PathBuf {
        self.root.join("agent-hooks")
    }
}

/// The directory of one run and the paths in it. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RunDir {
    path: Utf8PathBuf,
    run: RunId,
}

impl RunDir {
    crate::getters! {
        /// The directory.
        pub fn path(&self) -> &Utf8Path;
        /// The run.
        pub fn run(&self) -> &RunId;
    }

    /// The same layout in another directory, for example the staging
    /// directory a run is created in before it is moved into place.
    pub fn relocated(&self, path: impl Into<Utf8PathBuf>) -> Self {
        Self {
            path: path.into(),
            run: self.run.clone(),
        }
    }

    /// `journal.jsonl`: the run's events, the source of truth.
    pub fn journal(&self) -> Utf8PathBuf {
        self.path.join("journal.jsonl")
    }

    /// `run.json`: the latest state snapshot.
    pub fn snapshot(&self) -> Utf8PathBuf {
        self.path.join("run.json")
    }

    /// `run.lock`: held by the one process driving the run.
    pub fn lock(&self) -> Utf8PathBuf {
        self.path.join("run.lock")
    }

    /// `host.json`: what the host that started the run keeps with it.
    pub fn host_metadata(&self) -> Utf8PathBuf {
        self.path.join("host.json")
    }

    /// `phase-group.json`: the process group of the phase command running
    /// for the run, while it runs (so that one left by a killed host can be
    /// stopped).
    pub fn phase_group(&self) -> Utf8PathBuf {
        self.path.join("phase-group.json")
    }

    /// `logs/`: the full output of the phase commands a host ran for the
    /// run.
    pub fn logs(&self) -> Utf8PathBuf {
        self.path.join("logs")
    }

    /// `artifacts/`: what a host's phases kept beside the work (a plan, a
    /// transcript, a report), a directory per attempt; never delivered.
    pub fn artifacts(&self) -> Utf8PathBuf {
        self.path.join("artifacts")
    }

    /// `evidence.json`: the evidence bundle, once written.
    pub fn evidence(&self) -> Utf8PathBuf {
        self.path.join("evidence.json")
    }

    /// `handoffs/`: phase handoffs and their journal.
    pub fn handoffs(&self) -> Utf8PathBuf {
        self.path.join("handoffs")
    }

    /// The document of phase handoff `id`.
    pub fn handoff(&self, id: &HandoffId) -> Utf8PathBuf {
        self.handoffs().join(format!("{id}.json"))
    }

    /// The run's handoff journal.
    pub fn handoff_journal(&self) -> Utf8PathBuf {
        self.handoffs().join("journal.jsonl")
    }

    /// The lock that serialises opening and resuming handoffs.
    pub fn handoff_lock(&self) -> Utf8PathBuf {
        self.handoffs().join(".lock")
    }

    /// `decisions/`: one record per decision point.
    pub fn decisions(&self) -> Utf8PathBuf {
        self.path.join("decisions")
    }

    /// The decision record of decision point `point`.
    pub fn decision(&self, point: &HandoffId) -> Utf8PathBuf {
        self.decisions().join(format!("{point}.json"))
    }

    /// `advice/`: advice artifacts.
    pub fn advice(&self) -> Utf8PathBuf {
        self.path.join("advice")
    }

    /// `waivers/`: waivers of `continue_with_waiver` decisions.
    pub fn waivers(&self) -> Utf8PathBuf {
        self.path.join("waivers")
    }

    /// The waiver of handoff `id`.
    pub fn waiver(&self, id: &HandoffId) -> Utf8PathBuf {
        self.waivers().join(format!("{id}.json"))
    }

    /// `supervision/`: supervision touchpoints.
    pub fn supervision(&self) -> Utf8PathBuf {
        self.path.join("supervision")
    }

    /// The document of touchpoint `id`.
    pub fn touchpoint(&self, id: &HandoffId) -> Utf8PathBuf {
        self.supervision().join(format!("{id}.json"))
    }

    /// `delivery/`: the delivery gate, its patch and its outcome.
    pub fn delivery(&self) -> Utf8PathBuf {
        self.path.join("delivery")
    }

    /// `intake/`: the pre-run intake question, its seed patch and outcome.
    pub fn intake(&self) -> Utf8PathBuf {
        self.path.join("intake")
    }

    /// The permission questions its agents asked (`asks/`), with their
    /// outcomes (`asks/outcomes/`).
    pub fn asks(&self) -> Utf8PathBuf {
        self.path.join("asks")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_stays_in_its_run_directory() {
        let store = StoreDir::new("/s");
        let dir = store.run(&"r".parse().unwrap());
        let id: HandoffId = "0001-implement".parse().unwrap();
        for path in [
            dir.journal(),
            dir.snapshot(),
            dir.lock(),
            dir.host_metadata(),
            dir.phase_group(),
            dir.logs(),
            dir.evidence(),
            dir.handoff(&id),
            dir.handoff_journal(),
            dir.handoff_lock(),
            dir.decision(&id),
            dir.waiver(&id),
            dir.touchpoint(&id),
            dir.advice(),
            dir.delivery(),
            dir.intake(),
        ] {
            assert!(path.starts_with("/s/runs/r/"), "{path}");
        }
    }
}
