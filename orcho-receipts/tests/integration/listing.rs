//! The file list a fingerprint covers, made in this process, against what
//! `git ls-files -co --exclude-per-directory=.gitignore` lists on the same tree: fixed edge
//! cases, random trees with random ignore rules, and random changes between
//! cached fingerprints.

use std::{
    collections::BTreeSet,
    ffi::OsStr,
    os::unix::ffi::{OsStrExt, OsStringExt},
    path::PathBuf,
};

use camino::Utf8Path;
use orcho_receipts::{
    exec::{self, ExecRequest},
    fingerprint::{FileSource, Fingerprinter},
};
use proptest::prelude::*;

use crate::{Result, fingerprint::wait_for_fs_tick, git, temp, test_env, write};

fn fingerprinter() -> Fingerprinter {
    Fingerprinter::new().with_env(test_env())
}

/// What git lists, as raw paths (the store left out, as the fingerprint
/// leaves it out).
fn git_lists(root: &Utf8Path) -> Result<BTreeSet<Vec<u8>>> {
    let out = crate::git_bytes(
        root,
        &[
            "ls-files",
            "-co",
            "--exclude-per-directory=.gitignore",
            "-z",
        ],
    )?;
    Ok(out
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty() && !p.starts_with(b".orcho/"))
        .map(<[u8]>::to_vec)
        .collect())
}

/// What the fingerprint lists, made in this process.
fn we_list(fingerprinter: &Fingerprinter, root: &Utf8Path) -> Result<BTreeSet<Vec<u8>>> {
    Ok(fingerprinter
        .files(root, &[])?
        .into_iter()
        .map(|p| p.into_os_string().into_vec())
        .collect())
}

fn init(root: &Utf8Path) -> Result {
    git(root, &["init", "-q"])?;
    Ok(())
}

/// A new, empty repository in a temporary folder.
fn repo() -> Result<crate::Temp> {
    let dir = temp()?;
    init(&dir.path)?;
    Ok(dir)
}

fn symlink(target: &str, link: &Utf8Path) -> Result {
    std::os::unix::fs::symlink(target, link)?;
    Ok(())
}

#[test]
fn edge_cases_list_exactly_what_git_lists() -> Result {
    let dir = temp()?;
    let root = &dir.path;
    let home = temp()?;
    init(root)?;
    // Tracked, ignored and tracked anyway, ignored folders with and
    // without tracked files, a negation, anchored and nested rules.
    write(
        root,
        ".gitignore",
        "target/\n*.log\n!keep.log\n/only-top.txt\nbuild/**\n\\#hash\nspace\\ \n",
        0o644,
    )?;
    write(root, "src/lib.rs", "x\n", 0o644)?;
    write(root, "src/.gitignore", "gen/\n*.tmp\n!wanted.tmp\n", 0o644)?;
    write(root, "src/gen/out.rs", "x\n", 0o644)?;
    write(root, "src/wanted.tmp", "x\n", 0o644)?;
    write(root, "src/other.tmp", "x\n", 0o644)?;
    write(root, "vendor/tracked.txt", "x\n", 0o644)?;
    write(root, "target/debug/app", "x\n", 0o644)?;
    write(root, "target/kept.txt", "x\n", 0o644)?;
    write(root, "debug.log", "x\n", 0o644)?;
    write(root, "keep.log", "x\n", 0o644)?;
    write(root, "a/keep.log", "x\n", 0o644)?;
    write(root, "only-top.txt", "x\n", 0o644)?;
    write(root, "sub/only-top.txt", "x\n", 0o644)?;
    write(root, "build/x/y.o", "x\n", 0o644)?;
    write(root, "#hash", "x\n", 0o644)?;
    write(root, "space ", "x\n", 0o644)?;
    write(root, "objs/only-ignored.log", "x\n", 0o644)?;
    std::fs::create_dir_all(root.join("empty/deeper"))?;
    git(root, &["add", "-A"])?;
    git(root, &["add", "-f", "target/kept.txt"])?;
    git(root, &["commit", "-qm", "init"])?;
    // Symlinks, never followed: to a file, to a folder, dangling.
    symlink("src/lib.rs", &root.join("link-file"))?;
    symlink("src", &root.join("link-dir"))?;
    symlink("nowhere", &root.join("dangling"))?;
    // A name that is not UTF-8.
    crate::write_bytes(
        root.as_std_path().join(OsStr::from_bytes(b"caf\xe9.txt")),
        b"x",
    )?;
    // A FIFO: git lists no such thing.
    crate::run_cmd(root, &["mkfifo", "pipe"])?;
    // A repository of its own, untracked: listed as `nested/`.
    let nested = root.join("nested");
    std::fs::create_dir_all(&nested)?;
    init(&nested)?;
    write(&nested, "inner.txt", "x\n", 0o644)?;
    // One inside an ignored folder: not listed.
    let ignored_nested = root.join("target/nested");
    std::fs::create_dir_all(&ignored_nested)?;
    init(&ignored_nested)?;
    // A folder with a `.git` file naming a repository elsewhere.
    let elsewhere = temp()?;
    init(&elsewhere.path)?;
    write(
        root,
        "linked/.git",
        &format!("gitdir: {}/.git\n", elsewhere.path),
        0o644,
    )?;
    // A `.git` file naming nothing: an ordinary folder.
    write(root, "broken/.git", "gitdir: /nonexistent\n", 0o644)?;
    write(root, "broken/file.txt", "x\n", 0o644)?;
    // A `.gitignore` that is a symlink: git does not read it.
    write(root, "sym/rules", "*.txt\n", 0o644)?;
    symlink("rules", &root.join("sym/.gitignore"))?;
    write(root, "sym/a.txt", "x\n", 0o644)?;
    // info/exclude and the user's excludes file: a user's, not the
    // project's, so they hide nothing from a subject.
    write(root, ".git/info/exclude", "*.excluded\n", 0o644)?;
    write(root, "a.excluded", "x\n", 0o644)?;
    write(&home.path, ".config/git/ignore", "*.userignored\n", 0o644)?;
    write(root, "b.userignored", "x\n", 0o644)?;
    write(root, "c.configured", "x\n", 0o644)?;
    write(&home.path, "my-excludes", "*.configured\n", 0o644)?;
    // The store, never listed.
    write(root, ".orcho/receipts/x.json", "{}\n", 0o644)?;

    let with_home = Fingerprinter::new().with_env(test_env().with("HOME", home.path.as_str()));
    let git_with_home = |args: &[&str]| -> Result<BTreeSet<Vec<u8>>> {
        let out = crate::git_bytes_env(root, args, test_env().with("HOME", home.path.as_str()))?;
        Ok(out
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty() && !p.starts_with(b".orcho/"))
            .map(<[u8]>::to_vec)
            .collect())
    };
    let listing = [
        "ls-files",
        "-co",
        "--exclude-per-directory=.gitignore",
        "-z",
    ];
    assert_eq!(we_list(&with_home, root)?, git_with_home(&listing)?);
    let ours = we_list(&with_home, root)?;
    for listed in [
        &b"nested/"[..],
        b"linked/",
        b"broken/file.txt",
        b"caf\xe9.txt",
        b"link-dir",
        b"dangling",
        b"target/kept.txt",
        b"keep.log",
        b"sym/a.txt",
        b"c.configured",
        b"a.excluded",
        b"b.userignored",
    ] {
        assert!(
            ours.contains(listed),
            "{} missing",
            String::from_utf8_lossy(listed)
        );
    }
    for left_out in [
        &b"pipe"[..],
        b"target/nested/",
        b"src/other.tmp",
        b"build/x/y.o",
    ] {
        assert!(
            !ours.contains(left_out),
            "{} listed",
            String::from_utf8_lossy(left_out)
        );
    }
    // core.excludesFile, with `~/`: still listed.
    git(root, &["config", "core.excludesFile", "~/my-excludes"])?;
    assert_eq!(we_list(&with_home, root)?, git_with_home(&listing)?);
    assert!(we_list(&with_home, root)?.contains(&b"c.configured"[..]));
    assert_eq!(
        with_home.fingerprint(root, &[])?.source,
        FileSource::IndexAndWalk
    );

    // What this process leaves to git, git lists.
    git(root, &["config", "core.ignoreCase", "true"])?;
    assert_eq!(
        with_home.fingerprint(root, &[])?.source,
        FileSource::Git,
        "core.ignoreCase is git's to apply"
    );
    assert_eq!(we_list(&with_home, root)?, git_with_home(&listing)?);
    Ok(())
}

#[test]
fn an_index_of_every_version_and_with_conflicts_lists_what_git_lists() -> Result {
    let dir = repo()?;
    let root = &dir.path;
    for i in 0..40 {
        write(root, &format!("dir{}/file{i}.txt", i % 7), "x\n", 0o644)?;
    }
    write(root, "a.txt", "base\n", 0o644)?;
    git(root, &["add", "-A"])?;
    git(root, &["commit", "-qm", "base"])?;
    git(root, &["checkout", "-qb", "other"])?;
    write(root, "a.txt", "other\n", 0o644)?;
    git(root, &["commit", "-qam", "other"])?;
    git(root, &["checkout", "-q", "-"])?;
    write(root, "a.txt", "main\n", 0o644)?;
    git(root, &["commit", "-qam", "main"])?;
    // A merge that conflicts leaves stages 1 to 3 of `a.txt` in the index.
    let _ = git(root, &["merge", "-q", "other"]);
    write(root, "added-with-intent.txt", "x\n", 0o644)?;
    git(root, &["add", "-N", "added-with-intent.txt"])?;
    for version in ["2", "3", "4"] {
        git(root, &["update-index", "--index-version", version])?;
        let got = fingerprinter().fingerprint(root, &[])?;
        assert_eq!(got.source, FileSource::IndexAndWalk, "index v{version}");
        assert_eq!(
            we_list(&fingerprinter(), root)?,
            git_lists(root)?,
            "index v{version}"
        );
    }
    // A split index is git's to read.
    git(root, &["update-index", "--split-index"])?;
    assert_eq!(
        fingerprinter().fingerprint(root, &[])?.source,
        FileSource::Git
    );
    assert_eq!(we_list(&fingerprinter(), root)?, git_lists(root)?);
    Ok(())
}

#[test]
fn a_checked_out_submodule_is_listed_as_git_lists_it() -> Result {
    let t = temp()?;
    let main = crate::with_submodule(&t.path, "")?;
    write(&main, "libs/lib/untracked-inside.txt", "x\n", 0o644)?;
    assert_eq!(we_list(&fingerprinter(), &main)?, git_lists(&main)?);
    let fp = fingerprinter().fingerprint(&main, &[])?;
    assert_eq!(fp.source, FileSource::IndexAndWalk);
    assert_eq!(fp.submodules.len(), 1);
    Ok(())
}

/// Names a random tree is made of: few, so that rules and files meet.
const NAMES: &[&str] = &["a", "b", "c.log", "d.txt", "e.o", "keep.log", "x y", "f"];

/// Ignore rules a random `.gitignore` is made of.
const RULES: &[&str] = &[
    "*.log",
    "!keep.log",
    "a/",
    "/b",
    "**/c.log",
    "b/**",
    "d.*",
    "!d.txt",
    "*.o",
    "[ab]",
    "a/**/f",
    "f/",
    "/a/b",
    "x\\ y",
    "?",
    "!/b",
    "e.[!x]",
    "!a",
];

#[derive(Debug, Clone)]
enum Node {
    File(String, bool),
    Dir(String, Vec<Self>, Option<Vec<usize>>),
}

fn node(depth: u32) -> BoxedStrategy<Node> {
    let name = proptest::sample::select(NAMES).prop_map(str::to_owned);
    let file = (name.clone(), any::<bool>()).prop_map(|(n, tracked)| Node::File(n, tracked));
    if depth == 0 {
        return file.boxed();
    }
    let dir = (
        name,
        proptest::collection::vec(node(depth - 1), 0..5),
        proptest::option::of(proptest::collection::vec(0..RULES.len(), 1..4)),
    )
        .prop_map(|(n, children, rules)| Node::Dir(n, children, rules));
    prop_oneof![2 => file, 1 => dir].boxed()
}

/// Writes the tree under `at`, and returns the paths to track.
fn materialize(at: &Utf8Path, nodes: &[Node], tracked: &mut Vec<String>, prefix: &str) -> Result {
    for n in nodes {
        match n {
            Node::File(name, track) => {
                let path = at.join(name);
                if path.exists() {
                    continue;
                }
                write(at, name, "x\n", 0o644)?;
                if *track {
                    tracked.push(format!("{prefix}{name}"));
                }
            }
            Node::Dir(name, children, rules) => {
                let path = at.join(name);
                if path.is_file() {
                    continue;
                }
                std::fs::create_dir_all(&path)?;
                if let Some(rules) = rules {
                    let text: String = rules.iter().map(|&r| format!("{}\n", RULES[r])).collect();
                    write(&path, ".gitignore", &text, 0o644)?;
                }
                materialize(&path, children, tracked, &format!("{prefix}{name}/"))?;
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_trees_and_rules_list_what_git_lists(
        tree in proptest::collection::vec(node(3), 1..8),
        top in proptest::option::of(proptest::collection::vec(0..RULES.len(), 1..5)),
    ) {
        let dir = temp().unwrap();
        let root = &dir.path;
        init(root).unwrap();
        if let Some(rules) = &top {
            let text: String = rules.iter().map(|&r| format!("{}\n", RULES[r])).collect();
            write(root, ".gitignore", &text, 0o644).unwrap();
        }
        let mut tracked = Vec::new();
        materialize(root, &tree, &mut tracked, "").unwrap();
        for path in &tracked {
            git(root, &["add", "-f", "--", path]).unwrap();
        }
        prop_assert_eq!(we_list(&fingerprinter(), root).unwrap(), git_lists(root).unwrap());
        prop_assert_eq!(fingerprinter().fingerprint(root, &[]).unwrap().source, FileSource::IndexAndWalk);
    }

    #[test]
    fn random_changes_between_cached_fingerprints_keep_git_s_listing(
        tree in proptest::collection::vec(node(2), 1..6),
        changes in proptest::collection::vec((0..6u8, proptest::sample::select(NAMES), 0..RULES.len()), 1..6),
    ) {
        let dir = temp().unwrap();
        let cache = temp().unwrap();
        let root = &dir.path;
        init(root).unwrap();
        let mut tracked = Vec::new();
        materialize(root, &tree, &mut tracked, "").unwrap();
        for path in &tracked {
            git(root, &["add", "-f", "--", path]).unwrap();
        }
        let cached = fingerprinter().with_cache_dir(cache.path.join("fp"));
        wait_for_fs_tick(root).unwrap();
        cached.fingerprint(root, &[]).unwrap();
        for (kind, name, rule) in changes {
            // Somewhere in the tree: the root, or a folder that is there.
            let folder = listed_folder(root, name);
            match kind {
                0 => write(&folder, name, "new\n", 0o644).unwrap(),
                1 => {
                    let rules = format!("{}\n", RULES[rule]);
                    write(&folder, ".gitignore", &rules, 0o644).unwrap();
                }
                2 => {
                    let _ = std::fs::remove_file(folder.join(name));
                }
                3 => {
                    let _ = git(root, &["add", "-f", "--", folder.join(name).strip_prefix(root).unwrap().as_str()]);
                }
                4 => {
                    let _ = git(root, &["rm", "-rq", "--cached", "--ignore-unmatch", "--", folder.join(name).strip_prefix(root).unwrap().as_str()]);
                }
                _ => {
                    let inner = folder.join(format!("{name}-repo"));
                    std::fs::create_dir_all(&inner).unwrap();
                    init(&inner).unwrap();
                }
            }
            let got = cached.fingerprint(root, &[]).unwrap();
            prop_assert!(
                matches!(got.source, FileSource::RelistedGitListing | FileSource::CachedGitListing),
                "the cached listing is brought up to date, not made again: {:?}", got.source
            );
            let fresh = fingerprinter().fingerprint(root, &[]).unwrap();
            prop_assert_eq!(got.digest, fresh.digest, "after change {} at {}", kind, folder);
            prop_assert_eq!(we_list(&fingerprinter(), root).unwrap(), git_lists(root).unwrap());
        }
    }
}

/// A folder of the tree to change something in: one whose name is `name`,
/// or the root.
fn listed_folder(root: &Utf8Path, name: &str) -> camino::Utf8PathBuf {
    let mut found = root.to_owned();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = PathBuf::from(entry.file_name());
            if path == std::path::Path::new(".git") {
                continue;
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                let child = dir.join(path.to_string_lossy().as_ref());
                if entry.file_name() == OsStr::new(name) {
                    found = child.clone();
                }
                stack.push(child);
            }
        }
    }
    found
}

// What a cached listing depends on, beyond the walk's own directories, and
// the corners where git's rules are easy to miss: each compared with git or
// with a fresh fingerprint.

/// `fingerprinter` with its cache in `cache`, after a first fingerprint of
/// `root` taken once the file system's clock passed every time in it, so
/// that every stat it records is trusted.
fn first_cached(
    cache: &crate::Temp,
    fingerprinter: Fingerprinter,
    root: &Utf8Path,
) -> Result<Fingerprinter> {
    let cached = fingerprinter.with_cache_dir(cache.path.join("fp"));
    wait_for_fs_tick(root)?;
    cached.fingerprint(root, &[])?;
    Ok(cached)
}

/// Asserts that `cached` fingerprints `root` as `fresh` (the same without a
/// cache) does: the same files, the same digest.
fn assert_follows(
    cached: &Fingerprinter,
    fresh: &Fingerprinter,
    root: &Utf8Path,
    why: &str,
) -> Result {
    let got = cached.fingerprint(root, &[])?;
    let want = fresh.fingerprint(root, &[])?;
    assert_eq!(
        (got.digest, got.files),
        (want.digest, want.files),
        "{:?}: {why}",
        got.source
    );
    Ok(())
}

#[test]
fn a_symlinked_excludes_file_edited_between_cached_fingerprints_counts() -> Result {
    let dir = temp()?;
    let root = &dir.path;
    let home = temp()?;
    init(root)?;
    write(root, "a.txt", "x\n", 0o644)?;
    write(root, "b.secret", "x\n", 0o644)?;
    // `~/.config/git/ignore` kept in a dotfiles folder, as stow and the
    // like keep it: a symlink.
    write(&home.path, "dotfiles/ignore", "*.tmp\n", 0o644)?;
    std::fs::create_dir_all(home.path.join(".config/git"))?;
    symlink(
        "../../dotfiles/ignore",
        &home.path.join(".config/git/ignore"),
    )?;
    let env = test_env().with("HOME", home.path.as_str());
    let cache = temp()?;
    let cached = first_cached(&cache, Fingerprinter::new().with_env(env.clone()), root)?;
    write(&home.path, "dotfiles/ignore", "*.tmp\n*.secret\n", 0o644)?;
    assert_follows(
        &cached,
        &Fingerprinter::new().with_env(env),
        root,
        "b.secret is ignored now",
    )?;
    Ok(())
}

#[test]
fn a_config_include_that_appears_between_cached_fingerprints_counts() -> Result {
    let dir = repo()?;
    let root = &dir.path;
    write(root, "a.txt", "x\n", 0o644)?;
    write(root, "b.secret", "x\n", 0o644)?;
    write(root, ".git/more-excludes", "*.secret\n", 0o644)?;
    // Relative to `.git/`: git reads it once it is there.
    git(root, &["config", "include.path", "extra.gitconfig"])?;
    let cache = temp()?;
    let cached = first_cached(&cache, fingerprinter(), root)?;
    write(
        root,
        ".git/extra.gitconfig",
        &format!("[core]\n\texcludesFile = {root}/.git/more-excludes\n"),
        0o644,
    )?;
    // An excludes file hides nothing from a subject, included or not.
    assert!(git_lists(root)?.contains(&b"b.secret"[..]));
    assert_follows(&cached, &fingerprinter(), root, "b.secret is listed still")?;
    Ok(())
}

#[test]
fn repositories_reached_through_symlinks_are_listed_as_git_lists_them() -> Result {
    let dir = repo()?;
    let root = &dir.path;
    write(root, "a.txt", "x\n", 0o644)?;
    let elsewhere = temp()?;
    init(&elsewhere.path)?;
    // As `repo` lays projects out: `.git` a symlink to the git directory.
    write(root, "project/inner.txt", "x\n", 0o644)?;
    symlink(
        &format!("{}/.git", elsewhere.path),
        &root.join("project/.git"),
    )?;
    // A `.git` file naming a symlink to a git directory.
    std::os::unix::fs::symlink(
        elsewhere.path.join(".git"),
        elsewhere.path.join("gitdir-link"),
    )?;
    write(
        root,
        "linked/.git",
        &format!("gitdir: {}/gitdir-link\n", elsewhere.path),
        0o644,
    )?;
    write(root, "linked/inner.txt", "x\n", 0o644)?;
    // A `.git` symlink to the work tree's own git directory: git enters
    // the folder, it is no repository of its own.
    write(root, "own/f.txt", "x\n", 0o644)?;
    symlink("../.git", &root.join("own/.git"))?;
    let theirs = git_lists(root)?;
    for listed in [&b"project/"[..], b"linked/", b"own/f.txt"] {
        assert!(
            theirs.contains(listed),
            "{}",
            String::from_utf8_lossy(listed)
        );
    }
    assert_eq!(we_list(&fingerprinter(), root)?, theirs);
    Ok(())
}

#[test]
fn a_folder_that_becomes_a_repository_between_cached_fingerprints_is_listed_as_one() -> Result {
    // `git init` in a folder whose `.gitignore` changes too; `git init`
    // filling a `.git` folder that was there, which leaves the folder
    // itself as it was.
    for had_dot_git in [false, true] {
        let dir = temp()?;
        let root = &dir.path;
        init(root)?;
        write(root, "a.txt", "x\n", 0o644)?;
        write(root, "lib/.gitignore", "*.log\n", 0o644)?;
        write(root, "lib/code.rs", "x\n", 0o644)?;
        if had_dot_git {
            std::fs::create_dir_all(root.join("lib/.git"))?;
            assert!(git_lists(root)?.contains(&b"lib/code.rs"[..]));
        }
        let cache = temp()?;
        let cached = first_cached(&cache, fingerprinter(), root)?;
        init(&root.join("lib"))?;
        if !had_dot_git {
            write(root, "lib/.gitignore", "*.log\n*.tmp\n", 0o644)?;
        }
        assert!(git_lists(root)?.contains(&b"lib/"[..]));
        let why = format!("lib/ is a repository of its own (a .git before: {had_dot_git})");
        assert_follows(&cached, &fingerprinter(), root, &why)?;
    }
    Ok(())
}

#[test]
fn fingerprinters_excluding_different_paths_keep_apart_in_one_cache_dir() -> Result {
    let dir = repo()?;
    let root = &dir.path;
    write(root, "a.txt", "x\n", 0o644)?;
    write(root, "store/receipt.json", "{}\n", 0o644)?;
    let cache = temp()?;
    first_cached(&cache, fingerprinter().excluding(root.join("store")), root)?;
    let everything = fingerprinter().with_cache_dir(cache.path.join("fp"));
    assert_follows(
        &everything,
        &fingerprinter(),
        root,
        "store/receipt.json is covered",
    )?;
    Ok(())
}

#[test]
fn a_nul_byte_in_a_gitignore_line_ends_the_pattern_as_in_git() -> Result {
    let dir = repo()?;
    let root = &dir.path;
    crate::write_bytes(root.join(".gitignore"), b"secret\0 trailing junk\n")?;
    write(root, "secret", "x\n", 0o644)?;
    write(root, "other", "x\n", 0o644)?;
    assert!(!git_lists(root)?.contains(&b"secret"[..]));
    assert_eq!(we_list(&fingerprinter(), root)?, git_lists(root)?);
    Ok(())
}

#[test]
fn an_edit_inside_a_nested_repository_with_a_non_utf8_name_changes_the_fingerprint() -> Result {
    let dir = repo()?;
    let root = &dir.path;
    write(root, "a.txt", "x\n", 0o644)?;
    let nested = root.as_std_path().join(OsStr::from_bytes(b"caf\xe9"));
    std::fs::create_dir_all(&nested)?;
    crate::write_bytes(nested.join("inner.txt"), b"v1\n")?;
    // `git init` in the folder, named by a relative path that is ASCII.
    std::fs::rename(&nested, root.join("tmp-name"))?;
    init(&root.join("tmp-name"))?;
    std::fs::rename(root.join("tmp-name"), &nested)?;
    assert!(git_lists(root)?.contains(&b"caf\xe9/"[..]));
    let before = fingerprinter().fingerprint(root, &[])?;
    crate::write_bytes(nested.join("inner.txt"), b"v2, edited\n")?;
    let after = fingerprinter().fingerprint(root, &[])?;
    assert_ne!(
        before.digest, after.digest,
        "the nested repository's edit counts"
    );
    Ok(())
}

#[test]
fn an_index_with_an_absurd_entry_count_does_not_abort_the_process() -> Result {
    let dir = repo()?;
    let root = &dir.path;
    write(root, "a.txt", "x\n", 0o644)?;
    // A damaged index: the header claims 2^32 - 1 entries, none follow.
    let mut index = b"DIRC\0\0\0\x02\xff\xff\xff\xff".to_vec();
    index.extend_from_slice(&[0; 20]);
    crate::write_bytes(root.join(".git/index"), &index)?;
    // Git refuses it with an error; a fingerprint must fail (or fall back)
    // the same way, not take the process down. Run it in a child process.
    let survived = run_child(
        &[],
        "listing::child_fingerprints_the_root_it_is_given",
        &[("ORCHO_TEST_CHILD_ROOT", root.as_str())],
    )?;
    assert!(survived, "the fingerprinting process died");
    Ok(())
}

/// Run by the test above in a child process.
#[test]
#[ignore = "run by an_index_with_an_absurd_entry_count_does_not_abort_the_process"]
#[expect(
    clippy::disallowed_methods,
    reason = "the child learns its root from the parent test's environment"
)]
fn child_fingerprints_the_root_it_is_given() {
    // Run on its own (`--ignored`), it has nothing to do.
    let Ok(root) = std::env::var("ORCHO_TEST_CHILD_ROOT") else {
        return;
    };
    // An error is the expected outcome; an abort is the bug.
    let _ = fingerprinter().fingerprint(Utf8Path::new(&root), &[]);
}

/// A loop-mounted ext4 with 128-byte inodes, whose times have whole
/// seconds (as on many network, shared-folder and FAT mounts); unmounted on
/// drop. Needs root.
struct CoarseFs {
    _dir: crate::Temp,
    mount: camino::Utf8PathBuf,
}

impl CoarseFs {
    fn new() -> Result<Self> {
        let dir = temp()?;
        let image = dir.path.join("fs.img");
        let mount = dir.path.join("mnt");
        std::fs::create_dir_all(&mount)?;
        std::fs::File::create(&image)?.set_len(32 << 20)?;
        for argv in [
            vec!["mkfs.ext4", "-q", "-F", "-I", "128", image.as_str()],
            vec!["mount", "-o", "loop", image.as_str(), mount.as_str()],
        ] {
            crate::run_cmd(&dir.path, &argv)
                .map_err(|e| format!("{e} (this test needs root and a loop device)"))?;
        }
        Ok(Self { _dir: dir, mount })
    }
}

impl Drop for CoarseFs {
    fn drop(&mut self) {
        let _ = crate::run_cmd(&self._dir.path, &["umount", self.mount.as_str()]);
    }
}

#[test]
fn a_work_tree_with_coarser_times_than_the_cache_dir_is_not_trusted_too_early() -> Result {
    let fs = match CoarseFs::new() {
        Ok(fs) => fs,
        Err(e) => {
            eprintln!("skipped: no file system with whole-second times to mount: {e}");
            return Ok(());
        }
    };
    let cache = temp()?;
    // A git work tree (the time is read in its `.git`), and a folder
    // walked without git (the time is read in the cache folder, rounded).
    for git in [true, false] {
        let done = (0..5).try_fold(false, |done, attempt| -> Result<bool> {
            if done {
                return Ok(true);
            }
            let root = fs.mount.join(format!("tree-{git}-{attempt}"));
            std::fs::create_dir_all(&root)?;
            let plain = || {
                if git {
                    fingerprinter()
                } else {
                    fingerprinter().without_git()
                }
            };
            if git {
                init(&root)?;
            }
            let fp = plain().with_cache_dir(cache.path.join(format!("fp-{git}-{attempt}")));
            within_one_second(|| {
                crate::write_bytes(root.join("f.txt"), b"v1\n")?;
                std::fs::create_dir_all(root.join("d"))?;
                crate::write_bytes(root.join("d/old.txt"), b"x\n")?;
                fp.fingerprint(&root, &[])?;
                // The same size, written in place; a new file in a listed
                // folder.
                crate::write_bytes(root.join("f.txt"), b"v2\n")?;
                crate::write_bytes(root.join("d/new.txt"), b"x\n")?;
                Ok(())
            })?
            .map_or(Ok(false), |()| {
                let got = fp.fingerprint(&root, &[])?;
                let fresh = plain().fingerprint(&root, &[])?;
                assert_eq!(
                    (got.digest, got.files),
                    (fresh.digest, fresh.files),
                    "{:?}: f.txt changed and d/new.txt is new",
                    got.source
                );
                Ok(true)
            })
        })?;
        assert!(done, "never managed to stay within one second");
    }
    Ok(())
}

/// Runs `f` from the start of a second of the wall clock; `None` when it
/// ran into the next second.
fn within_one_second(f: impl FnOnce() -> Result) -> Result<Option<()>> {
    let now = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    while now()?.subsec_millis() > 50 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let second = now()?.as_secs();
    f()?;
    Ok((now()?.as_secs() == second).then_some(()))
}

/// Whether this process reads a folder whatever its permissions (root).
fn reads_anything() -> Result<bool> {
    let dir = temp()?;
    let locked = dir.path.join("locked");
    std::fs::create_dir(&locked)?;
    chmod(&locked, 0o000)?;
    let readable = std::fs::read_dir(&locked).is_ok();
    chmod(&locked, 0o755)?;
    Ok(readable)
}

/// Runs the ignored test `name` of this binary in a child process, after
/// the command `wrapper` (none when empty), with `env` added to the test
/// environment; whether it succeeded.
fn run_child(wrapper: &[&str], name: &str, env: &[(&str, &str)]) -> Result<bool> {
    let mut argv: Vec<std::ffi::OsString> = wrapper.iter().map(Into::into).collect();
    argv.push(std::env::current_exe()?.into_os_string());
    argv.extend(["--exact", name, "--ignored", "--test-threads=1"].map(Into::into));
    let mut request = ExecRequest::new(argv)
        .envs(test_env())
        .timeout(std::time::Duration::from_secs(300));
    for (key, value) in env {
        request = request.env(*key, *value);
    }
    Ok(exec::run(&request)?.status.success())
}

/// Runs the ignored test `name` of this binary in a child process to which
/// permissions apply: without the capabilities that let root read any
/// file, when this process has them. Whether it succeeded; `None` when
/// permissions cannot be made to apply here (root, without `setpriv`).
fn run_unprivileged(name: &str) -> Result<Option<bool>> {
    if !reads_anything()? {
        return run_child(&[], name, &[]).map(Some);
    }
    let dir = temp()?;
    if crate::run_cmd(&dir.path, &["setpriv", "--version"]).is_err() {
        return Ok(None);
    }
    let wrapper = [
        "setpriv",
        "--bounding-set",
        "-dac_override,-dac_read_search",
        "--",
    ];
    run_child(&wrapper, name, &[]).map(Some)
}

#[test]
fn permissions_that_change_between_cached_fingerprints_count() -> Result {
    let dir = run_unprivileged("listing::child_a_folder_that_becomes_readable")?;
    let ignore = run_unprivileged("listing::child_a_gitignore_that_becomes_readable")?;
    let (Some(dir), Some(ignore)) = (dir, ignore) else {
        eprintln!("skipped: running as root without setpriv, permissions do not apply");
        return Ok(());
    };
    assert!(
        dir && ignore,
        "a folder made readable is listed: {dir}; a .gitignore made readable applies: {ignore}"
    );
    Ok(())
}

fn chmod(path: &Utf8Path, mode: u32) -> Result {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    Ok(())
}

/// Run unprivileged by the test above.
#[test]
#[ignore = "run by permissions_that_change_between_cached_fingerprints_count"]
fn child_a_folder_that_becomes_readable() -> Result {
    let dir = repo()?;
    let root = &dir.path;
    write(root, "a.txt", "x\n", 0o644)?;
    write(root, "locked/f.txt", "x\n", 0o644)?;
    let cache = temp()?;
    let cached = fingerprinter().with_cache_dir(cache.path.join("fp"));
    wait_for_fs_tick(root)?;
    chmod(&root.join("locked"), 0o000)?;
    cached.fingerprint(root, &[])?;
    chmod(&root.join("locked"), 0o755)?;
    assert!(git_lists(root)?.contains(&b"locked/f.txt"[..]));
    assert_follows(&cached, &fingerprinter(), root, "as a fresh fingerprint")
}

/// Run unprivileged by the test above.
#[test]
#[ignore = "run by permissions_that_change_between_cached_fingerprints_count"]
fn child_a_gitignore_that_becomes_readable() -> Result {
    let dir = repo()?;
    let root = &dir.path;
    write(root, "a.txt", "x\n", 0o644)?;
    // Git reads `sub/.gitignore` but does not list it.
    write(root, ".gitignore", "/sub/.gitignore\n", 0o644)?;
    write(root, "sub/x.log", "x\n", 0o644)?;
    write(root, "sub/.gitignore", "*.log\n", 0o000)?;
    let cache = temp()?;
    let cached = first_cached(&cache, fingerprinter(), root)?;
    chmod(&root.join("sub/.gitignore"), 0o644)?;
    assert!(!git_lists(root)?.contains(&b"sub/x.log"[..]));
    assert_follows(&cached, &fingerprinter(), root, "as a fresh fingerprint")
}

#[test]
fn a_change_deep_below_a_kept_folder_while_the_root_changes_too_counts() -> Result {
    let dir = repo()?;
    let root = &dir.path;
    write(root, "top.txt", "x\n", 0o644)?;
    write(root, "a/b/c/.gitignore", "*.tmp\n", 0o644)?;
    write(root, "a/b/c/old.log", "x\n", 0o644)?;
    write(root, "a/other.txt", "x\n", 0o644)?;
    let cache = temp()?;
    let cached = first_cached(&cache, fingerprinter(), root)?;
    // `a/b/c` and `a/b` change, `a` does not; the root does.
    write(root, "a/b/c/.gitignore", "*.tmp\n*.log\n", 0o644)?;
    write(root, "new.txt", "x\n", 0o644)?;
    assert!(!git_lists(root)?.contains(&b"a/b/c/old.log"[..]));
    assert_follows(
        &cached,
        &fingerprinter(),
        root,
        "a/b/c/old.log is ignored now",
    )?;
    Ok(())
}

#[test]
fn a_change_deep_inside_a_folder_that_became_a_repository_is_left_to_it() -> Result {
    let dir = repo()?;
    let root = &dir.path;
    write(root, "top.txt", "x\n", 0o644)?;
    write(root, "lib/src/mod/deeper/code.rs", "x\n", 0o644)?;
    let cache = temp()?;
    let cached = first_cached(&cache, fingerprinter(), root)?;
    // `lib/src/mod/deeper` and `lib/src/mod` change, `lib/src` does not,
    // `lib` becomes a repository of its own.
    write(root, "lib/src/mod/deeper/more.rs", "x\n", 0o644)?;
    init(&root.join("lib"))?;
    assert!(git_lists(root)?.contains(&b"lib/"[..]));
    assert_follows(
        &cached,
        &fingerprinter(),
        root,
        "lib/ is a repository of its own",
    )?;
    Ok(())
}

#[test]
fn a_branch_switch_that_includes_other_configuration_counts() -> Result {
    let dir = temp()?;
    let root = &dir.path;
    let outside = temp()?;
    init(root)?;
    write(root, "x.a", "x\n", 0o644)?;
    write(&outside.path, "ex", "*.a\n", 0o644)?;
    let included = outside.path.join("other.gitconfig");
    write(
        &outside.path,
        "other.gitconfig",
        &format!("[core]\n\texcludesFile = {}/ex\n", outside.path),
        0o644,
    )?;
    git(
        root,
        &["config", "includeIf.onbranch:other.path", included.as_str()],
    )?;
    git(root, &["commit", "-q", "--allow-empty", "-m", "first"])?;
    let cache = temp()?;
    wait_for_fs_tick(&outside.path)?;
    let cached = first_cached(&cache, fingerprinter(), root)?;
    git(root, &["checkout", "-q", "-b", "other"])?;
    assert!(git_lists(root)?.contains(&b"x.a"[..]));
    assert_follows(
        &cached,
        &fingerprinter(),
        root,
        "x.a is listed on `other` too",
    )?;
    Ok(())
}

#[test]
fn a_repository_git_refuses_is_refused_here_too() -> Result {
    // An extension git does not know: `git config` still exits 0, without
    // the repository's own configuration; `git ls-files` refuses.
    let dir = repo()?;
    let root = &dir.path;
    write(root, "x.a", "x\n", 0o644)?;
    git(root, &["config", "core.repositoryformatversion", "1"])?;
    git(root, &["config", "extensions.frobnicate", "true"])?;
    assert!(git_lists(root).is_err(), "git refuses the repository");
    let err = fingerprinter().fingerprint(root, &[]).unwrap_err();
    assert!(
        format!("{err:?}").contains("frobnicate"),
        "git's own words: {err:?}"
    );
    // A repository of another owner git does not trust.
    let dir = repo()?;
    let root = &dir.path;
    write(root, "x.a", "x\n", 0o644)?;
    let env = test_env().with("GIT_TEST_ASSUME_DIFFERENT_OWNER", "1");
    assert!(crate::git_bytes_env(root, &["ls-files", "-co"], env.clone()).is_err());
    let listed = Fingerprinter::new().with_env(env).files(root, &[]);
    assert!(listed.is_err(), "listed although git refuses: {listed:?}");
    Ok(())
}

#[test]
fn a_tracked_file_whose_place_a_repository_took_is_listed_as_git_lists_it() -> Result {
    let dir = repo()?;
    let root = &dir.path;
    for name in ["repo", "plain"] {
        write(root, name, "x\n", 0o644)?;
        git(root, &["add", name])?;
        std::fs::remove_file(root.join(name))?;
        write(root, &format!("{name}/inner.txt"), "x\n", 0o644)?;
    }
    init(&root.join("repo"))?;
    let theirs = git_lists(root)?;
    assert!(theirs.contains(&b"repo"[..]) && !theirs.contains(&b"repo/"[..]));
    assert!(theirs.contains(&b"plain/inner.txt"[..]));
    assert_eq!(we_list(&fingerprinter(), root)?, theirs);
    Ok(())
}

#[test]
fn any_value_git_reads_as_true_leaves_ignore_case_to_git() -> Result {
    for value in ["2", "-1", "1k", "YES"] {
        let dir = temp()?;
        let root = &dir.path;
        init(root)?;
        write(root, ".gitignore", "*.LOG\n", 0o644)?;
        write(root, "a.log", "x\n", 0o644)?;
        git(root, &["config", "core.ignoreCase", value])?;
        assert_eq!(
            we_list(&fingerprinter(), root)?,
            git_lists(root)?,
            "{value}"
        );
        let source = fingerprinter().fingerprint(root, &[])?.source;
        assert_eq!(source, FileSource::Git, "{value}");
    }
    Ok(())
}

/// Pieces of ignore patterns, the odd ones included.
const PIECES: &[&str] = &[
    "a",
    "b",
    "x",
    "y",
    "/",
    "*",
    "**",
    "?",
    "[",
    "]",
    "!",
    "-",
    "^",
    "\\",
    " ",
    ":",
    "[:alpha:]",
];

fn pattern_lines() -> impl Strategy<Value = String> {
    let line = proptest::collection::vec(proptest::sample::select(PIECES), 1..7);
    proptest::collection::vec(line, 0..3)
        .prop_map(|lines| lines.iter().map(|p| p.concat() + "\n").collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random pattern text, escapes, classes and stray brackets included,
    /// in the root's `.gitignore` and a folder's.
    #[test]
    fn random_pattern_text_lists_what_git_lists(top in pattern_lines(), nested in pattern_lines()) {
        let dir = temp().unwrap();
        let root = &dir.path;
        init(root).unwrap();
        for f in [
            "ab", "ba", "a-b", "a]b", "[a]", "a b", "x/ab", "x/y/ba", "y/x/ab", "x/a/b",
            "x/a/x/a", "b/y/x",
        ] {
            write(root, f, "x\n", 0o644).unwrap();
        }
        write(root, ".gitignore", &top, 0o644).unwrap();
        write(root, "x/.gitignore", &nested, 0o644).unwrap();
        let ours = we_list(&fingerprinter(), root).unwrap();
        let theirs = git_lists(root).unwrap();
        prop_assert_eq!(ours, theirs, "top {:?} nested {:?}", top, nested);
    }
}
