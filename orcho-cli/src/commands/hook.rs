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
//! In a project without an `orcho.yaml` (and no `--profile`), the hook has
//! no opinion, so hooks installed for every project leave the others alone.
//! Whatever goes wrong is a refusal, in the form each agent reads as one:
//! never an allow.

use std::{fmt::Write as _, io::Read as _};

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{
    RunPlan,
    core::Timestamp,
    permissions::{PermissionAction, PermissionPreset, RuleSet},
    receipts::{ExploratoryEntry, ExploratoryLog, GapStatus, ReceiptStore, VerificationContract},
};
use serde_json::Value;

use crate::{
    error::CliError,
    exit::Exit,
    hook::{
        Agent, Answer, BadDocument, Event, HookDoc, StopGuard, UnprovenStop, guard, requests,
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
                text: session_context(&plan, at.preset),
            })
        }
        Event::Other(_) => Ok(Answer::Silent),
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

/// What stands between the agent and a proven stop.
struct Unproven {
    /// Refusals in a row before the stop goes through.
    max: u32,
    /// What is not proven, as `name: status`.
    items: Vec<String>,
    /// The commands whose receipt cannot be trusted (`invalid`: forged, or
    /// changed after it was signed).
    untrusted: Vec<String>,
    /// The reason for refusal `n` of `max`.
    reason: Box<dyn Fn(u32, u32) -> String>,
}

/// Whether the checkout is proven ready (`None`), or what is not; the
/// subject fingerprints it was classified against go to `subjects`.
fn assess(
    place: &Place,
    at: &HookPlace<'_>,
    subjects: &mut Vec<orcho::core::Digest>,
) -> Result<Option<Unproven>, CliError> {
    let plan = plan(place, at)?;
    let Some(contract) = plan.verification.clone() else {
        return Ok(None);
    };
    let verifier = crate::key::keyed_verifier(place, contract)?;
    // The checkout is fingerprinted within the hook's budget, so that the
    // agent never lets a stop through because the hook timed out: past it,
    // the stop is refused, and says why.
    let budget = hook_budget();
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = std::sync::Arc::clone(&verifier);
    std::thread::spawn(move || {
        let _ = tx.send(worker.readiness());
    });
    let summary = match rx.recv_timeout(budget) {
        Ok(summary) => {
            let summary = summary?;
            subjects.clone_from(&summary.subjects);
            summary
        }
        Err(_) => {
            let seconds = budget.as_secs_f64();
            return Ok(Some(Unproven {
                max: plan.max_stop_blocks,
                items: vec![format!(
                    "the checkout: not fingerprinted within {seconds} s"
                )],
                untrusted: Vec::new(),
                reason: Box::new(move |refusal, max| {
                    format!(
                        "Orcho: this checkout could not be fingerprinted within the hook's {seconds} \
                         s, so whether it is proven ready is unknown and the stop is refused. \
                         Run `orcho status` (it says what is missing or stale) and `orcho verify`, \
                         then finish; if the tree is this large, tell the user: files the build \
                         writes belong in .gitignore. {}",
                        refusals(refusal, max)
                    )
                }),
            }));
        }
    };
    let gaps = summary.gaps();
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
                // Running it again changes nothing while it fails or runs
                // no test: what to do first is said.
                match gap.status() {
                    GapStatus::Failed => {
                        format!("Fix what fails, then prove it: `orcho verify {name}`")
                    }
                    GapStatus::Vacuous => format!(
                        "It ran no test: make it run the tests (`orcho verify {name}` says how \
                         it was read), then prove it"
                    ),
                    _ => format!("Prove it: `orcho verify {name}`"),
                }
            } else {
                format!(
                    "Ask a person to run `orcho verify {name}`: the permission rules here do not \
                     let you"
                )
            };
            let distrust = if gap.status() == GapStatus::Invalid {
                " A receipt cannot be trusted: it was not written by `orcho verify` with this \
                 machine's key, or was changed since; if you did not touch it, tell the user."
            } else {
                ""
            };
            format!(
                "- `{name}` (`{}`): {}: {}.{distrust} {prove}",
                command_line(verifier.contract(), name),
                gap.status(),
                gap.reason()
            )
        })
        .collect();
    let untrusted: Vec<String> = gaps
        .iter()
        .filter(|g| g.status() == GapStatus::Invalid)
        .map(|g| g.command().to_string())
        .collect();
    Ok(Some(Unproven {
        max: plan.max_stop_blocks,
        items: gaps
            .iter()
            .map(|g| format!("{}: {}", g.command(), g.status()))
            .collect(),
        untrusted,
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

/// How long the stop guard takes at most to fingerprint the checkout:
/// `ORCHO_HOOK_BUDGET` seconds, by default three quarters of the timeout
/// `orcho init` writes with every hook, and never closer than 5 s to it.
fn hook_budget() -> std::time::Duration {
    budget_of(place::env_text("ORCHO_HOOK_BUDGET").as_deref())
}

/// The budget `text` says (seconds), else the default.
fn budget_of(text: Option<&str>) -> std::time::Duration {
    let default = std::time::Duration::from_secs(crate::hook::HOOK_TIMEOUT_SECS * 3 / 4);
    // Never as long as the timeout: past it, the agent lets the stop through.
    let most = std::time::Duration::from_secs(crate::hook::HOOK_TIMEOUT_SECS - 5);
    text.and_then(|text| text.trim().parse::<f64>().ok())
        .and_then(|secs| std::time::Duration::try_from_secs_f64(secs).ok())
        .map_or(default, |budget| budget.min(most))
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
    // The change is read after the fingerprint: the same state of the
    // checkout reviews from the cache, with no git process.
    let mut subjects = Vec::new();
    let assessed = assess(place, at, &mut subjects);
    let weakened = weakenings_here(place, at, &subjects);
    let unproven = match assessed {
        Ok(None) => {
            guard.reset();
            // A proven stop: what earlier stops left unproven is proven now.
            let _ = crate::hook::acknowledge_stops(&place.store);
            if weakened.is_empty() {
                return Ok(Answer::Silent);
            }
            return Ok(Answer::WarnStop {
                message: format!(
                    "orcho: the receipts are present, but this change weakens its own proof, and \
                     it is not ready until a person reviews it (`orcho status` lists it; tell the \
                     user): {}",
                    weakened.join("; ")
                ),
            });
        }
        Ok(Some(mut unproven)) => {
            if !weakened.is_empty() {
                let reason = unproven.reason;
                let said = weakened.join("; ");
                unproven.reason = Box::new(move |refusal, max| {
                    format!(
                        "{} This change also weakens its own proof, which a person must review \
                         (say so to the user; do not hide it to get past this): {said}",
                        reason(refusal, max)
                    )
                });
            }
            unproven
        }
        Err(e) => {
            let message = one_line(&e);
            Unproven {
                max: orcho::profile::DEFAULT_MAX_STOP_BLOCKS,
                items: vec!["the profile: does not load".to_owned()],
                untrusted: Vec::new(),
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
        // A receipt that cannot be trusted is said first: it may be forged.
        let distrust = if unproven.untrusted.is_empty() {
            String::new()
        } else {
            format!(
                "; a receipt cannot be trusted ({}: invalid, forged or changed after it was \
                 signed)",
                unproven.untrusted.join(", ")
            )
        };
        return Ok(Answer::WarnStop {
            message: format!(
                "orcho: stopped without proof after {blocks} refusal(s): {}{distrust}; recorded \
                 for `orcho status` (`orcho verify` proves the commands)",
                unproven.items.join(", ")
            ),
        });
    }
    guard.refused(blocks + 1)?;
    Ok(Answer::BlockStop {
        reason: (unproven.reason)(blocks + 1, max),
    })
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
        .map(|contract| super::verify::declared(&contract))
        .unwrap_or_default();
    super::weakened::weakened(place, base.as_deref(), &commands, subjects)
        .open
        .iter()
        .map(ToString::to_string)
        .collect()
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_budget_stays_below_the_hooks_timeout_whatever_it_is_set_to() {
        assert_eq!(budget_of(None), Duration::from_secs(45));
        assert_eq!(budget_of(Some("0")), Duration::ZERO);
        assert_eq!(budget_of(Some(" 2.5 ")), Duration::from_millis(2500));
        // Past the timeout the agent would let the stop through.
        assert_eq!(budget_of(Some("90")), Duration::from_secs(55));
        // Too large for a duration, negative, or not a number: no panic.
        assert_eq!(budget_of(Some("1e20")), Duration::from_secs(45));
        assert_eq!(budget_of(Some("-1")), Duration::from_secs(45));
        assert_eq!(budget_of(Some("NaN")), Duration::from_secs(45));
        assert_eq!(budget_of(Some("soon")), Duration::from_secs(45));
    }
}
