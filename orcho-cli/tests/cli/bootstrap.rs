//! A run's worktree has what git tracks; what it does not (a virtual
//! environment) is missing there unless the contract's worktree setup
//! brings it, and a run says so before its first phase.

use crate::{
    Result,
    support::{Repo, run_id},
};

/// A project whose test runs a tool from an ignored `.venv`; `@SETUP@` is
/// replaced by a worktree setup.
const VENV: &str = "\
schema: 1
name: venv
extends: builtin:quick
verification:
  commands:
    - { name: test, argv: [.venv/bin/tool] }
  required: [test]
@SETUP@";

/// A repository with `.venv/bin/tool` (ignored by git) and the profile.
fn venv_repo(setup: &str) -> Result<Repo> {
    let repo = Repo::with_files(
        &VENV.replace("@SETUP@", setup),
        &[(".gitignore", ".orcho/\n.venv/\n")],
    )?;
    repo.write(".venv/bin/tool.sh", "#!/bin/sh\necho 'tool ran'\n")?;
    std::fs::rename(
        repo.dir().join(".venv/bin/tool.sh"),
        repo.dir().join(".venv/bin/tool"),
    )?;
    Ok(repo)
}

#[test]
fn a_program_git_does_not_track_is_named_before_the_first_phase() -> Result {
    let repo = venv_repo("")?;
    repo.orcho(&["verify"])?.expect_code(0);
    let out = repo.orcho(&["run", "--phase", "implement=true", "--no-interactive"])?;
    out.expect_code(1);
    assert!(
        out.stderr.contains(
            "runs `.venv/bin/tool`, which is in the checkout but not in the run's worktree"
        ),
        "{out}"
    );
    assert!(out.stderr.contains("- link: .venv"), "{out}");
    assert!(!out.stderr.contains("phase `implement` attempt"), "{out}");
    Ok(())
}

#[test]
fn a_linked_virtual_environment_runs_in_the_worktree_and_is_never_delivered() -> Result {
    let repo = venv_repo("  worktree:\n    setup:\n      - link: .venv\n")?;
    let out = repo.orcho(&[
        "run",
        "--phase",
        "implement=sh -c 'echo x > new.txt'",
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    assert_eq!(out.json()?["awaiting"], "delivery", "{out}");
    let run = run_id(&out.json()?)?;
    let gate = repo.orcho(&["delivery", "show", &run, "--json"])?.json()?;
    let files: Vec<&str> = gate["diff"]
        .as_array()
        .ok_or("no diff")?
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert_eq!(files, ["new.txt"], "{gate}");
    Ok(())
}

#[test]
fn linking_what_git_tracks_is_refused() -> Result {
    let repo = venv_repo("  worktree:\n    setup:\n      - link: orcho.yaml\n")?;
    let out = repo.orcho(&["run", "--phase", "implement=true", "--no-interactive"])?;
    out.expect_code(1);
    assert!(
        out.stderr.contains("git does not ignore `orcho.yaml`"),
        "{out}"
    );
    Ok(())
}
