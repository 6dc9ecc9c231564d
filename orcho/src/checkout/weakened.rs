//! What weakens a checkout's own proof: the change against `HEAD` (or the
//! protected branch), read by [`proof::review`](crate::proof::review), and
//! the commands whose latest receipt ran fewer tests than the last passing
//! one; less what a person acknowledged.

use camino::Utf8Path;
use orcho_core::Digest;
use orcho_profile::{PROFILE_FILE, ProofEdit};
use orcho_receipts::{
    CommandName, ReceiptStore,
    weakening::{Weakening, fewer_tests},
};
use serde::Serialize;

use super::{Checkout, CheckoutError};
use crate::proof;

/// What weakens the checkout's proof.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct Weakened {
    /// What the change was read against (`HEAD`, or the base).
    pub against: String,
    /// What a person has not acknowledged yet: the checkout is not ready
    /// while there is any.
    pub open: Vec<Weakening>,
    /// What a person acknowledged.
    pub acknowledged: Vec<Weakening>,
    /// What a profile the base did not have declares (shown, never a
    /// weakening).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub profile_added: Vec<ProofEdit>,
    /// The commit the change was read against (empty when it could not
    /// be).
    #[serde(skip)]
    pub base: String,
    /// Which of `open` are test counts, by index, and whose.
    #[serde(skip)]
    counted: Vec<(usize, String)>,
    /// Read against `HEAD` on a branch whose commits a protected branch
    /// does not have: that branch (`main`), whose `--base` reads them too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commits_since: Option<String>,
    /// Why the change could not be read against the base, when it could
    /// not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
}

impl Weakened {
    /// Moves what is open to what is acknowledged (after
    /// [`Checkout::acknowledge`]).
    pub fn mark_acknowledged(&mut self) {
        let open = std::mem::take(&mut self.open);
        self.acknowledged.extend(open);
        self.counted.clear();
    }
}

impl Checkout {
    /// What weakens the proof of the checkout against `against` (`HEAD`
    /// when `None`), with the commands among `commands` whose latest
    /// receipt ran fewer tests than their last passing one. `subjects` are
    /// the fingerprints of the checkout's state, when known: the same state
    /// against the same base is reviewed once and kept in the store's
    /// cache, sealed with the receipt key.
    ///
    /// Never fails: what cannot be read is said in [`Weakened::unknown`]
    /// (nothing, against `HEAD` in a repository without a commit or outside
    /// one). Without a receipt key nothing is cached and nothing counts as
    /// acknowledged.
    pub fn weakened(
        &self,
        against: Option<&str>,
        commands: &[CommandName],
        subjects: &[Digest],
    ) -> Weakened {
        let rev = against.unwrap_or("HEAD");
        let mut out = Weakened {
            against: rev.to_owned(),
            ..Weakened::default()
        };
        let mut found = Vec::new();
        let key = self.key.as_ref();
        let cache_key = key.map(|k| k.derive(proof::REVIEW_CACHE_SEAL));
        let cache_file = self.layout().cache().join("review.json");
        let cache = cache_key.as_ref().map(|key| proof::ReviewCache {
            file: &cache_file,
            key,
        });
        match proof::review_cached(&self.root, rev, Some(PROFILE_FILE), subjects, cache) {
            Ok(review) => {
                found = review.weakenings;
                out.profile_added = review.profile_added;
                out.base = review.base;
            }
            Err(e) if against.is_some() => out.unknown = Some(orcho_core::error_chain(&e)),
            Err(_) => {}
        }
        if against.is_none() && !out.base.is_empty() {
            out.commits_since = self.branch_base(&out.base);
        }
        let acknowledged = key.map_or_else(Default::default, |key| {
            proof::acknowledged(
                &self.layout().acknowledged_weakenings(),
                &key.derive(proof::ACKNOWLEDGEMENT_SEAL),
            )
            .unwrap_or_default()
        });
        // Which of `found` are counts, by command.
        let mut counts = Vec::new();
        if let Some(key) = key {
            let store = ReceiptStore::new(&self.store).with_key(key.clone());
            let mut profile = None;
            for name in commands {
                let since = acknowledged.counts.get(name.as_str()).copied();
                let Some(fewer) =
                    fewer_tests(&store, name, since, Utf8Path::new(PROFILE_FILE), None)
                else {
                    continue;
                };
                // The profile is read only for a finding, to name its line.
                if profile.is_none() {
                    profile = orcho_profile::Profile::load(self.root.join(PROFILE_FILE)).ok();
                }
                let (file, line) = profile
                    .as_ref()
                    .map_or((PROFILE_FILE.to_owned(), None), |p| {
                        let (file, line) = p.command_declared_at(name.as_str());
                        (file, line.and_then(|l| u32::try_from(l).ok()))
                    });
                // A file of the checkout is named relative to it.
                let file = Utf8Path::new(&file)
                    .strip_prefix(&self.root)
                    .map_or(file.clone(), ToString::to_string);
                counts.push((found.len(), name.to_string()));
                found.push(Weakening::new(fewer.detector, file, line, fewer.what));
            }
        }
        for (i, weakening) in found.into_iter().enumerate() {
            let command = counts
                .iter()
                .find(|(at, _)| *at == i)
                .map(|(_, c)| c.clone());
            if acknowledged
                .ids
                .contains(&proof::weakening_id(&out.base, &weakening))
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

    /// Records that a person saw what weakens the checkout's proof now,
    /// and accepted the test counts it names; returns how many were
    /// acknowledged.
    ///
    /// # Errors
    ///
    /// No receipt key, or a journal that cannot be written.
    pub fn acknowledge(&self, weakened: &Weakened) -> Result<usize, CheckoutError> {
        if weakened.open.is_empty() {
            return Ok(0);
        }
        let key = self.key.as_ref().ok_or(CheckoutError::NoReceiptKey)?;
        let counts = weakened.counted.iter().map(|(_, c)| c.clone()).collect();
        proof::acknowledge(
            &self.layout().acknowledged_weakenings(),
            &key.derive(proof::ACKNOWLEDGEMENT_SEAL),
            &proof::Acknowledgement::new(&weakened.against, &weakened.base, &weakened.open)
                .with_counts(counts),
        )
        .map_err(CheckoutError::Acknowledge)?;
        Ok(weakened.open.len())
    }

    /// The branch a change on `head` is likely bound for, when `head` is
    /// not it: `main`, `master`, else `origin`'s default branch, the first
    /// that exists and is not `head` itself.
    fn branch_base(&self, head: &str) -> Option<String> {
        let request = orcho_receipts::exec::git_request(
            &self.root,
            &[
                "for-each-ref",
                "--format=%(refname:short) %(objectname)",
                "refs/heads/main",
                "refs/heads/master",
                "refs/remotes/origin/HEAD",
            ],
        );
        let out = orcho_receipts::exec::run(&request).ok()?;
        if !out.status.success() {
            return None;
        }
        let text = out.stdout.tail_lossy();
        let refs: Vec<(&str, &str)> = text
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(name, id)| (name, id.trim()))
            .collect();
        // In the order preferred, not git's.
        ["main", "master", "origin"]
            .iter()
            .find_map(|want| refs.iter().find(|(name, _)| name == want))
            .filter(|(_, id)| *id != head)
            .map(|(name, _)| (*name).to_owned())
    }
}
