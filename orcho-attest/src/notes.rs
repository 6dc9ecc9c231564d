//! Attestations on the commit: git notes under [`NOTES_REF`].
//!
//! Reading a commit's attestations takes two git processes: `rev-parse`
//! for the commit and its tree, and one `cat-file --batch` for the
//! profile at that commit and its note (a note's path in the notes tree
//! may be fanned out; every layout is asked for at once).

use std::collections::HashSet;

use camino::{Utf8Path, Utf8PathBuf};
use orcho_receipts::exec::{self, ExecOutcome, ExitStatus};

use orcho_receipts::CommandReceipt;

use crate::{Bundle, Note, SigningKey, Subject};

/// The notes ref Orcho keeps attestations under.
pub const NOTES_REF: &str = "refs/notes/orcho";

/// How many first-parent ancestors are looked at for an attestation of
/// another commit (to name it when the commit itself has none).
pub const MAX_ANCESTORS: usize = 100;

/// The most output of a git command kept.
const MAX_OUTPUT: usize = 64 << 20;

/// A git repository (any directory inside its work tree).
#[derive(Debug, Clone)]
pub struct Repo {
    dir: Utf8PathBuf,
}

/// A git command that failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`git {command}` failed: {message}")]
#[non_exhaustive]
pub struct GitError {
    /// The command, without `git`.
    pub command: String,
    /// What git said.
    pub message: String,
}

/// An object `cat-file` found.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Object {
    /// Its id.
    pub id: String,
    /// Its bytes, when it is a blob.
    pub blob: Option<Vec<u8>>,
}

/// What a commit holds for checking it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AtCommit {
    /// The commit and its tree.
    pub resolved: Resolved,
    /// The profile file at the commit, if it has one there.
    pub profile: Option<Vec<u8>>,
    /// The commit's note, if it has one.
    pub note: Option<Vec<u8>>,
}

/// A commit and its tree.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Resolved {
    /// The commit id.
    pub commit: String,
    /// Its tree id.
    pub tree: String,
}

impl Repo {
    /// The repository `dir` is in.
    pub fn new(dir: &Utf8Path) -> Self {
        Self {
            dir: dir.to_owned(),
        }
    }

    fn outcome(&self, args: &[&str], stdin: Option<Vec<u8>>) -> Result<ExecOutcome, GitError> {
        let mut request = exec::git_request(&self.dir, args)
            .keep_stdout(MAX_OUTPUT)
            .tail_bytes(8 * 1024);
        if let Some(stdin) = stdin {
            request = request.stdin(stdin);
        }
        exec::run(&request).map_err(|e| GitError {
            command: args.join(" "),
            message: e.to_string(),
        })
    }

    fn run(&self, args: &[&str], stdin: Option<Vec<u8>>) -> Result<Vec<u8>, GitError> {
        let outcome = self.outcome(args, stdin)?;
        if outcome.status != ExitStatus::Exited(0) {
            return Err(GitError {
                command: args.join(" "),
                message: outcome.stderr.tail_lossy().trim().to_owned(),
            });
        }
        outcome.stdout.kept.ok_or_else(|| GitError {
            command: args.join(" "),
            message: "its output is too large".to_owned(),
        })
    }

    /// The commit `rev` names.
    ///
    /// # Errors
    ///
    /// A revision that names no commit (or starts with `-`), or git that
    /// does not run.
    pub fn commit(&self, rev: &str) -> Result<String, GitError> {
        let not_a_commit = || GitError {
            command: format!("rev-parse {rev}"),
            message: format!("`{rev}` names no commit here"),
        };
        if rev.starts_with('-') || rev.is_empty() || rev.contains('\n') {
            return Err(not_a_commit());
        }
        let commit = format!("{rev}^{{commit}}");
        let out = self
            .run(&["rev-parse", "--verify", "-q", &commit], None)
            .map_err(|_| not_a_commit())?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }

    /// What checking `rev` needs, in two git processes: the commit, its
    /// tree, the file `profile` (a path from the repository's root) at that
    /// commit, and the commit's note.
    ///
    /// # Errors
    ///
    /// A revision that names no commit, or git that does not run.
    pub fn at(&self, rev: &str, profile: &str) -> Result<AtCommit, GitError> {
        let commit = self.commit(rev)?;
        let (tree, profile, note) = self.tree_file_note(&commit, Some(profile))?;
        Ok(AtCommit {
            resolved: Resolved { commit, tree },
            profile,
            note,
        })
    }

    /// In one `cat-file` process: `commit`'s tree, the file `path` in it
    /// (when asked for and there), and the commit's note (when it has one).
    fn tree_file_note(&self, commit: &str, path: Option<&str>) -> Result<TreeFileNote, GitError> {
        let mut names = vec![format!("{commit}^{{tree}}")];
        names.extend(path.map(|p| format!("{commit}:{p}")));
        names.extend(Self::note_names(commit));
        let mut objects = self.objects(&names)?.into_iter();
        let tree = objects
            .next()
            .flatten()
            .map(|o| o.id)
            .ok_or_else(|| GitError {
                command: "cat-file --batch".to_owned(),
                message: format!("`{commit}` is not a commit here"),
            })?;
        let file = match path {
            Some(_) => objects.next().flatten().and_then(|o| o.blob),
            None => None,
        };
        let note = objects.flatten().find_map(|o| o.blob);
        Ok((tree, file, note))
    }

    /// Reads objects by name (`<rev>:<path>`, `<rev>^{tree}`) in one
    /// process: each one's id and, for a blob, its bytes; `None` when it
    /// does not exist.
    ///
    /// # Errors
    ///
    /// Git that does not run, or output that is not `cat-file --batch`'s.
    pub fn objects(&self, names: &[String]) -> Result<Vec<Option<Object>>, GitError> {
        let mut input = Vec::new();
        for name in names {
            // A name with a newline would be two requests.
            input.extend_from_slice(name.replace('\n', " ").as_bytes());
            input.push(b'\n');
        }
        let out = self.run(&["cat-file", "--batch"], Some(input))?;
        let bad = || GitError {
            command: "cat-file --batch".to_owned(),
            message: "output that is not cat-file's".to_owned(),
        };
        let mut rest = out.as_slice();
        let mut found = Vec::with_capacity(names.len());
        for _ in names {
            let end = rest.iter().position(|&b| b == b'\n').ok_or_else(bad)?;
            let header = String::from_utf8_lossy(&rest[..end]).into_owned();
            rest = &rest[end + 1..];
            let words: Vec<&str> = header.split(' ').collect();
            match words.as_slice() {
                [id, kind, size] if size.parse::<usize>().is_ok() => {
                    let size: usize = size.parse().map_err(|_| bad())?;
                    let body = rest.get(..size).ok_or_else(bad)?;
                    found.push(Some(Object {
                        id: (*id).to_owned(),
                        blob: (*kind == "blob").then(|| body.to_vec()),
                    }));
                    rest = rest.get(size + 1..).ok_or_else(bad)?;
                }
                _ => found.push(None),
            }
        }
        Ok(found)
    }

    /// The names under which the note of `commit` may be: flat, and fanned
    /// out by two and three levels.
    pub fn note_names(commit: &str) -> Vec<String> {
        let mut names = vec![format!("{NOTES_REF}:{commit}")];
        if commit.len() > 4 {
            names.push(format!("{NOTES_REF}:{}/{}", &commit[..2], &commit[2..]));
            names.push(format!(
                "{NOTES_REF}:{}/{}/{}",
                &commit[..2],
                &commit[2..4],
                &commit[4..]
            ));
        }
        names
    }

    /// The note of `commit`, if it has one.
    ///
    /// # Errors
    ///
    /// Git that does not run.
    pub fn note(&self, commit: &str) -> Result<Option<Vec<u8>>, GitError> {
        Ok(self
            .objects(&Self::note_names(commit))?
            .into_iter()
            .flatten()
            .find_map(|o| o.blob))
    }

    /// Replaces the note of `commit` with `text`.
    ///
    /// # Errors
    ///
    /// Git that fails to write it.
    pub fn write_note(&self, commit: &str, text: &str) -> Result<(), GitError> {
        let args = ["notes", "--ref", NOTES_REF, "add", "-f", "-F", "-", commit];
        let outcome = self.outcome(&args, Some(text.as_bytes().to_vec()))?;
        if outcome.status == ExitStatus::Exited(0) {
            return Ok(());
        }
        let message = outcome.stderr.tail_lossy();
        if message.contains("identity unknown") || message.contains("empty ident") {
            // A notes commit needs an author; with none configured, the note
            // is Orcho's own.
            let mut with_identity =
                vec!["-c", "user.name=Orcho", "-c", "user.email=orcho@localhost"];
            with_identity.extend_from_slice(&args);
            self.run(&with_identity, Some(text.as_bytes().to_vec()))?;
            return Ok(());
        }
        Err(GitError {
            command: args.join(" "),
            message: message.trim().to_owned(),
        })
    }

    /// Attaches attestations of `receipts`, signed with `key`, to the note
    /// of `commit`: each about the commit's tree, merged with what the note
    /// holds (one per command and key, the newest kept). The caller
    /// vouches that each receipt proves that tree (a clean checkout of the
    /// commit, or a delivered tree the receipts were adopted for). Returns
    /// the commands attested.
    ///
    /// # Errors
    ///
    /// Git that cannot read the commit or write the note, or a note over
    /// [`MAX_NOTE_BYTES`](crate::MAX_NOTE_BYTES) already there.
    pub fn attach(
        &self,
        commit: &str,
        receipts: &[CommandReceipt],
        key: &SigningKey,
    ) -> Result<Vec<String>, GitError> {
        let (tree, _, note) = self.tree_file_note(commit, None)?;
        let note = note.unwrap_or_default();
        let mut bundle = Bundle::parse(&note).map_err(|e| GitError {
            command: format!("notes --ref {NOTES_REF} show {commit}"),
            message: e.to_string(),
        })?;
        let subject = Subject::new(tree, Some(commit.to_owned()));
        let mut attested = Vec::new();
        for receipt in receipts {
            if bundle.merge(&crate::attest(receipt, &subject, key), &key.public()) {
                attested.push(receipt.command.to_string());
            }
        }
        if !attested.is_empty() {
            self.write_note(commit, &bundle.to_text())?;
        }
        Ok(attested)
    }

    /// The paths with uncommitted changes (untracked files that are not
    /// ignored included): a checkout with none is its commit's tree.
    ///
    /// # Errors
    ///
    /// Git that does not run, or a directory outside a work tree.
    pub fn uncommitted(&self) -> Result<Vec<String>, GitError> {
        let out = self.run(
            &["status", "--porcelain=v1", "-z", "--untracked-files=all"],
            None,
        )?;
        let mut paths = Vec::new();
        let mut entries = out.split(|&b| b == 0).filter(|e| !e.is_empty());
        while let Some(entry) = entries.next() {
            let path = entry.get(3..).unwrap_or_default();
            paths.push(String::from_utf8_lossy(path).into_owned());
            // A rename or copy is followed by its source.
            if matches!(entry.first(), Some(b'R' | b'C')) {
                entries.next();
            }
        }
        Ok(paths)
    }

    /// Whether this is inside a git work tree.
    pub fn is_repository(&self) -> bool {
        self.outcome(&["rev-parse", "--is-inside-work-tree"], None)
            .is_ok_and(|o| o.status == ExitStatus::Exited(0))
    }

    /// Whether there are any attestations here (the notes ref exists).
    pub fn has_notes(&self) -> bool {
        self.outcome(&["rev-parse", "--verify", "-q", NOTES_REF], None)
            .is_ok_and(|o| o.status == ExitStatus::Exited(0))
    }

    /// The commits that have a note.
    ///
    /// # Errors
    ///
    /// Git that does not run.
    pub fn noted_commits(&self) -> Result<HashSet<String>, GitError> {
        let outcome = self.outcome(&["notes", "--ref", NOTES_REF, "list"], None)?;
        let out = outcome.stdout.kept.unwrap_or_default();
        Ok(String::from_utf8_lossy(&out)
            .lines()
            .filter_map(|line| line.split_whitespace().nth(1).map(str::to_owned))
            .collect())
    }

    /// `commit`'s first-parent ancestors, nearest first, at most
    /// [`MAX_ANCESTORS`].
    ///
    /// # Errors
    ///
    /// Git that does not run.
    pub fn ancestors(&self, commit: &str) -> Result<Vec<String>, GitError> {
        let max = format!("--max-count={}", MAX_ANCESTORS + 1);
        let out = self.run(&["rev-list", "--first-parent", &max, commit], None)?;
        Ok(String::from_utf8_lossy(&out)
            .lines()
            .skip(1)
            .map(str::to_owned)
            .collect())
    }

    /// The notes of `commit`'s nearest first-parent ancestors that have
    /// one (at most `max`, nearest first): what names the commit an
    /// attestation was for when `commit` itself has none.
    ///
    /// # Errors
    ///
    /// Git that does not run.
    pub fn ancestor_notes(&self, commit: &str, max: usize) -> Result<Vec<Note>, GitError> {
        let noted = self.noted_commits()?;
        if noted.is_empty() {
            return Ok(Vec::new());
        }
        let near: Vec<String> = self
            .ancestors(commit)?
            .into_iter()
            .filter(|c| noted.contains(c))
            .take(max)
            .collect();
        let mut names = Vec::new();
        for commit in &near {
            names.extend(Self::note_names(commit));
        }
        let objects = self.objects(&names)?;
        let per = Self::note_names(commit).len();
        Ok(near
            .iter()
            .zip(objects.chunks(per))
            .filter_map(|(commit, found)| {
                let bytes = found.iter().flatten().find_map(|o| o.blob.as_deref())?;
                Some(Note::new(commit.clone(), bytes))
            })
            .collect())
    }

    /// Pushes the notes to `remote`; when the remote's notes moved on,
    /// fetches them, merges them line by line with the local ones, and
    /// pushes again.
    ///
    /// # Errors
    ///
    /// A push git refuses after the merge, or a remote it cannot reach.
    pub fn push(&self, remote: &str) -> Result<Shared, GitError> {
        if remote.starts_with('-') {
            return Err(GitError {
                command: format!("push {remote}"),
                message: format!("`{remote}` is not a remote"),
            });
        }
        if !self.has_notes() {
            return Ok(Shared::Nothing);
        }
        let push = ["push", remote, NOTES_REF];
        let outcome = self.outcome(&push, None)?;
        if outcome.status == ExitStatus::Exited(0) {
            return Ok(Shared::Done);
        }
        let message = outcome.stderr.tail_lossy();
        if !(message.contains("rejected") || message.contains("fetch first")) {
            return Err(GitError {
                command: push.join(" "),
                message: message.trim().to_owned(),
            });
        }
        self.fetch_and_merge(remote)?;
        self.run(&push, None)?;
        Ok(Shared::Merged)
    }

    /// Fetches `remote`'s notes and merges them into the local ones: a
    /// note both sides changed keeps every line of both (de-duplicated),
    /// and checking keeps the newest per command and key.
    ///
    /// # Errors
    ///
    /// A remote git cannot reach, or a merge it refuses.
    pub fn fetch_and_merge(&self, remote: &str) -> Result<Shared, GitError> {
        if remote.starts_with('-') {
            return Err(GitError {
                command: format!("fetch {remote}"),
                message: format!("`{remote}` is not a remote"),
            });
        }
        let theirs = format!("refs/notes/remotes/{remote}/orcho");
        let refspec = format!("+{NOTES_REF}:{theirs}");
        let fetched = self.outcome(&["fetch", remote, &refspec], None)?;
        if fetched.status != ExitStatus::Exited(0) {
            let message = fetched.stderr.tail_lossy();
            if message.contains("couldn't find remote ref") {
                return Ok(Shared::Nothing);
            }
            return Err(GitError {
                command: format!("fetch {remote} {refspec}"),
                message: message.trim().to_owned(),
            });
        }
        if !self.has_notes() {
            // Nothing here yet: take theirs.
            self.run(&["update-ref", NOTES_REF, &theirs], None)?;
            return Ok(Shared::Done);
        }
        let merge = [
            "notes",
            "--ref",
            NOTES_REF,
            "merge",
            "-q",
            "-s",
            "cat_sort_uniq",
            &theirs,
        ];
        let outcome = self.outcome(&merge, None)?;
        if outcome.status == ExitStatus::Exited(0) {
            return Ok(Shared::Merged);
        }
        let mut with_identity = vec!["-c", "user.name=Orcho", "-c", "user.email=orcho@localhost"];
        with_identity.extend_from_slice(&merge);
        self.run(&with_identity, None)?;
        Ok(Shared::Merged)
    }
}

/// A commit's tree id, a file of it, and its note.
type TreeFileNote = (String, Option<Vec<u8>>, Option<Vec<u8>>);

/// What a push or fetch of the notes did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Shared {
    /// There were no notes to send (or none on the remote to take).
    Nothing,
    /// They went across as they were.
    Done,
    /// Both sides had moved on: they were merged line by line.
    Merged,
}
