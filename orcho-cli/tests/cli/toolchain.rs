//! Toolchains found by a variable (`RUSTUP_HOME`, `VIRTUAL_ENV`, …): a
//! command gets only the declared environment, so `orcho init` declares
//! what its ecosystem needs, and a failure names what was left out.

use std::{process::Stdio, time::Duration};

use crate::{
    Result,
    support::{Out, Repo, finish},
};

/// The toolchain variables the test process may have (cargo sets some):
/// the host of these runs has only the ones each run names.
const TOOLCHAIN_VARS: &[&str] = &[
    "RUSTUP_HOME",
    "CARGO_HOME",
    "RUSTUP_TOOLCHAIN",
    "VIRTUAL_ENV",
    "PYENV_ROOT",
    "CONDA_PREFIX",
    "JAVA_HOME",
    "GRADLE_USER_HOME",
    "GOROOT",
    "GOPATH",
    "NVM_DIR",
];

/// `orcho <args>` in the checkout with only `vars` of the toolchain
/// variables set.
fn orcho_with(repo: &Repo, vars: &[(&str, &str)], args: &[&str]) -> Result<Out> {
    let mut command = repo.command(args);
    for var in TOOLCHAIN_VARS {
        command.env_remove(var);
    }
    let child = command
        .envs(vars.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    finish(child, Duration::from_secs(60))
}

/// A `cargo` that works only where `RUSTUP_HOME` says, as rustup's proxy
/// does when the toolchain lives outside `HOME` (the official Rust image).
const FAKE_CARGO: &str = "#!/bin/sh\n\
[ -n \"$RUSTUP_HOME\" ] || { echo 'error: rustup could not choose a version of cargo to run' >&2; exit 1; }\n\
echo 'test result: ok. 1 passed; 0 failed'\n";

#[expect(
    clippy::disallowed_methods,
    reason = "the test's own PATH, with the fake cargo first"
)]
fn path_with(dir: &camino::Utf8Path) -> String {
    format!("{dir}:{}", std::env::var("PATH").unwrap_or_default())
}

#[test]
fn a_toolchain_variable_left_out_is_named_and_init_declares_it() -> Result {
    let repo = Repo::with_files(
        "schema: 1\nname: t\nextends: builtin:quick\nverification:\n  commands:\n    - { name: test, argv: [cargo, test] }\n  required: [test]\n",
        &[(
            "Cargo.toml",
            "[package]\nname = \"t\"\nversion = \"0.1.0\"\n",
        )],
    )?;
    let bin = repo.ctl("bin");
    orcho::core::fs::create_dir_all(&bin)?;
    orcho::core::fs::write_atomic(&bin.join("cargo"), FAKE_CARGO.as_bytes())?;
    std::fs::set_permissions(
        bin.join("cargo"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )?;
    let path = path_with(&bin);
    let host = [("PATH", path.as_str()), ("RUSTUP_HOME", "/opt/rustup")];
    let out = orcho_with(&repo, &host, &["verify"])?;
    out.expect_code(3);
    assert!(out.stdout.contains("rustup could not choose"), "{out}");
    assert!(out.stdout.contains("this host sets `RUSTUP_HOME`"), "{out}");
    assert!(out.stdout.contains("add `inherit: [RUSTUP_HOME]`"), "{out}");

    // What `orcho init` writes for a Rust crate declares it.
    let out = orcho_with(&repo, &host, &["init", "--force"])?;
    out.expect_code(0);
    let profile = std::fs::read_to_string(repo.dir().join("orcho.yaml"))?;
    assert!(
        profile.contains("inherit: [RUSTUP_HOME, CARGO_HOME, RUSTUP_TOOLCHAIN]"),
        "{profile}"
    );
    let out = orcho_with(&repo, &host, &["verify"])?;
    out.expect_code(0);
    assert!(!out.stdout.contains("hint:"), "{out}");
    Ok(())
}
