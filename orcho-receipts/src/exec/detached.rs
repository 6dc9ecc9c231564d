//! A process started and let go: it outlives its parent, and nothing waits
//! for it.

use std::{ffi::OsString, io, os::unix::process::CommandExt as _, process::Stdio};

/// Starts `argv` in a process group of its own (a Ctrl-C at the parent's
/// terminal does not reach it), with the parent's environment and `envs`
/// over it, no standard input or output, and lets it go: the caller does
/// not wait for it, and it goes on after the caller exits. Returns its
/// process id.
///
/// For work the caller must not wait for, such as sending notifications
/// that a slow endpoint could hold up.
///
/// # Errors
///
/// When it cannot be started.
pub fn spawn_detached<S: Into<OsString>, K: Into<OsString>, V: Into<OsString>>(
    argv: impl IntoIterator<Item = S>,
    envs: impl IntoIterator<Item = (K, V)>,
) -> io::Result<u32> {
    let mut argv = argv.into_iter().map(Into::into);
    let program = argv
        .next()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no program to start"))?;
    let child = std::process::Command::new(program)
        .args(argv)
        .envs(envs.into_iter().map(|(k, v)| (k.into(), v.into())))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()?;
    super::tree::started(child.id());
    // Dropping the handle neither kills nor waits: the child is let go.
    Ok(child.id())
}
