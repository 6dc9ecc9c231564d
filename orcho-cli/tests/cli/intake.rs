//! Pre-run intake on a dirty checkout, wherever the store is and however
//! git ignores it: each of `include`, `exclude`, `commit` and `halt` acts,
//! the run goes on (or halts), and the user's index is as it was.

use crate::{
    Result,
    support::{Out, Repo, run_id},
};

/// One phase that approves: a run in a worktree ends at its delivery gate.
/// Its receipts go in the run's evidence.
const ONE_PHASE: &str = "\
schema: 1
name: one-phase
phases:
  - name: implement
    role: implement
verification:
  commands:
    - { name: test, argv: [\"true\"] }
  required: [test]
";

/// Where the store is, and how git sees it.
#[derive(Debug, Clone, Copy)]
enum Store {
    /// `.orcho/` in the checkout, ignored by `.gitignore`.
    Gitignored,
    /// `.orcho/` in the checkout, ignored by `.git/info/exclude`.
    InfoExclude,
    /// `.orcho/` in the checkout, not ignored at all.
    NotIgnored,
    /// Outside the checkout (`--store`).
    Outside,
}

const STORES: [Store; 4] = [
    Store::Gitignored,
    Store::InfoExclude,
    Store::NotIgnored,
    Store::Outside,
];

/// A repository with the store placed as `store`, an edit staged (`a.txt`)
/// and one not (`b.txt`, untracked), and the arguments that point `orcho`
/// at the store.
fn dirty_repo(store: Store) -> Result<(Repo, Vec<String>)> {
    let repo = Repo::with_files(ONE_PHASE, &[("a.txt", "one\n")])?;
    let mut args = Vec::new();
    match store {
        Store::Gitignored => {}
        Store::InfoExclude => {
            repo.git(&["rm", "-q", "--cached", ".gitignore"])?;
            std::fs::remove_file(repo.dir().join(".gitignore"))?;
            repo.git(&["commit", "-q", "-m", "no .gitignore"])?;
            repo.write(".git/info/exclude", ".orcho/\n")?;
        }
        Store::NotIgnored => {
            repo.git(&["rm", "-q", "--cached", ".gitignore"])?;
            std::fs::remove_file(repo.dir().join(".gitignore"))?;
            repo.git(&["commit", "-q", "-m", "no .gitignore"])?;
        }
        Store::Outside => {
            args.push("--store".to_owned());
            args.push(repo.ctl("store").to_string());
        }
    }
    repo.write("a.txt", "one\ntwo\n")?;
    repo.git(&["add", "a.txt"])?;
    repo.write("b.txt", "new\n")?;
    Ok((repo, args))
}

fn orcho(repo: &Repo, store: &[String], args: &[&str]) -> Result<Out> {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(store.iter().map(String::as_str));
    repo.orcho(&all)
}

/// Starts a run that stops at its intake question; its id.
fn at_intake(repo: &Repo, store: &[String]) -> Result<String> {
    let out = orcho(repo, store, &["run", "--no-interactive", "--json"])?;
    out.expect_code(4);
    let doc = out.json()?;
    assert_eq!(doc["awaiting"], "intake", "{out}");
    run_id(&doc)
}

/// What is staged, and what is not (the user's index).
fn index(repo: &Repo) -> Result<(String, String)> {
    Ok((
        repo.git(&["diff", "--cached", "--name-only"])?,
        repo.git(&["ls-files", "--others", "--exclude-standard", "b.txt"])?,
    ))
}

#[test]
fn the_question_is_shown_with_what_each_action_does() -> Result {
    let (repo, args) = dirty_repo(Store::Gitignored)?;
    let out = orcho(&repo, &args, &["run", "--no-interactive"])?;
    out.expect_code(4);
    assert!(out.stdout.contains("include|exclude|commit|halt"), "{out}");
    let run = at_intake(&repo, &args)?;
    let out = orcho(&repo, &args, &["intake", &run])?;
    out.expect_code(0);
    assert!(out.stdout.contains("untracked b.txt"), "{out}");
    assert!(out.stdout.contains("  exclude  start from HEAD"), "{out}");
    let doc = orcho(&repo, &args, &["intake", &run, "--json"])?.json()?;
    assert_eq!(doc["run"], run.as_str(), "{doc}");
    assert_eq!(
        doc["available_actions"],
        serde_json::json!(["include", "exclude", "commit", "halt"])
    );
    // Showing it decides nothing, also as its siblings say it.
    let shown = orcho(&repo, &args, &["intake", "show", &run, "--json"])?.json()?;
    assert_eq!(shown, doc);
    assert_eq!(index(&repo)?.1, "b.txt");
    // `orcho intake decide RUN ACTION`, as `orcho handoff decide`; a slip
    // names what reads.
    let slip = orcho(&repo, &args, &["intake", "decide", &run, "hlt"])?;
    slip.expect_code(2);
    assert!(slip.stderr.contains("halt"), "{slip}");
    orcho(&repo, &args, &["intake", "decide", &run, "halt"])?.expect_code(0);
    // The older form is the same decision again: a replay.
    orcho(&repo, &args, &["intake", &run, "halt"])?.expect_code(0);
    Ok(())
}

#[test]
fn include_seeds_the_run_and_leaves_the_index_alone() -> Result {
    for store in STORES {
        let (repo, args) = dirty_repo(store)?;
        let run = at_intake(&repo, &args)?;
        let before = index(&repo)?;
        orcho(&repo, &args, &["intake", &run, "include"])?.expect_code(0);
        let out = orcho(
            &repo,
            &args,
            &["resume", &run, "--no-interactive", "--json"],
        )?;
        out.expect_code(4);
        assert_eq!(out.json()?["awaiting"], "delivery", "{store:?}\n{out}");
        assert_eq!(index(&repo)?, before, "{store:?}: the index changed");
        let gate = orcho(&repo, &args, &["delivery", "show", &run, "--json"])?;
        let files: Vec<String> = gate.json()?["diff"]
            .as_array()
            .ok_or("no diff")?
            .iter()
            .filter_map(|f| f["path"].as_str().map(str::to_owned))
            .collect();
        assert!(
            !files.iter().any(|f| f.starts_with(".orcho")),
            "{store:?}: the store is part of the run's diff: {files:?}"
        );
    }
    Ok(())
}

#[test]
fn exclude_starts_from_head_and_leaves_the_index_alone() -> Result {
    for store in STORES {
        let (repo, args) = dirty_repo(store)?;
        let run = at_intake(&repo, &args)?;
        let before = index(&repo)?;
        orcho(&repo, &args, &["intake", &run, "exclude"])?.expect_code(0);
        let out = orcho(
            &repo,
            &args,
            &["resume", &run, "--no-interactive", "--json"],
        )?;
        out.expect_code(4);
        assert_eq!(out.json()?["awaiting"], "delivery", "{store:?}\n{out}");
        assert_eq!(index(&repo)?, before, "{store:?}: the index changed");
    }
    Ok(())
}

#[test]
fn commit_commits_the_work_but_not_the_store() -> Result {
    for store in STORES {
        let (repo, args) = dirty_repo(store)?;
        let run = at_intake(&repo, &args)?;
        orcho(
            &repo,
            &args,
            &["intake", &run, "commit", "--message", "wip"],
        )?
        .expect_code(0);
        let out = orcho(
            &repo,
            &args,
            &["resume", &run, "--no-interactive", "--json"],
        )?;
        out.expect_code(4);
        assert_eq!(out.json()?["awaiting"], "delivery", "{store:?}\n{out}");
        assert_eq!(repo.git(&["log", "-1", "--format=%s"])?, "wip", "{store:?}");
        let committed = repo.git(&["show", "--name-only", "--format=", "HEAD"])?;
        assert_eq!(committed, "a.txt\nb.txt", "{store:?}");
        assert_eq!(
            repo.git(&["diff", "--cached", "--name-only"])?,
            "",
            "{store:?}"
        );
    }
    Ok(())
}

#[test]
fn halt_ends_the_run_and_leaves_the_index_alone() -> Result {
    for store in STORES {
        let (repo, args) = dirty_repo(store)?;
        let run = at_intake(&repo, &args)?;
        let before = index(&repo)?;
        let out = orcho(&repo, &args, &["intake", &run, "halt", "--json"])?;
        out.expect_code(0);
        // Halted when decided, with no resume.
        assert_eq!(out.json()?["status"], "halted", "{store:?}\n{out}");
        let out = orcho(&repo, &args, &["resume", &run, "--no-interactive"])?;
        out.expect_code(5);
        assert_eq!(index(&repo)?, before, "{store:?}: the index changed");
        let inbox = orcho(&repo, &args, &["inbox", "--json"])?;
        assert_eq!(inbox.json()?["pending"], serde_json::json!([]), "{store:?}");
    }
    Ok(())
}

#[test]
fn a_commit_refused_by_a_hook_leaves_the_index_as_it_was() -> Result {
    let (repo, args) = dirty_repo(Store::Gitignored)?;
    repo.write(
        ".git/hooks/pre-commit.sh",
        "#!/bin/sh\necho 'no commits today' >&2\nexit 1\n",
    )?;
    std::fs::rename(
        repo.dir().join(".git/hooks/pre-commit.sh"),
        repo.dir().join(".git/hooks/pre-commit"),
    )?;
    let run = at_intake(&repo, &args)?;
    let before = index(&repo)?;
    orcho(&repo, &args, &["intake", &run, "commit"])?.expect_code(0);
    let out = orcho(&repo, &args, &["resume", &run, "--no-interactive"])?;
    out.expect_code(1);
    assert!(out.stderr.contains("no commits today"), "{out}");
    assert!(out.stderr.contains("refused"), "{out}");
    assert_eq!(index(&repo)?, before, "the index changed");
    assert_eq!(repo.git(&["log", "-1", "--format=%s"])?, "initial");
    Ok(())
}

/// One phase that approves, with no receipts to prove: its release is
/// approved.
const NO_RECEIPTS: &str = "\
schema: 1
name: no-receipts
phases:
  - name: implement
    role: implement
";

/// Ten lines, one word each.
const TEN: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";

/// A run that includes the user's uncommitted edit of `a.txt`, and whose
/// phase edits `a.txt` too with `sed_script`; stops at the delivery gate.
fn included_then_edited(sed_script: &str) -> Result<(Repo, String)> {
    let repo = Repo::with_files(NO_RECEIPTS, &[("a.txt", TEN)])?;
    // The user's uncommitted change, on the first line.
    repo.write("a.txt", &TEN.replacen("one", "ONE", 1))?;
    let phase = format!("implement=sed -i {sed_script} a.txt");
    let out = repo.orcho(&["run", "--phase", &phase, "--no-interactive", "--json"])?;
    out.expect_code(4);
    let run = run_id(&out.json()?)?;
    repo.orcho(&["intake", &run, "include"])?.expect_code(0);
    let out = repo.orcho(&["resume", &run, "--no-interactive", "--json"])?;
    out.expect_code(4);
    assert_eq!(out.json()?["awaiting"], "delivery", "{out}");
    Ok((repo, run))
}

#[test]
fn an_included_file_the_run_edits_is_delivered_with_the_runs_work_alone() -> Result {
    // The run changes the last line, far from the user's change.
    let (repo, run) = included_then_edited("s/ten/TEN/")?;
    repo.orcho(&["delivery", "decide", &run, "approve"])?
        .expect_code(0);
    repo.orcho(&["resume", &run, "--json"])?.expect_code(0);
    // The commit holds the run's change alone; the user's stays uncommitted.
    let committed = repo.git(&["show", "HEAD:a.txt"])?;
    assert_eq!(committed, TEN.replacen("ten", "TEN", 1).trim_end());
    let now = std::fs::read_to_string(repo.dir().join("a.txt"))?;
    assert_eq!(now, TEN.replacen("one", "ONE", 1).replacen("ten", "TEN", 1));
    assert_eq!(repo.git(&["diff", "--name-only"])?, "a.txt");
    assert_eq!(repo.git(&["diff", "--cached", "--name-only"])?, "");
    Ok(())
}

#[test]
fn a_run_that_builds_on_included_changes_can_be_applied_not_committed_alone() -> Result {
    // The run changes the line next to the user's change: its diff needs it.
    let (repo, run) = included_then_edited("s/two/TWO/")?;
    // The gate offers `apply` and says why `approve` is not offered now.
    let out = repo.orcho(&["delivery", "show", &run])?;
    out.expect_code(0);
    assert!(
        out.stdout
            .contains("`approve` refused now: commit or stash the target's changes to `a.txt`"),
        "{out}"
    );
    // What is left on offer, each with what it does.
    assert!(
        out.stdout
            .trim_end()
            .ends_with("actions:\n  apply  apply the run's diff to your checkout, uncommitted\n  skip   close the gate and change nothing\n  halt   stop; keep the worktree for inspection"),
        "{out}"
    );
    let out = repo.orcho(&["delivery", "decide", &run, "approve"])?;
    out.expect_code(1);
    assert!(out.stderr.contains("builds on them"), "{out}");
    assert!(out.stderr.contains("`apply`"), "{out}");
    repo.orcho(&["delivery", "decide", &run, "apply"])?
        .expect_code(0);
    repo.orcho(&["resume", &run, "--json"])?.expect_code(0);
    let now = std::fs::read_to_string(repo.dir().join("a.txt"))?;
    assert_eq!(now, TEN.replacen("one", "ONE", 1).replacen("two", "TWO", 1));
    assert_eq!(repo.git(&["log", "-1", "--format=%s"])?, "initial");
    Ok(())
}

#[test]
fn a_second_intake_decision_conflicts_and_names_the_command_that_shows_the_first() -> Result {
    let (repo, args) = dirty_repo(Store::Gitignored)?;
    let run = at_intake(&repo, &args)?;
    orcho(&repo, &args, &["intake", &run, "exclude"])?.expect_code(0);
    let out = orcho(&repo, &args, &["intake", &run, "include"])?;
    out.expect_code(6);
    assert!(
        out.stderr.contains(&format!(
            "`orcho intake show {run}` shows the one recorded first"
        )),
        "{out}"
    );
    Ok(())
}

#[test]
fn gc_removes_the_seed_patch_of_a_run_that_ended() -> Result {
    let (repo, args) = dirty_repo(Store::Gitignored)?;
    let run = at_intake(&repo, &args)?;
    orcho(&repo, &args, &["intake", &run, "include"])?.expect_code(0);
    orcho(&repo, &args, &["resume", &run, "--no-interactive"])?.expect_code(4);
    let seed = repo.run_dir(&run).join("intake/seed.patch");
    assert!(seed.is_file(), "include keeps a seed patch");
    // Not over yet: gc leaves it.
    let out = repo.orcho(&["gc"])?;
    out.expect_code(0);
    assert!(seed.is_file(), "{out}");
    repo.orcho(&["delivery", "decide", &run, "halt"])?
        .expect_code(0);
    let out = repo.orcho(&["gc", "--dry-run"])?;
    assert!(
        out.stdout.contains(&format!(
            "would remove the intake seed patch of run {run} ("
        )),
        "{out}"
    );
    assert!(seed.is_file(), "a dry run removes nothing");
    let out = repo.orcho(&["gc", "--json"])?;
    out.expect_code(0);
    assert_eq!(out.json()?["seed_patches"][0][0], run.as_str(), "{out}");
    assert!(!seed.exists());
    // The run still reads whole.
    repo.orcho(&["--json", "evidence", &run])?.expect_code(0);
    let again = repo.orcho(&["gc"])?;
    assert!(!again.stdout.contains("seed patch of run"), "{again}");
    Ok(())
}

#[test]
fn a_large_or_binary_file_is_said_before_include_copies_it() -> Result {
    let (repo, args) = dirty_repo(Store::Gitignored)?;
    let mut big = vec![0u8; 2 * 1024 * 1024];
    big[..5].copy_from_slice(b"blob\n");
    orcho::core::fs::write_atomic(&repo.dir().join("model.bin"), &big)?;
    orcho::core::fs::write_atomic(&repo.dir().join("icon.png"), b"\x89PNG\0\0")?;
    let run = at_intake(&repo, &args)?;
    let out = orcho(&repo, &args, &["intake", &run])?;
    out.expect_code(0);
    assert!(
        out.stdout.contains("untracked model.bin (2.0 MiB, binary)"),
        "{out}"
    );
    assert!(out.stdout.contains("untracked icon.png (binary)"), "{out}");
    assert!(out.stdout.contains("untracked b.txt\n"), "{out}");
    assert!(
        out.stdout
            .contains("warning: `include` copies 2.0 MiB of large files into the run's seed patch"),
        "{out}"
    );
    Ok(())
}
