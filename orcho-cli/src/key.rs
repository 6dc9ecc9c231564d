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

use std::io;

use camino::{Utf8Path, Utf8PathBuf};
use orcho::receipts::{RECEIPT_KEY_VAR, ReceiptKey};

use crate::{error::CliError, place::Place};

/// The file name of the key in the data directory.
const KEY_FILE: &str = "receipt-key";

/// The shortest secret taken: shorter ones are guessable.
const MIN_SECRET: usize = 16;

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
    if let Some(secret) = std::env::var_os(RECEIPT_KEY_VAR) {
        let secret = secret.to_string_lossy();
        return from_secret(secret.trim(), RECEIPT_KEY_VAR);
    }
    let path = key_file()?;
    refuse_inside(&path, place)?;
    let text = match read(&path)? {
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

/// Where the key file is: in `$XDG_DATA_HOME`, else `~/.local/share`.
fn key_file() -> Result<Utf8PathBuf, CliError> {
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
    Ok(data.join("orcho").join(KEY_FILE))
}

/// A key file the agent could read through the checkout or the store is
/// no key at all.
fn refuse_inside(path: &Utf8Path, place: &Place) -> Result<(), CliError> {
    let real = |p: &Utf8Path| p.canonicalize_utf8().unwrap_or_else(|_| p.to_owned());
    let dir = path.parent().unwrap_or(path);
    let dirs = [dir.to_owned(), real(dir)];
    for (what, inside) in [("checkout", &place.checkout), ("store", &place.store)] {
        let inside = [inside.clone(), real(inside)];
        if dirs.iter().any(|d| inside.iter().any(|i| d.starts_with(i))) {
            return Err(CliError::msg(format!(
                "the receipt key file `{path}` would be inside the {what} `{}`, where an agent \
                 working there could read it",
                inside[0]
            ))
            .with_hint(format!(
                "set XDG_DATA_HOME to a directory outside the checkout, or {RECEIPT_KEY_VAR} to a \
                 long random secret"
            )));
        }
    }
    Ok(())
}

/// The key file's text; `None` when there is none yet.
fn read(path: &Utf8Path) -> Result<Option<String>, CliError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(CliError::msg(format!(
                "cannot read the receipt key `{path}`: {e}"
            )));
        }
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map_err(|e| CliError::msg(format!("cannot read the receipt key `{path}`: {e}")))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(CliError::msg(format!(
                "the receipt key `{path}` can be read by other users (mode {:o})",
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
    if let Some(dir) = path.parent() {
        orcho::core::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| fail(&e))?;
        }
    }
    // The temporary file is created with mode 0600 and linked in place
    // only if no key is there yet.
    match orcho::core::fs::write_new_atomic(path, format!("{secret}\n").as_bytes()) {
        Ok(()) => Ok(secret),
        Err(e) if e.is_already_exists() => read(path)?.ok_or_else(|| fail(&"it vanished")),
        Err(e) => Err(fail(&e)),
    }
}
