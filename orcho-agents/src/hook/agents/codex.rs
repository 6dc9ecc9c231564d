//! Codex: `.codex/hooks.json`, Claude Code's event names and layout, its
//! own `apply_patch`; its `PreToolUse` can only deny, and its
//! `PermissionRequest` answers the approval a person would be asked for.

use orcho::permissions::PermissionAction;
use serde_json::{Value, json};

use super::{
    Dialect, Layout, SILENT, Tool, as_is, ask_refused, claude_context, claude_event,
    claude_pre_tool, claude_tool, exit_2, exit_field, json_out, reason,
};
use crate::hook::answer::{Answer, Rendered};

pub(super) const DIALECT: Dialect = Dialect {
    name: "codex",
    title: "Codex",
    settings: ".codex/hooks.json",
    layout: Layout::Groups { millis: false },
    install: &[
        ("SessionStart", None),
        ("PreToolUse", Some("*")),
        ("PermissionRequest", Some("*")),
        ("PostToolUse", Some("Bash")),
        ("Stop", None),
        ("SubagentStop", None),
    ],
    project_dir: &[],
    event: claude_event,
    tool,
    normalize: as_is,
    exit_code,
    render,
    once: "Codex runs project hooks only once trusted: review them with `/hooks`, and run \
           `codex exec` with `--trust --dangerously-bypass-hook-trust` (it skips untrusted \
           hooks without a word; older releases also need `[features] codex_hooks = true` in \
           config.toml)",
    session_env: &[
        "CODEX_THREAD_ID",
        "CODEX_SANDBOX",
        "CODEX_SANDBOX_NETWORK_DISABLED",
    ],
    processes: &["codex", "@openai/codex"],
    user_settings: &[".codex/config.toml", ".codex/hooks.json"],
    more_settings: &[".codex/config.toml"],
    hooks_off: super::never_off,
};

fn tool(name: &str) -> Option<Tool> {
    match name {
        "apply_patch" => Some(Tool::Patch(&["command", "patch"])),
        other => claude_tool(other),
    }
}

/// Codex's response is the output alone: unknown unless it says.
fn exit_code(response: &Value, _: Option<&str>) -> Option<i32> {
    exit_field(response)
}

fn render(answer: &Answer) -> Rendered {
    match answer {
        Answer::Tool { event, verdict } => {
            let reason = reason(verdict);
            if let Some(value) = super::permission_request(event, verdict.action, &reason) {
                return value.map_or(SILENT, |v| json_out(&v));
            }
            // `PreToolUse` can only deny (an allow or ask there fails
            // open), so an ask is refused with what a person can do.
            match verdict.action {
                PermissionAction::Allow => SILENT,
                PermissionAction::Ask => {
                    json_out(&claude_pre_tool("deny", &ask_refused(verdict, "Codex")))
                }
                _ => json_out(&claude_pre_tool("deny", &reason)),
            }
        }
        Answer::Context { text } => json_out(&claude_context(text)),
        Answer::BlockStop { reason } => json_out(&json!({ "decision": "block", "reason": reason })),
        Answer::WarnStop { message } => json_out(&json!({ "systemMessage": message })),
        Answer::Silent => SILENT,
        Answer::FailSafe { message } => exit_2(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook::answer::Verdict;

    #[test]
    fn pre_tool_use_never_allows_or_asks() {
        let pre = |action| {
            render(&Answer::Tool {
                event: "PreToolUse",
                verdict: Verdict {
                    action,
                    reason: "r".to_owned(),
                },
            })
        };
        assert_eq!(pre(PermissionAction::Allow).stdout, None);
        let ask: Value = serde_json::from_str(&pre(PermissionAction::Ask).stdout.unwrap()).unwrap();
        assert_eq!(ask["hookSpecificOutput"]["permissionDecision"], "deny");
        let fail = render(&Answer::FailSafe {
            message: "m".to_owned(),
        });
        assert_eq!(
            (fail.code, fail.stderr.as_deref()),
            (2, Some("orcho hook: m"))
        );
    }
}
