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
        match mode {
            Mode::Path => glob_match(&self.path, s, true),
            Mode::Plain => {
                glob_match(&self.plain, s, false)
                    || without_trailing_words(&self.plain)
                        .is_some_and(|head| glob_match(head, s, false))
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
///
/// The pattern is run as a nondeterministic automaton over the text, its
/// states a bit set (state `p`: the first `p` tokens matched): time linear
/// in the text (times the pattern's length in 64-bit words), memory in the
/// pattern alone, whatever the text.
fn glob_match(tokens: &[Token], text: &str, path: bool) -> bool {
    Automaton::new(tokens, path).accepts(text)
}

/// [`glob_match`]'s automaton. Token `p` leads from state `p` to `p + 1`:
/// a character or `?` by consuming one, `*` and `**` also without consuming
/// (an ε-step), while they stay at `p` on what they take. `**/` (nothing, or
/// anything that ends in `/`) takes three states: its entry steps to the
/// second, which stays on any character and steps to the third, which
/// takes the `/`; and the entry jumps past all three (matching nothing).
struct Automaton {
    words: usize,
    /// States that take the character.
    chars: std::collections::HashMap<char, Vec<u64>>,
    /// States that take one character within a segment (`?`).
    one: Vec<u64>,
    /// States that stay on a character within a segment (`*`).
    run: Vec<u64>,
    /// States that stay on any character (`**`, the first of `**/`).
    deep: Vec<u64>,
    /// States with an ε-step to the next.
    epsilon: Vec<u64>,
    /// ε-steps further than the next state: `**/` matching nothing.
    jumps: Vec<(usize, usize)>,
    accept: usize,
    path: bool,
}

impl Automaton {
    fn new(tokens: &[Token], path: bool) -> Self {
        let states = tokens.len() + 2 * tokens.iter().filter(|t| **t == Token::DeepDir).count() + 1;
        let words = states.div_ceil(64);
        let zero = vec![0u64; words];
        let mut a = Self {
            words,
            chars: std::collections::HashMap::new(),
            one: zero.clone(),
            run: zero.clone(),
            deep: zero.clone(),
            epsilon: zero,
            jumps: Vec::new(),
            accept: states - 1,
            path,
        };
        let mut p = 0;
        for token in tokens {
            let (w, bit) = (p / 64, 1u64 << (p % 64));
            match token {
                Token::Char(c) => a.take(*c, p),
                Token::One => a.one[w] |= bit,
                Token::Run => {
                    a.run[w] |= bit;
                    a.epsilon[w] |= bit;
                }
                Token::Deep => {
                    a.deep[w] |= bit;
                    a.epsilon[w] |= bit;
                }
                Token::DeepDir => {
                    // Entry: on to the loop, or past everything.
                    a.epsilon[w] |= bit;
                    a.jumps.push((p, p + 3));
                    // The loop: any character, then on to the slash.
                    p += 1;
                    a.deep[p / 64] |= 1 << (p % 64);
                    a.epsilon[p / 64] |= 1 << (p % 64);
                    p += 1;
                    a.take('/', p);
                }
            }
            p += 1;
        }
        a
    }

    fn take(&mut self, c: char, p: usize) {
        let words = self.words;
        self.chars.entry(c).or_insert_with(|| vec![0; words])[p / 64] |= 1 << (p % 64);
    }

    /// Adds every state ε-steps reach from `states`. A chain of ε-steps to
    /// the next state is followed by a carry through the run of ε-states
    /// (from an active one to the first state past the run); steps past
    /// the next state are followed until nothing is added.
    fn close(&self, states: &mut [u64]) {
        loop {
            let mut carry = 0u64;
            for (w, state) in states.iter_mut().enumerate() {
                let e = self.epsilon[w];
                let x = *state & e;
                let (sum, c1) = e.overflowing_add(x);
                let (sum, c2) = sum.overflowing_add(carry);
                carry = u64::from(c1 || c2);
                *state |= sum ^ e;
            }
            let mut added = false;
            for &(from, to) in &self.jumps {
                let on = states[from / 64] & (1 << (from % 64)) != 0;
                let there = &mut states[to / 64];
                if on && *there & (1 << (to % 64)) == 0 {
                    *there |= 1 << (to % 64);
                    added = true;
                }
            }
            if !added {
                return;
            }
        }
    }

    fn accepts(&self, text: &str) -> bool {
        let mut states = vec![0u64; self.words];
        states[0] = 1;
        self.close(&mut states);
        let mut next = vec![0u64; self.words];
        for c in text.chars() {
            let in_segment = !self.path || c != '/';
            let chars = self.chars.get(&c);
            let mut shifted_out = 0u64;
            let mut alive = 0u64;
            for w in 0..self.words {
                let s = states[w];
                // Consuming steps p → p + 1.
                let mut step = chars.map_or(0, |m| m[w]);
                if in_segment {
                    step |= self.one[w];
                }
                let moved = s & step;
                // Staying steps p → p.
                let mut stay = self.deep[w];
                if in_segment {
                    stay |= self.run[w];
                }
                let word = (moved << 1) | shifted_out | (s & stay);
                shifted_out = moved >> 63;
                next[w] = word;
                alive |= word;
            }
            if alive == 0 {
                return false;
            }
            self.close(&mut next);
            std::mem::swap(&mut states, &mut next);
        }
        states[self.accept / 64] & (1 << (self.accept % 64)) != 0
    }
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

/// The longest pattern a rule read from a document may have, in
/// characters: matching and linting cost grows with it.
pub const MAX_PATTERN_CHARS: usize = 1024;

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <Cow<'de, str>>::deserialize(deserializer)?;
        let chars = text.chars().count();
        if chars > MAX_PATTERN_CHARS {
            return Err(serde::de::Error::custom(format!(
                "a pattern of {chars} characters; at most {MAX_PATTERN_CHARS}"
            )));
        }
        Ok(Self::new(&text))
    }
}

#[cfg(test)]
mod tests {
    /// The former matcher, a table over pattern × text: the reference the
    /// automaton is checked against.
    fn reference(tokens: &[Token], text: &str, path: bool) -> bool {
        let text: Vec<char> = text.chars().collect();
        let width = text.len() + 1;
        let mut at = vec![false; (tokens.len() + 1) * width];
        at[tokens.len() * width + text.len()] = true;
        for p in (0..tokens.len()).rev() {
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

    proptest::proptest! {
        #[test]
        fn the_automaton_matches_as_the_table_did(
            pattern in "[ab/*?]{0,12}",
            text in "[ab/]{0,16}",
        ) {
            for path in [false, true] {
                let tokens = if path { path_tokens(&pattern) } else { plain_tokens(&pattern) };
                proptest::prop_assert_eq!(
                    glob_match(&tokens, &text, path),
                    reference(&tokens, &text, path),
                    "pattern {:?} text {:?} path {}", pattern, text, path
                );
            }
        }
    }

    #[test]
    fn patterns_longer_than_a_word_match_across_words() {
        let long = format!("{}*{}", "a".repeat(100), "b".repeat(70));
        let p = Pattern::new(&long);
        assert!(p.matches(&format!("{}xyz{}", "a".repeat(100), "b".repeat(70))));
        assert!(!p.matches(&format!("{}xyz{}", "a".repeat(99), "b".repeat(70))));
        let stars = Pattern::new(&"*".repeat(200));
        assert!(stars.matches("anything"));
        let deep = Pattern::new(&format!("{}/**/x", "d".repeat(130)));
        assert!(deep.matches_path(&format!("{}/x", "d".repeat(130))));
        assert!(deep.matches_path(&format!("{}/a/b/x", "d".repeat(130))));
    }

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
