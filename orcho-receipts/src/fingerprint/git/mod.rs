//! What `git ls-files -co --exclude-standard` lists, found in this process:
//! the tracked paths from `.git/index`, and the untracked ones from a walk
//! of the work tree with git's ignore rules.
//!
//! One `git config` process reads the configuration (so that includes,
//! `-c` and the environment mean what they mean to git); nothing else
//! spawns. What this reader leaves to git, which then lists the files as
//! before: a root that is not the top of its work tree, a `.git` that is
//! not a directory (a linked worktree or a submodule's checkout), variables
//! that move the git directory, the work tree or the index,
//! `core.ignoreCase`, `core.worktree`, a
//! `core.excludesFile` that names another user's home or git's prefix, an
//! index [`index::parse`] does not handle, or a sparse checkout.

pub(crate) mod index;
pub(crate) mod untracked;

use std::{
    os::unix::ffi::OsStrExt,
    path::{Path, PathBuf},
};

use camino::Utf8Path;

use crate::exec::{self, BaseEnv, ExecRequest};

/// Variables that put the index, the git directory or the work tree
/// elsewhere than `<root>/.git` and `<root>`. Others (`GIT_CONFIG_*` among
/// them) only change what `git config` reports.
const MOVES_THE_REPOSITORY: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_IMPLICIT_WORK_TREE",
];

/// A repository whose files this process can list.
#[derive(Debug, Clone)]
pub(crate) struct Repo {
    /// The work tree's top, absolute.
    pub(crate) root: PathBuf,
    /// The length of an object name in the index: 20 (SHA-1) or 32
    /// (SHA-256).
    pub(crate) hash_len: usize,
    /// The excludes files git reads besides the `.gitignore` files, in the
    /// order they decide: `.git/info/exclude`, then `core.excludesFile`
    /// (or its default), absolute, present or not.
    pub(crate) excludes: Vec<PathBuf>,
    /// The configuration files git read, absolute: what the listing depends
    /// on besides the work tree.
    pub(crate) config_files: Vec<PathBuf>,
}

/// A work tree whose files this process may list, before git's
/// configuration is read: enough to read the index while `git config` runs.
#[derive(Debug, Clone)]
pub(crate) struct Probe {
    root: PathBuf,
    hash_len: usize,
}

impl Probe {
    /// The work tree at `root`, when its files may be listed in this
    /// process with `env` as git's environment: `.git` is a directory there
    /// and no variable moves the repository. `None` when git should list
    /// them.
    pub(crate) fn new(root: &Path, env: &BaseEnv) -> Option<Self> {
        let root = std::path::absolute(root).ok()?;
        if !rustix::fs::lstat(root.join(".git"))
            .is_ok_and(|s| rustix::fs::FileType::from_raw_mode(s.st_mode).is_dir())
        {
            return None;
        }
        if env.iter().any(|(k, _)| MOVES_THE_REPOSITORY.contains(&k)) {
            return None;
        }
        let hash_len = object_format(&std::fs::read(root.join(".git/config")).unwrap_or_default())?;
        Some(Self { root, hash_len })
    }

    orcho_core::getters! {
        /// The work tree's top, absolute.
        pub(crate) fn root(&self) -> &Path;
        /// The length of the index's object names.
        pub(crate) fn hash_len(&self) -> usize;
    }

    /// Reads git's configuration (one `git config` process, so that
    /// includes, `-c` and the environment mean what they mean to git).
    /// `None` when it asks for something this process leaves to git.
    pub(crate) fn configure(self, env: &BaseEnv) -> Option<Repo> {
        let Self { root, hash_len } = self;
        let config = read_config(&root, env)?;
        let mut excludes_file: Option<String> = None;
        for (key, value) in &config.values {
            match key.as_str() {
                "core.ignorecase" | "core.sparsecheckout" if is_true(value.as_deref()) => {
                    return None;
                }
                "core.worktree" => return None,
                "extensions.objectformat" => {
                    let len = match value.as_deref() {
                        Some(v) if v.eq_ignore_ascii_case("sha1") => 20,
                        Some(v) if v.eq_ignore_ascii_case("sha256") => 32,
                        _ => return None,
                    };
                    if len != hash_len {
                        return None;
                    }
                }
                "core.excludesfile" => excludes_file = value.clone(),
                _ => {}
            }
        }
        let home = env.get("HOME").map(PathBuf::from);
        let excludes_file = match excludes_file {
            Some(path) if path.starts_with("~/") => home.as_ref()?.join(&path[2..]),
            Some(path) if path.starts_with('~') || path.starts_with("%(") => return None,
            Some(path) => root.join(path),
            None => {
                let config_home = env
                    .get("XDG_CONFIG_HOME")
                    .filter(|x| !x.is_empty())
                    .map(PathBuf::from)
                    .or_else(|| home.map(|h| h.join(".config")));
                match config_home {
                    Some(dir) => dir.join("git/ignore"),
                    None => PathBuf::new(),
                }
            }
        };
        let mut excludes = vec![root.join(".git/info/exclude")];
        if !excludes_file.as_os_str().is_empty() {
            excludes.push(excludes_file);
        }
        let mut config_files = config.files;
        config_files.extend(unread_config_files(env));
        config_files.sort();
        config_files.dedup();
        Some(Repo {
            root,
            hash_len,
            excludes,
            config_files,
        })
    }
}

impl Repo {
    /// The repository at `root`, when its files can be listed in this
    /// process with git's configuration as git running with `env` reads it.
    /// `None` when git should list them.
    pub(crate) fn open(root: &Path, env: &BaseEnv) -> Option<Self> {
        Probe::new(root, env)?.configure(env)
    }
}

/// The configuration files git would read if they were there (it lists only
/// those that are): the system file of the git on `PATH` (`<prefix>/etc`,
/// or `/etc` for a git in `/usr`), the user's, and those the environment
/// names. A listing must be made again when one of them appears.
fn unread_config_files(env: &BaseEnv) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = vec!["/etc/gitconfig".into()];
    if let Some(path) = env.get("PATH") {
        let git = path
            .split(':')
            .filter(|dir| !dir.is_empty())
            .map(|dir| Path::new(dir).join("git"))
            .find(|git| rustix::fs::access(git, rustix::fs::Access::EXEC_OK).is_ok());
        if let Some(prefix) = git.as_deref().and_then(Path::parent).and_then(Path::parent) {
            files.push(prefix.join("etc/gitconfig"));
        }
    }
    let home = env.get("HOME").map(PathBuf::from);
    if let Some(home) = &home {
        files.push(home.join(".gitconfig"));
    }
    let config_home = env
        .get("XDG_CONFIG_HOME")
        .filter(|x| !x.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".config")));
    if let Some(dir) = config_home {
        files.push(dir.join("git/config"));
    }
    for name in ["GIT_CONFIG_SYSTEM", "GIT_CONFIG_GLOBAL"] {
        if let Some(path) = env.get(name).filter(|p| p.starts_with('/')) {
            files.push(path.into());
        }
    }
    files
}

/// The object name length `extensions.objectFormat` of a repository's own
/// configuration file says (git reads repository extensions from that file
/// alone): 20 for SHA-1, the default, or 32 for SHA-256; `None` for a
/// format this reader does not know.
fn object_format(config: &[u8]) -> Option<usize> {
    let mut in_extensions = false;
    let mut len = 20;
    for line in config.split(|&b| b == b'\n') {
        let line = line.trim_ascii();
        if let Some(header) = line.strip_prefix(b"[") {
            let name = header
                .split(|&b| b == b']')
                .next()
                .unwrap_or_default()
                .trim_ascii();
            in_extensions = name.eq_ignore_ascii_case(b"extensions");
            continue;
        }
        if !in_extensions {
            continue;
        }
        let Some(eq) = line.iter().position(|&b| b == b'=') else {
            continue;
        };
        if !line[..eq]
            .trim_ascii()
            .eq_ignore_ascii_case(b"objectformat")
        {
            continue;
        }
        let value = line[eq + 1..].trim_ascii();
        let value = value
            .strip_prefix(b"\"")
            .and_then(|v| v.strip_suffix(b"\""))
            .unwrap_or(value);
        len = if value.eq_ignore_ascii_case(b"sha1") {
            20
        } else if value.eq_ignore_ascii_case(b"sha256") {
            32
        } else {
            return None;
        };
    }
    Some(len)
}

/// What `git config --list` says, and which files it read.
#[derive(Debug, Default)]
struct Config {
    /// Keys (lower-case section and name) and values, in the order git read
    /// them: the last of a key wins.
    values: Vec<(String, Option<String>)>,
    files: Vec<PathBuf>,
}

/// Runs `git config -z --list --show-origin` in `root`.
fn read_config(root: &Path, env: &BaseEnv) -> Option<Config> {
    let outcome = exec::run(
        &ExecRequest::new(["git", "config", "-z", "--list", "--show-origin"])
            .cwd(Utf8Path::from_path(root)?)
            .envs(env.clone())
            .keep_stdout(1 << 20),
    )
    .ok()?;
    // `git config --list` exits 0 with or without entries.
    if !outcome.status.success() {
        return None;
    }
    let out = outcome.stdout.kept?;
    let mut config = Config::default();
    let mut fields = out.split(|&b| b == 0);
    while let Some(origin) = fields.next() {
        if origin.is_empty() {
            break;
        }
        let entry = fields.next()?;
        if let Some(path) = origin.strip_prefix(b"file:") {
            let path = Path::new(std::ffi::OsStr::from_bytes(path));
            let path = if path.is_absolute() {
                path.to_owned()
            } else {
                root.join(path)
            };
            if !config.files.contains(&path) {
                config.files.push(path);
            }
        }
        let text = String::from_utf8_lossy(entry);
        let (key, value) = match text.split_once('\n') {
            Some((k, v)) => (k.to_ascii_lowercase(), Some(v.to_owned())),
            None => (text.to_ascii_lowercase(), None),
        };
        config.values.push((key, value));
    }
    Some(config)
}

/// A git boolean: a key without a value, or one of git's true words.
fn is_true(value: Option<&str>) -> bool {
    value.is_none_or(|v| {
        ["true", "yes", "on", "1"]
            .iter()
            .any(|t| v.eq_ignore_ascii_case(t))
    })
}
