//! Fingerprints against real directories and real git repositories.

use std::{
    collections::BTreeSet,
    ffi::OsStr,
    os::unix::{ffi::OsStrExt, fs::MetadataExt},
    path::PathBuf,
    time::Duration,
};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_receipts::fingerprint::{FileSource, Fingerprinter};
use proptest::prelude::*;

use crate::{Result, git, temp, test_env, write};

fn fingerprinter() -> Fingerprinter {
    Fingerprinter::new().with_env(test_env())
}

/// Waits until the file system's clock has moved past the change time of
/// every file under `root`, so that nothing there is "racily clean" for a
/// snapshot taken from now on. A wait on a fact, not a duration.
pub(crate) fn wait_for_fs_tick(root: &Utf8Path) -> Result {
    fn newest(dir: &std::path::Path, max: &mut (i64, i64)) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let meta = entry.path().symlink_metadata()?;
            *max = (*max)
                .max((meta.ctime(), meta.ctime_nsec()))
                .max((meta.mtime(), meta.mtime_nsec()));
            if meta.is_dir() {
                newest(&entry.path(), max)?;
            }
        }
        Ok(())
    }
    let mut max = (i64::MIN, 0);
    newest(root.as_std_path(), &mut max)?;
    let stamps = tempfile::tempdir()?;
    loop {
        let stamp = tempfile::NamedTempFile::new_in(stamps.path())?;
        let meta = stamp.as_file().metadata()?;
        if (meta.mtime(), meta.mtime_nsec()) > max {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn git_listing(root: &Utf8Path) -> Result<BTreeSet<PathBuf>> {
    let out = git(
        root,
        &[
            "ls-files",
            "-co",
            "--exclude-per-directory=.gitignore",
            "-z",
        ],
    )?;
    Ok(out
        .split('\0')
        .filter(|p| !p.is_empty() && !p.starts_with(".orcho/"))
        .map(PathBuf::from)
        .collect())
}

fn repo() -> Result<crate::Temp> {
    let dir = temp()?;
    let root = &dir.path;
    git(root, &["init", "-q"])?;
    write(root, ".gitignore", "target/\nCargo.lock\n*.log\n", 0o644)?;
    write(root, "Cargo.toml", "[package]\n", 0o644)?;
    write(root, "Cargo.lock", "# committed although ignored\n", 0o644)?;
    write(root, "src/lib.rs", "pub fn f() {}\n", 0o644)?;
    write(root, ".github/workflows/ci.yml", "on: push\n", 0o644)?;
    write(root, ".env.example", "A=1\n", 0o644)?;
    write(root, "scripts/run.sh", "#!/bin/sh\n", 0o755)?;
    git(root, &["add", "-A"])?;
    git(root, &["add", "-f", "Cargo.lock"])?;
    git(root, &["commit", "-q", "-m", "init"])?;
    // Untracked: one ignored (excluded), one not (included), and the store.
    write(root, "target/debug/app", "binary\n", 0o755)?;
    write(root, "debug.log", "noise\n", 0o644)?;
    write(root, "notes/new.md", "untracked but not ignored\n", 0o644)?;
    write(root, ".orcho/receipts/x/latest.json", "{}\n", 0o644)?;
    Ok(dir)
}

#[test]
fn in_git_the_file_set_is_what_git_lists() -> Result {
    let dir = repo()?;
    let root = &dir.path;
    let ours: BTreeSet<PathBuf> = fingerprinter().files(root, &[])?.into_iter().collect();
    assert_eq!(ours, git_listing(root)?);
    for included in [
        "Cargo.lock",
        ".github/workflows/ci.yml",
        ".env.example",
        "notes/new.md",
        ".gitignore",
    ] {
        assert!(
            ours.contains(&PathBuf::from(included)),
            "{included} missing"
        );
    }
    for excluded in [
        "target/debug/app",
        "debug.log",
        ".orcho/receipts/x/latest.json",
    ] {
        assert!(
            !ours.contains(&PathBuf::from(excluded)),
            "{excluded} listed"
        );
    }
    let fp = fingerprinter().fingerprint(root, &[])?;
    assert_eq!(fp.source, FileSource::IndexAndWalk);
    assert_eq!(fp.files, 8);

    // Ignored files and the store never change the fingerprint...
    write(root, "target/debug/app", "rebuilt\n", 0o755)?;
    write(root, ".orcho/receipts/x/latest.json", "{\"x\": 1}\n", 0o644)?;
    assert_eq!(fingerprinter().fingerprint(root, &[])?.digest, fp.digest);
    // ...a committed-but-ignored file does.
    write(root, "Cargo.lock", "# changed\n", 0o644)?;
    assert_ne!(fingerprinter().fingerprint(root, &[])?.digest, fp.digest);
    Ok(())
}

#[test]
fn a_deleted_tracked_file_changes_the_fingerprint() -> Result {
    let dir = repo()?;
    let before = fingerprinter().fingerprint(&dir.path, &[])?;
    std::fs::remove_file(dir.path.join("src/lib.rs"))?;
    let after = fingerprinter().fingerprint(&dir.path, &[])?;
    assert_ne!(before.digest, after.digest);
    assert_eq!(after.files, before.files - 1);
    Ok(())
}

#[test]
fn outside_git_the_walk_honours_ignore_files() -> Result {
    let dir = temp()?;
    let root = &dir.path;
    write(root, ".gitignore", "target/\n*.log\n!keep.log\n", 0o644)?;
    write(root, "src/lib.rs", "x\n", 0o644)?;
    write(root, "src/.ignore", "/generated.rs\n", 0o644)?;
    write(root, "src/generated.rs", "y\n", 0o644)?;
    write(root, "src/sub/generated.rs", "z\n", 0o644)?;
    write(root, "target/out", "o\n", 0o644)?;
    write(root, "a.log", "l\n", 0o644)?;
    write(root, "keep.log", "k\n", 0o644)?;
    write(root, ".hidden/file", "h\n", 0o644)?;
    write(root, ".orcho/cache/x", "c\n", 0o644)?;
    let files: Vec<String> = fingerprinter()
        .files(root, &[])?
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        files,
        [
            ".gitignore",
            ".hidden/file",
            "keep.log",
            "src/.ignore",
            "src/lib.rs",
            "src/sub/generated.rs"
        ]
    );
    assert_eq!(
        fingerprinter().fingerprint(root, &[])?.source,
        FileSource::Walk
    );
    Ok(())
}

#[test]
fn outside_git_what_builds_and_test_runs_write_is_left_out() -> Result {
    let dir = temp()?;
    let root = &dir.path;
    write(root, "Cargo.toml", "[package]\n", 0o644)?;
    write(root, "src/lib.rs", "x\n", 0o644)?;
    write(root, "target/debug/out", "o\n", 0o644)?;
    write(root, "py/__pycache__/m.pyc", "c\n", 0o644)?;
    write(root, "py/.pytest_cache/v", "c\n", 0o644)?;
    write(root, "web/node_modules/x/index.js", "j\n", 0o644)?;
    // A `target` that is not cargo's is a directory like any other.
    write(root, "docs/target/page.md", "p\n", 0o644)?;
    let files: Vec<String> = fingerprinter()
        .files(root, &[])?
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, ["Cargo.toml", "docs/target/page.md", "src/lib.rs"]);
    Ok(())
}

#[test]
fn non_utf8_names_never_fail() -> Result {
    let dir = temp()?;
    let root = &dir.path;
    let name = OsStr::from_bytes(b"caf\xe9.txt");
    crate::write_bytes(root.as_std_path().join(name), b"one")?;
    let fp = fingerprinter().fingerprint(root, &[])?;
    assert_eq!(fp.files, 1);
    crate::write_bytes(root.as_std_path().join(name), b"two")?;
    assert_ne!(fingerprinter().fingerprint(root, &[])?.digest, fp.digest);

    // In git too.
    git(root, &["init", "-q"])?;
    let in_git = fingerprinter().fingerprint(root, &[])?;
    assert_eq!(in_git.source, FileSource::IndexAndWalk);
    assert_eq!(in_git.files, 1);
    Ok(())
}

#[test]
fn symlinks_are_hashed_by_target_and_never_followed() -> Result {
    let outside = temp()?;
    write(&outside.path, "secret.txt", "outside\n", 0o644)?;
    let dir = temp()?;
    let root = &dir.path;
    std::os::unix::fs::symlink(outside.path.join("secret.txt"), root.join("link"))?;
    std::os::unix::fs::symlink("nowhere", root.join("dangling"))?;
    let fp = fingerprinter().fingerprint(root, &[])?;
    assert_eq!(fp.files, 2);
    write(&outside.path, "secret.txt", "changed outside\n", 0o644)?;
    assert_eq!(fingerprinter().fingerprint(root, &[])?.digest, fp.digest);
    std::fs::remove_file(root.join("dangling"))?;
    std::os::unix::fs::symlink("elsewhere", root.join("dangling"))?;
    assert_ne!(fingerprinter().fingerprint(root, &[])?.digest, fp.digest);
    Ok(())
}

#[test]
fn mode_and_subject() -> Result {
    let dir = temp()?;
    let root = &dir.path;
    write(root, "src/a.sh", "echo\n", 0o644)?;
    write(root, "docs/readme", "r\n", 0o644)?;
    let subject = [Utf8PathBuf::from("src")];
    let fp = fingerprinter().fingerprint(root, &subject)?;
    assert_eq!(fp.files, 1);
    write(root, "docs/readme", "changed\n", 0o644)?;
    assert_eq!(
        fingerprinter().fingerprint(root, &subject)?.digest,
        fp.digest
    );
    write(root, "src/a.sh", "echo\n", 0o755)?;
    assert_ne!(
        fingerprinter().fingerprint(root, &subject)?.digest,
        fp.digest
    );
    assert_eq!(
        fingerprinter()
            .fingerprint(root, &[Utf8PathBuf::from(".")])?
            .digest,
        fingerprinter().fingerprint(root, &[])?.digest
    );
    Ok(())
}

#[test]
fn the_stat_cache_skips_unchanged_files_and_damage_only_costs_time() -> Result {
    let dir = temp()?;
    let root = &dir.path;
    for i in 0..50 {
        write(
            root,
            &format!("d{}/f{i}.txt", i % 5),
            &format!("file {i}\n"),
            0o644,
        )?;
    }
    let cache = dir.path.join(".orcho/cache/fingerprint");
    let cached = fingerprinter().with_cache_dir(&cache);
    wait_for_fs_tick(root)?;
    let first = cached.fingerprint(root, &[])?;
    assert_eq!(first.hashed, 50);
    let second = cached.fingerprint(root, &[])?;
    assert_eq!(second.digest, first.digest);
    assert_eq!(second.hashed, 0, "an unchanged tree re-hashes nothing");

    // Same size, new content: the changed stat forces a re-hash.
    write(root, "d1/f1.txt", "FILE 1\n", 0o644)?;
    let third = cached.fingerprint(root, &[])?;
    assert_ne!(third.digest, first.digest);
    assert!(third.hashed >= 1);

    // A damaged cache gives the same digest as no cache at all.
    let uncached = fingerprinter().fingerprint(root, &[])?;
    assert_eq!(uncached.digest, third.digest);
    for entry in std::fs::read_dir(&cache)? {
        let path = entry?.path();
        let mut bytes = std::fs::read(&path)?;
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0xff;
        crate::write_bytes(&path, &bytes)?;
    }
    let after_damage = cached.fingerprint(root, &[])?;
    assert_eq!(after_damage.digest, third.digest);
    assert_eq!(after_damage.hashed, 50);
    // Threads do not change the result.
    assert_eq!(
        fingerprinter()
            .with_threads(1)
            .fingerprint(root, &[])?
            .digest,
        third.digest
    );
    Ok(())
}

fn tree_strategy() -> impl Strategy<Value = Vec<(String, Vec<u8>, u32)>> {
    proptest::collection::btree_map(
        "[a-c]{1,3}(/[a-c]{1,3})?",
        (
            proptest::collection::vec(any::<u8>(), 0..64),
            prop_oneof![Just(0o644u32), Just(0o755u32)],
        ),
        1..10,
    )
    .prop_filter("no file may also be a directory", |m| {
        m.keys()
            .all(|k| !m.keys().any(|o| o.starts_with(&format!("{k}/"))))
    })
    .prop_map(|m| m.into_iter().map(|(p, (c, mode))| (p, c, mode)).collect())
}

fn materialize(root: &Utf8Path, tree: &[(String, Vec<u8>, u32)], reverse: bool) -> Result {
    let mut order: Vec<&(String, Vec<u8>, u32)> = tree.iter().collect();
    if reverse {
        order.reverse();
    }
    for (path, contents, mode) in order {
        let full = root.join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)?;
        }
        orcho_core::fs::write_atomic(&full, contents)?;
        std::fs::set_permissions(&full, std::os::unix::fs::PermissionsExt::from_mode(*mode))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn real_trees_independent_of_creation_order_and_sensitive_to_every_change(
        tree in tree_strategy(),
        which in any::<prop::sample::Index>(),
        what in 0u8..4,
        byte in any::<u8>(),
    ) {
        let (a, b) = (temp().unwrap(), temp().unwrap());
        materialize(&a.path, &tree, false).unwrap();
        materialize(&b.path, &tree, true).unwrap();
        let fa = fingerprinter().fingerprint(&a.path, &[]).unwrap();
        let fb = fingerprinter().fingerprint(&b.path, &[]).unwrap();
        prop_assert_eq!(fa.digest, fb.digest);

        let (path, contents, mode) = &tree[which.index(tree.len())];
        let full = b.path.join(path);
        match what {
            0 => {
                let mut c = contents.clone();
                c.push(byte);
                orcho_core::fs::write_atomic(&full, &c).unwrap();
                std::fs::set_permissions(&full, std::os::unix::fs::PermissionsExt::from_mode(*mode)).unwrap();
            }
            1 if !contents.is_empty() => {
                let mut c = contents.clone();
                let k = usize::from(byte) % c.len();
                c[k] ^= 0x01;
                orcho_core::fs::write_atomic(&full, &c).unwrap();
                std::fs::set_permissions(&full, std::os::unix::fs::PermissionsExt::from_mode(*mode)).unwrap();
            }
            2 | 1 => {
                std::fs::set_permissions(&full, std::os::unix::fs::PermissionsExt::from_mode(mode ^ 0o100)).unwrap();
            }
            _ => {
                let renamed = format!("{path}z");
                std::fs::rename(&full, b.path.join(renamed)).unwrap();
            }
        }
        prop_assert_ne!(fingerprinter().fingerprint(&b.path, &[]).unwrap().digest, fa.digest);
    }
}

#[test]
fn the_listing_cache_holds_only_while_nothing_git_depends_on_changed() -> Result {
    let dir = repo()?;
    let root = &dir.path;
    std::fs::create_dir_all(root.join("empty/deeper"))?;
    let cache = temp()?;
    let cached = fingerprinter().with_cache_dir(cache.path.join("fp"));

    wait_for_fs_tick(root)?;
    let first = cached.fingerprint(root, &[])?;
    assert_eq!(first.source, FileSource::IndexAndWalk);
    let second = cached.fingerprint(root, &[])?;
    assert_eq!(
        second.source,
        FileSource::CachedGitListing,
        "the first run records the listing"
    );
    assert_eq!((second.digest, second.hashed), (first.digest, 0));

    let mutations: [(&str, Mutation); 9] = [
        ("a new untracked file", |r| {
            write(r, "src/new.rs", "x\n", 0o644)
        }),
        ("a file in a directory without listed files", |r| {
            write(r, "empty/deeper/new.txt", "x\n", 0o644)
        }),
        ("an edited .gitignore", |r| {
            write(r, ".gitignore", "target/\nCargo.lock\n*.log\n*.md\n", 0o644)
        }),
        ("an edited info/exclude", |r| {
            write(r, ".git/info/exclude", "*.sh\n", 0o644)
        }),
        ("an ignored file added to the index", |r| {
            git(r, &["add", "-f", "debug.log"]).map(drop)
        }),
        ("a file removed from the index", |r| {
            git(r, &["rm", "-q", "--cached", "Cargo.toml"]).map(drop)
        }),
        ("a renamed file", |r| {
            Ok(std::fs::rename(
                r.join("src/lib.rs"),
                r.join("src/core.rs"),
            )?)
        }),
        ("a deleted directory", |r| {
            Ok(std::fs::remove_dir_all(r.join(".github"))?)
        }),
        ("a nested .gitignore", |r| {
            write(r, "src/.gitignore", "*.rs\n", 0o644)
        }),
    ];
    assert_cache_follows(&cached, root, &cache.path, &mutations, None)
}

#[test]
fn a_change_reads_again_only_what_changed_and_agrees_with_git() -> Result {
    let dir = repo()?;
    let root = &dir.path;
    write(root, "src/deep/er/mod.rs", "pub mod x;\n", 0o644)?;
    git(root, &["add", "src/deep/er/mod.rs"])?;
    let cache = temp()?;
    let cached = fingerprinter().with_cache_dir(cache.path.join("fp"));
    settle(&cached, root, &cache.path)?;
    let mutations: [(&str, Mutation); 15] = [
        ("a new file in a tracked folder", |r| {
            write(r, "src/new.rs", "x\n", 0o644)
        }),
        ("a new folder with a file", |r| {
            write(r, "src/deep/fresh/a.rs", "x\n", 0o644)
        }),
        ("a new ignored file", |r| {
            write(r, "src/deep/trace.log", "x\n", 0o644)
        }),
        ("a deleted untracked file", |r| {
            Ok(std::fs::remove_file(r.join("src/new.rs"))?)
        }),
        ("a deleted tracked file", |r| {
            Ok(std::fs::remove_file(r.join("src/deep/er/mod.rs"))?)
        }),
        ("a new .gitignore below the root", |r| {
            write(r, "src/deep/.gitignore", "fresh/\n", 0o644)
        }),
        ("a renamed folder", |r| {
            Ok(std::fs::rename(
                r.join("src/deep/fresh"),
                r.join("src/deep/stale"),
            )?)
        }),
        ("two folders at once", |r| {
            write(r, "notes/b.md", "b\n", 0o644)?;
            write(r, "scripts/c.sh", "c\n", 0o755)
        }),
        ("a new file at the root", |r| {
            write(r, "TOP.md", "x\n", 0o644)
        }),
        ("a file staged", |r| git(r, &["add", "TOP.md"]).map(drop)),
        ("a commit", |r| {
            git(r, &["commit", "-q", "-m", "more"]).map(drop)
        }),
        ("a file removed from the index", |r| {
            git(r, &["rm", "-q", "--cached", "src/lib.rs"]).map(drop)
        }),
        ("an ignored file removed from the index", |r| {
            git(r, &["rm", "-q", "--cached", "Cargo.lock"]).map(drop)
        }),
        ("an ignored file added to the index", |r| {
            git(r, &["add", "-f", "debug.log"]).map(drop)
        }),
        ("an edited .gitignore", |r| {
            write(r, ".gitignore", "target/\n*.log\n", 0o644)
        }),
    ];
    assert_cache_follows(
        &cached,
        root,
        &cache.path,
        &mutations,
        Some(FileSource::RelistedGitListing),
    )
}

/// A change made to a checkout between fingerprints.
type Mutation = fn(&Utf8Path) -> Result;

/// Lets the fingerprints `cached` keeps under `cache_dir` settle past the
/// racily-clean window of `root`, so the next one reads the listing cache.
fn settle(cached: &Fingerprinter, root: &Utf8Path, cache_dir: &Utf8Path) -> Result {
    wait_for_fs_tick(root)?;
    wait_for_fs_tick(cache_dir)?;
    cached.fingerprint(root, &[])?;
    Ok(())
}

/// Makes each change in turn and checks that `cached` follows it: right
/// after the change, the digest of a fingerprint without a cache and git's
/// own listing (read as `source` says, when given); once settled, the same
/// digest from the listing cache.
fn assert_cache_follows(
    cached: &Fingerprinter,
    root: &Utf8Path,
    cache_dir: &Utf8Path,
    mutations: &[(&str, Mutation)],
    source: Option<FileSource>,
) -> Result {
    for (what, mutate) in mutations {
        mutate(root)?;
        let got = cached.fingerprint(root, &[])?;
        assert_eq!(
            got.digest,
            fingerprinter().fingerprint(root, &[])?.digest,
            "after {what}"
        );
        let listed: BTreeSet<PathBuf> = fingerprinter().files(root, &[])?.into_iter().collect();
        assert_eq!(listed, git_listing(root)?, "after {what}");
        if let Some(source) = source {
            assert_eq!(
                got.source, source,
                "after {what}: only what changed is read again"
            );
        }
        settle(cached, root, cache_dir)?;
        let settled = cached.fingerprint(root, &[])?;
        assert_eq!(
            settled.source,
            FileSource::CachedGitListing,
            "settled after {what}"
        );
        assert_eq!(settled.digest, got.digest, "settled after {what}");
    }
    Ok(())
}

#[test]
fn what_a_build_writes_into_an_ignored_folder_keeps_the_listing_cache() -> Result {
    let dir = repo()?;
    let root = &dir.path;
    // A folder holding only ignored files, but not ignored itself: a new
    // file there may be listed, so it must still be watched.
    write(root, "objs/a.log", "x\n", 0o644)?;
    // An ignored folder with a tracked file: git enters it.
    write(root, "vendor/keep.txt", "tracked\n", 0o644)?;
    write(
        root,
        ".gitignore",
        "target/\nCargo.lock\n*.log\nvendor/\n",
        0o644,
    )?;
    git(root, &["add", "-f", "vendor/keep.txt", ".gitignore"])?;
    let cache = temp()?;
    let cached = fingerprinter().with_cache_dir(cache.path.join("fp"));
    let settle = || -> Result<orcho_receipts::fingerprint::Fingerprint> {
        wait_for_fs_tick(root)?;
        wait_for_fs_tick(&cache.path)?;
        cached.fingerprint(root, &[])?;
        cached.fingerprint(root, &[])?;
        Ok(cached.fingerprint(root, &[])?)
    };
    assert_eq!(settle()?.source, FileSource::CachedGitListing);

    // A build writes new files and folders under `target/`: git never
    // looks there, and neither does the cache check.
    write(root, "target/debug/deps/new.rlib", "x\n", 0o644)?;
    write(root, "target/release/app", "x\n", 0o755)?;
    let after_build = cached.fingerprint(root, &[])?;
    assert_eq!(after_build.source, FileSource::CachedGitListing);
    assert_eq!(
        after_build.digest,
        fingerprinter().fingerprint(root, &[])?.digest
    );

    // A new file where git would list it still lists that folder again.
    write(root, "objs/b.txt", "listed\n", 0o644)?;
    let listed = cached.fingerprint(root, &[])?;
    assert_eq!(listed.source, FileSource::RelistedGitListing);
    assert_eq!(
        listed.digest,
        fingerprinter().fingerprint(root, &[])?.digest
    );
    assert!(
        fingerprinter()
            .files(root, &[])?
            .contains(&PathBuf::from("objs/b.txt"))
    );

    // The tracked file inside an ignored folder is still covered.
    assert_eq!(settle()?.source, FileSource::CachedGitListing);
    let before = cached.fingerprint(root, &[])?.digest;
    write(root, "vendor/keep.txt", "changed\n", 0o644)?;
    assert_ne!(cached.fingerprint(root, &[])?.digest, before);
    write(root, "vendor/new.txt", "ignored\n", 0o644)?;
    let ignored_new = cached.fingerprint(root, &[])?;
    assert_eq!(
        ignored_new.digest,
        fingerprinter().fingerprint(root, &[])?.digest
    );
    Ok(())
}

#[test]
fn only_the_executable_bit_of_a_mode_counts() -> Result {
    let dir = temp()?;
    let root = &dir.path;
    write(root, "a.txt", "same\n", 0o644)?;
    let fp = fingerprinter().fingerprint(root, &[])?.digest;
    // Another umask: the same tree.
    write(root, "a.txt", "same\n", 0o600)?;
    assert_eq!(fingerprinter().fingerprint(root, &[])?.digest, fp);
    write(root, "a.txt", "same\n", 0o664)?;
    assert_eq!(fingerprinter().fingerprint(root, &[])?.digest, fp);
    // Executable: another tree, as git sees it.
    write(root, "a.txt", "same\n", 0o744)?;
    assert_ne!(fingerprinter().fingerprint(root, &[])?.digest, fp);
    Ok(())
}
