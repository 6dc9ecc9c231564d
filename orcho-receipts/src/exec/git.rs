//! How Orcho runs `git` for the user's repository: one request shape for
//! every crate that does.

use std::time::Duration;

use camino::Utf8Path;

use super::{BaseEnv, ExecRequest};

/// How long one git command may take before its process group is killed.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(300);

/// The host variables git reads for who commits and where its own
/// configuration is, passed through beside the base environment: a commit
/// (or a note) Orcho makes for the user is by the identity git itself
/// would use there, including one a CI job sets only in the environment.
/// Nothing that moves the repository (`GIT_DIR`, `GIT_WORK_TREE`,
/// `GIT_INDEX_FILE`) is passed.
pub const GIT_IDENTITY_VARS: &[&str] = &[
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "EMAIL",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM",
    "XDG_CONFIG_HOME",
    // Pushing and fetching notes: the user's way to reach a remote.
    "SSH_AUTH_SOCK",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
];

/// `git <args>` in `dir`: the documented base environment with
/// [`GIT_IDENTITY_VARS`], `LC_ALL=C` (stable messages),
/// `GIT_TERMINAL_PROMPT=0` (never wait for a password) and
/// [`GIT_TIMEOUT`]. Callers add how much output to keep.
pub fn git_request(dir: &Utf8Path, args: &[&str]) -> ExecRequest {
    ExecRequest::new(std::iter::once("git").chain(args.iter().copied()))
        .cwd(dir.to_owned())
        .envs(BaseEnv::inherit().with_host_vars(GIT_IDENTITY_VARS.iter().copied()))
        .env("LC_ALL", "C")
        .env("GIT_TERMINAL_PROMPT", "0")
        .timeout(GIT_TIMEOUT)
}
