//! What the notes of a commit prove about each required command.
//!
//! | state | meaning |
//! |---|---|
//! | present | an attestation signed by a trusted key, about this commit's tree, of the command as it is declared where the commit is judged from, that passed |
//! | failed | the same, but it records a failure |
//! | vacuous | the same, but it exited 0 with no test run |
//! | unproven | judged by a base: the commit changes the command's declaration, and nothing attests the base's |
//! | stale | attested only for another tree (the commit it was for is named), or for another declaration of the command |
//! | invalid | what the note holds for it cannot be trusted: a bad signature, a key the judge does not trust, a malformed envelope or statement, a note over the size cap (each named) |
//! | missing | nothing attests it |
//!
//! A commit is judged either **by itself** ([`Judge::new`]: its own
//! profile's keys, `required` list and declarations) or **by a base**
//! ([`Judge::by_base`]: the protected branch's). Judged by a base, a key
//! the commit adds to `trust.keys` is not trusted, a command it removes
//! from `required` is still required, and a command whose declaration it
//! changes is proven only by an attestation of the base's declaration.
//!
//! The notes looked at are the commit's own, the note of its **tree** (so
//! that a rebase, an amend or a squash-merge that keeps the tree keeps its
//! proof), and, to name the commit a stale attestation was made for, its
//! nearest ancestors' ([`NoteOf`]). Of several attestations of one command
//! about this tree, the one that finished last decides. Identical lines are
//! verified once. A line of the commit's or tree's note that reads as
//! nothing (not an envelope, not an in-toto statement) makes every command
//! that nothing else proves `invalid`, naming the line: a broken note is
//! never taken for a missing one. What is said of bad lines is bounded:
//! each distinct reason once, with how many lines share it, at most
//! [`MAX_REASONS`] reasons per command.

use std::{
    collections::{BTreeMap, HashSet},
    fmt,
};

use orcho_receipts::{
    CommandName, VerificationContract, command_changes, environment_changes,
    environment_declaration_digest, spec_digest,
};
use serde::Serialize;

use crate::{
    TrustedKey,
    bundle::{Bundle, TooLarge},
    dsse::IN_TOTO_PAYLOAD_TYPE,
    statement::{Statement, TestResult},
};

/// The most distinct reasons said of one command, and the most envelopes
/// [`Judgement::explain`] lists for one; the rest are counted.
pub const MAX_REASONS: usize = 20;

/// The most threads that verify a note's lines.
const VERIFY_THREADS: usize = 4;

/// The fewest lines worth a thread of their own.
const LINES_PER_THREAD: usize = 16;

/// How many lines are verified before their results are folded.
const VERIFY_BATCH: usize = 256;

/// A command's state at a commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AttestedState {
    /// Proven.
    Present,
    /// Nothing attests it.
    Missing,
    /// Attested as failed.
    Failed,
    /// Attested as passing with no test run.
    Vacuous,
    /// Judged by a base, the commit changes its declaration, and nothing
    /// attests the base's.
    Unproven,
    /// Attested for something else.
    Stale,
    /// What attests it cannot be trusted.
    Invalid,
}

impl AttestedState {
    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Present => "present",
            Self::Missing => "missing",
            Self::Failed => "failed",
            Self::Vacuous => "vacuous",
            Self::Unproven => "unproven",
            Self::Stale => "stale",
            Self::Invalid => "invalid",
        }
    }
}

impl fmt::Display for AttestedState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One required command at a commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct AttestedCommand {
    /// The command.
    pub command: String,
    /// Its state.
    pub state: AttestedState,
    /// Why, in words.
    pub reason: String,
    /// The trusted key that signed what decided it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signed_by: Option<String>,
    /// The commit the deciding attestation was made for (for `stale`: the
    /// other commit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attested_commit: Option<String>,
    /// Judged by a base: how the commit's declaration of the command
    /// differs from the base's, one line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub declaration_changes: Vec<String>,
}

/// What a note is attached to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NoteOf {
    /// The commit being checked.
    Commit,
    /// The commit's tree: what survives a rebase, an amend or a squash.
    Tree,
    /// An ancestor of the commit: only to name the commit a stale
    /// attestation was made for.
    Ancestor,
}

/// The note of one git object, as read from git.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Note {
    /// The object it is attached to (a commit or a tree).
    pub commit: String,
    /// What that object is to the commit checked.
    pub of: NoteOf,
    /// Its lines, or why they were not read.
    pub bundle: Result<Bundle, TooLarge>,
}

impl Note {
    /// The note of the commit checked, `commit`, with `bytes`.
    pub fn new(commit: impl Into<String>, bytes: &[u8]) -> Self {
        Self::of(NoteOf::Commit, commit, bytes)
    }

    /// The note attached to `object`, which is `of` to the commit checked.
    pub fn of(of: NoteOf, object: impl Into<String>, bytes: &[u8]) -> Self {
        Self {
            commit: object.into(),
            of,
            bundle: Bundle::parse(bytes),
        }
    }

    fn own(&self) -> bool {
        self.of != NoteOf::Ancestor
    }

    fn shown(&self) -> String {
        let short = short_commit(&self.commit);
        match self.of {
            NoteOf::Commit => format!("the commit's note ({short})"),
            NoteOf::Tree => format!("the tree's note ({short})"),
            NoteOf::Ancestor => format!("the note of ancestor {short}"),
        }
    }
}

/// What a commit is judged by: the declarations, the `required` list and
/// the trusted keys.
#[derive(Debug, Clone, Copy)]
pub struct Judge<'a> {
    contract: &'a VerificationContract,
    trusted: &'a [TrustedKey],
    commit: Option<(&'a VerificationContract, &'a [TrustedKey])>,
}

impl<'a> Judge<'a> {
    /// The commit judged by itself: `contract` and `trusted` are its own.
    pub fn new(contract: &'a VerificationContract, trusted: &'a [TrustedKey]) -> Self {
        Self {
            contract,
            trusted,
            commit: None,
        }
    }

    /// The commit judged by a base: the base's contract and keys decide;
    /// the commit's own (`commit_contract`, `commit_trusted`) are only
    /// compared with them, to say what the commit changes.
    pub fn by_base(
        base_contract: &'a VerificationContract,
        base_trusted: &'a [TrustedKey],
        commit_contract: &'a VerificationContract,
        commit_trusted: &'a [TrustedKey],
    ) -> Self {
        Self {
            contract: base_contract,
            trusted: base_trusted,
            commit: Some((commit_contract, commit_trusted)),
        }
    }

    /// What `notes` prove about each required command, for a commit whose
    /// tree is `tree`.
    pub fn check(&self, tree: &str, notes: &[Note]) -> Judgement {
        let mut read = Read {
            required: self
                .contract
                .required
                .iter()
                .map(ToString::to_string)
                .collect(),
            ..Read::default()
        };
        // Each distinct line once, in order, then verified (on several
        // threads when there are many), then read in order.
        let mut seen: HashSet<&str> = HashSet::new();
        let mut lines: Vec<(&Note, usize, &str)> = Vec::new();
        for note in notes {
            let bundle = match &note.bundle {
                Ok(bundle) => bundle,
                Err(too_large) => {
                    if note.own() {
                        let problem = Problem {
                            command: None,
                            kind: "too large",
                            reason: too_large.to_string(),
                        };
                        read.problem(problem, None, note);
                    }
                    continue;
                }
            };
            for (line, text) in bundle.lines() {
                if seen.insert(text) {
                    lines.push((note, line, text));
                }
            }
        }
        // In batches, so that what a flood of bad lines leaves stays
        // small until it is folded into one reason per kind.
        for batch in lines.chunks(VERIFY_BATCH) {
            let results = self.read_lines(batch);
            for ((note, line, _), result) in batch.iter().zip(results) {
                match result {
                    Ok((signed_by, statement)) => read.verified.push(Verified {
                        signed_by,
                        statement,
                        line: *line,
                        note: note.shown(),
                        noted_on: note.commit.clone(),
                    }),
                    Err(problem) if note.own() => {
                        read.problem(problem, Some(*line), note);
                    }
                    Err(_) => {}
                }
            }
        }
        let mut commands = Vec::new();
        let mut considered = Vec::new();
        for name in &self.contract.required {
            let (command, seen) = self.decide(name, tree, &read);
            commands.push(command);
            considered.push(seen);
        }
        Judgement {
            commands,
            considered,
        }
    }

    /// Verifies `lines` ([`read_line`](Self::read_line) each), on up to
    /// [`VERIFY_THREADS`] threads when there are enough of them to be
    /// worth it; the results in order.
    fn read_lines(
        &self,
        lines: &[(&Note, usize, &str)],
    ) -> Vec<Result<(String, Statement), Problem>> {
        let threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(VERIFY_THREADS)
            .min(lines.len() / LINES_PER_THREAD)
            .max(1);
        if threads == 1 {
            return lines
                .iter()
                .map(|(_, _, text)| self.read_line(text))
                .collect();
        }
        let chunk = lines.len().div_ceil(threads);
        std::thread::scope(|scope| {
            let handles: Vec<_> = lines
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .map(|(_, _, text)| self.read_line(text))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .zip(lines.chunks(chunk))
                .flat_map(|(h, part)| {
                    // A verifying thread does not panic; if it did, its
                    // lines prove nothing.
                    h.join().unwrap_or_else(|_| {
                        part.iter()
                            .map(|_| {
                                Err(Problem {
                                    command: None,
                                    kind: "unverified",
                                    reason: "the line could not be verified".to_owned(),
                                })
                            })
                            .collect()
                    })
                })
                .collect()
        })
    }

    /// Verifies one line: the trusted key's name and the statement.
    fn read_line(&self, line: &str) -> Result<(String, Statement), Problem> {
        let envelope = crate::Envelope::from_json(line).map_err(|e| Problem {
            command: None,
            kind: "envelope",
            reason: e.to_string(),
        })?;
        // The payload read once: before the signature is checked, only to
        // say which command a bad line concerns; after, as the statement
        // (these same bytes are what the signature covers).
        let parsed = Statement::from_payload(&envelope.payload);
        let claimed = parsed.as_ref().ok().map(|s| s.orcho.command.clone());
        if envelope.payload_type != IN_TOTO_PAYLOAD_TYPE {
            return Err(Problem {
                command: claimed,
                kind: "payload type",
                reason: format!(
                    "payload type `{}` is not an in-toto statement",
                    shown_text(&envelope.payload_type)
                ),
            });
        }
        if envelope.signatures.is_empty() {
            return Err(Problem {
                command: claimed,
                kind: "no signature",
                reason: "the envelope has no signature".to_owned(),
            });
        }
        if let [only] = envelope.signatures.as_slice()
            && only.sig.len() != 64
        {
            return Err(Problem {
                command: claimed,
                kind: "signature length",
                reason: format!(
                    "a signature of {} bytes; an Ed25519 signature has 64",
                    only.sig.len()
                ),
            });
        }
        let Some(key) = envelope.signed_by(self.trusted, |k| &k.ed25519) else {
            let (kind, reason) = self.untrusted(&envelope);
            return Err(Problem {
                command: claimed,
                kind,
                reason,
            });
        };
        let statement = parsed.map_err(|e| Problem {
            command: None,
            kind: "statement",
            reason: e.to_string(),
        })?;
        Ok((key.name.clone(), statement))
    }

    /// Why no trusted key verifies `envelope`, with the kind of trouble.
    fn untrusted(&self, envelope: &crate::Envelope) -> (&'static str, String) {
        let known = envelope.signatures.iter().find_map(|s| {
            self.trusted
                .iter()
                .find(|k| k.ed25519.keyid() == s.keyid)
                .map(|k| k.name.clone())
        });
        if let Some(name) = known {
            return (
                "bad signature",
                format!("the signature by trusted key `{name}` does not verify"),
            );
        }
        let keyid = envelope
            .signatures
            .first()
            .map(|s| short(&s.keyid))
            .unwrap_or_default();
        let added = self.commit.and_then(|(_, own)| {
            envelope
                .signed_by(own, |k| &k.ed25519)
                .map(|k| k.name.clone())
        });
        let reason = match (added, self.commit.is_some()) {
            (Some(name), _) => format!(
                "signed by key `{name}` ({keyid}), which this change adds to `trust.keys`: the \
                 base does not trust it"
            ),
            (None, true) => {
                format!("signed by key {keyid}, which `trust.keys` at the base does not list")
            }
            (None, false) => format!("signed by key {keyid}, which `trust.keys` does not list"),
        };
        ("untrusted key", reason)
    }

    /// How the commit's declaration of `name` (with its environment)
    /// differs from the judging one; empty when judged by itself or the
    /// same.
    fn declaration_changes(&self, name: &CommandName) -> Vec<String> {
        let Some((own, _)) = self.commit else {
            return Vec::new();
        };
        let Some(base) = self.contract.command(name.as_str()) else {
            return Vec::new();
        };
        let Some(mine) = own.command(name.as_str()) else {
            return vec!["this change removes its declaration".to_owned()];
        };
        let mut changes = command_changes(base, mine);
        if let (Some(a), Some(b)) = (
            self.contract.environment_for(base),
            own.environment_for(mine),
        ) {
            changes.extend(
                environment_changes(&a, &b)
                    .into_iter()
                    .map(|c| format!("environment `{}`: {c}", b.name)),
            );
        }
        changes
    }

    fn decide(&self, name: &CommandName, tree: &str, read: &Read) -> (AttestedCommand, Explained) {
        let command = name.to_string();
        let declared = self.contract.command(name.as_str());
        let spec = declared.map(spec_digest).map(|d| d.to_string());
        let environment = declared
            .and_then(|c| self.contract.environment_for(c))
            .map(|e| environment_declaration_digest(&e).to_string());
        let changes = self.declaration_changes(name);
        let no_longer_required = self
            .commit
            .is_some_and(|(own, _)| !own.is_required(name.as_str()));
        let mine: Vec<&Verified> = read
            .verified
            .iter()
            .filter(|v| v.statement.orcho.command == command)
            .collect();
        let mut explained = Explained::default();
        let declared_so = |v: &Verified| {
            spec.as_deref() == Some(v.statement.orcho.spec_digest.as_str())
                && match (&v.statement.orcho.environment_declaration, &environment) {
                    (Some(theirs), Some(ours)) => theirs == ours,
                    // Made before statements named the environment's
                    // declaration: it counts unless the change edits it.
                    (None, _) => !changes.iter().any(|c| c.starts_with("environment ")),
                    (Some(_), None) => false,
                }
        };
        let mut decider: Option<&Verified> = None;
        for v in &mine {
            let why = if v.statement.subject.tree != tree {
                let commit = v.statement.subject.commit.as_deref().unwrap_or(&v.noted_on);
                format!(
                    "about another tree ({}, commit {})",
                    short_commit(&v.statement.subject.tree),
                    short_commit(commit)
                )
            } else if !declared_so(v) {
                if changes.is_empty() {
                    "of another declaration of the command".to_owned()
                } else {
                    "of the declaration this change makes, not the base's".to_owned()
                }
            } else {
                if decider
                    .is_none_or(|d| v.statement.orcho.finished_at > d.statement.orcho.finished_at)
                {
                    decider = Some(v);
                }
                String::new()
            };
            explained.push(Considered {
                note: v.note.clone(),
                line: Some(v.line),
                signed_by: Some(v.signed_by.clone()),
                result: Some(v.statement.result),
                finished_at: Some(v.statement.orcho.finished_at.clone()),
                counted: why.is_empty(),
                why,
            });
        }
        if let Some(d) = decider {
            for c in explained.shown.iter_mut().filter(|c| c.counted) {
                if c.line != Some(d.line) || c.note != d.note {
                    c.counted = false;
                    c.why = "an attestation that finished later decides".to_owned();
                }
            }
        }
        for (reason, seen) in read.problems_for(&command) {
            explained.push(Considered {
                note: seen.note.clone(),
                line: seen.first_line,
                signed_by: None,
                result: None,
                finished_at: None,
                counted: false,
                why: seen.shown(reason),
            });
        }
        let result = |state, reason: String, v: &Verified| AttestedCommand {
            command: command.clone(),
            state,
            reason,
            signed_by: Some(v.signed_by.clone()),
            attested_commit: v
                .statement
                .subject
                .commit
                .clone()
                .or_else(|| Some(v.noted_on.clone())),
            declaration_changes: changes.clone(),
        };
        let unsigned = |state, reason: String| AttestedCommand {
            command: command.clone(),
            state,
            reason,
            signed_by: None,
            attested_commit: None,
            declaration_changes: changes.clone(),
        };
        let still = if no_longer_required {
            " (this change no longer requires it; the base does)"
        } else {
            ""
        };
        if let Some(v) = decider {
            let by = &v.signed_by;
            let (state, reason) = match v.statement.result {
                TestResult::Passed => (
                    AttestedState::Present,
                    format!("attested by `{by}`: it passed against this tree"),
                ),
                TestResult::Warned => (
                    AttestedState::Vacuous,
                    format!("attested by `{by}`: exit 0, but no test ran"),
                ),
                TestResult::Failed => (
                    AttestedState::Failed,
                    format!("attested by `{by}`: {}", v.statement.orcho.exit),
                ),
            };
            let reason = if changes.is_empty() {
                format!("{reason}{still}")
            } else {
                format!("{reason}, as the base declares it{still}")
            };
            return (result(state, reason, v), explained);
        }
        let at_tree = mine.iter().find(|v| v.statement.subject.tree == tree);
        if !changes.is_empty() {
            // What else the notes hold for it: the changed declaration
            // attested by a key the judge trusts, or lines that prove
            // nothing (a key the change trusts itself, say).
            let attested = match at_tree {
                Some(v) => format!("; `{}` attested only the changed declaration", v.signed_by),
                None => read
                    .problems_for(&command)
                    .first()
                    .map(|(reason, seen)| format!("; {}", seen.shown(reason)))
                    .unwrap_or_default(),
            };
            return (
                unsigned(
                    AttestedState::Unproven,
                    format!(
                        "declaration changed in this change: {}{attested}{still}",
                        changes.join("; ")
                    ),
                ),
                explained,
            );
        }
        if let Some(v) = at_tree {
            return (
                result(
                    AttestedState::Stale,
                    format!(
                        "attested by `{}` for this tree, but `{command}` is declared differently now{still}",
                        v.signed_by
                    ),
                    v,
                ),
                explained,
            );
        }
        if let Some(v) = mine.first() {
            let commit = v.statement.subject.commit.as_deref().unwrap_or(&v.noted_on);
            return (
                result(
                    AttestedState::Stale,
                    format!(
                        "attested by `{}` for commit {} (tree {}), not this one{still}",
                        v.signed_by,
                        short_commit(commit),
                        short_commit(&v.statement.subject.tree)
                    ),
                    v,
                ),
                explained,
            );
        }
        let problems = read.problems_for(&command);
        if !problems.is_empty() {
            let total = problems.len();
            let mut reasons: Vec<String> = problems
                .iter()
                .take(MAX_REASONS)
                .map(|(reason, seen)| seen.shown(reason))
                .collect();
            if total > MAX_REASONS {
                reasons.push(format!("and {} more", total - MAX_REASONS));
            }
            return (
                unsigned(
                    AttestedState::Invalid,
                    format!("{}{still}", reasons.join("; ")),
                ),
                explained,
            );
        }
        (
            unsigned(
                AttestedState::Missing,
                format!("no attestation in the commit's or its tree's note{still}"),
            ),
            explained,
        )
    }
}

/// What the notes prove about each required command, and what was
/// considered for each.
#[derive(Debug, Clone)]
pub struct Judgement {
    /// Each required command, in the judging profile's order.
    pub commands: Vec<AttestedCommand>,
    considered: Vec<Explained>,
}

impl Judgement {
    /// The envelopes considered for `command` and why each did or did not
    /// count (at most [`MAX_REASONS`]), with how many more there were;
    /// `None` for a command that is not required.
    pub fn explain(&self, command: &str) -> Option<(&[Considered], usize)> {
        let at = self.commands.iter().position(|c| c.command == command)?;
        let explained = self.considered.get(at)?;
        Some((&explained.shown, explained.more))
    }

    /// Whether every required command is present.
    pub fn ready(&self) -> bool {
        self.commands
            .iter()
            .all(|c| c.state == AttestedState::Present)
    }
}

/// One envelope (or one kind of bad line) considered for a command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Considered {
    /// The note it is in.
    pub note: String,
    /// Its line there (the first, for bad lines that share a reason).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The trusted key that signed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signed_by: Option<String>,
    /// What it states.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<TestResult>,
    /// When what it attests finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// Whether it decided the command's state.
    pub counted: bool,
    /// Why it did not count (empty when it did).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub why: String,
}

#[derive(Debug, Clone, Default)]
struct Explained {
    shown: Vec<Considered>,
    more: usize,
}

impl Explained {
    fn push(&mut self, considered: Considered) {
        if considered.counted || self.shown.len() < MAX_REASONS {
            self.shown.push(considered);
        } else {
            self.more += 1;
        }
    }
}

/// A verified attestation.
struct Verified {
    signed_by: String,
    statement: Statement,
    line: usize,
    /// The note it was in, as shown.
    note: String,
    /// The object whose note held it.
    noted_on: String,
}

/// A line that proves nothing, with the command it claims when it names
/// one, and the kind of trouble (lines are counted together by kind).
struct Problem {
    command: Option<String>,
    kind: &'static str,
    reason: String,
}

/// The lines that share one kind of trouble: the first one's reason,
/// and how many there were.
#[derive(Debug, Clone)]
struct Seen {
    kind: &'static str,
    note: String,
    first_line: Option<usize>,
    lines: usize,
}

impl Seen {
    fn shown(&self, reason: &str) -> String {
        match (self.first_line, self.lines) {
            (Some(line), 1) => format!("note line {line}: {reason}"),
            (Some(line), n) => format!(
                "note line {line} and {} more line(s): {reason}",
                n.saturating_sub(1)
            ),
            (None, _) => reason.to_owned(),
        }
    }
}

/// What reading the notes found: the attestations that verified, and the
/// reasons of the lines that did not, bounded.
#[derive(Default)]
struct Read {
    /// The commands the judge requires.
    required: Vec<String>,
    verified: Vec<Verified>,
    /// Per claimed command (`None`: no command named), the first
    /// [`MAX_REASONS`] distinct reasons with the lines that share each,
    /// and how many other distinct reasons there were.
    problems: BTreeMap<Option<String>, Reasons>,
}

/// The distinct reasons of the lines that claim one command (or none).
#[derive(Default)]
struct Reasons {
    /// The first [`MAX_REASONS`] kinds, each with its first reason.
    shown: Vec<(String, Seen)>,
    /// How many other kinds there were.
    more: usize,
}

impl Read {
    fn problem(&mut self, problem: Problem, line: Option<usize>, note: &Note) {
        // A command name is what a bad line claims: only the commands the
        // judge requires are kept apart, so that a flood of made-up names
        // stays small.
        let command = problem
            .command
            .filter(|c| self.required.iter().any(|r| r == c));
        let reasons = self.problems.entry(command).or_default();
        if let Some((_, seen)) = reasons
            .shown
            .iter_mut()
            .find(|(_, s)| s.kind == problem.kind)
        {
            seen.lines += 1;
            return;
        }
        if reasons.shown.len() >= MAX_REASONS {
            reasons.more += 1;
            return;
        }
        reasons.shown.push((
            problem.reason,
            Seen {
                kind: problem.kind,
                note: note.shown(),
                first_line: line,
                lines: 1,
            },
        ));
    }

    /// The reasons that concern `command`: those claiming it, then those
    /// naming none.
    fn problems_for(&self, command: &str) -> Vec<(&str, &Seen)> {
        let mut out: Vec<(&str, &Seen)> = Vec::new();
        for key in [Some(command.to_owned()), None] {
            if let Some(reasons) = self.problems.get(&key) {
                out.extend(reasons.shown.iter().map(|(r, s)| (r.as_str(), s)));
            }
        }
        out
    }
}

/// What [`Judge::check`] says of `contract`'s required commands, judged by
/// the commit itself.
pub fn check(
    contract: &VerificationContract,
    tree: &str,
    notes: &[Note],
    trusted: &[TrustedKey],
) -> Vec<AttestedCommand> {
    Judge::new(contract, trusted).check(tree, notes).commands
}

fn short(id: &str) -> String {
    let id = if id.is_empty() { "(no id)" } else { id };
    shown_text(&id.chars().take(16).collect::<String>())
}

fn short_commit(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// Text a note claims, fit to show: at most 64 characters, control
/// characters replaced.
fn shown_text(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(64)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if text.chars().count() > 64 {
        out.push('…');
    }
    out
}
