//! [`RuleAdvisor`]: advice from the handoff alone, with no model.

use orcho_core::{Finding, Verdict};

use crate::{
    Advice, AdviceRequest, Advisor, AdvisorError, Confidence, HandoffAction,
    advisor::ConfidenceBand,
};

/// An advisor that needs nothing but the handoff: continue an approved
/// phase; else retry with the findings as feedback; else halt. Its advice
/// has low confidence (it weighs no evidence, so the CI autopilot never
/// acts on it by itself): it is the proposal a host shows when no model
/// advises.
///
/// ```
/// # tokio_test_block(async {
/// use orcho_core::{Finding, FixedClock, Severity, Verdict};
/// use orcho_handoff::{AdviceRequest, Advisor, HandoffAction, handoff::{HandoffSpec, HandoffStore}, advisor::RuleAdvisor};
/// # let tmp = tempfile::tempdir()?;
/// # let root = camino::Utf8PathBuf::try_from(tmp.path().to_owned())?;
/// let store = HandoffStore::in_dir(&root, std::sync::Arc::new(FixedClock::new("2026-11-21T12:00:00Z".parse()?)));
/// let handoff = store.open(
///     HandoffSpec::new("run-1".parse()?, "implement".parse()?, Verdict::Rejected)
///         .with_findings(vec![Finding::new("tests", Severity::High, "`parse_empty` fails")]),
/// )?;
/// let advice = RuleAdvisor.advise(&AdviceRequest::new(&handoff, "", &[])).await?;
/// assert_eq!(advice.recommended_action, HandoffAction::RetryFeedback);
/// assert_eq!(advice.retry_feedback.as_deref(), Some("Fix these findings: [high] `parse_empty` fails"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # });
/// # fn tokio_test_block(f: impl std::future::Future<Output = Result<(), Box<dyn std::error::Error>>>) {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f).unwrap();
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
#[expect(
    clippy::exhaustive_structs,
    reason = "a unit advisor with no settings; settings would come with a builder"
)]
pub struct RuleAdvisor;

#[async_trait::async_trait]
impl Advisor for RuleAdvisor {
    fn name(&self) -> &str {
        "rules"
    }

    async fn advise(&self, request: &AdviceRequest<'_>) -> Result<Advice, AdvisorError> {
        Ok(propose(request))
    }
}

fn propose(request: &AdviceRequest<'_>) -> Advice {
    let handoff = request.handoff;
    let available = handoff.available_actions();
    let findings = handoff.findings();
    let (phase, verdict) = (handoff.phase(), handoff.verdict());
    let low = Confidence::band(ConfidenceBand::Low);
    if verdict == Verdict::Approved && available.contains(HandoffAction::Continue) {
        return Advice::new(
            HandoffAction::Continue,
            low,
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
        return Advice::new(
            HandoffAction::RetryFeedback,
            low,
            format!(
                "the phase `{phase}` was {verdict} with {} finding(s); retrying with them as \
                 feedback is the smallest honest step",
                findings.len()
            ),
        )
        .with_retry_feedback(feedback);
    }
    if available.contains(HandoffAction::Halt) {
        return Advice::new(
            HandoffAction::Halt,
            low,
            format!("the phase `{phase}` was {verdict} and no retry is offered"),
        );
    }
    Advice::new(
        HandoffAction::Continue,
        low,
        "continue is the only action offered",
    )
}

fn finding_item(f: &Finding) -> String {
    match (&f.file, f.line) {
        (Some(file), Some(line)) => format!("[{}] {} ({file}:{line})", f.severity, f.title),
        (Some(file), None) => format!("[{}] {} ({file})", f.severity, f.title),
        _ => format!("[{}] {}", f.severity, f.title),
    }
}
