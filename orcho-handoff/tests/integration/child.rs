//! Spawning this test binary as a child process.

use std::{
    ffi::OsString,
    process::{Child, Command, Stdio},
};

/// The argument a child reads its parameters from, if this process is one.
pub(crate) fn child_arg() -> Option<OsString> {
    std::env::var_os("ORCHO_TEST_CHILD")
}

/// Starts this test binary running only the test `name`, with `arg` in
/// `ORCHO_TEST_CHILD`.
#[expect(
    clippy::disallowed_methods,
    reason = "tests spawn their own binary as a second decider"
)]
pub(crate) fn spawn(name: &str, arg: &str) -> std::io::Result<Child> {
    Command::new(std::env::current_exe()?)
        .args([
            name,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("ORCHO_TEST_CHILD", arg)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
}
