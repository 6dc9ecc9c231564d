//! Signed attestations: `orcho key`, `orcho verify --attest`, `orcho status
//! --commit` and `orcho attest push|fetch`.

use orcho::{
    attest::{
        ALGORITHM, AttestedCommand, AttestedState, Note, SigningKey, check,
        notes::{NOTES_REF, Repo, Shared},
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
    clean(place, true)?;
    // A note Orcho cannot read would be refused after the commands ran.
    let repo = Repo::new(&place.checkout);
    if let Ok(commit) = repo.commit("HEAD")
        && let Ok(Some(note)) = repo.note(&commit)
        && let Err(e) = orcho::attest::Bundle::parse(&note)
    {
        return Err(
            CliError::msg(format!("HEAD's note cannot be added to: {e}")).with_hint(
                "`git notes --ref orcho remove HEAD` removes it (what it held is lost here; \
                 a remote's copy stays), then `orcho verify --attest`",
            ),
        );
    }
    Ok(())
}

/// Whether the checkout is clean; when not, an error (`required`) or a
/// note and `false`.
fn clean(place: &Place, required: bool) -> Result<bool, CliError> {
    let uncommitted = Repo::new(&place.checkout)
        .uncommitted()
        .map_err(|e| CliError::msg(e.to_string()))?;
    // Orcho's own store is never part of a commit, ignored or not.
    let store = store_prefix(place);
    let uncommitted: Vec<String> = uncommitted
        .into_iter()
        .filter(|p| store.as_deref().is_none_or(|s| !p.starts_with(s)))
        .collect();
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

/// The store's path as `git status` names paths under it (from the
/// repository's root), when it is inside the work tree.
fn store_prefix(place: &Place) -> Option<String> {
    let out = orcho::receipts::exec::run(
        &orcho::receipts::exec::git_request(&place.checkout, &["rev-parse", "--show-toplevel"])
            .keep_stdout(1 << 16),
    )
    .ok()?;
    let top = String::from_utf8(out.stdout.kept?).ok()?;
    let top = camino::Utf8Path::new(top.trim()).canonicalize_utf8().ok()?;
    let store = place.store.canonicalize_utf8().ok()?;
    store.strip_prefix(&top).ok().map(|rel| format!("{rel}/"))
}

/// Says so when the checkout's profile does not trust `key`: what it signs
/// would prove nothing to `orcho status --commit`.
fn warn_untrusted(place: &Place, key: &SigningKey) {
    let path = place.checkout.join(crate::place::PROFILE_FILE);
    let Ok(profile) = Profile::load(&path) else {
        return;
    };
    let trusted = profile
        .trust
        .as_ref()
        .is_some_and(|t| t.keys.iter().any(|k| k.ed25519 == key.public()));
    if !trusted {
        place.progress(&format!(
            "note: `trust.keys` in {path} does not list this key, so `orcho status --commit` \
             will not count what it signs\n  hint: `orcho key show` prints the lines that trust it"
        ));
    }
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
    let commands = repo.attach(&commit, &receipts, &key).map_err(|e| {
        CliError::msg(e.to_string()).with_hint(
            "`git notes --ref orcho remove HEAD` removes a note Orcho cannot read, then \
             `orcho verify --attest`",
        )
    })?;
    warn_untrusted(place, &key);
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
    if !repo.is_repository() {
        return Err(CliError::msg(format!(
            "{} is not in a git repository: attestations are kept on commits",
            place.checkout
        )));
    }
    let file = profile_path(place, profile)?;
    let at = repo.at(rev, &format!("./{file}")).map_err(|e| {
        CliError::usage(e.message).with_hint("name a commit: a hash, a branch, HEAD~1")
    })?;
    let commit = at.resolved.commit.clone();
    let short = &commit[..commit.len().min(12)];
    let bytes = at.profile.as_deref().ok_or_else(|| {
        CliError::msg(format!(
            "commit {short} has no `{file}`: nothing says which commands it must prove"
        ))
        .with_hint(
            "check a commit that holds the profile; `--profile FILE` names another file of the \
             repository",
        )
    })?;
    let parsed = profile_at(&repo, &commit, &file, bytes)?;
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
    let mut no_notes_here = false;
    if required.iter().any(|c| c.state == AttestedState::Missing) {
        no_notes_here = at.note.is_none() && !repo.has_notes();
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
    if no_notes_here {
        lines.push(format!(
            "hint: there are no attestations in this repository; after a clone, \
             `git fetch origin {NOTES_REF}:{NOTES_REF}` (or `orcho attest fetch`) brings them"
        ));
    }
    lines.push(if ready {
        "ready: every required command is proven for this commit".to_owned()
    } else {
        format!("not ready: {}", next_step(&required))
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

/// What to do about the commands not proven, by what is wrong with them.
fn next_step(required: &[AttestedCommand]) -> String {
    let is = |state| required.iter().any(|c| c.state == state);
    let untrusted = required
        .iter()
        .any(|c| c.state == AttestedState::Invalid && c.reason.contains("`trust.keys`"));
    let mut steps = Vec::new();
    if is(AttestedState::Failed) || is(AttestedState::Vacuous) {
        steps.push("fix what fails (or runs no test), commit, then `orcho verify --attest`");
    }
    if untrusted {
        steps.push(
            "a key signed that `trust.keys` does not list: add it to orcho.yaml (`orcho key \
             show` prints its lines) or attest with a listed key",
        );
    }
    if is(AttestedState::Missing) || is(AttestedState::Stale) {
        steps.push("on a clean checkout of this commit, `orcho verify --attest` attests it");
    }
    if is(AttestedState::Invalid) && !untrusted {
        steps.push("the note holds lines that prove nothing (named above); attest again");
    }
    steps.join("; ")
}

/// The profile's path from the checkout's root: `--profile FILE` (from
/// where `orcho` runs, or absolute), else `orcho.yaml`.
fn profile_path(place: &Place, profile: Option<&str>) -> Result<String, CliError> {
    let Some(profile) = profile else {
        return Ok(crate::place::PROFILE_FILE.to_owned());
    };
    if profile.starts_with("builtin:") {
        return Err(CliError::usage(
            "`--commit` reads the profile the commit holds; a built-in trusts no key",
        )
        .with_hint("leave out `--profile` (and ORCHO_PROFILE), or name the profile's file"));
    }
    let absolute = camino::Utf8PathBuf::from(crate::place::spec_of(profile)?);
    let inside = |base: &camino::Utf8Path| {
        let real = |p: &camino::Utf8Path| p.canonicalize_utf8().unwrap_or_else(|_| p.to_owned());
        let base = real(base);
        let dir = absolute.parent().map(real)?;
        let rel = dir.strip_prefix(&base).ok()?.join(absolute.file_name()?);
        Some(rel.to_string())
    };
    inside(&place.checkout).ok_or_else(|| {
        CliError::usage(format!(
            "the profile `{profile}` is not in the checkout {}: a commit holds only the \
             checkout's files",
            place.checkout
        ))
    })
}

/// The profile `file` as `commit` holds it, with every file it extends
/// read from the same commit.
fn profile_at(repo: &Repo, commit: &str, file: &str, first: &[u8]) -> Result<Profile, CliError> {
    let short = &commit[..commit.len().min(12)];
    let fail = |e: &dyn std::fmt::Display| {
        CliError::msg(format!("the profile at commit {short} cannot be read: {e}"))
    };
    let tmp = tempfile::tempdir().map_err(|e| fail(&e))?;
    let root = camino::Utf8PathBuf::try_from(tmp.path().to_owned()).map_err(|e| fail(&e))?;
    let write = |rel: &camino::Utf8Path, bytes: &[u8]| {
        let path = root.join(rel);
        if let Some(dir) = path.parent() {
            orcho::core::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
        }
        orcho::core::fs::write_atomic(&path, bytes).map_err(|e| fail(&e))
    };
    let mut current = camino::Utf8PathBuf::from(file);
    let mut bytes = first.to_vec();
    write(&current, &bytes)?;
    for _ in 0..orcho::profile::MAX_EXTENDS_DEPTH {
        let extends = serde_yaml::from_slice::<serde_yaml::Value>(&bytes)
            .ok()
            .and_then(|v| v.get("extends").and_then(|e| e.as_str().map(str::to_owned)));
        let Some(extends) = extends.filter(|e| !e.starts_with("builtin:")) else {
            break;
        };
        let next = normalize(&current.parent().unwrap_or("".into()).join(&extends))
            .ok_or_else(|| fail(&format!("`{extends}` is outside the repository")))?;
        let found = repo
            .objects(&[format!("{commit}:{next}")])
            .map_err(|e| fail(&e))?
            .into_iter()
            .flatten()
            .find_map(|o| o.blob)
            .ok_or_else(|| {
                fail(&format!(
                    "`{current}` extends `{extends}`, which the commit does not hold"
                ))
            })?;
        write(&next, &found)?;
        current = next;
        bytes = found;
    }
    Profile::load(root.join(file)).map_err(|e| {
        let said = orcho::core::error_chain(&e).replace(&format!("{root}/"), &format!("{short}:"));
        CliError::msg(format!(
            "the profile at commit {short} does not load: {said}"
        ))
    })
}

/// `path` without `.` and `..` (`None` when it climbs out of the root).
fn normalize(path: &camino::Utf8Path) -> Option<camino::Utf8PathBuf> {
    let mut out = camino::Utf8PathBuf::new();
    for part in path.components() {
        match part {
            camino::Utf8Component::Normal(name) => out.push(name),
            camino::Utf8Component::CurDir => {}
            camino::Utf8Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            _ => return None,
        }
    }
    Some(out)
}

/// `orcho attest push|fetch --json`.
#[derive(Debug, Serialize)]
struct SharedDoc<'a> {
    remote: &'a str,
    /// `nothing`, `done` or `merged`.
    result: &'static str,
}

fn shared_word(shared: Shared) -> &'static str {
    match shared {
        Shared::Nothing => "nothing",
        Shared::Merged => "merged",
        _ => "done",
    }
}

/// Refuses outside a git repository.
fn in_repository(place: &Place) -> Result<Repo, CliError> {
    let repo = Repo::new(&place.checkout);
    if repo.is_repository() {
        Ok(repo)
    } else {
        Err(CliError::msg(format!(
            "{} is not in a git repository: attestations are kept on commits",
            place.checkout
        )))
    }
}

/// `orcho attest push [REMOTE]`.
pub(crate) fn push(place: &Place, remote: &str) -> Result<Report, CliError> {
    let shared = in_repository(place)?.push(remote).map_err(|e| {
        CliError::msg(e.to_string()).with_hint(format!(
            "check that `{remote}` is a remote you can push to (`git remote -v`)"
        ))
    })?;
    let line = match shared {
        Shared::Nothing => "nothing to push: there are no attestations here yet (`orcho verify \
                            --attest` makes them)"
            .to_owned(),
        Shared::Merged => format!(
            "pushed {NOTES_REF} to {remote}, after merging the notes {remote} had meanwhile"
        ),
        _ => format!("pushed {NOTES_REF} to {remote}"),
    };
    Ok(Report::new(&SharedDoc {
        remote,
        result: shared_word(shared),
    })
    .line(line))
}

/// `orcho attest fetch [REMOTE]`.
pub(crate) fn fetch(place: &Place, remote: &str) -> Result<Report, CliError> {
    let shared = in_repository(place)?.fetch_and_merge(remote).map_err(|e| {
        CliError::msg(e.to_string()).with_hint(format!(
            "check that `{remote}` is a remote you can fetch from (`git remote -v`)"
        ))
    })?;
    let line = match shared {
        Shared::Nothing => format!("{remote} has no attestations yet"),
        Shared::Merged => {
            format!("fetched {NOTES_REF} from {remote}, merged with the notes here")
        }
        _ => format!("fetched {NOTES_REF} from {remote}"),
    };
    Ok(Report::new(&SharedDoc {
        remote,
        result: shared_word(shared),
    })
    .line(line))
}
