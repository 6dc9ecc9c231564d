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

use camino::Utf8PathBuf;
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
    match &doc.event {
        Event::PreToolUse { tool, input } | Event::PermissionRequest { tool, input } => {
            let event = if matches!(doc.event, Event::PreToolUse { .. }) {
                "PreToolUse"
            } else {
                "PermissionRequest"
            };
            let rules = match at.preset {
                Some(preset) => preset.rules(),
                None => match plan(&place, at)?.permissions {
                    Some(rules) => rules,
                    None => return Ok(Answer::Silent),
                },
            };
            let asked = requests(agent, tool, input, &place.checkout)
                .map_err(|BadDocument(m)| CliError::msg(m))?;
            Ok(verdict(&rules, &asked)
                .map_or(Answer::Silent, |verdict| Answer::Tool { event, verdict }))
        }
        Event::PostToolUse {
            tool,
            input,
            response,
        } => {
            if matches!(tool.as_str(), "Bash" | "PowerShell" | "shell") {
                log_exploratory(&place, tool, input, response)?;
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

/// The most restrictive evaluation over `asked`; `None` when nothing is
/// asked.
fn verdict(rules: &RuleSet, asked: &[(String, String)]) -> Option<Verdict> {
    let rank = |a: PermissionAction| match a {
        PermissionAction::Allow => 0,
        PermissionAction::Ask => 1,
        _ => 2,
    };
    asked
        .iter()
        .map(|(permission, argument)| {
            let evaluation = rules.evaluate(permission, argument);
            Verdict {
                action: evaluation.action,
                reason: format!(
                    "{permission} `{}`: {}",
                    shorten(argument, 160),
                    evaluation.explain()
                ),
            }
        })
        .max_by_key(|v| rank(v.action))
}

fn shorten(text: &str, max: usize) -> String {
    let line = text.replace(['\n', '\r'], "⏎");
    match line.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

/// Logs the shell command the agent ran as exploratory (never a receipt).
fn log_exploratory(
    place: &Place,
    tool: &str,
    input: &Value,
    response: &Value,
) -> Result<(), CliError> {
    let Ok(command) = shell_command(tool, input) else {
        return Ok(());
    };
    let exit_code = ["exit_code", "exitCode", "returnCode"]
        .iter()
        .find_map(|k| response.get(k).and_then(Value::as_i64))
        .and_then(|c| i32::try_from(c).ok());
    let log = ExploratoryLog::new(&ReceiptStore::new(&place.store));
    log.record(&ExploratoryEntry::new(
        Timestamp::now(),
        vec!["sh".to_owned(), "-c".to_owned(), command],
        exit_code,
    ))?;
    Ok(())
}

/// The stop guard: refuse while a required receipt is not present, up to
/// the profile's bound in a row.
fn stop(
    agent: Agent,
    place: &Place,
    at: &HookPlace<'_>,
    doc: &HookDoc,
    active: bool,
) -> Result<Answer, CliError> {
    let plan = plan(place, at)?;
    let Some(contract) = plan.verification.clone() else {
        return Ok(Answer::Silent);
    };
    let verifier = super::verify::keyed_verifier(place, contract)?;
    let summary = verifier.readiness()?;
    let guard = StopGuard::new(&place.store, doc.session_id.as_deref());
    let gaps = summary.gaps();
    if gaps.is_empty() {
        guard.reset();
        return Ok(Answer::Silent);
    }
    let blocks = if active { guard.blocks() } else { 0 };
    let max = plan.max_stop_blocks;
    if blocks >= max {
        guard.record(&UnprovenStop::new(
            agent.as_str(),
            doc.session_id.clone(),
            blocks,
            gaps.iter()
                .map(|g| format!("{}: {}", g.command(), g.status()))
                .collect(),
        ))?;
        guard.reset();
        let names: Vec<String> = gaps.iter().map(|g| format!("`{}`", g.command())).collect();
        return Ok(Answer::WarnStop {
            message: format!(
                "orcho: stopped without proof after {blocks} refusal(s): {} not proven; \
                 recorded for `orcho status` (run `orcho verify` to prove them)",
                names.join(", ")
            ),
        });
    }
    guard.refused(blocks + 1)?;
    Ok(Answer::BlockStop {
        reason: block_reason(verifier.contract(), &gaps, blocks + 1, max),
    })
}

fn block_reason(
    contract: &VerificationContract,
    gaps: &[orcho::receipts::Gap],
    refusal: u32,
    max: u32,
) -> String {
    let mut out = String::from(
        "Orcho: this checkout is not proven ready, so do not stop yet. \
         Required commands without a present receipt:\n",
    );
    for gap in gaps {
        let argv = command_line(contract, gap.command().as_str());
        let _ = writeln!(
            out,
            "- `{}` (`{argv}`): {}: {}. Prove it: `orcho verify {}`",
            gap.command(),
            gap.status(),
            gap.reason(),
            gap.command()
        );
    }
    let _ = write!(
        out,
        "Run each `orcho verify …` above (it runs the declared command and records a receipt), \
         fix what fails, and then finish. Refusal {refusal} of {max}: after that the stop goes \
         through and is recorded as unproven."
    );
    out
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
