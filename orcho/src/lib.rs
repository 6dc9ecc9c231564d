//! Orcho: readiness is proven, not claimed.
//!
//! Orcho is a library for the control points of an AI coding-agent run: the
//! checks that decide whether an agent's work is ready, the durable proof that
//! those checks ran, and the typed pauses where a person (or a bounded CI
//! autopilot) decides what happens next. It does not run agents: hosts bring
//! their own runners and user interfaces and compose Orcho's crates.
//!
//! This crate is the engine that composes them:
//!
//! - [`Engine`] runs a [`RunPlan`]: [`Engine::start`] creates a run and
//!   [`Run::next`] says what it needs — run a phase attempt
//!   ([`Step::RunPhase`], with fed-in failures, critique, feedback, waivers
//!   and, for final acceptance, the readiness summary), decide a handoff
//!   ([`Step::DecideHandoff`]), or nothing more ([`Step::Finished`]).
//!   [`Run::complete_phase`] takes the host's report, runs the phase's gates,
//!   applies their effect and the verdict, and persists everything;
//!   [`Store::decide`] records a decision without advancing the run and
//!   [`Run::resume`] advances it.
//! - [`Engine::start_with`] and [`Start::in_worktree`] run in a retained git
//!   worktree of the target checkout: pre-run intake asks first when the
//!   target has uncommitted changes ([`Step::DecideIntake`]), and the run
//!   ends at its delivery gate ([`Step::DecideDelivery`]: approve, apply,
//!   fix, skip, halt). A delivered `fix` gives the correction follow-up
//!   ([`Store::follow_up`]), a child run started with [`Start::follow_up`]
//!   from the parent's diff and linked to it.
//! - Supervision touchpoints are steps too: planner questions
//!   ([`Step::AnswerQuestions`], from a [`PhaseReport::interrupted`]), plan
//!   approval ([`Step::ApprovePlan`], when the plan asks for it) and
//!   deviations ([`Step::HandleDeviation`]), answered with
//!   [`Store::answer`] in the one question schema.
//! - [`Store::inbox`] lists every run of the store waiting for a decision.
//! - Final acceptance reads receipts: before it runs, missing or stale
//!   required receipts are re-run once; after its verdict, every unproven
//!   required command becomes a gap that forces a rejection, unless a waiver
//!   covers exactly that command.
//! - [`Engine::evidence`] builds the evidence bundle: phases, gates with
//!   outcomes and durations, the receipts' classification, handoffs and
//!   decisions, `handoff_advice`, costs.
//! - [`Host`] and [`drive`] run the loop for hosts that want it.
//! - [`point`] is the view of a run's open decision point every host
//!   shows (what waits, each action with what it does and its note rule,
//!   what a decision is pinned to); [`decide`] records a decision on it by
//!   the action's name, with the note rules every host shares.
//! - [`checkout`] is a checkout's own proof as every host shows it: its
//!   keys, its verification, its readiness, what its change does to weaken
//!   its proof, and the plan of the protected branch it is judged by.
//! - [`phase`] runs a phase attempt as a process, with the protocol the
//!   `orcho` command line runs phase commands and agents with.
//! - The [`Store`] keeps `runs/<run_id>/` with the journal as the source
//!   of truth: a process killed at any line leaves a run that the next
//!   process reopens and continues, with no transition applied twice. One
//!   exclusive lock per run: a second driver gets a "busy" error.
//!
//! The crates below are re-exported: [`core`], [`receipts`], [`gates`],
//! [`handoff`], [`delivery`], [`permissions`], [`profile`].
//!
//! # Embedding the engine
//!
//! A host loads a profile, starts a run and answers its steps: it runs each
//! phase attempt with its own runner and asks its own operator at each
//! decision point.
//!
//! ```
//! # use camino::Utf8Path;
//! # use orcho::{Engine, PhaseReport, PhaseRequest, RunPlan, Step};
//! # use orcho::core::Verdict;
//! # use orcho::gates::{GateRegistry, PhaseOutcome};
//! # use orcho::handoff::{decision::{DecidedBy, DecisionRequest}, handoff::{HandoffChoice, PhaseHandoff}};
//! # use orcho::profile::Profile;
//! # type Error = Box<dyn std::error::Error>;
//! # async fn my_runner(request: &PhaseRequest) -> Result<PhaseReport, Error> {
//! #     Ok(PhaseReport::new(PhaseOutcome::new(Verdict::Approved).with_summary(format!("did {}", request.phase))))
//! # }
//! # async fn ask_my_operator(_: &PhaseHandoff) -> Result<DecisionRequest<HandoffChoice>, Error> {
//! #     let choice = HandoffChoice::new(orcho::handoff::HandoffAction::Continue, None)?;
//! #     Ok(DecisionRequest::new(choice, DecidedBy::Operator))
//! # }
//! # async fn embed(checkout: &Utf8Path) -> Result<(), Error> {
//! let profile = Profile::load(checkout.join("orcho.yaml"))?.resolve(&GateRegistry::with_builtins())?;
//! let engine = Engine::builder(RunPlan::from_profile(&profile), checkout.join(".orcho")).build()?;
//! let mut run = engine.start(checkout)?;
//! let mut step = run.next().await?;
//! loop {
//!     step = match step {
//!         Step::RunPhase(request) => run.complete_phase(my_runner(&request).await?).await?,
//!         Step::DecideHandoff(handoff) => {
//!             engine.store().decide(run.id(), handoff.id(), ask_my_operator(&handoff).await?)?;
//!             run.resume().await?
//!         }
//!         Step::Finished { .. } => break,
//!         _ => unreachable!("this host handles every step"),
//!     };
//! }
//! # assert_eq!(engine.store().status(run.id())?.status, orcho::core::RunStatus::Completed);
//! # Ok(())
//! # }
//! # let dir = tempfile::tempdir()?;
//! # let checkout = Utf8Path::from_path(dir.path()).ok_or("not UTF-8")?;
//! # std::fs::write(checkout.join("orcho.yaml"), "schema: 1\nname: mine\nphases:\n  - name: implement\n    role: implement\n")?;
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(embed(checkout))?;
//! # Ok::<(), Error>(())
//! ```
//!
//! [`drive`] runs the same loop for hosts that implement [`Host`]: only
//! [`Host::run_phase`] is required, every decision point has a default that
//! leaves it open, and the host's own error type comes back as
//! [`DriveError::Host`] beside the engine's [`DriveError::Engine`]:
//!
//! ```
//! # use camino::Utf8Path;
//! use orcho::{DriveError, Engine, Host, PhaseReport, PhaseRequest, RunPlan, Step};
//! use orcho::core::{RunStatus, Verdict};
//! use orcho::gates::{GateRegistry, PhaseOutcome};
//! use orcho::profile::Profile;
//!
//! /// A host whose phases are all approved; its runner fails with `RunnerDown`.
//! struct Approving;
//!
//! #[derive(Debug, thiserror::Error)]
//! #[error("the runner is down")]
//! struct RunnerDown;
//!
//! impl Host for Approving {
//!     type Error = RunnerDown;
//!
//!     async fn run_phase(&mut self, request: &PhaseRequest) -> Result<PhaseReport, RunnerDown> {
//!         let outcome = PhaseOutcome::new(Verdict::Approved).with_summary(format!("did {}", request.phase));
//!         Ok(PhaseReport::new(outcome))
//!     }
//! }
//!
//! # async fn embed(checkout: &Utf8Path) -> Result<(), Box<dyn std::error::Error>> {
//! let profile = Profile::load(checkout.join("orcho.yaml"))?.resolve(&GateRegistry::with_builtins())?;
//! let engine = Engine::builder(RunPlan::from_profile(&profile), checkout.join(".orcho")).build()?;
//! let mut run = engine.start(checkout)?;
//! match orcho::drive(&mut run, &mut Approving).await {
//!     Ok(Step::Finished { status, .. }) => assert_eq!(status, RunStatus::Completed),
//!     Ok(paused) => println!("waits for a decision: {:?}", paused.waiting()),
//!     Err(DriveError::Host(RunnerDown)) => eprintln!("the runner failed; resume later"),
//!     Err(DriveError::Engine(e)) => return Err(e.into()),
//!     Err(e) => return Err(e.into()),
//! }
//! # Ok(())
//! # }
//! # let dir = tempfile::tempdir()?;
//! # let checkout = Utf8Path::from_path(dir.path()).ok_or("not UTF-8")?;
//! # std::fs::write(checkout.join("orcho.yaml"), "schema: 1\nname: mine\nphases:\n  - name: implement\n    role: implement\n")?;
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(embed(checkout))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The `embedding` example of the repository runs a complete host (a
//! terminal prompt at every decision point); [`phase`] runs phases as
//! processes with the documented protocol, timed by the host: a
//! [`phase::PhaseProcess::timeout`] bounds each attempt.
//!
//! # Crate features
//!
//! - `test-util`: `orcho::testing`, scenario tests of custom profiles with
//!   scripted phases, gates, advice and decisions (it turns on the
//!   `test-util` features of `orcho-gates` and `orcho-handoff`).
//!
//! # Stability and MSRV
//!
//! Pre-1.0: minor versions may break the API; on-disk formats are versioned
//! and never silently re-interpreted. The minimum supported Rust version is
//! 1.95.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod checkout;
pub mod decide;
mod engine;
mod error;
mod evidence;
mod host;
pub mod notify;
pub mod phase;
mod plan;
pub mod point;
pub mod proof;
mod state;
mod store;
#[cfg(feature = "test-util")]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
pub mod testing;
mod view;

pub use engine::{
    Engine, EngineBuilder, Interruption, PhaseReport, PhaseRequest, Run, Start, Step,
    SupervisionRequest,
};
pub use error::{EngineError, EngineErrorKind, Refusal, Remedy};

/// The longest task a run takes, in bytes: it reaches every phase in its
/// environment (`ORCHO_INPUT_TEXT`), where Linux refuses a variable of
/// more than 128 KiB. [`Engine::start_with`] refuses a longer one
/// ([`Refusal::TaskTooLarge`]).
pub const MAX_TASK_BYTES: usize = 64 * 1024;
pub use evidence::{
    DecisionAudit, DecisionEvidence, DeliveryEvidence, EVIDENCE_SCHEMA, Evidence, HandoffEvidence,
    InterruptionEvidence, PhaseEvidence, TouchpointEvidence,
};
pub use host::{DriveError, Host, Progress, drive};
pub use orcho_attest as attest;
pub use orcho_core as core;
pub use orcho_delivery as delivery;
pub use orcho_gates as gates;
pub use orcho_handoff as handoff;
pub use orcho_permissions as permissions;
pub use orcho_profile as profile;
pub use orcho_receipts as receipts;
pub use plan::{ExhaustedPolicy, PausePolicy, PhasePlan, PhaseRole, RunPlan};
pub use state::{
    Cursor, Ending, FollowUpOf, InFlight, Pause, PauseTrigger, PhaseInput, PlanInput, Release,
    Resumption, RunEvent, RunState, Stage, Supervised, TouchpointKind, Transition, TransitionError,
    Workspace,
};
pub use store::{DEFAULT_LOCK_WAIT, Store, Watch};
pub use view::{
    Artifact, AttemptView, GcReport, InboxFilter, InboxPage, Listed, Overridden, RunView,
    TeamInbox, Waiting,
};
