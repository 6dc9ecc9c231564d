//! Spawning this test binary as a child process.

use std::{
    ffi::OsString,
    process::{Child, Command, Stdio},
};

use camino::Utf8Path;

/// The argument a child reads its parameters from, if this process is one.
pub(crate) fn child_arg() -> Option<OsString> {
    std::env::var_os("ORCHO_TEST_CHILD")
}

/// Starts this test binary running only the test `name`, with `arg` in
/// `ORCHO_TEST_CHILD`.
#[expect(
    clippy::disallowed_methods,
    reason = "tests spawn their own binary as a crash victim"
)]
pub(crate) fn spawn(name: &str, arg: &Utf8Path) -> std::io::Result<Child> {
    Command::new(std::env::current_exe()?)
        .args([
            name,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("ORCHO_TEST_CHILD", arg.as_str())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
}

/// A deterministic spread of small numbers, so that kills land at many
/// different points without a random-number dependency.
pub(crate) fn spread(i: u64, modulo: u64) -> u64 {
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17) % modulo
}
