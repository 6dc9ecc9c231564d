//! What hosts ask of the engine without driving a run: decisions recorded
//! from any process, advice, the run's view, its evidence and trace.

use std::fmt::Write as _;

use camino::Utf8PathBuf;
use orcho_core::{HandoffId, RunId, RunStatus};
use orcho_delivery::{DeliveryGate, DeliveryOutcome, FollowUpSpec, TargetStatus};
use orcho_handoff::{
    AdviceRecord, AdviceRequest, DecidedBy, DecisionRequest, DeliveryChoice, HandoffChoice, Inbox,
    IntakeChoice, PhaseHandoff, RecordedDecision,
    supervision::{Answer, Resolution, SupervisionStore},
};
use orcho_receipts::exec::GroupMarker;

use super::build::Engine;
use crate::{EngineError, error::EngineErrorKind, state::RunEvent};

impl Engine {
    /// Refuses a first decision on a run that has ended: nothing would act
    /// on it. Once a decision is recorded (`decided`), the same one again
    /// stays an idempotent replay and another a conflict, ended or not.
    fn refuse_ended(&self, run: &RunId, decided: impl FnOnce() -> bool) -> Result<(), EngineError> {
        let state = self.inner.runs.read(run)?;
        if state.status().is_terminal() && !decided() {
            return Err(EngineError::run(
                run,
                EngineErrorKind::Terminal {
                    status: state.status(),
                    reason: state.reason().unwrap_or_default().to_owned(),
                },
            ));
        }
        Ok(())
    }

    /// Records a decision on a handoff. It does not advance the run: the run
    /// moves on [`Run::resume`](crate::Run::resume) (or the next [`Run::next`](crate::Run::next)).
    ///
    /// # Errors
    ///
    /// A refused action (not on the handoff's menu, text missing), a conflict
    /// with a different recorded decision ([`EngineError::is_conflict`]), an
    /// unknown handoff, or a run that has ended ([`EngineError::is_terminal`]).
    pub fn decide(
        &self,
        run: &RunId,
        handoff: &HandoffId,
        request: DecisionRequest<HandoffChoice>,
    ) -> Result<RecordedDecision<HandoffChoice>, EngineError> {
        self.refuse_ended(run, || {
            self.inner
                .handoffs
                .recorded_decision(run, handoff)
                .is_ok_and(|d| d.is_some())
        })?;
        self.inner
            .handoffs
            .decide(run, handoff, request)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Handoff(Box::new(e))))
    }

    /// Asks the advisor about a paused handoff and records the advice as an
    /// artifact. The advice is never applied by itself.
    ///
    /// # Errors
    ///
    /// No advisor, an unknown handoff, or an advisor failure.
    pub async fn advise(
        &self,
        run: &RunId,
        handoff: &HandoffId,
    ) -> Result<AdviceRecord, EngineError> {
        self.advise_for(run, handoff, DecidedBy::Operator).await
    }

    /// [`advise`](Self::advise), recording who asked: an operator's host, or
    /// a client (an agent over MCP).
    ///
    /// # Errors
    ///
    /// As [`advise`](Self::advise).
    pub async fn advise_for(
        &self,
        run: &RunId,
        handoff: &HandoffId,
        requested_by: DecidedBy,
    ) -> Result<AdviceRecord, EngineError> {
        let advisor = self
            .inner
            .advisor
            .clone()
            .ok_or_else(|| EngineError::run(run, EngineErrorKind::NoAdvisor))?;
        let handoff_err = |e| EngineError::run(run, EngineErrorKind::Handoff(Box::new(e)));
        let paused = self
            .inner
            .handoffs
            .handoff(run, handoff)
            .map_err(handoff_err)?;
        let history: Vec<PhaseHandoff> = self
            .inner
            .handoffs
            .handoffs(run)
            .map_err(handoff_err)?
            .into_iter()
            .filter(|h| h.phase() == paused.phase() && h.id() < paused.id())
            .collect();
        let output = self.phase_output(run, &paused);
        let context = self.advice_context(run).await;
        let request = AdviceRequest::new(&paused, &output, &history).with_context(&context);
        let advice = advisor
            .advise(&request)
            .await
            .map_err(|e| EngineError::run(run, EngineErrorKind::Advisor(e)))?;
        self.inner
            .handoffs
            .record_advice(run, handoff, advisor.name(), &advice, requested_by)
            .map_err(handoff_err)
    }

    /// What an advisor reads beside the handoff: the readiness summary of
    /// the run's receipts, when the run has a contract and a checkout (empty
    /// otherwise, and when it cannot be built: advice goes on without it).
    pub(super) async fn advice_context(&self, run: &RunId) -> String {
        /// The most changed files listed.
        const MAX_FILES: usize = 30;
        let Ok(state) = self.inner.runs.read(run) else {
            return String::new();
        };
        if !state.checkout().is_dir() {
            return String::new();
        }
        let mut context = String::new();
        // In a worktree: what the run changed so far, as its delivery gate
        // would show it.
        if state.workspace().is_some()
            && let Some(base) = state.base()
        {
            let (checkout, base) = (state.checkout().to_owned(), base.to_owned());
            let diff = tokio::task::spawn_blocking(move || {
                orcho_delivery::worktree::diff_summary(&checkout, &base)
            })
            .await;
            if let Ok(Ok(diff)) = diff {
                let _ = writeln!(
                    context,
                    "The run's changes so far: {} file(s), +{} -{}",
                    diff.files_changed(),
                    diff.insertions(),
                    diff.deletions()
                );
                for f in diff.files().iter().take(MAX_FILES) {
                    let lines = match (f.insertions(), f.deletions()) {
                        (Some(i), Some(d)) => format!(" (+{i} -{d})"),
                        _ => " (binary)".to_owned(),
                    };
                    let _ = writeln!(context, "- {}{lines}", f.path());
                }
                if diff.files_changed() > MAX_FILES {
                    let _ = writeln!(
                        context,
                        "(cut: {} more files)",
                        diff.files_changed() - MAX_FILES
                    );
                }
                context.push('\n');
            }
        }
        if let Ok(Some(verifier)) = self.verifier(&state)
            && let Ok(summary) = super::phase::blocking_readiness(&verifier).await
        {
            let _ = write!(
                context,
                "The readiness summary (receipts on disk):\n\n{}",
                summary.to_markdown()
            );
        }
        context
    }

    /// The summary of the latest report of the handoff's phase, for advisors.
    pub(super) fn phase_output(&self, run: &RunId, handoff: &PhaseHandoff) -> String {
        let Ok(events) = self.inner.runs.events(run) else {
            return String::new();
        };
        events
            .into_iter()
            .rev()
            .find_map(|(_, e)| match e {
                RunEvent::PhaseReported { phase, outcome, .. } if &phase == handoff.phase() => {
                    Some(outcome.summary)
                }
                _ => None,
            })
            .unwrap_or_default()
    }

    /// The run's evidence bundle: phases with their gates (outcomes,
    /// strategies, durations), the receipts' classification, handoffs with
    /// their decisions, the `handoff_advice` section and the costs. Also
    /// written to `runs/<id>/evidence.json`.
    ///
    /// # Errors
    ///
    /// When the run, its handoffs or its receipts cannot be read, or the
    /// bundle cannot be written.
    pub fn evidence(&self, run: &RunId) -> Result<crate::Evidence, EngineError> {
        let state = self.inner.runs.read(run)?;
        let events = self.inner.runs.events(run)?;
        let handoff_err = |e| EngineError::run(run, EngineErrorKind::Handoff(Box::new(e)));
        let store = &self.inner.handoffs;
        let mut handoffs = Vec::new();
        for h in store.handoffs(run).map_err(handoff_err)? {
            let decision = store
                .recorded_decision(run, h.id())
                .map_err(handoff_err)?
                .map(|d| {
                    let d = d.decision();
                    crate::evidence::DecisionEvidence {
                        action: d.payload().action(),
                        text: d.payload().text().map(str::to_owned),
                        decided_by: d.decided_by(),
                        client: d.client().map(str::to_owned),
                        advice: d.advice().map(ToString::to_string),
                        decided_at: d.decided_at(),
                    }
                });
            handoffs.push(crate::evidence::HandoffEvidence {
                id: h.id().clone(),
                phase: h.phase().clone(),
                trigger: h.trigger().to_string(),
                verdict: h.verdict(),
                available_actions: h.available_actions().iter().collect(),
                decision,
            });
        }
        let phases = crate::evidence::phases(&events);
        let (intake, touchpoints, delivery) = crate::evidence::points(&events);
        let passed: Vec<orcho_core::PhaseName> = phases
            .iter()
            .filter(|p| p.next.as_deref() == Some("advance"))
            .map(|p| p.phase.clone())
            .collect();
        let handoff_advice = orcho_handoff::HandoffAdviceEvidence::collect(store, run, &passed)
            .map_err(handoff_err)?;
        // A run halted before its worktree existed (or whose worktree was
        // removed since) has no tree to classify receipts against.
        let verifier = match state.checkout().is_dir() {
            true => self.verifier(&state)?,
            false => None,
        };
        let receipts = match verifier {
            Some(v) => Some(
                serde_json::from_str(
                    &v.readiness()
                        .map_err(|e| EngineError::run(run, EngineErrorKind::Receipts(Box::new(e))))?
                        .with_gates(crate::evidence::delivery_gates(&phases, state.round()))
                        .to_json(),
                )
                .unwrap_or(serde_json::Value::Null),
            ),
            None => None,
        };
        let evidence = crate::Evidence {
            schema: crate::evidence::EVIDENCE_SCHEMA,
            run: run.clone(),
            plan: state.plan().to_owned(),
            status: state.status(),
            reason: state.reason().map(str::to_owned),
            phases,
            receipts,
            handoffs,
            handoff_advice,
            cost: state.cost(),
            intake,
            touchpoints,
            delivery,
            follow_up_of: state.follow_up().cloned(),
        };
        let mut bytes = serde_json::to_vec_pretty(&evidence)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Encode(Box::new(e))))?;
        bytes.push(b'\n');
        orcho_core::fs::write_atomic(&self.inner.runs.layout().run(run).evidence(), &bytes)
            .map_err(|e| EngineError::run(run, e.into()))?;
        Ok(evidence)
    }

    /// The run's trace: one line per durable transition, without times or
    /// ids, for tests and humans.
    ///
    /// # Errors
    ///
    /// When the run cannot be read.
    pub fn trace(&self, run: &RunId) -> Result<String, EngineError> {
        let mut out = String::new();
        for (_, event) in self.inner.runs.events(run)? {
            out.push_str(&event.trace_line());
            out.push('\n');
        }
        Ok(out)
    }

    /// Where a run's retained worktree lives: `<store>/worktrees/<run>`.
    pub fn worktree_path(&self, run: &RunId) -> Utf8PathBuf {
        self.inner.runs.layout().worktree(run)
    }

    /// The marker that names the process group of the phase command a host
    /// runs for `run`, for
    /// [`ExecRequest::group_marker`](orcho_receipts::exec::ExecRequest::group_marker):
    /// a host killed mid-phase leaves it behind, and the next host to run a
    /// phase of the run stops what is left of that group first
    /// ([`GroupMarker::stop_leftover`]).
    pub fn phase_group(&self, run: &RunId) -> GroupMarker {
        GroupMarker::new(self.inner.runs.layout().run(run).phase_group())
    }

    /// Where the full output of a phase command a host runs for `request`
    /// goes: `(stdout, stderr)` under the run's `logs/`, one pair per
    /// attempt, for
    /// [`ExecRequest::stdout_log`](orcho_receipts::exec::ExecRequest::stdout_log).
    pub fn phase_logs(&self, request: &crate::PhaseRequest) -> (Utf8PathBuf, Utf8PathBuf) {
        let logs = self.inner.runs.layout().run(&request.run).logs();
        let name = format!("{}-r{}-a{}", request.phase, request.round, request.attempt);
        (
            logs.join(format!("{name}.stdout.log")),
            logs.join(format!("{name}.stderr.log")),
        )
    }

    /// Every phase attempt of `run` with its gates, as the evidence bundle
    /// lists them, without writing the bundle: what a host shows as each
    /// attempt settles.
    ///
    /// # Errors
    ///
    /// An unknown run or an unreadable journal.
    pub fn phases(&self, run: &RunId) -> Result<Vec<crate::PhaseEvidence>, EngineError> {
        Ok(crate::evidence::phases(&self.inner.runs.events(run)?))
    }

    /// Every phase attempt `run` reported, in order: what the phase said
    /// before its gates ran.
    ///
    /// # Errors
    ///
    /// An unknown run or an unreadable journal.
    pub fn attempts(&self, run: &RunId) -> Result<Vec<crate::AttemptView>, EngineError> {
        Ok(self
            .inner
            .runs
            .events(run)?
            .into_iter()
            .filter_map(|(_, event)| match event {
                RunEvent::PhaseReported {
                    phase,
                    attempt,
                    round,
                    outcome,
                    ..
                } => Some(crate::AttemptView {
                    phase,
                    attempt,
                    round,
                    outcome,
                }),
                _ => None,
            })
            .collect())
    }

    /// What the host that started `run` keeps with it
    /// ([`Start::host_metadata`](crate::Start::host_metadata)), if it kept
    /// anything.
    ///
    /// # Errors
    ///
    /// An unknown run, or an unreadable document.
    pub fn host_metadata(&self, run: &RunId) -> Result<Option<serde_json::Value>, EngineError> {
        self.inner.runs.host_metadata(run)
    }

    /// The run's pre-run intake question: what is uncommitted in its target
    /// checkout.
    ///
    /// # Errors
    ///
    /// No intake question for the run, or it cannot be read.
    pub fn intake_report(&self, run: &RunId) -> Result<orcho_delivery::IntakeReport, EngineError> {
        self.inner
            .intakes
            .question(run)
            .map(|(report, _)| report)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Intake(Box::new(e))))
    }

    /// Records the pre-run intake decision. It does not start the run:
    /// [`Run::resume`](crate::Run::resume) acts on it.
    ///
    /// # Errors
    ///
    /// No intake question for the run, a different decision recorded
    /// first ([`EngineError::is_conflict`]), or a run that has ended
    /// ([`EngineError::is_terminal`]).
    pub fn decide_intake(
        &self,
        run: &RunId,
        request: DecisionRequest<IntakeChoice>,
    ) -> Result<RecordedDecision<IntakeChoice>, EngineError> {
        self.refuse_ended(run, || {
            self.inner
                .intakes
                .recorded_decision(run)
                .is_ok_and(|d| d.is_some())
        })?;
        self.inner
            .intakes
            .decide(run, request)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Intake(Box::new(e))))
    }

    /// Records answers to a supervision touchpoint (planner questions, plan
    /// approval, deviation) after validating them against its questions. It
    /// does not advance the run: [`Run::resume`](crate::Run::resume) does.
    ///
    /// # Errors
    ///
    /// Answers that do not fit the questions (nothing is recorded), an
    /// unknown touchpoint, different answers recorded first
    /// ([`EngineError::is_conflict`]), or a run that has ended
    /// ([`EngineError::is_terminal`]).
    pub fn answer(
        &self,
        run: &RunId,
        touchpoint: &HandoffId,
        answers: Vec<Answer>,
        decided_by: DecidedBy,
    ) -> Result<Resolution, EngineError> {
        let store = SupervisionStore::new(
            self.inner.runs.root(),
            run.clone(),
            self.inner.clock.clone(),
        );
        self.refuse_ended(run, || {
            store.get(touchpoint).is_ok_and(|t| t.resolution.is_some())
        })?;
        store
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

    /// The decision recorded on the run's delivery gate, if any (it is
    /// delivered on [`Run::resume`](crate::Run::resume)).
    ///
    /// # Errors
    ///
    /// When the record cannot be read or was altered.
    pub fn delivery_decision(
        &self,
        run: &RunId,
    ) -> Result<Option<RecordedDecision<DeliveryChoice>>, EngineError> {
        self.inner
            .deliveries
            .recorded_decision(run)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Delivery(Box::new(e))))
    }

    /// The target checkout's status for the run's diff, checked now: what
    /// `approve` and `apply` would meet if they were decided now
    /// ([`TargetStatus::refused`]). The gate's menu is fixed when the gate
    /// opens; the target can change while it waits.
    ///
    /// # Errors
    ///
    /// No gate yet, or the target cannot be read.
    pub fn delivery_target(&self, run: &RunId) -> Result<TargetStatus, EngineError> {
        let gate = self.delivery_gate(run)?;
        self.inner
            .deliveries
            .target_status(&gate)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Delivery(Box::new(e))))
    }

    /// The phase handoffs of `run` that were moved past with `continue`,
    /// oldest first: what the gate's verdicts, the last review's alone, do
    /// not show.
    ///
    /// # Errors
    ///
    /// When the run's handoffs or their decisions cannot be read.
    pub fn overridden(&self, run: &RunId) -> Result<Vec<crate::Overridden>, EngineError> {
        let err = |e| EngineError::run(run, EngineErrorKind::Handoff(Box::new(e)));
        let store = &self.inner.handoffs;
        let mut out = Vec::new();
        for handoff in store.handoffs(run).map_err(err)? {
            let Some(recorded) = store.recorded_decision(run, handoff.id()).map_err(err)? else {
                continue;
            };
            let decision = recorded.decision();
            if *decision.payload() == HandoffChoice::Continue {
                out.push(crate::Overridden {
                    handoff: handoff.id().clone(),
                    phase: handoff.phase().clone(),
                    verdict: handoff.verdict(),
                    trigger: handoff.trigger().to_string(),
                    decided_by: decision.decided_by(),
                    client: decision.client().map(str::to_owned),
                });
            }
        }
        Ok(out)
    }

    /// The run's diff as the binary patch its delivery gate would
    /// deliver.
    ///
    /// # Errors
    ///
    /// No delivery gate, or a patch that is not the gate's any more.
    pub fn delivery_patch(&self, run: &RunId) -> Result<Vec<u8>, EngineError> {
        self.inner
            .deliveries
            .patch(run)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Delivery(Box::new(e))))
    }

    /// Records the delivery decision. It changes nothing yet:
    /// [`Run::resume`](crate::Run::resume) delivers it.
    ///
    /// # Errors
    ///
    /// An action the gate does not offer (with the reason it is blocked), a
    /// target checkout that would conflict, a different decision recorded
    /// first ([`EngineError::is_conflict`]), or a run that has ended
    /// ([`EngineError::is_terminal`]).
    pub fn decide_delivery(
        &self,
        run: &RunId,
        request: DecisionRequest<DeliveryChoice>,
    ) -> Result<RecordedDecision<DeliveryChoice>, EngineError> {
        self.refuse_ended(run, || {
            self.inner
                .deliveries
                .recorded_decision(run)
                .is_ok_and(|d| d.is_some())
        })?;
        if self.inner.plan.approve_requires_operator
            && request.payload().action() == orcho_handoff::DeliveryAction::Approve
            && request.decided_by() != DecidedBy::Operator
        {
            let by = match request.client() {
                Some(client) => format!("the client `{client}`"),
                None => format!("the {}", request.decided_by()),
            };
            return Err(EngineError::run(
                run,
                EngineErrorKind::OperatorRequired { by },
            ));
        }
        self.inner
            .deliveries
            .decide(run, request)
            .map_err(|e| EngineError::run(run, EngineErrorKind::Delivery(Box::new(e))))
    }

    /// The correction follow-up of a run whose delivery was decided `fix`
    /// and delivered: start it with
    /// [`start_with`](Self::start_with)`(`[`Start::follow_up`](crate::Start::follow_up)`(spec))`.
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
        let mut inbox = orcho_delivery::pending_decisions(self.inner.runs.root()).map_err(|e| {
            EngineError::store(self.inner.runs.root(), EngineErrorKind::Inbox(Box::new(e)))
        })?;
        // A run that ended (cancelled, say) leaves the points it waited at
        // as they were; nobody has to decide them any more.
        // A touchpoint is pending only while its run waits at it.
        let mut states = std::collections::BTreeMap::new();
        inbox.retain(|entry| match entry {
            orcho_handoff::InboxEntry::Pending(p) => {
                let state = states
                    .entry(p.run().clone())
                    .or_insert_with(|| self.inner.runs.read(p.run()).ok());
                let Some(state) = state else {
                    return true;
                };
                match p.point() {
                    orcho_handoff::PendingPoint::Touchpoint { touchpoint, .. } => {
                        state.touchpoint() == Some(touchpoint)
                    }
                    _ => !state.status().is_terminal(),
                }
            }
            _ => true,
        });
        Ok(inbox)
    }

    /// Where `run` stands, as hosts show it: its status, phase, cost and the
    /// decision point it waits on.
    ///
    /// # Errors
    ///
    /// An unknown run or an unreadable journal.
    pub fn status(&self, run: &RunId) -> Result<crate::RunView, EngineError> {
        Ok(self.view_of(&self.inner.runs.read(run)?))
    }

    /// The view of a run read from the store, with whether it was stopped
    /// ([`RunView::stopped`](crate::RunView::stopped)).
    pub(super) fn view_of(&self, state: &crate::RunState) -> crate::RunView {
        let mut view = crate::RunView::from(state);
        view.stopped = matches!(view.status, RunStatus::Created | RunStatus::Running)
            && !self.inner.runs.is_driven(&view.run);
        view
    }

    /// The decision points `run` waits on, as the inbox lists them: an open
    /// or decided handoff, its delivery gate or its intake question.
    ///
    /// # Errors
    ///
    /// When one of them cannot be read.
    pub fn pending(&self, run: &RunId) -> Result<Vec<orcho_handoff::PendingDecision>, EngineError> {
        let store = self.inner.runs.layout();
        let mut found = Vec::new();
        for scan in orcho_delivery::SCANNERS {
            found
                .extend(scan(store, run).map_err(|reason| {
                    EngineError::run(run, EngineErrorKind::Unreadable(reason))
                })?);
        }
        Ok(found)
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
        // The run waits at an answered touchpoint until it is resumed.
        let waiting_at = self.inner.runs.read(run)?.touchpoint().cloned();
        let mut all = SupervisionStore::new(
            self.inner.runs.root(),
            run.clone(),
            self.inner.clock.clone(),
        )
        .all()
        .map_err(|e| EngineError::run(run, EngineErrorKind::Supervision(Box::new(e))))?;
        all.retain(|t| t.resolution.is_none() || waiting_at.as_ref() == Some(&t.id));
        Ok(all)
    }
}
