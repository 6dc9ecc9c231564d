//! Signed attestations of Orcho's verification receipts: proof that
//! travels with the commit.
//!
//! A receipt proves a command on the machine that wrote it, under a MAC key
//! only that machine has. An attestation carries the same proof to anyone
//! with the repository: for a receipt whose subject is a committed tree,
//!
//! - an in-toto **Statement v1** ([`statement`]) about the tree (subject
//!   digest `gitTree`, and `gitCommit`), with the **test-result** predicate
//!   (`PASSED`, `WARNED` for a pass with no test run, `FAILED`), the
//!   declared command and the digest of its declaration, and Orcho's own
//!   fields;
//! - in a **DSSE envelope** ([`dsse`]) signed with **Ed25519**
//!   ([`SigningKey`]);
//! - kept on the commit as a **git note** under `refs/notes/orcho`
//!   ([`notes`]), one envelope per line ([`Bundle`]);
//! - and **checked** ([`check()`]) against the keys the repository trusts
//!   (`trust.keys` in its profile), the commit's tree and the command as
//!   the repository declares it at that commit.
//!
//! ```
//! use orcho_attest::{Bundle, Envelope, IN_TOTO_PAYLOAD_TYPE, SigningKey, TrustedKey};
//!
//! let key = SigningKey::from_seed([7; 32]);
//! let envelope = Envelope::sign(b"{}".to_vec(), IN_TOTO_PAYLOAD_TYPE, &key);
//! let trusted = [TrustedKey::new("ci", key.public())];
//! assert_eq!(envelope.signed_by(&trusted, |k| &k.ed25519).map(|k| k.name.as_str()), Some("ci"));
//! let stranger = [TrustedKey::new("other", SigningKey::from_seed([8; 32]).public())];
//! assert!(envelope.signed_by(&stranger, |k| &k.ed25519).is_none());
//! ```
//!
//! # Crate features
//!
//! - `fuzzing`: entry points for the fuzz targets; not an API.

mod b64;
mod bundle;
mod check;
pub mod dsse;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod key;
pub mod notes;
pub mod statement;

pub use bundle::{Bundle, MAX_NOTE_BYTES, TooLarge};
pub use check::{
    AttestedCommand, AttestedState, Considered, Judge, Judgement, MAX_REASONS, Note, NoteOf, check,
};
pub use dsse::{Envelope, EnvelopeError, IN_TOTO_PAYLOAD_TYPE, Signature, pae};
pub use key::{ALGORITHM, KeyError, PublicKey, SigningKey, TrustedKey};
pub use statement::{Statement, StatementError, Subject, TestResult};

use orcho_receipts::{CommandReceipt, Environment};

/// The attestation of `receipt` about `subject`, signed with `key`;
/// `environment` is the declaration of the environment its command ran in
/// (the statement names its digest, so that a judge can tell which
/// declaration it ran under).
pub fn attest(
    receipt: &CommandReceipt,
    environment: Option<&Environment>,
    subject: &Subject,
    key: &SigningKey,
) -> Envelope {
    Envelope::sign(
        statement::statement_bytes(receipt, environment, subject),
        IN_TOTO_PAYLOAD_TYPE,
        key,
    )
}
