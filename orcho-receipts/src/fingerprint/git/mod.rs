//! What `git ls-files -co --exclude-per-directory=.gitignore` lists, found in this process:
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
//! index [`index::parse`] does not handle, a sparse checkout, or a
//! repository whose own configuration git did not read (an extension it
//! does not know, a repository of another owner it does not trust): git
//! refuses those, and the fingerprint reports what git says.

pub(crate) mod index;
pub(crate) mod untracked;

use std::{
    ffi::OsStr,
    os::unix::ffi::OsStrExt,
    path::{Path, PathBuf},
};

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
    /// The excludes files read besides the `.gitignore` files: none, since
    /// `.git/info/exclude` and `core.excludesFile` never hide a file from
    /// a subject (kept for the cache's format).
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
        let own = root.join(".git/config");
        if !config.files.contains(&own) && rustix::fs::stat(&own).is_ok() {
            return None;
        }
        let home = env.get("HOME").map(PathBuf::from);
        let mut excludes_file: Option<String> = None;
        // The files git would include if they were there, and what decides
        // a conditional include that may change with the work tree.
        let mut includes: Vec<PathBuf> = Vec::new();
        for Entry { key, value, origin } in &config.values {
            if is_include(key) {
                if key.starts_with("includeif.onbranch:") {
                    includes.push(root.join(".git/HEAD"));
                }
                let (Some(value), Some(origin)) = (value, origin) else {
                    continue;
                };
                match value.strip_prefix("~/") {
                    Some(rest) => includes.extend(home.as_ref().map(|h| h.join(rest))),
                    None => includes.extend(origin.parent().map(|dir| dir.join(value))),
                }
                continue;
            }
            match key.as_str() {
                // What git says is not false, this process leaves to git (a
                // value git refuses included).
                "core.ignorecase" | "core.sparsecheckout"
                    if git_bool(value.as_deref()) != Some(false) =>
                {
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
        let excludes_file = match excludes_file {
            Some(path) if path.starts_with("~/") => home.as_ref()?.join(&path[2..]),
            Some(path) if path.starts_with('~') || path.starts_with("%(") => return None,
            Some(path) => root.join(path),
            None => match config_home(&root, env) {
                Some(dir) => dir.join("git/ignore"),
                None => PathBuf::new(),
            },
        };
        // `.git/info/exclude` and `core.excludesFile` are a user's, not the
        // project's: a file they alone hide is still part of the subject
        // (a `conftest.py` the agent hid there would run unseen). Only the
        // checkout's `.gitignore` files leave files out.
        let _ = excludes_file;
        let excludes = Vec::new();
        let mut config_files = config.files;
        config_files.extend(unread_config_files(&root, env));
        config_files.extend(includes);
        // Read once `extensions.worktreeConfig` is set (in a file guarded
        // already).
        config_files.push(root.join(".git/config.worktree"));
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

/// Git's `$XDG_CONFIG_HOME`, or `~/.config`; a relative one is relative to
/// the work tree, where git runs.
fn config_home(root: &Path, env: &BaseEnv) -> Option<PathBuf> {
    env.get("XDG_CONFIG_HOME")
        .filter(|x| !x.is_empty())
        .map(|x| root.join(x))
        .or_else(|| env.get("HOME").map(|h| Path::new(h).join(".config")))
}

/// Whether a configuration key is an include: `include.path` or
/// `includeIf.<condition>.path`.
fn is_include(key: &str) -> bool {
    key == "include.path" || (key.starts_with("includeif.") && key.ends_with(".path"))
}

/// The configuration files git would read if they were there (it lists only
/// those that are): the system file of the git on `PATH` (`<prefix>/etc`,
/// or `/etc` for a git in `/usr`), the user's, and those the environment
/// names. A listing must be made again when one of them appears.
fn unread_config_files(root: &Path, env: &BaseEnv) -> Vec<PathBuf> {
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
    if let Some(home) = env.get("HOME") {
        files.push(Path::new(home).join(".gitconfig"));
    }
    if let Some(dir) = config_home(root, env) {
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
pub(crate) fn object_format(config: &[u8]) -> Option<usize> {
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
pub(crate) struct Config {
    /// The entries, in the order git read them: the last of a key wins.
    pub(crate) values: Vec<Entry>,
    files: Vec<PathBuf>,
}

/// One configuration entry.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The section and name, lower-case.
    key: String,
    pub(crate) value: Option<String>,
    /// The file it is in (`None`: the command line or the environment).
    origin: Option<PathBuf>,
}

/// Runs `git config -z --list --show-origin` in `root`.
fn read_config(root: &Path, env: &BaseEnv) -> Option<Config> {
    let outcome = exec::run(
        &ExecRequest::new([
            OsStr::new("git"),
            OsStr::new("-C"),
            root.as_os_str(),
            OsStr::new("config"),
            OsStr::new("-z"),
            OsStr::new("--list"),
            OsStr::new("--show-origin"),
        ])
        .envs(env.clone())
        .keep_stdout(1 << 20),
    )
    .ok()?;
    // `git config --list` exits 0 with or without entries.
    if !outcome.status.success() {
        return None;
    }
    parse_config_list(&outcome.stdout.kept?, root)
}

/// Reads `git config -z --list --show-origin` output: an origin and an
/// entry (`key`, or `key` newline `value`) per record, NUL-terminated;
/// relative origins are relative to `root`. `None` when a record is cut.
pub(crate) fn parse_config_list(out: &[u8], root: &Path) -> Option<Config> {
    let mut config = Config::default();
    let mut fields = out.split(|&b| b == 0);
    while let Some(origin) = fields.next() {
        if origin.is_empty() {
            break;
        }
        let entry = fields.next()?;
        let origin = origin.strip_prefix(b"file:").map(|path| {
            let path = Path::new(OsStr::from_bytes(path));
            if path.is_absolute() {
                path.to_owned()
            } else {
                root.join(path)
            }
        });
        if let Some(path) = &origin
            && !config.files.contains(path)
        {
            config.files.push(path.clone());
        }
        let text = String::from_utf8_lossy(entry);
        let (key, value) = match text.split_once('\n') {
            Some((k, v)) => (k.to_ascii_lowercase(), Some(v.to_owned())),
            None => (text.to_ascii_lowercase(), None),
        };
        config.values.push(Entry { key, value, origin });
    }
    Some(config)
}

/// A git boolean as git reads it: a key without a value is true; `true`,
/// `yes`, `on` and `false`, `no`, `off`, the empty string in any case; else
/// an integer, with an optional `k`, `m` or `g`, true unless zero. `None`
/// for a value git refuses.
pub(crate) fn git_bool(value: Option<&str>) -> Option<bool> {
    let Some(v) = value else { return Some(true) };
    let word = |words: &[&str]| words.iter().any(|w| v.eq_ignore_ascii_case(w));
    if word(&["true", "yes", "on"]) {
        return Some(true);
    }
    if word(&["false", "no", "off", ""]) {
        return Some(false);
    }
    let digits = v
        .strip_suffix(['k', 'K', 'm', 'M', 'g', 'G'])
        .unwrap_or(v)
        .trim_ascii_start();
    digits.parse::<i64>().ok().map(|n| n != 0)
}
