//! What a hook answers, in each agent's documented shape.
//!
//! The answers are the same for every agent; each agent's module renders
//! them as the agent reads them (most read one JSON object on standard
//! output when the hook exits 0, and a message on standard error with exit
//! 2 as "refused"). A failure is always rendered as a refusal that the
//! agent reads as one at every event, even when the event could not be
//! read.

use orcho::permissions::PermissionAction;

use super::Agent;

/// A permission decision over every request a tool call makes: the most
/// restrictive action, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// What to do.
    pub action: PermissionAction,
    /// Why, for the agent and the person.
    pub reason: String,
}

/// A hook's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
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
pub struct Rendered {
    /// Standard output (one JSON object), if any.
    pub stdout: Option<String>,
    /// Standard error, if any.
    pub stderr: Option<String>,
    /// The exit code.
    pub code: u8,
}

impl Answer {
    /// The answer in `agent`'s shape.
    pub fn render(&self, agent: Agent) -> Rendered {
        (agent.dialect().render)(self)
    }
}
