//! Qwen Code: `.qwen/settings.json` in Claude Code's layout and event
//! names (timeouts in milliseconds), Gemini CLI's tool names; a failing
//! shell command comes as `PostToolUseFailure`, its status as an `Exit
//! Code: N` line.

use serde_json::Value;

use super::{Dialect, Layout, Tool, as_is, claude_event, stated_exit_code};

pub(super) const DIALECT: Dialect = Dialect {
    name: "qwen",
    title: "Qwen Code",
    settings: ".qwen/settings.json",
    layout: Layout::Groups { millis: true },
    install: &[
        ("SessionStart", None),
        ("PreToolUse", Some("*")),
        ("PostToolUse", Some("^run_shell_command$")),
        ("PostToolUseFailure", Some("^run_shell_command$")),
        ("Stop", None),
        ("SubagentStop", None),
    ],
    project_dir: &["QWEN_PROJECT_DIR"],
    event: claude_event,
    tool,
    normalize: as_is,
    exit_code,
    // Qwen Code reads Claude Code's answers, and refuses an ask where
    // nobody watches, as Claude Code does.
    render: super::claude_code::render,
    once: "Qwen Code runs the hooks in `.qwen/settings.json` as they are (`\"disableAllHooks\": \
           true` turns them off); `orcho` must be on its PATH",
    session_env: &["QWEN_CODE"],
    processes: &["qwen", "@qwen-code/qwen-code"],
    user_settings: &[".qwen/settings.json"],
    more_settings: &[],
    hooks_off: super::disable_all_hooks,
};

fn tool(name: &str) -> Option<Tool> {
    match name {
        "task" | "agent" => Some(Tool::Dispatch),
        other => super::gemini::tool(other),
    }
}

fn exit_code(response: &Value, failure: Option<&str>) -> Option<i32> {
    response
        .get("llmContent")
        .and_then(Value::as_str)
        .or(failure)
        .and_then(stated_exit_code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_exit_status_is_read_from_the_output_or_the_failure() {
        assert_eq!(
            exit_code(
                &Value::Null,
                Some("Command: x\nOutput: hi\nError: (none)\nExit Code: 3\nSignal: (none)")
            ),
            Some(3)
        );
        assert_eq!(
            exit_code(&json!({"llmContent": "Command: echo\nExit Code: 0"}), None),
            Some(0)
        );
    }
}
