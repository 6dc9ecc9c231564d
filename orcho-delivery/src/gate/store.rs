//! [`DeliveryGates`]: the delivery gate on the shared decision-point
//! lifecycle, and the git work of acting on its decision.

use std::{collections::BTreeSet, sync::Arc};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{
    Clock, Digest, DocumentError, HandoffId, RunId, Timestamp, Verdict, schema,
    storage::{FsStorage, Item, PointKind, Storage},
};
use orcho_handoff::{
    DeliveryAction,
    decision::{Decision, DecisionRequest, RecordedDecision},
    delivery::{DELIVERY_POINT, DeliveryChoice},
    point::{DecisionPoint, PointError, PointErrorKind, PointState, Points},
};

use super::{
    DeliveryError, DeliveryRefusal,
    diff::{DiffSummary, FileChange},
    format::{GateDoc, OutcomeDoc},
    spec::{DeliveryGate, DeliveryOutcome, DeliverySpec, PATCH_DIGEST_CONTEXT},
    target::TargetStatus,
};
use crate::{
    followup::{BlockerSet, FollowUpGuard, FollowUpSpec},
    git::Git,
};

type Kind = PointErrorKind<DeliveryRefusal>;

#[cold]
fn refused(refusal: DeliveryRefusal) -> Kind {
    Kind::Refused(refusal)
}

/// Delivery gates as a kind of decision point: the question is the
/// [`DeliveryGate`], the choice a [`DeliveryChoice`], and acting on the
/// decision delivers it, recording the [`DeliveryOutcome`].
#[derive(Debug)]
pub enum Deliveries {}

impl DecisionPoint for Deliveries {
    const WHAT: &'static str = "delivery gate";
    const NOT_FOUND: &'static str = "the run has no delivery gate";
    const ALREADY_OPEN: &'static str = "the run already has a delivery gate";

    type Question = DeliveryGate;
    type Choice = DeliveryChoice;
    type Outcome = DeliveryOutcome;
    type Refusal = DeliveryRefusal;
    const KIND: PointKind = PointKind::Delivery;

    fn encode_question(
        _run: &RunId,
        _id: &HandoffId,
        gate: &DeliveryGate,
        _at: Timestamp,
    ) -> Result<Vec<u8>, DocumentError> {
        schema::encode(&GateDoc::from(gate.clone()))
    }

    fn decode_question(
        bytes: &[u8],
        at: &Utf8Path,
        run: &RunId,
        _id: &HandoffId,
    ) -> Result<(DeliveryGate, Timestamp), Kind> {
        let doc = schema::decode::<GateDoc>(bytes, Some(at))?;
        if doc.run_id != *run {
            return Err(Kind::misplaced(&doc.run_id, None));
        }
        let gate = DeliveryGate::try_from(doc)?;
        let at = gate.created_at;
        Ok((gate, at))
    }

    fn read_outcome(
        points: &Points<Self>,
        run: &RunId,
        id: &HandoffId,
    ) -> Result<Option<DeliveryOutcome>, Kind> {
        match points.read_outcome_document::<OutcomeDoc>(run, id)? {
            Some(doc) if doc.run_id == *run => doc.into_outcome().map(Some),
            Some(doc) => Err(Kind::misplaced(&doc.run_id, None)),
            None => Ok(None),
        }
    }

    fn write_outcome(
        points: &Points<Self>,
        decision: &Decision<DeliveryChoice>,
        outcome: &DeliveryOutcome,
    ) -> Result<(), Kind> {
        let run = decision.run();
        let doc = OutcomeDoc::new(run.clone(), points.clock().now(), outcome);
        points.write_outcome_document(run, decision.point(), &doc)
    }
}

/// The id of every run's delivery decision point.
pub(crate) fn delivery_point() -> HandoffId {
    HandoffId::new(DELIVERY_POINT).unwrap_or_else(|_| unreachable!("`delivery` is a valid id"))
}

/// Where a delivery gate stands: open, decided, or delivered (its outcome
/// recorded).
pub type DeliveryState = PointState<Deliveries>;

/// The delivery gates of the runs of a [`Storage`]. Synchronous; cheap to
/// clone.
///
/// See the [module docs](crate::gate) for the rules, the layout and an
/// example.
#[derive(Debug, Clone)]
pub struct DeliveryGates {
    points: Points<Deliveries>,
    guard: FollowUpGuard,
}

impl DeliveryGates {
    /// The gates kept in `storage`, with the default [`FollowUpGuard`].
    pub fn new(storage: Arc<dyn Storage>, clock: Arc<dyn Clock>) -> Self {
        Self {
            points: Points::new(storage, clock),
            guard: FollowUpGuard::default(),
        }
    }

    /// The gates of the directory store at `root` (for example `.orcho`).
    pub fn in_dir(root: impl Into<Utf8PathBuf>, clock: Arc<dyn Clock>) -> Self {
        Self::new(Arc::new(FsStorage::new(root)), clock)
    }

    fn storage(&self) -> &dyn Storage {
        &**self.points.storage()
    }

    /// The lifecycle the gates run on.
    pub fn points(&self) -> &Points<Deliveries> {
        &self.points
    }

    /// Where the gate document of a run is kept (its file, in a directory
    /// store).
    pub fn gate_path(&self, run: &RunId) -> Utf8PathBuf {
        self.storage()
            .locate(run, Item::Question(PointKind::Delivery, &delivery_point()))
    }

    /// Where the run's patch is kept.
    pub fn patch_path(&self, run: &RunId) -> Utf8PathBuf {
        self.storage().locate(run, Item::DeliveryPatch)
    }

    /// Where the outcome document of a run is kept.
    pub fn outcome_path(&self, run: &RunId) -> Utf8PathBuf {
        self.storage()
            .locate(run, Item::Outcome(PointKind::Delivery, &delivery_point()))
    }

    /// The decision slot of a run's gate.
    pub fn decision_slot(
        &self,
        run: &RunId,
    ) -> orcho_handoff::decision::DecisionSlot<DeliveryChoice> {
        self.points.slot(run, &delivery_point())
    }

    /// Opens the run's delivery gate: captures the run's diff as a patch,
    /// computes the menu, and writes both. A run has one gate.
    ///
    /// # Errors
    ///
    /// [`DeliveryError::is_already_open`](PointError::is_already_open) when
    /// the run has a gate, a git error when the worktree or the base cannot
    /// be read, or I/O.
    pub fn open(&self, spec: DeliverySpec) -> Result<DeliveryGate, DeliveryError> {
        let run = spec.run.clone();
        let err = |kind| PointError::of_run("open the delivery gate of", &run, kind);
        let git_err = |e| err(refused(DeliveryRefusal::from(e)));
        let git = Git::new(&spec.worktree);
        let base = git.rev_parse(&spec.base).map_err(git_err)?;
        let (patch, numstat) = git.snapshot_diff(&base, None).map_err(git_err)?;
        let untracked: BTreeSet<Utf8PathBuf> = git
            .status()
            .map_err(git_err)?
            .into_iter()
            .filter(|e| e.is_untracked())
            .map(|e| e.path)
            .collect();
        let mut files: Vec<FileChange> = numstat
            .into_iter()
            .map(|n| FileChange {
                untracked: untracked.contains(&n.path),
                path: n.path,
                lines: n.lines,
            })
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let diff = DiffSummary { files };
        let verdict = release_verdict(&spec);
        let blockers = BlockerSet::new(&spec.findings, &spec.gaps);
        let (available_actions, blocked) = DeliveryGate::menu(
            verdict,
            &spec.gaps,
            &diff,
            &blockers,
            spec.follow_up.as_ref(),
            &self.guard,
        );
        let gate = DeliveryGate {
            spec: DeliverySpec { base, ..spec },
            verdict,
            diff,
            patch_digest: Digest::derive(PATCH_DIGEST_CONTEXT, &patch),
            available_actions,
            blocked,
            created_at: self.points.clock().now(),
        };
        let _guard = self.points.lock(&run, &delivery_point()).map_err(err)?;
        if self
            .storage()
            .get(&run, Item::Question(PointKind::Delivery, &delivery_point()))
            .map_err(|e| err(e.into()))?
            .is_some()
        {
            return Err(err(Kind::AlreadyOpen(Deliveries::ALREADY_OPEN)));
        }
        // A decision recorded on another patch (the gate was removed and is
        // opened again on new work) does not carry over: it is kept aside,
        // and the new gate waits for its own.
        let slot = self.decision_slot(&run);
        if let Ok(Some(recorded)) = slot.read()
            && recorded
                .decision()
                .payload()
                .patch()
                .is_some_and(|decided| decided != gate.patch_digest)
        {
            self.storage()
                .supersede_decision(&run, &delivery_point())
                .map_err(|e| err(e.into()))?;
        }
        // The patch first: a gate on disk always has its patch.
        self.storage()
            .put(&run, Item::DeliveryPatch, &patch)
            .map_err(|e| err(e.into()))?;
        self.points
            .open(&run, &delivery_point(), &gate)
            .map_err(err)?;
        Ok(gate)
    }

    /// Opens the run's gate again on `spec` (its receipts re-run, say),
    /// replacing the one it had, which nobody decided yet.
    ///
    /// # Errors
    ///
    /// [`DeliveryRefusal::Decided`] when a decision is recorded on the gate;
    /// otherwise as [`open`](Self::open).
    pub fn reopen(&self, spec: DeliverySpec) -> Result<DeliveryGate, DeliveryError> {
        let run = spec.run.clone();
        let err = |kind| PointError::of_run("open again the delivery gate of", &run, kind);
        {
            let _guard = self.points.lock(&run, &delivery_point()).map_err(err)?;
            if let Some(recorded) = self.points.recorded(&run, &delivery_point()).map_err(err)? {
                return Err(err(refused(DeliveryRefusal::Decided {
                    action: recorded.decision().payload().action(),
                })));
            }
            self.storage()
                .remove(&run, Item::Question(PointKind::Delivery, &delivery_point()))
                .map_err(|e| err(e.into()))?;
        }
        self.open(spec)
    }

    /// Reads the run's gate.
    ///
    /// # Errors
    ///
    /// [`DeliveryError::is_not_found`](PointError::is_not_found) when the
    /// run has no gate, or a document error.
    pub fn gate(&self, run: &RunId) -> Result<DeliveryGate, DeliveryError> {
        self.read_gate(run)
            .map_err(|kind| PointError::of_run("read the delivery gate of", run, kind))
    }

    fn read_gate(&self, run: &RunId) -> Result<DeliveryGate, Kind> {
        Ok(self.points.question(run, &delivery_point())?.0)
    }

    /// The target's status for the run's diff, checked now.
    ///
    /// # Errors
    ///
    /// A git error when the target cannot be read.
    pub fn target_status(&self, gate: &DeliveryGate) -> Result<TargetStatus, DeliveryError> {
        self.check_target(gate)
            .map_err(|kind| PointError::of_run("check the target of", gate.run(), kind))
    }

    fn check_target(&self, gate: &DeliveryGate) -> Result<TargetStatus, Kind> {
        let (bytes, _) = self.patch_bytes(gate)?;
        let patch = patch_file(&bytes)?;
        TargetStatus::check(gate, &patch.path).map_err(|e| refused(e.into()))
    }

    /// Records the decision of the run's gate. Does not touch the target:
    /// call [`deliver`](Self::deliver) next.
    ///
    /// A first decision is validated against the gate's menu and, for
    /// `approve` and `apply`, against the target's live status; a refused
    /// decision records nothing and the gate stays decidable. Once a
    /// decision is recorded, the same decision again is an idempotent
    /// replay ([`RecordedDecision::is_replay`], original time) and any
    /// other is a conflict.
    ///
    /// # Errors
    ///
    /// [`DeliveryRefusal::NotAvailable`] (with the
    /// [reason](DeliveryRefusal::blocked_reason)),
    /// [`DeliveryRefusal::TargetConflict`], a conflict
    /// ([`PointError::is_conflict`]), not found, git or I/O errors.
    pub fn decide(
        &self,
        run: &RunId,
        request: DecisionRequest<DeliveryChoice>,
    ) -> Result<RecordedDecision<DeliveryChoice>, DeliveryError> {
        self.decide_checking(run, request, true)
    }

    /// Records the decision as [`decide`](Self::decide) does, from a
    /// machine that does not hold the target checkout (a store shared by a
    /// team): the target's status is not read here; the host that drives
    /// the run checks it when it delivers, and refuses there.
    ///
    /// # Errors
    ///
    /// As [`decide`](Self::decide), but for the target's status.
    pub fn decide_from_elsewhere(
        &self,
        run: &RunId,
        request: DecisionRequest<DeliveryChoice>,
    ) -> Result<RecordedDecision<DeliveryChoice>, DeliveryError> {
        self.decide_checking(run, request, false)
    }

    fn decide_checking(
        &self,
        run: &RunId,
        request: DecisionRequest<DeliveryChoice>,
        check_target: bool,
    ) -> Result<RecordedDecision<DeliveryChoice>, DeliveryError> {
        // The decision is bound to the patch it was taken on.
        let request = match request.payload().patch() {
            Some(_) => request,
            None => {
                let digest = self.gate(run)?.patch_digest();
                request.map_payload(|choice| choice.for_patch(digest))
            }
        };
        self.points
            .decide(
                run,
                &delivery_point(),
                request,
                |gate, request, recorded| {
                    if recorded.is_some() {
                        return Ok(());
                    }
                    if let Some(decided) = request.payload().patch()
                        && decided != gate.patch_digest
                    {
                        return Err(refused(DeliveryRefusal::OtherPatch {
                            decided,
                            gate: gate.patch_digest,
                        }));
                    }
                    let action = request.payload().action();
                    if action == DeliveryAction::Approve
                        && gate.spec.approve_requires_operator
                        && request.decided_by() != orcho_handoff::decision::DecidedBy::Operator
                    {
                        let by = match request.client() {
                            Some(client) => format!("the client `{client}`"),
                            None => format!("the {}", request.decided_by()),
                        };
                        return Err(refused(DeliveryRefusal::OperatorRequired { by }));
                    }
                    if !gate.available_actions.contains(action) {
                        return Err(refused(DeliveryRefusal::NotAvailable {
                            action,
                            available: gate.available_actions,
                            reason: gate.blocked_reason(action).cloned(),
                        }));
                    }
                    if check_target && action.changes_target() {
                        let status = self.check_target(gate)?;
                        if status.refuses(action) {
                            return Err(refused(DeliveryRefusal::TargetConflict(status)));
                        }
                    }
                    Ok(())
                },
            )
            .map_err(|kind| PointError::of_run("decide the delivery gate of", run, kind))
    }

    /// The recorded decision of the run's gate, if any: the proof token
    /// [`deliver`](Self::deliver) takes, for a process that did not record
    /// it itself.
    ///
    /// # Errors
    ///
    /// When the record cannot be read or was altered.
    pub fn recorded_decision(
        &self,
        run: &RunId,
    ) -> Result<Option<RecordedDecision<DeliveryChoice>>, DeliveryError> {
        self.points
            .recorded(run, &delivery_point())
            .map_err(|kind| PointError::of_run("read the delivery decision of", run, kind))
    }

    /// Acts on the recorded decision and records the outcome. Delivering
    /// again returns the recorded outcome without touching anything.
    ///
    /// - `approve`: `git apply --check --index`, `git apply --index`, then
    ///   `git commit --only` of exactly the diff's paths; a failed commit
    ///   takes the diff back out.
    /// - `apply`: `git apply --check`, then `git apply`.
    /// - `fix`: builds the [`FollowUpSpec`] (the guard has the last word).
    /// - `skip` and `halt`: change nothing.
    ///
    /// # Errors
    ///
    /// [`DeliveryRefusal::TargetConflict`] when the target changed since the
    /// decision and the diff would now conflict (nothing is written; deliver
    /// again once it is cleaned up), a patch whose digest no longer matches
    /// the gate, [`PointErrorKind::DecisionMismatch`], a stopped follow-up,
    /// git or I/O errors.
    pub fn deliver(
        &self,
        decision: &RecordedDecision<DeliveryChoice>,
    ) -> Result<DeliveryOutcome, DeliveryError> {
        let run = decision.decision().run();
        self.points
            .act(decision, |gate, decision| {
                let choice = decision.payload();
                if let Some(decided) = choice.patch()
                    && decided != gate.patch_digest
                {
                    return Err(refused(DeliveryRefusal::OtherPatch {
                        decided,
                        gate: gate.patch_digest,
                    }));
                }
                Ok(match choice.action() {
                    DeliveryAction::Approve => {
                        let message = gate.commit_message(choice);
                        let commit = self.commit(gate, &message)?;
                        DeliveryOutcome::Committed { commit, message }
                    }
                    DeliveryAction::Apply => {
                        self.apply(gate)?;
                        DeliveryOutcome::Applied
                    }
                    DeliveryAction::Fix => DeliveryOutcome::CorrectionReady(
                        FollowUpSpec::for_gate(gate, choice.note().map(str::to_owned), &self.guard)
                            .map_err(|e| refused(DeliveryRefusal::FollowUp(Box::new(e))))?,
                    ),
                    DeliveryAction::Skip => DeliveryOutcome::Skipped,
                    DeliveryAction::Halt => DeliveryOutcome::Halted {
                        worktree: gate.spec.worktree.clone(),
                    },
                })
            })
            .map(|acted| acted.into_outcome())
            .map_err(|kind| PointError::of_run("deliver the decision of", run, kind))
    }

    /// The run's diff as a binary patch (`git diff --binary`), checked
    /// against the digest its gate recorded: what `approve` and `apply`
    /// would deliver, for a host to show.
    ///
    /// # Errors
    ///
    /// No gate for the run, a patch that cannot be read, or one that is not
    /// the gate's any more.
    pub fn patch(&self, run: &RunId) -> Result<Vec<u8>, DeliveryError> {
        let gate = self.gate(run)?;
        self.read_patch(&gate)
            .map(|(bytes, _)| bytes)
            .map_err(|kind| PointError::of_run("read the patch of", run, kind))
    }

    /// The patch as it is kept, unchecked, and where it is kept.
    fn patch_bytes(&self, gate: &DeliveryGate) -> Result<(Vec<u8>, Utf8PathBuf), Kind> {
        let path = self.patch_path(&gate.spec.run);
        let missing = || {
            refused(DeliveryRefusal::ReadPatch {
                path: path.clone(),
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            })
        };
        let bytes = self
            .storage()
            .get(&gate.spec.run, Item::DeliveryPatch)?
            .ok_or_else(missing)?;
        Ok((bytes, path))
    }

    fn read_patch(&self, gate: &DeliveryGate) -> Result<(Vec<u8>, Utf8PathBuf), Kind> {
        let (bytes, path) = self.patch_bytes(gate)?;
        let computed = Digest::derive(PATCH_DIGEST_CONTEXT, &bytes);
        if computed != gate.patch_digest {
            return Err(refused(DeliveryRefusal::PatchAltered {
                recorded: gate.patch_digest,
                computed,
            }));
        }
        Ok((bytes, path))
    }

    /// The patch, checked against the gate's digest, in a file git reads.
    fn checked_patch(&self, gate: &DeliveryGate) -> Result<crate::git::PatchFile, Kind> {
        let (bytes, _) = self.read_patch(gate)?;
        patch_file(&bytes)
    }

    /// Whether the patch is already in the target (a delivery that died
    /// before recording its outcome): it applies in reverse.
    fn already_applied(git: &Git, args: &[&str]) -> Result<bool, Kind> {
        Ok(git.check(args).map_err(|e| refused(e.into()))?.is_ok())
    }

    fn refuse_conflicting(&self, gate: &DeliveryGate, action: DeliveryAction) -> Result<(), Kind> {
        let status = self.check_target(gate)?;
        if status.refuses(action) {
            return Err(refused(DeliveryRefusal::TargetConflict(status)));
        }
        Ok(())
    }

    fn apply(&self, gate: &DeliveryGate) -> Result<(), Kind> {
        let file = self.checked_patch(gate)?;
        let patch = &file.path;
        let git = Git::new(&gate.spec.target);
        let git_err = |e| refused(DeliveryRefusal::from(e));
        if let Err(check) = git
            .check(&["apply", "--check", patch.as_str()])
            .map_err(git_err)?
        {
            if Self::already_applied(&git, &["apply", "--check", "--reverse", patch.as_str()])? {
                return Ok(());
            }
            return Err(self.conflict(gate, Some(check))?);
        }
        self.refuse_conflicting(gate, DeliveryAction::Apply)?;
        git.run(&["apply", patch.as_str()]).map_err(git_err)?;
        Ok(())
    }

    fn commit(&self, gate: &DeliveryGate, message: &str) -> Result<String, Kind> {
        let file = self.checked_patch(gate)?;
        let patch = &file.path;
        let git = Git::new(&gate.spec.target);
        let git_err = |e| refused(DeliveryRefusal::from(e));
        let paths: Vec<&str> = gate.diff.files.iter().map(|f| f.path.as_str()).collect();
        if let TargetStatus::Overlapping { .. } = self.check_target(gate)? {
            self.refuse_conflicting(gate, DeliveryAction::Approve)?;
            return commit_over_uncommitted(&git, patch, &paths, message).map_err(git_err);
        }
        match git
            .check(&["apply", "--check", "--index", patch.as_str()])
            .map_err(git_err)?
        {
            Ok(()) => {
                self.refuse_conflicting(gate, DeliveryAction::Approve)?;
                git.run(&["apply", "--index", patch.as_str()])
                    .map_err(git_err)?;
            }
            Err(check) => {
                let in_index = Self::already_applied(
                    &git,
                    &["apply", "--check", "--reverse", "--index", patch.as_str()],
                )?;
                if !in_index {
                    return Err(self.conflict(gate, Some(check))?);
                }
                let mut args = vec!["diff", "--cached", "--quiet", "--"];
                args.extend(&paths);
                if git.check(&args).map_err(git_err)?.is_ok() {
                    // Applied and committed by a delivery that died before
                    // recording its outcome.
                    return git.head().map_err(git_err);
                }
            }
        }
        let mut args = vec!["commit", "--only", "--quiet", "-m", message, "--"];
        args.extend(&paths);
        if let Err(e) = git.run(&args) {
            // Take the diff back out: the target is never left half-written.
            let _ = git.run(&["apply", "--index", "--reverse", patch.as_str()]);
            return Err(git_err(e));
        }
        git.head().map_err(git_err)
    }

    fn conflict(&self, gate: &DeliveryGate, check: Option<String>) -> Result<Kind, Kind> {
        let status = match self.check_target(gate)? {
            TargetStatus::Conflicting {
                dirty,
                overlapping,
                apply_check,
            } => TargetStatus::Conflicting {
                dirty,
                overlapping,
                apply_check: apply_check.or(check),
            },
            _ => TargetStatus::Conflicting {
                dirty: Vec::new(),
                overlapping: Vec::new(),
                apply_check: check,
            },
        };
        Ok(refused(DeliveryRefusal::TargetConflict(status)))
    }

    /// The recorded outcome of the run's gate, once delivered.
    ///
    /// # Errors
    ///
    /// When the outcome cannot be read.
    pub fn outcome(&self, run: &RunId) -> Result<Option<DeliveryOutcome>, DeliveryError> {
        self.points
            .outcome(run, &delivery_point())
            .map_err(|kind| PointError::of_run("read the delivery outcome of", run, kind))
    }

    /// Where the run's gate stands.
    ///
    /// # Errors
    ///
    /// Not found when the run has no gate; when a document cannot be read.
    pub fn state(&self, run: &RunId) -> Result<DeliveryState, DeliveryError> {
        self.points
            .state(run, &delivery_point())
            .map_err(|kind| PointError::of_run("read the delivery state of", run, kind))
    }
}

impl DeliveryGates {
    orcho_core::setters! {
        /// Uses this follow-up guard for `fix`.
        pub fn with_guard(guard: FollowUpGuard);
    }
}

/// Commits the run's diff alone into a target whose files it touches have
/// uncommitted changes: the commit is `HEAD` with the diff applied
/// (built in a private index, so nothing the user staged goes in), the
/// index entries of the run's paths follow the new commit, and the
/// working tree gets the diff on top of the uncommitted changes, which
/// stay uncommitted. A delivery that died part way is finished, not
/// repeated. Unlike a plain commit, no commit hook runs.
fn commit_over_uncommitted(
    git: &Git,
    patch: &Utf8Path,
    paths: &[&str],
    message: &str,
) -> Result<String, crate::GitError> {
    let (private, _tmp) = git.private_index("HEAD")?;
    let committed = private
        .check(&["apply", "--cached", "--check", "--reverse", patch.as_str()])?
        .is_ok();
    if !committed {
        private.run(&["apply", "--cached", patch.as_str()])?;
        let tree = String::from_utf8_lossy(&private.run(&["write-tree"])?)
            .trim()
            .to_owned();
        let old = git.head()?;
        let commit = String::from_utf8_lossy(&git.run(&[
            "commit-tree",
            &tree,
            "-p",
            &old,
            "-m",
            message,
        ])?)
        .trim()
        .to_owned();
        git.run(&["update-ref", "HEAD", &commit, &old])?;
    }
    let mut reset = vec!["reset", "--quiet", "--"];
    reset.extend(paths);
    git.run(&reset)?;
    if git.check(&["apply", "--check", patch.as_str()])?.is_ok() {
        git.run(&["apply", patch.as_str()])?;
    }
    git.head()
}

/// `bytes` in a temporary file for git to read.
fn patch_file(bytes: &[u8]) -> Result<crate::git::PatchFile, Kind> {
    crate::git::PatchFile::write(bytes).map_err(|e| {
        Kind::Invalid(format!(
            "the patch cannot be written to a temporary file for git: {e}"
        ))
    })
}

/// The release verdict, by one rule: **what the last reviewer said** (the
/// final acceptance; without one, approved, as every phase passed), made
/// **rejected** by any receipt gap left after the waivers. A waiver covers
/// receipt gaps and findings, so that they no longer hold the delivery
/// back; it never turns a reviewer's rejection into an approval: it brings
/// the run to its gate, where the rejection is decided (`fix` or `halt`).
/// Handoffs moved past with `continue` do not change it. The gate names the
/// waivers and the overrides beside it.
pub(crate) fn release_verdict(spec: &DeliverySpec) -> Verdict {
    if spec.gaps.is_empty() {
        spec.reviewer_verdict
    } else {
        Verdict::Rejected
    }
}

#[cfg(test)]
mod release_tests {
    use orcho_core::{Finding, Severity};
    use orcho_receipts::ReadinessSummary;

    use super::*;

    fn spec(verdict: Verdict, findings: &[&str], waived: &[&str]) -> DeliverySpec {
        let readiness = ReadinessSummary::new(Vec::new(), Vec::new(), Vec::new(), 0);
        let run: RunId = "run-1".parse().expect("run id");
        DeliverySpec::new(run, verdict, "/w", "HEAD", "/t", &readiness)
            .with_findings(
                findings
                    .iter()
                    .map(|t| Finding::new("review", Severity::High, *t))
                    .collect(),
            )
            .with_waivers(
                |f| waived.contains(&f.title.as_str()),
                waived.iter().map(ToString::to_string),
            )
    }

    #[test]
    fn the_release_verdict_follows_one_rule() {
        use Verdict::{Approved, Incomplete, Rejected};
        for (reviewer, findings, waived, release) in [
            (Approved, &[][..], &[][..], Approved),
            (Approved, &["nit"][..], &[][..], Approved),
            // A waiver brings a rejection to the gate; it stays a rejection.
            (Rejected, &["no test"][..], &["no test"][..], Rejected),
            (
                Rejected,
                &["no test", "no docs"][..],
                &["no test"][..],
                Rejected,
            ),
            // Nothing waived, or nothing to waive: the reviewer's word.
            (Rejected, &[][..], &[][..], Rejected),
            (Incomplete, &["unfinished"][..], &[][..], Incomplete),
        ] {
            assert_eq!(
                release_verdict(&spec(reviewer, findings, waived)),
                release,
                "{reviewer} with {findings:?}, {waived:?} waived"
            );
        }
    }
}
