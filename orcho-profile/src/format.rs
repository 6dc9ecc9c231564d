//! The profile document: plain serde data, exactly as written in YAML.
//!
//! Every struct refuses unknown keys (a typo must never silently disable a
//! gate), keys are snake_case, and there is no `untagged` or `flatten`, so
//! every error serde reports has a precise location. Cross-references (gate
//! names, feed targets, required commands, handoff actions) are checked
//! after deserialization, on these types, by the loader and by
//! [`Profile::resolve`](crate::Profile::resolve).

use std::str::FromStr;

use orcho_core::{GateName, PhaseName, SchemaVersion, Usd};
use orcho_gates::FailStrategy;
use orcho_handoff::{DeliveryAction, HandoffAction, IntakeAction};
use orcho_permissions::{PermissionPreset, Rule};
use orcho_receipts::{HumanDuration, VerificationContract};
use serde::{Deserialize, Serialize};

use crate::provenance::{Origin, Provenance};

/// The profile schema this crate reads and writes. Version 1 is the first
/// format.
pub const PROFILE_SCHEMA: SchemaVersion = SchemaVersion::new(1);

/// A profile: how a team's runs are controlled.
///
/// Read one with [`Profile::from_yaml_str`](crate::Profile::from_yaml_str),
/// [`Profile::load`](crate::Profile::load) or
/// [`Profile::builtin`](crate::Profile::builtin); all three apply `extends`
/// and validate the result, so a `Profile` you hold is a merged, checked
/// document. [`Profile::resolve`](crate::Profile::resolve) turns it into the
/// typed configuration the engine runs.
///
/// Serializing a `Profile` writes the merged document (no `extends`), which
/// reads back to the same profile.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Profile {
    /// The format version, `1`.
    pub schema: SchemaVersion,
    /// The profile's name.
    pub name: String,
    /// What the profile is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The profile it extends: a file relative to this one, or
    /// `builtin:<name>`. Empty once loaded: the loader merges the base in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extends: Option<String>,
    /// The phases, in the order they run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseSpec>,
    /// The verification contract: environments, commands, `required`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<VerificationContract>,
    /// The model that advises at paused handoffs (and that the CI
    /// autopilot asks): handed to the host, which builds its advisor from it
    /// (the `orcho` CLI: `provider`, `base_url`, `model`, `api_key_env`,
    /// prices, timeouts; see `orcho-llm`). A key given twice, at any depth,
    /// is refused.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "orcho_core::unique_keys::optional_value"
    )]
    pub advisor: Option<serde_json::Value>,
    /// The CI autopilot's limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autopilot: Option<AutopilotSpec>,
    /// Defaults of the delivery gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery: Option<DeliverySpec>,
    /// Defaults of pre-run intake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intake: Option<IntakeSpec>,
    /// Human-in-the-loop supervision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supervision: Option<SupervisionSpec>,
    /// Permission rules for read-only sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<PermissionsSpec>,
    /// The keys whose attestations the repository trusts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<TrustSpec>,
    #[serde(skip)]
    pub(crate) provenance: Provenance,
}

/// Whose signed attestations prove a command (`orcho status --commit`):
///
/// ```yaml
/// trust:
///   keys:
///     - name: ci
///       ed25519: 11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=
/// ```
///
/// A key not listed is not trusted, whatever it signed. `orcho key show`
/// prints a key's line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct TrustSpec {
    /// The trusted keys, each with the name it is shown by.
    #[serde(default)]
    pub keys: Vec<orcho_attest::TrustedKey>,
}

/// One phase: a role, its limits, its gates and its handoff policy.
///
/// When a profile extends another, a phase with the name of a base phase
/// overrides it field by field (the fields it sets win) and merges its gates
/// by name; see [`Profile`](crate::Profile).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PhaseSpec {
    /// Its name, unique in the profile.
    pub name: PhaseName,
    /// What the phase does. Required once the profile is merged.
    pub role: Option<Role>,
    /// Attempts of the phase in one round (default 1, at most
    /// [`MAX_ATTEMPTS`](crate::MAX_ATTEMPTS)). A `feed_into_next` failure
    /// starts the next attempt.
    pub max_attempts: Option<u32>,
    /// Rounds (replans) of the phase (default 1, at most
    /// [`MAX_ROUNDS`](crate::MAX_ROUNDS)). A `trigger_replan` failure starts
    /// the next round.
    pub max_rounds: Option<u32>,
    /// The gates that run after the phase, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<GateDecl>,
    /// When the phase pauses for a decision.
    pub handoff: Option<HandoffSpec>,
    /// Whether the phase may not change the checkout (default `false`; every
    /// phase is read-only under `permissions: {preset: read_only}`). A
    /// read-only phase that changes it is rejected and its change taken
    /// back out.
    pub read_only: Option<bool>,
    /// A coding agent that runs the phase, for a host that runs agents (the
    /// `orcho` command line runs `claude-code`, `codex` and `gemini`).
    pub runner: Option<RunnerSpec>,
    #[serde(skip)]
    pub(crate) origin: Origin,
}

/// A coding agent that runs a phase: `runner: claude-code`, or its name
/// with options.
///
/// ```yaml
/// runner: codex
/// runner:
///   agent: claude-code
///   model: claude-sonnet-4-5         # passed to the agent
///   args: [--max-turns, "40"]        # added to its command line
///   timeout_secs: 1800               # it is stopped after this long
/// ```
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RunnerSpec {
    /// Which agent.
    pub agent: Agent,
    /// The model the agent uses (its own default when not given).
    pub model: Option<String>,
    /// Arguments added to the agent's command line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// How long the agent may run before it is stopped.
    pub timeout_secs: Option<u64>,
}

impl RunnerSpec {
    /// `agent` with its defaults.
    pub fn new(agent: Agent) -> Self {
        Self {
            agent,
            model: None,
            args: Vec::new(),
            timeout_secs: None,
        }
    }
}

/// The long form of `runner:`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunnerMap {
    agent: Agent,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    timeout_secs: Option<u64>,
}

impl<'de> Deserialize<'de> for RunnerSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = RunnerSpec;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "an agent's name (`claude-code`, `codex`, `gemini`) or a map with `agent`",
                )
            }

            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<RunnerSpec, E> {
                let agent = Agent::deserialize(serde::de::value::StrDeserializer::<E>::new(name))?;
                Ok(RunnerSpec::new(agent))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<RunnerSpec, A::Error> {
                let m = RunnerMap::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(RunnerSpec {
                    agent: m.agent,
                    model: m.model,
                    args: m.args,
                    timeout_secs: m.timeout_secs,
                })
            }
        }
        deserializer.deserialize_any(Visit)
    }
}

/// A coding agent a host can run a phase with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Agent {
    /// Claude Code (`claude`, from the npm package `@anthropic-ai/claude-code`).
    ClaudeCode,
    /// Codex (`codex`, from the npm package `@openai/codex`).
    Codex,
    /// Gemini CLI (`gemini`, from the npm package `@google/gemini-cli`).
    Gemini,
    /// opencode (`opencode`, from the npm package `opencode-ai`).
    Opencode,
}

orcho_core::spelled!(Agent {
    ClaudeCode => "claude-code",
    Codex => "codex",
    Gemini => "gemini",
    Opencode => "opencode",
});

/// What a phase does. The engine picks the prompt, the reviewer and the
/// receipts it reads by role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Role {
    /// Produce a plan (and, with plan approval on, wait for it).
    Plan,
    /// Change the checkout.
    Implement,
    /// Review the change.
    Review,
    /// Decide readiness from the receipts on disk: required receipts that
    /// are not present force a rejection.
    FinalAcceptance,
    /// A host-defined phase with no role-specific behaviour.
    Custom,
}

orcho_core::spelled!(Role {
    Plan => "plan",
    Implement => "implement",
    Review => "review",
    FinalAcceptance => "final_acceptance",
    Custom => "custom",
});

/// A gate of a phase, as declared.
///
/// ```yaml
/// - name: tests
///   uses: tests            # a name in the gate registry
///   on_fail: feed_into_next
///   lock_group: checkout   # gates sharing a group never overlap
///   timeout: 30m
///   with: { command: test } # passed to the gate's factory, which validates it
///   feeds: implement       # feed_into_next only: the phase that gets the failure (default: this one)
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct GateDecl {
    /// Its name, unique in the phase.
    pub name: GateName,
    /// The registered gate it uses.
    pub uses: GateName,
    /// What its failure does.
    pub on_fail: FailStrategy,
    /// Its lock group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock_group: Option<String>,
    /// Its timeout (`30s`, `10m`, `1h30m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<HumanDuration>,
    /// Its configuration, handed to the gate's factory. A key given twice,
    /// at any depth, is refused.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "orcho_core::unique_keys::optional_value"
    )]
    pub with: Option<serde_json::Value>,
    /// For `feed_into_next`: the phase whose next attempt gets the failure
    /// (default: the gate's own phase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feeds: Option<PhaseName>,
    #[serde(skip)]
    pub(crate) origin: Origin,
}

/// When a phase pauses for a decision, and what the decision may be.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct HandoffSpec {
    /// When to pause (default `on_rejected`).
    pub pause: Option<PauseWhen>,
    /// What happens when the attempts and rounds are used up (default
    /// `pause`).
    pub on_exhausted: Option<Exhausted>,
    /// The actions a decision may take (default: all four). `halt` must be
    /// one of them; `continue` is refused on a `final_acceptance` phase.
    pub actions: Option<Vec<HandoffAction>>,
}

/// When a phase pauses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PauseWhen {
    /// Never on a verdict (only, with `on_exhausted: pause`, when the
    /// attempts are used up).
    Never,
    /// When the verdict is rejected or incomplete after the last automatic
    /// attempt.
    #[default]
    OnRejected,
    /// After every attempt, even an approved one.
    Always,
}

orcho_core::spelled!(PauseWhen {
    Never => "never",
    OnRejected => "on_rejected",
    Always => "always",
});

/// What happens when a phase has used its attempts and rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Exhausted {
    /// The run halts.
    Halt,
    /// The run pauses at a handoff for a decision.
    #[default]
    Pause,
}

orcho_core::spelled!(Exhausted {
    Halt => "halt",
    Pause => "pause",
});

/// The CI autopilot: retry the honest low-risk case when no operator is
/// present, within these limits (see `orcho_handoff::autopilot::AutopilotPolicy`).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct AutopilotSpec {
    /// Whether the autopilot acts at all (default `false`).
    #[serde(default)]
    pub enabled: bool,
    /// Advice below this confidence (in `0..=1`) stops it (default 0.7).
    pub min_confidence: Option<f64>,
    /// CI retries per run (default 2).
    pub max_retries: Option<u32>,
    /// Advisor money per run, in US dollars (default: no cap).
    pub max_cost_usd: Option<Usd>,
    /// Globs the files an advice expects to change must match (default:
    /// every file).
    pub allowed_files: Option<Vec<String>>,
    /// Destructive patterns in addition to the defaults.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub destructive_patterns: Vec<String>,
    /// Whether the default destructive patterns apply (default `true`;
    /// turning them off is rarely wise).
    pub default_destructive_patterns: Option<bool>,
}

/// Defaults of the delivery gate, the decision after a run reaches a
/// release state.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct DeliverySpec {
    /// What happens when nobody decides (default `ask`).
    pub default_action: Option<DeliveryDefault>,
    /// Whether every required receipt must be present before `approve` or
    /// `apply` (default `true`).
    pub require_receipts: Option<bool>,
    /// The commit message of `approve`, with the placeholders `{profile}`,
    /// `{run_id}`, `{verdict}` and `{task}` (the first line of the run's
    /// task).
    pub commit_message: Option<String>,
    /// Whether only an operator may decide `approve` (default `false`): a
    /// client such as an agent over MCP, or the autopilot, is refused.
    pub approve_requires_operator: Option<bool>,
}

/// The default of a delivery gate: one of the delivery actions
/// (`approve`, `apply`, `fix`, `skip`, `halt`, the spellings of
/// [`DeliveryAction`](orcho_handoff::DeliveryAction)), or `ask` to wait for
/// a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DeliveryDefault {
    /// Wait for a decision.
    #[default]
    Ask,
    /// Commit the retained diff into the target checkout.
    Approve,
    /// Apply the retained diff without committing.
    Apply,
    /// Mark the run correction-ready. Valid only after a rejected release
    /// verdict, so never a default: the loader refuses it.
    Fix,
    /// Close the gate without changing the target checkout.
    Skip,
    /// Leave the retained worktree for manual inspection.
    Halt,
}

orcho_core::spelled!(DeliveryDefault {
    Ask => "ask",
    Approve => "approve",
    Apply => "apply",
    Fix => "fix",
    Skip => "skip",
    Halt => "halt",
});

impl DeliveryDefault {
    /// The delivery action this default takes, or `None` for `ask`.
    ///
    /// ```
    /// use orcho_handoff::DeliveryAction;
    /// use orcho_profile::DeliveryDefault;
    ///
    /// assert_eq!(DeliveryDefault::Skip.action(), Some(DeliveryAction::Skip));
    /// assert_eq!(DeliveryDefault::Ask.action(), None);
    /// ```
    pub fn action(self) -> Option<DeliveryAction> {
        match self {
            Self::Ask => None,
            Self::Approve => Some(DeliveryAction::Approve),
            Self::Apply => Some(DeliveryAction::Apply),
            Self::Fix => Some(DeliveryAction::Fix),
            Self::Skip => Some(DeliveryAction::Skip),
            Self::Halt => Some(DeliveryAction::Halt),
        }
    }
}

/// Defaults of pre-run intake, the decision when the checkout already has
/// uncommitted changes.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct IntakeSpec {
    /// What happens to uncommitted changes (default `ask`).
    pub dirty_checkout: Option<IntakeDefault>,
}

/// The default of pre-run intake: one of the intake actions (`include`,
/// `exclude`, `commit`, `halt`, the spellings of
/// [`IntakeAction`](orcho_handoff::IntakeAction)), or `ask`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum IntakeDefault {
    /// Wait for a decision.
    #[default]
    Ask,
    /// Carry the changes into the run's worktree as a seed patch.
    Include,
    /// Start from `HEAD`; the changes stay in the checkout, outside the run.
    Exclude,
    /// Commit the changes first; start from that commit.
    Commit,
    /// Do not start the run.
    Halt,
}

orcho_core::spelled!(IntakeDefault {
    Ask => "ask",
    Include => "include",
    Exclude => "exclude",
    Commit => "commit",
    Halt => "halt",
});

impl IntakeDefault {
    /// The intake action this default takes, or `None` for `ask`.
    ///
    /// ```
    /// use orcho_handoff::IntakeAction;
    /// use orcho_profile::IntakeDefault;
    ///
    /// assert_eq!(IntakeDefault::Include.action(), Some(IntakeAction::Include));
    /// assert_eq!(IntakeDefault::Ask.action(), None);
    /// ```
    pub fn action(self) -> Option<IntakeAction> {
        match self {
            Self::Ask => None,
            Self::Include => Some(IntakeAction::Include),
            Self::Exclude => Some(IntakeAction::Exclude),
            Self::Commit => Some(IntakeAction::Commit),
            Self::Halt => Some(IntakeAction::Halt),
        }
    }
}

/// Human-in-the-loop supervision.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct SupervisionSpec {
    /// Whether a plan waits for approval before it runs (default `true`).
    pub plan_approval: Option<bool>,
    /// Retries of one step after which `retry` is no longer offered
    /// (default 10).
    pub retry_cap: Option<u32>,
    /// Retries all steps of a plan may use together (default: no limit).
    pub retry_budget: Option<u32>,
    /// Replans a plan may use (default: no limit).
    pub replan_budget: Option<u32>,
    /// How many times an agent's stop hook (`orcho hook`) blocks the agent
    /// from stopping while required receipts are not present, before it
    /// lets the stop through and records the unproven state (default 3).
    pub max_stop_blocks: Option<u32>,
}

/// Permission rules for read-only sessions: a preset, rules, or both (the
/// rules come after the preset's, and the last matching rule wins).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct PermissionsSpec {
    /// A named rule set, such as `read_only`.
    pub preset: Option<PermissionPreset>,
    /// Rules `{permission, pattern, action}`, after the preset's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<Rule>,
    /// How long an agent that a phase runs waits for a person's answer to
    /// a tool call the rules answer `ask` (`10m`, the default); then it is
    /// denied, and the agent is told so.
    pub ask_timeout: Option<HumanDuration>,
}

/// Profiles spell values exactly as serde reads them: `FromStr` is case
/// sensitive, and a misspelling suggests the nearest spelling.
macro_rules! parsed_exactly {
    ($ty:ty, $what:literal) => {
        impl FromStr for $ty {
            type Err = crate::ParseValueError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::ALL
                    .iter()
                    .copied()
                    .find(|v| v.as_str() == s)
                    .ok_or_else(|| {
                        crate::ParseValueError::new($what, s, Self::ALL.iter().map(|v| v.as_str()))
                    })
            }
        }
    };
}

parsed_exactly!(Role, "role");
parsed_exactly!(PauseWhen, "pause policy");
parsed_exactly!(Exhausted, "exhausted behaviour");
parsed_exactly!(DeliveryDefault, "delivery default");
parsed_exactly!(IntakeDefault, "intake default");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_agree_with_serde() {
        macro_rules! agree {
            ($($ty:ty),+) => {$(
                for &value in <$ty>::ALL {
                    assert_eq!(serde_json::to_value(value).unwrap(), value.as_str());
                    assert_eq!(value.as_str().parse::<$ty>().unwrap(), value);
                }
            )+};
        }
        agree!(Role, PauseWhen, Exhausted, DeliveryDefault, IntakeDefault);
    }
}
