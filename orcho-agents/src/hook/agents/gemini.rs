//! Gemini CLI: `.gemini/settings.json` with its own event names
//! (`BeforeTool`, `AfterTool`, `AfterAgent`), timeouts in milliseconds,
//! and answers as `decision`/`reason` (`AfterAgent`'s `block` sends the
//! reason as the next prompt); a shell command's exit status is only the
//! `Exit Code: N` line of its output, there when it is not 0.

use serde_json::Value;

use super::{Dialect, Kind, Layout, Tool, as_is, claude_context, stated_exit_code};
use crate::hook::answer::{Answer, Rendered};

pub(super) const DIALECT: Dialect = Dialect {
    name: "gemini",
    title: "Gemini CLI",
    settings: ".gemini/settings.json",
    layout: Layout::Groups { millis: true },
    install: &[
        ("SessionStart", None),
        ("BeforeTool", Some("*")),
        ("AfterTool", Some("run_shell_command")),
        ("AfterAgent", None),
    ],
    project_dir: &["GEMINI_PROJECT_DIR"],
    event,
    tool,
    normalize: as_is,
    exit_code,
    render,
    once: "Gemini CLI runs project hooks only in a trusted folder (it asks when it starts \
           there; `GEMINI_CLI_TRUST_WORKSPACE=true` for `gemini -p`), and lists them with \
           `/hooks`",
    session_env: &["GEMINI_CLI"],
    processes: &["gemini", "@google/gemini-cli"],
    user_settings: &[".gemini/settings.json"],
    more_settings: &[],
    hooks_off: gemini_hooks_off,
};

pub(super) fn event(name: &str) -> Option<Kind> {
    Some(match name {
        "BeforeTool" => Kind::PreTool,
        "AfterTool" => Kind::PostTool,
        "AfterAgent" => Kind::Stop,
        "SessionStart" => Kind::SessionStart,
        "BeforeAgent"
        | "SessionEnd"
        | "Notification"
        | "PreCompress"
        | "BeforeModel"
        | "AfterModel"
        | "BeforeToolSelection" => Kind::Other,
        _ => return None,
    })
}

/// Gemini CLI's built-in tools (Qwen Code's are the same, mostly).
pub(super) fn tool(name: &str) -> Option<Tool> {
    Some(match name {
        "run_shell_command" => Tool::Shell,
        "write_file" => Tool::File("write", &["file_path", "absolute_path", "path"]),
        "replace" | "edit" => Tool::File("edit", &["file_path", "absolute_path", "path"]),
        "read_file" => Tool::File("read", &["file_path", "absolute_path", "path"]),
        "glob" => Tool::Plain("glob", &["pattern"]),
        "search_file_content" | "grep_search" | "grep" => Tool::Plain("grep", &["pattern"]),
        "web_fetch" => Tool::Plain("webfetch", &["url", "prompt"]),
        "google_web_search" | "web_search" => Tool::Plain("websearch", &["query"]),
        "save_memory" | "write_todos" | "todo_write" | "exit_plan_mode" | "ask_user" => {
            Tool::Bookkeeping
        }
        _ => return None,
    })
}

/// `Exit Code: N` in the output the model reads, present only when N is
/// not 0; a spawn error is `error`.
fn exit_code(response: &Value, failure: Option<&str>) -> Option<i32> {
    let text = response
        .get("llmContent")
        .and_then(Value::as_str)
        .or(failure)?;
    if let Some(code) = stated_exit_code(text) {
        return Some(code);
    }
    response
        .get("error")
        .is_none_or(Value::is_null)
        .then_some(0)
}

fn render(answer: &Answer) -> Rendered {
    super::decision_render(answer, "Gemini CLI", claude_context)
}

/// Gemini CLI's `hooksConfig.enabled: false` (every hook off), or an
/// `orcho hook` command in `hooksConfig.disabled`.
fn gemini_hooks_off(settings: &Value) -> Option<&'static str> {
    let config = settings.get("hooksConfig")?;
    if config.get("enabled") == Some(&Value::Bool(false)) {
        return Some("`hooksConfig.enabled: false`");
    }
    config
        .get("disabled")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .any(|hook| hook.contains("orcho"))
        .then_some("`orcho hook` in `hooksConfig.disabled`")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_exit_status_is_read_from_the_output() {
        let out = |text: &str| json!({ "llmContent": text, "returnDisplay": "x" });
        assert_eq!(
            exit_code(
                &out(
                    "<untrusted_context>\nOutput: hi\nExit Code: 3\nProcess Group PGID: 1\n</untrusted_context>"
                ),
                None
            ),
            Some(3)
        );
        assert_eq!(exit_code(&out("Output: hi"), None), Some(0));
        assert_eq!(
            exit_code(
                &json!({"llmContent": "spawn failed", "error": {"message": "x"}}),
                None
            ),
            None
        );
        assert_eq!(exit_code(&Value::Null, None), None);
    }
}
