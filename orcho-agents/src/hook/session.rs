//! Whether this process runs inside a coding agent's session or inside a
//! process Orcho started (a phase, a verification command): where a
//! decision does not belong to a person.
//!
//! Three signs, each enough:
//!
//! - a variable an agent sets in the environment of the commands its tools
//!   run (each agent's [`Dialect::session_env`](super::agents::Dialect)), or
//!   one Orcho sets for a phase (`ORCHO_RUN`, `ORCHO_PHASE`,
//!   `ORCHO_OUTPUT`);
//! - an ancestor process that is a known agent (its program or package on
//!   its command line: [`Dialect::processes`](super::agents::Dialect));
//! - an ancestor process that is `orcho` itself: whatever `orcho` starts (a
//!   phase, an agent, a verification command) never decides.
//!
//! An agent can clear a variable, or start a process that leaves its tree;
//! the hook's guard refuses the decision commands before they run, and
//! this is the check behind it. What is found is said (which agent, which
//! process), so that a person who meets the refusal knows why.

use std::fmt;

use super::Agent;

/// The most ancestors looked at.
const MAX_ANCESTORS: usize = 64;

/// The variables Orcho gives a phase's process.
const PHASE_ENV: &[&str] = &["ORCHO_RUN", "ORCHO_PHASE", "ORCHO_OUTPUT"];

/// The vendor-neutral variables agents set for their commands.
const GENERIC_ENV: &[&str] = &["AI_AGENT"];

/// Where this process runs, when it is not a person's shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inside {
    /// An agent's session, told by a variable or an ancestor.
    Agent {
        /// The agent.
        name: String,
        /// How it was told.
        sign: String,
    },
    /// A process Orcho started.
    Orcho {
        /// How it was told.
        sign: String,
    },
}

impl fmt::Display for Inside {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Agent { name, sign } => write!(f, "inside a {name} session ({sign})"),
            Self::Orcho { sign } => write!(f, "inside a process Orcho started ({sign})"),
        }
    }
}

/// Where this process runs, when it is inside an agent's session or a
/// process Orcho started; `None` for a person's shell (as far as can be
/// told).
pub fn inside() -> Option<Inside> {
    inside_with(
        &|name| std::env::var_os(name).filter(|v| !v.is_empty()),
        &ancestors(),
    )
}

/// [`inside`] with the environment and the ancestors' command lines given.
fn inside_with(
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    ancestors: &[(u32, Vec<String>)],
) -> Option<Inside> {
    for var in PHASE_ENV {
        if env(var).is_some() {
            return Some(Inside::Orcho {
                sign: format!("`{var}` is set"),
            });
        }
    }
    for agent in Agent::ALL {
        let dialect = agent.dialect();
        if let Some(var) = dialect.session_env.iter().find(|var| env(var).is_some()) {
            return Some(Inside::Agent {
                name: dialect.title.to_owned(),
                sign: format!("`{var}` is set"),
            });
        }
    }
    for var in GENERIC_ENV {
        if let Some(value) = env(var) {
            return Some(Inside::Agent {
                name: value.to_string_lossy().chars().take(40).collect(),
                sign: format!("`{var}` is set"),
            });
        }
    }
    for (pid, argv) in ancestors {
        if is_orcho_process(argv) {
            let what = argv.get(1).map_or("", String::as_str);
            return Some(Inside::Orcho {
                sign: format!("process {pid} is `orcho {what}`"),
            });
        }
        for agent in Agent::ALL {
            let dialect = agent.dialect();
            if dialect.processes.iter().any(|p| runs(argv, p)) {
                return Some(Inside::Agent {
                    name: dialect.title.to_owned(),
                    sign: format!("process {pid} is {}", shown(argv)),
                });
            }
        }
    }
    None
}

/// Whether the command line `argv` runs `what`: a program of that name, or
/// a script whose path holds it (`node …/@anthropic-ai/claude-code/cli.js`).
fn runs(argv: &[String], what: &str) -> bool {
    let program = |word: &String| word.rsplit('/').next().unwrap_or(word) == what;
    if what.contains('/') {
        return argv.iter().take(3).any(|word| word.contains(what));
    }
    argv.first().is_some_and(program)
        || (argv
            .first()
            .is_some_and(|w| matches!(w.rsplit('/').next(), Some("node" | "bun" | "deno")))
            && argv.get(1).is_some_and(program))
}

/// Whether `argv` is an `orcho` process.
fn is_orcho_process(argv: &[String]) -> bool {
    argv.first()
        .is_some_and(|w| w.rsplit('/').next() == Some("orcho"))
}

fn shown(argv: &[String]) -> String {
    let line = argv.iter().take(3).cloned().collect::<Vec<_>>().join(" ");
    format!("`{}`", line.chars().take(100).collect::<String>())
}

/// This process's ancestors, nearest first, each with its command line
/// (as far as `/proc` tells; empty elsewhere).
fn ancestors() -> Vec<(u32, Vec<String>)> {
    let mut out = Vec::new();
    let mut pid = parent_of("self");
    while let Some(p) = pid {
        if p <= 1 || out.len() >= MAX_ANCESTORS {
            break;
        }
        let argv = std::fs::read(format!("/proc/{p}/cmdline"))
            .map(|bytes| {
                bytes
                    .split(|&b| b == 0)
                    .filter(|w| !w.is_empty())
                    .map(|w| String::from_utf8_lossy(w).into_owned())
                    .collect()
            })
            .unwrap_or_default();
        out.push((p, argv));
        pid = parent_of(&p.to_string());
    }
    out
}

/// The parent of process `pid` (`self` for this one), from
/// `/proc/<pid>/stat`.
fn parent_of(pid: &str) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`: the command may hold spaces and parens.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn each_sign_is_told_and_named() {
        let none = |_: &str| None;
        assert_eq!(inside_with(&none, &[]), None);
        let claude = |name: &str| (name == "CLAUDECODE").then(|| "1".into());
        assert_eq!(
            inside_with(&claude, &[]).map(|i| i.to_string()).as_deref(),
            Some("inside a Claude Code session (`CLAUDECODE` is set)")
        );
        let phase = |name: &str| (name == "ORCHO_PHASE").then(|| "implement".into());
        assert!(matches!(
            inside_with(&phase, &[]),
            Some(Inside::Orcho { .. })
        ));
        let node = [
            (7, argv(&["/bin/bash", "-c", "orcho handoff decide"])),
            (
                6,
                argv(&[
                    "node",
                    "/usr/lib/node_modules/@anthropic-ai/claude-code/cli.js",
                ]),
            ),
        ];
        assert!(matches!(
            inside_with(&none, &node),
            Some(Inside::Agent { name, .. }) if name == "Claude Code"
        ));
        let run = [(9, argv(&["/usr/local/bin/orcho", "run", "--phase", "x=y"]))];
        assert_eq!(
            inside_with(&none, &run).map(|i| i.to_string()).as_deref(),
            Some("inside a process Orcho started (process 9 is `orcho run`)")
        );
        let shell = [
            (3, argv(&["-bash"])),
            (2, argv(&["sshd: me@pts/0"])),
            (1, argv(&["/sbin/init"])),
        ];
        assert_eq!(inside_with(&none, &shell), None);
        // A program merely named like a word of an agent's is not it.
        let other = [(4, argv(&["/usr/bin/codexer"]))];
        assert_eq!(inside_with(&none, &other), None);
    }

    #[test]
    fn this_test_runs_under_no_agent_it_knows_of_or_says_which() {
        // Whatever runs the tests, the walk ends and names what it finds.
        let found = ancestors();
        assert!(found.len() <= MAX_ANCESTORS);
    }
}
