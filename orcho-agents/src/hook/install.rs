//! Orcho's hooks installed in an agent's project settings: merged into
//! what is there, every other setting and hook kept, once. The host writes
//! the result; nothing here touches a file.

use super::{Agent, Layout};

/// `existing` settings (the text of the agent's project settings file, if
/// there is one) with `orcho hook <agent>` added for every event that does
/// not run it yet, pretty-printed; and what was added: the events, and for
/// Claude Code `permissions.allow RULE` for each of Orcho's commands it
/// lets run without asking.
/// Every other key and hook is kept. A plugin (opencode's) is Orcho's own
/// file: written whole, unless it is that text already.
///
/// # Errors
///
/// Settings that are not a JSON object of the shape the agent reads
/// (`hooks` not an object, an event's hooks not a list).
pub fn merge(
    existing: Option<&str>,
    agent: Agent,
) -> Result<(String, Vec<String>), serde_json::Error> {
    use serde_json::{Map, Value, json};
    let dialect = agent.dialect();
    let custom = |what: &str| <serde_json::Error as serde::de::Error>::custom(what);
    let (command_key, timeout_key, typed, timeout) = match dialect.layout {
        Layout::Plugin { text } => {
            let added = if existing == Some(text) {
                Vec::new()
            } else {
                dialect
                    .install
                    .iter()
                    .map(|(e, _)| (*e).to_owned())
                    .collect()
            };
            return Ok((text.to_owned(), added));
        }
        Layout::Groups { millis } => (
            "command",
            Some("timeout"),
            true,
            super::HOOK_TIMEOUT_SECS * if millis { 1000 } else { 1 },
        ),
        Layout::Flat {
            command,
            timeout,
            typed,
        } => (command, timeout, typed, super::HOOK_TIMEOUT_SECS),
    };
    let flat = matches!(dialect.layout, Layout::Flat { .. });
    let mut settings: Value = match existing {
        Some(text) if !text.trim().is_empty() => serde_json::from_str(text)?,
        _ if flat => json!({ "version": 1 }),
        _ => Value::Object(Map::new()),
    };
    let root = settings
        .as_object_mut()
        .ok_or_else(|| custom("expected an object"))?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| custom("`hooks` is not an object"))?;
    let command = format!("orcho hook {}", dialect.name);
    let mut added = Vec::new();
    for (event, matcher) in dialect.install {
        let entries = hooks
            .entry(*event)
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .ok_or_else(|| custom(&format!("`hooks.{event}` is not a list")))?;
        let runs_orcho = |h: &Value| {
            h[command_key]
                .as_str()
                .is_some_and(|c| c.starts_with(&command))
        };
        let present = entries.iter().any(|entry| {
            runs_orcho(entry)
                || entry["hooks"]
                    .as_array()
                    .is_some_and(|handlers| handlers.iter().any(runs_orcho))
        });
        if present {
            continue;
        }
        let mut handler = Map::new();
        if typed {
            handler.insert("type".to_owned(), json!("command"));
        }
        handler.insert(command_key.to_owned(), json!(command));
        if let Some(key) = timeout_key {
            handler.insert(key.to_owned(), json!(timeout));
        }
        let mut entry = if flat {
            Value::Object(handler)
        } else {
            json!({ "hooks": [handler] })
        };
        if let Some(matcher) = matcher {
            entry["matcher"] = json!(matcher);
        }
        entries.push(entry);
        added.push((*event).to_owned());
    }
    // Claude Code asks before a command its allow list does not name, and
    // a headless session cannot answer: Orcho's own proving commands are
    // allowed, so that the agent can satisfy the stop guard.
    if agent == Agent::ClaudeCode {
        let allow = settings
            .as_object_mut()
            .ok_or_else(|| custom("expected an object"))?
            .entry("permissions")
            .or_insert_with(|| Value::Object(Map::new()))
            .as_object_mut()
            .ok_or_else(|| custom("`permissions` is not an object"))?
            .entry("allow")
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .ok_or_else(|| custom("`permissions.allow` is not a list"))?;
        for rule in CLAUDE_ALLOWED {
            if !allow.iter().any(|r| r.as_str() == Some(rule)) {
                allow.push(json!(rule));
                added.push(format!("permissions.allow {rule}"));
            }
        }
    }
    let mut text = serde_json::to_string_pretty(&settings)?;
    text.push('\n');
    Ok((text, added))
}

/// The commands Claude Code's settings let run without asking once Orcho's
/// hooks are installed
/// without asking: Orcho's own proof and its status.
const CLAUDE_ALLOWED: [&str; 2] = ["Bash(orcho verify:*)", "Bash(orcho status:*)"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_keeps_what_is_there_and_adds_once() {
        let existing = r#"{"model":"opus","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"./mine.sh"}]}]}}"#;
        let (merged, added) = merge(Some(existing), Agent::ClaudeCode).unwrap();
        // Six events and two allowed commands.
        assert_eq!(added.len(), 8, "{added:?}");
        let value: serde_json::Value = serde_json::from_str(&merged).unwrap();
        assert_eq!(value["model"], "opus");
        assert_eq!(
            value["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "./mine.sh"
        );
        assert_eq!(
            value["hooks"]["PreToolUse"][1]["hooks"][0]["command"],
            "orcho hook claude-code"
        );
        let (again, added) = merge(Some(&merged), Agent::ClaudeCode).unwrap();
        assert!(added.is_empty());
        assert_eq!(again, merged);
        assert!(merge(Some("[1]"), Agent::Codex).is_err());
        assert!(merge(Some(r#"{"hooks":{"Stop":{}}}"#), Agent::Codex).is_err());
    }
}
