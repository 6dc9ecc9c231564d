//! Claude Code: `claude -p` with the prompt, `--output-format json`, and
//! Orcho's hooks in a settings file of the attempt (`--settings`), merged
//! with the user's own settings.

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{
    core::{Cost, Tokens, Usd},
    profile::{Agent, RunnerSpec},
};
use serde_json::{Value, json};

use super::{AgentReport, AttemptPaths, HookCommand, Launch, LaunchError, RunnerAgent, keep};

/// Claude Code's row of [`RUNNERS`](super::RUNNERS).
pub(super) const RUNNER: RunnerAgent = RunnerAgent {
    agent: Agent::ClaudeCode,
    title: "Claude Code",
    hooks: crate::hook::Agent::ClaudeCode,
    program_var: "ORCHO_CLAUDE",
    program: "claude",
    package: "@anthropic-ai/claude-code",
    launch,
    finish,
    more_events: &[],
};

/// The settings file with Orcho's hooks, in the attempt's artifacts.
const SETTINGS: &str = "claude-settings.json";

/// The session id the attempt's Claude Code runs as, in the attempt's
/// artifacts: its transcript is found by it also when the attempt ends
/// without a result (timed out, interrupted).
const SESSION: &str = "claude-session.txt";

/// A new session id, as Claude Code takes one (`--session-id`, a UUID):
/// random enough from the attempt and the instant, shaped as a version 4
/// UUID.
fn new_session(paths: &AttemptPaths<'_>) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!("{}\0{now}\0{}", paths.artifacts, std::process::id());
    let mut b = *blake3::Hasher::new_derive_key("orcho claude-code session id v1")
        .update(seed.as_bytes())
        .finalize()
        .as_bytes();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b[..16].iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

pub(super) fn launch(
    program: &Utf8Path,
    spec: &RunnerSpec,
    prompt: &str,
    hook: &HookCommand,
    paths: &AttemptPaths<'_>,
) -> Result<Launch, LaunchError> {
    let mut hooks = serde_json::Map::new();
    for (event, matcher) in hook.events() {
        let mut group = json!({ "hooks": [{
            "type": "command",
            "command": hook.line,
            "timeout": hook.timeout_secs(event),
        }] });
        if event == "PreToolUse" {
            // A tool call's hook that cannot answer (killed while it waits
            // for a person, say) refuses the call: Claude Code would
            // otherwise take the failure as no opinion and run it.
            group["hooks"][0]["onFailure"] = json!("block");
        }
        if let Some(matcher) = matcher {
            group["matcher"] = json!(matcher);
        }
        hooks.insert(event.to_owned(), json!([group]));
    }
    let settings = paths.artifacts.join(SETTINGS);
    let text = serde_json::to_string_pretty(&json!({ "hooks": hooks }))?;
    orcho::core::fs::write_atomic(&settings, text.as_bytes())?;
    let session = new_session(paths);
    orcho::core::fs::write_atomic(&paths.artifacts.join(SESSION), session.as_bytes())?;
    let mut argv = vec![
        program.to_string(),
        "-p".to_owned(),
        prompt.to_owned(),
        "--output-format".to_owned(),
        "json".to_owned(),
        "--session-id".to_owned(),
        session,
        "--settings".to_owned(),
        settings.to_string(),
        // Edits and commands go through; Orcho's PreToolUse hook applies
        // the phase's rules to each.
        "--permission-mode".to_owned(),
        "acceptEdits".to_owned(),
        "--allowedTools".to_owned(),
        "Bash".to_owned(),
    ];
    super::model_and_args(&mut argv, spec, "--model");
    Ok(Launch {
        agent: Agent::ClaudeCode,
        argv,
        envs: Vec::new(),
        guard_stops: false,
    })
}

/// Reads `claude -p --output-format json`'s result object, and keeps the
/// session's transcript (also without a result: an attempt that timed out
/// or was interrupted keeps what its agent did).
pub(super) fn finish(out: &str, paths: &AttemptPaths<'_>) -> AgentReport {
    let result = out
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .find(|v| v["type"] == "result");
    let session = result
        .as_ref()
        .and_then(|r| r["session_id"].as_str().map(str::to_owned))
        .or_else(|| {
            std::fs::read_to_string(paths.artifacts.join(SESSION))
                .ok()
                .map(|s| s.trim().to_owned())
        });
    if let Some(session) = session
        && let Some(transcript) = transcript(paths.checkout, &session)
    {
        keep(&transcript, paths, "transcript.jsonl");
    }
    let Some(result) = result else {
        return AgentReport::default();
    };
    super::keep_document(paths, "claude-result.json", &result);
    let text = result["result"].as_str().map(str::to_owned);
    let mut cost = Cost::default();
    if let Some(usd) = result["total_cost_usd"]
        .as_f64()
        .and_then(|u| Usd::new(u).ok())
    {
        cost = cost.with_usd(usd);
    }
    let usage = &result["usage"];
    if let (Some(input), Some(output)) = (
        usage["input_tokens"].as_u64(),
        usage["output_tokens"].as_u64(),
    ) {
        let cached = usage["cache_read_input_tokens"].as_u64().unwrap_or(0)
            + usage["cache_creation_input_tokens"].as_u64().unwrap_or(0);
        cost = cost.with_tokens(Tokens::new(input + cached, output));
    }
    let api_failed =
        !result["api_error_status"].is_null() || result["terminal_reason"] == "api_error";
    let failed = (result["is_error"] == true && api_failed).then(|| {
        format!(
            "Claude Code could not get an answer from its model: {}",
            text.as_deref().unwrap_or("no message")
        )
    });
    AgentReport {
        incomplete: result["is_error"] == true,
        result: text,
        cost,
        failed,
    }
}

/// Where Claude Code keeps the transcript of `session` run in `checkout`:
/// `<config>/projects/<checkout, each character not a letter or digit as
/// `-`>/<session>.jsonl`, `<config>` being `CLAUDE_CONFIG_DIR` or
/// `~/.claude`.
fn transcript(checkout: &Utf8Path, session: &str) -> Option<Utf8PathBuf> {
    let config = match crate::env_text("CLAUDE_CONFIG_DIR") {
        Some(dir) => Utf8PathBuf::from(dir),
        None => Utf8PathBuf::from(crate::env_text("HOME")?).join(".claude"),
    };
    let cwd = std::fs::canonicalize(checkout)
        .ok()
        .and_then(|p| Utf8PathBuf::try_from(p).ok())
        .unwrap_or_else(|| checkout.to_owned());
    let slug: String = cwd
        .as_str()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let safe = session
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-');
    safe.then(|| {
        config
            .join("projects")
            .join(slug)
            .join(format!("{session}.jsonl"))
    })
}
