//! A deterministic proposal for a paused handoff, when no advice was
//! recorded: from its verdict and findings.

use orcho::{
    core::{Finding, Verdict},
    handoff::{HandoffAction, PhaseHandoff},
};

/// A proposed decision: shown, never applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Proposal {
    pub(crate) action: HandoffAction,
    pub(crate) feedback: Option<String>,
    pub(crate) rationale: String,
}

impl Proposal {
    fn new(action: HandoffAction, feedback: Option<String>, rationale: String) -> Self {
        Self {
            action,
            feedback,
            rationale,
        }
    }
}

/// Continue an approved phase; else retry with the findings as feedback;
/// else halt.
pub(crate) fn propose(handoff: &PhaseHandoff) -> Proposal {
    let available = handoff.available_actions();
    let findings = handoff.findings();
    let (phase, verdict) = (handoff.phase(), handoff.verdict());
    if verdict == Verdict::Approved && available.contains(HandoffAction::Continue) {
        return Proposal::new(
            HandoffAction::Continue,
            None,
            format!("the phase `{phase}` was approved"),
        );
    }
    if available.contains(HandoffAction::RetryFeedback) {
        let feedback = if findings.is_empty() {
            format!(
                "The phase `{phase}` was {verdict} without findings: find what blocks it and fix it."
            )
        } else {
            let items: Vec<String> = findings.iter().map(finding_item).collect();
            format!("Fix these findings: {}", items.join("; "))
        };
        return Proposal::new(
            HandoffAction::RetryFeedback,
            Some(feedback),
            format!(
                "the phase `{phase}` was {verdict} with {} finding(s); retrying with them as \
                 feedback is the smallest honest step",
                findings.len()
            ),
        );
    }
    if available.contains(HandoffAction::Halt) {
        return Proposal::new(
            HandoffAction::Halt,
            None,
            format!("the phase `{phase}` was {verdict} and no retry is offered"),
        );
    }
    Proposal::new(
        HandoffAction::Continue,
        None,
        "continue is the only action offered".to_owned(),
    )
}

fn finding_item(f: &Finding) -> String {
    match (&f.file, f.line) {
        (Some(file), Some(line)) => format!("[{}] {} ({file}:{line})", f.severity, f.title),
        (Some(file), None) => format!("[{}] {} ({file})", f.severity, f.title),
        _ => format!("[{}] {}", f.severity, f.title),
    }
}
