//! The few `git` commands delivery and intake need, run through
//! [`orcho_receipts::exec`] (argv only, a process group, a timeout, bounded
//! output).
//!
//! Every command runs with the documented base environment plus
//! `LC_ALL=C` (stable messages), `GIT_TERMINAL_PROMPT=0` (never wait for a
//! password) and, where asked, a private `GIT_INDEX_FILE`, so that reading
//! a whole working tree (untracked files included) never touches the
//! user's index.

use camino::{Utf8Path, Utf8PathBuf};
use orcho_receipts::exec::{self, ExecOutcome, ExecRequest};

/// The most output of one git command kept in memory (a patch, a listing).
const MAX_OUTPUT: usize = 1 << 30;

/// One changed file of a diff, from `git diff --numstat -z`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NumStat {
    pub(crate) path: Utf8PathBuf,
    /// `None` for a binary file.
    pub(crate) lines: Option<(u64, u64)>,
}

/// A git working tree (or the directory git is run in).
#[derive(Debug, Clone)]
pub(crate) struct Git {
    dir: Utf8PathBuf,
    index: Option<Utf8PathBuf>,
}

impl Git {
    pub(crate) fn new(dir: &Utf8Path) -> Self {
        Self {
            dir: dir.to_owned(),
            index: None,
        }
    }

    /// The same tree, with git's index at `index` instead of `.git/index`.
    pub(crate) fn with_index(&self, index: &Utf8Path) -> Self {
        Self {
            dir: self.dir.clone(),
            index: Some(index.to_owned()),
        }
    }

    fn request(&self, args: &[&str]) -> ExecRequest {
        let mut request = exec::git_request(&self.dir, args)
            .keep_stdout(MAX_OUTPUT)
            .tail_bytes(8 * 1024);
        if let Some(index) = &self.index {
            request = request.env("GIT_INDEX_FILE", index.as_str());
        }
        request
    }

    /// Runs `git <args>` and returns how it ended, whatever the exit code.
    pub(crate) fn outcome(&self, args: &[&str]) -> Result<ExecOutcome, GitError> {
        exec::run(&self.request(args))
            .map_err(|e| GitError::new(args, &self.dir, GitErrorKind::Exec(Box::new(e))))
    }

    /// Runs `git <args>`; a non-zero exit is an error. Returns standard
    /// output.
    pub(crate) fn run(&self, args: &[&str]) -> Result<Vec<u8>, GitError> {
        let outcome = self.outcome(args)?;
        if !outcome.status.success() {
            return Err(GitError::failed(args, &self.dir, &outcome));
        }
        outcome
            .stdout
            .kept
            .ok_or_else(|| GitError::new(args, &self.dir, GitErrorKind::OutputTooLarge))
    }

    /// Whether `git <args>` exits with 0; on another exit code, its
    /// standard error (trimmed). Failing to run git at all is an error.
    pub(crate) fn check(&self, args: &[&str]) -> Result<Result<(), String>, GitError> {
        let outcome = self.outcome(args)?;
        match outcome.status {
            exec::ExitStatus::Exited(0) => Ok(Ok(())),
            exec::ExitStatus::Exited(_) => Ok(Err(outcome.stderr.tail_lossy().trim().to_owned())),
            _ => Err(GitError::failed(args, &self.dir, &outcome)),
        }
    }

    /// The commit `HEAD` points at.
    pub(crate) fn head(&self) -> Result<String, GitError> {
        self.rev_parse("HEAD")
    }

    /// The full commit id of `rev`.
    pub(crate) fn rev_parse(&self, rev: &str) -> Result<String, GitError> {
        let spec = format!("{rev}^{{commit}}");
        let out = self.run(&["rev-parse", "--verify", &spec])?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }

    /// The whole working tree (tracked edits, deletions and untracked,
    /// non-ignored files) as a binary patch against `base`, with its
    /// per-file numbers, computed in a private index: the tree's own index
    /// is never touched.
    /// Paths under `exclude` (relative to the tree) are left out.
    pub(crate) fn snapshot_diff(
        &self,
        base: &str,
        exclude: Option<&Utf8Path>,
    ) -> Result<(Vec<u8>, Vec<NumStat>), GitError> {
        let (private, _tmp) = self.private_index(base)?;
        private.add_all_but(base, exclude)?;
        let patch = private.run(&[
            "diff",
            "--cached",
            "--binary",
            "--no-renames",
            "--no-color",
            "--no-ext-diff",
            base,
        ])?;
        let numstat =
            private.run(&["diff", "--cached", "--numstat", "--no-renames", "-z", base])?;
        Ok((patch, parse_numstat(&numstat)))
    }

    /// Stages the whole working tree (tracked edits, deletions, untracked
    /// files git does not ignore) except what lies under `exclude`, which
    /// keeps `base`'s entries. Whether `exclude` is ignored by git or not:
    /// git refuses a pathspec that names an ignored path, so `exclude` is
    /// reset after the fact instead of left out of the pathspec.
    pub(crate) fn add_all_but(
        &self,
        base: &str,
        exclude: Option<&Utf8Path>,
    ) -> Result<(), GitError> {
        self.run(&["add", "--all", "--", "."])?;
        if let Some(exclude) = exclude {
            self.run(&["reset", "--quiet", base, "--", exclude.as_str()])?;
        }
        Ok(())
    }

    /// Whether `patch` applies to the files `HEAD` committed (checked in a
    /// private index: the tree's own index and files are not touched).
    pub(crate) fn applies_to_head(&self, patch: &Utf8Path) -> Result<bool, GitError> {
        let (private, _tmp) = self.private_index("HEAD")?;
        Ok(private
            .check(&["apply", "--cached", "--check", patch.as_str()])?
            .is_ok())
    }

    /// This tree with a private, empty index, and the directory that holds
    /// it (removed when dropped).
    pub(crate) fn fresh_index(&self) -> Result<(Self, tempfile::TempDir), GitError> {
        let tmp = tempfile::Builder::new()
            .prefix("orcho-index-")
            .tempdir()
            .map_err(|e| GitError::new(&["add"], &self.dir, GitErrorKind::TempIndex(e)))?;
        let index = Utf8PathBuf::try_from(tmp.path().join("index")).map_err(|e| {
            GitError::new(
                &["add"],
                &self.dir,
                GitErrorKind::TempIndex(e.into_io_error()),
            )
        })?;
        Ok((self.with_index(&index), tmp))
    }

    /// This tree with a private index read from `rev`, and the directory
    /// that holds the index (removed when dropped).
    pub(crate) fn private_index(&self, rev: &str) -> Result<(Self, tempfile::TempDir), GitError> {
        let tmp = tempfile::Builder::new()
            .prefix("orcho-index-")
            .tempdir()
            .map_err(|e| GitError::new(&["read-tree"], &self.dir, GitErrorKind::TempIndex(e)))?;
        let index = Utf8PathBuf::try_from(tmp.path().join("index")).map_err(|e| {
            GitError::new(
                &["read-tree"],
                &self.dir,
                GitErrorKind::TempIndex(e.into_io_error()),
            )
        })?;
        let private = self.with_index(&index);
        private.run(&["read-tree", rev])?;
        Ok((private, tmp))
    }

    /// `git status --porcelain=v1 -z` with every untracked file listed
    /// and renames shown as a deletion and an addition.
    pub(crate) fn status(&self) -> Result<Vec<StatusEntry>, GitError> {
        let out = self.run(&[
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
        ])?;
        Ok(parse_status(&out))
    }
}

/// One entry of `git status --porcelain=v1 -z --no-renames`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StatusEntry {
    /// The index column (`M`, `A`, `D`, `?`, …).
    pub(crate) index: u8,
    /// The working-tree column.
    pub(crate) worktree: u8,
    pub(crate) path: Utf8PathBuf,
}

impl StatusEntry {
    pub(crate) fn is_untracked(&self) -> bool {
        self.index == b'?' && self.worktree == b'?'
    }

    pub(crate) fn is_ignored(&self) -> bool {
        self.index == b'!'
    }
}

fn lossy_path(bytes: &[u8]) -> Utf8PathBuf {
    Utf8PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

pub(crate) fn parse_status(out: &[u8]) -> Vec<StatusEntry> {
    out.split(|&b| b == 0)
        .filter(|record| record.len() > 3 && record[2] == b' ')
        .map(|record| StatusEntry {
            index: record[0],
            worktree: record[1],
            path: lossy_path(&record[3..]),
        })
        .filter(|e| !e.is_ignored())
        .collect()
}

pub(crate) fn parse_numstat(out: &[u8]) -> Vec<NumStat> {
    out.split(|&b| b == 0)
        .filter_map(|record| {
            let mut fields = record.splitn(3, |&b| b == b'\t');
            let ins = fields.next()?;
            let del = fields.next()?;
            let path = fields.next().filter(|p| !p.is_empty())?;
            let number = |f: &[u8]| std::str::from_utf8(f).ok()?.parse::<u64>().ok();
            Some(NumStat {
                path: lossy_path(path),
                lines: number(ins).zip(number(del)),
            })
        })
        .collect()
}

/// A git command failed or could not be run.
#[derive(Debug, thiserror::Error)]
#[error("`git {command}` failed in `{dir}`")]
pub struct GitError {
    command: String,
    dir: Utf8PathBuf,
    #[source]
    kind: GitErrorKind,
}

/// Why a git command failed; see [`GitError::kind`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GitErrorKind {
    /// Git could not be run or supervised.
    #[error(transparent)]
    Exec(Box<orcho_receipts::ExecError>),
    /// Git ran and failed.
    #[error("{status}{}", if stderr.is_empty() { String::new() } else { format!(": {stderr}") })]
    Failed {
        /// How it ended (`exit code 128`, `timed out after …`).
        status: String,
        /// The end of its standard error, trimmed.
        stderr: String,
    },
    /// Its output was too large to keep.
    #[error("its output was too large to keep in memory")]
    OutputTooLarge,
    /// The private index could not be created.
    #[error("the private index could not be created")]
    TempIndex(#[source] std::io::Error),
    /// A half-created worktree directory could not be removed.
    #[error("the half-created worktree could not be removed")]
    RemoveWorktree(#[source] std::io::Error),
    /// A patch could not be written to a temporary file for git to read.
    #[error("the patch could not be written to a temporary file")]
    TempPatch(#[source] std::io::Error),
}

impl GitError {
    #[cold]
    pub(crate) fn new(args: &[&str], dir: &Utf8Path, kind: GitErrorKind) -> Self {
        let command: String = args.iter().take(3).copied().collect::<Vec<_>>().join(" ");
        Self {
            command,
            dir: dir.to_owned(),
            kind,
        }
    }

    #[cold]
    pub(crate) fn failed(args: &[&str], dir: &Utf8Path, outcome: &ExecOutcome) -> Self {
        Self::new(
            args,
            dir,
            GitErrorKind::Failed {
                status: outcome.status.to_string(),
                stderr: outcome.stderr.tail_lossy().trim().to_owned(),
            },
        )
    }

    orcho_core::getters! {
        /// The git subcommand and its first arguments.
        pub fn command(&self) -> &str;
        /// The directory git ran in.
        pub fn dir(&self) -> &Utf8Path;
        /// What failed.
        pub fn kind(&self) -> &GitErrorKind;
    }
}

/// `path` made absolute against the current directory, so that git can be
/// run in another directory with it; `None` when that is not UTF-8.
pub(crate) fn absolute(path: &Utf8Path) -> Option<Utf8PathBuf> {
    std::path::absolute(path)
        .ok()
        .and_then(|p| Utf8PathBuf::try_from(p).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numstat_records_are_parsed_with_binary_files() {
        let parsed = parse_numstat(b"-\t-\tb.bin\x000\t1\tdel\x001\t1\tsrc/a b.rs\x00");
        assert_eq!(
            parsed,
            vec![
                NumStat {
                    path: "b.bin".into(),
                    lines: None
                },
                NumStat {
                    path: "del".into(),
                    lines: Some((0, 1))
                },
                NumStat {
                    path: "src/a b.rs".into(),
                    lines: Some((1, 1))
                },
            ]
        );
        assert!(parse_numstat(b"garbage\x00\x00").is_empty());
    }

    #[test]
    fn status_records_are_parsed_and_ignored_files_dropped() {
        let parsed = parse_status(b" M f\x00?? new file\x00!! target/x\x00D  gone\x00x\x00");
        let paths: Vec<_> = parsed.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["f", "new file", "gone"]);
        assert!(parsed[1].is_untracked());
        assert_eq!(parsed[2].index, b'D');
    }
}

/// A patch in a temporary file with an absolute path, for git to read in
/// any directory; removed when dropped.
#[derive(Debug)]
pub(crate) struct PatchFile {
    pub(crate) path: Utf8PathBuf,
    _file: tempfile::TempPath,
}

impl PatchFile {
    /// Writes `bytes` to a new temporary file.
    pub(crate) fn write(bytes: &[u8]) -> std::io::Result<Self> {
        use std::io::Write as _;
        let mut file = tempfile::Builder::new()
            .prefix("orcho-patch-")
            .suffix(".patch")
            .tempfile()?;
        file.write_all(bytes)?;
        file.flush()?;
        let file = file.into_temp_path();
        let path = Utf8PathBuf::try_from(file.to_path_buf())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
        Ok(Self { path, _file: file })
    }
}
