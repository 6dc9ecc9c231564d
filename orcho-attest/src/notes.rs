//! Attestations on the commit: git notes under [`NOTES_REF`].
//!
//! Reading a commit's attestations takes two git processes: `rev-parse`
//! for the commit and its tree, and one `cat-file --batch` for the
//! profile at that commit and its note (a note's path in the notes tree
//! may be fanned out; every layout is asked for at once).

use std::collections::HashSet;

use camino::{Utf8Path, Utf8PathBuf};
use orcho_receipts::exec::{self, ExecOutcome, ExitStatus};

use orcho_receipts::{CommandReceipt, VerificationContract, fingerprint::TreeFile};

use crate::{Bundle, Note, NoteOf, SigningKey, Subject};

/// The notes ref Orcho keeps attestations under.
pub const NOTES_REF: &str = "refs/notes/orcho";

/// How many first-parent ancestors are looked at for an attestation of
/// another commit (to name it when the commit itself has none).
pub const MAX_ANCESTORS: usize = 100;

/// The most output of a git command kept.
const MAX_OUTPUT: usize = 64 << 20;

/// The most blob bytes [`Repo::tree_files`] reads in one `cat-file`.
pub const TREE_BATCH_BYTES: u64 = 32 << 20;

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

impl GitError {
    /// `git command` failed, and said `message`.
    pub fn new(command: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            message: message.into(),
        }
    }
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
    /// The note of the commit's tree, if it has one: what a rebase, an
    /// amend or a squash-merge that keeps the tree keeps.
    pub tree_note: Option<Vec<u8>>,
}

impl AtCommit {
    /// The commit's and its tree's notes, as [`Judge::check`](crate::Judge::check)
    /// reads them.
    pub fn notes(&self) -> Vec<Note> {
        let mut notes = Vec::new();
        if let Some(bytes) = &self.note {
            notes.push(Note::new(self.resolved.commit.clone(), bytes));
        }
        if let Some(bytes) = &self.tree_note {
            notes.push(Note::of(NoteOf::Tree, self.resolved.tree.clone(), bytes));
        }
        notes
    }
}

/// What a base commit holds for judging another by it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AtBase {
    /// The base commit and its tree.
    pub resolved: Resolved,
    /// The profile file at the base, if it has one there.
    pub profile: Option<Vec<u8>>,
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

impl Resolved {
    /// `commit`, whose tree is `tree`.
    pub fn new(commit: impl Into<String>, tree: impl Into<String>) -> Self {
        Self {
            commit: commit.into(),
            tree: tree.into(),
        }
    }
}

impl Repo {
    /// The repository `dir` is in.
    pub fn new(dir: &Utf8Path) -> Self {
        Self {
            dir: dir.to_owned(),
        }
    }

    fn outcome(&self, args: &[&str], stdin: Option<Vec<u8>>) -> Result<ExecOutcome, GitError> {
        self.outcome_keeping(args, stdin, MAX_OUTPUT)
    }

    fn outcome_keeping(
        &self,
        args: &[&str],
        stdin: Option<Vec<u8>>,
        keep: usize,
    ) -> Result<ExecOutcome, GitError> {
        let mut request = exec::git_request(&self.dir, args)
            .keep_stdout(keep)
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
        self.run_keeping(args, stdin, MAX_OUTPUT)
    }

    fn run_keeping(
        &self,
        args: &[&str],
        stdin: Option<Vec<u8>>,
        keep: usize,
    ) -> Result<Vec<u8>, GitError> {
        let outcome = self.outcome_keeping(args, stdin, keep)?;
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
    /// commit, and the notes of the commit and of its tree.
    ///
    /// # Errors
    ///
    /// A revision that names no commit, or git that does not run.
    pub fn at(&self, rev: &str, profile: &str) -> Result<AtCommit, GitError> {
        let (at, _) = self.at_with_base(rev, None, profile)?;
        Ok(at)
    }

    /// [`at`](Self::at) for `rev`, and, when `base` is given, the base
    /// commit and its file `profile`: still two git processes.
    ///
    /// # Errors
    ///
    /// A revision that names no commit, or git that does not run.
    pub fn at_with_base(
        &self,
        rev: &str,
        base: Option<&str>,
        profile: &str,
    ) -> Result<(AtCommit, Option<AtBase>), GitError> {
        let mut revs = vec![rev];
        revs.extend(base);
        let resolved = self.resolve(&revs)?;
        let (commit, tree) = resolved[0].clone();
        let mut names = vec![format!("{commit}:{profile}")];
        let notes = Self::note_names(&commit);
        let per = notes.len();
        names.extend(notes);
        names.extend(Self::note_names(&tree));
        if let Some((base_commit, _)) = resolved.get(1) {
            names.push(format!("{base_commit}:{profile}"));
        }
        let mut objects = self.objects(&names)?.into_iter();
        let file = objects.next().flatten().and_then(|o| o.blob);
        // Each note under any of its names: the whole window is read, so
        // that what follows stays in step.
        let note_in = |objects: &mut std::vec::IntoIter<Option<Object>>| {
            let window: Vec<Option<Object>> = objects.by_ref().take(per).collect();
            window.into_iter().flatten().find_map(|o| o.blob)
        };
        let note = note_in(&mut objects);
        let tree_note = note_in(&mut objects);
        let base = resolved.get(1).map(|(base_commit, base_tree)| AtBase {
            resolved: Resolved {
                commit: base_commit.clone(),
                tree: base_tree.clone(),
            },
            profile: objects.next().flatten().and_then(|o| o.blob),
        });
        Ok((
            AtCommit {
                resolved: Resolved { commit, tree },
                profile: file,
                note,
                tree_note,
            },
            base,
        ))
    }

    /// What `git <args>` prints, as text (lossy), when it succeeds.
    ///
    /// # Errors
    ///
    /// Git that fails or does not run.
    pub fn run_text(&self, args: &[&str]) -> Result<String, GitError> {
        Ok(String::from_utf8_lossy(&self.run(args, None)?).into_owned())
    }

    /// The commit `rev` names and its tree, in one `rev-parse`.
    ///
    /// # Errors
    ///
    /// A revision that names no commit, or git that does not run.
    pub fn resolved(&self, rev: &str) -> Result<Resolved, GitError> {
        let (commit, tree) = self.resolve(&[rev])?.remove(0);
        Ok(Resolved { commit, tree })
    }

    /// The top of this directory's work tree.
    ///
    /// # Errors
    ///
    /// Git that does not run, or a directory outside a work tree.
    pub fn top(&self) -> Result<Utf8PathBuf, GitError> {
        let out = self.run(&["rev-parse", "--show-toplevel"], None)?;
        Ok(Utf8PathBuf::from(String::from_utf8_lossy(&out).trim()))
    }

    /// Where this directory is in its work tree, from the top (`sub/dir/`,
    /// empty at the top), as git names paths.
    ///
    /// # Errors
    ///
    /// Git that does not run, or a directory outside a work tree.
    pub fn prefix(&self) -> Result<String, GitError> {
        let out = self.run(&["rev-parse", "--show-prefix"], None)?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }

    /// The commit and tree each of `revs` names, in one `rev-parse`.
    fn resolve(&self, revs: &[&str]) -> Result<Vec<(String, String)>, GitError> {
        let mut args = vec!["rev-parse".to_owned()];
        for rev in revs {
            if rev.starts_with('-') || rev.is_empty() || rev.contains('\n') {
                return Err(GitError {
                    command: format!("rev-parse {rev}"),
                    message: format!("`{rev}` names no commit here"),
                });
            }
            args.push(format!("{rev}^{{commit}}"));
            args.push(format!("{rev}^{{tree}}"));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let Ok(out) = self.run(&args, None) else {
            // Which one names nothing, said as `commit` says it.
            for rev in revs {
                self.commit(rev)?;
            }
            return Err(GitError {
                command: args.join(" "),
                message: "git could not resolve them".to_owned(),
            });
        };
        let text = String::from_utf8_lossy(&out);
        let ids: Vec<&str> = text.lines().map(str::trim).collect();
        if ids.len() != revs.len() * 2 {
            return Err(GitError {
                command: args.join(" "),
                message: "output that is not rev-parse's".to_owned(),
            });
        }
        Ok(ids
            .chunks(2)
            .map(|pair| (pair[0].to_owned(), pair[1].to_owned()))
            .collect())
    }

    /// In one `cat-file` process: `commit`'s tree and the commit's note
    /// (when it has one).
    fn tree_and_note(&self, commit: &str) -> Result<(String, Option<Vec<u8>>), GitError> {
        let mut names = vec![format!("{commit}^{{tree}}")];
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
        let note = objects.flatten().find_map(|o| o.blob);
        Ok((tree, note))
    }

    /// Reads objects by name (`<rev>:<path>`, `<rev>^{tree}`) in one
    /// process: each one's id and, for a blob, its bytes; `None` when it
    /// does not exist.
    ///
    /// # Errors
    ///
    /// Git that does not run, or output that is not `cat-file --batch`'s.
    pub fn objects(&self, names: &[String]) -> Result<Vec<Option<Object>>, GitError> {
        self.objects_within(names, 0)
    }

    /// [`objects`](Self::objects), keeping up to `bytes` of contents more
    /// than [`MAX_OUTPUT`] allows.
    fn objects_within(
        &self,
        names: &[String],
        bytes: u64,
    ) -> Result<Vec<Option<Object>>, GitError> {
        let mut input = Vec::new();
        for name in names {
            // A name with a newline would be two requests.
            input.extend_from_slice(name.replace('\n', " ").as_bytes());
            input.push(b'\n');
        }
        let keep = MAX_OUTPUT.max(
            usize::try_from(bytes)
                .unwrap_or(usize::MAX)
                .saturating_add(names.len().saturating_mul(128)),
        );
        let out = self.run_keeping(&["cat-file", "--batch"], Some(input), keep)?;
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

    /// Attaches attestations of `receipts`, signed with `key`, to the notes
    /// of `commit` and of its tree: each about the commit's tree, naming
    /// the declaration of the environment `contract` runs its command in,
    /// merged with what each note holds (one per command and key, the
    /// newest kept). The caller
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
        contract: &VerificationContract,
        key: &SigningKey,
    ) -> Result<Vec<String>, GitError> {
        let (tree, commit_note) = self.tree_and_note(commit)?;
        let tree_note = self.note(&tree)?;
        let read = |object: &str, note: Option<Vec<u8>>| {
            Bundle::parse(&note.unwrap_or_default()).map_err(|e| GitError {
                command: format!("notes --ref {NOTES_REF} show {object}"),
                message: e.to_string(),
            })
        };
        let mut on_commit = read(commit, commit_note)?;
        let mut on_tree = read(&tree, tree_note)?;
        let subject = Subject::new(tree.clone(), Some(commit.to_owned()));
        let mut attested = Vec::new();
        let (mut commit_changed, mut tree_changed) = (false, false);
        for receipt in receipts {
            let environment = contract
                .command(receipt.command.as_str())
                .and_then(|spec| contract.environment_for(spec));
            let envelope = crate::attest(receipt, environment.as_deref(), &subject, key);
            let kept_on_commit = on_commit.merge(&envelope, &key.public());
            let kept_on_tree = on_tree.merge(&envelope, &key.public());
            commit_changed |= kept_on_commit;
            tree_changed |= kept_on_tree;
            if kept_on_commit || kept_on_tree {
                attested.push(receipt.command.to_string());
            }
        }
        if commit_changed {
            self.write_note(commit, &on_commit.to_text())?;
        }
        if tree_changed {
            self.write_note(&tree, &on_tree.to_text())?;
        }
        Ok(attested)
    }

    /// Every file of `commit`'s tree with what the fingerprint of a clean
    /// checkout of it takes (see
    /// [`Fingerprinter::of_tree`](orcho_receipts::fingerprint::Fingerprinter::of_tree)),
    /// read from git's objects alone: `ls-tree`, then `cat-file` in batches
    /// of at most [`TREE_BATCH_BYTES`], each blob hashed as it comes.
    ///
    /// # Errors
    ///
    /// Git that does not run, or output that is not git's.
    pub fn tree_files(&self, commit: &str) -> Result<Vec<(Vec<u8>, TreeFile)>, GitError> {
        let listing = self.run(
            &["ls-tree", "-r", "-l", "-z", "--full-tree", commit, "--"],
            None,
        )?;
        let bad = || GitError {
            command: format!("ls-tree -r -l -z {commit}"),
            message: "output that is not ls-tree's".to_owned(),
        };
        let mut files = Vec::new();
        // Per blob: its index in `files`, its id, its size, and how it is
        // taken (`Some(executable)` a file, `None` a symlink).
        let mut blobs: Vec<(usize, String, u64, Option<bool>)> = Vec::new();
        for entry in listing.split(|&b| b == 0).filter(|e| !e.is_empty()) {
            let tab = entry.iter().position(|&b| b == b'\t').ok_or_else(bad)?;
            let (meta, path) = (&entry[..tab], entry[tab + 1..].to_vec());
            let meta = String::from_utf8_lossy(meta);
            let words: Vec<&str> = meta.split_whitespace().collect();
            let [mode, _kind, id, size] = words.as_slice() else {
                return Err(bad());
            };
            let taken = match *mode {
                "160000" => {
                    files.push((
                        path,
                        TreeFile::Submodule {
                            commit: (*id).to_owned(),
                            fingerprint: None,
                        },
                    ));
                    continue;
                }
                "100644" => Some(false),
                "100755" => Some(true),
                "120000" => None,
                _ => return Err(bad()),
            };
            let size: u64 = size.parse().map_err(|_| bad())?;
            blobs.push((files.len(), (*id).to_owned(), size, taken));
            // Replaced once the blob is read.
            files.push((path, TreeFile::Symlink { target: Vec::new() }));
        }
        let mut start = 0;
        while start < blobs.len() {
            let mut end = start;
            let mut bytes = 0u64;
            while end < blobs.len() && (end == start || bytes + blobs[end].2 <= TREE_BATCH_BYTES) {
                bytes += blobs[end].2;
                end += 1;
            }
            let names: Vec<String> = blobs[start..end].iter().map(|b| b.1.clone()).collect();
            let found = self.objects_within(&names, bytes)?;
            for ((index, _, _, taken), object) in blobs[start..end].iter().zip(found) {
                let contents = object.and_then(|o| o.blob).ok_or_else(bad)?;
                files[*index].1 = match taken {
                    Some(executable) => TreeFile::file(*executable, &contents),
                    None => TreeFile::Symlink { target: contents },
                };
            }
            start = end;
        }
        Ok(files)
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
                Some(Note::of(NoteOf::Ancestor, commit.clone(), bytes))
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
