//! Integration tests of `orcho-receipts` with real processes, real files and
//! real git repositories in temporary directories.
//!
//! No test depends on how fast the machine is: timeouts are only used where
//! the command would otherwise never end, and assertions are about facts
//! (statuses, files, digests, killed processes), never about elapsed time.

mod exec;
mod fingerprint;
mod listing;
mod readiness;
mod receipts;
mod submodule;
mod weakening;

use std::{os::unix::fs::PermissionsExt, time::Duration};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_receipts::exec::{self as run, BaseEnv, ExecRequest};

pub(crate) type Result<T = (), E = Box<dyn std::error::Error>> = std::result::Result<T, E>;

/// A temporary directory with a UTF-8 path.
pub(crate) struct Temp {
    _dir: tempfile::TempDir,
    pub(crate) path: Utf8PathBuf,
}

pub(crate) fn temp() -> Result<Temp> {
    let dir = tempfile::tempdir()?;
    let path = Utf8PathBuf::try_from(dir.path().to_owned())?;
    Ok(Temp { _dir: dir, path })
}

/// Writes a file (creating parents) with the given permission bits.
pub(crate) fn write(root: &Utf8Path, rel: &str, contents: &str, mode: u32) -> Result {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    orcho_core::fs::write_atomic(&path, contents.as_bytes())?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))?;
    Ok(())
}

/// A base environment for tests: the host's PATH and nothing from the host's
/// git configuration.
pub(crate) fn test_env() -> BaseEnv {
    BaseEnv::empty()
        .with(
            "PATH",
            BaseEnv::inherit()
                .get("PATH")
                .unwrap_or("/usr/local/bin:/usr/bin:/bin"),
        )
        .with("HOME", "/nonexistent")
        .with("GIT_CONFIG_NOSYSTEM", "1")
        .with("GIT_CONFIG_GLOBAL", "/dev/null")
}

/// Runs git in `dir` through the crate's exec module.
pub(crate) fn git(dir: &Utf8Path, args: &[&str]) -> Result<String> {
    Ok(String::from_utf8_lossy(&git_bytes(dir, args)?).into_owned())
}

/// Runs git in `dir`; its standard output, as bytes.
pub(crate) fn git_bytes(dir: &Utf8Path, args: &[&str]) -> Result<Vec<u8>> {
    git_bytes_env(dir, args, test_env())
}

/// Runs git in `dir` with `env`; its standard output, as bytes.
pub(crate) fn git_bytes_env(dir: &Utf8Path, args: &[&str], env: BaseEnv) -> Result<Vec<u8>> {
    let mut argv = vec![
        "git",
        "-c",
        "user.name=Orcho Test",
        "-c",
        "user.email=test@example.invalid",
        "-c",
        "init.defaultBranch=main",
        "-c",
        "commit.gpgsign=false",
    ];
    argv.extend_from_slice(args);
    let outcome = run::run(
        &ExecRequest::new(argv)
            .cwd(dir)
            .envs(env)
            .timeout(Duration::from_secs(120))
            .keep_stdout(64 << 20),
    )?;
    if !outcome.status.success() {
        return Err(format!(
            "git {args:?} failed: {}: {}",
            outcome.status,
            outcome.stderr.tail_lossy()
        )
        .into());
    }
    Ok(outcome.stdout.kept.unwrap_or_default())
}

/// Runs `argv` in `dir` and checks that it succeeded.
pub(crate) fn run_cmd(dir: &Utf8Path, argv: &[&str]) -> Result {
    let outcome = run::run(
        &ExecRequest::new(argv.iter().copied())
            .cwd(dir)
            .envs(test_env())
            .timeout(Duration::from_secs(60)),
    )?;
    if !outcome.status.success() {
        return Err(format!("{argv:?} failed: {}", outcome.status).into());
    }
    Ok(())
}

/// Writes raw bytes to a path that may not be UTF-8.
pub(crate) fn write_bytes(path: impl AsRef<std::path::Path>, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::File::create(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// A repository `main` under `dir`, committed with a `.gitignore` of
/// `ignore` (none when empty), a `README` and a checked-out submodule
/// `libs/lib` (a repository `lib` beside it, holding `lib.txt`).
pub(crate) fn with_submodule(dir: &Utf8Path, ignore: &str) -> Result<Utf8PathBuf> {
    let lib = dir.join("lib");
    let main = dir.join("main");
    write(&lib, "lib.txt", "v1\n", 0o644)?;
    git(&lib, &["init", "-q"])?;
    git(&lib, &["add", "-A"])?;
    git(&lib, &["commit", "-qm", "lib"])?;
    write(&main, "README", "main\n", 0o644)?;
    if !ignore.is_empty() {
        write(&main, ".gitignore", ignore, 0o644)?;
    }
    git(&main, &["init", "-q"])?;
    git(
        &main,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            lib.as_str(),
            "libs/lib",
        ],
    )?;
    git(&main, &["add", "-A"])?;
    git(&main, &["commit", "-qm", "main"])?;
    Ok(main)
}
