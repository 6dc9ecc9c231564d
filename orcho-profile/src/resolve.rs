//! Resolving a profile into the typed configuration the engine runs.

use orcho_core::{GateName, PhaseName};
use orcho_gates::{
    FailStrategy, GateRegistry, GateSpec, RegistryError, ScheduledGate, builtin::TESTS,
};
use orcho_handoff::{
    HandoffAction,
    autopilot::AutopilotPolicy,
    handoff::{AvailableActions, HandoffPolicy},
    supervision::DeviationPolicy,
};
use orcho_permissions::RuleSet;
use orcho_receipts::{HumanDuration, VerificationContract};
use serde::{Serialize, Serializer, ser::SerializeStruct};

use crate::{
    DeliveryDefault, Exhausted, IntakeDefault, PauseWhen, Profile, ProfileError, ProfileErrorKind,
    ProfileWarning, ProfileWarnings, Role, WarningKind,
    locate::DocPath,
    validate::{self, at_gate, at_phase, at_section},
};

/// The default `delivery.commit_message`: the task's first line as the
/// subject, when the run has a task, then the profile, verdict and run.
pub const DEFAULT_COMMIT_MESSAGE: &str = "{task}\n\n{profile}: {verdict} run {run_id}";

/// A profile resolved against a gate registry: everything the engine needs,
/// typed, validated, with every gate built.
///
/// Serializing it gives a stable, inspectable shape (gates appear as their
/// declaration; the built gate objects are not data). Two profiles that
/// resolve to equal serializations run the same way.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ResolvedProfile {
    /// The profile's name.
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
    /// The phases, in the order they run.
    pub phases: Vec<ResolvedPhase>,
    /// The validated verification contract (empty when the profile has
    /// none).
    pub verification: VerificationContract,
    /// The `advisor:` block, for the host to build its advisor from.
    pub advisor: Option<serde_json::Value>,
    /// The CI autopilot.
    pub autopilot: ResolvedAutopilot,
    /// Delivery gate defaults.
    pub delivery: DeliveryDefaults,
    /// Pre-run intake defaults.
    pub intake: IntakeDefaults,
    /// Human-in-the-loop supervision.
    pub supervision: Supervision,
    /// Permission rules for read-only sessions (preset rules first, then the
    /// profile's), or `None` when the profile leaves them to the host.
    pub permissions: Option<RuleSet>,
    /// How long an agent's permission question waits for a person
    /// (`permissions.ask_timeout`); `None`: ten minutes.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ask_timeout: Option<HumanDuration>,
    #[serde(skip)]
    warnings: Vec<ProfileWarning>,
}

impl ResolvedProfile {
    /// The phase called `name`.
    pub fn phase(&self, name: &str) -> Option<&ResolvedPhase> {
        self.phases.iter().find(|p| p.name == name)
    }

    /// The warnings found while resolving (with
    /// [`Profile::resolve`]; [`Profile::resolve_with_warnings`] sends them
    /// to its sink instead).
    pub fn warnings(&self) -> &[ProfileWarning] {
        &self.warnings
    }
}

/// One phase, resolved.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ResolvedPhase {
    /// Its name.
    pub name: PhaseName,
    /// Its role.
    pub role: Role,
    /// Attempts per round (at least 1).
    pub max_attempts: u32,
    /// Rounds (at least 1).
    pub max_rounds: u32,
    /// Its gates, in the order they run.
    pub gates: Vec<ResolvedGate>,
    /// When it pauses and what a decision may be.
    pub handoff: ResolvedHandoff,
    /// Whether it may not change the checkout: `read_only: true`, or the
    /// profile's permissions are the `read_only` preset.
    pub read_only: bool,
    /// The coding agent that runs it, if the profile names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runner: Option<crate::RunnerSpec>,
}

impl ResolvedPhase {
    /// The scheduled gates, in order, ready for
    /// `orcho_gates::Scheduler::run`.
    pub fn scheduled_gates(&self) -> Vec<ScheduledGate> {
        self.gates.iter().map(|g| g.scheduled.clone()).collect()
    }
}

/// One gate, resolved: its declaration and the gate the registry built.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ResolvedGate {
    /// Its name in the phase.
    pub name: GateName,
    /// The registered gate it uses.
    pub uses: GateName,
    /// What its failure does.
    pub on_fail: FailStrategy,
    /// Its lock group.
    pub lock_group: Option<String>,
    /// Its timeout.
    pub timeout: Option<HumanDuration>,
    /// Its `with:` block (`null` when absent).
    pub config: serde_json::Value,
    /// For `feed_into_next`: the phase whose next attempt gets the failure.
    pub feeds: Option<PhaseName>,
    /// The built gate with its strategy, lock group, timeout and
    /// configuration.
    #[serde(skip)]
    pub scheduled: ScheduledGate,
}

/// A phase's handoff policy, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ResolvedHandoff {
    /// When the phase pauses.
    pub pause: PauseWhen,
    /// What happens when its attempts and rounds are used up.
    pub on_exhausted: Exhausted,
    /// The actions a decision may take; the menu of a handoff is
    /// `AvailableActions::compute(verdict, policy)` restricted to these.
    pub actions: AvailableActions,
    /// The policy handed to `AvailableActions::compute`: retry available
    /// when `retry_feedback` is allowed, always-pause when `pause: always`.
    pub policy: HandoffPolicy,
}

impl ResolvedHandoff {
    /// The menu of a handoff opened with `verdict`: what the verdict and
    /// policy allow, restricted to the profile's actions.
    pub fn menu(&self, verdict: orcho_core::Verdict) -> AvailableActions {
        let computed = AvailableActions::compute(verdict, self.policy);
        computed
            .iter()
            .filter(|a| self.actions.contains(*a))
            .collect()
    }
}

/// The CI autopilot, resolved.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ResolvedAutopilot {
    /// Whether it acts at all.
    pub enabled: bool,
    /// Its limits.
    pub policy: AutopilotPolicy,
}

impl Serialize for ResolvedAutopilot {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("ResolvedAutopilot", 6)?;
        s.serialize_field("enabled", &self.enabled)?;
        s.serialize_field("min_confidence", &self.policy.min_confidence())?;
        s.serialize_field("max_retries", &self.policy.max_retries())?;
        s.serialize_field("max_cost_usd", &self.policy.max_cost())?;
        s.serialize_field(
            "allowed_files",
            &self
                .policy
                .allowed_files()
                .map(|globs| globs.iter().map(|g| g.as_str()).collect::<Vec<_>>()),
        )?;
        s.serialize_field(
            "destructive_patterns",
            &self
                .policy
                .destructive_patterns()
                .iter()
                .collect::<Vec<_>>(),
        )?;
        s.end()
    }
}

/// Delivery gate defaults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DeliveryDefaults {
    /// What happens when nobody decides (never `fix`).
    pub default_action: DeliveryDefault,
    /// Whether every required receipt must be present before `approve` or
    /// `apply`.
    pub require_receipts: bool,
    /// The commit message template of `approve`.
    pub commit_message: String,
    /// Whether only an operator may decide `approve`.
    pub approve_requires_operator: bool,
}

/// Pre-run intake defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct IntakeDefaults {
    /// What happens to uncommitted changes in the checkout.
    pub dirty_checkout: IntakeDefault,
}

/// How many times an agent's stop hook blocks a stop when the profile does
/// not say (`supervision.max_stop_blocks`).
pub const DEFAULT_MAX_STOP_BLOCKS: u32 = 3;

/// Human-in-the-loop supervision, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Supervision {
    /// Whether a plan waits for approval.
    pub plan_approval: bool,
    /// Limits on deviation handling (retry cap, budgets).
    pub deviation: DeviationPolicy,
    /// How many times an agent's stop hook blocks a stop while required
    /// receipts are not present.
    pub max_stop_blocks: u32,
}

impl Profile {
    /// Resolves the profile against `registry`: builds every gate through its
    /// factory (which validates its `with:` block), checks the cross
    /// references once more, and returns the typed configuration. Warnings
    /// are kept in [`ResolvedProfile::warnings`].
    ///
    /// ```
    /// use orcho_gates::{FailStrategy, GateRegistry};
    /// use orcho_profile::Profile;
    ///
    /// let resolved = Profile::builtin("default")?.resolve(&GateRegistry::with_builtins())?;
    /// let implement = resolved.phase("implement").expect("a phase");
    /// assert_eq!(implement.gates[0].on_fail, FailStrategy::FeedIntoNext);
    /// assert_eq!(implement.scheduled_gates()[0].gate.name(), "tests");
    /// assert!(resolved.verification.is_required("test"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A located [`ProfileError`]: a gate `uses` a name the registry does
    /// not know (listing the known gates, suggesting the nearest), a
    /// factory refuses a `with:` block, a `tests` gate runs a command the
    /// contract does not declare, or any check of loading fails (a profile
    /// built by hand or deserialized directly is checked here).
    pub fn resolve(&self, registry: &GateRegistry) -> Result<ResolvedProfile, ProfileError> {
        let mut warnings = Vec::new();
        let mut resolved = self.resolve_with_warnings(registry, &mut warnings)?;
        resolved.warnings = warnings;
        Ok(resolved)
    }

    /// Like [`resolve`](Self::resolve), reporting warnings to `warnings`.
    ///
    /// # Errors
    ///
    /// As [`resolve`](Self::resolve).
    pub fn resolve_with_warnings(
        &self,
        registry: &GateRegistry,
        warnings: &mut dyn ProfileWarnings,
    ) -> Result<ResolvedProfile, ProfileError> {
        validate::check(self)?;
        let autopilot = validate::autopilot(self)?;
        let verification = self.verification.clone().unwrap_or_default();
        let mut phases = Vec::with_capacity(self.phases.len());
        for phase in &self.phases {
            let mut gates = Vec::with_capacity(phase.gates.len());
            for gate in &phase.gates {
                gates.push(self.resolve_gate(registry, gate, &verification, warnings)?);
            }
            let spec = phase.handoff.as_ref();
            let pause = spec.and_then(|h| h.pause).unwrap_or_default();
            let role = phase.role.unwrap_or(Role::Custom);
            let actions: AvailableActions = match spec.and_then(|h| h.actions.as_ref()) {
                Some(actions) => actions.iter().copied().collect(),
                // `continue` past a rejecting release reviewer would leave a
                // release that cannot be approved: never offered there.
                None if role == Role::FinalAcceptance => AvailableActions::all()
                    .iter()
                    .filter(|a| *a != HandoffAction::Continue)
                    .collect(),
                None => AvailableActions::all(),
            };
            let policy = HandoffPolicy::default()
                .with_retry_available(actions.contains(HandoffAction::RetryFeedback))
                .with_always_pause(pause == PauseWhen::Always);
            if role == Role::FinalAcceptance && verification.required.is_empty() {
                warnings.warn(ProfileWarning::new(
                    at_phase(self, phase, Some("role")),
                    WarningKind::AcceptanceWithoutRequired,
                ));
            }
            let read_only_preset = self.permissions.as_ref().and_then(|p| p.preset)
                == Some(orcho_permissions::PermissionPreset::ReadOnly);
            phases.push(ResolvedPhase {
                name: phase.name.clone(),
                role,
                max_attempts: phase.max_attempts.unwrap_or(1),
                max_rounds: phase.max_rounds.unwrap_or(1),
                read_only: phase.read_only.unwrap_or(read_only_preset),
                runner: phase.runner.clone(),
                gates,
                handoff: ResolvedHandoff {
                    pause,
                    on_exhausted: spec.and_then(|h| h.on_exhausted).unwrap_or_default(),
                    actions,
                    policy,
                },
            });
        }
        let supervision = self.supervision.clone().unwrap_or_default();
        let plan_approval = supervision.plan_approval.unwrap_or(true);
        if plan_approval
            && self.supervision.is_some()
            && !phases.iter().any(|p| p.role == Role::Plan)
        {
            warnings.warn(ProfileWarning::new(
                at_section(
                    self,
                    "supervision",
                    DocPath::root().key("supervision").key("plan_approval"),
                ),
                WarningKind::PlanApprovalWithoutPlan,
            ));
        }
        let mut deviation = DeviationPolicy::default();
        if let Some(cap) = supervision.retry_cap {
            deviation = deviation.with_retry_cap(cap);
        }
        if let Some(budget) = supervision.retry_budget {
            deviation = deviation.with_retry_budget(budget);
        }
        if let Some(budget) = supervision.replan_budget {
            deviation = deviation.with_replan_budget(budget);
        }
        let delivery = self.delivery.clone().unwrap_or_default();
        Ok(ResolvedProfile {
            name: self.name.clone(),
            description: self.description.clone(),
            phases,
            verification,
            advisor: self.advisor.clone(),
            autopilot: ResolvedAutopilot {
                enabled: self.autopilot.as_ref().is_some_and(|a| a.enabled),
                policy: autopilot,
            },
            delivery: DeliveryDefaults {
                default_action: delivery.default_action.unwrap_or_default(),
                require_receipts: delivery.require_receipts.unwrap_or(true),
                commit_message: delivery
                    .commit_message
                    .unwrap_or_else(|| DEFAULT_COMMIT_MESSAGE.to_owned()),
                approve_requires_operator: delivery.approve_requires_operator.unwrap_or(false),
            },
            intake: IntakeDefaults {
                dirty_checkout: self
                    .intake
                    .as_ref()
                    .and_then(|i| i.dirty_checkout)
                    .unwrap_or_default(),
            },
            supervision: Supervision {
                plan_approval,
                deviation,
                max_stop_blocks: self
                    .supervision
                    .as_ref()
                    .and_then(|s| s.max_stop_blocks)
                    .unwrap_or(DEFAULT_MAX_STOP_BLOCKS),
            },
            permissions: self.resolve_permissions(warnings),
            ask_timeout: self.permissions.as_ref().and_then(|p| p.ask_timeout),
            warnings: Vec::new(),
        })
    }

    fn resolve_gate(
        &self,
        registry: &GateRegistry,
        gate: &crate::GateDecl,
        verification: &VerificationContract,
        warnings: &mut dyn ProfileWarnings,
    ) -> Result<ResolvedGate, ProfileError> {
        // The spec owns the one copy of the names and the `with:` block;
        // they are moved out of it into the resolved gate once it is built.
        let spec = GateSpec::new(gate.name.clone(), gate.uses.clone())
            .with_config(gate.with.clone().unwrap_or(serde_json::Value::Null));
        let built = registry.build(&spec).map_err(|error| match &error {
            RegistryError::Config { source, .. } => {
                let key = if gate.with.is_some() { "with" } else { "name" };
                let nearest = unknown_key_suggestion(&orcho_core::error_chain(source));
                ProfileError::new(
                    at_gate(self, gate, Some(key)),
                    ProfileErrorKind::GateConfig { nearest, error },
                )
            }
            _ => ProfileError::new(
                at_gate(self, gate, Some("uses")),
                ProfileErrorKind::Registry(error),
            ),
        })?;
        let GateSpec {
            name, uses, config, ..
        } = spec;
        if gate.uses == TESTS {
            // The factory accepted the block, so it is a `TestsGateConfig`:
            // `command`, or the gate's name when absent.
            let declared = config.get("command").and_then(serde_json::Value::as_str);
            let command = declared.unwrap_or(gate.name.as_str());
            let verification_source = self.provenance.section("verification");
            if verification.command(command).is_none() && gate.origin.source != verification_source
            {
                // The gate is the base's; the commands are this profile's.
                let known: Vec<String> = verification
                    .commands
                    .iter()
                    .map(|c| c.name.to_string())
                    .collect();
                let nearest = orcho_core::nearest(command, known.iter().map(String::as_str))
                    .or(known.first().map(String::as_str))
                    .map(str::to_owned);
                let phase = self
                    .phases
                    .iter()
                    .find(|p| p.gates.iter().any(|g| std::ptr::eq(g, gate)))
                    .map(|p| p.name.to_string())
                    .unwrap_or_default();
                let base = self
                    .provenance
                    .sources
                    .get(gate.origin.source)
                    .map(|s| s.name.to_string())
                    .unwrap_or_default();
                return Err(ProfileError::new(
                    self.provenance.locate(
                        verification_source,
                        DocPath::root().key("verification").key("commands"),
                    ),
                    ProfileErrorKind::BaseGateCommand {
                        gate: Box::new(crate::BaseGate {
                            suggested: suggested_gate(&phase, gate, nearest.as_deref()),
                            phase,
                            gate: gate.name.to_string(),
                            base,
                            known,
                        }),
                        command: command.to_owned(),
                        nearest,
                    },
                ));
            }
            if verification.command(command).is_none() {
                let path = match declared {
                    Some(_) => gate.origin.path().key("with").key("command"),
                    None => gate.origin.path().key("name"),
                };
                return Err(ProfileError::new(
                    self.provenance.locate(gate.origin.source, path),
                    validate::unknown_command(verification, command),
                ));
            }
        }
        if gate.on_fail == FailStrategy::FeedIntoNext {
            // Every feed, to this phase or an earlier one, is an attempt of
            // the gate's own phase.
            let own = self
                .phases
                .iter()
                .find(|p| p.gates.iter().any(|g| std::ptr::eq(g, gate)));
            if let Some(target) = own
                && target.max_attempts.unwrap_or(1) == 1
            {
                warnings.warn(ProfileWarning::new(
                    at_gate(self, gate, Some("on_fail")),
                    WarningKind::FeedWithoutNextAttempt {
                        phase: target.name.to_string(),
                        feeds: gate.feeds.as_ref().map(ToString::to_string),
                    },
                ));
            }
        }
        let mut scheduled = ScheduledGate::new(built, gate.on_fail).with_config(config.clone());
        if let Some(group) = &gate.lock_group {
            scheduled = scheduled.with_lock_group(group.clone());
        }
        if let Some(timeout) = gate.timeout {
            scheduled = scheduled.with_timeout(timeout.get());
        }
        Ok(ResolvedGate {
            name,
            uses,
            on_fail: gate.on_fail,
            lock_group: gate.lock_group.clone(),
            timeout: gate.timeout,
            config,
            feeds: gate.feeds.clone(),
            scheduled,
        })
    }

    fn resolve_permissions(&self, warnings: &mut dyn ProfileWarnings) -> Option<RuleSet> {
        let spec = self.permissions.as_ref()?;
        // `ask_timeout` alone sets no rules: the host's stay in force.
        if spec.preset.is_none() && spec.rules.is_empty() {
            return None;
        }
        let mut rules = spec.preset.map(|p| p.rules()).unwrap_or_default();
        let from_preset = rules.rules().len();
        if spec.rules.is_empty() {
            // Only the profile's own rules are linted: a preset is known good.
            return Some(rules);
        }
        for rule in &spec.rules {
            rules.push(rule.clone());
        }
        for finding in rules.lint() {
            if finding.index >= from_preset {
                warnings.warn(ProfileWarning::new(
                    at_section(
                        self,
                        "permissions",
                        DocPath::root()
                            .key("permissions")
                            .key("rules")
                            .index(finding.index - from_preset),
                    ),
                    WarningKind::ShadowedRule {
                        message: finding.message(&rules),
                    },
                ));
            }
        }
        Some(rules)
    }
}

/// The nearest valid key of a serde "unknown field `x`, expected …" message.
fn unknown_key_suggestion(message: &str) -> Option<String> {
    let rest = message.split_once("unknown field `")?.1;
    let (found, tail) = rest.split_once('`')?;
    let expected: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
    orcho_core::nearest(found, expected).map(str::to_owned)
}

impl Profile {
    /// The profile with every default the engine applies written out, from
    /// `resolved` (this profile resolved): the supervision, delivery and
    /// intake sections whole, each phase's attempts, rounds and read-only
    /// flag, and the autopilot's limits when it has a section. What
    /// `orcho profile show` prints.
    pub fn with_defaults(&self, resolved: &ResolvedProfile) -> Self {
        let mut out = self.clone();
        let deviation = resolved.supervision.deviation;
        out.supervision = Some(crate::SupervisionSpec {
            plan_approval: Some(resolved.supervision.plan_approval),
            retry_cap: Some(deviation.retry_cap),
            retry_budget: deviation.retry_budget,
            replan_budget: deviation.replan_budget,
            max_stop_blocks: Some(resolved.supervision.max_stop_blocks),
        });
        out.delivery = Some(crate::DeliverySpec {
            default_action: Some(resolved.delivery.default_action),
            require_receipts: Some(resolved.delivery.require_receipts),
            commit_message: Some(resolved.delivery.commit_message.clone()),
            approve_requires_operator: Some(resolved.delivery.approve_requires_operator),
        });
        out.intake = Some(crate::IntakeSpec {
            dirty_checkout: Some(resolved.intake.dirty_checkout),
        });
        if let Some(autopilot) = &mut out.autopilot {
            let policy = &resolved.autopilot.policy;
            autopilot.min_confidence = Some(policy.min_confidence());
            autopilot.max_retries = Some(policy.max_retries());
            if autopilot.default_destructive_patterns.is_none() {
                autopilot.default_destructive_patterns = Some(true);
            }
        }
        for phase in &mut out.phases {
            if let Some(r) = resolved.phase(phase.name.as_str()) {
                phase.max_attempts = Some(r.max_attempts);
                phase.max_rounds = Some(r.max_rounds);
                phase.read_only = Some(r.read_only);
            }
        }
        out
    }
}

/// `gate` of `phase` as a profile overrides it, running `command`: one
/// line of YAML with what the gate declared besides its command (an
/// override replaces a gate whole).
#[cold]
fn suggested_gate(phase: &str, gate: &crate::GateDecl, command: Option<&str>) -> String {
    use std::fmt::Write as _;
    let mut line = format!(
        "phases: [{{name: {phase}, gates: [{{name: {}, uses: {}, on_fail: {}",
        gate.name, gate.uses, gate.on_fail
    );
    if let Some(group) = &gate.lock_group {
        let _ = write!(line, ", lock_group: {group}");
    }
    if let Some(timeout) = gate.timeout {
        let _ = write!(line, ", timeout: {timeout}");
    }
    if let Some(feeds) = &gate.feeds {
        let _ = write!(line, ", feeds: {feeds}");
    }
    let _ = write!(
        line,
        ", with: {{command: {}}}}}]}}]",
        command.unwrap_or("<command>")
    );
    line
}
