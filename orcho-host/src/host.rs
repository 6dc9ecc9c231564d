//! What the CLI and its MCP server keep with a run, and how they open it
//! again: [`RunConfig`], stored as the run's host metadata.

use orcho::MAX_TASK_BYTES;
use std::collections::BTreeMap;

use orcho::{
    Engine, Run, RunPlan, Start, Store,
    core::RunId,
    delivery::FollowUpSpec,
    receipts::exec::{self, BaseEnv, ExecRequest},
};
use serde::{Deserialize, Serialize};

use crate::{error::CliError, place::Place};

/// What `orcho run` keeps with a run so that `orcho resume` drives it the
/// same way: the profile and the command of each phase.
///
/// It is the run's host metadata, written by the engine together with the
/// run itself, so a run whose id was printed always has it. Runs started
/// before that kept the same document in `runs/<id>/cli.json`, which is
/// still read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    schema: u32,
    /// The profile the run was started with: a file, or a built-in profile's name.
    pub profile: String,
    /// Each phase's command, in shell words.
    pub phases: BTreeMap<String, Vec<String>>,
}

/// The schema of [`RunConfig`].
const CONFIG_SCHEMA: u32 = 1;

/// The place's store: its runs, read and decided without a plan.
pub fn store(place: &Place) -> Store {
    place.store()
}

/// The run `reference` names: an id, the start of one, or `latest`.
pub fn find_run(place: &Place, reference: &str) -> Result<RunId, CliError> {
    match store(place).find_run(reference) {
        Ok(run) => Ok(run),
        Err(e)
            if reference != "latest" && orcho::core::nearest(reference, ["latest"]).is_some() =>
        {
            Err(CliError::from(e).with_hint("did you mean `latest`?"))
        }
        Err(e) => Err(e.into()),
    }
}

/// What `orcho run` kept with `run`; `None` for a run some other host
/// started. An unknown run is an error.
pub fn read_config(place: &Place, run: &RunId) -> Result<Option<RunConfig>, CliError> {
    let store = store(place);
    let dir = orcho::core::layout::StoreDir::new(store.local_dir()).run(run);
    let (value, path) = match store.host_metadata(run)? {
        Some(value) => (value, dir.host_metadata()),
        None => {
            // Written by the first CLI, beside the engine's files.
            let legacy = dir.path().join("cli.json");
            match std::fs::read(&legacy) {
                Ok(bytes) => match serde_json::from_slice(&bytes) {
                    Ok(value) => (value, legacy),
                    Err(e) => {
                        return Err(CliError::msg(format!(
                            "`{legacy}` is not a valid run configuration: {e}"
                        )));
                    }
                },
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(CliError::msg(format!("cannot read `{legacy}`: {e}"))),
            }
        }
    };
    let config: RunConfig = serde_json::from_value(value)
        .map_err(|e| CliError::msg(format!("`{path}` is not a valid run configuration: {e}")))?;
    if config.schema != CONFIG_SCHEMA {
        return Err(CliError::msg(format!(
            "`{path}` has run configuration schema {}; this `orcho` reads schema {CONFIG_SCHEMA}",
            config.schema
        ))
        .with_hint("drive the run with the `orcho` that started it"));
    }
    Ok(Some(config))
}

/// An engine for `run`'s profile, or for no phases when the run was not
/// started by this CLI. An unknown run is an error.
pub fn engine_for(place: &Place, run: &RunId) -> Result<Engine, CliError> {
    match read_config(place, run)? {
        Some(config) => engine_of(place, &config),
        None => Ok(Engine::builder(RunPlan::new("cli", Vec::new()), store(place)).build()?),
    }
}

fn engine_of(place: &Place, config: &RunConfig) -> Result<Engine, CliError> {
    let (_, plan) = place.load_spec(&config.profile)?;
    keyed_engine(place, plan)
}

/// An engine for `plan` in the place's store that signs and checks
/// receipts with the host's receipt key.
pub fn keyed_engine(place: &Place, plan: RunPlan) -> Result<Engine, CliError> {
    let advisor = crate::place::advisor_of(&plan)?;
    let mut builder =
        Engine::builder(plan, store(place)).receipt_key(crate::key::receipt_key(place)?);
    if let Some(advisor) = advisor {
        builder = builder.advisor(advisor);
    }
    if let Some(key) = crate::key::signing_key(place)? {
        builder = builder.signing_key(key);
    }
    Ok(builder.build()?)
}

/// The first phase in `phases` that `plan` does not have, and what to say
/// about it.
pub fn unknown_phase<'a>(
    plan: &RunPlan,
    phases: &'a BTreeMap<String, Vec<String>>,
) -> Option<(&'a str, String)> {
    let name = phases
        .keys()
        .find(|name| !plan.phases.iter().any(|p| p.name.as_str() == name.as_str()))?;
    let known: Vec<&str> = plan.phases.iter().map(|p| p.name.as_str()).collect();
    let near = orcho::core::nearest(name, known.iter().copied())
        .map(|n| format!("did you mean `{n}`? "))
        .unwrap_or_default();
    Some((
        name,
        format!(
            "the profile has no phase `{name}` ({near}its phases: {})",
            known.join(", ")
        ),
    ))
}

/// Starts a run of the loaded `profile` (its name and plan) whose phases
/// run `phases`, keeping both with the run.
///
/// # Errors
///
/// A run that cannot be created.
pub fn begin(
    place: &Place,
    (profile, mut plan): (String, RunPlan),
    launch: Launch,
) -> Result<(RunConfig, Run), CliError> {
    let Launch {
        phases,
        in_place,
        task,
        autopilot,
    } = launch;
    if autopilot {
        plan = plan.with_autopilot_enabled(true);
    }
    check_autopilot(&plan, autopilot)?;
    let config = RunConfig {
        schema: CONFIG_SCHEMA,
        profile,
        phases,
    };
    if !in_place {
        require_repository(place)?;
    }
    crate::runner::check_agents(&plan, &config)?;
    for note in crate::runner::check_commands(&place.checkout, &config, in_place)? {
        place.progress(&note);
    }
    let engine = keyed_engine(place, plan)?;
    let start = if in_place {
        Start::in_place(&place.checkout)
    } else {
        Start::in_worktree(&place.checkout)
    };
    let mut start = start.host_metadata(serde_json::to_value(&config)?);
    if let Some(task) = task {
        start = start.task(task);
    }
    let run = engine.start_with(start)?;
    Ok((config, run))
}

/// How a run is to start: what `orcho run` and `orcho_run_start` were
/// given besides the profile.
#[derive(Debug, Default)]
pub struct Launch {
    /// The command of each phase.
    pub phases: BTreeMap<String, Vec<String>>,
    /// In the checkout itself, not a worktree (not for a follow-up).
    pub in_place: bool,
    /// What the run is to do.
    pub task: Option<String>,
    /// `--autopilot`.
    pub autopilot: bool,
}

/// `--autopilot` needs an advisor to ask, said before a run is created; a
/// profile that turns the autopilot on without one is noted.
pub fn check_autopilot(plan: &RunPlan, asked: bool) -> Result<(), CliError> {
    if plan.advisor_config.is_some() || !plan.autopilot_enabled {
        return Ok(());
    }
    if asked {
        return Err(CliError::msg(
            "`--autopilot` needs an advisor to ask, and the profile declares no `advisor:`",
        )
        .with_hint(concat!(
            "add an `advisor:` block (a model and its key variable; ",
            crate::docs_url!("profile.md#advisor"),
            ")"
        )));
    }
    // `autopilot.enabled` in the profile, without an advisor: nothing acts.
    if !plan.phases.is_empty() {
        crate::output::err(
            "note: the profile turns the autopilot on but declares no `advisor:`, so it never acts",
        );
    }
    Ok(())
}

/// Checks a task as given (`what` names where, for messages): not blank,
/// and at most [`MAX_TASK_BYTES`].
pub fn check_task(task: String, what: &str) -> Result<String, CliError> {
    if task.trim().is_empty() {
        return Err(CliError::usage(format!("{what} is empty"))
            .with_hint("say what the run is to do, for example --task 'Parse empty input as []'"));
    }
    if task.len() > MAX_TASK_BYTES {
        return Err(CliError::usage(format!(
            "{what} is {} bytes, more than the {} KiB a task may be",
            task.len(),
            MAX_TASK_BYTES / 1024
        ))
        .with_hint(
            "put the details in a file of the project and name it in the task: phases read the \
             checkout",
        ));
    }
    Ok(task)
}

/// The correction follow-up started for `parent`, if one was.
pub fn follow_up_child(store: &Store, parent: &RunId) -> Result<Option<RunId>, CliError> {
    Ok(store.follow_up_child(parent)?)
}

/// `run` `parent` already has its follow-up `child`, said with what to do.
fn has_follow_up(parent: &RunId, child: &RunId) -> CliError {
    CliError::refused(format!(
        "run `{parent}` already has its follow-up: run `{child}`"
    ))
    .with_hint(format!(
        "`orcho resume {child}` drives it on; `orcho evidence {child}` shows where it stands"
    ))
}

/// Starts the correction follow-up of `parent`, whose delivery was decided
/// `fix`: with the parent's profile and phase commands (`phases` replaces
/// some), in the parent's target. Refused, with what to do instead, when
/// the parent's delivery was not a `fix`, or when it already has its
/// follow-up (a second child would redo the same correction).
pub fn begin_follow_up(
    place: &Place,
    parent: &RunId,
    launch: Launch,
) -> Result<(RunConfig, Run, FollowUpSpec), CliError> {
    let Launch {
        phases,
        task,
        autopilot,
        ..
    } = launch;
    let Some(mut config) = read_config(place, parent)? else {
        return Err(CliError::refused(format!(
            "run `{parent}` was not started by `orcho run` or `orcho mcp`; start its follow-up \
             with the host that started it"
        )));
    };
    let (_, mut plan) = place.load_spec(&config.profile)?;
    if autopilot {
        plan = plan.with_autopilot_enabled(true);
    }
    check_autopilot(&plan, autopilot)?;
    let engine = keyed_engine(place, plan)?;
    if let Some((name, why)) = unknown_phase(engine.plan(), &phases) {
        return Err(CliError::usage(format!("`--phase {name}=…`: {why}")));
    }
    if let Some(child) = follow_up_child(engine.store(), parent)? {
        return Err(has_follow_up(parent, &child));
    }
    let spec = match engine.store().follow_up(parent) {
        Ok(spec) => spec,
        Err(e) if matches!(e.refusal(), Some(orcho::Refusal::NoFollowUp)) => {
            return Err(CliError::refused(format!(
                "run `{parent}` has no correction follow-up: its delivery was not decided `fix`"
            ))
            .with_hint(format!(
                "`orcho delivery show {parent}` says whether `fix` is offered, and why not; \
                 `orcho delivery decide {parent} fix --note …` takes it"
            )));
        }
        Err(e) => return Err(e.into()),
    };
    config.phases.extend(phases);
    crate::runner::check_agents(engine.plan(), &config)?;
    let mut start = Start::follow_up(spec.clone()).host_metadata(serde_json::to_value(&config)?);
    if let Some(task) = task {
        start = start.task(task);
    }
    // The store refuses a second follow-up, also one another process
    // started since the look above.
    let run = engine.start_with(start).map_err(|e| match e.refusal() {
        Some(orcho::Refusal::FollowUpStarted { child }) => has_follow_up(parent, child),
        _ => e.into(),
    })?;
    Ok((config, run, spec))
}

/// A run in a worktree needs a git repository with a commit to start
/// from: refused before anything is created otherwise.
fn require_repository(place: &Place) -> Result<(), CliError> {
    let git = |args: &[&str]| -> Result<bool, CliError> {
        let request = ExecRequest::new(std::iter::once("git").chain(args.iter().copied()))
            .cwd(place.checkout.clone())
            .envs(BaseEnv::inherit());
        Ok(exec::run(&request)?.status.success())
    };
    if !git(&["rev-parse", "--show-toplevel"])? {
        return Err(CliError::msg(format!(
            "`{}` is not in a git repository, and a run works in a git worktree of its checkout",
            place.checkout
        ))
        .with_hint(
            "`git init` and commit the project, or run in the checkout itself with `--in-place`",
        ));
    }
    if !git(&["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])? {
        return Err(CliError::msg(format!(
            "the repository of `{}` has no commit yet, and a run starts from its HEAD",
            place.checkout
        ))
        .with_hint(
            "commit the project first (`git add -A && git commit -m initial`), or use `--in-place`",
        ));
    }
    Ok(())
}

/// Opens a run this CLI started, to drive it on.
pub fn open(place: &Place, run: &RunId) -> Result<(RunConfig, Run), CliError> {
    open_with(place, run, false)
}

/// [`open`], with the CI autopilot on for this drive when `autopilot`
/// (`--autopilot`), whatever the profile's `autopilot.enabled` says.
pub fn open_with(
    place: &Place,
    run: &RunId,
    autopilot: bool,
) -> Result<(RunConfig, Run), CliError> {
    let Some(config) = read_config(place, run)? else {
        return Err(CliError::msg(format!(
            "run `{run}` was not started by `orcho run` or `orcho mcp` (it has no run \
             configuration); drive it with its own host"
        )));
    };
    let (_, mut plan) = place.load_spec(&config.profile)?;
    if autopilot {
        plan = plan.with_autopilot_enabled(true);
    }
    let run = keyed_engine(place, plan)?.open(run)?;
    Ok((config, run))
}

/// Splits a phase's command line into words as a POSIX shell would
/// (quotes, escapes), without running a shell: no variables, globs or
/// pipes. `None` for an unbalanced quote or an empty line.
pub fn split_command(line: &str) -> Option<Vec<String>> {
    shlex::split(line).filter(|argv| !argv.is_empty())
}
