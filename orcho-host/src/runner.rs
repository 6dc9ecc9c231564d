//! What runs a phase, as the command line says it: a command, or a coding
//! agent (`--phase PHASE=@AGENT`, or the profile's `runner`), checked
//! before the run starts. The agents themselves are
//! [`orcho_agents::runner`]'s.

use camino::Utf8Path;
use orcho::{
    PhaseRequest, RunPlan,
    profile::{Agent, RunnerSpec},
};
pub use orcho_agents::runner::{AgentReport, AttemptPaths, Launch, display, finish};
use orcho_agents::runner::{LaunchError, RUNNERS, is_executable, on_path};

use crate::{error::CliError, host::RunConfig};

/// How long an agent may run when its `runner` says no `timeout_secs`: an
/// agent that cannot reach its model may retry for as long as it is let.
pub const DEFAULT_AGENT_TIMEOUT_SECS: u64 = 3600;

/// How the command line names an agent in `--phase PHASE=@AGENT`.
pub const AGENT_SIGIL: char = '@';

/// What runs a phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PhaseRunner {
    /// A command, as argv.
    Command(Vec<String>),
    /// A coding agent.
    Agent(RunnerSpec),
}

/// The agent `@NAME` names, if `argv` is that one word.
pub fn agent_of(argv: &[String]) -> Option<Result<Agent, String>> {
    let (word, rest) = argv.split_first()?;
    let name = word.strip_prefix(AGENT_SIGIL)?;
    if !rest.is_empty() {
        return Some(Err(format!(
            "`{word}` names an agent and takes nothing after it on the command line; give its \
             model and arguments as the phase's `runner` in the profile (`model`, `args`)"
        )));
    }
    let names: Vec<&str> = RUNNERS.iter().map(|r| r.agent.as_str()).collect();
    if let Some(row) = RUNNERS.iter().find(|r| r.agent.as_str() == name) {
        return Some(Ok(row.agent));
    }
    let near = names
        .iter()
        .find(|n| !name.is_empty() && n.starts_with(name))
        .copied()
        .or_else(|| orcho::core::nearest(name, names.iter().copied()))
        .map(|n| format!("did you mean `@{n}`? "))
        .unwrap_or_default();
    let all: Vec<String> = names.iter().map(|n| format!("`@{n}`")).collect();
    Some(Err(format!(
        "`@{name}` is not an agent orcho runs ({near}the agents: {})",
        all.join(", ")
    )))
}

/// What runs `phase`: the command line's `--phase` (a command, or `@AGENT`
/// with the profile's options for that agent), else the profile's
/// `runner`, else nothing (the phase is approved).
pub fn of(plan: &RunPlan, config: &RunConfig, phase: &str) -> Option<PhaseRunner> {
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
pub fn check_agents(plan: &RunPlan, config: &RunConfig) -> Result<(), CliError> {
    for phase in &plan.phases {
        if let Some(PhaseRunner::Agent(spec)) = of(plan, config, phase.name.as_str()) {
            let row = orcho_agents::runner::runner(spec.agent).ok_or_else(|| {
                CliError::not_startable(format!(
                    "phase `{}` runs {}, which does not run phases",
                    phase.name,
                    display(spec.agent)
                ))
            })?;
            row.find().map_err(|e| {
                CliError::not_startable(format!("phase `{}` runs {}: {e}", phase.name, row.title))
                    .with_hint(row.install_hint())
            })?;
        }
    }
    Ok(())
}

/// Prepares `spec`'s agent for `request` with the run's profile: the
/// agents crate's [`prepare`](orcho_agents::runner::prepare), its errors
/// said with a hint.
pub fn prepare(
    spec: &RunnerSpec,
    request: &PhaseRequest,
    config: &RunConfig,
    paths: &AttemptPaths<'_>,
    ask_timeout: std::time::Duration,
) -> Result<Launch, CliError> {
    orcho_agents::runner::prepare(spec, request, &config.profile, paths, ask_timeout).map_err(|e| {
        match e {
            LaunchError::NotInstalled { title, why, hint } => {
                CliError::cannot_start(format!("phase `{}` runs {title}: {why}", request.phase))
                    .with_hint(hint)
            }
            other => CliError::cannot_start(format!("phase `{}`: {other}", request.phase)),
        }
    })
}

/// Checks that every phase command given can start where it will run,
/// before the run is created: a program on `PATH`, an absolute path, or a
/// path from the checkout that the run's worktree will hold (committed at
/// `HEAD`; in place, a file of the checkout). A script only the working
/// copy has is said, not refused: intake may bring it into the worktree.
pub fn check_commands(
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
