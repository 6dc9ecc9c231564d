//! Phases as processes: the protocol `orcho` runs a phase command or a
//! coding agent with, for any host that runs phases the same way.
//!
//! A host answers [`Step::RunPhase`](crate::Step::RunPhase) with a
//! [`PhaseReport`]. To make one from a process:
//!
//! ```no_run
//! # async fn host(engine: &orcho::Engine, request: &orcho::PhaseRequest)
//! # -> Result<orcho::PhaseReport, Box<dyn std::error::Error>> {
//! use orcho::phase::{Attempt, PhaseProcess};
//!
//! let attempt = Attempt::prepare(engine.store(), request)?;
//! let ran = attempt.run(PhaseProcess::new(["./scripts/review.sh"]))?;
//! let report = ran.report("`./scripts/review.sh`", None)?;
//! # Ok(report) }
//! ```
//!
//! What the process is given, and what it may give back:
//!
//! - It runs in the run's checkout (its worktree, or the checkout itself
//!   for a run in place), in a process group of its own, with the
//!   documented base environment ([`BaseEnv::inherit`]) and no key.
//! - `ORCHO_RUN`, `ORCHO_PHASE`, `ORCHO_ATTEMPT`, `ORCHO_ROUND` name the
//!   attempt. The [input document](input) is the JSON in `ORCHO_INPUT`
//!   (left out above 96 KiB) and in the file `ORCHO_INPUT_FILE` names; its
//!   text is `ORCHO_INPUT_TEXT`, cut at 64 KiB ([`input_text`]).
//!   `ORCHO_PERMISSIONS` holds the phase's rules, when it has any: a JSON
//!   array, in order, of `{"permission": "bash", "pattern": "git *",
//!   "action": "allow"}` (`permission` a tool's permission or a glob of
//!   them, `action` `allow`, `ask` or `deny`); the last rule that matches
//!   decides, and a call no rule matches is denied
//!   ([`orcho_permissions::RuleSet`] reads it with `serde_json` and
//!   evaluates it). A read-only phase's rules say so, and the take-back of
//!   its writes is the engine's, after the report.
//! - Everything the phase starts is stopped with it, also what runs in a
//!   session of its own (a coding agent's shell command may): when it is
//!   interrupted or times out, and what it leaves running when it ends,
//!   also a process it left at once (`(setsid cmd &)`), which the host
//!   process adopts as a child subreaper
//!   ([`ExecRequest::whole_tree`](orcho_receipts::exec::ExecRequest::whole_tree);
//!   a host that starts processes only through the library says so with
//!   [`claim_every_orphan`](orcho_receipts::exec::claim_every_orphan)).
//! - The host times a phase, not the engine: [`PhaseProcess::timeout`]
//!   stops the attempt's whole process group when it is spent, and the
//!   attempt is rejected as timed out (`orcho` gives an agent runner its
//!   `runner.timeout_secs`; a command phase has none unless its host sets
//!   one). Gates are timed by their own `timeout`.
//! - Exit 0 approves, anything else rejects. The [output
//!   document](output) it may write to the file `ORCHO_OUTPUT` names says
//!   more: a verdict (a non-zero exit never approves), findings, cost, a
//!   plan, questions or a failed step.
//! - What is not the work (a transcript, a plan) goes in the directory
//!   `ORCHO_ARTIFACTS` names, outside the checkout: nothing in it is ever
//!   delivered.
//! - Its standard output and error are kept in full in the attempt's logs
//!   and their last [`TAIL_BYTES`] in the report. A [timeout](PhaseProcess::timeout)
//!   or a [cancel](PhaseProcess::cancel) stops its whole group; a host
//!   killed mid-phase leaves a marker, and the next
//!   [`Attempt::prepare`] of the run stops what is left of the group.
//! - The same attempt run again (after questions, a failed step, Ctrl-C)
//!   keeps what the earlier one left beside it: `<file>.1`, `<file>.2`, ….

pub mod input;
pub mod output;

use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{Cost, Finding, FsError, Severity, Verdict};
use orcho_gates::PhaseOutcome;
use orcho_receipts::exec::{
    self, BaseEnv, CancelToken, ExecOutcome, ExecRequest, ExitStatus, GroupMarker, LEFTOVER_GRACE,
    Leftover, LeftoverError,
};

pub use output::Said;

use orcho_receipts::ExecError;

use crate::{EngineError, PhaseReport, PhaseRequest, Store};

/// How much of a phase process's standard output and error is kept in its
/// report (the logs keep everything).
pub const TAIL_BYTES: usize = 4 * 1024;

/// The longest `ORCHO_INPUT_TEXT`: an environment variable of more than
/// 128 KiB does not reach the program on Linux.
const MAX_INPUT_TEXT: usize = 64 * 1024;

/// The longest `ORCHO_INPUT`; a larger document is only in
/// `ORCHO_INPUT_FILE`.
const MAX_INPUT_JSON: usize = 96 * 1024;

/// `text` as `ORCHO_INPUT_TEXT` gives it: cut at 64 KiB (on a character
/// boundary) with a line that says where the rest is.
pub fn input_text(text: &str) -> String {
    if text.len() <= MAX_INPUT_TEXT {
        return text.to_owned();
    }
    let mut end = MAX_INPUT_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n\n[cut at {MAX_INPUT_TEXT} bytes; the file ORCHO_INPUT_FILE names has everything]\n",
        &text[..end]
    )
}

/// Why a phase process could not be run, or what it left could not be
/// read. A process that ran and failed is not an error: its report
/// rejects.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PhaseError {
    /// The store could not say where the attempt's files go.
    #[error(transparent)]
    Store(#[from] EngineError),
    /// An attempt's file or directory could not be written.
    #[error(transparent)]
    Fs(#[from] FsError),
    /// A file an earlier run of the attempt left could not be kept aside.
    #[error("cannot keep `{path}` as `{kept}`: {source}")]
    Keep {
        /// The file.
        path: Utf8PathBuf,
        /// Where it was to go.
        kept: Utf8PathBuf,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
    /// What a killed host left running could not be stopped.
    #[error(transparent)]
    Leftover(#[from] LeftoverError),
    /// The process could not be supervised.
    #[error(transparent)]
    Exec(#[from] ExecError),
    /// The program could not start: it says nothing about the work.
    #[error("cannot start: {message}")]
    CannotStart {
        /// What the system said.
        message: String,
    },
    /// The process was stopped by [`PhaseProcess::cancel`]: the attempt
    /// did not end and runs again.
    #[error("interrupted")]
    Interrupted,
    /// The output document is not one [`output::parse`] reads.
    #[error("the output document `{path}` is not valid: {message}")]
    Output {
        /// The document.
        path: Utf8PathBuf,
        /// Where and why, in one line.
        message: String,
    },
    /// The output document could not be read.
    #[error("cannot read the output document `{path}`: {source}")]
    ReadOutput {
        /// The document.
        path: Utf8PathBuf,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
}

/// Where one attempt of a phase keeps its files, as the protocol names
/// them to the process.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AttemptFiles {
    /// The run's checkout: its worktree, or the checkout for a run in
    /// place. The process runs there.
    pub checkout: Utf8PathBuf,
    /// The input document (`ORCHO_INPUT_FILE`).
    pub input: Utf8PathBuf,
    /// Where the output document goes (`ORCHO_OUTPUT`).
    pub output: Utf8PathBuf,
    /// The attempt's artifacts directory (`ORCHO_ARTIFACTS`), created.
    pub artifacts: Utf8PathBuf,
    /// The full standard output.
    pub stdout_log: Utf8PathBuf,
    /// The full standard error.
    pub stderr_log: Utf8PathBuf,
    /// The store a program run in the checkout names as its own so that
    /// its receipts are the run's
    /// ([`Store::receipts_store`]).
    pub receipts_store: Utf8PathBuf,
    /// The run's directory on this machine.
    pub run_dir: Utf8PathBuf,
}

/// A process that runs a phase: its command line, what it is given besides
/// the protocol's environment, and how it is bounded.
#[derive(Debug, Clone)]
pub struct PhaseProcess {
    argv: Vec<String>,
    envs: Vec<(String, String)>,
    timeout: Option<Duration>,
    timeout_said: Option<String>,
    user_environment: bool,
    cancel: Option<CancelToken>,
}

impl PhaseProcess {
    /// The process `argv` (the program, then its arguments).
    pub fn new<I, S>(argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            argv: argv.into_iter().map(Into::into).collect(),
            envs: Vec::new(),
            timeout: None,
            timeout_said: None,
            user_environment: false,
            cancel: None,
        }
    }

    /// Sets `name` in its environment, after the protocol's variables.
    #[must_use]
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.envs.push((name.into(), value.into()));
        self
    }

    /// Stops its whole process group after `timeout`; the attempt is then
    /// rejected as timed out.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// How its timeout was declared (`timeout_secs: 1800`), said beside it
    /// when the attempt is rejected as timed out, in the declaration's own
    /// unit.
    #[must_use]
    pub fn timeout_said(mut self, declared: impl Into<String>) -> Self {
        self.timeout_said = Some(declared.into());
        self
    }

    /// Gives it this process's whole environment (keys excepted) rather
    /// than the documented base: for a program of the user's own, such as
    /// a coding agent, that needs its credentials, endpoints and proxies.
    #[must_use]
    pub fn user_environment(mut self) -> Self {
        self.user_environment = true;
        self
    }

    /// Stops its whole process group when `token` is cancelled (Ctrl-C);
    /// [`Attempt::run`] then fails with [`PhaseError::Interrupted`].
    #[must_use]
    pub fn cancel(mut self, token: CancelToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Its command line.
    pub fn argv(&self) -> &[String] {
        &self.argv
    }
}

/// One attempt of a phase, ready to run: its files laid out, its input
/// document written, and whatever a killed host left of the run's last
/// phase process stopped.
#[derive(Debug)]
pub struct Attempt {
    request: PhaseRequest,
    files: AttemptFiles,
    input_json: String,
    marker: GroupMarker,
    leftovers: Vec<Leftover>,
}

impl Attempt {
    /// Prepares `request`'s attempt in `store`. Blocking: it may wait up
    /// to [`LEFTOVER_GRACE`] for a leftover process group to stop.
    ///
    /// # Errors
    ///
    /// An unknown run, a leftover group that cannot be stopped, or a file
    /// that cannot be written.
    pub fn prepare(store: &Store, request: &PhaseRequest) -> Result<Self, PhaseError> {
        let checkout = store.status(&request.run)?.checkout;
        let marker = store.phase_group(&request.run);
        // Where the first command line kept the marker.
        let legacy = GroupMarker::new(
            store
                .local
                .root()
                .join("host")
                .join(format!("{}.phase.json", request.run)),
        );
        let mut leftovers = Vec::new();
        for stale in [legacy, marker.clone()] {
            match stale.stop_leftover(LEFTOVER_GRACE)? {
                Leftover::Nothing => {}
                found => leftovers.push(found),
            }
        }
        let (stdout_log, stderr_log) = store.phase_logs(request);
        let beside = |suffix: &str| {
            stdout_log.with_file_name(
                stdout_log
                    .file_name()
                    .unwrap_or_default()
                    .replace(".stdout.log", suffix),
            )
        };
        let files = AttemptFiles {
            checkout,
            input: beside(".input.json"),
            output: beside(".output.json"),
            artifacts: store.artifacts_dir(request),
            receipts_store: store.receipts_store(&request.run)?,
            run_dir: store.run_dir(&request.run),
            stdout_log,
            stderr_log,
        };
        // The same attempt runs again after an interruption (questions, a
        // deviation, Ctrl-C): what the earlier run left is kept beside.
        for path in [&files.stdout_log, &files.stderr_log, &files.output] {
            keep_earlier(path)?;
        }
        if let Some(logs) = files.input.parent() {
            orcho_core::fs::create_dir_all(logs)?;
        }
        let input_json = input::document(request);
        orcho_core::fs::write_atomic(&files.input, input_json.as_bytes())?;
        orcho_core::fs::create_dir_all(&files.artifacts)?;
        Ok(Self {
            request: request.clone(),
            files,
            input_json,
            marker,
            leftovers,
        })
    }

    /// Its files.
    pub fn files(&self) -> &AttemptFiles {
        &self.files
    }

    /// What a killed host had left running and [`prepare`](Self::prepare)
    /// stopped, or could not read: for the host to say.
    pub fn leftovers(&self) -> &[Leftover] {
        &self.leftovers
    }

    /// The request it runs.
    pub fn request(&self) -> &PhaseRequest {
        &self.request
    }

    /// Runs `process` for this attempt and waits for it. Blocking.
    ///
    /// # Errors
    ///
    /// [`PhaseError::CannotStart`] when the program cannot start,
    /// [`PhaseError::Interrupted`] when it was cancelled, or an error of
    /// its supervision.
    pub fn run(&self, process: PhaseProcess) -> Result<Ran, PhaseError> {
        let request = &self.request;
        let files = &self.files;
        let base = if process.user_environment {
            let names: Vec<String> = std::env::vars_os()
                .filter_map(|(name, _)| name.into_string().ok())
                .collect();
            BaseEnv::inherit().with_host_vars(names.iter().map(String::as_str))
        } else {
            BaseEnv::inherit()
        };
        let mut command = ExecRequest::new(process.argv.iter().map(String::as_str))
            .cwd(files.checkout.clone())
            .envs(base)
            .env("ORCHO_RUN", request.run.as_str())
            .env("ORCHO_PHASE", request.phase.as_str())
            .env("ORCHO_ATTEMPT", request.attempt.to_string())
            .env("ORCHO_ROUND", request.round.to_string())
            .env("ORCHO_INPUT_FILE", files.input.as_str())
            .env("ORCHO_INPUT_TEXT", input_text(&request.input.to_text()))
            .env("ORCHO_OUTPUT", files.output.as_str())
            .env("ORCHO_ARTIFACTS", files.artifacts.as_str())
            .tail_bytes(TAIL_BYTES)
            .stdout_log(files.stdout_log.clone())
            .stderr_log(files.stderr_log.clone())
            .group_marker(self.marker.clone())
            // An agent's shell commands may run in sessions of their own:
            // nothing the phase started outlives its attempt.
            .whole_tree();
        if let Some(cancel) = process.cancel {
            command = command.cancel(cancel);
        }
        for (name, value) in process.envs {
            command = command.env(name, value);
        }
        if let Some(timeout) = process.timeout {
            command = command.timeout(timeout);
        }
        // A document too large for the environment is only in the file.
        if self.input_json.len() <= MAX_INPUT_JSON {
            command = command.env("ORCHO_INPUT", self.input_json.clone());
        }
        if let Some(rules) = &request.permissions {
            // Rules are plain data: they always serialize.
            if let Ok(rules) = serde_json::to_string(rules) {
                command = command.env("ORCHO_PERMISSIONS", rules);
            }
        }
        let outcome = exec::run(&command)?;
        match &outcome.status {
            ExitStatus::Cancelled => Err(PhaseError::Interrupted),
            ExitStatus::SpawnFailed { message } => Err(PhaseError::CannotStart {
                message: message.clone(),
            }),
            _ => Ok(Ran {
                phase: request.phase.to_string(),
                files: files.clone(),
                outcome,
                timeout_said: process.timeout_said.clone(),
            }),
        }
    }
}

/// What a program that reports for itself (a coding agent) said, read by
/// its host from its own output, for [`Ran::report`].
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Reported {
    /// Its last message: the summary when the output document has none,
    /// in place of the end of its standard output.
    pub last_message: Option<String>,
    /// The tokens and money it reported.
    pub cost: Cost,
    /// It stopped before it finished (out of turns, say): without a
    /// verdict of its own, the attempt is incomplete.
    pub stopped_early: bool,
}

/// A phase process that ran to its end (whatever its exit).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Ran {
    /// How it ended, with the tails of its output.
    pub outcome: ExecOutcome,
    /// Its attempt's files.
    pub files: AttemptFiles,
    phase: String,
    timeout_said: Option<String>,
}

impl Ran {
    /// Reads its output document ([`Said::default`] when it wrote none).
    ///
    /// # Errors
    ///
    /// A document that cannot be read, or that [`output::parse`] refuses.
    pub fn said(&self) -> Result<Said, PhaseError> {
        let path = &self.files.output;
        match std::fs::read_to_string(path) {
            Ok(text) => output::parse(&text, &self.phase).map_err(|message| PhaseError::Output {
                path: path.clone(),
                message,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Said::default()),
            Err(source) => Err(PhaseError::ReadOutput {
                path: path.clone(),
                source,
            }),
        }
    }

    /// The report of the attempt: exit 0 approves and anything else
    /// rejects with a finding that holds the end of its output, unless the
    /// output document says otherwise (a non-zero exit never approves);
    /// its cost is the wall time plus what it reported. `shown` is how the
    /// finding names the program (`` `./review.sh` ``, `Codex`).
    ///
    /// A program that reports for itself (`reported`) must write the output
    /// document: one that exits 0 without it, or that stopped early, is
    /// incomplete.
    ///
    /// # Errors
    ///
    /// As [`said`](Self::said).
    pub fn report(
        &self,
        shown: &str,
        reported: Option<&Reported>,
    ) -> Result<PhaseReport, PhaseError> {
        let said = self.said()?;
        let outcome = &self.outcome;
        let stdout = match reported.and_then(|r| r.last_message.clone()) {
            Some(message) => message,
            None => outcome.stdout.tail_lossy(),
        };
        let summary = said
            .summary
            .clone()
            .unwrap_or_else(|| stdout.trim().lines().last().unwrap_or("").to_owned());
        // A phase process is not a model: its cost is its wall time, plus
        // what it reported.
        let mut cost = Cost::wall(outcome.duration);
        if let Some(reported) = reported {
            cost += reported.cost;
        }
        if let Some(said) = said.cost {
            cost += said;
        }
        if let Some(interruption) = said.interruption {
            let mut report = PhaseReport::interrupted(interruption).with_cost(cost);
            if let Some(plan) = said.plan {
                report = report.with_plan(plan);
            }
            return Ok(report);
        }
        let stopped_early = reported.is_some_and(|r| r.stopped_early);
        // A reporting program's exit code says it ran, not what it found:
        // without its document, its attempt is incomplete.
        let unreported = reported.is_some() && !self.files.output.exists();
        let phase = self.phase.as_str();
        let verdict = if outcome.status.success() {
            let fallback = if stopped_early || unreported {
                Verdict::Incomplete
            } else {
                Verdict::Approved
            };
            let mut verdict = PhaseOutcome::new(said.verdict.unwrap_or(fallback))
                .with_summary(summary)
                .with_findings(said.findings);
            if unreported {
                verdict = verdict.with_findings([Finding::new(
                    phase,
                    Severity::High,
                    format!("{shown} wrote no report (the phase output document)"),
                )
                .with_detail(format!(
                    "It was asked to report with `orcho report` or by writing `{}`; its last \
                     message is kept as the summary, and its transcript in `{}`.",
                    self.files.output, self.files.artifacts
                ))]);
            }
            verdict
        } else {
            let detail = output_detail(
                &stdout,
                &outcome.stderr.tail_lossy(),
                &[&self.files.stdout_log, &self.files.stderr_log],
            );
            PhaseOutcome::new(Verdict::Rejected)
                .with_summary(summary)
                .with_findings([Finding::new(
                    phase,
                    Severity::High,
                    match (&outcome.status, &self.timeout_said) {
                        (ExitStatus::TimedOut { .. }, Some(declared)) => {
                            format!("{shown} {} (`{declared}`)", outcome.status)
                        }
                        _ => format!("{shown} {}", outcome.status),
                    },
                )
                .with_detail(detail)])
                .with_findings(said.findings)
        };
        let mut report = PhaseReport::new(verdict).with_cost(cost);
        if let Some(plan) = said.plan {
            report = report.with_plan(plan);
        }
        Ok(report)
    }
}

/// A failure's detail from a command's output: standard output and error,
/// each labelled when both have something, and where the full output is.
pub fn output_detail(stdout: &str, stderr: &str, logs: &[&Utf8Path]) -> String {
    let (stdout, stderr) = (stdout.trim_end(), stderr.trim_end());
    let mut text = match (stdout.trim().is_empty(), stderr.trim().is_empty()) {
        (true, true) => "(no output)".to_owned(),
        (false, true) => stdout.to_owned(),
        (true, false) => stderr.to_owned(),
        (false, false) => format!("stdout:\n{stdout}\nstderr:\n{stderr}"),
    };
    if !logs.is_empty() {
        let logs: Vec<&str> = logs.iter().map(|l| l.as_str()).collect();
        text.push_str("\n(full output: ");
        text.push_str(&logs.join(", "));
        text.push(')');
    }
    text
}

/// Moves a file an earlier run of the same attempt left at `path` to
/// `<path>.<n>`, the first free `n`.
fn keep_earlier(path: &Utf8Path) -> Result<(), PhaseError> {
    if !path.exists() {
        return Ok(());
    }
    for n in 1..1000 {
        let kept = Utf8PathBuf::from(format!("{path}.{n}"));
        if !kept.exists() {
            return std::fs::rename(path, &kept).map_err(|source| PhaseError::Keep {
                path: path.to_owned(),
                kept,
                source,
            });
        }
    }
    Ok(())
}
