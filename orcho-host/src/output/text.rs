//! The text forms of what the CLI prints, for people.

use std::fmt::Write as _;

use camino::Utf8Path;

use crate::error::{target_remedy, target_remedy_decided};
use crate::gate_now::GateNow;

use orcho::{
    core::{Finding, RunId},
    delivery::{DeliveryGate, IntakeReport},
    handoff::handoff::{HandoffChoice, PhaseHandoff},
    receipts::{EnvStatus, ReadinessSummary, ReceiptStatus},
};

/// One row per required and optional command: status, what to do next,
/// and why.
pub fn readiness_table(summary: &ReadinessSummary) -> String {
    let rows: Vec<(String, &str, &str, String)> = summary
        .required
        .iter()
        .map(|r| (r, "required"))
        .chain(summary.optional.iter().map(|r| (r, "optional")))
        .map(|(r, kind)| {
            let reason = match (&r.status, r.status.next_action()) {
                // Which dependency checkouts the proof was taken against.
                (ReceiptStatus::Present, _) if !r.dependencies.is_empty() => format!(
                    "against {}",
                    r.dependencies
                        .iter()
                        .map(|d| format!("`{}` at {}", d.name, d.provenance()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                (ReceiptStatus::Present, _) | (_, None) => String::new(),
                (other, Some(next)) => format!("{next}: {}", other.reason()),
            };
            // What its runner reported, where it said: how many passed, and
            // what did not run.
            let reason = match (&r.tests, &r.status) {
                (Some(t), ReceiptStatus::Present) if reason.is_empty() => t.to_string(),
                (Some(t), ReceiptStatus::Present) => format!("{t}; {reason}"),
                _ => reason,
            };
            (r.command.to_string(), kind, r.status.as_str(), reason)
        })
        .collect();
    let width = rows
        .iter()
        .map(|r| r.0.len())
        .max()
        .unwrap_or(0)
        .max("COMMAND".len());
    let mut table = format!(
        "{:<width$}  {:<8}  {:<7}  REASON\n",
        "COMMAND", "KIND", "STATUS"
    );
    for (command, kind, status, reason) in rows {
        let _ = writeln!(table, "{command:<width$}  {kind:<8}  {status:<7}  {reason}");
    }
    table.trim_end().to_owned()
}

/// The declared environments and the status of their assertions, for
/// `orcho status`; `None` when the contract declares none.
pub fn environment_table(summary: &ReadinessSummary) -> Option<String> {
    if summary.environments.is_empty() {
        return None;
    }
    let width = summary
        .environments
        .iter()
        .map(|e| e.name.as_str().len())
        .max()
        .unwrap_or(0)
        .max("ENVIRONMENT".len());
    let mut table = format!("{:<width$}  {:<11}  DETAIL\n", "ENVIRONMENT", "ASSERTIONS");
    for e in &summary.environments {
        let detail = match e.status {
            EnvStatus::NotChecked | EnvStatus::Stale => {
                format!("{}; `orcho verify` checks it", e.detail)
            }
            _ => e.detail.clone(),
        };
        let _ = writeln!(
            table,
            "{:<width$}  {:<11}  {detail}",
            e.name.as_str(),
            e.status.as_str()
        );
    }
    Some(table.trim_end().to_owned())
}

/// Advice as the interactive prompt shows it, before asking.
pub fn advice_shown(record: &orcho::handoff::advisor::AdviceRecord) -> String {
    let full = advice_lines(record);
    format!("{full}\nadvice decides nothing: `a` takes it, or choose yourself")
}

/// Advice as `orcho handoff advise` prints it, with the command that
/// follows it.
pub fn advice(run: &RunId, record: &orcho::handoff::advisor::AdviceRecord) -> String {
    let mut text = advice_lines(record);
    let a = record.advice();
    let action = a.recommended_action;
    let text_arg = match (&a.retry_feedback, action.requires_text()) {
        (Some(f), true) => format!(" --note {}", shell_quote(f)),
        (None, true) => " --note \"…\"".to_owned(),
        _ => String::new(),
    };
    let _ = write!(
        text,
        "\nadvice decides nothing; to follow it: orcho handoff decide {run} {action}{text_arg} --advice {}",
        record.id()
    );
    text
}

fn advice_lines(record: &orcho::handoff::advisor::AdviceRecord) -> String {
    let a = record.advice();
    let mut text = format!(
        "advice {} by {} on handoff {}: {}",
        record.id(),
        record.advisor(),
        record.handoff(),
        a.recommended_action
    );
    if let Some(c) = a.confidence.value() {
        let _ = write!(text, " (confidence {c:.2})");
    }
    let _ = write!(text, "\n  why: {}", a.rationale);
    if let Some(feedback) = &a.retry_feedback {
        let _ = write!(text, "\n  feedback for the retry: {feedback}");
    }
    for risk in &a.risks {
        let _ = write!(text, "\n  risk: {risk}");
    }
    if !a.expected_files.is_empty() {
        let files: Vec<&str> = a.expected_files.iter().map(|f| f.as_str()).collect();
        let _ = write!(text, "\n  expected to change: {}", files.join(", "));
    }
    if let Some(usage) = &a.usage {
        let mut cost = Vec::new();
        if let Some(usd) = usage.usd {
            cost.push(usd.to_string());
        }
        if let Some(t) = usage.tokens {
            cost.push(format!("{} in / {} out tokens", t.input, t.output));
        }
        if !cost.is_empty() {
            let _ = write!(text, "\n  cost: {}", cost.join(", "));
        }
    }
    text
}

/// `text` quoted for a POSIX shell.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// What `orcho status` concludes under its table: ready, or what to do
/// about the required commands that are not present.
pub fn readiness_verdict(summary: &ReadinessSummary) -> String {
    let mut fix = Vec::new();
    let mut no_test = Vec::new();
    let mut rerun = Vec::new();
    let mut investigate = Vec::new();
    for r in &summary.required {
        let name = format!("`{}`", r.command);
        match r.status.next_action() {
            // It passed, and proves nothing: no test ran.
            Some(orcho::receipts::NextAction::Fix)
                if matches!(r.status, ReceiptStatus::Vacuous { .. }) =>
            {
                no_test.push(name);
            }
            Some(orcho::receipts::NextAction::Fix) => fix.push(name),
            Some(orcho::receipts::NextAction::Rerun) => rerun.push(name),
            Some(_) => investigate.push(name),
            None => {}
        }
    }
    if fix.is_empty() && no_test.is_empty() && rerun.is_empty() && investigate.is_empty() {
        return "ready: every required receipt is present".to_owned();
    }
    let mut steps = Vec::new();
    if !fix.is_empty() {
        steps.push(format!(
            "fix what makes {} fail, then `orcho verify`",
            fix.join(", ")
        ));
    }
    if !no_test.is_empty() {
        steps.push(format!(
            "give {} a test to run (it ran none, so it proves nothing), then `orcho verify`",
            no_test.join(", ")
        ));
    }
    if !rerun.is_empty() {
        steps.push(format!("run `orcho verify` for {}", rerun.join(", ")));
    }
    if !investigate.is_empty() {
        steps.push(format!(
            "look into {} (its receipt cannot be trusted), then `orcho verify`",
            investigate.join(", ")
        ));
    }
    format!("not ready: {}", steps.join("; "))
}

/// How many lines of a finding's detail a decision point shows.
const DETAIL_LINES: usize = 12;

fn finding_line(f: &Finding) -> String {
    let place = match (&f.file, f.line) {
        (Some(file), Some(line)) => format!(" ({file}:{line})"),
        (Some(file), None) => format!(" ({file})"),
        _ => String::new(),
    };
    let mut line = format!("  - [{}] {}: {}{place}\n", f.severity, f.source, f.title);
    if !f.detail.trim().is_empty() {
        line.push_str(&indented(&f.detail, DETAIL_LINES));
        line.push('\n');
    }
    line
}

/// A phase handoff: its verdict, findings, actions, and the decision
/// recorded on it.
pub fn handoff(h: &PhaseHandoff, decided: Option<&HandoffChoice>) -> String {
    let mut text = format!(
        "handoff {} — phase `{}` {} (trigger: {})\n",
        h.id(),
        h.phase(),
        h.verdict(),
        h.trigger()
    );
    text.extend(h.findings().iter().map(finding_line));
    text.push_str(&menu(
        &orcho::point::PointView::of_handoff(h).actions,
        false,
    ));
    if let Some(choice) = decided {
        let _ = write!(text, "\ndecided: {}", choice.action());
    }
    text
}

/// The uncommitted changes a run would start without.
pub fn intake(report: &IntakeReport) -> String {
    let mut text = format!(
        "the checkout {} has {} uncommitted change(s) on top of {}:\n",
        report.checkout(),
        report.count(),
        report.head().get(..12).unwrap_or(report.head())
    );
    let mut heavy = 0u64;
    let mut weigh = |path: &Utf8Path| {
        let (size, binary) = weight(&report.checkout().join(path));
        if size >= LARGE {
            heavy = heavy.saturating_add(size);
        }
        match (size >= LARGE, binary) {
            (true, true) => format!(" ({}, binary)", bytes(size)),
            (true, false) => format!(" ({})", bytes(size)),
            (false, true) => " (binary)".to_owned(),
            (false, false) => String::new(),
        }
    };
    for change in report.tracked() {
        let said = weigh(change.path());
        let _ = writeln!(text, "  {:?} {}{said}", change.kind(), change.path());
    }
    for path in report.untracked() {
        let said = weigh(path);
        let _ = writeln!(text, "  untracked {path}{said}");
    }
    if heavy > 0 {
        let _ = writeln!(
            text,
            "warning: `include` copies {} of large files into the run's seed patch; \
             `exclude` them (or commit, or git-ignore them) unless the run needs them",
            bytes(heavy)
        );
    }
    text.trim_end().to_owned()
}

/// From what size a file the intake would copy is said to be large.
const LARGE: u64 = 1024 * 1024;

/// The size of the file at `path`, and whether its first bytes hold a NUL
/// (binary, as git judges it); nothing for what cannot be read.
fn weight(path: &Utf8Path) -> (u64, bool) {
    use std::io::Read as _;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return (0, false);
    };
    if !meta.is_file() {
        return (0, false);
    }
    let mut head = [0u8; 8000];
    let read = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    (meta.len(), head[..read].contains(&0))
}

/// A delivery gate: verdicts, diff, gaps, findings and actions. With the
/// target's status checked now, the actions it would refuse are taken off
/// the list, with what stands in the way and how to clear it.
pub fn gate(gate: &DeliveryGate, now: &GateNow) -> String {
    let waived = match gate.waived_findings().len() {
        0 => String::new(),
        1 => ", 1 finding waived".to_owned(),
        n => format!(", {n} findings waived"),
    };
    let overrides = match now.overridden.len() {
        0 => waived,
        1 => format!("{waived}, after 1 handoff overridden"),
        n => format!("{waived}, after {n} handoffs overridden"),
    };
    let mut text = format!(
        "delivery gate of run {} — release {} (reviewer {}{overrides})\n",
        gate.run(),
        gate.verdict(),
        gate.reviewer_verdict(),
    );
    if let Some(task) = &now.task {
        let _ = writeln!(text, "task: {}", task_line(task));
    }
    let _ = writeln!(text, "diff: {}", gate.diff());
    // The files, as many as a screen holds; `--json` lists every one.
    const FILES: usize = 20;
    for file in gate.diff().files().iter().take(FILES) {
        let _ = match (file.is_binary(), file.insertions(), file.deletions()) {
            (false, Some(added), Some(removed)) => {
                writeln!(text, "  +{added} -{removed}  {}", file.path())
            }
            _ => writeln!(text, "  binary  {}", file.path()),
        };
    }
    if let Some(more) = gate
        .diff()
        .files()
        .len()
        .checked_sub(FILES)
        .filter(|n| *n > 0)
    {
        let _ = writeln!(text, "  … {more} more file(s); `--json` lists every one");
    }
    let _ = writeln!(text, "worktree: {}", gate.worktree());
    for o in &now.overridden {
        let by = o.client.as_deref().unwrap_or(o.decided_by.as_str());
        let _ = writeln!(
            text,
            "  overridden: handoff {} — `{}` {} (trigger: {}), continued by {by}",
            o.handoff, o.phase, o.verdict, o.trigger
        );
    }
    for gap in gate.gaps() {
        let _ = writeln!(text, "  gap: {gap}");
    }
    if !gate.gaps().is_empty() && now.ended.is_none() {
        let _ = writeln!(
            text,
            "  `orcho delivery rerun {}` runs the missing and stale commands again in the \
             run's worktree, then shows the gate again",
            gate.run()
        );
    }
    text.extend(gate.findings().iter().map(finding_line));
    for blocked in gate.blocked() {
        let _ = writeln!(
            text,
            "  `{}` unavailable: {}",
            blocked.action(),
            blocked.reason()
        );
    }
    for waiver in gate.waivers() {
        let _ = writeln!(text, "  waived: {waiver}");
    }
    if let Some(ended) = &now.ended {
        let _ = write!(text, "{ended}: nothing to decide");
        return text;
    }
    if let Some(decided) = &now.decided {
        if let Some(status) = now.target.as_ref().filter(|t| t.refuses(decided.action)) {
            let _ = writeln!(text, "target {}: {status}", gate.target());
            let _ = writeln!(
                text,
                "  {} `orcho resume {}`",
                target_remedy_decided(status),
                gate.run()
            );
        }
        let _ = write!(
            text,
            "decided: {} (by {} at {}); `orcho resume {}` delivers it",
            decided.action,
            decided.by,
            decided.at,
            gate.run()
        );
        return text;
    }
    let mut actions = gate.available_actions();
    if let Some(status) = now.target.as_ref().filter(|t| !t.is_clean()) {
        let _ = writeln!(text, "target {}: {status}", gate.target());
        let refused = actions.intersection(status.refused());
        if !refused.is_empty() {
            let _ = writeln!(
                text,
                "  {} refused now: {}",
                orcho::core::spelling::quoted(refused.spellings()),
                target_remedy(status)
            );
            refused.iter().for_each(|a| actions.remove(a));
        }
    }
    let view = orcho::point::PointView::of_gate(gate.run(), gate);
    let offered: Vec<_> = view
        .actions
        .into_iter()
        .filter(|a| actions.spellings().contains(&a.name.as_str()))
        .collect();
    text.push_str(&menu(&offered, false));
    text
}

/// A supervision touchpoint: the plan, the failed step or the questions.
pub fn touchpoint(request: &orcho::SupervisionRequest) -> String {
    use orcho::handoff::supervision::Touchpoint;
    let mut out = String::new();
    match &request.touchpoint {
        Touchpoint::PlanApproval { plan } => {
            // The first question shows the plan itself.
            let _ = writeln!(out, "a plan waits for approval (digest {}):", plan.digest());
        }
        Touchpoint::Deviation { deviation, .. } => {
            let _ = writeln!(
                out,
                "step {} failed ({} retries so far): {}",
                deviation.step, deviation.retries, deviation.description
            );
            let _ = writeln!(out, "  error: {}", deviation.error);
        }
        _ => {
            let _ = writeln!(out, "the planner asks:");
        }
    }
    for (i, question) in request.questions.questions().iter().enumerate() {
        let _ = writeln!(
            out,
            "{}. [{}] {}",
            i + 1,
            question.header(),
            question.question()
        );
        for (n, option) in question.options().iter().enumerate() {
            match &option.description {
                Some(d) => {
                    let _ = writeln!(out, "   {}) {} — {d}", n + 1, option.label);
                }
                None => {
                    let _ = writeln!(out, "   {}) {}", n + 1, option.label);
                }
            }
        }
    }
    out.trim_end().to_owned()
}

/// The decision inbox: a line per pending decision, per unreadable run and
/// per run stopped mid-phase.
pub fn inbox(team: &orcho::TeamInbox) -> String {
    let (inbox, stopped, origins) = (&team.inbox, &team.stopped, &team.origins);
    // With a shared store, a run started elsewhere says where.
    let elsewhere = |run: &RunId| match origins.get(run) {
        Some(origin) if !origin.here => format!("  on {origin}"),
        _ => String::new(),
    };
    if inbox.is_empty() && stopped.is_empty() {
        return match team.page {
            Some(page) if team.total > 0 => format!(
                "page {} is past the last ({} of {} entries); try `--page {}`",
                page.number,
                page.count(team.total),
                team.total,
                page.count(team.total)
            ),
            _ => "no run is waiting for a decision".to_owned(),
        };
    }
    let mut text = String::new();
    for p in inbox.pending() {
        let _ = writeln!(
            text,
            "{}  {}  {}  actions: {}  next: {}{}",
            p.run(),
            p.phase(),
            p.trigger(),
            p.available_actions().join(", "),
            p.next_step(),
            elsewhere(p.run()),
        );
    }
    for d in inbox.degraded() {
        let _ = writeln!(text, "unreadable run {}: {}", d.dir(), d.reason());
    }
    for view in stopped {
        let _ = writeln!(
            text,
            "{}  {}  next: orcho resume {}{}",
            view.run,
            waiting(view),
            view.run,
            elsewhere(&view.run),
        );
    }
    if let Some(page) = team.page {
        let pages = page.count(team.total);
        let _ = write!(
            text,
            "page {} of {pages} ({} waiting)",
            page.number, team.total
        );
        if page.number < pages {
            let _ = write!(text, "; `--page {}` for the next", page.number + 1);
        }
    }
    text.trim_end().to_owned()
}

/// One decision of a run's audit: `  0001-review (phase_handoff): halt by
/// operator alice@build-3 at …`.
pub fn decision_audit(d: &orcho::DecisionAudit) -> String {
    let mut line = format!("     {} ({})", d.point, d.kind);
    if let Some(action) = &d.action {
        let _ = write!(line, ": {action}");
    }
    let _ = write!(line, " by {}", d.decided_by);
    if let Some(client) = &d.client {
        let _ = write!(line, " {client}");
    }
    if let Some(who) = &d.by {
        let _ = write!(line, " {who}");
    }
    let _ = write!(line, " at {}", d.decided_at);
    if let Some(note) = &d.note {
        let _ = write!(line, ": {}", task_line(note));
    }
    line
}

/// What a run waits on, or why it ended, in a few words.
pub fn waiting(view: &orcho::RunView) -> String {
    use orcho::Waiting;
    match &view.waiting {
        Some(Waiting::Intake) => "intake decision".to_owned(),
        Some(Waiting::PhaseHandoff { id: Some(id) }) => format!("handoff {id}"),
        Some(Waiting::PhaseHandoff { id: None }) => "handoff (opening)".to_owned(),
        Some(Waiting::Touchpoint { kind, .. }) => format!("{} touchpoint", kind.as_str()),
        Some(Waiting::Delivery) => "delivery gate".to_owned(),
        Some(_) => "a decision".to_owned(),
        None if view.stopped => match &view.phase {
            Some(phase) => format!("stopped in `{phase}`; nothing drives it"),
            None => "stopped; nothing drives it".to_owned(),
        },
        None => {
            let reason = view.reason.clone().unwrap_or_default();
            // A worktree the reason names that `orcho gc` removed since.
            let worktree = view.checkout.as_str();
            if view.target.as_ref().is_some_and(|t| *t != view.checkout)
                && reason.contains(worktree)
                && !view.checkout.exists()
            {
                reason.replace(worktree, &format!("{worktree} (removed since)"))
            } else {
                reason
            }
        }
    }
}

/// A run's status in a table: `stopped` for a run nothing drives any more.
pub fn status(view: &orcho::RunView) -> &'static str {
    if view.stopped {
        "stopped"
    } else {
        view.status.as_str()
    }
}

/// A decision recorded for `orcho resume` to act on.
pub fn decided(run: &RunId, point: &str, action: &str) -> String {
    format!("recorded `{action}` on the {point} of run {run}; `orcho resume {run}` acts on it")
}

/// The point a run waits at, as `orcho decide RUN` shows it: what waits,
/// the questions a touchpoint asks, each action with what it does and the
/// note it takes, what a decision is pinned to, and how to decide.
pub fn point(view: &orcho::point::PointView) -> String {
    let run = &view.run;
    let mut text = format!("{} of run {run}", view.kind);
    if let Some(id) = &view.id {
        let _ = write!(text, " ({id})");
    }
    let _ = write!(text, ": {}", view.headline);
    for finding in &view.findings {
        let _ = write!(
            text,
            "\n  - [{}] {}: {}",
            finding.severity, finding.source, finding.title
        );
    }
    if view.kind == orcho::point::PointKind::PlannerQuestions {
        for (i, q) in view.questions.iter().enumerate() {
            let _ = write!(text, "\n{}. [{}] {}", i + 1, q.header, q.question);
            for (n, option) in q.options.iter().enumerate() {
                let _ = write!(text, "\n     {}) {option}", n + 1);
            }
        }
    } else if let Some(about) = view.questions.first() {
        // Its first question is its choice of action: what it is about is
        // said, its options are the actions below.
        let _ = write!(text, "\n{}", about.question.trim_end());
    }
    let _ = write!(text, "\n{}", menu(&view.actions, true));
    for pinned in &view.pinned {
        let _ = write!(text, "\npinned: the {} {}", pinned.what, pinned.digest);
    }
    let _ = write!(text, "\ndecide: orcho decide {run} <ACTION> [--note TEXT]");
    text
}

/// `actions:` and one line for each: its name, what it does, and the note
/// it needs (with `optional`, also the one it may take).
fn menu(actions: &[orcho::point::ActionView], optional: bool) -> String {
    let mut text = String::from("actions:");
    let width = actions.iter().map(|a| a.name.len()).max().unwrap_or(0);
    for action in actions {
        let _ = write!(text, "\n  {:<width$}  {}", action.name, action.does);
        match action.note {
            orcho::point::Note::Required(what) => {
                let _ = write!(text, " (needs --note: {what})");
            }
            orcho::point::Note::Optional(what) if optional => {
                let _ = write!(text, " (--note: {what})");
            }
            _ => {}
        }
    }
    text
}

/// A run paused at a decision nobody has taken, and how to take it.
pub fn paused(run: &RunId, status: &str, point: &str, hint: &str) -> String {
    format!(
        "run {run} is paused awaiting {} {point} decision ({status}).\nnext: {hint}, then `orcho resume {run}`",
        article(point)
    )
}

/// `an` before a word that starts with a vowel (`an intake decision`),
/// else `a`.
fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// A size in bytes, as a person reads it: `512 B`, `3.4 KiB`, `369.0 MiB`,
/// `1.2 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    #[expect(clippy::cast_precision_loss, reason = "a size shown to one decimal")]
    let mut size = n as f64 / 1024.0;
    let mut unit = 0;
    while size >= 1024.0 && unit + 1 < UNITS.len() {
        size /= 1024.0;
        unit += 1;
    }
    format!("{size:.1} {}", UNITS[unit])
}

/// A run that finished, and where its evidence is.
pub fn finished(run: &RunId, status: &str, reason: &str, evidence: &str) -> String {
    format!("run {run} {status}: {reason}\nevidence: {evidence}")
}

/// The last `lines` lines of `text`, indented under the line that
/// announced them, with a mark where lines were left out.
///
/// What a test runner says about why a test failed is kept from the lines
/// left out: Rust's `panicked at` line with the message under it, and
/// pytest's `E` lines.
pub fn indented(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    let skip = all.len().saturating_sub(lines);
    let mut out = String::new();
    if skip > 0 {
        let telling = telling_lines(&all[..skip]);
        if telling.is_empty() {
            let _ = writeln!(out, "    … {skip} earlier line(s)");
        } else {
            let _ = writeln!(out, "    … {skip} earlier line(s), among them:");
            for line in telling {
                let _ = writeln!(out, "    {line}");
            }
            let _ = writeln!(out, "    …");
        }
    }
    for line in &all[skip..] {
        let _ = writeln!(out, "    {line}");
    }
    out.trim_end().to_owned()
}

/// The most lines [`telling_lines`] keeps.
const TELLING_LINES: usize = 12;

/// The lines of a test runner's output that say why a test failed: a
/// Rust panic (`thread '…' (ID) panicked at FILE:LINE:COL:` and the message
/// under it, up to a blank line) and pytest's `E` lines.
fn telling_lines<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    let mut kept = Vec::new();
    let mut rest = lines.iter().copied();
    while let Some(line) = rest.next() {
        if kept.len() >= TELLING_LINES {
            break;
        }
        if line.starts_with("thread '") && line.contains(" panicked at ") {
            kept.push(line);
            for message in rest.by_ref() {
                if message.trim().is_empty()
                    || message.starts_with("note:")
                    || kept.len() >= TELLING_LINES
                {
                    break;
                }
                kept.push(message);
            }
        } else if line.starts_with("E ") || unittest_failure(line) || python_exception(line) {
            kept.push(line);
        }
    }
    kept
}

/// unittest's header of a failure: `FAIL: test_empty (mod.T.test_empty)`.
fn unittest_failure(line: &str) -> bool {
    line.strip_prefix("FAIL: ")
        .or_else(|| line.strip_prefix("ERROR: "))
        .and_then(|rest| rest.split_once(" ("))
        .is_some_and(|(method, path)| !method.contains(' ') && path.ends_with(')'))
}

/// Python's line naming an exception: `AssertionError: Lists differ: …`.
fn python_exception(line: &str) -> bool {
    line.split_once(": ").is_some_and(|(name, _)| {
        (name.ends_with("Error") || name.ends_with("Exception"))
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    })
}

/// One gate of a settled attempt: how it ended, why, and the end of its
/// output.
pub fn gate_result(record: &orcho::gates::GateRecord, lines: usize) -> String {
    let result = &record.result;
    let secs = result.duration.as_secs_f64();
    let mut text = format!(
        "  gate `{}`: {} [on_fail: {}] in {secs:.1}s",
        result.gate,
        result.outcome.as_str(),
        record.on_fail
    );
    if result.outcome.is_failure() {
        let failure = orcho::gates::GateFailure::of(result, record.on_fail);
        for finding in failure.findings_shown() {
            let _ = write!(text, "\n  - {}", finding.title);
            match (&finding.file, finding.line) {
                (Some(file), Some(line)) => {
                    let _ = write!(text, " ({file}:{line})");
                }
                (Some(file), None) => {
                    let _ = write!(text, " ({file})");
                }
                _ => {}
            }
            if !finding.detail.trim().is_empty() {
                let _ = write!(text, "\n{}", indented(&finding.detail, lines));
            }
        }
    }
    text
}

/// A run's evidence bundle in a few lines: how it ended, each attempt and
/// its gates, each handoff and its decision, receipts, delivery.
pub fn evidence(e: &orcho::Evidence, path: &str) -> String {
    let mut text = format!("run {} ({}): {}", e.run, e.plan, e.status);
    if let Some(reason) = &e.reason {
        let _ = write!(text, " — {reason}");
    }
    if let Some(task) = &e.task {
        let _ = write!(text, "\ntask: {}", task_line(task));
    }
    if let Some(intake) = &e.intake {
        let _ = write!(text, "\nintake: {intake}");
    }
    text.push_str("\nattempts:");
    for p in &e.phases {
        let verdict = p.merged_verdict.unwrap_or(p.verdict);
        let _ = write!(
            text,
            "\n  {} attempt {} (round {}): {verdict}",
            p.phase, p.attempt, p.round
        );
        for g in &p.gates {
            let _ = write!(
                text,
                "; gate `{}` {}",
                g.result.gate,
                g.result.outcome.as_str()
            );
        }
        if let Some(next) = &p.next {
            let _ = write!(text, " → {next}");
        }
        if let Some(spent) = cost(&p.cost) {
            let _ = write!(text, " (cost: {spent})");
        }
    }
    if let Some(spent) = cost(&e.cost) {
        let _ = write!(text, "\ncost: {spent}");
    }
    for h in &e.handoffs {
        let _ = write!(text, "\nhandoff {} ({}, {}): ", h.id, h.trigger, h.verdict);
        match &h.decision {
            Some(d) => {
                let _ = write!(text, "decided {} by {}", d.action, d.decided_by);
                if let Some(who) = &d.by {
                    let _ = write!(text, " ({who})");
                }
                if let Some(t) = &d.text {
                    let _ = write!(text, " — {t}");
                }
            }
            None => text.push_str("undecided"),
        }
    }
    if let Some(receipts) = &e.receipts {
        let shown: Vec<String> = receipts
            .required
            .iter()
            .map(|r| format!("{} {}", r.command, r.status.as_str()))
            .collect();
        let _ = write!(text, "\nreceipts: {}", shown.join(", "));
    }
    if let Some(d) = &e.delivery {
        let _ = write!(text, "\ndelivery: release {}", d.verdict);
        if let (Some(action), Some(detail)) = (&d.action, &d.detail) {
            let _ = write!(text, "; {action}: {detail}");
        }
    }
    if !e.artifacts.is_empty() {
        let _ = write!(text, "\nartifacts (kept with the run, never delivered):");
        for a in &e.artifacts {
            let _ = write!(text, "\n  {}/{} ({} bytes)", a.attempt, a.file, a.bytes);
        }
    }
    let _ = write!(text, "\nevidence: {path}");
    text
}

/// What a run or an attempt cost, in words: `4m12s, $0.3100, 10234 in /
/// 1200 out tokens` (what is not known left out); `None` when no agent or
/// model reported money or tokens (wall time alone is no news).
pub fn cost(cost: &orcho::core::Cost) -> Option<String> {
    if cost.usd.is_none() && cost.tokens.is_none() {
        return None;
    }
    let mut parts = vec![orcho::receipts::HumanDuration::new(cost.wall).to_string()];
    if let Some(usd) = cost.usd {
        parts.push(usd.to_string());
    }
    if let Some(t) = cost.tokens {
        parts.push(format!("{} in / {} out tokens", t.input, t.output));
    }
    Some(parts.join(", "))
}

/// A menu of `actions` with what each does, one per line.
pub fn actions<A: orcho::handoff::point::Action>(actions: &[A]) -> String {
    let width = actions.iter().map(|a| a.as_str().len()).max().unwrap_or(0);
    actions
        .iter()
        .map(|a| format!("  {:<width$}  {}", a.as_str(), a.description()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A task on one line: its first line that says something, cut at 100
/// characters, with `…` when there is more (`--json` has all of it).
pub fn task_line(task: &str) -> String {
    const WIDTH: usize = 100;
    let mut lines = task.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or_default();
    let mut shown: String = first.chars().take(WIDTH).collect();
    if shown.len() < first.len() || lines.next().is_some() {
        shown.push_str(" …");
    }
    shown
}

/// What `orcho status` says of the checkout's readiness and its hooks.
pub fn checkout_status(
    readiness: &orcho::checkout::Readiness,
    hooks: &orcho_agents::hook::Health,
) -> String {
    let (summary, weakened) = (&readiness.summary, &readiness.weakened);
    let mut lines = Vec::new();
    // Hooks installed that never called Orcho here guard nothing.
    for never in &hooks.never_called {
        lines.push(format!(
            "warning: {} runs `orcho hook {}`, but it has never called Orcho here: {}",
            never.settings, never.agent, never.how
        ));
    }
    // Settings that switch Orcho's hooks off, in the project or the home:
    // the agent's stops are then not guarded at all.
    for off in &hooks.switched_off {
        lines.push(format!(
            "warning: {} switches {}'s hooks off ({}): Orcho's guard and stop checks do not run \
             in its sessions; remove it (only a person should)",
            off.file, off.agent, off.how
        ));
    }
    if !lines.is_empty() {
        lines.push(String::new());
    }
    if let Some(last) = hooks.unproven_stops.last() {
        lines.push(format!(
            "agent stops let through unproven: {} (last {}, {}{} after {} refusal(s): {}); \
             `orcho status --ack-stops` acknowledges them, and a later proven stop clears them",
            hooks.unproven_stops.len(),
            last.at,
            last.agent,
            last.session_id
                .as_deref()
                .map(|s| format!(" session {s}"))
                .unwrap_or_default(),
            last.blocks,
            last.unproven.join(", ")
        ));
        lines.push(String::new());
    }
    if let Some(table) = environment_table(summary) {
        lines.push(table);
        lines.push(String::new());
    }
    lines.push(readiness_table(summary));
    if summary.exploratory_commands > 0 {
        lines.push(format!(
            "exploratory commands: {} (not authoritative: they never satisfy a requirement)",
            summary.exploratory_commands
        ));
    }
    lines.extend(weakened_lines(weakened));
    let verdict = readiness_verdict(summary);
    if weakened.open.is_empty() {
        lines.push(verdict);
    } else if verdict.starts_with("ready") {
        lines.push(format!(
            "not ready: every required receipt is present, but {} weakening(s) of this change \
             wait for a person (`orcho status --ack-weakening` once reviewed)",
            weakened.open.len()
        ));
    } else {
        lines.push(format!(
            "{verdict}; and {} weakening(s) of this change wait for a person",
            weakened.open.len()
        ));
    }
    lines.join("\n")
}

/// What `orcho status` says of what weakens the change's proof.
fn weakened_lines(weakened: &orcho::checkout::Weakened) -> Vec<String> {
    let mut lines = Vec::new();
    let against = &weakened.against;
    if !weakened.profile_added.is_empty() {
        lines.push(format!(
            "this change edits what proves it (against {against}; a person must review it):"
        ));
        lines.extend(weakened.profile_added.iter().map(|e| format!("  {e}")));
    }
    if !weakened.open.is_empty() {
        lines.push(format!(
            "this change weakens its own proof (against {against}); a person must review it, \
             then acknowledge it with `orcho status --ack-weakening`:"
        ));
        lines.extend(weakened.open.iter().map(|w| format!("  {w}")));
    }
    if !weakened.acknowledged.is_empty() {
        lines.push(format!(
            "acknowledged by a person: {} weakening(s) of this change",
            weakened.acknowledged.len()
        ));
    }
    if let Some(branch) = &weakened.commits_since {
        lines.push(format!(
            "note: read against HEAD, so what this branch committed since `{branch}` is not; \
             `--base {branch}` reads it too, as CI should"
        ));
    }
    if let Some(why) = &weakened.unknown {
        lines.push(format!(
            "warning: the change could not be read against {against} for weakenings: {why}"
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_tail_keeps_why_a_test_failed() {
        let mut rust = vec![
            "running 2 tests",
            "---- tests::parses stdout ----",
            "",
            "thread 'tests::parses' (4665) panicked at src/lib.rs:19:5:",
            "assertion `left == right` failed: one and one make two",
            "  left: 2",
            " right: 3",
            "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
        ];
        rust.extend(std::iter::repeat_n("noise", 30));
        let shown = indented(&rust.join("\n"), 5);
        assert!(shown.contains("earlier line(s), among them:"), "{shown}");
        assert!(shown.contains("panicked at src/lib.rs:19:5:"), "{shown}");
        assert!(shown.contains("one and one make two"), "{shown}");
        assert!(shown.contains(" right: 3"), "{shown}");
        assert!(!shown.contains("RUST_BACKTRACE"), "{shown}");

        let mut pytest = vec![
            "    def test_parse():",
            ">       assert parse('') == []",
            "E       AssertionError: assert [''] == []",
            "E         Left contains one more item: ''",
        ];
        pytest.extend(std::iter::repeat_n("noise", 30));
        let shown = indented(&pytest.join("\n"), 5);
        assert!(shown.contains("E       AssertionError"), "{shown}");
        assert!(shown.contains("Left contains one more item"), "{shown}");

        let mut unittest = vec![
            "======================================================================",
            "FAIL: test_empty (test_parse.T.test_empty)",
            "----------------------------------------------------------------------",
            "Traceback (most recent call last):",
            "  File \"tests/test_parse.py\", line 10, in test_empty",
            "AssertionError: Lists differ: [''] != []",
        ];
        unittest.extend(std::iter::repeat_n("noise", 30));
        let shown = indented(&unittest.join("\n"), 5);
        assert!(
            shown.contains("FAIL: test_empty (test_parse.T.test_empty)"),
            "{shown}"
        );
        assert!(shown.contains("AssertionError: Lists differ"), "{shown}");
        assert!(!shown.contains("Traceback"), "{shown}");

        // Nothing telling: the count alone; nothing cut: the text alone.
        let plain = indented(&["a"; 30].join("\n"), 5);
        assert!(plain.starts_with("    … 25 earlier line(s)\n"), "{plain}");
        assert_eq!(indented("one\ntwo", 5), "    one\n    two");
    }

    #[test]
    fn sizes_read_as_a_person_reads_them() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(3482), "3.4 KiB");
        assert_eq!(bytes(386_924_544), "369.0 MiB");
        assert_eq!(bytes(u64::MAX), "16777216.0 TiB");
    }
}
