//! Where each part of a merged profile came from, so that an error found
//! after `extends` still names the right file, line and column.

use std::{collections::BTreeMap, fmt, sync::Arc};

use camino::Utf8PathBuf;

use crate::locate::{self, DocPath, Position};

/// The name of a profile source, as shown in errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SourceName {
    File(Utf8PathBuf),
    Builtin(&'static str),
    Inline,
}

impl fmt::Display for SourceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(path) => write!(f, "{path}"),
            Self::Builtin(name) => write!(f, "builtin:{name}"),
            Self::Inline => f.write_str("<string>"),
        }
    }
}

/// One source text.
#[derive(Debug)]
pub(crate) struct Source {
    pub(crate) name: SourceName,
    pub(crate) text: Arc<str>,
}

/// The sources of a profile and which one each top-level section came from.
#[derive(Debug, Clone, Default)]
pub(crate) struct Provenance {
    pub(crate) sources: Vec<Arc<Source>>,
    /// Top-level key → index in `sources`; keys not listed came from source 0.
    pub(crate) sections: BTreeMap<&'static str, usize>,
}

/// Where a phase or gate was declared: the source and its position there.
/// Plain indices, so that recording it costs nothing; the document path is
/// built only when something is reported.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Origin {
    pub(crate) source: usize,
    phase: usize,
    gate: Option<usize>,
}

impl Origin {
    pub(crate) fn phase(source: usize, phase: usize) -> Self {
        Self {
            source,
            phase,
            gate: None,
        }
    }

    pub(crate) fn gate(source: usize, phase: usize, gate: usize) -> Self {
        Self {
            source,
            phase,
            gate: Some(gate),
        }
    }

    pub(crate) fn shifted(self, by: usize) -> Self {
        Self {
            source: self.source + by,
            ..self
        }
    }

    /// `phases[i]` or `phases[i].gates[j]`.
    pub(crate) fn path(self) -> DocPath {
        let phase = DocPath::root().key("phases").index(self.phase);
        match self.gate {
            Some(gate) => phase.key("gates").index(gate),
            None => phase,
        }
    }
}

/// A located point of a profile: file, position and document path.
#[derive(Debug, Clone)]
pub(crate) struct Located {
    pub(crate) file: String,
    pub(crate) position: Option<Position>,
    pub(crate) path: Option<DocPath>,
}

impl Provenance {
    pub(crate) fn single(source: Source) -> Self {
        Self {
            sources: vec![Arc::new(source)],
            sections: BTreeMap::new(),
        }
    }

    /// The source a top-level section came from.
    pub(crate) fn section(&self, key: &'static str) -> usize {
        self.sections.get(key).copied().unwrap_or(0)
    }

    /// Locates `path` in source `source`.
    #[cold]
    pub(crate) fn locate(&self, source: usize, path: DocPath) -> Located {
        match self.sources.get(source) {
            Some(src) => Located {
                file: src.name.to_string(),
                position: locate::locate(&src.text, &path),
                path: (!path.is_root()).then_some(path),
            },
            None => Located {
                file: "<profile>".to_owned(),
                position: None,
                path: (!path.is_root()).then_some(path),
            },
        }
    }

    /// Locates a path under a top-level section.
    #[cold]
    pub(crate) fn locate_section(&self, key: &'static str, path: DocPath) -> Located {
        self.locate(self.section(key), path)
    }
}
