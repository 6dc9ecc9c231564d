//! `extends`: one profile built on another.
//!
//! `extends: builtin:<name>` names a built-in profile; anything else is a
//! file, relative to the directory of the file that says it. The base is
//! loaded (with its own `extends`, recursively, at most
//! [`MAX_EXTENDS_DEPTH`] deep) and the extending profile is merged over it:
//!
//! - `name` is the extending profile's; `description` too when it has one;
//! - **phases merge by name**: a phase with the name of a base phase
//!   overrides it in place — each field it sets (`role`, `max_attempts`,
//!   `max_rounds`, `handoff`) replaces the base's, and its gates merge by
//!   name: a gate with the name of a base gate replaces it in place, other
//!   gates are added after the base's. Phases with new names are added
//!   after the base's phases;
//! - each other section (`verification`, `autopilot`, `delivery`, `intake`,
//!   `supervision`, `permissions`, `trust`) that the extending profile declares
//!   replaces the base's section whole.
//!
//! A chain that comes back to a profile already in it is an error naming
//! the whole chain (`a.yaml → b.yaml → a.yaml`).

use camino::{Utf8Path, Utf8PathBuf};

use crate::{
    Profile, ProfileError, ProfileErrorKind, builtin,
    locate::DocPath,
    parse::{self, parse_document},
    provenance::SourceName,
};

/// How many profiles an `extends` chain may have beyond the first.
pub const MAX_EXTENDS_DEPTH: usize = 16;

/// Where the files of a chain are read from: the file system, or what a
/// caller gives (a commit's files).
pub(crate) type ReadFile<'a> = &'a dyn Fn(&Utf8Path) -> Result<String, ProfileErrorKind>;

/// The profiles being extended, outermost first: (identity, shown name).
pub(crate) struct Chain<'a> {
    links: Vec<(String, String)>,
    /// `None`: the file system.
    read: Option<ReadFile<'a>>,
}

impl<'a> Chain<'a> {
    pub(crate) fn start(key: String, shown: String) -> Self {
        Self {
            links: vec![(key, shown)],
            read: None,
        }
    }

    /// A chain whose files `read` gives.
    pub(crate) fn reading(key: String, shown: String, read: ReadFile<'a>) -> Self {
        Self {
            links: vec![(key, shown)],
            read: Some(read),
        }
    }

    fn key(&self, path: &Utf8Path) -> String {
        match self.read {
            Some(_) => path.to_string(),
            None => file_key(path),
        }
    }

    fn read(&self, path: &Utf8Path) -> Result<String, ProfileErrorKind> {
        match self.read {
            Some(read) => read(path),
            None => parse::read_bounded(path),
        }
    }
}

/// A file's identity for cycle detection: its canonical path when it exists.
pub(crate) fn file_key(path: &Utf8Path) -> String {
    std::fs::canonicalize(path)
        .ok()
        .and_then(|p| Utf8PathBuf::try_from(p).ok())
        .map_or_else(|| path.to_string(), |p| p.to_string())
}

/// Applies the `extends` of `child`, if any.
pub(crate) fn apply(mut child: Profile, chain: &mut Chain<'_>) -> Result<Profile, ProfileError> {
    let Some(target) = child.extends.take() else {
        return Ok(child);
    };
    let at = |kind| {
        ProfileError::new(
            child.provenance.locate(0, DocPath::root().key("extends")),
            kind,
        )
    };
    if chain.links.len() > MAX_EXTENDS_DEPTH {
        return Err(at(ProfileErrorKind::ExtendsTooDeep {
            max: MAX_EXTENDS_DEPTH,
        }));
    }
    let cycle = |chain: &Chain<'_>, shown: String| {
        let mut names: Vec<String> = chain.links.iter().map(|(_, s)| s.clone()).collect();
        names.push(shown);
        ProfileErrorKind::ExtendsCycle { chain: names }
    };
    let (text, name, key, shown) = if let Some(name) = target.strip_prefix("builtin:") {
        let Some((name, text)) = builtin::find(name) else {
            return Err(at(ProfileErrorKind::UnknownBuiltin {
                name: name.chars().take(60).collect(),
                nearest: orcho_core::nearest(name, builtin::NAMES.iter().copied())
                    .map(str::to_owned),
            }));
        };
        let shown = format!("builtin:{name}");
        if chain.links.iter().any(|(k, _)| *k == shown) {
            return Err(at(cycle(chain, shown)));
        }
        (
            text.to_owned(),
            SourceName::Builtin(name),
            shown.clone(),
            shown,
        )
    } else {
        let base_dir = match child.provenance.sources.first().map(|s| &s.name) {
            Some(SourceName::File(path)) => path.parent().unwrap_or(Utf8Path::new("")).to_owned(),
            _ => {
                return Err(at(ProfileErrorKind::ExtendsFileFromString {
                    target: target.chars().take(200).collect(),
                }));
            }
        };
        // Drop `.` components so that messages show `dir/c.yaml`, not
        // `dir/./c.yaml`.
        let path: Utf8PathBuf = base_dir
            .join(&target)
            .components()
            .filter(|c| *c != camino::Utf8Component::CurDir)
            .collect();
        let key = chain.key(&path);
        if chain.links.iter().any(|(k, _)| *k == key) {
            return Err(at(cycle(chain, path.to_string())));
        }
        let text = chain.read(&path).map_err(|kind| match kind {
            ProfileErrorKind::Read(source) => at(ProfileErrorKind::ExtendsRead {
                target: path.to_string(),
                source,
            }),
            other => ProfileError::in_file(path.to_string(), other),
        })?;
        (text, SourceName::File(path.clone()), key, path.to_string())
    };
    chain.links.push((key, shown));
    let base = parse_document(&text, name)?;
    let base = apply(base, chain)?;
    chain.links.pop();
    Ok(merge(base, child))
}

/// Merges `child` over `base` (see the module docs).
fn merge(base: Profile, child: Profile) -> Profile {
    let shift = base.provenance.sources.len();
    let mut out = base;
    out.provenance
        .sources
        .extend(child.provenance.sources.iter().cloned());
    // A section taken from the child is located in the child's source.
    macro_rules! from_child {
        ($($field:ident),+) => {$(
            out.provenance.sections.insert(
                stringify!($field),
                child.provenance.section(stringify!($field)) + shift,
            );
            out.$field = child.$field;
        )+};
    }
    macro_rules! from_child_if_declared {
        ($($field:ident),+) => {$(
            if child.$field.is_some() {
                from_child!($field);
            }
        )+};
    }
    from_child!(name, schema);
    from_child_if_declared!(
        description,
        verification,
        advisor,
        autopilot,
        delivery,
        intake,
        supervision,
        permissions,
        trust
    );
    for mut phase in child.phases {
        phase.origin = phase.origin.shifted(shift);
        for gate in &mut phase.gates {
            gate.origin = gate.origin.shifted(shift);
        }
        match out.phases.iter_mut().find(|p| p.name == phase.name) {
            None => out.phases.push(phase),
            Some(existing) => {
                existing.origin = phase.origin;
                if phase.role.is_some() {
                    existing.role = phase.role;
                }
                if phase.max_attempts.is_some() {
                    existing.max_attempts = phase.max_attempts;
                }
                if phase.max_rounds.is_some() {
                    existing.max_rounds = phase.max_rounds;
                }
                if phase.handoff.is_some() {
                    existing.handoff = phase.handoff;
                }
                if phase.read_only.is_some() {
                    existing.read_only = phase.read_only;
                }
                if phase.runner.is_some() {
                    existing.runner = phase.runner;
                }
                for gate in phase.gates {
                    match existing.gates.iter_mut().find(|g| g.name == gate.name) {
                        Some(slot) => *slot = gate,
                        None => existing.gates.push(gate),
                    }
                }
            }
        }
    }
    out
}
