//! The listing cache: reusing git's file list when nothing it depends on
//! changed, so that an unchanged tree is fingerprinted without running git.
//!
//! What `git ls-files -co --exclude-standard` prints depends only on
//!
//! - the index (`.git/index`): the tracked set;
//! - the names in every directory of the work tree: each directory's
//!   modification time changes whenever an entry is created, removed or
//!   renamed in it;
//! - the ignore rules: every `.gitignore` file, `.git/info/exclude`, and the
//!   excludes file and configuration files git reads (found with
//!   `git config --list --show-origin`, plus the standard locations even
//!   when absent, so that creating one is noticed).
//!
//! After a run of git, the cache records the listing with the `lstat` data of
//! every directory (walked without following symlinks, skipping `.git`, the
//! excluded store, and the directories git ignores as a whole and holds no
//! tracked file in, which git never enters either) and of every such file (or their absence). A later
//! fingerprint reuses the listing only if every recorded stat is unchanged
//! and strictly older than the moment the listing was taken (git's
//! racily-clean rule, as for the stat cache). When only the names in a few
//! directories below the root changed (a new file in `src/`), git lists
//! just those directories again (`git ls-files -co -- src/`): the tracked
//! files come from the same index, and the untracked ones can only have
//! changed there. Anything else, including a damaged cache file, runs git
//! over the whole tree again. It is only used when the root is the
//! top of a work tree with a `.git` directory.

use std::{
    io,
    os::{
        fd::OwnedFd,
        unix::ffi::{OsStrExt, OsStringExt},
    },
    path::{Path, PathBuf},
};

use camino::{Utf8Path, Utf8PathBuf};
use rustix::fs::AtFlags;

use super::cache::Stat;
use crate::exec::{self, BaseEnv, ExecRequest, ExitStatus};

const MAGIC: &[u8; 8] = b"ORCHOFPL";
const VERSION: u32 = 2;

/// The recorded state a listing depends on, and the listing.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    snapshot: (i64, u32),
    /// Paths relative to the root with their stat, or `None` when absent.
    guards: Vec<(Vec<u8>, Option<Stat>)>,
    /// Absolute paths outside the root (global git configuration).
    outside: Vec<(Vec<u8>, Option<Stat>)>,
    dirs: Vec<(Vec<u8>, Stat)>,
    pub(crate) paths: Vec<Vec<u8>>,
    /// The paths of `paths` that are not in the index.
    untracked: Vec<Vec<u8>>,
}

/// The listing cache file of a root, subject and git environment.
pub(crate) fn file(dir: &Utf8Path, root: &Path, subject: &[Vec<u8>], env: &BaseEnv) -> Utf8PathBuf {
    let abs = std::path::absolute(root).unwrap_or_else(|_| root.to_owned());
    let mut h = blake3::Hasher::new_derive_key("orcho listing cache key v1");
    h.update(abs.as_os_str().as_bytes());
    for s in subject {
        h.update(&[0]).update(s);
    }
    for (k, v) in env.iter() {
        h.update(&[1])
            .update(k.as_bytes())
            .update(&[2])
            .update(v.as_bytes());
    }
    dir.join(format!("{}.list", &h.finalize().to_hex()[..32]))
}

/// Whether the listing cache may be used for `root` at all.
pub(crate) fn applies(root: &Path) -> bool {
    root.join(".git").is_dir()
}

fn stat_rel(fd: &OwnedFd, rel: &[u8]) -> Option<Stat> {
    let path: &std::ffi::OsStr = if rel.is_empty() {
        std::ffi::OsStr::new(".")
    } else {
        std::ffi::OsStr::from_bytes(rel)
    };
    rustix::fs::statat(fd, path, AtFlags::SYMLINK_NOFOLLOW)
        .ok()
        .map(|s| Stat::from_raw(&s))
}

fn stat_abs(path: &[u8]) -> Option<Stat> {
    rustix::fs::lstat(std::ffi::OsStr::from_bytes(path))
        .ok()
        .map(|s| Stat::from_raw(&s))
}

fn trusted(recorded: Option<&Stat>, now: Option<&Stat>, snapshot: (i64, u32)) -> bool {
    match (recorded, now) {
        (None, None) => true,
        (Some(r), Some(n)) => r == n && r.older_than(snapshot),
        _ => false,
    }
}

/// The most directories whose names may have changed for a cached listing
/// to be brought up to date by listing only them again.
const MAX_RELISTED_DIRS: usize = 32;

/// A cached listing, as far as it still holds.
#[derive(Debug)]
pub(crate) enum CachedListing {
    /// Every recorded stat holds: the listing is git's.
    Valid(Listing),
    /// The index, the ignore rules and git's configuration hold, but names
    /// in these directories of the work tree changed (the fewest that cover
    /// every changed one; never the root): the tracked files are the same,
    /// and only what lies under them needs listing again.
    Stale(Listing, Vec<Vec<u8>>),
    /// Only the index changed (a commit, `git add`, a checkout that changed
    /// no file names): the tracked files are read from it again, and the
    /// untracked ones are the same but for what entered or left it.
    Reindexed(Listing),
}

/// The index, relative to the root.
const INDEX: &[u8] = b".git/index";

/// The most paths that may have left the index for a listing to be brought
/// up to date without listing the whole tree.
const MAX_LEFT_INDEX: usize = 256;

impl Listing {
    /// The cached listing, if every recorded stat still holds, or if only
    /// the names in a few directories below the root changed.
    pub(crate) fn load(path: &Utf8Path, root_fd: &OwnedFd) -> Option<CachedListing> {
        let listing = Self::parse(&std::fs::read(path).ok()?)?;
        let s = listing.snapshot;
        let mut index_changed = false;
        for (rel, st) in &listing.guards {
            if !trusted(st.as_ref(), stat_rel(root_fd, rel).as_ref(), s) {
                if rel.as_slice() != INDEX {
                    return None;
                }
                index_changed = true;
            }
        }
        let held = listing
            .outside
            .iter()
            .all(|(p, st)| trusted(st.as_ref(), stat_abs(p).as_ref(), s));
        if !held {
            return None;
        }
        let mut changed: Vec<Vec<u8>> = Vec::new();
        for (rel, st) in &listing.dirs {
            if trusted(Some(st), stat_rel(root_fd, rel).as_ref(), s) {
                continue;
            }
            if rel.is_empty() {
                return None;
            }
            changed.push(rel.clone());
        }
        match (changed.is_empty(), index_changed) {
            (true, false) => return Some(CachedListing::Valid(listing)),
            (true, true) => return Some(CachedListing::Reindexed(listing)),
            (false, true) => return None,
            (false, false) => {}
        }
        // Recorded in walk order, parents first: keep the outermost.
        changed.sort();
        let mut outermost: Vec<Vec<u8>> = Vec::new();
        for dir in changed {
            if !outermost.iter().any(|o| super::imp::under(&dir, o)) {
                outermost.push(dir);
            }
        }
        (outermost.len() <= MAX_RELISTED_DIRS).then_some(CachedListing::Stale(listing, outermost))
    }

    /// Brings a [`CachedListing::Stale`] listing up to date: git lists again only
    /// what lies under `changed` (the tracked files there come from the
    /// same index, the untracked ones from a walk of those directories
    /// alone), and the directories and ignore files under them are recorded
    /// again. `None` when git cannot say, or a directory cannot be read:
    /// then the whole tree is listed.
    #[expect(
        clippy::too_many_arguments,
        reason = "the same inputs as `record`, plus what changed"
    )]
    pub(crate) fn relist(
        mut self,
        path: &Utf8Path,
        root: &Path,
        root_fd: &OwnedFd,
        excluded: &[Vec<u8>],
        env: &BaseEnv,
        snapshot: (i64, u32),
        changed: &[Vec<u8>],
    ) -> Option<Self> {
        let mut args: Vec<String> = [
            "--literal-pathspecs",
            "ls-files",
            "-t",
            "-co",
            "--exclude-standard",
            "-z",
            "--",
        ]
        .map(str::to_owned)
        .to_vec();
        for dir in changed {
            args.push(format!("{}/", std::str::from_utf8(dir).ok()?));
        }
        let listed = git_entries(root, env, &args, None)?;
        let changed_under = |p: &[u8]| changed.iter().any(|c| super::imp::under(p, c));
        self.paths.retain(|p| !changed_under(p));
        self.untracked.retain(|p| !changed_under(p));
        // `-t` tags each path: `? ` untracked, a letter and a space tracked.
        for tagged in &listed {
            let (tag, path) = (tagged.first()?, tagged.get(2..)?);
            self.paths.push(path.to_vec());
            if *tag == b'?' {
                self.untracked.push(path.to_vec());
            }
        }
        self.dirs.retain(|(rel, _)| !changed_under(rel));
        self.guards
            .retain(|(rel, _)| !(rel.ends_with(b".gitignore") && changed_under(rel)));
        let mut ignore_files = Vec::new();
        for dir in changed {
            walk_dirs(root, dir, excluded, &mut self.dirs, &mut ignore_files).ok()?;
        }
        for rel in ignore_files {
            let st = stat_rel(root_fd, &rel);
            self.guards.push((rel, st));
        }
        self.snapshot = snapshot;
        let _ = self.save(path);
        Some(self)
    }

    /// Brings a [`CachedListing::Reindexed`] listing up to date: the tracked
    /// files from the index (`git ls-files -c`), the untracked ones kept but
    /// for those now tracked, and each path that left the index listed if
    /// git lists it as untracked now (`git ls-files -o --exclude-standard --
    /// PATH…`). `None` when git cannot say, or too many paths left.
    pub(crate) fn reindex(
        mut self,
        path: &Utf8Path,
        root: &Path,
        root_fd: &OwnedFd,
        env: &BaseEnv,
        snapshot: (i64, u32),
    ) -> Option<Self> {
        // Stat first: an index written while git reads it fails the check
        // next time.
        let index = stat_rel(root_fd, INDEX);
        let words = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let tracked = git_entries(root, env, &words(&["ls-files", "-c", "-z"]), None)?;
        let now_tracked: std::collections::HashSet<&[u8]> =
            tracked.iter().map(Vec::as_slice).collect();
        let was_untracked: std::collections::HashSet<&[u8]> =
            self.untracked.iter().map(Vec::as_slice).collect();
        let left: Vec<&Vec<u8>> = self
            .paths
            .iter()
            .filter(|p| {
                !was_untracked.contains(p.as_slice()) && !now_tracked.contains(p.as_slice())
            })
            .collect();
        if left.len() > MAX_LEFT_INDEX {
            return None;
        }
        let mut untracked: Vec<Vec<u8>> = self
            .untracked
            .iter()
            .filter(|p| !now_tracked.contains(p.as_slice()))
            .cloned()
            .collect();
        if !left.is_empty() {
            let mut args = words(&[
                "--literal-pathspecs",
                "ls-files",
                "-o",
                "--exclude-standard",
                "-z",
                "--",
            ]);
            for p in left {
                args.push(std::str::from_utf8(p).ok()?.to_owned());
            }
            untracked.extend(git_entries(root, env, &args, None)?);
        }
        self.paths = tracked;
        self.paths.extend(untracked.iter().cloned());
        self.untracked = untracked;
        for (rel, st) in &mut self.guards {
            if rel.as_slice() == INDEX {
                *st = index;
            }
        }
        self.snapshot = snapshot;
        let _ = self.save(path);
        Some(self)
    }

    /// Records what `paths` (git's listing, taken after `snapshot`, of which
    /// `untracked` are not in the index) depends on, and saves it. Failures
    /// only cost time later.
    #[expect(
        clippy::too_many_arguments,
        reason = "what the listing depends on, each from where it is known"
    )]
    pub(crate) fn record(
        path: &Utf8Path,
        root: &Path,
        root_fd: &OwnedFd,
        excluded: &[Vec<u8>],
        env: &BaseEnv,
        snapshot: (i64, u32),
        paths: Vec<Vec<u8>>,
        untracked: Vec<Vec<u8>>,
    ) {
        let mut listing = Self {
            snapshot,
            paths,
            untracked,
            ..Self::default()
        };
        let mut ignore_files = Vec::new();
        // Directories git ignores as a whole and holds no tracked file in
        // are never entered, as git never enters them: what a build writes
        // there cannot change the listing.
        let mut skipped = excluded.to_vec();
        skipped.extend(ignored_dirs(root, env));
        if walk_dirs(root, &[], &skipped, &mut listing.dirs, &mut ignore_files).is_err() {
            return;
        }
        for rel in [INDEX, b".git/info/exclude", b".git/config"] {
            listing.guards.push((rel.to_vec(), stat_rel(root_fd, rel)));
        }
        for rel in ignore_files {
            let st = stat_rel(root_fd, &rel);
            listing.guards.push((rel, st));
        }
        let Some(outside) = git_config_files(root, env) else {
            return;
        };
        listing.outside = outside
            .into_iter()
            .map(|p| {
                let st = stat_abs(&p);
                (p, st)
            })
            .collect();
        let _ = listing.save(path);
    }

    fn save(&self, path: &Utf8Path) -> io::Result<()> {
        let mut b = Vec::new();
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&VERSION.to_le_bytes());
        b.extend_from_slice(&self.snapshot.0.to_le_bytes());
        b.extend_from_slice(&self.snapshot.1.to_le_bytes());
        let put_bytes = |b: &mut Vec<u8>, bytes: &[u8]| {
            b.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            b.extend_from_slice(bytes);
        };
        let put_stat = |b: &mut Vec<u8>, st: Option<&Stat>| match st {
            Some(st) => {
                b.push(1);
                st.encode(b);
            }
            None => b.push(0),
        };
        for list in [&self.guards, &self.outside] {
            b.extend_from_slice(&(list.len() as u64).to_le_bytes());
            for (p, st) in list {
                put_bytes(&mut b, p);
                put_stat(&mut b, st.as_ref());
            }
        }
        b.extend_from_slice(&(self.dirs.len() as u64).to_le_bytes());
        for (p, st) in &self.dirs {
            put_bytes(&mut b, p);
            put_stat(&mut b, Some(st));
        }
        for list in [&self.paths, &self.untracked] {
            b.extend_from_slice(&(list.len() as u64).to_le_bytes());
            for p in list {
                put_bytes(&mut b, p);
            }
        }
        super::cache::write_sealed(path, b)
    }

    fn parse(bytes: &[u8]) -> Option<Self> {
        if bytes.len() < 8 + 4 + 12 + 32 || &bytes[..8] != MAGIC {
            return None;
        }
        let mut r = Reader {
            b: super::cache::unseal(bytes)?,
            at: 8,
        };
        if r.u32()? != VERSION {
            return None;
        }
        let snapshot = (r.i64()?, r.u32()?);
        let mut out = Self {
            snapshot,
            ..Self::default()
        };
        for which in 0..2 {
            let n = r.len()?;
            for _ in 0..n {
                let p = r.bytes()?.to_vec();
                let st = r.opt_stat()?;
                if which == 0 {
                    out.guards.push((p, st));
                } else {
                    out.outside.push((p, st));
                }
            }
        }
        let n = r.len()?;
        for _ in 0..n {
            let p = r.bytes()?.to_vec();
            out.dirs.push((p, r.opt_stat()??));
        }
        let n = r.len()?;
        for _ in 0..n {
            out.paths.push(r.bytes()?.to_vec());
        }
        let n = r.len()?;
        for _ in 0..n {
            out.untracked.push(r.bytes()?.to_vec());
        }
        (r.at == r.b.len()).then_some(out)
    }
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.b.get(self.at..end)?;
        self.at = end;
        Some(s)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn len(&mut self) -> Option<usize> {
        let n = u64::from_le_bytes(self.take(8)?.try_into().ok()?);
        let n = usize::try_from(n).ok()?;
        // Every element takes at least one byte: a larger count is damage.
        (n <= self.b.len() - self.at).then_some(n)
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.len()?;
        self.take(n)
    }
    fn opt_stat(&mut self) -> Option<Option<Stat>> {
        match self.take(1)?[0] {
            0 => Some(None),
            1 => Stat::decode(self.take(Stat::ENCODED)?).map(Some),
            _ => None,
        }
    }
}

/// Every directory under `root` (not following symlinks, skipping `.git`
/// entries and excluded paths) with its stat, and every `.gitignore` file.
fn walk_dirs(
    root: &Path,
    rel: &[u8],
    excluded: &[Vec<u8>],
    dirs: &mut Vec<(Vec<u8>, Stat)>,
    ignore_files: &mut Vec<Vec<u8>>,
) -> io::Result<()> {
    let dir = if rel.is_empty() {
        root.to_owned()
    } else {
        root.join(std::ffi::OsStr::from_bytes(rel))
    };
    let meta = rustix::fs::lstat(&dir)?;
    dirs.push((rel.to_vec(), Stat::from_raw(&meta)));
    for entry in std::fs::read_dir(&dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.as_bytes();
        if name == b".git" {
            continue;
        }
        let mut child = rel.to_vec();
        if !child.is_empty() {
            child.push(b'/');
        }
        child.extend_from_slice(name);
        if excluded.iter().any(|x| super::imp::under(&child, x)) {
            continue;
        }
        let ft = entry.file_type()?;
        if ft.is_dir() {
            walk_dirs(root, &child, excluded, dirs, ignore_files)?;
        } else if name == b".gitignore" {
            ignore_files.push(child);
        }
    }
    Ok(())
}

/// The directories under `root` that git ignores as a whole and that hold
/// no tracked file, relative to it, without the trailing `/`; none when git
/// cannot say.
///
/// `git ls-files -o -i --directory` names each untracked directory it does
/// not enter with a trailing `/`, but also an untracked directory that only
/// holds ignored files; `git check-ignore` keeps those that are ignored
/// themselves (by their own pattern or a parent's), which no new file in
/// them can be listed from.
fn ignored_dirs(root: &Path, env: &BaseEnv) -> Vec<Vec<u8>> {
    let args = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let listed = args(&[
        "ls-files",
        "-z",
        "-o",
        "-i",
        "--exclude-standard",
        "--directory",
    ]);
    let Some(listed) = git_entries(root, env, &listed, None) else {
        return Vec::new();
    };
    let mut candidates = Vec::new();
    for entry in listed.into_iter().filter(|e| e.ends_with(b"/")) {
        candidates.extend_from_slice(&entry);
        candidates.push(0);
    }
    if candidates.is_empty() {
        return Vec::new();
    }
    // `check-ignore` exits 1 when none is ignored: then it prints nothing.
    let check = args(&["check-ignore", "-z", "--stdin"]);
    let Some(ignored) = git_entries(root, env, &check, Some(candidates)) else {
        return Vec::new();
    };
    ignored
        .into_iter()
        .filter_map(|mut dir| (dir.pop() == Some(b'/') && !dir.is_empty()).then_some(dir))
        .collect()
}

/// Runs `git <args>` in `root` (reading `stdin`, if any) and returns the
/// entries of its NUL-terminated output; `None` when git could not run,
/// exited other than 0 or 1 (1: nothing matched, for `check-ignore`), or
/// its output was cut short.
fn git_entries(
    root: &Path,
    env: &BaseEnv,
    args: &[String],
    stdin: Option<Vec<u8>>,
) -> Option<Vec<Vec<u8>>> {
    let mut request =
        ExecRequest::new(std::iter::once("git".to_owned()).chain(args.iter().cloned()))
            .cwd(Utf8Path::from_path(root)?)
            .envs(env.clone())
            .env("GIT_OPTIONAL_LOCKS", "0")
            .keep_stdout(1 << 30);
    if let Some(stdin) = stdin {
        request = request.stdin(stdin);
    }
    let outcome = exec::run(&request).ok()?;
    if !matches!(outcome.status, ExitStatus::Exited(0 | 1)) {
        return None;
    }
    let out = outcome.stdout.kept?;
    if out.last().is_some_and(|&b| b != 0) {
        return None;
    }
    Some(
        out.split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(<[u8]>::to_vec)
            .collect(),
    )
}

/// The configuration and excludes files git reads for `root`: those
/// `git config --list --show-origin` names, the standard locations (present
/// or not), and the configured `core.excludesFile`.
fn git_config_files(root: &Path, env: &BaseEnv) -> Option<Vec<Vec<u8>>> {
    let run = |args: &[&str]| -> Option<Vec<u8>> {
        let mut argv = vec!["git"];
        argv.extend_from_slice(args);
        let outcome = exec::run(
            &ExecRequest::new(argv)
                .cwd(Utf8Path::from_path(root)?)
                .envs(env.clone())
                .keep_stdout(1 << 20),
        )
        .ok()?;
        outcome.stdout.kept
    };
    let mut files: Vec<Vec<u8>> = Vec::new();
    let origins = run(&["config", "--list", "--show-origin", "-z"])?;
    for record in origins.split(|&b| b == 0) {
        if let Some(path) = record.strip_prefix(b"file:") {
            let abs = if path.starts_with(b"/") {
                path.to_vec()
            } else {
                root.join(std::ffi::OsStr::from_bytes(path))
                    .into_os_string()
                    .into_vec()
            };
            files.push(abs);
        }
    }
    // `git config --get` exits 1 when unset: then `kept` is still Some("").
    if let Some(excludes) = run(&["config", "--path", "--get", "core.excludesFile"]) {
        let text = String::from_utf8_lossy(&excludes);
        let text = text.trim();
        if !text.is_empty() {
            let p = PathBuf::from(text);
            let p = if p.is_absolute() { p } else { root.join(p) };
            files.push(p.into_os_string().into_vec());
        }
    }
    let home = env.get("HOME").map(PathBuf::from);
    let xdg = env
        .get("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    let mut standard: Vec<PathBuf> = vec![PathBuf::from("/etc/gitconfig")];
    if let Some(h) = &home {
        standard.push(h.join(".gitconfig"));
    }
    if let Some(x) = &xdg {
        standard.push(x.join("git/config"));
        standard.push(x.join("git/ignore"));
    }
    files.extend(standard.into_iter().map(|p| p.into_os_string().into_vec()));
    files.sort();
    files.dedup();
    Some(files)
}
