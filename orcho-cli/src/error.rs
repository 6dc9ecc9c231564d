//! What a failed command reports: [`CliError`], which carries its exit code
//! and a hint at what to do next.

use std::fmt;

use orcho::{EngineError, EngineErrorKind, profile::ProfileError};

use crate::exit;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The error of [`CliError::refused`].
#[derive(Debug)]
pub(crate) struct Refused(String);

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// Why a command failed, the exit code it ends with, and what to do next.
///
/// Any error converts into one; errors of the engine and of profiles get the
/// exit code and hint that fit them (a decision recorded first is a
/// [`CONFLICT`](exit::CONFLICT), an unknown run points at `orcho runs`).
pub struct CliError {
    error: BoxError,
    code: u8,
    hint: Option<String>,
}

impl CliError {
    /// A failure said in words, with [`ERROR`](exit::ERROR).
    pub fn msg(message: impl Into<String>) -> Self {
        Self {
            error: message.into().into(),
            code: exit::ERROR,
            hint: None,
        }
    }

    /// A request that is well formed but that where the run stands does
    /// not allow (a second follow-up of a run, say), with
    /// [`ERROR`](exit::ERROR); an MCP client sees the code `refused`.
    pub fn refused(message: impl Into<String>) -> Self {
        Self {
            error: Box::new(Refused(message.into())),
            code: exit::ERROR,
            hint: None,
        }
    }

    /// Arguments that are malformed or name nothing the profile declares,
    /// with [`USAGE`](exit::USAGE), as `clap` exits on arguments it
    /// refuses.
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            error: message.into().into(),
            code: exit::USAGE,
            hint: None,
        }
    }

    /// Ctrl-C stopped the command, with [`INTERRUPTED`](exit::INTERRUPTED).
    pub fn interrupted(message: impl Into<String>) -> Self {
        Self {
            error: message.into().into(),
            code: exit::INTERRUPTED,
            hint: None,
        }
    }

    /// The same error, ending the command with `code` (a program's own
    /// convention, such as a shell's 127 for one that cannot start).
    #[must_use]
    pub fn with_code(mut self, code: u8) -> Self {
        self.code = code;
        self
    }

    /// The same error with `hint`, in place of the one it had.
    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The exit code the command ends with.
    pub fn code(&self) -> u8 {
        self.code
    }

    /// `conflict` for a decision recorded first, `interrupted` after Ctrl-C,
    /// else `error`: the `kind` of the JSON error document.
    pub fn kind(&self) -> &'static str {
        match self.code {
            exit::CONFLICT => "conflict",
            exit::INTERRUPTED => "interrupted",
            _ => "error",
        }
    }

    /// What to do next, when there is something to say.
    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }

    /// The message with its causes, `: `-separated.
    pub fn message(&self) -> String {
        orcho::core::error_chain(self.error.as_ref())
    }

    /// The error itself, to look at its type.
    pub fn get_ref(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self.error.as_ref()
    }

    /// The error itself.
    pub fn into_inner(self) -> Box<dyn std::error::Error + Send + Sync> {
        self.error
    }

    fn classify(error: BoxError) -> Self {
        let (code, hint) = match error.downcast_ref::<EngineError>() {
            Some(e) => (
                if e.is_conflict() {
                    exit::CONFLICT
                } else {
                    exit::ERROR
                },
                engine_hint(e).map(str::to_owned).or_else(|| target_hint(e)),
            ),
            None => match error.downcast_ref::<ProfileError>() {
                // The file or built-in is not there: what `--profile` takes.
                Some(e) if is_unreadable(e) => (exit::ERROR, Some(PROFILE_HINT.to_owned())),
                Some(_) => (exit::ERROR, Some(PROFILE_KEYS_HINT.to_owned())),
                None => (exit::ERROR, None),
            },
        };
        Self { error, code, hint }
    }
}

/// What to do when the target's uncommitted changes refuse `approve` or
/// `apply`.
fn target_hint(e: &EngineError) -> Option<String> {
    let status = e.target_conflict()?;
    let run = e.run_id()?;
    Some(format!(
        "{}; `orcho delivery show {run}` shows the target's status",
        crate::output::text::target_remedy(status)
    ))
}

/// Where every key of a profile is described.
pub(crate) const PROFILE_KEYS_HINT: &str =
    "docs/profile.md describes every key; `orcho profile show` prints the profile in use";

/// Whether `e` says the profile is not there: no such file, or no such
/// built-in.
fn is_unreadable(e: &ProfileError) -> bool {
    matches!(
        e.kind(),
        orcho::profile::ProfileErrorKind::Read(_)
            | orcho::profile::ProfileErrorKind::UnknownBuiltin { .. }
    )
}

/// What `--profile` takes.
pub(crate) const PROFILE_HINT: &str = "`--profile` takes a YAML file or `builtin:default`, `builtin:quick`, `builtin:read_only_review`";

fn engine_hint(e: &EngineError) -> Option<&'static str> {
    if e.is_busy() {
        Some("another process is driving this run; wait for it to stop")
    } else if e.is_unknown_run() {
        Some(
            "`orcho runs` lists the runs of this store, `orcho inbox` those waiting for a decision",
        )
    } else if e.is_ambiguous_run() {
        Some("give more of the run's id; `orcho runs` lists them")
    } else if e.is_conflict() && matches!(e.kind(), EngineErrorKind::Supervision(_)) {
        Some(
            "answers are recorded once: those recorded first stand, and `orcho resume` acts on them",
        )
    } else if e.is_conflict() {
        Some("a decision is recorded once; `orcho handoff show` / `orcho delivery show` shows it")
    } else if e.is_awaiting_decision() {
        Some(
            "decide it first (`orcho handoff decide`, `orcho delivery decide`, `orcho plan …`), \
             then `orcho resume`",
        )
    } else if e.is_terminal() {
        Some("the run has ended; start a new one with `orcho run`")
    } else if matches!(e.kind(), EngineErrorKind::NoAdvisor) {
        Some("the CLI has no LLM advisor; embed Orcho in a host with one, or decide yourself")
    } else {
        None
    }
}

impl<E> From<E> for CliError
where
    E: std::error::Error + Send + Sync + 'static,
{
    fn from(error: E) -> Self {
        Self::classify(Box::new(error))
    }
}

impl fmt::Debug for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CliError")
            .field("error", &self.message())
            .field("code", &self.code)
            .field("hint", &self.hint)
            .finish()
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_error_exits_1_without_a_hint() {
        let e = CliError::from(std::io::Error::other("disk on fire"));
        assert_eq!((e.code(), e.kind(), e.hint()), (exit::ERROR, "error", None));
        assert_eq!(e.message(), "disk on fire");
    }

    #[test]
    fn an_unknown_run_points_at_the_inbox() {
        let store = tempfile::tempdir().unwrap();
        let store = camino::Utf8Path::from_path(store.path()).unwrap();
        let engine = orcho::Engine::builder(orcho::RunPlan::new("t", Vec::new()), store)
            .build()
            .unwrap();
        let e = CliError::from(engine.store().status(&"nope".parse().unwrap()).unwrap_err());
        assert_eq!(e.code(), exit::ERROR);
        assert!(e.hint().unwrap().contains("orcho inbox"), "{e:?}");
    }

    #[test]
    fn a_message_keeps_its_hint() {
        let e = CliError::msg("no such thing").with_hint("try another");
        assert_eq!(e.to_string(), "no such thing");
        assert_eq!(e.hint(), Some("try another"));
    }
}
