//! A small path glob over relative `/`-separated paths: the autopilot's
//! allowed-files check and permission rules match paths with it.

use std::fmt;

use camino::Utf8Path;

/// A glob over relative `/`-separated paths.
///
/// - `*` matches any run of characters within one path segment;
/// - `?` matches one character other than `/`;
/// - `**`, as a whole segment, matches zero or more segments;
/// - everything else matches itself.
///
/// Matching is linear in pattern × path (no backtracking blow-up).
///
/// ```
/// use orcho_core::glob::FileGlob;
///
/// let glob: FileGlob = "src/**/*.rs".parse()?;
/// assert!(glob.matches("src/lib.rs".into()));
/// assert!(glob.matches("src/a/b/c.rs".into()));
/// assert!(!glob.matches("tests/a.rs".into()));
/// assert!(!glob.matches("src/lib.rsx".into()));
/// # Ok::<(), orcho_core::glob::GlobError>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct FileGlob {
    pattern: String,
    segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    AnyDirs,
    Pattern(Vec<Tok>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Star,
    One,
    Lit(char),
}

impl FileGlob {
    /// Parses a glob.
    ///
    /// # Errors
    ///
    /// A [`GlobError`] when the glob is empty, absolute, has an empty
    /// segment (`a//b`), or uses `**` inside a segment (`a**`).
    pub fn new(pattern: &str) -> Result<Self, GlobError> {
        if pattern.is_empty() {
            return Err(GlobError::new(pattern, "it is empty"));
        }
        if pattern.starts_with('/') {
            return Err(GlobError::new(
                pattern,
                "it is absolute; globs match paths relative to the checkout",
            ));
        }
        let mut segments = Vec::new();
        for seg in pattern.split('/') {
            if seg.is_empty() {
                return Err(GlobError::new(pattern, "it has an empty segment"));
            }
            if seg == "**" {
                if segments.last() != Some(&Segment::AnyDirs) {
                    segments.push(Segment::AnyDirs);
                }
                continue;
            }
            if seg.contains("**") {
                return Err(GlobError::new(pattern, "`**` must be a whole path segment"));
            }
            segments.push(Segment::Pattern(
                seg.chars()
                    .map(|c| match c {
                        '*' => Tok::Star,
                        '?' => Tok::One,
                        c => Tok::Lit(c),
                    })
                    .collect(),
            ));
        }
        Ok(Self {
            pattern: pattern.to_owned(),
            segments,
        })
    }

    /// The glob as written.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Whether `path` (relative, `/`-separated) matches.
    pub fn matches(&self, path: &Utf8Path) -> bool {
        let path: Vec<&str> = path
            .as_str()
            .split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .collect();
        // can[i][j]: the first i glob segments match the first j path
        // segments.
        let (n, m) = (self.segments.len(), path.len());
        let mut can = vec![vec![false; m + 1]; n + 1];
        can[0][0] = true;
        for i in 1..=n {
            match &self.segments[i - 1] {
                Segment::AnyDirs => {
                    let mut any = false;
                    let prev = can[i - 1].clone();
                    for (cell, before) in can[i].iter_mut().zip(prev) {
                        any |= before;
                        *cell = any;
                    }
                }
                Segment::Pattern(toks) => {
                    for j in 1..=m {
                        can[i][j] = can[i - 1][j - 1] && segment_matches(toks, path[j - 1]);
                    }
                }
            }
        }
        can[n][m]
    }
}

/// Wildcard match of one segment, by dynamic programming.
fn segment_matches(toks: &[Tok], text: &str) -> bool {
    let text: Vec<char> = text.chars().collect();
    let mut row = vec![false; text.len() + 1];
    row[0] = true;
    for tok in toks {
        let mut next = vec![false; text.len() + 1];
        match tok {
            Tok::Star => {
                let mut any = false;
                for j in 0..=text.len() {
                    any |= row[j];
                    next[j] = any;
                }
            }
            Tok::One => next[1..].copy_from_slice(&row[..text.len()]),
            Tok::Lit(c) => {
                for j in 1..=text.len() {
                    next[j] = row[j - 1] && text[j - 1] == *c;
                }
            }
        }
        row = next;
    }
    row[text.len()]
}

impl std::str::FromStr for FileGlob {
    type Err = GlobError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

impl fmt::Display for FileGlob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.pattern)
    }
}

impl fmt::Debug for FileGlob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FileGlob({:?})", self.pattern)
    }
}

/// A glob pattern is malformed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid glob `{glob}`: {reason}")]
pub struct GlobError {
    glob: String,
    reason: &'static str,
}

impl GlobError {
    #[cold]
    pub(crate) fn new(glob: &str, reason: &'static str) -> Self {
        Self {
            glob: glob.to_owned(),
            reason,
        }
    }

    /// The glob.
    pub fn glob(&self) -> &str {
        &self.glob
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error_chain;
    use proptest::prelude::*;

    fn m(glob: &str, path: &str) -> bool {
        FileGlob::new(glob).unwrap().matches(Utf8Path::new(path))
    }

    #[test]
    fn wildcards() {
        assert!(m("*.rs", "lib.rs"));
        assert!(!m("*.rs", "src/lib.rs"), "`*` does not cross `/`");
        assert!(m("src/*.rs", "src/lib.rs"));
        assert!(m("src/?ib.rs", "src/lib.rs"));
        assert!(!m("src/?.rs", "src/ab.rs"));
        assert!(m("**", "a/b/c"));
        assert!(m("**/*.md", "README.md"), "`**` matches zero segments");
        assert!(m("docs/**", "docs/a/b.md"));
        assert!(m("docs/**", "docs"));
        assert!(m("a/**/b/**/c", "a/x/b/y/z/c"));
        assert!(!m("a/**/b", "a/x/c"));
        assert!(m("src/lib.rs", "./src/lib.rs"));
        assert!(!m("src/lib.rs", "src/lib.rs/x"));
    }

    #[test]
    fn bad_globs_are_refused() {
        let err = |g| error_chain(&FileGlob::new(g).unwrap_err());
        insta::assert_snapshot!(err(""), @"invalid glob ``: it is empty");
        insta::assert_snapshot!(err("/etc/*"), @"invalid glob `/etc/*`: it is absolute; globs match paths relative to the checkout");
        insta::assert_snapshot!(err("a//b"), @"invalid glob `a//b`: it has an empty segment");
        insta::assert_snapshot!(err("src/**.rs"), @"invalid glob `src/**.rs`: `**` must be a whole path segment");
    }

    proptest! {
        #[test]
        fn literal_globs_match_exactly_themselves(a in "[a-z]{1,5}(/[a-z]{1,5}){0,3}", b in "[a-z]{1,5}(/[a-z]{1,5}){0,3}") {
            let glob = FileGlob::new(&a).unwrap();
            prop_assert!(glob.matches(Utf8Path::new(&a)));
            prop_assert_eq!(glob.matches(Utf8Path::new(&b)), a == b);
        }

        #[test]
        fn double_star_matches_everything(path in "[a-z.]{1,5}(/[a-z.]{1,5}){0,4}") {
            prop_assert!(FileGlob::new("**").unwrap().matches(Utf8Path::new(&path)));
        }

        #[test]
        fn arbitrary_input_never_panics(glob in "[a-z*?/]{0,12}", path in "[a-z/]{0,12}") {
            if let Ok(g) = FileGlob::new(&glob) {
                let _ = g.matches(Utf8Path::new(&path));
            }
        }
    }
}
