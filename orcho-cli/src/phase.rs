//! Running a phase: the command given for it, in the run's checkout; exit 0
//! approves, anything else rejects, and the phase output document
//! (`ORCHO_OUTPUT`, see [`phase_doc`](crate::phase_doc)) may say more.

use orcho::{
    Engine, PhaseReport, PhaseRequest,
    core::{Cost, Finding, Severity, Verdict},
    gates::PhaseOutcome,
    receipts::exec::{
        self, BaseEnv, ExecRequest, ExitStatus, GroupMarker, LEFTOVER_GRACE, Leftover,
    },
};

use crate::{
    error::CliError,
    host::RunConfig,
    interrupt, output,
    place::Place,
    runner::{self, PhaseRunner},
};

/// How much of a phase command's output is kept for its summary and
/// finding.
const TAIL_BYTES: usize = 4 * 1024;

/// How many lines of a failure's output are shown on the terminal.
pub(crate) const TAIL_LINES: usize = 12;

/// Runs the command `config` gives `request`'s phase in the run's checkout
/// (its worktree, or the checkout itself for a run in place). A phase
/// without a command is approved.
///
/// A command left running by an `orcho` that was killed is stopped first:
/// it would still be writing in the checkout.
pub(crate) async fn run_phase(
    place: &Place,
    engine: &Engine,
    config: &RunConfig,
    request: &PhaseRequest,
) -> Result<PhaseReport, CliError> {
    let label = format!(
        "phase `{}` attempt {} (round {})",
        request.phase, request.attempt, request.round
    );
    let Some(runner) = runner::of(engine.plan(), config, request.phase.as_str()) else {
        // Final acceptance has its say from the receipts, after this.
        let said = if request.role == orcho::PhaseRole::FinalAcceptance {
            "no command given; the receipts decide"
        } else {
            "no command given; approved"
        };
        place.progress(&format!("{label}: {said}"));
        return Ok(PhaseReport::new(
            PhaseOutcome::new(Verdict::Approved).with_summary(said),
        ));
    };
    let checkout = engine.store().status(&request.run)?.checkout;
    let checkout_shown = checkout.clone();
    let marker = engine.store().phase_group(&request.run);
    // Where the first CLI kept the marker.
    let legacy = GroupMarker::new(
        place
            .store
            .join("host")
            .join(format!("{}.phase.json", request.run)),
    );
    for stale in [legacy, marker.clone()] {
        let found =
            tokio::task::spawn_blocking(move || stale.stop_leftover(LEFTOVER_GRACE)).await??;
        match found {
            Leftover::Stopped(group) => place.progress(&format!(
                "{label}: stopped process group {group}, left running by an `orcho` that was killed"
            )),
            Leftover::Unreadable(reason) => {
                output::err(&format!("warning: {reason}"));
            }
            _ => {}
        }
    }
    let input = serde_json::to_string(&crate::phase_input::PhaseInputDoc::new(request))?;
    let (stdout_log, stderr_log) = engine.store().phase_logs(request);
    let beside = |suffix: &str| {
        stdout_log.with_file_name(
            stdout_log
                .file_name()
                .unwrap_or_default()
                .replace(".stdout.log", suffix),
        )
    };
    let output_doc = beside(".output.json");
    let input_file = beside(".input.json");
    // The same attempt runs again after an interruption (questions, a
    // deviation, Ctrl-C): what the earlier run left is kept beside.
    for path in [&stdout_log, &stderr_log, &output_doc] {
        keep_earlier(path)?;
    }
    if let Some(logs) = input_file.parent() {
        orcho::core::fs::create_dir_all(logs)?;
    }
    orcho::core::fs::write_atomic(&input_file, input.as_bytes())?;
    let artifacts = engine.store().artifacts_dir(request);
    orcho::core::fs::create_dir_all(&artifacts)?;
    let store = engine.store().receipts_store(&request.run)?;
    let run_dir = engine.store().run_dir(&request.run);
    let paths = runner::AttemptPaths {
        checkout: &checkout,
        artifacts: &artifacts,
        output: &output_doc,
        store: &store,
        run_dir: &run_dir,
    };
    let (argv, envs, launch, timeout) = match &runner {
        PhaseRunner::Command(argv) => (argv.clone(), Vec::new(), None, None),
        PhaseRunner::Agent(spec) => {
            let launch = runner::prepare(spec, request, config, &paths)?;
            (
                launch.argv.clone(),
                launch.envs.clone(),
                Some(launch),
                Some(std::time::Duration::from_secs(
                    spec.timeout_secs
                        .unwrap_or(runner::DEFAULT_AGENT_TIMEOUT_SECS),
                )),
            )
        }
    };
    let shown = match &launch {
        Some(launch) => runner::display(launch.agent).to_owned(),
        None => format!(
            "`{}`",
            shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| argv.join(" "))
        ),
    };
    place.progress(&format!("{label}: running {shown} …"));
    // An agent is the user's own program: it runs with the user's
    // environment (its credentials, endpoints, proxies), the receipt key
    // excepted; a command gets the documented base.
    let base = if launch.is_some() {
        let names: Vec<String> = std::env::vars_os()
            .filter_map(|(name, _)| name.into_string().ok())
            .collect();
        BaseEnv::inherit().with_host_vars(names.iter().map(String::as_str))
    } else {
        BaseEnv::inherit()
    };
    let mut command = ExecRequest::new(argv.iter().map(String::as_str))
        .cwd(checkout.clone())
        .envs(base)
        .env("ORCHO_RUN", request.run.as_str())
        .env("ORCHO_PHASE", request.phase.as_str())
        .env("ORCHO_ATTEMPT", request.attempt.to_string())
        .env("ORCHO_ROUND", request.round.to_string())
        .env("ORCHO_INPUT_FILE", input_file.as_str())
        .env("ORCHO_INPUT_TEXT", bounded_text(&request.input.to_text()))
        .env("ORCHO_OUTPUT", output_doc.as_str())
        .env("ORCHO_ARTIFACTS", artifacts.as_str())
        .tail_bytes(TAIL_BYTES)
        .stdout_log(stdout_log.clone())
        .stderr_log(stderr_log.clone())
        .group_marker(marker)
        .cancel(interrupt::phase_started());
    for (name, value) in &envs {
        command = command.env(name, value);
    }
    if let Some(timeout) = timeout {
        command = command.timeout(timeout);
    }
    // A document too large for the environment is only in the file.
    if input.len() <= MAX_INPUT_JSON {
        command = command.env("ORCHO_INPUT", input);
    }
    if let Some(rules) = &request.permissions {
        command = command.env("ORCHO_PERMISSIONS", serde_json::to_string(rules)?);
    }
    let outcome = tokio::task::spawn_blocking(move || exec::run(&command)).await;
    interrupt::phase_ended();
    let outcome = outcome??;
    if outcome.status == ExitStatus::Cancelled {
        return Err(interrupt::error(&request.run));
    }
    for warning in &outcome.warnings {
        output::err(&format!("warning: {warning}"));
    }
    // A program that cannot start says nothing about the work: it is an
    // error now, not a rejected attempt to retry.
    if let ExitStatus::SpawnFailed { message } = &outcome.status {
        return Err(CliError::cannot_start(format!(
            "{label}: {shown} cannot start: {message}"
        ))
        .with_hint(format!(
            "the command runs in the run's checkout `{checkout_shown}`; make it start there, or give \
             another: `orcho resume {} --phase {}=COMMAND`",
            request.run, request.phase
        )));
    }
    let agent = launch
        .as_ref()
        .map(|launch| runner::finish(launch, &stdout_log, &paths));
    // An agent whose model failed did no work: the run stops here, and
    // resuming runs the attempt again.
    if let Some(failed) = agent.as_ref().and_then(|a| a.failed.clone()) {
        return Err(CliError::msg(format!("{label}: {failed}")).with_hint(format!(
            "its output is in `{stdout_log}`; once the model answers, `orcho resume {}` runs the \
             attempt again",
            request.run
        )));
    }
    let said = match std::fs::read_to_string(&output_doc) {
        Ok(text) => crate::phase_doc::parse(&text, request.phase.as_str()).map_err(|e| {
            CliError::msg(format!(
                "{label}: the output document `{output_doc}` is not valid: {e}"
            ))
            .with_hint(format!(
                "`orcho schema phase-output` prints what it may hold; fix the phase, then \
                 `orcho resume {}` runs the attempt again",
                request.run
            ))
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => crate::phase_doc::Said::default(),
        Err(e) => {
            return Err(CliError::msg(format!(
                "{label}: cannot read the output document `{output_doc}`: {e}"
            )));
        }
    };
    let stdout = match agent.as_ref().and_then(|a| a.result.clone()) {
        Some(result) => result,
        None => outcome.stdout.tail_lossy(),
    };
    let summary = said
        .summary
        .clone()
        .unwrap_or_else(|| stdout.trim().lines().last().unwrap_or("").to_owned());
    // A phase command is not a model: its cost is its wall time, plus what
    // it reported; an agent's adds the tokens and money it reported.
    let mut cost = Cost::wall(outcome.duration);
    if let Some(reported) = agent.as_ref().map(|a| a.cost) {
        cost += reported;
    }
    if let Some(reported) = said.cost {
        cost += reported;
    }
    if let Some(interruption) = said.interruption {
        place.progress(&format!(
            "{label}: {}",
            match &interruption {
                orcho::Interruption::Questions(_) => "asks questions",
                orcho::Interruption::Deviation(_) => "reports a failed step",
                _ => "stopped to ask",
            }
        ));
        let mut report = PhaseReport::interrupted(interruption).with_cost(cost);
        if let Some(plan) = said.plan {
            report = report.with_plan(plan);
        }
        return Ok(report);
    }
    let stopped_early = agent.as_ref().is_some_and(|a| a.incomplete);
    // An agent's exit code says it ran, not what it found: without a
    // report, its attempt is incomplete (a command's exit 0 approves).
    let unreported = agent.is_some() && !output_doc.exists();
    let report = if outcome.status.success() {
        let fallback = if stopped_early || unreported {
            Verdict::Incomplete
        } else {
            Verdict::Approved
        };
        let mut outcome = PhaseOutcome::new(said.verdict.unwrap_or(fallback))
            .with_summary(summary)
            .with_findings(said.findings);
        if unreported {
            outcome = outcome.with_findings([Finding::new(
                request.phase.as_str(),
                Severity::High,
                format!("{shown} wrote no report (the phase output document)"),
            )
            .with_detail(format!(
                "It was asked to report with `orcho report` or by writing `{output_doc}`; its \
                 last message is kept as the summary, and its transcript in `{artifacts}`."
            ))]);
        }
        outcome
    } else {
        let detail = output::text::output_detail(
            &stdout,
            &outcome.stderr.tail_lossy(),
            &[&stdout_log, &stderr_log],
        );
        PhaseOutcome::new(Verdict::Rejected)
            .with_summary(summary)
            .with_findings([Finding::new(
                request.phase.as_str(),
                Severity::High,
                format!("{shown} {}", outcome.status),
            )
            .with_detail(detail)])
            .with_findings(said.findings)
    };
    // An agent whose stops are guarded proves its work through its Stop
    // guard: one that ended without the guard answering is rejected.
    let mut report = report;
    if let Some(launch) = launch.as_ref().filter(|l| l.guard_stops) {
        let attempt = crate::hook::fired::Attempt::new(
            artifacts.clone(),
            request.run.as_str(),
            request.phase.as_str(),
            &request.attempt.to_string(),
        );
        let fired = attempt.read(&crate::key::receipt_key(place)?);
        if let Some(why) = fired.unguarded(runner::display(launch.agent), &attempt.file()) {
            report.verdict = Verdict::Rejected;
            report = report.with_findings([Finding::new(
                "orcho: the stop guard",
                Severity::High,
                format!("{shown} ended without proving its work to its Stop guard"),
            )
            .with_detail(why)]);
        }
    }
    place.progress(&format!("{label}: {}", report.verdict));
    // What the phase said it found, then the first finding's detail (a
    // failed command's output).
    const SHOWN: usize = 5;
    for finding in report.findings.iter().take(SHOWN) {
        place.progress(&format!("  - [{}] {}", finding.severity, finding.title));
    }
    if report.findings.len() > SHOWN {
        place.progress(&format!(
            "  … {} more finding(s); `orcho evidence` lists every one",
            report.findings.len() - SHOWN
        ));
    }
    if let Some(finding) = report.findings.first() {
        place.progress(&output::text::indented(&finding.detail, TAIL_LINES));
    }
    let mut report = PhaseReport::new(report).with_cost(cost);
    if let Some(plan) = said.plan {
        report = report.with_plan(plan);
    }
    Ok(report)
}

/// The longest `ORCHO_INPUT_TEXT`: an environment variable of more than
/// 128 KiB does not reach the program on Linux.
const MAX_INPUT_TEXT: usize = 64 * 1024;

/// The longest `ORCHO_INPUT`; a larger document is only in
/// `ORCHO_INPUT_FILE`.
const MAX_INPUT_JSON: usize = 96 * 1024;

pub(crate) fn bounded_text(text: &str) -> String {
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

/// Moves a file an earlier run of the same attempt left at `path` to
/// `<path>.<n>`, the first free `n`.
fn keep_earlier(path: &camino::Utf8Path) -> Result<(), CliError> {
    if !path.exists() {
        return Ok(());
    }
    for n in 1..1000 {
        let kept = camino::Utf8PathBuf::from(format!("{path}.{n}"));
        if !kept.exists() {
            return std::fs::rename(path, &kept)
                .map_err(|e| CliError::msg(format!("cannot keep `{path}` as `{kept}`: {e}")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_input_text_is_cut_on_a_character_boundary_and_says_so() {
        assert_eq!(bounded_text("short"), "short");
        let long = "é".repeat(MAX_INPUT_TEXT);
        let cut = bounded_text(&long);
        assert!(cut.len() < MAX_INPUT_TEXT + 100);
        assert!(
            cut.ends_with("[cut at 65536 bytes; the file ORCHO_INPUT_FILE names has everything]\n")
        );
        assert!(cut.starts_with("éé"));
    }
}
