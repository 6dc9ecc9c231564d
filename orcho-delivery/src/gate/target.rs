//! The target checkout's state for a run's diff.

use std::{collections::BTreeSet, fmt};

use camino::{Utf8Path, Utf8PathBuf};

use super::DeliveryGate;
use crate::git::{Git, GitError};

/// The state of the target checkout, checked live before `approve` or
/// `apply` is decided and again before it is delivered.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TargetStatus {
    /// No uncommitted changes.
    Clean,
    /// Uncommitted changes that do not touch the run's files; the diff
    /// applies.
    Dirty {
        /// The changed (or untracked) paths.
        paths: Vec<Utf8PathBuf>,
    },
    /// The run also changed files that have uncommitted changes (included
    /// into the run at intake, say), and its diff applies on top of them:
    /// `apply` brings the run's changes over the uncommitted ones. `approve`
    /// commits the run's changes alone, leaving the uncommitted ones as
    /// they are, when they also apply to the committed files
    /// (`committable`); when they build on the uncommitted changes, it is
    /// refused.
    Overlapping {
        /// The target's uncommitted paths.
        dirty: Vec<Utf8PathBuf>,
        /// Those of them the run also changed.
        overlapping: Vec<Utf8PathBuf>,
        /// Whether the run's diff applies to the committed files too.
        committable: bool,
    },
    /// The diff would conflict: the target's own changes touch the run's
    /// files, or `git apply --check` fails. `approve` and `apply` are
    /// refused; the gate stays decidable.
    Conflicting {
        /// The target's uncommitted paths.
        dirty: Vec<Utf8PathBuf>,
        /// Those of them the run also changed.
        overlapping: Vec<Utf8PathBuf>,
        /// What `git apply --check` said, when it failed.
        apply_check: Option<String>,
    },
}

impl TargetStatus {
    /// Whether the run's diff would conflict with the target.
    pub fn is_conflicting(&self) -> bool {
        matches!(self, Self::Conflicting { .. })
    }

    /// Whether the target as it is refuses `action` (`approve` or `apply`).
    pub fn refuses(&self, action: orcho_handoff::DeliveryAction) -> bool {
        match self {
            Self::Conflicting { .. } => action.changes_target(),
            Self::Overlapping {
                committable: false, ..
            } => action == orcho_handoff::DeliveryAction::Approve,
            _ => false,
        }
    }

    /// The actions the target as it is refuses: `approve` and `apply` when
    /// the diff conflicts, `approve` alone when the diff builds on
    /// uncommitted changes, none otherwise.
    pub fn refused(&self) -> orcho_handoff::delivery::DeliveryActions {
        orcho_handoff::delivery::DeliveryActions::all()
            .iter()
            .filter(|action| self.refuses(*action))
            .collect()
    }

    /// Whether the target has no uncommitted changes.
    pub fn is_clean(&self) -> bool {
        matches!(self, Self::Clean)
    }

    /// `clean`, `dirty`, `overlapping` or `conflicting`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Clean => "clean",
            Self::Dirty { .. } => "dirty",
            Self::Overlapping { .. } => "overlapping",
            Self::Conflicting { .. } => "conflicting",
        }
    }

    /// The target's uncommitted paths the run also changed: what stands in
    /// the way when an action is refused.
    pub fn overlapping(&self) -> &[Utf8PathBuf] {
        match self {
            Self::Clean | Self::Dirty { .. } => &[],
            Self::Overlapping { overlapping, .. } | Self::Conflicting { overlapping, .. } => {
                overlapping
            }
        }
    }

    /// The target's status for `gate`'s diff (its patch at `patch`, an
    /// absolute path), checked now: the target's uncommitted paths, those
    /// the run also changed, and `git apply --check`.
    pub(crate) fn check(gate: &DeliveryGate, patch: &Utf8Path) -> Result<Self, GitError> {
        let git = Git::new(&gate.spec.target);
        let dirty: Vec<Utf8PathBuf> = git.status()?.into_iter().map(|e| e.path).collect();
        let changed: BTreeSet<&Utf8Path> =
            gate.diff.files.iter().map(|f| f.path.as_path()).collect();
        let overlapping: Vec<Utf8PathBuf> = dirty
            .iter()
            .filter(|p| changed.contains(p.as_path()))
            .cloned()
            .collect();
        let apply_check = if gate.diff.is_empty() {
            None
        } else {
            git.check(&["apply", "--check", patch.as_str()])?.err()
        };
        Ok(if apply_check.is_some() {
            Self::Conflicting {
                dirty,
                overlapping,
                apply_check,
            }
        } else if !overlapping.is_empty() {
            Self::Overlapping {
                dirty,
                overlapping,
                committable: git.applies_to_head(patch)?,
            }
        } else if dirty.is_empty() {
            Self::Clean
        } else {
            Self::Dirty { paths: dirty }
        })
    }
}

impl fmt::Display for TargetStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Clean => f.write_str("clean"),
            Self::Dirty { paths } => match paths.len() {
                1 => f.write_str("dirty (1 path, which the run did not change)"),
                n => write!(f, "dirty ({n} paths, none of which the run changed)"),
            },
            Self::Overlapping {
                overlapping,
                committable,
                ..
            } => {
                let (has, them) = if overlapping.len() == 1 {
                    ("has", "it")
                } else {
                    ("have", "them")
                };
                write!(
                    f,
                    "the run also changed {}, which {has} uncommitted changes; its diff applies on top of {them}",
                    orcho_core::spelling::quoted(overlapping)
                )?;
                if !committable {
                    f.write_str(
                        ", but builds on them: `approve` cannot commit the run's changes alone (`apply` brings them uncommitted)",
                    )?;
                }
                Ok(())
            }
            Self::Conflicting {
                overlapping,
                apply_check,
                ..
            } => {
                f.write_str("conflicting")?;
                if !overlapping.is_empty() {
                    write!(
                        f,
                        ": uncommitted changes to {}",
                        orcho_core::spelling::quoted(overlapping)
                    )?;
                }
                if let Some(check) = apply_check {
                    let first = check.lines().next().unwrap_or_default();
                    write!(f, "; git apply --check: {first}")?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orcho_handoff::DeliveryAction;

    #[test]
    fn overlapping_paths_are_said_in_the_right_number() {
        let one = TargetStatus::Overlapping {
            dirty: vec!["a.rs".into()],
            overlapping: vec!["a.rs".into()],
            committable: true,
        };
        let said = one.to_string();
        assert!(said.contains("which has uncommitted changes"), "{said}");
        assert!(said.ends_with("on top of it"), "{said}");
        let two = TargetStatus::Overlapping {
            dirty: vec!["a.rs".into(), "b.rs".into()],
            overlapping: vec!["a.rs".into(), "b.rs".into()],
            committable: true,
        };
        let said = two.to_string();
        assert!(said.contains("which have uncommitted changes"), "{said}");
        assert!(said.ends_with("on top of them"), "{said}");
    }

    #[test]
    fn a_status_says_what_it_refuses_and_counts_its_paths_in_words() {
        let one = TargetStatus::Dirty {
            paths: vec!["notes.md".into()],
        };
        assert_eq!(
            one.to_string(),
            "dirty (1 path, which the run did not change)"
        );
        assert!(one.refused().is_empty());
        let two = TargetStatus::Dirty {
            paths: vec!["a".into(), "b".into()],
        };
        assert_eq!(
            two.to_string(),
            "dirty (2 paths, none of which the run changed)"
        );

        let builds_on = TargetStatus::Overlapping {
            dirty: vec!["a.txt".into()],
            overlapping: vec!["a.txt".into()],
            committable: false,
        };
        assert_eq!(builds_on.refused().spellings(), ["approve"]);
        assert_eq!(builds_on.overlapping(), ["a.txt"]);
        let conflicting = TargetStatus::Conflicting {
            dirty: vec!["a.txt".into()],
            overlapping: vec!["a.txt".into()],
            apply_check: None,
        };
        assert!(conflicting.refused().contains(DeliveryAction::Apply));
        assert_eq!(conflicting.as_str(), "conflicting");
    }
}
