//! The document an agent passes a hook on standard input, and the
//! permission requests a tool call makes.
//!
//! An agent passes one JSON object whose `hook_event_name` says the event;
//! its module in `agents` names its events and tools and rewrites its own
//! fields into the common snake_case ones Claude Code uses. Fields this
//! module does not need are ignored, so a newer agent's additions never
//! break the hook; a field it needs that is missing or of the wrong type is
//! an error, which the hook answers by failing safe.

use camino::{Utf8Path, Utf8PathBuf};
use serde_json::Value;

use super::{Agent, Kind, Tool};

/// The largest document read (a tool call carries the whole file it
/// writes).
pub const MAX_DOCUMENT_BYTES: usize = 16 << 20;

/// One hook call.
#[derive(Debug, Clone, PartialEq)]
pub struct HookDoc {
    /// What happened.
    pub event: Event,
    /// The agent's session (`session_id`), when it says.
    pub session_id: Option<String>,
    /// The agent's working directory (`cwd`), when it says.
    pub cwd: Option<Utf8PathBuf>,
    /// The subagent (`agent_id`), when the document comes from one.
    pub agent_id: Option<String>,
}

/// The events the hook acts on.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Before a tool runs (`PreToolUse`).
    PreToolUse {
        /// The tool (`tool_name`).
        tool: String,
        /// Its input (`tool_input`).
        input: Value,
    },
    /// Codex asks for an approval (`PermissionRequest`).
    PermissionRequest {
        /// The tool.
        tool: String,
        /// Its input.
        input: Value,
    },
    /// After a tool ran (`PostToolUse`), or failed (Claude Code's
    /// `PostToolUseFailure`, sent instead for a failing shell command).
    PostToolUse {
        /// The tool.
        tool: String,
        /// Its input.
        input: Value,
        /// What it returned (`tool_response`), if anything.
        response: Value,
        /// `PostToolUseFailure`'s `error` (`Exit code 2\n…`); `None` for a
        /// `PostToolUse`.
        failure: Option<String>,
    },
    /// The agent (or a subagent) wants to stop.
    Stop {
        /// `SubagentStop` rather than `Stop`.
        subagent: bool,
        /// `stop_hook_active`: the agent goes on because a stop hook
        /// blocked it before.
        active: bool,
    },
    /// A session starts (`SessionStart`).
    SessionStart,
    /// An event of the agent's that the hook has no opinion on
    /// (`UserPromptSubmit`, `Notification`, …).
    Other(String),
}

impl Event {
    /// The event's name as the agent spells it.
    pub fn name(&self) -> &str {
        match self {
            Self::PreToolUse { .. } => "PreToolUse",
            Self::PermissionRequest { .. } => "PermissionRequest",
            Self::PostToolUse { failure: None, .. } => "PostToolUse",
            Self::PostToolUse {
                failure: Some(_), ..
            } => "PostToolUseFailure",
            Self::Stop {
                subagent: false, ..
            } => "Stop",
            Self::Stop { subagent: true, .. } => "SubagentStop",
            Self::SessionStart => "SessionStart",
            Self::Other(name) => name,
        }
    }
}

/// A document the hook cannot act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadDocument(pub String);

impl HookDoc {
    /// Parses `agent`'s hook document.
    ///
    /// # Errors
    ///
    /// Not JSON, not an object, no `hook_event_name`, an event the agent
    /// does not document, or a field the event needs that is missing.
    pub fn parse(agent: Agent, bytes: &[u8]) -> Result<Self, BadDocument> {
        let dialect = agent.dialect();
        if bytes.len() > MAX_DOCUMENT_BYTES {
            return Err(BadDocument(format!(
                "the hook document is {} bytes, more than the {MAX_DOCUMENT_BYTES} read",
                bytes.len()
            )));
        }
        let value: Value = serde_json::from_slice(bytes).map_err(|e| {
            BadDocument(format!(
                "the hook document on standard input is not JSON: {e}"
            ))
        })?;
        let Value::Object(mut map) = value else {
            return Err(BadDocument(
                "the hook document on standard input is not a JSON object".to_owned(),
            ));
        };
        (dialect.normalize)(&mut map);
        let text = |key: &str| map.get(key).and_then(Value::as_str).map(str::to_owned);
        let Some(name) = text("hook_event_name") else {
            return Err(BadDocument(
                "the hook document has no `hook_event_name` string".to_owned(),
            ));
        };
        let Some(kind) = (dialect.event)(&name) else {
            return Err(BadDocument(format!(
                "`{}` is not a hook event {} documents",
                name.escape_debug(),
                dialect.title
            )));
        };
        let tool = || {
            text("tool_name").ok_or_else(|| {
                BadDocument(format!("the `{name}` document has no `tool_name` string"))
            })
        };
        let input = || match map.get("tool_input") {
            // An MCP call's input may come as JSON text (Cursor's).
            Some(Value::String(text)) => serde_json::from_str(text).unwrap_or(Value::Null),
            Some(value) => value.clone(),
            None => Value::Null,
        };
        let event = match kind {
            Kind::PreTool => Event::PreToolUse {
                tool: tool()?,
                input: input(),
            },
            Kind::Permission => Event::PermissionRequest {
                tool: tool()?,
                input: input(),
            },
            Kind::PostTool | Kind::PostToolFailure => Event::PostToolUse {
                tool: tool()?,
                input: input(),
                response: map.get("tool_response").cloned().unwrap_or(Value::Null),
                failure: (kind == Kind::PostToolFailure).then(|| text("error").unwrap_or_default()),
            },
            Kind::Stop | Kind::SubagentStop => Event::Stop {
                subagent: kind == Kind::SubagentStop,
                active: match map.get("stop_hook_active") {
                    None | Some(Value::Null) => false,
                    Some(Value::Bool(b)) => *b,
                    Some(other) => {
                        return Err(BadDocument(format!(
                            "`stop_hook_active` is {other}, not true or false"
                        )));
                    }
                },
            },
            Kind::SessionStart => Event::SessionStart,
            Kind::Other => Event::Other(name.clone()),
        };
        Ok(Self {
            event,
            session_id: text("session_id"),
            cwd: text("cwd").map(Utf8PathBuf::from),
            agent_id: text("agent_id"),
        })
    }
}

/// What a tool call asks permission for: `(permission, argument)` pairs,
/// every one of which must be allowed; empty for the agent's own
/// bookkeeping tools, which touch nothing outside the session.
///
/// # Errors
///
/// An input that lacks what the tool needs (a shell tool without its
/// command, a file tool without its path).
pub fn requests(
    agent: Agent,
    tool: &str,
    input: &Value,
    checkout: &Utf8Path,
    cwd: &Utf8Path,
) -> Result<Vec<(String, String)>, BadDocument> {
    let first = |keys: &[&str]| -> Result<String, BadDocument> {
        keys.iter()
            .find_map(|k| input.get(k).and_then(Value::as_str))
            .map(str::to_owned)
            .ok_or_else(|| {
                let mut named = format!("`tool_input.{}`", keys.first().unwrap_or(&""));
                if keys.len() > 1 {
                    let others: Vec<String> = keys[1..].iter().map(|k| format!("`{k}`")).collect();
                    named = format!("{named} (or {})", others.join(", "));
                }
                BadDocument(format!("the `{tool}` call has no {named} string"))
            })
    };
    let one = |permission: &str, argument: String| Ok(vec![(permission.to_owned(), argument)]);
    match (agent.dialect().tool)(tool) {
        Some(Tool::Shell) => one("bash", shell_command(tool, input)?),
        Some(Tool::Patch(keys)) => Ok(patch_requests(&first(keys)?, checkout, cwd)),
        Some(Tool::File(permission, keys)) => {
            one(permission, relative(&first(keys)?, checkout, cwd))
        }
        Some(Tool::Plain(permission, keys)) => {
            let mut asked = vec![(permission.to_owned(), first(keys)?)];
            // Where a search looks is read too (`Grep`'s `path`).
            if matches!(permission, "grep" | "glob") {
                asked.extend(read_paths(input, checkout, cwd));
            }
            Ok(asked)
        }
        Some(Tool::Dispatch) => one(
            "dispatch",
            ["subagent_type", "agent", "subagent"]
                .iter()
                .find_map(|k| input.get(k).and_then(Value::as_str))
                .unwrap_or_default()
                .to_owned(),
        ),
        Some(Tool::Bookkeeping) => Ok(Vec::new()),
        // A tool Orcho does not know is asked about by its name, and every
        // path it names is read.
        None => {
            let mut asked = vec![(permission_name(tool), input.to_string())];
            asked.extend(read_paths(input, checkout, cwd));
            Ok(asked)
        }
    }
}

/// The paths a tool's input names (`path`, `dir_path`, `file_path`,
/// `filePath`, `absolute_path`, and lists under `paths`), as reads.
fn read_paths(input: &Value, checkout: &Utf8Path, cwd: &Utf8Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for key in [
        "path",
        "dir_path",
        "file_path",
        "filePath",
        "absolute_path",
        "paths",
    ] {
        match input.get(key) {
            Some(Value::String(path)) => {
                out.push(("read".to_owned(), relative(path, checkout, cwd)))
            }
            Some(Value::Array(paths)) => out.extend(
                paths
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|p| ("read".to_owned(), relative(p, checkout, cwd))),
            ),
            _ => {}
        }
    }
    out
}

/// The command line of a shell tool: a string, or (as Codex may send it) a
/// list of words, quoted back into one line.
pub fn shell_command(tool: &str, input: &Value) -> Result<String, BadDocument> {
    let missing = || BadDocument(format!("the `{tool}` call has no `tool_input.command`"));
    match input.get("command").or_else(|| input.get("cmd")) {
        Some(Value::String(line)) => Ok(line.clone()),
        Some(Value::Array(words)) => {
            let words: Option<Vec<&str>> = words.iter().map(Value::as_str).collect();
            let words = words.ok_or_else(missing)?;
            shlex::try_join(words).map_err(|_| missing())
        }
        _ => Err(missing()),
    }
}

/// A tool's name as a permission name: lower-case, with characters a
/// permission name cannot hold as `_` (`mcp__GitHub__create` →
/// `mcp__github__create`).
pub fn permission_name(tool: &str) -> String {
    tool.chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `path` (relative to `cwd` unless absolute) with `.` and `..` resolved,
/// relative to the checkout when it lies inside it (`.` for the checkout
/// itself), else absolute. `tests/../.claude/settings.json` is
/// `.claude/settings.json`, never a path under `tests/`.
pub fn relative(path: &str, checkout: &Utf8Path, cwd: &Utf8Path) -> String {
    let path = Utf8Path::new(path);
    let absolute = if path.is_absolute() {
        normalize(path)
    } else {
        normalize(&cwd.join(path))
    };
    match absolute.strip_prefix(normalize(checkout)) {
        Ok(rel) if rel.as_str().is_empty() => ".".to_owned(),
        Ok(rel) => rel.as_str().to_owned(),
        Err(_) => absolute.into_string(),
    }
}

/// `path` with `.` and `..` resolved lexically (symbolic links are not
/// followed: a path names what the agent asked for).
pub fn normalize(path: &Utf8Path) -> Utf8PathBuf {
    let mut out = Utf8PathBuf::new();
    for part in path.components() {
        match part {
            camino::Utf8Component::CurDir => {}
            camino::Utf8Component::ParentDir => {
                // `..` of the root is the root.
                if !out.pop() && !out.has_root() {
                    out.push("..");
                }
            }
            other => out.push(other.as_str()),
        }
    }
    out
}

/// The files a Codex `apply_patch` touches (relative to the agent's working
/// directory): an added or deleted file, or a move's target, is a `write`;
/// an updated file an `edit`. A patch that
/// names no file is a `write` of nothing known, which only a rule for every
/// path allows.
fn patch_requests(patch: &str, checkout: &Utf8Path, cwd: &Utf8Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in patch.lines() {
        // As Codex reads its patches: whitespace around a header is not
        // part of it.
        let line = line.trim();
        let (permission, file) = if let Some(f) = line.strip_prefix("*** Add File: ") {
            ("write", f)
        } else if let Some(f) = line.strip_prefix("*** Delete File: ") {
            ("write", f)
        } else if let Some(f) = line.strip_prefix("*** Move to: ") {
            ("write", f)
        } else if let Some(f) = line.strip_prefix("*** Update File: ") {
            ("edit", f)
        } else {
            continue;
        };
        out.push((permission.to_owned(), relative(file.trim(), checkout, cwd)));
    }
    if out.is_empty() {
        out.push(("write".to_owned(), String::new()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bad_documents_say_what_is_wrong() {
        let err = |bytes: &[u8]| HookDoc::parse(Agent::ClaudeCode, bytes).unwrap_err().0;
        assert!(err(b"").contains("not JSON"));
        assert!(err(b"[1]").contains("not a JSON object"));
        assert!(err(b"{}").contains("no `hook_event_name`"));
        assert!(err(br#"{"hook_event_name":"Bogus"}"#).contains("`Bogus` is not a hook event"));
        assert!(err(br#"{"hook_event_name":"PreToolUse"}"#).contains("no `tool_name`"));
        assert!(
            err(br#"{"hook_event_name":"Stop","stop_hook_active":"yes"}"#)
                .contains("not true or false")
        );
    }

    #[test]
    fn tool_calls_become_permission_requests() {
        let root = Utf8Path::new("/repo");
        let req =
            |agent, tool: &str, input: Value| requests(agent, tool, &input, root, root).unwrap();
        let pair = |p: &str, a: &str| vec![(p.to_owned(), a.to_owned())];
        assert_eq!(
            req(Agent::ClaudeCode, "Bash", json!({"command": "ls -la"})),
            pair("bash", "ls -la")
        );
        assert_eq!(
            req(
                Agent::ClaudeCode,
                "Write",
                json!({"file_path": "/repo/src/a.rs"})
            ),
            pair("write", "src/a.rs")
        );
        assert_eq!(
            req(
                Agent::ClaudeCode,
                "Read",
                json!({"file_path": "/etc/hosts"})
            ),
            pair("read", "/etc/hosts")
        );
        assert_eq!(
            req(Agent::ClaudeCode, "mcp__GitHub__push", json!({"a": 1})),
            pair("mcp__github__push", r#"{"a":1}"#)
        );
        assert!(req(Agent::ClaudeCode, "TodoWrite", json!({})).is_empty());
        assert_eq!(
            req(
                Agent::Codex,
                "Bash",
                json!({"command": ["git", "commit", "-m", "a b"]})
            ),
            pair("bash", "git commit -m 'a b'")
        );
        let patch = "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-a\n+b\n*** Add File: /repo/NEW.md\n+x\n*** End Patch\n";
        assert_eq!(
            req(Agent::Codex, "apply_patch", json!({ "command": patch })),
            vec![
                ("edit".to_owned(), "src/lib.rs".to_owned()),
                ("write".to_owned(), "NEW.md".to_owned())
            ]
        );
        assert_eq!(
            req(Agent::Codex, "apply_patch", json!({ "command": "garbage" })),
            pair("write", "")
        );
        // Codex trims a header's blanks: so does the hook.
        assert_eq!(
            req(
                Agent::Codex,
                "apply_patch",
                json!({ "command": "  *** Update File: orcho.yaml  \n" })
            ),
            pair("edit", "orcho.yaml")
        );
        // Copilot CLI's keystrokes to a running shell are a command.
        assert_eq!(
            req(
                Agent::Copilot,
                "write_bash",
                json!({ "input": "rm orcho.yaml" })
            ),
            pair("bash", "rm orcho.yaml")
        );
        // `..` of the root is the root.
        assert_eq!(
            req(
                Agent::ClaudeCode,
                "Write",
                json!({"file_path": "/../repo/src/x"})
            ),
            pair("write", "src/x")
        );
        assert!(requests(Agent::ClaudeCode, "Write", &json!({}), root, root).is_err());
        // Codex puts the patch in `command`; the error names both keys.
        let Err(BadDocument(said)) = requests(Agent::Codex, "apply_patch", &json!({}), root, root)
        else {
            panic!("an apply_patch without its patch was read");
        };
        assert!(said.contains("tool_input.command` (or `patch`)"), "{said}");
        assert!(
            requests(
                Agent::ClaudeCode,
                "Bash",
                &json!({"command": 3}),
                root,
                root
            )
            .is_err()
        );
        // `..` never hides where a path leads.
        assert_eq!(
            req(
                Agent::ClaudeCode,
                "Write",
                json!({"file_path": "/repo/tests/../.claude/settings.json"})
            ),
            pair("write", ".claude/settings.json")
        );
        assert_eq!(
            req(
                Agent::ClaudeCode,
                "Write",
                json!({"file_path": "/repo/../repo/tests/x.py"})
            ),
            pair("write", "tests/x.py")
        );
        assert_eq!(
            req(
                Agent::ClaudeCode,
                "Read",
                json!({"file_path": "/repo/../etc/passwd"})
            ),
            pair("read", "/etc/passwd")
        );
        // A patch's paths are relative to the agent's working directory.
        let sub = requests(
            Agent::Codex,
            "apply_patch",
            &json!({"command": "*** Add File: y.py\n*** Add File: ../src/z.py\n"}),
            root,
            Utf8Path::new("/repo/tests"),
        )
        .unwrap();
        assert_eq!(
            sub,
            vec![
                ("write".to_owned(), "tests/y.py".to_owned()),
                ("write".to_owned(), "src/z.py".to_owned())
            ]
        );
    }
}
