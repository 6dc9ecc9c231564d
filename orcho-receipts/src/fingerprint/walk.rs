//! Which files a fingerprint covers.
//!
//! - **In a git work tree** the file set is exactly what
//!   `git ls-files -co --exclude-standard -z` lists, run in the root through
//!   [`exec`](crate::exec): tracked files (even when an ignore file matches
//!   them), untracked files that are not ignored, dot-files and
//!   dot-directories alike.
//! - **Elsewhere** a walk of the root that does not follow symlinks, skips
//!   `.git` entries, and honours `.gitignore` and `.ignore` files in every
//!   directory with git's pattern rules (`#` comments, `!` negation, a
//!   trailing `/` for directories only, a `/` at the start or in the middle
//!   anchoring the pattern to the ignore file's directory, `*`, `?`, `[…]`
//!   and `**`). As in git, nothing below an ignored directory is listed, and
//!   a deeper ignore file takes precedence over a shallower one.
//!
//! Both return relative paths as raw bytes with `/` separators, so non-UTF-8
//! names are listed and hashed like any other.

use std::{
    ffi::OsStr,
    fs, io,
    os::unix::ffi::OsStrExt,
    path::{Path, PathBuf},
};

use camino::Utf8Path;

use crate::{
    FingerprintError, FingerprintErrorKind,
    exec::{self, BaseEnv, ExecRequest},
};

/// The most `git ls-files` output kept in memory (1 GiB of path names).
const MAX_LISTING: usize = 1 << 30;

/// Whether `root` lies inside a git work tree (a `.git` file or directory in
/// it or an ancestor).
pub(crate) fn in_git_work_tree(root: &Path) -> bool {
    let Ok(abs) = std::path::absolute(root) else {
        return false;
    };
    abs.ancestors().any(|dir| dir.join(".git").exists())
}

/// The files git lists for `root`.
pub(crate) fn git_files(root: &Utf8Path, env: &BaseEnv) -> Result<Vec<Vec<u8>>, FingerprintError> {
    let request = ExecRequest::new(["git", "ls-files", "-co", "--exclude-standard", "-z"])
        .cwd(root)
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

/// Streams the files git lists for `root` to `on_path` while git is still
/// running, so that hashing overlaps git's own work.
///
/// The tracked files (`git ls-files -c`, read from the index: the first
/// paths arrive within milliseconds) and the untracked ones (`git ls-files
/// -o --exclude-standard`, which walks the whole tree before it prints
/// anything) are listed by two git processes at once: together they are
/// exactly what `-co --exclude-standard` lists, and the tracked files are
/// being hashed while git still looks for untracked ones. Returns the
/// untracked ones.
pub(crate) fn git_files_streaming(
    root: &Utf8Path,
    env: &BaseEnv,
    on_path: &mut dyn FnMut(&[u8]),
) -> Result<Vec<Vec<u8>>, FingerprintError> {
    std::thread::scope(|scope| {
        let untracked = scope.spawn(|| {
            let mut paths: Vec<Vec<u8>> = Vec::new();
            stream_listing(
                root,
                env,
                &["ls-files", "-o", "--exclude-standard", "-z"],
                &mut |p| paths.push(p.to_vec()),
            )
            .map(|()| paths)
        });
        let tracked = stream_listing(root, env, &["ls-files", "-c", "-z"], on_path);
        let untracked = untracked.join().unwrap_or_else(|_| {
            Err(FingerprintError::new(
                root,
                FingerprintErrorKind::Git {
                    status: "the listing thread panicked".to_owned(),
                    stderr: String::new(),
                },
            ))
        });
        tracked?;
        let untracked = untracked?;
        for p in &untracked {
            on_path(p);
        }
        Ok(untracked)
    })
}

/// Runs `git <args>` in `root` and hands each NUL-terminated path of its
/// output to `on_path` as it arrives.
fn stream_listing(
    root: &Utf8Path,
    env: &BaseEnv,
    args: &[&str],
    on_path: &mut dyn FnMut(&[u8]),
) -> Result<(), FingerprintError> {
    let request = ExecRequest::new(std::iter::once("git").chain(args.iter().copied()))
        .cwd(root)
        .envs(env.clone())
        .env("GIT_OPTIONAL_LOCKS", "0")
        .tail_bytes(4096);
    let mut partial: Vec<u8> = Vec::new();
    let outcome = exec::run_streaming(&request, &mut |chunk: &[u8]| {
        let mut rest = chunk;
        while let Some(end) = rest.iter().position(|&b| b == 0) {
            if partial.is_empty() {
                if end > 0 {
                    on_path(&rest[..end]);
                }
            } else {
                partial.extend_from_slice(&rest[..end]);
                on_path(&partial);
                partial.clear();
            }
            rest = &rest[end + 1..];
        }
        partial.extend_from_slice(rest);
    })
    .map_err(|e| FingerprintError::new(root, FingerprintErrorKind::Exec(e)))?;
    if !outcome.status.success() {
        return Err(FingerprintError::new(
            root,
            FingerprintErrorKind::Git {
                status: outcome.status.to_string(),
                stderr: outcome.stderr.tail_lossy().trim().to_owned(),
            },
        ));
    }
    if !partial.is_empty() {
        on_path(&partial);
    }
    Ok(())
}

/// The files of a walk of `root` that honours ignore files.
pub(crate) fn walk_files(root: &Utf8Path) -> Result<Vec<Vec<u8>>, FingerprintError> {
    let mut out = Vec::new();
    let mut stack: Vec<IgnoreFile> = Vec::new();
    walk_dir(root.as_std_path(), &[], &mut stack, &mut out).map_err(|(path, source)| {
        FingerprintError::new(
            root,
            FingerprintErrorKind::Io {
                path: path.to_string_lossy().into_owned(),
                source,
            },
        )
    })?;
    Ok(out)
}

type WalkError = (PathBuf, io::Error);

fn walk_dir(
    dir: &Path,
    rel: &[u8],
    stack: &mut Vec<IgnoreFile>,
    out: &mut Vec<Vec<u8>>,
) -> Result<(), WalkError> {
    let pushed = load_ignores(dir, rel, stack)?;
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
        let mut child = Vec::with_capacity(rel.len() + 1 + name.len());
        if !rel.is_empty() {
            child.extend_from_slice(rel);
            child.push(b'/');
        }
        child.extend_from_slice(name);
        if is_ignored(stack, &child, is_dir) {
            continue;
        }
        if is_dir {
            walk_dir(&entry.path(), &child, stack, out)?;
        } else {
            out.push(child);
        }
    }
    stack.truncate(stack.len() - pushed);
    Ok(())
}

fn load_ignores(dir: &Path, rel: &[u8], stack: &mut Vec<IgnoreFile>) -> Result<usize, WalkError> {
    let mut pushed = 0;
    for name in [".gitignore", ".ignore"] {
        let path = dir.join(name);
        match fs::read(&path) {
            Ok(bytes) => {
                stack.push(IgnoreFile::parse(rel, &bytes));
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
fn is_ignored(stack: &[IgnoreFile], path: &[u8], is_dir: bool) -> bool {
    for file in stack.iter().rev() {
        if let Some(ignored) = file.decide(path, is_dir) {
            return ignored;
        }
    }
    false
}

/// The patterns of one ignore file.
#[derive(Debug)]
pub(crate) struct IgnoreFile {
    /// The directory of the file, relative to the root ("" for the root).
    base: Vec<u8>,
    patterns: Vec<IgnorePattern>,
}

#[derive(Debug)]
struct IgnorePattern {
    glob: Vec<u8>,
    negated: bool,
    dir_only: bool,
    anchored: bool,
}

impl IgnoreFile {
    pub(crate) fn parse(base: &[u8], bytes: &[u8]) -> Self {
        let patterns = bytes
            .split(|&b| b == b'\n')
            .filter_map(IgnorePattern::parse)
            .collect();
        Self {
            base: base.to_vec(),
            patterns,
        }
    }

    /// `Some(true)` ignored, `Some(false)` re-included, `None` no opinion.
    pub(crate) fn decide(&self, path: &[u8], is_dir: bool) -> Option<bool> {
        let rel = if self.base.is_empty() {
            path
        } else {
            path.strip_prefix(self.base.as_slice())?
                .strip_prefix(b"/")?
        };
        let name = rel.rsplit(|&b| b == b'/').next().unwrap_or(rel);
        self.patterns.iter().rev().find_map(|p| {
            if p.dir_only && !is_dir {
                return None;
            }
            let subject = if p.anchored { rel } else { name };
            glob(&p.glob, subject).then_some(!p.negated)
        })
    }
}

impl IgnorePattern {
    fn parse(line: &[u8]) -> Option<Self> {
        let mut line = line.strip_suffix(b"\r").unwrap_or(line);
        // Trailing spaces are dropped unless escaped.
        while line.ends_with(b" ") && !line.ends_with(b"\\ ") {
            line = &line[..line.len() - 1];
        }
        if line.is_empty() || line.starts_with(b"#") {
            return None;
        }
        let (negated, mut line) = match line.strip_prefix(b"!") {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        if line.starts_with(b"\\!") || line.starts_with(b"\\#") {
            line = &line[1..];
        }
        let dir_only = line.ends_with(b"/");
        if dir_only {
            line = &line[..line.len() - 1];
        }
        let anchored = line.contains(&b'/');
        let line = line.strip_prefix(b"/").unwrap_or(line);
        if line.is_empty() {
            return None;
        }
        Some(Self {
            glob: line.to_vec(),
            negated,
            dir_only,
            anchored,
        })
    }
}

/// Git's wildmatch subset: `*` and `?` never match `/`, `**` between slashes
/// matches any number of directories, `[…]` is a class (`!` or `^`
/// negates), `\` escapes.
pub(crate) fn glob(p: &[u8], t: &[u8]) -> bool {
    match p.first() {
        None => t.is_empty(),
        Some(b'*') if p.get(1) == Some(&b'*') => {
            let rest = &p[2..];
            if let Some(after) = rest.strip_prefix(b"/") {
                glob(after, t)
                    || t.iter()
                        .enumerate()
                        .any(|(i, &b)| b == b'/' && glob(after, &t[i + 1..]))
            } else {
                (0..=t.len()).any(|i| glob(rest, &t[i..]))
            }
        }
        Some(b'*') => {
            for i in 0..=t.len() {
                if glob(&p[1..], &t[i..]) {
                    return true;
                }
                if i < t.len() && t[i] == b'/' {
                    break;
                }
            }
            false
        }
        Some(b'?') => t.first().is_some_and(|&c| c != b'/') && glob(&p[1..], &t[1..]),
        Some(b'[') => match (class(&p[1..]), t.first()) {
            (Some((matches, len)), Some(&c)) => {
                c != b'/' && matches(c) && glob(&p[1 + len..], &t[1..])
            }
            (Some(_), None) => false,
            // An unterminated class is a literal `[`.
            (None, _) => t.first() == Some(&b'[') && glob(&p[1..], &t[1..]),
        },
        Some(b'\\') if p.len() > 1 => t.first() == Some(&p[1]) && glob(&p[2..], &t[1..]),
        Some(&c) => t.first() == Some(&c) && glob(&p[1..], &t[1..]),
    }
}

/// Parses a class after its `[`; returns a predicate and the length up to and
/// including the `]`.
fn class(p: &[u8]) -> Option<(impl Fn(u8) -> bool, usize)> {
    let (negated, start) = match p.first() {
        Some(b'!' | b'^') => (true, 1),
        _ => (false, 0),
    };
    let mut i = start;
    let mut ranges: Vec<(u8, u8)> = Vec::new();
    while i < p.len() {
        if p[i] == b']' && i > start {
            return Some((
                move |c: u8| ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != negated,
                i + 1,
            ));
        }
        let lo = p[i];
        if i + 2 < p.len() && p[i + 1] == b'-' && p[i + 2] != b']' {
            ranges.push((lo, p[i + 2]));
            i += 3;
        } else {
            ranges.push((lo, lo));
            i += 1;
        }
    }
    None
}

/// Joins a root and a raw relative path.
pub(crate) fn join(root: &Path, rel: &[u8]) -> PathBuf {
    root.join(OsStr::from_bytes(rel))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ignored(patterns: &str, path: &str, is_dir: bool) -> bool {
        let file = IgnoreFile::parse(b"", patterns.as_bytes());
        file.decide(path.as_bytes(), is_dir).unwrap_or(false)
    }

    #[test]
    fn gitignore_rules() {
        assert!(ignored("target", "target", true));
        assert!(ignored("target", "a/b/target", false));
        assert!(ignored("/target", "target", true));
        assert!(!ignored("/target", "a/target", true));
        assert!(ignored("build/", "x/build", true));
        assert!(!ignored("build/", "x/build", false));
        assert!(ignored("*.log", "a/b.log", false));
        assert!(!ignored("*.log\n!keep.log", "keep.log", false));
        assert!(ignored("doc/*.txt", "doc/a.txt", false));
        assert!(!ignored("doc/*.txt", "doc/x/a.txt", false));
        assert!(ignored("doc/**/*.txt", "doc/x/y/a.txt", false));
        assert!(ignored("doc/**/*.txt", "doc/a.txt", false));
        assert!(ignored("**/foo", "a/b/foo", false));
        assert!(ignored("abc/**", "abc/x/y", false));
        assert!(!ignored("abc/**", "abc", true));
        assert!(ignored("file[0-9].txt", "file7.txt", false));
        assert!(!ignored("file[!0-9].txt", "file7.txt", false));
        assert!(ignored("\\#hash", "#hash", false));
        assert!(!ignored("# comment", "# comment", false));
        assert!(ignored("a?c", "abc", false));
        assert!(!ignored("a?c", "a/c", false));
        assert!(ignored("trailing   ", "trailing", false));
    }

    #[test]
    fn nested_ignore_file_is_relative_to_its_directory() {
        let file = IgnoreFile::parse(b"sub", b"/only-here\n");
        assert_eq!(file.decide(b"sub/only-here", false), Some(true));
        assert_eq!(file.decide(b"sub/x/only-here", false), None);
        assert_eq!(file.decide(b"other/only-here", false), None);
    }

    #[test]
    fn hostile_patterns_do_not_panic() {
        for p in [
            "[",
            "[]",
            "[!",
            "\\",
            "**",
            "***",
            "a/**/**/b",
            "[z-a]",
            "!",
            "/",
        ] {
            let file = IgnoreFile::parse(b"", p.as_bytes());
            let _ = file.decide(b"a/b/c", false);
            let _ = file.decide(b"", true);
        }
    }
}
