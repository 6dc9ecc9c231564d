//! Patterns over a request's argument.

use std::{borrow::Cow, fmt};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A glob over the whole argument.
///
/// How it matches depends on what the argument is:
///
/// - **Command lines, tool names and other text** ([`matches`](Self::matches)):
///   `*` is any run of characters (`/` included), `?` one character,
///   everything else literal. A pattern that ends in ` *` also matches the
///   text before it, so `git status *` matches a bare `git status`.
/// - **Paths** ([`matches_path`](Self::matches_path)): glob rules. `*` and
///   `?` stay within one path segment (they never match `/`), `**` matches
///   across segments, and `**/` matches zero or more whole directories, so
///   `src/**/*.rs` matches `src/lib.rs` and `src/a/b.rs`. A pattern that is
///   exactly `*` matches every path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pattern {
    text: String,
    /// Tokens for text: `*` runs folded into one [`Token::Run`].
    plain: Vec<Token>,
    /// Tokens for paths.
    path: Vec<Token>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Token {
    Char(char),
    /// `?`: one character (not `/` in a path).
    One,
    /// `*`: any run (within one segment in a path).
    Run,
    /// `**` in a path: any run, across segments.
    Deep,
    /// `**/` in a path: nothing, or any run that ends in `/`.
    DeepDir,
}

/// Which reading of a pattern applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Plain,
    Path,
}

impl Pattern {
    /// Parses a pattern.
    pub fn new(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            plain: plain_tokens(text),
            path: path_tokens(text),
        }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the pattern matches all of `s`, read as text (a command
    /// line, a tool name).
    pub fn matches(&self, s: &str) -> bool {
        self.matches_in(Mode::Plain, s)
    }

    /// Whether the pattern matches all of `path`, read with glob rules.
    pub fn matches_path(&self, path: &str) -> bool {
        self.matches_in(Mode::Path, path)
    }

    pub(crate) fn matches_in(&self, mode: Mode, s: &str) -> bool {
        let text: Vec<char> = s.chars().collect();
        match mode {
            Mode::Path => glob_match(&self.path, &text, true),
            Mode::Plain => {
                glob_match(&self.plain, &text, false)
                    || without_trailing_words(&self.plain)
                        .is_some_and(|head| glob_match(head, &text, false))
            }
        }
    }

    /// Whether every string `other` matches is also matched by `self`, both
    /// read as text (decided symbolically: sound, and exact for the patterns
    /// rules use).
    pub fn covers(&self, other: &Self) -> bool {
        self.covers_in(Mode::Plain, other)
    }

    pub(crate) fn covers_in(&self, mode: Mode, other: &Self) -> bool {
        match mode {
            Mode::Path => covers_tokens(&self.path, &other.path, true),
            Mode::Plain => {
                let ours = alternatives(&self.plain);
                alternatives(&other.plain)
                    .iter()
                    .all(|a| ours.iter().any(|b| covers_tokens(b, a, false)))
            }
        }
    }
}

fn plain_tokens(text: &str) -> Vec<Token> {
    let mut tokens = Vec::with_capacity(text.len());
    for c in text.chars() {
        let t = match c {
            '*' => Token::Run,
            '?' => Token::One,
            c => Token::Char(c),
        };
        if !(t == Token::Run && tokens.last() == Some(&Token::Run)) {
            tokens.push(t);
        }
    }
    tokens
}

fn path_tokens(text: &str) -> Vec<Token> {
    if text == "*" {
        return vec![Token::Deep];
    }
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' => {
                let mut stars = 0;
                while chars.get(i) == Some(&'*') {
                    stars += 1;
                    i += 1;
                }
                if stars == 1 {
                    tokens.push(Token::Run);
                } else if chars.get(i) == Some(&'/') {
                    tokens.push(Token::DeepDir);
                    i += 1;
                } else {
                    tokens.push(Token::Deep);
                }
                continue;
            }
            '?' => tokens.push(Token::One),
            c => tokens.push(Token::Char(c)),
        }
        i += 1;
    }
    tokens
}

/// The tokens before a trailing ` *`, if the pattern ends in one.
fn without_trailing_words(tokens: &[Token]) -> Option<&[Token]> {
    match tokens {
        [head @ .., Token::Char(' '), Token::Run] => Some(head),
        _ => None,
    }
}

/// The token lists whose union a plain pattern matches.
fn alternatives(tokens: &[Token]) -> Vec<&[Token]> {
    let mut out = vec![tokens];
    out.extend(without_trailing_words(tokens));
    out
}

/// Whether `tokens` match all of `text`; in a path, `*` and `?` stop at `/`.
fn glob_match(tokens: &[Token], text: &[char], path: bool) -> bool {
    // at[p * width + t]: tokens[p..] match text[t..], filled from the end.
    let width = text.len() + 1;
    let mut at = vec![false; (tokens.len() + 1) * width];
    at[tokens.len() * width + text.len()] = true;
    for p in (0..tokens.len()).rev() {
        // For `**/`: whether some `/` at or after t is followed by a match
        // of the rest.
        let mut slash_then_rest = false;
        for t in (0..=text.len()).rev() {
            let next = |p: usize, t: usize| at[p * width + t];
            let here = text.get(t).copied();
            let in_segment = here.is_some_and(|c| !path || c != '/');
            let value = match tokens[p] {
                Token::Char(c) => here == Some(c) && next(p + 1, t + 1),
                Token::One => in_segment && next(p + 1, t + 1),
                Token::Run => next(p + 1, t) || (in_segment && at[p * width + t + 1]),
                Token::Deep => next(p + 1, t) || (here.is_some() && at[p * width + t + 1]),
                Token::DeepDir => {
                    if here == Some('/') && next(p + 1, t + 1) {
                        slash_then_rest = true;
                    }
                    next(p + 1, t) || slash_then_rest
                }
            };
            at[p * width + t] = value;
        }
    }
    at[0]
}

/// Whether every string `a` matches is matched by `b`.
fn covers_tokens(b: &[Token], a: &[Token], path: bool) -> bool {
    // Whether b's `*` can stand for a's token (in a path, never for a `/`).
    let run_takes = |t: Token| {
        !path || matches!(t, Token::One | Token::Run) || matches!(t, Token::Char(c) if c != '/')
    };
    // reach[i][j]: b[..i] can consume a[..j].
    let mut reach = vec![vec![false; a.len() + 1]; b.len() + 1];
    reach[0][0] = true;
    for i in 0..b.len() {
        for j in 0..=a.len() {
            if !reach[i][j] {
                continue;
            }
            match b[i] {
                Token::Deep => {
                    for cell in reach[i + 1].iter_mut().skip(j) {
                        *cell = true;
                    }
                }
                Token::Run => {
                    reach[i + 1][j] = true;
                    let mut k = j;
                    while k < a.len() && run_takes(a[k]) {
                        k += 1;
                        reach[i + 1][k] = true;
                    }
                }
                Token::DeepDir => {
                    reach[i + 1][j] = true;
                    if a.get(j) == Some(&Token::DeepDir) {
                        reach[i + 1][j + 1] = true;
                    }
                    for k in j..a.len() {
                        if a[k] == Token::Char('/') {
                            reach[i + 1][k + 1] = true;
                        }
                    }
                }
                Token::One => {
                    let one_char = match a.get(j) {
                        Some(Token::One) => true,
                        Some(Token::Char(c)) => !path || *c != '/',
                        _ => false,
                    };
                    if one_char {
                        reach[i + 1][j + 1] = true;
                    }
                }
                Token::Char(c) => {
                    if a.get(j) == Some(&Token::Char(c)) {
                        reach[i + 1][j + 1] = true;
                    }
                }
            }
        }
    }
    reach[b.len()][a.len()]
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for Pattern {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <Cow<'de, str>>::deserialize(deserializer)?;
        Ok(Self::new(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_glob_rules() {
        let cases = [
            ("*", "src/a/lib.rs", true),
            ("*.rs", "lib.rs", true),
            ("*.rs", "src/lib.rs", false),
            ("src/*", "src/lib.rs", true),
            ("src/*", "src/a/lib.rs", false),
            ("src/**", "src/a/lib.rs", true),
            ("src/**/*.rs", "src/lib.rs", true),
            ("src/**/*.rs", "src/a/b/lib.rs", true),
            ("src/**/*.rs", "src/a/b/lib.txt", false),
            ("**/*.rs", "lib.rs", true),
            ("**/*.rs", "a/lib.rs", true),
            ("**/secret", "a/b/secret", true),
            ("**/secret", "a/b/secrets", false),
            ("?.md", "a.md", true),
            ("??md", "a/md", false),
            ("docs/**", "docs", false),
            ("**", "/etc/passwd", true),
            (".env*", ".env.local", true),
            (".env*", "config/.env", false),
        ];
        for (pattern, path, expected) in cases {
            assert_eq!(
                Pattern::new(pattern).matches_path(path),
                expected,
                "{pattern} vs {path}"
            );
        }
    }

    #[test]
    fn a_trailing_wildcard_word_matches_the_bare_command() {
        let p = Pattern::new("git status *");
        assert!(p.matches("git status"));
        assert!(p.matches("git status --short"));
        assert!(!p.matches("git statusx"));
        assert!(!p.matches("git stash"));
        assert!(Pattern::new("cargo *").covers(&Pattern::new("cargo")));
        assert!(!Pattern::new("cargo").covers(&Pattern::new("cargo *")));
    }

    #[test]
    fn path_coverage_respects_segments() {
        let covers = |b: &str, a: &str| Pattern::new(b).covers_in(Mode::Path, &Pattern::new(a));
        assert!(covers("src/**", "src/*"));
        assert!(!covers("src/*", "src/**"));
        assert!(!covers("*.rs", "src/*.rs"), "`*` stays in its segment");
        assert!(covers("**/*.rs", "src/*.rs"));
        assert!(covers("*", "src/**"), "`*` alone is every path");
        assert!(covers("src/**/*.rs", "src/*.rs"));
    }
}
