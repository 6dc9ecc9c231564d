//! Signed attestations: `orcho key`, `orcho verify --attest`, `orcho status
//! --commit` and `orcho attest push|fetch`.

use orcho::{
    attest::{
        ALGORITHM, AttestedCommand, AttestedState, Note, SigningKey, check,
        notes::{NOTES_REF, Repo},
    },
    profile::Profile,
    receipts::{LoadedReceipt, ReceiptStatus, Verifier},
};
use serde::Serialize;

use crate::{error::CliError, exit::Exit, output::Report, place::Place};

/// `orcho key show --json`.
#[derive(Debug, Serialize)]
struct KeyDoc {
    keyid: String,
    algorithm: &'static str,
    /// Base64 of the 32 raw bytes.
    public_key: String,
}

impl KeyDoc {
    fn of(key: &SigningKey) -> Self {
        Self {
            keyid: key.public().keyid(),
            algorithm: ALGORITHM,
            public_key: key.public().to_base64(),
        }
    }
}

/// The `trust:` lines that trust `key` (named after its id: rename it
/// after who holds it).
fn trust_lines(key: &SigningKey) -> String {
    format!(
        "trust:\n  keys:\n    - name: key-{}\n      ed25519: {}",
        &key.public().keyid()[..8],
        key.public().to_base64()
    )
}

/// `orcho key generate`.
pub(crate) fn key_generate(place: &Place, force: bool) -> Result<Report, CliError> {
    let (key, path) = crate::key::generate_signing_key(place, force)?;
    Ok(Report::new(&KeyDoc::of(&key)).line(format!(
        "signing key written to {path} (mode 0600; never given to an agent or a command)\n\
         keyid {}\n\n\
         To trust what it signs, add this to orcho.yaml and commit it:\n\n{}",
        key.public().keyid(),
        trust_lines(&key)
    )))
}

/// `orcho key show`.
pub(crate) fn key_show(place: &Place) -> Result<Report, CliError> {
    let key = crate::key::require_signing_key(place)?;
    Ok(Report::new(&KeyDoc::of(&key)).line(format!(
        "keyid      {}\nalgorithm  {ALGORITHM}\npublic key {}\n\n{}",
        key.public().keyid(),
        key.public().to_base64(),
        trust_lines(&key)
    )))
}

/// What `orcho verify` attached to the commit.
#[derive(Debug, Serialize)]
pub(crate) struct AttestedDoc {
    pub(crate) commit: String,
    pub(crate) commands: Vec<String>,
}

/// What `--attest` needs, checked before any command runs: a signing key
/// and a clean checkout.
pub(crate) fn precheck(place: &Place) -> Result<(), CliError> {
    crate::key::require_signing_key(place)?;
    clean(place, true).map(|_| ())
}

/// Whether the checkout is clean; when not, an error (`required`) or a
/// note and `false`.
fn clean(place: &Place, required: bool) -> Result<bool, CliError> {
    let uncommitted = Repo::new(&place.checkout)
        .uncommitted()
        .map_err(|e| CliError::msg(e.to_string()))?;
    if uncommitted.is_empty() {
        return Ok(true);
    }
    let shown: Vec<&str> = uncommitted.iter().take(3).map(String::as_str).collect();
    let message = format!(
        "the checkout has uncommitted changes ({} path(s): {}{}), and an attestation is about \
         a commit",
        uncommitted.len(),
        shown.join(", "),
        if uncommitted.len() > 3 { ", …" } else { "" }
    );
    let hint = "commit them (or make git ignore them), then `orcho verify --attest`";
    if required {
        return Err(CliError::msg(message).with_hint(hint));
    }
    place.progress(&format!("not attested: {message}\n  hint: {hint}"));
    Ok(false)
}

/// Attaches attestations of the checkout's proven receipts (present,
/// vacuous, or failed against this tree) to HEAD, when the checkout is
/// clean. With `required`, a dirty checkout or a missing key is an error;
/// without (the profile's `verification.attest`), it is said and nothing
/// is attached.
pub(crate) fn attach_head(
    place: &Place,
    verifier: &Verifier,
    required: bool,
) -> Result<Option<AttestedDoc>, CliError> {
    let not_attested = |message: String, hint: &str| {
        if required {
            return Err(CliError::msg(message).with_hint(hint));
        }
        place.progress(&format!("not attested: {message}\n  hint: {hint}"));
        Ok(None)
    };
    let Some(key) = crate::key::signing_key(place)? else {
        return not_attested(
            "there is no signing key on this machine".to_owned(),
            "`orcho key generate` makes one (or set ORCHO_SIGNING_KEY)",
        );
    };
    if !clean(place, required)? {
        return Ok(None);
    }
    let repo = Repo::new(&place.checkout);
    let commit = repo.commit("HEAD").map_err(|e| {
        CliError::msg(e.to_string())
            .with_hint("an attestation is about a commit: make the first one")
    })?;
    let classified = verifier.classify()?;
    let receipts: Vec<_> = classified
        .iter()
        .filter(|c| match &c.status {
            ReceiptStatus::Present | ReceiptStatus::Vacuous { .. } => true,
            ReceiptStatus::Failed { stale, .. } => stale.is_empty(),
            _ => false,
        })
        .filter_map(
            |c| match verifier.store().load_command_receipt(&c.command) {
                LoadedReceipt::Valid(receipt) => Some(receipt),
                _ => None,
            },
        )
        .collect();
    let commands = repo
        .attach(&commit, &receipts, &key)
        .map_err(|e| CliError::msg(e.to_string()))?;
    let short = &commit[..commit.len().min(12)];
    if commands.is_empty() {
        place.say(&format!("nothing new to attest on {short}"));
    } else {
        place.say(&format!(
            "attested on {short}: {} (signed by key {}; `orcho attest push` shares them)",
            commands.join(", "),
            &key.public().keyid()[..16]
        ));
    }
    Ok(Some(AttestedDoc { commit, commands }))
}

/// `orcho status --commit REV --json`.
#[derive(Debug, Serialize)]
struct CommitStatusDoc {
    commit: String,
    tree: String,
    ready: bool,
    required: Vec<AttestedCommand>,
}

/// `orcho status --commit REV`: every required command of the profile at
/// REV, from the notes alone.
pub(crate) fn status_commit(
    place: &Place,
    profile: Option<&str>,
    rev: &str,
) -> Result<Report, CliError> {
    let repo = Repo::new(&place.checkout);
    let file = match profile {
        Some(p) if p.starts_with("builtin:") => {
            return Err(CliError::usage(
                "`--commit` reads the profile the commit holds; a built-in trusts no key",
            )
            .with_hint("leave out `--profile`, or name the profile's file in the repository"));
        }
        Some(p) => format!("./{p}"),
        None => format!("./{}", crate::place::PROFILE_FILE),
    };
    let at = repo.at(rev, &file).map_err(|e| {
        CliError::usage(e.message).with_hint("name a commit: a hash, a branch, HEAD~1")
    })?;
    let commit = at.resolved.commit.clone();
    let short = &commit[..commit.len().min(12)];
    let bytes = at.profile.as_deref().ok_or_else(|| {
        CliError::msg(format!(
            "commit {short} has no `{}`: nothing says which commands it must prove",
            file.trim_start_matches("./")
        ))
        .with_hint("commit the profile, or name its file with `--profile`")
    })?;
    let parsed = Profile::from_yaml_slice(bytes).map_err(|e| {
        CliError::msg(format!(
            "the profile at commit {short} does not load: {}",
            orcho::core::error_chain(&e)
        ))
    })?;
    let contract = parsed.verification.clone().unwrap_or_default();
    let trusted = parsed
        .trust
        .as_ref()
        .map(|t| t.keys.clone())
        .unwrap_or_default();
    let mut notes = vec![Note::new(
        commit.clone(),
        at.note.as_deref().unwrap_or_default(),
    )];
    let mut required = check(&contract, &at.resolved.tree, &notes, &trusted);
    if required.iter().any(|c| c.state == AttestedState::Missing) {
        notes.extend(
            repo.ancestor_notes(&commit, 20)
                .map_err(|e| CliError::msg(e.to_string()))?,
        );
        required = check(&contract, &at.resolved.tree, &notes, &trusted);
    }
    let ready = required.iter().all(|c| c.state == AttestedState::Present);
    let mut lines = vec![format!(
        "commit {short} (tree {}), from {NOTES_REF}:",
        &at.resolved.tree[..at.resolved.tree.len().min(12)]
    )];
    let width = required.iter().map(|c| c.command.len()).max().unwrap_or(0);
    for c in &required {
        let mark = if c.state == AttestedState::Present {
            "✓"
        } else {
            "✗"
        };
        lines.push(format!(
            "  {mark} {:<width$}  {:<8} {}",
            c.command,
            c.state.as_str(),
            c.reason
        ));
    }
    if contract.required.is_empty() {
        lines.push("  (the profile requires no command)".to_owned());
    }
    if trusted.is_empty() {
        lines.push(
            "note: the profile at this commit trusts no key (`trust.keys`), so no \
             attestation proves anything; `orcho key show` prints a key's lines"
                .to_owned(),
        );
    }
    if at.note.is_none() && notes.len() == 1 {
        lines.push(format!(
            "hint: no attestations here; after a clone, `git fetch origin \
             {NOTES_REF}:{NOTES_REF}` (or `orcho attest fetch`) brings them"
        ));
    }
    lines.push(if ready {
        "ready: every required command is proven for this commit".to_owned()
    } else {
        "not ready: `orcho verify` proves what is not (on a clean checkout of this commit, \
         `orcho verify --attest` attests it)"
            .to_owned()
    });
    Ok(Report::new(&CommitStatusDoc {
        commit: commit.clone(),
        tree: at.resolved.tree.clone(),
        ready,
        required,
    })
    .line(lines.join("\n"))
    .exit(if ready { Exit::Ok } else { Exit::NotReady }))
}

/// `orcho attest push [REMOTE]`.
pub(crate) fn push(place: &Place, remote: &str) -> Result<Report, CliError> {
    Repo::new(&place.checkout).push(remote).map_err(|e| {
        CliError::msg(e.to_string()).with_hint(format!(
            "check that `{remote}` is a remote you can push to (`git remote -v`)"
        ))
    })?;
    Ok(Report::silent(Exit::Ok).line(format!("pushed {NOTES_REF} to {remote}")))
}

/// `orcho attest fetch [REMOTE]`.
pub(crate) fn fetch(place: &Place, remote: &str) -> Result<Report, CliError> {
    Repo::new(&place.checkout)
        .fetch_and_merge(remote)
        .map_err(|e| {
            CliError::msg(e.to_string()).with_hint(format!(
                "check that `{remote}` is a remote you can fetch from (`git remote -v`)"
            ))
        })?;
    Ok(Report::silent(Exit::Ok).line(format!(
        "fetched {NOTES_REF} from {remote}, merged with the notes here"
    )))
}
