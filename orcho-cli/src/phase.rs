//! Running a phase: the command given for it, in the run's checkout; exit 0
//! approves, anything else rejects.

use orcho::{
    Engine, PhaseReport, PhaseRequest,
    core::{Cost, Finding, Severity, Verdict},
    gates::PhaseOutcome,
    receipts::exec::{
        self, BaseEnv, ExecRequest, ExitStatus, GroupMarker, LEFTOVER_GRACE, Leftover,
    },
};

use crate::{error::CliError, host::RunConfig, interrupt, output, place::Place};

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
    let Some(argv) = config.phases.get(request.phase.as_str()) else {
        place.progress(&format!("{label}: no command given; approved"));
        return Ok(PhaseReport::new(
            PhaseOutcome::new(Verdict::Approved).with_summary("no command given; approved"),
        ));
    };
    let shown = shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| argv.join(" "));
    let checkout = engine.status(&request.run)?.checkout;
    let checkout_shown = checkout.clone();
    place.progress(&format!("{label}: running `{shown}` …"));
    let marker = engine.phase_group(&request.run);
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
    let input = serde_json::to_string(&request.input)?;
    let (stdout_log, stderr_log) = engine.phase_logs(request);
    let mut command = ExecRequest::new(argv.iter().map(String::as_str))
        .cwd(checkout)
        .envs(BaseEnv::inherit())
        .env("ORCHO_RUN", request.run.as_str())
        .env("ORCHO_PHASE", request.phase.as_str())
        .env("ORCHO_ATTEMPT", request.attempt.to_string())
        .env("ORCHO_ROUND", request.round.to_string())
        .env("ORCHO_INPUT", input)
        .tail_bytes(TAIL_BYTES)
        .stdout_log(stdout_log.clone())
        .stderr_log(stderr_log.clone())
        .group_marker(marker)
        .cancel(interrupt::phase_started());
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
        return Err(CliError::msg(format!(
            "{label}: `{shown}` cannot start: {message}"
        ))
        .with_hint(format!(
            "the command runs in the run's checkout `{checkout_shown}`; make it start there, or give \
             another: `orcho resume {} --phase {}=COMMAND`",
            request.run, request.phase
        )));
    }
    let stdout = outcome.stdout.tail_lossy();
    let summary = stdout.trim().lines().last().unwrap_or("").to_owned();
    let report = if outcome.status.success() {
        PhaseOutcome::new(Verdict::Approved).with_summary(summary)
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
                format!("`{shown}` {}", outcome.status),
            )
            .with_detail(detail)])
    };
    place.progress(&format!("{label}: {}", report.verdict));
    if let Some(finding) = report.findings.first() {
        place.progress(&output::text::indented(&finding.detail, TAIL_LINES));
    }
    // A phase command is not a model: its cost is its wall time.
    Ok(PhaseReport::new(report).with_cost(Cost::wall(outcome.duration)))
}
