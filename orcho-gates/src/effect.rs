//! The pure function from a phase's gate results to one effect on the run.

use orcho_core::{Finding, GateName};
use serde::{Deserialize, Serialize};

use crate::{FailStrategy, GateOutcome, QualityGateResult};

/// The start of the key of a finding that says the declared environment is
/// not as declared (an assertion did not hold): the work did not fail, the
/// machine did, and no attempt of the agent's can fix it.
pub const ENVIRONMENT_KEY: &str = "environment:";

/// Whether `finding` says the environment is not as declared (its key
/// starts with [`ENVIRONMENT_KEY`]).
pub fn is_environment_finding(finding: &Finding) -> bool {
    finding
        .key
        .as_deref()
        .is_some_and(|k| k.starts_with(ENVIRONMENT_KEY))
}

/// A gate that failed (failed, timed out or errored), as the next step of the
/// run consumes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct GateFailure {
    /// The gate.
    pub gate: GateName,
    /// Its strategy.
    pub on_fail: FailStrategy,
    /// How it failed.
    pub outcome: GateOutcome,
    /// Its summary.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub summary: String,
    /// Its findings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// The end of its output.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub output_tail: String,
}

impl GateFailure {
    /// Whether it failed because the environment is not as declared (one of
    /// its findings [says so](is_environment_finding)).
    pub fn is_environment(&self) -> bool {
        self.findings.iter().any(is_environment_finding)
    }

    /// A failure of `gate` with strategy `on_fail` that ended `outcome`,
    /// with no summary, findings or output.
    pub fn new(gate: GateName, on_fail: FailStrategy, outcome: GateOutcome) -> Self {
        Self {
            gate,
            on_fail,
            outcome,
            summary: String::new(),
            findings: Vec::new(),
            output_tail: String::new(),
        }
    }

    /// The findings this failure stands for: its own, or, when it found
    /// nothing it could name (a gate that errored or timed out, a command
    /// that failed without findings), one finding that says how the gate
    /// failed, with the end of its output as the detail. A person deciding
    /// on the failure always has something to read.
    ///
    /// ```
    /// use orcho_gates::{FailStrategy, GateFailure, GateOutcome};
    ///
    /// let failure = GateFailure::new(
    ///     "lint".parse()?,
    ///     FailStrategy::FeedIntoNext,
    ///     GateOutcome::Errored { error: "`ruff` not found".into() },
    /// );
    /// let shown = failure.findings_shown();
    /// assert_eq!(shown[0].title, "gate `lint` could not run: `ruff` not found");
    /// # Ok::<(), orcho_core::IdError>(())
    /// ```
    pub fn findings_shown(&self) -> Vec<Finding> {
        if !self.findings.is_empty() {
            return self.findings.clone();
        }
        let gate = &self.gate;
        let title = match &self.outcome {
            GateOutcome::Errored { error } => format!("gate `{gate}` could not run: {error}"),
            GateOutcome::TimedOut { after_ms } => {
                let after = std::time::Duration::from_millis(*after_ms);
                format!(
                    "gate `{gate}` timed out after {}",
                    orcho_receipts::HumanDuration::new(after)
                )
            }
            _ if self.summary.trim().is_empty() => format!("gate `{gate}` failed"),
            _ => format!("gate `{gate}` failed: {}", self.summary.trim()),
        };
        let mut finding = Finding::new(gate.as_str(), orcho_core::Severity::High, title);
        if !self.output_tail.trim().is_empty() {
            finding = finding.with_detail(self.output_tail.trim());
        }
        vec![finding]
    }

    /// The failure `result` is, under strategy `on_fail` (whatever its
    /// outcome: a passed result makes a failure with nothing to show).
    pub fn of(result: &QualityGateResult, on_fail: FailStrategy) -> Self {
        Self {
            gate: result.gate.clone(),
            on_fail,
            outcome: result.outcome.clone(),
            summary: result.summary.clone(),
            findings: result.findings.clone(),
            output_tail: result.output_tail.clone(),
        }
    }
}

impl GateFailure {
    orcho_core::setters! {
        /// Sets the summary.
        pub fn with_summary(summary: impl Into<String>);
        /// Sets the findings.
        pub fn with_findings(findings: Vec<Finding>);
        /// Sets the end of the output.
        pub fn with_output_tail(tail: impl Into<String>) => output_tail;
    }
}

/// What a phase's gate results do to the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum PhaseEffect {
    /// Nothing blocks: the run continues (informational failures are only
    /// recorded).
    Continue,
    /// The next attempt of the phase consumes these failures as input.
    FeedIntoNext {
        /// The `feed_into_next` failures, in declared order.
        failures: Vec<GateFailure>,
    },
    /// The plan is wrong: replan with this critique; the round counter
    /// advances.
    Replan {
        /// The `trigger_replan` failures, then the `feed_into_next` ones (the
        /// new plan should address them too), in declared order.
        critique: Vec<GateFailure>,
    },
    /// The run stops.
    Halt {
        /// The first `halt` failure in declared order.
        failure: GateFailure,
    },
}

impl PhaseEffect {
    /// The snake_case name of the effect.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Continue => "continue",
            Self::FeedIntoNext { .. } => "feed_into_next",
            Self::Replan { .. } => "replan",
            Self::Halt { .. } => "halt",
        }
    }
}

/// The effect of a phase's gate results: precedence
/// `halt > trigger_replan > feed_into_next > informational`.
///
/// Pure and total: the same results give the same effect, informational
/// failures never change it, and the only order that matters is the declared
/// order among failures of the same strategy (it orders the lists, and the
/// first `halt` failure is the one reported). Failed, timed-out and errored
/// gates are failures; passed and skipped gates are not.
///
/// ```
/// use orcho_gates::{phase_effect, FailStrategy, GateOutcome, PhaseEffect, QualityGateResult};
///
/// let tests = QualityGateResult::computational("tests".parse()?, GateOutcome::Failed);
/// let style = QualityGateResult::computational("style".parse()?, GateOutcome::Failed);
/// let effect = phase_effect([(&style, FailStrategy::Informational), (&tests, FailStrategy::FeedIntoNext)]);
/// let PhaseEffect::FeedIntoNext { failures } = effect else { panic!() };
/// assert_eq!(failures.len(), 1);
/// assert_eq!(failures[0].gate, "tests");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn phase_effect<'a>(
    results: impl IntoIterator<Item = (&'a QualityGateResult, FailStrategy)>,
) -> PhaseEffect {
    let mut halt = None;
    let mut replan = Vec::new();
    let mut feed = Vec::new();
    for (result, on_fail) in results {
        if !result.outcome.is_failure() {
            continue;
        }
        match on_fail {
            FailStrategy::Halt => {
                if halt.is_none() {
                    halt = Some(GateFailure::of(result, on_fail));
                }
            }
            FailStrategy::TriggerReplan => replan.push(GateFailure::of(result, on_fail)),
            FailStrategy::FeedIntoNext => feed.push(GateFailure::of(result, on_fail)),
            FailStrategy::Informational => {}
        }
    }
    if let Some(failure) = halt {
        PhaseEffect::Halt { failure }
    } else if !replan.is_empty() {
        replan.extend(feed);
        PhaseEffect::Replan { critique: replan }
    } else if !feed.is_empty() {
        PhaseEffect::FeedIntoNext { failures: feed }
    } else {
        PhaseEffect::Continue
    }
}

/// The informational failures among results: recorded for audit, never an
/// effect.
pub fn informational_failures<'a>(
    results: impl IntoIterator<Item = (&'a QualityGateResult, FailStrategy)>,
) -> Vec<GateFailure> {
    results
        .into_iter()
        .filter(|(r, s)| *s == FailStrategy::Informational && r.outcome.is_failure())
        .map(|(r, s)| GateFailure::of(r, s))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn outcome() -> impl Strategy<Value = GateOutcome> {
        prop_oneof![
            Just(GateOutcome::Passed),
            Just(GateOutcome::Failed),
            Just(GateOutcome::Skipped { reason: "x".into() }),
            Just(GateOutcome::TimedOut { after_ms: 10 }),
            Just(GateOutcome::Errored {
                error: "boom".into()
            }),
        ]
    }

    fn strategy() -> impl Strategy<Value = FailStrategy> {
        prop::sample::select(FailStrategy::ALL.to_vec())
    }

    fn results() -> impl Strategy<Value = Vec<(QualityGateResult, FailStrategy)>> {
        prop::collection::vec((outcome(), strategy()), 0..12).prop_map(|v| {
            v.into_iter()
                .enumerate()
                .map(|(i, (o, s))| {
                    (
                        QualityGateResult::computational(format!("g{i}").parse().unwrap(), o),
                        s,
                    )
                })
                .collect()
        })
    }

    fn effect_of(results: &[(QualityGateResult, FailStrategy)]) -> PhaseEffect {
        phase_effect(results.iter().map(|(r, s)| (r, *s)))
    }

    proptest! {
        #[test]
        fn the_effect_obeys_precedence(results in results()) {
            let failing = |s: FailStrategy| results.iter().filter(|(r, st)| *st == s && r.outcome.is_failure()).count();
            let effect = effect_of(&results);
            let expected = if failing(FailStrategy::Halt) > 0 {
                "halt"
            } else if failing(FailStrategy::TriggerReplan) > 0 {
                "replan"
            } else if failing(FailStrategy::FeedIntoNext) > 0 {
                "feed_into_next"
            } else {
                "continue"
            };
            prop_assert_eq!(effect.as_str(), expected);
            if let PhaseEffect::Replan { critique } = &effect {
                prop_assert_eq!(critique.len(), failing(FailStrategy::TriggerReplan) + failing(FailStrategy::FeedIntoNext));
            }
            if let PhaseEffect::FeedIntoNext { failures } = &effect {
                prop_assert_eq!(failures.len(), failing(FailStrategy::FeedIntoNext));
            }
        }

        #[test]
        fn informational_results_never_matter(results in results(), shuffle in any::<u64>()) {
            let without: Vec<_> = results.iter().filter(|(_, s)| *s != FailStrategy::Informational).cloned().collect();
            let mut informational: Vec<_> = results.iter().filter(|(_, s)| *s == FailStrategy::Informational).cloned().collect();
            // Rotate the informational results to a different position and
            // order, keeping the others in place.
            let n = informational.len().max(1);
            informational.rotate_left(usize::try_from(shuffle).unwrap_or(0) % n);
            let mut reordered = informational.clone();
            reordered.extend(without.iter().cloned());
            prop_assert_eq!(effect_of(&without), effect_of(&results));
            prop_assert_eq!(effect_of(&reordered), effect_of(&results));
        }
    }

    #[test]
    fn the_first_halt_in_declared_order_is_reported() {
        let a = QualityGateResult::computational(
            "a".parse().unwrap(),
            GateOutcome::Errored {
                error: "spawn failed".into(),
            },
        );
        let b = QualityGateResult::computational("b".parse().unwrap(), GateOutcome::Failed);
        let effect = phase_effect([(&a, FailStrategy::Halt), (&b, FailStrategy::Halt)]);
        let PhaseEffect::Halt { failure } = effect else {
            panic!("halt expected")
        };
        assert_eq!(failure.gate, "a");
        insta::assert_json_snapshot!(PhaseEffect::Halt { failure }, @r#"
        {
          "effect": "halt",
          "failure": {
            "gate": "a",
            "on_fail": "halt",
            "outcome": {
              "status": "errored",
              "error": "spawn failed"
            }
          }
        }
        "#);
    }
}
