//! Pre-run intake: what happens to uncommitted changes in the checkout
//! before a run starts.
//!
//! [`detect_intake`] reports the checkout's tracked edits (staged or not),
//! its untracked files, and how many there are. When there are any, the
//! engine asks the intake question ([`Intakes::open`]) and somebody decides
//! an [`IntakeAction`](orcho_handoff::IntakeAction):
//!
//! | action | effect |
//! |---|---|
//! | `include` | the changes become a *seed patch* kept with the run (`git diff --binary`, untracked files included, built in a private index: the user's index is never touched); the run's worktree gets it with `git apply --check`, then `git apply` ([`Intakes::seed`]). A seed that does not apply is a typed error, never a silent start from `HEAD`. |
//! | `exclude` | the run starts from `HEAD`; the changes stay in the checkout. |
//! | `commit` | the changes are committed first (`git add --all`, `git commit`); the run starts from that commit. |
//! | `halt` | the run does not start. |
//!
//! The decision is recorded through the shared decision-point lifecycle
//! ([`Points`](orcho_handoff::point::Points): first writer wins, an identical
//! decision replays, a different one is a conflict), and [`Intakes::apply`]
//! acts on it once, recording the [`IntakeOutcome`].
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

mod detect;
mod error;
mod format;
mod store;

pub use detect::{ChangeKind, DetectError, IntakeReport, TrackedChange, detect_intake};
pub use error::{IntakeError, IntakeRefusal};
pub use store::{IntakeOutcome, IntakeQuestions, Intakes, SEED_DIGEST_CONTEXT, SeedPatch};
