//! An agent's permission questions (see [`orcho_handoff::ask`]): asked by
//! the hook of an agent a phase runs, decided by a person through any
//! host, waited for by the hook.

use std::time::{Duration, Instant};

use orcho_core::{HandoffId, RunId, RunStatus};
use orcho_handoff::{
    ask::{AskChoice, AskQuestion, Asked},
    decision::{Decision, DecisionRequest, RecordedDecision},
};

use super::Store;
use crate::{EngineError, error::EngineErrorKind};

fn ask_err(run: &RunId, e: orcho_handoff::ask::AskError) -> EngineError {
    EngineError::run(run, EngineErrorKind::Ask(Box::new(e)))
}

impl Store {
    /// Asks a person `question` for `run`, whose phase is running: a
    /// permission point every host shows until it is decided.
    ///
    /// # Errors
    ///
    /// An unknown run, one that is not running, or a store that cannot be
    /// written.
    pub fn ask(&self, run: &RunId, question: &AskQuestion) -> Result<HandoffId, EngineError> {
        let state = self.runs.read(run)?;
        if state.status() != RunStatus::Running {
            return Err(EngineError::run(
                run,
                crate::Refusal::Ended {
                    status: state.status(),
                    reason: "only a running phase's agent asks".to_owned(),
                },
            ));
        }
        self.asks.open(run, question).map_err(|e| ask_err(run, e))
    }

    /// Every permission question of `run`, oldest first, with its decision
    /// and how the agent was answered.
    ///
    /// # Errors
    ///
    /// When one cannot be read.
    pub fn asks(&self, run: &RunId) -> Result<Vec<Asked>, EngineError> {
        self.asks.all(run).map_err(|e| ask_err(run, e))
    }

    /// The permission questions `phase` of `run` asked since `since` whose
    /// agent was never answered: the hook that waited for each ended
    /// before it answered (killed, say). Once the phase has ended, an agent
    /// with such a question may have gone on without the person's answer.
    ///
    /// # Errors
    ///
    /// When one cannot be read.
    pub fn asks_left_unanswered(
        &self,
        run: &RunId,
        phase: &str,
        since: orcho_core::Timestamp,
    ) -> Result<Vec<Asked>, EngineError> {
        Ok(self
            .asks(run)?
            .into_iter()
            .filter(|a| a.question.phase == phase && a.asked_at >= since && a.outcome.is_none())
            .collect())
    }

    /// Records a decision on permission question `id` of `run`: the same
    /// again replays, another conflicts.
    ///
    /// # Errors
    ///
    /// An unknown question, a conflict ([`EngineError::is_conflict`]), a
    /// store that cannot be written.
    pub fn decide_ask(
        &self,
        run: &RunId,
        id: &HandoffId,
        request: DecisionRequest<AskChoice>,
    ) -> Result<RecordedDecision<AskChoice>, EngineError> {
        self.asks
            .decide(run, id, self.stamped(request))
            .map_err(|e| ask_err(run, e))
    }

    /// Waits for the decision on permission question `id` of `run`, at most
    /// `timeout`, looking every `every`; then decides `deny` as nobody's
    /// answer (a decision recorded first holds). Records that the agent was
    /// answered, and returns the decision it was answered with.
    ///
    /// # Errors
    ///
    /// A store that cannot be read or written.
    pub fn wait_for_ask(
        &self,
        run: &RunId,
        id: &HandoffId,
        timeout: Duration,
        every: Duration,
    ) -> Result<Decision<AskChoice>, EngineError> {
        self.asks
            .wait(run, id, Instant::now() + timeout, every)
            .map_err(|e| ask_err(run, e))
    }
}
