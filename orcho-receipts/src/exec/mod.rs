//! The one place in Orcho that spawns processes.
//!
//! Every process Orcho starts (declared verification commands, environment
//! assertions, `git ls-files` for fingerprints) goes through [`run`]:
//!
//! - **argv only**: the program and its arguments, never a shell string;
//! - **an explicit environment**: the child sees exactly the variables of the
//!   [`ExecRequest`] (typically a [`BaseEnv`] with the declared variables over
//!   it), nothing inherited by accident;
//! - **its own process group**, so that a timeout or a cancellation reaches
//!   every process the command started;
//! - **`posix_spawn`, not `fork`**: a bare program name is looked up on
//!   the child's `PATH` (or `/bin:/usr/bin` when it has none) before the
//!   spawn, as `execvp` would in the child, so std can use its `vfork`-style
//!   path (with a working directory, that takes glibc 2.29 or later). A
//!   spawn then costs the same however much memory the host uses, and
//!   concurrent spawns do not serialise on copy-on-write faults. As with
//!   `execvp`, a file found on `PATH` without a `#!` line runs in `/bin/sh`;
//! - **a timeout** with `SIGTERM` to the group, a grace period, then
//!   `SIGKILL`; cancellation from another thread through a [`CancelToken`]
//!   does the same;
//! - **bounded output**: standard output and error are drained concurrently,
//!   the full (redacted) logs go to files with their digests, and only a
//!   bounded tail stays in memory, so a command printing a gigabyte costs
//!   disk, not memory.
//!
//! A request may ask for the command's whole tree
//! ([`ExecRequest::whole_tree`]): every process it started, also in a
//! session of its own, is followed and stopped with it.
//!
//! Processes that keep the output pipes open after the command exits
//! (daemons it left behind) are given [`LEAK_GRACE`], then the group is
//! killed. A group left running by a process that was killed itself is
//! stopped by the next one through a [`GroupMarker`].
//!
//! ```
//! use std::time::Duration;
//! use orcho_receipts::exec::{self, BaseEnv, ExecRequest, ExitStatus};
//!
//! let outcome = exec::run(
//!     &ExecRequest::new(["sh", "-c", "echo hello; exit 3"])
//!         .envs(BaseEnv::inherit())
//!         .timeout(Duration::from_secs(60)),
//! )?;
//! assert_eq!(outcome.status, ExitStatus::Exited(3));
//! assert_eq!(outcome.stdout.tail_lossy(), "hello\n");
//! # Ok::<(), orcho_receipts::ExecError>(())
//! ```

mod cancel;
mod detached;
mod env;
mod git;
mod imp;
mod leftover;
pub(crate) mod lookup;
mod output;
mod secrets;
mod status;
mod tree;

pub use cancel::CancelToken;
pub use detached::spawn_detached;
pub use env::{BASE_ENV_VARS, BaseEnv};
pub use git::{GIT_IDENTITY_VARS, GIT_TIMEOUT, git_request};
pub use imp::{
    DEFAULT_GRACE, DEFAULT_TAIL_BYTES, ExecOutcome, ExecRequest, LEAK_GRACE, run, run_streaming,
    run_teed,
};
pub use leftover::{GroupMarker, LEFTOVER_GRACE, Leftover, LeftoverError, LeftoverErrorKind};
pub use output::{CapturedOutput, LogFile, REDACTED, without_escapes};
pub use secrets::{HostSecrets, SECRETS_FD_VAR, SecretsError, take_host_secrets};
pub use status::{ExitStatus, signal_name};
pub use tree::claim_every_orphan;
