//! What a hook answers, in each agent's documented shape.
//!
//! Both agents read one JSON object on standard output when the hook exits
//! 0, and treat exit 2 with a message on standard error as "block" (a tool
//! call is refused, a stop is refused). The hook fails safe with the latter:
//! it works for every event of both agents, even when the event could not
//! be read.

use orcho::permissions::PermissionAction;
use serde_json::{Value, json};

use super::Agent;

/// A permission decision over every request a tool call makes: the most
/// restrictive action, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// What to do.
    pub(crate) action: PermissionAction,
    /// Why, for the agent and the person.
    pub(crate) reason: String,
}

/// A hook's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// No opinion: exit 0, nothing on standard output.
    Silent,
    /// A tool call's permission (`PreToolUse`, Codex's
    /// `PermissionRequest`).
    Tool {
        /// The event answered.
        event: &'static str,
        /// The decision.
        verdict: Verdict,
    },
    /// The stop is refused: the agent goes on with `reason` as its next
    /// instruction.
    BlockStop {
        /// What is not proven and how to prove it.
        reason: String,
    },
    /// The stop goes through; the person is told what was left unproven.
    WarnStop {
        /// The warning.
        message: String,
    },
    /// Context for the agent's session (`SessionStart`).
    Context {
        /// The text.
        text: String,
    },
    /// Something went wrong: refuse (exit 2, the message on standard error).
    FailSafe {
        /// What went wrong.
        message: String,
    },
}

/// An answer as the process gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rendered {
    /// Standard output (one JSON object), if any.
    pub(crate) stdout: Option<String>,
    /// Standard error, if any.
    pub(crate) stderr: Option<String>,
    /// The exit code.
    pub(crate) code: u8,
}

impl Answer {
    /// The answer in `agent`'s shape.
    pub(crate) fn render(&self, agent: Agent) -> Rendered {
        let json = |value: Value| Rendered {
            stdout: Some(value.to_string()),
            stderr: None,
            code: 0,
        };
        match self {
            Self::Silent => Rendered {
                stdout: None,
                stderr: None,
                code: 0,
            },
            Self::Tool { event, verdict } => tool(agent, event, verdict).map_or(
                Rendered {
                    stdout: None,
                    stderr: None,
                    code: 0,
                },
                json,
            ),
            Self::BlockStop { reason } => json(json!({ "decision": "block", "reason": reason })),
            Self::WarnStop { message } => json(json!({ "systemMessage": message })),
            Self::Context { text } => json(json!({
                "hookSpecificOutput": {
                    "hookEventName": "SessionStart",
                    "additionalContext": text,
                }
            })),
            Self::FailSafe { message } => Rendered {
                stdout: None,
                stderr: Some(format!("orcho hook: {message}")),
                code: 2,
            },
        }
    }
}

/// A tool decision in `agent`'s shape; `None` when the agent's own
/// permission flow should go on.
fn tool(agent: Agent, event: &str, verdict: &Verdict) -> Option<Value> {
    let reason = format!("orcho: {}", verdict.reason);
    let pre_tool = |decision: &str, reason: &str| {
        json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": decision,
                "permissionDecisionReason": reason,
            }
        })
    };
    match (agent, event, verdict.action) {
        // An approval the agent is about to ask a person for
        // (`PermissionRequest`): an allow or a deny answers, and an ask
        // leaves it to the person.
        (_, "PermissionRequest", PermissionAction::Allow) => Some(json!({
            "hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": { "behavior": "allow" },
            }
        })),
        (_, "PermissionRequest", PermissionAction::Deny) => Some(json!({
            "hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": { "behavior": "deny", "message": reason },
            }
        })),
        (_, "PermissionRequest", _) => None,
        // An ask is a person's to answer; where nobody can (`claude -p`),
        // Claude Code refuses it and the model reads only the reason: it
        // says so, and what a person can do.
        (Agent::ClaudeCode, _, PermissionAction::Ask) => Some(pre_tool(
            "ask",
            &format!(
                "{reason}: a person must approve it; in a session nobody watches it is \
                 refused: ask the person to run it, or to allow it with a rule in orcho.yaml's \
                 `permissions`"
            ),
        )),
        (Agent::ClaudeCode, _, action) => Some(pre_tool(&action.to_string(), &reason)),
        // Codex's `PreToolUse` can only deny (an allow or ask there fails
        // open), so an ask is refused with what a person can do.
        (Agent::Codex, _, PermissionAction::Allow) => None,
        (Agent::Codex, _, PermissionAction::Ask) => Some(pre_tool(
            "deny",
            &format!(
                "{reason}; it needs a person's approval, which a Codex hook cannot ask for: \
                 run it yourself, or allow it with a rule in orcho.yaml's `permissions`"
            ),
        )),
        (Agent::Codex, _, _) => Some(pre_tool("deny", &reason)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_ask_says_what_happens_where_nobody_can_answer() {
        let verdict = Verdict {
            action: PermissionAction::Ask,
            reason: "ask by rule 3 (bash `git push *` → ask)".to_owned(),
        };
        let answer = tool(Agent::ClaudeCode, "PreToolUse", &verdict).unwrap();
        let out = &answer["hookSpecificOutput"];
        assert_eq!(out["permissionDecision"], "ask");
        let reason = out["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.starts_with("orcho: ask by rule 3"), "{reason}");
        assert!(
            reason.contains("in a session nobody watches it is refused"),
            "{reason}"
        );
    }

    #[test]
    fn codex_never_gets_an_allow_or_ask_from_pre_tool_use() {
        let verdict = |action| Verdict {
            action,
            reason: "r".to_owned(),
        };
        let pre = |action| {
            Answer::Tool {
                event: "PreToolUse",
                verdict: verdict(action),
            }
            .render(Agent::Codex)
        };
        assert_eq!(pre(PermissionAction::Allow).stdout, None);
        let ask: Value = serde_json::from_str(&pre(PermissionAction::Ask).stdout.unwrap()).unwrap();
        assert_eq!(ask["hookSpecificOutput"]["permissionDecision"], "deny");
        let fail = Answer::FailSafe {
            message: "m".to_owned(),
        }
        .render(Agent::Codex);
        assert_eq!(
            (fail.code, fail.stderr.as_deref()),
            (2, Some("orcho hook: m"))
        );
    }
}
