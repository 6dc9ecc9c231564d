//! What a command runs and reads that its subject does not cover: bound by
//! content into its receipt, so that a change to any of it makes the
//! receipt stale.
//!
//! A receipt's subject is the checkout's files as git lists them. A
//! command also depends on files outside it, which an agent could change
//! to get a pass without the work:
//!
//! - **the program** its `argv[0]` resolves to (a `python3` in an ignored
//!   `.venv`, a `pytest` script), and the interpreter a script's `#!` line
//!   names;
//! - **runner configuration above the checkout**: the files of
//!   [`RUNNER_CONFIG`] in the checkout's parent directories up to `/`
//!   (pytest reads `pytest.ini`, `conftest.py` and friends there, cargo its
//!   `.cargo/config.toml`, Go a `go.work`, npm a `package.json` and
//!   `.npmrc`), and cargo's configuration in `$CARGO_HOME`;
//! - **the targets of symbolic links** in the subject that point outside
//!   the checkout: a file by its content, a directory by its fingerprint.
//!
//! Each is recorded with its kind and digest ([`BoundFile`]). Reading them
//! again costs little: a file whose `lstat` data (size, modification and
//! change times, inode, device) is what the receipt recorded is taken as
//! unchanged, as git and the fingerprint cache take a file, since no
//! process can set a file's change time back.

use std::{collections::BTreeMap, fmt, os::unix::fs::MetadataExt};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::Digest;

use crate::fingerprint::{FILE_CONTEXT, Fingerprinter};

/// The runner configuration files looked for in the checkout's parent
/// directories.
pub const RUNNER_CONFIG: &[&str] = &[
    "pytest.ini",
    "conftest.py",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
    ".cargo/config.toml",
    ".cargo/config",
    "go.work",
    "package.json",
    ".npmrc",
    ".yarnrc.yml",
    "pnpm-workspace.yaml",
];

/// The most bytes of a script read for its `#!` line.
const SHEBANG_BYTES: usize = 256;

/// What a bound file is to the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum BoundKind {
    /// The program `argv[0]` resolves to.
    Program,
    /// The interpreter the program's `#!` line names.
    Interpreter,
    /// A runner's configuration in a directory above the checkout.
    RunnerConfig,
    /// The target of a symbolic link in the subject that points outside
    /// the checkout.
    LinkTarget,
}

impl BoundKind {
    /// The kind as receipts spell it: `program`, `interpreter`,
    /// `runner_config`, `link_target`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Program => "program",
            Self::Interpreter => "interpreter",
            Self::RunnerConfig => "runner_config",
            Self::LinkTarget => "link_target",
        }
    }

    /// The kind as receipts spell it, read back (`None` for another
    /// word).
    pub fn parse(word: &str) -> Option<Self> {
        [
            Self::Program,
            Self::Interpreter,
            Self::RunnerConfig,
            Self::LinkTarget,
        ]
        .into_iter()
        .find(|k| k.as_str() == word)
    }

    fn said(self) -> &'static str {
        match self {
            Self::Program => "the program",
            Self::Interpreter => "the interpreter",
            Self::RunnerConfig => "runner configuration above the checkout",
            Self::LinkTarget => "a link's target outside the checkout",
        }
    }
}

impl fmt::Display for BoundKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One file outside the subject, as a command's result depends on it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BoundFile {
    /// What it is to the command.
    pub kind: BoundKind,
    /// Its content's digest (under [`FILE_CONTEXT`]), or a directory's
    /// fingerprint.
    pub digest: Digest,
    /// Its `lstat` data when it was read: size, modification and change
    /// times (nanoseconds), inode, device.
    pub stat: [u64; 5],
}

impl BoundFile {
    /// A file of `kind` with `digest`, read when its `lstat` data was
    /// `stat`.
    pub fn new(kind: BoundKind, digest: Digest, stat: [u64; 5]) -> Self {
        Self { kind, digest, stat }
    }
}

/// How the bound files of a command differ from what its receipt
/// recorded: one line per path.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BoundChange {
    /// The path.
    pub path: Utf8PathBuf,
    /// What it is to the command.
    pub kind: BoundKind,
    /// `changed`, `added` (bound now, not at the run) or `removed`.
    pub how: &'static str,
}

impl fmt::Display for BoundChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} `{}` {}", self.kind.said(), self.path, self.how)
    }
}

/// What differs between `recorded` and `current`, path by path.
pub fn changes(
    recorded: &BTreeMap<Utf8PathBuf, BoundFile>,
    current: &BTreeMap<Utf8PathBuf, BoundFile>,
) -> Vec<BoundChange> {
    let mut out = Vec::new();
    for (path, was) in recorded {
        match current.get(path) {
            Some(now) if now.digest == was.digest => {}
            Some(now) => out.push(BoundChange {
                path: path.clone(),
                kind: now.kind,
                how: "changed",
            }),
            None => out.push(BoundChange {
                path: path.clone(),
                kind: was.kind,
                how: "removed",
            }),
        }
    }
    for (path, now) in current {
        if !recorded.contains_key(path) {
            out.push(BoundChange {
                path: path.clone(),
                kind: now.kind,
                how: "added",
            });
        }
    }
    out
}

/// What a command bound: the inputs of [`bind`].
#[derive(Debug, Clone)]
pub(crate) struct Inputs<'a> {
    /// The program `argv[0]` resolved to.
    pub(crate) program: Option<&'a Utf8Path>,
    /// The command's `PATH` and working directory, to find the program a
    /// script's `#!/usr/bin/env NAME` line runs.
    pub(crate) path: Option<&'a str>,
    /// The command's working directory.
    pub(crate) cwd: &'a Utf8Path,
    /// Cargo's home, when the program is cargo's (its configuration there
    /// counts).
    pub(crate) cargo_home: Option<Utf8PathBuf>,
    /// The runner configuration files above the checkout ([`around`]).
    pub(crate) around: &'a [Utf8PathBuf],
    /// Symbolic links of the subject whose targets lie outside the
    /// checkout, each with the target.
    pub(crate) links_out: &'a [Utf8PathBuf],
    /// What was recorded before, for `lstat` data that says a file did not
    /// change (its digest is then taken from here).
    pub(crate) known: Option<&'a BTreeMap<Utf8PathBuf, BoundFile>>,
}

/// The files outside the subject that the command depends on, each with
/// its digest (see the [module docs](self)).
pub(crate) fn bind(inputs: &Inputs<'_>) -> BTreeMap<Utf8PathBuf, BoundFile> {
    let mut out = BTreeMap::new();
    let add = |path: Utf8PathBuf, kind: BoundKind, out: &mut BTreeMap<_, _>| {
        if out.contains_key(&path) {
            return;
        }
        let known = inputs.known.and_then(|k| k.get(&path));
        if let Some(file) = read(&path, kind, known) {
            out.insert(path, file);
        }
    };
    if let Some(program) = inputs.program {
        let real = program
            .canonicalize_utf8()
            .unwrap_or_else(|_| program.to_owned());
        if let Some(interpreter) = interpreter_of(&real, inputs.path, inputs.cwd) {
            let interpreter = interpreter.canonicalize_utf8().unwrap_or(interpreter);
            add(interpreter, BoundKind::Interpreter, &mut out);
        }
        add(real, BoundKind::Program, &mut out);
    }
    for path in inputs.around {
        add(path.clone(), BoundKind::RunnerConfig, &mut out);
    }
    if let Some(home) = &inputs.cargo_home {
        for name in ["config.toml", "config"] {
            let path = home.join(name);
            if path.is_file() {
                add(path, BoundKind::RunnerConfig, &mut out);
            }
        }
    }
    for target in inputs.links_out {
        add(target.clone(), BoundKind::LinkTarget, &mut out);
    }
    out
}

/// The runner configuration files ([`RUNNER_CONFIG`]) in the directories
/// above `checkout`, nearest first: found once for all of a checkout's
/// commands.
pub(crate) fn around(checkout: &Utf8Path) -> Vec<Utf8PathBuf> {
    let root = checkout
        .canonicalize_utf8()
        .unwrap_or_else(|_| checkout.to_owned());
    above(&root)
        .into_iter()
        .flat_map(|dir| RUNNER_CONFIG.iter().map(move |name| dir.join(name)))
        .filter(|path| path.is_file())
        .collect()
}

/// The directories above `root` whose runner configuration counts, nearest
/// first: every parent up to `/`, except that a run's worktree
/// (`<checkout>/.orcho/worktrees/<run>`) skips its way up to above the
/// checkout it belongs to, whose files are that checkout's own, not
/// configuration around it.
fn above(root: &Utf8Path) -> Vec<&Utf8Path> {
    let mut out = Vec::new();
    let mut at = root.parent();
    while let Some(dir) = at {
        if dir.file_name() == Some("worktrees")
            && let Some(store) = dir.parent()
            && store.file_name() == Some(crate::fingerprint::STORE_DIR_NAME)
            && let Some(checkout) = store.parent()
        {
            at = checkout.parent();
            continue;
        }
        out.push(dir);
        at = dir.parent();
    }
    out
}

/// The interpreter a script's `#!` line names: the program itself, or,
/// for `#!/usr/bin/env NAME`, the `NAME` the command's `PATH` finds.
fn interpreter_of(program: &Utf8Path, path: Option<&str>, cwd: &Utf8Path) -> Option<Utf8PathBuf> {
    use std::io::Read as _;
    let mut head = [0u8; SHEBANG_BYTES];
    let n = std::fs::File::open(program).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_whitespace();
    let interpreter = words.next()?;
    if !interpreter.starts_with('/') {
        return None;
    }
    if interpreter.rsplit('/').next() == Some("env") {
        let name = words.find(|w| !w.starts_with('-'))?;
        return crate::verifier::resolve_program(name, path, cwd);
    }
    Some(Utf8PathBuf::from(interpreter))
}

/// The bound file at `path`: its digest, unless its `lstat` data is what
/// `known` recorded (then `known`'s digest). `None` when it cannot be
/// read.
fn read(path: &Utf8Path, kind: BoundKind, known: Option<&BoundFile>) -> Option<BoundFile> {
    let meta = std::fs::metadata(path).ok()?;
    let stat = [
        meta.len(),
        nanos(meta.mtime(), meta.mtime_nsec()),
        nanos(meta.ctime(), meta.ctime_nsec()),
        meta.ino(),
        meta.dev(),
    ];
    if let Some(known) = known
        && known.stat == stat
        && known.kind == kind
    {
        return Some(known.clone());
    }
    let digest = if meta.is_dir() {
        Fingerprinter::new()
            .without_git()
            .fingerprint(path, &[])
            .ok()?
            .digest
    } else {
        let mut hasher = blake3::Hasher::new_derive_key(FILE_CONTEXT);
        hasher.update_reader(std::fs::File::open(path).ok()?).ok()?;
        Digest::from_blake3(hasher.finalize())
    };
    Some(BoundFile::new(kind, digest, stat))
}

fn nanos(secs: i64, nsec: i64) -> u64 {
    u64::try_from(secs)
        .unwrap_or(0)
        .saturating_mul(1_000_000_000)
        .saturating_add(u64::try_from(nsec).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_program_is_named_and_an_unchanged_one_is_not_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::try_from(dir.path().canonicalize().unwrap()).unwrap();
        let checkout = root.join("work");
        std::fs::create_dir_all(&checkout).unwrap();
        let program = root.join("python3");
        orcho_core::fs::write_atomic(&program, b"#!/bin/sh\necho fake\n").unwrap();
        orcho_core::fs::write_atomic(&root.join("conftest.py"), b"import pytest\n").unwrap();
        let around = around(&checkout);
        let inputs = Inputs {
            program: Some(&program),
            path: None,
            cwd: &checkout,
            cargo_home: None,
            around: &around,
            links_out: &[],
            known: None,
        };
        let first = bind(&inputs);
        let kinds: Vec<BoundKind> = first.values().map(|b| b.kind).collect();
        assert!(kinds.contains(&BoundKind::Program), "{first:?}");
        assert!(kinds.contains(&BoundKind::Interpreter), "{first:?}");
        assert!(kinds.contains(&BoundKind::RunnerConfig), "{first:?}");
        let again = bind(&Inputs {
            known: Some(&first),
            ..inputs.clone()
        });
        assert!(changes(&first, &again).is_empty());
        orcho_core::fs::write_atomic(&program, b"#!/bin/sh\necho other\n").unwrap();
        let after = bind(&Inputs {
            known: Some(&first),
            ..inputs.clone()
        });
        let said: Vec<String> = changes(&first, &after)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(said, [format!("the program `{program}` changed")]);
        std::fs::remove_file(root.join("conftest.py")).unwrap();
        let around = super::around(&checkout);
        let gone = bind(&Inputs {
            known: Some(&after),
            around: &around,
            ..inputs.clone()
        });
        let said: Vec<String> = changes(&after, &gone)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            said,
            [format!(
                "runner configuration above the checkout `{}` removed",
                root.join("conftest.py")
            )]
        );
    }
}
