//! Signed attestations: `orcho key`, `orcho verify --attest`, `orcho status
//! --commit` and `orcho attest push|fetch`.

use orcho::attest::{
    ALGORITHM, AttestedCommand, AttestedState, SigningKey,
    notes::{NOTES_REF, Repo, Shared},
};
use serde::Serialize;

use crate::output::doc::CommitStatusDoc;
use crate::proof::{base_of, clean, judged, plan_at, short_id, sign_error};
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

/// `orcho attest sign --json`.
#[derive(Debug, Serialize)]
struct SignDoc<'a> {
    commit: &'a str,
    tree: &'a str,
    trust_source: String,
    attested: &'a [String],
    unchanged: &'a [String],
    left_out: &'a [orcho::proof::LeftOut],
}

/// `orcho attest sign [--commit REV] [--base REF]`: signs the receipts
/// this checkout holds that prove REV's tree, and attaches them. Runs no
/// command of the repository; the profile is REV's (or the base's) as git
/// holds it, never the work tree's file.
pub(crate) fn sign(
    place: &Place,
    profile: Option<&str>,
    rev: &str,
    base: Option<&str>,
) -> Result<Report, CliError> {
    let repo = in_repository(place)?;
    let base = base_of(base);
    let key = crate::key::require_signing_key(place)?;
    let (judge_rev, source) = match base {
        Some(base) => (base, format!("base {base}")),
        None => (rev, "commit".to_owned()),
    };
    let (_, plan) = plan_at(place, profile, judge_rev)?;
    let contract = plan.verification.unwrap_or_default();
    let verifier = crate::key::keyed_verifier(place, contract)?;
    repo.commit(rev).map_err(|e| {
        CliError::usage(e.message).with_hint("name a commit: a hash, a branch, HEAD~1")
    })?;
    let signed = orcho::proof::sign_commit(&verifier, rev, &key).map_err(|e| sign_error(&e))?;
    let short = short_id(&signed.commit);
    let mut lines = Vec::new();
    if signed.attested.is_empty() {
        lines.push(format!("nothing new to attest on {short}"));
    } else {
        lines.push(format!(
            "attested on {short} (and its tree {}): {} (signed by key {}, judged by {source}; \
             `orcho attest push` shares them)",
            short_id(&signed.tree),
            signed.attested.join(", "),
            &key.public().keyid()[..16]
        ));
    }
    if !signed.unchanged.is_empty() {
        lines.push(format!(
            "already attested as recently: {}",
            signed.unchanged.join(", ")
        ));
    }
    for left in &signed.left_out {
        lines.push(format!("not attested: `{}`: {}", left.command, left.why));
    }
    let exit = if signed.left_out.is_empty() {
        Exit::Ok
    } else {
        Exit::NotReady
    };
    Ok(Report::new(&SignDoc {
        commit: &signed.commit,
        tree: &signed.tree,
        trust_source: source,
        attested: &signed.attested,
        unchanged: &signed.unchanged,
        left_out: &signed.left_out,
    })
    .line(lines.join("\n"))
    .exit(exit))
}

/// `orcho status --commit REV [--base REF]`: every required command,
/// from the notes alone.
pub(crate) fn status_commit(
    place: &Place,
    profile: Option<&str>,
    rev: &str,
    base: Option<&str>,
) -> Result<Report, CliError> {
    let base = base_of(base);
    let (proof, weakenings) = crate::proof::commit_status(place, profile, rev, base)?;
    let required = &proof.judgement.commands;
    let ready = proof.ready();
    let short = short_id(&proof.commit);
    let mut lines = vec![format!(
        "commit {short} (tree {}), from {NOTES_REF}:",
        short_id(&proof.tree)
    )];
    lines.push(match &proof.trust_source {
        orcho::proof::TrustSource::Base { rev, commit } => format!(
            "  judged by base {rev} ({}): its trusted keys, required commands and declarations",
            short_id(commit)
        ),
        _ => "  judged by the commit itself: its own orcho.yaml says which keys to trust and \
              what to run, so a change can vouch for itself (CI passes `--base` with the \
              protected branch)"
            .to_owned(),
    });
    let width = required.iter().map(|c| c.command.len()).max().unwrap_or(0);
    for c in required {
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
    if proof.contract.required.is_empty() {
        lines.push("  (the profile requires no command)".to_owned());
    }
    if !proof.edits.is_empty() {
        lines.push(format!(
            "this change edits what proves it ({} edit(s); a person must see them):",
            proof.edits.len()
        ));
        lines.extend(proof.edits.iter().map(|e| format!("  {e}")));
    }
    // What the change does to its tests: for the person who reviews it.
    let weakenings = weakenings.unwrap_or_else(|why| {
        lines.push(format!(
            "warning: the change could not be read for weakenings: {why}"
        ));
        Vec::new()
    });
    if !weakenings.is_empty() {
        lines.push(format!(
            "this change weakens its own proof ({} finding(s); its reviewer must see them):",
            weakenings.len()
        ));
        lines.extend(weakenings.iter().map(|w| format!("  {w}")));
    }
    if proof.trusted_keys == 0 {
        lines.push(
            "note: the profile judged by trusts no key (`trust.keys`), so no attestation \
             proves anything; `orcho key show` prints a key's lines"
                .to_owned(),
        );
    }
    if proof.no_notes_here {
        lines.push(format!(
            "hint: there are no attestations in this repository; after a clone, \
             `git fetch origin {NOTES_REF}:{NOTES_REF}` (or `orcho attest fetch`) brings them"
        ));
    }
    lines.push(if ready {
        "ready: every required command is proven for this commit".to_owned()
    } else {
        format!("not ready: {}", next_step(required, base.is_some()))
    });
    Ok(Report::new(&CommitStatusDoc::of(&proof, &weakenings))
        .line(lines.join("\n"))
        .exit(if ready { Exit::Ok } else { Exit::NotReady }))
}

/// `orcho attest explain --json`.
#[derive(Debug, Serialize)]
struct ExplainDoc<'a> {
    commit: &'a str,
    tree: &'a str,
    trust_source: String,
    commands: Vec<ExplainedDoc<'a>>,
}

#[derive(Debug, Serialize)]
struct ExplainedDoc<'a> {
    command: &'a str,
    state: AttestedState,
    reason: &'a str,
    considered: &'a [orcho::attest::Considered],
    /// Envelopes considered beyond those listed.
    more: usize,
}

/// `orcho attest explain --commit REV [COMMAND] [--base REF]`: per
/// command, which envelopes were considered and why each did or did not
/// count.
pub(crate) fn explain(
    place: &Place,
    profile: Option<&str>,
    rev: &str,
    base: Option<&str>,
    command: Option<&str>,
) -> Result<Report, CliError> {
    let base = base_of(base);
    let proof = judged(place, profile, rev, base)?;
    let names: Vec<&str> = proof
        .judgement
        .commands
        .iter()
        .map(|c| c.command.as_str())
        .collect();
    if let Some(command) = command
        && !names.contains(&command)
    {
        let near = orcho::core::nearest(command, names.iter().copied())
            .map(|n| format!(" (did you mean `{n}`?)"))
            .unwrap_or_default();
        return Err(CliError::usage(format!(
            "`{command}` is not a required command of the profile it is judged by{near}"
        ))
        .with_hint(format!(
            "its required commands: {}",
            orcho::core::spelling::quoted(&names)
        )));
    }
    let mut doc = ExplainDoc {
        commit: &proof.commit,
        tree: &proof.tree,
        trust_source: proof.trust_source.to_string(),
        commands: Vec::new(),
    };
    let mut lines = vec![format!(
        "commit {} (tree {}), judged by {}:",
        short_id(&proof.commit),
        short_id(&proof.tree),
        proof.trust_source
    )];
    for c in &proof.judgement.commands {
        if command.is_some_and(|name| name != c.command) {
            continue;
        }
        let (considered, more) = proof.judgement.explain(&c.command).unwrap_or((&[], 0));
        lines.push(format!("`{}`: {} — {}", c.command, c.state, c.reason));
        if considered.is_empty() {
            lines.push("  no envelope of the notes names it".to_owned());
        }
        for e in considered {
            lines.push(format!("  {}", considered_line(e)));
        }
        if more > 0 {
            lines.push(format!("  and {more} more not listed"));
        }
        doc.commands.push(ExplainedDoc {
            command: &c.command,
            state: c.state,
            reason: &c.reason,
            considered,
            more,
        });
    }
    Ok(Report::new(&doc).line(lines.join("\n")))
}

/// One envelope considered, in words.
fn considered_line(e: &orcho::attest::Considered) -> String {
    let line = e.line.map(|l| format!(" line {l}")).unwrap_or_default();
    let what = match (&e.signed_by, e.result) {
        (Some(key), Some(result)) => format!(
            "signed by `{key}`, {}{}",
            result.as_str(),
            e.finished_at
                .as_deref()
                .map(|t| format!(", finished {t}"))
                .unwrap_or_default()
        ),
        _ => "proves nothing".to_owned(),
    };
    let verdict = if e.counted {
        "counted".to_owned()
    } else {
        format!("not counted: {}", e.why)
    };
    format!("{}{line}: {what} — {verdict}", e.note)
}

/// What to do about the commands not proven, by what is wrong with them.
fn next_step(required: &[AttestedCommand], by_base: bool) -> String {
    let is = |state| required.iter().any(|c| c.state == state);
    let untrusted = required
        .iter()
        .any(|c| c.state == AttestedState::Invalid && c.reason.contains("`trust.keys`"));
    let mut steps = Vec::new();
    if is(AttestedState::Failed) || is(AttestedState::Vacuous) {
        steps.push("fix what fails (or runs no test), commit, then attest again");
    }
    if is(AttestedState::Unproven) {
        steps.push(
            "the change edits how a required command is declared: prove it as the base \
             declares it (`orcho verify --base REF`, then `orcho attest sign --base REF`), and \
             have a person review the edit",
        );
    }
    if untrusted {
        steps.push(if by_base {
            "a key signed that the base's `trust.keys` does not list: a change cannot trust its \
             own key; attest with a key the base lists"
        } else {
            "a key signed that `trust.keys` does not list: add it to orcho.yaml (`orcho key show` \
             prints its lines) or attest with a listed key"
        });
    }
    if is(AttestedState::Missing) || is(AttestedState::Stale) {
        steps.push(
            "on a clean checkout of this commit, `orcho verify` then `orcho attest sign` (or \
             `orcho verify --attest` with your own key file) attests it",
        );
    }
    if is(AttestedState::Invalid) && !untrusted {
        steps.push("the note holds lines that prove nothing (named above); attest again");
    }
    steps.join("; ")
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
