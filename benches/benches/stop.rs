//! The stop guard as an agent meets it: `orcho hook claude-code` answering
//! a `Stop` document as a whole process, on a generated checkout of 100,000
//! files with a present receipt (so it fingerprints the whole checkout and
//! lets the stop through), beside `git status --porcelain` on the same
//! tree, alternately, in the same run: warm, and after a build wrote 20,000
//! files into the ignored `target/`.
//!
//! Target: the warm stop at most 0.8x `git status`.
#![expect(
    clippy::disallowed_methods,
    reason = "both sides are spawned with std directly, so that the harness never inflates either"
)]

use std::{
    io::Write as _,
    path::Path,
    process::{Command, Stdio},
};

use orcho_benches::{
    alternate, report_alternating,
    tree::{generate_many, git, populate_build_folder},
};

const PROFILE: &str = "\
schema: 1
name: bench-stop
extends: builtin:quick
verification:
  commands:
    - { name: test, argv: [sh, -c, \"test -d src\"] }
  required: [test]
";

/// The files of the generated checkout (`ORCHO_BENCH_STOP_FILES` for
/// another size).
fn files() -> usize {
    std::env::var("ORCHO_BENCH_STOP_FILES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000)
}

fn orcho(dir: &Path, data: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_orcho-for-benches"));
    c.current_dir(dir)
        .env("XDG_DATA_HOME", data)
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("ORCHO_RECEIPT_KEY");
    c
}

fn stop(dir: &Path, data: &Path, document: &[u8]) -> Vec<u8> {
    let mut child = orcho(dir, data)
        .args(["hook", "claude-code"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(document)
        .expect("the document");
    child.wait_with_output().expect("wait").stdout
}

fn git_status(dir: &Path) {
    let out = git(dir)
        .args(["status", "--porcelain"])
        .stdout(Stdio::null())
        .status()
        .expect("git status");
    assert!(out.success());
}

#[expect(clippy::print_stdout, reason = "benchmarks report to the terminal")]
fn main() {
    // `cargo bench --no-run` builds this; `cargo bench -- --list` and
    // friends pass flags that are not a run.
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("repo");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let files = files();
    let bytes = generate_many(&dir, files);
    std::fs::write(dir.join("orcho.yaml"), PROFILE).expect("profile");
    let mut add = git(&dir);
    add.args(["add", "orcho.yaml"]);
    orcho_benches::tree::run(add);
    let verify = orcho(&dir, &data)
        .arg("verify")
        .stdout(Stdio::null())
        .status()
        .expect("verify");
    assert!(verify.success(), "orcho verify failed");
    let document = serde_json::json!({
        "session_id": "bench", "cwd": dir, "hook_event_name": "Stop",
        "stop_hook_active": false,
    })
    .to_string();
    // Proven: the stop goes through (nothing on standard output).
    let said = stop(&dir, &data, document.as_bytes());
    assert!(said.is_empty(), "{}", String::from_utf8_lossy(&said));
    println!(
        "stop: {files} files, {:.1} MB, a present receipt",
        bytes as f64 / 1e6
    );
    let rounds = 15;
    let warm = alternate(
        rounds,
        || {
            stop(&dir, &data, document.as_bytes());
        },
        || git_status(&dir),
    );
    report_alternating("stop (warm)", "git status", warm, 0.8);
    populate_build_folder(&dir.join("target"), 20_000);
    let built = alternate(
        rounds,
        || {
            stop(&dir, &data, document.as_bytes());
        },
        || git_status(&dir),
    );
    report_alternating("stop (after a build)", "git status", built, 0.8);
    assert!(stop(&dir, &data, document.as_bytes()).is_empty());
}
