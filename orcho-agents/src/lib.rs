//! Orcho inside coding agents: the hook documents agents send, the
//! answers they read back and the guard on their tool calls ([`hook`],
//! [`hook::guard`]), and coding agents as phase runners ([`runner`]).
//!
//! A host that installs Orcho's hooks in an agent, or runs an agent as a
//! phase, stands on this crate; the `orcho` command line is one such host.
//! Adding an agent is one module and one table row: [`hook::Agent::dialect`]
//! for its hooks, [`runner::RUNNERS`] to run phases with it.

pub mod hook;
pub mod runner;

/// Why the stop guard's records could not be kept or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be written.
    #[error(transparent)]
    Fs(#[from] orcho::core::FsError),
    /// A document could not be written.
    #[error(transparent)]
    Document(#[from] orcho::core::DocumentError),
    /// A journal could not be appended to or read.
    #[error(transparent)]
    Journal(#[from] orcho::core::JournalError),
    /// A record could not be removed.
    #[error("cannot remove `{path}`: {source}")]
    Remove {
        /// The file.
        path: camino::Utf8PathBuf,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
}

/// The variable `name` of this process, when set, not empty and UTF-8.
pub(crate) fn env_text(name: &str) -> Option<String> {
    std::env::var_os(name)
        .and_then(|v| v.into_string().ok())
        .filter(|v| !v.is_empty())
}
