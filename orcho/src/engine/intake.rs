//! Pre-run intake and the retained worktree of a run that delivers.

use orcho_delivery::{IntakeOutcome, detect_intake};
use orcho_handoff::{
    IntakeAction,
    decision::{DecidedBy, DecisionRequest},
    intake::IntakeChoice,
};

use super::{run::Run, step::Step};
use crate::{
    EngineError,
    error::EngineErrorKind,
    state::{RunEvent, Workspace},
};

/// The message of the worktree commit that holds the changes included at
/// intake.
const INCLUDED_MESSAGE: &str = "Uncommitted changes of the target, included at intake";

impl Run {
    pub(super) fn workspace(&self) -> Result<Workspace, EngineError> {
        self.state()
            .workspace
            .clone()
            .ok_or_else(|| self.err(crate::Refusal::NoDelivery))
    }

    pub(super) fn intake_err(&self, e: orcho_delivery::IntakeError) -> EngineError {
        self.err(EngineErrorKind::Intake(Box::new(e)))
    }

    /// A run created in a worktree: checks the target for uncommitted
    /// changes, then opens the intake question or creates the worktree.
    pub(super) fn prepare(&mut self) -> Result<(), EngineError> {
        let ws = self.workspace()?;
        let intakes = &self.engine.inner.store.intakes;
        // A process that died after opening the question: adopt it.
        if intakes.question(self.id()).is_ok() {
            return self.commit(&RunEvent::IntakeOpened);
        }
        let report = detect_intake(&ws.target, self.engine.inner.store.local_dir())
            .map_err(|e| EngineError::run(self.id(), EngineErrorKind::Detect(Box::new(e))))?;
        if report.is_clean() {
            return self.workspace_ready(&ws, report.head(), None);
        }
        intakes
            .open(self.id(), &report)
            .map_err(|e| self.intake_err(e))?;
        self.commit(&RunEvent::IntakeOpened)
    }

    /// At the intake question: decides it when the plan has a default, and
    /// returns the question while nobody has decided.
    pub(super) fn intake_step(&mut self) -> Result<Option<Step>, EngineError> {
        let intakes = self.engine.inner.store.intakes.clone();
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

    /// Acts on the recorded intake decision, if there is one: halts, or
    /// creates the worktree at the start commit (seeded with the included
    /// changes). Without a decision, nothing.
    pub(super) fn apply_intake(&mut self) -> Result<(), EngineError> {
        let intakes = self.engine.inner.store.intakes.clone();
        let Some(recorded) = intakes
            .recorded_decision(self.id())
            .map_err(|e| self.intake_err(e))?
        else {
            return Ok(());
        };
        let outcome = intakes.apply(&recorded).map_err(|e| self.intake_err(e))?;
        let Some(start) = outcome.start().map(str::to_owned) else {
            return self.commit(&RunEvent::IntakeHalted);
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
        self.set_up_worktree(&ws)?;
        self.commit(&RunEvent::WorkspaceReady {
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
        self.set_up_worktree(ws)?;
        self.commit(&RunEvent::WorkspaceReady {
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
        let Some(of) = &self.state().follow_up() else {
            return Ok(());
        };
        let patch = self
            .engine
            .inner
            .store
            .deliveries
            .patch(&of.parent)
            .map_err(|e| self.delivery_err(e))?;
        orcho_delivery::worktree::apply_patch_bytes(&ws.worktree, &patch)
            .map_err(|e| self.err(EngineErrorKind::Worktree(Box::new(e))))?;
        Ok(())
    }

    /// Runs the contract's worktree setup, then checks that each command's
    /// program of the checkout (`./scripts/check.sh`, `.venv/bin/pytest`)
    /// is in the worktree: one that git does not track is missing there
    /// unless the setup brings it, and that is said now, not as a gate
    /// that cannot run.
    fn set_up_worktree(&self, ws: &Workspace) -> Result<(), EngineError> {
        let Some(contract) = &self.engine.inner.plan.verification else {
            return Ok(());
        };
        orcho_delivery::worktree::setup(
            &ws.target,
            &ws.worktree,
            &contract.worktree.setup,
            &self.engine.inner.store.base_env,
        )
        .map_err(|e| self.err(EngineErrorKind::WorktreeSetup(Box::new(e))))?;
        for spec in &contract.commands {
            let Some(program) = spec
                .argv
                .first()
                .filter(|p| p.contains('/') && !p.starts_with('/'))
            else {
                continue;
            };
            let Some(env) = contract.environment_for(spec) else {
                continue;
            };
            let program: camino::Utf8PathBuf = env
                .working_dir
                .join(program)
                .components()
                .filter(|c| !matches!(c, camino::Utf8Component::CurDir))
                .collect();
            if !ws.worktree.join(&program).exists() && ws.target.join(&program).exists() {
                let first = program
                    .components()
                    .next()
                    .map_or_else(|| program.to_string(), |c| c.as_str().to_owned());
                return Err(self.err(crate::Refusal::ProgramNotInWorktree {
                    command: spec.name.to_string(),
                    program: program.to_string(),
                    first,
                }));
            }
        }
        Ok(())
    }
}
