//! The plugin trait and what a gate sees.

use std::{
    fmt,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use async_trait::async_trait;
use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{Finding, GateName, PhaseName, RunId, Verdict};
use orcho_receipts::{CommandName, CommandReceipt, Verifier};
use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

use crate::{GateError, QualityGateResult};

/// Whether a gate is a computation or a model's judgement.
///
/// The distinction decides scheduling (computational gates run inline, one
/// at a time per lock group; inferential gates run in concurrent waves) and
/// cost accounting (only inferential gates report money and tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[expect(
    clippy::exhaustive_enums,
    reason = "two kinds by definition; scheduling matches on them exhaustively"
)]
pub enum GateKind {
    /// Shell exit-code checks: tests, lint, type check, compile.
    Computational,
    /// LLM judges: security review, spec compliance, code review.
    Inferential,
}

impl fmt::Display for GateKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Computational => "computational",
            Self::Inferential => "inferential",
        })
    }
}

/// A signal that a gate should stop: its timeout ran out, a halting gate in
/// its wave failed, or the run was cancelled.
///
/// Cheap to clone; all clones observe the same signal. A gate that runs long
/// work should watch it ([`cancelled`](Self::cancelled) in a `select!`, or
/// [`is_cancelled`](Self::is_cancelled) between steps). The scheduler does
/// not rely on gates cooperating: it also stops awaiting them.
#[derive(Debug, Clone, Default)]
pub struct Cancellation {
    inner: Arc<CancelInner>,
}

#[derive(Debug, Default)]
struct CancelInner {
    cancelled: AtomicBool,
    notify: Notify,
}

impl Cancellation {
    /// A signal that has not fired.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fires the signal. Idempotent.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    /// Whether the signal has fired.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Completes when the signal fires (at once if it already has).
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

/// What the phase handler reported, as the gates after it see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PhaseOutcome {
    /// The phase's own verdict.
    pub verdict: Verdict,
    /// What the phase found.
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// The phase's summary (for example the agent's final message).
    #[serde(default)]
    pub summary: String,
}

impl PhaseOutcome {
    /// An outcome with a verdict and nothing else.
    pub fn new(verdict: Verdict) -> Self {
        Self {
            verdict,
            findings: Vec::new(),
            summary: String::new(),
        }
    }

    /// Adds findings.
    #[must_use]
    pub fn with_findings(mut self, findings: impl IntoIterator<Item = Finding>) -> Self {
        self.findings.extend(findings);
        self
    }
}

impl PhaseOutcome {
    orcho_core::setters! {
        /// Sets the summary.
        pub fn with_summary(summary: impl Into<String>);
    }
}

/// Everything a gate gets when it evaluates: which run, phase and attempt,
/// where the checkout is, what the phase reported, the gate's own
/// configuration (the profile's `with:` block), a cancellation signal and,
/// for gates that run declared commands, the run's [`Verification`].
///
/// Read through its accessors; a host builds one with [`new`](Self::new)
/// and the `with_*` methods.
///
/// ```
/// use orcho_gates::{GateContext, PhaseOutcome};
/// use orcho_core::Verdict;
///
/// let ctx = GateContext::new("run-1".parse()?, "implement".parse()?, "/work/repo", PhaseOutcome::new(Verdict::Approved))
///     .with_attempt(2)
///     .with_config(serde_json::json!({"command": "check"}));
/// assert_eq!((ctx.attempt(), ctx.round()), (2, 1));
/// assert_eq!(ctx.config()["command"], "check");
/// assert!(ctx.verification().is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct GateContext {
    run: RunId,
    phase: PhaseName,
    attempt: u32,
    round: u32,
    checkout: Utf8PathBuf,
    phase_outcome: PhaseOutcome,
    config: serde_json::Value,
    cancel: Cancellation,
    verification: Option<Verification>,
    work: Work,
}

/// What the run is doing, for gates that judge the change rather than run
/// a command (an inferential gate): the task, the plan, and the attempt's
/// diff. The engine fills the diff only for inferential gates. Cheap to
/// clone.
#[derive(Debug, Clone, Default)]
pub struct Work {
    task: Option<Arc<str>>,
    plan: Option<Arc<str>>,
    diff: Option<Diff>,
}

/// The attempt's change against the run's base, as a unified diff.
#[derive(Debug, Clone)]
pub struct Diff {
    base: Arc<str>,
    text: Arc<str>,
    total_bytes: usize,
}

impl Diff {
    /// The diff `text` against `base`, cut from a diff of `total_bytes`
    /// (equal to the text's length when nothing was cut).
    pub fn new(base: impl Into<Arc<str>>, text: impl Into<Arc<str>>, total_bytes: usize) -> Self {
        let text = text.into();
        Self {
            base: base.into(),
            total_bytes: total_bytes.max(text.len()),
            text,
        }
    }

    /// The commit the diff is against.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The diff (git's unified format; binary files named, not shown).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// How long the whole diff was: more than [`text`](Self::text) when the
    /// host cut it.
    pub fn total_bytes(&self) -> usize {
        self.total_bytes
    }
}

impl Work {
    /// Nothing known of the run's work.
    pub fn new() -> Self {
        Self::default()
    }

    /// With the run's task.
    #[must_use]
    pub fn with_task(mut self, task: impl Into<Arc<str>>) -> Self {
        self.task = Some(task.into());
        self
    }

    /// With the plan the run carries out, as text.
    #[must_use]
    pub fn with_plan(mut self, plan: impl Into<Arc<str>>) -> Self {
        self.plan = Some(plan.into());
        self
    }

    /// With the attempt's diff.
    #[must_use]
    pub fn with_diff(mut self, diff: Diff) -> Self {
        self.diff = Some(diff);
        self
    }

    /// What the run was started to do.
    pub fn task(&self) -> Option<&str> {
        self.task.as_deref()
    }

    /// The plan the run carries out, as text.
    pub fn plan(&self) -> Option<&str> {
        self.plan.as_deref()
    }

    /// The attempt's change against the run's base.
    pub fn diff(&self) -> Option<&Diff> {
        self.diff.as_ref()
    }
}

impl GateContext {
    /// A context for `phase` of `run`, attempt 1, with no configuration.
    pub fn new(
        run: RunId,
        phase: PhaseName,
        checkout: impl Into<Utf8PathBuf>,
        phase_outcome: PhaseOutcome,
    ) -> Self {
        Self {
            run,
            phase,
            attempt: 1,
            round: 1,
            checkout: checkout.into(),
            phase_outcome,
            config: serde_json::Value::Null,
            cancel: Cancellation::new(),
            verification: None,
            work: Work::default(),
        }
    }

    orcho_core::getters! {
        /// The run.
        pub fn run(&self) -> &RunId;
        /// The phase the gate runs after.
        pub fn phase(&self) -> &PhaseName;
        /// The 1-based attempt of the phase.
        pub fn attempt(&self) -> u32;
        /// The 1-based round of the run (a replan advances it).
        pub fn round(&self) -> u32;
        /// The checkout root the phase worked in.
        pub fn checkout(&self) -> &Utf8Path;
        /// What the phase reported.
        pub fn phase_outcome(&self) -> &PhaseOutcome;
        /// The gate's own configuration, already validated by its factory.
        pub fn config(&self) -> &serde_json::Value;
        /// Fires when the gate should stop.
        pub fn cancel(&self) -> &Cancellation;
    }

    /// The run's verification contract bound to its checkout, for gates
    /// that run declared commands (like the built-in `tests`) so that their
    /// runs are receipts; `None` when the run has no contract.
    pub fn verification(&self) -> Option<&Verification> {
        self.verification.as_ref()
    }

    /// What the run is doing: its task, its plan, the attempt's diff.
    pub fn work(&self) -> &Work {
        &self.work
    }
}

impl GateContext {
    orcho_core::setters! {
        /// Sets the attempt.
        pub fn with_attempt(attempt: u32);
        /// Sets the round.
        pub fn with_round(round: u32);
        /// Sets the gate's configuration.
        pub fn with_config(config: serde_json::Value);
        /// Sets the signal that stops the gate.
        pub fn with_cancel(cancel: Cancellation);
        /// Sets what the phase reported.
        pub fn with_phase_outcome(phase_outcome: PhaseOutcome);
        /// Sets what the run is doing.
        pub fn with_work(work: Work);
    }

    /// Hands over the run's verifier, behind a [`Verification`].
    #[must_use]
    pub fn with_verifier(mut self, verifier: Arc<Verifier>) -> Self {
        self.verification = Some(Verification(verifier));
        self
    }
}

/// What a gate may do with the run's verification contract: run one of its
/// declared commands (the run is a receipt, classified like any other),
/// and read the readiness the receipts show. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Verification(Arc<Verifier>);

impl Verification {
    /// Runs the declared command `name` in its environment and writes its
    /// receipt; `cancel` stops it.
    ///
    /// # Errors
    ///
    /// An undeclared command, or one that could not be run or recorded.
    pub fn run_command(
        &self,
        name: &CommandName,
        cancel: Option<&orcho_receipts::exec::CancelToken>,
    ) -> Result<CommandReceipt, orcho_receipts::ReceiptError> {
        self.0.run_command(name, cancel)
    }

    /// The readiness the receipts show now.
    ///
    /// # Errors
    ///
    /// When the receipts cannot be read.
    pub fn readiness(
        &self,
    ) -> Result<orcho_receipts::ReadinessSummary, orcho_receipts::ReceiptError> {
        self.0.readiness()
    }

    /// The directory the receipts (and the logs they name) are kept in.
    pub fn receipts_dir(&self) -> &Utf8Path {
        self.0.store().dir()
    }
}

/// A check that runs after a phase and reports a typed verdict.
///
/// # The contract
///
/// - [`evaluate`](Self::evaluate) returns `Ok(result)` when the check ran,
///   whatever it concluded: a failing check is `Ok` with
///   [`GateOutcome::Failed`](crate::GateOutcome::Failed) and findings saying
///   why. It returns `Err` only when the check *could not run* (a spawn
///   failed, a service was unreachable, a response was malformed); the
///   scheduler records that as an errored result, which counts as a failure
///   for the gate's fail strategy but is shown as "could not run", never as
///   "failed".
/// - The host guarantees: gates run after the phase handler, in declared
///   order; `ctx.config()` was accepted by the gate's factory; `ctx.cancel()`
///   fires at the gate's timeout or when a halting gate in its wave failed.
/// - Implementors must not: apply their own fail strategy (that is data in
///   the profile), write into the checkout, spawn processes except through
///   `orcho_receipts::exec`, or block the async executor for long (use
///   `tokio::task::spawn_blocking` for blocking work).
/// - Report [`GateKind::Inferential`] (and model usage) only for
///   model-backed judges; a computational result cannot carry money or
///   tokens.
///
/// <div class="warning">
///
/// [`kind`](Self::kind) and the kind of every result the gate returns must
/// agree: build results with [`QualityGateResult::of_kind`]`(self.kind(), …)`.
/// A computational gate that returns an inferential result (one made with
/// [`QualityGateResult::inferential`], which can carry model usage) is
/// recorded as **errored**, whatever it said — and with `on_fail: halt`,
/// that error stops the run. (An inferential gate that returns a
/// computational result is converted, without usage.)
///
/// </div>
///
/// # Writing a gate
///
/// The impl block needs `#[orcho_gates::async_trait]` too. Forgetting it
/// gives error E0195 ("lifetime parameters or bounds on method `evaluate`
/// do not match the trait declaration"):
///
/// ```compile_fail,E0195
/// use orcho_gates::{GateContext, GateError, QualityGate, QualityGateResult};
///
/// #[derive(Debug)]
/// struct Forgot(orcho_core::GateName);
///
/// impl QualityGate for Forgot {
///     fn name(&self) -> &orcho_core::GateName { &self.0 }
///     async fn evaluate(&self, ctx: &GateContext) -> Result<QualityGateResult, GateError> {
///         unimplemented!()
///     }
/// }
/// ```
///
/// With the attribute:
///
/// ```
/// use orcho_core::{Finding, GateName, Severity};
/// use orcho_gates::{GateContext, GateError, GateOutcome, QualityGate, QualityGateResult};
///
/// /// Fails when the phase's summary admits to skipped tests.
/// #[derive(Debug)]
/// struct NoSkippedTests {
///     name: GateName,
/// }
///
/// #[orcho_gates::async_trait]
/// impl QualityGate for NoSkippedTests {
///     fn name(&self) -> &GateName {
///         &self.name
///     }
///
///     async fn evaluate(&self, ctx: &GateContext) -> Result<QualityGateResult, GateError> {
///         let gate = self.name.clone();
///         Ok(if ctx.phase_outcome().summary.contains("skipped") {
///             QualityGateResult::computational(gate, GateOutcome::Failed)
///                 .with_finding(Finding::new("no_skipped_tests", Severity::Medium, "the phase skipped tests"))
///         } else {
///             QualityGateResult::computational(gate, GateOutcome::Passed)
///         })
///     }
/// }
/// ```
#[async_trait]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a quality gate",
    note = "implement `orcho_gates::QualityGate` with `#[orcho_gates::async_trait]` on the impl block; see the trait docs"
)]
pub trait QualityGate: fmt::Debug + Send + Sync + 'static {
    /// The gate's name, as the profile declares it (one registered gate can
    /// be used under several names with different configurations).
    fn name(&self) -> &GateName;

    /// Whether the gate is computational (the default) or inferential.
    fn kind(&self) -> GateKind {
        GateKind::Computational
    }

    /// Runs the check.
    ///
    /// # Errors
    ///
    /// A [`GateError`] when the check could not run (see the trait docs).
    async fn evaluate(&self, ctx: &GateContext) -> Result<QualityGateResult, GateError>;
}

/// A boxed or shared gate is the gate it points to.
macro_rules! forward_gate {
    ($($pointer:ident),+) => {$(
        #[async_trait]
        impl<G: QualityGate + ?Sized> QualityGate for $pointer<G> {
            fn name(&self) -> &GateName {
                (**self).name()
            }

            fn kind(&self) -> GateKind {
                (**self).kind()
            }

            async fn evaluate(&self, ctx: &GateContext) -> Result<QualityGateResult, GateError> {
                (**self).evaluate(ctx).await
            }
        }
    )+};
}

forward_gate!(Box, Arc);

mod sealed {
    #[expect(
        unnameable_types,
        reason = "the seal of QualityGateExt must not be nameable outside"
    )]
    pub trait Sealed {}
    impl<G: super::QualityGate + ?Sized> Sealed for G {}
}

/// Conveniences for every [`QualityGate`]. Sealed: implemented for all gates
/// and nothing else.
pub trait QualityGateExt: QualityGate + sealed::Sealed {
    /// This gate with a timeout: past `timeout` it is cancelled and reports
    /// [`GateOutcome::TimedOut`](crate::GateOutcome::TimedOut). The scheduler
    /// applies each gate's declared timeout itself; this is for hosts that
    /// call a gate directly.
    fn with_timeout(self, timeout: Duration) -> WithTimeout<Self>
    where
        Self: Sized,
    {
        WithTimeout {
            gate: self,
            timeout,
        }
    }

    /// This gate behind an `Arc<dyn QualityGate>`, as registries and the
    /// scheduler store gates.
    fn into_dyn(self) -> Arc<dyn QualityGate>
    where
        Self: Sized,
    {
        Arc::new(self)
    }
}

impl<G: QualityGate + ?Sized> QualityGateExt for G {}

/// A gate with a timeout; see [`QualityGateExt::with_timeout`].
#[derive(Debug)]
pub struct WithTimeout<G> {
    gate: G,
    timeout: Duration,
}

#[async_trait]
impl<G: QualityGate> QualityGate for WithTimeout<G> {
    fn name(&self) -> &GateName {
        self.gate.name()
    }

    fn kind(&self) -> GateKind {
        self.gate.kind()
    }

    async fn evaluate(&self, ctx: &GateContext) -> Result<QualityGateResult, GateError> {
        match tokio::time::timeout(self.timeout, self.gate.evaluate(ctx)).await {
            Ok(result) => result,
            Err(_) => {
                ctx.cancel.cancel();
                Ok(QualityGateResult::of_kind(
                    self.gate.kind(),
                    self.gate.name().clone(),
                    crate::GateOutcome::TimedOut {
                        after_ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
                    },
                )
                .with_duration(self.timeout))
            }
        }
    }
}
