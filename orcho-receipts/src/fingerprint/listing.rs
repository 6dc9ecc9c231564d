//! Git's file list of a work tree, made in this process and kept up to date
//! from the fingerprint cache.
//!
//! The tracked paths depend on the index alone; the untracked ones on the
//! names in each directory the walk read, its `.gitignore`, the excludes
//! files and the configuration. So a later fingerprint checks exactly
//! those, as git's untracked cache does:
//!
//! - a configuration or excludes file that changed: everything is listed
//!   again;
//! - the index changed: it is read again (in this process), and the
//!   directories where what it tracks changed are read again;
//! - a directory whose stat changed (a name added, removed or renamed in
//!   it, its permissions), a repository of its own whose stat changed or
//!   that is no longer one, or a directory with a `.git` that became a
//!   repository: it and its parent are read again;
//! - a `.gitignore` that changed (or became readable): everything below
//!   its directory is walked again;
//!
//! and a directory read again keeps what was found below its
//! subdirectories that did not change. The walks start at the topmost of
//! these directories and enter every directory on the way to the others,
//! so that each is read the way git would reach it (a directory above it
//! may have become ignored, a repository, a symlink). Every stat is trusted
//! only when it is older than the cache's snapshot (the racy rule of the
//! cache module).
//! A build writing into an ignored folder changes none of this: git never
//! enters an ignored folder, and neither does the walk.

use std::{
    collections::BTreeSet,
    ffi::OsStr,
    os::{fd::OwnedFd, unix::ffi::OsStrExt},
    path::Path,
};

use rustix::fs::{AtFlags, Mode, OFlags};

use super::{
    cache::{GitState, Mark, Stat, TreeCache, unchanged},
    git::{
        Repo,
        index::{self, Tracked},
        untracked::{self, DirRecord, Nested, Walked, Walker},
    },
    ignore::PatternFile,
    imp::under,
    paths::PathList,
};

/// A listing of a git work tree made by this process.
#[derive(Debug)]
pub(crate) struct GitListing {
    /// Tracked and untracked paths, sorted.
    pub(crate) paths: PathList,
    /// Per path: what git said of it.
    pub(crate) marks: Vec<Mark>,
    /// What it depends on.
    pub(crate) state: GitState,
}

/// Why this process cannot list the files: git lists them instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fallback(pub(crate) &'static str);

/// Reads the index of `repo`, with its stat taken before reading it.
pub(crate) fn read_index(
    root: &Path,
    hash_len: usize,
) -> Result<(Tracked, Option<Stat>), Fallback> {
    let file = rustix::fs::open(
        root.join(".git/index"),
        OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    );
    let file = match file {
        Ok(file) => file,
        // A repository without an index tracks nothing yet.
        Err(rustix::io::Errno::NOENT) => return Ok((Tracked::default(), None)),
        Err(_) => return Err(Fallback("the index cannot be opened")),
    };
    let stat = rustix::fs::fstat(&file).map_err(|_| Fallback("the index cannot be read"))?;
    let mut bytes = Vec::with_capacity(usize::try_from(stat.st_size).unwrap_or(0));
    std::io::Read::read_to_end(&mut std::fs::File::from(file), &mut bytes)
        .map_err(|_| Fallback("the index cannot be read"))?;
    let tracked = index::parse(&bytes, hash_len).map_err(|e| match e {
        index::IndexError::Unsupported(why) | index::IndexError::Damaged(why) => Fallback(why),
    })?;
    if tracked.skip_worktree {
        return Err(Fallback("a sparse checkout"));
    }
    Ok((tracked, Some(Stat::from_raw(&stat))))
}

/// The excludes files of `state`, parsed (a missing one has no patterns).
fn global_patterns(excludes: &[std::path::PathBuf]) -> Vec<PatternFile> {
    excludes
        .iter()
        .map(|path| {
            std::fs::read(path)
                .map(|bytes| PatternFile::parse(b"", &bytes))
                .unwrap_or_default()
        })
        .collect()
}

/// The stat of what a listing depends on outside the walk: the
/// configuration files git read and those it would read if they appeared,
/// and the excludes files. A change after the snapshot is caught by the
/// racy rule, whenever the stat is taken.
pub(crate) fn guards(repo: &Repo) -> Vec<(std::path::PathBuf, Option<Stat>)> {
    let mut files: Vec<std::path::PathBuf> = repo.config_files.clone();
    files.extend(repo.excludes.iter().cloned());
    files.sort();
    files.dedup();
    files
        .into_iter()
        .map(|path| {
            let stat = guard_stat(&path);
            (path, stat)
        })
        .collect()
}

/// The stat of a guarded file, through symlinks: git reads what a symlinked
/// configuration or excludes file (as dotfile managers make them) points
/// to, so its target's changes are what count.
fn guard_stat(path: &Path) -> Option<Stat> {
    rustix::fs::stat(path).ok().map(|s| Stat::from_raw(&s))
}

/// Walks the whole work tree for its untracked files.
pub(crate) fn walk_all(
    root: &Path,
    root_fd: &OwnedFd,
    tracked: &Tracked,
    excludes: &[std::path::PathBuf],
    skip: &[Vec<u8>],
) -> Walked {
    let global = global_patterns(excludes);
    let nested = Nested::new(root);
    let walker = Walker {
        tracked,
        nested: &nested,
        global: &global,
        skip,
        keep: &|_| false,
    };
    let mut walked = Walked::default();
    walker.walk(root_fd, b"", &mut Vec::new(), &mut walked);
    walked
}

/// Tracked and untracked paths as one sorted listing, with their marks.
pub(crate) fn combine(tracked: &Tracked, untracked: &PathList) -> (PathList, Vec<Mark>) {
    let paths = tracked.paths.merged(untracked);
    let mut marks = Vec::with_capacity(paths.len());
    let (mut t, mut u, mut g) = (0, 0, 0);
    for path in paths.iter() {
        // Both lists are sorted and disjoint: each path is the next of one.
        if t < tracked.paths.len() && tracked.paths.get(t) == path {
            let gitlink = tracked.gitlinks.get(g).is_some_and(|&i| i as usize == t);
            if gitlink {
                g += 1;
            }
            t += 1;
            marks.push(Mark {
                untracked: false,
                gitlink,
            });
        } else {
            u += 1;
            marks.push(Mark {
                untracked: true,
                gitlink: false,
            });
        }
    }
    debug_assert_eq!(u, untracked.len());
    (paths, marks)
}

/// What the index tracked when `cache` was taken, read back from it.
fn cached_tracked(cache: &TreeCache) -> Tracked {
    let mut tracked = Tracked::default();
    for (i, path) in cache.paths.iter().enumerate() {
        let mark = cache.mark(i);
        if !mark.untracked {
            let at = tracked.paths.push(path);
            if mark.gitlink {
                tracked.gitlinks.push(at);
            }
        }
    }
    tracked
}

/// What the cached listing is worth now.
#[derive(Debug)]
pub(crate) enum Revalidated {
    /// Every stat it depends on holds: it is git's listing.
    Same,
    /// The index was written again, and tracks the same paths: the listing
    /// holds, with the index's new stat.
    Reindexed(GitState),
    /// Brought up to date by reading only what changed.
    Updated(GitListing),
    /// A configuration or excludes file changed, or the index cannot be
    /// read here: list everything again.
    Stale,
}

/// What changed since a cached listing was made, by the stats it depends on.
#[derive(Debug, Default)]
pub(crate) struct Check {
    /// A configuration or excludes file changed.
    stale: bool,
    /// The index changed.
    index_changed: bool,
    /// Directories whose names changed (with their parents).
    dirty: BTreeSet<Vec<u8>>,
    /// Directories whose `.gitignore` changed.
    deep: BTreeSet<Vec<u8>>,
}

/// Stats what the listing of `cache` (made by this process: `state`)
/// depends on. Only stats: it runs beside the workers that stat the listed
/// files.
pub(crate) fn check(cache: &TreeCache, state: &GitState, root: &Path, root_fd: &OwnedFd) -> Check {
    let snapshot = cache.snapshot;
    let mut check = Check::default();
    for (path, recorded) in &state.guards {
        let now = guard_stat(path);
        if !unchanged(recorded.as_ref(), now.as_ref(), snapshot) {
            check.stale = true;
            return check;
        }
    }
    let index_now = rustix::fs::statat(root_fd, c".git/index", AtFlags::SYMLINK_NOFOLLOW)
        .ok()
        .map(|s| Stat::from_raw(&s));
    check.index_changed = !unchanged(state.index.as_ref(), index_now.as_ref(), snapshot);
    let mut nested = None;
    for dir in &state.dirs {
        let now = stat_dir(root_fd, &dir.path);
        let mut changed = !unchanged(Some(&dir.stat), now.as_ref(), snapshot);
        // Whether a `.git` makes a repository of its own depends on files
        // inside it, which leave the directory's stat alone.
        if !changed && (dir.nested || dir.dot_git) {
            let nested = nested.get_or_insert_with(|| Nested::new(root));
            let is = nested.is_repository(root_fd, OsStr::from_bytes(&dir.path), &dir.path);
            changed = is != dir.nested;
        }
        if changed {
            mark_with_parent(&mut check.dirty, &dir.path);
        }
        // An edited `.gitignore` leaves its directory as it was; a new or
        // removed one changes the directory. Either applies to everything
        // below it.
        if !dir.nested && (changed || dir.ignore.is_some()) {
            let ignore = stat_in(root_fd, &dir.path, b".gitignore");
            if !unchanged(dir.ignore.as_ref(), ignore.as_ref(), snapshot) {
                check.deep.insert(dir.path.clone());
            }
        }
    }
    check
}

/// Brings the listing of `cache` up to date after `check`: the index read
/// again if it changed, and the directories that changed read again.
pub(crate) fn update(
    cache: &TreeCache,
    state: &GitState,
    check: Check,
    root: &Path,
    root_fd: &OwnedFd,
    skip: &[Vec<u8>],
) -> Revalidated {
    let Check {
        stale,
        index_changed,
        mut dirty,
        deep,
    } = check;
    if stale {
        return Revalidated::Stale;
    }
    if !index_changed && dirty.is_empty() && deep.is_empty() {
        return Revalidated::Same;
    }
    let old_tracked = cached_tracked(cache);
    let (tracked, index) = if index_changed {
        match read_index(root, usize::from(state.hash_len)) {
            Ok((read, stat)) => {
                // Where what the index tracks changed, the directories above
                // read their entries differently (tracked or not, a gitlink,
                // something tracked below).
                for path in symmetric_difference(&old_tracked.paths, &read.paths) {
                    let mut at = path;
                    while let Some(slash) = at.iter().rposition(|&b| b == b'/') {
                        at = &at[..slash];
                        dirty.insert(at.to_vec());
                    }
                    dirty.insert(Vec::new());
                }
                // A path that became a gitlink, or stopped being one.
                let gitlinks = |t: &Tracked| -> BTreeSet<Vec<u8>> {
                    t.gitlinks
                        .iter()
                        .map(|&i| t.paths.get(i as usize).to_vec())
                        .collect()
                };
                let (before, after) = (gitlinks(&old_tracked), gitlinks(&read));
                for path in before.symmetric_difference(&after) {
                    dirty.insert(parent(path).unwrap_or_default().to_vec());
                }
                if dirty.is_empty() && deep.is_empty() && read.paths == old_tracked.paths {
                    return Revalidated::Reindexed(GitState {
                        index: stat,
                        ..state.clone()
                    });
                }
                (read, stat)
            }
            Err(_) => return Revalidated::Stale,
        }
    } else {
        (old_tracked, state.index)
    };
    // The walks start at the topmost directories to read again; each enters
    // every directory on the way to one below it, and keeps the rest.
    let marked: BTreeSet<&[u8]> = dirty.iter().chain(&deep).map(Vec::as_slice).collect();
    let starts: Vec<&[u8]> = marked
        .iter()
        .copied()
        .filter(|dir| !ancestors(dir).any(|a| marked.contains(a)))
        .collect();
    let records: std::collections::HashMap<&[u8], &DirRecord> =
        state.dirs.iter().map(|d| (d.path.as_slice(), d)).collect();
    let keep = |path: &[u8]| {
        records.get(path).is_some_and(|r| !r.nested)
            && !marked.contains(path)
            && !has_below(&marked, path)
            && !deep.iter().any(|d| under(path, d))
    };
    let global = global_patterns(&state.excludes);
    let nested = Nested::new(root);
    let walker = Walker {
        tracked: &tracked,
        nested: &nested,
        global: &global,
        skip,
        keep: &keep,
    };
    let mut walked = Walked::default();
    for start in &starts {
        let Some(mut stack) = ancestor_patterns(root_fd, start) else {
            return Revalidated::Stale;
        };
        walker.walk(root_fd, start, &mut stack, &mut walked);
    }
    // What the walks replaced: everything below where they started, but
    // for what they kept.
    let kept: std::collections::HashSet<&[u8]> = walked.kept.iter().map(Vec::as_slice).collect();
    let in_kept = |path: &[u8]| {
        kept.contains(path)
            || path
                .iter()
                .enumerate()
                .any(|(i, &b)| b == b'/' && kept.contains(&path[..i]))
    };
    let replaced = |path: &[u8]| starts.iter().any(|s| under(path, s)) && !in_kept(path);
    let mut untracked: Vec<Vec<u8>> = cache
        .paths
        .iter()
        .enumerate()
        .filter(|&(i, p)| cache.mark(i).untracked && !replaced(trim_slash(p)))
        .map(|(_, p)| p.to_vec())
        .collect();
    untracked.extend(walked.untracked);
    let mut dirs: Vec<DirRecord> = state
        .dirs
        .iter()
        .filter(|d| !replaced(&d.path))
        .cloned()
        .collect();
    dirs.extend(walked.dirs);
    dirs.sort_by(|a, b| a.path.cmp(&b.path));
    dirs.dedup_by(|a, b| a.path == b.path);
    let untracked = untracked::sorted(untracked);
    let (paths, marks) = combine(&tracked, &untracked);
    Revalidated::Updated(GitListing {
        paths,
        marks,
        state: GitState {
            index,
            dirs,
            ..state.clone()
        },
    })
}

/// The directories above `path`, nearest first, ending with the root
/// (`""`); none for the root itself.
fn ancestors(path: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::successors(parent(path), |p| parent(p))
}

/// Whether `set` holds a directory strictly below `dir`.
fn has_below(set: &BTreeSet<&[u8]>, dir: &[u8]) -> bool {
    if dir.is_empty() {
        return set.iter().any(|d| !d.is_empty());
    }
    let mut prefix = dir.to_vec();
    prefix.push(b'/');
    set.range(prefix.as_slice()..)
        .next()
        .is_some_and(|d| d.starts_with(&prefix))
}

/// The parent of a directory path (`""` for a top-level one), `None` for
/// the root.
fn parent(path: &[u8]) -> Option<&[u8]> {
    if path.is_empty() {
        return None;
    }
    Some(match path.iter().rposition(|&b| b == b'/') {
        Some(slash) => &path[..slash],
        None => b"",
    })
}

fn mark_with_parent(dirty: &mut BTreeSet<Vec<u8>>, path: &[u8]) {
    dirty.insert(path.to_vec());
    if let Some(p) = parent(path) {
        dirty.insert(p.to_vec());
    }
}

/// A listed repository of its own ends in `/`.
fn trim_slash(path: &[u8]) -> &[u8] {
    path.strip_suffix(b"/").unwrap_or(path)
}

fn stat_dir(root_fd: &OwnedFd, path: &[u8]) -> Option<Stat> {
    let name = if path.is_empty() {
        OsStr::new(".")
    } else {
        OsStr::from_bytes(path)
    };
    rustix::fs::statat(root_fd, name, AtFlags::SYMLINK_NOFOLLOW)
        .ok()
        .map(|s| Stat::from_raw(&s))
}

fn stat_in(root_fd: &OwnedFd, dir: &[u8], name: &[u8]) -> Option<Stat> {
    let mut path = dir.to_vec();
    if !path.is_empty() {
        path.push(b'/');
    }
    path.extend_from_slice(name);
    stat_dir(root_fd, &path)
}

/// The `.gitignore` files of the ancestors of `dir` (not of `dir` itself,
/// which the walk reads), root first. `None` when an ancestor cannot be
/// opened: then the tree changed under the listing.
fn ancestor_patterns(root_fd: &OwnedFd, dir: &[u8]) -> Option<Vec<PatternFile>> {
    let mut stack = Vec::new();
    if dir.is_empty() {
        return Some(stack);
    }
    let mut ancestors: Vec<&[u8]> = vec![b""];
    for (i, &b) in dir.iter().enumerate() {
        if b == b'/' {
            ancestors.push(&dir[..i]);
        }
    }
    for ancestor in ancestors {
        let name = if ancestor.is_empty() {
            OsStr::new(".")
        } else {
            OsStr::from_bytes(ancestor)
        };
        let fd = rustix::fs::openat(
            root_fd,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()?;
        if let Some((Some(file), _)) = untracked::read_ignore_file(&fd, ancestor)
            && !file.is_empty()
        {
            stack.push(file);
        }
    }
    Some(stack)
}

/// The paths in exactly one of two sorted lists.
fn symmetric_difference<'a>(a: &'a PathList, b: &'a PathList) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        match (i < a.len(), j < b.len()) {
            (true, true) => match a.get(i).cmp(b.get(j)) {
                std::cmp::Ordering::Less => {
                    out.push(a.get(i));
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    out.push(b.get(j));
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    i += 1;
                    j += 1;
                }
            },
            (true, false) => {
                out.push(a.get(i));
                i += 1;
            }
            (false, _) => {
                out.push(b.get(j));
                j += 1;
            }
        }
    }
    out
}
