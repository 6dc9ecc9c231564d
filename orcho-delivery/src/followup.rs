//! Correction follow-ups: the child run a `fix` delivery decision starts,
//! and the guard that stops a follow-up from looping.
//!
//! A `fix` decision on a rejected release does not resume the run (it
//! reached a terminal rejection); it produces a [`FollowUpSpec`]: the parent
//! run id, the rejected findings and receipt gaps as the child's input, and
//! the same target checkout. The engine starts a new run from it.
//!
//! Each follow-up carries its parent's [`BlockerSet`] (the
//! [fingerprints](orcho_core::Finding::fingerprint) of its findings and the
//! identities of its gaps) in a [`FollowUpLink`]. When the child is
//! rejected again, the [`FollowUpGuard`] compares the two sets: a child
//! that resolved none of its parent's blockers made no progress, and a
//! further follow-up is refused with a typed [`NonConvergence`] instead of
//! looping. The guard also caps the number of generations.
//!
//! ```
//! use orcho_core::{Finding, Severity};
//! use orcho_delivery::{BlockerSet, FollowUpGuard, FollowUpLink};
//!
//! let failing = vec![Finding::new("tests", Severity::High, "test `parse_empty` failed")];
//! let parent = FollowUpLink::new("run-1".parse()?, 1, BlockerSet::new(&failing, &[]));
//!
//! // The follow-up failed the same way (with another line number): no progress.
//! let again = BlockerSet::new(&[failing[0].clone().with_line(12)], &[]);
//! let stop = FollowUpGuard::default().check(&parent, &again).unwrap_err();
//! assert!(stop.is_repeated_blockers());
//!
//! // It fixed that test and broke another: progress, a follow-up may continue.
//! let other = BlockerSet::new(&[Finding::new("tests", Severity::High, "test `parse_list` failed")], &[]);
//! let progress = FollowUpGuard::default().check(&parent, &other)?;
//! assert_eq!((progress.resolved(), progress.added()), (1, 1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::{collections::BTreeMap, fmt, fmt::Write as _};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{Digest, Finding, RunId};

use orcho_handoff::{DeliveryAction, decision::RecordedDecision, delivery::DeliveryChoice};
use orcho_receipts::Gap;

use crate::gate::DeliveryGate;

/// The context of gap identities in a [`BlockerSet`].
const GAP_CONTEXT: &str = "orcho receipt gap blocker v1";

/// The default cap on follow-up generations ([`FollowUpGuard`]).
pub const DEFAULT_MAX_GENERATIONS: u32 = 5;

/// What blocked a release: one stable digest per finding
/// ([`Finding::fingerprint`]) and per receipt gap (its command and status),
/// with a label for messages.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BlockerSet {
    blockers: BTreeMap<Digest, String>,
}

impl BlockerSet {
    /// The blockers of a rejection: its findings and its receipt gaps.
    pub fn new(findings: &[Finding], gaps: &[Gap]) -> Self {
        let mut blockers = BTreeMap::new();
        for finding in findings {
            blockers.insert(
                finding.fingerprint(),
                format!("{}: {}", finding.source, finding.title),
            );
        }
        for gap in gaps {
            let identity = format!("{}\0{}", gap.command(), gap.status());
            blockers.insert(
                Digest::derive(GAP_CONTEXT, identity.as_bytes()),
                format!("receipt `{}`: {}", gap.command(), gap.status()),
            );
        }
        Self { blockers }
    }

    pub(crate) fn from_entries(entries: impl IntoIterator<Item = (Digest, String)>) -> Self {
        Self {
            blockers: entries.into_iter().collect(),
        }
    }

    /// How many blockers.
    pub fn len(&self) -> usize {
        self.blockers.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.blockers.is_empty()
    }

    /// Whether the blocker with this digest is in the set.
    pub fn contains(&self, digest: &Digest) -> bool {
        self.blockers.contains_key(digest)
    }

    /// The blockers, by digest, with their labels, in digest order.
    pub fn iter(&self) -> impl Iterator<Item = (&Digest, &str)> {
        self.blockers.iter().map(|(d, l)| (d, l.as_str()))
    }
}

/// What a follow-up run knows of its parent: the parent run, its own
/// generation (1 for the first follow-up) and the blockers it was started
/// to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowUpLink {
    pub(crate) parent: RunId,
    pub(crate) generation: u32,
    pub(crate) blockers: BlockerSet,
}

impl FollowUpLink {
    /// A link to `parent`, for the follow-up of this generation.
    pub fn new(parent: RunId, generation: u32, blockers: BlockerSet) -> Self {
        Self {
            parent,
            generation,
            blockers,
        }
    }

    orcho_core::getters! {
        /// The parent run.
        pub fn parent(&self) -> &RunId;
        /// The follow-up's generation: 1 for a follow-up of an original run.
        pub fn generation(&self) -> u32;
        /// The blockers the follow-up was started to fix.
        pub fn blockers(&self) -> &BlockerSet;
    }
}

/// A follow-up that made progress: how many of its parent's blockers it
/// resolved, and how many new ones it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    resolved: usize,
    added: usize,
}

impl Progress {
    orcho_core::getters! {
        /// The parent's blockers that are gone.
        pub fn resolved(&self) -> usize;
        /// Blockers the parent did not have.
        pub fn added(&self) -> usize;
    }
}

/// Why a further follow-up is refused: the typed stop of the guard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NonConvergence {
    /// The follow-up resolved none of its parent's blockers.
    #[error("{}", repeated_message(parent, *generation, repeated))]
    RepeatedBlockers {
        /// The parent run.
        parent: RunId,
        /// The follow-up's generation.
        generation: u32,
        /// The labels of the blockers still there.
        repeated: Vec<String>,
    },
    /// The chain of follow-ups reached the cap.
    #[error("follow-up generation {generation} reached the cap of {max} generations")]
    TooManyGenerations {
        /// The generation that would be started.
        generation: u32,
        /// The cap.
        max: u32,
    },
}

fn repeated_message(parent: &RunId, generation: u32, repeated: &[String]) -> String {
    if repeated.is_empty() {
        // Everything the parent was rejected for was waived: there is
        // nothing to measure progress by, and the follow-up was rejected
        // again.
        format!(
            "follow-up generation {generation} of run `{parent}` was rejected again, and its \
             parent left no unwaived blocker to measure progress by; stopping instead of looping"
        )
    } else {
        format!(
            "follow-up generation {generation} of run `{parent}` resolved none of its {} \
             blockers ({}); stopping instead of looping",
            repeated.len(),
            repeated.join("; ")
        )
    }
}

impl NonConvergence {
    /// Whether the stop is for repeated blockers.
    pub fn is_repeated_blockers(&self) -> bool {
        matches!(self, Self::RepeatedBlockers { .. })
    }

    /// The reason's code: `repeated_blockers` or `too_many_generations`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::RepeatedBlockers { .. } => "repeated_blockers",
            Self::TooManyGenerations { .. } => "too_many_generations",
        }
    }
}

/// The non-convergence guard of correction follow-ups.
///
/// A follow-up (generation `n`) that is rejected again may start
/// generation `n + 1` only if it resolved at least one of its parent's
/// blockers, and `n + 1` is at most the cap. "Resolved none" includes the
/// case of two rejections that both name no blocker at all: nothing shows
/// progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FollowUpGuard {
    max_generations: u32,
}

impl Default for FollowUpGuard {
    /// A cap of [`DEFAULT_MAX_GENERATIONS`].
    fn default() -> Self {
        Self {
            max_generations: DEFAULT_MAX_GENERATIONS,
        }
    }
}

impl FollowUpGuard {
    /// A guard with this cap on generations (at least 1).
    pub fn with_max_generations(max_generations: u32) -> Self {
        Self {
            max_generations: max_generations.max(1),
        }
    }

    /// The cap on generations.
    pub fn max_generations(&self) -> u32 {
        self.max_generations
    }

    /// Checks a rejected follow-up against its parent: may it start another
    /// generation?
    ///
    /// # Errors
    ///
    /// [`NonConvergence`] when `current` still holds every blocker of
    /// `link`, or the next generation would pass the cap.
    pub fn check(
        &self,
        link: &FollowUpLink,
        current: &BlockerSet,
    ) -> Result<Progress, NonConvergence> {
        let resolved = link
            .blockers
            .blockers
            .keys()
            .filter(|d| !current.contains(d))
            .count();
        let added = current
            .blockers
            .keys()
            .filter(|d| !link.blockers.contains(d))
            .count();
        if resolved == 0 {
            return Err(NonConvergence::RepeatedBlockers {
                parent: link.parent.clone(),
                generation: link.generation,
                repeated: link.blockers.blockers.values().cloned().collect(),
            });
        }
        let next = link.generation.saturating_add(1);
        if next > self.max_generations {
            return Err(NonConvergence::TooManyGenerations {
                generation: next,
                max: self.max_generations,
            });
        }
        Ok(Progress { resolved, added })
    }
}

/// The input of a correction follow-up: a new run that repairs what the
/// parent's release was rejected for, in the same checkout.
#[derive(Debug, Clone, PartialEq)]
pub struct FollowUpSpec {
    pub(crate) parent: RunId,
    pub(crate) generation: u32,
    pub(crate) checkout: Utf8PathBuf,
    pub(crate) base: String,
    pub(crate) findings: Vec<Finding>,
    pub(crate) gaps: Vec<Gap>,
    pub(crate) note: Option<String>,
    pub(crate) waived: Vec<String>,
    pub(crate) waived_findings: Vec<Finding>,
}

impl FollowUpSpec {
    /// The follow-up of a `fix` decision on `gate`.
    ///
    /// The gate's own [`FollowUpLink`], if its run is itself a follow-up,
    /// is checked with `guard` first.
    ///
    /// # Errors
    ///
    /// [`FollowUpError::is_not_a_fix`] when the decision is not `fix` or is
    /// about another run, and [`FollowUpError::non_convergence`] when the
    /// guard stops the chain.
    pub fn from_fix(
        gate: &DeliveryGate,
        decision: &RecordedDecision<DeliveryChoice>,
        guard: &FollowUpGuard,
    ) -> Result<Self, FollowUpError> {
        let d = decision.decision();
        if d.payload().action() != DeliveryAction::Fix || d.run() != gate.run() {
            return Err(FollowUpError::not_a_fix(
                gate.run(),
                d.run(),
                d.payload().action(),
            ));
        }
        Self::for_gate(gate, d.payload().note().map(str::to_owned), guard)
    }

    pub(crate) fn for_gate(
        gate: &DeliveryGate,
        note: Option<String>,
        guard: &FollowUpGuard,
    ) -> Result<Self, FollowUpError> {
        let generation = match gate.follow_up_of() {
            Some(link) => {
                guard
                    .check(link, &gate.blockers())
                    .map_err(|e| FollowUpError::stopped(gate.run(), e))?;
                link.generation.saturating_add(1)
            }
            None => 1,
        };
        if generation > guard.max_generations() {
            return Err(FollowUpError::stopped(
                gate.run(),
                NonConvergence::TooManyGenerations {
                    generation,
                    max: guard.max_generations(),
                },
            ));
        }
        Ok(Self {
            parent: gate.run().clone(),
            generation,
            checkout: gate.target().to_owned(),
            base: gate.base().to_owned(),
            findings: gate.findings().to_vec(),
            gaps: gate.gaps().to_vec(),
            note,
            waived: gate.waivers().to_vec(),
            waived_findings: gate.waived_findings().to_vec(),
        })
    }

    orcho_core::getters! {
        /// The parent run.
        pub fn parent(&self) -> &RunId;
        /// This follow-up's generation (1 for a follow-up of an original run).
        pub fn generation(&self) -> u32;
        /// The checkout the follow-up works in: the parent's target checkout.
        pub fn checkout(&self) -> &Utf8Path;
        /// The commit the parent run started from.
        pub fn base(&self) -> &str;
        /// The parent's rejected findings: the follow-up's input.
        pub fn findings(&self) -> &[Finding];
        /// The parent's receipt gaps: the follow-up's input.
        pub fn gaps(&self) -> &[Gap];
    }

    /// The operator's note on the `fix` decision, if any.
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// The waivers the parent's release stood on, as its gate shows them:
    /// what was accepted as it is, and need not be fixed.
    pub fn waived(&self) -> &[String] {
        &self.waived
    }

    /// The findings those waivers took off the parent's release.
    pub fn waived_findings(&self) -> &[Finding] {
        &self.waived_findings
    }

    /// The blockers the follow-up must fix.
    pub fn blockers(&self) -> BlockerSet {
        BlockerSet::new(&self.findings, &self.gaps)
    }

    /// What the follow-up run's own delivery gate must know of this
    /// parent ([`DeliverySpec::with_follow_up`](crate::DeliverySpec::with_follow_up)).
    pub fn link(&self) -> FollowUpLink {
        FollowUpLink::new(self.parent.clone(), self.generation, self.blockers())
    }

    /// A prompt-ready text of the follow-up's input: the operator's note,
    /// every blocker of the parent (its findings and the receipts not
    /// present) and what was waived.
    pub fn to_markdown(&self) -> String {
        let mut out = format!(
            "Correction follow-up {} of run `{}`: {}.\n",
            self.generation,
            self.parent,
            self.counted()
        );
        out.push_str(
            "The parent's change is already here: its diff is applied to this checkout, on the \
             same base. Correct it; do not write it again.\n",
        );
        if let Some(note) = &self.note {
            out.push_str("\nOperator note: ");
            out.push_str(note);
            out.push('\n');
        }
        if !self.findings.is_empty() {
            out.push_str("\nRejected findings:\n");
            for f in &self.findings {
                finding_line(&mut out, "", f);
            }
        }
        if !self.gaps.is_empty() {
            out.push_str("\nRequired receipts not present:\n");
            for g in &self.gaps {
                let _ = writeln!(
                    out,
                    "- `{}`: {} ({}); next: {}",
                    g.command(),
                    g.status(),
                    g.reason(),
                    g.next_action()
                );
            }
        }
        if !self.waived_findings.is_empty() || !self.waived.is_empty() {
            out.push_str("\nWaived in the parent (accepted as they are; not to fix):\n");
            for f in &self.waived_findings {
                finding_line(&mut out, "[waived] ", f);
            }
            for w in &self.waived {
                let _ = writeln!(out, "- waiver: {w}");
            }
        }
        out
    }

    /// What the follow-up is for, counted: `2 blockers and 1 waived`,
    /// `1 waived blocker`, or `no blocker named` when the parent named none.
    pub fn counted(&self) -> String {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let blockers = self.blockers().len();
        let waived = if self.waived_findings.is_empty() {
            self.waived.len()
        } else {
            self.waived_findings.len()
        };
        match (blockers, waived) {
            (0, 0) => "no blocker named".to_owned(),
            (0, w) => format!("{w} waived blocker{}", plural(w)),
            (b, 0) => format!("{b} blocker{}", plural(b)),
            (b, w) => format!("{b} blocker{} and {w} waived", plural(b)),
        }
    }
}

/// One finding of a follow-up's brief, with the start of its detail.
fn finding_line(out: &mut String, mark: &str, f: &Finding) {
    let place = match (&f.file, f.line) {
        (Some(file), Some(line)) => format!(" ({file}:{line})"),
        (Some(file), None) => format!(" ({file})"),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "- {mark}[{}] {}: {}{place}",
        f.severity, f.source, f.title
    );
    // The detail's first lines say what the title only names (a failed
    // command's output); the whole of it is in the parent's evidence.
    const DETAIL_LINES: usize = 12;
    for line in f.detail.trim().lines().take(DETAIL_LINES) {
        let _ = writeln!(out, "  {line}");
    }
}

impl fmt::Display for FollowUpSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "follow-up {} of `{}` ({})",
            self.generation,
            self.parent,
            self.counted()
        )
    }
}

/// A correction follow-up cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot start a correction follow-up of run `{run}`")]
pub struct FollowUpError {
    run: RunId,
    #[source]
    kind: FollowUpErrorKind,
}

/// Why a follow-up cannot be built; see [`FollowUpError::kind`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FollowUpErrorKind {
    /// The decision is not a `fix` of this run.
    #[error("the decision is `{action}` of run `{decision_run}`, not `fix` of this run")]
    NotAFix {
        /// The decision's run.
        decision_run: RunId,
        /// The decision's action.
        action: DeliveryAction,
    },
    /// The guard stopped the chain of follow-ups.
    #[error(transparent)]
    Stopped(NonConvergence),
}

impl FollowUpError {
    #[cold]
    pub(crate) fn not_a_fix(run: &RunId, decision_run: &RunId, action: DeliveryAction) -> Self {
        Self {
            run: run.clone(),
            kind: FollowUpErrorKind::NotAFix {
                decision_run: decision_run.clone(),
                action,
            },
        }
    }

    #[cold]
    pub(crate) fn stopped(run: &RunId, stop: NonConvergence) -> Self {
        Self {
            run: run.clone(),
            kind: FollowUpErrorKind::Stopped(stop),
        }
    }

    orcho_core::getters! {
        /// The parent run.
        pub fn run(&self) -> &RunId;
        /// What went wrong.
        pub fn kind(&self) -> &FollowUpErrorKind;
    }

    /// Whether the decision is not a `fix` of this run.
    pub fn is_not_a_fix(&self) -> bool {
        matches!(self.kind, FollowUpErrorKind::NotAFix { .. })
    }

    /// The guard's typed stop, when the chain was stopped.
    pub fn non_convergence(&self) -> Option<&NonConvergence> {
        match &self.kind {
            FollowUpErrorKind::Stopped(stop) => Some(stop),
            FollowUpErrorKind::NotAFix { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use orcho_core::Severity;

    use super::*;
    use orcho_receipts::GapStatus;

    fn finding(title: &str) -> Finding {
        Finding::new("tests", Severity::High, title)
    }

    fn link(findings: &[Finding]) -> FollowUpLink {
        FollowUpLink::new("run-1".parse().unwrap(), 1, BlockerSet::new(findings, &[]))
    }

    #[test]
    fn nothing_resolved_is_no_progress_even_with_new_blockers() {
        let parent = link(&[finding("a")]);
        let current = BlockerSet::new(&[finding("a"), finding("b")], &[]);
        let stop = FollowUpGuard::default()
            .check(&parent, &current)
            .unwrap_err();
        assert_eq!(
            stop.to_string(),
            "follow-up generation 1 of run `run-1` resolved none of its 1 blockers (tests: a); stopping instead of looping"
        );
    }

    #[test]
    fn two_rejections_without_blockers_are_no_progress() {
        let stop = FollowUpGuard::default()
            .check(&link(&[]), &BlockerSet::default())
            .unwrap_err();
        assert!(stop.is_repeated_blockers());
    }

    #[test]
    fn gaps_are_blockers_by_command_and_status() {
        let gap = |status| {
            Gap::new(
                "test".parse().unwrap(),
                status,
                "r",
                orcho_receipts::NextAction::Rerun,
            )
        };
        let missing = BlockerSet::new(&[], &[gap(GapStatus::Missing)]);
        assert_eq!(missing, BlockerSet::new(&[], &[gap(GapStatus::Missing)]));
        assert_ne!(missing, BlockerSet::new(&[], &[gap(GapStatus::Failed)]));
        let parent = FollowUpLink::new("run-1".parse().unwrap(), 1, missing);
        let progress = FollowUpGuard::default()
            .check(&parent, &BlockerSet::new(&[], &[gap(GapStatus::Failed)]))
            .unwrap();
        assert_eq!((progress.resolved(), progress.added()), (1, 1));
    }

    #[test]
    fn the_cap_is_at_least_one() {
        assert_eq!(FollowUpGuard::with_max_generations(0).max_generations(), 1);
        let parent = link(&[finding("a")]);
        let stop = FollowUpGuard::with_max_generations(1)
            .check(&parent, &BlockerSet::default())
            .unwrap_err();
        assert_eq!(stop.code(), "too_many_generations");
    }
}
