//! The file list a fingerprint covers, made in this process, against what
//! `git ls-files -co --exclude-standard` lists on the same tree: fixed edge
//! cases, random trees with random ignore rules, and random changes between
//! cached fingerprints.

use std::{
    collections::BTreeSet,
    ffi::OsStr,
    os::unix::ffi::{OsStrExt, OsStringExt},
    path::PathBuf,
};

use camino::Utf8Path;
use orcho_receipts::fingerprint::{FileSource, Fingerprinter};
use proptest::prelude::*;

use crate::{Result, fingerprint::wait_for_fs_tick, git, temp, test_env, write};

fn fingerprinter() -> Fingerprinter {
    Fingerprinter::new().with_env(test_env())
}

/// What git lists, as raw paths (the store left out, as the fingerprint
/// leaves it out).
fn git_lists(root: &Utf8Path) -> Result<BTreeSet<Vec<u8>>> {
    let out = crate::git_bytes(root, &["ls-files", "-co", "--exclude-standard", "-z"])?;
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
    // info/exclude and the user's excludes file.
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
    let listing = ["ls-files", "-co", "--exclude-standard", "-z"];
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
    ] {
        assert!(
            ours.contains(listed),
            "{} missing",
            String::from_utf8_lossy(listed)
        );
    }
    for left_out in [
        &b"pipe"[..],
        b"a.excluded",
        b"b.userignored",
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
    // core.excludesFile, with `~/`.
    git(root, &["config", "core.excludesFile", "~/my-excludes"])?;
    assert_eq!(we_list(&with_home, root)?, git_with_home(&listing)?);
    assert!(!we_list(&with_home, root)?.contains(&b"c.configured"[..]));
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
    let dir = temp()?;
    let root = &dir.path;
    init(root)?;
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
