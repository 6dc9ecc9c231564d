//! [`Store`]: the runs of a store, read and decided without a plan.

use std::{sync::Arc, time::Duration};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{
    Clock, RunId, SystemClock,
    layout::StoreDir,
    storage::{FsStorage, Item, Storage},
};
use orcho_delivery::{DeliveryGates, Intakes};
use orcho_handoff::handoff::HandoffStore;
use orcho_receipts::{
    ReceiptKey, ReceiptStore, VerificationContract, Verifier,
    exec::{BaseEnv, GroupMarker},
};

use super::imp::{DEFAULT_LOCK_WAIT, RunStore};
use crate::{EngineError, error::EngineErrorKind};

/// The runs of a store, and everything hosts read and decide about them,
/// with no [`RunPlan`](crate::RunPlan): list and find runs, read where one
/// stands, its evidence and trace, the inbox and the touchpoints, and record
/// every kind of decision and answer. An [`Engine`](crate::Engine) is a
/// store plus a plan, for driving.
///
/// Runs and decisions are kept by a [`Storage`] (a directory by default,
/// [`Store::open`]); receipts, worktrees and the logs of phase commands are
/// kept in this machine's local directory, beside the checkout they belong
/// to.
///
/// ```
/// use orcho::Store;
///
/// # let tmp = tempfile::tempdir()?;
/// # let root = camino::Utf8PathBuf::try_from(tmp.path().to_owned())?;
/// let store = Store::open(root.join(".orcho"));
/// assert!(store.list()?.is_empty());
/// assert!(store.inbox()?.is_empty());
/// assert!(store.find_run("latest").unwrap_err().is_unknown_run());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Cheap to clone; a clone shares the storage.
#[derive(Debug, Clone)]
pub struct Store {
    pub(crate) storage: Arc<dyn Storage>,
    pub(crate) local: StoreDir,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) runs: RunStore,
    pub(crate) handoffs: HandoffStore,
    pub(crate) intakes: Intakes,
    pub(crate) asks: orcho_handoff::ask::Asks,
    pub(crate) deliveries: DeliveryGates,
    pub(crate) receipt_key: Option<ReceiptKey>,
    pub(crate) base_env: BaseEnv,
    /// Who decides through this store, recorded with each decision that
    /// names nobody.
    pub(crate) decider: Option<String>,
    lock_wait: Duration,
}

/// What a host waiting for a decision made elsewhere waits on: see
/// [`Store::subscribe`].
#[derive(Debug)]
pub struct Watch {
    subscription: Option<Box<dyn orcho_core::storage::Subscription>>,
    /// A wait under way, kept when [`changed`](Self::changed) was given up
    /// (a `select!` that took another branch): the next call goes on with
    /// it, and the subscription is never lost.
    waiting: Option<WaitingFor>,
}

type WaitingFor = tokio::task::JoinHandle<(Box<dyn orcho_core::storage::Subscription>, bool)>;

impl Watch {
    /// How often a store that cannot tell of writes is looked at again.
    pub const POLL: Duration = Duration::from_millis(500);

    pub(crate) fn new(subscription: Option<Box<dyn orcho_core::storage::Subscription>>) -> Self {
        Self {
            subscription,
            waiting: None,
        }
    }

    /// Waits until something may have been written to the store, at most
    /// `timeout`: `true` then, `false` when the time passed quietly.
    ///
    /// Cancel-safe: a call given up before it returned leaves its wait to
    /// the next one.
    pub async fn changed(&mut self, timeout: Duration) -> bool {
        if self.waiting.is_none() {
            let Some(mut subscription) = self.subscription.take() else {
                tokio::time::sleep(timeout.min(Self::POLL)).await;
                return true;
            };
            self.waiting = Some(tokio::task::spawn_blocking(move || {
                let changed = subscription.wait(timeout);
                (subscription, changed)
            }));
        }
        let Some(waiting) = self.waiting.as_mut() else {
            return true;
        };
        let waited = waiting.await;
        self.waiting = None;
        match waited {
            Ok((subscription, changed)) => {
                self.subscription = Some(subscription);
                changed
            }
            // The blocking pool is gone (the runtime is shutting down).
            Err(_) => true,
        }
    }
}

impl Store {
    /// The store in the directory `dir` (usually `<checkout>/.orcho`), which
    /// keeps the runs and this machine's files alike. Nothing is created
    /// until a run is.
    pub fn open(dir: impl Into<Utf8PathBuf>) -> Self {
        let dir = dir.into();
        Self::new(Arc::new(FsStorage::new(dir.clone())), dir)
    }

    /// Runs and decisions kept in `storage`; receipts, worktrees and phase
    /// logs in this machine's directory `local`.
    pub fn new(storage: Arc<dyn Storage>, local: impl Into<Utf8PathBuf>) -> Self {
        Self::assemble(
            storage,
            StoreDir::new(local),
            Arc::new(SystemClock::new()),
            None,
            BaseEnv::inherit(),
            DEFAULT_LOCK_WAIT,
        )
    }

    fn assemble(
        storage: Arc<dyn Storage>,
        local: StoreDir,
        clock: Arc<dyn Clock>,
        receipt_key: Option<ReceiptKey>,
        base_env: BaseEnv,
        lock_wait: Duration,
    ) -> Self {
        Self {
            runs: RunStore::new(Arc::clone(&storage), lock_wait),
            handoffs: HandoffStore::new(Arc::clone(&storage), Arc::clone(&clock)),
            intakes: Intakes::new(Arc::clone(&storage), Arc::clone(&clock))
                .with_local_dir(local.root()),
            deliveries: DeliveryGates::new(Arc::clone(&storage), Arc::clone(&clock)),
            asks: orcho_handoff::ask::Asks::new(Arc::clone(&storage), Arc::clone(&clock)),
            storage,
            local,
            clock,
            receipt_key,
            base_env,
            decider: None,
            lock_wait,
        }
    }

    fn rebuilt(self) -> Self {
        let decider = self.decider;
        Self {
            decider,
            ..Self::assemble(
                self.storage,
                self.local,
                self.clock,
                self.receipt_key,
                self.base_env,
                self.lock_wait,
            )
        }
    }

    /// Records `who` (`alice@build-3`: a user and a machine) as who decided,
    /// with every decision and answer made through this store that names
    /// nobody ([`DecisionRequest::by`](orcho_handoff::decision::DecisionRequest::by));
    /// the autopilot's stay its own.
    #[must_use]
    pub fn with_decider(mut self, who: impl Into<String>) -> Self {
        self.decider = Some(who.into());
        self
    }

    /// Uses `clock` for every timestamp (a fixed clock makes evidence
    /// byte-stable in tests).
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self.rebuilt()
    }

    /// Signs every receipt written through this store with `key`, and
    /// classifies a receipt without a valid MAC for it as invalid: an agent
    /// that can write the store, but not read the key, cannot forge a
    /// passing receipt. Keep the key where the agent's processes cannot read
    /// it (no command is ever given it).
    #[must_use]
    pub fn with_receipt_key(mut self, key: Option<ReceiptKey>) -> Self {
        self.receipt_key = key;
        self
    }

    /// Subscribes to what is written to the store from now on, for a host
    /// that waits for a decision made elsewhere: [`Watch::changed`] wakes
    /// within moments of a write on a store that can tell (PostgreSQL's
    /// LISTEN/NOTIFY) and looks again every [`Watch::POLL`] otherwise.
    ///
    /// # Errors
    ///
    /// When the store cannot be asked.
    pub fn subscribe(&self) -> Result<Watch, EngineError> {
        let subscription = self
            .storage
            .subscribe()
            .map_err(|e| EngineError::store(Utf8Path::new(&self.storage.location()), e))?;
        Ok(Watch::new(subscription))
    }

    /// How long opening a run waits for its lease before it is busy
    /// (default [`DEFAULT_LOCK_WAIT`](crate::DEFAULT_LOCK_WAIT)).
    #[must_use]
    pub fn with_lock_wait(mut self, wait: Duration) -> Self {
        self.lock_wait = wait;
        self.rebuilt()
    }

    /// The environment declared commands inherit (default: this
    /// process's).
    #[must_use]
    pub fn with_base_env(mut self, base: BaseEnv) -> Self {
        self.base_env = base;
        self
    }

    /// Where runs and decisions are kept.
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    /// Where the store is, for messages: its directory, or a database
    /// without its password.
    pub fn location(&self) -> String {
        self.storage.location()
    }

    /// This machine's directory of the store: receipts, worktrees, phase
    /// logs, caches.
    pub fn local_dir(&self) -> &Utf8Path {
        self.local.root()
    }

    /// The clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Where the evidence bundle of `run` is kept once written (its file,
    /// in a directory store).
    pub fn evidence_path(&self, run: &RunId) -> Utf8PathBuf {
        self.storage.locate(run, Item::Evidence)
    }

    /// Where the journal of `run` is kept (its file, in a directory store).
    pub fn journal_path(&self, run: &RunId) -> Utf8PathBuf {
        self.storage.locate_log(run, orcho_core::storage::Log::Run)
    }

    /// The directory on this machine where the hooks a host installs in
    /// coding agents keep their state (refused stops, unproven stops):
    /// `<local>/agent-hooks`.
    pub fn agent_hooks_dir(&self) -> Utf8PathBuf {
        self.local.agent_hooks()
    }

    /// Where a run's retained worktree lives on this machine:
    /// `<local>/worktrees/<run>`.
    pub fn worktree_path(&self, run: &RunId) -> Utf8PathBuf {
        self.local.worktree(run)
    }

    /// The marker that names the process group of the phase command a host
    /// runs for `run`, for
    /// [`ExecRequest::group_marker`](orcho_receipts::exec::ExecRequest::group_marker):
    /// a host killed mid-phase leaves it behind, and the next host to run a
    /// phase of the run stops what is left of that group first
    /// ([`GroupMarker::stop_leftover`]).
    pub fn phase_group(&self, run: &RunId) -> GroupMarker {
        GroupMarker::new(self.local.run(run).phase_group())
    }

    /// Where the full output of a phase command a host runs for `request`
    /// goes: `(stdout, stderr)` under the run's `logs/` on this machine, one
    /// pair per attempt, for
    /// [`ExecRequest::stdout_log`](orcho_receipts::exec::ExecRequest::stdout_log).
    pub fn phase_logs(&self, request: &crate::PhaseRequest) -> (Utf8PathBuf, Utf8PathBuf) {
        let logs = self.local.run(&request.run).logs();
        let name = format!("{}-r{}-a{}", request.phase, request.round, request.attempt);
        (
            logs.join(format!("{name}.stdout.log")),
            logs.join(format!("{name}.stderr.log")),
        )
    }

    /// The directory where a phase attempt keeps what is not the work (a
    /// plan, a transcript, a report): `<local>/runs/<id>/artifacts/<phase>-r<round>-a<attempt>/`,
    /// on this machine and outside any worktree, so nothing in it is ever
    /// delivered. A host creates it and names it to the phase;
    /// [`artifacts`](Self::artifacts) lists what it holds.
    pub fn artifacts_dir(&self, request: &crate::PhaseRequest) -> Utf8PathBuf {
        self.attempt_artifacts(&request.run, &request.phase, request.round, request.attempt)
    }

    /// The store a program run in the checkout of `run` names as its own
    /// (`orcho verify --store`) so that the receipts it writes are the
    /// run's: `<local>/runs/<id>` for a run in a worktree, the store itself
    /// for a run in place.
    ///
    /// # Errors
    ///
    /// An unknown run, or one that cannot be read.
    pub fn receipts_store(&self, run: &RunId) -> Result<Utf8PathBuf, EngineError> {
        let state = self.runs.read(run)?;
        Ok(if state.workspace().is_some() {
            self.local.run(run).path().to_owned()
        } else {
            self.local.root().to_owned()
        })
    }

    /// The directory of `run` on this machine (`<local>/runs/<id>`): its
    /// logs, receipts and artifacts.
    pub fn run_dir(&self, run: &RunId) -> Utf8PathBuf {
        self.local.run(run).path().to_owned()
    }

    /// The artifacts directory of attempt `attempt` of `phase` in `round`.
    pub(crate) fn attempt_artifacts(
        &self,
        run: &RunId,
        phase: &orcho_core::PhaseName,
        round: u32,
        attempt: u32,
    ) -> Utf8PathBuf {
        self.local
            .run(run)
            .artifacts()
            .join(format!("{phase}-r{round}-a{attempt}"))
    }

    /// The logs of attempt `attempt` of `phase` in `round`, without an
    /// extension: `logs/<phase>-r<round>-a<attempt>`.
    pub(crate) fn attempt_logs(
        &self,
        run: &RunId,
        phase: &orcho_core::PhaseName,
        round: u32,
        attempt: u32,
    ) -> Utf8PathBuf {
        self.local
            .run(run)
            .logs()
            .join(format!("{phase}-r{round}-a{attempt}"))
    }

    /// The files the phases of `run` kept in their artifacts directories
    /// ([`artifacts_dir`](Self::artifacts_dir)), by attempt, then path.
    /// Links are listed, not followed; a directory that cannot be read is
    /// left out.
    pub fn artifacts(&self, run: &RunId) -> Vec<crate::Artifact> {
        let root = self.local.run(run).artifacts();
        let mut found = Vec::new();
        let Ok(attempts) = root.read_dir_utf8() else {
            return found;
        };
        let mut attempts: Vec<_> = attempts
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.file_name().to_owned())
            .collect();
        attempts.sort();
        for attempt in attempts {
            let dir = root.join(&attempt);
            let mut files = Vec::new();
            collect_files(&dir, Utf8Path::new(""), &mut files, 0);
            files.sort_by(|a, b| a.0.cmp(&b.0));
            found.extend(files.into_iter().map(|(file, bytes)| crate::Artifact {
                attempt: attempt.clone(),
                path: dir.join(&file),
                file,
                bytes,
            }));
        }
        found
    }

    /// The receipt store of the checkout itself, with the store's key.
    pub(crate) fn checkout_receipts(&self) -> ReceiptStore {
        self.receipts_in(self.local.root())
    }

    /// Where a run in a worktree keeps its receipts: with the run on this
    /// machine (`<local>/runs/<id>/receipts/`). They prove the worktree,
    /// and the checkout's own receipts stay as they were.
    pub(crate) fn run_receipts(&self, run: &RunId) -> ReceiptStore {
        self.receipts_in(self.local.run(run).path())
    }

    /// The receipt store in `dir`, with the store's key when it has one.
    fn receipts_in(&self, dir: &Utf8Path) -> ReceiptStore {
        let store = ReceiptStore::new(dir);
        match &self.receipt_key {
            Some(key) => store.with_key(key.clone()),
            None => store,
        }
    }

    /// The verifier of a run's receipts under `contract`: a run in a
    /// worktree proves its worktree with its own receipts, a run in place
    /// proves the checkout in the store's.
    pub(crate) fn verifier(
        &self,
        state: &crate::RunState,
        contract: Option<&VerificationContract>,
    ) -> Result<Option<Arc<Verifier>>, EngineError> {
        let receipts = match state.workspace() {
            Some(_) => self.run_receipts(state.run()),
            None => self.checkout_receipts(),
        };
        self.verifier_in(state.checkout(), receipts, contract)
    }

    /// A verifier of `checkout` under `contract`, recording in `receipts`.
    pub(crate) fn verifier_in(
        &self,
        checkout: &Utf8Path,
        receipts: ReceiptStore,
        contract: Option<&VerificationContract>,
    ) -> Result<Option<Arc<Verifier>>, EngineError> {
        let Some(contract) = contract else {
            return Ok(None);
        };
        let inherited: Vec<String> = contract
            .environments
            .iter()
            .flat_map(|e| e.inherit.iter().cloned())
            .collect();
        let verifier = Verifier::new(contract.clone(), checkout, receipts)
            .map_err(|e| {
                EngineError::store(self.local.root(), EngineErrorKind::Contract(Box::new(e)))
            })?
            .with_clock(Arc::clone(&self.clock))
            .with_base_env(
                self.base_env
                    .clone()
                    .with_host_vars(inherited.iter().map(String::as_str)),
            );
        Ok(Some(Arc::new(verifier)))
    }
}

macro_rules! store_from_path {
    ($($t:ty),*) => {$(
        impl From<$t> for Store {
            /// The directory store at this path ([`Store::open`]).
            fn from(dir: $t) -> Self {
                Self::open(dir)
            }
        }
    )*};
}

store_from_path!(Utf8PathBuf, &Utf8PathBuf, &Utf8Path, &str, String);

/// How deep [`Store::artifacts`] looks into an attempt's directory.
const ARTIFACT_DEPTH: usize = 8;

/// Adds the files below `dir` (as paths relative to the attempt's
/// directory, under `prefix`) with their sizes to `out`.
fn collect_files(
    dir: &Utf8Path,
    prefix: &Utf8Path,
    out: &mut Vec<(Utf8PathBuf, u64)>,
    depth: usize,
) {
    let Ok(entries) = dir.read_dir_utf8() else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        let relative = prefix.join(entry.file_name());
        if meta.is_dir() {
            if depth < ARTIFACT_DEPTH {
                collect_files(entry.path(), &relative, out, depth + 1);
            }
        } else {
            out.push((relative, meta.len()));
        }
    }
}
