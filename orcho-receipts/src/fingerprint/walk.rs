//! Which files a fingerprint covers.
//!
//! - **In a git work tree this process cannot read itself** (see the git
//!   module) the file set is exactly what
//!   `git -C <root> ls-files -co --exclude-per-directory=.gitignore -z` lists, run through
//!   [`exec`](crate::exec): tracked files (even when an ignore file matches
//!   them), untracked files that are not ignored, dot-files and
//!   dot-directories alike.
//! - **Elsewhere** a walk of the root that does not follow symlinks, skips
//!   `.git` entries, and honours `.gitignore` and `.ignore` files in every
//!   directory with git's rules (see the ignore module). As in git, nothing
//!   below an ignored directory is listed, and a deeper ignore file takes
//!   precedence over a shallower one. It also leaves out what builds and
//!   test runs write, which a git repository would ignore: `target/` beside
//!   a `Cargo.toml`, and every `node_modules/`, `__pycache__/`,
//!   `.pytest_cache/`, `.mypy_cache/`, `.ruff_cache/`, `.tox/` and
//!   `.venv/`.
//! - **An installed dependency's folder** (`everything`) is walked whole,
//!   ignore files and build output included, but for the record a test
//!   runner rewrites of its last results on every run (vitest's
//!   `.vite/vitest/`).
//!
//! Both return relative paths as raw bytes with `/` separators, so non-UTF-8
//! names are listed and hashed like any other.

use std::{
    ffi::OsStr,
    fs, io,
    os::unix::ffi::OsStrExt,
    path::{Path, PathBuf},
};

use super::{ignore::PatternFile, imp::shown};
use crate::{
    FingerprintError, FingerprintErrorKind,
    exec::{self, BaseEnv, ExecRequest},
};

/// The most `git ls-files` output kept in memory (1 GiB of path names).
const MAX_LISTING: usize = 1 << 30;

/// Whether `root` lies inside a git work tree (it or an ancestor is the top
/// of one, see [`orcho_core::fs::is_git_top`]).
pub fn in_git_work_tree(root: &Path) -> bool {
    let Ok(abs) = std::path::absolute(root) else {
        return false;
    };
    abs.ancestors().any(orcho_core::fs::is_git_top)
}

/// The files git lists for `root`.
pub(crate) fn git_files(root: &Path, env: &BaseEnv) -> Result<Vec<Vec<u8>>, FingerprintError> {
    let root_os = root.as_os_str();
    let shown = shown(root);
    let root = &shown;
    let request = ExecRequest::new([
        OsStr::new("git"),
        OsStr::new("-C"),
        root_os,
        OsStr::new("ls-files"),
        OsStr::new("-co"),
        // The checkout's `.gitignore` files alone: `.git/info/exclude` and a
        // global excludes file never hide a file from a subject.
        OsStr::new("--exclude-per-directory=.gitignore"),
        OsStr::new("-z"),
    ])
    .envs(env.clone())
    .env("GIT_OPTIONAL_LOCKS", "0")
    .keep_stdout(MAX_LISTING)
    .tail_bytes(4096);
    let outcome = exec::run(&request)
        .map_err(|e| FingerprintError::new(root, FingerprintErrorKind::Exec(e)))?;
    let Some(listing) = outcome.stdout.kept.filter(|_| outcome.status.success()) else {
        return Err(FingerprintError::new(
            root,
            FingerprintErrorKind::Git {
                status: outcome.status.to_string(),
                stderr: outcome.stderr.tail_lossy().trim().to_owned(),
            },
        ));
    };
    Ok(listing
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(<[u8]>::to_vec)
        .collect())
}

/// The files of a walk of `root` that honours ignore files; with
/// `everything`, every file below it (ignore files and build output
/// included), as an installed dependency's folder is bound.
pub(crate) fn walk_files(root: &Path, everything: bool) -> Result<Vec<Vec<u8>>, FingerprintError> {
    let mut out = Vec::new();
    let mut stack: Vec<PatternFile> = Vec::new();
    walk_dir(root, &[], everything, &mut stack, &mut out).map_err(|(path, source)| {
        FingerprintError::new(
            &shown(root),
            FingerprintErrorKind::Io {
                path: path.to_string_lossy().into_owned(),
                source,
            },
        )
    })?;
    Ok(out)
}

type WalkError = (PathBuf, io::Error);

/// Directories builds and test runs write, left out of a walk outside git.
const BUILD_OUTPUT: &[&[u8]] = &[
    b"node_modules",
    b"__pycache__",
    b".pytest_cache",
    b".mypy_cache",
    b".ruff_cache",
    b".tox",
    b".venv",
];

/// Directories a test runner rewrites on every run inside an installed
/// dependency's folder, left out of an `everything` walk: vitest's record
/// of the last results (`node_modules/.vite/vitest/…/results.json`), which
/// orders the next run and changes nothing it runs. Bound, they would make
/// every receipt stale the moment it was written.
const RESULT_CACHES: &[&[u8]] = &[b".vite/vitest"];

/// Whether `path` (relative to the walk's root) is one of
/// [`RESULT_CACHES`], at any depth.
fn is_result_cache(path: &[u8]) -> bool {
    RESULT_CACHES.iter().any(|cache| {
        path.ends_with(cache)
            && (path.len() == cache.len() || path[path.len() - cache.len() - 1] == b'/')
    })
}

/// Whether the directory `name` in `dir` is build output: one of
/// [`BUILD_OUTPUT`], or cargo's `target/` beside its `Cargo.toml`.
fn is_build_output(dir: &Path, name: &[u8]) -> bool {
    BUILD_OUTPUT.contains(&name) || (name == b"target" && dir.join("Cargo.toml").is_file())
}

fn walk_dir(
    dir: &Path,
    rel: &[u8],
    everything: bool,
    stack: &mut Vec<PatternFile>,
    out: &mut Vec<Vec<u8>>,
) -> Result<(), WalkError> {
    let pushed = if everything {
        0
    } else {
        load_ignores(dir, rel, stack)?
    };
    let entries = fs::read_dir(dir).map_err(|e| (dir.to_owned(), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| (dir.to_owned(), e))?;
        let name = entry.file_name();
        let name = name.as_bytes();
        if name == b".git" {
            continue;
        }
        let file_type = entry.file_type().map_err(|e| (entry.path(), e))?;
        let is_dir = file_type.is_dir();
        if is_dir && !everything && is_build_output(dir, name) {
            continue;
        }
        let mut child = Vec::with_capacity(rel.len() + 1 + name.len());
        if !rel.is_empty() {
            child.extend_from_slice(rel);
            child.push(b'/');
        }
        child.extend_from_slice(name);
        if !everything && is_ignored(stack, &child, is_dir) {
            continue;
        }
        if everything && is_dir && is_result_cache(&child) {
            continue;
        }
        if is_dir {
            walk_dir(&entry.path(), &child, everything, stack, out)?;
        } else {
            out.push(child);
        }
    }
    stack.truncate(stack.len() - pushed);
    Ok(())
}

fn load_ignores(dir: &Path, rel: &[u8], stack: &mut Vec<PatternFile>) -> Result<usize, WalkError> {
    let mut pushed = 0;
    for name in [".gitignore", ".ignore"] {
        let path = dir.join(name);
        match fs::read(&path) {
            Ok(bytes) => {
                stack.push(PatternFile::parse(rel, &bytes));
                pushed += 1;
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::IsADirectory
                ) => {}
            Err(e) => return Err((path, e)),
        }
    }
    Ok(pushed)
}

/// Whether `path` (relative to the root) is ignored: the last matching
/// pattern of the deepest ignore file that has one decides.
fn is_ignored(stack: &[PatternFile], path: &[u8], is_dir: bool) -> bool {
    stack
        .iter()
        .rev()
        .find_map(|file| file.decide(path, is_dir))
        .unwrap_or(false)
}

/// Joins a root and a raw relative path.
pub(crate) fn join(root: &Path, rel: &[u8]) -> PathBuf {
    root.join(OsStr::from_bytes(rel))
}

#[cfg(test)]
mod tests {
    use super::is_result_cache;

    #[test]
    fn vitests_results_are_a_cache_and_nothing_else_is() {
        assert!(is_result_cache(b".vite/vitest"));
        assert!(is_result_cache(b"node_modules/.vite/vitest"));
        assert!(!is_result_cache(b"node_modules/.vite"));
        assert!(!is_result_cache(b"node_modules/vitest"));
        assert!(!is_result_cache(b"node_modules/x.vite/vitest"));
        assert!(!is_result_cache(b".vite/vitest/dist"));
    }
}
