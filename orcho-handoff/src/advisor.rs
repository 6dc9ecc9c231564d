//! Advisors: plugins that read a paused handoff and recommend a next step.

use std::{error::Error as StdError, fmt, sync::Arc};

pub use crate::rules::RuleAdvisor;

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{Cost, HandoffId, RunId, Timestamp};
use serde::{Deserialize, Serialize};

use crate::{HandoffAction, decision::DecidedBy, handoff::PhaseHandoff};

orcho_core::id_type! {
    /// Identifies one advice artifact within a run; safe as a file name (the
    /// same rules as [`HandoffId`]).
    pub struct AdviceId("advice id") validated by orcho_core::ids::validate, error orcho_core::IdError;
}

impl AdviceId {
    /// The id `NNNN-<handoff>` for the `seq`-th advice of a run, cut to the
    /// longest id allowed.
    pub(crate) fn numbered(seq: u32, handoff: &HandoffId) -> Self {
        let mut id = format!("{seq:04}-{handoff}");
        while id.len() > orcho_core::ids::MAX_ID_LEN {
            id.pop();
        }
        // Valid by construction: digits, `-`, then a prefix of a valid id
        // (which cannot end in a way that creates `..` after a `-`).
        Self::new(id.clone()).unwrap_or(Self(format!("{seq:04}")))
    }
}

/// A coarse confidence, for advisors that do not give a number.
///
/// Each band stands for the lower end of its range when compared with a
/// numeric threshold ([`Confidence::value`]): `low` is 0.0, `medium` 0.5,
/// `high` 0.8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfidenceBand {
    /// Below 0.5.
    Low,
    /// 0.5 up to 0.8.
    Medium,
    /// 0.8 and above.
    High,
}

impl ConfidenceBand {
    /// The lowest value of the band.
    pub fn floor(self) -> f64 {
        match self {
            Self::Low => 0.0,
            Self::Medium => 0.5,
            Self::High => 0.8,
        }
    }
}

/// How sure an advisor is: a number in `0..=1`, a band, or both.
///
/// Construction does not validate (an advisor's output is untrusted input);
/// [`Advice::validate`] does.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Confidence {
    score: Option<f64>,
    band: Option<ConfidenceBand>,
}

impl Confidence {
    /// A numeric confidence, valid in `0..=1`.
    pub fn score(score: f64) -> Self {
        Self {
            score: Some(score),
            band: None,
        }
    }

    /// A band only.
    pub fn band(band: ConfidenceBand) -> Self {
        Self {
            score: None,
            band: Some(band),
        }
    }

    /// The numeric score, if given.
    pub fn score_value(self) -> Option<f64> {
        self.score
    }

    /// The band, if given.
    pub fn band_value(self) -> Option<ConfidenceBand> {
        self.band
    }

    /// The value compared with thresholds: the lower of the score and the
    /// band's floor (the conservative reading when both are given), or
    /// `None` when neither is.
    pub fn value(self) -> Option<f64> {
        match (self.score, self.band) {
            (Some(s), Some(b)) => Some(s.min(b.floor())),
            (Some(s), None) => Some(s),
            (None, Some(b)) => Some(b.floor()),
            (None, None) => None,
        }
    }
}

impl Confidence {
    orcho_core::setters! {
        /// Adds a band to a numeric confidence.
        pub fn with_band(band: Some(ConfidenceBand));
    }
}

impl fmt::Display for Confidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.score, self.band) {
            (Some(s), Some(b)) => write!(f, "{s} ({b:?})"),
            (Some(s), None) => write!(f, "{s}"),
            (None, Some(b)) => write!(f, "{b:?}"),
            (None, None) => f.write_str("none"),
        }
    }
}

/// What an advisor recommends for a paused handoff. Never a decision: a
/// host shows it, or the CI autopilot checks it against its safety stops.
///
/// ```
/// use orcho_handoff::{Advice, Confidence, HandoffAction};
///
/// let advice = Advice::new(HandoffAction::RetryFeedback, Confidence::score(0.9), "the failing test names the bug")
///     .with_retry_feedback("return an empty list for empty input in parse()")
///     .with_expected_files(vec!["src/parse.rs".into()]);
/// advice.validate()?;
/// # Ok::<(), orcho_handoff::advisor::AdviceError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Advice {
    /// The recommended action.
    pub recommended_action: HandoffAction,
    /// How sure the advisor is.
    pub confidence: Confidence,
    /// Why.
    pub rationale: String,
    /// What could go wrong.
    pub risks: Vec<String>,
    /// The feedback to give a retry; required when recommending
    /// `retry_feedback`.
    pub retry_feedback: Option<String>,
    /// The files the advisor expects the retry to change, relative to the
    /// checkout root.
    pub expected_files: Vec<Utf8PathBuf>,
    /// What the advisor call cost (observed, not billed by Orcho).
    pub usage: Option<Cost>,
}

impl Advice {
    /// Advice with no risks, feedback, expected files or usage.
    pub fn new(
        recommended_action: HandoffAction,
        confidence: Confidence,
        rationale: impl Into<String>,
    ) -> Self {
        Self {
            recommended_action,
            confidence,
            rationale: rationale.into(),
            risks: Vec::new(),
            retry_feedback: None,
            expected_files: Vec::new(),
            usage: None,
        }
    }

    /// Checks that the advice is well formed.
    ///
    /// # Errors
    ///
    /// An [`AdviceError`] when the confidence is missing, not a number or
    /// outside `0..=1`; the rationale is blank; `retry_feedback` is
    /// recommended without non-blank feedback; or an expected file is not a
    /// relative path inside the checkout.
    pub fn validate(&self) -> Result<(), AdviceError> {
        let fail = |kind| Err(AdviceError::new(kind));
        match self.confidence.score {
            Some(s) if !(0.0..=1.0).contains(&s) => {
                return fail(AdviceErrorKind::ConfidenceOutOfRange(s));
            }
            None if self.confidence.band.is_none() => {
                return fail(AdviceErrorKind::MissingConfidence);
            }
            Some(_) | None => {}
        }
        if self.rationale.trim().is_empty() {
            return fail(AdviceErrorKind::BlankRationale);
        }
        if self.recommended_action == HandoffAction::RetryFeedback
            && self
                .retry_feedback
                .as_deref()
                .is_none_or(|t| t.trim().is_empty())
        {
            return fail(AdviceErrorKind::MissingRetryFeedback);
        }
        if let Some(file) = self.expected_files.iter().find(|f| !is_inside(f)) {
            return fail(AdviceErrorKind::FileOutsideCheckout(file.clone()));
        }
        Ok(())
    }
}

impl Advice {
    orcho_core::setters! {
        /// Sets the confidence.
        pub fn with_confidence(confidence: Confidence);
        /// Sets the risks.
        pub fn with_risks(risks: Vec<String>);
        /// Sets the retry feedback.
        pub fn with_retry_feedback(feedback: Some(impl Into<String>)) => retry_feedback;
        /// Sets the expected files.
        pub fn with_expected_files(files: Vec<Utf8PathBuf>) => expected_files;
        /// Sets the usage.
        pub fn with_usage(usage: Some(Cost));
    }
}

/// Whether `path` is relative and never climbs out of the checkout.
fn is_inside(path: &Utf8Path) -> bool {
    !path.as_str().is_empty()
        && path.is_relative()
        && !path.as_str().starts_with('/')
        && !path.as_str().contains('\\')
        && path.components().all(|c| {
            matches!(
                c,
                camino::Utf8Component::Normal(_) | camino::Utf8Component::CurDir
            )
        })
}

/// What an advisor is given: the paused handoff, the phase's output, and the
/// handoffs of the same phase before it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct AdviceRequest<'a> {
    /// The paused handoff.
    pub handoff: &'a PhaseHandoff,
    /// The phase's output (for example the worker's summary), possibly
    /// empty.
    pub phase_output: &'a str,
    /// Earlier handoffs of the same phase in this run, oldest first.
    pub history: &'a [PhaseHandoff],
    /// What else the host knows that bears on the decision, as Markdown
    /// (the engine gives the readiness summary of the run's receipts);
    /// possibly empty.
    pub context: &'a str,
}

impl<'a> AdviceRequest<'a> {
    /// A request for `handoff`.
    pub fn new(
        handoff: &'a PhaseHandoff,
        phase_output: &'a str,
        history: &'a [PhaseHandoff],
    ) -> Self {
        Self {
            handoff,
            phase_output,
            history,
            context: "",
        }
    }

    /// The request with the host's `context`.
    #[must_use]
    pub fn with_context(mut self, context: &'a str) -> Self {
        self.context = context;
        self
    }
}

/// An advisor could not produce advice (a model call failed, a timeout, a
/// bug in the plugin). Not "the advice is no": that is an [`Advice`].
///
/// Clonable; [`source`](StdError::source) is the plugin's error.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the advisor failed")]
pub struct AdvisorError {
    #[source]
    source: Arc<dyn StdError + Send + Sync>,
    malformed: bool,
}

impl AdvisorError {
    /// Wraps a plugin's error.
    pub fn new(err: impl StdError + Send + Sync + 'static) -> Self {
        Self {
            source: Arc::new(err),
            malformed: false,
        }
    }

    /// The model answered, but not with valid advice (it did not match the
    /// advice's schema): the autopilot stops with `malformed_advice`, not
    /// `advisor_failed`.
    pub fn malformed(err: impl StdError + Send + Sync + 'static) -> Self {
        Self {
            source: Arc::new(err),
            malformed: true,
        }
    }

    /// Whether the answer came back but was not valid advice.
    pub fn is_malformed(&self) -> bool {
        self.malformed
    }

    /// An error from a message.
    pub fn msg(message: impl Into<String>) -> Self {
        #[derive(Debug, thiserror::Error)]
        #[error("{0}")]
        struct Message(String);
        Self::new(Message(message.into()))
    }

    /// The plugin's error.
    pub fn inner(&self) -> &(dyn StdError + Send + Sync + 'static) {
        &*self.source
    }
}

/// A plugin that reads a paused handoff and recommends the smallest honest
/// next step.
///
/// # The contract
///
/// - [`advise`](Self::advise) returns [`Advice`], **never a decision**. The
///   host writes it as an artifact ([`HandoffStore::record_advice`](crate::handoff::HandoffStore::record_advice))
///   and either shows it to an operator, who decides, or hands it to the
///   [`Autopilot`](crate::autopilot::Autopilot), which checks it against its safety
///   stops before deciding `retry_feedback` itself.
/// - `Ok(advice)` is the advisor's opinion, whatever it is. `Err` means no
///   opinion could be formed (a failed model call); the autopilot stops on
///   it and leaves the handoff for an operator.
/// - The host guarantees the request describes an open handoff. It may call
///   `advise` concurrently for different handoffs, from any thread.
/// - Implementations must not write decisions, resume runs, or touch the
///   store: they only read the request.
///
/// Hosts store advisors as `Arc<dyn Advisor>`.
///
/// # Implementing it
///
/// Annotate the impl block with `#[orcho_handoff::async_trait]` too.
/// Forgetting it gives error E0195 ("lifetime parameters or bounds on method
/// `advise` do not match the trait declaration"):
///
/// ```
/// use orcho_handoff::{Advice, AdviceRequest, Advisor, AdvisorError, Confidence, HandoffAction};
///
/// #[derive(Debug)]
/// struct AlwaysRetry;
///
/// #[orcho_handoff::async_trait] // required on the impl as well
/// impl Advisor for AlwaysRetry {
///     fn name(&self) -> &str {
///         "always-retry"
///     }
///
///     async fn advise(&self, request: &AdviceRequest<'_>) -> Result<Advice, AdvisorError> {
///         let titles: Vec<&str> = request.handoff.findings().iter().map(|f| f.title.as_str()).collect();
///         Ok(Advice::new(HandoffAction::RetryFeedback, Confidence::score(0.8), "findings are specific")
///             .with_retry_feedback(format!("fix: {}", titles.join("; "))))
///     }
/// }
/// ```
#[async_trait::async_trait]
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an Orcho advisor",
    note = "implement `orcho_handoff::Advisor` with `#[orcho_handoff::async_trait]` on the impl block; see the trait docs"
)]
pub trait Advisor: fmt::Debug + Send + Sync + 'static {
    /// A short, stable name, written into every advice artifact as its
    /// provenance, for example `"claude-reviewer"`.
    fn name(&self) -> &str;

    /// Reads the paused handoff and recommends a next step.
    ///
    /// # Errors
    ///
    /// An [`AdvisorError`] when no advice could be produced.
    async fn advise(&self, request: &AdviceRequest<'_>) -> Result<Advice, AdvisorError>;
}

/// A boxed or shared advisor is the advisor it points to.
macro_rules! forward_advisor {
    ($($pointer:ident),+) => {$(
        #[async_trait::async_trait]
        impl<A: Advisor + ?Sized> Advisor for $pointer<A> {
            fn name(&self) -> &str {
                (**self).name()
            }

            async fn advise(&self, request: &AdviceRequest<'_>) -> Result<Advice, AdvisorError> {
                (**self).advise(request).await
            }
        }
    )+};
}

forward_advisor!(Arc, Box);

/// An advice artifact: the advice and its provenance, as written to
/// `runs/<run>/advice/<id>.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct AdviceRecord {
    pub(crate) id: AdviceId,
    pub(crate) run: RunId,
    pub(crate) handoff: HandoffId,
    pub(crate) advisor: String,
    pub(crate) requested_by: DecidedBy,
    pub(crate) created_at: Timestamp,
    pub(crate) advice: Advice,
}

impl AdviceRecord {
    orcho_core::getters! {
        /// The advice id; a decision that used the advice carries it.
        pub fn id(&self) -> &AdviceId;
        /// The run.
        pub fn run(&self) -> &RunId;
        /// The handoff it advises on.
        pub fn handoff(&self) -> &HandoffId;
        /// The advisor's [`name`](Advisor::name).
        pub fn advisor(&self) -> &str;
        /// Who asked: an operator's host or the CI autopilot.
        pub fn requested_by(&self) -> DecidedBy;
        /// When it was written.
        pub fn created_at(&self) -> Timestamp;
        /// The advice.
        pub fn advice(&self) -> &Advice;
    }
}

/// Advice is malformed: the CI autopilot stops on it, and
/// [`HandoffStore::record_advice`](crate::handoff::HandoffStore::record_advice)
/// refuses it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("malformed advice: {kind}")]
pub struct AdviceError {
    kind: AdviceErrorKind,
}

/// What is wrong with advice; see [`AdviceError::kind`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AdviceErrorKind {
    /// The numeric confidence is NaN or outside `0..=1`.
    #[error("the confidence {0} is not a number in 0..=1")]
    ConfidenceOutOfRange(f64),
    /// Neither a score nor a band.
    #[error("it gives no confidence (neither a score nor a band)")]
    MissingConfidence,
    /// The rationale is blank.
    #[error("the rationale is blank")]
    BlankRationale,
    /// `retry_feedback` recommended without feedback.
    #[error("it recommends `retry_feedback` without feedback")]
    MissingRetryFeedback,
    /// An expected file is absolute or climbs out of the checkout.
    #[error("the expected file `{0}` is not a relative path inside the checkout")]
    FileOutsideCheckout(Utf8PathBuf),
    /// The advisor's answer was not advice at all (it did not match the
    /// advice's schema).
    #[error("the advisor's answer is not valid advice: {0}")]
    Unreadable(String),
}

impl AdviceError {
    #[cold]
    pub(crate) fn new(kind: AdviceErrorKind) -> Self {
        Self { kind }
    }

    /// What is wrong.
    pub fn kind(&self) -> &AdviceErrorKind {
        &self.kind
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orcho_core::error_chain;

    fn err(advice: &Advice) -> String {
        error_chain(&advice.validate().unwrap_err())
    }

    #[test]
    fn malformed_advice_is_described() {
        let base = Advice::new(HandoffAction::Halt, Confidence::score(0.5), "stop");
        insta::assert_snapshot!(err(&Advice { confidence: Confidence::score(f64::NAN), ..base.clone() }), @"malformed advice: the confidence NaN is not a number in 0..=1");
        insta::assert_snapshot!(err(&Advice { confidence: Confidence::score(1.5), ..base.clone() }), @"malformed advice: the confidence 1.5 is not a number in 0..=1");
        insta::assert_snapshot!(err(&Advice { confidence: Confidence::default(), ..base.clone() }), @"malformed advice: it gives no confidence (neither a score nor a band)");
        insta::assert_snapshot!(err(&Advice { rationale: " ".into(), ..base.clone() }), @"malformed advice: the rationale is blank");
        insta::assert_snapshot!(err(&Advice { recommended_action: HandoffAction::RetryFeedback, ..base.clone() }), @"malformed advice: it recommends `retry_feedback` without feedback");
        insta::assert_snapshot!(err(&base.clone().with_expected_files(vec!["../etc/passwd".into()])), @"malformed advice: the expected file `../etc/passwd` is not a relative path inside the checkout");
        assert!(
            base.clone()
                .with_expected_files(vec!["/etc/passwd".into()])
                .validate()
                .is_err()
        );
        assert!(base.validate().is_ok());
    }

    #[test]
    fn confidence_values_are_conservative() {
        assert_eq!(Confidence::score(0.9).value(), Some(0.9));
        assert_eq!(Confidence::band(ConfidenceBand::Medium).value(), Some(0.5));
        assert_eq!(
            Confidence::score(0.9)
                .with_band(ConfidenceBand::Low)
                .value(),
            Some(0.0)
        );
        assert_eq!(Confidence::default().value(), None);
    }

    #[test]
    fn advice_ids_are_validated_and_numbered() {
        assert!("a/b".parse::<AdviceId>().is_err());
        insta::assert_snapshot!(error_chain(&"..".parse::<AdviceId>().unwrap_err()), @"invalid advice id `..`: contains `..`");
        let long: HandoffId = "h".repeat(128).parse().unwrap();
        let id = AdviceId::numbered(3, &long);
        assert_eq!(id.as_str().len(), 128);
        assert!(id.as_str().starts_with("0003-hhh"));
    }
}
