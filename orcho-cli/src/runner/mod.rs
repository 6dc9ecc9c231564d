//! Coding agents as phase runners: a phase that names a runner (`runner:
//! claude-code` in the profile, `--phase implement=@codex` on the command
//! line) is run by that agent, non-interactively, in the run's checkout,
//! with the phase input as its prompt and Orcho's hooks installed for that
//! run only (never in the user's settings or the checkout).
//!
//! What an agent is asked to write is the same phase output document a
//! command writes ([`orcho::phase::output`]); what it reports (its
//! result, tokens, cost) and its transcript are kept in the attempt's
//! artifacts.

mod claude;
mod codex;
mod prompt;

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{
    PhaseRequest, RunPlan,
    core::Cost,
    profile::{Agent, RunnerSpec},
};

use crate::{error::CliError, host::RunConfig};

/// How long an agent may run when its `runner` says no `timeout_secs`: an
/// agent that cannot reach its model may retry for as long as it is let.
pub(crate) const DEFAULT_AGENT_TIMEOUT_SECS: u64 = 3600;

/// How the command line names an agent in `--phase PHASE=@AGENT`.
pub(crate) const AGENT_SIGIL: char = '@';

/// What runs a phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PhaseRunner {
    /// A command, as argv.
    Command(Vec<String>),
    /// A coding agent.
    Agent(RunnerSpec),
}

/// The agent `@NAME` names, if `argv` is that one word.
pub(crate) fn agent_of(argv: &[String]) -> Option<Result<Agent, String>> {
    let (word, rest) = argv.split_first()?;
    let name = word.strip_prefix(AGENT_SIGIL)?;
    if !rest.is_empty() {
        return Some(Err(format!(
            "`{word}` names an agent and takes nothing after it on the command line; give its \
             model and arguments as the phase's `runner` in the profile (`model`, `args`)"
        )));
    }
    Some(match name {
        "claude-code" => Ok(Agent::ClaudeCode),
        "codex" => Ok(Agent::Codex),
        other => {
            let names = ["claude-code", "codex"];
            let near = names
                .iter()
                .find(|n| !other.is_empty() && n.starts_with(other))
                .copied()
                .or_else(|| orcho::core::nearest(other, names))
                .map(|n| format!("did you mean `@{n}`? "))
                .unwrap_or_default();
            Err(format!(
                "`@{other}` is not an agent orcho runs ({near}the agents: `@claude-code`, `@codex`)"
            ))
        }
    })
}

/// What runs `phase`: the command line's `--phase` (a command, or `@AGENT`
/// with the profile's options for that agent), else the profile's
/// `runner`, else nothing (the phase is approved).
pub(crate) fn of(plan: &RunPlan, config: &RunConfig, phase: &str) -> Option<PhaseRunner> {
    let declared = plan
        .phases
        .iter()
        .find(|p| p.name.as_str() == phase)
        .and_then(|p| p.runner.clone());
    match config.phases.get(phase) {
        Some(argv) => match agent_of(argv) {
            Some(Ok(agent)) => Some(PhaseRunner::Agent(match declared {
                Some(spec) if spec.agent == agent => spec,
                _ => RunnerSpec::new(agent),
            })),
            // Refused when given; kept as a command if it ever got here.
            Some(Err(_)) | None => Some(PhaseRunner::Command(argv.clone())),
        },
        None => declared.map(PhaseRunner::Agent),
    }
}

/// Checks that every agent the run's phases name can be started, before
/// anything runs: a missing agent is an error naming how to install it.
pub(crate) fn check_agents(plan: &RunPlan, config: &RunConfig) -> Result<(), CliError> {
    for phase in &plan.phases {
        if let Some(PhaseRunner::Agent(spec)) = of(plan, config, phase.name.as_str()) {
            program(spec.agent).map_err(|e| {
                CliError::not_startable(format!(
                    "phase `{}` runs {}: {e}",
                    phase.name,
                    display(spec.agent)
                ))
                .with_hint(install_hint(spec.agent))
            })?;
        }
    }
    Ok(())
}

/// The agent's name as people write it.
pub(crate) fn display(agent: Agent) -> &'static str {
    match agent {
        Agent::ClaudeCode => "Claude Code",
        _ => "Codex",
    }
}

/// How to install `agent`, or point orcho at it.
fn install_hint(agent: Agent) -> String {
    match agent {
        Agent::ClaudeCode => "install it with `npm install -g @anthropic-ai/claude-code`, or set \
                              ORCHO_CLAUDE to the `claude` program"
            .to_owned(),
        _ => "install it with `npm install -g @openai/codex`, or set ORCHO_CODEX to the `codex` \
              program"
            .to_owned(),
    }
}

/// The program that starts `agent`: `ORCHO_CLAUDE` / `ORCHO_CODEX` when
/// set, else `claude` / `codex` on `PATH`.
fn program(agent: Agent) -> Result<Utf8PathBuf, String> {
    let (var, name) = match agent {
        Agent::ClaudeCode => ("ORCHO_CLAUDE", "claude"),
        _ => ("ORCHO_CODEX", "codex"),
    };
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
    on_path(name).ok_or_else(|| format!("`{name}` is not on PATH"))
}

/// The executable file `name` on this process's `PATH`.
fn on_path(name: &str) -> Option<Utf8PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .filter_map(|dir| Utf8PathBuf::try_from(dir).ok())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

/// Checks that every phase command given can start where it will run,
/// before the run is created: a program on `PATH`, an absolute path, or a
/// path from the checkout that the run's worktree will hold (committed at
/// `HEAD`; in place, a file of the checkout). A script only the working
/// copy has is said, not refused: intake may bring it into the worktree.
pub(crate) fn check_commands(
    checkout: &Utf8Path,
    config: &RunConfig,
    in_place: bool,
) -> Result<Vec<String>, CliError> {
    let mut notes = Vec::new();
    for (phase, argv) in &config.phases {
        let Some(program) = argv.first() else {
            continue;
        };
        if program.starts_with('@') {
            continue;
        }
        let name = Utf8Path::new(program).file_name().unwrap_or(program);
        let refuse = |why: &str| {
            CliError::not_startable(format!(
                "phase `{phase}` cannot start, said before the run starts: it runs `{program}`, \
                 which {why}"
            ))
            .with_hint(format!(
                "the run's worktree is a checkout of the last commit: commit the script, or \
                     give an absolute path (`--phase {phase}=/path/to/{name}`)"
            ))
        };
        if !program.contains('/') {
            if on_path(program).is_none() {
                return Err(refuse("is not on PATH").with_hint(
                    "install it, or start a new run with a program on PATH or the program's \
                     path (`--phase PHASE=COMMAND`)",
                ));
            }
            continue;
        }
        let path = Utf8Path::new(program);
        if path.is_absolute() {
            if !is_executable(path) {
                return Err(refuse("is not an executable file"));
            }
            continue;
        }
        let here = checkout.join(path);
        if in_place {
            if !here.is_file() {
                return Err(refuse("is not a file of the checkout"));
            }
            continue;
        }
        if committed(checkout, program) {
            continue;
        }
        if here.is_file() {
            notes.push(format!(
                "note: phase `{phase}` runs `{program}`, which is not committed: the run's \
                 worktree has it only if intake includes it"
            ));
            continue;
        }
        return Err(refuse("is neither committed nor a file of the checkout"));
    }
    Ok(notes)
}

/// Whether `path` (from `checkout`) is a file of the commit at `HEAD`.
fn committed(checkout: &Utf8Path, path: &str) -> bool {
    let spec = format!("HEAD:./{path}");
    orcho::receipts::exec::run(&orcho::receipts::exec::git_request(
        checkout,
        &["cat-file", "-e", &spec],
    ))
    .is_ok_and(|o| o.status.success())
}

fn is_executable(path: &Utf8Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Where an agent's attempt keeps its files, and what it is given.
#[derive(Debug)]
pub(crate) struct AttemptPaths<'a> {
    /// The run's checkout (its worktree).
    pub(crate) checkout: &'a Utf8Path,
    /// The attempt's artifacts directory.
    pub(crate) artifacts: &'a Utf8Path,
    /// The file the phase output document goes to.
    pub(crate) output: &'a Utf8Path,
    /// Where the run keeps its receipts (the agent's `orcho verify` and
    /// its stop guard use that store).
    pub(crate) store: &'a Utf8Path,
    /// The run's directory on this machine: an agent sandbox may write
    /// there (receipts, logs, artifacts).
    pub(crate) run_dir: &'a Utf8Path,
}

/// An agent ready to start: its command line and environment.
#[derive(Debug)]
pub(crate) struct Launch {
    pub(crate) agent: Agent,
    pub(crate) argv: Vec<String>,
    pub(crate) envs: Vec<(String, String)>,
    /// Whether its stops are guarded: then its attempt must end with the
    /// Stop guard's answer (see [`crate::hook::fired`]).
    pub(crate) guard_stops: bool,
}

/// Prepares `spec`'s agent for `request`: its settings with Orcho's hooks
/// (in the artifacts, outside the checkout), its prompt, its command line.
pub(crate) fn prepare(
    spec: &RunnerSpec,
    request: &PhaseRequest,
    config: &RunConfig,
    paths: &AttemptPaths<'_>,
) -> Result<Launch, CliError> {
    let program = program(spec.agent).map_err(|e| {
        CliError::cannot_start(format!(
            "phase `{}` runs {}: {e}",
            request.phase,
            display(spec.agent)
        ))
        .with_hint(install_hint(spec.agent))
    })?;
    let hook = HookCommand::new(spec.agent, config, request)?;
    let prompt = prompt::render(request, paths, &hook.exe);
    let mut launch = match spec.agent {
        Agent::ClaudeCode => claude::launch(&program, spec, &prompt, &hook, paths)?,
        _ => codex::launch(&program, spec, &prompt, &hook, paths),
    };
    launch.guard_stops = hook.guard_stops;
    launch.envs.extend([
        ("ORCHO_STORE".to_owned(), paths.store.to_string()),
        ("ORCHO_PROFILE".to_owned(), config.profile.clone()),
    ]);
    Ok(launch)
}

/// What an agent reported, read from its output after it exited.
#[derive(Debug, Default)]
pub(crate) struct AgentReport {
    /// Its last message: the summary, when the output document has none.
    pub(crate) result: Option<String>,
    /// The tokens and money it reported.
    pub(crate) cost: Cost,
    /// It could not work (its model failed): the attempt is not spent.
    pub(crate) failed: Option<String>,
    /// It stopped before it finished (out of turns, say).
    pub(crate) incomplete: bool,
}

impl AgentReport {
    /// What the phase protocol's report takes of it.
    pub(crate) fn reported(&self) -> orcho::phase::Reported {
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
pub(crate) fn finish(
    launch: &Launch,
    stdout_log: &Utf8Path,
    paths: &AttemptPaths<'_>,
) -> AgentReport {
    let out = read_bounded(stdout_log);
    match launch.agent {
        Agent::ClaudeCode => claude::finish(&out, paths),
        _ => codex::finish(&out, paths),
    }
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

/// Copies `from` into the attempt's artifacts as `name`, if it exists.
fn keep(from: &Utf8Path, paths: &AttemptPaths<'_>, name: &str) {
    if from.is_file() {
        let _ = std::fs::copy(from, paths.artifacts.join(name));
    }
}

/// `orcho hook <agent>` as the agent runs it: this `orcho`, the run's
/// profile, and the read-only preset for a read-only phase.
#[derive(Debug)]
pub(crate) struct HookCommand {
    /// This `orcho`, quoted for a shell.
    exe: String,
    line: String,
    /// Whether the stop guard is installed: a phase that changes the
    /// checkout proves it with receipts before it stops.
    guard_stops: bool,
}

impl HookCommand {
    fn new(agent: Agent, config: &RunConfig, request: &PhaseRequest) -> Result<Self, CliError> {
        let exe = std::env::current_exe()
            .map_err(|e| CliError::msg(format!("cannot find this `orcho` program: {e}")))?;
        let exe = exe.to_string_lossy().into_owned();
        let quoted = shlex::try_quote(&exe)
            .map_err(|e| CliError::msg(format!("cannot quote the `orcho` program's path: {e}")))?
            .into_owned();
        let mut words = vec![
            exe,
            "hook".to_owned(),
            agent.as_str().to_owned(),
            "--profile".to_owned(),
            config.profile.clone(),
        ];
        if request.read_only {
            words.extend(["--permissions".to_owned(), "read-only".to_owned()]);
        }
        let line = shlex::try_join(words.iter().map(String::as_str))
            .map_err(|e| CliError::msg(format!("cannot quote the hook command: {e}")))?;
        Ok(Self {
            exe: quoted,
            line,
            guard_stops: !request.read_only && request.role != orcho::PhaseRole::Plan,
        })
    }

    /// The events it answers, with their matchers.
    fn events(&self, agent: Agent) -> Vec<(&'static str, Option<&'static str>)> {
        let mut events = vec![
            ("SessionStart", None),
            ("PreToolUse", Some("*")),
            ("PostToolUse", Some("Bash")),
        ];
        if agent == Agent::Codex {
            events.push(("PermissionRequest", Some("*")));
        }
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
    fn an_agent_is_one_word_with_its_sigil() {
        let one = |w: &str| vec![w.to_owned()];
        assert_eq!(agent_of(&one("@codex")), Some(Ok(Agent::Codex)));
        assert_eq!(agent_of(&one("@claude-code")), Some(Ok(Agent::ClaudeCode)));
        assert_eq!(agent_of(&one("./agent.sh")), None);
        assert!(agent_of(&["@codex".to_owned(), "--fast".to_owned()]).is_some_and(|r| r.is_err()));
        let err = agent_of(&one("@claude")).unwrap().unwrap_err();
        assert!(err.contains("did you mean `@claude-code`?"), "{err}");
    }
}
