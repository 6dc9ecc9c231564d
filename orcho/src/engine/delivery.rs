//! The delivery gate at the release state, and delivering its decision.

use camino::Utf8Path;
use orcho_core::{Finding, Severity, Verdict};
use orcho_delivery::{DeliveryGate, DeliveryOutcome, DeliverySpec, FollowUpLink};
use orcho_handoff::{
    DeliveryAction,
    decision::{DecidedBy, DecisionRequest},
    delivery::DeliveryChoice,
};
use orcho_receipts::ReadinessSummary;

use super::{phase::blocking_readiness, run::Run, step::Step};
use crate::{
    EngineError,
    error::EngineErrorKind,
    proof::{PROOF_EDIT_SOURCE, WEAKENING_SOURCE},
    state::RunEvent,
};

/// Who closes the delivery gate of an approved run that changed nothing.
const NOTHING_TO_DELIVER: &str = "orcho (the run changed nothing)";

impl Run {
    pub(super) fn delivery_err(&self, e: orcho_delivery::DeliveryError) -> EngineError {
        self.err(EngineErrorKind::Delivery(Box::new(e)))
    }

    /// At the release state: opens the delivery gate, decides it when the
    /// plan has a default that the gate offers, and returns it while
    /// nobody has decided.
    pub(super) async fn delivery_step(&mut self) -> Result<Option<Step>, EngineError> {
        let gate = self.open_delivery().await?;
        let deliveries = self.engine.inner.store.deliveries.clone();
        let recorded = deliveries
            .recorded_decision(self.id())
            .map_err(|e| self.delivery_err(e))?;
        // An approved run that changed nothing has nothing to deliver:
        // nobody is asked, the gate is closed (`skip`) and the run ends
        // saying so. A rejected one still waits: a person may ask for a
        // follow-up.
        if recorded.is_none()
            && gate.diff().is_empty()
            && gate.verdict() == Verdict::Approved
            && gate.available_actions().contains(DeliveryAction::Skip)
        {
            deliveries
                .decide(
                    self.id(),
                    DecisionRequest::new(DeliveryChoice::skip(), DecidedBy::Operator)
                        .by(NOTHING_TO_DELIVER),
                )
                .map_err(|e| self.delivery_err(e))?;
            self.deliver().await?;
            return Ok(None);
        }
        let Some(action) = self.engine.inner.plan.delivery else {
            return Ok(Some(Step::DecideDelivery(gate)));
        };
        // A default is not a person: where only an operator may approve
        // (a change that edits what proves it, among the reasons), the gate
        // waits for one.
        if gate.approve_requires_operator() && action.changes_target() {
            return Ok(Some(Step::DecideDelivery(gate)));
        }
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

    /// At the delivery gate, before it is decided: runs again, in the
    /// run's worktree, the required commands whose receipts are missing or
    /// stale (and failed ones whose subject changed since), then opens the
    /// gate again on what the receipts say now. Returns the commands run
    /// again (none when every receipt held) and the gate.
    ///
    /// # Errors
    ///
    /// [`EngineErrorKind::NotExpected`] when the run is not at its open
    /// gate; a refusal when the gate is decided already; a receipt error
    /// when a command cannot be run; a store error.
    pub async fn rerun_receipts(
        &mut self,
    ) -> Result<(Vec<orcho_receipts::CommandName>, DeliveryGate), EngineError> {
        let state = self.state().clone();
        if !matches!(state.stage(), crate::Stage::AtDelivery { opened: true }) {
            return Err(self.err(EngineErrorKind::NotExpected {
                action: "re-run the receipts at the delivery gate",
                status: state.status(),
            }));
        }
        let Some(verifier) = self.engine.verifier(&state)? else {
            return Err(self.err(EngineErrorKind::NotExpected {
                action: "re-run the receipts of a plan that declares none",
                status: state.status(),
            }));
        };
        // Decided already: nothing is run, and the gate stays as it was.
        if let Some(recorded) = self
            .engine
            .inner
            .store
            .deliveries
            .recorded_decision(self.id())
            .map_err(|e| self.delivery_err(e))?
        {
            return Err(self.delivery_err(orcho_handoff::point::PointError::of_run(
                "re-run the receipts at the delivery gate of",
                self.id(),
                orcho_handoff::point::PointErrorKind::Refused(
                    orcho_delivery::DeliveryRefusal::Decided {
                        action: recorded.decision().payload().action(),
                    },
                ),
            )));
        }
        let rerun = self.rerun_missing(&verifier).await?;
        let spec = self.delivery_spec().await?;
        let gate = self
            .engine
            .inner
            .store
            .deliveries
            .reopen(spec)
            .map_err(|e| self.delivery_err(e))?;
        self.commit(&RunEvent::DeliveryOpened {
            verdict: gate.verdict(),
        })?;
        Ok((rerun, gate))
    }

    pub(super) async fn open_delivery(&mut self) -> Result<DeliveryGate, EngineError> {
        let deliveries = self.engine.inner.store.deliveries.clone();
        if self.state().delivery_opened() {
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
        self.commit(&RunEvent::DeliveryOpened {
            verdict: gate.verdict(),
        })?;
        Ok(gate)
    }

    async fn delivery_spec(&self) -> Result<DeliverySpec, EngineError> {
        let state = self.state().clone();
        let ws = self.workspace()?;
        // The reviewer's verdict: receipt gaps are merged in again below,
        // from the receipts as they are now, less what a waiver covers.
        let (verdict, mut findings) = match &state.release() {
            Some(release) => (release.reviewer, release.findings.clone()),
            // A plan without final acceptance: every phase passed.
            None => (Verdict::Approved, Vec::new()),
        };
        if verdict != Verdict::Approved && findings.is_empty() {
            // A reviewer that rejects without a finding still blocks the
            // release: its rejection is the blocker a follow-up must fix.
            findings.push(self.bare_rejection(verdict)?);
        }
        let waivers = self
            .engine
            .inner
            .store
            .handoffs
            .waivers(self.id())
            .map_err(|e| self.handoff_err(e))?;
        // A waiver lets a rejected phase go on; it never makes the release
        // approved. Without a final acceptance to say otherwise, a waived
        // rejection stays the release's verdict, with what was waived.
        let (verdict, mut findings) = if state.release().is_none() {
            self.waived_rejections(&waivers, verdict, findings)?
        } else {
            (verdict, findings)
        };
        let plan = &self.engine.inner.plan;
        // Without `require_receipts`, receipts do not hold the delivery back
        // (final acceptance, when the plan has one, still reads them).
        let readiness = match self.engine.verifier(&state)? {
            Some(verifier) if plan.require_receipts => blocking_readiness(&verifier)
                .await
                .map_err(|e| self.err(e))?,
            _ => ReadinessSummary::new(Vec::new(), Vec::new(), Vec::new(), 0),
        };
        let base = state.base().unwrap_or_default();
        // What the change edits of what proves it: findings only a person
        // may let through.
        let edits = self.proof_edits(&ws.worktree, base).await;
        if !edits.is_empty() {
            findings.extend(edits);
        }
        let needs_person = plan.approve_requires_operator
            || findings
                .iter()
                .any(|f| f.source == PROOF_EDIT_SOURCE || f.source == WEAKENING_SOURCE);
        let mut spec = DeliverySpec::new(
            state.run().clone(),
            verdict,
            ws.worktree.clone(),
            base,
            ws.target.clone(),
            &readiness,
        )
        .with_findings(findings)
        .with_approve_requires_operator(needs_person)
        .with_waivers(
            |finding| waivers.covers_finding(finding),
            waivers.waivers().iter().map(|w| {
                format!(
                    "handoff {} ({}), by {}: {} — covers {}",
                    w.handoff(),
                    w.phase(),
                    w.waived_by(),
                    w.reason(),
                    if w.findings().is_empty() {
                        "nothing named".to_owned()
                    } else {
                        orcho_core::spelling::quoted(w.findings().iter().map(|f| f.title()))
                    }
                )
            }),
        )
        .with_release_summary(match &plan.commit_message {
            Some(template) => orcho_profile::fill_commit_message(
                template,
                &orcho_profile::CommitValues::new(
                    state.plan(),
                    state.run().as_str(),
                    verdict.as_str(),
                )
                .with_task(state.task().unwrap_or_default()),
            ),
            None => format!("{} (orcho run {})", state.plan(), state.run()),
        });
        if let Some(of) = &state.follow_up() {
            let parent = self
                .engine
                .inner
                .store
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

    /// The release verdict and findings of a run without a final
    /// acceptance, given its waivers: a handoff whose rejected phase was
    /// waived makes the release rejected, with that phase's findings
    /// (which the waiver then lists as waived).
    fn waived_rejections(
        &self,
        waivers: &orcho_handoff::waiver::WaiverSet,
        verdict: Verdict,
        mut findings: Vec<Finding>,
    ) -> Result<(Verdict, Vec<Finding>), EngineError> {
        let mut rejected = false;
        for waiver in waivers.waivers() {
            let handoff = self
                .engine
                .inner
                .store
                .handoffs
                .handoff(self.id(), waiver.handoff())
                .map_err(|e| self.handoff_err(e))?;
            if handoff.verdict() == Verdict::Approved && waiver.gates().is_empty() {
                continue;
            }
            rejected = true;
            for finding in handoff.findings() {
                if !findings
                    .iter()
                    .any(|f| f.fingerprint() == finding.fingerprint())
                {
                    findings.push(finding.clone());
                }
            }
        }
        if !rejected {
            return Ok((verdict, findings));
        }
        if findings.is_empty() {
            findings.push(self.bare_rejection(Verdict::Rejected)?);
        }
        Ok((Verdict::Rejected, findings))
    }

    /// What the run's change does to weaken its own proof against the
    /// run's base (see [`crate::proof::review`]), as findings only a person
    /// may let through: the edits of its profile file, test files, runner
    /// configuration and test scripts. A change that cannot be read is a
    /// finding too.
    async fn proof_edits(&self, worktree: &Utf8Path, base: &str) -> Vec<Finding> {
        if base.is_empty() {
            return Vec::new();
        }
        let file = self.engine.inner.plan.profile_file.clone();
        let (worktree, base) = (worktree.to_owned(), base.to_owned());
        let read = tokio::task::spawn_blocking(move || {
            crate::proof::review(&worktree, &base, file.as_ref().map(|f| f.as_str()))
        })
        .await;
        let detail = "the change weakens its own proof: a person must see this before it is \
                      delivered (only an operator may approve)";
        let finding = |source: &str, title: String, file: Option<&str>, line: Option<u32>| {
            let mut finding = Finding::new(source, Severity::High, title).with_detail(detail);
            if let Some(file) = file {
                finding = finding.with_file(file.to_owned());
            }
            if let Some(line) = line {
                finding = finding.with_line(line);
            }
            finding
        };
        match read {
            Ok(Ok(review)) => {
                let added = review.profile_added.iter().map(|e| {
                    finding(
                        PROOF_EDIT_SOURCE,
                        format!("{}: {}", e.section, e.what),
                        Some(&e.file),
                        e.line.and_then(|l| u32::try_from(l).ok()),
                    )
                });
                let weakenings = review.weakenings.iter().map(|w| {
                    let source = if w.detector == orcho_receipts::weakening::Detector::ProfileEdit {
                        PROOF_EDIT_SOURCE
                    } else {
                        WEAKENING_SOURCE
                    };
                    finding(
                        source,
                        format!("{} ({})", w.what, w.detector),
                        Some(w.path.as_str()),
                        w.line,
                    )
                });
                added.chain(weakenings).collect()
            }
            Ok(Err(e)) => vec![finding(
                WEAKENING_SOURCE,
                format!(
                    "the change could not be compared with the run's base: {}",
                    orcho_core::error_chain(&e)
                ),
                None,
                None,
            )],
            Err(e) => vec![finding(
                WEAKENING_SOURCE,
                format!("the change could not be compared with the run's base: {e}"),
                None,
                None,
            )],
        }
    }

    /// The finding of a release reviewer that said `verdict` and named
    /// nothing: its summary, as the last report of final acceptance has it.
    fn bare_rejection(&self, verdict: Verdict) -> Result<Finding, EngineError> {
        let phase = self
            .engine
            .inner
            .plan
            .phases
            .iter()
            .find(|p| p.role == crate::plan::PhaseRole::FinalAcceptance)
            .map(|p| p.name.clone());
        let summary = self
            .engine
            .inner
            .store
            .runs
            .events(self.id())?
            .into_iter()
            .rev()
            .find_map(|(_, event)| match event {
                RunEvent::PhaseReported {
                    phase: p, outcome, ..
                } if Some(&p) == phase.as_ref() => Some(outcome.summary),
                _ => None,
            })
            .unwrap_or_default();
        let source = phase.map_or_else(|| "final_acceptance".to_owned(), |p| p.to_string());
        Ok(Finding::new(
            source,
            Severity::High,
            format!("the release reviewer said {verdict} and named no finding"),
        )
        .with_detail(summary))
    }

    /// Delivers the recorded decision, if there is one, and ends the run;
    /// without a decision, nothing.
    pub(super) async fn deliver(&mut self) -> Result<(), EngineError> {
        self.open_delivery().await?;
        let deliveries = self.engine.inner.store.deliveries.clone();
        let Some(recorded) = deliveries
            .recorded_decision(self.id())
            .map_err(|e| self.delivery_err(e))?
        else {
            return Ok(());
        };
        let outcome = deliveries
            .deliver(&recorded)
            .map_err(|e| self.delivery_err(e))?;
        let target = self.workspace()?.target;
        let mut detail = describe_outcome(&outcome, &target);
        if recorded.decision().request().who() == Some(NOTHING_TO_DELIVER) {
            detail = format!("the run changed nothing, so there was nothing to deliver; {detail}");
        }
        if matches!(
            outcome.action(),
            DeliveryAction::Approve | DeliveryAction::Apply
        ) {
            let adopted = self.carry_receipts_over(&target);
            detail.push_str(&adopted.said);
            if let DeliveryOutcome::Committed { commit, .. } = &outcome {
                detail.push_str(&self.attest_delivered(&target, commit, &adopted.commands));
            }
        }
        self.commit(&RunEvent::Delivered {
            action: outcome.action(),
            detail,
        })
    }
}

impl Run {
    /// Takes the run's receipts over into the target's store where the
    /// delivered tree is the one they prove (see [`Verifier::adopt`]), and
    /// says what came of it, for the delivery's detail. Delivery has
    /// happened: a failure here is said, not raised.
    ///
    /// [`Verifier::adopt`]: orcho_receipts::Verifier::adopt
    fn carry_receipts_over(&self, target: &Utf8Path) -> Adopted {
        let said = |said: String| Adopted {
            said,
            commands: Vec::new(),
        };
        let store = &self.engine.inner.store;
        let verifier = match store.verifier_in(
            target,
            store.checkout_receipts(),
            self.engine.inner.plan.verification.as_ref(),
        ) {
            Ok(Some(verifier)) => verifier,
            Ok(None) => return said(String::new()),
            Err(e) => return said(format!("; receipts not carried over: {e}")),
        };
        match verifier.adopt(&store.run_receipts(self.id())) {
            Ok(adopted) if adopted.is_empty() => said(String::new()),
            Ok(adopted) => Adopted {
                said: format!(
                    "; receipts carried over: {}",
                    adopted
                        .iter()
                        .map(|c| c.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                commands: adopted,
            },
            Err(e) => said(format!(
                "; receipts not carried over: {}",
                orcho_core::error_chain(&e)
            )),
        }
    }

    /// Attaches attestations of the receipts carried over to the target
    /// (present there, so the commit's tree is the one they prove) to the
    /// commit `approve` made, when the engine has a signing key; says what
    /// came of it. Delivery has happened: a failure here is said, not
    /// raised.
    fn attest_delivered(
        &self,
        target: &Utf8Path,
        commit: &str,
        adopted: &[orcho_receipts::CommandName],
    ) -> String {
        let Some(key) = &self.engine.inner.signing_key else {
            return String::new();
        };
        if adopted.is_empty() {
            return String::new();
        }
        let receipts = self.engine.inner.store.checkout_receipts();
        let loaded: Vec<_> = adopted
            .iter()
            .filter_map(|name| match receipts.load_command_receipt(name) {
                orcho_receipts::LoadedReceipt::Valid(receipt) => Some(receipt),
                _ => None,
            })
            .collect();
        let short = commit.get(..12).unwrap_or(commit);
        let contract = self
            .engine
            .inner
            .plan
            .verification
            .clone()
            .unwrap_or_default();
        match orcho_attest::notes::Repo::new(target).attach(commit, &loaded, &contract, key) {
            Ok(attested) if attested.is_empty() => String::new(),
            Ok(attested) => format!("; attested on {short}: {}", attested.join(", ")),
            Err(e) => format!("; not attested: {e}"),
        }
    }
}

/// The receipts taken over into the target, and what to say of it.
struct Adopted {
    said: String,
    commands: Vec<orcho_receipts::CommandName>,
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
            "correction-ready: start follow-up {} for {}",
            spec.generation(),
            spec.counted()
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
