//! Ignore rules as git reads and applies them: the patterns of a
//! `.gitignore`, `.git/info/exclude` or `core.excludesFile`, git's wildmatch,
//! and which file has the last word.
//!
//! - **A file** is split into lines (a `\r` before the `\n` is dropped, and a
//!   UTF-8 byte-order mark at the start). Empty lines and lines starting with
//!   `#` say nothing; trailing spaces are dropped unless escaped with `\`. A
//!   leading `!` negates; a trailing `/` matches directories only. A pattern
//!   with no other `/` matches a name at any depth; one with a `/` matches
//!   the path relative to the file's directory (a leading `/` only anchors).
//! - **Matching** is git's wildmatch: `*` and `?` never match `/`; `**` is
//!   special only as a whole path component (`**/x`, `x/**`, `x/**/y`),
//!   where it matches any number of directories, and is a `*` elsewhere;
//!   `[…]` is a class (`!` or `^` negates, ranges, `\` escapes, POSIX classes
//!   such as `[:alpha:]`), which never matches `/`; `\` escapes.
//! - **Precedence**: the deepest directory's file first, then shallower
//!   ones, then `.git/info/exclude`, then `core.excludesFile`; within a file
//!   the last matching pattern. The first file with a matching pattern
//!   decides, and a negated pattern un-ignores.
//!
//! Git also stops at an ignored directory: nothing below it is listed, so a
//! negated pattern cannot bring back a file there. The walks that use these
//! rules never enter an ignored directory.

use std::collections::HashMap;

/// The patterns of one file, with the directory they apply below.
#[derive(Debug, Clone, Default)]
pub(crate) struct PatternFile {
    /// The file's directory relative to the root, `""` for the root (and for
    /// `.git/info/exclude` and `core.excludesFile`), else `a/b`.
    base: Vec<u8>,
    patterns: Vec<Pattern>,
}

#[derive(Debug, Clone)]
struct Pattern {
    /// Without its `!`, its trailing `/` and (for a path pattern) its leading
    /// `/`.
    text: Vec<u8>,
    negated: bool,
    dir_only: bool,
    /// No `/` in it: matched against the last component only.
    basename: bool,
    /// How many leading bytes hold no wildcard.
    literal: usize,
}

/// Git ignores pattern files larger than this.
const MAX_FILE: usize = 100 << 20;

impl PatternFile {
    /// Parses the patterns of a file whose directory is `base` (relative to
    /// the root, without a trailing `/`).
    pub(crate) fn parse(base: &[u8], bytes: &[u8]) -> Self {
        let mut file = Self {
            base: base.to_vec(),
            patterns: Vec::new(),
        };
        if bytes.len() > MAX_FILE {
            return file;
        }
        let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
        for line in bytes.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() || line[0] == b'#' {
                continue;
            }
            // Git's patterns are C strings: a NUL ends one.
            let line = match line.iter().position(|&b| b == 0) {
                Some(nul) => &line[..nul],
                None => line,
            };
            if let Some(pattern) = Pattern::parse(trim_trailing_spaces(line)) {
                file.patterns.push(pattern);
            }
        }
        file
    }

    /// Whether the file has no pattern at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// What the last pattern matching `path` (relative to the root) says:
    /// `Some(true)` ignored, `Some(false)` not ignored (a negated pattern),
    /// `None` when no pattern of this file matches or `path` is not below
    /// the file's directory.
    pub(crate) fn decide(&self, path: &[u8], is_dir: bool) -> Option<bool> {
        let rel = if self.base.is_empty() {
            path
        } else {
            path.strip_prefix(self.base.as_slice())?
                .strip_prefix(b"/")?
        };
        let name = match rel.iter().rposition(|&b| b == b'/') {
            Some(slash) => &rel[slash + 1..],
            None => rel,
        };
        self.patterns.iter().rev().find_map(|p| {
            if p.dir_only && !is_dir {
                return None;
            }
            p.matches(rel, name).then_some(!p.negated)
        })
    }
}

/// Drops trailing spaces that are not escaped with a backslash.
fn trim_trailing_spaces(line: &[u8]) -> &[u8] {
    let mut end = line.len();
    let mut last_space: Option<usize> = None;
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b' ' => {
                if last_space.is_none() {
                    last_space = Some(i);
                }
            }
            b'\\' => {
                i += 1;
                if i == line.len() {
                    return line;
                }
                last_space = None;
            }
            _ => last_space = None,
        }
        i += 1;
    }
    if let Some(at) = last_space {
        end = at;
    }
    &line[..end]
}

impl Pattern {
    fn parse(line: &[u8]) -> Option<Self> {
        let (negated, mut text) = match line.strip_prefix(b"!") {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        let dir_only = text.last() == Some(&b'/');
        if dir_only {
            text = &text[..text.len() - 1];
        }
        let basename = !text.contains(&b'/');
        if !basename {
            text = text.strip_prefix(b"/").unwrap_or(text);
        }
        if text.is_empty() {
            return None;
        }
        let literal = text
            .iter()
            .position(|b| matches!(b, b'*' | b'?' | b'[' | b'\\'))
            .unwrap_or(text.len());
        Some(Self {
            text: text.to_vec(),
            negated,
            dir_only,
            basename,
            literal,
        })
    }

    /// Whether the pattern matches `rel` (the path relative to the file's
    /// directory) whose last component is `name`.
    fn matches(&self, rel: &[u8], name: &[u8]) -> bool {
        if self.basename {
            if self.literal == self.text.len() {
                return name == self.text.as_slice();
            }
            return wildmatch(&self.text, name, false);
        }
        // The literal prefix must be there; as git does, the rest is
        // matched on its own, so that a `**` right after the prefix counts
        // as a whole component (`dir/foo**` matches `dir/foo/bar`).
        if rel.len() < self.literal || rel[..self.literal] != self.text[..self.literal] {
            return false;
        }
        if self.literal == self.text.len() {
            return rel.len() == self.literal;
        }
        wildmatch(&self.text[self.literal..], &rel[self.literal..], true)
    }
}

/// Git's wildmatch of `text` against `pattern`; with `pathname`, `*`, `?`
/// and classes never match `/`, and `**` is special as a whole component.
///
/// Git's own matcher backtracks, which takes time exponential in the
/// number of `**/` in a pattern (an ignore file is the checkout's, so
/// anyone who can write one could stall every fingerprint). Here each
/// suffix of the pattern is matched against each suffix of the text at
/// most once: the answer is remembered, so the time stays polynomial.
pub(crate) fn wildmatch(pattern: &[u8], text: &[u8], pathname: bool) -> bool {
    let mut wild = Wildmatch {
        p: pattern,
        t: text,
        pathname,
        calls: 0,
        seen: HashMap::new(),
    };
    wild.dowild(0, 0) == Wild::Match
}

/// One match under way: the pattern, the text, and what each pair of
/// suffixes already gave.
struct Wildmatch<'a> {
    p: &'a [u8],
    t: &'a [u8],
    pathname: bool,
    /// How many suffix pairs were matched: the first few (all a usual
    /// pattern needs) are not remembered, which would cost an allocation.
    calls: usize,
    seen: HashMap<(usize, usize), Wild>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wild {
    Match,
    NoMatch,
    /// No later position of the text can match either.
    AbortAll,
    /// Only a `**` further out can still match.
    AbortToStarStar,
}

/// The byte at `i`, or 0 past the end: paths never hold a NUL, so 0 stands
/// for the end as in a C string.
fn at(s: &[u8], i: usize) -> u8 {
    s.get(i).copied().unwrap_or(0)
}

fn is_glob_special(c: u8) -> bool {
    matches!(c, b'*' | b'?' | b'[' | b'\\')
}

impl Wildmatch<'_> {
    /// The pattern from `p0` against the text from `t0`, remembered.
    fn dowild(&mut self, p0: usize, t0: usize) -> Wild {
        self.calls += 1;
        if self.calls <= 32 {
            return self.step(p0, t0);
        }
        if let Some(&known) = self.seen.get(&(p0, t0)) {
            return known;
        }
        let answer = self.step(p0, t0);
        self.seen.insert((p0, t0), answer);
        answer
    }

    fn step(&mut self, p0: usize, t0: usize) -> Wild {
        let (p, t, pathname) = (self.p, self.t, self.pathname);
        let (mut pi, mut ti) = (p0, t0);
        while pi < p.len() {
            let pc = p[pi];
            let tc = at(t, ti);
            if tc == 0 && pc != b'*' {
                return Wild::AbortAll;
            }
            match pc {
                b'\\' => {
                    // The next byte, literally; a trailing backslash matches
                    // nothing.
                    pi += 1;
                    if pi == p.len() || tc != p[pi] {
                        return Wild::NoMatch;
                    }
                }
                b'?' => {
                    if pathname && tc == b'/' {
                        return Wild::NoMatch;
                    }
                }
                b'*' => {
                    pi += 1;
                    let match_slash;
                    if at(p, pi) == b'*' {
                        let before = (pi >= p0 + 2).then(|| p[pi - 2]);
                        while at(p, pi) == b'*' {
                            pi += 1;
                        }
                        let after = at(p, pi);
                        let whole_component = matches!(before, None | Some(b'/'))
                            && (after == 0
                                || after == b'/'
                                || (after == b'\\' && at(p, pi + 1) == b'/'));
                        if whole_component {
                            // `**/`: first try matching no directory at all.
                            if after == b'/' && self.dowild(pi + 1, ti) == Wild::Match {
                                return Wild::Match;
                            }
                            match_slash = true;
                        } else {
                            match_slash = false;
                        }
                    } else {
                        match_slash = !pathname;
                    }
                    if pi == p.len() {
                        // A trailing `**` matches everything, a trailing `*` the
                        // rest of this component only.
                        if !match_slash && t[ti..].contains(&b'/') {
                            return Wild::NoMatch;
                        }
                        return Wild::Match;
                    }
                    if !match_slash && p[pi] == b'/' {
                        // `*/`: the rest of this component, then the slash.
                        let Some(slash) = t[ti..].iter().position(|&b| b == b'/') else {
                            return Wild::NoMatch;
                        };
                        ti += slash;
                        pi += 1;
                        ti += 1;
                        continue;
                    }
                    let mut tc = at(t, ti);
                    loop {
                        if tc == 0 {
                            break;
                        }
                        // Skip ahead to the next place the literal after the
                        // star could start, without crossing a slash the star
                        // cannot match.
                        if !is_glob_special(p[pi]) {
                            let want = p[pi];
                            loop {
                                tc = at(t, ti);
                                if tc == 0 || (!match_slash && tc == b'/') || tc == want {
                                    break;
                                }
                                ti += 1;
                            }
                            if tc != want {
                                return Wild::NoMatch;
                            }
                        }
                        match self.dowild(pi, ti) {
                            Wild::NoMatch => {
                                if !match_slash && tc == b'/' {
                                    return Wild::AbortToStarStar;
                                }
                            }
                            Wild::AbortToStarStar if match_slash => {}
                            other => return other,
                        }
                        ti += 1;
                        tc = at(t, ti);
                    }
                    return Wild::AbortAll;
                }
                b'[' => match class(p, pi + 1, tc) {
                    Some((matched, end)) => {
                        if !matched || (pathname && tc == b'/') {
                            return Wild::NoMatch;
                        }
                        pi = end;
                    }
                    None => return Wild::AbortAll,
                },
                c => {
                    if tc != c {
                        return Wild::NoMatch;
                    }
                }
            }
            pi += 1;
            ti += 1;
        }
        if ti < t.len() {
            Wild::NoMatch
        } else {
            Wild::Match
        }
    }
}

/// Matches `tc` against the class starting at `p[start]` (just after its
/// `[`): whether it matched, and the index of the class's closing `]`.
/// `None` for a class that never closes or names an unknown `[:class:]`.
fn class(p: &[u8], start: usize, tc: u8) -> Option<(bool, usize)> {
    let mut i = start;
    let mut c = at(p, i);
    let negated = c == b'!' || c == b'^';
    if negated {
        i += 1;
        c = at(p, i);
    }
    let mut matched = false;
    let mut prev: u8 = 0;
    loop {
        if c == 0 {
            return None;
        }
        if c == b'\\' {
            i += 1;
            c = at(p, i);
            if c == 0 {
                return None;
            }
            if tc == c {
                matched = true;
            }
        } else if c == b'-' && prev != 0 && at(p, i + 1) != 0 && at(p, i + 1) != b']' {
            i += 1;
            c = at(p, i);
            if c == b'\\' {
                i += 1;
                c = at(p, i);
                if c == 0 {
                    return None;
                }
            }
            if prev <= tc && tc <= c {
                matched = true;
            }
            // A range ends the run: the next `-` is literal.
            c = 0;
        } else if c == b'[' && at(p, i + 1) == b':' {
            let name_start = i + 2;
            let len = p[name_start.min(p.len())..]
                .iter()
                .position(|&b| b == b']')?;
            let close = name_start + len;
            if len == 0 || p[close - 1] != b':' {
                // Not `[:name:]`: the `[` is an ordinary member.
                if tc == b'[' {
                    matched = true;
                }
            } else {
                let name = &p[name_start..close - 1];
                if posix_class(name, tc)? {
                    matched = true;
                }
                i = close;
                c = 0;
            }
        } else if tc == c {
            matched = true;
        }
        prev = c;
        i += 1;
        c = at(p, i);
        if c == b']' {
            return Some((matched != negated, i));
        }
    }
}

/// Whether `c` is in the POSIX class `name`; `None` for an unknown class.
fn posix_class(name: &[u8], c: u8) -> Option<bool> {
    Some(match name {
        b"alnum" => c.is_ascii_alphanumeric(),
        b"alpha" => c.is_ascii_alphabetic(),
        b"blank" => c == b' ' || c == b'\t',
        b"cntrl" => c.is_ascii_control(),
        b"digit" => c.is_ascii_digit(),
        b"graph" => c.is_ascii_graphic(),
        b"lower" => c.is_ascii_lowercase(),
        b"print" => c.is_ascii_graphic() || c == b' ',
        b"punct" => c.is_ascii_punctuation(),
        b"space" => matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c),
        b"upper" => c.is_ascii_uppercase(),
        b"xdigit" => c.is_ascii_hexdigit(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cases of git's own wildmatch tests, in pathname mode (as ignore
    /// files are matched): (text, pattern, matches).
    const PATHNAME: &[(&str, &str, bool)] = &[
        ("foo", "foo", true),
        ("foo", "bar", false),
        ("foo", "???", true),
        ("foo", "??", false),
        ("foo", "*", true),
        ("foo", "f*", true),
        ("foo", "*f", false),
        ("foo", "*foo*", true),
        ("foobar", "*ob*a*r*", true),
        ("aaaaaaabababab", "*ab", true),
        ("foo*", "foo\\*", true),
        ("foobar", "foo\\*bar", false),
        ("f\\oo", "f\\\\oo", true),
        ("ball", "*[al]?", true),
        ("ten", "[ten]", false),
        ("ten", "**[!te]", true),
        ("ten", "**[!ten]", false),
        ("ten", "t[a-g]n", true),
        ("ten", "t[!a-g]n", false),
        ("ton", "t[!a-g]n", true),
        ("ton", "t[^a-g]n", true),
        ("a]b", "a[]]b", true),
        ("a-b", "a[]-]b", true),
        ("a]b", "a[]-]b", true),
        ("aab", "a[]-]b", false),
        ("aab", "a[]a-]b", true),
        ("]", "]", true),
        ("foo/baz/bar", "foo*bar", false),
        ("foo/baz/bar", "foo**bar", false),
        ("foobazbar", "foo**bar", true),
        ("foo/baz/bar", "foo/**/bar", true),
        ("foo/baz/bar", "foo/**/**/bar", true),
        ("foo/b/a/z/bar", "foo/**/bar", true),
        ("foo/b/a/z/bar", "foo/**/**/bar", true),
        ("foo/bar", "foo/**/bar", true),
        ("foo/bar", "foo/**/**/bar", true),
        ("foo/bar", "foo?bar", false),
        ("foo/bar", "foo[/]bar", false),
        ("foo/bar", "foo[^a-z]bar", false),
        ("foo/bar", "f[^eiu][^eiu][^eiu][^eiu][^eiu]r", false),
        ("foo-bar", "f[^eiu][^eiu][^eiu][^eiu][^eiu]r", true),
        ("foo", "**/foo", true),
        ("XXX/foo", "**/foo", true),
        ("bar/baz/foo", "**/foo", true),
        ("bar/baz/foo", "*/foo", false),
        ("foo/bar/baz", "**/bar*", false),
        ("deep/foo/bar/baz", "**/bar/*", true),
        ("deep/foo/bar/baz/", "**/bar/*", false),
        ("deep/foo/bar/baz/", "**/bar/**", true),
        ("deep/foo/bar", "**/bar/*", false),
        ("deep/foo/bar/", "**/bar/**", true),
        ("foo/bar/baz", "**/bar**", false),
        ("foo/bar/baz/x", "*/bar/**", true),
        ("deep/foo/bar/baz/x", "*/bar/**", false),
        ("deep/foo/bar/baz/x", "**/bar/*/*", true),
        ("acrt", "a[c-c]st", false),
        ("acrt", "a[c-c]rt", true),
        ("]", "[!]-]", false),
        ("a", "[!]-]", true),
        ("", "\\", false),
        ("\\", "\\", false),
        ("XXX/\\", "*/\\", false),
        ("XXX/\\", "*/\\\\", true),
        ("foo", "foo", true),
        ("@foo", "@foo", true),
        ("foo", "@foo", false),
        ("[ab]", "\\[ab]", true),
        ("[ab]", "[[]ab]", true),
        ("[ab]", "[[:]ab]", true),
        ("[ab]", "[[::]ab]", false),
        ("[ab]", "[[:digit]ab]", true),
        ("[ab]", "[\\[:]ab]", true),
        ("?a?b", "\\??\\?b", true),
        ("abc", "\\a\\b\\c", true),
        ("foo", "", false),
        ("foo/bar/baz/to", "**/t[o]", true),
        ("a1B", "[[:alpha:]][[:digit:]][[:upper:]]", true),
        ("a", "[[:digit:][:upper:][:space:]]", false),
        ("A", "[[:digit:][:upper:][:space:]]", true),
        ("1", "[[:digit:][:upper:][:space:]]", true),
        ("1", "[[:digit:][:upper:][:spaci:]]", false),
        (" ", "[[:digit:][:upper:][:space:]]", true),
        (".", "[[:digit:][:upper:][:space:]]", false),
        (".", "[[:digit:][:punct:][:space:]]", true),
        ("5", "[[:xdigit:]]", true),
        ("f", "[[:xdigit:]]", true),
        ("D", "[[:xdigit:]]", true),
        (
            "_",
            "[[:alnum:][:alpha:][:blank:][:cntrl:][:digit:][:graph:][:lower:][:print:][:punct:][:space:][:upper:][:xdigit:]]",
            true,
        ),
        ("5", "[a-c[:digit:]x-z]", true),
        ("b", "[a-c[:digit:]x-z]", true),
        ("y", "[a-c[:digit:]x-z]", true),
        ("q", "[a-c[:digit:]x-z]", false),
        ("]", "[\\\\-^]", true),
        ("[", "[\\\\-^]", false),
        ("-", "[\\-_]", true),
        ("]", "[\\]]", true),
        ("\\]", "[\\]]", false),
        ("\\", "[\\]]", false),
        ("ab", "a[]b", false),
        ("a[]b", "a[]b", false),
        ("ab[", "ab[", false),
        ("ab", "[!", false),
        ("ab", "[-", false),
        ("-", "[-]", true),
        ("-", "[a-", false),
        ("-", "[!a-", false),
        ("-", "[--A]", true),
        ("5", "[--A]", true),
        (" ", "[ --]", true),
        ("$", "[ --]", true),
        ("-", "[ --]", true),
        ("0", "[ --]", false),
        ("-", "[---]", true),
        ("-", "[------]", true),
        ("j", "[a-e-n]", false),
        ("-", "[a-e-n]", true),
        ("a", "[!------]", true),
        ("[", "[]-a]", false),
        ("^", "[]-a]", true),
        ("^", "[!]-a]", false),
        ("[", "[!]-a]", true),
        ("^", "[a^bc]", true),
        ("-b]", "[a-]b]", true),
        ("\\", "[\\]", false),
        ("\\", "[\\\\]", true),
        ("\\", "[!\\\\]", false),
        ("G", "[A-\\\\]", true),
        ("aaabbb", "b*a", false),
        ("aabcaa", "*ba*", false),
        (",", "[,]", true),
        (",", "[\\\\,]", true),
        ("\\", "[\\\\,]", true),
        ("-", "[,-.]", true),
        ("+", "[,-.]", false),
        ("-.]", "[,-.]", false),
        ("1", "[\\1-\\3]", true),
        ("3", "[\\1-\\3]", true),
        ("4", "[\\1-\\3]", false),
        ("\\", "[[-\\]]", true),
        ("[", "[[-\\]]", true),
        ("]", "[[-\\]]", true),
        ("-", "[[-\\]]", false),
        (
            "-adobe-courier-bold-o-normal--12-120-75-75-m-70-iso8859-1",
            "-*-*-*-*-*-*-12-*-*-*-m-*-*-*",
            true,
        ),
        (
            "-adobe-courier-bold-o-normal--12-120-75-75-X-70-iso8859-1",
            "-*-*-*-*-*-*-12-*-*-*-m-*-*-*",
            false,
        ),
        (
            "-adobe-courier-bold-o-normal--12-120-75-75-/-70-iso8859-1",
            "-*-*-*-*-*-*-12-*-*-*-m-*-*-*",
            false,
        ),
        (
            "XXX/adobe/courier/bold/o/normal//12/120/75/75/m/70/iso8859/1",
            "XXX/*/*/*/*/*/*/12/*/*/*/m/*/*/*",
            true,
        ),
        (
            "XXX/adobe/courier/bold/o/normal//12/120/75/75/X/70/iso8859/1",
            "XXX/*/*/*/*/*/*/12/*/*/*/m/*/*/*",
            false,
        ),
        (
            "abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txt",
            "**/*a*b*g*n*t",
            true,
        ),
        (
            "abcd/abcdefg/abcdefghijk/abcdefghijklmnop.txtz",
            "**/*a*b*g*n*t",
            false,
        ),
        ("foo", "*/*/*", false),
        ("foo/bar", "*/*/*", false),
        ("foo/bba/arr", "*/*/*", true),
        ("foo/bb/aa/rr", "*/*/*", false),
        ("foo/bb/aa/rr", "**/**/**", true),
        ("abcXdefXghi", "*X*i", true),
        ("ab/cXd/efXg/hi", "*X*i", false),
        ("ab/cXd/efXg/hi", "*/*X*/*/*i", true),
        ("ab/cXd/efXg/hi", "**/*X*/**/*i", true),
    ];

    #[test]
    fn wildmatch_agrees_with_gits_cases() {
        for &(text, pattern, expected) in PATHNAME {
            assert_eq!(
                wildmatch(pattern.as_bytes(), text.as_bytes(), true),
                expected,
                "{pattern:?} against {text:?}"
            );
        }
    }

    #[test]
    fn many_stars_do_not_take_exponential_time() {
        let text = "a".repeat(64);
        let pattern = "*a".repeat(30) + "b";
        let start = std::time::Instant::now();
        assert!(!wildmatch(pattern.as_bytes(), text.as_bytes(), true));
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn many_double_stars_do_not_take_exponential_time() {
        // Found by the `git_output` fuzz target: each `**/` tried both with
        // and without a directory, twice per `**/`.
        let pattern = "**/".repeat(40) + "x";
        let text = "a/".repeat(40) + "b";
        assert!(!wildmatch(pattern.as_bytes(), text.as_bytes(), true));
        assert!(wildmatch(pattern.as_bytes(), "a/a/x".as_bytes(), true));
        // The reproducer: a pattern, a NUL, a text.
        let reproducer: &[u8] = include_bytes!("../../tests/fixtures/wildmatch-double-stars");
        let at = reproducer.iter().position(|&b| b == 0).expect("a NUL");
        let (pattern, text) = (&reproducer[..at], &reproducer[at + 1..]);
        assert!(!wildmatch(pattern, text, true));
        assert!(!wildmatch(pattern, text, false));
    }

    fn ignored(patterns: &str, path: &str, is_dir: bool) -> Option<bool> {
        PatternFile::parse(b"", patterns.as_bytes()).decide(path.as_bytes(), is_dir)
    }

    #[test]
    fn gitignore_lines() {
        assert_eq!(ignored("target", "target", true), Some(true));
        assert_eq!(ignored("target", "a/b/target", false), Some(true));
        assert_eq!(ignored("/target", "target", true), Some(true));
        assert_eq!(ignored("/target", "a/target", true), None);
        assert_eq!(ignored("build/", "x/build", true), Some(true));
        assert_eq!(ignored("build/", "x/build", false), None);
        assert_eq!(ignored("*.log", "a/b.log", false), Some(true));
        assert_eq!(ignored("*.log\n!keep.log", "keep.log", false), Some(false));
        assert_eq!(ignored("doc/*.txt", "doc/a.txt", false), Some(true));
        assert_eq!(ignored("doc/*.txt", "doc/x/a.txt", false), None);
        assert_eq!(ignored("doc/**/*.txt", "doc/x/y/a.txt", false), Some(true));
        assert_eq!(ignored("doc/**/*.txt", "doc/a.txt", false), Some(true));
        assert_eq!(ignored("abc/**", "abc/x/y", false), Some(true));
        assert_eq!(ignored("abc/**", "abc", true), None);
        assert_eq!(ignored("a**b", "a/x/b", false), None);
        assert_eq!(ignored("dir/foo**", "dir/foo/bar", false), Some(true));
        assert_eq!(ignored("\\#hash", "#hash", false), Some(true));
        assert_eq!(ignored("\\!bang", "!bang", false), Some(true));
        assert_eq!(ignored("# comment", "# comment", false), None);
        assert_eq!(ignored("trailing   ", "trailing", false), Some(true));
        assert_eq!(ignored("space\\ ", "space ", false), Some(true));
        assert_eq!(ignored("crlf\r\n", "crlf", false), Some(true));
        assert_eq!(ignored("\u{feff}bom", "bom", false), Some(true));
        assert_eq!(ignored("!", "x", false), None);
        assert_eq!(ignored("/", "x", false), None);
    }

    #[test]
    fn a_nested_file_applies_below_its_directory() {
        let file = PatternFile::parse(b"sub", b"/only-here\nany\n");
        assert_eq!(file.decide(b"sub/only-here", false), Some(true));
        assert_eq!(file.decide(b"sub/x/only-here", false), None);
        assert_eq!(file.decide(b"other/only-here", false), None);
        assert_eq!(file.decide(b"sub/x/any", false), Some(true));
        assert_eq!(file.decide(b"subx/any", false), None);
    }

    #[test]
    fn hostile_patterns_do_not_panic() {
        for p in [
            "[",
            "[]",
            "[!",
            "\\",
            "**",
            "***",
            "a/**/**/b",
            "[z-a]",
            "!",
            "/",
            "[[:",
            "[[:x",
            "[a-",
            "[\\",
            "*\\",
            "x/**\\",
            "[[:alpha:",
            "**\\/x",
        ] {
            let file = PatternFile::parse(b"", p.as_bytes());
            for text in ["a/b/c", "", "x", "[", "a\\"] {
                let _ = file.decide(text.as_bytes(), false);
                let _ = file.decide(text.as_bytes(), true);
            }
        }
    }
}
