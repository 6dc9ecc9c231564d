//! Reading one profile document: bounded input, one typed serde pass,
//! located errors. `extends` is not applied here ([`crate::extends`]).
//!
//! 1. The input is capped at [`MAX_PROFILE_BYTES`] and must be UTF-8.
//! 2. If the text has an anchor (`&`), the YAML events are walked once and
//!    the node count after alias expansion is capped at [`MAX_ALIAS_NODES`]:
//!    an alias bomb is refused before anything is expanded. A text without
//!    `&` has no anchors, so no aliases can expand, and skips the walk.
//! 3. serde_yaml deserializes the typed [`Profile`] with
//!    `deny_unknown_fields`; its own recursion limit refuses deep nesting.
//!    Its errors (syntax, unknown keys, unknown values, missing keys) come
//!    with a location and a document path, and are turned into
//!    [`ProfileErrorKind`]s with "did you mean" suggestions.
//! 4. Only when that fails is the version probed (a second, lenient pass
//!    that reads `schema` alone), so that a profile from a newer Orcho gets
//!    "upgrade Orcho" rather than an unknown-key error.

use std::{io::Read, sync::Arc};

use camino::Utf8Path;
use serde::Deserialize;

use crate::{
    PROFILE_SCHEMA, Profile, ProfileError, ProfileErrorKind,
    locate::{self, AliasProblem, DocPath, Position},
    provenance::{Origin, Provenance, Source, SourceName},
    validate,
};

/// The largest profile accepted, in bytes (1 MiB). Profiles are written by
/// people; anything larger is refused before it is parsed.
pub const MAX_PROFILE_BYTES: u64 = 1024 * 1024;

/// The most nodes a profile may have once its aliases are expanded.
pub const MAX_ALIAS_NODES: usize = 100_000;

/// Reads a file, refusing more than [`MAX_PROFILE_BYTES`] without reading
/// further, and non-UTF-8 content.
pub(crate) fn read_bounded(path: &Utf8Path) -> Result<String, ProfileErrorKind> {
    let file = std::fs::File::open(path).map_err(ProfileErrorKind::Read)?;
    let mut bytes = Vec::new();
    file.take(MAX_PROFILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ProfileErrorKind::Read)?;
    if bytes.len() as u64 > MAX_PROFILE_BYTES {
        let len = std::fs::metadata(path).map_or(bytes.len() as u64, |m| m.len());
        return Err(ProfileErrorKind::TooLarge {
            len,
            max: MAX_PROFILE_BYTES,
        });
    }
    String::from_utf8(bytes).map_err(|e| ProfileErrorKind::NotUtf8 {
        offset: e.utf8_error().valid_up_to(),
    })
}

pub(crate) fn utf8<'a>(bytes: &'a [u8], file: &str) -> Result<&'a str, ProfileError> {
    if bytes.len() as u64 > MAX_PROFILE_BYTES {
        return Err(ProfileError::in_file(
            file.to_owned(),
            ProfileErrorKind::TooLarge {
                len: bytes.len() as u64,
                max: MAX_PROFILE_BYTES,
            },
        ));
    }
    std::str::from_utf8(bytes).map_err(|e| {
        let offset = e.valid_up_to();
        ProfileError::at(
            file.to_owned(),
            Some(position_of(&bytes[..offset])),
            None,
            ProfileErrorKind::NotUtf8 { offset },
        )
    })
}

/// The line and column just after `prefix` (valid UTF-8 up to there).
fn position_of(prefix: &[u8]) -> Position {
    let line_start = prefix
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&prefix[line_start..])
        .chars()
        .count()
        + 1;
    Position {
        line: prefix.iter().filter(|&&b| b == b'\n').count() + 1,
        column,
    }
}

/// Parses one document into a [`Profile`] whose phases and gates know where
/// they were declared. `extends` is not applied.
pub(crate) fn parse_document(text: &str, name: SourceName) -> Result<Profile, ProfileError> {
    let file = || name.to_string();
    if text.len() as u64 > MAX_PROFILE_BYTES {
        return Err(ProfileError::in_file(
            file(),
            ProfileErrorKind::TooLarge {
                len: text.len() as u64,
                max: MAX_PROFILE_BYTES,
            },
        ));
    }
    if let Some(offset) = flow_too_deep(text.as_bytes()) {
        return Err(ProfileError::at(
            file(),
            Some(position_of(&text.as_bytes()[..offset])),
            None,
            ProfileErrorKind::TooDeep,
        ));
    }
    if has_anchor(text.as_bytes()) {
        locate::check_aliases(text, MAX_ALIAS_NODES).map_err(|problem| match problem {
            AliasProblem::Syntax { message, at } => {
                ProfileError::at(file(), Some(at), None, ProfileErrorKind::Syntax { message })
            }
            AliasProblem::Expansion { limit, at } => ProfileError::at(
                file(),
                Some(at),
                None,
                ProfileErrorKind::AliasExpansion { limit },
            ),
        })?;
    }
    let mut profile = match serde_yaml::from_str::<Profile>(text) {
        Ok(profile) => profile,
        Err(error) => return Err(convert(text, &error, file())),
    };
    let source = Source {
        name,
        text: Arc::from(text),
    };
    profile.provenance = Provenance::single(source);
    if profile.schema != PROFILE_SCHEMA {
        return Err(ProfileError::new(
            profile.provenance.locate(0, DocPath::root().key("schema")),
            ProfileErrorKind::UnsupportedSchema {
                found: profile.schema,
                supported: PROFILE_SCHEMA,
            },
        ));
    }
    for (i, phase) in profile.phases.iter_mut().enumerate() {
        for (j, gate) in phase.gates.iter_mut().enumerate() {
            gate.origin = Origin::gate(0, i, j);
        }
        phase.origin = Origin::phase(0, i);
    }
    validate::check_document(&profile)?;
    Ok(profile)
}

/// The deepest flow nesting (`[`, `{`) accepted. serde_yaml refuses
/// documents nested deeper than 128 levels anyway, but only after its
/// scanner has seen them, and the scanner's work grows with the nesting
/// depth for every token: 200 000 `[` take minutes. So the depth is bounded
/// first, by a linear scan.
pub(crate) const MAX_FLOW_DEPTH: usize = 128;

/// The offset where flow nesting first exceeds [`MAX_FLOW_DEPTH`], if it
/// does. Errs on the side of refusing: every `[` and `{` opens (even inside a
/// quoted scalar or a comment), while a `]` or `}` closes only outside quoted
/// scalars and comments, so the count is never below the real depth.
fn flow_too_deep(bytes: &[u8]) -> Option<usize> {
    // Fast path: with few openers at all, the depth cannot be exceeded.
    if count_openers(bytes) <= MAX_FLOW_DEPTH {
        return None;
    }
    #[derive(PartialEq)]
    enum State {
        Plain,
        Single,
        Double,
        Comment,
    }
    let mut state = State::Plain;
    let mut depth = 0usize;
    let mut prev = b'\n';
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'[' || b == b'{' {
            depth += 1;
            if depth > MAX_FLOW_DEPTH {
                return Some(i);
            }
        }
        let after_separator = matches!(
            prev,
            b' ' | b'\t' | b'\n' | b'\r' | b'[' | b'{' | b',' | b':'
        );
        match state {
            State::Plain => match b {
                b']' | b'}' => depth = depth.saturating_sub(1),
                b'#' if matches!(prev, b' ' | b'\t' | b'\n' | b'\r') => state = State::Comment,
                b'\'' if after_separator => state = State::Single,
                b'"' if after_separator => state = State::Double,
                _ => {}
            },
            State::Single => {
                if b == b'\'' {
                    state = State::Plain;
                }
            }
            State::Double => {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    state = State::Plain;
                }
            }
            State::Comment => {
                if b == b'\n' {
                    state = State::Plain;
                }
            }
        }
        prev = b;
    }
    None
}

/// How many `[` and `{` `bytes` holds. Counted per chunk of 128 bytes in a
/// `u8` (which cannot overflow there), which the compiler vectorizes; a
/// `usize` count it does not, and took about 700 ns on the 1.7 kB default
/// profile against about 50 ns for this one.
fn count_openers(bytes: &[u8]) -> usize {
    bytes
        .chunks(128)
        .map(|chunk| {
            // `[` is 0x5b and `{` is 0x7b: setting bit 5 maps both, and
            // nothing else, to `{`.
            let n = chunk
                .iter()
                .fold(0u8, |n, &b| n + u8::from((b | 0x20) == b'{'));
            usize::from(n)
        })
        .sum()
}

/// Whether `bytes` holds a `&`, the only way to start an anchor. Folded per
/// chunk so that the compiler vectorizes it (`<[u8]>::contains` goes a word
/// at a time).
fn has_anchor(bytes: &[u8]) -> bool {
    bytes
        .chunks(128)
        .any(|chunk| chunk.iter().fold(false, |seen, &b| seen | (b == b'&')))
}

/// The lenient first pass: `schema` alone, everything else ignored.
#[derive(Deserialize)]
struct Probe {
    schema: Option<serde_yaml::Value>,
}

/// Turns a serde_yaml error into a located [`ProfileError`]. A document
/// whose schema is not ours gets the schema error instead, and one with no
/// schema at all gets [`ProfileErrorKind::MissingSchema`].
#[cold]
fn convert(text: &str, error: &serde_yaml::Error, file: String) -> ProfileError {
    let position = error.location().map(|l| Position {
        line: l.line(),
        column: l.column(),
    });
    let rendered = error.to_string();
    let message = match position {
        Some(p) => rendered.replacen(&format!(" at line {} column {}", p.line, p.column), "", 1),
        None => rendered,
    };
    if let Ok(probe) = serde_yaml::from_str::<Probe>(text) {
        match probe.schema.as_ref().map(serde_yaml::Value::as_u64) {
            Some(Some(found)) if found != u64::from(PROFILE_SCHEMA.get()) => {
                let found = u32::try_from(found).unwrap_or(u32::MAX);
                let path = DocPath::root().key("schema");
                return ProfileError::at(
                    file,
                    locate::locate(text, &path),
                    Some(path),
                    ProfileErrorKind::UnsupportedSchema {
                        found: orcho_core::SchemaVersion::new(found),
                        supported: PROFILE_SCHEMA,
                    },
                );
            }
            None => {
                return ProfileError::at(file, position, None, ProfileErrorKind::MissingSchema);
            }
            _ => {}
        }
    }
    let (path, message) = split_path(&message);
    // A tab where YAML wants indentation: say so.
    if message.contains("found character that cannot start any token")
        && let Some(p) = position
        && text
            .lines()
            .nth(p.line.saturating_sub(1))
            .is_some_and(|l| l.contains('\t'))
    {
        return ProfileError::at(
            file,
            position,
            None,
            ProfileErrorKind::Syntax {
                message: "a tab: YAML indents with spaces, never tabs".to_owned(),
            },
        );
    }
    // A key given twice: at the second one, not at its mapping.
    if let Some(rest) = message.strip_prefix("duplicate field `")
        && let Some((key, _)) = rest.split_once('`')
    {
        let at = path.clone().unwrap_or_default();
        if let Some(second) = locate::find_duplicate_key(text, &at, key) {
            return ProfileError::at(
                file,
                Some(second),
                Some(at.key(key)),
                ProfileErrorKind::Syntax {
                    message: format!("`{key}` is given twice in this mapping"),
                },
            );
        }
    }
    let (kind, path) = classify(message, path);
    // A value its type refused is reported at the enclosing mapping; narrow
    // it to the key that holds the value.
    if let (ProfileErrorKind::Invalid { message, .. }, Some(at)) = (&kind, &path)
        && let Some(value) = quoted(message).into_iter().next()
        && let Some((key, position)) = locate::find_value(text, at, &value)
    {
        let path = at.key(&key);
        return ProfileError::at(file, Some(position), Some(path), kind);
    }
    ProfileError::at(file, position, path, kind)
}

/// Splits serde_yaml's `path: message` form.
fn split_path(message: &str) -> (Option<DocPath>, &str) {
    if let Some((head, rest)) = message.split_once(": ")
        && !head.contains([' ', '`'])
        && let Some(path) = DocPath::parse_serde(head)
    {
        return (Some(path), rest);
    }
    (None, message)
}

/// The backticked names in `text`.
fn quoted(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// A type error of the parser in English: `invalid type: string "three",
/// expected u32` reads "expected a whole number, found the text `three`".
fn in_english(message: &str) -> Option<String> {
    let (rest, value_error) = match message.strip_prefix("invalid type: ") {
        Some(rest) => (rest, false),
        None => (message.strip_prefix("invalid value: ")?, true),
    };
    let (found, expected) = rest.rsplit_once(", expected ")?;
    let found = if let Some(text) = found.strip_prefix("string ") {
        format!("the text `{}`", text.trim_matches('"'))
    } else if let Some(n) = found
        .strip_prefix("integer ")
        .or_else(|| found.strip_prefix("floating point "))
    {
        format!("the number {}", n.trim_matches('`'))
    } else if let Some(b) = found.strip_prefix("boolean ") {
        format!("`{}`", b.trim_matches('`'))
    } else {
        match found {
            "sequence" => "a list".to_owned(),
            "map" => "a mapping".to_owned(),
            "unit value" | "null" => "nothing (null)".to_owned(),
            other => other.to_owned(),
        }
    };
    let expected = match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" if value_error => "a whole number, 0 or more",
        "u8" | "u16" | "u32" | "u64" | "usize" | "i8" | "i16" | "i32" | "i64" | "isize" => {
            "a whole number"
        }
        "f32" | "f64" => "a number",
        "a boolean" => "`true` or `false`",
        "a string" => "text",
        "a sequence" => "a list",
        "a map" => "a mapping",
        other if other.starts_with("struct ") => "a mapping of keys",
        other => other,
    };
    Some(format!("expected {expected}, found {found}"))
}

fn classify(message: &str, path: Option<DocPath>) -> (ProfileErrorKind, Option<DocPath>) {
    let here = path.unwrap_or_default();
    // A document that is not a mapping at all (any text file): say what it
    // is, never what it says.
    if here.is_root()
        && let Some(rest) = message.strip_prefix("invalid type: ")
        && message.ends_with("expected struct Profile")
    {
        let found = rest.split([' ', ',']).next().unwrap_or("value");
        return (
            ProfileErrorKind::Syntax {
                message: format!(
                    "the document is a {found}, not a mapping of profile keys (`schema`, `name`, \
                     `phases`, …)"
                ),
            },
            None,
        );
    }
    let shortened = shorten_quoted(message);
    let english = in_english(&shortened);
    let message = english.as_deref().unwrap_or(shortened.as_str());
    for (prefix, is_key) in [("unknown field `", true), ("unknown variant `", false)] {
        if let Some(rest) = message.strip_prefix(prefix)
            && let Some((found, tail)) = rest.split_once('`')
        {
            let expected = quoted(tail);
            let nearest =
                orcho_core::nearest(found, expected.iter().map(String::as_str)).map(str::to_owned);
            let found: String = found.chars().take(60).collect();
            return if is_key {
                let path = here.key(&found);
                (
                    ProfileErrorKind::UnknownKey {
                        key: found,
                        expected,
                        nearest,
                    },
                    Some(path),
                )
            } else {
                (
                    ProfileErrorKind::UnknownValue {
                        value: found,
                        expected,
                        nearest,
                    },
                    Some(here),
                )
            };
        }
    }
    if let Some(rest) = message.strip_prefix("missing field `")
        && let Some((key, _)) = rest.split_once('`')
    {
        let kind = if key == "schema" && here.is_root() {
            ProfileErrorKind::MissingSchema
        } else {
            ProfileErrorKind::MissingKey {
                key: key.to_owned(),
            }
        };
        return (kind, Some(here));
    }
    match message {
        "recursion limit exceeded" => return (ProfileErrorKind::TooDeep, Some(here)),
        "repetition limit exceeded" => {
            return (
                ProfileErrorKind::AliasExpansion {
                    limit: MAX_ALIAS_NODES,
                },
                Some(here),
            );
        }
        _ => {}
    }
    let nearest = message
        .split_once("(did you mean `")
        .and_then(|(_, rest)| rest.split_once('`'))
        .map(|(n, _)| n.to_owned());
    if message == "EOF while parsing a value" {
        return (ProfileErrorKind::MissingSchema, None);
    }
    let looks_syntactic = here.is_root()
        && !["invalid ", "unknown ", "missing ", "duplicate "]
            .iter()
            .any(|p| message.starts_with(p));
    let kind = if looks_syntactic {
        ProfileErrorKind::Syntax {
            message: message.to_owned(),
        }
    } else {
        ProfileErrorKind::Invalid {
            message: message.to_owned(),
            nearest,
        }
    };
    (kind, Some(here))
}

/// The most characters of a quoted value a message repeats.
const QUOTED_CHARS: usize = 60;

/// `message` with every double-quoted value longer than [`QUOTED_CHARS`]
/// cut short, so that an error never repeats a whole line of a file.
fn shorten_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut parts = message.split('"');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    for (i, part) in parts.enumerate() {
        out.push('"');
        if i % 2 == 0 && part.chars().count() > QUOTED_CHARS {
            out.extend(part.chars().take(QUOTED_CHARS));
            out.push('…');
        } else {
            out.push_str(part);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_file_is_named_a_string_and_never_repeated() {
        let secret =
            "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n";
        let err = orcho_core::error_chain(&Profile::from_yaml_str(secret).unwrap_err());
        assert!(err.contains("the document is a string"), "{err}");
        assert!(!err.contains("root:x"), "{err}");
    }

    #[test]
    fn long_quoted_values_are_cut_short() {
        let long = "x".repeat(500);
        assert_eq!(
            in_english("invalid type: string \"three\", expected u32").as_deref(),
            Some("expected a whole number, found the text `three`")
        );
        assert_eq!(
            in_english("invalid type: sequence, expected struct PhaseSpec").as_deref(),
            Some("expected a mapping of keys, found a list")
        );
        assert_eq!(
            in_english("invalid value: integer `-1`, expected u32").as_deref(),
            Some("expected a whole number, 0 or more, found the number -1")
        );
        assert_eq!(in_english("unknown field `x`"), None);
        let short = shorten_quoted(&format!("invalid type: string \"{long}\", expected u32"));
        assert!(short.len() < 120, "{short}");
        assert!(short.ends_with("…\", expected u32"), "{short}");
        assert_eq!(shorten_quoted("a \"b\" c"), "a \"b\" c");
    }

    #[test]
    fn positions_of_byte_offsets() {
        assert_eq!(position_of(b""), Position { line: 1, column: 1 });
        assert_eq!(position_of(b"ab\ncd"), Position { line: 2, column: 3 });
        assert_eq!(
            position_of("é\n\u{e9}x".as_bytes()),
            Position { line: 2, column: 3 }
        );
    }

    #[test]
    fn openers_are_counted() {
        assert_eq!(count_openers(b""), 0);
        assert_eq!(count_openers(b"[{]}[a{ ;"), 4);
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(count_openers(&all), 2);
        let text = "[{".repeat(1000) + "x";
        assert_eq!(count_openers(text.as_bytes()), 2000);
    }

    #[test]
    fn anchors_are_seen_anywhere() {
        assert!(!has_anchor(b""));
        assert!(!has_anchor("x".repeat(1000).as_bytes()));
        for at in [0, 127, 128, 999] {
            let mut text = vec![b'x'; 1000];
            text[at] = b'&';
            assert!(has_anchor(&text), "{at}");
        }
    }

    #[test]
    fn flow_depth_is_bounded_before_parsing() {
        let deep = "[".repeat(MAX_FLOW_DEPTH + 1);
        assert_eq!(flow_too_deep(deep.as_bytes()), Some(MAX_FLOW_DEPTH));
        let ok = format!(
            "{}{}",
            "[".repeat(MAX_FLOW_DEPTH),
            "]".repeat(MAX_FLOW_DEPTH)
        );
        assert_eq!(flow_too_deep(ok.as_bytes()), None);
        // Balanced nesting repeated is not deep.
        assert_eq!(flow_too_deep("[[1]], ".repeat(10_000).as_bytes()), None);
        // Closers inside quotes or comments do not hide real nesting.
        let hidden = "[\"]\", ".repeat(MAX_FLOW_DEPTH + 1);
        assert!(flow_too_deep(hidden.as_bytes()).is_some());
        let hidden = "[ # ]\n".repeat(MAX_FLOW_DEPTH + 1);
        assert!(flow_too_deep(hidden.as_bytes()).is_some());
        // Apostrophes inside words are not quotes.
        let text = format!("a: it's\nb: {}", "[".repeat(MAX_FLOW_DEPTH + 1));
        assert!(flow_too_deep(text.as_bytes()).is_some());
    }

    #[test]
    fn serde_paths_are_split_from_messages() {
        let (path, rest) = split_path("phases[0].gates[1]: unknown field `x`");
        assert_eq!(
            path.map(|p| p.to_string()).as_deref(),
            Some("phases[0].gates[1]")
        );
        assert_eq!(rest, "unknown field `x`");
        let (path, rest) = split_path("invalid phase name `..`: contains `..`");
        assert!(path.is_none());
        assert_eq!(rest, "invalid phase name `..`: contains `..`");
    }
}
