//! The guard on an agent's tool calls: what the permission rules say, and
//! what no rule lets an agent do. The files that say what proves readiness
//! (the profile and what it extends, the store, every agent's hook
//! settings, the repository's git configuration and hooks, the `orcho` the
//! hooks run) may not be changed by an agent, in any spelling a shell
//! allows; the keys that sign receipts may not even be read; an agent does
//! not record a person's decision. A phase's agent may always write its
//! own report and artifacts.

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{
    permissions::{PermissionAction, RuleSet},
    profile::PROFILE_FILE,
};

use super::{Agent, Verdict, shell};

/// Where the guard works: the checkout and what of Orcho's it protects.
#[derive(Debug, Clone)]
pub struct Scope {
    /// The checkout.
    pub checkout: Utf8PathBuf,
    /// This machine's directory of the store (the receipts).
    pub store: Utf8PathBuf,
    /// The directory of the keys that sign receipts, when there is one.
    pub keys: Option<Utf8PathBuf>,
    /// Whether the checkout's own `orcho.yaml` (and what it extends) is
    /// the profile in force; `false` when the host named another one.
    pub profile: bool,
}

/// What the guard answers to a tool call that asks `asked` (each a
/// permission and its argument, as [`requests`](super::requests) gives
/// them) from `cwd`: the strictest of what `rules` say (without rules,
/// Orcho's own `orcho verify` and `orcho status` are allowed, so that an
/// agent that asks before every command can satisfy the stop guard where
/// nobody answers) and what no rule allows. `None`: no opinion.
pub fn tool_call(
    scope: &Scope,
    rules: Option<&RuleSet>,
    asked: &[(String, String)],
    cwd: &Utf8Path,
) -> Option<Verdict> {
    // A command (or any argument) too long to check in the hook's time is
    // refused before anything reads it.
    if let Some((permission, long)) = asked.iter().find(|(_, a)| a.len() > MAX_ARGUMENT_BYTES) {
        return Some(Verdict {
            action: PermissionAction::Deny,
            reason: format!(
                "{permission}: deny: its argument is {} bytes, more than the {} KiB orcho \
                 checks; write what it carries to a file first, or split it",
                long.len(),
                MAX_ARGUMENT_BYTES / 1024
            ),
        });
    }
    // A phase's agent reports through its output document and keeps notes
    // in its artifacts, whatever else the rules say.
    let own = PhaseOwn::from_env();
    if !asked.is_empty() && asked.iter().all(|(p, a)| own.covers(p, a, cwd)) {
        return Some(Verdict {
            action: PermissionAction::Allow,
            reason: "the phase's own report (ORCHO_OUTPUT, `orcho report`) or artifacts \
                     (ORCHO_ARTIFACTS)"
                .to_owned(),
        });
    }
    let guarded = guard_control_files(scope, asked, cwd);
    let decided = match rules {
        Some(rules) => verdict(rules, asked),
        None => own_proof(asked),
    };
    strictest(guarded.into_iter().chain(decided))
}

/// What the agent running a phase may always do: write the phase's output
/// document (the file `ORCHO_OUTPUT` names, or `orcho report`) and files in
/// its artifacts directory (`ORCHO_ARTIFACTS`). Both are in the hook's
/// environment only when a host started the agent for a phase: the agent's
/// own commands cannot change what its hooks inherit.
struct PhaseOwn {
    output: Option<Utf8PathBuf>,
    artifacts: Option<Utf8PathBuf>,
}

impl PhaseOwn {
    fn from_env() -> Self {
        let path = |var: &str| {
            crate::env_text(var)
                .map(Utf8PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|p| super::normalize(&p))
        };
        Self {
            output: path("ORCHO_OUTPUT"),
            artifacts: path("ORCHO_ARTIFACTS"),
        }
    }

    /// Whether the request `(permission, argument)` is the phase's own.
    fn covers(&self, permission: &str, argument: &str, cwd: &Utf8Path) -> bool {
        if self.output.is_none() {
            return false;
        }
        match permission {
            "write" | "edit" => {
                let path = Utf8Path::new(argument);
                let path = if path.is_absolute() {
                    super::normalize(path)
                } else {
                    super::normalize(&cwd.join(path))
                };
                self.output.as_deref() == Some(path.as_path())
                    || self.artifacts.as_deref().is_some_and(|dir| {
                        path.strip_prefix(dir).is_ok_and(|r| !r.as_str().is_empty())
                    })
            }
            "bash" => simple_words(argument).is_some_and(|words| {
                words.len() >= 2 && words[1] == "report" && is_orcho(&words[0])
            }),
            _ => false,
        }
    }
}

/// Whether `program` is Orcho: `orcho` (as `PATH` finds it), or this very
/// program by its path (as a host names it in an
/// agent's prompt, whatever the file is called).
fn is_orcho(program: &str) -> bool {
    // `orcho` as `PATH` finds it; never another file of that name (`./orcho`
    // the agent wrote).
    if program == "orcho" {
        return true;
    }
    let path = Utf8Path::new(program);
    if !path.is_absolute() {
        return false;
    }
    let this = std::env::current_exe().and_then(std::fs::canonicalize);
    let that = std::fs::canonicalize(path);
    matches!((this, that), (Ok(a), Ok(b)) if a == b)
}

/// The words of `command` when it is one simple command: nothing outside
/// quotes that chains, redirects, substitutes or expands (`;`, `&`, `|`,
/// `<`, `>`, `$`, a backquote, parentheses, braces, a line break), and no
/// `$` or backquote inside double quotes. `None` otherwise.
pub fn simple_words(command: &str) -> Option<Vec<String>> {
    #[derive(PartialEq)]
    enum In {
        Plain,
        Single,
        Double,
    }
    let mut state = In::Plain;
    let mut escaped = false;
    for c in command.chars() {
        match state {
            In::Single => {
                if c == '\'' {
                    state = In::Plain;
                }
            }
            In::Double => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '"' {
                    state = In::Plain;
                } else if matches!(c, '$' | '`') {
                    return None;
                }
            }
            In::Plain => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '\'' {
                    state = In::Single;
                } else if c == '"' {
                    state = In::Double;
                } else if matches!(
                    c,
                    ';' | '&' | '|' | '<' | '>' | '$' | '`' | '(' | ')' | '{' | '}' | '\n' | '\r'
                ) {
                    return None;
                }
            }
        }
    }
    if state != In::Plain || escaped {
        return None;
    }
    shlex::split(command)
}

/// The files that say what proves readiness and what the hooks do: the
/// profile, the store, every agent's hook settings, and the keys that sign
/// receipts. A change to one is refused, rules or not: an agent that
/// rewrites them could prove itself ready. A path is checked as given and
/// as the file system resolves it, so that a symbolic link to one of them
/// is one of them. A shell command is refused when a word of it (a glob
/// too) names one, unless it only reads it; when it removes or moves a
/// directory holding one (`rm -rf .`, `find . -delete`); when it takes them
/// back or away through git (`git checkout -- .`, `git stash -u`, `git
/// clean -x` over the store); and when it skips the repository's own git
/// hooks (`--no-verify`). The keys may not even be read.
fn guard_control_files(
    scope: &Scope,
    asked: &[(String, String)],
    cwd: &Utf8Path,
) -> Option<Verdict> {
    let guarded = Guarded::new(scope);
    let deny = |reason: String| Verdict {
        action: PermissionAction::Deny,
        reason,
    };
    asked
        .iter()
        .find_map(|(permission, argument)| match permission.as_str() {
            "write" | "edit" => guarded.what(argument).map(|what| {
                deny(format!(
                    "{permission} `{argument}`: deny: it is {what}; an agent may not change it, \
                     a person does"
                ))
            }),
            "read" => guarded.secret(argument).map(|what| {
                deny(format!(
                    "read `{argument}`: deny: it is {what}; whoever reads it can forge receipts"
                ))
            }),
            "bash" => guard_shell(&guarded, argument, cwd),
            _ => None,
        })
}

/// [`guard_control_files`] for one shell command line.
fn guard_shell(guarded: &Guarded, command: &str, cwd: &Utf8Path) -> Option<Verdict> {
    let shown = shorten(command, 160);
    let deny = |reason: String| {
        Some(Verdict {
            action: PermissionAction::Deny,
            reason: format!("bash `{shown}`: deny: {reason}"),
        })
    };
    // Decisions belong to people: an agent does not decide its own run.
    if let Some(verb) = shell::orcho_decision(command) {
        return deny(format!(
            "`{verb}` records a person's decision, and an agent does not decide; tell the user \
             what waits (`orcho inbox`, `orcho handoff show`) and let them decide"
        ));
    }
    let segments = shell::segments(command);
    // `core.hooksPath` set in any spelling: `-c`, `--config-env`, `git
    // config`, `GIT_CONFIG_PARAMETERS`, `GIT_CONFIG_KEY_n`. Only reading it
    // (`git config --get`) is left alone.
    let lower = command.to_ascii_lowercase();
    if lower.contains("core.hookspath") {
        let only_reads = segments.iter().all(|segment| match segment.git() {
            Some(("config", args)) => args.iter().any(|a| {
                matches!(
                    a.as_str(),
                    "--get" | "--get-all" | "--list" | "-l" | "get" | "list"
                )
            }),
            _ => !segment
                .args
                .iter()
                .any(|a| a.to_ascii_lowercase().contains("core.hookspath")),
        }) && !lower.contains("git_config");
        if !only_reads {
            return deny(
                "it sets `core.hooksPath`, which skips the repository's own git hooks; run it \
                 without"
                    .to_owned(),
            );
        }
    }
    for segment in &segments {
        let Some((sub, args)) = segment.git() else {
            continue;
        };
        // `--no-verify` as git reads it: any unambiguous abbreviation.
        let no_verify = args
            .iter()
            .any(|a| a.len() >= "--no-v".len() && "--no-verify".starts_with(a.as_str()));
        let short = |flag: char| {
            args.iter()
                .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains(flag))
        };
        if segment
            .git_config()
            .any(|c| c.to_ascii_lowercase().starts_with("core.hookspath"))
        {
            return deny(
                "`-c core.hooksPath=…` skips the repository's own git hooks; run it without"
                    .to_owned(),
            );
        }
        match sub {
            "commit" if no_verify || short('n') => {
                return deny(
                    "`--no-verify` skips the repository's own git hooks; commit without it"
                        .to_owned(),
                );
            }
            "push" | "merge" | "am" | "rebase" | "cherry-pick" if no_verify => {
                return deny(
                    "`--no-verify` skips the repository's own git hooks; run it without".to_owned(),
                );
            }
            "stash"
                if short('u')
                    || short('a')
                    || args
                        .iter()
                        .any(|a| a == "--include-untracked" || a == "--all") =>
            {
                return deny(
                    "it stashes untracked files away, Orcho's profile and the agents' hook \
                     settings among them; stash without `-u`/`-a`"
                        .to_owned(),
                );
            }
            "clean" if (short('x') || short('X')) && guarded.store_inside() => {
                let store = guarded
                    .store
                    .strip_prefix(&guarded.checkout)
                    .map_or_else(|_| guarded.store.to_string(), ToString::to_string);
                return deny(format!(
                    "it removes ignored files, `{store}` among them: it is {}; an agent may \
                         not change it, a person does",
                    guarded.store_what()
                ));
            }
            _ => {}
        }
    }
    let dirs = working_dirs(command, cwd);
    let mut words = shell_words(command);
    words.sort_unstable();
    words.dedup();
    // Every word is looked up in every directory the command changes into:
    // past these bounds a person decides, so that no command takes the
    // hook past the agent's timeout.
    if dirs.len() > MAX_GUARDED_DIRS || words.len() * dirs.len() > MAX_LOOKUPS {
        return Some(Verdict {
            action: PermissionAction::Ask,
            reason: format!(
                "bash `{shown}`: ask: it changes directory {} times and names {} distinct \
                 words, more than orcho checks against its own files (at most {} changes of \
                 directory, {} words looked up in all), so a person approves it",
                dirs.len() - 1,
                words.len(),
                MAX_GUARDED_DIRS - 1,
                MAX_LOOKUPS
            ),
        });
    }
    let lookup = |word: &str| -> Vec<Utf8PathBuf> {
        let word = home_expanded(word);
        dirs.iter()
            .map(|dir| super::normalize(&dir.join(&word)))
            .collect()
    };
    // The keys: not even read.
    for word in &words {
        for path in lookup(word) {
            let what = if shell::is_glob(word) {
                guarded.glob_secret(&path)
            } else {
                guarded.secret(path.as_str())
            };
            if let Some(what) = what {
                return deny(format!(
                    "it names `{word}`: it is {what}; whoever reads it can forge receipts"
                ));
            }
        }
    }
    // What the command may change: every word, unless it only reads (then
    // only what it redirects into). A word no simple command names as an
    // argument (`of=orcho.yaml`, a backquote's) may be changed.
    // A word that is only ever the program a simple command runs (`/…/orcho
    // verify`) is run, not changed.
    let targets = redirect_targets(command, &segments);
    let only_run = |w: &str| {
        segments.iter().any(|s| s.program_word == w) && !segments.iter().any(|s| s.names(w))
    };
    let changed: Vec<&String> = if only_reads(command, &segments) {
        targets.iter().collect()
    } else {
        words
            .iter()
            .filter(|w| {
                targets.contains(*w)
                    || (!segments.iter().any(|s| s.names(w)) && !only_run(w))
                    || segments.iter().any(|s| s.names(w) && !s.reads())
            })
            .collect()
    };
    for word in changed {
        for path in lookup(word) {
            let found = if shell::is_glob(word) {
                guarded.glob_names(&path, false)
            } else {
                guarded.what(path.as_str())
            };
            if let Some(what) = found {
                return deny(format!(
                    "it names `{word}`: it is {what}; an agent may not change it, a person does"
                ));
            }
        }
    }
    // What it removes, moves away or overwrites with all it holds.
    let guarded_name = |name: &str| guarded.basename_matches(name);
    for segment in &segments {
        for word in segment.removes(&guarded_name) {
            for path in lookup(word) {
                let found = if shell::is_glob(word) {
                    guarded.glob_names(&path, true)
                } else {
                    guarded.what(path.as_str()).or_else(|| guarded.holds(&path))
                };
                if let Some(what) = found {
                    return deny(format!(
                        "it removes or overwrites `{word}`: it is {what}; an agent may not \
                         change it, a person does"
                    ));
                }
            }
        }
    }
    None
}

/// A word with a leading `~`, `$HOME` or `${HOME}` as the home directory it
/// stands for.
fn home_expanded(word: &str) -> String {
    let Some(home) = crate::env_text("HOME") else {
        return word.to_owned();
    };
    for prefix in ["~", "$HOME", "${HOME}"] {
        if let Some(rest) = word.strip_prefix(prefix)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            return format!("{home}{rest}");
        }
    }
    word.to_owned()
}

/// The words a command line redirects output into (`> file`, `>> file`,
/// `2>file`, `| tee file`).
fn redirect_targets(command: &str, segments: &[shell::Segment]) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = command;
    while let Some(at) = rest.find('>') {
        rest = rest[at + 1..].trim_start_matches(['>', '|', '&']);
        let word: String = rest
            .trim_start()
            .chars()
            .take_while(|c| !c.is_whitespace() && !";|&<>()".contains(*c))
            .collect();
        let word = word.trim_matches(|c| c == '\'' || c == '"').to_owned();
        if !word.is_empty() {
            out.push(word);
        }
    }
    for segment in segments {
        if segment.program == "tee" {
            out.extend(segment.args.iter().filter(|w| !w.starts_with('-')).cloned());
        }
    }
    out
}

/// The words of a shell command the control-file guard looks up and the
/// directories it looks them up in (for the fuzz targets).
pub fn reads(command: &str, cwd: &Utf8Path) -> (Vec<String>, Vec<Utf8PathBuf>) {
    (shell_words(command), working_dirs(command, cwd))
}

/// The longest argument of a tool call (a shell command, a path) the hook
/// checks; a longer one is denied.
const MAX_ARGUMENT_BYTES: usize = 256 * 1024;

/// The most directories (the agent's and each `cd`) a shell command's words
/// are looked up in.
const MAX_GUARDED_DIRS: usize = 9;
/// The most lookups (distinct words times directories) of one shell
/// command: each resolves a path on disk.
const MAX_LOOKUPS: usize = 8192;

/// What [`guard_control_files`] guards, as paths relative to the checkout
/// and, for the store and the keys, absolute (they may lie outside it).
struct Guarded {
    checkout: Utf8PathBuf,
    real_checkout: Option<Utf8PathBuf>,
    store: Utf8PathBuf,
    real_store: Option<Utf8PathBuf>,
    /// The directory of the receipt and signing keys.
    keys: Option<Utf8PathBuf>,
    real_keys: Option<Utf8PathBuf>,
    profile: bool,
    /// More guarded paths, absolute (each as given and resolved), with
    /// what each is: the files the profile extends, the agents' settings in
    /// the user's home, the repository's git configuration and hooks, and
    /// the `orcho` the hooks run.
    extra: Vec<(Utf8PathBuf, &'static str)>,
}

impl Guarded {
    fn new(scope: &Scope) -> Self {
        let profile = scope.profile;
        let keys = scope.keys.clone();
        let mut extra = Vec::new();
        let mut add = |path: Utf8PathBuf, what: &'static str| {
            if let Some(real) = resolved(&path).filter(|r| *r != path) {
                extra.push((real, what));
            }
            extra.push((path, what));
        };
        if profile {
            for file in extended_files(&scope.checkout.join(PROFILE_FILE)) {
                add(
                    file,
                    "a profile Orcho's profile extends, which declares what proves readiness",
                );
            }
        }
        if let Some(home) = crate::env_text("HOME").map(Utf8PathBuf::from)
            && home.is_absolute()
        {
            for agent in Agent::ALL {
                for file in agent.dialect().user_settings {
                    add(
                        home.join(file),
                        "an agent's settings in your home, which can switch its hooks off",
                    );
                }
            }
        }
        // The work tree's top, found as git finds it, without running git
        // on every tool call.
        if let Some(top) = scope
            .checkout
            .ancestors()
            .find(|dir| dir.join(".git/HEAD").is_file())
        {
            add(
                top.join(".git/config"),
                "the repository's git configuration, which can skip its hooks",
            );
            add(top.join(".git/hooks"), "the repository's own git hooks");
        }
        for binary in orcho_binaries() {
            add(binary, "the `orcho` the hooks run");
        }
        Self {
            checkout: scope.checkout.clone(),
            real_checkout: resolved(&scope.checkout),
            store: scope.store.clone(),
            real_store: resolved(&scope.store),
            real_keys: keys.as_deref().and_then(resolved),
            keys,
            profile,
            extra,
        }
    }

    /// What an absolute path is among [`extra`](Self::extra): one of them,
    /// or inside one.
    fn extra_at(&self, absolute: &Utf8Path) -> Option<&'static str> {
        self.extra
            .iter()
            .find(|(path, _)| absolute.starts_with(path))
            .map(|(_, what)| *what)
    }

    /// Every agent's hook settings files, relative to the checkout.
    fn settings_files() -> impl Iterator<Item = &'static str> {
        Agent::ALL.into_iter().flat_map(|agent| {
            let dialect = agent.dialect();
            std::iter::once(dialect.settings).chain(dialect.more_settings.iter().copied())
        })
    }

    /// The directories the settings files live in (`.github`,
    /// `.github/hooks`): removing one removes them.
    fn settings_dirs() -> impl Iterator<Item = &'static str> {
        Self::settings_files().flat_map(|file| {
            file.match_indices('/')
                .map(move |(at, _)| &file[..at])
                .collect::<Vec<_>>()
        })
    }

    /// Every guarded file and directory, relative to the checkout.
    fn relatives(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.profile
            .then_some(PROFILE_FILE)
            .into_iter()
            .chain(Self::settings_files())
            .chain(Self::settings_dirs())
    }

    /// What a relative path is, when it is guarded.
    fn what_relative(&self, relative: &str) -> Option<&'static str> {
        let relative = relative.trim_end_matches('/');
        if self.profile && relative == PROFILE_FILE {
            Some("Orcho's profile, which declares what proves readiness")
        } else if Self::settings_files().any(|file| file == relative) {
            Some("the agent's hook settings, which run Orcho")
        } else if Self::settings_dirs().any(|dir| dir == relative) {
            Some("the directory of the agent's hook settings, which run Orcho")
        } else {
            None
        }
    }

    /// What `path` is when it lies among the keys that sign receipts.
    fn secret(&self, path: &str) -> Option<&'static str> {
        let keys = self.keys.as_deref()?;
        let given = super::normalize(&self.checkout.join(path));
        let real = resolved(&given);
        [Some(&given), real.as_ref()]
            .into_iter()
            .flatten()
            .any(|p| {
                p.starts_with(keys) || self.real_keys.as_deref().is_some_and(|k| p.starts_with(k))
            })
            .then_some("Orcho's key, which signs receipts")
    }

    /// What a removal of the directory `absolute` takes with it: the
    /// checkout (or a directory above it), or a directory holding a
    /// guarded file.
    fn holds(&self, absolute: &Utf8Path) -> Option<&'static str> {
        let real = resolved(absolute);
        let candidates = [Some(absolute), real.as_deref()];
        let above = |dir: &Utf8Path| candidates.iter().flatten().any(|p| dir.starts_with(p));
        if above(&self.checkout) || self.real_checkout.as_deref().is_some_and(above) {
            return Some("the checkout, which holds Orcho's profile and the agents' hook settings");
        }
        if above(&self.store) || self.real_store.as_deref().is_some_and(above) {
            return Some("a directory holding Orcho's store, which holds the receipts");
        }
        if let Some((_, what)) = self.extra.iter().find(|(path, _)| above(path)) {
            return Some(what);
        }
        let relative = self.relative_of(absolute)?;
        self.relatives()
            .any(|guarded| Utf8Path::new(guarded).starts_with(relative))
            .then_some("a directory holding the agent's hook settings, which run Orcho")
    }

    /// What a glob (`rm orcho.y*ml`, `rm -rf .orcho/*`), taken as an
    /// absolute pattern, may name: a guarded file or something inside the
    /// store or a settings directory; and, for a command that removes what
    /// it names (`removing`), a directory above one, the checkout included.
    fn glob_names(&self, pattern: &Utf8Path, removing: bool) -> Option<&'static str> {
        use shell::Reach;
        let pattern = pattern.as_str();
        let store = (self.store.as_path(), self.store_what());
        let guarded = self
            .relatives()
            .filter_map(|rel| Some((self.checkout.join(rel), self.what_relative(rel)?)));
        let extra = self.extra.iter().map(|(p, what)| (p.clone(), *what));
        for (target, what) in guarded
            .chain(extra)
            .chain(std::iter::once((store.0.to_owned(), store.1)))
        {
            match shell::glob_reach(pattern, target.as_str()) {
                Some(Reach::Itself | Reach::Inside) => return Some(what),
                Some(Reach::Above) if removing => {
                    return Some("a directory holding Orcho's own files");
                }
                _ => {}
            }
        }
        let checkout = shell::glob_reach(pattern, self.checkout.as_str());
        (removing && matches!(checkout, Some(Reach::Above | Reach::Itself)))
            .then_some("the checkout, which holds Orcho's profile and the agents' hook settings")
    }

    /// What a glob may read of the keys that sign receipts.
    fn glob_secret(&self, pattern: &Utf8Path) -> Option<&'static str> {
        let keys = self.keys.as_deref()?;
        matches!(
            shell::glob_reach(pattern.as_str(), keys.as_str()),
            Some(shell::Reach::Itself | shell::Reach::Inside)
        )
        .then_some("Orcho's key, which signs receipts")
    }

    /// Whether `name` (a file name, or a glob of one, as `find -name` takes
    /// it) may match a guarded file or directory, or one of the store's.
    fn basename_matches(&self, name: &str) -> bool {
        let store = self
            .store
            .strip_prefix(&self.checkout)
            .map(|rel| rel.as_str().to_owned())
            .unwrap_or_default();
        let matches = |part: &str| !part.is_empty() && shell::glob_matches(name, part);
        self.relatives()
            .chain(["receipts"])
            .flat_map(|path| path.split('/'))
            .any(matches)
            || store.split('/').any(matches)
    }

    /// `absolute` relative to the checkout (as given, or as resolved).
    fn relative_of<'p>(&self, absolute: &'p Utf8Path) -> Option<&'p str> {
        absolute
            .strip_prefix(&self.checkout)
            .ok()
            .or_else(|| {
                self.real_checkout
                    .as_deref()
                    .and_then(|c| absolute.strip_prefix(c).ok())
            })
            .map(Utf8Path::as_str)
    }

    /// What `path` (relative to the checkout, or absolute) is, when it is
    /// guarded, as given or once its links are resolved.
    fn what(&self, path: &str) -> Option<&'static str> {
        let given = self.checkout.join(path);
        let real = resolved(&given);
        [Some(&given), real.as_ref()]
            .into_iter()
            .flatten()
            .find_map(|absolute| self.what_at(absolute))
    }

    /// What the store is, for a reason.
    fn store_what(&self) -> &'static str {
        "Orcho's store, which holds the receipts"
    }

    /// Whether the store lies in the checkout, where a clean of ignored
    /// files reaches it.
    fn store_inside(&self) -> bool {
        self.store.starts_with(&self.checkout)
    }

    fn what_at(&self, absolute: &Utf8Path) -> Option<&'static str> {
        if let Some(what) = self.extra_at(absolute) {
            return Some(what);
        }
        let inside = |dir: &Utf8Path| absolute.starts_with(dir);
        if inside(&self.store) || self.real_store.as_deref().is_some_and(inside) {
            return Some(self.store_what());
        }
        if let Some(keys) = &self.keys
            && absolute.starts_with(keys)
        {
            return Some("Orcho's key, which signs receipts");
        }
        self.what_relative(self.relative_of(absolute)?)
    }
}

/// The files the profile at `path` extends, through its whole chain
/// (built-ins left out), absolute: read as YAML for their `extends` only.
fn extended_files(path: &Utf8Path) -> Vec<Utf8PathBuf> {
    let mut out = Vec::new();
    let mut current = path.to_owned();
    for _ in 0..orcho::profile::MAX_EXTENDS_DEPTH {
        let Ok(text) = std::fs::read_to_string(&current) else {
            break;
        };
        let extends = serde_yaml::from_str::<serde_yaml::Value>(&text)
            .ok()
            .and_then(|v| v.get("extends").and_then(|e| e.as_str().map(str::to_owned)));
        let Some(extends) = extends.filter(|e| !e.starts_with("builtin:")) else {
            break;
        };
        let next = super::normalize(
            &current
                .parent()
                .unwrap_or(Utf8Path::new("/"))
                .join(&extends),
        );
        if out.contains(&next) {
            break;
        }
        out.push(next.clone());
        current = next;
    }
    out
}

/// Where the `orcho` the hooks run is: this program, and an `orcho` in each
/// directory of `PATH` (a hook runs `orcho` by name: one put earlier on
/// `PATH` would answer in its place).
fn orcho_binaries() -> Vec<Utf8PathBuf> {
    let mut out: Vec<Utf8PathBuf> = std::env::current_exe()
        .ok()
        .and_then(|p| Utf8PathBuf::from_path_buf(p).ok())
        .into_iter()
        .collect();
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            if let Ok(dir) = Utf8PathBuf::from_path_buf(dir)
                && dir.is_absolute()
            {
                out.push(dir.join("orcho"));
            }
        }
    }
    out
}

/// `path` with its symbolic links resolved: its longest existing ancestor
/// canonicalized, the rest (not there yet) joined as it is; a link whose
/// target is not there yet is followed too (a link to a store not made
/// yet). `None` when nothing of it can be resolved.
fn resolved(path: &Utf8Path) -> Option<Utf8PathBuf> {
    let mut path = super::normalize(path);
    // As many links as the kernel follows in one lookup.
    for _ in 0..40 {
        let mut existing = path.as_path();
        let mut rest = Vec::new();
        let dangling = loop {
            if let Ok(real) = existing.canonicalize_utf8() {
                let mut out = real;
                for part in rest.iter().rev() {
                    out.push(part);
                }
                return Some(out);
            }
            if let Ok(target) = existing.read_link_utf8() {
                break existing.parent().map(|dir| dir.join(target));
            }
            rest.push(existing.file_name()?.to_owned());
            existing = existing.parent()?;
        };
        let mut next = super::normalize(&dangling?);
        for part in rest.iter().rev() {
            next.push(part);
        }
        path = next;
    }
    None
}

/// The words of a shell command line that could name a file: split at
/// blanks and the shell's operators, quotes removed, `>file` and
/// `--flag=file` taken apart.
fn shell_words(command: &str) -> Vec<String> {
    command
        .split(|c: char| c.is_whitespace() || ";|&<>()`$".contains(c))
        .map(|w| w.trim_matches(|c| c == '\'' || c == '"'))
        .map(|w| w.rsplit_once('=').map_or(w, |(_, value)| value))
        .filter(|w| !w.is_empty() && !w.starts_with('-'))
        .map(str::to_owned)
        .collect()
}

/// Whether a shell command only reads: programs that do not write files
/// (`git` only with a subcommand that does not), alone or piped into one
/// another, with no redirection and nothing run inside it.
fn only_reads(command: &str, segments: &[shell::Segment]) -> bool {
    if command.contains(['>', ';', '&', '`', '$', '\n', '(']) || command.contains("||") {
        return false;
    }
    !segments.is_empty() && segments.iter().all(shell::Segment::reads)
}

/// The directories a shell command's relative words may be read from: the
/// agent's `cwd`, and each directory the command changes into with `cd`
/// (`cd sub && rm ../orcho.yaml`; a bare `cd` goes home).
fn working_dirs(command: &str, cwd: &Utf8Path) -> Vec<Utf8PathBuf> {
    let mut dirs = vec![cwd.to_owned()];
    for part in command.split(['|', ';', '&', '\n', '(', ')']) {
        let mut words = part.split_whitespace();
        if words.next() == Some("cd") {
            let dir = match words.next() {
                Some(dir) => home_expanded(dir.trim_matches(|c| c == '\'' || c == '"')),
                None => match crate::env_text("HOME") {
                    Some(home) => home,
                    None => continue,
                },
            };
            let base = dirs.last().map_or(cwd, Utf8PathBuf::as_path);
            dirs.push(super::normalize(&base.join(dir)));
        }
    }
    dirs
}

/// An allow for a tool call that only runs `orcho verify` or `orcho
/// status` (one simple command each).
fn own_proof(asked: &[(String, String)]) -> Option<Verdict> {
    let proof = |(permission, argument): &(String, String)| {
        permission == "bash"
            && simple_words(argument).is_some_and(|words| {
                words.len() >= 2
                    && is_orcho(&words[0])
                    && matches!(words[1].as_str(), "verify" | "status")
            })
    };
    (!asked.is_empty() && asked.iter().all(proof)).then(|| Verdict {
        action: PermissionAction::Allow,
        reason: "Orcho's own proof (`orcho verify`, `orcho status`)".to_owned(),
    })
}

/// The most restrictive of `verdicts`.
fn strictest(verdicts: impl IntoIterator<Item = Verdict>) -> Option<Verdict> {
    let rank = |a: PermissionAction| match a {
        PermissionAction::Allow => 0,
        PermissionAction::Ask => 1,
        _ => 2,
    };
    // The first of the strictest: a tool call's own request before the
    // paths it reads.
    verdicts
        .into_iter()
        .fold(None, |best: Option<Verdict>, v| match &best {
            Some(b) if rank(b.action) >= rank(v.action) => best,
            _ => Some(v),
        })
}

/// The most restrictive evaluation over `asked`; `None` when nothing is
/// asked.
fn verdict(rules: &RuleSet, asked: &[(String, String)]) -> Option<Verdict> {
    strictest(asked.iter().map(|(permission, argument)| {
        let evaluation = rules.evaluate(permission, argument);
        let what = if argument.is_empty() {
            permission.clone()
        } else {
            format!("{permission} `{}`", shorten(argument, 160))
        };
        Verdict {
            action: evaluation.action,
            reason: format!("{what}: {}", evaluation.explain()),
        }
    }))
}

fn shorten(text: &str, max: usize) -> String {
    let line = text.replace(['\n', '\r'], "⏎");
    match line.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_directories_come_from_every_agents_settings() {
        let dirs: Vec<&str> = Guarded::settings_dirs().collect();
        for dir in [
            ".claude",
            ".gemini",
            ".cursor",
            ".github",
            ".github/hooks",
            ".opencode/plugins",
        ] {
            assert!(dirs.contains(&dir), "{dir}: {dirs:?}");
        }
        assert!(!dirs.contains(&""), "{dirs:?}");
    }
}
