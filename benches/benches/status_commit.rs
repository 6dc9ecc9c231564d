//! A pull request's check as CI runs it: `orcho status --commit HEAD
//! --base main` as a whole process, on a repository whose commit holds 50
//! attestations (one per required command), beside what reading them with
//! git alone takes (`git notes --ref orcho show HEAD` and `git rev-parse
//! HEAD^{tree}`), alternately, in the same run.
//!
//! Target: at most 2x git.
#![expect(
    clippy::disallowed_methods,
    reason = "both sides are spawned with std directly, so that the harness never inflates either"
)]

use std::{
    path::Path,
    process::{Command, Stdio},
};

use orcho_benches::{alternate, report_alternating, tree::git};

/// The required commands, each attested.
const COMMANDS: usize = 50;

fn orcho(dir: &Path, data: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_orcho-for-benches"));
    c.current_dir(dir)
        .env("XDG_DATA_HOME", data)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("ORCHO_RECEIPT_KEY")
        .env_remove("ORCHO_SIGNING_KEY")
        .env_remove("ORCHO_BASE");
    c
}

fn quiet(mut c: Command) -> bool {
    c.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn")
        .success()
}

#[expect(clippy::print_stdout, reason = "benchmarks report to the terminal")]
fn main() {
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("repo");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let mut init = git(&dir);
    init.args(["init", "-q", "-b", "main"]);
    orcho_benches::tree::run(init);
    let mut key = orcho(&dir, &data);
    key.args(["key", "show", "--json"]);
    let mut generate = orcho(&dir, &data);
    generate.args(["key", "generate"]);
    assert!(quiet(generate), "orcho key generate failed");
    let shown = key.output().expect("key show").stdout;
    let shown: serde_json::Value = serde_json::from_slice(&shown).expect("key show --json");
    let public = shown["public_key"].as_str().expect("a public key");
    let commands: String = (0..COMMANDS)
        .map(|i| format!("    - {{ name: c{i}, argv: [sh, -c, \"echo 'test result: ok. 1 passed; 0 failed'\"] }}\n"))
        .collect();
    let required: Vec<String> = (0..COMMANDS).map(|i| format!("c{i}")).collect();
    let profile = format!(
        "schema: 1\nname: bench-status-commit\nphases:\n  - {{ name: implement, role: implement }}\nverification:\n  commands:\n{commands}  required: [{}]\ntrust:\n  keys:\n    - {{ name: ci, ed25519: {public} }}\n",
        required.join(", ")
    );
    std::fs::write(dir.join("orcho.yaml"), profile).expect("profile");
    std::fs::write(dir.join(".gitignore"), ".orcho/\n").expect("gitignore");
    let mut add = git(&dir);
    add.args(["add", "-A"]);
    orcho_benches::tree::run(add);
    let mut commit = git(&dir);
    commit.args(["commit", "-q", "-m", "fifty commands"]);
    orcho_benches::tree::run(commit);
    let attested = orcho(&dir, &data)
        .args(["verify", "--attest"])
        .output()
        .expect("spawn");
    assert!(
        attested.status.success(),
        "orcho verify --attest failed: {}",
        String::from_utf8_lossy(&attested.stderr)
    );
    let check = || {
        let mut c = orcho(&dir, &data);
        c.args(["status", "--commit", "HEAD", "--base", "main"]);
        quiet(c)
    };
    assert!(check(), "the commit is not proven");
    println!("status --commit --base: {COMMANDS} attestations");
    let git_alone = || {
        let mut show = git(&dir);
        show.args(["notes", "--ref", "orcho", "show", "HEAD"]);
        let mut tree = git(&dir);
        tree.args(["rev-parse", "HEAD^{tree}"]);
        assert!(quiet(show) && quiet(tree));
    };
    let measured = alternate(
        31,
        || {
            check();
        },
        git_alone,
    );
    report_alternating(
        "status --commit --base",
        "git notes show + rev-parse",
        measured,
        2.0,
    );
}
