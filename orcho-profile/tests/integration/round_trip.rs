//! Round trips: a profile serialized and read back resolves to the same
//! configuration.

use std::fmt::Write as _;

use orcho_gates::GateRegistry;
use orcho_profile::{Profile, builtin};
use proptest::prelude::*;

use crate::Result;

fn resolved_json(profile: &Profile) -> Result<serde_json::Value> {
    Ok(serde_json::to_value(
        profile.resolve(&GateRegistry::with_builtins())?,
    )?)
}

fn round_trip(profile: &Profile) -> Result<Profile> {
    let yaml = serde_yaml::to_string(profile)?;
    Ok(Profile::from_yaml_str(&yaml)?)
}

#[test]
fn builtins_round_trip() -> Result {
    for name in builtin::NAMES {
        let profile = Profile::builtin(name)?;
        let again = round_trip(&profile)?;
        assert_eq!(
            serde_json::to_value(&profile)?,
            serde_json::to_value(&again)?
        );
        assert_eq!(resolved_json(&profile)?, resolved_json(&again)?);
    }
    Ok(())
}

const STRATEGIES: [&str; 4] = ["halt", "FEED_INTO_NEXT", "trigger_replan", "informational"];
const ACTIONS: [&str; 3] = ["continue", "retry_feedback", "continue_with_waiver"];

#[derive(Debug, Clone)]
struct GateCase {
    strategy: usize,
    lock: bool,
    timeout_s: Option<u32>,
    command: bool,
}

#[derive(Debug, Clone)]
struct PhaseCase {
    role: usize,
    attempts: Option<u32>,
    rounds: Option<u32>,
    gates: Vec<GateCase>,
    pause: Option<usize>,
    exhausted: Option<bool>,
    actions: Option<Vec<bool>>,
}

fn gate() -> impl Strategy<Value = GateCase> {
    (
        0..4usize,
        any::<bool>(),
        prop::option::of(1..4_000u32),
        any::<bool>(),
    )
        .prop_map(|(strategy, lock, timeout_s, command)| GateCase {
            strategy,
            lock,
            timeout_s,
            command,
        })
}

fn phase() -> impl Strategy<Value = PhaseCase> {
    (
        0..5usize,
        prop::option::of(1..5u32),
        prop::option::of(1..4u32),
        prop::collection::vec(gate(), 0..3),
        prop::option::of(0..3usize),
        prop::option::of(any::<bool>()),
        prop::option::of(prop::collection::vec(any::<bool>(), 3)),
    )
        .prop_map(
            |(role, attempts, rounds, gates, pause, exhausted, actions)| PhaseCase {
                role,
                attempts,
                rounds,
                gates,
                pause,
                exhausted,
                actions,
            },
        )
}

/// Writes a valid profile from the cases: the generator repairs what the
/// checks would refuse (a second acceptance phase, `continue` on it,
/// `trigger_replan` without a plan, actions on a phase that never pauses).
fn render(phases: &[PhaseCase], autopilot: bool, delivery: usize, preset: bool) -> String {
    let roles = ["plan", "implement", "review", "final_acceptance", "custom"];
    let has_plan = phases.iter().any(|p| p.role == 0);
    let mut seen_acceptance = false;
    let mut out = String::from(
        "schema: 1\nname: generated\ndescription: \"a: generated profile\"\nphases:\n",
    );
    for (i, p) in phases.iter().enumerate() {
        let mut role = roles[p.role];
        if role == "final_acceptance" {
            if seen_acceptance {
                role = "review";
            }
            seen_acceptance = true;
        }
        let _ = writeln!(out, "  - name: phase{i}\n    role: {role}");
        if let Some(a) = p.attempts {
            let _ = writeln!(out, "    max_attempts: {a}");
        }
        if let Some(r) = p.rounds {
            let _ = writeln!(out, "    max_rounds: {r}");
        }
        if !p.gates.is_empty() {
            out.push_str("    gates:\n");
        }
        for (j, g) in p.gates.iter().enumerate() {
            let mut strategy = STRATEGIES[g.strategy];
            if strategy == "trigger_replan" && !has_plan {
                strategy = "informational";
            }
            let _ = writeln!(
                out,
                "      - name: gate{j}\n        uses: tests\n        on_fail: {strategy}"
            );
            if g.lock {
                out.push_str("        lock_group: checkout\n");
            }
            if let Some(t) = g.timeout_s {
                let _ = writeln!(out, "        timeout: {t}s");
            }
            if g.command {
                out.push_str("        with: { command: unit }\n");
            }
            if strategy == "FEED_INTO_NEXT" && j == 0 {
                out.push_str("        feeds: phase0\n");
            }
        }
        if p.pause.is_some() || p.exhausted.is_some() || p.actions.is_some() {
            out.push_str("    handoff:\n");
            let pause = p.pause.map(|k| ["never", "on_rejected", "always"][k]);
            if let Some(pause) = pause {
                let _ = writeln!(out, "      pause: {pause}");
            }
            let exhausted = p.exhausted.map(|h| if h { "halt" } else { "pause" });
            if let Some(e) = exhausted {
                let _ = writeln!(out, "      on_exhausted: {e}");
            }
            let never = pause == Some("never") && exhausted == Some("halt");
            if let (Some(mask), false) = (&p.actions, never) {
                let mut list: Vec<&str> = ACTIONS
                    .iter()
                    .zip(mask)
                    .filter(|(a, on)| **on && !(role == "final_acceptance" && **a == "continue"))
                    .map(|(a, _)| *a)
                    .collect();
                list.push("halt");
                let _ = writeln!(out, "      actions: [{}]", list.join(", "));
            }
        }
    }
    for (i, _) in phases.iter().enumerate() {
        let _ = writeln!(out, "# phase{i} done");
    }
    out.push_str(
        "verification:\n  commands:\n    - { name: unit, argv: [cargo, test], timeout: 90s }\n",
    );
    for (i, p) in phases.iter().enumerate() {
        for (j, g) in p.gates.iter().enumerate() {
            if !g.command {
                let _ = writeln!(out, "    - {{ name: gate{j}, argv: [check, \"{i}\"] }}");
            }
        }
    }
    out.push_str("  required: [unit]\n");
    if autopilot {
        out.push_str("autopilot:\n  enabled: true\n  min_confidence: 0.85\n  max_cost_usd: 1.25\n  allowed_files: [\"src/**\"]\n  destructive_patterns: [\"kubectl delete\"]\n");
    }
    let default_action = ["ask", "approve", "apply", "skip", "halt"][delivery];
    let _ = writeln!(
        out,
        "delivery: {{ default_action: {default_action}, commit_message: \"{{{{x}}}} {{profile}}\" }}"
    );
    if preset {
        out.push_str("permissions:\n  preset: read_only\n  rules: [{ permission: bash, pattern: \"make test\", action: allow }]\n");
    }
    out
}

/// Gate names repeat across phases, so the declared commands may repeat:
/// keep the first of each name.
fn dedupe_commands(text: &str) -> String {
    let mut seen = std::collections::HashSet::new();
    text.lines()
        .filter(|line| match line.trim_start().strip_prefix("- { name: ") {
            Some(rest) if line.starts_with("    - {") => {
                seen.insert(rest.split(',').next().unwrap_or_default().to_owned())
            }
            _ => true,
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn resolve_of_serialize_round_trips(
        phases in prop::collection::vec(phase(), 1..5),
        autopilot: bool,
        delivery in 0..5usize,
        preset: bool,
    ) {
        let text = dedupe_commands(&render(&phases, autopilot, delivery, preset));
        let profile = Profile::from_yaml_str(&text).map_err(|e| TestCaseError::fail(format!("{}\n{text}", orcho_core::error_chain(&e))))?;
        let resolved = profile.resolve(&GateRegistry::with_builtins()).map_err(|e| TestCaseError::fail(format!("{}\n{text}", orcho_core::error_chain(&e))))?;
        let again = round_trip(&profile).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let resolved_again = again.resolve(&GateRegistry::with_builtins()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(serde_json::to_value(&resolved).ok(), serde_json::to_value(&resolved_again).ok());
        prop_assert_eq!(serde_json::to_value(&profile).ok(), serde_json::to_value(&again).ok());
        prop_assert_eq!(resolved.phases.len(), phases.len());
    }
}
