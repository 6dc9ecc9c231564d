//! Proof that travels: a commit judged from its git notes, by itself or by
//! the protected branch it is to be merged into.
//!
//! [`judge_commit`] reads, in two git processes, a commit, its tree, the
//! notes of both, its profile and (with a base) the base's profile; it
//! loads each profile with every file it `extends` from the same commit
//! ([`profile_at`]), and judges every required command with
//! [`Judge`]:
//!
//! - **by itself** (no base): the commit's own `trust.keys`, `required`
//!   list and declarations. A change can then vouch for itself — a branch
//!   that trusts its own key, or declares `argv: [true]`, passes — so this
//!   is for a commit already on the protected branch, or a local check.
//! - **by a base** (the protected branch): the base's keys, `required`
//!   list, declarations and environments decide; the commit's only say what
//!   it changes. A key it adds is not trusted, a command it stops requiring
//!   is still required, a command whose declaration it changes is proven
//!   only by an attestation of the base's declaration (else `unproven`,
//!   with the difference), and every edit of what proves it is listed
//!   ([`ProofEdit`]).

use std::{collections::BTreeMap, fmt};

use camino::{Utf8Component, Utf8Path, Utf8PathBuf};
use orcho_attest::{
    AttestedState, Judge, Judgement, TrustedKey,
    notes::{GitError, Repo, Resolved},
};
use orcho_profile::{Profile, ProofEdit, proof_edits};
use orcho_receipts::VerificationContract;
use orcho_receipts::weakening::{ChangedFile, Detector, Weakening, weakenings};
use serde::Serialize;

/// The source of the delivery gate's findings that say a run's change
/// edits what proves it (its profile's verification, trust, permissions
/// or gates): only an operator may approve such a delivery.
pub const PROOF_EDIT_SOURCE: &str = "orcho: edits what proves it";

/// The source of a delivery finding for a change that weakens its own
/// proof otherwise (a test skipped or deleted, fewer assertions, the
/// runner's configuration or test script changed).
pub const WEAKENING_SOURCE: &str = "orcho: weakens its own proof";

/// How many first-parent ancestors' notes are read to name the commit a
/// stale attestation was made for.
const ANCESTOR_NOTES: usize = 20;

/// Where the keys, the `required` list and the declarations a commit is
/// judged by came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "from", rename_all = "snake_case")]
#[non_exhaustive]
pub enum TrustSource {
    /// The commit judged itself: its own profile decided.
    Commit,
    /// The base's profile decided.
    Base {
        /// The base as given (`main`, `origin/main`).
        rev: String,
        /// The commit it names.
        commit: String,
    },
}

impl fmt::Display for TrustSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Commit => f.write_str("commit"),
            Self::Base { rev, .. } => write!(f, "base {rev}"),
        }
    }
}

/// A commit judged from its notes.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CommitProof {
    /// The commit.
    pub commit: String,
    /// Its tree.
    pub tree: String,
    /// What it was judged by.
    pub trust_source: TrustSource,
    /// Each required command's state, and what was considered for it.
    pub judgement: Judgement,
    /// With a base: what the commit changes of what proves it.
    pub edits: Vec<ProofEdit>,
    /// How many keys the judge trusts.
    pub trusted_keys: usize,
    /// Whether there are no attestations in the repository at all (the
    /// notes ref does not exist: after a clone, they were not fetched).
    pub no_notes_here: bool,
    /// The judging profile's verification contract.
    pub contract: VerificationContract,
}

impl CommitProof {
    /// Whether every required command is present.
    pub fn ready(&self) -> bool {
        self.judgement.ready()
    }
}

/// Why a commit could not be judged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommitProofError {
    /// The directory is not in a git work tree.
    #[error("`{0}` is not in a git repository: attestations are kept on commits")]
    NotARepository(Utf8PathBuf),
    /// A revision names no commit, or git failed.
    #[error(transparent)]
    Git(#[from] GitError),
    /// The commit (or the base) holds no profile file.
    #[error("{which} {commit} has no `{file}`: nothing says which commands it must prove")]
    NoProfile {
        /// `commit` or `base`.
        which: &'static str,
        /// The commit, shortened.
        commit: String,
        /// The profile's path in the repository.
        file: String,
    },
    /// The profile at a commit does not load.
    #[error("the profile at {which} {commit} does not load")]
    Profile {
        /// `commit` or `base`.
        which: &'static str,
        /// The commit, shortened.
        commit: String,
        /// Why.
        #[source]
        source: Box<orcho_profile::ProfileError>,
    },
}

/// Judges `rev` from its notes (see the [module docs](self)): by `base`
/// when given, else by itself. `profile` is the profile's path from the
/// repository's root (`orcho.yaml`).
///
/// # Errors
///
/// A directory outside a git work tree, a revision that names no commit, a
/// commit without the profile, or a profile that does not load.
pub fn judge_commit(
    dir: &Utf8Path,
    rev: &str,
    base: Option<&str>,
    profile: &str,
) -> Result<CommitProof, CommitProofError> {
    let repo = Repo::new(dir);
    // Two git processes in all: outside a repository, the first fails, and
    // only then is it asked why.
    let (at, base_at) = match repo.at_with_base(rev, base, &format!("./{profile}")) {
        Ok(found) => found,
        Err(_) if !repo.is_repository() => {
            return Err(CommitProofError::NotARepository(dir.to_owned()));
        }
        Err(e) => return Err(e.into()),
    };
    let commit = at.resolved.commit.clone();
    let own = load_at(
        &repo,
        "commit",
        &at.resolved,
        at.profile.as_deref(),
        profile,
    )?;
    let base_profile = match &base_at {
        Some(b) => Some(load_at(
            &repo,
            "base",
            &b.resolved,
            b.profile.as_deref(),
            profile,
        )?),
        None => None,
    };
    let contract_of = |p: &Profile| p.verification.clone().unwrap_or_default();
    let keys_of = |p: &Profile| -> Vec<TrustedKey> {
        p.trust.as_ref().map(|t| t.keys.clone()).unwrap_or_default()
    };
    let own_contract = contract_of(&own);
    let own_keys = keys_of(&own);
    let (contract, keys, trust_source, edits) = match (&base_profile, base, &base_at) {
        (Some(b), Some(rev), Some(at)) => (
            contract_of(b),
            keys_of(b),
            TrustSource::Base {
                rev: rev.to_owned(),
                commit: at.resolved.commit.clone(),
            },
            proof_edits(b, &own),
        ),
        _ => (
            own_contract.clone(),
            own_keys.clone(),
            TrustSource::Commit,
            Vec::new(),
        ),
    };
    let judge = if base.is_some() {
        Judge::by_base(&contract, &keys, &own_contract, &own_keys)
    } else {
        Judge::new(&contract, &keys)
    };
    let mut notes = at.notes();
    let mut judgement = judge.check(&at.resolved.tree, &notes);
    let mut no_notes_here = false;
    if judgement
        .commands
        .iter()
        .any(|c| c.state == AttestedState::Missing)
    {
        no_notes_here = notes.is_empty() && !repo.has_notes();
        if !no_notes_here {
            notes.extend(repo.ancestor_notes(&commit, ANCESTOR_NOTES)?);
            judgement = judge.check(&at.resolved.tree, &notes);
        }
    }
    Ok(CommitProof {
        commit,
        tree: at.resolved.tree,
        trust_source,
        judgement,
        edits,
        trusted_keys: keys.len(),
        no_notes_here,
        contract,
    })
}

fn load_at(
    repo: &Repo,
    which: &'static str,
    resolved: &Resolved,
    bytes: Option<&[u8]>,
    file: &str,
) -> Result<Profile, CommitProofError> {
    let short = short(&resolved.commit);
    if bytes.is_none() {
        return Err(CommitProofError::NoProfile {
            which,
            commit: short.to_owned(),
            file: file.to_owned(),
        });
    }
    profile_at(repo, &resolved.commit, file, bytes).map_err(|source| CommitProofError::Profile {
        which,
        commit: short.to_owned(),
        source: Box::new(source),
    })
}

/// The profile `file` (a path from the repository's root) as `commit`
/// holds it, with every file it `extends` read from the same commit;
/// `first` is the file's bytes when the caller has read them already.
/// Errors name files as `<commit>:<path>`.
///
/// # Errors
///
/// A profile the commit does not hold, or one that does not load (its
/// `extends` leaving the repository, or naming a file the commit does not
/// hold, among the reasons).
pub fn profile_at(
    repo: &Repo,
    commit: &str,
    file: &str,
    first: Option<&[u8]>,
) -> Result<Profile, orcho_profile::ProfileError> {
    let first = first.map(<[u8]>::to_vec);
    // Paths carry the commit, so that errors say where the file is.
    let prefix = format!("{}:", short(commit));
    let read = |path: &Utf8Path| -> Option<Vec<u8>> {
        // The first file carries the commit; a file it extends from the
        // repository's top does not.
        let path = path.as_str();
        let path = normalize(path.strip_prefix(&prefix).unwrap_or(path).into())?;
        if path.as_str() == file
            && let Some(bytes) = &first
        {
            return Some(bytes.clone());
        }
        repo.objects(&[format!("{commit}:./{path}")])
            .ok()?
            .into_iter()
            .flatten()
            .find_map(|o| o.blob)
    };
    Profile::load_from(format!("{prefix}{file}"), &read)
}

/// `path` without `.` and `..` (`None` when it climbs out of the root or
/// is absolute).
fn normalize(path: &Utf8Path) -> Option<Utf8PathBuf> {
    let mut out = Utf8PathBuf::new();
    for part in path.components() {
        match part {
            Utf8Component::Normal(name) => out.push(name),
            Utf8Component::CurDir => {}
            Utf8Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            _ => return None,
        }
    }
    Some(out)
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_that_leaves_the_repository_is_none() {
        assert_eq!(normalize("a/./b/../c.yaml".into()), Some("a/c.yaml".into()));
        assert_eq!(normalize("../x.yaml".into()), None);
        assert_eq!(normalize("/etc/passwd".into()), None);
    }
}

/// What [`sign_commit`] attached, and what it left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Signed {
    /// The commit.
    pub commit: String,
    /// Its tree.
    pub tree: String,
    /// The commands attested (new to the notes).
    pub attested: Vec<String>,
    /// The commands whose receipts prove this tree but were attested
    /// already, as recent or more.
    pub unchanged: Vec<String>,
    /// The commands left out, each with why.
    pub left_out: Vec<LeftOut>,
}

/// A command [`sign_commit`] did not attest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LeftOut {
    /// The command.
    pub command: String,
    /// Why, in words.
    pub why: String,
}

/// Why a commit's receipts could not be signed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SignError {
    /// The directory is not in a git work tree.
    #[error("`{0}` is not in a git repository: attestations are kept on commits")]
    NotARepository(Utf8PathBuf),
    /// Git failed, or a revision names no commit.
    #[error(transparent)]
    Git(#[from] GitError),
    /// The receipts could not be read.
    #[error("the receipts could not be classified")]
    Receipts(#[source] orcho_receipts::ReceiptError),
    /// The tree's fingerprint could not be taken.
    #[error("the fingerprint of the commit's tree could not be taken")]
    Tree(#[source] orcho_receipts::FingerprintError),
}

/// Signs with `key` the receipts `verifier` holds that prove `rev`'s tree
/// exactly, and attaches the attestations to the notes of the commit and
/// its tree. Runs no command of the repository: each receipt is
/// classified against the verifier's contract (present, vacuous, or
/// failed against these files), and its subject compared with the
/// fingerprint of the commit's tree taken from git's objects (never the
/// work tree), so that only what the commit holds is attested. The result
/// each states is the one `orcho verify --attest` gives: `PASSED`,
/// `WARNED` (vacuous), `FAILED`.
///
/// # Errors
///
/// A directory outside a git work tree, a revision that names no commit,
/// receipts that cannot be read, a tree with a submodule, or git that
/// cannot write the notes.
pub fn sign_commit(
    verifier: &orcho_receipts::Verifier,
    rev: &str,
    key: &orcho_attest::SigningKey,
) -> Result<Signed, SignError> {
    use orcho_receipts::{LoadedReceipt, ReceiptStatus};

    let checkout = verifier.checkout();
    let repo = Repo::new(checkout);
    if !repo.is_repository() {
        return Err(SignError::NotARepository(checkout.to_owned()));
    }
    let resolved = repo.resolved(rev)?;
    let prefix = repo.prefix()?;
    let top = repo.top()?;
    let fingerprinter = verifier.fingerprinter();
    let files: Vec<_> = tree_files(&repo, &top, &resolved.commit, &fingerprinter, 0)?
        .into_iter()
        .filter_map(|(path, file)| {
            let rest = path.strip_prefix(prefix.as_bytes())?;
            Some((rest.to_vec(), file))
        })
        .collect();
    let contract = verifier.contract();
    let mut by_subject: BTreeMap<Vec<Utf8PathBuf>, orcho_core::Digest> = BTreeMap::new();
    let mut receipts = Vec::new();
    let mut left_out = Vec::new();
    let short_commit = short(&resolved.commit).to_owned();
    for classified in verifier.classify().map_err(SignError::Receipts)? {
        let command = classified.command.to_string();
        let mut leave = |why: String| {
            left_out.push(LeftOut {
                command: command.clone(),
                why,
            })
        };
        match &classified.status {
            ReceiptStatus::Present | ReceiptStatus::Vacuous { .. } => {}
            ReceiptStatus::Failed { stale, .. } if stale.is_empty() => {}
            ReceiptStatus::Missing => {
                if classified.required {
                    leave("no receipt: `orcho verify` runs it".to_owned());
                }
                continue;
            }
            other => {
                if classified.required {
                    leave(format!("its receipt is {}", other.as_str()));
                }
                continue;
            }
        }
        let LoadedReceipt::Valid(receipt) =
            verifier.store().load_command_receipt(&classified.command)
        else {
            leave("its receipt cannot be read".to_owned());
            continue;
        };
        let subject = contract
            .command(receipt.command.as_str())
            .and_then(|spec| contract.environment_for(spec))
            .map(|e| e.subject.clone())
            .unwrap_or_default();
        let digest = match by_subject.get(&subject) {
            Some(digest) => *digest,
            None => {
                let digest = fingerprinter
                    .of_tree(checkout, files.clone(), &subject)
                    .map_err(SignError::Tree)?
                    .digest;
                by_subject.insert(subject, digest);
                digest
            }
        };
        if receipt.subject_before != digest || receipt.subject_after != digest {
            leave(format!(
                "its receipt proves files that differ from commit {short_commit}'s tree \
                 (uncommitted changes, or a checkout of another commit)"
            ));
            continue;
        }
        receipts.push(receipt);
    }
    let attested = repo.attach(&resolved.commit, &receipts, contract, key)?;
    let unchanged = receipts
        .iter()
        .map(|r| r.command.to_string())
        .filter(|c| !attested.contains(c))
        .collect();
    Ok(Signed {
        commit: resolved.commit,
        tree: resolved.tree,
        attested,
        unchanged,
        left_out,
    })
}

/// How deep submodules inside submodules are followed.
const MAX_SUBMODULE_DEPTH: usize = 8;

/// The files of `commit`'s tree in the repository at `top` (its work tree's
/// top), each checked-out submodule with the fingerprint of its own tree
/// at the commit the tree records, taken from its objects the same way.
fn tree_files(
    repo: &Repo,
    top: &Utf8Path,
    commit: &str,
    fingerprinter: &orcho_receipts::fingerprint::Fingerprinter,
    depth: usize,
) -> Result<Vec<(Vec<u8>, orcho_receipts::fingerprint::TreeFile)>, SignError> {
    use orcho_receipts::fingerprint::TreeFile;
    let mut files = repo.tree_files(commit)?;
    for (path, file) in &mut files {
        let TreeFile::Submodule {
            commit: sub_commit,
            fingerprint,
        } = file
        else {
            continue;
        };
        let Ok(rel) = std::str::from_utf8(path) else {
            continue;
        };
        let sub = top.join(rel);
        if !orcho_core::fs::is_git_top(sub.as_std_path()) || depth >= MAX_SUBMODULE_DEPTH {
            continue;
        }
        let sub_repo = Repo::new(&sub);
        let inner = tree_files(&sub_repo, &sub, sub_commit, fingerprinter, depth + 1)?;
        *fingerprint = Some(
            fingerprinter
                .of_tree(&sub, inner, &[])
                .map_err(SignError::Tree)?
                .digest,
        );
    }
    Ok(files)
}

/// What the profile `file` (a path from the repository's root) in the work
/// tree at `dir` changes of what proves a change, against the same file at
/// `rev` (`HEAD`, or the protected branch): the edits a person must see.
/// A profile that `rev` does not hold is compared with an empty one; one
/// the work tree does not hold, or that does not load there, is one edit
/// that says so.
///
/// # Errors
///
/// A directory outside a git work tree, a revision that names no commit,
/// or a profile at `rev` that does not load.
pub fn edits_since(
    dir: &Utf8Path,
    rev: &str,
    file: &str,
) -> Result<Vec<ProofEdit>, CommitProofError> {
    profile_edits_since(dir, rev, file).map(|(edits, _)| edits)
}

/// [`edits_since`], and whether `rev` holds the profile at all (when it
/// does not, the edits are what a new profile declares).
///
/// # Errors
///
/// As [`edits_since`].
pub fn profile_edits_since(
    dir: &Utf8Path,
    rev: &str,
    file: &str,
) -> Result<(Vec<ProofEdit>, bool), CommitProofError> {
    let repo = Repo::new(dir);
    // One `cat-file`: the commit, and the file at it (`./` is from `dir`).
    let mut found = repo
        .objects(&[format!("{rev}^{{commit}}"), format!("{rev}:./{file}")])
        .map_err(|_| CommitProofError::NotARepository(dir.to_owned()))?
        .into_iter();
    let Some(commit) = found.next().flatten().map(|o| o.id) else {
        return Err(CommitProofError::Git(GitError::new(
            format!("rev-parse {rev}"),
            format!("`{rev}` names no commit here"),
        )));
    };
    let committed = found.next().flatten().and_then(|o| o.blob);
    let had = committed.is_some();
    let resolved = Resolved::new(commit, String::new());
    let in_repo = file.to_owned();
    let working = std::fs::read(dir.join(file)).ok();
    // The same file is the same profile, unless it extends another file
    // (which may have changed on its own).
    let extends_a_file = |bytes: &[u8]| {
        String::from_utf8_lossy(bytes).lines().any(|l| {
            l.strip_prefix("extends:")
                .map(|v| v.trim().trim_matches(|c| c == '"' || c == '\''))
                .is_some_and(|v| !v.is_empty() && !v.starts_with("builtin:"))
        })
    };
    if committed == working && !working.as_deref().is_some_and(extends_a_file) {
        return Ok((Vec::new(), had));
    }
    let shown = |what: String| ProofEdit::whole(file, what);
    if working.is_none() {
        return Ok((
            vec![shown(format!(
                "the change removes `{file}`: nothing says what proves it"
            ))],
            had,
        ));
    };
    let base = match committed {
        Some(bytes) => {
            profile_at(&repo, &resolved.commit, &in_repo, Some(&bytes)).map_err(|source| {
                CommitProofError::Profile {
                    which: "base",
                    commit: short(&resolved.commit).to_owned(),
                    source: Box::new(source),
                }
            })?
        }
        // A profile the change adds: every part of it is new.
        // (the least profile that loads: one phase, no gates, nothing
        // verified or trusted)
        None => Profile::from_yaml_str(
            "schema: 1\nname: none\nphases:\n  - { name: none, role: implement }\n",
        )
        .map_err(|source| CommitProofError::Profile {
            which: "base",
            commit: short(&resolved.commit).to_owned(),
            source: Box::new(source),
        })?,
    };
    let changed = match Profile::load(dir.join(file)) {
        Ok(profile) => profile,
        Err(e) => {
            return Ok((
                vec![shown(format!(
                    "`{file}` does not load: {}",
                    orcho_core::error_chain(&e)
                ))],
                had,
            ));
        }
    };
    Ok((proof_edits(&base, &changed), had))
}

/// The most files of a change read for [`review`]: past it, the rest are
/// named as not read (the ones most likely to weaken a proof are read
/// first).
pub const MAX_CHANGED_FILES: usize = 5000;

/// One file of a raw diff: its path now and before, and its blob ids
/// before and after (`None`: absent; after, in the work tree: read from
/// disk).
struct RawEntry {
    now: String,
    before: String,
    old: Option<String>,
    new: Option<String>,
    exists: bool,
}

/// The files a change holds, each before and after: the work tree at `dir`
/// against the commit `base` (files git does not ignore, untracked ones
/// included), or, with `to`, the commit `to` against `base`; and how many
/// more there were past [`MAX_CHANGED_FILES`]. Only files a weakening can
/// be found in are read (source files of the languages read, runner
/// configuration, test scripts); an untracked file with the contents of a
/// deleted one is that file, moved.
///
/// # Errors
///
/// Git that does not run, or a change too large to read at once.
pub fn changed_files(
    dir: &Utf8Path,
    base: &str,
    to: Option<&str>,
) -> Result<(Vec<ChangedFile>, usize), CommitProofError> {
    let repo = Repo::new(dir);
    // The raw diff names each side's blob: no path is looked up in a tree
    // again. Against the work tree, the index's stat information is taken
    // as it is (no refresh): a file only touched is read and found the
    // same.
    let listing = match to {
        Some(to) => repo.run_text(&[
            "diff-tree",
            "-r",
            "-z",
            "--raw",
            "-M",
            "--no-ext-diff",
            "--relative",
            base,
            to,
            "--",
        ])?,
        None => repo.run_text(&["diff-index", "-z", "--raw", "-M", "--relative", base, "--"])?,
    };
    let id = |word: &str| (!word.chars().all(|c| c == '0')).then(|| word.to_owned());
    let mut entries: Vec<RawEntry> = Vec::new();
    let mut words = listing.split('\0').filter(|w| !w.is_empty());
    while let Some(header) = words.next() {
        // `:old_mode new_mode old_id new_id status`
        let fields: Vec<&str> = header.trim_start_matches(':').split(' ').collect();
        let [_, new_mode, old, new, status] = fields.as_slice() else {
            break;
        };
        let Some(first) = words.next() else { break };
        let kind = status.chars().next();
        // A submodule (a gitlink) holds no file to read here.
        if *new_mode == "160000" {
            if matches!(kind, Some('R' | 'C')) {
                words.next();
            }
            continue;
        }
        let new = if to.is_some() { id(new) } else { None };
        match kind {
            Some('R' | 'C') => {
                let Some(second) = words.next() else { break };
                entries.push(RawEntry {
                    now: second.to_owned(),
                    before: first.to_owned(),
                    old: id(old),
                    new,
                    exists: true,
                });
            }
            Some('A') => entries.push(RawEntry {
                now: first.to_owned(),
                before: first.to_owned(),
                old: None,
                new,
                exists: true,
            }),
            Some('D') => entries.push(RawEntry {
                now: first.to_owned(),
                before: first.to_owned(),
                old: id(old),
                new: None,
                exists: false,
            }),
            _ => entries.push(RawEntry {
                now: first.to_owned(),
                before: first.to_owned(),
                old: id(old),
                new,
                exists: true,
            }),
        }
    }
    if to.is_none() {
        let untracked =
            repo.run_text(&["ls-files", "-z", "-o", "--exclude-per-directory=.gitignore"])?;
        for path in untracked.split('\0').filter(|p| !p.is_empty()) {
            if !path.starts_with(orcho_receipts::fingerprint::STORE_DIR_NAME) {
                entries.push(RawEntry {
                    now: path.to_owned(),
                    before: path.to_owned(),
                    old: None,
                    new: None,
                    exists: true,
                });
            }
        }
    }
    // Only what a weakening can be found in.
    entries.retain(|e| {
        orcho_receipts::weakening::may_weaken(Utf8Path::new(&e.now))
            || orcho_receipts::weakening::may_weaken(Utf8Path::new(&e.before))
    });
    // Past the most read, the files most likely to weaken the proof first.
    if entries.len() > MAX_CHANGED_FILES {
        entries
            .sort_by_key(|e| !orcho_receipts::weakening::likely_to_weaken(Utf8Path::new(&e.now)));
    }
    let unread = entries.len().saturating_sub(MAX_CHANGED_FILES);
    entries.truncate(MAX_CHANGED_FILES);
    // Every side git holds, by id, in one `cat-file` (the work tree's are
    // read from disk).
    let ids: Vec<String> = entries
        .iter()
        .flat_map(|e| e.old.iter().chain(&e.new).cloned())
        .collect();
    // git reads its objects while the work tree's files are read here.
    let (objects, mut on_disk) = std::thread::scope(|scope| {
        let objects = scope.spawn(|| {
            if ids.is_empty() {
                Ok(Vec::new())
            } else {
                repo.objects(&ids)
            }
        });
        let on_disk: Vec<Option<Vec<u8>>> = entries
            .iter()
            .map(|e| {
                (to.is_none() && e.exists)
                    .then(|| std::fs::read(dir.join(&e.now)).ok())
                    .flatten()
            })
            .collect();
        (objects.join(), on_disk)
    });
    let objects = objects.map_err(|_| {
        CommitProofError::Git(GitError::new(
            "cat-file --batch",
            "the thread reading git's objects failed",
        ))
    })??;
    let mut blobs: std::collections::HashMap<String, Vec<u8>> = std::collections::HashMap::new();
    for object in objects.into_iter().flatten() {
        if let Some(blob) = object.blob {
            blobs.insert(object.id, blob);
        }
    }
    let mut out: Vec<ChangedFile> = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let before = e.old.as_ref().and_then(|id| blobs.get(id).cloned());
        let after = if !e.exists {
            None
        } else if to.is_some() {
            e.new.as_ref().and_then(|id| blobs.get(id).cloned())
        } else {
            on_disk.get_mut(i).and_then(Option::take)
        };
        let mut file = ChangedFile::new(e.now.clone(), before, after);
        if e.before != e.now {
            file = file.renamed_from(e.before.clone());
        }
        out.push(file);
    }
    // A file deleted from the index and found again, untracked, elsewhere
    // (`mv` without `git add`): moved, not deleted.
    if to.is_none() {
        let mut added: std::collections::HashMap<Vec<u8>, usize> = std::collections::HashMap::new();
        for (i, file) in out.iter().enumerate() {
            if file.before.is_none()
                && let Some(after) = &file.after
            {
                added.entry(after.clone()).or_insert(i);
            }
        }
        let mut moved = Vec::new();
        for (i, file) in out.iter().enumerate() {
            if file.after.is_none()
                && let Some(before) = &file.before
                && let Some(&to) = added.get(before)
            {
                moved.push((i, to));
                added.remove(before);
            }
        }
        let mut gone = Vec::new();
        for (deleted, added) in moved {
            let from = out[deleted].path.clone();
            let before = out[deleted].before.take();
            let to = &mut out[added];
            *to = ChangedFile::new(to.path.clone(), before, to.after.take()).renamed_from(from);
            gone.push(deleted);
        }
        gone.sort_unstable();
        for i in gone.into_iter().rev() {
            out.remove(i);
        }
    }
    Ok((out, unread))
}

/// What a change does to weaken its own proof: its test files, runner
/// configuration and test scripts read by
/// [`weakenings`], and the edits of
/// its profile (when the base had one) as
/// [`ProfileEdit`](orcho_receipts::weakening::Detector::ProfileEdit)s. Each
/// is for a person to see before the change counts as proven.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Review {
    /// What weakens the change's proof, profile edits first.
    pub weakenings: Vec<Weakening>,
    /// The edits of a profile the base did not have: what it declares,
    /// shown, never a weakening (there was no proof to weaken).
    pub profile_added: Vec<ProofEdit>,
    /// The commit the change was read against.
    pub base: String,
}

/// Reviews the work tree at `dir` against `rev` (see [`Review`]); the
/// profile, when there is one, is `profile_file`, relative to `dir`.
///
/// # Errors
///
/// A revision that names no commit, or git that does not run. A profile
/// that cannot be compared is a weakening, not an error.
pub fn review(
    dir: &Utf8Path,
    rev: &str,
    profile_file: Option<&str>,
) -> Result<Review, CommitProofError> {
    let base = Repo::new(dir).resolved(rev)?.commit;
    Ok(review_at(dir, rev, &base, profile_file))
}

/// [`review`] against the commit `base` (`rev` as given, for what is said).
fn review_at(dir: &Utf8Path, rev: &str, base: &str, profile_file: Option<&str>) -> Review {
    let mut review = Review {
        base: base.to_owned(),
        ..Review::default()
    };
    // A change that cannot be read is not a change without weakenings.
    let (files, unread) = match changed_files(dir, base, None) {
        Ok(read) => read,
        Err(e) => {
            review.weakenings.push(unreadable(rev, &e));
            return review;
        }
    };
    if let Some(profile_file) = profile_file {
        // A file of the checkout is named relative to it.
        let relative = |file: &str| {
            Utf8Path::new(file)
                .strip_prefix(dir)
                .map_or_else(|_| file.to_owned(), |p| p.to_string())
        };
        let edit = |e: &ProofEdit| {
            Weakening::new(
                Detector::ProfileEdit,
                relative(&e.file),
                e.line.and_then(|l| u32::try_from(l).ok()),
                format!("{}: {}", e.section, e.what),
            )
        };
        // A profile the base did not have weakens nothing: there was no
        // proof to weaken.
        match profile_edits_since(dir, rev, profile_file) {
            Ok((edits, false)) => {
                review.profile_added = edits
                    .into_iter()
                    .map(|mut e| {
                        e.file = relative(&e.file);
                        e
                    })
                    .collect();
            }
            Ok((edits, true)) => review.weakenings.extend(edits.iter().map(edit)),
            Err(e) => review.weakenings.push(Weakening::new(
                Detector::ProfileEdit,
                profile_file,
                None,
                format!(
                    "`{profile_file}` cannot be compared with `{rev}`: {}",
                    orcho_core::error_chain(&e)
                ),
            )),
        }
    }
    review.weakenings.extend(weakenings(&files));
    if unread > 0 {
        review.weakenings.push(unread_weakening(unread));
    }
    review
}

/// The context of the key the review cache is sealed with, derived from the
/// receipt key ([`ReceiptKey::derive`](orcho_receipts::ReceiptKey::derive)).
pub const REVIEW_CACHE_SEAL: &str = "orcho review cache seal v1";

/// The last [`review`] of a checkout, kept in the store's cache and sealed:
/// the same work tree (by its subject fingerprints) against the same base
/// commit reviews the same.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CachedReview {
    base: String,
    subjects: Vec<String>,
    profile: Option<String>,
    review: Review,
    seal: String,
}

impl CachedReview {
    fn seal(&self, key: &[u8; 32]) -> String {
        let body = serde_json::to_vec(&(&self.base, &self.subjects, &self.profile, &self.review))
            .unwrap_or_default();
        blake3::keyed_hash(key, &body).to_hex().to_string()
    }
}

/// Where [`review_cached`] keeps its review, and the key it seals it with.
#[derive(Debug, Clone, Copy)]
pub struct ReviewCache<'a> {
    /// The cache file.
    pub file: &'a Utf8Path,
    /// The seal's key ([`REVIEW_CACHE_SEAL`]).
    pub key: &'a [u8; 32],
}

/// [`review`], kept: when the work tree's subject fingerprints
/// (`subjects`, as [`ReadinessSummary::subjects`](orcho_receipts::ReadinessSummary::subjects)
/// gives them) and the base commit are those of the last review in
/// `cache`, it is that review, with no git process past resolving `rev`.
/// A cache that is missing, torn, sealed with another key or about another
/// state is read again from git (and written).
///
/// # Errors
///
/// As [`review`].
pub fn review_cached(
    dir: &Utf8Path,
    rev: &str,
    profile_file: Option<&str>,
    subjects: &[orcho_core::Digest],
    cache: Option<ReviewCache<'_>>,
) -> Result<Review, CommitProofError> {
    let base = Repo::new(dir).resolved(rev)?.commit;
    let (Some(cache), false) = (cache, subjects.is_empty()) else {
        return Ok(review_at(dir, rev, &base, profile_file));
    };
    let subjects: Vec<String> = subjects.iter().map(ToString::to_string).collect();
    let profile = profile_file.map(str::to_owned);
    if let Ok(bytes) = std::fs::read(cache.file)
        && let Ok(cached) = serde_json::from_slice::<CachedReview>(&bytes)
        && cached.base == base
        && cached.subjects == subjects
        && cached.profile == profile
        && sealed(&cached.seal(cache.key), &cached.seal)
    {
        return Ok(cached.review);
    }
    let review = review_at(dir, rev, &base, profile_file);
    let mut cached = CachedReview {
        base,
        subjects,
        profile,
        review,
        seal: String::new(),
    };
    cached.seal = cached.seal(cache.key);
    // A cache that cannot be written is read again next time.
    if let Ok(bytes) = serde_json::to_vec(&cached) {
        if let Some(parent) = cache.file.parent() {
            let _ = orcho_core::fs::create_dir_all(parent);
        }
        let _ = orcho_core::fs::write_atomic(cache.file, &bytes);
    }
    Ok(cached.review)
}

/// What the commit `to` does to weaken its proof against `rev` (a pull
/// request's change against its base, read from where they part): test
/// files, runner configuration
/// and test scripts (profile edits are the attestation judgement's, see
/// [`judge_commit`]).
///
/// # Errors
///
/// As [`changed_files`].
pub fn commit_weakenings(
    dir: &Utf8Path,
    rev: &str,
    to: &str,
) -> Result<Vec<Weakening>, CommitProofError> {
    // Against where the change left the base: what the base gained since
    // is not the change's.
    let repo = Repo::new(dir);
    let (base, to) = (repo.resolved(rev)?.commit, repo.resolved(to)?.commit);
    let fork = repo
        .run_text(&["merge-base", &base, &to])
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty());
    let (files, unread) = match changed_files(dir, fork.as_deref().unwrap_or(&base), Some(&to)) {
        Ok(read) => read,
        Err(e) => return Ok(vec![unreadable(rev, &e)]),
    };
    let mut found = weakenings(&files);
    if unread > 0 {
        found.push(unread_weakening(unread));
    }
    Ok(found)
}

/// A change that could not be read against `rev`: what it does is unknown.
fn unreadable(rev: &str, e: &CommitProofError) -> Weakening {
    Weakening::new(
        Detector::Unread,
        ".",
        None,
        format!(
            "the change could not be read against `{rev}`, so what it does to the tests is \
             unknown: {}",
            orcho_core::error_chain(e)
        ),
    )
}

fn unread_weakening(unread: usize) -> Weakening {
    Weakening::new(
        Detector::Unread,
        ".",
        None,
        format!(
            "{unread} more changed files than the {MAX_CHANGED_FILES} read: what they do to the \
             tests is unknown"
        ),
    )
}

/// The id of a weakening of the change against the commit `base`, as an
/// acknowledgement names it: the base, its detector, file, line and words
/// (a weakening that moves or changes, or the same against another base,
/// is a new one).
pub fn weakening_id(base: &str, weakening: &Weakening) -> String {
    let text = format!("{base}\0{weakening}");
    orcho_core::Digest::derive("orcho weakening id v2", text.as_bytes()).to_string()
}

/// The context of the key acknowledgements are sealed with, derived from
/// the receipt key ([`ReceiptKey::derive`](orcho_receipts::ReceiptKey::derive)).
pub const ACKNOWLEDGEMENT_SEAL: &str = "orcho weakening acknowledgement seal v1";

const ACK_SCHEMA: orcho_core::SchemaVersion = orcho_core::SchemaVersion::new(1);

/// One acknowledgement: the weakenings a person saw, sealed with a key the
/// store's writer holds, so that a line appended by anyone else counts for
/// nothing.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AcknowledgedV1 {
    schema: orcho_core::SchemaVersion,
    at: orcho_core::Timestamp,
    /// What the change was read against.
    against: String,
    /// The weakenings' ids ([`weakening_id`]).
    ids: Vec<String>,
    /// The commands whose test counts the person accepted (a
    /// [`fewer_tests`](orcho_receipts::weakening::fewer_tests) finding):
    /// their counts from now on are compared with what runs after.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    counts: Vec<String>,
    /// The weakenings in words, for a person reading the file.
    what: Vec<String>,
    /// The keyed digest of the fields above.
    seal: String,
}

fn ack_seal(key: &[u8; 32], record: &AcknowledgedV1) -> String {
    let mut hasher = blake3::Hasher::new_keyed(key);
    hasher.update(record.at.to_string().as_bytes()).update(&[0]);
    hasher.update(record.against.as_bytes()).update(&[0]);
    for id in &record.ids {
        hasher.update(id.as_bytes()).update(&[0]);
    }
    hasher.update(&[1]);
    for command in &record.counts {
        hasher.update(command.as_bytes()).update(&[0]);
    }
    hasher.finalize().to_hex().to_string()
}

/// What a person saw: the weakenings of a change (against a base), and the
/// commands whose test counts they accepted.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Acknowledgement<'a> {
    /// What the change was read against (as given: `HEAD`, `main`).
    pub against: &'a str,
    /// The commit it names: each id is for this base.
    pub base: &'a str,
    /// The weakenings.
    pub weakenings: &'a [Weakening],
    /// The commands whose test counts were accepted.
    pub counts: Vec<String>,
}

impl<'a> Acknowledgement<'a> {
    /// What a person saw of the change against `against` (the commit
    /// `base`).
    pub fn new(against: &'a str, base: &'a str, weakenings: &'a [Weakening]) -> Self {
        Self {
            against,
            base,
            weakenings,
            counts: Vec::new(),
        }
    }

    /// With the commands whose test counts were accepted.
    #[must_use]
    pub fn with_counts(mut self, counts: Vec<String>) -> Self {
        self.counts = counts;
        self
    }
}

/// Records `seen` in the journal at `path`, sealed with `key`
/// ([`ReceiptKey::derive`](orcho_receipts::ReceiptKey::derive) with
/// [`ACKNOWLEDGEMENT_SEAL`]).
///
/// # Errors
///
/// When the journal cannot be written.
pub fn acknowledge(
    path: &Utf8Path,
    key: &[u8; 32],
    seen: &Acknowledgement<'_>,
) -> Result<(), AcknowledgeError> {
    if seen.weakenings.is_empty() {
        return Ok(());
    }
    let mut record = AcknowledgedV1 {
        schema: ACK_SCHEMA,
        at: orcho_core::Timestamp::now(),
        against: seen.against.to_owned(),
        ids: seen
            .weakenings
            .iter()
            .map(|w| weakening_id(seen.base, w))
            .collect(),
        counts: seen.counts.clone(),
        what: seen.weakenings.iter().map(ToString::to_string).collect(),
        seal: String::new(),
    };
    record.seal = ack_seal(key, &record);
    if let Some(parent) = path.parent() {
        orcho_core::fs::create_dir_all(parent)?;
    }
    orcho_core::fs::Journal::open(path)?.append(&record)?;
    Ok(())
}

/// An acknowledgement that could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AcknowledgeError {
    /// The store's directory could not be made.
    #[error(transparent)]
    Fs(#[from] orcho_core::FsError),
    /// The journal could not be written.
    #[error(transparent)]
    Journal(#[from] orcho_core::JournalError),
}

/// What the journal of acknowledgements holds, as far as its seals verify.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Acknowledged {
    /// The ids of the weakenings acknowledged.
    pub ids: std::collections::HashSet<String>,
    /// Per command, when its test count was last accepted.
    pub counts: std::collections::HashMap<String, orcho_core::Timestamp>,
}

/// What the journal at `path` holds, counting only records whose seal
/// `key` verifies; nothing when there is no journal.
///
/// # Errors
///
/// When the journal exists and cannot be read.
pub fn acknowledged(
    path: &Utf8Path,
    key: &[u8; 32],
) -> Result<Acknowledged, orcho_core::JournalError> {
    let mut out = Acknowledged::default();
    if !path.exists() {
        return Ok(out);
    }
    let read = orcho_core::fs::Journal::read::<AcknowledgedV1>(path, ACK_SCHEMA)?;
    for record in read.records {
        if !sealed(&ack_seal(key, &record), &record.seal) {
            continue;
        }
        for command in record.counts {
            let at = out.counts.entry(command).or_insert(record.at);
            if record.at > *at {
                *at = record.at;
            }
        }
        out.ids.extend(record.ids);
    }
    Ok(out)
}

/// Whether the seal `found` (hex) is the one `expected` (hex), compared in
/// constant time (`blake3::Hash` compares so).
pub fn sealed(expected: &str, found: &str) -> bool {
    match (
        blake3::Hash::from_hex(expected),
        blake3::Hash::from_hex(found),
    ) {
        (Ok(expected), Ok(found)) => expected == found,
        _ => false,
    }
}
