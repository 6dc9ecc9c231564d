//! One module per agent whose hooks `orcho hook` answers, behind one
//! table ([`Dialect`]): its event and tool names, the fields its documents
//! carry, how it reads an answer, where its settings live and how they hold
//! a hook. Adding an agent is one module here, its row in [`Agent`], and
//! its tests.

use serde_json::{Map, Value, json};

use super::answer::{Answer, Rendered, Verdict};

mod claude_code;
mod codex;
mod copilot;
mod cursor;
mod gemini;
mod opencode;
mod qwen;

/// The agents whose hooks `orcho hook` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Agent {
    /// Anthropic's Claude Code (`.claude/settings.json`)
    ClaudeCode,
    /// OpenAI's Codex CLI (`.codex/hooks.json`)
    Codex,
    /// Google's Gemini CLI (`.gemini/settings.json`)
    Gemini,
    /// Qwen Code (`.qwen/settings.json`)
    Qwen,
    /// GitHub Copilot CLI (`.github/hooks/orcho.json`)
    Copilot,
    /// Cursor's agent (`.cursor/hooks.json`)
    Cursor,
    /// opencode, through Orcho's plugin (`.opencode/plugins/orcho.js`)
    Opencode,
}

impl Agent {
    /// Every agent, in the order `--help` lists them.
    pub const ALL: [Self; 7] = [
        Self::ClaudeCode,
        Self::Codex,
        Self::Gemini,
        Self::Qwen,
        Self::Copilot,
        Self::Cursor,
        Self::Opencode,
    ];

    /// What Orcho knows of the agent's hooks.
    pub fn dialect(self) -> &'static Dialect {
        match self {
            Self::ClaudeCode => &claude_code::DIALECT,
            Self::Codex => &codex::DIALECT,
            Self::Gemini => &gemini::DIALECT,
            Self::Qwen => &qwen::DIALECT,
            Self::Copilot => &copilot::DIALECT,
            Self::Cursor => &cursor::DIALECT,
            Self::Opencode => &opencode::DIALECT,
        }
    }

    /// The agent as the command line names it.
    pub fn as_str(self) -> &'static str {
        self.dialect().name
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Agent {
    type Err = String;

    /// An agent by the name the command line gives it (`claude-code`).
    fn from_str(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|a| a.as_str() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|a| a.as_str()).collect();
                format!(
                    "`{name}` is not an agent Orcho knows (the agents: {})",
                    names.join(", ")
                )
            })
    }
}

/// One agent's hooks.
pub struct Dialect {
    /// The agent as the command line names it (`orcho hook NAME`).
    pub name: &'static str,
    /// The agent as people write it.
    pub title: &'static str,
    /// The project file `orcho init --agent` installs the hooks in.
    pub settings: &'static str,
    /// How that file holds them.
    pub layout: Layout,
    /// The hooks installed: the agent's event, and its tool matcher.
    pub install: &'static [(&'static str, Option<&'static str>)],
    /// The environment variables the agent names its project directory
    /// with in a hook, most specific first.
    pub project_dir: &'static [&'static str],
    /// What each of the agent's event names is; `None` for a name it does
    /// not document.
    pub event: fn(&str) -> Option<Kind>,
    /// What each of its tools is; `None` for a tool Orcho knows nothing of
    /// (asked about by its own name, as an MCP tool is).
    pub tool: fn(&str) -> Option<Tool>,
    /// Rewrites a document into the common fields (`hook_event_name`,
    /// `session_id`, `cwd`, `tool_name`, `tool_input`, `tool_response`,
    /// `stop_hook_active`, `agent_id`).
    pub normalize: fn(&mut Map<String, Value>),
    /// A shell command's exit status, from its response (and a failure
    /// event's `error`), as the agent tells it.
    pub exit_code: fn(&Value, Option<&str>) -> Option<i32>,
    /// An answer as the agent reads it.
    pub render: fn(&Answer) -> Rendered,
    /// What a person does once so that the hooks run, said by `orcho
    /// init` and by `orcho status` while they never called Orcho.
    pub once: &'static str,
    /// Variables the agent sets in the environment of the commands its
    /// tools run (or of its own process, which they inherit): a command
    /// that sees one runs inside the agent's session.
    pub session_env: &'static [&'static str],
    /// How the agent's process shows on its command line: a program name
    /// (`claude`), or a path fragment of its package
    /// (`@anthropic-ai/claude-code/`) for one started by `node`.
    pub processes: &'static [&'static str],
    /// The agent's settings files in the user's home directory (relative
    /// to it): one of them can switch every hook off, so an agent may not
    /// write them.
    pub user_settings: &'static [&'static str],
    /// More settings files of the project that the agent reads beside
    /// [`settings`](Self::settings), where hooks can be switched off too.
    pub more_settings: &'static [&'static str],
    /// Whether a settings document the agent reads switches Orcho's hooks
    /// off (all hooks, or the `orcho hook` command), and how it says so.
    pub hooks_off: fn(&Value) -> Option<&'static str>,
}

/// What no settings document of an agent says: hooks are never switched
/// off there, as far as Orcho knows.
pub(super) fn never_off(_: &Value) -> Option<&'static str> {
    None
}

/// `disableAllHooks: true` (Claude Code's and Qwen Code's switch).
pub(super) fn disable_all_hooks(settings: &Value) -> Option<&'static str> {
    (settings.get("disableAllHooks") == Some(&Value::Bool(true)))
        .then_some("`disableAllHooks: true`")
}

impl std::fmt::Debug for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dialect").field("name", &self.name).finish()
    }
}

/// How an agent's settings file holds a hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `hooks.EVENT = [{matcher, hooks: [{type: command, command,
    /// timeout}]}]` (Claude Code's, which Codex, Gemini CLI and Qwen Code
    /// share), the timeout in seconds or in milliseconds.
    Groups {
        /// The timeout is in milliseconds.
        millis: bool,
    },
    /// `{version: 1, hooks: {EVENT: [{COMMAND_KEY, matcher, TIMEOUT_KEY}]}}`
    /// (Copilot CLI's and Cursor's), the timeout in seconds.
    Flat {
        /// The key holding the command line.
        command: &'static str,
        /// The key holding the timeout, where the agent reads one.
        timeout: Option<&'static str>,
        /// Each entry says `type: command`.
        typed: bool,
    },
    /// A plugin file of Orcho's, written whole (opencode's).
    Plugin {
        /// The plugin's text.
        text: &'static str,
    },
}

/// What an agent's event is to Orcho.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Before a tool runs.
    PreTool,
    /// The agent is about to ask a person to approve a tool call.
    Permission,
    /// After a tool ran.
    PostTool,
    /// After a tool failed (an event of its own in some agents).
    PostToolFailure,
    /// The agent wants to stop.
    Stop,
    /// A subagent wants to stop.
    SubagentStop,
    /// A session starts.
    SessionStart,
    /// An event the hook has no opinion on.
    Other,
}

/// What a tool does, for the permission it asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// Runs a shell command (`bash`, its `command`).
    Shell,
    /// Applies a patch in Codex's format, held by the first of these keys.
    Patch(&'static [&'static str]),
    /// Works on one file (`write`, `edit`, `read`), named by the first of
    /// these keys.
    File(&'static str, &'static [&'static str]),
    /// Asks with an argument taken as it is (`glob`, `grep`, `webfetch`,
    /// `websearch`), the first of these keys.
    Plain(&'static str, &'static [&'static str]),
    /// Starts a subagent (`dispatch`, its type).
    Dispatch,
    /// The agent's own bookkeeping, which touches nothing outside the
    /// session: asks nothing.
    Bookkeeping,
}

/// Claude Code's tools, which Codex and Copilot CLI's Claude-compatible
/// hooks name too.
pub(super) fn claude_tool(name: &str) -> Option<Tool> {
    Some(match name {
        "Bash" | "PowerShell" | "shell" => Tool::Shell,
        "Write" => Tool::File("write", &["file_path"]),
        "Edit" | "MultiEdit" => Tool::File("edit", &["file_path"]),
        "NotebookEdit" => Tool::File("edit", &["notebook_path"]),
        "Read" => Tool::File("read", &["file_path"]),
        "Glob" => Tool::Plain("glob", &["pattern"]),
        "Grep" => Tool::Plain("grep", &["pattern"]),
        "Task" | "Agent" => Tool::Dispatch,
        "WebFetch" => Tool::Plain("webfetch", &["url"]),
        "WebSearch" => Tool::Plain("websearch", &["query"]),
        "TodoWrite" | "AskUserQuestion" | "ExitPlanMode" | "EnterPlanMode" | "BashOutput" => {
            Tool::Bookkeeping
        }
        _ => return None,
    })
}

/// Claude Code's event names, which Codex, Qwen Code and Copilot CLI's
/// Claude-compatible hooks use too.
pub(super) fn claude_event(name: &str) -> Option<Kind> {
    Some(match name {
        "PreToolUse" => Kind::PreTool,
        "PermissionRequest" => Kind::Permission,
        "PostToolUse" => Kind::PostTool,
        "PostToolUseFailure" => Kind::PostToolFailure,
        "Stop" => Kind::Stop,
        "SubagentStop" => Kind::SubagentStop,
        "SessionStart" => Kind::SessionStart,
        "UserPromptSubmit"
        | "UserPromptExpansion"
        | "Notification"
        | "PreCompact"
        | "PostCompact"
        | "SessionEnd"
        | "SubagentStart"
        | "PostToolBatch"
        | "CwdChanged"
        | "FileChanged"
        | "Interrupt"
        | "PermissionDenied"
        | "StopFailure" => Kind::Other,
        _ => return None,
    })
}

/// Leaves a document as it is (its fields are the common ones).
pub(super) fn as_is(_: &mut Map<String, Value>) {}

/// Moves `from` to `to` in `map` unless `to` is there already.
pub(super) fn rename(map: &mut Map<String, Value>, from: &str, to: &str) {
    if !map.contains_key(to)
        && let Some(value) = map.remove(from)
    {
        map.insert(to.to_owned(), value);
    }
}

/// The exit status a tool's text output states: the last line of the
/// forms `Exit Code: N` (Gemini CLI, Qwen Code), `Exit code N` (Claude
/// Code's failures) or `… exit code N>` (Copilot CLI).
pub(super) fn stated_exit_code(text: &str) -> Option<i32> {
    text.lines().rev().find_map(|line| {
        let line = line.trim();
        let lower = line.to_ascii_lowercase();
        let at = lower.rfind("exit code")?;
        let rest = line[at + "exit code".len()..].trim_start_matches([':', ' ']);
        let digits: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '-')
            .collect();
        digits.parse().ok()
    })
}

/// An exit status field of a response (`exit_code`, `exitCode`,
/// `returnCode`), where the agent gives one.
pub(super) fn exit_field(response: &Value) -> Option<i32> {
    ["exit_code", "exitCode", "returnCode", "exit"]
        .iter()
        .find_map(|k| response.get(k).and_then(Value::as_i64))
        .and_then(|c| i32::try_from(c).ok())
}

/// Nothing on standard output, exit 0.
pub(super) const SILENT: Rendered = Rendered {
    stdout: None,
    stderr: None,
    code: 0,
};

/// One JSON object on standard output, exit 0.
pub(super) fn json_out(value: &Value) -> Rendered {
    Rendered {
        stdout: Some(value.to_string()),
        stderr: None,
        code: 0,
    }
}

/// The message on standard error with exit 2: "refused" to every agent
/// that reads exit codes.
pub(super) fn exit_2(message: &str) -> Rendered {
    Rendered {
        stdout: None,
        stderr: Some(format!("orcho hook: {message}")),
        code: 2,
    }
}

/// The reason as the agent's model reads it.
pub(super) fn reason(verdict: &Verdict) -> String {
    format!("orcho: {}", verdict.reason)
}

/// A refusal of what needs a person's approval, where the agent has no
/// way to ask one from a hook.
pub(super) fn ask_refused(verdict: &Verdict, title: &str) -> String {
    format!(
        "{}; it needs a person's approval, which a {title} hook cannot ask for: run it \
         yourself, or allow it with a rule in orcho.yaml's `permissions`",
        reason(verdict)
    )
}

/// Answers as `decision` and `reason` (Gemini CLI's, and the opencode
/// plugin's): an allow lets the agent's own flow go on, an ask is refused
/// with what a person can do (a headless session would let it through),
/// the context in `context`'s shape.
pub(super) fn decision_render(
    answer: &Answer,
    title: &str,
    context: fn(&str) -> Value,
) -> Rendered {
    use orcho::permissions::PermissionAction;
    match answer {
        Answer::Silent => SILENT,
        Answer::Tool { verdict, .. } => match verdict.action {
            PermissionAction::Allow => SILENT,
            PermissionAction::Ask => json_out(&json!({
                "decision": "deny",
                "reason": ask_refused(verdict, title),
            })),
            _ => json_out(&json!({ "decision": "deny", "reason": reason(verdict) })),
        },
        Answer::BlockStop { reason } => json_out(&json!({ "decision": "block", "reason": reason })),
        Answer::WarnStop { message } => json_out(&json!({ "systemMessage": message })),
        Answer::Context { text } => json_out(&context(text)),
        // Any exit but 0 (and Gemini CLI's 1) refuses, standard error the
        // reason.
        Answer::FailSafe { message } => exit_2(message),
    }
}

/// Session context in Claude Code's shape (`hookSpecificOutput`).
pub(super) fn claude_context(text: &str) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": text,
        }
    })
}

/// A `PreToolUse` decision in Claude Code's shape.
pub(super) fn claude_pre_tool(decision: &str, reason: &str) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    })
}

/// The answer to an approval the agent is about to ask a person for
/// (`PermissionRequest`): an allow or a deny answers it, an ask leaves it
/// to the person (`Some(None)`); `None` for any other event.
pub(super) fn permission_request(
    event: &str,
    action: orcho::permissions::PermissionAction,
    reason: &str,
) -> Option<Option<Value>> {
    use orcho::permissions::PermissionAction;
    if event != "PermissionRequest" {
        return None;
    }
    Some(match action {
        PermissionAction::Allow => Some(json!({
            "hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": { "behavior": "allow" },
            }
        })),
        PermissionAction::Deny => Some(json!({
            "hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": { "behavior": "deny", "message": reason },
            }
        })),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_has_one_row_and_its_own_name() {
        let mut names: Vec<&str> = Agent::ALL.iter().map(|a| a.as_str()).collect();
        for agent in Agent::ALL {
            assert_eq!(agent.as_str().parse::<Agent>(), Ok(agent));
            assert!(!agent.dialect().install.is_empty() || agent == Agent::Opencode);
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Agent::ALL.len());
    }

    #[test]
    fn exit_codes_stated_in_text_are_read() {
        assert_eq!(
            stated_exit_code("Output: x\nExit Code: 3\nPGID: 1"),
            Some(3)
        );
        assert_eq!(stated_exit_code("Exit code 2\nboom"), Some(2));
        assert_eq!(
            stated_exit_code("hi\n<shellId: 0 completed with exit code 127>"),
            Some(127)
        );
        assert_eq!(stated_exit_code("no status here"), None);
        assert_eq!(stated_exit_code("Exit Code: (none)"), None);
    }
}
