//! The embedded texts.

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
