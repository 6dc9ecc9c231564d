//! Pre-run intake: what happens to uncommitted changes in the checkout
//! before a run starts.
//!
//! [`detect_intake`] reports the checkout's tracked edits (staged or not),
//! its untracked files, and how many there are. When there are any, the
//! engine asks the intake question ([`Intakes::open`]) and somebody decides
//! an [`IntakeAction`]:
//!
//! | action | effect |
//! |---|---|
//! | `include` | the changes become a *seed patch* kept with the run (`git diff --binary`, untracked files included, built in a private index: the user's index is never touched); the run's worktree gets it with `git apply --check`, then `git apply` ([`Intakes::seed`]). A seed that does not apply is a typed error, never a silent start from `HEAD`. |
//! | `exclude` | the run starts from `HEAD`; the changes stay in the checkout. |
//! | `commit` | the changes are committed first (`git add --all`, `git commit`); the run starts from that commit. |
//! | `halt` | the run does not start. |
//!
//! The decision is recorded through the shared
//! [`DecisionSlot`] (first writer wins, an
//! identical decision replays, a different one is a conflict), and
//! [`Intakes::apply`] acts on it once, recording the [`IntakeOutcome`].
//! The engine then creates the run's worktree at
//! [`IntakeOutcome::start`] and, after `include`, calls [`Intakes::seed`].
//!
//! Files under the store directory (for example `.orcho/` inside the
//! checkout) are never counted, carried or committed.
//!
//! Layout, under the store root:
//!
//! ```text
//! runs/<run>/intake/intake.json      the question: what was detected (written once)
//! runs/<run>/intake/seed.patch       the seed patch of `include`
//! runs/<run>/intake/outcome.json     what applying the decision did (written once)
//! runs/<run>/decisions/intake.json   the decision (shared decision slot)
//! ```

use std::{fmt, str::FromStr, sync::Arc};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{
    Clock, Digest, HandoffId, RunId, Timestamp,
    fs::{self, LockFile},
    schema,
};

use crate::{
    decision::{DecisionPayload, DecisionRequest, DecisionSlot, RecordedDecision},
    delivery::absolute,
    error::{IntakeChoiceError, IntakeError, IntakeErrorKind, UnknownActionError},
    format::intake::{IntakeChoiceRepr, IntakeDoc, IntakeOutcomeDoc},
    git::{Git, StatusEntry},
};

/// The context of seed-patch digests.
pub const SEED_DIGEST_CONTEXT: &str = "orcho intake seed patch v1";

/// The decision point id of a run's intake question.
pub const INTAKE_POINT: &str = "intake";

/// What can be decided about uncommitted changes before a run.
///
/// ```
/// use orcho_handoff::IntakeAction;
///
/// assert_eq!("include".parse::<IntakeAction>()?, IntakeAction::Include);
/// assert_eq!(IntakeAction::Commit.to_string(), "commit");
/// # Ok::<(), orcho_handoff::UnknownActionError>(())
/// ```
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum IntakeAction {
    /// Carry the changes into the run's worktree as a seed patch.
    Include,
    /// Start from `HEAD`; leave the changes in the checkout.
    Exclude,
    /// Commit the changes first; start from that commit.
    Commit,
    /// Do not start the run.
    Halt,
}

impl IntakeAction {
    /// Every action, in menu order.
    pub const ALL: [Self; 4] = [Self::Include, Self::Exclude, Self::Commit, Self::Halt];

    /// The snake_case spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Include => "include",
            Self::Exclude => "exclude",
            Self::Commit => "commit",
            Self::Halt => "halt",
        }
    }
}

impl fmt::Display for IntakeAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for IntakeAction {
    type Err = UnknownActionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|a| a.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownActionError::new("intake", s, "include, exclude, commit, halt"))
    }
}

/// An intake decision: the action and, for `commit`, the commit message.
/// The payload of the intake decision record (`{"action": …, "message": …}`).
///
/// ```
/// use orcho_handoff::{IntakeAction, IntakeChoice};
///
/// let choice = IntakeChoice::commit_with_message("wip: before the agent run")?;
/// assert_eq!(choice.action(), IntakeAction::Commit);
/// assert!(IntakeChoice::from_parts(IntakeAction::Include, Some("m".into())).is_err());
/// # Ok::<(), orcho_handoff::IntakeChoiceError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "IntakeChoiceRepr", try_from = "IntakeChoiceRepr")]
pub struct IntakeChoice {
    pub(crate) action: IntakeAction,
    pub(crate) message: Option<String>,
}

impl IntakeChoice {
    /// A choice without a message (`commit` then uses a default message).
    pub fn new(action: IntakeAction) -> Self {
        Self {
            action,
            message: None,
        }
    }

    /// `commit` with this message.
    ///
    /// # Errors
    ///
    /// When the message is blank.
    pub fn commit_with_message(message: impl Into<String>) -> Result<Self, IntakeChoiceError> {
        Self::from_parts(IntakeAction::Commit, Some(message.into()))
    }

    /// A choice from its parts, validated.
    ///
    /// # Errors
    ///
    /// A message on another action than `commit`, or a blank message.
    pub fn from_parts(
        action: IntakeAction,
        message: Option<String>,
    ) -> Result<Self, IntakeChoiceError> {
        if let Some(message) = &message {
            if action != IntakeAction::Commit {
                return Err(IntakeChoiceError::MessageNotAllowed(action));
            }
            if message.trim().is_empty() {
                return Err(IntakeChoiceError::BlankMessage);
            }
        }
        Ok(Self { action, message })
    }

    /// The action.
    pub fn action(&self) -> IntakeAction {
        self.action
    }

    /// The commit message (`commit` only).
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }
}

impl DecisionPayload for IntakeChoice {
    const KIND: &'static str = "intake";

    fn label(&self) -> String {
        self.action.as_str().to_owned()
    }
}

/// How a tracked file differs from `HEAD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ChangeKind {
    /// Its content or mode changed.
    Modified,
    /// It is new and staged.
    Added,
    /// It was deleted.
    Deleted,
    /// It has unresolved merge conflicts.
    Unmerged,
}

/// One tracked path with uncommitted changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrackedChange {
    pub(crate) path: Utf8PathBuf,
    pub(crate) kind: ChangeKind,
    pub(crate) staged: bool,
}

impl TrackedChange {
    /// The path, relative to the checkout root.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }

    /// How it changed.
    pub fn kind(&self) -> ChangeKind {
        self.kind
    }

    /// Whether (some of) the change is staged.
    pub fn is_staged(&self) -> bool {
        self.staged
    }

    fn from_status(e: StatusEntry) -> Self {
        let (x, y) = (e.index, e.worktree);
        let kind = if x == b'U' || y == b'U' || (x == b'A' && y == b'A') || (x == b'D' && y == b'D')
        {
            ChangeKind::Unmerged
        } else if x == b'D' || y == b'D' {
            ChangeKind::Deleted
        } else if x == b'A' {
            ChangeKind::Added
        } else {
            ChangeKind::Modified
        };
        Self {
            path: e.path,
            kind,
            staged: x != b' ',
        }
    }
}

/// What [`detect_intake`] found in a checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntakeReport {
    pub(crate) checkout: Utf8PathBuf,
    pub(crate) head: String,
    pub(crate) tracked: Vec<TrackedChange>,
    pub(crate) untracked: Vec<Utf8PathBuf>,
}

impl IntakeReport {
    /// The checkout.
    pub fn checkout(&self) -> &Utf8Path {
        &self.checkout
    }

    /// The commit `HEAD` pointed at.
    pub fn head(&self) -> &str {
        &self.head
    }

    /// Tracked paths with uncommitted changes, in path order.
    pub fn tracked(&self) -> &[TrackedChange] {
        &self.tracked
    }

    /// Untracked, non-ignored files, in path order.
    pub fn untracked(&self) -> &[Utf8PathBuf] {
        &self.untracked
    }

    /// How many untracked files.
    pub fn untracked_count(&self) -> usize {
        self.untracked.len()
    }

    /// How many paths in all.
    pub fn count(&self) -> usize {
        self.tracked.len() + self.untracked.len()
    }

    /// Whether there is nothing to decide about.
    pub fn is_clean(&self) -> bool {
        self.count() == 0
    }
}

/// Looks for uncommitted changes in `checkout` (a git working tree root),
/// ignoring anything under `store` when the store directory lies inside
/// the checkout.
///
/// # Errors
///
/// An [`IntakeError`] when git cannot read the checkout (not a repository,
/// no commit yet).
///
/// # Examples
///
/// ```no_run
/// let report = orcho_handoff::detect_intake(".".into(), ".orcho".into())?;
/// if !report.is_clean() {
///     println!("{} tracked edits, {} untracked files", report.tracked().len(), report.untracked_count());
/// }
/// # Ok::<(), orcho_handoff::IntakeError>(())
/// ```
pub fn detect_intake(checkout: &Utf8Path, store: &Utf8Path) -> Result<IntakeReport, IntakeError> {
    let err = |kind| IntakeError::new("detect uncommitted changes in", checkout, kind);
    let git = Git::new(checkout);
    let head = git
        .head()
        .map_err(|e| err(IntakeErrorKind::Git(Box::new(e))))?;
    let excluded = store_prefix(checkout, store);
    let mut tracked = Vec::new();
    let mut untracked = Vec::new();
    for entry in git
        .status()
        .map_err(|e| err(IntakeErrorKind::Git(Box::new(e))))?
    {
        if excluded
            .as_deref()
            .is_some_and(|p| entry.path.starts_with(p))
        {
            continue;
        }
        if entry.is_untracked() {
            untracked.push(entry.path);
        } else {
            tracked.push(TrackedChange::from_status(entry));
        }
    }
    tracked.sort_by(|a, b| a.path.cmp(&b.path));
    untracked.sort();
    Ok(IntakeReport {
        checkout: checkout.to_owned(),
        head,
        tracked,
        untracked,
    })
}

/// The store directory relative to the checkout, when it lies inside it.
fn store_prefix(checkout: &Utf8Path, store: &Utf8Path) -> Option<Utf8PathBuf> {
    let checkout = absolute(checkout).ok()?;
    let store = absolute(store).ok()?;
    store
        .strip_prefix(&checkout)
        .ok()
        .filter(|p| !p.as_str().is_empty())
        .map(Utf8Path::to_owned)
}

/// The seed patch of an `include` decision, kept with the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedPatch {
    pub(crate) path: Utf8PathBuf,
    pub(crate) digest: Digest,
    pub(crate) files: usize,
}

impl SeedPatch {
    /// The patch file.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }

    /// Its digest (context [`SEED_DIGEST_CONTEXT`]).
    pub fn digest(&self) -> Digest {
        self.digest
    }

    /// How many files it changes.
    pub fn files(&self) -> usize {
        self.files
    }
}

/// What applying an intake decision did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IntakeOutcome {
    /// Start from `start`, then seed the worktree with this patch
    /// ([`Intakes::seed`]).
    Included {
        /// The commit the run's worktree starts from.
        start: String,
        /// The seed patch.
        seed: SeedPatch,
    },
    /// Start from `start` (`HEAD`); the changes stay in the checkout.
    Excluded {
        /// The commit the run's worktree starts from.
        start: String,
    },
    /// The changes were committed; start from that commit.
    Committed {
        /// The new commit.
        commit: String,
    },
    /// The run does not start.
    Halted,
}

impl IntakeOutcome {
    /// The action that produced it.
    pub fn action(&self) -> IntakeAction {
        match self {
            Self::Included { .. } => IntakeAction::Include,
            Self::Excluded { .. } => IntakeAction::Exclude,
            Self::Committed { .. } => IntakeAction::Commit,
            Self::Halted => IntakeAction::Halt,
        }
    }

    /// The commit the run's worktree starts from, or `None` after `halt`.
    pub fn start(&self) -> Option<&str> {
        match self {
            Self::Included { start, .. } | Self::Excluded { start } => Some(start),
            Self::Committed { commit } => Some(commit),
            Self::Halted => None,
        }
    }
}

/// The intake questions of the runs under one store root. Synchronous;
/// cheap to clone.
///
/// ```no_run
/// use std::sync::Arc;
/// use orcho_core::SystemClock;
/// use orcho_handoff::{DecidedBy, DecisionRequest, IntakeAction, IntakeChoice, Intakes, detect_intake};
///
/// let intakes = Intakes::new(".orcho", Arc::new(SystemClock::new()));
/// let run = "run-1".parse()?;
/// let report = detect_intake(".".into(), ".orcho".into())?;
/// if !report.is_clean() {
///     intakes.open(&run, &report)?;
///     let decision = intakes.decide(&run, DecisionRequest::new(IntakeChoice::new(IntakeAction::Include), DecidedBy::Operator))?;
///     let outcome = intakes.apply(&decision)?;
///     // The engine creates the run's worktree at `outcome.start()`, then:
///     intakes.seed(&run, ".orcho/worktrees/run-1".into())?;
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Intakes {
    root: Utf8PathBuf,
    clock: Arc<dyn Clock>,
}

impl Intakes {
    /// The intake questions under the store root `root`.
    pub fn new(root: impl Into<Utf8PathBuf>, clock: Arc<dyn Clock>) -> Self {
        Self {
            root: root.into(),
            clock,
        }
    }

    pub(crate) fn dir(root: &Utf8Path, run: &RunId) -> Utf8PathBuf {
        root.join("runs").join(run.as_str()).join("intake")
    }

    /// The question document of a run.
    pub fn question_path(&self, run: &RunId) -> Utf8PathBuf {
        Self::dir(&self.root, run).join("intake.json")
    }

    /// The seed patch of a run.
    pub fn seed_path(&self, run: &RunId) -> Utf8PathBuf {
        Self::dir(&self.root, run).join("seed.patch")
    }

    /// The outcome document of a run.
    pub fn outcome_path(&self, run: &RunId) -> Utf8PathBuf {
        Self::dir(&self.root, run).join("outcome.json")
    }

    /// The decision slot of a run's intake question.
    pub fn decision_slot(&self, run: &RunId) -> DecisionSlot<IntakeChoice> {
        DecisionSlot::in_run(&self.root, run, &intake_point())
    }

    fn lock(&self, run: &RunId) -> LockFile {
        LockFile::new(Self::dir(&self.root, run).join(".lock"))
    }

    fn err<'a>(run: &'a RunId, op: &'static str) -> impl Fn(IntakeErrorKind) -> IntakeError + 'a {
        move |kind| IntakeError::for_run(op, run, kind)
    }

    /// Asks the intake question for a run: writes what was detected. The
    /// same report again is a no-op; a different one is refused.
    ///
    /// # Errors
    ///
    /// [`IntakeError::is_already_open`] for a different report, I/O.
    pub fn open(&self, run: &RunId, report: &IntakeReport) -> Result<(), IntakeError> {
        let err = Self::err(run, "ask the intake question of");
        fs::create_dir_all(&Self::dir(&self.root, run))
            .map_err(|e| err(IntakeErrorKind::Fs(Box::new(e))))?;
        let doc = IntakeDoc::new(run.clone(), report.clone(), self.clock.now());
        let bytes =
            schema::encode(&doc).map_err(|e| err(IntakeErrorKind::Document(Box::new(e))))?;
        match fs::write_new_atomic(&self.question_path(run), &bytes) {
            Ok(()) => Ok(()),
            Err(e) if e.is_already_exists() => {
                if self.read_question(run).map_err(&err)?.0 == *report {
                    Ok(())
                } else {
                    Err(err(IntakeErrorKind::AlreadyOpen))
                }
            }
            Err(e) => Err(err(IntakeErrorKind::Fs(Box::new(e)))),
        }
    }

    /// The intake question of a run: the report and when it was asked.
    ///
    /// # Errors
    ///
    /// [`IntakeError::is_not_found`] when none was asked, or a document
    /// error.
    pub fn question(&self, run: &RunId) -> Result<(IntakeReport, Timestamp), IntakeError> {
        self.read_question(run)
            .map_err(Self::err(run, "read the intake question of"))
    }

    fn read_question(&self, run: &RunId) -> Result<(IntakeReport, Timestamp), IntakeErrorKind> {
        let doc = fs::read_document::<IntakeDoc>(&self.question_path(run)).map_err(|e| {
            if e.is_not_found() {
                IntakeErrorKind::NotFound
            } else {
                IntakeErrorKind::Document(Box::new(e))
            }
        })?;
        if doc.run_id != *run {
            return Err(IntakeErrorKind::WrongRun(doc.run_id));
        }
        Ok(doc.into_report())
    }

    /// Records the intake decision of a run. Does not act on it: call
    /// [`apply`](Self::apply) next. The same decision again replays; a
    /// different one is a conflict.
    ///
    /// # Errors
    ///
    /// Not found when no question was asked, [`IntakeError::is_conflict`],
    /// I/O.
    pub fn decide(
        &self,
        run: &RunId,
        request: DecisionRequest<IntakeChoice>,
    ) -> Result<RecordedDecision<IntakeChoice>, IntakeError> {
        let err = Self::err(run, "decide the intake question of");
        self.read_question(run).map_err(&err)?;
        self.decision_slot(run)
            .record(request, &*self.clock)
            .map_err(|e| err(IntakeErrorKind::Decision(Box::new(e))))
    }

    /// The recorded intake decision of a run, if any.
    ///
    /// # Errors
    ///
    /// When the record cannot be read or was altered.
    pub fn recorded_decision(
        &self,
        run: &RunId,
    ) -> Result<Option<RecordedDecision<IntakeChoice>>, IntakeError> {
        self.decision_slot(run).read().map_err(|e| {
            IntakeError::for_run(
                "read the intake decision of",
                run,
                IntakeErrorKind::Decision(Box::new(e)),
            )
        })
    }

    /// Acts on the recorded decision, once: builds and keeps the seed patch
    /// (`include`), commits (`commit`), or records the start (`exclude`,
    /// `halt`). Applying again returns the recorded outcome.
    ///
    /// # Errors
    ///
    /// [`IntakeErrorKind::DecisionMismatch`], git errors (a refused commit),
    /// I/O.
    pub fn apply(
        &self,
        decision: &RecordedDecision<IntakeChoice>,
    ) -> Result<IntakeOutcome, IntakeError> {
        let run = decision.decision().run();
        let err = Self::err(run, "apply the intake decision of");
        let (report, _) = self.read_question(run).map_err(&err)?;
        let _guard = self
            .lock(run)
            .lock_exclusive()
            .map_err(|e| err(IntakeErrorKind::Lock(Box::new(e))))?;
        if let Some(outcome) = self.read_outcome(run).map_err(&err)? {
            return Ok(outcome);
        }
        let on_disk = self
            .decision_slot(run)
            .read()
            .map_err(|e| err(IntakeErrorKind::Decision(Box::new(e))))?;
        if on_disk.map(|d| d.decision().digest()) != Some(decision.decision().digest()) {
            return Err(err(IntakeErrorKind::DecisionMismatch));
        }
        let git = Git::new(&report.checkout);
        let git_err = |e| err(IntakeErrorKind::Git(Box::new(e)));
        let excluded = store_prefix(&report.checkout, &self.root);
        let choice = decision.decision().payload();
        let outcome = match choice.action {
            IntakeAction::Include => {
                let (patch, numstat) = git
                    .snapshot_diff(&report.head, excluded.as_deref())
                    .map_err(git_err)?;
                let path = self.seed_path(run);
                fs::write_atomic(&path, &patch)
                    .map_err(|e| err(IntakeErrorKind::Fs(Box::new(e))))?;
                IntakeOutcome::Included {
                    start: report.head,
                    seed: SeedPatch {
                        path,
                        digest: Digest::derive(SEED_DIGEST_CONTEXT, &patch),
                        files: numstat.len(),
                    },
                }
            }
            IntakeAction::Exclude => IntakeOutcome::Excluded { start: report.head },
            IntakeAction::Commit => {
                let message = choice
                    .message
                    .clone()
                    .unwrap_or_else(|| format!("Commit uncommitted changes before run {run}"));
                // A process that died after committing but before recording
                // the outcome left the commit on top of the question's
                // HEAD: adopt it instead of committing nothing again.
                let head = git.head().map_err(git_err)?;
                let adopted = head != report.head
                    && git.rev_parse(&format!("{head}^")).ok().as_deref()
                        == Some(report.head.as_str())
                    && git
                        .run(&["log", "-1", "--format=%B", &head])
                        .map(|body| String::from_utf8_lossy(&body).trim() == message.trim())
                        .unwrap_or(false);
                if !adopted {
                    let mut add = vec!["add", "--all", "--", "."];
                    let exclude = excluded.as_ref().map(|p| format!(":(exclude){p}"));
                    add.extend(exclude.as_deref());
                    git.run(&add).map_err(git_err)?;
                    git.run(&["commit", "--quiet", "-m", &message])
                        .map_err(git_err)?;
                }
                IntakeOutcome::Committed {
                    commit: git.head().map_err(git_err)?,
                }
            }
            IntakeAction::Halt => IntakeOutcome::Halted,
        };
        let doc = IntakeOutcomeDoc::new(run.clone(), self.clock.now(), &outcome);
        let bytes =
            schema::encode(&doc).map_err(|e| err(IntakeErrorKind::Document(Box::new(e))))?;
        fs::write_new_atomic(&self.outcome_path(run), &bytes)
            .map_err(|e| err(IntakeErrorKind::Fs(Box::new(e))))?;
        Ok(outcome)
    }

    /// The recorded outcome of a run's intake, once applied.
    ///
    /// # Errors
    ///
    /// When the outcome cannot be read.
    pub fn outcome(&self, run: &RunId) -> Result<Option<IntakeOutcome>, IntakeError> {
        self.read_outcome(run)
            .map_err(Self::err(run, "read the intake outcome of"))
    }

    fn read_outcome(&self, run: &RunId) -> Result<Option<IntakeOutcome>, IntakeErrorKind> {
        match fs::read_document::<IntakeOutcomeDoc>(&self.outcome_path(run)) {
            Ok(doc) if doc.run_id == *run => doc.into_outcome().map(Some),
            Ok(doc) => Err(IntakeErrorKind::WrongRun(doc.run_id)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(IntakeErrorKind::Document(Box::new(e))),
        }
    }

    /// Seeds the run's worktree (created at the outcome's
    /// [`start`](IntakeOutcome::start)) with the kept seed patch:
    /// `git apply --check`, then `git apply`. A worktree that already has
    /// the seed (it applies in reverse) is left as is.
    ///
    /// # Errors
    ///
    /// [`IntakeError::is_seed_conflict`] when the seed does not apply (the
    /// worktree is not touched: the run must not silently start from
    /// `HEAD`), [`IntakeErrorKind::NotIncluded`] when the outcome is not
    /// `include`, an altered seed patch, git or I/O errors.
    pub fn seed(&self, run: &RunId, worktree: &Utf8Path) -> Result<SeedPatch, IntakeError> {
        let err = Self::err(run, "seed the worktree of");
        let Some(IntakeOutcome::Included { seed, .. }) = self.read_outcome(run).map_err(&err)?
        else {
            return Err(err(IntakeErrorKind::NotIncluded));
        };
        let bytes = std::fs::read(&seed.path).map_err(|e| {
            err(IntakeErrorKind::ReadSeed {
                path: seed.path.clone(),
                source: e,
            })
        })?;
        let computed = Digest::derive(SEED_DIGEST_CONTEXT, &bytes);
        if computed != seed.digest {
            return Err(err(IntakeErrorKind::SeedAltered {
                recorded: seed.digest,
                computed,
            }));
        }
        if seed.files == 0 {
            return Ok(seed);
        }
        let patch =
            absolute(&seed.path).map_err(|_| err(IntakeErrorKind::NotUtf8(seed.path.clone())))?;
        let git = Git::new(worktree);
        let git_err = |e| err(IntakeErrorKind::Git(Box::new(e)));
        if let Err(check) = git
            .check(&["apply", "--check", patch.as_str()])
            .map_err(git_err)?
        {
            if git
                .check(&["apply", "--check", "--reverse", patch.as_str()])
                .map_err(git_err)?
                .is_ok()
            {
                return Ok(seed);
            }
            return Err(err(IntakeErrorKind::SeedDoesNotApply {
                worktree: worktree.to_owned(),
                check,
            }));
        }
        git.run(&["apply", patch.as_str()]).map_err(git_err)?;
        Ok(seed)
    }
}

/// The id of every run's intake decision point.
pub(crate) fn intake_point() -> HandoffId {
    HandoffId::new(INTAKE_POINT).unwrap_or_else(|_| unreachable!("`intake` is a valid id"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_columns_map_to_change_kinds() {
        let kind = |x: u8, y: u8| {
            TrackedChange::from_status(StatusEntry {
                index: x,
                worktree: y,
                path: "f".into(),
            })
        };
        assert_eq!(kind(b' ', b'M').kind(), ChangeKind::Modified);
        assert!(!kind(b' ', b'M').is_staged());
        assert_eq!(kind(b'A', b' ').kind(), ChangeKind::Added);
        assert!(kind(b'A', b' ').is_staged());
        assert_eq!(kind(b' ', b'D').kind(), ChangeKind::Deleted);
        assert_eq!(kind(b'U', b'U').kind(), ChangeKind::Unmerged);
        assert_eq!(kind(b'A', b'A').kind(), ChangeKind::Unmerged);
        assert_eq!(kind(b'M', b'M').kind(), ChangeKind::Modified);
    }

    #[test]
    fn actions_and_choices_are_validated() {
        for action in IntakeAction::ALL {
            assert_eq!(action.as_str().parse::<IntakeAction>().unwrap(), action);
        }
        insta::assert_snapshot!("stash".parse::<IntakeAction>().unwrap_err(), @"unknown intake action `stash`: expected one of include, exclude, commit, halt");
        insta::assert_snapshot!(IntakeChoice::from_parts(IntakeAction::Halt, Some("m".into())).unwrap_err(), @"a commit message is only taken by `commit`, not `halt`");
        insta::assert_snapshot!(IntakeChoice::commit_with_message(" ").unwrap_err(), @"the commit message is blank");
        assert!(
            serde_json::from_str::<IntakeChoice>(r#"{"action":"exclude","message":"x"}"#).is_err()
        );
    }

    #[test]
    fn the_store_is_excluded_only_when_inside_the_checkout() {
        assert_eq!(
            store_prefix("/repo".into(), "/repo/.orcho".into()).as_deref(),
            Some(Utf8Path::new(".orcho"))
        );
        assert_eq!(
            store_prefix("/repo".into(), "/elsewhere/.orcho".into()),
            None
        );
        assert_eq!(store_prefix("/repo".into(), "/repo".into()), None);
    }
}
