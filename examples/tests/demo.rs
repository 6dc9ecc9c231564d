//! The README's first command works: the demo runs to its end, an advisor's
//! recommendation confirmed by the operator on the way.

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test runs the demo binary as the README does"
)]
fn the_demo_runs_to_the_delivered_commit() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_demo"))
        .output()
        .expect("the demo starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("The advisor recommends retry_feedback"),
        "{stdout}"
    );
    assert!(stdout.contains("(recorded with advice "), "{stdout}");
    assert!(stdout.contains("✔  The run is completed"), "{stdout}");
}
