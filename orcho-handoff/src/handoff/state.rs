//! The phase handoff and its state machine: pure, consuming transitions.
//!
//! ```text
//!            Decide(action ≠ halt)            Resume
//!   Open ─────────────────────────▶ Decided ──────────▶ Resumed
//!     │
//!     │ Decide(halt)
//!     ▼
//!   Halted (terminal)
//! ```
//!
//! - `Decide` with the same decision again (same digest) is an idempotent
//!   replay in every state after `Open`; a different one is a conflict.
//! - `Resume` on `Open` is refused (a decision is pending), on `Halted`
//!   refused (terminal), on `Resumed` refused (it already happened: a second
//!   resume would run a second extra attempt).
//!
//! [`HandoffState::apply`] consumes the state and returns the next one, or
//! hands the unchanged state back inside the [`TransitionError`]. It does no
//! I/O; the [`HandoffStore`](crate::handoff::HandoffStore) persists around it.

use std::fmt;

use orcho_core::{Finding, GateName, HandoffId, PhaseName, RunId, Timestamp, Verdict};

use super::{
    action::{AvailableActions, HandoffChoice, HandoffPolicy},
    error::{TransitionError, TransitionErrorKind},
};
use crate::{decision::Decision, waiver::Waiver};

/// Why a handoff opened.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HandoffTrigger {
    /// The phase's verdict (rejected or incomplete) and its pause policy.
    Verdict,
    /// A gate whose failure pauses the phase.
    Gate(GateName),
    /// The phase pauses after every attempt, whatever the verdict.
    AlwaysPause,
}

impl fmt::Display for HandoffTrigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Verdict => f.write_str("verdict"),
            Self::Gate(gate) => write!(f, "gate `{gate}`"),
            Self::AlwaysPause => f.write_str("always_pause"),
        }
    }
}

/// What the engine knows when a phase pauses: the input to
/// [`HandoffStore::open`](crate::handoff::HandoffStore::open) and
/// [`PhaseHandoff::new`].
///
/// ```
/// use orcho_core::{Finding, Severity, Verdict};
/// use orcho_handoff::handoff::{HandoffSpec, HandoffTrigger};
///
/// let spec = HandoffSpec::new("run-1".parse()?, "implement".parse()?, Verdict::Rejected)
///     .with_round(2)
///     .with_trigger(HandoffTrigger::Gate("tests".parse()?))
///     .with_findings(vec![Finding::new("tests", Severity::High, "test `parse_empty` failed")]);
/// assert_eq!(spec.round(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct HandoffSpec {
    pub(crate) run: RunId,
    pub(crate) phase: PhaseName,
    pub(crate) verdict: Verdict,
    pub(crate) trigger: HandoffTrigger,
    pub(crate) round: u32,
    pub(crate) findings: Vec<Finding>,
    pub(crate) policy: HandoffPolicy,
    pub(crate) allowed: Option<AvailableActions>,
}

impl HandoffSpec {
    /// A handoff of `phase` with `verdict`, triggered by the verdict, round
    /// 1, no findings, the default policy.
    pub fn new(run: RunId, phase: PhaseName, verdict: Verdict) -> Self {
        Self {
            run,
            phase,
            verdict,
            trigger: HandoffTrigger::Verdict,
            round: 1,
            findings: Vec::new(),
            policy: HandoffPolicy::default(),
            allowed: None,
        }
    }

    orcho_core::getters! {
        /// The run.
        pub fn run(&self) -> &RunId;
        /// The phase.
        pub fn phase(&self) -> &PhaseName;
        /// The round.
        pub fn round(&self) -> u32;
    }
}

impl HandoffSpec {
    orcho_core::setters! {
        /// Restricts the menu to `allowed` (a profile's `handoff.actions`): the
        /// handoff offers the actions its verdict and policy allow *and* the
        /// profile lists. `halt` is always offered.
        pub fn with_allowed_actions(allowed: Some(AvailableActions));
        /// Sets the trigger.
        pub fn with_trigger(trigger: HandoffTrigger);
        /// Sets the phase round (attempt) the handoff pauses.
        pub fn with_round(round: u32);
        /// Sets the findings.
        pub fn with_findings(findings: Vec<Finding>);
        /// Sets the policy the menu is computed from.
        pub fn with_policy(policy: HandoffPolicy);
    }
}

/// A typed pause after a phase: what an operator sees and decides on.
///
/// Its [`available_actions`](Self::available_actions) are computed when it
/// opens and persisted with it.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseHandoff {
    pub(crate) id: HandoffId,
    pub(crate) run: RunId,
    pub(crate) phase: PhaseName,
    pub(crate) trigger: HandoffTrigger,
    pub(crate) verdict: Verdict,
    pub(crate) round: u32,
    pub(crate) available_actions: AvailableActions,
    pub(crate) findings: Vec<Finding>,
    pub(crate) created_at: Timestamp,
}

impl PhaseHandoff {
    /// Opens a handoff with this id, computing its menu from the spec's
    /// verdict and policy. Pure; [`HandoffStore::open`](crate::handoff::HandoffStore::open)
    /// also chooses the id and persists it.
    pub fn new(id: HandoffId, spec: HandoffSpec, created_at: Timestamp) -> Self {
        Self {
            id,
            available_actions: match spec.allowed {
                Some(allowed) => {
                    AvailableActions::compute(spec.verdict, spec.policy).restricted_to(allowed)
                }
                None => AvailableActions::compute(spec.verdict, spec.policy),
            },
            run: spec.run,
            phase: spec.phase,
            trigger: spec.trigger,
            verdict: spec.verdict,
            round: spec.round,
            findings: spec.findings,
            created_at,
        }
    }

    orcho_core::getters! {
        /// The handoff id.
        pub fn id(&self) -> &HandoffId;
        /// The run.
        pub fn run(&self) -> &RunId;
        /// The phase that paused.
        pub fn phase(&self) -> &PhaseName;
        /// Why it paused.
        pub fn trigger(&self) -> &HandoffTrigger;
        /// The phase's verdict.
        pub fn verdict(&self) -> Verdict;
        /// The phase round (attempt) that paused.
        pub fn round(&self) -> u32;
        /// The actions a decision may take.
        pub fn available_actions(&self) -> AvailableActions;
        /// The findings.
        pub fn findings(&self) -> &[Finding];
        /// When it opened.
        pub fn created_at(&self) -> Timestamp;
    }
}

/// One extra attempt of a phase, granted by a `retry_feedback` decision.
///
/// It is exactly one attempt and it is counted on its own: the engine runs
/// it with the feedback and does **not** raise (or consume) the phase's
/// declared attempt limit. If that attempt is rejected again, a new handoff
/// opens, with a new id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryGrant {
    pub(crate) handoff: HandoffId,
    pub(crate) phase: PhaseName,
    pub(crate) round: u32,
    pub(crate) feedback: String,
}

impl RetryGrant {
    orcho_core::getters! {
        /// The handoff that granted it.
        pub fn handoff(&self) -> &HandoffId;
        /// The phase to run again.
        pub fn phase(&self) -> &PhaseName;
        /// The round that paused; the extra attempt follows it.
        pub fn round(&self) -> u32;
        /// The feedback to give the next attempt.
        pub fn feedback(&self) -> &str;
    }

    /// How many extra attempts this grants: always one.
    pub fn extra_attempts(&self) -> u32 {
        1
    }
}

/// What the engine must do after a handoff is resumed.
#[derive(Debug, Clone, PartialEq)]
pub enum NextStep {
    /// Proceed to what follows the phase, as if it had passed (an override).
    Continue,
    /// Run one extra attempt of the phase with feedback.
    Retry(RetryGrant),
    /// Proceed, with this durable waiver on record.
    ContinueWithWaiver(Waiver),
}

impl NextStep {
    pub(crate) fn after(
        handoff: &PhaseHandoff,
        decision: &Decision<HandoffChoice>,
    ) -> Option<Self> {
        match decision.payload() {
            HandoffChoice::Continue => Some(Self::Continue),
            HandoffChoice::RetryFeedback { feedback } => Some(Self::Retry(RetryGrant {
                handoff: handoff.id.clone(),
                phase: handoff.phase.clone(),
                round: handoff.round,
                feedback: feedback.clone(),
            })),
            HandoffChoice::ContinueWithWaiver { reason } => Some(Self::ContinueWithWaiver(
                Waiver::from_decision(handoff, decision, reason),
            )),
            HandoffChoice::Halt => None,
        }
    }
}

/// An event that moves a handoff.
#[derive(Debug, Clone, PartialEq)]
pub enum HandoffEvent {
    /// A decision was recorded.
    Decide(Box<Decision<HandoffChoice>>),
    /// The run was resumed past the handoff.
    Resume,
}

impl HandoffEvent {
    /// The event's name: `decide` or `resume`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Decide(_) => "decide",
            Self::Resume => "resume",
        }
    }
}

/// The name of a [`HandoffState`], for messages and tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HandoffStateName {
    /// Awaiting a decision.
    Open,
    /// Decided, not yet resumed.
    Decided,
    /// Resumed; the engine acts on the next step.
    Resumed,
    /// Halted; terminal.
    Halted,
}

orcho_core::spelled!(HandoffStateName {
    Open => "open",
    Decided => "decided",
    Resumed => "resumed",
    Halted => "halted",
});

/// Where a handoff stands. Each variant carries its data.
#[derive(Debug, Clone, PartialEq)]
pub enum HandoffState {
    /// Awaiting a decision.
    Open(PhaseHandoff),
    /// A decision other than `halt` is recorded; the run can be resumed.
    Decided {
        /// The handoff.
        handoff: PhaseHandoff,
        /// The decision.
        decision: Decision<HandoffChoice>,
    },
    /// Resumed: the engine acts on `next`.
    Resumed {
        /// The handoff.
        handoff: PhaseHandoff,
        /// The decision.
        decision: Decision<HandoffChoice>,
        /// What the engine does next.
        next: NextStep,
    },
    /// Halted by a `halt` decision. Terminal: it cannot be resumed.
    Halted {
        /// The handoff.
        handoff: PhaseHandoff,
        /// The `halt` decision.
        decision: Decision<HandoffChoice>,
    },
}

impl HandoffState {
    /// The state of a freshly opened handoff.
    pub fn open(handoff: PhaseHandoff) -> Self {
        Self::Open(handoff)
    }

    /// The handoff.
    pub fn handoff(&self) -> &PhaseHandoff {
        match self {
            Self::Open(handoff)
            | Self::Decided { handoff, .. }
            | Self::Resumed { handoff, .. }
            | Self::Halted { handoff, .. } => handoff,
        }
    }

    /// The recorded decision, once there is one.
    pub fn decision(&self) -> Option<&Decision<HandoffChoice>> {
        match self {
            Self::Open(_) => None,
            Self::Decided { decision, .. }
            | Self::Resumed { decision, .. }
            | Self::Halted { decision, .. } => Some(decision),
        }
    }

    /// What the engine does next, once resumed.
    pub fn next_step(&self) -> Option<&NextStep> {
        match self {
            Self::Resumed { next, .. } => Some(next),
            Self::Open(_) | Self::Decided { .. } | Self::Halted { .. } => None,
        }
    }

    /// The state's name.
    pub fn name(&self) -> HandoffStateName {
        match self {
            Self::Open(_) => HandoffStateName::Open,
            Self::Decided { .. } => HandoffStateName::Decided,
            Self::Resumed { .. } => HandoffStateName::Resumed,
            Self::Halted { .. } => HandoffStateName::Halted,
        }
    }

    /// Applies one event. Pure: no I/O, no clock.
    ///
    /// ```
    /// use orcho_core::{Timestamp, Verdict};
    /// use orcho_handoff::{decision::{Decision, DecidedBy, DecisionRequest}, handoff::{HandoffChoice, HandoffEvent, HandoffSpec, HandoffState, HandoffStateName, PhaseHandoff}};
    ///
    /// let at: Timestamp = "2026-11-21T12:00:00Z".parse()?;
    /// let spec = HandoffSpec::new("run-1".parse()?, "implement".parse()?, Verdict::Rejected);
    /// let handoff = PhaseHandoff::new("0001-implement".parse()?, spec, at);
    /// let state = HandoffState::open(handoff);
    ///
    /// // Resuming first is refused, and the state comes back unchanged.
    /// let err = state.apply(HandoffEvent::Resume).unwrap_err();
    /// let state = err.into_state();
    ///
    /// let halt = Decision::new(
    ///     "run-1".parse()?,
    ///     "0001-implement".parse()?,
    ///     DecisionRequest::new(HandoffChoice::Halt, DecidedBy::Operator),
    ///     at,
    /// )?;
    /// let state = state.apply(HandoffEvent::Decide(Box::new(halt)))?;
    /// assert_eq!(state.name(), HandoffStateName::Halted);
    /// assert!(state.apply(HandoffEvent::Resume).is_err(), "halted is terminal");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A [`TransitionError`] holding the unchanged state
    /// ([`TransitionError::into_state`]) when the event is illegal here:
    /// a decision for another handoff, an action not on the menu, a
    /// different decision after one is recorded, a resume while pending,
    /// after halt, or a second time.
    pub fn apply(self, event: HandoffEvent) -> Result<Self, TransitionError> {
        match event {
            HandoffEvent::Decide(decision) => self.decide(*decision),
            HandoffEvent::Resume => self.resume(),
        }
    }

    /// Applies events in order, starting from a freshly opened handoff. This
    /// is how a handoff's history (its journal and decision record) replays
    /// into its state.
    ///
    /// # Errors
    ///
    /// The first illegal event's [`TransitionError`].
    pub fn replay(
        handoff: PhaseHandoff,
        events: impl IntoIterator<Item = HandoffEvent>,
    ) -> Result<Self, TransitionError> {
        events
            .into_iter()
            .try_fold(Self::open(handoff), Self::apply)
    }

    fn decide(self, decision: Decision<HandoffChoice>) -> Result<Self, TransitionError> {
        // Checks that hold in every state: the decision is for this handoff,
        // and its action is on the persisted menu.
        let handoff = self.handoff();
        if decision.point() != handoff.id() || decision.run() != handoff.run() {
            let kind = TransitionErrorKind::WrongHandoff {
                run: decision.run().clone(),
                handoff: decision.point().clone(),
            };
            return Err(TransitionError::new(self, "decide", kind));
        }
        let action = decision.payload().action();
        if !handoff.available_actions.contains(action) {
            let kind = TransitionErrorKind::NotAvailable {
                action,
                available: handoff.available_actions,
            };
            return Err(TransitionError::new(self, "decide", kind));
        }
        match self {
            Self::Open(handoff) => Ok(match decision.payload() {
                HandoffChoice::Halt => Self::Halted { handoff, decision },
                HandoffChoice::Continue
                | HandoffChoice::RetryFeedback { .. }
                | HandoffChoice::ContinueWithWaiver { .. } => Self::Decided { handoff, decision },
            }),
            Self::Decided {
                decision: ref recorded,
                ..
            }
            | Self::Resumed {
                decision: ref recorded,
                ..
            }
            | Self::Halted {
                decision: ref recorded,
                ..
            } => {
                if recorded.same_as(&decision) {
                    return Ok(self);
                }
                let kind = TransitionErrorKind::Conflict {
                    recorded: recorded.payload().action(),
                    recorded_by: recorded.decided_by(),
                    recorded_at: recorded.decided_at(),
                    attempted: action,
                };
                Err(TransitionError::new(self, "decide", kind))
            }
        }
    }

    fn resume(self) -> Result<Self, TransitionError> {
        match self {
            Self::Open(handoff) => {
                let kind = TransitionErrorKind::Pending {
                    available: handoff.available_actions,
                };
                Err(TransitionError::new(Self::Open(handoff), "resume", kind))
            }
            Self::Decided { handoff, decision } => match NextStep::after(&handoff, &decision) {
                Some(next) => Ok(Self::Resumed {
                    handoff,
                    decision,
                    next,
                }),
                None => Err(TransitionError::new(
                    Self::Decided { handoff, decision },
                    "resume",
                    TransitionErrorKind::Terminal,
                )),
            },
            Self::Halted { .. } => Err(TransitionError::new(
                self,
                "resume",
                TransitionErrorKind::Terminal,
            )),
            Self::Resumed { .. } => Err(TransitionError::new(
                self,
                "resume",
                TransitionErrorKind::AlreadyResumed,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::{DecidedBy, DecisionRequest};
    use orcho_core::{Severity, error_chain};
    use std::fmt::Write as _;

    fn at() -> Timestamp {
        "2026-11-21T12:00:00Z".parse().unwrap()
    }

    fn handoff() -> PhaseHandoff {
        let spec = HandoffSpec::new(
            "run-1".parse().unwrap(),
            "implement".parse().unwrap(),
            Verdict::Incomplete,
        )
        .with_trigger(HandoffTrigger::Gate("tests".parse().unwrap()))
        .with_findings(vec![Finding::new(
            "tests",
            Severity::High,
            "test `a` failed",
        )]);
        PhaseHandoff::new("0001-implement".parse().unwrap(), spec, at())
    }

    fn decision(choice: HandoffChoice) -> Decision<HandoffChoice> {
        Decision::new(
            "run-1".parse().unwrap(),
            "0001-implement".parse().unwrap(),
            DecisionRequest::new(choice, DecidedBy::Operator),
            at(),
        )
        .unwrap()
    }

    fn retry() -> HandoffChoice {
        HandoffChoice::retry("cover the empty case").unwrap()
    }

    fn states() -> Vec<(&'static str, HandoffState)> {
        let open = HandoffState::open(handoff());
        let decided = open
            .clone()
            .apply(HandoffEvent::Decide(Box::new(decision(retry()))))
            .unwrap();
        let resumed = decided.clone().apply(HandoffEvent::Resume).unwrap();
        let halted = open
            .clone()
            .apply(HandoffEvent::Decide(Box::new(decision(
                HandoffChoice::Halt,
            ))))
            .unwrap();
        vec![
            ("open", open),
            ("decided(retry)", decided),
            ("resumed(retry)", resumed),
            ("halted", halted),
        ]
    }

    fn events() -> Vec<(&'static str, HandoffEvent)> {
        let wrong = Decision::new(
            "run-1".parse().unwrap(),
            "0002-implement".parse().unwrap(),
            DecisionRequest::new(retry(), DecidedBy::Operator),
            at(),
        )
        .unwrap();
        vec![
            (
                "decide retry",
                HandoffEvent::Decide(Box::new(decision(retry()))),
            ),
            (
                "decide other retry",
                HandoffEvent::Decide(Box::new(decision(
                    HandoffChoice::retry("something else").unwrap(),
                ))),
            ),
            (
                "decide waiver",
                HandoffEvent::Decide(Box::new(decision(
                    HandoffChoice::waive("known flake").unwrap(),
                ))),
            ),
            (
                "decide halt",
                HandoffEvent::Decide(Box::new(decision(HandoffChoice::Halt))),
            ),
            (
                "decide continue",
                HandoffEvent::Decide(Box::new(decision(HandoffChoice::Continue))),
            ),
            ("decide elsewhere", HandoffEvent::Decide(Box::new(wrong))),
            ("resume", HandoffEvent::Resume),
        ]
    }

    /// Every state × every event. Errors must hand the state back unchanged.
    #[test]
    fn full_transition_table() {
        let mut table = String::new();
        for (state_name, state) in states() {
            for (event_name, event) in events() {
                let outcome = match state.clone().apply(event) {
                    Ok(next) if next == state => "ok, unchanged (replay)".to_owned(),
                    Ok(next) => format!("ok -> {}", next.name()),
                    Err(e) => {
                        assert_eq!(e.state(), &state, "errors hand the state back unchanged");
                        format!("refused: {}", error_chain(e.kind()))
                    }
                };
                writeln!(table, "{state_name:<15} {event_name:<19} {outcome}").unwrap();
            }
        }
        insta::assert_snapshot!(table, @"
        open            decide retry        ok -> decided
        open            decide other retry  ok -> decided
        open            decide waiver       ok -> decided
        open            decide halt         ok -> halted
        open            decide continue     refused: `continue` is not available; available: retry_feedback, continue_with_waiver, halt
        open            decide elsewhere    refused: the decision is for handoff `0002-implement` of run `run-1`
        open            resume              refused: a decision is pending; decide one of retry_feedback, continue_with_waiver, halt first
        decided(retry)  decide retry        ok, unchanged (replay)
        decided(retry)  decide other retry  refused: a different decision is already recorded (`retry_feedback` by operator at 2026-11-21T12:00:00.000Z); refusing `retry_feedback`
        decided(retry)  decide waiver       refused: a different decision is already recorded (`retry_feedback` by operator at 2026-11-21T12:00:00.000Z); refusing `continue_with_waiver`
        decided(retry)  decide halt         refused: a different decision is already recorded (`retry_feedback` by operator at 2026-11-21T12:00:00.000Z); refusing `halt`
        decided(retry)  decide continue     refused: `continue` is not available; available: retry_feedback, continue_with_waiver, halt
        decided(retry)  decide elsewhere    refused: the decision is for handoff `0002-implement` of run `run-1`
        decided(retry)  resume              ok -> resumed
        resumed(retry)  decide retry        ok, unchanged (replay)
        resumed(retry)  decide other retry  refused: a different decision is already recorded (`retry_feedback` by operator at 2026-11-21T12:00:00.000Z); refusing `retry_feedback`
        resumed(retry)  decide waiver       refused: a different decision is already recorded (`retry_feedback` by operator at 2026-11-21T12:00:00.000Z); refusing `continue_with_waiver`
        resumed(retry)  decide halt         refused: a different decision is already recorded (`retry_feedback` by operator at 2026-11-21T12:00:00.000Z); refusing `halt`
        resumed(retry)  decide continue     refused: `continue` is not available; available: retry_feedback, continue_with_waiver, halt
        resumed(retry)  decide elsewhere    refused: the decision is for handoff `0002-implement` of run `run-1`
        resumed(retry)  resume              refused: it was already resumed
        halted          decide retry        refused: a different decision is already recorded (`halt` by operator at 2026-11-21T12:00:00.000Z); refusing `retry_feedback`
        halted          decide other retry  refused: a different decision is already recorded (`halt` by operator at 2026-11-21T12:00:00.000Z); refusing `retry_feedback`
        halted          decide waiver       refused: a different decision is already recorded (`halt` by operator at 2026-11-21T12:00:00.000Z); refusing `continue_with_waiver`
        halted          decide halt         ok, unchanged (replay)
        halted          decide continue     refused: `continue` is not available; available: retry_feedback, continue_with_waiver, halt
        halted          decide elsewhere    refused: the decision is for handoff `0002-implement` of run `run-1`
        halted          resume              refused: it was halted; the run is terminal and cannot be resumed
        ");
    }

    #[test]
    fn resuming_gives_the_next_step_of_each_decision() {
        let resume = |choice| {
            HandoffState::open(handoff())
                .apply(HandoffEvent::Decide(Box::new(decision(choice))))
                .and_then(|s| s.apply(HandoffEvent::Resume))
        };
        let next = resume(retry()).unwrap();
        let Some(NextStep::Retry(grant)) = next.next_step() else {
            panic!("expected a retry, got {next:?}");
        };
        assert_eq!(grant.feedback(), "cover the empty case");
        assert_eq!(grant.extra_attempts(), 1);
        assert_eq!(grant.handoff().as_str(), "0001-implement");

        let next = resume(HandoffChoice::waive("accepted: flaky on CI only").unwrap()).unwrap();
        let Some(NextStep::ContinueWithWaiver(waiver)) = next.next_step() else {
            panic!("expected a waiver, got {next:?}");
        };
        assert_eq!(waiver.reason(), "accepted: flaky on CI only");
        assert!(waiver.covers_gate(&"tests".parse().unwrap()));
        assert!(!waiver.covers_gate(&"lint".parse().unwrap()));
        assert!(waiver.covers_finding(&Finding::new("tests", Severity::Low, "test  `a`  failed")));
        assert!(!waiver.covers_finding(&Finding::new("tests", Severity::High, "test `b` failed")));

        let halted = resume(HandoffChoice::Halt).unwrap_err();
        assert_eq!(halted.kind(), &TransitionErrorKind::Terminal);
        assert_eq!(halted.into_state().name(), HandoffStateName::Halted);
    }

    #[test]
    fn replay_folds_events() {
        let events = vec![
            HandoffEvent::Decide(Box::new(decision(retry()))),
            HandoffEvent::Resume,
        ];
        let state = HandoffState::replay(handoff(), events).unwrap();
        assert_eq!(state.name(), HandoffStateName::Resumed);
        assert!(HandoffState::replay(handoff(), vec![HandoffEvent::Resume]).is_err());
    }
}
