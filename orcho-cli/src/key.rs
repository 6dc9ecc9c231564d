//! The receipt key: what makes a receipt that an agent forged `invalid`.
//!
//! Every receipt `orcho` writes carries a MAC made with a key the agent's
//! processes never get. The key is derived from a secret taken from
//! `ORCHO_RECEIPT_KEY` when the caller sets it (a CI secret), else from the
//! key file in the user's data directory (`$XDG_DATA_HOME/orcho/receipt-key`,
//! by default `~/.local/share/orcho/receipt-key`), created with mode 0600 on
//! first use. Neither is ever passed to a phase or a verification command,
//! and the key file may not live inside the checkout or the store. The same
//! secret in the file and in the variable gives the same key, so a CI job can
//! check receipts written on a developer's machine by setting the variable
//! to the file's contents.
//!
//! `docs/receipts.md` says what this does and does not protect against.

use std::{io, sync::OnceLock};

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{
    attest::SigningKey,
    receipts::{RECEIPT_KEY_VAR, ReceiptKey, SIGNING_KEY_VAR, exec::HostSecrets},
};

use crate::{error::CliError, place::Place};

/// The file name of the key in the data directory.
const KEY_FILE: &str = "receipt-key";

/// Which key a message is about.
#[derive(Clone, Copy)]
struct Which {
    what: &'static str,
    var_hint: &'static str,
}

const RECEIPT: Which = Which {
    what: "receipt key",
    var_hint: "ORCHO_RECEIPT_KEY to a long random secret",
};

const SIGNING: Which = Which {
    what: "signing key",
    var_hint: "ORCHO_SIGNING_KEY to a key's secret",
};

/// The file name of the signing key in the data directory.
const SIGNING_KEY_FILE: &str = "signing-key";

/// The shortest secret taken: shorter ones are guessable.
const MIN_SECRET: usize = 16;

/// The keys this process was started with, taken out of its environment
/// by `main`.
static HOST_SECRETS: OnceLock<HostSecrets> = OnceLock::new();

/// Keeps the keys `main` took out of the environment.
pub(crate) fn set_host_secrets(secrets: HostSecrets) {
    let _ = HOST_SECRETS.set(secrets);
}

/// The keys given in the environment: those `main` took, or, where the
/// library runs without it (a host embedding [`crate::OrchoMcp`] or
/// [`crate::answer_hook`]), the environment's own.
fn host_secrets() -> &'static HostSecrets {
    HOST_SECRETS.get_or_init(|| HostSecrets::from_environment().unwrap_or_default())
}

/// Whether the signing key was given in the environment
/// (`ORCHO_SIGNING_KEY`), where the shell that started this process still
/// holds it.
pub(crate) fn signing_key_in_environment() -> bool {
    host_secrets().signing_secret().is_some()
}

/// The receipt key of this host for `place`.
///
/// # Errors
///
/// A secret that is too short, a key file that others can read or that lies
/// inside the checkout or the store, or a data directory that cannot be
/// found or written.
pub(crate) fn receipt_key(place: &Place) -> Result<ReceiptKey, CliError> {
    if let Some(key) = &place.receipt_key {
        return Ok(key.clone());
    }
    if let Some(secret) = host_secrets().receipt_secret() {
        return from_secret(secret.trim(), RECEIPT_KEY_VAR);
    }
    let path = key_file(KEY_FILE)?;
    refuse_inside(&path, place, RECEIPT)?;
    let text = match read(&path, RECEIPT)? {
        Some(text) => text,
        None => create(&path)?,
    };
    from_secret(text.trim(), path.as_str())
}

fn from_secret(secret: &str, from: &str) -> Result<ReceiptKey, CliError> {
    if secret.len() < MIN_SECRET {
        return Err(CliError::msg(format!(
            "the receipt key in `{from}` is {} characters long; it needs at least {MIN_SECRET}",
            secret.len()
        ))
        .with_hint("use a long random secret, e.g. the output of `openssl rand -hex 32`"));
    }
    Ok(ReceiptKey::derive_from_secret(secret.as_bytes()))
}

/// Where the key file `name` is: in `$XDG_DATA_HOME`, else
/// `~/.local/share`.
fn key_file(name: &str) -> Result<Utf8PathBuf, CliError> {
    let absolute = |var: &str| {
        let value = std::env::var_os(var)?;
        let path = Utf8PathBuf::from_path_buf(value.into()).ok()?;
        path.is_absolute().then_some(path)
    };
    let data = absolute("XDG_DATA_HOME")
        .or_else(|| absolute("HOME").map(|home| home.join(".local").join("share")))
        .ok_or_else(|| {
            CliError::msg("there is no data directory for the receipt key (neither XDG_DATA_HOME nor HOME is set)")
                .with_hint(format!("set {RECEIPT_KEY_VAR} to a long random secret"))
        })?;
    Ok(data.join("orcho").join(name))
}

/// A key file the agent could read through the checkout or the store is
/// no key at all.
fn refuse_inside(path: &Utf8Path, place: &Place, which: Which) -> Result<(), CliError> {
    let real = |p: &Utf8Path| p.canonicalize_utf8().unwrap_or_else(|_| p.to_owned());
    let dir = path.parent().unwrap_or(path);
    let dirs = [dir.to_owned(), real(dir)];
    for (what, inside) in [("checkout", &place.checkout), ("store", &place.store)] {
        let inside = [inside.clone(), real(inside)];
        if dirs.iter().any(|d| inside.iter().any(|i| d.starts_with(i))) {
            return Err(CliError::msg(format!(
                "the {} file `{path}` would be inside the {what} `{}`, where an agent \
                 working there could read it",
                which.what, inside[0]
            ))
            .with_hint(format!(
                "set XDG_DATA_HOME to a directory outside the checkout, or {} instead",
                which.var_hint
            )));
        }
    }
    Ok(())
}

/// The key file's text; `None` when there is none yet.
fn read(path: &Utf8Path, which: Which) -> Result<Option<String>, CliError> {
    let what = which.what;
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(CliError::msg(format!(
                "cannot read the {what} `{path}`: {e}"
            )));
        }
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map_err(|e| CliError::msg(format!("cannot read the {what} `{path}`: {e}")))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(CliError::msg(format!(
                "the {what} `{path}` can be read by other users (mode {:o})",
                mode & 0o777
            ))
            .with_hint(format!("`chmod 600 {path}`")));
        }
    }
    Ok(Some(text))
}

/// Creates the key file with a fresh random secret, readable by its owner
/// only. When another `orcho` created it first, its secret is the one.
fn create(path: &Utf8Path) -> Result<String, CliError> {
    let fail = |e: &dyn std::fmt::Display| {
        CliError::msg(format!("cannot create the receipt key `{path}`: {e}")).with_hint(format!(
            "set {RECEIPT_KEY_VAR} to a long random secret instead"
        ))
    };
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| fail(&e))?;
    let secret: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    make_private_dir(path).map_err(|e| fail(&e))?;
    // The temporary file is created with mode 0600 and linked in place
    // only if no key is there yet.
    match orcho::core::fs::write_new_atomic(path, format!("{secret}\n").as_bytes()) {
        Ok(()) => Ok(secret),
        Err(e) if e.is_already_exists() => read(path, RECEIPT)?.ok_or_else(|| fail(&"it vanished")),
        Err(e) => Err(fail(&e)),
    }
}

/// Refuses a private file `path` (`what` names it) that an agent working
/// in the place's checkout or store could read.
pub(crate) fn refuse_inside_place(
    path: &Utf8Path,
    place: &Place,
    what: &'static str,
) -> Result<(), CliError> {
    refuse_inside(
        path,
        place,
        Which {
            what,
            var_hint: "keep it in the user's data directory",
        },
    )
}

/// The file `name` in the user's data directory (`$XDG_DATA_HOME/orcho`,
/// else `~/.local/share/orcho`), outside every checkout.
pub(crate) fn data_file(name: &str) -> Result<Utf8PathBuf, CliError> {
    key_file(name)
}

/// The text of the private file `path` (`what` names it in errors); `None`
/// when there is none. A file others can read is refused.
pub(crate) fn read_private(
    path: &Utf8Path,
    what: &'static str,
) -> Result<Option<String>, CliError> {
    read(path, Which { what, var_hint: "" })
}

/// Creates the directory of the key file `path`, readable by its owner
/// only.
pub(crate) fn make_private_dir(path: &Utf8Path) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(dir) = path.parent() {
        orcho::core::fs::create_dir_all(dir)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
    }
    Ok(())
}

/// The attestation signing key of this host for `place`: from
/// `ORCHO_SIGNING_KEY` (base64 of the seed, a CI secret), else from the
/// key file beside the receipt key (`signing-key`); `None` when there is
/// neither (`orcho key generate` makes one).
///
/// # Errors
///
/// A variable or file that holds no key, a key file others can read or
/// one inside the checkout or the store.
pub(crate) fn signing_key(place: &Place) -> Result<Option<SigningKey>, CliError> {
    if let Some(secret) = host_secrets().signing_secret() {
        return SigningKey::from_secret_text(secret).map(Some).map_err(|e| {
            CliError::msg(format!("`{SIGNING_KEY_VAR}` holds no signing key: {e}"))
                .with_hint("it takes the secret `orcho key generate` wrote to its key file")
        });
    }
    let path = key_file(SIGNING_KEY_FILE)?;
    refuse_inside(&path, place, SIGNING)?;
    let Some(text) = read(&path, SIGNING)? else {
        return Ok(None);
    };
    SigningKey::from_secret_text(&text).map(Some).map_err(|e| {
        CliError::msg(format!("the signing key `{path}` holds no key: {e}"))
            .with_hint("`orcho key generate --force` makes a new one")
    })
}

/// The signing key, or an error saying how to make one.
pub(crate) fn require_signing_key(place: &Place) -> Result<SigningKey, CliError> {
    signing_key(place)?.ok_or_else(|| {
        CliError::msg("there is no signing key on this machine").with_hint(format!(
            "`orcho key generate` makes one (or set {SIGNING_KEY_VAR})"
        ))
    })
}

/// Makes a new signing key and writes its key file (mode 0600): refused
/// when one exists, unless `force`. Returns the key and where it is.
pub(crate) fn generate_signing_key(
    place: &Place,
    force: bool,
) -> Result<(SigningKey, Utf8PathBuf), CliError> {
    let path = key_file(SIGNING_KEY_FILE)?;
    refuse_inside(&path, place, SIGNING)?;
    let fail = |e: &dyn std::fmt::Display| {
        CliError::msg(format!("cannot write the signing key `{path}`: {e}"))
    };
    let key = SigningKey::generate().map_err(|e| fail(&e))?;
    make_private_dir(&path).map_err(|e| fail(&e))?;
    if force {
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(fail(&e)),
        }
    }
    let text = format!("{}\n", key.to_secret_text());
    match orcho::core::fs::write_new_atomic(&path, text.as_bytes()) {
        Ok(()) => Ok((key, path)),
        Err(e) if e.is_already_exists() => Err(CliError::msg(format!(
            "a signing key exists already: `{path}`"
        ))
        .with_hint(
            "`orcho key show` prints it; `orcho key generate --force` replaces it (what it signed \
             then proves nothing to a repository that trusts only the new key)",
        )),
        Err(e) => Err(fail(&e)),
    }
}

/// A verifier of `contract` in the checkout, whose receipts are sealed
/// with the receipt key.
pub(crate) fn keyed_verifier(
    place: &Place,
    contract: orcho::receipts::VerificationContract,
) -> Result<std::sync::Arc<orcho::receipts::Verifier>, CliError> {
    let store = orcho::receipts::ReceiptStore::new(&place.store).with_key(receipt_key(place)?);
    let verifier = orcho::receipts::Verifier::new(contract, &place.checkout, store)?;
    Ok(std::sync::Arc::new(verifier))
}
