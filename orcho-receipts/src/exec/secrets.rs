//! Keys out of reach of the commands a host runs.
//!
//! A host that takes its keys from its environment ([`RECEIPT_KEY_VAR`],
//! [`SIGNING_KEY_VAR`]) gives no command they run the variables (see
//! [`BaseEnv`](super::BaseEnv)). But a command runs as the same user as
//! the host, and on Linux a process of that user can read another's
//! environment and memory through `/proc/<pid>/environ` and
//! `/proc/<pid>/mem` — the host is the command's parent, `$PPID`.
//! [`take_host_secrets`], called first thing in a host's `main`, closes
//! both:
//!
//! 1. the process marks itself **not dumpable** (`PR_SET_DUMPABLE` 0):
//!    its `/proc/<pid>` files then belong to root, and no process of the
//!    same user may read its environment or memory, or attach to it;
//! 2. when a key variable is set, the process **executes itself again
//!    without it**: the values go through a pipe that the new image reads
//!    and drains at once, so the environment the kernel shows for the
//!    process no longer holds them. The new image marks itself not
//!    dumpable before it reads the pipe.
//!
//! What stays possible: root (or a process with `CAP_SYS_PTRACE`) reads
//! any process's memory, keys included; and the shell that started the
//! host still holds the variables it was given, so a command that walks up
//! past its parent finds them there. That is why signing in CI happens in
//! a step of its own that runs no command of the repository
//! (`docs/attestations.md`).

use std::{
    ffi::OsString,
    io::{self, Read as _, Write as _},
    os::unix::process::CommandExt as _,
    process::Command,
};

use crate::store::{RECEIPT_KEY_VAR, SIGNING_KEY_VAR};

/// The variable that tells the re-executed image which descriptor holds
/// its keys. Set only by [`take_host_secrets`] for its own new image.
pub const SECRETS_FD_VAR: &str = "ORCHO_SECRETS_FD";

/// The longest value of a key variable taken: a key is a few dozen bytes.
const MAX_SECRET_BYTES: usize = 4096;

/// The keys a host process was started with, once they are out of its
/// environment.
///
/// Its `Debug` form never shows a value.
#[derive(Clone, Default)]
pub struct HostSecrets {
    receipt: Option<String>,
    signing: Option<String>,
    dumpable: bool,
}

impl std::fmt::Debug for HostSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostSecrets")
            .field("receipt", &self.receipt.as_ref().map(|_| ".."))
            .field("signing", &self.signing.as_ref().map(|_| ".."))
            .field("dumpable", &self.dumpable)
            .finish()
    }
}

impl HostSecrets {
    /// None: the host takes its keys from files.
    pub fn none() -> Self {
        Self::default()
    }

    /// The value the host was given in [`RECEIPT_KEY_VAR`].
    pub fn receipt_secret(&self) -> Option<&str> {
        self.receipt.as_deref()
    }

    /// The value the host was given in [`SIGNING_KEY_VAR`].
    pub fn signing_secret(&self) -> Option<&str> {
        self.signing.as_deref()
    }

    /// Whether the process could not mark itself not dumpable (a platform
    /// without `PR_SET_DUMPABLE`, or a refusal): its memory is then as
    /// readable as any process's of its user.
    pub fn still_dumpable(&self) -> bool {
        self.dumpable
    }

    fn set(&mut self, name: &[u8], value: String) {
        if name == RECEIPT_KEY_VAR.as_bytes() {
            self.receipt = Some(value);
        } else if name == SIGNING_KEY_VAR.as_bytes() {
            self.signing = Some(value);
        }
    }
}

/// Why the keys could not be taken out of the environment.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecretsError {
    /// A key variable's value is longer than any key.
    #[error("`{name}` holds {bytes} bytes, more than any key ({MAX_SECRET_BYTES} at most)")]
    TooLong {
        /// The variable.
        name: &'static str,
        /// Its length.
        bytes: usize,
    },
    /// A key variable's value is not UTF-8.
    #[error("`{name}` is not UTF-8 text")]
    NotUtf8 {
        /// The variable.
        name: &'static str,
    },
    /// The pipe for the keys, or the new image, could not be made.
    #[error("cannot execute this program again without its keys in the environment")]
    Reexec(#[source] io::Error),
    /// The re-executed image could not read its keys.
    #[error("cannot read the keys passed on descriptor `{fd}`")]
    Read {
        /// The descriptor.
        fd: String,
        /// Why.
        #[source]
        source: io::Error,
    },
}

/// Marks this process not dumpable and, when a key variable is set,
/// executes it again without it, the keys passed over a pipe. Returns the
/// keys — only in the new image, since the first one does not return when
/// it re-executes.
///
/// Call it first thing in `main`, before threads or a runtime start.
///
/// # Errors
///
/// A key variable too long or not UTF-8, a pipe or `exec` that fails (the
/// process then still has its keys in its environment; a host may go on
/// with [`HostSecrets::from_environment`]), or a descriptor that cannot be
/// read.
pub fn take_host_secrets() -> Result<HostSecrets, SecretsError> {
    let dumpable = !protect_process();
    if let Some(fd) = std::env::var_os(SECRETS_FD_VAR) {
        let mut secrets = read_passed(&fd)?;
        secrets.dumpable = dumpable;
        return Ok(secrets);
    }
    let given = given_in_environment()?;
    if given.is_empty() {
        return Ok(HostSecrets {
            dumpable,
            ..HostSecrets::default()
        });
    }
    Err(SecretsError::Reexec(reexec_without(&given)))
}

impl HostSecrets {
    /// The keys as this process's environment holds them, without taking
    /// them out of it: for a library host that cannot re-execute, or after
    /// [`take_host_secrets`] failed to.
    ///
    /// # Errors
    ///
    /// A key variable too long or not UTF-8.
    pub fn from_environment() -> Result<Self, SecretsError> {
        let mut secrets = Self::default();
        for (name, value) in given_in_environment()? {
            secrets.set(name.as_bytes(), value);
        }
        Ok(secrets)
    }
}

/// `PR_SET_DUMPABLE` 0; whether it took.
fn protect_process() -> bool {
    #[cfg(target_os = "linux")]
    {
        rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
            .is_ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// The key variables set in this process's environment, with their values.
fn given_in_environment() -> Result<Vec<(&'static str, String)>, SecretsError> {
    let mut given = Vec::new();
    for name in [RECEIPT_KEY_VAR, SIGNING_KEY_VAR] {
        let Some(value) = std::env::var_os(name) else {
            continue;
        };
        if value.len() > MAX_SECRET_BYTES {
            return Err(SecretsError::TooLong {
                name,
                bytes: value.len(),
            });
        }
        let value = value
            .into_string()
            .map_err(|_| SecretsError::NotUtf8 { name })?;
        given.push((name, value));
    }
    Ok(given)
}

/// Writes `given` to a pipe and replaces this process with a new image of
/// its own program, without the key variables, told the pipe's descriptor.
/// Returns only when that fails.
fn reexec_without(given: &[(&'static str, String)]) -> io::Error {
    let (reader, writer) = match rustix::pipe::pipe_with(rustix::pipe::PipeFlags::empty()) {
        Ok(pair) => pair,
        Err(e) => return e.into(),
    };
    // The writer must not reach the new image: only the reader survives
    // `exec`.
    if let Err(e) = rustix::io::fcntl_setfd(&writer, rustix::io::FdFlags::CLOEXEC) {
        return e.into();
    }
    let mut message = Vec::new();
    for (name, value) in given {
        message.extend_from_slice(name.as_bytes());
        message.push(b'=');
        message.extend_from_slice(value.as_bytes());
        message.push(0);
    }
    // Far below a pipe's buffer: the write does not block.
    let mut writer = std::fs::File::from(writer);
    if let Err(e) = writer.write_all(&message) {
        return e;
    }
    drop(writer);
    let program = match std::env::current_exe() {
        Ok(path) => path,
        Err(e) => return e,
    };
    let mut command = Command::new(program);
    let mut args = std::env::args_os();
    if let Some(arg0) = args.next() {
        command.arg0(arg0);
    }
    command.args(args);
    for (name, _) in given {
        command.env_remove(name);
    }
    command.env(SECRETS_FD_VAR, fd_number(&reader));
    // On success this does not return; the reader stays open across it.
    let error = command.exec();
    drop(reader);
    error
}

fn fd_number(fd: &impl std::os::fd::AsRawFd) -> OsString {
    OsString::from(fd.as_raw_fd().to_string())
}

/// Reads the keys the first image passed on descriptor `fd` (through its
/// `/dev/fd` name, which opens the same pipe), to its end.
fn read_passed(fd: &std::ffi::OsStr) -> Result<HostSecrets, SecretsError> {
    let shown = fd.to_string_lossy().into_owned();
    let fail = |source| SecretsError::Read {
        fd: shown.clone(),
        source,
    };
    let number: u32 = shown
        .parse()
        .map_err(|_| fail(io::Error::other("not a descriptor number")))?;
    let mut file = std::fs::File::open(format!("/dev/fd/{number}")).map_err(fail)?;
    let mut bytes = Vec::new();
    io::Read::by_ref(&mut file)
        .take(4 * MAX_SECRET_BYTES as u64)
        .read_to_end(&mut bytes)
        .map_err(fail)?;
    let mut secrets = HostSecrets::default();
    for entry in bytes.split(|&b| b == 0).filter(|e| !e.is_empty()) {
        let Some(eq) = entry.iter().position(|&b| b == b'=') else {
            continue;
        };
        let value = String::from_utf8(entry[eq + 1..].to_vec())
            .map_err(|_| fail(io::Error::other("a value that is not UTF-8")))?;
        secrets.set(&entry[..eq], value);
    }
    Ok(secrets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_a_value() {
        let mut secrets = HostSecrets::none();
        secrets.set(
            RECEIPT_KEY_VAR.as_bytes(),
            "hunter2hunter2hunter2".to_owned(),
        );
        let shown = format!("{secrets:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert_eq!(secrets.receipt_secret(), Some("hunter2hunter2hunter2"));
        assert_eq!(secrets.signing_secret(), None);
    }
}
