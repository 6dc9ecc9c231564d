//! opencode, through Orcho's plugin (`assets/opencode/orcho.js`, also at
//! `integrations/opencode/orcho.js`,
//! which `orcho init --agent opencode` writes to
//! `.opencode/plugins/orcho.js`). The plugin sends documents with Claude
//! Code's event names and opencode's tool names and arguments, and reads
//! one JSON object back: `decision` (`deny` refuses a tool call, `block`
//! refuses a stop), `reason`, `context` (for the system prompt),
//! `systemMessage`. Any exit but 0 is a refusal.

use serde_json::json;

use super::{Dialect, Layout, Tool, as_is, claude_event, exit_field};
use crate::hook::answer::{Answer, Rendered};

/// The plugin, as this repository ships it.
pub(super) const PLUGIN: &str = include_str!("../../../assets/opencode/orcho.js");

pub(super) const DIALECT: Dialect = Dialect {
    name: "opencode",
    title: "opencode",
    settings: ".opencode/plugins/orcho.js",
    layout: Layout::Plugin { text: PLUGIN },
    install: &[
        ("SessionStart", None),
        ("PreToolUse", None),
        ("PostToolUse", Some("bash")),
        ("Stop", None),
    ],
    project_dir: &[],
    event: claude_event,
    tool,
    normalize: as_is,
    exit_code: |response, _| exit_field(response),
    render,
    once: "opencode loads `.opencode/plugins/orcho.js` when it starts in this checkout (the \
           first time it installs its plugin package there, from the npm registry); an \
           unproven stop becomes a new prompt, which `opencode run` exits before answering \
           (docs/agents.md)",
    session_env: &[],
    processes: &["opencode", "opencode-ai/"],
    user_settings: &[".config/opencode/opencode.json", ".config/opencode/plugins"],
    more_settings: &[".opencode/opencode.json", "opencode.json"],
    hooks_off: super::never_off,
};

fn tool(name: &str) -> Option<Tool> {
    Some(match name {
        "bash" => Tool::Shell,
        "write" => Tool::File("write", &["filePath", "file_path"]),
        "edit" | "multiedit" => Tool::File("edit", &["filePath", "file_path"]),
        "read" => Tool::File("read", &["filePath", "file_path"]),
        "patch" | "apply_patch" => Tool::Patch(&["patchText", "patch", "command"]),
        "glob" | "list" => Tool::Plain("glob", &["pattern", "path"]),
        "grep" => Tool::Plain("grep", &["pattern"]),
        "webfetch" => Tool::Plain("webfetch", &["url"]),
        "websearch" => Tool::Plain("websearch", &["query"]),
        "task" => Tool::Dispatch,
        "todowrite" | "todoread" | "skill" | "question" => Tool::Bookkeeping,
        _ => return None,
    })
}

fn render(answer: &Answer) -> Rendered {
    super::decision_render(answer, "opencode", |text| json!({ "context": text }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_calls_this_agents_hook() {
        assert!(PLUGIN.contains(r#"[ORCHO, "hook", "opencode"]"#));
        // Where Orcho runs opencode, the whole hook command line it gives.
        assert!(PLUGIN.contains("process.env.ORCHO_HOOK"));
        for event in ["PreToolUse", "PostToolUse", "SessionStart", "Stop"] {
            assert!(
                PLUGIN.contains(&format!("hook_event_name: \"{event}\"")),
                "{event}"
            );
        }
    }
}
