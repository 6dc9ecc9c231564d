//! The keys of this host: the receipt key, which makes a receipt an agent
//! forged `invalid`, and the attestation signing key.
//!
//! The receipt key is derived from a secret the host was given in
//! `ORCHO_RECEIPT_KEY` (a CI secret), else from the key file in the user's
//! data directory (`$XDG_DATA_HOME/orcho/receipt-key`, by default
//! `~/.local/share/orcho/receipt-key`), created with mode 0600 on first use.
//! The signing key comes from `ORCHO_SIGNING_KEY`, else from `signing-key`
//! beside it. Neither is ever passed to a phase or a verification command,
//! and no key file may live inside the checkout or the store, where an agent
//! working there could read it. The same secret in the file and in the
//! variable gives the same receipt key, so a CI job checks receipts written
//! on a developer's machine by setting the variable to the file's contents.

use std::io;

use camino::{Utf8Path, Utf8PathBuf};
use orcho_attest::SigningKey;
use orcho_receipts::{RECEIPT_KEY_VAR, ReceiptKey, SIGNING_KEY_VAR, exec::HostSecrets};

/// The file name of the receipt key in the data directory.
pub const RECEIPT_KEY_FILE: &str = "receipt-key";

/// The file name of the signing key in the data directory.
pub const SIGNING_KEY_FILE: &str = "signing-key";

/// The shortest secret taken: shorter ones are guessable.
pub const MIN_SECRET: usize = 16;

const RECEIPT: &str = "receipt key";
const SIGNING: &str = "signing key";

/// Why a key (or another private file of the data directory) could not be
/// had.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The receipt key's secret is too short to be a secret.
    #[error("the receipt key in `{from}` is {len} characters long; it needs at least {MIN_SECRET}")]
    TooShort {
        /// The variable or file it came from.
        from: String,
        /// Its length.
        len: usize,
    },
    /// Neither `XDG_DATA_HOME` nor `HOME` names an absolute directory.
    #[error(
        "there is no data directory for the receipt key (neither XDG_DATA_HOME nor HOME is set)"
    )]
    NoDataDir,
    /// The file would lie inside the checkout or the store.
    #[error(
        "the {what} file `{path}` would be inside the {inside} `{dir}`, where an agent working \
         there could read it"
    )]
    Inside {
        /// What the file holds.
        what: &'static str,
        /// The file.
        path: Utf8PathBuf,
        /// `checkout` or `store`.
        inside: &'static str,
        /// That directory.
        dir: Utf8PathBuf,
    },
    /// The file could not be read.
    #[error("cannot read the {what} `{path}`: {source}")]
    Read {
        /// What the file holds.
        what: &'static str,
        /// The file.
        path: Utf8PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Other users can read the file.
    #[error("the {what} `{path}` can be read by other users (mode {mode:o})")]
    Exposed {
        /// What the file holds.
        what: &'static str,
        /// The file.
        path: Utf8PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The receipt key file could not be created.
    #[error("cannot create the receipt key `{path}`: {why}")]
    Create {
        /// The file.
        path: Utf8PathBuf,
        /// Why.
        why: String,
    },
    /// The signing key file could not be written.
    #[error("cannot write the signing key `{path}`: {why}")]
    Write {
        /// The file.
        path: Utf8PathBuf,
        /// Why.
        why: String,
    },
    /// `ORCHO_SIGNING_KEY` holds no key.
    #[error("`{SIGNING_KEY_VAR}` holds no signing key: {why}")]
    SigningVariable {
        /// Why.
        why: String,
    },
    /// The signing key file holds no key.
    #[error("the signing key `{path}` holds no key: {why}")]
    SigningFile {
        /// The file.
        path: Utf8PathBuf,
        /// Why.
        why: String,
    },
    /// A signing key exists, and was not to be replaced.
    #[error("a signing key exists already: `{path}`")]
    SigningKeyExists {
        /// Its file.
        path: Utf8PathBuf,
    },
    /// There is no signing key at all.
    #[error("there is no signing key on this machine")]
    NoSigningKey,
}

/// Where a host's keys come from: the secrets it was started with and the
/// user's data directory.
#[derive(Debug, Clone, Default)]
pub struct Keys {
    secrets: HostSecrets,
    data_dir: Option<Utf8PathBuf>,
}

impl Keys {
    /// The keys of `secrets` (what the host took out of its environment),
    /// else of the key files in the user's data directory.
    pub fn new(secrets: HostSecrets) -> Self {
        Self {
            secrets,
            data_dir: None,
        }
    }

    /// Key files in `dir` instead of the user's data directory (a test, or
    /// a host with a directory of its own).
    #[must_use]
    pub fn with_data_dir(mut self, dir: impl Into<Utf8PathBuf>) -> Self {
        self.data_dir = Some(dir.into());
        self
    }

    /// Whether the signing key was given in the environment
    /// (`ORCHO_SIGNING_KEY`), where the shell that started the host still
    /// holds it.
    pub fn signing_key_in_environment(&self) -> bool {
        self.secrets.signing_secret().is_some()
    }

    /// The file `name` in the data directory (`$XDG_DATA_HOME/orcho`, else
    /// `~/.local/share/orcho`), outside every checkout.
    ///
    /// # Errors
    ///
    /// [`KeyError::NoDataDir`].
    pub fn data_file(&self, name: &str) -> Result<Utf8PathBuf, KeyError> {
        if let Some(dir) = &self.data_dir {
            return Ok(dir.join(name));
        }
        let absolute = |var: &str| {
            let value = std::env::var_os(var)?;
            let path = Utf8PathBuf::from_path_buf(value.into()).ok()?;
            path.is_absolute().then_some(path)
        };
        let data = absolute("XDG_DATA_HOME")
            .or_else(|| absolute("HOME").map(|home| home.join(".local").join("share")))
            .ok_or(KeyError::NoDataDir)?;
        Ok(data.join("orcho").join(name))
    }

    /// The receipt key for the checkout `checkout` with its store `store`:
    /// from the secret given, else the key file (made on first use).
    ///
    /// # Errors
    ///
    /// A secret that is too short, a key file that others can read or that
    /// lies inside the checkout or the store, or a data directory that
    /// cannot be found or written.
    pub fn receipt_key(
        &self,
        checkout: &Utf8Path,
        store: &Utf8Path,
    ) -> Result<ReceiptKey, KeyError> {
        if let Some(secret) = self.secrets.receipt_secret() {
            return from_secret(secret.trim(), RECEIPT_KEY_VAR);
        }
        let path = self.data_file(RECEIPT_KEY_FILE)?;
        refuse_inside(&path, RECEIPT, checkout, store)?;
        let text = match read_private(&path, RECEIPT)? {
            Some(text) => text,
            None => create_receipt_key(&path)?,
        };
        from_secret(text.trim(), path.as_str())
    }

    /// The signing key: from `ORCHO_SIGNING_KEY` (base64 of the seed, a CI
    /// secret), else from its key file; `None` when there is neither.
    ///
    /// # Errors
    ///
    /// A variable or file that holds no key, a key file others can read or
    /// one inside the checkout or the store.
    pub fn signing_key(
        &self,
        checkout: &Utf8Path,
        store: &Utf8Path,
    ) -> Result<Option<SigningKey>, KeyError> {
        if let Some(secret) = self.secrets.signing_secret() {
            return SigningKey::from_secret_text(secret)
                .map(Some)
                .map_err(|e| KeyError::SigningVariable { why: e.to_string() });
        }
        let path = self.data_file(SIGNING_KEY_FILE)?;
        refuse_inside(&path, SIGNING, checkout, store)?;
        let Some(text) = read_private(&path, SIGNING)? else {
            return Ok(None);
        };
        SigningKey::from_secret_text(&text)
            .map(Some)
            .map_err(|e| KeyError::SigningFile {
                path,
                why: e.to_string(),
            })
    }

    /// The signing key, or [`KeyError::NoSigningKey`].
    ///
    /// # Errors
    ///
    /// As [`signing_key`](Self::signing_key), and none at all.
    pub fn require_signing_key(
        &self,
        checkout: &Utf8Path,
        store: &Utf8Path,
    ) -> Result<SigningKey, KeyError> {
        self.signing_key(checkout, store)?
            .ok_or(KeyError::NoSigningKey)
    }

    /// Makes a new signing key and writes its key file (mode 0600): refused
    /// when one exists, unless `force`. Returns the key and its file.
    ///
    /// # Errors
    ///
    /// A key file that exists (without `force`), lies inside the checkout or
    /// the store, or cannot be written.
    pub fn generate_signing_key(
        &self,
        checkout: &Utf8Path,
        store: &Utf8Path,
        force: bool,
    ) -> Result<(SigningKey, Utf8PathBuf), KeyError> {
        let path = self.data_file(SIGNING_KEY_FILE)?;
        refuse_inside(&path, SIGNING, checkout, store)?;
        let fail = |e: &dyn std::fmt::Display| KeyError::Write {
            path: path.clone(),
            why: e.to_string(),
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
        match orcho_core::fs::write_new_atomic(&path, text.as_bytes()) {
            Ok(()) => Ok((key, path)),
            Err(e) if e.is_already_exists() => Err(KeyError::SigningKeyExists { path }),
            Err(e) => Err(fail(&e)),
        }
    }
}

fn from_secret(secret: &str, from: &str) -> Result<ReceiptKey, KeyError> {
    if secret.len() < MIN_SECRET {
        return Err(KeyError::TooShort {
            from: from.to_owned(),
            len: secret.len(),
        });
    }
    Ok(ReceiptKey::derive_from_secret(secret.as_bytes()))
}

/// Refuses a private file `path` (holding `what`) that an agent working in
/// `checkout` or `store` could read.
///
/// # Errors
///
/// [`KeyError::Inside`].
pub fn refuse_inside(
    path: &Utf8Path,
    what: &'static str,
    checkout: &Utf8Path,
    store: &Utf8Path,
) -> Result<(), KeyError> {
    let real = |p: &Utf8Path| p.canonicalize_utf8().unwrap_or_else(|_| p.to_owned());
    let dir = path.parent().unwrap_or(path);
    let dirs = [dir.to_owned(), real(dir)];
    for (inside, at) in [("checkout", checkout), ("store", store)] {
        let at = [at.to_owned(), real(at)];
        if dirs.iter().any(|d| at.iter().any(|i| d.starts_with(i))) {
            return Err(KeyError::Inside {
                what,
                path: path.to_owned(),
                inside,
                dir: at[0].clone(),
            });
        }
    }
    Ok(())
}

/// The text of the private file `path` (holding `what`); `None` when there
/// is none.
///
/// # Errors
///
/// A file others can read, or one that cannot be read.
pub fn read_private(path: &Utf8Path, what: &'static str) -> Result<Option<String>, KeyError> {
    let read = |source| KeyError::Read {
        what,
        path: path.to_owned(),
        source,
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(read(e)),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).map_err(read)?.permissions().mode();
        if mode & 0o077 != 0 {
            return Err(KeyError::Exposed {
                what,
                path: path.to_owned(),
                mode: mode & 0o777,
            });
        }
    }
    Ok(Some(text))
}

/// Creates the directory of the private file `path`, readable by its owner
/// only.
///
/// # Errors
///
/// The directory cannot be made or its mode set.
pub fn make_private_dir(path: &Utf8Path) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    if let Some(dir) = path.parent() {
        orcho_core::fs::create_dir_all(dir)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
    }
    Ok(())
}

/// Creates the receipt key file with a fresh random secret, readable by its
/// owner only. When another process created it first, its secret is the
/// one.
fn create_receipt_key(path: &Utf8Path) -> Result<String, KeyError> {
    let fail = |e: &dyn std::fmt::Display| KeyError::Create {
        path: path.to_owned(),
        why: e.to_string(),
    };
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| fail(&e))?;
    let secret: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    make_private_dir(path).map_err(|e| fail(&e))?;
    // The temporary file is created with mode 0600 and linked in place
    // only if no key is there yet.
    match orcho_core::fs::write_new_atomic(path, format!("{secret}\n").as_bytes()) {
        Ok(()) => Ok(secret),
        Err(e) if e.is_already_exists() => {
            read_private(path, RECEIPT)?.ok_or_else(|| fail(&"it vanished"))
        }
        Err(e) => Err(fail(&e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs() -> (tempfile::TempDir, Utf8PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::from_path_buf(dir.path().to_owned()).unwrap();
        (dir, root)
    }

    #[test]
    fn a_receipt_key_file_is_made_once_and_read_back() {
        let (_dir, root) = dirs();
        let keys = Keys::default().with_data_dir(root.join("data"));
        let (checkout, store) = (root.join("checkout"), root.join("checkout/.orcho"));
        let first = keys.receipt_key(&checkout, &store).unwrap();
        let again = keys.receipt_key(&checkout, &store).unwrap();
        assert_eq!(first.derive("x"), again.derive("x"));
    }

    #[test]
    fn a_key_file_inside_the_checkout_is_refused() {
        let (_dir, root) = dirs();
        let keys = Keys::default().with_data_dir(root.join("checkout/keys"));
        let err = keys
            .receipt_key(&root.join("checkout"), &root.join("store"))
            .unwrap_err();
        assert!(
            matches!(
                err,
                KeyError::Inside {
                    inside: "checkout",
                    ..
                }
            ),
            "{err}"
        );
        let err = keys
            .generate_signing_key(&root.join("elsewhere"), &root.join("checkout"), false)
            .unwrap_err();
        assert!(
            matches!(
                err,
                KeyError::Inside {
                    inside: "store",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn a_signing_key_is_made_once_unless_forced() {
        let (_dir, root) = dirs();
        let keys = Keys::default().with_data_dir(root.join("data"));
        let (checkout, store) = (root.join("c"), root.join("s"));
        assert!(keys.signing_key(&checkout, &store).unwrap().is_none());
        let (made, _) = keys.generate_signing_key(&checkout, &store, false).unwrap();
        let err = keys
            .generate_signing_key(&checkout, &store, false)
            .unwrap_err();
        assert!(matches!(err, KeyError::SigningKeyExists { .. }), "{err}");
        let read = keys.require_signing_key(&checkout, &store).unwrap();
        assert_eq!(read.public(), made.public());
        let (forced, _) = keys.generate_signing_key(&checkout, &store, true).unwrap();
        assert_ne!(forced.public(), made.public());
    }

    #[cfg(unix)]
    #[test]
    fn a_key_file_others_can_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let (_dir, root) = dirs();
        let keys = Keys::default().with_data_dir(root.join("data"));
        let (checkout, store) = (root.join("c"), root.join("s"));
        keys.receipt_key(&checkout, &store).unwrap();
        let file = root.join("data").join(RECEIPT_KEY_FILE);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = keys.receipt_key(&checkout, &store).unwrap_err();
        assert!(
            matches!(err, KeyError::Exposed { mode: 0o644, .. }),
            "{err}"
        );
    }
}
