//! What the engine runs: the phases of a run and their control rules.

use std::collections::BTreeMap;

use orcho_core::{GateName, PhaseName};
use orcho_gates::ScheduledGate;
use orcho_handoff::{
    DeliveryAction, IntakeAction,
    autopilot::AutopilotPolicy,
    handoff::{AvailableActions, HandoffPolicy},
    supervision::DeviationPolicy,
};
use orcho_receipts::VerificationContract;
use serde::{Deserialize, Serialize};

/// What a phase is for. The engine treats `final_acceptance` specially (it
/// reads receipts); `plan` is where a replan goes back to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PhaseRole {
    /// Produces the plan; a replan returns here.
    Plan,
    /// Changes the code.
    Implement,
    /// Reviews the change.
    Review,
    /// Decides readiness from receipts.
    FinalAcceptance,
    /// Anything else a profile names.
    Other(String),
}

impl PhaseRole {
    /// The snake_case name.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Plan => "plan",
            Self::Implement => "implement",
            Self::Review => "review",
            Self::FinalAcceptance => "final_acceptance",
            Self::Other(name) => name,
        }
    }
}

/// When a phase pauses for a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PausePolicy {
    /// Never pauses on its verdict; exhausted attempts follow
    /// [`ExhaustedPolicy`].
    Never,
    /// Pauses when the verdict is rejected or incomplete after the last
    /// automatic attempt.
    OnRejected,
    /// Pauses after every attempt.
    Always,
}

/// What happens when a phase has used all its attempts (or rounds) without
/// passing and its pause policy does not pause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ExhaustedPolicy {
    /// The run halts.
    Halt,
    /// The run pauses at a handoff.
    Pause,
}

/// One phase as the engine runs it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PhasePlan {
    /// Its name.
    pub name: PhaseName,
    /// Its role.
    pub role: PhaseRole,
    /// Automatic attempts per round (at least 1).
    pub max_attempts: u32,
    /// Replan rounds the run may use (at least 1).
    pub max_rounds: u32,
    /// Its gates, in declared order.
    pub gates: Vec<ScheduledGate>,
    /// Where a failing `feed_into_next` gate sends its failure, by gate: an
    /// earlier phase, which runs again with the failure as its input (and
    /// the phases after it too). A gate not named here feeds this phase's
    /// next attempt. Every return counts as an attempt of this phase.
    pub feeds: BTreeMap<GateName, PhaseName>,
    /// When it pauses.
    pub pause: PausePolicy,
    /// What happens when attempts run out.
    pub on_exhausted: ExhaustedPolicy,
    /// The menu rules of its handoffs.
    pub handoff: HandoffPolicy,
    /// The actions its handoffs may offer at most (a profile's
    /// `handoff.actions`); `None` for every action the verdict and policy
    /// allow. `halt` is always offered.
    pub allowed_actions: Option<AvailableActions>,
    /// Whether the phase may not change the checkout: an attempt that
    /// changes it is rejected, and its change taken back out of the
    /// checkout and kept as a patch in the attempt's artifacts.
    pub read_only: bool,
    /// The coding agent the profile names to run the phase. The engine
    /// does not run it: a host that runs agents reads it.
    pub runner: Option<orcho_profile::RunnerSpec>,
}

impl PhasePlan {
    /// A phase with one attempt, one round, no gates, pausing on rejection,
    /// halting when exhausted.
    pub fn new(name: PhaseName, role: PhaseRole) -> Self {
        Self {
            name,
            role,
            max_attempts: 1,
            max_rounds: 1,
            gates: Vec::new(),
            feeds: BTreeMap::new(),
            pause: PausePolicy::OnRejected,
            on_exhausted: ExhaustedPolicy::Halt,
            handoff: HandoffPolicy::default(),
            allowed_actions: None,
            read_only: false,
            runner: None,
        }
    }

    /// Sets the automatic attempts per round.
    #[must_use]
    pub fn with_max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// Sets the replan rounds.
    #[must_use]
    pub fn with_max_rounds(mut self, rounds: u32) -> Self {
        self.max_rounds = rounds.max(1);
        self
    }

    /// Adds a gate.
    #[must_use]
    pub fn with_gate(mut self, gate: ScheduledGate) -> Self {
        self.gates.push(gate);
        self
    }

    /// Sends the failure of the `feed_into_next` gate `gate` to the earlier
    /// phase `phase` (see [`feeds`](Self::feeds)).
    #[must_use]
    pub fn with_feed(mut self, gate: GateName, phase: PhaseName) -> Self {
        self.feeds.insert(gate, phase);
        self
    }
}

impl PhasePlan {
    orcho_core::setters! {
        /// Restricts the actions its handoffs offer.
        pub fn with_allowed_actions(allowed: Some(AvailableActions)) => allowed_actions;
        /// Sets the pause policy.
        pub fn with_pause(pause: PausePolicy);
        /// Sets what happens when attempts run out.
        pub fn with_on_exhausted(on_exhausted: ExhaustedPolicy);
        /// Sets the handoff menu rules.
        pub fn with_handoff(handoff: HandoffPolicy);
        /// Makes the phase read-only (or not).
        pub fn with_read_only(read_only: bool);
        /// Names the coding agent that runs the phase.
        pub fn with_runner(runner: Some(orcho_profile::RunnerSpec));
    }
}

/// Everything the engine needs to run: the phases in order, the verification
/// contract final acceptance reads, and the autopilot's limits.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunPlan {
    /// A name for traces and evidence (the profile's name).
    pub name: String,
    /// The phases, in order.
    pub phases: Vec<PhasePlan>,
    /// The verification contract, if the run is bound to one.
    pub verification: Option<VerificationContract>,
    /// The CI autopilot's limits.
    pub autopilot: AutopilotPolicy,
    /// Whether the CI autopilot acts at all (a profile's
    /// `autopilot.enabled`; on for a plan built in code).
    pub autopilot_enabled: bool,
    /// Whether every required receipt must be present before the delivery
    /// gate offers `approve` or `apply` (a profile's
    /// `delivery.require_receipts`; on by default).
    pub require_receipts: bool,
    /// The commit message `approve` uses when the decision gives none,
    /// with `{profile}`, `{run_id}` and `{verdict}` filled in (see
    /// [`fill_commit_message`](orcho_profile::fill_commit_message)); `None`:
    /// `<plan> (orcho run <id>)`.
    pub commit_message: Option<String>,
    /// The permission rules of the run's sessions (a profile's
    /// `permissions`), passed to every phase in its
    /// [`PhaseRequest`](crate::PhaseRequest); `None`: no rules.
    pub permissions: Option<orcho_permissions::RuleSet>,
    /// How long an agent that a phase runs waits for a person's answer to
    /// a tool call the rules answer `ask` (a profile's
    /// `permissions.ask_timeout`); `None`:
    /// [`DEFAULT_ASK_TIMEOUT`](orcho_handoff::ask::DEFAULT_ASK_TIMEOUT).
    pub ask_timeout: Option<std::time::Duration>,
    /// A profile's `advisor:` block, for the host to build its
    /// [`Advisor`](orcho_handoff::Advisor) from (the engine uses the one
    /// [`EngineBuilder::advisor`](crate::EngineBuilder::advisor) gets).
    pub advisor_config: Option<serde_json::Value>,
    /// How many times an agent's stop hook blocks a stop while required
    /// receipts are not present (a profile's
    /// `supervision.max_stop_blocks`).
    pub max_stop_blocks: u32,
    /// Whether a plan reported by a `plan` phase waits for approval before
    /// the run goes on.
    pub plan_approval: bool,
    /// The limits of deviation handling (retry cap, budgets).
    pub deviation: DeviationPolicy,
    /// What pre-run intake decides by itself for a dirty target checkout
    /// (`None`: ask).
    pub intake: Option<IntakeAction>,
    /// What the delivery gate decides by itself when that action is
    /// available (`None`: ask).
    pub delivery: Option<DeliveryAction>,
    /// Whether only an operator may decide `approve` at the delivery gate.
    pub approve_requires_operator: bool,
    /// The profile's file, relative to the checkout (`orcho.yaml`), when
    /// the plan comes from one there: the delivery gate compares it with
    /// the file at the run's base, and a change that edits what proves it
    /// is a finding only a person may let through.
    pub profile_file: Option<camino::Utf8PathBuf>,
}

impl RunPlan {
    /// A plan with phases and nothing else: no plan approval, the default
    /// deviation limits, intake and delivery ask.
    pub fn new(name: impl Into<String>, phases: Vec<PhasePlan>) -> Self {
        Self {
            name: name.into(),
            phases,
            verification: None,
            autopilot: AutopilotPolicy::default(),
            autopilot_enabled: true,
            require_receipts: true,
            commit_message: None,
            permissions: None,
            ask_timeout: None,
            advisor_config: None,
            max_stop_blocks: orcho_profile::DEFAULT_MAX_STOP_BLOCKS,
            plan_approval: false,
            deviation: DeviationPolicy::default(),
            intake: None,
            delivery: None,
            approve_requires_operator: false,
            profile_file: None,
        }
    }

    /// Where a replan from phase `index` goes: the last `plan` phase at or
    /// before it, else the first phase.
    pub fn replan_target(&self, index: usize) -> usize {
        self.phases[..=index.min(self.phases.len().saturating_sub(1))]
            .iter()
            .rposition(|p| p.role == PhaseRole::Plan)
            .unwrap_or(0)
    }
}

impl RunPlan {
    orcho_core::setters! {
        /// Makes plans wait for approval.
        pub fn with_plan_approval(on: bool) => plan_approval;
        /// Sets the limits of deviation handling.
        pub fn with_deviation(deviation: DeviationPolicy);
        /// Sets what intake decides by itself (`None`: ask).
        pub fn with_intake(intake: Option<IntakeAction>);
        /// Sets what the delivery gate decides by itself (`None`: ask).
        pub fn with_delivery(delivery: Option<DeliveryAction>);
        /// Lets only an operator decide `approve` at the delivery gate.
        pub fn with_approve_requires_operator(on: bool) => approve_requires_operator;
        /// Binds the run to a verification contract.
        pub fn with_verification(contract: Some(VerificationContract)) => verification;
        /// Sets the autopilot's limits.
        pub fn with_autopilot(autopilot: AutopilotPolicy);
        /// Turns the CI autopilot on or off.
        pub fn with_autopilot_enabled(on: bool) => autopilot_enabled;
        /// Whether `approve` and `apply` need every required receipt present.
        pub fn with_require_receipts(on: bool) => require_receipts;
        /// The commit message template of `approve`.
        pub fn with_commit_message(template: Some(impl Into<String>)) => commit_message;
        /// The permission rules of the run's sessions.
        pub fn with_permissions(rules: Some(orcho_permissions::RuleSet)) => permissions;
        /// The profile's file, relative to the checkout (see
        /// [`RunPlan::profile_file`]).
        pub fn with_profile_file(file: Some(impl Into<camino::Utf8PathBuf>)) => profile_file;
    }
}

impl RunPlan {
    /// The plan a resolved profile declares: its phases (roles, limits,
    /// gates built through the registry, pause and exhausted rules, handoff
    /// policies), its verification contract (none when it declares no
    /// commands) and its autopilot limits.
    ///
    /// ```
    /// use orcho::{RunPlan, gates::GateRegistry, profile::Profile};
    ///
    /// let profile = Profile::builtin("default")?.resolve(&GateRegistry::with_builtins())?;
    /// let plan = RunPlan::from_profile(&profile);
    /// assert_eq!(plan.name, "default");
    /// assert!(plan.phases.iter().any(|p| p.role == orcho::PhaseRole::FinalAcceptance));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_profile(profile: &orcho_profile::ResolvedProfile) -> Self {
        use orcho_profile::{Exhausted, PauseWhen, Role};
        let phases = profile
            .phases
            .iter()
            .map(|p| {
                let role = match p.role {
                    Role::Plan => PhaseRole::Plan,
                    Role::Implement => PhaseRole::Implement,
                    Role::Review => PhaseRole::Review,
                    Role::FinalAcceptance => PhaseRole::FinalAcceptance,
                    other => PhaseRole::Other(other.as_str().to_owned()),
                };
                let pause = match p.handoff.pause {
                    PauseWhen::Never => PausePolicy::Never,
                    PauseWhen::Always => PausePolicy::Always,
                    _ => PausePolicy::OnRejected,
                };
                let on_exhausted = match p.handoff.on_exhausted {
                    Exhausted::Halt => ExhaustedPolicy::Halt,
                    _ => ExhaustedPolicy::Pause,
                };
                PhasePlan {
                    name: p.name.clone(),
                    role,
                    max_attempts: p.max_attempts.max(1),
                    max_rounds: p.max_rounds.max(1),
                    gates: p.scheduled_gates(),
                    feeds: p
                        .gates
                        .iter()
                        .filter_map(|g| Some((g.name.clone(), g.feeds.clone()?)))
                        .collect(),
                    pause,
                    on_exhausted,
                    handoff: p.handoff.policy,
                    allowed_actions: Some(p.handoff.actions),
                    read_only: p.read_only,
                    runner: p.runner.clone(),
                }
            })
            .collect();
        let verification =
            (!profile.verification.commands.is_empty()).then(|| profile.verification.clone());
        Self {
            name: profile.name.clone(),
            phases,
            verification,
            autopilot: profile.autopilot.policy.clone(),
            autopilot_enabled: profile.autopilot.enabled,
            require_receipts: profile.delivery.require_receipts,
            commit_message: Some(profile.delivery.commit_message.clone()),
            permissions: profile.permissions.clone(),
            ask_timeout: profile.ask_timeout.map(orcho_receipts::HumanDuration::get),
            advisor_config: profile.advisor.clone(),
            max_stop_blocks: profile.supervision.max_stop_blocks,
            plan_approval: profile.supervision.plan_approval,
            deviation: profile.supervision.deviation,
            intake: profile.intake.dirty_checkout.action(),
            delivery: profile.delivery.default_action.action(),
            approve_requires_operator: profile.delivery.approve_requires_operator,
            profile_file: None,
        }
    }
}
