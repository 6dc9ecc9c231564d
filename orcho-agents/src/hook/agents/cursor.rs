//! Cursor: `.cursor/hooks.json` (`version: 1`, one `command` per entry).
//! Shell commands, MCP calls and file reads have `before…` events of their
//! own; newer releases add `preToolUse` for every tool. A refusal is
//! `permission: deny` (and exit 2), a refused stop a `followup_message`
//! Cursor sends as the next prompt. The agent cannot be driven without
//! Cursor's service, so this follows its documented shapes.

use orcho::permissions::PermissionAction;
use serde_json::{Map, Value, json};

use super::{Dialect, Kind, Layout, SILENT, Tool, claude_tool, json_out, reason, rename};
use crate::hook::answer::{Answer, Rendered};

pub(super) const DIALECT: Dialect = Dialect {
    name: "cursor",
    title: "Cursor",
    settings: ".cursor/hooks.json",
    layout: Layout::Flat {
        command: "command",
        timeout: Some("timeout"),
        typed: false,
    },
    install: &[
        ("sessionStart", None),
        ("beforeShellExecution", None),
        ("beforeMCPExecution", None),
        ("beforeReadFile", None),
        ("preToolUse", None),
        ("afterShellExecution", None),
        ("stop", None),
    ],
    project_dir: &["CURSOR_PROJECT_DIR"],
    event,
    tool,
    normalize,
    exit_code,
    render,
    once: "Cursor runs a project's `.cursor/hooks.json` only in a trusted workspace; its Hooks \
           settings list them",
    session_env: &["CURSOR_AGENT"],
    processes: &["cursor-agent"],
    user_settings: &[".cursor/hooks.json", ".cursor/cli-config.json"],
    more_settings: &[],
    hooks_off: super::never_off,
};

fn event(name: &str) -> Option<Kind> {
    Some(match name {
        "beforeShellExecution" | "beforeMCPExecution" | "beforeReadFile" | "preToolUse" => {
            Kind::PreTool
        }
        "afterShellExecution" | "postToolUse" => Kind::PostTool,
        "postToolUseFailure" => Kind::PostToolFailure,
        "stop" => Kind::Stop,
        "subagentStop" => Kind::SubagentStop,
        "sessionStart" => Kind::SessionStart,
        "stopAborted" | "afterFileEdit" | "beforeSubmitPrompt" | "afterAgentResponse"
        | "afterAgentThought" | "afterMCPExecution" | "sessionEnd" | "subagentStart"
        | "preCompact" | "beforeTabFileRead" | "afterTabFileEdit" => Kind::Other,
        _ => return None,
    })
}

fn tool(name: &str) -> Option<Tool> {
    match name {
        "Shell" | "Terminal" => Some(Tool::Shell),
        "Delete" => Some(Tool::File("write", &["file_path", "path"])),
        other => claude_tool(other),
    }
}

/// Each event's own fields as a tool call's, the conversation as the
/// session, the first workspace root as the directory; a stop the user
/// aborted (or that ended in an error) is not the agent's to be refused.
fn normalize(map: &mut Map<String, Value>) {
    rename(map, "conversation_id", "session_id");
    if !map.contains_key("cwd")
        && let Some(root) = map
            .get("workspace_roots")
            .and_then(Value::as_array)
            .and_then(|roots| roots.first())
            .cloned()
    {
        map.insert("cwd".to_owned(), root);
    }
    let name = map
        .get("hook_event_name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let field = |map: &Map<String, Value>, key: &str| map.get(key).cloned().unwrap_or(Value::Null);
    match name.as_str() {
        "beforeShellExecution" | "afterShellExecution" => {
            let command = field(map, "command");
            let output = field(map, "output");
            map.insert("tool_name".to_owned(), json!("Shell"));
            map.insert("tool_input".to_owned(), json!({ "command": command }));
            map.insert("tool_response".to_owned(), json!({ "output": output }));
        }
        "beforeReadFile" => {
            let path = field(map, "file_path");
            map.insert("tool_name".to_owned(), json!("Read"));
            map.insert("tool_input".to_owned(), json!({ "file_path": path }));
        }
        "beforeMCPExecution" => {
            let tool = map
                .get("tool_name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            map.insert("tool_name".to_owned(), json!(format!("mcp__{tool}")));
        }
        "stop" => {
            let status = map.get("status").and_then(Value::as_str);
            if status.is_some_and(|s| s != "completed") {
                map.insert("hook_event_name".to_owned(), json!("stopAborted"));
            }
            let loops = map.get("loop_count").and_then(Value::as_u64).unwrap_or(0);
            map.insert("stop_hook_active".to_owned(), json!(loops > 0));
        }
        _ => {}
    }
}

/// `afterShellExecution` carries no exit status.
fn exit_code(response: &Value, _: Option<&str>) -> Option<i32> {
    super::exit_field(response)
}

fn render(answer: &Answer) -> Rendered {
    let refuse = |message: &str| {
        json!({
            "permission": "deny",
            "user_message": message,
            "agent_message": message,
        })
    };
    match answer {
        Answer::Silent => SILENT,
        Answer::Tool { verdict, .. } => {
            let reason = reason(verdict);
            match verdict.action {
                PermissionAction::Allow => json_out(&json!({ "permission": "allow" })),
                PermissionAction::Ask => json_out(&json!({
                    "permission": "ask",
                    "user_message": reason,
                    "agent_message": format!("{reason}: a person must approve it"),
                })),
                _ => Rendered {
                    code: 2,
                    ..json_out(&refuse(&reason))
                },
            }
        }
        Answer::BlockStop { reason } => json_out(&json!({ "followup_message": reason })),
        Answer::WarnStop { message } => json_out(&json!({ "user_message": message })),
        Answer::Context { text } => json_out(&json!({ "additional_context": text })),
        Answer::FailSafe { message } => {
            let message = format!("orcho hook: {message}");
            let mut value = refuse(&message);
            value["followup_message"] = json!(message);
            Rendered {
                stdout: Some(value.to_string()),
                stderr: Some(message),
                code: 2,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_read_as_tool_calls_and_stops() {
        let mut map = json!({"hook_event_name": "beforeShellExecution", "conversation_id": "c",
            "workspace_roots": ["/repo"], "command": "rm -rf src"})
        .as_object()
        .cloned()
        .unwrap();
        normalize(&mut map);
        assert_eq!(
            (
                &map["tool_name"],
                &map["tool_input"]["command"],
                &map["cwd"]
            ),
            (&json!("Shell"), &json!("rm -rf src"), &json!("/repo"))
        );
        let mut stop = json!({"hook_event_name": "stop", "status": "aborted", "loop_count": 2})
            .as_object()
            .cloned()
            .unwrap();
        normalize(&mut stop);
        assert_eq!(stop["hook_event_name"], "stopAborted");
        assert_eq!(stop["stop_hook_active"], true);
    }
}
