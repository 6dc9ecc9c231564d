//! The plan a change is judged by: the profile the protected branch holds.

use camino::Utf8Path;
use orcho_attest::notes::Repo;
use orcho_gates::GateRegistry;

use super::CheckoutError;
use crate::RunPlan;

/// The plan of the profile `file` (a path from the repository's root) at
/// `rev` (the protected branch, for `--base`), with every file it extends
/// read from the same commit: the commit `rev` names, and the plan.
///
/// # Errors
///
/// `checkout` outside a git repository, a `rev` that names no commit, or a
/// profile the commit does not hold or that does not load.
pub fn plan_at(
    checkout: &Utf8Path,
    file: &str,
    rev: &str,
    registry: &GateRegistry,
) -> Result<(String, RunPlan), CheckoutError> {
    let repo = Repo::new(checkout);
    if !repo.is_repository() {
        return Err(CheckoutError::NotARepository {
            dir: checkout.to_owned(),
        });
    }
    let commit = repo
        .commit(rev)
        .map_err(|e| CheckoutError::Revision { message: e.message })?;
    let parsed = crate::proof::profile_at(&repo, &commit, file, None).map_err(|source| {
        CheckoutError::BaseProfile {
            rev: rev.to_owned(),
            commit: commit.clone(),
            file: file.to_owned(),
            source,
        }
    })?;
    let resolved = parsed.resolve(registry)?;
    Ok((commit, RunPlan::from_profile(&resolved)))
}

/// The profile file `profile` (absolute) as a path from the checkout's
/// root, which is how a commit names it.
///
/// # Errors
///
/// [`CheckoutError::NotInCheckout`]: a commit holds only the checkout's
/// files.
pub fn profile_in_checkout(
    checkout: &Utf8Path,
    profile: &Utf8Path,
) -> Result<String, CheckoutError> {
    let real = |p: &Utf8Path| p.canonicalize_utf8().unwrap_or_else(|_| p.to_owned());
    let inside = || {
        let base = real(checkout);
        let dir = profile.parent().map(real)?;
        let rel = dir.strip_prefix(&base).ok()?.join(profile.file_name()?);
        Some(rel.to_string())
    };
    inside().ok_or_else(|| CheckoutError::NotInCheckout {
        profile: profile.to_string(),
        checkout: checkout.to_owned(),
    })
}
