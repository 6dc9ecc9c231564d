//! Document paths (`phases[2].gates[0].on_fail`) and where they are in the
//! text.
//!
//! serde_yaml locates syntax errors and unknown keys itself. Problems found
//! later, on the typed value (an unknown gate, a duplicate phase, a feed
//! target that does not exist), carry a [`DocPath`]; [`locate`] walks the
//! YAML events of the source text to that path and returns its line and
//! column. The walk runs only when an error or warning is reported, so a
//! valid profile never pays for it.

use std::fmt;

use saphyr_parser::{Event, Parser};

/// A path into a profile document, such as `phases[2].gates[0].on_fail`.
///
/// Shown in every [`ProfileError`](crate::ProfileError) and
/// [`ProfileWarning`](crate::ProfileWarning) so that a message says which
/// key is meant even when several lines look alike.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct DocPath {
    segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Segment {
    Key(String),
    Index(usize),
}

impl DocPath {
    /// The document itself.
    pub(crate) fn root() -> Self {
        Self::default()
    }

    /// This path followed by a mapping key.
    pub(crate) fn key(&self, key: &str) -> Self {
        let mut out = self.clone();
        out.segments.push(Segment::Key(key.to_owned()));
        out
    }

    /// This path followed by a list index.
    pub(crate) fn index(&self, index: usize) -> Self {
        let mut out = self.clone();
        out.segments.push(Segment::Index(index));
        out
    }

    /// Whether this is the document itself.
    pub fn is_root(&self) -> bool {
        self.segments.is_empty()
    }

    /// Parses the path serde_yaml puts in front of its messages
    /// (`phases[0].gates[1]`); `None` for anything else.
    pub(crate) fn parse_serde(text: &str) -> Option<Self> {
        if text == "." {
            return Some(Self::root());
        }
        let mut path = Self::root();
        for part in text.split('.') {
            let (key, mut rest) = match part.find('[') {
                Some(at) => part.split_at(at),
                None => (part, ""),
            };
            if key.is_empty() && path.is_root() {
                return None;
            }
            if !key.is_empty() {
                if key.contains(['?', ']', ' ', '`']) {
                    return None;
                }
                path = path.key(key);
            }
            while let Some(stripped) = rest.strip_prefix('[') {
                let end = stripped.find(']')?;
                path = path.index(stripped[..end].parse().ok()?);
                rest = &stripped[end + 1..];
            }
            if !rest.is_empty() {
                return None;
            }
        }
        Some(path)
    }
}

impl fmt::Display for DocPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.segments.iter().enumerate() {
            match segment {
                Segment::Key(key) if i == 0 => f.write_str(key)?,
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// A 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Position {
    pub(crate) line: usize,
    pub(crate) column: usize,
}

/// At most this many events are walked to locate a path or count nodes; the
/// input is capped in size, so this only bounds pathological documents.
const MAX_EVENTS: usize = 4_000_000;

#[derive(Debug)]
enum Frame {
    /// A mapping; `key` holds the key whose value comes next.
    Map {
        matched: Option<usize>,
        key: Option<String>,
    },
    /// A sequence; `next` is the index of the next item.
    Seq { matched: Option<usize>, next: usize },
}

/// Where `path` is in `text`: the start of the node at `path`, or of the
/// deepest node on the way to it when the path does not exist (a missing
/// key is reported at the mapping that lacks it).
pub(crate) fn locate(text: &str, path: &DocPath) -> Option<Position> {
    let target = &path.segments;
    let mut best = None;
    let mut stack: Vec<Frame> = Vec::new();
    for (count, item) in Parser::new_from_str(text).enumerate() {
        let Ok((event, span)) = item else { break };
        if count > MAX_EVENTS {
            break;
        }
        let is_node = matches!(
            event,
            Event::Scalar(..)
                | Event::SequenceStart(..)
                | Event::MappingStart(..)
                | Event::Alias(_)
        );
        if matches!(event, Event::SequenceEnd | Event::MappingEnd) {
            stack.pop();
            continue;
        }
        if !is_node {
            continue;
        }
        // Which prefix of the target this node's path equals, if any; and
        // whether the node is a mapping key (never a target).
        let (matched, is_key) = match stack.last_mut() {
            None => (Some(0), false),
            Some(Frame::Map { matched, key }) => match key.take() {
                None => {
                    *key = Some(match &event {
                        Event::Scalar(value, ..) => value.to_string(),
                        _ => String::new(),
                    });
                    (None, true)
                }
                Some(k) => (
                    matched
                        .filter(|&n| target.get(n) == Some(&Segment::Key(k)))
                        .map(|n| n + 1),
                    false,
                ),
            },
            Some(Frame::Seq { matched, next }) => {
                let index = *next;
                *next += 1;
                (
                    matched
                        .filter(|&n| target.get(n) == Some(&Segment::Index(index)))
                        .map(|n| n + 1),
                    false,
                )
            }
        };
        if let Some(n) = matched {
            best = Some(Position {
                line: span.start.line(),
                column: span.start.col() + 1,
            });
            if n == target.len() {
                return best;
            }
        }
        let matched = if is_key { None } else { matched };
        match event {
            Event::SequenceStart(..) => stack.push(Frame::Seq { matched, next: 0 }),
            Event::MappingStart(..) => stack.push(Frame::Map { matched, key: None }),
            _ => {}
        }
    }
    best
}

/// In the mapping at `path`, the key whose value is the scalar `value`, and
/// where that value is. serde reports a value that its type refuses (a
/// misspelt strategy, a malformed duration) at the enclosing mapping; this
/// narrows it to the key.
pub(crate) fn find_value(text: &str, path: &DocPath, value: &str) -> Option<(String, Position)> {
    let target = &path.segments;
    let mut stack: Vec<Frame> = Vec::new();
    // The depth of the stack once inside the target mapping.
    let mut inside: Option<usize> = None;
    for (count, item) in Parser::new_from_str(text).enumerate() {
        let Ok((event, span)) = item else { break };
        if count > MAX_EVENTS {
            break;
        }
        if matches!(event, Event::SequenceEnd | Event::MappingEnd) {
            if inside == Some(stack.len()) {
                return None;
            }
            stack.pop();
            continue;
        }
        if !matches!(
            event,
            Event::Scalar(..)
                | Event::SequenceStart(..)
                | Event::MappingStart(..)
                | Event::Alias(_)
        ) {
            continue;
        }
        let depth = stack.len();
        let (matched, key_of_value) = match stack.last_mut() {
            None => (Some(0), None),
            Some(Frame::Map { matched, key }) => match key.take() {
                None => {
                    *key = Some(match &event {
                        Event::Scalar(v, ..) => v.to_string(),
                        _ => String::new(),
                    });
                    (None, None)
                }
                Some(k) => {
                    let m = matched
                        .filter(|&n| target.get(n) == Some(&Segment::Key(k.clone())))
                        .map(|n| n + 1);
                    (m, Some(k))
                }
            },
            Some(Frame::Seq { matched, next }) => {
                let index = *next;
                *next += 1;
                (
                    matched
                        .filter(|&n| target.get(n) == Some(&Segment::Index(index)))
                        .map(|n| n + 1),
                    None,
                )
            }
        };
        if inside == Some(depth)
            && let (Some(k), Event::Scalar(v, ..)) = (key_of_value, &event)
            && v.as_ref() == value
        {
            return Some((
                k,
                Position {
                    line: span.start.line(),
                    column: span.start.col() + 1,
                },
            ));
        }
        match event {
            Event::SequenceStart(..) => stack.push(Frame::Seq { matched, next: 0 }),
            Event::MappingStart(..) => {
                if matched == Some(target.len()) && inside.is_none() {
                    inside = Some(depth + 1);
                }
                stack.push(Frame::Map { matched, key: None });
            }
            _ => {}
        }
    }
    None
}

/// Where the mapping at `path` has `key` for the second time: serde reports
/// a duplicate key at the mapping, and the person editing wants the line of
/// the repeated key.
pub(crate) fn find_duplicate_key(text: &str, path: &DocPath, key: &str) -> Option<Position> {
    let target = &path.segments;
    let mut stack: Vec<Frame> = Vec::new();
    let mut inside: Option<usize> = None;
    let mut seen = 0;
    for (count, item) in Parser::new_from_str(text).enumerate() {
        let Ok((event, span)) = item else { break };
        if count > MAX_EVENTS {
            break;
        }
        if matches!(event, Event::SequenceEnd | Event::MappingEnd) {
            if inside == Some(stack.len()) {
                return None;
            }
            stack.pop();
            continue;
        }
        if !matches!(
            event,
            Event::Scalar(..)
                | Event::SequenceStart(..)
                | Event::MappingStart(..)
                | Event::Alias(_)
        ) {
            continue;
        }
        let depth = stack.len();
        let matched = match stack.last_mut() {
            None => Some(0),
            Some(Frame::Map { matched, key: slot }) => match slot.take() {
                None => {
                    let name = match &event {
                        Event::Scalar(v, ..) => v.to_string(),
                        _ => String::new(),
                    };
                    if inside == Some(depth) && name == key {
                        seen += 1;
                        if seen == 2 {
                            return Some(Position {
                                line: span.start.line(),
                                column: span.start.col() + 1,
                            });
                        }
                    }
                    *slot = Some(name);
                    None
                }
                Some(k) => matched
                    .filter(|&n| target.get(n) == Some(&Segment::Key(k)))
                    .map(|n| n + 1),
            },
            Some(Frame::Seq { matched, next }) => {
                let index = *next;
                *next += 1;
                matched
                    .filter(|&n| target.get(n) == Some(&Segment::Index(index)))
                    .map(|n| n + 1)
            }
        };
        match event {
            Event::SequenceStart(..) => stack.push(Frame::Seq { matched, next: 0 }),
            Event::MappingStart(..) => {
                if matched == Some(target.len()) && inside.is_none() {
                    inside = Some(depth + 1);
                }
                stack.push(Frame::Map { matched, key: None });
            }
            _ => {}
        }
    }
    None
}

/// What [`check_aliases`] found.
#[derive(Debug)]
pub(crate) enum AliasProblem {
    /// The document does not parse.
    Syntax { message: String, at: Position },
    /// Expanding the aliases would produce more than `limit` nodes.
    Expansion { limit: usize, at: Position },
}

/// Counts the nodes the document would have once every alias is expanded,
/// in one linear pass, and refuses it past `limit`: an alias bomb ("billion
/// laughs") is refused before anything is expanded.
pub(crate) fn check_aliases(text: &str, limit: usize) -> Result<(), AliasProblem> {
    // Expanded size of each anchored node, by anchor id.
    let mut sizes: Vec<usize> = Vec::new();
    // Open containers: (anchor id, expanded size so far).
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut total: usize = 0;
    let mut parser = Parser::new_from_str(text);
    loop {
        let Some(item) = parser.next() else {
            return Ok(());
        };
        let (event, span) = match item {
            Ok(ok) => ok,
            Err(e) => {
                return Err(AliasProblem::Syntax {
                    message: e.info().to_owned(),
                    at: Position {
                        line: e.marker().line(),
                        column: e.marker().col() + 1,
                    },
                });
            }
        };
        let at = Position {
            line: span.start.line(),
            column: span.start.col() + 1,
        };
        let (node, anchor) = match event {
            Event::Scalar(_, _, anchor, _) => (1, anchor),
            Event::Alias(anchor) => (sizes.get(anchor).copied().unwrap_or(1), 0),
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                open.push((anchor, 1));
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match open.pop() {
                Some((anchor, size)) => {
                    // Counted into `total` when its children were.
                    record(&mut sizes, anchor, size);
                    if let Some(parent) = open.last_mut() {
                        parent.1 = parent.1.saturating_add(size);
                    }
                    continue;
                }
                None => continue,
            },
            _ => continue,
        };
        record(&mut sizes, anchor, node);
        if let Some(parent) = open.last_mut() {
            parent.1 = parent.1.saturating_add(node);
        }
        total = total.saturating_add(node);
        if total > limit {
            return Err(AliasProblem::Expansion { limit, at });
        }
    }
}

fn record(sizes: &mut Vec<usize>, anchor: usize, size: usize) {
    if anchor == 0 {
        return;
    }
    if sizes.len() <= anchor {
        sizes.resize(anchor + 1, 1);
    }
    sizes[anchor] = size;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, path: &DocPath) -> Option<(usize, usize)> {
        locate(text, path).map(|p| (p.line, p.column))
    }

    #[test]
    fn paths_render_and_parse() {
        let path = DocPath::root()
            .key("phases")
            .index(2)
            .key("gates")
            .index(0)
            .key("on_fail");
        assert_eq!(path.to_string(), "phases[2].gates[0].on_fail");
        assert_eq!(
            DocPath::parse_serde("phases[2].gates[0].on_fail"),
            Some(path)
        );
        assert_eq!(DocPath::parse_serde("."), Some(DocPath::root()));
        assert_eq!(DocPath::parse_serde("a[x]"), None);
        assert_eq!(DocPath::parse_serde("invalid phase name `..`"), None);
    }

    #[test]
    fn locates_values_items_and_missing_keys() {
        let text = "schema: 1\nphases:\n  - name: plan\n  - name: implement\n    gates:\n      - { name: t, on_fail: hlt }\n";
        let phases = DocPath::root().key("phases");
        assert_eq!(at(text, &DocPath::root().key("schema")), Some((1, 9)));
        assert_eq!(at(text, &phases.index(1).key("name")), Some((4, 11)));
        assert_eq!(
            at(text, &phases.index(1).key("gates").index(0).key("on_fail")),
            Some((6, 29))
        );
        // A missing key is reported at the mapping that lacks it.
        assert_eq!(at(text, &phases.index(0).key("role")), Some((3, 5)));
        let gate = phases.index(1).key("gates").index(0);
        assert_eq!(
            find_value(text, &gate, "hlt"),
            Some((
                "on_fail".to_owned(),
                Position {
                    line: 6,
                    column: 29
                }
            ))
        );
        assert_eq!(find_value(text, &gate, "plan"), None);
        // Keys never match as values.
        assert_eq!(
            at("a: {b: 1}\nb: 2\n", &DocPath::root().key("b")),
            Some((2, 4))
        );
    }

    #[test]
    fn alias_expansion_is_counted() {
        assert!(check_aliases("a: &x [1, 2]\nb: *x\n", 10).is_ok());
        let bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n";
        match check_aliases(bomb, 5_000) {
            Err(AliasProblem::Expansion { limit, at }) => {
                assert_eq!(limit, 5_000);
                assert_eq!(at.line, 4);
            }
            other => panic!("expected an expansion error, got {other:?}"),
        }
        assert!(matches!(
            check_aliases("a: [", 10),
            Err(AliasProblem::Syntax { .. })
        ));
    }
}
