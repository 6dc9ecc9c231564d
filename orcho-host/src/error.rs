//! What a failed command reports: [`CliError`], one typed kind of failure
//! ([`CliErrorKind`]) with its exit code and a hint at what to do next.

use std::fmt;

use orcho::{EngineError, Remedy, notify::NotifyError, profile::ProfileError};

use crate::exit;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why a command failed: its kind, a hint at what to do next, and the exit
/// code it ends with ([`exit_code`](Self::exit_code)).
///
/// Errors of the engine and of profiles keep their type, so the code and
/// the hint come from what they are (a decision recorded first is a
/// [`CONFLICT`](exit::CONFLICT), an unknown run points at `orcho runs`),
/// never from a guess at a message.
pub struct CliError {
    kind: Box<CliErrorKind>,
    hint: Option<String>,
    code: Option<u8>,
}

/// What kind of failure a [`CliError`] is.
#[derive(Debug)]
#[non_exhaustive]
pub enum CliErrorKind {
    /// The engine refused or failed.
    Engine(EngineError),
    /// A profile did not load.
    Profile(ProfileError),
    /// Arguments that are malformed or name nothing the profile declares
    /// ([`USAGE`](exit::USAGE), as `clap` exits on arguments it refuses).
    Usage(String),
    /// A request that is well formed but that where things stand does not
    /// allow (a second follow-up of a run, say); an MCP client sees the
    /// code `refused`.
    Refused(String),
    /// A phase command that cannot be started: bad input, not a rejected
    /// attempt.
    CannotStart(String),
    /// A phase's command or agent that could not start where the run would
    /// run it, said before the run is created (so there is no run to stop).
    NotStartable(String),
    /// The point a decision was taken on is no longer the one that is open
    /// (the run moved on, the plan changed): nothing was recorded
    /// ([`CONFLICT`](exit::CONFLICT)).
    Moved(String),
    /// Ctrl-C stopped the command ([`INTERRUPTED`](exit::INTERRUPTED)).
    Interrupted(String),
    /// Standard input ended (Ctrl-D) before an answer was given.
    InputClosed,
    /// Anything else that failed, said in words, with its cause.
    Failed(BoxError),
}

impl CliError {
    fn of(kind: CliErrorKind) -> Self {
        Self {
            kind: Box::new(kind),
            hint: None,
            code: None,
        }
    }

    /// A failure said in words, with [`ERROR`](exit::ERROR).
    pub fn msg(message: impl Into<String>) -> Self {
        Self::of(CliErrorKind::Failed(message.into().into()))
    }

    /// A failure of another kind of error (one this layer does not know),
    /// said with its causes, with [`ERROR`](exit::ERROR).
    pub fn failed(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::of(CliErrorKind::Failed(Box::new(error)))
    }

    /// A decision on a point that is no longer the open one, with
    /// [`CONFLICT`](exit::CONFLICT).
    pub fn moved(message: impl Into<String>) -> Self {
        Self::of(CliErrorKind::Moved(message.into()))
    }

    /// A request refused where things stand, with [`ERROR`](exit::ERROR).
    pub fn refused(message: impl Into<String>) -> Self {
        Self::of(CliErrorKind::Refused(message.into()))
    }

    /// Malformed arguments, with [`USAGE`](exit::USAGE).
    pub fn usage(message: impl Into<String>) -> Self {
        Self::of(CliErrorKind::Usage(message.into()))
    }

    /// Ctrl-C stopped the command, with [`INTERRUPTED`](exit::INTERRUPTED).
    pub fn interrupted(message: impl Into<String>) -> Self {
        Self::of(CliErrorKind::Interrupted(message.into()))
    }

    /// A phase command that cannot start.
    pub fn cannot_start(message: impl Into<String>) -> Self {
        Self::of(CliErrorKind::CannotStart(message.into()))
    }

    /// A phase's command or agent that could not start, found before the
    /// run is created.
    pub fn not_startable(message: impl Into<String>) -> Self {
        Self::of(CliErrorKind::NotStartable(message.into()))
    }

    /// Standard input closed before an answer.
    pub fn input_closed() -> Self {
        Self::of(CliErrorKind::InputClosed)
    }

    /// The same error, ending the command with `code` (a program's own
    /// convention, such as a shell's 127 for one that cannot start).
    #[must_use]
    pub fn with_code(mut self, code: u8) -> Self {
        self.code = Some(code);
        self
    }

    /// The same error with `hint`, in place of the one it had.
    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// What kind of failure it is.
    pub fn kind(&self) -> &CliErrorKind {
        &self.kind
    }

    /// The exit code the command ends with.
    pub fn exit_code(&self) -> u8 {
        if let Some(code) = self.code {
            return code;
        }
        match &*self.kind {
            CliErrorKind::Engine(e) if e.is_conflict() => exit::CONFLICT,
            // A run that halted says so with its exit code, whenever asked.
            CliErrorKind::Engine(e)
                if matches!(
                    e.refusal(),
                    Some(orcho::Refusal::Ended {
                        status: orcho::core::RunStatus::Halted,
                        ..
                    })
                ) =>
            {
                exit::HALTED
            }
            CliErrorKind::Usage(_) => exit::USAGE,
            CliErrorKind::Moved(_) => exit::CONFLICT,
            CliErrorKind::Interrupted(_) => exit::INTERRUPTED,
            _ => exit::ERROR,
        }
    }

    /// `conflict` for a decision recorded first, `interrupted` after Ctrl-C,
    /// else `error`: the `kind` of the JSON error document.
    pub fn label(&self) -> &'static str {
        match self.exit_code() {
            exit::CONFLICT => "conflict",
            exit::INTERRUPTED => "interrupted",
            _ => "error",
        }
    }

    /// What to do next, when there is something to say: the hint given, or
    /// the one the error's kind calls for.
    pub fn hint(&self) -> Option<String> {
        if let Some(hint) = &self.hint {
            return Some(hint.clone());
        }
        match &*self.kind {
            CliErrorKind::Engine(e) => engine_hint(e),
            CliErrorKind::Profile(e) if is_unreadable(e) => Some(PROFILE_HINT.to_owned()),
            CliErrorKind::Profile(_) => Some(PROFILE_KEYS_HINT.to_owned()),
            _ => None,
        }
    }

    /// The message, without its hint.
    pub fn message(&self) -> String {
        match &*self.kind {
            CliErrorKind::Engine(e) => orcho::core::error_chain(e),
            CliErrorKind::Profile(e) => orcho::core::error_chain(e),
            CliErrorKind::Failed(e) => orcho::core::error_chain(e.as_ref()),
            CliErrorKind::Usage(m)
            | CliErrorKind::Moved(m)
            | CliErrorKind::Refused(m)
            | CliErrorKind::CannotStart(m)
            | CliErrorKind::NotStartable(m)
            | CliErrorKind::Interrupted(m) => m.clone(),
            CliErrorKind::InputClosed => {
                "standard input closed before an answer was given".to_owned()
            }
        }
    }
}

/// What to do about an engine error, in the CLI's words: from the remedy
/// the engine gives as data.
fn engine_hint(e: &EngineError) -> Option<String> {
    if let Some(status) = e.target_conflict()
        && let Some(run) = e.run_id()
    {
        return Some(format!(
            "{}; `orcho delivery show {run}` shows the target's status",
            target_remedy(status)
        ));
    }
    if let (orcho::EngineErrorKind::Handoff(h), Some(run)) = (e.kind(), e.run_id())
        && h.is_refused(|r| {
            matches!(
                r,
                orcho::handoff::handoff::HandoffRefusal::UnknownAdvice(_)
                    | orcho::handoff::handoff::HandoffRefusal::AdviceForOtherHandoff { .. }
            )
        })
    {
        return Some(format!(
            "`orcho handoff advise {run}` asks for advice and prints its id"
        ));
    }
    if e.is_conflict() && matches!(e.kind(), orcho::EngineErrorKind::Supervision(_)) {
        return Some(
            "answers are recorded once: those recorded first stand, and `orcho resume` acts on them"
                .to_owned(),
        );
    }
    if e.is_conflict() && matches!(e.kind(), orcho::EngineErrorKind::Intake(_)) {
        let run = e
            .run_id()
            .map_or_else(|| "RUN".to_owned(), ToString::to_string);
        return Some(format!(
            "a decision is recorded once; `orcho intake show {run}` shows the one recorded first"
        ));
    }
    if let Some(Remedy::DriveTheFollowUp(child)) = e.remedy() {
        return Some(format!(
            "`orcho resume {child}` drives it on; `orcho evidence {child}` shows where it stands"
        ));
    }
    if let Some(Remedy::ReadTheRecordedDecision) = e.remedy() {
        let run = e
            .run_id()
            .map_or_else(|| "RUN".to_owned(), ToString::to_string);
        return Some(format!(
            "a decision is recorded once; `orcho log {run}` lists what was decided, and by whom"
        ));
    }
    if let Some(Remedy::DriveItThere(origin)) = e.remedy() {
        let run = e
            .run_id()
            .map_or_else(|| "RUN".to_owned(), ToString::to_string);
        return Some(format!(
            "on {}, in {}: `orcho resume {run}`; decisions can be made from here \
             (`orcho inbox` lists them)",
            origin.machine, origin.checkout
        ));
    }
    Some(
        match e.remedy()? {
            Remedy::WaitForDriver => "another process is driving this run; wait for it to stop",
            Remedy::ListRuns => {
                "`orcho runs` lists the runs of this store, `orcho inbox` those waiting for a decision"
            }
            Remedy::MoreOfTheId => "give more of the run's id; `orcho runs` lists them",
            Remedy::StartANewRun => "the run has ended; start a new one with `orcho run`",
            Remedy::ConfigureAnAdvisor => {
                concat!(
                    "add an `advisor:` block to the profile (",
                    crate::docs_url!("profile.md#advisor"),
                    "), or decide yourself"
                )
            }
            _ => return None,
        }
        .to_owned(),
    )
}

/// Where the documentation is, for a user who has the binary and not the
/// repository: its pages online, `docs_url!("profile.md#advisor")`.
#[macro_export]
macro_rules! docs_url {
    ($page:literal) => {
        concat!(env!("CARGO_PKG_REPOSITORY"), "/blob/main/docs/", $page)
    };
}

/// Where every key of a profile is described.
pub const PROFILE_KEYS_HINT: &str = concat!(
    docs_url!("profile.md"),
    " describes every key; `orcho profile show` prints the profile in use"
);

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
pub const PROFILE_HINT: &str = "`--profile` takes a YAML file or `builtin:default`, `builtin:quick`, `builtin:read_only_review`";

impl From<EngineError> for CliError {
    fn from(e: EngineError) -> Self {
        Self::of(CliErrorKind::Engine(e))
    }
}

impl From<ProfileError> for CliError {
    fn from(e: ProfileError) -> Self {
        Self::of(CliErrorKind::Profile(e))
    }
}

impl From<orcho::DriveError<Self>> for CliError {
    fn from(e: orcho::DriveError<Self>) -> Self {
        match e {
            orcho::DriveError::Engine(e) => e.into(),
            orcho::DriveError::Host(e) => e,
            other => Self::of(CliErrorKind::Failed(Box::new(other))),
        }
    }
}

impl From<orcho::phase::PhaseError> for CliError {
    fn from(e: orcho::phase::PhaseError) -> Self {
        match e {
            orcho::phase::PhaseError::Store(e) => e.into(),
            other => Self::of(CliErrorKind::Failed(Box::new(other))),
        }
    }
}

impl From<NotifyError> for CliError {
    fn from(e: NotifyError) -> Self {
        let hint = match &e {
            NotifyError::Unknown { .. } => Some("`orcho notify list` lists them"),
            NotifyError::Exists(_) => {
                Some("`orcho notify remove NAME` first, or choose another name")
            }
            NotifyError::BadName { .. } => {
                Some("a name is letters, digits, `-`, `_`, `.` and `@`: `team-chat`")
            }
            _ => None,
        };
        let usage = matches!(
            e,
            NotifyError::Unknown { .. }
                | NotifyError::Exists(_)
                | NotifyError::BadName { .. }
                | NotifyError::UnknownEvent { .. }
        );
        let error = if usage {
            Self::usage(e.to_string())
        } else {
            Self::msg(orcho::core::error_chain(&e))
        };
        match hint {
            Some(hint) => error.with_hint(hint),
            None => error,
        }
    }
}

/// Failures with nothing to say beyond their message.
macro_rules! failed_from {
    ($($source:ty),* $(,)?) => {$(
        impl From<$source> for CliError {
            fn from(e: $source) -> Self {
                Self::of(CliErrorKind::Failed(Box::new(e)))
            }
        }
    )*};
}

failed_from!(
    std::io::Error,
    serde_json::Error,
    tokio::task::JoinError,
    camino::FromPathBufError,
    orcho::core::IdError,
    orcho::core::StoreError,
    orcho::core::DocumentError,
    orcho::core::JournalError,
    orcho::receipts::ReceiptError,
    orcho::receipts::ContractError,
    orcho::receipts::ExecError,
    orcho::handoff::handoff::ChoiceError,
    orcho::handoff::delivery::DeliveryChoiceError,
    orcho::handoff::intake::IntakeChoiceError,
    orcho::handoff::handoff::HandoffError,
    orcho::core::FsError,
    orcho::receipts::exec::LeftoverError,
    orcho::receipts::NameError,
    orcho_agents::Error,
);

impl fmt::Debug for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CliError")
            .field("error", &self.message())
            .field("code", &self.exit_code())
            .field("hint", &self.hint())
            .finish()
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for CliError {}

/// How to clear what the target's status stands in the way of.
pub fn target_remedy(status: &orcho::delivery::TargetStatus) -> String {
    if head_moved(status) {
        return HEAD_MOVED.to_owned();
    }
    format!(
        "{}, then decide again; `skip` keeps the run's worktree as it is",
        clear_target(status)
    )
}

/// How to clear the target for a decision already recorded: it stands.
pub fn target_remedy_decided(status: &orcho::delivery::TargetStatus) -> String {
    format!(
        "the recorded decision stands: {}, then",
        clear_target(status)
    )
}

/// A clean target whose HEAD moved on so that the run's diff no longer
/// applies: nothing to commit or stash, and what to do instead.
const HEAD_MOVED: &str = "the target's HEAD moved on since the run's base and the run's diff no \
    longer applies to it (nothing uncommitted is in the way): `skip` (or `halt`, which keeps the \
    worktree) and start a new run from the new HEAD, or bring the run's work over by hand \
    (`orcho delivery show --diff` prints it)";

/// A clean target the diff does not apply to: its HEAD moved on since the
/// run's base, and nothing uncommitted is in the way.
fn head_moved(status: &orcho::delivery::TargetStatus) -> bool {
    matches!(status, orcho::delivery::TargetStatus::Conflicting { dirty, .. } if dirty.is_empty())
}

/// What clears the target: committing or stashing its changes, named when
/// they touch the run's files.
fn clear_target(status: &orcho::delivery::TargetStatus) -> String {
    if head_moved(status) {
        return HEAD_MOVED.to_owned();
    }
    match status.overlapping() {
        [] => "commit or stash the target's uncommitted changes".to_owned(),
        overlapping => format!(
            "commit or stash the target's changes to {}",
            orcho::core::spelling::quoted(overlapping)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_error_exits_1_without_a_hint() {
        let e = CliError::from(std::io::Error::other("disk on fire"));
        assert_eq!(
            (e.exit_code(), e.label(), e.hint()),
            (exit::ERROR, "error", None)
        );
        assert_eq!(e.message(), "disk on fire");
    }

    #[test]
    fn an_unknown_run_points_at_the_inbox() {
        let store = tempfile::tempdir().unwrap();
        let store = camino::Utf8Path::from_path(store.path()).unwrap();
        let e = CliError::from(
            orcho::Store::open(store)
                .status(&"nope".parse().unwrap())
                .unwrap_err(),
        );
        assert_eq!(e.exit_code(), exit::ERROR);
        assert!(e.hint().unwrap().contains("orcho inbox"), "{e:?}");
    }

    #[test]
    fn a_message_keeps_its_hint() {
        let e = CliError::msg("no such thing").with_hint("try another");
        assert_eq!(e.to_string(), "no such thing");
        assert_eq!(e.hint().as_deref(), Some("try another"));
    }

    #[test]
    fn usage_and_interruption_have_their_codes() {
        assert_eq!(CliError::usage("bad").exit_code(), exit::USAGE);
        assert_eq!(CliError::interrupted("^C").exit_code(), exit::INTERRUPTED);
        assert_eq!(CliError::msg("x").with_code(127).exit_code(), 127);
    }
}
