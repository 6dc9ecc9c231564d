//! [`Engine`] and its builder: one plan, one store, the stores of every
//! kind of decision point, the gate scheduler.

use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{Clock, SystemClock};
use orcho_delivery::{DeliveryGates, Intakes};
use orcho_gates::Scheduler;
use orcho_handoff::{Advisor, HandoffStore};
use orcho_receipts::{ReceiptKey, ReceiptStore, Verifier, exec::BaseEnv};

use crate::{EngineError, error::EngineErrorKind, plan::RunPlan, store::RunStore};

/// Drives runs of one [`RunPlan`] in one store.
///
/// Cheap to clone. Methods that change a run go through a [`Run`](crate::Run), which
/// holds the run's exclusive lock; [`decide`](Self::decide) and
/// [`advise`](Self::advise) do not need it, so an operator in another
/// process can decide while the run waits.
#[derive(Debug, Clone)]
pub struct Engine {
    pub(super) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(super) struct Inner {
    pub(super) plan: RunPlan,
    pub(super) runs: RunStore,
    pub(super) handoffs: HandoffStore,
    pub(super) intakes: Intakes,
    pub(super) deliveries: DeliveryGates,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) advisor: Option<Arc<dyn Advisor>>,
    pub(super) scheduler: Scheduler,
    pub(super) base_env: BaseEnv,
    pub(super) receipt_key: Option<ReceiptKey>,
}

/// Builds an [`Engine`].
#[derive(Debug)]
#[must_use]
pub struct EngineBuilder {
    plan: RunPlan,
    store: Utf8PathBuf,
    clock: Arc<dyn Clock>,
    advisor: Option<Arc<dyn Advisor>>,
    concurrency: usize,
    base_env: BaseEnv,
    lock_wait: std::time::Duration,
    receipt_key: Option<ReceiptKey>,
}

impl EngineBuilder {
    /// How many inferential gates of one wave run at once.
    pub fn inferential_concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// The engine.
    ///
    /// # Errors
    ///
    /// When the plan's verification contract is invalid.
    pub fn build(self) -> Result<Engine, EngineError> {
        if let Some(contract) = &self.plan.verification {
            contract.validate().map_err(|e| {
                EngineError::store(&self.store, EngineErrorKind::Contract(Box::new(e)))
            })?;
        }
        let scheduler = Scheduler::builder(self.store.join("locks"))
            .inferential_concurrency(self.concurrency)
            .build();
        Ok(Engine {
            inner: Arc::new(Inner {
                plan: self.plan,
                runs: RunStore::new(self.store.clone()).with_lock_wait(self.lock_wait),
                intakes: Intakes::new(self.store.clone(), Arc::clone(&self.clock)),
                deliveries: DeliveryGates::new(self.store.clone(), Arc::clone(&self.clock)),
                handoffs: HandoffStore::new(self.store, Arc::clone(&self.clock)),
                clock: self.clock,
                advisor: self.advisor,
                scheduler,
                base_env: self.base_env,
                receipt_key: self.receipt_key,
            }),
        })
    }
}

impl EngineBuilder {
    orcho_core::setters! {
        /// Uses `clock` for every timestamp (a fixed clock makes evidence
        /// byte-stable in tests).
        pub fn clock(clock: Arc<dyn Clock>);
        /// Uses `advisor` for advice and the CI autopilot.
        pub fn advisor(advisor: Some(Arc<dyn Advisor>));
        /// How long opening a run waits for its lock before it is busy (default
        /// [`DEFAULT_LOCK_WAIT`](crate::DEFAULT_LOCK_WAIT)).
        pub fn lock_wait(wait: std::time::Duration) => lock_wait;
        /// The environment declared commands inherit (default: this process's).
        pub fn base_env(base: BaseEnv) => base_env;
        /// Signs every receipt the engine writes with `key`, and classifies a
        /// receipt without a valid MAC for it as invalid: an agent that can
        /// write the store, but not read the key, cannot forge a passing
        /// receipt. Without a key, receipts carry only their digest, which
        /// catches edits but not forgeries. Keep the key where the agent's
        /// processes cannot read it (the engine never passes it to a command).
        pub fn receipt_key(key: Some(ReceiptKey)) => receipt_key;
    }
}

impl Engine {
    /// A builder for runs of `plan`, stored under `store` (usually
    /// `<checkout>/.orcho`).
    pub fn builder(plan: RunPlan, store: impl Into<Utf8PathBuf>) -> EngineBuilder {
        EngineBuilder {
            plan,
            store: store.into(),
            clock: Arc::new(SystemClock::new()),
            advisor: None,
            concurrency: 4,
            base_env: BaseEnv::inherit(),
            lock_wait: crate::DEFAULT_LOCK_WAIT,
            receipt_key: None,
        }
    }

    /// The plan.
    pub fn plan(&self) -> &RunPlan {
        &self.inner.plan
    }

    /// The run store.
    pub fn runs(&self) -> &RunStore {
        &self.inner.runs
    }

    /// The handoff store (handoffs, decisions, advice, waivers).
    pub fn handoffs(&self) -> &HandoffStore {
        &self.inner.handoffs
    }

    /// The verifier of a run's receipts. A run in a worktree keeps them
    /// with the run (`runs/<id>/receipts/`): they prove the worktree, and
    /// the checkout's own receipts stay as they were. A run in place proves
    /// the checkout itself, in the store's receipts.
    pub(super) fn verifier(
        &self,
        state: &crate::RunState,
    ) -> Result<Option<Arc<Verifier>>, EngineError> {
        let store = match state.workspace() {
            Some(_) => self.run_receipts(state.run()),
            None => self.receipts_in(self.inner.runs.root()),
        };
        self.verifier_in(state.checkout(), store)
    }

    /// Where a run in a worktree keeps its receipts.
    pub(super) fn run_receipts(&self, run: &orcho_core::RunId) -> ReceiptStore {
        self.receipts_in(self.inner.runs.layout().run(run).path())
    }

    /// The receipt store in `dir`, with the engine's key when it has one.
    pub(super) fn receipts_in(&self, dir: &Utf8Path) -> ReceiptStore {
        let store = ReceiptStore::new(dir);
        match &self.inner.receipt_key {
            Some(key) => store.with_key(key.clone()),
            None => store,
        }
    }

    /// A verifier of `checkout` recording in `store`.
    pub(super) fn verifier_in(
        &self,
        checkout: &Utf8Path,
        store: ReceiptStore,
    ) -> Result<Option<Arc<Verifier>>, EngineError> {
        let Some(contract) = &self.inner.plan.verification else {
            return Ok(None);
        };
        let inherited: Vec<String> = contract
            .environments
            .iter()
            .flat_map(|e| e.inherit.iter().cloned())
            .collect();
        let verifier = Verifier::new(contract.clone(), checkout, store)
            .map_err(|e| {
                EngineError::store(
                    self.inner.runs.root(),
                    EngineErrorKind::Contract(Box::new(e)),
                )
            })?
            .with_clock(Arc::clone(&self.inner.clock))
            .with_base_env(
                self.inner
                    .base_env
                    .clone()
                    .with_host_vars(inherited.iter().map(String::as_str)),
            );
        Ok(Some(Arc::new(verifier)))
    }
}
