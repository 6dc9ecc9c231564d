//! Running a phase: the command or agent given for it, through the
//! library's phase protocol ([`orcho::phase`]), with what the command line
//! says while it runs and the hints its errors carry.

use orcho::{
    Engine, PhaseReport, PhaseRequest,
    core::{Finding, Severity, Verdict},
    gates::PhaseOutcome,
    phase::{Attempt, PhaseError, PhaseProcess},
    receipts::exec::Leftover,
};

use crate::{
    error::CliError,
    host::RunConfig,
    interrupt, output,
    place::Place,
    runner::{self, PhaseRunner},
};

/// Where the processes of a phase find the run's store (its directory, or
/// a database's URL): what their hooks ask a person goes there.
pub const RUN_STORE_ENV: &str = "ORCHO_RUN_STORE";

/// How many lines of a failure's output are shown on the terminal.
pub const TAIL_LINES: usize = 12;

/// Runs the command `config` gives `request`'s phase in the run's checkout
/// (its worktree, or the checkout itself for a run in place). A phase
/// without a command is approved.
///
/// A command left running by an `orcho` that was killed is stopped first:
/// it would still be writing in the checkout.
pub async fn run_phase(
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
    let attempt = {
        let store = engine.store().clone();
        let request = request.clone();
        tokio::task::spawn_blocking(move || Attempt::prepare(&store, &request)).await??
    };
    for leftover in attempt.leftovers() {
        match leftover {
            Leftover::Stopped(group) => place.progress(&format!(
                "{label}: stopped process group {group}, left running by an `orcho` that was killed"
            )),
            Leftover::Unreadable(reason) => output::err(&format!("warning: {reason}")),
            _ => {}
        }
    }
    let files = attempt.files().clone();
    let paths = runner::AttemptPaths {
        checkout: &files.checkout,
        artifacts: &files.artifacts,
        output: &files.output,
        store: &files.receipts_store,
        run_dir: &files.run_dir,
    };
    let (process, launch) = match &runner {
        PhaseRunner::Command(argv) => (PhaseProcess::new(argv.iter().cloned()), None),
        PhaseRunner::Agent(spec) => {
            let ask_timeout = engine
                .plan()
                .ask_timeout
                .unwrap_or(orcho::handoff::ask::DEFAULT_ASK_TIMEOUT);
            let launch = runner::prepare(spec, request, config, &paths, ask_timeout)?;
            // An agent is the user's own program: it runs with the user's
            // environment (its credentials, endpoints, proxies), the keys
            // excepted.
            let secs = spec
                .timeout_secs
                .unwrap_or(runner::DEFAULT_AGENT_TIMEOUT_SECS);
            let mut process = PhaseProcess::new(launch.argv.iter().cloned())
                .user_environment()
                .timeout(std::time::Duration::from_secs(secs))
                .timeout_said(match spec.timeout_secs {
                    Some(_) => format!("runner.timeout_secs: {secs}"),
                    None => format!("runner.timeout_secs defaults to {secs}"),
                });
            for (name, value) in &launch.envs {
                process = process.env(name, value);
            }
            (process, Some(launch))
        }
    };
    // What the phase's processes ask a person (an agent's tool call the
    // rules answer `ask`) goes to the run's store: its directory, or the
    // database's URL.
    let run_store = place
        .store_named
        .as_ref()
        .filter(|named| orcho_pg::is_url(named.as_str()))
        .unwrap_or(&place.store);
    let process = process.env(RUN_STORE_ENV, run_store.as_str());
    let shown = match &launch {
        Some(launch) => runner::display(launch.agent).to_owned(),
        None => {
            let argv = process.argv();
            format!(
                "`{}`",
                shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| argv.join(" "))
            )
        }
    };
    // A program of the checkout (`./scripts/agent.sh`) runs from the run's
    // checkout: in a worktree, the copy the run started with.
    let fix_hint = fix_hint(place, request, &files.checkout, process.argv());
    place.progress(&format!("{label}: running {shown} …"));
    let process = process.cancel(interrupt::phase_started());
    let began = orcho::core::Timestamp::now();
    let ran = tokio::task::spawn_blocking(move || attempt.run(process)).await;
    interrupt::phase_ended();
    let ran = match ran? {
        Ok(ran) => ran,
        Err(PhaseError::Interrupted) => {
            // What the agent did so far is kept with the attempt.
            if let Some(launch) = &launch {
                let _ = runner::finish(launch, &files.stdout_log, &paths);
            }
            return Err(interrupt::error(&request.run));
        }
        // A program that cannot start says nothing about the work: it is an
        // error now, not a rejected attempt to retry.
        Err(PhaseError::CannotStart { message }) => {
            return Err(CliError::cannot_start(format!(
                "{label}: {shown} cannot start: {message}"
            ))
            .with_hint(format!(
                "the command runs in the run's checkout `{}`; make it start there, or give \
                 another: `orcho resume {} --phase {}=COMMAND`",
                files.checkout, request.run, request.phase
            )));
        }
        Err(e) => return Err(e.into()),
    };
    for warning in &ran.outcome.warnings {
        output::err(&format!("warning: {warning}"));
    }
    let agent = launch
        .as_ref()
        .map(|launch| runner::finish(launch, &files.stdout_log, &paths));
    // An agent whose model failed did no work: the run stops here, and
    // resuming runs the attempt again.
    if let Some(failed) = agent.as_ref().and_then(|a| a.failed.clone()) {
        return Err(
            CliError::msg(format!("{label}: {failed}")).with_hint(format!(
                "its output is in `{}`; once the model answers, `orcho resume {}` runs the attempt \
             again",
                files.stdout_log, request.run
            )),
        );
    }
    let reported = agent.as_ref().map(runner::AgentReport::reported);
    let mut report = ran.report(&shown, reported.as_ref()).map_err(|e| match e {
        PhaseError::Output { path, message } => CliError::msg(format!(
            "{label}: the output document `{path}` is not valid: {message}"
        ))
        .with_hint(format!(
            "`orcho schema phase-output` prints what it may hold; {fix_hint}"
        )),
        e => CliError::msg(format!("{label}: {e}")),
    })?;
    if let Some(interruption) = &report.interruption {
        place.progress(&format!(
            "{label}: {}",
            match interruption {
                orcho::Interruption::Questions(_) => "asks questions",
                orcho::Interruption::Deviation(_) => "reports a failed step",
                _ => "stopped to ask",
            }
        ));
        return Ok(report);
    }
    // An agent whose stops are guarded proves its work through its Stop
    // guard: one that ended without the guard answering is rejected.
    if let Some(launch) = launch.as_ref().filter(|l| l.guard_stops) {
        let attempt = orcho_agents::hook::fired::Attempt::new(
            files.artifacts.clone(),
            request.run.as_str(),
            request.phase.as_str(),
            &request.attempt.to_string(),
        );
        let fired = attempt.read(&crate::key::receipt_key(place)?);
        if let Some(why) = fired.unguarded(runner::display(launch.agent), &attempt.file()) {
            report.outcome.verdict = Verdict::Rejected;
            report.outcome = report.outcome.with_findings([Finding::new(
                "orcho: the stop guard",
                Severity::High,
                format!("{shown} ended without proving its work to its Stop guard"),
            )
            .with_detail(why)]);
        }
    }
    // A permission question whose hook ended without answering the agent
    // (killed while it waited for a person): the agent may have gone on
    // without the answer (most agents take a hook that failed as no
    // opinion), so the attempt proves nothing.
    {
        let left = engine
            .store()
            .asks_left_unanswered(&request.run, request.phase.as_str(), began)
            .unwrap_or_default();
        if !left.is_empty() {
            let each: Vec<String> = left
                .iter()
                .map(|a| format!("{} (`{}`)", a.id, a.question.subject))
                .collect();
            report.outcome.verdict = Verdict::Rejected;
            report.outcome = report.outcome.with_findings([Finding::new(
                "orcho: a permission question",
                Severity::High,
                format!("{shown}'s hook ended before it answered a permission question"),
            )
            .with_detail(format!(
                "the hook waiting for a person's answer to {} ended without answering the agent \
                 (killed, or it failed): the agent may have gone on without that answer, so \
                 this attempt proves nothing; `orcho log {}` lists the questions",
                each.join(", "),
                request.run
            ))]);
        }
    }
    place.progress(&format!("{label}: {}", report.outcome.verdict));
    // What the phase said it found, then the first finding's detail (a
    // failed command's output).
    const SHOWN: usize = 5;
    let findings = &report.outcome.findings;
    for finding in findings.iter().take(SHOWN) {
        place.progress(&format!("  - [{}] {}", finding.severity, finding.title));
    }
    if findings.len() > SHOWN {
        place.progress(&format!(
            "  … {} more finding(s); `orcho evidence` lists every one",
            findings.len() - SHOWN
        ));
    }
    if let Some(finding) = findings.first() {
        place.progress(&output::text::indented(&finding.detail, TAIL_LINES));
    }
    Ok(report)
}

/// How to run a fixed phase again: `orcho resume` where the phase's program
/// is what was fixed; where it is a file of the checkout and the run works
/// in a worktree, where to fix it (the worktree's copy runs, not the
/// checkout's) or how to run the fixed one.
fn fix_hint(
    place: &Place,
    request: &PhaseRequest,
    checkout: &camino::Utf8Path,
    argv: &[String],
) -> String {
    let run = &request.run;
    let program = argv.first().map(String::as_str).unwrap_or_default();
    let in_checkout = program.contains('/') && !program.starts_with('/');
    if !in_checkout || checkout == place.checkout {
        return format!("fix the phase, then `orcho resume {run}` runs the attempt again");
    }
    // `./scripts/agent.sh` is `scripts/agent.sh` of either checkout.
    let relative: camino::Utf8PathBuf = camino::Utf8Path::new(program)
        .components()
        .filter(|c| !matches!(c, camino::Utf8Component::CurDir))
        .collect();
    let rest: Vec<&str> = argv.iter().skip(1).map(String::as_str).collect();
    let mine = std::iter::once(place.checkout.join(&relative).into_string())
        .chain(rest.iter().map(|a| (*a).to_owned()))
        .collect::<Vec<_>>();
    let mine = shlex::try_join(mine.iter().map(String::as_str)).unwrap_or_else(|_| mine.join(" "));
    format!(
        "`{program}` runs from the run's worktree, as it was when the run started: fix `{}` and \
         `orcho resume {run}`, or run the one fixed here: `orcho resume {run} --phase {}={}`",
        checkout.join(&relative),
        request.phase,
        shlex::try_quote(&mine).map_or_else(|_| mine.clone(), |q| q.into_owned())
    )
}
