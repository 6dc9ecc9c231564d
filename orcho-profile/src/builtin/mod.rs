//! The built-in profiles, embedded in the crate.
//!
//! - `default`: plan → implement (the `tests` gate feeds failures into the
//!   next attempt) → review (a handoff on rejection) → final acceptance
//!   (readiness from the receipts on disk).
//! - `quick`: implement with the `tests` gate, nothing else.
//! - `read_only_review`: a review session under the `read_only` permission
//!   preset.
//!
//! Load one with [`Profile::builtin`], or extend it with
//! `extends: builtin:<name>`.

use crate::{
    Profile, ProfileError, ProfileErrorKind, extends::Chain, load, provenance::SourceName,
};

/// The names of the built-in profiles.
pub const NAMES: &[&str] = &["default", "quick", "read_only_review"];

const TEXTS: [(&str, &str); 3] = [
    ("default", include_str!("default.yaml")),
    ("quick", include_str!("quick.yaml")),
    ("read_only_review", include_str!("read_only_review.yaml")),
];

/// The name (with a `'static` lifetime) and YAML text of a built-in.
pub(crate) fn find(name: &str) -> Option<(&'static str, &'static str)> {
    TEXTS.iter().copied().find(|(n, _)| *n == name)
}

/// The YAML text of the built-in profile `name`, as embedded.
///
/// ```
/// let text = orcho_profile::builtin::text("quick").expect("a built-in");
/// assert!(text.contains("uses: tests"));
/// ```
pub fn text(name: &str) -> Option<&'static str> {
    find(name).map(|(_, text)| text)
}

impl Profile {
    /// The built-in profile `name` (see [`builtin`](crate::builtin)).
    ///
    /// ```
    /// use orcho_profile::Profile;
    ///
    /// let profile = Profile::builtin("default")?;
    /// assert_eq!(profile.phases.len(), 4);
    /// let err = Profile::builtin("defualt").unwrap_err();
    /// assert_eq!(err.suggestion(), Some("default"));
    /// # Ok::<(), orcho_profile::ProfileError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ProfileErrorKind::UnknownBuiltin`] (with the nearest name) when
    /// there is no such built-in.
    pub fn builtin(name: &str) -> Result<Self, ProfileError> {
        let Some((name, text)) = find(name) else {
            return Err(ProfileError::in_file(
                format!("builtin:{}", name.chars().take(60).collect::<String>()),
                ProfileErrorKind::UnknownBuiltin {
                    name: name.chars().take(60).collect(),
                    nearest: orcho_core::nearest(name, NAMES.iter().copied()).map(str::to_owned),
                },
            ));
        };
        let shown = format!("builtin:{name}");
        let mut chain = Chain::start(shown.clone(), shown);
        load::from_source(text, SourceName::Builtin(name), &mut chain)
    }
}
