//! The decision points around the phase loop: pre-run intake and the
//! retained worktree, supervision touchpoints, the delivery gate and
//! correction follow-ups. Every one is a typed pause with a durable,
//! idempotent decision recorded by `orcho-handoff`; the engine only opens
//! them, journals what happened and moves the run.

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{HandoffId, RunId, Verdict};
use orcho_delivery::{
    DeliveryGate, DeliveryOutcome, DeliverySpec, FollowUpLink, FollowUpSpec, IntakeOutcome,
    detect_intake,
};
use orcho_handoff::{
    DecidedBy, DecisionRequest, DeliveryAction, DeliveryChoice, Inbox, IntakeAction, IntakeChoice,
    RecordedDecision,
    supervision::{
        Answer, DeviationOutcome, DeviationSpent, PlanOutcome, PlannerQuestions, Resolution,
        SupervisionStore, Touchpoint,
    },
};
use orcho_receipts::ReadinessSummary;

use super::{
    imp::{Engine, Run, blocking_readiness},
    step::{Interruption, Step, SupervisionRequest},
};
use crate::{
    EngineError,
    error::EngineErrorKind,
    state::{FollowUpOf, RunEvent, Supervised, Workspace},
};

/// The message of the worktree commit that holds the changes included at
/// intake.
const INCLUDED_MESSAGE: &str = "Uncommitted changes of the target, included at intake";

/// How a run starts: in place in a checkout, or in a retained worktree of
/// it that ends at a delivery gate.
///
/// ```
/// use orcho::Start;
///
/// let in_place = Start::in_place("/work/repo");
/// let isolated = Start::in_worktree("/work/repo");
/// assert!(!in_place.delivers());
/// assert!(isolated.delivers());
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct Start {
    checkout: Utf8PathBuf,
    worktree: bool,
    follow_up: Option<FollowUpSpec>,
}

impl Start {
    /// Phases and gates work directly in `checkout`; the run ends when its
    /// last phase passes, with no intake and no delivery gate.
    pub fn in_place(checkout: impl Into<Utf8PathBuf>) -> Self {
        Self {
            checkout: checkout.into(),
            worktree: false,
            follow_up: None,
        }
    }

    /// The run works in its own git worktree of `checkout` (the target),
    /// created after pre-run intake and kept after the run; it ends at a
    /// delivery gate that commits, applies or discards exactly its diff.
    ///
    /// When intake includes the target's uncommitted changes, they are
    /// committed in the worktree and the run's diff is taken from there:
    /// they stay the target's own uncommitted work, and delivery brings
    /// only what the run did.
    pub fn in_worktree(checkout: impl Into<Utf8PathBuf>) -> Self {
        Self {
            worktree: true,
            ..Self::in_place(checkout)
        }
    }

    /// A correction follow-up: a child run in the parent's target
    /// checkout, whose worktree starts with the parent's diff and whose
    /// phases receive what the parent was rejected for.
    pub fn follow_up(spec: FollowUpSpec) -> Self {
        Self {
            checkout: spec.checkout().to_owned(),
            worktree: true,
            follow_up: Some(spec),
        }
    }

    /// Whether the run ends at a delivery gate.
    pub fn delivers(&self) -> bool {
        self.worktree
    }
}

impl Engine {
    /// Starts a run as `start` says and returns it, locked for driving.
    /// A run in a worktree asks nothing yet: its first [`Run::next`] checks
    /// the target for uncommitted changes (pre-run intake) and creates the
    /// worktree.
    ///
    /// # Errors
    ///
    /// When the run cannot be created.
    pub fn start_with(&self, start: Start) -> Result<Run, EngineError> {
        let run = RunId::generate(&self.inner.clock);
        let (checkout, workspace) = if start.worktree {
            let worktree = self.worktree_path(&run);
            (
                worktree.clone(),
                Some(Workspace {
                    target: start.checkout,
                    worktree,
                }),
            )
        } else {
            (start.checkout, None)
        };
        let started = RunEvent::Started {
            checkout,
            plan: self.inner.plan.name.clone(),
            phases: self
                .inner
                .plan
                .phases
                .iter()
                .map(|p| p.name.clone())
                .collect(),
            workspace,
            follow_up: start.follow_up.map(|spec| FollowUpOf {
                parent: spec.parent().clone(),
                generation: spec.generation(),
                brief: spec.to_markdown(),
            }),
        };
        let stored = self
            .inner
            .runs
            .create(&run, started, self.inner.clock.as_ref())?;
        Ok(Run {
            engine: self.clone(),
            stored,
        })
    }

    /// Where a run's retained worktree lives: `<store>/worktrees/<run>`.
    pub fn worktree_path(&self, run: &RunId) -> Utf8PathBuf {
        self.inner.runs.root().join("worktrees").join(run.as_str())
    }

    /// Records the pre-run intake decision. It does not start the run:
    /// [`Run::resume`] acts on it.
    ///
    /// # Errors
    ///
    /// No intake question for the run, or a different decision recorded
    /// first ([`EngineError::is_conflict`]).
    pub fn decide_intake(
        &self,
        run: &RunId,
        request: DecisionRequest<IntakeChoice>,
    ) -> Result<RecordedDecision<IntakeChoice>, EngineError> {
        self.inner
            .intakes
            .decide(run, request)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Intake(Box::new(e))))
    }

    /// Records answers to a supervision touchpoint (planner questions, plan
    /// approval, deviation) after validating them against its questions. It
    /// does not advance the run: [`Run::resume`] does.
    ///
    /// # Errors
    ///
    /// Answers that do not fit the questions (nothing is recorded), an
    /// unknown touchpoint, or different answers recorded first
    /// ([`EngineError::is_conflict`]).
    pub fn answer(
        &self,
        run: &RunId,
        touchpoint: &HandoffId,
        answers: Vec<Answer>,
        decided_by: DecidedBy,
    ) -> Result<Resolution, EngineError> {
        SupervisionStore::new(
            self.inner.runs.root(),
            run.clone(),
            self.inner.clock.clone(),
        )
        .answer(touchpoint, answers, decided_by)
        .map_err(|e| EngineError::run(run, EngineErrorKind::Supervision(Box::new(e))))
    }

    /// The run's delivery gate, once open.
    ///
    /// # Errors
    ///
    /// No gate yet, or it cannot be read.
    pub fn delivery_gate(&self, run: &RunId) -> Result<DeliveryGate, EngineError> {
        self.inner
            .deliveries
            .gate(run)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Delivery(Box::new(e))))
    }

    /// Records the delivery decision. It changes nothing yet:
    /// [`Run::resume`] delivers it.
    ///
    /// # Errors
    ///
    /// An action the gate does not offer (with the reason it is blocked), a
    /// target checkout that would conflict, or a different decision
    /// recorded first ([`EngineError::is_conflict`]).
    pub fn decide_delivery(
        &self,
        run: &RunId,
        request: DecisionRequest<DeliveryChoice>,
    ) -> Result<RecordedDecision<DeliveryChoice>, EngineError> {
        self.inner
            .deliveries
            .decide(run, request)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Delivery(Box::new(e))))
    }

    /// The correction follow-up of a run whose delivery was decided `fix`
    /// and delivered: start it with
    /// [`start_with`](Self::start_with)`(`[`Start::follow_up`]`(spec))`.
    ///
    /// # Errors
    ///
    /// [`EngineErrorKind::NoFollowUp`] when the run's delivery was not a
    /// delivered `fix`.
    pub fn follow_up(&self, run: &RunId) -> Result<FollowUpSpec, EngineError> {
        match self
            .inner
            .deliveries
            .outcome(run)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Delivery(Box::new(e))))?
        {
            Some(DeliveryOutcome::CorrectionReady(spec)) => Ok(spec),
            _ => Err(EngineError::run(run, EngineErrorKind::NoFollowUp)),
        }
    }

    /// The decision inbox of this store: every run paused on an actionable
    /// phase handoff, delivery gate or intake question, newest first, with
    /// the suggested next step. Unreadable runs are listed as degraded.
    ///
    /// # Errors
    ///
    /// When the runs directory cannot be listed.
    pub fn inbox(&self) -> Result<Inbox, EngineError> {
        orcho_delivery::pending_decisions(self.inner.runs.root()).map_err(|e| {
            EngineError::store(self.inner.runs.root(), EngineErrorKind::Inbox(Box::new(e)))
        })
    }

    /// The open (or answered but not yet resumed) supervision touchpoints of
    /// a run.
    ///
    /// # Errors
    ///
    /// When they cannot be read.
    pub fn touchpoints(
        &self,
        run: &RunId,
    ) -> Result<Vec<orcho_handoff::supervision::OpenTouchpoint>, EngineError> {
        SupervisionStore::new(
            self.inner.runs.root(),
            run.clone(),
            self.inner.clock.clone(),
        )
        .pending()
        .map_err(|e| EngineError::run(run, EngineErrorKind::Supervision(Box::new(e))))
    }
}

impl Run {
    fn workspace(&self) -> Result<Workspace, EngineError> {
        self.state()
            .workspace
            .clone()
            .ok_or_else(|| self.err(EngineErrorKind::NoDelivery))
    }

    fn intake_err(&self, e: orcho_delivery::IntakeError) -> EngineError {
        self.err(EngineErrorKind::Intake(Box::new(e)))
    }

    fn delivery_err(&self, e: orcho_delivery::DeliveryError) -> EngineError {
        self.err(EngineErrorKind::Delivery(Box::new(e)))
    }

    fn supervision(&self) -> SupervisionStore {
        SupervisionStore::new(
            self.engine.inner.runs.root(),
            self.id().clone(),
            self.engine.inner.clock.clone(),
        )
    }

    /// A run created in a worktree: checks the target for uncommitted
    /// changes, then opens the intake question or creates the worktree.
    pub(super) fn prepare(&mut self) -> Result<(), EngineError> {
        let ws = self.workspace()?;
        let intakes = &self.engine.inner.intakes;
        // A process that died after opening the question: adopt it.
        if intakes.question(self.id()).is_ok() {
            return self.commit(RunEvent::IntakeOpened);
        }
        let report = detect_intake(&ws.target, self.engine.inner.runs.root())
            .map_err(|e| EngineError::run(self.id(), EngineErrorKind::Detect(Box::new(e))))?;
        if report.is_clean() {
            return self.workspace_ready(&ws, report.head(), None);
        }
        intakes
            .open(self.id(), &report)
            .map_err(|e| self.intake_err(e))?;
        self.commit(RunEvent::IntakeOpened)
    }

    /// At the intake question: decides it when the plan has a default, and
    /// returns the question while nobody has decided.
    pub(super) fn intake_step(&mut self) -> Result<Option<Step>, EngineError> {
        let intakes = self.engine.inner.intakes.clone();
        let Some(default) = self.engine.inner.plan.intake else {
            let (report, _) = intakes
                .question(self.id())
                .map_err(|e| self.intake_err(e))?;
            return Ok(Some(Step::DecideIntake(report)));
        };
        // The plan decides by itself, so it also acts by itself: on its own
        // decision, or on the one a process recorded before it died.
        if intakes
            .recorded_decision(self.id())
            .map_err(|e| self.intake_err(e))?
            .is_none()
        {
            intakes
                .decide(
                    self.id(),
                    DecisionRequest::new(IntakeChoice::new(default), DecidedBy::Operator),
                )
                .map_err(|e| self.intake_err(e))?;
        }
        self.apply_intake()?;
        Ok(None)
    }

    /// Acts on the recorded intake decision: halts, or creates the worktree
    /// at the start commit (seeded with the included changes).
    pub(super) fn apply_intake(&mut self) -> Result<(), EngineError> {
        let intakes = self.engine.inner.intakes.clone();
        let Some(recorded) = intakes
            .recorded_decision(self.id())
            .map_err(|e| self.intake_err(e))?
        else {
            return Err(self.awaiting_intake());
        };
        let outcome = intakes.apply(&recorded).map_err(|e| self.intake_err(e))?;
        let Some(start) = outcome.start().map(str::to_owned) else {
            return self.commit(RunEvent::IntakeHalted);
        };
        let ws = self.workspace()?;
        let action = outcome.action();
        self.create_worktree(&ws, &start)?;
        // Included changes are committed in the worktree and the delivery
        // diff is taken from that commit: the target keeps them as its own
        // uncommitted work, and delivery brings only what the run did.
        let base = if let IntakeOutcome::Included { .. } = outcome {
            intakes
                .seed(self.id(), &ws.worktree)
                .map_err(|e| self.intake_err(e))?;
            orcho_delivery::worktree::commit_all(&ws.worktree, &start, INCLUDED_MESSAGE)
                .map_err(|e| self.err(EngineErrorKind::Worktree(Box::new(e))))?
        } else {
            start
        };
        self.seed_follow_up(&ws)?;
        self.commit(RunEvent::WorkspaceReady {
            base,
            intake: Some(action.as_str().to_owned()),
        })
    }

    fn workspace_ready(
        &mut self,
        ws: &Workspace,
        start: &str,
        intake: Option<IntakeAction>,
    ) -> Result<(), EngineError> {
        self.create_worktree(ws, start)?;
        self.seed_follow_up(ws)?;
        self.commit(RunEvent::WorkspaceReady {
            base: start.to_owned(),
            intake: intake.map(|a| a.as_str().to_owned()),
        })
    }

    fn create_worktree(&self, ws: &Workspace, start: &str) -> Result<(), EngineError> {
        orcho_delivery::worktree::create(&ws.target, &ws.worktree, start)
            .map_err(|e| self.err(EngineErrorKind::Worktree(Box::new(e))))
    }

    /// A follow-up's worktree starts with its parent's diff.
    fn seed_follow_up(&self, ws: &Workspace) -> Result<(), EngineError> {
        let Some(of) = &self.state().follow_up else {
            return Ok(());
        };
        let patch = self.engine.inner.deliveries.patch_path(&of.parent);
        orcho_delivery::worktree::apply_patch(&ws.worktree, &patch)
            .map_err(|e| self.err(EngineErrorKind::Worktree(Box::new(e))))?;
        Ok(())
    }

    fn awaiting_intake(&self) -> EngineError {
        self.err(EngineErrorKind::AwaitingAnswer {
            point: "intake",
            id: self.id().to_string(),
            available: IntakeAction::ALL
                .iter()
                .map(|a| a.as_str().to_owned())
                .collect(),
        })
    }

    /// Stops the current attempt to ask the operator.
    pub(super) fn interrupt(
        &mut self,
        interruption: Interruption,
        cost: orcho_core::Cost,
    ) -> Result<(), EngineError> {
        let state = self.state().clone();
        let Some(phase) = state.current_phase().cloned() else {
            return Ok(());
        };
        let touchpoint = match interruption {
            Interruption::Questions(batch) => Touchpoint::PlannerQuestions {
                questions: PlannerQuestions::new(batch)
                    .map_err(|e| self.err(EngineErrorKind::Question(Box::new(e))))?,
            },
            Interruption::Deviation(deviation) => Touchpoint::Deviation {
                deviation: deviation.with_retries(state.deviation_retries),
                policy: self.engine.inner.plan.deviation,
                spent: DeviationSpent::new(state.deviation_retries, state.deviation_replans),
            },
        };
        self.commit(RunEvent::PhaseInterrupted {
            phase,
            attempt: state.attempt,
            cost,
            touchpoint,
        })
    }

    /// At a touchpoint: opens it if a process died before it could, and
    /// returns it for the host to render.
    pub(super) fn touchpoint_step(&mut self) -> Result<Step, EngineError> {
        let open = self.open_touchpoint()?;
        let questions = open
            .touchpoint
            .questions()
            .map_err(|e| self.err(EngineErrorKind::Touchpoint(Box::new(e))))?;
        let request = SupervisionRequest {
            run: self.id().clone(),
            id: open.id.clone(),
            phase: self.state().current_phase().cloned(),
            touchpoint: open.touchpoint.clone(),
            questions,
        };
        Ok(match open.touchpoint {
            Touchpoint::PlannerQuestions { .. } => Step::AnswerQuestions(request),
            Touchpoint::PlanApproval { .. } => Step::ApprovePlan(request),
            _ => Step::HandleDeviation(request),
        })
    }

    fn open_touchpoint(
        &mut self,
    ) -> Result<orcho_handoff::supervision::OpenTouchpoint, EngineError> {
        let store = self.supervision();
        let sup_err = |run: &Self, e| run.err(EngineErrorKind::Supervision(Box::new(e)));
        if let Some(id) = self.state().touchpoint.clone() {
            return store.get(&id).map_err(|e| sup_err(self, e));
        }
        let state = self.state().clone();
        let Some(touchpoint) = state.pending_touchpoint.clone() else {
            return Err(self.err(EngineErrorKind::WrongState {
                action: "open a touchpoint",
                status: state.status,
            }));
        };
        let id: HandoffId = format!("touchpoint-{}", state.touchpoints_opened + 1)
            .parse()
            .map_err(|_| {
                self.err(EngineErrorKind::WrongState {
                    action: "name a touchpoint",
                    status: state.status,
                })
            })?;
        // Adopt one a dead process opened but did not journal.
        let open = match store.get(&id) {
            Ok(open) => open,
            Err(_) => {
                store.open(&id, touchpoint).map_err(|e| sup_err(self, e))?;
                store.get(&id).map_err(|e| sup_err(self, e))?
            }
        };
        self.commit(RunEvent::TouchpointOpened { id })?;
        Ok(open)
    }

    /// Acts on a touchpoint's recorded answers.
    pub(super) fn resume_touchpoint(&mut self) -> Result<(), EngineError> {
        let open = self.open_touchpoint()?;
        let Some(resolution) = open.resolution.clone() else {
            let questions = open
                .touchpoint
                .questions()
                .map_err(|e| self.err(EngineErrorKind::Touchpoint(Box::new(e))))?;
            let available = questions
                .questions()
                .first()
                .map(|q| q.options().iter().map(|o| o.label.clone()).collect())
                .unwrap_or_default();
            let point = match open.touchpoint {
                Touchpoint::PlannerQuestions { .. } => "planner questions",
                Touchpoint::PlanApproval { .. } => "plan approval",
                _ => "deviation",
            };
            return Err(self.err(EngineErrorKind::AwaitingAnswer {
                point,
                id: open.id.to_string(),
                available,
            }));
        };
        let resolution = match resolution {
            Resolution::Answers(answers) => Supervised::Answered {
                answers: answers.for_planner(),
            },
            Resolution::Plan(decision) => {
                let Touchpoint::PlanApproval { plan } = &open.touchpoint else {
                    return Err(self.err(EngineErrorKind::WrongState {
                        action: "apply a plan decision to a touchpoint that is not a plan approval",
                        status: self.state().status,
                    }));
                };
                match decision
                    .apply(plan)
                    .map_err(|e| self.err(EngineErrorKind::Touchpoint(Box::new(e))))?
                {
                    PlanOutcome::Execute { feedback } => Supervised::PlanApproved { feedback },
                    PlanOutcome::Revise { feedback } => Supervised::PlanRevised { feedback },
                    PlanOutcome::Cancelled { feedback } => Supervised::PlanRejected { feedback },
                    _ => Supervised::PlanRejected { feedback: None },
                }
            }
            Resolution::Deviation(outcome) => match outcome {
                DeviationOutcome::Retry { context, .. } => Supervised::DeviationRetry { context },
                DeviationOutcome::Replan { failure, .. } => Supervised::DeviationReplan {
                    to: self.engine.inner.plan.replan_target(self.state().phase),
                    failure,
                },
                DeviationOutcome::Stop { note } => Supervised::DeviationStopped { note },
                _ => Supervised::DeviationStopped { note: None },
            },
            _ => Supervised::DeviationStopped { note: None },
        };
        self.commit(RunEvent::TouchpointResolved {
            id: open.id,
            resolution,
        })
    }

    /// At the release state: opens the delivery gate, decides it when the
    /// plan has a default that the gate offers, and returns it while
    /// nobody has decided.
    pub(super) async fn delivery_step(&mut self) -> Result<Option<Step>, EngineError> {
        let gate = self.open_delivery().await?;
        let deliveries = self.engine.inner.deliveries.clone();
        let recorded = deliveries
            .recorded_decision(self.id())
            .map_err(|e| self.delivery_err(e))?;
        let Some(action) = self.engine.inner.plan.delivery else {
            return Ok(Some(Step::DecideDelivery(gate)));
        };
        // The plan decides by itself where its default is on the menu, and
        // then acts by itself: on its own decision, or on one recorded
        // before a process died.
        if recorded.is_none() {
            let Some(choice) =
                default_choice(action).filter(|_| gate.available_actions().contains(action))
            else {
                return Ok(Some(Step::DecideDelivery(gate)));
            };
            deliveries
                .decide(self.id(), DecisionRequest::new(choice, DecidedBy::Operator))
                .map_err(|e| self.delivery_err(e))?;
        }
        self.deliver().await?;
        Ok(None)
    }

    async fn open_delivery(&mut self) -> Result<DeliveryGate, EngineError> {
        let deliveries = self.engine.inner.deliveries.clone();
        if self.state().delivery_opened {
            return deliveries.gate(self.id()).map_err(|e| self.delivery_err(e));
        }
        let gate = match deliveries.gate(self.id()) {
            // Opened by a process that died before journalling it.
            Ok(gate) => gate,
            Err(e) if e.is_not_found() => {
                let spec = self.delivery_spec().await?;
                deliveries.open(spec).map_err(|e| self.delivery_err(e))?
            }
            Err(e) => return Err(self.delivery_err(e)),
        };
        self.commit(RunEvent::DeliveryOpened {
            verdict: gate.verdict(),
        })?;
        Ok(gate)
    }

    async fn delivery_spec(&self) -> Result<DeliverySpec, EngineError> {
        let state = self.state().clone();
        let ws = self.workspace()?;
        let (verdict, findings) = match &state.release {
            Some(release) => (release.verdict, release.findings.clone()),
            // A plan without final acceptance: every phase passed.
            None => (Verdict::Approved, Vec::new()),
        };
        let readiness = match self.engine.verifier(&ws.worktree)? {
            Some(verifier) => blocking_readiness(&verifier)
                .await
                .map_err(|e| self.err(e))?,
            None => ReadinessSummary::new(Vec::new(), Vec::new(), Vec::new(), 0),
        };
        let base = state.base.clone().unwrap_or_default();
        let mut spec = DeliverySpec::new(
            state.run.clone(),
            verdict,
            ws.worktree.clone(),
            base,
            ws.target.clone(),
            &readiness,
        )
        .with_findings(findings)
        .with_release_summary(format!("{} (orcho run {})", state.plan, state.run));
        if let Some(of) = &state.follow_up {
            let parent = self
                .engine
                .inner
                .deliveries
                .gate(&of.parent)
                .map_err(|e| self.delivery_err(e))?;
            spec = spec.with_follow_up(FollowUpLink::new(
                of.parent.clone(),
                of.generation,
                parent.blockers(),
            ));
        }
        Ok(spec)
    }

    /// Delivers the recorded decision and ends the run.
    pub(super) async fn deliver(&mut self) -> Result<(), EngineError> {
        self.open_delivery().await?;
        let deliveries = self.engine.inner.deliveries.clone();
        let Some(recorded) = deliveries
            .recorded_decision(self.id())
            .map_err(|e| self.delivery_err(e))?
        else {
            let gate = deliveries
                .gate(self.id())
                .map_err(|e| self.delivery_err(e))?;
            return Err(self.err(EngineErrorKind::AwaitingAnswer {
                point: "delivery gate",
                id: self.id().to_string(),
                available: gate
                    .available_actions()
                    .iter()
                    .map(|a| a.as_str().to_owned())
                    .collect(),
            }));
        };
        let outcome = deliveries
            .deliver(&recorded)
            .map_err(|e| self.delivery_err(e))?;
        let target = self.workspace()?.target;
        let detail = describe_outcome(&outcome, &target);
        self.commit(RunEvent::Delivered {
            action: outcome.action(),
            detail,
        })
    }
}

fn default_choice(action: DeliveryAction) -> Option<DeliveryChoice> {
    Some(match action {
        DeliveryAction::Approve => DeliveryChoice::approve(),
        DeliveryAction::Apply => DeliveryChoice::apply(),
        DeliveryAction::Skip => DeliveryChoice::skip(),
        DeliveryAction::Halt => DeliveryChoice::halt(),
        // `fix` is never a default.
        _ => return None,
    })
}

fn describe_outcome(outcome: &DeliveryOutcome, target: &Utf8Path) -> String {
    match outcome {
        DeliveryOutcome::Committed { commit, .. } => {
            format!("committed {} into {target}", short(commit))
        }
        DeliveryOutcome::Applied => format!("applied uncommitted to {target}"),
        DeliveryOutcome::CorrectionReady(spec) => format!(
            "correction-ready: start follow-up {} for {} blockers",
            spec.generation(),
            spec.blockers().len()
        ),
        DeliveryOutcome::Skipped => "skipped; the target is unchanged".to_owned(),
        DeliveryOutcome::Halted { worktree } => {
            format!("halted; the worktree is kept at {worktree}")
        }
        _ => "delivered".to_owned(),
    }
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}
