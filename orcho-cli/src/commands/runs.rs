//! `orcho runs`, `orcho log`, `orcho evidence`, `orcho cancel`, `orcho gc`:
//! runs as things you manage.

use std::{fmt::Write as _, time::Duration};

use orcho::{Listed, core::RunId, handoff::decision::DecidedBy};

use crate::{
    error::CliError,
    host,
    output::{Report, text},
    place::Place,
};

/// The checkout's runs (with `team`, every run of a shared store), newest
/// first.
pub(crate) fn list(place: &Place, team: bool) -> Result<Report, CliError> {
    let shared = place.shared.is_some();
    let store = if team {
        place.team_store()
    } else {
        place.store()
    };
    let runs = store.list()?;
    // Where each run was started, for a store a team shares.
    let origins: Vec<Option<orcho::core::storage::RunOrigin>> = if shared {
        let ids: Vec<_> = runs
            .iter()
            .filter_map(|listed| match listed {
                Listed::Run(view) => Some(view.run.clone()),
                _ => None,
            })
            .collect();
        let mut found = store.origins(&ids)?;
        runs.iter()
            .map(|listed| match listed {
                Listed::Run(view) => found.remove(&view.run),
                _ => None,
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut table = runs_table(&runs, &origins);
    if shared && !team {
        table.push_str(
            "\n(this checkout's runs; `orcho runs --team` lists every machine's and checkout's)",
        );
    } else if team && !shared {
        place.progress(
            "note: this store is this checkout's own, so `--team` lists what `orcho runs` \
             does; a team shares a PostgreSQL store (`--store postgres://…`)",
        );
    }
    Ok(Report::new(&runs).line(table))
}

/// The runs as a table, each with where it was started when `origins`
/// says (a shared store), or what to do when there is none.
fn runs_table(runs: &[Listed], origins: &[Option<orcho::core::storage::RunOrigin>]) -> String {
    if runs.is_empty() {
        return "no run in this store yet; `orcho run` starts one".to_owned();
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
    for (n, listed) in runs.iter().enumerate() {
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
                if let Some(task) = &view.task {
                    let _ = writeln!(table, "{:<width$}  task: {}", "", text::task_line(task));
                }
                if let Some(spent) = text::cost(&view.cost) {
                    let _ = writeln!(table, "{:<width$}  cost: {spent}", "");
                }
                if let Some(Some(origin)) = origins.get(n)
                    && !origin.here
                {
                    let repository = origin
                        .repository
                        .as_deref()
                        .map(|r| format!(" ({r})"))
                        .unwrap_or_default();
                    let _ = writeln!(
                        table,
                        "{:<width$}  started on {} in {}{repository}; driven there",
                        "", origin.machine, origin.checkout
                    );
                }
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
    table.trim_end().to_owned()
}

/// What `orcho log --json` prints.
#[derive(Debug, serde::Serialize)]
struct LogDoc<'a> {
    run: &'a RunId,
    lines: Vec<&'a str>,
    /// Every decision recorded on the run: what, who, when.
    decisions: &'a [orcho::DecisionAudit],
}

/// A run's history, one numbered line per transition.
pub(crate) fn log(place: &Place, run: &RunId) -> Result<Report, CliError> {
    let store = place.store();
    let trace = store.trace(run)?;
    let decisions = store.decisions(run)?;
    let mut shown: Vec<String> = trace
        .lines()
        .enumerate()
        .map(|(n, line)| format!("{:>3}  {line}", n + 1))
        .collect();
    if !decisions.is_empty() {
        shown.push("decisions:".to_owned());
        shown.extend(decisions.iter().map(text::decision_audit));
    }
    Ok(Report::new(&LogDoc {
        run,
        lines: trace.lines().collect(),
        decisions: &decisions,
    })
    .line(shown.join("\n")))
}

/// A run's evidence bundle, written beside the run.
pub(crate) fn evidence(place: &Place, run: &RunId) -> Result<Report, CliError> {
    let store = place.keyed_store()?;
    // The receipts are classified under the contract of the run's profile.
    let contract = host::read_config(place, run)?
        .map(|config| crate::place::load(&config.profile))
        .transpose()?
        .and_then(|(_, plan)| plan.verification);
    let evidence = store.evidence(run, contract.as_ref())?;
    store.write_evidence(&evidence)?;
    let path = store.evidence_path(run);
    Ok(Report::new(&evidence).line(text::evidence(&evidence, path.as_str())))
}

/// Ends a run where it stands.
pub(crate) fn cancel(place: &Place, run: &RunId, reason: &str) -> Result<Report, CliError> {
    let store = place.store();
    let view = store.cancel(run, reason, DecidedBy::Operator)?;
    let mut report = Report::new(&view);
    // A phase command or agent its `orcho` left running (killed, or its
    // terminal closed) stops with the run.
    if let Some(note) = stop_leftover(&store, run) {
        report = report.note(note);
    }
    Ok(report.line(format!(
        "run {run} cancelled; its worktree stays until `orcho gc`"
    )))
}

/// Stops the process group of a phase command (or agent) of `run` that a
/// killed `orcho` left running, and says so.
fn stop_leftover(store: &orcho::Store, run: &RunId) -> Option<String> {
    use orcho::receipts::exec::{LEFTOVER_GRACE, Leftover};
    match store.phase_group(run).stop_leftover(LEFTOVER_GRACE) {
        Ok(Leftover::Stopped(group)) => Some(format!(
            "stopped process group {group}, left running by an `orcho` that was killed"
        )),
        Ok(Leftover::Unreadable(reason)) => Some(format!("warning: {reason}")),
        Ok(_) => None,
        Err(e) => Some(format!(
            "warning: cannot stop what run {run} left running: {e}"
        )),
    }
}

/// Removes what ended runs no longer need.
pub(crate) fn gc(place: &Place, keep_logs_days: u32, dry_run: bool) -> Result<Report, CliError> {
    let keep = Duration::from_secs(u64::from(keep_logs_days) * 24 * 60 * 60);
    // The checkout's profile gives the worktree teardown.
    let (_, plan) = place.load_profile(None)?;
    let engine = orcho::Engine::builder(plan, place.store()).build()?;
    // Nothing of a run keeps running in a worktree gc removes.
    let mut stopped = Vec::new();
    if !dry_run {
        for listed in engine.store().list()? {
            if let Listed::Run(view) = listed
                && view.status.is_terminal()
                && let Some(note) = stop_leftover(engine.store(), &view.run)
            {
                stopped.push(note);
            }
        }
    }
    let report = engine.gc(keep, dry_run)?;
    let verb = if dry_run { "would remove" } else { "removed" };
    let mut shown = Report::new(&report);
    for note in stopped {
        shown = shown.note(note);
    }
    for (path, why) in &report.teardown_failed {
        shown = shown.note(format!("kept {path}: its teardown failed: {why}"));
    }
    for path in report.worktrees.iter().chain(&report.logs) {
        shown = shown.line(format!("{verb} {path}"));
    }
    for (run, bytes) in &report.seed_patches {
        shown = shown.line(format!(
            "{verb} the intake seed patch of run {run}{}",
            match bytes {
                0 => String::new(),
                n => format!(" ({})", text::bytes(*n)),
            }
        ));
    }
    Ok(shown.line(format!(
        "{verb} {} worktree(s), {} seed patch(es) and {} log director(ies); {} run(s) not over \
         were left alone",
        report.worktrees.len(),
        report.seed_patches.len(),
        report.logs.len(),
        report.kept.len()
    )))
}
