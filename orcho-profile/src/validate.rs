//! Cross-checks on the typed profile, each reported at its document path.
//!
//! Per document, before `extends` is merged: no two phases share a name, and
//! no two gates of one phase. On the merged profile: a name, at least one
//! phase, a role for every phase, limits in range, at most one
//! `final_acceptance` phase, `feeds` targets that exist (and only on
//! `feed_into_next`), `trigger_replan` only with a `plan` phase to replan,
//! handoff actions valid for the phase, a consistent verification contract
//! (`required` names declared commands), delivery defaults that are
//! defaults, and permissions that permit something. Resolving adds the
//! registry checks (gate names, `with:` blocks, `tests` commands) and the
//! autopilot limits, whose policy only resolving builds.

use std::collections::{HashMap, hash_map::Entry};

use orcho_core::{PhaseName, glob::FileGlob};
use orcho_gates::FailStrategy;
use orcho_handoff::{
    HandoffAction,
    autopilot::{AutopilotPolicy, DestructivePatterns},
};
use orcho_receipts::{ContractLocation, ContractProblem, VerificationContract};

use crate::{
    DeliveryDefault, Exhausted, GateDecl, PauseWhen, PhaseSpec, Profile, ProfileError,
    ProfileErrorKind, Role, locate::DocPath, provenance::Located,
};

/// The most attempts a phase may have in one round.
pub const MAX_ATTEMPTS: u32 = 100;
/// The most rounds a phase may have.
pub const MAX_ROUNDS: u32 = 20;
/// The most CI retries the autopilot may be allowed per run.
pub const MAX_AUTOPILOT_RETRIES: u32 = 100;
/// The placeholders of `delivery.commit_message`.
pub(crate) const PLACEHOLDERS: [&str; 4] = ["profile", "run_id", "verdict", "task"];

pub(crate) fn at_phase(profile: &Profile, phase: &PhaseSpec, key: Option<&str>) -> Located {
    let path = key.map_or_else(|| phase.origin.path(), |k| phase.origin.path().key(k));
    profile.provenance.locate(phase.origin.source, path)
}

pub(crate) fn at_gate(profile: &Profile, gate: &GateDecl, key: Option<&str>) -> Located {
    let path = key.map_or_else(|| gate.origin.path(), |k| gate.origin.path().key(k));
    profile.provenance.locate(gate.origin.source, path)
}

pub(crate) fn at_section(profile: &Profile, section: &'static str, path: DocPath) -> Located {
    profile.provenance.locate_section(section, path)
}

fn section(key: &'static str) -> DocPath {
    DocPath::root().key(key)
}

/// Checks one document before `extends` is merged: names are unique.
pub(crate) fn check_document(profile: &Profile) -> Result<(), ProfileError> {
    let duplicate_phase = first_duplicate(&profile.phases, |p| p.name.as_str());
    for (i, phase) in profile.phases.iter().enumerate() {
        if let Some((first, _)) = duplicate_phase.filter(|&(_, dup)| dup == i) {
            return Err(duplicate(
                "phase",
                phase.name.as_str(),
                at_phase(profile, phase, Some("name")),
                &at_phase(profile, &profile.phases[first], Some("name")),
            ));
        }
        if let Some((first, dup)) = first_duplicate(&phase.gates, |g| g.name.as_str()) {
            return Err(duplicate(
                "gate",
                phase.gates[dup].name.as_str(),
                at_gate(profile, &phase.gates[dup], Some("name")),
                &at_gate(profile, &phase.gates[first], Some("name")),
            ));
        }
    }
    Ok(())
}

/// A `what` named `name` given again at `again`, first given at `first`.
#[cold]
fn duplicate(what: &'static str, name: &str, again: Located, first: &Located) -> ProfileError {
    ProfileError::new(
        again,
        ProfileErrorKind::Duplicate {
            what,
            name: name.to_owned(),
            first_line: first.position.map(|p| p.line),
        },
    )
}

/// The first item whose name an earlier item has: `(earlier, item)`, the
/// earlier one being the first with that name. A few items are compared
/// pairwise (no allocation, no hashing); many go through a map, so that a
/// hostile document with thousands of names stays linear.
fn first_duplicate<'a, T>(
    items: &'a [T],
    name: impl Fn(&'a T) -> &'a str,
) -> Option<(usize, usize)> {
    const PAIRWISE_UP_TO: usize = 16;
    if items.len() <= PAIRWISE_UP_TO {
        return (1..items.len()).find_map(|j| {
            let name_j = name(&items[j]);
            items[..j]
                .iter()
                .position(|earlier| name(earlier) == name_j)
                .map(|first| (first, j))
        });
    }
    let mut seen: HashMap<&str, usize> = HashMap::with_capacity(items.len());
    items
        .iter()
        .enumerate()
        .find_map(|(j, item)| match seen.entry(name(item)) {
            Entry::Occupied(first) => Some((*first.get(), j)),
            Entry::Vacant(slot) => {
                slot.insert(j);
                None
            }
        })
}

fn range(
    located: impl FnOnce() -> Located,
    key: &'static str,
    value: Option<u32>,
    min: u32,
    max: u32,
) -> Result<(), ProfileError> {
    match value {
        Some(v) if v < min || v > max => Err(ProfileError::new(
            located(),
            ProfileErrorKind::OutOfRange {
                key,
                value: u64::from(v),
                min: u64::from(min),
                max: u64::from(max),
            },
        )),
        _ => Ok(()),
    }
}

/// Checks the merged profile. The autopilot policy is built (and so
/// checked) by [`autopilot`], which resolving calls: building it is the
/// most expensive step of loading, and only resolving needs the result.
pub(crate) fn check(profile: &Profile) -> Result<(), ProfileError> {
    let name = profile.name.as_str();
    if name.is_empty() || name.chars().count() > 64 || name.chars().any(char::is_control) {
        return Err(ProfileError::new(
            at_section(profile, "name", section("name")),
            ProfileErrorKind::InvalidName,
        ));
    }
    if profile.phases.is_empty() {
        return Err(ProfileError::new(
            at_section(profile, "name", DocPath::root()),
            ProfileErrorKind::NoPhases,
        ));
    }
    let has_plan = profile.phases.iter().any(|p| p.role == Some(Role::Plan));
    let mut final_acceptance: Option<&PhaseSpec> = None;
    for phase in &profile.phases {
        let Some(role) = phase.role else {
            return Err(ProfileError::new(
                at_phase(profile, phase, None),
                ProfileErrorKind::MissingRole {
                    phase: phase.name.to_string(),
                },
            ));
        };
        if role == Role::FinalAcceptance {
            if let Some(first) = final_acceptance {
                return Err(ProfileError::new(
                    at_phase(profile, phase, Some("role")),
                    ProfileErrorKind::SecondFinalAcceptance {
                        first: first.name.to_string(),
                    },
                ));
            }
            final_acceptance = Some(phase);
        }
        range(
            || at_phase(profile, phase, Some("max_attempts")),
            "max_attempts",
            phase.max_attempts,
            1,
            MAX_ATTEMPTS,
        )?;
        range(
            || at_phase(profile, phase, Some("max_rounds")),
            "max_rounds",
            phase.max_rounds,
            1,
            MAX_ROUNDS,
        )?;
        for gate in &phase.gates {
            check_gate(profile, gate, has_plan)?;
            check_feeds_back(profile, phase, gate)?;
        }
        check_handoff(profile, phase, role)?;
        if let Some(runner) = &phase.runner {
            check_runner(profile, phase, runner)?;
        }
    }
    check_verification(profile)?;
    check_trust(profile)?;
    check_delivery(profile)?;
    if let Some(permissions) = &profile.permissions
        && permissions.preset.is_none()
        && permissions.rules.is_empty()
        && permissions.ask_timeout.is_none()
    {
        return Err(ProfileError::new(
            at_section(profile, "permissions", section("permissions")),
            ProfileErrorKind::EmptyPermissions,
        ));
    }
    Ok(())
}

fn check_gate(profile: &Profile, gate: &GateDecl, has_plan: bool) -> Result<(), ProfileError> {
    if gate.timeout.is_some_and(|t| t.get().is_zero()) {
        return Err(ProfileError::new(
            at_gate(profile, gate, Some("timeout")),
            ProfileErrorKind::Invalid {
                message: "the timeout is zero, so the gate could never pass".to_owned(),
                nearest: None,
            },
        ));
    }
    if gate
        .lock_group
        .as_deref()
        .is_some_and(|g| g.trim().is_empty())
    {
        return Err(ProfileError::new(
            at_gate(profile, gate, Some("lock_group")),
            ProfileErrorKind::Invalid {
                message: "the lock group is blank; leave `lock_group` out for no group".to_owned(),
                nearest: None,
            },
        ));
    }
    if gate.on_fail == FailStrategy::TriggerReplan && !has_plan {
        return Err(ProfileError::new(
            at_gate(profile, gate, Some("on_fail")),
            ProfileErrorKind::ReplanWithoutPlan,
        ));
    }
    if let Some(target) = &gate.feeds {
        if gate.on_fail != FailStrategy::FeedIntoNext {
            return Err(ProfileError::new(
                at_gate(profile, gate, Some("feeds")),
                ProfileErrorKind::FeedsWithoutFeedStrategy {
                    strategy: gate.on_fail.to_string(),
                },
            ));
        }
        if !profile.phases.iter().any(|p| p.name == *target) {
            let known: Vec<String> = profile.phases.iter().map(|p| p.name.to_string()).collect();
            return Err(ProfileError::new(
                at_gate(profile, gate, Some("feeds")),
                ProfileErrorKind::UnknownFeedTarget {
                    target: target.to_string(),
                    nearest: orcho_core::nearest(target.as_str(), known.iter().map(String::as_str))
                        .map(str::to_owned),
                    known,
                },
            ));
        }
    }
    Ok(())
}

/// A gate feeds its own phase or an earlier one: a later phase has not run
/// yet, and there is no attempt of it to go back to.
fn check_feeds_back(
    profile: &Profile,
    phase: &PhaseSpec,
    gate: &GateDecl,
) -> Result<(), ProfileError> {
    let Some(target) = &gate.feeds else {
        return Ok(());
    };
    let position = |name: &PhaseName| profile.phases.iter().position(|p| p.name == *name);
    if let (Some(to), Some(from)) = (position(target), position(&phase.name))
        && to > from
    {
        return Err(ProfileError::new(
            at_gate(profile, gate, Some("feeds")),
            ProfileErrorKind::FeedsLaterPhase {
                target: target.to_string(),
                phase: phase.name.to_string(),
            },
        ));
    }
    Ok(())
}

fn check_handoff(profile: &Profile, phase: &PhaseSpec, role: Role) -> Result<(), ProfileError> {
    let Some(handoff) = &phase.handoff else {
        return Ok(());
    };
    let Some(actions) = &handoff.actions else {
        return Ok(());
    };
    // `handoff.actions`, or one of its items; built only to report.
    let at = |index: Option<usize>| {
        let path = phase.origin.path().key("handoff").key("actions");
        let path = match index {
            Some(i) => path.index(i),
            None => path,
        };
        profile.provenance.locate(phase.origin.source, path)
    };
    if handoff.pause == Some(PauseWhen::Never) && handoff.on_exhausted == Some(Exhausted::Halt) {
        return Err(ProfileError::new(
            at(None),
            ProfileErrorKind::ActionsWithoutPause,
        ));
    }
    for (i, action) in actions.iter().enumerate() {
        let reason = match (action, role) {
            (HandoffAction::Continue, Role::FinalAcceptance) => Some(
                "on a `final_acceptance` phase a bare `continue` would override missing or failed receipts; use `continue_with_waiver`, which records the accepted risk",
            ),
            _ if actions[..i].contains(action) => Some("it is listed twice"),
            _ => None,
        };
        if let Some(reason) = reason {
            return Err(ProfileError::new(
                at(Some(i)),
                ProfileErrorKind::InvalidHandoffAction {
                    action: action.to_string(),
                    reason,
                },
            ));
        }
    }
    if !actions.contains(&HandoffAction::Halt) {
        return Err(ProfileError::new(
            at(None),
            ProfileErrorKind::HaltNotOffered,
        ));
    }
    Ok(())
}

/// Trusted keys have names, each once, and each key is listed once.
fn check_trust(profile: &Profile) -> Result<(), ProfileError> {
    let Some(trust) = &profile.trust else {
        return Ok(());
    };
    let at = |i: usize, key: &str| {
        at_section(
            profile,
            "trust",
            section("trust").key("keys").index(i).key(key),
        )
    };
    for (i, key) in trust.keys.iter().enumerate() {
        if key.name.trim().is_empty() {
            return Err(ProfileError::new(
                at(i, "name"),
                ProfileErrorKind::UnnamedKey,
            ));
        }
        if let Some(first) = trust.keys[..i].iter().position(|k| k.name == key.name) {
            return Err(duplicate(
                "trusted key",
                &key.name,
                at(i, "name"),
                &at(first, "name"),
            ));
        }
        if let Some(first) = trust.keys[..i]
            .iter()
            .position(|k| k.ed25519 == key.ed25519)
        {
            return Err(duplicate(
                "public key",
                &key.ed25519.to_string(),
                at(i, "ed25519"),
                &at(first, "ed25519"),
            ));
        }
    }
    Ok(())
}

fn check_verification(profile: &Profile) -> Result<(), ProfileError> {
    let Some(contract) = &profile.verification else {
        return Ok(());
    };
    if let Err(error) = contract.validate() {
        let base = section("verification");
        let at = |path: DocPath| at_section(profile, "verification", path);
        if let (ContractLocation::Required, ContractProblem::UnknownCommand(name)) =
            (error.location(), error.problem())
        {
            let index = contract
                .required
                .iter()
                .position(|r| r.as_str() == name)
                .unwrap_or(0);
            return Err(ProfileError::new(
                at(base.key("required").index(index)),
                unknown_command(contract, name),
            ));
        }
        let path = match error.location() {
            ContractLocation::Command(name) => contract
                .commands
                .iter()
                .rposition(|c| c.name.as_str() == name)
                .map_or_else(|| base.key("commands"), |i| base.key("commands").index(i)),
            ContractLocation::Environment(name) => contract
                .environments
                .iter()
                .rposition(|e| e.name.as_str() == name)
                .map_or_else(
                    || base.key("environments"),
                    |i| base.key("environments").index(i),
                ),
            ContractLocation::Assertion {
                environment, index, ..
            } => match contract
                .environments
                .iter()
                .position(|e| e.name.as_str() == environment)
            {
                Some(i) => base
                    .key("environments")
                    .index(i)
                    .key("assertions")
                    .index(index.saturating_sub(1)),
                None => base.key("environments"),
            },
            ContractLocation::Required => base.key("required"),
            _ => base,
        };
        return Err(ProfileError::new(
            at(path),
            ProfileErrorKind::Contract(error),
        ));
    }
    Ok(())
}

pub(crate) fn unknown_command(contract: &VerificationContract, name: &str) -> ProfileErrorKind {
    let known: Vec<String> = contract
        .commands
        .iter()
        .map(|c| c.name.to_string())
        .collect();
    ProfileErrorKind::UnknownCommand {
        command: name.to_owned(),
        nearest: orcho_core::nearest(name, known.iter().map(String::as_str)).map(str::to_owned),
        known,
    }
}

/// Builds the autopilot policy, reporting invalid limits at their keys.
pub(crate) fn autopilot(profile: &Profile) -> Result<AutopilotPolicy, ProfileError> {
    let Some(spec) = &profile.autopilot else {
        return Ok(AutopilotPolicy::default());
    };
    let base = || section("autopilot");
    let at = |path: DocPath| at_section(profile, "autopilot", path);
    range(
        || at(base().key("max_retries")),
        "max_retries",
        spec.max_retries,
        0,
        MAX_AUTOPILOT_RETRIES,
    )?;
    let mut builder = AutopilotPolicy::builder();
    if let Some(threshold) = spec.min_confidence {
        builder = builder.min_confidence(threshold);
    }
    if let Some(max) = spec.max_retries {
        builder = builder.max_retries(max);
    }
    if let Some(max) = spec.max_cost_usd {
        builder = builder.max_cost(max);
    }
    if let Some(globs) = &spec.allowed_files {
        if let Some(i) = globs.iter().position(|g| FileGlob::new(g).is_err()) {
            let error = AutopilotPolicy::builder()
                .allowed_files([globs[i].as_str()])
                .build()
                .err();
            if let Some(error) = error {
                return Err(ProfileError::new(
                    at(base().key("allowed_files").index(i)),
                    ProfileErrorKind::Autopilot(error),
                ));
            }
        }
        builder = builder.allowed_files(globs.iter().map(String::as_str));
    }
    let keep_defaults = spec.default_destructive_patterns.unwrap_or(true);
    if keep_defaults && spec.destructive_patterns.is_empty() {
        // The builder starts from the defaults.
        return builder.build().map_err(|error| {
            ProfileError::new(
                at(base().key("min_confidence")),
                ProfileErrorKind::Autopilot(error),
            )
        });
    }
    let defaults = if keep_defaults {
        DestructivePatterns::default()
    } else {
        DestructivePatterns::new(Vec::<String>::new()).unwrap_or_default()
    };
    let patterns = defaults
        .with(spec.destructive_patterns.iter().map(String::as_str))
        .map_err(|error| {
            let i = spec
                .destructive_patterns
                .iter()
                .position(|p| DestructivePatterns::new([p.as_str()]).is_err())
                .unwrap_or(0);
            ProfileError::new(
                at(base().key("destructive_patterns").index(i)),
                ProfileErrorKind::Autopilot(error),
            )
        })?;
    builder
        .destructive_patterns(patterns)
        .build()
        .map_err(|error| {
            ProfileError::new(
                at(base().key("min_confidence")),
                ProfileErrorKind::Autopilot(error),
            )
        })
}

fn check_delivery(profile: &Profile) -> Result<(), ProfileError> {
    let Some(delivery) = &profile.delivery else {
        return Ok(());
    };
    let at = |key: &str| at_section(profile, "delivery", section("delivery").key(key));
    if delivery.default_action == Some(DeliveryDefault::Fix) {
        return Err(ProfileError::new(
            at("default_action"),
            ProfileErrorKind::FixAsDefault,
        ));
    }
    if let Some(template) = &delivery.commit_message {
        check_template(template).map_err(|kind| ProfileError::new(at("commit_message"), kind))?;
    }
    Ok(())
}

/// Checks the `{placeholder}`s of a commit message template; `{{` and `}}`
/// are literal braces.
pub(crate) fn check_template(template: &str) -> Result<(), ProfileErrorKind> {
    let mut rest = template;
    while let Some(open) = rest.find(['{', '}']) {
        let after = &rest[open + 1..];
        if rest[open..].starts_with("{{") || rest[open..].starts_with("}}") {
            rest = &after[1..];
            continue;
        }
        if rest[open..].starts_with('}') {
            return Err(ProfileErrorKind::Invalid {
                message: "the commit message has a `}` without `{`; write `}}` for a literal brace"
                    .to_owned(),
                nearest: None,
            });
        }
        let Some(close) = after.find('}') else {
            return Err(ProfileErrorKind::Invalid {
                message: "the commit message has a `{` without `}`; write `{{` for a literal brace"
                    .to_owned(),
                nearest: None,
            });
        };
        let name = &after[..close];
        if !PLACEHOLDERS.contains(&name) {
            return Err(ProfileErrorKind::UnknownPlaceholder {
                placeholder: name.chars().take(60).collect(),
                nearest: orcho_core::nearest(name, PLACEHOLDERS).map(str::to_owned),
            });
        }
        rest = &after[close + 1..];
    }
    Ok(())
}

/// The longest a runner's `timeout_secs` may be: a week.
pub const MAX_RUNNER_TIMEOUT_SECS: u64 = 7 * 24 * 60 * 60;

fn check_runner(
    profile: &Profile,
    phase: &PhaseSpec,
    runner: &crate::RunnerSpec,
) -> Result<(), ProfileError> {
    let at = |key: &str| {
        let path = phase.origin.path().key("runner").key(key);
        profile.provenance.locate(phase.origin.source, path)
    };
    let invalid = |key: &str, message: String| {
        ProfileError::new(
            at(key),
            ProfileErrorKind::Invalid {
                message,
                nearest: None,
            },
        )
    };
    if let Some(model) = &runner.model
        && (model.trim().is_empty() || model.contains(['\0', '\n']))
    {
        return Err(invalid(
            "model",
            "`runner.model` must be a model's name, on one line".to_owned(),
        ));
    }
    if let Some(i) = runner.args.iter().position(|a| a.contains('\0')) {
        return Err(invalid(
            "args",
            format!("`runner.args` has a NUL byte in argument {}", i + 1),
        ));
    }
    match runner.timeout_secs {
        Some(v) if v == 0 || v > MAX_RUNNER_TIMEOUT_SECS => Err(ProfileError::new(
            at("timeout_secs"),
            ProfileErrorKind::OutOfRange {
                key: "runner.timeout_secs",
                value: v,
                min: 1,
                max: MAX_RUNNER_TIMEOUT_SECS,
            },
        )),
        _ => Ok(()),
    }
}

/// What the placeholders of a `delivery.commit_message` template stand
/// for ([`fill_commit_message`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct CommitValues<'a> {
    /// `{profile}`: the profile's name.
    pub profile: &'a str,
    /// `{run_id}`: the run.
    pub run_id: &'a str,
    /// `{verdict}`: the release verdict.
    pub verdict: &'a str,
    /// `{task}`: the first line of the run's task (empty without one).
    pub task: &'a str,
}

impl<'a> CommitValues<'a> {
    /// The values of a run without a task.
    pub fn new(profile: &'a str, run_id: &'a str, verdict: &'a str) -> Self {
        Self {
            profile,
            run_id,
            verdict,
            task: "",
        }
    }

    /// With the run's task: `{task}` is its first line that is not blank.
    #[must_use]
    pub fn with_task(mut self, task: &'a str) -> Self {
        self.task = task
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("");
        self
    }
}

/// Fills a `delivery.commit_message` template: `{profile}`, `{run_id}`,
/// `{verdict}` and `{task}` become their values, `{{` and `}}` literal
/// braces. Anything else is kept as written (a resolved profile's template
/// was checked). What is blank at the start and end of the filled message
/// is left out, so that `{task}` on a line of its own disappears, with the
/// blank line after it, for a run without a task.
///
/// ```
/// use orcho_profile::{CommitValues, fill_commit_message};
///
/// let values = CommitValues::new("default", "20260101-abc", "approved");
/// let template = "{task}\n\n{profile}: {verdict} run {run_id} {{ok}}";
/// assert_eq!(
///     fill_commit_message(template, &values),
///     "default: approved run 20260101-abc {ok}"
/// );
/// assert_eq!(
///     fill_commit_message(template, &values.with_task("Parse empty input\n\nas []")),
///     "Parse empty input\n\ndefault: approved run 20260101-abc {ok}"
/// );
/// ```
pub fn fill_commit_message(template: &str, values: &CommitValues<'_>) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(at) = rest.find(['{', '}']) {
        out.push_str(&rest[..at]);
        let here = &rest[at..];
        if here.starts_with("{{") || here.starts_with("}}") {
            out.push_str(&here[..1]);
            rest = &here[2..];
            continue;
        }
        let close = here.starts_with('{').then(|| here.find('}')).flatten();
        let value = close.and_then(|close| {
            let value = match &here[1..close] {
                "profile" => values.profile,
                "run_id" => values.run_id,
                "verdict" => values.verdict,
                "task" => values.task,
                _ => return None,
            };
            Some((value, close))
        });
        match value {
            Some((value, close)) => {
                out.push_str(value);
                rest = &here[close + 1..];
            }
            None => {
                out.push_str(&here[..1]);
                rest = &here[1..];
            }
        }
    }
    out.push_str(rest);
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filled_template_keeps_what_is_not_a_placeholder() {
        let values = CommitValues::new("p", "r", "v");
        assert_eq!(fill_commit_message("", &values), "");
        assert_eq!(fill_commit_message("{x} }{", &values), "{x} }{");
        assert_eq!(
            fill_commit_message("é{verdict}é {{run_id}}", &values),
            "évé {run_id}"
        );
    }

    #[test]
    fn the_task_placeholder_is_the_first_line_that_says_something() {
        let values = CommitValues::new("p", "r", "v").with_task("\n  Fix the parser  \nmore\n");
        assert_eq!(
            fill_commit_message("{task} ({run_id})", &values),
            "Fix the parser (r)"
        );
        let blank = CommitValues::new("p", "r", "v").with_task(" \n ");
        assert_eq!(
            fill_commit_message("{task}\n\nrun {run_id}", &blank),
            "run r"
        );
        assert!(check_template("{task}").is_ok());
    }

    #[test]
    fn duplicates_are_found_first_to_last() {
        for n in [3, 40] {
            let mut names: Vec<String> = (0..n).map(|i| format!("n{i}")).collect();
            assert_eq!(first_duplicate(&names, String::as_str), None);
            names.push("n1".to_owned());
            names.push("n0".to_owned());
            names.push("n1".to_owned());
            assert_eq!(first_duplicate(&names, String::as_str), Some((1, n)));
        }
        assert_eq!(first_duplicate::<String>(&[], String::as_str), None);
    }

    #[test]
    fn templates() {
        assert!(check_template("{profile}: {verdict} run {run_id}").is_ok());
        assert!(check_template("literal {{braces}}").is_ok());
        assert!(matches!(
            check_template("{verdct}"),
            Err(ProfileErrorKind::UnknownPlaceholder { nearest: Some(n), .. }) if n == "verdict"
        ));
        assert!(check_template("open {profile").is_err());
        assert!(check_template("close }").is_err());
        assert!(check_template("é{verdict}é").is_ok());
    }
}
