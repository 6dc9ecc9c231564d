//! Where `orcho` works: the checkout found from a subdirectory, the profile
//! and store from the environment, `orcho init`, and places that are
//! refused before anything is created.

use camino::Utf8PathBuf;

use crate::{
    Result,
    support::{QUICK, Repo, orcho_at},
};

#[test]
fn the_profile_and_store_are_found_from_a_subdirectory() -> Result {
    let repo = Repo::new(QUICK)?;
    repo.write("pkg/src/lib.txt", "x\n")?;
    let out = repo.orcho_in("pkg/src", &[], &["verify", "--json"])?;
    out.expect_code(3); // the `test` command of QUICK fails without `ok`
    assert!(repo.dir().join(".orcho/receipts").is_dir(), "{out}");
    assert!(
        !repo.dir().join("pkg/src/.orcho").exists(),
        "a store in the subdirectory"
    );
    repo.write("ok", "")?;
    let out = repo.orcho_in("pkg/src", &[], &["verify"])?;
    out.expect_code(0);
    let out = repo.orcho_in("pkg", &[], &["status", "--json"])?;
    out.expect_code(0);
    assert_eq!(out.json()?["ready"], true, "{out}");
    Ok(())
}

#[test]
fn a_missing_profile_says_which_one_is_used_instead() -> Result {
    let repo = Repo::new(QUICK)?;
    std::fs::remove_file(repo.dir().join("orcho.yaml"))?;
    let out = repo.orcho(&["status"])?;
    assert!(out.stderr.contains("using builtin:default"), "{out}");
    assert!(out.stderr.contains("orcho init"), "{out}");
    Ok(())
}

#[test]
fn the_environment_names_the_profile_and_the_store() -> Result {
    let repo = Repo::new(QUICK)?;
    let store = repo.ctl("elsewhere");
    let envs = [
        ("ORCHO_PROFILE", "builtin:read_only_review"),
        ("ORCHO_STORE", store.as_str()),
    ];
    let out = repo.orcho_in(".", &envs, &["profile", "show"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("name: read_only_review"), "{out}");
    let out = repo.orcho_in(".", &envs, &["run", "--no-interactive", "--json"])?;
    out.expect_no_panic();
    assert!(store.join("runs").is_dir(), "{out}");
    assert!(!repo.dir().join(".orcho/runs").exists(), "{out}");
    Ok(())
}

#[test]
fn a_checkout_that_does_not_exist_is_refused_and_not_created() -> Result {
    let repo = Repo::new(QUICK)?;
    let missing = repo.ctl("no/such/dir");
    let out = repo.orcho(&["status", "--checkout", missing.as_str()])?;
    out.expect_code(1);
    assert!(out.stderr.contains("is not a directory"), "{out}");
    assert!(out.stderr.contains("hint:"), "{out}");
    assert!(!missing.exists());
    Ok(())
}

/// A temporary directory with an `orcho.yaml`, and whether it is a git
/// repository (without a commit).
fn bare_dir(git: bool) -> Result<(tempfile::TempDir, Utf8PathBuf)> {
    let tmp = tempfile::tempdir()?;
    let dir = Utf8PathBuf::try_from(tmp.path().join("project"))?;
    orcho::core::fs::create_dir_all(&dir)?;
    orcho::core::fs::write_atomic(&dir.join("orcho.yaml"), QUICK.as_bytes())?;
    if git {
        orcho_at(&dir, &[], &["--version"])?.expect_code(0);
        let init = orcho::receipts::exec::ExecRequest::new(["git", "init", "-q"])
            .cwd(dir.clone())
            .envs(orcho::receipts::exec::BaseEnv::inherit());
        assert!(orcho::receipts::exec::run(&init)?.status.success());
    }
    Ok((tmp, dir))
}

#[test]
fn status_where_nothing_was_verified_leaves_no_store_behind() -> Result {
    for git in [false, true] {
        let (_tmp, dir) = bare_dir(git)?;
        let out = orcho_at(&dir, &[], &["status"])?;
        out.expect_code(3);
        assert!(out.stdout.contains("missing"), "{out}");
        assert!(!dir.join(".orcho").exists(), "git: {git}\n{out}");
        // Once something was verified, the store and its cache are there.
        orcho_at(&dir, &[], &["verify"])?.expect_no_panic();
        orcho_at(&dir, &[], &["status"])?.expect_no_panic();
        assert!(dir.join(".orcho/cache/fingerprint").is_dir(), "git: {git}");
    }
    Ok(())
}

#[test]
fn a_run_outside_a_repository_is_refused_before_anything_is_created() -> Result {
    for git in [false, true] {
        let (_tmp, dir) = bare_dir(git)?;
        let out = orcho_at(&dir, &[], &["run", "--no-interactive"])?;
        out.expect_code(1);
        let said = if git {
            "no commit yet"
        } else {
            "not in a git repository"
        };
        assert!(out.stderr.contains(said), "{out}");
        assert!(out.stderr.contains("--in-place"), "{out}");
        assert!(!dir.join(".orcho").exists(), "{out}");
        assert!(!out.stderr.contains("started"), "{out}");
    }
    Ok(())
}

/// What a coding agent's sandbox leaves in `/tmp` while it runs (empty
/// `.git` and `.agents` mount points) is no repository: a project below it
/// stays its own checkout, as git says, and `init` writes nothing above it.
#[test]
fn an_empty_git_directory_above_a_project_is_not_its_repository() -> Result {
    let (tmp, dir) = bare_dir(false)?;
    let above = dir.parent().ok_or("no parent")?.to_owned();
    orcho::core::fs::create_dir_all(&above.join(".git"))?;
    orcho::core::fs::create_dir_all(&above.join(".agents"))?;
    std::fs::remove_file(dir.join("orcho.yaml"))?;
    orcho::core::fs::write_atomic(&dir.join("test_add.py"), b"def test_add(): pass\n")?;
    let out = orcho_at(&dir, &[], &["init"])?;
    out.expect_code(0);
    assert!(dir.join("orcho.yaml").is_file(), "{out}");
    assert!(!above.join("orcho.yaml").exists(), "{out}");
    assert!(!above.join(".gitignore").exists(), "{out}");
    let out = orcho_at(&dir, &[], &["status"])?;
    out.expect_code(3);
    assert!(!out.stderr.contains("git"), "{out}");
    drop(tmp);
    Ok(())
}

#[test]
fn init_knows_a_python_project_by_its_tests_alone() -> Result {
    let (_tmp, dir) = bare_dir(true)?;
    std::fs::remove_file(dir.join("orcho.yaml"))?;
    orcho::core::fs::create_dir_all(&dir.join("tests"))?;
    orcho::core::fs::write_atomic(&dir.join("tests/test_add.py"), b"def test_add(): pass\n")?;
    // `__pycache__` ignored already: only what is missing is added.
    orcho::core::fs::write_atomic(&dir.join(".gitignore"), b"*.pyc\n__pycache__/")?;
    let out = orcho_at(&dir, &[], &["init"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("(Python project)"), "{out}");
    assert!(out.stdout.contains("added .pytest_cache/ to"), "{out}");
    let profile = std::fs::read_to_string(dir.join("orcho.yaml"))?;
    assert!(profile.contains(python_tests(true)), "{profile}");
    assert_eq!(
        std::fs::read_to_string(dir.join(".gitignore"))?,
        "*.pyc\n__pycache__/\n/.orcho/\n.pytest_cache/\n"
    );
    Ok(())
}

/// The test command `orcho init` writes for Python here: pytest where it
/// is installed, else the standard library's unittest.
fn python_tests(tests_folder: bool) -> &'static str {
    let pytest = orcho::receipts::exec::run(
        &orcho::receipts::exec::ExecRequest::new(["python3", "-c", "import pytest"])
            .envs(orcho::receipts::exec::BaseEnv::inherit()),
    )
    .is_ok_and(|o| o.status.success());
    match (pytest, tests_folder) {
        (true, _) => "argv: [python3, -m, pytest, -q]",
        // unittest searches a `tests` folder that is no package only when
        // named.
        (false, true) => "argv: [python3, -m, unittest, discover, -q, -s, tests]",
        (false, false) => "argv: [python3, -m, unittest, discover, -q]",
    }
}

#[test]
fn init_knows_a_python_project_by_a_module_at_its_root() -> Result {
    let (_tmp, dir) = bare_dir(true)?;
    std::fs::remove_file(dir.join("orcho.yaml"))?;
    orcho::core::fs::write_atomic(&dir.join("parse.py"), b"def parse(t): return t.split()\n")?;
    let out = orcho_at(&dir, &[], &["init"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("(Python project)"), "{out}");
    let profile = std::fs::read_to_string(dir.join("orcho.yaml"))?;
    assert!(profile.contains(python_tests(false)), "{profile}");
    assert!(std::fs::read_to_string(dir.join(".gitignore"))?.contains("__pycache__/"));
    Ok(())
}

#[test]
fn init_writes_a_profile_that_loads_and_ignores_the_store() -> Result {
    let (_tmp, dir) = bare_dir(true)?;
    std::fs::remove_file(dir.join("orcho.yaml"))?;
    orcho::core::fs::write_atomic(&dir.join("pyproject.toml"), b"[project]\nname = \"p\"\n")?;
    orcho::core::fs::create_dir_all(&dir.join("src"))?;
    let out = orcho_at(&dir.join("src"), &[], &["init"])?;
    out.expect_code(0);
    let profile = std::fs::read_to_string(dir.join("orcho.yaml"))?;
    assert!(profile.contains(python_tests(false)), "{profile}");
    assert_eq!(
        std::fs::read_to_string(dir.join(".gitignore"))?,
        "/.orcho/\n__pycache__/\n.pytest_cache/\n",
        "the store, and the caches a test run writes"
    );
    let out = orcho_at(&dir, &[], &["profile", "show"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("name: project"), "{out}");
    // Once is enough: a second `init` keeps the file, and the ignore line
    // is not added twice.
    let out = orcho_at(&dir, &[], &["init"])?;
    out.expect_code(1);
    assert!(out.stderr.contains("--force"), "{out}");
    orcho_at(&dir, &[], &["init", "--force"])?.expect_code(0);
    assert_eq!(
        std::fs::read_to_string(dir.join(".gitignore"))?,
        "/.orcho/\n__pycache__/\n.pytest_cache/\n",
        "the store, and the caches a test run writes"
    );
    Ok(())
}

#[test]
fn init_writes_project_files_anybody_may_read_and_keeps_a_files_mode() -> Result {
    use std::os::unix::fs::PermissionsExt as _;
    let (_tmp, dir) = bare_dir(true)?;
    std::fs::remove_file(dir.join("orcho.yaml"))?;
    orcho::core::fs::write_atomic(&dir.join(".gitignore"), b"target/\n")?;
    std::fs::set_permissions(
        dir.join(".gitignore"),
        std::fs::Permissions::from_mode(0o640),
    )?;
    orcho_at(&dir, &[], &["init", "--agent", "claude-code"])?.expect_code(0);
    let mode = |p: &str| -> Result<u32> {
        Ok(std::fs::metadata(dir.join(p))?.permissions().mode() & 0o777)
    };
    assert_eq!(mode("orcho.yaml")?, 0o644);
    assert_eq!(mode(".claude/settings.json")?, 0o644);
    assert_eq!(
        mode(".gitignore")?,
        0o640,
        "an existing file keeps its mode"
    );
    Ok(())
}
