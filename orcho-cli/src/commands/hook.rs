//! `orcho hook claude-code|codex`: answer an agent's hook.
//!
//! - before a tool runs: the permission rules in force (the profile's
//!   `permissions`, or `--permissions PRESET`) allow, ask or deny it;
//! - when the agent (or a subagent) wants to stop: a required receipt that
//!   is not present refuses the stop, naming the command that proves it, up
//!   to `supervision.max_stop_blocks` times in a row; then the stop goes
//!   through and is recorded as unproven for `orcho status`;
//! - after a shell command ran: it is logged as exploratory;
//! - when a session starts: the agent is told what proves readiness here.
//!
//! In a project without an `orcho.yaml` (and no `--profile`), the hook has
//! no opinion, so hooks installed for every project leave the others alone.
//! Whatever goes wrong is said on standard error with exit 2, which both
//! agents read as "refused": never an allow.

use std::{fmt::Write as _, io::Read as _};

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{
    RunPlan,
    core::Timestamp,
    permissions::{PermissionAction, PermissionPreset, RuleSet},
    receipts::{ExploratoryEntry, ExploratoryLog, ReceiptStore, VerificationContract},
};
use serde_json::Value;

use crate::{
    error::CliError,
    exit::Exit,
    hook::{
        Agent, Answer, BadDocument, Event, HookDoc, StopGuard, UnprovenStop, Verdict, requests,
        shell_command,
    },
    output,
    place::{self, Place},
};

/// Where the hook works, as the global options and the document say.
pub(crate) struct HookPlace<'a> {
    /// `--checkout`, if given.
    pub(crate) checkout: Option<Utf8PathBuf>,
    /// `--store`, if given.
    pub(crate) store: Option<Utf8PathBuf>,
    /// `--profile`, if given.
    pub(crate) profile: Option<&'a str>,
    /// `--permissions`, if given.
    pub(crate) preset: Option<PermissionPreset>,
}

/// Reads the hook document on standard input and answers it.
pub(crate) fn hook(agent: Agent, at: &HookPlace<'_>) -> Exit {
    let mut bytes = Vec::new();
    let limit = crate::hook::MAX_DOCUMENT_BYTES as u64 + 1;
    let answer = match std::io::stdin().take(limit).read_to_end(&mut bytes) {
        Ok(_) => answer(agent, at, &bytes),
        Err(e) => Answer::FailSafe {
            message: format!("standard input could not be read: {e}"),
        },
    };
    let rendered = answer.render(agent);
    if let Some(stdout) = &rendered.stdout {
        output::out(stdout);
    }
    if let Some(stderr) = &rendered.stderr {
        output::err(stderr);
    }
    Exit::Command(rendered.code)
}

/// The answer to one hook document.
pub(crate) fn answer(agent: Agent, at: &HookPlace<'_>, bytes: &[u8]) -> Answer {
    let doc = match HookDoc::parse(bytes) {
        Ok(doc) => doc,
        Err(BadDocument(message)) => {
            return Answer::FailSafe {
                message: format!("{message}; refused to be safe"),
            };
        }
    };
    let event = doc.event.name().to_owned();
    match respond(agent, at, &doc) {
        Ok(answer) => answer,
        Err(e) => Answer::FailSafe {
            message: format!("{event}: {}; refused to be safe", one_line(&e)),
        },
    }
}

fn one_line(e: &CliError) -> String {
    e.to_string().lines().collect::<Vec<_>>().join("; ")
}

fn respond(agent: Agent, at: &HookPlace<'_>, doc: &HookDoc) -> Result<Answer, CliError> {
    let place = place_of(agent, at, doc)?;
    // A project that has not set Orcho up (no orcho.yaml, no `--profile`)
    // gets no opinion, except on tool calls under `--permissions`: hooks
    // installed for every project must not hold other projects to the
    // default profile.
    let configured = at.profile.is_some() || place.checkout.join(place::PROFILE_FILE).is_file();
    let tool_call = matches!(
        doc.event,
        Event::PreToolUse { .. } | Event::PermissionRequest { .. }
    );
    let preset_applies = tool_call && at.preset.is_some();
    if !(configured || preset_applies) {
        return Ok(Answer::Silent);
    }
    if configured {
        crate::hook::note_called(&place.store, agent.as_str());
    }
    match &doc.event {
        Event::PreToolUse { tool, input } | Event::PermissionRequest { tool, input } => {
            let event = if matches!(doc.event, Event::PreToolUse { .. }) {
                "PreToolUse"
            } else {
                "PermissionRequest"
            };
            let rules = rules_in_force(&place, at)?;
            let cwd = doc
                .cwd
                .as_deref()
                .filter(|c| c.is_absolute())
                .unwrap_or(&place.checkout);
            let asked = requests(agent, tool, input, &place.checkout, cwd)
                .map_err(|BadDocument(m)| CliError::msg(m))?;
            // A command (or any argument) too long to check in the hook's
            // time is refused before anything reads it.
            if let Some((permission, long)) =
                asked.iter().find(|(_, a)| a.len() > MAX_ARGUMENT_BYTES)
            {
                return Ok(Answer::Tool {
                    event,
                    verdict: Verdict {
                        action: PermissionAction::Deny,
                        reason: format!(
                            "{permission}: deny: its argument is {} bytes, more than the {} KiB \
                             orcho checks; write what it carries to a file first, or split it",
                            long.len(),
                            MAX_ARGUMENT_BYTES / 1024
                        ),
                    },
                });
            }
            // A phase's agent reports through its output document and keeps
            // notes in its artifacts, whatever else the rules say.
            let own = PhaseOwn::from_env();
            if !asked.is_empty() && asked.iter().all(|(p, a)| own.covers(p, a, cwd)) {
                return Ok(Answer::Tool {
                    event,
                    verdict: Verdict {
                        action: PermissionAction::Allow,
                        reason: "the phase's own report (ORCHO_OUTPUT, `orcho report`) or \
                                 artifacts (ORCHO_ARTIFACTS)"
                            .to_owned(),
                    },
                });
            }
            let guarded = guard_control_files(&place, at, &asked, cwd);
            let decided = rules.and_then(|rules| verdict(&rules, &asked));
            Ok(strictest(decided.into_iter().chain(guarded))
                .map_or(Answer::Silent, |verdict| Answer::Tool { event, verdict }))
        }
        Event::PostToolUse {
            tool,
            input,
            response,
            failure,
        } => {
            if matches!(tool.as_str(), "Bash" | "PowerShell" | "shell") {
                let exit = exit_code(agent, response, failure.as_deref());
                log_exploratory(&place, tool, input, exit, doc.cwd.clone())?;
            }
            Ok(Answer::Silent)
        }
        Event::Stop { active, .. } => stop(agent, &place, at, doc, *active),
        Event::SessionStart => {
            let plan = plan(&place, at)?;
            Ok(Answer::Context {
                text: session_context(&plan, at.preset),
            })
        }
        Event::Other(_) => Ok(Answer::Silent),
    }
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
            place::env_text(var)
                .map(Utf8PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|p| crate::hook::normalize(&p))
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
                    crate::hook::normalize(path)
                } else {
                    crate::hook::normalize(&cwd.join(path))
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

/// Whether `program` is Orcho: a program named `orcho` (as `PATH` finds
/// it), or this very program by its path (as a host names it in an
/// agent's prompt, whatever the file is called).
fn is_orcho(program: &str) -> bool {
    let path = Utf8Path::new(program);
    if path.file_name() == Some("orcho") {
        return true;
    }
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
pub(crate) fn simple_words(command: &str) -> Option<Vec<String>> {
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

/// The checkout: `--checkout`, else Claude Code's project directory, else
/// found from the agent's working directory as every command finds it.
fn place_of(agent: Agent, at: &HookPlace<'_>, doc: &HookDoc) -> Result<Place, CliError> {
    if at.checkout.is_some() {
        return Place::new(at.checkout.clone(), at.store.clone(), true);
    }
    let project = (agent == Agent::ClaudeCode)
        .then(|| std::env::var_os("CLAUDE_PROJECT_DIR"))
        .flatten()
        .and_then(|p| Utf8PathBuf::from_path_buf(p.into()).ok());
    let start = project
        .or_else(|| doc.cwd.clone())
        .filter(|dir| dir.is_absolute() && dir.is_dir());
    let checkout = match start {
        Some(dir) => place::discover(&dir),
        None => return Place::new(None, at.store.clone(), true),
    };
    Place::new(Some(checkout), at.store.clone(), true)
}

fn plan(place: &Place, at: &HookPlace<'_>) -> Result<RunPlan, CliError> {
    Ok(place.load_profile(at.profile)?.1)
}

/// `--permissions`, else the profile's `permissions`, if any.
fn rules_in_force(place: &Place, at: &HookPlace<'_>) -> Result<Option<RuleSet>, CliError> {
    Ok(match at.preset {
        Some(preset) => Some(preset.rules()),
        None => plan(place, at)?.permissions,
    })
}

/// The files that say what proves readiness and what the hooks do: the
/// profile, the store, and the agents' hook settings. A write or edit of
/// one is asked about, rules or not: an agent that rewrites them could
/// prove itself ready. A path is checked as given and as the file system
/// resolves it, so that a symbolic link to one of them is one of them; a
/// shell command is asked about when a word of it names one, unless it
/// only reads.
fn guard_control_files(
    place: &Place,
    at: &HookPlace<'_>,
    asked: &[(String, String)],
    cwd: &Utf8Path,
) -> Option<Verdict> {
    let guarded = Guarded::new(place, at.profile.is_none());
    asked.iter().find_map(|(permission, argument)| {
        let (path, what) = match permission.as_str() {
            "write" | "edit" => (argument.clone(), guarded.what(argument)?),
            "bash" if cleans_ignored(argument) && guarded.store_inside() => {
                let store = place
                    .store
                    .strip_prefix(&place.checkout)
                    .map_or_else(|_| place.store.to_string(), ToString::to_string);
                (store, guarded.store_what())
            }
            "bash" if !only_reads(argument) => {
                let dirs = working_dirs(argument, cwd);
                let mut words = shell_words(argument);
                words.sort_unstable();
                words.dedup();
                // Every word is looked up in every directory the command
                // changes into: past these bounds a person decides, so
                // that no command takes the hook past the agent's timeout.
                if dirs.len() > MAX_GUARDED_DIRS || words.len() * dirs.len() > MAX_LOOKUPS {
                    return Some(Verdict {
                        action: PermissionAction::Ask,
                        reason: format!(
                            "bash `{}`: ask: it changes directory {} times and names {} \
                             distinct words, more than orcho checks against its own files \
                             (at most {} changes of directory, {} words looked up in all), so \
                             a person approves it",
                            shorten(argument, 160),
                            dirs.len() - 1,
                            words.len(),
                            MAX_GUARDED_DIRS - 1,
                            MAX_LOOKUPS
                        ),
                    });
                }
                words.into_iter().find_map(|word| {
                    dirs.iter().find_map(|dir| {
                        let path = crate::hook::relative(&word, &place.checkout, dir);
                        guarded.what(&path).map(|what| (path, what))
                    })
                })?
            }
            _ => return None,
        };
        let subject = if permission == "bash" {
            format!("bash `{}` names `{path}`", shorten(argument, 160))
        } else {
            format!("{permission} `{path}`")
        };
        Some(Verdict {
            action: PermissionAction::Ask,
            reason: format!("{subject}: ask: it is {what}, so a person approves a change to it"),
        })
    })
}

/// The words of a shell command the control-file guard looks up and the
/// directories it looks them up in (for the fuzz targets).
#[cfg(feature = "fuzzing")]
pub(crate) fn guard_reads(command: &str, cwd: &Utf8Path) -> (Vec<String>, Vec<Utf8PathBuf>) {
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
/// and, for the store, absolute (it may lie outside the checkout).
struct Guarded {
    checkout: Utf8PathBuf,
    real_checkout: Option<Utf8PathBuf>,
    store: Utf8PathBuf,
    real_store: Option<Utf8PathBuf>,
    profile: bool,
}

impl Guarded {
    const SETTINGS: &[&str] = &[
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".codex/hooks.json",
        ".codex/config.toml",
    ];
    /// The directories those live in: removing one removes them.
    const SETTINGS_DIRS: &[&str] = &[".claude", ".codex"];

    fn new(place: &Place, profile: bool) -> Self {
        Self {
            checkout: place.checkout.clone(),
            real_checkout: resolved(&place.checkout),
            store: place.store.clone(),
            real_store: resolved(&place.store),
            profile,
        }
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
        let inside = |dir: &Utf8Path| absolute.starts_with(dir);
        if inside(&self.store) || self.real_store.as_deref().is_some_and(inside) {
            return Some(self.store_what());
        }
        let relative = absolute
            .strip_prefix(&self.checkout)
            .ok()
            .or_else(|| {
                self.real_checkout
                    .as_deref()
                    .and_then(|c| absolute.strip_prefix(c).ok())
            })?
            .as_str();
        if self.profile && relative == place::PROFILE_FILE {
            Some("Orcho's profile, which declares what proves readiness")
        } else if Self::SETTINGS.contains(&relative) {
            Some("the agent's hook settings, which run Orcho")
        } else if Self::SETTINGS_DIRS.contains(&relative.trim_end_matches('/')) {
            Some("the directory of the agent's hook settings, which run Orcho")
        } else {
            None
        }
    }
}

/// `path` with its symbolic links resolved: its longest existing ancestor
/// canonicalized, the rest (not there yet) joined as it is; a link whose
/// target is not there yet is followed too (a link to a store not made
/// yet). `None` when nothing of it can be resolved.
fn resolved(path: &Utf8Path) -> Option<Utf8PathBuf> {
    let mut path = crate::hook::normalize(path);
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
        let mut next = crate::hook::normalize(&dangling?);
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
/// another, with no redirection.
fn only_reads(command: &str) -> bool {
    const READERS: &[&str] = &[
        "cat", "head", "tail", "less", "more", "grep", "rg", "ls", "wc", "diff", "stat", "file",
    ];
    const GIT_READERS: &[&str] = &["diff", "log", "show", "status", "blame"];
    if command.contains(['>', ';', '&', '`', '$', '\n']) || command.contains("||") {
        return false;
    }
    command.split('|').all(|part| {
        let mut words = part.split_whitespace();
        match words.next() {
            Some("git") => words.next().is_some_and(|sub| GIT_READERS.contains(&sub)),
            Some(program) => READERS.contains(&program),
            None => false,
        }
    })
}

/// The directories a shell command's relative words may be read from: the
/// agent's `cwd`, and each directory the command changes into with `cd`
/// (`cd sub && rm ../orcho.yaml`).
fn working_dirs(command: &str, cwd: &Utf8Path) -> Vec<Utf8PathBuf> {
    let mut dirs = vec![cwd.to_owned()];
    for part in command.split(['|', ';', '&', '\n', '(', ')']) {
        let mut words = part.split_whitespace();
        if words.next() == Some("cd")
            && let Some(dir) = words.next()
        {
            let dir = dir.trim_matches(|c| c == '\'' || c == '"');
            let base = dirs.last().map_or(cwd, Utf8PathBuf::as_path);
            dirs.push(crate::hook::normalize(&base.join(dir)));
        }
    }
    dirs
}

/// Whether a shell command is a `git clean` that removes ignored files
/// (`-x`, `-X`), which takes an ignored store with them.
fn cleans_ignored(command: &str) -> bool {
    command.split(['|', ';', '&', '\n']).any(|part| {
        let words: Vec<&str> = part.split_whitespace().collect();
        words.windows(2).any(|w| w == ["git", "clean"])
            && words
                .iter()
                .any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains(['x', 'X']))
    })
}

/// The most restrictive of `verdicts`.
fn strictest(verdicts: impl IntoIterator<Item = Verdict>) -> Option<Verdict> {
    let rank = |a: PermissionAction| match a {
        PermissionAction::Allow => 0,
        PermissionAction::Ask => 1,
        _ => 2,
    };
    verdicts.into_iter().max_by_key(|v| rank(v.action))
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

/// Logs the shell command the agent ran as exploratory (never a receipt).
/// A shell command's exit status, as each agent tells it: a field of the
/// response where there is one; Claude Code's `PostToolUseFailure` says
/// `Exit code N` first in its `error`, and sends `PostToolUse` only for a
/// command that succeeded (and was not interrupted). Codex's response is
/// the output alone: unknown.
pub(crate) fn exit_code(agent: Agent, response: &Value, failure: Option<&str>) -> Option<i32> {
    let field = ["exit_code", "exitCode", "returnCode"]
        .iter()
        .find_map(|k| response.get(k).and_then(Value::as_i64))
        .and_then(|c| i32::try_from(c).ok());
    if field.is_some() {
        return field;
    }
    match (agent, failure) {
        (_, Some(error)) => error
            .lines()
            .next()
            .and_then(|line| line.trim().strip_prefix("Exit code "))
            .and_then(|n| n.trim().parse().ok()),
        (Agent::ClaudeCode, None)
            if response.is_object()
                && response.get("interrupted").and_then(Value::as_bool) != Some(true) =>
        {
            Some(0)
        }
        _ => None,
    }
}

fn log_exploratory(
    place: &Place,
    tool: &str,
    input: &Value,
    exit_code: Option<i32>,
    cwd: Option<Utf8PathBuf>,
) -> Result<(), CliError> {
    let Ok(command) = shell_command(tool, input) else {
        return Ok(());
    };
    let log = ExploratoryLog::new(&ReceiptStore::new(&place.store));
    log.record(
        &ExploratoryEntry::new(
            Timestamp::now(),
            vec!["sh".to_owned(), "-c".to_owned(), command],
            exit_code,
        )
        .with_cwd(cwd),
    )?;
    Ok(())
}

/// What stands between the agent and a proven stop.
struct Unproven {
    /// Refusals in a row before the stop goes through.
    max: u32,
    /// What is not proven, as `name: status`.
    items: Vec<String>,
    /// The reason for refusal `n` of `max`.
    reason: Box<dyn Fn(u32, u32) -> String>,
}

/// Whether the checkout is proven ready (`None`), or what is not.
fn assess(place: &Place, at: &HookPlace<'_>) -> Result<Option<Unproven>, CliError> {
    let plan = plan(place, at)?;
    let Some(contract) = plan.verification.clone() else {
        return Ok(None);
    };
    let verifier = super::verify::keyed_verifier(place, contract)?;
    let gaps = verifier.readiness()?.gaps();
    if gaps.is_empty() {
        return Ok(None);
    }
    // Under permission rules that do not let the agent run `orcho verify`,
    // the reason says who can.
    let rules = rules_in_force(place, at)?;
    let may_verify = |name: &str| {
        rules.as_ref().is_none_or(|rules| {
            rules
                .evaluate("bash", &format!("orcho verify {name}"))
                .action
                == PermissionAction::Allow
        })
    };
    let lines: Vec<String> = gaps
        .iter()
        .map(|gap| {
            let name = gap.command().as_str();
            let prove = if may_verify(name) {
                format!("Prove it: `orcho verify {name}`")
            } else {
                format!(
                    "Ask a person to run `orcho verify {name}`: the permission rules here do not \
                     let you"
                )
            };
            format!(
                "- `{name}` (`{}`): {}: {}. {prove}",
                command_line(verifier.contract(), name),
                gap.status(),
                gap.reason()
            )
        })
        .collect();
    Ok(Some(Unproven {
        max: plan.max_stop_blocks,
        items: gaps
            .iter()
            .map(|g| format!("{}: {}", g.command(), g.status()))
            .collect(),
        reason: Box::new(move |refusal, max| {
            format!(
                "Orcho: this checkout is not proven ready, so do not stop yet. Required commands \
                 without a present receipt:\n{}\nProve each (it runs the declared command and \
                 records a receipt), fix what fails, and then finish. {}",
                lines.join("\n"),
                refusals(refusal, max)
            )
        }),
    }))
}

fn refusals(refusal: u32, max: u32) -> String {
    format!(
        "(Refusal {refusal} of {max}; after {max} in a row the stop goes through and is \
         recorded as unproven.)"
    )
}

/// The stop guard: refuse while a required receipt is not present (or the
/// profile does not load), up to the profile's bound in a row (the default
/// bound when it does not load).
fn stop(
    agent: Agent,
    place: &Place,
    at: &HookPlace<'_>,
    doc: &HookDoc,
    active: bool,
) -> Result<Answer, CliError> {
    let guard = StopGuard::new(
        &place.store,
        doc.session_id.as_deref(),
        doc.agent_id.as_deref(),
    );
    let unproven = match assess(place, at) {
        Ok(None) => {
            guard.reset();
            // A proven stop: what earlier stops left unproven is proven now.
            let _ = crate::hook::acknowledge_stops(&place.store);
            return Ok(Answer::Silent);
        }
        Ok(Some(unproven)) => unproven,
        Err(e) => {
            let message = one_line(&e);
            Unproven {
                max: orcho::profile::DEFAULT_MAX_STOP_BLOCKS,
                items: vec!["the profile: does not load".to_owned()],
                reason: Box::new(move |refusal, max| {
                    format!(
                        "Orcho: nothing here can be proven while the profile does not load: \
                         {message}. Tool calls are refused until it loads, so you cannot fix it: \
                         tell the user what is wrong (`orcho profile show` says where). {}",
                        refusals(refusal, max)
                    )
                }),
            }
        }
    };
    let blocks = if active { guard.blocks() } else { 0 };
    let max = unproven.max;
    if blocks >= max {
        guard.record(&UnprovenStop::new(
            agent.as_str(),
            doc.session_id.clone(),
            blocks,
            unproven.items.clone(),
        ))?;
        guard.reset();
        return Ok(Answer::WarnStop {
            message: format!(
                "orcho: stopped without proof after {blocks} refusal(s): {}; recorded for \
                 `orcho status` (`orcho verify` proves the commands)",
                unproven.items.join(", ")
            ),
        });
    }
    guard.refused(blocks + 1)?;
    Ok(Answer::BlockStop {
        reason: (unproven.reason)(blocks + 1, max),
    })
}

/// The declared command line of `name`, quoted as a shell would read it.
fn command_line(contract: &VerificationContract, name: &str) -> String {
    contract
        .command(name)
        .and_then(|spec| shlex::try_join(spec.argv.iter().map(String::as_str)).ok())
        .unwrap_or_default()
}

/// What the agent is told when a session starts.
fn session_context(plan: &RunPlan, preset: Option<PermissionPreset>) -> String {
    let mut out = String::from("This project uses Orcho: readiness is proven by receipts, ");
    out.push_str("not by saying so. ");
    match &plan.verification {
        Some(contract) if !contract.required.is_empty() => {
            let commands: Vec<String> = contract
                .required
                .iter()
                .map(|name| {
                    let argv = command_line(contract, name.as_str());
                    format!("`{name}` (`{argv}`)")
                })
                .collect();
            let _ = write!(
                out,
                "Before you finish, every required command must have a present receipt for the \
                 checkout as it is: {}. `orcho verify` runs them and records receipts; \
                 `orcho status` shows what is missing, failed or stale. A stop is refused while \
                 one is not present. Commands you run yourself are logged as exploratory and \
                 prove nothing.",
                commands.join(", ")
            );
        }
        _ => out.push_str("This profile declares no required verification commands."),
    }
    if preset.is_some() || plan.permissions.is_some() {
        out.push_str(
            " Tool calls are checked against permission rules (`orcho permissions check` \
             explains a decision); a denied call is not a bug to work around.",
        );
    }
    out
}
