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

use saphyr_parser::{Event, Parser, StrInput};

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

/// What a [`Walk`] meets: a node, or the end of a container.
#[derive(Debug)]
enum Step {
    Node(Node),
    /// A container closed; `depth` is the depth its children had.
    End {
        depth: usize,
    },
}

/// A node met on a [`Walk`].
#[derive(Debug)]
struct Node {
    /// How many containers hold it.
    depth: usize,
    /// How many leading segments of the target its path equals; `None` for
    /// a node off the target's path, and for a mapping key (a key is never
    /// a target).
    matched: Option<usize>,
    /// For a mapping value, its key; `None` for anything else.
    key_of_value: Option<String>,
    /// Whether the node is a mapping key.
    is_key: bool,
    /// The scalar's text, for a scalar.
    scalar: Option<String>,
    /// Whether the node starts a mapping.
    opens_mapping: bool,
    at: Position,
}

/// The YAML events of a text as nodes on the way to one path: the one walk
/// [`locate`], [`find_value`] and [`find_duplicate_key`] share. It stops at
/// the first syntax error, and after [`MAX_EVENTS`] events.
struct Walk<'t> {
    parser: Parser<'t, StrInput<'t>>,
    target: &'t [Segment],
    stack: Vec<Frame>,
    count: usize,
}

impl<'t> Walk<'t> {
    fn new(text: &'t str, path: &'t DocPath) -> Self {
        Self {
            parser: Parser::new_from_str(text),
            target: &path.segments,
            stack: Vec::new(),
            count: 0,
        }
    }

    /// `matched` followed by `segment`, if the target goes on that way.
    fn follow(&self, matched: Option<usize>, segment: &Segment) -> Option<usize> {
        matched
            .filter(|&n| self.target.get(n) == Some(segment))
            .map(|n| n + 1)
    }
}

impl Iterator for Walk<'_> {
    type Item = Step;

    fn next(&mut self) -> Option<Step> {
        loop {
            let Ok((event, span)) = self.parser.next()? else {
                return None;
            };
            self.count += 1;
            if self.count > MAX_EVENTS {
                return None;
            }
            let scalar = match &event {
                Event::SequenceEnd | Event::MappingEnd => {
                    let depth = self.stack.len();
                    self.stack.pop();
                    return Some(Step::End { depth });
                }
                Event::Scalar(value, ..) => Some(value.to_string()),
                Event::SequenceStart(..) | Event::MappingStart(..) | Event::Alias(_) => None,
                _ => continue,
            };
            let depth = self.stack.len();
            let (matched, key_of_value, is_key) = match self.stack.last_mut() {
                None => (Some(0), None, false),
                Some(Frame::Map { matched, key }) => match key.take() {
                    None => {
                        *key = Some(scalar.clone().unwrap_or_default());
                        (None, None, true)
                    }
                    Some(k) => {
                        let matched = *matched;
                        (
                            self.follow(matched, &Segment::Key(k.clone())),
                            Some(k),
                            false,
                        )
                    }
                },
                Some(Frame::Seq { matched, next }) => {
                    let (matched, index) = (*matched, *next);
                    *next += 1;
                    (self.follow(matched, &Segment::Index(index)), None, false)
                }
            };
            let opens_mapping = matches!(event, Event::MappingStart(..));
            match event {
                Event::SequenceStart(..) => self.stack.push(Frame::Seq { matched, next: 0 }),
                Event::MappingStart(..) => self.stack.push(Frame::Map { matched, key: None }),
                _ => {}
            }
            return Some(Step::Node(Node {
                depth,
                matched,
                key_of_value,
                is_key,
                scalar,
                opens_mapping,
                at: Position {
                    line: span.start.line(),
                    column: span.start.col() + 1,
                },
            }));
        }
    }
}

/// Where `path` is in `text`: the start of the node at `path`, or of the
/// deepest node on the way to it when the path does not exist (a missing
/// key is reported at the mapping that lacks it).
pub(crate) fn locate(text: &str, path: &DocPath) -> Option<Position> {
    let mut best = None;
    for step in Walk::new(text, path) {
        if let Step::Node(Node {
            matched: Some(n),
            at,
            ..
        }) = step
        {
            best = Some(at);
            if n == path.segments.len() {
                break;
            }
        }
    }
    best
}

/// The nodes directly inside the mapping at `path`, keys and values: what
/// [`find_value`] and [`find_duplicate_key`] look through. It ends with the
/// mapping.
fn inside_mapping<'t>(text: &'t str, path: &'t DocPath) -> impl Iterator<Item = Node> + 't {
    // The depth of the mapping's children, once it has started.
    let mut inside: Option<usize> = None;
    Walk::new(text, path)
        .map_while(move |step| match step {
            Step::End { depth } if inside == Some(depth) => None,
            Step::End { .. } => Some(None),
            Step::Node(node) => {
                let child = inside == Some(node.depth);
                if inside.is_none()
                    && node.opens_mapping
                    && node.matched == Some(path.segments.len())
                {
                    inside = Some(node.depth + 1);
                }
                Some(child.then_some(node))
            }
        })
        .flatten()
}

/// In the mapping at `path`, the key whose value is the scalar `value`, and
/// where that value is. serde reports a value that its type refuses (a
/// misspelt strategy, a malformed duration) at the enclosing mapping; this
/// narrows it to the key.
pub(crate) fn find_value(text: &str, path: &DocPath, value: &str) -> Option<(String, Position)> {
    inside_mapping(text, path).find_map(|node| match (node.key_of_value, node.scalar) {
        (Some(key), Some(scalar)) if scalar == value => Some((key, node.at)),
        _ => None,
    })
}

/// Where the mapping at `path` has `key` for the second time: serde reports
/// a duplicate key at the mapping, and the person editing wants the line of
/// the repeated key.
pub(crate) fn find_duplicate_key(text: &str, path: &DocPath, key: &str) -> Option<Position> {
    inside_mapping(text, path)
        .filter(|node| node.is_key && node.scalar.as_deref().unwrap_or_default() == key)
        .nth(1)
        .map(|node| node.at)
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
