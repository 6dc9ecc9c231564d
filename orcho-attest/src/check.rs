//! What the notes of a commit prove about each required command.
//!
//! | state | meaning |
//! |---|---|
//! | present | an attestation signed by a trusted key, about this commit's tree, of the command as the repository declares it at this commit, that passed |
//! | failed | the same, but it records a failure |
//! | vacuous | the same, but it exited 0 with no test run |
//! | stale | attested only for another tree (the commit it was for is named), or for another declaration of the command |
//! | invalid | what the note holds for it cannot be trusted: a bad signature, a key `trust.keys` does not list, a malformed envelope or statement, a note over the size cap (each named) |
//! | missing | nothing attests it |
//!
//! Of several attestations of one command about this tree, the one that
//! finished last decides. A line of the note that reads as nothing (not an
//! envelope, not an in-toto statement) makes every command that nothing
//! else proves `invalid`, naming the line: a broken note is never taken
//! for a missing one.

use std::fmt;

use orcho_receipts::{CommandName, VerificationContract, spec_digest};
use serde::Serialize;

use crate::{
    TrustedKey,
    bundle::{Bundle, TooLarge},
    dsse::IN_TOTO_PAYLOAD_TYPE,
    statement::{Statement, TestResult},
};

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
}

/// The note of one commit, as read from git.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Note {
    /// The commit it is attached to.
    pub commit: String,
    /// Its lines, or why they were not read.
    pub bundle: Result<Bundle, TooLarge>,
}

impl Note {
    /// The note of `commit` with `bytes`.
    pub fn new(commit: impl Into<String>, bytes: &[u8]) -> Self {
        Self {
            commit: commit.into(),
            bundle: Bundle::parse(bytes),
        }
    }
}

/// A verified attestation.
struct Verified {
    signed_by: String,
    statement: Statement,
    /// The commit whose note held it.
    noted_on: String,
}

/// A line that proves nothing, with the command it claims when it names
/// one.
struct Problem {
    command: Option<String>,
    reason: String,
}

/// What the notes say of every required command of `contract` at the
/// commit whose tree is `tree`.
///
/// `notes` are the commit's own note first, then (for naming a stale
/// attestation) those of its nearest ancestors that have one, nearest
/// first. Only `trusted` keys count.
pub fn check(
    contract: &VerificationContract,
    tree: &str,
    notes: &[Note],
    trusted: &[TrustedKey],
) -> Vec<AttestedCommand> {
    let mut verified = Vec::new();
    let mut problems = Vec::new();
    for (index, note) in notes.iter().enumerate() {
        let own = index == 0;
        let bundle = match &note.bundle {
            Ok(bundle) => bundle,
            Err(too_large) => {
                if own {
                    problems.push(Problem {
                        command: None,
                        reason: too_large.to_string(),
                    });
                }
                continue;
            }
        };
        for (line, envelope) in bundle.entries() {
            match read_line(envelope, trusted) {
                Ok(statement) => verified.push(Verified {
                    signed_by: statement.0,
                    statement: statement.1,
                    noted_on: note.commit.clone(),
                }),
                Err(problem) if own => problems.push(Problem {
                    command: problem.command,
                    reason: format!("note line {line}: {}", problem.reason),
                }),
                Err(_) => {}
            }
        }
    }
    contract
        .required
        .iter()
        .map(|name| decide(contract, name, tree, &verified, &problems))
        .collect()
}

/// Verifies one line: the trusted key's name and the statement.
fn read_line(
    envelope: Result<crate::Envelope, crate::EnvelopeError>,
    trusted: &[TrustedKey],
) -> Result<(String, Statement), Problem> {
    let envelope = envelope.map_err(|e| Problem {
        command: None,
        reason: e.to_string(),
    })?;
    // The payload read once: before the signature is checked, only to say
    // which command a bad line concerns; after, as the statement (these
    // same bytes are what the signature covers).
    let parsed = Statement::from_payload(&envelope.payload);
    let claimed = parsed.as_ref().ok().map(|s| s.orcho.command.clone());
    if envelope.payload_type != IN_TOTO_PAYLOAD_TYPE {
        return Err(Problem {
            command: claimed,
            reason: format!(
                "payload type `{}` is not an in-toto statement",
                envelope.payload_type
            ),
        });
    }
    if envelope.signatures.is_empty() {
        return Err(Problem {
            command: claimed,
            reason: "the envelope has no signature".to_owned(),
        });
    }
    if let [only] = envelope.signatures.as_slice()
        && only.sig.len() != 64
    {
        return Err(Problem {
            command: claimed,
            reason: format!(
                "a signature of {} bytes; an Ed25519 signature has 64",
                only.sig.len()
            ),
        });
    }
    let Some(key) = envelope.signed_by(trusted, |k| &k.ed25519) else {
        let known = envelope.signatures.iter().find_map(|s| {
            trusted
                .iter()
                .find(|k| k.ed25519.keyid() == s.keyid)
                .map(|k| k.name.clone())
        });
        let reason = match known {
            Some(name) => format!("the signature by trusted key `{name}` does not verify"),
            None => format!(
                "signed by key {}, which `trust.keys` does not list",
                envelope
                    .signatures
                    .first()
                    .map(|s| short(&s.keyid))
                    .unwrap_or_default()
            ),
        };
        return Err(Problem {
            command: claimed,
            reason,
        });
    };
    let statement = parsed.map_err(|e| Problem {
        command: None,
        reason: e.to_string(),
    })?;
    Ok((key.name.clone(), statement))
}

fn short(id: &str) -> String {
    let id = if id.is_empty() { "(no id)" } else { id };
    id.chars().take(16).collect()
}

fn short_commit(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

fn decide(
    contract: &VerificationContract,
    name: &CommandName,
    tree: &str,
    verified: &[Verified],
    problems: &[Problem],
) -> AttestedCommand {
    let command = name.to_string();
    let current = contract.command(name.as_str()).map(spec_digest);
    let mine: Vec<&Verified> = verified
        .iter()
        .filter(|v| v.statement.orcho.command == command)
        .collect();
    let at_tree: Vec<&&Verified> = mine
        .iter()
        .filter(|v| v.statement.subject.tree == tree)
        .collect();
    let declared_so = |v: &Verified| {
        current.is_some_and(|digest| digest.to_string() == v.statement.orcho.spec_digest)
    };
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
    };
    if let Some(v) = at_tree.iter().filter(|v| declared_so(v)).max_by(|a, b| {
        a.statement
            .orcho
            .finished_at
            .cmp(&b.statement.orcho.finished_at)
    }) {
        let by = &v.signed_by;
        return match v.statement.result {
            TestResult::Passed => result(
                AttestedState::Present,
                format!("attested by `{by}`: it passed against this tree"),
                v,
            ),
            TestResult::Warned => result(
                AttestedState::Vacuous,
                format!("attested by `{by}`: exit 0, but no test ran"),
                v,
            ),
            TestResult::Failed => result(
                AttestedState::Failed,
                format!("attested by `{by}`: {}", v.statement.orcho.exit),
                v,
            ),
        };
    }
    if let Some(v) = at_tree.first() {
        return result(
            AttestedState::Stale,
            format!(
                "attested by `{}` for this tree, but `{command}` is declared differently now",
                v.signed_by
            ),
            v,
        );
    }
    if let Some(v) = mine.first() {
        let commit = v.statement.subject.commit.as_deref().unwrap_or(&v.noted_on);
        return result(
            AttestedState::Stale,
            format!(
                "attested by `{}` for commit {} (tree {}), not this one",
                v.signed_by,
                short_commit(commit),
                short_commit(&v.statement.subject.tree)
            ),
            v,
        );
    }
    let reasons: Vec<&str> = problems
        .iter()
        .filter(|p| p.command.as_deref() == Some(command.as_str()))
        .chain(problems.iter().filter(|p| p.command.is_none()))
        .map(|p| p.reason.as_str())
        .collect();
    if !reasons.is_empty() {
        return AttestedCommand {
            command,
            state: AttestedState::Invalid,
            reason: reasons.join("; "),
            signed_by: None,
            attested_commit: None,
        };
    }
    AttestedCommand {
        command,
        state: AttestedState::Missing,
        reason: "no attestation in the commit's note".to_owned(),
        signed_by: None,
        attested_commit: None,
    }
}
