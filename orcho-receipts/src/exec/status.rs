//! How a command ended.

use std::{fmt, time::Duration};

/// How a command ended. Each way it can fail is distinguishable, with its
/// data: the exit code, the signal, the timeout, the spawn error.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExitStatus {
    /// It exited with this code; `0` is success.
    Exited(i32),
    /// A signal it did not survive ended it (not one Orcho sent).
    Signaled(i32),
    /// It ran past its timeout and Orcho killed its process group.
    TimedOut {
        /// The timeout.
        after: Duration,
    },
    /// It was cancelled through a [`CancelToken`](super::CancelToken) and
    /// Orcho killed its process group.
    Cancelled,
    /// It could not be started at all (no such program, not executable, no
    /// such working directory, …).
    SpawnFailed {
        /// The operating system's message.
        message: String,
    },
}

impl ExitStatus {
    /// Whether the command exited with code 0.
    pub fn success(&self) -> bool {
        matches!(self, Self::Exited(0))
    }

    /// The exit code, if it exited.
    pub fn code(&self) -> Option<i32> {
        match self {
            Self::Exited(code) => Some(*code),
            _ => None,
        }
    }
}

impl fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Exited(code) => write!(f, "exit code {code}"),
            Self::Signaled(sig) => match signal_name(*sig) {
                Some(name) => write!(f, "killed by signal {sig} ({name})"),
                None => write!(f, "killed by signal {sig}"),
            },
            Self::TimedOut { after } => {
                write!(f, "timed out after {}", crate::HumanDuration::new(*after))
            }
            Self::Cancelled => f.write_str("cancelled"),
            Self::SpawnFailed { message } => write!(f, "could not be started: {message}"),
        }
    }
}

/// The conventional name of a Linux signal number, for example
/// `signal_name(9) == Some("SIGKILL")`.
pub fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        10 => "SIGUSR1",
        11 => "SIGSEGV",
        12 => "SIGUSR2",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        24 => "SIGXCPU",
        25 => "SIGXFSZ",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display() {
        insta::assert_snapshot!(ExitStatus::Exited(2), @"exit code 2");
        insta::assert_snapshot!(ExitStatus::Signaled(11), @"killed by signal 11 (SIGSEGV)");
        insta::assert_snapshot!(ExitStatus::Signaled(40), @"killed by signal 40");
        insta::assert_snapshot!(ExitStatus::TimedOut { after: Duration::from_secs(2) }, @"timed out after 2s");
        insta::assert_snapshot!(ExitStatus::Cancelled, @"cancelled");
        assert!(ExitStatus::Exited(0).success());
        assert!(!ExitStatus::Exited(1).success());
    }
}
