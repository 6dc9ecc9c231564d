//! Quality gates: checks that run after a phase and decide, as data, what
//! their failure means for the run.
//!
//! - [`QualityGate`]: the plugin trait. A gate names itself, says its
//!   [`GateKind`] (computational or inferential) and evaluates a
//!   [`GateContext`] into a [`QualityGateResult`]. `Ok` with a failed outcome
//!   is a verdict; `Err(`[`GateError`]`)` means the gate could not run.
//! - [`FailStrategy`]: what a failure does — `halt`, `feed_into_next`,
//!   `trigger_replan`, `informational` — and [`phase_effect`], the pure
//!   function from a phase's results to one [`PhaseEffect`].
//! - [`GateRegistry`]: names a profile's `uses:` can refer to, each with a
//!   factory that validates the gate's configuration;
//!   [`GateRegistry::with_builtins`] ships [`tests`](builtin::TestsGate),
//!   which runs a declared verification command so that its run is a receipt.
//! - [`Scheduler`]: runs a phase's gates in declared order, computational
//!   gates inline, inferential gates in concurrent waves, lock groups
//!   honoured across processes, a halting failure short-circuiting the rest.
//!
//! A third-party gate depends on this crate (and `orcho-core` below it),
//! never on the engine.
//!
//! # Example
//!
//! ```
//! use orcho_core::{Finding, GateName, Severity, Verdict};
//! use orcho_gates::{
//!     FailStrategy, GateContext, GateError, GateOutcome, PhaseEffect, PhaseOutcome, QualityGate, QualityGateExt,
//!     QualityGateResult, ScheduledGate, Scheduler,
//! };
//!
//! /// A gate that fails with one finding, or passes.
//! #[derive(Debug)]
//! struct Check { name: GateName, problem: Option<&'static str> }
//!
//! #[orcho_gates::async_trait]
//! impl QualityGate for Check {
//!     fn name(&self) -> &GateName { &self.name }
//!
//!     async fn evaluate(&self, _ctx: &GateContext) -> Result<QualityGateResult, GateError> {
//!         Ok(match self.problem {
//!             None => QualityGateResult::computational(self.name.clone(), GateOutcome::Passed),
//!             Some(problem) => QualityGateResult::computational(self.name.clone(), GateOutcome::Failed)
//!                 .with_finding(Finding::new(self.name.as_str(), Severity::High, problem)),
//!         })
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let tmp = tempfile::tempdir()?;
//! # let checkout = camino::Utf8PathBuf::try_from(tmp.path().to_owned())?;
//! let gates = [
//!     ScheduledGate::new(Check { name: "tests".parse()?, problem: Some("test `parse_empty` failed") }.into_dyn(), FailStrategy::FeedIntoNext),
//!     ScheduledGate::new(Check { name: "style".parse()?, problem: Some("line too long") }.into_dyn(), FailStrategy::Informational),
//!     ScheduledGate::new(Check { name: "build".parse()?, problem: None }.into_dyn(), FailStrategy::Halt),
//! ];
//!
//! let ctx = GateContext::new("run-1".parse()?, "implement".parse()?, &checkout, PhaseOutcome::new(Verdict::Approved));
//! let scheduler = Scheduler::builder(checkout.join(".orcho/locks")).build();
//! let mut persisted = Vec::new();
//! let phase = scheduler.run(&ctx, &gates, |record| { persisted.push(record.result.gate.clone()); Ok(()) }).await?;
//!
//! assert_eq!(persisted, ["tests", "style", "build"]);
//! let PhaseEffect::FeedIntoNext { failures } = phase.effect else { panic!("tests feed into the next attempt") };
//! assert_eq!(failures.len(), 1, "the informational failure never changes the effect");
//! assert_eq!(failures[0].findings[0].title, "test `parse_empty` failed");
//! # Ok(())
//! # }
//! ```
//!
//! # Crate features
//!
//! - `test-util`: the `testing` module, scripted gates for tests of hosts and
//!   profiles.
//!
//! # Stability and MSRV
//!
//! Pre-1.0: minor versions may break the API. The plugin surface
//! ([`QualityGate`], [`GateContext`], [`QualityGateResult`]) changes rarely
//! and deliberately. The minimum supported Rust version is 1.95.
#![warn(clippy::exhaustive_enums, clippy::exhaustive_structs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod builtin;
mod effect;
mod error;
mod fail_strategy;
mod gate;
mod registry;
mod result;
mod schedule;
#[cfg(feature = "test-util")]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
pub mod testing;

pub use async_trait::async_trait;
pub use effect::{
    ENVIRONMENT_KEY, GateFailure, PhaseEffect, informational_failures, is_environment_finding,
    phase_effect,
};
pub use error::{
    GateError, RegistryError, ScheduleError, StrategyParseError, UsageOnComputationalGate,
};
pub use fail_strategy::FailStrategy;
pub use gate::{
    Cancellation, Diff, GateContext, GateKind, PhaseOutcome, QualityGate, QualityGateExt,
    Verification, WithTimeout, Work,
};
pub use registry::{GateFactory, GateRegistry, GateRegistryBuilder, GateSpec};
pub use result::{GateOutcome, ModelUsage, QualityGateResult, ResultKind};
pub use schedule::{GateRecord, PhaseGates, ScheduledGate, Scheduler, SchedulerBuilder};
