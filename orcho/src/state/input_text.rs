//! [`PhaseInput::to_text`]: the input of an attempt as plain text, for a
//! phase to paste into an agent's prompt.

use std::fmt::Write as _;

use orcho_core::Finding;
use orcho_gates::GateFailure;

use super::event::PhaseInput;

impl PhaseInput {
    /// The input as plain text, in the order an agent should read it: the
    /// operator's feedback and answers, then what failed (gates fed in,
    /// critique, the last attempt's findings), the waivers in force, what a
    /// follow-up corrects, and the readiness summary. Empty when the input
    /// is.
    ///
    /// ```
    /// use orcho::PhaseInput;
    ///
    /// let mut input = PhaseInput::default();
    /// input.feedback = Some("handle the empty input".into());
    /// assert_eq!(input.to_text(), "## Feedback from the operator\n\nhandle the empty input\n");
    /// assert_eq!(PhaseInput::default().to_text(), "");
    /// ```
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let mut section = |title: &str, body: &str| {
            if body.trim().is_empty() {
                return;
            }
            if !out.is_empty() {
                out.push('\n');
            }
            let _ = writeln!(out, "## {title}\n\n{}", body.trim_end());
        };
        if let Some(feedback) = &self.feedback {
            section("Feedback from the operator", feedback);
        }
        if let Some(answers) = &self.answers {
            section("Answers to your questions", answers);
        }
        section("Failures fed in from gates", &failures(&self.fed_failures));
        section("Critique (the plan must change)", &failures(&self.critique));
        section(
            "Findings of the last attempt",
            &findings(&self.findings, ""),
        );
        let waivers: String = self.waivers.iter().map(|w| format!("- {w}\n")).collect();
        section("Waived (accepted as they are)", &waivers);
        if let Some(follow_up) = &self.follow_up {
            section("What this follow-up corrects", follow_up);
        }
        if let Some(readiness) = &self.readiness {
            section("Readiness", readiness);
        }
        out
    }
}

fn failures(failures: &[GateFailure]) -> String {
    let mut out = String::new();
    for failure in failures {
        let _ = write!(out, "- gate `{}`", failure.gate);
        if !failure.summary.trim().is_empty() {
            let _ = write!(out, ": {}", failure.summary.trim());
        }
        out.push('\n');
        out.push_str(&findings(&failure.findings_shown(), "  "));
    }
    out
}

fn findings(findings: &[Finding], indent: &str) -> String {
    let mut out = String::new();
    for f in findings {
        let _ = write!(out, "{indent}- [{}] {}", f.severity, f.title);
        match (&f.file, f.line) {
            (Some(file), Some(line)) => {
                let _ = write!(out, " ({file}:{line})");
            }
            (Some(file), None) => {
                let _ = write!(out, " ({file})");
            }
            _ => {}
        }
        out.push('\n');
        for line in f.detail.trim().lines() {
            let _ = writeln!(out, "{indent}  {line}");
        }
    }
    out
}
