//! The keys of this host ([`orcho::checkout::Keys`]): the secrets `main`
//! took out of the environment, else the key files of the user's data
//! directory; and what the command line says when one cannot be had.
//!
//! `docs/receipts.md` says what the receipt key does and does not protect
//! against.

use std::sync::{Arc, OnceLock};

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{
    attest::SigningKey,
    checkout::{Checkout, CheckoutError, KeyError, Keys},
    receipts::{
        RECEIPT_KEY_VAR, ReceiptKey, SIGNING_KEY_VAR, VerificationContract, Verifier,
        exec::HostSecrets,
    },
};

use crate::{error::CliError, place::Place};

/// The keys this process was started with, taken out of its environment
/// by `main`.
static KEYS: OnceLock<Keys> = OnceLock::new();

/// Keeps the keys `main` took out of the environment.
pub fn set_host_secrets(secrets: HostSecrets) {
    let _ = KEYS.set(Keys::new(secrets));
}

/// The keys of this host: those `main` took, or, where the library runs
/// without it (a host embedding the MCP server or answering hooks
/// in-process), the environment's own.
fn keys() -> &'static Keys {
    KEYS.get_or_init(|| Keys::new(HostSecrets::from_environment().unwrap_or_default()))
}

/// Whether the signing key was given in the environment
/// (`ORCHO_SIGNING_KEY`), where the shell that started this process still
/// holds it.
pub fn signing_key_in_environment() -> bool {
    keys().signing_key_in_environment()
}

/// The receipt key of this host for `place`.
pub fn receipt_key(place: &Place) -> Result<ReceiptKey, CliError> {
    if let Some(key) = &place.actor.receipt_key {
        return Ok(key.clone());
    }
    Ok(keys().receipt_key(&place.checkout, &place.store)?)
}

/// The checkout's proof, with the receipt key.
pub fn checkout(place: &Place) -> Result<Checkout, CliError> {
    Ok(Checkout::new(
        &place.checkout,
        &place.store,
        Some(receipt_key(place)?),
    ))
}

/// A verifier of `contract` in the checkout, whose receipts are sealed
/// with the receipt key.
pub fn keyed_verifier(
    place: &Place,
    contract: VerificationContract,
) -> Result<Arc<Verifier>, CliError> {
    Ok(checkout(place)?.verifier(contract)?)
}

/// The file `name` in the user's data directory, outside every checkout.
pub fn data_file(name: &str) -> Result<Utf8PathBuf, CliError> {
    Ok(keys().data_file(name)?)
}

/// The text of the private file `path` (`what` names it in errors); `None`
/// when there is none. A file others can read is refused.
pub fn read_private(path: &Utf8Path, what: &'static str) -> Result<Option<String>, CliError> {
    Ok(orcho::checkout::read_private(path, what)?)
}

/// Refuses a private file `path` (`what` names it) that an agent working
/// in the place's checkout or store could read.
pub fn refuse_inside_place(
    path: &Utf8Path,
    place: &Place,
    what: &'static str,
) -> Result<(), CliError> {
    Ok(orcho::checkout::refuse_inside(
        path,
        what,
        &place.checkout,
        &place.store,
    )?)
}

/// The attestation signing key of this host for `place`; `None` when there
/// is none (`orcho key generate` makes one).
pub fn signing_key(place: &Place) -> Result<Option<SigningKey>, CliError> {
    Ok(keys().signing_key(&place.checkout, &place.store)?)
}

/// The signing key, or an error saying how to make one.
pub fn require_signing_key(place: &Place) -> Result<SigningKey, CliError> {
    Ok(keys().require_signing_key(&place.checkout, &place.store)?)
}

/// Makes a new signing key and writes its key file (mode 0600): refused
/// when one exists, unless `force`. Returns the key and where it is.
pub fn generate_signing_key(
    place: &Place,
    force: bool,
) -> Result<(SigningKey, Utf8PathBuf), CliError> {
    Ok(keys().generate_signing_key(&place.checkout, &place.store, force)?)
}

impl From<KeyError> for CliError {
    fn from(e: KeyError) -> Self {
        let hint = match &e {
            KeyError::TooShort { .. } => Some(
                "use a long random secret, e.g. the output of `openssl rand -hex 32`".to_owned(),
            ),
            KeyError::NoDataDir | KeyError::Create { .. } => Some(format!(
                "set {RECEIPT_KEY_VAR} to a long random secret{}",
                if matches!(e, KeyError::Create { .. }) {
                    " instead"
                } else {
                    ""
                }
            )),
            KeyError::Inside { what, .. } => Some(format!(
                "set XDG_DATA_HOME to a directory outside the checkout, or {}",
                match *what {
                    "receipt key" => "ORCHO_RECEIPT_KEY to a long random secret instead",
                    "signing key" => "ORCHO_SIGNING_KEY to a key's secret instead",
                    _ => "keep it in the user's data directory",
                }
            )),
            KeyError::Exposed { path, .. } => Some(format!("`chmod 600 {path}`")),
            KeyError::SigningVariable { .. } => {
                Some("it takes the secret `orcho key generate` wrote to its key file".to_owned())
            }
            KeyError::SigningFile { .. } => {
                Some("`orcho key generate --force` makes a new one".to_owned())
            }
            KeyError::SigningKeyExists { .. } => Some(
                "`orcho key show` prints it; `orcho key generate --force` replaces it (what it \
                 signed then proves nothing to a repository that trusts only the new key)"
                    .to_owned(),
            ),
            KeyError::NoSigningKey => Some(format!(
                "`orcho key generate` makes one (or set {SIGNING_KEY_VAR})"
            )),
            _ => None,
        };
        let error = Self::msg(e.to_string());
        match hint {
            Some(hint) => error.with_hint(hint),
            None => error,
        }
    }
}

impl From<CheckoutError> for CliError {
    fn from(e: CheckoutError) -> Self {
        let e = match e {
            CheckoutError::Key(key) => return key.into(),
            CheckoutError::Profile(profile) => return profile.into(),
            other => other,
        };
        let hint = match &e {
            CheckoutError::Revision { .. } => Some(
                "`--base` (or ORCHO_BASE) names the protected branch a change is judged by: \
                 `main`, `origin/main`"
                    .to_owned(),
            ),
            CheckoutError::BaseProfile { source, file, .. }
                if matches!(source.kind(), orcho::profile::ProfileErrorKind::Read(_)) =>
            {
                Some(format!(
                    "the base holds no `{file}`: commit one to the protected branch first"
                ))
            }
            CheckoutError::UnknownCommand { declared, .. } => Some(format!(
                "its commands: {}",
                orcho::core::spelling::quoted(declared)
            )),
            _ => None,
        };
        // These say their cause in their message already.
        let message = match &e {
            CheckoutError::BaseProfile { .. } | CheckoutError::Acknowledge(_) => e.to_string(),
            _ => orcho::core::error_chain(&e),
        };
        let error = if e.is_usage() {
            Self::usage(message)
        } else {
            Self::msg(message)
        };
        match hint {
            Some(hint) => error.with_hint(hint),
            None => error,
        }
    }
}
