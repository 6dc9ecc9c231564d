//! What weakens the checkout's own proof, for `orcho status` and the Stop
//! hook: the change against `HEAD` (or the protected branch), read by
//! [`orcho::proof::review`], and the commands whose latest receipt ran
//! fewer tests than the last passing one; less what a person acknowledged
//! (`orcho status --ack-weakening`).

use orcho::receipts::{
    CommandName, ReceiptStore,
    weakening::{Weakening, fewer_tests},
};

pub(crate) use crate::output::doc::Weakened;
use crate::{error::CliError, place::Place};

/// What weakens the proof of the checkout at `place` against `against`
/// (`HEAD` when `None`), with the commands among `commands` whose latest
/// receipt ran fewer tests than their last passing one. Never fails: what
/// cannot be read is said in [`Weakened::unknown`] (nothing, against
/// `HEAD` in a repository without a commit or outside one).
pub(crate) fn weakened(
    place: &Place,
    against: Option<&str>,
    commands: &[CommandName],
    subjects: &[orcho::core::Digest],
) -> Weakened {
    let rev = against.unwrap_or("HEAD");
    let mut out = Weakened {
        against: rev.to_owned(),
        ..Weakened::default()
    };
    let mut found = Vec::new();
    let key = crate::key::receipt_key(place).ok();
    // The same work tree against the same base reviews the same: kept in
    // the store's cache, sealed.
    let cache_key = key
        .as_ref()
        .map(|k| k.derive(orcho::proof::REVIEW_CACHE_SEAL));
    let cache_file = orcho::core::layout::StoreDir::new(&place.store)
        .cache()
        .join("review.json");
    let cache = cache_key.as_ref().map(|key| orcho::proof::ReviewCache {
        file: &cache_file,
        key,
    });
    match orcho::proof::review_cached(
        &place.checkout,
        rev,
        Some(crate::place::PROFILE_FILE),
        subjects,
        cache,
    ) {
        Ok(review) => {
            found = review.weakenings;
            out.profile_added = review.profile_added;
            out.base = review.base;
        }
        Err(e) if against.is_some() => out.unknown = Some(orcho::core::error_chain(&e)),
        Err(_) => {}
    }
    if against.is_none() && !out.base.is_empty() {
        out.commits_since = branch_base(place, &out.base);
    }
    let acknowledged = key.as_ref().map_or_else(Default::default, |key| {
        orcho::proof::acknowledged(
            &ack_journal(place),
            &key.derive(orcho::proof::ACKNOWLEDGEMENT_SEAL),
        )
        .unwrap_or_default()
    });
    if let Some(key) = &key {
        let store = ReceiptStore::new(&place.store).with_key(key.clone());
        let mut profile = None;
        for name in commands {
            let since = acknowledged.counts.get(name.as_str()).copied();
            let Some(fewer) = fewer_tests(
                &store,
                name,
                since,
                camino::Utf8Path::new(crate::place::PROFILE_FILE),
                None,
            ) else {
                continue;
            };
            // The profile is read only for a finding, to name its line.
            if profile.is_none() {
                profile =
                    orcho::profile::Profile::load(place.checkout.join(crate::place::PROFILE_FILE))
                        .ok();
            }
            let (file, line) =
                profile
                    .as_ref()
                    .map_or((crate::place::PROFILE_FILE.to_owned(), None), |p| {
                        let (file, line) = p.command_declared_at(name.as_str());
                        (file, line.and_then(|l| u32::try_from(l).ok()))
                    });
            // A file of the checkout is named relative to it.
            let file = camino::Utf8Path::new(&file)
                .strip_prefix(&place.checkout)
                .map_or(file.clone(), ToString::to_string);
            out.counted
                .push((out.open.len() + found.len(), name.to_string()));
            found.push(Weakening::new(fewer.detector, file, line, fewer.what));
        }
    }
    // Which of `found` are counts, by command, before they are split.
    let counts: Vec<(usize, String)> = std::mem::take(&mut out.counted);
    for (i, weakening) in found.into_iter().enumerate() {
        let command = counts
            .iter()
            .find(|(at, _)| *at == i)
            .map(|(_, c)| c.clone());
        if acknowledged
            .ids
            .contains(&orcho::proof::weakening_id(&out.base, &weakening))
        {
            out.acknowledged.push(weakening);
        } else {
            if let Some(command) = command {
                out.counted.push((out.open.len(), command));
            }
            out.open.push(weakening);
        }
    }
    out
}

/// The branch a change on `head` is likely bound for, when `head` is not
/// it: `main`, `master`, else `origin`'s default branch, the first that
/// exists and is not `head` itself.
fn branch_base(place: &Place, head: &str) -> Option<String> {
    let request = orcho::receipts::exec::git_request(
        &place.checkout,
        &[
            "for-each-ref",
            "--format=%(refname:short) %(objectname)",
            "refs/heads/main",
            "refs/heads/master",
            "refs/remotes/origin/HEAD",
        ],
    );
    let out = orcho::receipts::exec::run(&request).ok()?;
    if !out.status.success() {
        return None;
    }
    let text = out.stdout.tail_lossy();
    let refs: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(name, id)| (name.to_owned(), id.trim().to_owned()))
        .collect();
    // In the order preferred, not git's.
    ["main", "master", "origin"]
        .iter()
        .find_map(|want| refs.iter().find(|(name, _)| name == want))
        .filter(|(_, id)| id != head)
        .map(|(name, _)| name.clone())
}

fn ack_journal(place: &Place) -> camino::Utf8PathBuf {
    orcho::core::layout::StoreDir::new(&place.store).acknowledged_weakenings()
}

/// Records that a person saw what weakens the checkout's proof now
/// (`orcho status --ack-weakening`), and accepted the test counts it
/// names; returns how many were acknowledged.
///
/// # Errors
///
/// No receipt key, or a journal that cannot be written.
pub(crate) fn acknowledge(place: &Place, weakened: &Weakened) -> Result<usize, CliError> {
    if weakened.open.is_empty() {
        return Ok(0);
    }
    let key = crate::key::receipt_key(place)?;
    let counts = weakened.counted.iter().map(|(_, c)| c.clone()).collect();
    orcho::proof::acknowledge(
        &ack_journal(place),
        &key.derive(orcho::proof::ACKNOWLEDGEMENT_SEAL),
        &orcho::proof::Acknowledgement::new(&weakened.against, &weakened.base, &weakened.open)
            .with_counts(counts),
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
    if let Some(branch) = &weakened.commits_since {
        lines.push(format!(
            "note: read against HEAD, so what this branch committed since `{branch}` is not; \
             `--base {branch}` reads it too, as CI should"
        ));
    }
    if let Some(why) = &weakened.unknown {
        lines.push(format!(
            "warning: the change could not be read against {against} for weakenings: {why}"
        ));
    }
    lines
}
