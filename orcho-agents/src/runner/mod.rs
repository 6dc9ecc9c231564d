//! Coding agents as phase runners: a phase that names a runner (`runner:
//! claude-code`, `codex`, `gemini` or `opencode` in the profile) is run by that agent, non-interactively,
//! in the run's checkout, with the phase input as its prompt and Orcho's
//! hooks installed for that attempt only (never in the user's settings or
//! the checkout).
//!
//! Each agent is one module and one row of [`RUNNERS`]: how it is named,
//! found and installed, how it is launched ([`prepare`]) and how what it
//! wrote is read back ([`finish`]). What an agent is asked to write is the
//! same phase output document a command writes
//! ([`orcho::phase::output`]); what it reports (its result, tokens, cost)
//! and its transcript are kept in the attempt's artifacts.

mod claude;
mod codex;
mod gemini;
pub mod opencode;
mod prompt;

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{
    PhaseRequest,
    core::Cost,
    profile::{Agent, RunnerSpec},
};

use crate::hook;

/// One agent that runs phases: a row of [`RUNNERS`].
#[derive(Debug)]
#[non_exhaustive]
pub struct RunnerAgent {
    /// The agent, as a profile's `runner.agent` names it.
    pub agent: Agent,
    /// Its name as people write it.
    pub title: &'static str,
    /// The dialect its hooks speak.
    pub hooks: hook::Agent,
    /// The variable that names its program.
    pub program_var: &'static str,
    /// Its program's name on `PATH`.
    pub program: &'static str,
    /// Its npm package.
    pub package: &'static str,
    launch: Launcher,
    finish: fn(&str, &AttemptPaths<'_>) -> AgentReport,
    /// The hook events it asks besides the ones every agent does.
    more_events: &'static [(&'static str, Option<&'static str>)],
}

type Launcher = fn(
    &Utf8Path,
    &RunnerSpec,
    &str,
    &HookCommand,
    &AttemptPaths<'_>,
) -> Result<Launch, LaunchError>;

/// Every agent that runs phases.
pub static RUNNERS: &[RunnerAgent] = &[
    claude::RUNNER,
    codex::RUNNER,
    gemini::RUNNER,
    opencode::RUNNER,
];

/// The row of `agent`, if it runs phases.
pub fn runner(agent: Agent) -> Option<&'static RunnerAgent> {
    RUNNERS.iter().find(|r| r.agent == agent)
}

/// The agent's name as people write it (`Claude Code`), or its profile
/// name for an agent that runs no phases.
pub fn display(agent: Agent) -> &'static str {
    runner(agent).map_or_else(|| agent.as_str(), |r| r.title)
}

impl RunnerAgent {
    /// How to install it, or point Orcho at it.
    pub fn install_hint(&self) -> String {
        format!(
            "install it with `npm install -g {}`, or set {} to the `{}` program",
            self.package, self.program_var, self.program
        )
    }

    /// The program that starts it: the variable's when set, else its name
    /// on `PATH`.
    ///
    /// # Errors
    ///
    /// What is wrong with the variable's file, or that it is not on `PATH`.
    pub fn find(&self) -> Result<Utf8PathBuf, String> {
        let var = self.program_var;
        if let Some(path) = std::env::var_os(var) {
            let path = Utf8PathBuf::try_from(std::path::PathBuf::from(path))
                .map_err(|_| format!("{var} is not a UTF-8 path"))?;
            return if is_executable(&path) {
                Ok(path)
            } else {
                Err(format!(
                    "{var} names `{path}`, which is not an executable file"
                ))
            };
        }
        on_path(self.program).ok_or_else(|| format!("`{}` is not on PATH", self.program))
    }
}

/// The executable file `name` on this process's `PATH`.
pub fn on_path(name: &str) -> Option<Utf8PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .filter_map(|dir| Utf8PathBuf::try_from(dir).ok())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

/// Whether `path` is a file someone may execute.
pub fn is_executable(path: &Utf8Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Where an agent's attempt keeps its files, and what it is given.
#[derive(Debug)]
pub struct AttemptPaths<'a> {
    /// The run's checkout (its worktree).
    pub checkout: &'a Utf8Path,
    /// The attempt's artifacts directory.
    pub artifacts: &'a Utf8Path,
    /// The file the phase output document goes to.
    pub output: &'a Utf8Path,
    /// Where the run keeps its receipts (the agent's `orcho verify` and
    /// its stop guard use that store).
    pub store: &'a Utf8Path,
    /// The run's directory on this machine: an agent sandbox may write
    /// there (receipts, logs, artifacts).
    pub run_dir: &'a Utf8Path,
}

/// An agent ready to start: its command line and environment.
#[derive(Debug)]
#[non_exhaustive]
pub struct Launch {
    /// The agent.
    pub agent: Agent,
    /// Its command line.
    pub argv: Vec<String>,
    /// What its environment adds.
    pub envs: Vec<(String, String)>,
    /// Whether its stops are guarded: then its attempt must end with the
    /// Stop guard's answer (see [`crate::hook::fired`]).
    pub guard_stops: bool,
}

/// Why an agent cannot be launched.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    /// The profile names an agent that runs no phases.
    #[error("{0} does not run phases")]
    NoRunner(&'static str),
    /// Its program cannot be found.
    #[error("{title}: {why}")]
    NotInstalled {
        /// The agent's name.
        title: &'static str,
        /// What was looked for.
        why: String,
        /// How to install it.
        hint: String,
    },
    /// Something it needs could not be made.
    #[error("{0}")]
    Failed(String),
}

impl From<orcho::core::FsError> for LaunchError {
    fn from(e: orcho::core::FsError) -> Self {
        Self::Failed(e.to_string())
    }
}

impl From<serde_json::Error> for LaunchError {
    fn from(e: serde_json::Error) -> Self {
        Self::Failed(e.to_string())
    }
}

/// The longest an agent Orcho runs waits for a person's answer to a tool
/// call: a day, whatever `permissions.ask_timeout` says.
pub const MAX_ASK_WAIT: std::time::Duration = std::time::Duration::from_secs(86_400);

/// Prepares `spec`'s agent for `request`: its settings with Orcho's hooks
/// (in the artifacts, outside the checkout), its prompt, its command line.
/// `profile` is the profile its hooks judge with; the hooks run the
/// program this process runs. A tool call the rules answer `ask` waits up
/// to `ask_timeout` for a person: the agent gives its hook that long, and
/// a little more, before it gives up on it.
///
/// # Errors
///
/// An agent that runs no phases or cannot be found, or a file it needs
/// that cannot be written.
pub fn prepare(
    spec: &RunnerSpec,
    request: &PhaseRequest,
    profile: &str,
    paths: &AttemptPaths<'_>,
    ask_timeout: std::time::Duration,
) -> Result<Launch, LaunchError> {
    let row = runner(spec.agent).ok_or(LaunchError::NoRunner(spec.agent.as_str()))?;
    let program = row.find().map_err(|why| LaunchError::NotInstalled {
        title: row.title,
        why,
        hint: row.install_hint(),
    })?;
    let hook = HookCommand::new(row, profile, request, ask_timeout)?;
    let prompt = prompt::render(request, paths, &hook.exe);
    let mut launch = (row.launch)(&program, spec, &prompt, &hook, paths)?;
    launch.guard_stops = hook.guard_stops;
    launch.envs.extend([
        ("ORCHO_STORE".to_owned(), paths.store.to_string()),
        ("ORCHO_PROFILE".to_owned(), profile.to_owned()),
    ]);
    Ok(launch)
}

/// What an agent reported, read from its output after it exited.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct AgentReport {
    /// Its last message: the summary, when the output document has none.
    pub result: Option<String>,
    /// The tokens and money it reported.
    pub cost: Cost,
    /// It could not work (its model failed): the attempt is not spent.
    pub failed: Option<String>,
    /// It stopped before it finished (out of turns, say).
    pub incomplete: bool,
}

impl AgentReport {
    /// What the phase protocol's report takes of it.
    pub fn reported(&self) -> orcho::phase::Reported {
        let mut reported = orcho::phase::Reported::default();
        reported.last_message = self.result.clone();
        reported.cost = self.cost;
        reported.stopped_early = self.incomplete;
        reported
    }
}

/// Reads what `launch`'s agent wrote to standard output (`stdout_log`),
/// copies its transcript and output into the attempt's artifacts, and says
/// what it reported.
pub fn finish(launch: &Launch, stdout_log: &Utf8Path, paths: &AttemptPaths<'_>) -> AgentReport {
    let out = read_bounded(stdout_log);
    runner(launch.agent).map_or_else(AgentReport::default, |row| (row.finish)(&out, paths))
}

/// The most of an agent's standard output read back.
const MAX_AGENT_OUTPUT: u64 = 32 * 1024 * 1024;

fn read_bounded(path: &Utf8Path) -> String {
    use std::io::Read as _;
    let mut text = String::new();
    if let Ok(file) = std::fs::File::open(path) {
        let mut bytes = Vec::new();
        let _ = file.take(MAX_AGENT_OUTPUT).read_to_end(&mut bytes);
        text = String::from_utf8_lossy(&bytes).into_owned();
    }
    text
}

/// Adds `spec`'s model (after `flag`) and its own arguments to `argv`.
fn model_and_args(argv: &mut Vec<String>, spec: &RunnerSpec, flag: &str) {
    if let Some(model) = &spec.model {
        argv.extend([flag.to_owned(), model.clone()]);
    }
    argv.extend(spec.args.iter().cloned());
}

/// Keeps `doc` (what the agent reported) in the attempt's artifacts as
/// `name`, pretty-printed; best effort.
fn keep_document(paths: &AttemptPaths<'_>, name: &str, doc: &serde_json::Value) {
    let text = serde_json::to_string_pretty(doc).unwrap_or_default();
    let _ = orcho::core::fs::write_atomic(&paths.artifacts.join(name), text.as_bytes());
}

/// Copies `from` into the attempt's artifacts as `name`, if it exists.
fn keep(from: &Utf8Path, paths: &AttemptPaths<'_>, name: &str) {
    if from.is_file() {
        let _ = std::fs::copy(from, paths.artifacts.join(name));
    }
}

/// `orcho hook <agent>` as the agent runs it: this `orcho`, the run's
/// profile, and the read-only preset for a read-only phase.
#[derive(Debug)]
pub struct HookCommand {
    /// This `orcho`, quoted for a shell.
    exe: String,
    /// The command line, word by word.
    words: Vec<String>,
    /// The command line, quoted for a shell.
    line: String,
    /// Whether the stop guard is installed: a phase that changes the
    /// checkout proves it with receipts before it stops.
    guard_stops: bool,
    more_events: &'static [(&'static str, Option<&'static str>)],
    /// How long a tool call the rules answer `ask` waits for a person.
    ask_timeout: std::time::Duration,
}

impl HookCommand {
    fn new(
        row: &RunnerAgent,
        profile: &str,
        request: &PhaseRequest,
        ask_timeout: std::time::Duration,
    ) -> Result<Self, LaunchError> {
        // A day at most: the agents' timers do not take much more.
        let ask_timeout = ask_timeout.min(MAX_ASK_WAIT);
        let exe = std::env::current_exe()
            .map_err(|e| LaunchError::Failed(format!("cannot find this `orcho` program: {e}")))?;
        let exe = exe.to_string_lossy().into_owned();
        let quoted = shlex::try_quote(&exe)
            .map_err(|e| {
                LaunchError::Failed(format!("cannot quote the `orcho` program's path: {e}"))
            })?
            .into_owned();
        let mut words = vec![
            exe,
            "hook".to_owned(),
            row.hooks.as_str().to_owned(),
            "--profile".to_owned(),
            profile.to_owned(),
        ];
        if request.read_only {
            words.extend(["--permissions".to_owned(), "read-only".to_owned()]);
        } else {
            // The agent gives the hook this long and a minute more
            // (`timeout_secs`): an `ask` may wait for a person.
            words.extend(["--ask-wait".to_owned(), ask_timeout.as_secs().to_string()]);
        }
        let line = shlex::try_join(words.iter().map(String::as_str))
            .map_err(|e| LaunchError::Failed(format!("cannot quote the hook command: {e}")))?;
        Ok(Self {
            exe: quoted,
            words,
            line,
            guard_stops: !request.read_only && request.role != orcho::PhaseRole::Plan,
            more_events: row.more_events,
            ask_timeout,
        })
    }

    /// How long the agent gives the hook of `event`, in seconds: a tool
    /// call's may wait for a person's answer, and a minute more; the
    /// others answer at once.
    fn timeout_secs(&self, event: &str) -> u64 {
        match event {
            "PreToolUse" | "BeforeTool" | "PermissionRequest" => hook::HOOK_TIMEOUT_SECS.max(
                self.ask_timeout
                    .as_secs()
                    .saturating_add(hook::HOOK_TIMEOUT_SECS),
            ),
            _ => hook::HOOK_TIMEOUT_SECS,
        }
    }

    /// The events it answers, with their matchers.
    fn events(&self) -> Vec<(&'static str, Option<&'static str>)> {
        let mut events = vec![
            ("SessionStart", None),
            ("PreToolUse", Some("*")),
            ("PostToolUse", Some("Bash")),
        ];
        events.extend(self.more_events.iter().copied());
        if self.guard_stops {
            events.extend([("Stop", None), ("SubagentStop", None)]);
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_runner_is_one_row_and_its_own_agent() {
        for row in RUNNERS {
            assert!(
                std::ptr::eq(runner(row.agent).unwrap(), row),
                "{}",
                row.title
            );
            assert_eq!(display(row.agent), row.title);
        }
        assert_eq!(display(Agent::ClaudeCode), "Claude Code");
        assert_eq!(display(Agent::Codex), "Codex");
    }
}
