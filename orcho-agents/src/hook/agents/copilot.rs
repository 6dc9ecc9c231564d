//! GitHub Copilot CLI: a `version: 1` file in `.github/hooks/` whose
//! entries hold the command under `bash`, timeouts in seconds
//! (`timeoutSec`). Orcho installs Claude Code's event names, for which
//! Copilot CLI sends Claude's snake_case document and tool names and reads
//! Claude's answers; its own camelCase documents are read too. A shell
//! command's exit status is only the `exit code N` its result states.

use orcho::permissions::PermissionAction;
use serde_json::{Map, Value, json};

use super::{
    Dialect, Kind, Layout, SILENT, Tool, ask_refused, claude_event, claude_pre_tool, claude_tool,
    json_out, reason, rename, stated_exit_code,
};
use crate::hook::answer::{Answer, Rendered};

pub(super) const DIALECT: Dialect = Dialect {
    name: "copilot",
    title: "Copilot CLI",
    settings: ".github/hooks/orcho.json",
    layout: Layout::Flat {
        command: "bash",
        timeout: Some("timeoutSec"),
        typed: true,
    },
    install: &[
        ("SessionStart", None),
        ("PreToolUse", None),
        ("PostToolUse", Some("Bash")),
        ("Stop", None),
        ("SubagentStop", None),
    ],
    project_dir: &["COPILOT_PROJECT_DIR"],
    event,
    tool,
    normalize,
    exit_code,
    render,
    once: "Copilot CLI loads a repository's `.github/hooks` only in a folder you trusted (it \
           asks when it starts there; `trusted_folders` in ~/.copilot/config.json for `copilot \
           -p`)",
    session_env: &["COPILOT_CLI_BINARY_VERSION"],
    processes: &["copilot", "@github/copilot"],
    user_settings: &[".copilot/config.json"],
    more_settings: &[
        ".github/copilot/settings.json",
        ".github/copilot/settings.local.json",
    ],
    hooks_off: super::never_off,
};

fn event(name: &str) -> Option<Kind> {
    if let Some(kind) = claude_event(name) {
        return Some(kind);
    }
    Some(match name {
        "preToolUse" => Kind::PreTool,
        "permissionRequest" => Kind::Permission,
        "postToolUse" => Kind::PostTool,
        "postToolUseFailure" => Kind::PostToolFailure,
        "agentStop" => Kind::Stop,
        "subagentStop" => Kind::SubagentStop,
        "sessionStart" => Kind::SessionStart,
        "sessionEnd"
        | "userPromptSubmitted"
        | "userPromptTransformed"
        | "subagentStart"
        | "errorOccurred"
        | "preCompact"
        | "notification" => Kind::Other,
        _ => return None,
    })
}

fn tool(name: &str) -> Option<Tool> {
    match name {
        "bash" | "powershell" => Some(Tool::Shell),
        "create" => Some(Tool::File("write", &["path", "file_path"])),
        "edit" | "str_replace_editor" => Some(Tool::File("edit", &["path", "file_path"])),
        "view" => Some(Tool::File("read", &["path", "file_path"])),
        // Keystrokes to a running shell: a command as much as `bash`'s.
        "write_bash" => Some(Tool::Plain("bash", &["input", "command"])),
        "read_bash" | "stop_bash" | "list_bash" | "report_intent" | "update_todo" => {
            Some(Tool::Bookkeeping)
        }
        other => claude_tool(other),
    }
}

/// Copilot CLI's own camelCase fields as the common ones.
fn normalize(map: &mut Map<String, Value>) {
    rename(map, "sessionId", "session_id");
    rename(map, "toolName", "tool_name");
    rename(map, "toolArgs", "tool_input");
    rename(map, "toolResult", "tool_response");
    rename(map, "tool_result", "tool_response");
    // Its camelCase `toolArgs` may come as a JSON text.
    if let Some(Value::String(text)) = map.get("tool_input")
        && let Ok(value @ Value::Object(_)) = serde_json::from_str::<Value>(text)
    {
        map.insert("tool_input".to_owned(), value);
    }
}

/// `<shellId: N completed with exit code K>` in the result text.
fn exit_code(response: &Value, failure: Option<&str>) -> Option<i32> {
    ["text_result_for_llm", "textResultForLlm"]
        .iter()
        .find_map(|k| response.get(k).and_then(Value::as_str))
        .or(failure)
        .and_then(stated_exit_code)
}

fn render(answer: &Answer) -> Rendered {
    // Both its own and Claude's field names, so that one answer works
    // whichever names the hook was installed under.
    let tool = |decision: &str, reason: &str| {
        let mut value = claude_pre_tool(decision, reason);
        value["permissionDecision"] = json!(decision);
        value["permissionDecisionReason"] = json!(reason);
        value
    };
    match answer {
        Answer::Silent => SILENT,
        Answer::Tool { event, verdict } => {
            if let Some(value) = super::permission_request(event, verdict.action, &reason(verdict))
            {
                return value.map_or(SILENT, |v| json_out(&v));
            }
            match verdict.action {
                PermissionAction::Allow => SILENT,
                // `--allow-all-tools` would let an ask through.
                PermissionAction::Ask => {
                    json_out(&tool("deny", &ask_refused(verdict, "Copilot CLI")))
                }
                _ => json_out(&tool("deny", &reason(verdict))),
            }
        }
        Answer::BlockStop { reason } => json_out(&json!({ "decision": "block", "reason": reason })),
        Answer::WarnStop { message } => json_out(&json!({ "systemMessage": message })),
        Answer::Context { text } => {
            let mut value = super::claude_context(text);
            value["additionalContext"] = json!(text);
            json_out(&value)
        }
        // Exit 2 refuses only a tool call (a stop goes on), and a timeout
        // lets it through: a refusal that every event reads, exit 0.
        Answer::FailSafe { message } => {
            let message = format!("orcho hook: {message}");
            let mut value = tool("deny", &message);
            value["decision"] = json!("block");
            value["reason"] = json!(message);
            json_out(&value)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_case_documents_read_as_the_common_ones() {
        let mut map = json!({"sessionId": "s", "toolName": "bash", "toolArgs": "{\"command\":\"ls\"}",
            "toolResult": {"resultType": "success", "textResultForLlm": "x\n<shellId: 0 completed with exit code 3>"}})
        .as_object()
        .cloned()
        .unwrap();
        normalize(&mut map);
        assert_eq!(map["session_id"], "s");
        assert_eq!(map["tool_input"]["command"], "ls");
        assert_eq!(exit_code(&map["tool_response"], None), Some(3));
        assert_eq!(event("agentStop"), Some(Kind::Stop));
        assert_eq!(event("Stop"), Some(Kind::Stop));
        assert_eq!(event("bogus"), None);
    }

    #[test]
    fn a_fail_safe_refuses_a_tool_call_and_a_stop_alike() {
        let out = render(&Answer::FailSafe {
            message: "m".to_owned(),
        });
        assert_eq!(out.code, 0);
        let value: Value = serde_json::from_str(&out.stdout.unwrap()).unwrap();
        assert_eq!(value["permissionDecision"], "deny");
        assert_eq!(value["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(value["decision"], "block");
    }
}
