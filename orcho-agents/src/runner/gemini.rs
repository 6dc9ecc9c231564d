//! Gemini CLI: `gemini -p` with the prompt, `--output-format json`, and
//! Orcho's hooks in a home of the attempt's own (`GEMINI_CLI_HOME`, in its
//! artifacts): the user's settings with the phase's hooks added and hooks
//! switched on, beside links to the user's credentials. Gemini CLI reads a system
//! settings file only when root owns it and every directory above it, so
//! a home is what a user can give it for one attempt; its session record
//! stays in the artifacts too.

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{
    core::{Cost, Tokens},
    profile::{Agent, RunnerSpec},
};
use serde_json::{Map, Value, json};

use super::{AgentReport, AttemptPaths, HookCommand, Launch, LaunchError, RunnerAgent, keep};
use crate::hook::{self, Layout};

/// Gemini CLI's row of [`RUNNERS`](super::RUNNERS).
pub(super) const RUNNER: RunnerAgent = RunnerAgent {
    agent: Agent::Gemini,
    title: "Gemini CLI",
    hooks: hook::Agent::Gemini,
    program_var: "ORCHO_GEMINI",
    program: "gemini",
    package: "@google/gemini-cli",
    launch,
    finish,
    more_events: &[],
};

/// The attempt's Gemini CLI home, in its artifacts.
const HOME: &str = "gemini-home";

/// The user's `.gemini`: under `GEMINI_CLI_HOME` when set, else the home.
fn user_dir() -> Option<Utf8PathBuf> {
    let home = crate::env_text("GEMINI_CLI_HOME").or_else(|| crate::env_text("HOME"))?;
    Some(Utf8PathBuf::from(home).join(".gemini"))
}

/// Writes `<home>/.gemini/settings.json`: the user's settings, with
/// `hooks` added to theirs, hooks switched on, and the hook command
/// `line` never in their list of disabled hooks. Kept in the artifacts
/// as `gemini-settings.json` too.
fn settings_for(home: &Utf8Path, hooks: Map<String, Value>, line: &str) -> Result<(), LaunchError> {
    let mut settings = user_dir()
        .and_then(|dir| std::fs::read_to_string(dir.join("settings.json")).ok())
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    let root = settings
        .as_object_mut()
        .ok_or_else(|| LaunchError::Failed("settings are not an object".to_owned()))?;
    let config = root.entry("hooksConfig").or_insert_with(|| json!({}));
    if !config.is_object() {
        *config = json!({});
    }
    config["enabled"] = json!(true);
    if let Some(disabled) = config["disabled"].as_array_mut() {
        disabled.retain(|d| d.as_str() != Some(line));
    }
    let all = root.entry("hooks").or_insert_with(|| json!({}));
    if !all.is_object() {
        *all = json!({});
    }
    for (event, groups) in hooks {
        let entry = &mut all[&event];
        match (entry.as_array_mut(), groups) {
            (Some(existing), Value::Array(ours)) => existing.extend(ours),
            (_, ours) => *entry = ours,
        }
    }
    let dir = home.join(".gemini");
    orcho::core::fs::create_dir_all(&dir)?;
    let text = serde_json::to_string_pretty(&settings)?;
    let file = dir.join("settings.json");
    orcho::core::fs::write_atomic(&file, text.as_bytes())?;
    if let Some(artifacts) = home.parent() {
        orcho::core::fs::write_atomic(&artifacts.join("gemini-settings.json"), text.as_bytes())?;
    }
    Ok(())
}

/// Gemini CLI's event for each event every runner answers.
fn event_name(event: &str) -> Option<&'static str> {
    Some(match event {
        "SessionStart" => "SessionStart",
        "PreToolUse" => "BeforeTool",
        "PostToolUse" => "AfterTool",
        "Stop" => "AfterAgent",
        _ => return None,
    })
}

pub(super) fn launch(
    program: &Utf8Path,
    spec: &RunnerSpec,
    prompt: &str,
    hook: &HookCommand,
    paths: &AttemptPaths<'_>,
) -> Result<Launch, LaunchError> {
    let millis = matches!(
        hook::Agent::Gemini.dialect().layout,
        Layout::Groups { millis: true }
    );
    let unit = if millis { 1000 } else { 1 };
    let mut hooks = Map::new();
    for (event, matcher) in hook.events() {
        let timeout = hook.timeout_secs(event) * unit;
        let Some(event) = event_name(event) else {
            continue;
        };
        // Its shell tool is `run_shell_command`, not `Bash`.
        let matcher = match matcher {
            Some("Bash") => Some("run_shell_command"),
            other => other,
        };
        let mut group = json!({ "hooks": [{
            "type": "command",
            "command": hook.line,
            "timeout": timeout,
        }] });
        if let Some(matcher) = matcher {
            group["matcher"] = json!(matcher);
        }
        hooks.insert(event.to_owned(), json!([group]));
    }
    let home = paths.artifacts.join(HOME);
    settings_for(&home, hooks, &hook.line)?;
    // What the user's own `.gemini` holds beside its settings (credentials,
    // accounts), linked, never copied: no credential is written into the
    // store, and a token the agent refreshes is the user's again.
    if let Some(user) = user_dir() {
        for entry in user.read_dir_utf8().into_iter().flatten().flatten() {
            let file = entry.metadata().is_ok_and(|m| m.is_file());
            if file && entry.file_name() != "settings.json" {
                let _ = std::os::unix::fs::symlink(
                    entry.path(),
                    home.join(".gemini").join(entry.file_name()),
                );
            }
        }
    }
    let mut argv = vec![
        program.to_string(),
        "-p".to_owned(),
        prompt.to_owned(),
        "--output-format".to_owned(),
        "json".to_owned(),
        // Tool calls go through; Orcho's BeforeTool hook applies the
        // phase's rules to each.
        "--approval-mode".to_owned(),
        "yolo".to_owned(),
        // The run's checkout is where it is asked to work: Gemini CLI
        // otherwise refuses an untrusted folder without a prompt.
        "--skip-trust".to_owned(),
    ];
    super::model_and_args(&mut argv, spec, "--model");
    Ok(Launch {
        agent: Agent::Gemini,
        argv,
        envs: vec![("GEMINI_CLI_HOME".to_owned(), home.to_string())],
        guard_stops: false,
    })
}

/// Reads `gemini -p --output-format json`'s document: its response, the
/// tokens of every model it asked, an error.
pub(super) fn finish(out: &str, paths: &AttemptPaths<'_>) -> AgentReport {
    // The document is the output's last JSON object (it is pretty-printed).
    let Some(doc) = out
        .rfind("\n{")
        .map(|at| &out[at + 1..])
        .or_else(|| out.trim_start().starts_with('{').then_some(out))
        .and_then(|text| serde_json::from_str::<Value>(text.trim()).ok())
    else {
        return AgentReport::default();
    };
    super::keep_document(paths, "gemini-result.json", &doc);
    if let Some(session) = doc["session_id"].as_str()
        && let Some(transcript) = transcript(&paths.artifacts.join(HOME), session)
    {
        keep(&transcript, paths, "transcript.jsonl");
    }
    let mut report = AgentReport {
        result: doc["response"].as_str().map(str::to_owned),
        ..AgentReport::default()
    };
    let (mut input, mut output) = (0, 0);
    for model in doc["stats"]["models"]
        .as_object()
        .into_iter()
        .flat_map(Map::values)
    {
        input += model["tokens"]["prompt"].as_u64().unwrap_or(0);
        output += model["tokens"]["candidates"].as_u64().unwrap_or(0);
    }
    if input + output > 0 {
        report.cost = Cost::default().with_tokens(Tokens::new(input, output));
    }
    if let Some(message) = doc["error"]["message"].as_str() {
        report.failed = Some(format!(
            "Gemini CLI could not get an answer from its model: {message}"
        ));
    }
    report
}

/// Gemini CLI's record of `session` in the attempt's `home`:
/// `.gemini/tmp/<project>/chats/session-<time>-<first 8 of the id>.jsonl`.
fn transcript(home: &Utf8Path, session: &str) -> Option<Utf8PathBuf> {
    if !session
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-')
    {
        return None;
    }
    let short: String = session.chars().take(8).collect();
    super::codex::find(&home.join(".gemini/tmp"), &format!("-{short}.jsonl"), 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_a_runner_asks_has_its_gemini_name() {
        for event in ["SessionStart", "PreToolUse", "PostToolUse", "Stop"] {
            let name = event_name(event).unwrap();
            assert!(
                hook::Agent::Gemini
                    .dialect()
                    .install
                    .iter()
                    .any(|(e, _)| *e == name),
                "{name} is an event the Gemini dialect answers"
            );
        }
    }

    #[test]
    fn the_report_is_the_last_document_of_the_output() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::try_from(dir.path().to_owned()).unwrap();
        let paths = AttemptPaths {
            checkout: &root,
            artifacts: &root,
            output: &root,
            store: &root,
            run_dir: &root,
        };
        let out = "warning: noise\n{\n  \"session_id\": \"x\",\n  \"response\": \"done\",\n  \
                   \"stats\": {\"models\": {\"a\": {\"tokens\": {\"prompt\": 100, \"candidates\": 20}},\n  \
                   \"b\": {\"tokens\": {\"prompt\": 5, \"candidates\": 1}}}}\n}\n";
        let report = finish(out, &paths);
        assert_eq!(report.result.as_deref(), Some("done"));
        assert_eq!(
            report.cost.tokens.map(|t| (t.input, t.output)),
            Some((105, 21))
        );
        assert!(report.failed.is_none());
        let failed = finish("{\"error\": {\"message\": \"quota\"}}", &paths);
        assert!(failed.failed.unwrap().contains("quota"));
    }
}
