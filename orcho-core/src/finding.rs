//! Findings: what a phase, a reviewer or a gate found.

use camino::Utf8PathBuf;
use serde::{Deserialize, Serialize};

use crate::{Digest, Severity};

/// The context of finding fingerprints. Bump the version when what is hashed
/// changes.
const FINGERPRINT_CONTEXT: &str = "orcho finding fingerprint v1";

/// One thing that was found: a failing test, a review comment, a lint.
///
/// A finding has a stable [`fingerprint`](Self::fingerprint) so that the same
/// blocker can be recognised across attempts (the CI autopilot stops on a
/// repeated blocker, and a correction follow-up that repeats its parent's
/// blockers is stopped). The fingerprint ignores the detail text and the line
/// number, which change between attempts while the problem stays the same.
///
/// ```
/// use orcho_core::{Finding, Severity};
///
/// let first = Finding::new("tests", Severity::High, "test `parse_empty` failed")
///     .with_file("src/parse.rs")
///     .with_line(10)
///     .with_detail("assertion failed at attempt 1");
/// let again = Finding::new("tests", Severity::High, "test  `parse_empty`  failed")
///     .with_file("src/parse.rs")
///     .with_line(14)
///     .with_detail("assertion failed at attempt 2");
/// assert_eq!(first.fingerprint(), again.fingerprint());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "FindingRepr", into = "FindingRepr")]
#[non_exhaustive]
pub struct Finding {
    /// What produced it: a gate name, `reviewer`, a phase name.
    pub source: String,
    /// How serious it is.
    pub severity: Severity,
    /// One line saying what is wrong.
    pub title: String,
    /// Everything else (output, rationale). May be empty.
    pub detail: String,
    /// The file it is about, relative to the checkout root.
    pub file: Option<Utf8PathBuf>,
    /// The 1-based line in `file`.
    pub line: Option<u32>,
    /// A stable identity chosen by the producer (for example a test name). When
    /// set, the fingerprint uses it instead of the title and file.
    pub key: Option<String>,
}

impl Finding {
    /// A finding with no detail, file, line or key.
    pub fn new(source: impl Into<String>, severity: Severity, title: impl Into<String>) -> Self {
        Self {
            source: source.into(),
            severity,
            title: title.into(),
            detail: String::new(),
            file: None,
            line: None,
            key: None,
        }
    }

    /// The stable identity of this finding across attempts.
    ///
    /// It covers the source and either the key, or the title (with runs of
    /// whitespace collapsed and surrounding whitespace trimmed) and the file.
    /// It does not cover severity, detail or line.
    pub fn fingerprint(&self) -> Digest {
        let mut hasher = blake3::Hasher::new_derive_key(FINGERPRINT_CONTEXT);
        field(&mut hasher, self.source.as_bytes());
        match &self.key {
            Some(key) => {
                hasher.update(b"k");
                field(&mut hasher, key.as_bytes());
            }
            None => {
                hasher.update(b"t");
                let mut first = true;
                for word in self.title.split_whitespace() {
                    if !first {
                        hasher.update(b" ");
                    }
                    first = false;
                    hasher.update(word.as_bytes());
                }
                hasher.update(b"\0");
                field(
                    &mut hasher,
                    self.file.as_ref().map_or("", |f| f.as_str()).as_bytes(),
                );
            }
        }
        Digest::from_blake3(hasher.finalize())
    }
}

impl Finding {
    crate::setters! {
        /// Sets the detail text.
        pub fn with_detail(detail: impl Into<String>);
        /// Sets the file.
        pub fn with_file(file: Some(impl Into<Utf8PathBuf>));
        /// Sets the line.
        pub fn with_line(line: Some(u32));
        /// Sets the stable key the fingerprint is computed from.
        pub fn with_key(key: Some(impl Into<String>));
    }
}

/// Length-prefixes a field so that `("ab", "c")` and `("a", "bc")` differ.
fn field(hasher: &mut blake3::Hasher, bytes: &[u8]) {
    hasher.update(&(bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

/// The JSON shape of a finding. `fingerprint` is written for readers and
/// recomputed on read, so an edited field can never keep a stale
/// fingerprint.
#[serde_with::skip_serializing_none]
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FindingRepr {
    source: String,
    severity: Severity,
    title: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    detail: String,
    file: Option<Utf8PathBuf>,
    line: Option<u32>,
    key: Option<String>,
    fingerprint: Option<Digest>,
}

impl From<FindingRepr> for Finding {
    fn from(r: FindingRepr) -> Self {
        Self {
            source: r.source,
            severity: r.severity,
            title: r.title,
            detail: r.detail,
            file: r.file,
            line: r.line,
            key: r.key,
        }
    }
}

impl From<Finding> for FindingRepr {
    fn from(f: Finding) -> Self {
        let fingerprint = Some(f.fingerprint());
        Self {
            source: f.source,
            severity: f.severity,
            title: f.title,
            detail: f.detail,
            file: f.file,
            line: f.line,
            key: f.key,
            fingerprint,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn json_shape() {
        let finding = Finding::new("tests", Severity::High, "test `parse_empty` failed")
            .with_detail("thread 'parse_empty' panicked")
            .with_file("src/parse.rs")
            .with_line(42);
        insta::assert_json_snapshot!(finding);
        let minimal = Finding::new("reviewer", Severity::Info, "consider a doc comment");
        insta::assert_json_snapshot!(minimal);
    }

    #[test]
    fn the_fingerprint_separates_what_matters() {
        let base = Finding::new("tests", Severity::High, "x failed").with_file("a.rs");
        assert_ne!(
            base.fingerprint(),
            base.clone().with_file("b.rs").fingerprint()
        );
        assert_ne!(
            base.fingerprint(),
            Finding::new("lint", Severity::High, "x failed")
                .with_file("a.rs")
                .fingerprint()
        );
        assert_eq!(
            base.fingerprint(),
            base.clone().with_detail("more").with_line(3).fingerprint()
        );
        let keyed = base.clone().with_key("x");
        assert_ne!(base.fingerprint(), keyed.fingerprint());
        assert_eq!(
            keyed.fingerprint(),
            keyed.with_file("other.rs").fingerprint()
        );
    }

    proptest! {
        #[test]
        fn json_round_trips(source in ".{0,20}", title in ".{0,40}", detail in ".{0,40}", line in proptest::option::of(any::<u32>())) {
            let mut f = Finding::new(source, Severity::Medium, title).with_detail(detail);
            f.line = line;
            let json = serde_json::to_string(&f).unwrap();
            prop_assert_eq!(serde_json::from_str::<Finding>(&json).unwrap(), f);
        }
    }
}
