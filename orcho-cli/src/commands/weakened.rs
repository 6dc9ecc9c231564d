//! What weakens the checkout's own proof, for `orcho status` and the Stop
//! hook: the change against `HEAD` (or the protected branch), read by
//! [`orcho::proof::review`], and the commands whose latest receipt ran
//! fewer tests than the last passing one; less what a person acknowledged
//! (`orcho status --ack-weakening`).

use orcho::{
    profile::ProofEdit,
    receipts::{
        CommandName, ReceiptStore,
        weakening::{Weakening, fewer_tests},
    },
};
use serde::Serialize;

use crate::{error::CliError, place::Place};

/// What weakens the checkout's proof.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Weakened {
    /// What the change was read against (`HEAD`, or the base).
    pub(crate) against: String,
    /// What a person has not acknowledged yet: the checkout is not ready
    /// while there is any.
    pub(crate) open: Vec<Weakening>,
    /// What a person acknowledged.
    pub(crate) acknowledged: Vec<Weakening>,
    /// What a profile the base did not have declares (shown, never a
    /// weakening).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) profile_added: Vec<ProofEdit>,
    /// Why the change could not be read against the base, when it could
    /// not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) unknown: Option<String>,
}

/// What weakens the proof of the checkout at `place` against `against`
/// (`HEAD` when `None`), with the commands among `commands` whose latest
/// receipt ran fewer tests than their last passing one. Never fails: what
/// cannot be read is said in [`Weakened::unknown`] (nothing, against
/// `HEAD` in a repository without a commit or outside one).
pub(crate) fn weakened(place: &Place, against: Option<&str>, commands: &[CommandName]) -> Weakened {
    let rev = against.unwrap_or("HEAD");
    let mut out = Weakened {
        against: rev.to_owned(),
        ..Weakened::default()
    };
    let mut found = Vec::new();
    match orcho::proof::review(&place.checkout, rev, Some(crate::place::PROFILE_FILE)) {
        Ok(review) => {
            found = review.weakenings;
            out.profile_added = review.profile_added;
        }
        Err(e) if against.is_some() => out.unknown = Some(orcho::core::error_chain(&e)),
        Err(_) => {}
    }
    let key = crate::key::receipt_key(place).ok();
    if let Some(key) = &key {
        let store = ReceiptStore::new(&place.store).with_key(key.clone());
        let mut profile = None;
        for name in commands {
            let at = |profile: &Option<orcho::profile::Profile>| {
                profile.as_ref().map_or(
                    (crate::place::PROFILE_FILE.to_owned(), None),
                    |p: &orcho::profile::Profile| {
                        let (file, line) = p.command_declared_at(name.as_str());
                        (file, line.and_then(|l| u32::try_from(l).ok()))
                    },
                )
            };
            // The profile is read only for a finding, to name its line.
            let fewer = fewer_tests(
                &store,
                name,
                camino::Utf8Path::new(crate::place::PROFILE_FILE),
                None,
            );
            if let Some(fewer) = fewer {
                if profile.is_none() {
                    profile = orcho::profile::Profile::load(
                        place.checkout.join(crate::place::PROFILE_FILE),
                    )
                    .ok();
                }
                let (file, line) = at(&profile);
                // A file of the checkout is named relative to it.
                let file = camino::Utf8Path::new(&file)
                    .strip_prefix(&place.checkout)
                    .map_or(file.clone(), ToString::to_string);
                found.push(Weakening::new(fewer.detector, file, line, fewer.what));
            }
        }
    }
    let acknowledged = key.as_ref().map_or_else(Default::default, |key| {
        orcho::proof::acknowledged(
            &ack_journal(place),
            &key.derive(orcho::proof::ACKNOWLEDGEMENT_SEAL),
        )
        .unwrap_or_default()
    });
    for weakening in found {
        if acknowledged.contains(&orcho::proof::weakening_id(&weakening)) {
            out.acknowledged.push(weakening);
        } else {
            out.open.push(weakening);
        }
    }
    out
}

fn ack_journal(place: &Place) -> camino::Utf8PathBuf {
    orcho::core::layout::StoreDir::new(&place.store).acknowledged_weakenings()
}

/// Records that a person saw what weakens the checkout's proof now
/// (`orcho status --ack-weakening`); returns how many were acknowledged.
///
/// # Errors
///
/// No receipt key, or a journal that cannot be written.
pub(crate) fn acknowledge(place: &Place, weakened: &Weakened) -> Result<usize, CliError> {
    if weakened.open.is_empty() {
        return Ok(0);
    }
    let key = crate::key::receipt_key(place)?;
    orcho::proof::acknowledge(
        &ack_journal(place),
        &key.derive(orcho::proof::ACKNOWLEDGEMENT_SEAL),
        &weakened.against,
        &weakened.open,
    )
    .map_err(|e| CliError::msg(format!("cannot record the acknowledgement: {e}")))?;
    Ok(weakened.open.len())
}

/// The text `orcho status` shows of `weakened`.
pub(crate) fn lines(weakened: &Weakened) -> Vec<String> {
    let mut lines = Vec::new();
    let against = &weakened.against;
    if !weakened.profile_added.is_empty() {
        lines.push(format!(
            "this change edits what proves it (against {against}; a person must review it):"
        ));
        lines.extend(weakened.profile_added.iter().map(|e| format!("  {e}")));
    }
    if !weakened.open.is_empty() {
        lines.push(format!(
            "this change weakens its own proof (against {against}); a person must review it, \
             then acknowledge it with `orcho status --ack-weakening`:"
        ));
        lines.extend(weakened.open.iter().map(|w| format!("  {w}")));
    }
    if !weakened.acknowledged.is_empty() {
        lines.push(format!(
            "acknowledged by a person: {} weakening(s) of this change",
            weakened.acknowledged.len()
        ));
    }
    if let Some(why) = &weakened.unknown {
        lines.push(format!(
            "warning: the change could not be read against {against} for weakenings: {why}"
        ));
    }
    lines
}
