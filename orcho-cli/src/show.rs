//! What the CLI prints: text for people, JSON for machines.

use std::fmt::Write as _;
use std::io::Write;

use orcho::{
    core::Finding,
    delivery::{DeliveryGate, IntakeReport},
    handoff::{HandoffChoice, Inbox, PhaseHandoff},
    receipts::{ReadinessSummary, ReceiptStatus},
};
use serde_json::{Value, json};

/// A line on standard output. A closed pipe (`orcho inbox | head`) is not
/// an error worth a panic.
pub(crate) fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}");
}

/// A line on standard error: progress, prompts, diagnostics.
pub(crate) fn err(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{text}");
}

/// One row per required and optional command: status and reason.
pub(crate) fn readiness_table(summary: &ReadinessSummary) -> String {
    let rows: Vec<(String, &str, &str, String)> = summary
        .required
        .iter()
        .map(|r| (r, "required"))
        .chain(summary.optional.iter().map(|r| (r, "optional")))
        .map(|(r, kind)| {
            let reason = match &r.status {
                ReceiptStatus::Present => String::new(),
                other => other.reason(),
            };
            (r.command.to_string(), kind, r.status.as_str(), reason)
        })
        .collect();
    let width = rows
        .iter()
        .map(|r| r.0.len())
        .max()
        .unwrap_or(7)
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

fn finding_line(f: &Finding) -> String {
    let place = match (&f.file, f.line) {
        (Some(file), Some(line)) => format!(" ({file}:{line})"),
        (Some(file), None) => format!(" ({file})"),
        _ => String::new(),
    };
    format!("  - [{}] {}: {}{place}", f.severity, f.source, f.title)
}

pub(crate) fn handoff_text(h: &PhaseHandoff, decided: Option<&HandoffChoice>) -> String {
    let mut text = format!(
        "handoff {} — phase `{}` {} (trigger: {})\n",
        h.id(),
        h.phase(),
        h.verdict(),
        h.trigger()
    );
    for f in h.findings() {
        text.push_str(&finding_line(f));
        text.push('\n');
    }
    let actions: Vec<String> = h
        .available_actions()
        .iter()
        .map(|a| a.to_string())
        .collect();
    let _ = write!(text, "available: {}", actions.join(", "));
    if let Some(choice) = decided {
        let _ = write!(text, "\ndecided: {}", choice.action());
    }
    text
}

pub(crate) fn handoff_json(h: &PhaseHandoff, decided: Option<&HandoffChoice>) -> Value {
    json!({
        "handoff": h.id().as_str(),
        "run": h.run().as_str(),
        "phase": h.phase().as_str(),
        "verdict": h.verdict().to_string(),
        "trigger": h.trigger().to_string(),
        "findings": h.findings(),
        "available_actions": h.available_actions().iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        "decision": decided.map(|c| json!({ "action": c.action().to_string(), "text": c.text() })),
    })
}

pub(crate) fn intake_text(report: &IntakeReport) -> String {
    let mut text = format!(
        "the checkout {} has {} uncommitted change(s) on top of {}:\n",
        report.checkout(),
        report.count(),
        report.head().get(..12).unwrap_or(report.head())
    );
    for change in report.tracked() {
        let _ = writeln!(text, "  {:?} {}", change.kind(), change.path());
    }
    for path in report.untracked() {
        let _ = writeln!(text, "  untracked {path}");
    }
    text.trim_end().to_owned()
}

pub(crate) fn gate_text(gate: &DeliveryGate) -> String {
    let mut text = format!(
        "delivery gate of run {} — release {} (reviewer {})\ndiff: {}\n",
        gate.run(),
        gate.verdict(),
        gate.reviewer_verdict(),
        gate.diff()
    );
    for gap in gate.gaps() {
        let _ = writeln!(text, "  gap: {gap}");
    }
    for f in gate.findings() {
        text.push_str(&finding_line(f));
        text.push('\n');
    }
    for blocked in gate.blocked() {
        let _ = writeln!(
            text,
            "  `{}` unavailable: {}",
            blocked.action(),
            blocked.reason()
        );
    }
    let actions: Vec<String> = gate
        .available_actions()
        .iter()
        .map(|a| a.to_string())
        .collect();
    let _ = write!(text, "available: {}", actions.join(", "));
    text
}

pub(crate) fn gate_json(gate: &DeliveryGate) -> Value {
    json!({
        "run": gate.run().as_str(),
        "verdict": gate.verdict().to_string(),
        "reviewer_verdict": gate.reviewer_verdict().to_string(),
        "worktree": gate.worktree().as_str(),
        "target": gate.target().as_str(),
        "base": gate.base(),
        "diff": gate.diff().files().iter().map(|f| json!({
            "path": f.path().as_str(),
            "insertions": f.insertions(),
            "deletions": f.deletions(),
            "binary": f.is_binary(),
        })).collect::<Vec<_>>(),
        "gaps": gate.gaps().iter().map(|g| json!({
            "command": g.command(), "status": g.status().as_str(), "reason": g.reason(), "next_action": g.next_action().as_str(),
        })).collect::<Vec<_>>(),
        "findings": gate.findings(),
        "available_actions": gate.available_actions().iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        "blocked": gate.blocked().iter().map(|b| json!({
            "action": b.action().to_string(), "reason": b.reason().to_string(),
        })).collect::<Vec<_>>(),
    })
}

/// The inbox as JSON: pending decisions and degraded run directories. The
/// CLI names each run `run`, the MCP tools `run_id`.
pub(crate) fn inbox_json(inbox: &Inbox, run_key: &str) -> Value {
    let pending: Vec<_> = inbox
        .pending()
        .map(|p| {
            let mut doc = json!({
                "phase": p.phase(),
                "trigger": p.trigger(),
                "verdict": p.verdict().map(|v| v.to_string()),
                "available_actions": p.available_actions(),
                "decision": p.decision(),
                "next_step": p.next_step().as_str(),
            });
            doc[run_key] = json!(p.run().as_str());
            doc
        })
        .collect();
    let degraded: Vec<_> = inbox
        .degraded()
        .map(|d| json!({ "dir": d.dir().as_str(), "reason": d.reason() }))
        .collect();
    json!({ "pending": pending, "degraded": degraded })
}
