//! Codex: `codex exec --json` with the prompt, in its workspace-write
//! sandbox (the run's directory writable too), and Orcho's hooks given on
//! its command line for this run only (`-c hooks.…`, trusted for this
//! invocation with `--dangerously-bypass-hook-trust`).
//!
//! The sandbox does not make the machine's `/tmp` writable: the attempt's
//! `TMPDIR` is a directory of its own in its artifacts. What the agent
//! leaves in a temporary file stays with the attempt, and nothing it does
//! reaches another checkout under `/tmp` (Codex's sandbox makes `.git`,
//! `.agents` and `.codex` mount points in each writable root, which in
//! `/tmp` made every directory below it look like one repository).

use std::fmt::Write as _;

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{
    core::{Cost, Tokens},
    profile::{Agent, RunnerSpec},
};
use serde_json::Value;

use super::{AgentReport, AttemptPaths, HookCommand, Launch, LaunchError, RunnerAgent, keep};

/// Codex's row of [`RUNNERS`](super::RUNNERS).
pub(super) const RUNNER: RunnerAgent = RunnerAgent {
    agent: Agent::Codex,
    title: "Codex",
    hooks: crate::hook::Agent::Codex,
    program_var: "ORCHO_CODEX",
    program: "codex",
    package: "@openai/codex",
    launch,
    finish,
    // Codex asks its hooks before it would ask for a permission.
    more_events: &[("PermissionRequest", Some("*"))],
};

pub(super) fn launch(
    program: &Utf8Path,
    spec: &RunnerSpec,
    prompt: &str,
    hook: &HookCommand,
    paths: &AttemptPaths<'_>,
) -> Result<Launch, LaunchError> {
    let mut argv = vec![
        program.to_string(),
        "exec".to_owned(),
        "--json".to_owned(),
        "--sandbox".to_owned(),
        "workspace-write".to_owned(),
        "-c".to_owned(),
        format!(
            "sandbox_workspace_write.writable_roots=[{}]",
            toml_string(paths.run_dir.as_str())
        ),
        "-c".to_owned(),
        "sandbox_workspace_write.exclude_slash_tmp=true".to_owned(),
        "--dangerously-bypass-hook-trust".to_owned(),
    ];
    let tmp = paths.artifacts.join("tmp");
    orcho::core::fs::create_dir_all(&tmp)?;
    for (event, matcher) in hook.events() {
        let mut group = String::from("{");
        if let Some(matcher) = matcher {
            let _ = write!(group, "matcher={},", toml_string(matcher));
        }
        let _ = write!(
            group,
            "hooks=[{{type=\"command\",command={},timeout={}}}]}}",
            toml_string(&hook.line),
            hook.timeout_secs(event)
        );
        argv.extend(["-c".to_owned(), format!("hooks.{event}=[{group}]")]);
    }
    super::model_and_args(&mut argv, spec, "-m");
    argv.push(prompt.to_owned());
    Ok(Launch {
        agent: Agent::Codex,
        argv,
        envs: vec![("TMPDIR".to_owned(), tmp.into_string())],
        guard_stops: false,
    })
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Reads `codex exec --json`'s events.
pub(super) fn finish(out: &str, paths: &AttemptPaths<'_>) -> AgentReport {
    let _ =
        orcho::core::fs::write_atomic(&paths.artifacts.join("codex-events.jsonl"), out.as_bytes());
    let mut report = AgentReport::default();
    let mut input = 0;
    let mut output = 0;
    let mut thread = None;
    for event in out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
    {
        match event["type"].as_str() {
            Some("thread.started") => thread = event["thread_id"].as_str().map(str::to_owned),
            Some("item.completed") if event["item"]["type"] == "agent_message" => {
                report.result = event["item"]["text"].as_str().map(str::to_owned);
            }
            Some("turn.completed") => {
                input += event["usage"]["input_tokens"].as_u64().unwrap_or(0);
                output += event["usage"]["output_tokens"].as_u64().unwrap_or(0);
            }
            Some("turn.failed") => {
                report.failed = Some(format!(
                    "Codex's turn failed: {}",
                    event["error"]["message"].as_str().unwrap_or("no message")
                ));
            }
            _ => {}
        }
    }
    if input + output > 0 {
        report.cost = Cost::default().with_tokens(Tokens::new(input, output));
    }
    if let Some(rollout) = thread.as_deref().and_then(rollout) {
        keep(&rollout, paths, "transcript.jsonl");
    }
    report
}

/// Codex's rollout of `thread`: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<thread>.jsonl`.
fn rollout(thread: &str) -> Option<Utf8PathBuf> {
    if !thread
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-')
    {
        return None;
    }
    let home = match crate::env_text("CODEX_HOME") {
        Some(dir) => Utf8PathBuf::from(dir),
        None => Utf8PathBuf::from(crate::env_text("HOME")?).join(".codex"),
    };
    let suffix = format!("-{thread}.jsonl");
    find(&home.join("sessions"), &suffix, 4)
}

/// The first file under `dir` (at most `depth` directories down) whose
/// name ends with `suffix`.
pub(super) fn find(dir: &Utf8Path, suffix: &str, depth: usize) -> Option<Utf8PathBuf> {
    for entry in dir.read_dir_utf8().ok()?.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() && depth > 0 {
            if let Some(found) = find(path, suffix, depth - 1) {
                return Some(found);
            }
        } else if entry.file_name().ends_with(suffix) {
            return Some(path.to_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sandbox keeps the machine's `/tmp` out of reach; the attempt's
    /// temporary files go to its own directory.
    #[test]
    fn the_sandbox_writes_temporary_files_in_the_attempts_directory() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8Path::from_path(dir.path()).unwrap();
        let artifacts = root.join("run/attempt");
        let paths = AttemptPaths {
            checkout: &root.join("checkout"),
            artifacts: &artifacts,
            output: &artifacts.join("output.json"),
            store: &root.join("store"),
            run_dir: &root.join("run"),
        };
        let hook = HookCommand {
            exe: "orcho".to_owned(),
            words: ["orcho", "hook", "codex"].map(str::to_owned).into(),
            line: "orcho hook codex".to_owned(),
            guard_stops: true,
            more_events: RUNNER.more_events,
            ask_timeout: std::time::Duration::from_secs(300),
        };
        let spec = RunnerSpec::new(Agent::Codex);
        let launch = launch(Utf8Path::new("codex"), &spec, "task", &hook, &paths).unwrap();
        assert!(
            launch
                .argv
                .iter()
                .any(|a| a == "sandbox_workspace_write.exclude_slash_tmp=true"),
            "{:?}",
            launch.argv
        );
        // A tool call's hook may wait for a person: five minutes, and one
        // more; the others answer at once.
        let hooks: Vec<&String> = launch
            .argv
            .iter()
            .filter(|a| a.starts_with("hooks."))
            .collect();
        assert!(
            hooks
                .iter()
                .any(|a| a.starts_with("hooks.PreToolUse=") && a.contains("timeout=360")),
            "{hooks:?}"
        );
        assert!(
            hooks
                .iter()
                .any(|a| a.starts_with("hooks.SessionStart=") && a.contains("timeout=60")),
            "{hooks:?}"
        );
        let tmp = artifacts.join("tmp");
        assert!(tmp.is_dir());
        assert_eq!(launch.envs, vec![("TMPDIR".to_owned(), tmp.into_string())]);
    }

    #[test]
    fn strings_are_quoted_as_toml_reads_them() {
        assert_eq!(toml_string(r#"a "b" \c"#), r#""a \"b\" \\c""#);
        assert_eq!(toml_string("x\ny\u{1}"), "\"x\\ny\\u0001\"");
    }
}
