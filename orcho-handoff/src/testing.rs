//! Test doubles for hosts and plugin authors (feature `test-util`).

use std::{
    collections::VecDeque,
    sync::{Mutex, PoisonError},
};

use orcho_core::HandoffId;

use crate::{Advice, AdviceRequest, Advisor, AdvisorError};

/// An advisor that replays a script: each call to
/// [`advise`](Advisor::advise) takes the next scripted answer, and records
/// which handoff it was asked about. When the script is exhausted it fails.
///
/// ```
/// use orcho_handoff::{testing::ScriptedAdvisor, Advice, Confidence, HandoffAction};
///
/// let advisor = ScriptedAdvisor::new("scripted")
///     .then(Advice::new(HandoffAction::Halt, Confidence::score(0.9), "the plan is wrong"))
///     .then_fail("model timed out");
/// assert_eq!(advisor.remaining(), 2);
/// ```
#[derive(Debug)]
pub struct ScriptedAdvisor {
    name: String,
    script: Mutex<VecDeque<Result<Advice, AdvisorError>>>,
    asked: Mutex<Vec<HandoffId>>,
    contexts: Mutex<Vec<String>>,
}

impl ScriptedAdvisor {
    /// An advisor with this name and an empty script.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            script: Mutex::new(VecDeque::new()),
            asked: Mutex::new(Vec::new()),
            contexts: Mutex::new(Vec::new()),
        }
    }

    /// Appends advice to the script.
    #[must_use]
    pub fn then(self, advice: Advice) -> Self {
        self.push(Ok(advice));
        self
    }

    /// Appends a failure to the script.
    #[must_use]
    pub fn then_fail(self, message: &str) -> Self {
        self.push(Err(AdvisorError::msg(message)));
        self
    }

    fn push(&self, answer: Result<Advice, AdvisorError>) {
        self.script
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_back(answer);
    }

    /// How many scripted answers are left.
    pub fn remaining(&self) -> usize {
        self.script
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// The handoffs it was asked about, in order.
    pub fn asked(&self) -> Vec<HandoffId> {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The host's [`context`](AdviceRequest::context) of each request, in
    /// order.
    pub fn contexts(&self) -> Vec<String> {
        self.contexts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[async_trait::async_trait]
impl Advisor for ScriptedAdvisor {
    fn name(&self) -> &str {
        &self.name
    }

    async fn advise(&self, request: &AdviceRequest<'_>) -> Result<Advice, AdvisorError> {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request.handoff.id().clone());
        self.contexts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request.context.to_owned());
        self.script
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
            .unwrap_or_else(|| Err(AdvisorError::msg("the advisor's script is exhausted")))
    }
}
