//! Patterns over a request's argument.

use std::{borrow::Cow, fmt};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A glob over the whole argument: `*` is any run of characters, `?` one
/// character, everything else literal.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pattern {
    text: String,
    tokens: Vec<Token>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Token {
    Char(char),
    One,
    Run,
}

impl Pattern {
    /// Parses a pattern. Consecutive `*` are folded into one.
    pub fn new(text: &str) -> Self {
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
        Self {
            text: text.to_owned(),
            tokens,
        }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the pattern matches all of `s`.
    pub fn matches(&self, s: &str) -> bool {
        // The classic linear-time wildcard match with one backtrack point.
        let text: Vec<char> = s.chars().collect();
        let (mut p, mut t) = (0usize, 0usize);
        let mut star: Option<(usize, usize)> = None;
        while t < text.len() {
            match self.tokens.get(p) {
                Some(Token::Char(c)) if *c == text[t] => {
                    p += 1;
                    t += 1;
                }
                Some(Token::One) => {
                    p += 1;
                    t += 1;
                }
                Some(Token::Run) => {
                    star = Some((p, t));
                    p += 1;
                }
                _ => match star {
                    Some((sp, st)) => {
                        p = sp + 1;
                        t = st + 1;
                        star = Some((sp, st + 1));
                    }
                    None => return false,
                },
            }
        }
        self.tokens[p..].iter().all(|t| *t == Token::Run)
    }

    /// Whether every string `other` matches is also matched by `self`
    /// (decided symbolically: sound, and exact for the patterns rules use).
    pub fn covers(&self, other: &Self) -> bool {
        let (b, a) = (&self.tokens, &other.tokens);
        // reach[i][j]: b[..i] can consume a[..j].
        let mut reach = vec![vec![false; a.len() + 1]; b.len() + 1];
        reach[0][0] = true;
        for i in 0..=b.len() {
            for j in 0..=a.len() {
                if !reach[i][j] {
                    continue;
                }
                if i == b.len() {
                    continue;
                }
                match b[i] {
                    Token::Run => {
                        // `*` consumes any number of a's tokens, of any kind.
                        for cell in reach[i + 1].iter_mut().skip(j) {
                            *cell = true;
                        }
                    }
                    Token::One => {
                        if matches!(a.get(j), Some(Token::Char(_) | Token::One)) {
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
