//! `orcho runs`, `orcho cancel`, `orcho gc`: runs as things you manage.

use std::{fmt::Write as _, time::Duration};

use orcho::{Listed, core::RunId, handoff::DecidedBy};

use crate::{
    error::CliError,
    exit::Exit,
    host,
    output::{self, text},
    place::Place,
};

/// Lists every run of the store, newest first.
pub(crate) fn list(place: &Place) -> Result<Exit, CliError> {
    let runs = host::store(place).list()?;
    if place.json {
        output::json(&runs);
        return Ok(Exit::Ok);
    }
    if runs.is_empty() {
        output::out("no run in this store yet; `orcho run` starts one");
        return Ok(Exit::Ok);
    }
    let width = runs
        .iter()
        .map(|r| r.run().as_str().len())
        .max()
        .unwrap_or(3);
    let mut table = format!(
        "{:<width$}  {:<22}  {:<18}  WHERE\n",
        "RUN", "STATUS", "PHASE"
    );
    for listed in &runs {
        match listed {
            Listed::Run(view) => {
                let phase = view.phase.as_ref().map_or("-", |p| p.as_str());
                let at = text::waiting(view);
                let _ = writeln!(
                    table,
                    "{:<width$}  {:<22}  {:<18}  {at}",
                    view.run.as_str(),
                    text::status(view),
                    phase
                );
            }
            Listed::Unreadable { run, reason } => {
                let _ = writeln!(
                    table,
                    "{:<width$}  {:<22}  {:<18}  {reason}",
                    run.as_str(),
                    "unreadable",
                    "-"
                );
            }
            _ => {}
        }
    }
    output::out(table.trim_end());
    Ok(Exit::Ok)
}

/// What `orcho log --json` prints.
#[derive(Debug, serde::Serialize)]
struct LogDoc<'a> {
    run: &'a RunId,
    lines: Vec<&'a str>,
}

/// Prints a run's history, one numbered line per transition.
pub(crate) fn log(place: &Place, run: &RunId) -> Result<Exit, CliError> {
    let trace = host::store(place).trace(run)?;
    if place.json {
        output::json(&LogDoc {
            run,
            lines: trace.lines().collect(),
        });
    } else {
        for (n, line) in trace.lines().enumerate() {
            output::out(&format!("{:>3}  {line}", n + 1));
        }
    }
    Ok(Exit::Ok)
}

/// Prints a run's evidence bundle (and writes it beside the run).
pub(crate) fn evidence(place: &Place, run: &RunId) -> Result<Exit, CliError> {
    let engine = host::engine_for(place, run)?;
    let evidence = engine.evidence(run)?;
    engine.store().write_evidence(&evidence)?;
    if place.json {
        output::json(&evidence);
    } else {
        let path = engine.store().evidence_path(run);
        output::out(&text::evidence(&evidence, path.as_str()));
    }
    Ok(Exit::Ok)
}

/// Ends a run where it stands.
pub(crate) fn cancel(place: &Place, run: &RunId, reason: &str) -> Result<Exit, CliError> {
    let view = host::store(place).cancel(run, reason, DecidedBy::Operator)?;
    if place.json {
        output::json(&view);
    } else {
        output::out(&format!(
            "run {run} cancelled; its worktree stays until `orcho gc`"
        ));
    }
    Ok(Exit::Ok)
}

/// Removes what ended runs no longer need.
pub(crate) fn gc(place: &Place, keep_logs_days: u32, dry_run: bool) -> Result<Exit, CliError> {
    let keep = Duration::from_secs(u64::from(keep_logs_days) * 24 * 60 * 60);
    // The checkout's profile gives the worktree teardown.
    let (_, plan) = place.load_profile(None)?;
    let engine = orcho::Engine::builder(plan, &place.store).build()?;
    let report = engine.gc(keep, dry_run)?;
    if place.json {
        output::json(&report);
        return Ok(Exit::Ok);
    }
    let verb = if dry_run { "would remove" } else { "removed" };
    for (path, why) in &report.teardown_failed {
        output::err(&format!("kept {path}: its teardown failed: {why}"));
    }
    for path in report.worktrees.iter().chain(&report.logs) {
        output::out(&format!("{verb} {path}"));
    }
    output::out(&format!(
        "{verb} {} worktree(s) and {} log director(ies); {} run(s) not over were left alone",
        report.worktrees.len(),
        report.logs.len(),
        report.kept.len()
    ));
    Ok(Exit::Ok)
}
