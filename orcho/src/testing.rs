//! Scenario tests of custom profiles (feature `test-util`).
//!
//! A [`Scenario`] drives a real [`Engine`] in a temporary store with a fixed
//! clock: phase verdicts, gate results (through scripted gates in the plan),
//! advice and operator decisions are scripted, and the result is a readable
//! trace — one line per durable transition — to snapshot with insta, plus
//! typed accessors for assertions.
//!
//! ```
//! use orcho::{testing::Scenario, PhasePlan, PhaseRole, RunPlan};
//! use orcho::core::{Finding, RunStatus, Severity, Verdict};
//! use orcho::gates::PhaseOutcome;
//! use orcho::handoff::handoff::HandoffChoice;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! let plan = RunPlan::new("review-only", vec![PhasePlan::new("review".parse()?, PhaseRole::Review)]);
//! let rejected = PhaseOutcome::new(Verdict::Rejected)
//!     .with_findings([Finding::new("reviewer", Severity::High, "no tests for the parser")]);
//! let run = Scenario::new(plan)
//!     .report("review", rejected)
//!     .decide(HandoffChoice::retry("add a test for the empty input")?)
//!     .run()
//!     .await?;
//! assert_eq!(run.status, RunStatus::Completed);
//! assert_eq!(run.requests[1].input.feedback.as_deref(), Some("add a test for the empty input"));
//! println!("{}", run.trace);
//! # Ok(())
//! # }
//! ```

use std::{
    collections::{BTreeMap, VecDeque},
    sync::Arc,
};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{FixedClock, RunId, RunStatus, Timestamp, Verdict};
use orcho_delivery::{DeliveryGate, IntakeReport};
use orcho_gates::PhaseOutcome;
use orcho_handoff::{
    Advisor,
    autopilot::AutopilotOutcome,
    decision::{DecidedBy, DecisionRequest},
    delivery::DeliveryChoice,
    handoff::{HandoffChoice, PhaseHandoff},
    intake::IntakeChoice,
    supervision::Answer,
};

use crate::{
    Engine, EngineError, PhaseReport, PhaseRequest, RunPlan, Start, Step, SupervisionRequest,
};

type Hook = Box<dyn Fn(&Utf8Path) + Send + Sync>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A scripted run of a plan.
#[must_use]
pub struct Scenario {
    plan: RunPlan,
    reports: BTreeMap<String, VecDeque<PhaseReport>>,
    decisions: VecDeque<HandoffChoice>,
    advisor: Option<Arc<dyn Advisor>>,
    autopilot: bool,
    start: Timestamp,
    files: Vec<(Utf8PathBuf, Vec<u8>)>,
    hooks: Vec<(String, u32, Hook)>,
    max_steps: usize,
    worktree: bool,
    dirty: Vec<(Utf8PathBuf, Vec<u8>)>,
    answers: VecDeque<Vec<Answer>>,
    intake: Option<IntakeChoice>,
    deliveries: VecDeque<DeliveryChoice>,
    task: Option<String>,
}

impl std::fmt::Debug for Scenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scenario")
            .field("plan", &self.plan.name)
            .field("decisions", &self.decisions)
            .field("autopilot", &self.autopilot)
            .finish_non_exhaustive()
    }
}

/// What a scenario did.
#[derive(Debug)]
#[non_exhaustive]
pub struct ScenarioRun {
    /// The run.
    pub run: RunId,
    /// Where it ended (or paused, when the script ran out of decisions).
    pub status: RunStatus,
    /// Why it ended, when it did.
    pub reason: String,
    /// One line per durable transition.
    pub trace: String,
    /// Every phase attempt the engine asked for, in order.
    pub requests: Vec<PhaseRequest>,
    /// Every handoff the engine paused at, in order.
    pub handoffs: Vec<PhaseHandoff>,
    /// What the autopilot did, in order (autopilot scenarios only).
    pub autopilot: Vec<AutopilotOutcome>,
    /// The engine, to inspect the store further.
    pub engine: Engine,
    /// The checkout the run worked on (its worktree, for a run in one).
    pub checkout: Utf8PathBuf,
    /// The target checkout of a run in a worktree (a git repository the
    /// scenario created), where delivery lands.
    pub target: Option<Utf8PathBuf>,
    /// Every supervision touchpoint the engine paused at, in order.
    pub touchpoints: Vec<SupervisionRequest>,
    /// The intake question, if the target was dirty.
    pub intake: Option<IntakeReport>,
    /// The delivery gate, if the run reached one.
    pub delivery: Option<DeliveryGate>,
    _dir: tempfile::TempDir,
}

impl Scenario {
    /// A scenario of `plan`. Phases without a scripted report are approved.
    pub fn new(plan: RunPlan) -> Self {
        Self {
            plan,
            reports: BTreeMap::new(),
            decisions: VecDeque::new(),
            advisor: None,
            autopilot: false,
            start: Timestamp::from_unix_millis(1_795_305_600_000)
                .unwrap_or_else(|_| Timestamp::now()),
            files: Vec::new(),
            hooks: Vec::new(),
            max_steps: 200,
            worktree: false,
            dirty: Vec::new(),
            answers: VecDeque::new(),
            intake: None,
            deliveries: VecDeque::new(),
            task: None,
        }
    }

    /// Runs in a retained worktree of a git repository the scenario creates
    /// (its files committed), ending at a delivery gate. Needs `git` on
    /// `PATH`.
    pub fn in_worktree(mut self) -> Self {
        self.worktree = true;
        self
    }

    /// Leaves an uncommitted file in the target repository before the run
    /// starts, so that pre-run intake asks (worktree scenarios).
    pub fn dirty(mut self, path: impl Into<Utf8PathBuf>, contents: impl Into<Vec<u8>>) -> Self {
        self.dirty.push((path.into(), contents.into()));
        self
    }

    /// Scripts the next attempt of `phase` with a whole report (a plan, an
    /// interruption, a cost).
    pub fn report_with(mut self, phase: &str, report: PhaseReport) -> Self {
        self.reports
            .entry(phase.to_owned())
            .or_default()
            .push_back(report);
        self
    }

    /// Scripts the operator's answers to the next supervision touchpoint.
    pub fn answer(mut self, answers: Vec<Answer>) -> Self {
        self.answers.push_back(answers);
        self
    }

    /// Scripts the operator's next delivery decision.
    pub fn deliver(mut self, choice: DeliveryChoice) -> Self {
        self.deliveries.push_back(choice);
        self
    }

    /// Scripts the next attempt of `phase` to report `outcome`.
    pub fn report(mut self, phase: &str, outcome: PhaseOutcome) -> Self {
        self.reports
            .entry(phase.to_owned())
            .or_default()
            .push_back(PhaseReport::new(outcome));
        self
    }

    /// Scripts the next attempts of `phase` to be rejected `n` times (no
    /// findings).
    pub fn reject(self, phase: &str, n: usize) -> Self {
        (0..n).fold(self, |s, _| {
            s.report(phase, PhaseOutcome::new(Verdict::Rejected))
        })
    }

    /// Scripts the operator's next handoff decision.
    pub fn decide(mut self, choice: HandoffChoice) -> Self {
        self.decisions.push_back(choice);
        self
    }

    /// Runs non-interactively: every handoff goes to the CI autopilot; the
    /// scenario stops when the autopilot stops.
    pub fn autopilot(mut self) -> Self {
        self.autopilot = true;
        self
    }

    /// Writes a file into the checkout before the run starts.
    pub fn file(mut self, path: impl Into<Utf8PathBuf>, contents: impl Into<Vec<u8>>) -> Self {
        self.files.push((path.into(), contents.into()));
        self
    }

    /// Runs `hook` on the checkout when the engine asks for `attempt` of
    /// `phase`, before the scripted report is given (for example, to edit a
    /// file so that a receipt goes stale).
    pub fn before(
        mut self,
        phase: &str,
        attempt: u32,
        hook: impl Fn(&Utf8Path) + Send + Sync + 'static,
    ) -> Self {
        self.hooks.push((phase.to_owned(), attempt, Box::new(hook)));
        self
    }

    /// Runs the scenario to the end, or to the first pause the script has no
    /// decision for.
    ///
    /// # Errors
    ///
    /// Any engine error (a scenario that drives the engine wrongly is a test
    /// failure).
    pub async fn run(mut self) -> Result<ScenarioRun, BoxError> {
        let dir = tempfile::tempdir()?;
        let root = Utf8PathBuf::try_from(dir.path().to_owned())?;
        let checkout = root.join("checkout");
        orcho_core::fs::create_dir_all(&checkout)?;
        for (path, contents) in &self.files {
            let path = checkout.join(path);
            if let Some(parent) = path.parent() {
                orcho_core::fs::create_dir_all(parent)?;
            }
            orcho_core::fs::write_atomic(&path, contents)?;
        }
        let clock = Arc::new(FixedClock::new(self.start));
        let mut builder =
            Engine::builder(self.plan.clone(), root.join("store")).clock(clock.clone());
        if let Some(advisor) = &self.advisor {
            builder = builder.advisor(Arc::clone(advisor));
        }
        let engine = builder.build()?;
        let mut start = if self.worktree {
            git_repository(&checkout, &self.dirty)?;
            Start::in_worktree(&checkout)
        } else {
            Start::in_place(&checkout)
        };
        if let Some(task) = &self.task {
            start = start.task(task);
        }
        let mut run = engine.start_with(start)?;
        let target = self.worktree.then(|| checkout.clone());
        let mut requests = Vec::new();
        let mut handoffs = Vec::new();
        let mut autopilot = Vec::new();
        let mut touchpoints = Vec::new();
        let mut intake = None;
        let mut delivery = None;
        let mut step = run.next().await?;
        for _ in 0..self.max_steps {
            clock.advance(std::time::Duration::from_secs(1));
            step = match step {
                Step::RunPhase(request) => {
                    for (phase, attempt, hook) in &self.hooks {
                        if request.phase.as_str() == phase && request.attempt == *attempt {
                            hook(run.state().checkout());
                        }
                    }
                    let report = self
                        .reports
                        .get_mut(request.phase.as_str())
                        .and_then(VecDeque::pop_front)
                        .unwrap_or_else(|| PhaseReport::new(PhaseOutcome::new(Verdict::Approved)));
                    requests.push(request);
                    run.complete_phase(report).await?
                }
                Step::DecideHandoff(handoff) => {
                    handoffs.push(handoff.clone());
                    if self.autopilot {
                        let (outcome, next) = run.autopilot().await?;
                        let retried = matches!(outcome, AutopilotOutcome::Retried { .. });
                        autopilot.push(outcome);
                        if !retried {
                            break;
                        }
                        next
                    } else {
                        let Some(choice) = self.decisions.pop_front() else {
                            break;
                        };
                        let halting = choice == HandoffChoice::Halt;
                        engine.store().decide(
                            run.id(),
                            handoff.id(),
                            DecisionRequest::new(choice, DecidedBy::Operator),
                        )?;
                        match run.resume().await {
                            Ok(next) => next,
                            Err(e) if halting && e.is_terminal() => run.next().await?,
                            Err(e) => return Err(e.into()),
                        }
                    }
                }
                Step::DecideIntake(report) => {
                    intake = Some(report);
                    let Some(choice) = self.intake.take() else {
                        break;
                    };
                    engine.store().decide_intake(
                        run.id(),
                        DecisionRequest::new(choice, DecidedBy::Operator),
                    )?;
                    run.resume().await?
                }
                Step::AnswerQuestions(request)
                | Step::ApprovePlan(request)
                | Step::HandleDeviation(request) => {
                    touchpoints.push(request.clone());
                    let Some(answers) = self.answers.pop_front() else {
                        break;
                    };
                    engine
                        .store()
                        .answer(run.id(), &request.id, answers, DecidedBy::Operator)?;
                    run.resume().await?
                }
                Step::DecideDelivery(gate) => {
                    delivery = Some(gate);
                    let Some(choice) = self.deliveries.pop_front() else {
                        break;
                    };
                    engine.store().decide_delivery(
                        run.id(),
                        DecisionRequest::new(choice, DecidedBy::Operator),
                    )?;
                    run.resume().await?
                }
                Step::Finished { .. } => break,
            };
        }
        if delivery.is_none()
            && let Ok(gate) = engine.store().delivery_gate(run.id())
        {
            delivery = Some(gate);
        }
        let state = run.state().clone();
        let id = run.id().clone();
        drop(run);
        let trace = engine.store().trace(&id)?;
        Ok(ScenarioRun {
            run: id,
            status: state.status(),
            reason: state.reason().unwrap_or_default().to_owned(),
            trace,
            requests,
            handoffs,
            autopilot,
            engine,
            checkout: state.checkout().to_owned(),
            target,
            touchpoints,
            intake,
            delivery,
            _dir: dir,
        })
    }
}

impl Scenario {
    orcho_core::setters! {
        /// Scripts the operator's intake decision.
        pub fn intake(choice: Some(IntakeChoice)) => intake;
        /// Uses `advisor` (for the autopilot).
        pub fn advisor(advisor: Some(Arc<dyn Advisor>));
        /// Starts the run with this task.
        pub fn task(task: Some(impl Into<String>));
    }
}

/// Makes `dir` a git repository with its files committed, then leaves the
/// `dirty` files uncommitted.
fn git_repository(dir: &Utf8Path, dirty: &[(Utf8PathBuf, Vec<u8>)]) -> Result<(), BoxError> {
    use orcho_receipts::exec::{self, BaseEnv, ExecRequest};
    let git = |args: &[&str]| -> Result<(), BoxError> {
        let request = ExecRequest::new(std::iter::once("git").chain(args.iter().copied()))
            .cwd(dir.to_owned())
            .envs(BaseEnv::inherit())
            .env("GIT_AUTHOR_NAME", "Orcho Scenario")
            .env("GIT_AUTHOR_EMAIL", "scenario@orcho.invalid")
            .env("GIT_COMMITTER_NAME", "Orcho Scenario")
            .env("GIT_COMMITTER_EMAIL", "scenario@orcho.invalid");
        let out = exec::run(&request)?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "`git {}` failed ({}): {}",
                args.join(" "),
                out.status,
                out.stderr.tail_lossy().trim()
            )
            .into())
        }
    };
    git(&["init", "--quiet", "--initial-branch=main"])?;
    git(&["config", "user.name", "Orcho Scenario"])?;
    git(&["config", "user.email", "scenario@orcho.invalid"])?;
    git(&["config", "commit.gpgsign", "false"])?;
    orcho_core::fs::write_atomic(&dir.join("README.md"), b"scenario\n")?;
    git(&["add", "--all"])?;
    git(&["commit", "--quiet", "-m", "scenario: initial commit"])?;
    for (path, contents) in dirty {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            orcho_core::fs::create_dir_all(parent)?;
        }
        orcho_core::fs::write_atomic(&path, contents)?;
    }
    Ok(())
}

impl ScenarioRun {
    /// The store directory.
    pub fn store(&self) -> &Utf8Path {
        self.engine.store().local_dir()
    }

    /// The engine's error for resuming this run now (for refusal tests).
    ///
    /// # Errors
    ///
    /// Whatever opening the run returns.
    pub async fn resume(&self) -> Result<Step, EngineError> {
        self.engine.open(&self.run)?.resume().await
    }
}
