//! The engine's one decision after an attempt: where it goes, from its
//! gates' effect and its verdict.

use orcho_core::{Finding, Verdict};
use orcho_gates::PhaseEffect;

use super::{
    event::{PauseTrigger, Transition},
    input::PhaseInput,
    run::RunState,
};
use crate::plan::{ExhaustedPolicy, PausePolicy, RunPlan};

/// Where an attempt goes, from the gates' effect and the (merged) verdict:
/// the engine's one decision, a pure function of the plan and the state.
pub(crate) fn settle(
    plan: &RunPlan,
    state: &RunState,
    verdict: Verdict,
    findings: &[Finding],
    effect: &PhaseEffect,
) -> Transition {
    let Some(phase) = plan.phases.get(state.cursor.phase) else {
        return Transition::Halt {
            reason: format!(
                "the run is past its last phase (phase {})",
                state.cursor.phase + 1
            ),
        };
    };
    let attempts_left = state.cursor.attempt
        < phase
            .max_attempts
            .saturating_add(state.cursor.extra_attempts);
    let with_waivers = |input: PhaseInput| PhaseInput {
        waivers: state.waivers.clone(),
        ..input
    };
    let exhausted = |trigger: PauseTrigger,
                     verdict: Verdict,
                     findings: Vec<Finding>,
                     what: &str| match phase.on_exhausted {
        ExhaustedPolicy::Halt => Transition::Halt {
            reason: format!("phase `{}` {what}", phase.name),
        },
        ExhaustedPolicy::Pause => Transition::Pause {
            trigger,
            verdict,
            findings,
        },
    };
    // The earliest earlier phase a failing gate `feeds`.
    let feed_target = |failures: &[orcho_gates::GateFailure]| {
        failures
            .iter()
            .filter_map(|f| phase.feeds.get(&f.gate))
            .filter_map(|name| plan.phases.iter().position(|p| p.name == *name))
            .filter(|&to| to < state.cursor.phase)
            .min()
    };
    // The environment is not as declared: a person waives it or halts; no
    // attempt is spent on what no attempt can fix.
    let environment: Vec<&orcho_gates::GateFailure> = match effect {
        PhaseEffect::FeedIntoNext { failures } => failures.iter().collect(),
        PhaseEffect::Replan { critique } => critique.iter().collect(),
        _ => Vec::new(),
    }
    .into_iter()
    .filter(|f| f.is_environment())
    .collect();
    if let Some(first) = environment.first() {
        return Transition::Pause {
            trigger: PauseTrigger::Gate {
                gate: first.gate.clone(),
            },
            verdict: Verdict::Rejected,
            findings: environment
                .iter()
                .flat_map(|f| f.findings_shown())
                .collect(),
        };
    }
    match effect {
        PhaseEffect::Halt { failure } => Transition::Halt {
            reason: match failure.findings_shown().first() {
                Some(f) if failure.findings.is_empty() => f.title.clone(),
                Some(f) => format!("halted by gate `{}`: {}", failure.gate, f.title),
                None => format!("halted by gate `{}`", failure.gate),
            },
        },
        // `pause: always` pauses after every attempt: nothing goes on by
        // itself, whatever the gates and the verdict said (a halt still
        // halts).
        PhaseEffect::Replan { critique } if phase.pause == PausePolicy::Always => {
            let gate = critique.first().map(|f| f.gate.clone());
            Transition::Pause {
                trigger: gate.map_or(PauseTrigger::Always, |gate| PauseTrigger::Gate { gate }),
                verdict: Verdict::Rejected,
                findings: critique.iter().flat_map(|f| f.findings_shown()).collect(),
            }
        }
        // A gate's explicit `feeds` is the more specific rule: its failure
        // goes to that phase while attempts are left, whatever the pause
        // policy.
        PhaseEffect::FeedIntoNext { failures }
            if phase.pause == PausePolicy::Always
                && !(attempts_left && feed_target(failures).is_some()) =>
        {
            Transition::Pause {
                trigger: failures
                    .first()
                    .map_or(PauseTrigger::Always, |f| PauseTrigger::Gate {
                        gate: f.gate.clone(),
                    }),
                verdict: Verdict::Rejected,
                findings: failures
                    .iter()
                    .flat_map(|f| f.findings_shown())
                    .chain(not_approved(verdict, findings))
                    .collect(),
            }
        }
        PhaseEffect::Continue if phase.pause == PausePolicy::Always => Transition::Pause {
            trigger: if verdict == Verdict::Approved {
                PauseTrigger::Always
            } else {
                PauseTrigger::Verdict
            },
            verdict,
            findings: findings.to_vec(),
        },
        PhaseEffect::Replan { critique } => {
            if state.cursor.round < phase.max_rounds {
                Transition::Replan {
                    to: plan.replan_target(state.cursor.phase),
                    input: with_waivers(PhaseInput {
                        critique: critique.clone(),
                        ..PhaseInput::default()
                    }),
                }
            } else {
                let gate = critique.first().map(|f| f.gate.clone());
                let findings = critique.iter().flat_map(|f| f.findings_shown()).collect();
                let trigger =
                    gate.map_or(PauseTrigger::Verdict, |gate| PauseTrigger::Gate { gate });
                exhausted(
                    trigger,
                    Verdict::Rejected,
                    findings,
                    "used all its replan rounds",
                )
            }
        }
        PhaseEffect::FeedIntoNext { failures } => {
            if attempts_left {
                let input = with_waivers(PhaseInput {
                    fed_failures: failures.clone(),
                    findings: not_approved(verdict, findings),
                    ..PhaseInput::default()
                });
                // The earliest earlier phase a failing gate `feeds`; else
                // this phase's next attempt.
                match feed_target(failures) {
                    Some(to) => Transition::Feed {
                        to,
                        input,
                        attempts: Vec::new(),
                    },
                    None => Transition::Retry { input },
                }
            } else {
                let findings = failures
                    .iter()
                    .flat_map(|f| f.findings_shown())
                    .chain(findings.iter().cloned())
                    .collect();
                let trigger =
                    failures
                        .first()
                        .map_or(PauseTrigger::Verdict, |f| PauseTrigger::Gate {
                            gate: f.gate.clone(),
                        });
                if phase.pause == PausePolicy::Never {
                    exhausted(
                        trigger,
                        Verdict::Rejected,
                        findings,
                        "used all its attempts with failing gates",
                    )
                } else {
                    Transition::Pause {
                        trigger,
                        verdict: Verdict::Rejected,
                        findings,
                    }
                }
            }
        }
        PhaseEffect::Continue => match verdict {
            Verdict::Approved => Transition::Advance,
            Verdict::Rejected | Verdict::Incomplete => {
                if attempts_left {
                    Transition::Retry {
                        input: with_waivers(PhaseInput {
                            findings: findings.to_vec(),
                            ..PhaseInput::default()
                        }),
                    }
                } else if phase.pause == PausePolicy::Never {
                    exhausted(
                        PauseTrigger::Verdict,
                        verdict,
                        findings.to_vec(),
                        &format!("ended {verdict} after its last attempt"),
                    )
                } else {
                    Transition::Pause {
                        trigger: PauseTrigger::Verdict,
                        verdict,
                        findings: findings.to_vec(),
                    }
                }
            }
        },
        other => Transition::Halt {
            reason: format!(
                "the gates' effect `{}` is not one this engine knows",
                other.as_str()
            ),
        },
    }
}

fn not_approved(verdict: Verdict, findings: &[Finding]) -> Vec<Finding> {
    if verdict == Verdict::Approved {
        Vec::new()
    } else {
        findings.to_vec()
    }
}
