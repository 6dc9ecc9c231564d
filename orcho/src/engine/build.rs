//! [`Engine`] and its builder: one plan, one [`Store`], the gate scheduler.

use std::sync::Arc;

use orcho_core::Clock;
use orcho_gates::Scheduler;
use orcho_handoff::Advisor;
use orcho_receipts::{ReceiptKey, Verifier, exec::BaseEnv};

use crate::{EngineError, Store, error::EngineErrorKind, plan::RunPlan};

/// Drives runs of one [`RunPlan`] in one [`Store`]: a store plus a plan.
///
/// Cheap to clone. Methods that change a run go through a [`Run`](crate::Run), which
/// holds the run's exclusive lease; what is read and decided about runs
/// needs no plan and is on the [`Store`] ([`store`](Self::store)), so an
/// operator in another process can decide while the run waits.
#[derive(Debug, Clone)]
pub struct Engine {
    pub(super) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(super) struct Inner {
    pub(super) plan: RunPlan,
    pub(super) store: Store,
    pub(super) advisor: Option<Arc<dyn Advisor>>,
    pub(super) scheduler: Scheduler,
    pub(super) signing_key: Option<orcho_attest::SigningKey>,
}

/// Builds an [`Engine`].
#[derive(Debug)]
#[must_use]
pub struct EngineBuilder {
    plan: RunPlan,
    store: Store,
    advisor: Option<Arc<dyn Advisor>>,
    concurrency: usize,
    signing_key: Option<orcho_attest::SigningKey>,
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
                EngineError::store(
                    self.store.local_dir(),
                    EngineErrorKind::Contract(Box::new(e)),
                )
            })?;
        }
        let scheduler = Scheduler::builder(self.store.local_dir().join("locks"))
            .inferential_concurrency(self.concurrency)
            .build();
        Ok(Engine {
            inner: Arc::new(Inner {
                plan: self.plan,
                store: self.store,
                advisor: self.advisor,
                scheduler,
                signing_key: self.signing_key,
            }),
        })
    }

    /// Uses `clock` for every timestamp (a fixed clock makes evidence
    /// byte-stable in tests).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.store = self.store.with_clock(clock);
        self
    }

    /// Uses `advisor` for advice and the CI autopilot.
    pub fn advisor(mut self, advisor: Arc<dyn Advisor>) -> Self {
        self.advisor = Some(advisor);
        self
    }

    /// How long opening a run waits for its lease before it is busy (default
    /// [`DEFAULT_LOCK_WAIT`](crate::DEFAULT_LOCK_WAIT)).
    pub fn lock_wait(mut self, wait: std::time::Duration) -> Self {
        self.store = self.store.with_lock_wait(wait);
        self
    }

    /// The environment declared commands inherit (default: this process's).
    pub fn base_env(mut self, base: BaseEnv) -> Self {
        self.store = self.store.with_base_env(base);
        self
    }

    /// Signs every receipt the engine writes with `key`, and classifies a
    /// receipt without a valid MAC for it as invalid: an agent that can
    /// write the store, but not read the key, cannot forge a passing
    /// receipt. Without a key, receipts carry only their digest, which
    /// catches edits but not forgeries. Keep the key where the agent's
    /// processes cannot read it (the engine never passes it to a command).
    pub fn receipt_key(mut self, key: ReceiptKey) -> Self {
        self.store = self.store.with_receipt_key(Some(key));
        self
    }

    /// Attaches signed attestations of the run's receipts to the commit
    /// `approve` makes, when that commit's tree is the one they prove (a
    /// git note under `refs/notes/orcho`; see `orcho_attest`). Without a
    /// key, nothing is attested.
    pub fn signing_key(mut self, key: orcho_attest::SigningKey) -> Self {
        self.signing_key = Some(key);
        self
    }
}

impl Engine {
    /// A builder for runs of `plan` in `store`: a [`Store`], or the
    /// directory of one (usually `<checkout>/.orcho`).
    pub fn builder(plan: RunPlan, store: impl Into<Store>) -> EngineBuilder {
        EngineBuilder {
            plan,
            store: store.into(),
            advisor: None,
            concurrency: 4,
            signing_key: None,
        }
    }

    /// The plan.
    pub fn plan(&self) -> &RunPlan {
        &self.inner.plan
    }

    /// The store: what is read and decided about runs, with no plan.
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// The advisor, if the engine has one.
    pub fn advisor(&self) -> Option<&Arc<dyn Advisor>> {
        self.inner.advisor.as_ref()
    }

    /// The verifier of a run's receipts under the plan's contract.
    pub(super) fn verifier(
        &self,
        state: &crate::RunState,
    ) -> Result<Option<Arc<Verifier>>, EngineError> {
        self.inner
            .store
            .verifier(state, self.inner.plan.verification.as_ref())
    }

    /// The run's evidence bundle with its receipts classified under the
    /// plan's contract ([`Store::evidence`]); nothing is written.
    ///
    /// # Errors
    ///
    /// As [`Store::evidence`].
    pub fn evidence(&self, run: &orcho_core::RunId) -> Result<crate::Evidence, EngineError> {
        self.inner
            .store
            .evidence(run, self.inner.plan.verification.as_ref())
    }
}
