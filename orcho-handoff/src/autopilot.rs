//! The CI autopilot: with no operator present, retry the honest, low-risk
//! case and stop on everything else.

use std::{fmt, sync::Arc};

use camino::Utf8PathBuf;
use orcho_core::{Digest, Finding, HandoffId, RunId, Severity, Usd, Verdict};

use orcho_core::glob::{FileGlob, GlobError};

use crate::{
    Advice, AdviceRequest, Advisor, AdvisorError, HandoffAction,
    advisor::{AdviceError, AdviceRecord},
    decision::{DecidedBy, DecisionRequest, RecordedDecision},
    handoff::{
        HandoffChoice, HandoffError, HandoffState, HandoffStateName, HandoffStore, PhaseHandoff,
    },
};

/// The defaults of [`DestructivePatterns`].
pub const DEFAULT_DESTRUCTIVE_PATTERNS: &[&str] = &[
    "rm -rf",
    "git reset --hard",
    "git clean -fd",
    "git clean -fdx",
    "git clean -f",
    "git push --force",
    "git push -f",
    "git push +",
    "git push --force-with-lease",
    // Said in words, as advice often does ("A force push may be needed
    // afterwards.").
    "force push",
    "force-push",
    "force-pushed",
    "rewrite history",
    "git checkout -- .",
    "git branch -D",
    "drop table",
    "drop database",
    "drop schema",
    "truncate table",
    "delete from",
    "mkfs",
    "dd if=",
    "chmod -R 777",
];

/// Text patterns that mark advice as destructive.
///
/// A pattern is a sequence of words; it matches a line of the advice's
/// feedback, rationale or risks that contains those words in that order
/// (other words may sit between them). Words compare case-insensitively,
/// ignoring surrounding quotes, backticks and `;,()`. Short flags compare
/// as flags, in any order and grouping (`rm -rf` matches `rm -fr`,
/// `rm -r -f`, `rm --recursive --force`; `git clean -fdx` matches
/// `git clean -xdf`), and the word `+` is a forced refspec
/// (`git push origin +main`). So `git push --force` matches
/// ``run `git push origin main --force` `` and `drop table` matches
/// `DROP TABLE users;`. Matching errs on the side of stopping.
///
/// ```
/// use orcho_handoff::autopilot::DestructivePatterns;
///
/// let patterns = DestructivePatterns::default();
/// assert_eq!(patterns.find("then `git push origin main --force`"), Some("git push --force"));
/// assert_eq!(patterns.find("Run: DROP TABLE users;"), Some("drop table"));
/// assert_eq!(patterns.find("rename parse_list to parse_items"), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DestructivePatterns {
    // Shared: every policy built from a profile starts from the defaults,
    // which are split into words once per process.
    patterns: Arc<Vec<Pattern>>,
}

/// A pattern as written, and its words.
type Pattern = (String, Vec<String>);

/// The defaults, split into words once.
static DEFAULTS: std::sync::LazyLock<Arc<Vec<Pattern>>> = std::sync::LazyLock::new(|| {
    Arc::new(
        DEFAULT_DESTRUCTIVE_PATTERNS
            .iter()
            .map(|p| ((*p).to_owned(), words(p)))
            .collect(),
    )
});

impl Default for DestructivePatterns {
    /// [`DEFAULT_DESTRUCTIVE_PATTERNS`].
    fn default() -> Self {
        Self {
            patterns: Arc::clone(&DEFAULTS),
        }
    }
}

impl DestructivePatterns {
    /// Exactly these patterns (none of the defaults).
    ///
    /// # Errors
    ///
    /// [`AutopilotPolicyError::BlankPattern`] for a blank pattern.
    pub fn new<I, S>(patterns: I) -> Result<Self, AutopilotPolicyError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            patterns: Arc::default(),
        }
        .with(patterns)
    }

    /// These patterns in addition.
    ///
    /// # Errors
    ///
    /// [`AutopilotPolicyError::BlankPattern`] for a blank pattern.
    pub fn with<I, S>(mut self, patterns: I) -> Result<Self, AutopilotPolicyError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        for p in patterns {
            let p = p.into();
            let w = words(&p);
            if w.is_empty() {
                return Err(AutopilotPolicyError::BlankPattern);
            }
            Arc::make_mut(&mut self.patterns).push((p, w));
        }
        Ok(self)
    }

    /// The first pattern found in `text`, if any.
    pub fn find(&self, text: &str) -> Option<&str> {
        text.lines().find_map(|line| {
            let line = words(line);
            self.patterns
                .iter()
                .find(|(_, pattern)| contains_in_order(&line, pattern))
                .map(|(p, _)| p.as_str())
        })
    }

    /// The patterns, as given.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.patterns.iter().map(|(p, _)| p.as_str())
    }
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| matches!(c, '`' | '\'' | '"' | ';' | ',' | '(' | ')'))
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Whether `line` has the words of `pattern` in order. Flags compare as
/// flags: a short cluster in the pattern (`-fdx`) is satisfied by the same
/// letters in any order and grouping on the line (`-xdf`, `-x -f -d`,
/// `-rfv` for `-rf`), where `--recursive` and `--force` count as `-r` and
/// `-f`; a pattern word `+` is any word starting with `+` (a forced refspec,
/// `git push origin +main`).
fn contains_in_order(line: &[String], pattern: &[String]) -> bool {
    let mut want = pattern.iter().peekable();
    let mut at = 0;
    while let Some(w) = want.peek() {
        if is_short_cluster(w) {
            // The flags anywhere after the words matched so far.
            let letters: String = line[at.min(line.len())..]
                .iter()
                .map(|word| flag_letters(word))
                .collect();
            if !w[1..].chars().all(|c| letters.contains(c)) {
                return false;
            }
            want.next();
            continue;
        }
        let Some(found) = line[at.min(line.len())..].iter().position(|word| {
            word == *w || (w.as_str() == "+" && word.starts_with('+') && word.len() > 1)
        }) else {
            return false;
        };
        at += found + 1;
        want.next();
    }
    true
}

/// `-x` or `-xdf`: a cluster of short flags.
fn is_short_cluster(word: &str) -> bool {
    word.len() > 1
        && word.starts_with('-')
        && !word.starts_with("--")
        && word[1..].chars().all(|c| c.is_ascii_alphabetic())
}

/// The short-flag letters a word of a command line stands for.
fn flag_letters(word: &str) -> String {
    match word {
        "--recursive" => "r".to_owned(),
        "--force" => "f".to_owned(),
        w if is_short_cluster(w) => w[1..].to_owned(),
        _ => String::new(),
    }
}

/// The autopilot's limits. Build with [`AutopilotPolicy::builder`].
///
/// Defaults: confidence threshold 0.7, at most 1 CI retry per run, no cost
/// cap, every file in scope, [`DestructivePatterns::default`].
#[derive(Debug, Clone, PartialEq)]
pub struct AutopilotPolicy {
    min_confidence: f64,
    max_retries: u32,
    max_cost: Option<Usd>,
    allowed_files: Option<Vec<FileGlob>>,
    destructive: DestructivePatterns,
}

impl Default for AutopilotPolicy {
    fn default() -> Self {
        Self {
            min_confidence: 0.7,
            max_retries: 1,
            max_cost: None,
            allowed_files: None,
            destructive: DestructivePatterns::default(),
        }
    }
}

impl AutopilotPolicy {
    /// A builder starting from the defaults.
    ///
    /// ```
    /// use orcho_handoff::autopilot::AutopilotPolicy;
    /// use orcho_core::Usd;
    ///
    /// let policy = AutopilotPolicy::builder()
    ///     .min_confidence(0.8)
    ///     .max_retries(1)
    ///     .max_cost(Usd::new(0.50)?)
    ///     .allowed_files(["src/**", "tests/**"])
    ///     .build()?;
    /// assert_eq!(policy.max_retries(), 1);
    /// assert!(AutopilotPolicy::builder().min_confidence(1.5).build().is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn builder() -> AutopilotPolicyBuilder {
        AutopilotPolicyBuilder {
            policy: Self::default(),
            globs: None,
        }
    }

    orcho_core::getters! {
        /// The confidence below which the autopilot stops.
        pub fn min_confidence(&self) -> f64;
        /// How many `retry_feedback` decisions the CI agent may make in a run.
        pub fn max_retries(&self) -> u32;
        /// The most advisor money a run may spend, if capped.
        pub fn max_cost(&self) -> Option<Usd>;
    }

    /// The globs expected files must match, if restricted.
    pub fn allowed_files(&self) -> Option<&[FileGlob]> {
        self.allowed_files.as_deref()
    }

    /// The destructive patterns.
    pub fn destructive_patterns(&self) -> &DestructivePatterns {
        &self.destructive
    }

    /// The same policy, scoped to the files an approved plan says it
    /// affects, when the policy names no allowed files of its own (which
    /// win). Each entry is a path or a glob; one that is not a valid glob
    /// is matched as the literal path.
    #[must_use]
    pub fn scoped_to_plan(mut self, files_affected: &[String]) -> Self {
        if self.allowed_files.is_some() || files_affected.is_empty() {
            return self;
        }
        self.allowed_files = Some(
            files_affected
                .iter()
                .filter_map(|f| FileGlob::new(f).ok())
                .collect(),
        );
        self
    }
}

/// Builds an [`AutopilotPolicy`]; [`build`](Self::build) validates.
#[derive(Debug, Clone)]
#[must_use]
pub struct AutopilotPolicyBuilder {
    policy: AutopilotPolicy,
    globs: Option<Vec<String>>,
}

impl AutopilotPolicyBuilder {
    /// Stops when the advice's confidence is below this (in `0..=1`).
    pub fn min_confidence(mut self, threshold: f64) -> Self {
        self.policy.min_confidence = threshold;
        self
    }

    /// At most this many CI retries per run.
    pub fn max_retries(mut self, max: u32) -> Self {
        self.policy.max_retries = max;
        self
    }

    /// At most this much advisor money per run.
    pub fn max_cost(mut self, max: Usd) -> Self {
        self.policy.max_cost = Some(max);
        self
    }

    /// Expected files must match one of these globs (see [`FileGlob`]).
    pub fn allowed_files<I, S>(mut self, globs: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.globs = Some(globs.into_iter().map(Into::into).collect());
        self
    }

    /// Replaces the destructive patterns.
    pub fn destructive_patterns(mut self, patterns: DestructivePatterns) -> Self {
        self.policy.destructive = patterns;
        self
    }

    /// Validates and builds.
    ///
    /// # Errors
    ///
    /// An [`AutopilotPolicyError`] for a threshold outside `0..=1` or an
    /// invalid glob.
    pub fn build(self) -> Result<AutopilotPolicy, AutopilotPolicyError> {
        let mut policy = self.policy;
        if !(0.0..=1.0).contains(&policy.min_confidence) {
            return Err(AutopilotPolicyError::Threshold(policy.min_confidence));
        }
        if let Some(globs) = self.globs {
            policy.allowed_files = Some(
                globs
                    .iter()
                    .map(|g| FileGlob::new(g).map_err(AutopilotPolicyError::Glob))
                    .collect::<Result<_, _>>()?,
            );
        }
        Ok(policy)
    }
}

/// Why the autopilot stopped and left the handoff pending for an operator.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum StopReason {
    /// The advisor recommended something other than `retry_feedback`
    /// (a waiver, a halt, or a bare continue): a decision for a person.
    Recommended(HandoffAction),
    /// The advice's feedback or rationale contains a destructive action.
    DestructiveAction {
        /// The pattern found.
        pattern: String,
    },
    /// The advice expects changes to files outside the allowed globs.
    FilesOutOfScope {
        /// The files out of scope.
        files: Vec<Utf8PathBuf>,
    },
    /// The advice's confidence is below the threshold.
    LowConfidence {
        /// The advice's confidence value ([`Confidence::value`](crate::Confidence::value)).
        confidence: f64,
        /// The threshold.
        threshold: f64,
    },
    /// A finding of this handoff was already a finding of an earlier
    /// attempt of the phase: retrying did not fix it.
    RepeatedBlocker {
        /// The earlier handoff.
        previous: HandoffId,
        /// The repeated findings' fingerprints.
        fingerprints: Vec<Digest>,
    },
    /// The run's CI retries are used up.
    RetryBudgetExhausted {
        /// Retries used.
        used: u32,
        /// The cap.
        max: u32,
    },
    /// The run's advisor money is used up.
    CostBudgetExhausted {
        /// Spent so far, including this advice.
        spent: Usd,
        /// The cap.
        max: Usd,
    },
    /// The advisor failed.
    AdvisorFailed(AdvisorError),
    /// The advice is malformed.
    MalformedAdvice(AdviceError),
    /// The phase's change weakens its own proof (a test skipped or
    /// deleted, fewer assertions, the runner's configuration or the
    /// profile edited): a person must see it.
    WeakensProof {
        /// What weakens it, one line each.
        weakenings: Vec<String>,
    },
}

impl StopReason {
    /// A stable snake_case code, written to the journal.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Recommended(HandoffAction::ContinueWithWaiver) => "waiver_recommended",
            Self::Recommended(HandoffAction::Halt) => "halt_recommended",
            Self::Recommended(HandoffAction::Continue) => "continue_recommended",
            Self::Recommended(HandoffAction::RetryFeedback) => "retry_recommended",
            Self::DestructiveAction { .. } => "destructive_action",
            Self::FilesOutOfScope { .. } => "files_out_of_scope",
            Self::LowConfidence { .. } => "low_confidence",
            Self::RepeatedBlocker { .. } => "repeated_blocker",
            Self::RetryBudgetExhausted { .. } => "retry_budget_exhausted",
            Self::CostBudgetExhausted { .. } => "cost_budget_exhausted",
            Self::AdvisorFailed(_) => "advisor_failed",
            Self::MalformedAdvice(_) => "malformed_advice",
            Self::WeakensProof { .. } => "weakens_proof",
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Recommended(action) => {
                write!(
                    f,
                    "the advisor recommends `{action}`, which needs an operator"
                )
            }
            Self::DestructiveAction { pattern } => {
                write!(f, "the advice contains a destructive action (`{pattern}`)")
            }
            Self::FilesOutOfScope { files } => {
                f.write_str("the advice expects changes outside the allowed files:")?;
                for file in files {
                    write!(f, " `{file}`")?;
                }
                Ok(())
            }
            Self::LowConfidence {
                confidence,
                threshold,
            } => write!(
                f,
                "the advice's confidence {confidence} is below the threshold {threshold}"
            ),
            Self::RepeatedBlocker {
                previous,
                fingerprints,
            } => write!(
                f,
                "{} finding(s) repeat from handoff `{previous}`",
                fingerprints.len()
            ),
            Self::RetryBudgetExhausted { used, max } => {
                write!(f, "the run used {used} of {max} CI retries")
            }
            Self::CostBudgetExhausted { spent, max } => {
                write!(f, "advisors cost {spent} of the run's {max}")
            }
            Self::AdvisorFailed(e) => write!(
                f,
                "the advisor failed: {}",
                orcho_core::error_chain(e.inner())
            ),
            Self::MalformedAdvice(e) => fmt::Display::fmt(e, f),
            Self::WeakensProof { weakenings } => write!(
                f,
                "the change weakens its own proof, which a person must see: {}",
                weakenings.join("; ")
            ),
        }
    }
}

/// Why a handoff is not one the autopilot acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ineligible {
    /// The profile turns the autopilot off (`autopilot.enabled: false`).
    Disabled,
    /// The handoff already has a decision.
    NotOpen(HandoffStateName),
    /// The verdict is approved: nothing to retry.
    Approved,
    /// `retry_feedback` is not on the menu.
    RetryUnavailable,
    /// There are no findings to give feedback on.
    NoFindings,
}

/// What the autopilot did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AutopilotOutcome {
    /// It decided `retry_feedback` as the CI agent. The run is not advanced:
    /// the engine resumes with [`HandoffStore::resume`] as for any decision.
    Retried {
        /// The recorded decision (provenance `ci_agent`, with the advice id);
        /// boxed, as the rarer and larger outcome.
        decision: Box<RecordedDecision<HandoffChoice>>,
        /// The advice it followed.
        advice: AdviceRecord,
    },
    /// It stopped; the handoff stays pending, and the stop is journaled.
    Stopped {
        /// Why.
        reason: StopReason,
        /// The advice, when it got that far (and the advice was well formed).
        advice: Option<AdviceRecord>,
    },
    /// It does not act on this handoff; nothing was written.
    NotEligible(Ineligible),
}

/// What [`Autopilot::prepare`] found.
#[derive(Debug)]
#[non_exhaustive]
pub enum Prepared {
    /// The outcome is known without asking the advisor (not eligible, or a
    /// stop that needs no advice, already journaled).
    Done(Box<AutopilotOutcome>),
    /// Ask the advisor, then pass its answer to [`Autopilot::conclude`].
    Ask(AutopilotCall),
}

/// An advisor call the autopilot is about to make; see
/// [`Autopilot::prepare`].
#[derive(Debug)]
pub struct AutopilotCall {
    handoff: PhaseHandoff,
    earlier: Vec<PhaseHandoff>,
    spent: Usd,
}

impl AutopilotCall {
    /// The handoff to advise on.
    pub fn handoff(&self) -> &PhaseHandoff {
        &self.handoff
    }

    /// The request to give the advisor.
    pub fn request<'a>(&'a self, phase_output: &'a str) -> AdviceRequest<'a> {
        AdviceRequest::new(&self.handoff, phase_output, &self.earlier)
    }
}

/// The bounded CI path: ask the advisor, check the safety stops, and when
/// they all pass, decide `retry_feedback` with the advice's feedback as the
/// CI agent, through [`HandoffStore::decide`].
///
/// Eligible handoffs are open, rejected or incomplete, offer
/// `retry_feedback`, and have findings. The checks, in order (the first to
/// fail stops): repeated blocker, retry budget, cost budget (before the
/// advisor is called, so that a spent budget costs nothing more), advisor
/// error, malformed advice, cost budget with this advice's cost, a
/// recommendation other than retry, destructive action, files out of scope,
/// confidence below the threshold, and a retry without feedback. A host
/// that knows the change weakens its own proof stops it before all of
/// them ([`stop_before`](Self::stop_before) with
/// [`StopReason::WeakensProof`]), as the engine does.
///
/// [`run`](Self::run) does small synchronous file I/O around the advisor
/// call. Hosts that keep file I/O off their async runtime call
/// [`prepare`](Self::prepare) and [`conclude`](Self::conclude) (both
/// synchronous, for `spawn_blocking`) around the advisor call themselves.
#[derive(Debug, Clone)]
pub struct Autopilot {
    store: HandoffStore,
    advisor: Arc<dyn Advisor>,
    policy: AutopilotPolicy,
    context: String,
}

impl Autopilot {
    /// An autopilot over `store`, asking `advisor`, within `policy`.
    pub fn new(store: HandoffStore, advisor: Arc<dyn Advisor>, policy: AutopilotPolicy) -> Self {
        Self {
            store,
            advisor,
            policy,
            context: String::new(),
        }
    }

    /// The policy.
    pub fn policy(&self) -> &AutopilotPolicy {
        &self.policy
    }

    /// Runs the autopilot on one handoff: [`prepare`](Self::prepare), ask
    /// the advisor, [`conclude`](Self::conclude).
    ///
    /// # Errors
    ///
    /// A [`HandoffError`] when the store cannot be read or written. Advisor
    /// failures are not errors: they are [`StopReason::AdvisorFailed`].
    pub async fn run(
        &self,
        run: &RunId,
        id: &HandoffId,
        phase_output: &str,
    ) -> Result<AutopilotOutcome, HandoffError> {
        let call = match self.prepare(run, id)? {
            Prepared::Ask(call) => call,
            Prepared::Done(outcome) => return Ok(*outcome),
        };
        let advice = self
            .advisor
            .advise(&call.request(phase_output).with_context(&self.context))
            .await;
        self.conclude(call, advice)
    }

    /// The synchronous first half of [`run`](Self::run), for hosts that
    /// keep file I/O off their async runtime (`spawn_blocking`): checks
    /// eligibility and the stops that need no advice (repeated blocker,
    /// retry and cost budgets). Either the outcome is already known, or the
    /// advisor must be asked with [`AutopilotCall::request`].
    ///
    /// # Errors
    ///
    /// A [`HandoffError`] when the store cannot be read or written.
    pub fn prepare(&self, run: &RunId, id: &HandoffId) -> Result<Prepared, HandoffError> {
        let state = self.store.state(run, id)?;
        let handoff = match state {
            HandoffState::Open(handoff) => handoff,
            HandoffState::Decided { .. }
            | HandoffState::Resumed { .. }
            | HandoffState::Halted { .. } => {
                return Ok(Prepared::Done(Box::new(AutopilotOutcome::NotEligible(
                    Ineligible::NotOpen(state.name()),
                ))));
            }
        };
        if let Some(ineligible) = ineligible(&handoff) {
            return Ok(Prepared::Done(Box::new(AutopilotOutcome::NotEligible(
                ineligible,
            ))));
        }
        let earlier = self.store.earlier_handoffs(run, &handoff.phase, id)?;
        if let Some(reason) = repeated_blocker(&handoff, &earlier) {
            return self
                .stop(run, id, reason, None)
                .map(|o| Prepared::Done(Box::new(o)));
        }
        let used = self.store.ci_retries(run)?;
        if used >= self.policy.max_retries {
            let reason = StopReason::RetryBudgetExhausted {
                used,
                max: self.policy.max_retries,
            };
            return self
                .stop(run, id, reason, None)
                .map(|o| Prepared::Done(Box::new(o)));
        }
        let spent = self.store.advice_spend(run)?;
        if let Some(max) = self.policy.max_cost
            && spent >= max
        {
            let reason = StopReason::CostBudgetExhausted { spent, max };
            return self
                .stop(run, id, reason, None)
                .map(|o| Prepared::Done(Box::new(o)));
        }
        Ok(Prepared::Ask(AutopilotCall {
            handoff,
            earlier,
            spent,
        }))
    }

    /// The synchronous second half of [`run`](Self::run): given what the
    /// advisor answered, records the advice, checks the remaining stops and,
    /// when all pass, decides `retry_feedback` as the CI agent.
    ///
    /// # Errors
    ///
    /// A [`HandoffError`] when the store cannot be read or written.
    pub fn conclude(
        &self,
        call: AutopilotCall,
        advice: Result<Advice, AdvisorError>,
    ) -> Result<AutopilotOutcome, HandoffError> {
        let AutopilotCall { handoff, spent, .. } = call;
        let (run, id) = (&handoff.run, &handoff.id);
        let advice = match advice {
            Ok(advice) => advice,
            Err(e) if e.is_malformed() => {
                let reason = StopReason::MalformedAdvice(AdviceError::new(
                    crate::advisor::AdviceErrorKind::Unreadable(orcho_core::error_chain(e.inner())),
                ));
                return self.stop(run, id, reason, None);
            }
            Err(e) => return self.stop(run, id, StopReason::AdvisorFailed(e), None),
        };
        if let Err(e) = advice.validate() {
            return self.stop(run, id, StopReason::MalformedAdvice(e), None);
        }
        let record =
            self.store
                .record_advice(run, id, self.advisor.name(), &advice, DecidedBy::CiAgent)?;

        if let Some(max) = self.policy.max_cost {
            let this = advice.usage.and_then(|u| u.usd).unwrap_or_default();
            let spent = spent + this;
            if spent > max {
                return self.stop(
                    run,
                    id,
                    StopReason::CostBudgetExhausted { spent, max },
                    Some(record),
                );
            }
        }
        if let Some(reason) = self.check_advice(&record) {
            return self.stop(run, id, reason, Some(record));
        }
        let Ok(choice) = HandoffChoice::retry(advice.retry_feedback.unwrap_or_default()) else {
            let reason = StopReason::MalformedAdvice(AdviceError::new(
                crate::advisor::AdviceErrorKind::MissingRetryFeedback,
            ));
            return self.stop(run, id, reason, Some(record));
        };
        let request =
            DecisionRequest::new(choice, DecidedBy::CiAgent).with_advice(record.id.clone());
        let decision = self.store.decide(run, id, request)?;
        Ok(AutopilotOutcome::Retried {
            decision: Box::new(decision),
            advice: record,
        })
    }

    fn check_advice(&self, record: &AdviceRecord) -> Option<StopReason> {
        let advice = &record.advice;
        if advice.recommended_action != HandoffAction::RetryFeedback {
            return Some(StopReason::Recommended(advice.recommended_action));
        }
        let texts: Vec<&str> = [
            advice.retry_feedback.as_deref().unwrap_or(""),
            &advice.rationale,
        ]
        .into_iter()
        .chain(advice.risks.iter().map(String::as_str))
        .collect();
        if let Some(pattern) = texts.iter().find_map(|t| self.policy.destructive.find(t)) {
            return Some(StopReason::DestructiveAction {
                pattern: pattern.to_owned(),
            });
        }
        if let Some(globs) = &self.policy.allowed_files {
            let out: Vec<Utf8PathBuf> = advice
                .expected_files
                .iter()
                .filter(|f| !globs.iter().any(|g| g.matches(f)))
                .cloned()
                .collect();
            if !out.is_empty() {
                return Some(StopReason::FilesOutOfScope { files: out });
            }
        }
        let confidence = advice.confidence.value().unwrap_or(0.0);
        if confidence < self.policy.min_confidence {
            return Some(StopReason::LowConfidence {
                confidence,
                threshold: self.policy.min_confidence,
            });
        }
        None
    }

    fn stop(
        &self,
        run: &RunId,
        id: &HandoffId,
        reason: StopReason,
        advice: Option<AdviceRecord>,
    ) -> Result<AutopilotOutcome, HandoffError> {
        self.store.note_autopilot_stop(
            run,
            id,
            reason.code(),
            reason.to_string(),
            advice.as_ref().map(|a| a.id.clone()),
        )?;
        Ok(AutopilotOutcome::Stopped { reason, advice })
    }
}

impl Autopilot {
    /// Stops on the open handoff `id` for a reason the host found before
    /// asking anything (the phase's change weakens its own proof): the
    /// stop is journaled, and the handoff stays for a person. A handoff
    /// the autopilot would not act on anyway is left as it is.
    ///
    /// # Errors
    ///
    /// A [`HandoffError`] when the store cannot be read or written.
    pub fn stop_before(
        &self,
        run: &RunId,
        id: &HandoffId,
        reason: StopReason,
    ) -> Result<AutopilotOutcome, HandoffError> {
        let state = self.store.state(run, id)?;
        let HandoffState::Open(handoff) = state else {
            return Ok(AutopilotOutcome::NotEligible(Ineligible::NotOpen(
                state.name(),
            )));
        };
        if let Some(ineligible) = ineligible(&handoff) {
            return Ok(AutopilotOutcome::NotEligible(ineligible));
        }
        self.stop(run, id, reason, None)
    }
}

impl Autopilot {
    orcho_core::setters! {
        /// Gives the advisor the host's `context` with each request (see
        /// [`AdviceRequest::context`]).
        pub fn with_context(context: impl Into<String>);
    }
}

fn ineligible(handoff: &PhaseHandoff) -> Option<Ineligible> {
    if handoff.verdict == Verdict::Approved {
        return Some(Ineligible::Approved);
    }
    if !handoff
        .available_actions
        .contains(HandoffAction::RetryFeedback)
    {
        return Some(Ineligible::RetryUnavailable);
    }
    if handoff.findings.is_empty() {
        return Some(Ineligible::NoFindings);
    }
    None
}

/// Findings from `medium` up block; lower ones are remarks.
const BLOCKING: Severity = Severity::Medium;

/// The most recent earlier handoff sharing a finding with this one, judged
/// by severity: a repeated finding stops the autopilot unless every
/// repeated one is below [`BLOCKING`] and the retry fixed a blocking one
/// (a low-severity remark that survives a retry that fixed the real
/// failures is progress, not a loop).
fn repeated_blocker(handoff: &PhaseHandoff, earlier: &[PhaseHandoff]) -> Option<StopReason> {
    let current: Vec<Digest> = handoff.findings.iter().map(|f| f.fingerprint()).collect();
    earlier.iter().rev().find_map(|previous| {
        let repeated: Vec<&Finding> = previous
            .findings
            .iter()
            .filter(|f| current.contains(&f.fingerprint()))
            .collect();
        if repeated.is_empty() {
            return None;
        }
        let fixed_a_blocker = previous
            .findings
            .iter()
            .any(|f| f.severity >= BLOCKING && !current.contains(&f.fingerprint()));
        if fixed_a_blocker && repeated.iter().all(|f| f.severity < BLOCKING) {
            return None;
        }
        let mut fingerprints: Vec<Digest> = repeated.iter().map(|f| f.fingerprint()).collect();
        fingerprints.sort();
        fingerprints.dedup();
        Some(StopReason::RepeatedBlocker {
            previous: previous.id.clone(),
            fingerprints,
        })
    })
}

/// An [`AutopilotPolicy`] is invalid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AutopilotPolicyError {
    /// The confidence threshold is not in `0..=1`.
    #[error("the confidence threshold {0} is not a number in 0..=1")]
    Threshold(f64),
    /// An allowed-files glob is malformed.
    #[error("an allowed-files glob is invalid")]
    Glob(#[source] GlobError),
    /// A destructive pattern is blank.
    #[error("a destructive-action pattern is blank")]
    BlankPattern,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destructive_patterns_match_words_in_order() {
        let p = DestructivePatterns::default();
        assert_eq!(p.find("please run rm -rf target/"), Some("rm -rf"));
        assert_eq!(
            p.find("`git reset --hard HEAD~1`"),
            Some("git reset --hard")
        );
        assert_eq!(p.find("git push -f origin"), Some("git push -f"));
        assert_eq!(p.find("Drop Table users"), Some("drop table"));
        // Said in words, in the risks or notes of advice.
        assert_eq!(
            p.find("A force push may be needed afterwards."),
            Some("force push")
        );
        assert_eq!(p.find("then force-push the branch"), Some("force-push"));
        assert_eq!(p.find("remove the -rf flag docs\nthen rm things"), None);
        // Flags in any order and grouping, long or short.
        assert_eq!(p.find("rm -rfv x"), Some("rm -rf"));
        assert_eq!(p.find("rm -r -f build"), Some("rm -rf"));
        assert_eq!(p.find("rm --recursive --force build"), Some("rm -rf"));
        assert_eq!(p.find("run `git clean -xdf` first"), Some("git clean -fd"));
        assert_eq!(p.find("git push origin +main"), Some("git push +"));
        assert_eq!(p.find("rm -r build"), None, "no -f: asks before deleting");
        assert_eq!(p.find("git push origin main"), None);
        assert_eq!(
            p.find("use the --force-with-lease docs, then git status"),
            None
        );
        let custom = DestructivePatterns::new(["kubectl delete"]).unwrap();
        assert_eq!(
            custom.find("kubectl -n prod delete pod x"),
            Some("kubectl delete")
        );
        assert_eq!(custom.find("rm -rf /"), None);
        assert!(DestructivePatterns::new(["  "]).is_err());
    }
}
