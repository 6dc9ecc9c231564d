//! `orcho hook AGENT`: answer an agent's hook.
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
//! In a phase of a run (`ORCHO_RUN`, `ORCHO_PHASE`), where nobody watches
//! the agent, a tool call the rules answer `ask` is asked of a person
//! instead: a permission point of the run, in every inbox, which the hook
//! waits for (`permissions.ask_timeout`, ten minutes by default; then it
//! denies) and answers the agent with.
//!
//! In a project without an `orcho.yaml` (and no `--profile`), the hook has
//! no opinion, so hooks installed for every project leave the others alone.
//! Whatever goes wrong is a refusal, in the form each agent reads as one:
//! never an allow.

use std::io::Read as _;

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{
    RunPlan,
    core::Timestamp,
    permissions::{PermissionPreset, RuleSet},
    receipts::{ExploratoryEntry, ExploratoryLog, ReceiptStore},
};
use serde_json::Value;

use crate::{
    error::CliError,
    exit::Exit,
    hook::{
        Agent, Answer, BadDocument, Event, HookDoc, guard, requests, shell_command, stop_guard,
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
    /// `--ask-wait`: how long an `ask` may wait for a person, when Orcho
    /// runs the agent and gives its hook the time.
    pub(crate) ask_wait: Option<std::time::Duration>,
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

/// How an agent's hook was answered, as the agent reads it: what to print
/// on standard output and standard error, and the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookAnswer {
    /// The exit code (0, or 2 where the agent reads it as "refused").
    pub code: u8,
    /// Standard output: one JSON object, if anything.
    pub stdout: Option<String>,
    /// Standard error, if anything.
    pub stderr: Option<String>,
}

/// Answers one hook document of the agent named `agent` (as `orcho hook`
/// names it: `claude-code`, `codex`, `gemini`, `qwen`, `copilot`, `cursor`,
/// `opencode`), in-process: the decision `orcho hook` makes, for a host
/// (an MCP server, an IDE extension) that receives the agent's document
/// itself. The checkout is `checkout`, else found from the document as the
/// command finds it; the store and profile are the checkout's.
///
/// # Errors
///
/// An agent Orcho does not know. Everything else (a document that cannot
/// be read, a profile that does not load) is a refusal in the answer, never
/// an error and never an allow.
pub fn answer_hook(
    agent: &str,
    checkout: Option<&Utf8Path>,
    document: &[u8],
) -> Result<HookAnswer, CliError> {
    let found = Agent::ALL.into_iter().find(|a| a.as_str() == agent);
    let Some(agent) = found else {
        let names: Vec<&str> = Agent::ALL.iter().map(|a| a.as_str()).collect();
        return Err(
            CliError::usage(format!("`{agent}` is not an agent Orcho knows"))
                .with_hint(format!("one of: {}", names.join(", "))),
        );
    };
    let at = HookPlace {
        checkout: checkout.map(Utf8Path::to_owned),
        store: None,
        profile: None,
        preset: None,
        ask_wait: None,
    };
    let rendered = answer(agent, &at, document).render(agent);
    Ok(HookAnswer {
        code: rendered.code,
        stdout: rendered.stdout,
        stderr: rendered.stderr,
    })
}

/// The answer to one hook document.
pub(crate) fn answer(agent: Agent, at: &HookPlace<'_>, bytes: &[u8]) -> Answer {
    let doc = match HookDoc::parse(agent, bytes) {
        Ok(doc) => doc,
        Err(BadDocument(message)) => {
            return Answer::FailSafe {
                message: format!("{message}; refused to be safe"),
            };
        }
    };
    let event = doc.event.name().to_owned();
    let answer = match respond(agent, at, &doc) {
        Ok(answer) => answer,
        Err(e) => Answer::FailSafe {
            message: format!("{event}: {}; refused to be safe", one_line(&e)),
        },
    };
    // In a runner phase: the event arrived, and how it was answered, for
    // the attempt to be judged by when the agent has exited.
    if let Some(attempt) = crate::hook::fired::Attempt::from_env()
        && let Ok(place) = place_of(agent, at, &doc)
        && let Ok(key) = crate::key::receipt_key(&place)
    {
        attempt.record(&key, &event, &answer);
    }
    answer
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
            let scope = guard::Scope {
                checkout: place.checkout.clone(),
                store: place.store.clone(),
                keys: crate::key::data_file("receipt-key")
                    .ok()
                    .and_then(|file| file.parent().map(Utf8Path::to_owned)),
                profile: at.profile.is_none(),
            };
            Ok(guard::tool_call(&scope, rules.as_ref(), &asked, cwd)
                .map(|verdict| match verdict.action {
                    // The profile's own rules ask a person; a preset given
                    // on the command line (a read-only phase's) refuses.
                    orcho::permissions::PermissionAction::Ask if at.preset.is_none() => {
                        match at.ask_wait {
                            Some(wait) => ask_a_person(agent, &place, wait, tool, input, verdict),
                            None => verdict,
                        }
                    }
                    _ => verdict,
                })
                .map_or(Answer::Silent, |verdict| Answer::Tool { event, verdict }))
        }
        Event::PostToolUse {
            tool,
            input,
            response,
            failure,
        } => {
            if (agent.dialect().tool)(tool) == Some(crate::hook::Tool::Shell) {
                let exit = (agent.dialect().exit_code)(response, failure.as_deref());
                log_exploratory(&place, tool, input, exit, doc.cwd.clone())?;
            }
            Ok(Answer::Silent)
        }
        Event::Stop { active, .. } => stop(agent, &place, at, doc, *active),
        Event::SessionStart => {
            let plan = plan(&place, at)?;
            Ok(Answer::Context {
                text: stop_guard::session_context(&plan, at.preset),
            })
        }
        Event::Other(_) => Ok(Answer::Silent),
    }
}

/// How often a hook that waits for a person looks for the decision.
const ASK_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

/// In a phase of a run, a tool call the profile's rules answer `ask`:
/// asked of a person as a permission point of the run, waited for, and
/// answered with what they decided (or `deny`, said so, when nobody
/// answered in time). Outside a phase, or when the run's store cannot
/// take the question, the `ask` stands, with why. Only a hook Orcho gave
/// the time (`--ask-wait`, an agent it runs) waits: an agent's own hooks
/// may be cut short, which lets the call through. The `read_only` preset
/// a read-only phase's hooks are given asks about every command it does
/// not know: those stay refusals, which the agent works around, rather
/// than a question to a person for each.
fn ask_a_person(
    agent: Agent,
    place: &Place,
    timeout: std::time::Duration,
    tool: &str,
    input: &Value,
    verdict: crate::hook::Verdict,
) -> crate::hook::Verdict {
    use orcho::{handoff::ask, permissions::PermissionAction};
    let (Some(run), Some(phase)) = (place::env_text("ORCHO_RUN"), place::env_text("ORCHO_PHASE"))
    else {
        return verdict;
    };
    let unasked = |why: String| crate::hook::Verdict {
        action: PermissionAction::Ask,
        reason: format!("{}; a person could not be asked: {why}", verdict.reason),
    };
    let Ok(run) = run.parse::<orcho::core::RunId>() else {
        return unasked(format!("`{run}` is no run id"));
    };
    let asking = match place::env_text(crate::phase::RUN_STORE_ENV) {
        Some(url) => match Place::new(Some(place.checkout.clone()), Some(url.into()), true) {
            Ok(place) => place,
            Err(e) => return unasked(one_line(&e)),
        },
        None => place.clone(),
    };
    let store = asking.team_store();
    let subject = shell_command(tool, input).unwrap_or_else(|_| {
        ["file_path", "path", "url", "pattern"]
            .iter()
            .find_map(|key| input.get(*key).and_then(Value::as_str))
            .map_or_else(|| input.to_string(), str::to_owned)
    });
    let question = ask::AskQuestion::new(phase, agent.as_str(), tool, subject, &verdict.reason)
        .waiting_at_most(timeout);
    let id = match store.ask(&run, &question) {
        Ok(id) => id,
        Err(e) => return unasked(orcho::core::error_chain(&e)),
    };
    // Whoever is told of what waits is told of this, in the background.
    crate::notifying::kick(&asking);
    let decision = match store.wait_for_ask(&run, &id, timeout, ASK_EVERY) {
        Ok(decision) => decision,
        Err(e) => return unasked(orcho::core::error_chain(&e)),
    };
    let choice = decision.payload();
    let note = choice.note().map(|n| format!(": {n}")).unwrap_or_default();
    let who = orcho::decide::who_decided(&decision);
    match choice.action() {
        ask::AskAction::Allow => crate::hook::Verdict {
            action: PermissionAction::Allow,
            reason: format!("{who} allowed it (permission question {id} of run {run}){note}"),
        },
        _ if ask::decided_by_nobody(&decision) => crate::hook::Verdict {
            action: PermissionAction::Deny,
            reason: format!(
                "{}; it was asked of a person (permission question {id} of run {run}) and \
                 nobody answered within {}: denied. Go on without it, or say in your report \
                 that it needs a person",
                verdict.reason,
                ask::in_words(timeout)
            ),
        },
        _ => crate::hook::Verdict {
            action: PermissionAction::Deny,
            reason: format!("{who} denied it (permission question {id} of run {run}){note}"),
        },
    }
}

/// The checkout: `--checkout`, else the project directory the agent names
/// in its environment (`CLAUDE_PROJECT_DIR`, `GEMINI_PROJECT_DIR`, …), else
/// found from the agent's working directory as every command finds it.
fn place_of(agent: Agent, at: &HookPlace<'_>, doc: &HookDoc) -> Result<Place, CliError> {
    if at.checkout.is_some() {
        return Place::new(at.checkout.clone(), at.store.clone(), true);
    }
    let project = agent
        .dialect()
        .project_dir
        .iter()
        .find_map(|var| place::env_text(var))
        .map(Utf8PathBuf::from);
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

/// Logs the shell command the agent ran as exploratory (never a receipt).
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

/// What the checkout's change does to weaken its own proof and a person
/// has not acknowledged, against the protected branch (`ORCHO_BASE`) or
/// else `HEAD`, each as one line (see `orcho status`).
fn weakenings_here(
    place: &Place,
    at: &HookPlace<'_>,
    subjects: &[orcho::core::Digest],
) -> Vec<String> {
    let base = place::env_text("ORCHO_BASE");
    let commands: Vec<_> = plan(place, at)
        .ok()
        .and_then(|plan| plan.verification)
        .map(|contract| orcho::checkout::declared(&contract))
        .unwrap_or_default();
    let key = crate::key::receipt_key(place).ok();
    orcho::checkout::Checkout::new(&place.checkout, &place.store, key)
        .weakened(base.as_deref(), &commands, subjects)
        .open
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// The stop guard: refuse while a required receipt is not present (or the
/// profile does not load), up to the profile's bound in a row.
fn stop(
    agent: Agent,
    place: &Place,
    at: &HookPlace<'_>,
    doc: &HookDoc,
    active: bool,
) -> Result<Answer, CliError> {
    // The change is read after the fingerprint: the same state of the
    // checkout reviews from the cache, with no git process.
    let mut subjects = Vec::new();
    let assessed = (|| {
        let plan = plan(place, at)?;
        let Some(contract) = plan.verification.clone() else {
            return Ok(None);
        };
        let verifier = crate::key::keyed_verifier(place, contract)?;
        let rules = match at.preset {
            Some(preset) => Some(preset.rules()),
            None => plan.permissions.clone(),
        };
        Ok::<_, CliError>(stop_guard::assess(
            &plan,
            &verifier,
            rules.as_ref(),
            &mut subjects,
        )?)
    })();
    let weakened = weakenings_here(place, at, &subjects);
    Ok(stop_guard::stop(
        agent,
        &place.store,
        doc,
        active,
        assessed.map_err(|e| one_line(&e)),
        &weakened,
    )?)
}

/// `orcho hook opencode --drive FILE [--guard-stops] -- PROGRAM…`: runs an
/// agent whose stops no hook can refuse (opencode), asking this hook's Stop
/// guard after each round, as the agent's own Stop hook would be asked
/// (see [`orcho_agents::runner::opencode::drive`]). Its exit code is the
/// program's.
pub(crate) fn drive(
    agent: Agent,
    at: &HookPlace<'_>,
    prompt: &Utf8Path,
    guard_stops: bool,
    program: &[String],
) -> Result<Exit, CliError> {
    use orcho_agents::runner::opencode;
    if agent != Agent::Opencode {
        return Err(CliError::usage(format!(
            "`--drive` runs opencode, whose stops no hook can refuse; {} has a Stop hook of its own",
            agent.as_str()
        ))
        .with_hint("a phase's `runner:` runs an agent; `orcho hook AGENT` answers one document"));
    }
    let cwd = std::env::current_dir()
        .map_err(|e| CliError::msg(format!("the current directory cannot be read: {e}")))?;
    let mut ask = |session: &str, active: bool| {
        let doc = serde_json::json!({
            "hook_event_name": "Stop",
            "session_id": session,
            "stop_hook_active": active,
            "cwd": cwd,
        });
        let answer = answer(agent, at, doc.to_string().as_bytes());
        if let Answer::WarnStop { message } = &answer {
            output::err(message);
        }
        answer
    };
    let code = opencode::drive(program, prompt, guard_stops, &mut ask)
        .map_err(|e| CliError::cannot_start(e.to_string()))?;
    Ok(Exit::Command(u8::try_from(code).unwrap_or(1)))
}
