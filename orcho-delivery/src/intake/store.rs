//! [`Intakes`]: the intake question on the shared decision-point
//! lifecycle, and the git work of acting on its decision.

use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{
    Clock, Digest, DocumentError, HandoffId, RunId, Timestamp, schema,
    storage::{FsStorage, Item, PointKind, Storage},
};
use orcho_handoff::{
    IntakeAction,
    decision::{Decision, DecisionRequest, RecordedDecision},
    intake::{INTAKE_POINT, IntakeChoice},
    point::{DecisionPoint, PointError, PointErrorKind, Points},
};

use super::{
    IntakeError, IntakeRefusal,
    detect::{IntakeReport, store_prefix},
    format::{IntakeDoc, IntakeOutcomeDoc},
};
use crate::git::Git;

/// The context of seed-patch digests.
pub const SEED_DIGEST_CONTEXT: &str = "orcho intake seed patch v1";

type Kind = PointErrorKind<IntakeRefusal>;

#[cold]
fn refused(refusal: IntakeRefusal) -> Kind {
    Kind::Refused(refusal)
}

/// The seed patch of an `include` decision, kept with the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedPatch {
    pub(crate) path: Utf8PathBuf,
    pub(crate) digest: Digest,
    pub(crate) files: usize,
}

impl SeedPatch {
    orcho_core::getters! {
        /// Where the patch is kept (its file, in a directory store).
        pub fn path(&self) -> &Utf8Path;
        /// Its digest (context [`SEED_DIGEST_CONTEXT`]).
        pub fn digest(&self) -> Digest;
        /// How many files it changes.
        pub fn files(&self) -> usize;
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

/// Intake questions as a kind of decision point: the question is the
/// [`IntakeReport`], the choice an [`IntakeChoice`], and acting on the
/// decision applies it, recording the [`IntakeOutcome`].
#[derive(Debug)]
pub enum IntakeQuestions {}

impl DecisionPoint for IntakeQuestions {
    const WHAT: &'static str = "intake question";
    const NOT_FOUND: &'static str = "no intake question was asked for the run";
    const ALREADY_OPEN: &'static str = "a different intake question was already asked for the run";

    type Question = IntakeReport;
    type Choice = IntakeChoice;
    type Outcome = IntakeOutcome;
    type Refusal = IntakeRefusal;
    const KIND: PointKind = PointKind::Intake;

    fn encode_question(
        run: &RunId,
        _id: &HandoffId,
        report: &IntakeReport,
        at: Timestamp,
    ) -> Result<Vec<u8>, DocumentError> {
        schema::encode(&IntakeDoc::new(run.clone(), report.clone(), at))
    }

    fn decode_question(
        bytes: &[u8],
        at: &Utf8Path,
        run: &RunId,
        _id: &HandoffId,
    ) -> Result<(IntakeReport, Timestamp), Kind> {
        let doc = schema::decode::<IntakeDoc>(bytes, Some(at))?;
        if doc.run_id != *run {
            return Err(Kind::misplaced(&doc.run_id, None));
        }
        Ok(doc.into_report())
    }

    fn read_outcome(
        points: &Points<Self>,
        run: &RunId,
        id: &HandoffId,
    ) -> Result<Option<IntakeOutcome>, Kind> {
        match points.read_outcome_document::<IntakeOutcomeDoc>(run, id)? {
            Some(doc) if doc.run_id == *run => doc.into_outcome().map(Some),
            Some(doc) => Err(Kind::misplaced(&doc.run_id, None)),
            None => Ok(None),
        }
    }

    fn write_outcome(
        points: &Points<Self>,
        decision: &Decision<IntakeChoice>,
        outcome: &IntakeOutcome,
    ) -> Result<(), Kind> {
        let run = decision.run();
        let doc = IntakeOutcomeDoc::new(run.clone(), points.clock().now(), outcome);
        points.write_outcome_document(run, decision.point(), &doc)
    }
}

/// The id of every run's intake decision point.
pub(crate) fn intake_point() -> HandoffId {
    HandoffId::new(INTAKE_POINT).unwrap_or_else(|_| unreachable!("`intake` is a valid id"))
}

/// The intake questions of the runs under one store root. Synchronous;
/// cheap to clone.
///
/// ```no_run
/// use std::sync::Arc;
/// use orcho_core::SystemClock;
/// use orcho_handoff::{IntakeAction, decision::{DecidedBy, DecisionRequest}, intake::IntakeChoice};
/// use orcho_delivery::{Intakes, detect_intake};
///
/// let intakes = Intakes::in_dir(".orcho", Arc::new(SystemClock::new()));
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
    points: Points<IntakeQuestions>,
    local: Option<Utf8PathBuf>,
}

impl Intakes {
    /// The intake questions kept in `storage`.
    pub fn new(storage: Arc<dyn Storage>, clock: Arc<dyn Clock>) -> Self {
        Self {
            points: Points::new(storage, clock),
            local: None,
        }
    }

    /// The intake questions of the directory store at `root`, which is
    /// also the store's local directory ([`with_local_dir`](Self::with_local_dir)).
    pub fn in_dir(root: impl Into<Utf8PathBuf>, clock: Arc<dyn Clock>) -> Self {
        let root = root.into();
        Self::new(Arc::new(FsStorage::new(root.clone())), clock).with_local_dir(root)
    }

    /// The directory where this machine keeps the store's own files
    /// (receipts, worktrees): left out of the changes intake includes or
    /// commits when it is inside the checkout.
    #[must_use]
    pub fn with_local_dir(mut self, dir: impl Into<Utf8PathBuf>) -> Self {
        self.local = Some(dir.into());
        self
    }

    fn storage(&self) -> &dyn Storage {
        &**self.points.storage()
    }

    /// The lifecycle the questions run on.
    pub fn points(&self) -> &Points<IntakeQuestions> {
        &self.points
    }

    /// Where the question document of a run is kept (its file, in a
    /// directory store).
    pub fn question_path(&self, run: &RunId) -> Utf8PathBuf {
        self.storage()
            .locate(run, Item::Question(PointKind::Intake, &intake_point()))
    }

    /// Where the seed patch of a run is kept.
    pub fn seed_path(&self, run: &RunId) -> Utf8PathBuf {
        self.storage().locate(run, Item::IntakeSeed)
    }

    /// Where the outcome document of a run is kept.
    pub fn outcome_path(&self, run: &RunId) -> Utf8PathBuf {
        self.storage()
            .locate(run, Item::Outcome(PointKind::Intake, &intake_point()))
    }

    /// The decision slot of a run's intake question.
    pub fn decision_slot(
        &self,
        run: &RunId,
    ) -> orcho_handoff::decision::DecisionSlot<IntakeChoice> {
        self.points.slot(run, &intake_point())
    }

    /// Asks the intake question for a run: writes what was detected. The
    /// same report again is a no-op; a different one is refused.
    ///
    /// # Errors
    ///
    /// [`IntakeError::is_already_open`](PointError::is_already_open) for a
    /// different report, I/O.
    pub fn open(&self, run: &RunId, report: &IntakeReport) -> Result<(), IntakeError> {
        let err = |kind| PointError::of_run("ask the intake question of", run, kind);
        match self.points.open(run, &intake_point(), report) {
            Ok(_) => Ok(()),
            Err(Kind::AlreadyOpen(why)) => {
                let (asked, _) = self.points.question(run, &intake_point()).map_err(err)?;
                if asked == *report {
                    Ok(())
                } else {
                    Err(err(Kind::AlreadyOpen(why)))
                }
            }
            Err(kind) => Err(err(kind)),
        }
    }

    /// The intake question of a run: the report and when it was asked.
    ///
    /// # Errors
    ///
    /// [`IntakeError::is_not_found`](PointError::is_not_found) when none was
    /// asked, or a document error.
    pub fn question(&self, run: &RunId) -> Result<(IntakeReport, Timestamp), IntakeError> {
        self.points
            .question(run, &intake_point())
            .map_err(|kind| PointError::of_run("read the intake question of", run, kind))
    }

    /// Records the intake decision of a run. Does not act on it: call
    /// [`apply`](Self::apply) next. The same decision again replays; a
    /// different one is a conflict.
    ///
    /// # Errors
    ///
    /// Not found when no question was asked, a conflict
    /// ([`PointError::is_conflict`]), I/O.
    pub fn decide(
        &self,
        run: &RunId,
        request: DecisionRequest<IntakeChoice>,
    ) -> Result<RecordedDecision<IntakeChoice>, IntakeError> {
        self.points
            .decide(run, &intake_point(), request, |_, _, _| Ok(()))
            .map_err(|kind| PointError::of_run("decide the intake question of", run, kind))
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
        self.points
            .recorded(run, &intake_point())
            .map_err(|kind| PointError::of_run("read the intake decision of", run, kind))
    }

    /// Acts on the recorded decision, once: builds and keeps the seed patch
    /// (`include`), commits (`commit`), or records the start (`exclude`,
    /// `halt`). Applying again returns the recorded outcome.
    ///
    /// # Errors
    ///
    /// [`PointErrorKind::DecisionMismatch`], git errors (a refused commit),
    /// I/O.
    pub fn apply(
        &self,
        decision: &RecordedDecision<IntakeChoice>,
    ) -> Result<IntakeOutcome, IntakeError> {
        let run = decision.decision().run();
        self.points
            .act(decision, |report, decision| self.act(report, decision))
            .map(|acted| acted.into_outcome())
            .map_err(|kind| PointError::of_run("apply the intake decision of", run, kind))
    }

    fn act(
        &self,
        report: &IntakeReport,
        decision: &Decision<IntakeChoice>,
    ) -> Result<IntakeOutcome, Kind> {
        let run = decision.run();
        let git = Git::new(&report.checkout);
        let git_err = |e| refused(IntakeRefusal::from(e));
        let excluded = self
            .local
            .as_deref()
            .and_then(|local| store_prefix(&report.checkout, local));
        let choice = decision.payload();
        Ok(match choice.action() {
            IntakeAction::Include => {
                let (patch, numstat) = git
                    .snapshot_diff(&report.head, excluded.as_deref())
                    .map_err(git_err)?;
                let path = self.seed_path(run);
                self.storage().put(run, Item::IntakeSeed, &patch)?;
                IntakeOutcome::Included {
                    start: report.head.clone(),
                    seed: SeedPatch {
                        path,
                        digest: Digest::derive(SEED_DIGEST_CONTEXT, &patch),
                        files: numstat.len(),
                    },
                }
            }
            IntakeAction::Exclude => IntakeOutcome::Excluded {
                start: report.head.clone(),
            },
            IntakeAction::Commit => {
                let message = choice
                    .message()
                    .map(str::to_owned)
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
                    commit_all(&git, &report.head, excluded.as_deref(), &message)?;
                }
                IntakeOutcome::Committed {
                    commit: git.head().map_err(git_err)?,
                }
            }
            IntakeAction::Halt => IntakeOutcome::Halted,
        })
    }

    /// The recorded outcome of a run's intake, once applied.
    ///
    /// # Errors
    ///
    /// When the outcome cannot be read.
    pub fn outcome(&self, run: &RunId) -> Result<Option<IntakeOutcome>, IntakeError> {
        self.points
            .outcome(run, &intake_point())
            .map_err(|kind| PointError::of_run("read the intake outcome of", run, kind))
    }

    /// Seeds the run's worktree (created at the outcome's
    /// [`start`](IntakeOutcome::start)) with the kept seed patch:
    /// `git apply --check`, then `git apply`. A worktree that already has
    /// the seed (it applies in reverse) is left as is.
    ///
    /// # Errors
    ///
    /// [`IntakeRefusal::is_seed_conflict`] when the seed does not apply (the
    /// worktree is not touched: the run must not silently start from
    /// `HEAD`), [`IntakeRefusal::NotIncluded`] when the outcome is not
    /// `include`, an altered seed patch, git or I/O errors.
    pub fn seed(&self, run: &RunId, worktree: &Utf8Path) -> Result<SeedPatch, IntakeError> {
        let err = |kind| PointError::of_run("seed the worktree of", run, kind);
        let Some(IntakeOutcome::Included { seed, .. }) =
            self.points.outcome(run, &intake_point()).map_err(err)?
        else {
            return Err(err(refused(IntakeRefusal::NotIncluded)));
        };
        let bytes = self
            .storage()
            .get(run, Item::IntakeSeed)
            .map_err(|e| err(e.into()))?
            .ok_or_else(|| {
                err(refused(IntakeRefusal::ReadSeed {
                    path: seed.path.clone(),
                    source: std::io::Error::from(std::io::ErrorKind::NotFound),
                }))
            })?;
        let computed = Digest::derive(SEED_DIGEST_CONTEXT, &bytes);
        if computed != seed.digest {
            return Err(err(refused(IntakeRefusal::SeedAltered {
                recorded: seed.digest,
                computed,
            })));
        }
        if seed.files == 0 {
            return Ok(seed);
        }
        let file = crate::git::PatchFile::write(&bytes).map_err(|e| {
            err(Kind::Invalid(format!(
                "the seed patch cannot be written to a temporary file for git: {e}"
            )))
        })?;
        let patch = &file.path;
        let git = Git::new(worktree);
        let git_err = |e| err(refused(IntakeRefusal::from(e)));
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
            return Err(err(refused(IntakeRefusal::SeedDoesNotApply {
                worktree: worktree.to_owned(),
                check,
            })));
        }
        git.run(&["apply", patch.as_str()]).map_err(git_err)?;
        Ok(seed)
    }
}
/// Commits the whole working tree but the store, as `git commit` does
/// (hooks included). When anything fails, the index is put back exactly as
/// it was, so the user's staged and unstaged work is as they left it.
fn commit_all(
    git: &Git,
    head: &str,
    excluded: Option<&Utf8Path>,
    message: &str,
) -> Result<(), Kind> {
    let git_err = |e| refused(IntakeRefusal::from(e));
    let saved = git.run(&["write-tree"]).map_err(git_err)?;
    let saved = String::from_utf8_lossy(&saved).trim().to_owned();
    let committed = git.add_all_but(head, excluded).and_then(|()| {
        match git.check(&["commit", "--quiet", "-m", message])? {
            Ok(()) => Ok(Ok(())),
            Err(said) => Ok(Err(said)),
        }
    });
    let restore = |git: &Git| git.run(&["read-tree", &saved]).map(|_| ());
    match committed {
        Ok(Ok(())) => Ok(()),
        Ok(Err(said)) => {
            restore(git).map_err(git_err)?;
            Err(refused(IntakeRefusal::CommitRefused { said }))
        }
        Err(e) => {
            restore(git).map_err(git_err)?;
            Err(git_err(e))
        }
    }
}
