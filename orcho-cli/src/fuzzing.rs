//! Entry points for the fuzz targets (`fuzz/`), behind the `fuzzing`
//! feature: what the command line reads from agents and clients, reached
//! with arbitrary bytes. Not an API.

use camino::{Utf8Path, Utf8PathBuf};
use orcho::permissions::PermissionPreset;

use crate::{
    commands::hook::{HookPlace, answer},
    hook::Agent,
};

/// How the hook answered a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookAnswer {
    /// Its exit code: 0, or 2 for "refused".
    pub code: u8,
    /// What it printed on standard output (one JSON object), if anything.
    pub stdout: Option<String>,
    /// What it printed on standard error, if anything.
    pub stderr: Option<String>,
}

impl HookAnswer {
    /// Whether the answer lets the tool call through without asking.
    pub fn allows(&self) -> bool {
        self.stdout.as_deref().is_some_and(|out| {
            out.contains("\"permissionDecision\":\"allow\"")
                || out.contains("\"behavior\":\"allow\"")
                || out.contains("\"permission\":\"allow\"")
        })
    }
}

/// Answers the hook `document` of the agent numbered `agent` (modulo the
/// number of agents, in `orcho init --help`'s order), for the checkout
/// `checkout` (which has its `orcho.yaml`), under the read-only preset when
/// `read_only`.
pub fn hook(agent: u8, checkout: &Utf8Path, read_only: bool, document: &[u8]) -> HookAnswer {
    let agent = Agent::ALL[usize::from(agent) % Agent::ALL.len()];
    let at = HookPlace {
        checkout: Some(checkout.to_owned()),
        store: Some(checkout.join(".orcho")),
        profile: None,
        preset: read_only.then_some(PermissionPreset::ReadOnly),
        // A fuzzed document never waits for a person.
        ask_wait: None,
    };
    let rendered = answer(agent, &at, document).render(agent);
    HookAnswer {
        code: rendered.code,
        stdout: rendered.stdout,
        stderr: rendered.stderr,
    }
}

/// Reads `text` as a phase output document.
pub fn phase_output(text: &str) -> Result<(), String> {
    orcho::phase::output::parse(text, "fuzz").map(|_| ())
}

/// The words of `command` when it is one simple command (what a phase's
/// agent may run as `orcho report`).
pub fn simple_words(command: &str) -> Option<Vec<String>> {
    orcho_agents::hook::guard::simple_words(command)
}

/// The words of `command` the control-file guard looks up, and the
/// directories it looks them up in.
pub fn guard_reads(command: &str, cwd: &Utf8Path) -> (Vec<String>, Vec<Utf8PathBuf>) {
    orcho_agents::hook::guard::reads(command, cwd)
}

/// Reads `json` as the arguments of the MCP tool `tool`; whether they were
/// accepted.
pub fn mcp_arguments(tool: &str, json: &[u8]) -> Result<(), String> {
    orcho_mcp::arguments(tool, json)
}
