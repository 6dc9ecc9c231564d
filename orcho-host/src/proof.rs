//! The checkout's proof as every host of this crate reads it: the profile
//! it is judged by (its own, or the protected branch's with `--base`), its
//! verifier, its readiness, and a commit judged from its notes.

use std::sync::Arc;

use orcho::{
    attest::{SigningKey, notes::Repo},
    checkout::{CheckoutError, Readiness},
    profile::Profile,
    receipts::Verifier,
};
use orcho_agents::hook::Health;

use crate::{error::CliError, output::doc::AttestedDoc, place::Place};

/// The verifier of the profile in use, or, with a base, of the profile at
/// the base (its commands, environments and `required` list).
pub fn verifier(
    place: &Place,
    profile: Option<&str>,
    base: Option<&str>,
) -> Result<Arc<Verifier>, CliError> {
    let (name, plan) = match base_of(base) {
        Some(base) => {
            let (commit, plan) = plan_at(place, profile, base)?;
            place.progress(&format!(
                "judged by base {base} ({}): its required commands, as it declares them",
                commit.get(..12).unwrap_or(&commit)
            ));
            (format!("{base}:orcho.yaml"), plan)
        }
        None => place.load_profile(profile)?,
    };
    let contract = plan
        .verification
        .ok_or(CheckoutError::NoVerification { profile: name })?;
    crate::key::keyed_verifier(place, contract)
}

/// The base to judge by: `--base`, else `ORCHO_BASE` (clap reads both);
/// an empty value is none.
pub fn base_of(base: Option<&str>) -> Option<&str> {
    base.filter(|b| !b.trim().is_empty())
}

/// Judges `rev` from its notes, by `base` when given.
pub fn judged(
    place: &Place,
    profile: Option<&str>,
    rev: &str,
    base: Option<&str>,
) -> Result<orcho::proof::CommitProof, CliError> {
    let file = profile_path(place, profile)?;
    orcho::proof::judge_commit(&place.checkout, rev, base, &file).map_err(|e| proof_error(&e))
}

/// A commit that could not be judged, said with a hint.
pub fn proof_error(e: &orcho::proof::CommitProofError) -> CliError {
    use orcho::proof::CommitProofError as E;
    let hint = match e {
        E::Git(_) => {
            "name a commit: a hash, a branch, HEAD~1 (and for `--base`, the protected branch: \
             `main`, `origin/main`)"
        }
        E::NoProfile { .. } => {
            "check a commit that holds the profile; `--profile FILE` names another file of the \
             repository"
        }
        _ => "",
    };
    let message = orcho::core::error_chain(e);
    let error = match e {
        E::Git(_) => CliError::usage(message),
        _ => CliError::msg(message),
    };
    if hint.is_empty() {
        error
    } else {
        error.with_hint(hint)
    }
}

/// A commit judged from its notes (by `base` when given), and, with a base,
/// what it does to weaken its own proof, or why that could not be read.
pub fn commit_status(
    place: &Place,
    profile: Option<&str>,
    rev: &str,
    base: Option<&str>,
) -> Result<
    (
        orcho::proof::CommitProof,
        Result<Vec<orcho::receipts::weakening::Weakening>, String>,
    ),
    CliError,
> {
    let proof = judged(place, profile, rev, base_of(base))?;
    let weakenings = match &proof.trust_source {
        orcho::proof::TrustSource::Base { commit, .. } => {
            orcho::proof::commit_weakenings(&place.checkout, commit, &proof.commit)
                .map_err(|e| orcho::core::error_chain(&e))
        }
        _ => Ok(Vec::new()),
    };
    Ok((proof, weakenings))
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
    Ok(orcho::checkout::profile_in_checkout(
        &place.checkout,
        &absolute,
    )?)
}

/// The plan of the profile at `rev` (the protected branch, for `--base`),
/// with every file it extends read from the same commit: the commit it
/// names and the plan.
pub fn plan_at(
    place: &Place,
    profile: Option<&str>,
    rev: &str,
) -> Result<(String, orcho::RunPlan), CliError> {
    let file = profile_path(place, profile)?;
    Ok(orcho::checkout::plan_at(
        &place.checkout,
        &file,
        rev,
        &crate::place::registry(),
    )?)
}

/// The checkout's readiness, judged by `base` when given, and how the
/// agents' hooks stand in it.
pub async fn readiness(
    place: &Place,
    profile: Option<&str>,
    base: Option<&str>,
) -> Result<(Readiness, Health), CliError> {
    let verifier = verifier(place, profile, base)?;
    let checkout = crate::key::checkout(place)?;
    let against = base_of(base).map(str::to_owned);
    let readiness =
        tokio::task::spawn_blocking(move || checkout.readiness(&verifier, against.as_deref()))
            .await??;
    let hooks = orcho_agents::hook::health(&place.checkout, &place.store)?;
    Ok((readiness, hooks))
}

/// Whether the checkout is clean; when not, an error (`required`) or a
/// note and `false`.
pub fn clean(place: &Place, required: bool) -> Result<bool, CliError> {
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
pub fn attach_head(
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
    Repo::new(&place.checkout).commit("HEAD").map_err(|e| {
        CliError::msg(e.to_string())
            .with_hint("an attestation is about a commit: make the first one")
    })?;
    let signed = orcho::proof::sign_commit(verifier, "HEAD", &key).map_err(|e| sign_error(&e))?;
    warn_untrusted(place, &key);
    let short = short_id(&signed.commit);
    if signed.attested.is_empty() {
        place.say(&format!("nothing new to attest on {short}"));
    } else {
        place.say(&format!(
            "attested on {short}: {} (signed by key {}; `orcho attest push` shares them)",
            signed.attested.join(", "),
            &key.public().keyid()[..16]
        ));
    }
    Ok(Some(AttestedDoc {
        commit: signed.commit,
        commands: signed.attested,
    }))
}

/// A commit whose receipts could not be signed, said with a hint.
pub fn sign_error(e: &orcho::proof::SignError) -> CliError {
    use orcho::proof::SignError as E;
    let hint = match e {
        E::Git(_) => {
            "`git notes --ref orcho remove HEAD` removes a note Orcho cannot read (a remote's \
             copy stays); a revision names a commit: a hash, a branch, HEAD~1"
        }
        _ => "",
    };
    let error = CliError::msg(orcho::core::error_chain(e));
    if hint.is_empty() {
        error
    } else {
        error.with_hint(hint)
    }
}

/// Attaches attestations of what `verified` proved when `attest` (or the
/// profile's `verification.attest`) asks for them and the signing key is
/// not in the environment, where the commands could read it.
pub async fn attest_verified(
    place: &Place,
    verifier: &Arc<Verifier>,
    attest: bool,
) -> Result<Option<AttestedDoc>, CliError> {
    if !(attest || verifier.contract().attest) {
        return Ok(None);
    }
    if crate::key::signing_key_in_environment() {
        // `--attest` with the key in the environment was refused before
        // anything ran; the profile's `attest` with it says why nothing
        // is attached.
        place.progress(
            "not attested: the signing key is in the environment, where the commands could read \
             it\n  hint: `orcho attest sign` signs these receipts in a step of its own",
        );
        return Ok(None);
    }
    let (v, place) = (Arc::clone(verifier), place.clone());
    tokio::task::spawn_blocking(move || attach_head(&place, &v, attest)).await?
}

/// A commit's id, short.
pub fn short_id(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// The runs started from this checkout that wait at their delivery gate,
/// newest first: their work, and its receipts, are in their worktrees.
/// None when the store cannot be read (the receipts are what a status is
/// about).
pub fn at_delivery(place: &Place) -> Vec<orcho::core::RunId> {
    place
        .store()
        .awaiting_delivery_into(&place.checkout)
        .unwrap_or_default()
}
