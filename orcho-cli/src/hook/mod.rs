//! Orcho inside coding agents: the hook documents Claude Code and Codex
//! pass, the answers they read back, and what the stop guard keeps.

mod answer;
mod input;
mod stops;

pub(crate) use answer::{Answer, Verdict};
pub(crate) use input::{
    BadDocument, Event, HookDoc, MAX_DOCUMENT_BYTES, normalize, permission_name, relative,
    requests, shell_command,
};
pub(crate) use stops::{
    StopGuard, UnprovenStop, acknowledge_stops, note_called, unproven_stops, was_called,
};

/// The timeout, in seconds, written with every hook Orcho installs: an
/// agent lets a tool call through when its hook runs past it, so it is
/// said rather than left to the agent's default, and the hook answers
/// within a fraction of it whatever its input.
pub(crate) const HOOK_TIMEOUT_SECS: u64 = 60;

/// The agents whose hooks `orcho hook` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Agent {
    /// Anthropic's Claude Code (`.claude/settings.json`)
    ClaudeCode,
    /// OpenAI's Codex CLI (`.codex/hooks.json`)
    Codex,
}

impl Agent {
    /// The agent as the command line names it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::Codex => "codex",
        }
    }
}
