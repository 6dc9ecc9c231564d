//! A checkout's own proof, the same in every host: its keys, its
//! verification, what its change does to weaken its proof, and the plan it
//! is judged by.
//!
//! [`Checkout`] is a checkout with its store and receipt key.
//! [`Checkout::verify`] runs declared commands and environments with their
//! receipts, saying each result as it comes ([`Verifying`]);
//! [`Checkout::readiness`] classifies the receipts and reads what the
//! change weakens ([`Checkout::weakened`]), which a person acknowledges
//! ([`Checkout::acknowledge`]). [`plan_at`] loads the profile a protected
//! branch holds, by which a change is judged (`--base`). [`Keys`] says
//! where the receipt key and the signing key of a host come from.

mod base;
mod keys;
mod remote;
mod verify;
mod weakened;

use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::layout::StoreDir;
use orcho_receipts::{ReceiptKey, ReceiptStore, VerificationContract, Verifier};

pub use base::{plan_at, profile_in_checkout};
pub use keys::{
    KeyError, Keys, MIN_SECRET, RECEIPT_KEY_FILE, SIGNING_KEY_FILE, make_private_dir, read_private,
    refuse_inside,
};
pub use remote::repository_url;
pub use verify::{
    CommandRun, LeftOutToolchain, MAX_RUNS, Readiness, Verified, Verifying, commands_to_verify,
    declared, environments_of,
};
pub use weakened::Weakened;

/// A checkout with its store and (when the host has one) its receipt key.
#[derive(Debug, Clone)]
pub struct Checkout {
    root: Utf8PathBuf,
    store: Utf8PathBuf,
    key: Option<ReceiptKey>,
}

impl Checkout {
    /// The checkout at `root`, whose receipts are kept in the store
    /// directory `store`, sealed with `key`.
    pub fn new(
        root: impl Into<Utf8PathBuf>,
        store: impl Into<Utf8PathBuf>,
        key: Option<ReceiptKey>,
    ) -> Self {
        Self {
            root: root.into(),
            store: store.into(),
            key,
        }
    }

    /// The checkout's root.
    pub fn root(&self) -> &Utf8Path {
        &self.root
    }

    /// Its store directory.
    pub fn store(&self) -> &Utf8Path {
        &self.store
    }

    fn layout(&self) -> StoreDir {
        StoreDir::new(&self.store)
    }

    /// A verifier of `contract` in the checkout, whose receipts are sealed
    /// with the receipt key.
    ///
    /// # Errors
    ///
    /// No receipt key, or a contract the checkout cannot run.
    pub fn verifier(&self, contract: VerificationContract) -> Result<Arc<Verifier>, CheckoutError> {
        let key = self.key.clone().ok_or(CheckoutError::NoReceiptKey)?;
        let store = ReceiptStore::new(&self.store).with_key(key);
        Ok(Arc::new(Verifier::new(contract, &self.root, store)?))
    }
}

/// Why a checkout's proof could not be read, made or judged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckoutError {
    /// A key could not be had.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The checkout was opened without a receipt key, and one is needed.
    #[error("there is no receipt key to seal receipts with")]
    NoReceiptKey,
    /// The checkout is not in a git repository.
    #[error("{dir} is not in a git repository: attestations are kept on commits")]
    NotARepository {
        /// The checkout.
        dir: Utf8PathBuf,
    },
    /// A revision names no commit.
    #[error("{message}")]
    Revision {
        /// What git said.
        message: String,
    },
    /// The profile a base holds does not load.
    #[error(
        "the profile at base {rev} ({}) does not load: {}",
        short(commit),
        orcho_core::error_chain(source)
    )]
    BaseProfile {
        /// The base as given.
        rev: String,
        /// The commit it names.
        commit: String,
        /// The profile's path in it.
        file: String,
        /// Why.
        #[source]
        source: orcho_profile::ProfileError,
    },
    /// A profile file outside the checkout, which a commit cannot hold.
    #[error(
        "the profile `{profile}` is not in the checkout {checkout}: a commit holds only the \
         checkout's files"
    )]
    NotInCheckout {
        /// The profile as named.
        profile: String,
        /// The checkout.
        checkout: Utf8PathBuf,
    },
    /// A profile that does not resolve.
    #[error(transparent)]
    Profile(#[from] orcho_profile::ProfileError),
    /// The profile declares no verification.
    #[error("the profile `{profile}` declares no verification commands")]
    NoVerification {
        /// The profile's name.
        profile: String,
    },
    /// A command name the profile does not declare.
    #[error(
        "the profile declares no verification command `{given}`{}",
        near.as_ref().map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default()
    )]
    UnknownCommand {
        /// The name given.
        given: String,
        /// The declared name nearest to it.
        near: Option<String>,
        /// Every declared command.
        declared: Vec<String>,
    },
    /// A name that cannot name a command.
    #[error(transparent)]
    BadName(#[from] orcho_receipts::NameError),
    /// A contract the checkout cannot run.
    #[error(transparent)]
    Contract(#[from] orcho_receipts::ContractError),
    /// Receipts could not be written or read.
    #[error(transparent)]
    Receipt(#[from] orcho_receipts::ReceiptError),
    /// The acknowledgement could not be recorded.
    #[error("cannot record the acknowledgement: {0}")]
    Acknowledge(#[source] crate::proof::AcknowledgeError),
}

impl CheckoutError {
    /// Whether the request was at fault (a name or revision that names
    /// nothing), not the checkout.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            Self::Revision { .. }
                | Self::NotInCheckout { .. }
                | Self::UnknownCommand { .. }
                | Self::BadName(_)
        )
    }
}

fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}
