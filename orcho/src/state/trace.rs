//! One readable line per event, for traces and tests.

use orcho_core::PhaseName;
use orcho_handoff::supervision::Touchpoint;

use super::event::{PauseTrigger, Resumption, RunEvent, Supervised, Transition};

impl RunEvent {
    /// One readable line for traces: what happened, without timestamps or
    /// run ids, so that two runs of the same scenario trace the same.
    pub fn trace_line(&self) -> String {
        match self {
            Self::Started {
                plan,
                phases,
                follow_up: Some(of),
                ..
            } => {
                let phases: Vec<&str> = phases.iter().map(PhaseName::as_str).collect();
                format!(
                    "started plan `{plan}` with phases {} (follow-up {} of a rejected run)",
                    phases.join(" → "),
                    of.generation
                )
            }
            Self::Started { plan, phases, .. } => {
                let phases: Vec<&str> = phases.iter().map(PhaseName::as_str).collect();
                format!("started plan `{plan}` with phases {}", phases.join(" → "))
            }
            Self::ReceiptsRerun { commands } if commands.is_empty() => {
                "receipts checked: nothing to re-run".to_owned()
            }
            Self::ReceiptsRerun { commands } => format!("receipts re-run: {}", commands.join(", ")),
            Self::PhaseReported {
                phase,
                attempt,
                round,
                outcome,
                ..
            } => format!(
                "phase `{phase}` attempt {attempt} (round {round}) reported {}{}",
                outcome.verdict,
                count(" with", outcome.findings.len(), "finding")
            ),
            Self::GateRecorded { record } => {
                let detail = match &record.result.outcome {
                    orcho_gates::GateOutcome::Skipped { reason } => format!(" ({reason})"),
                    _ => String::new(),
                };
                format!(
                    "  gate `{}` {}{detail} [on_fail: {}]",
                    record.result.gate,
                    record.result.outcome.as_str(),
                    record.on_fail
                )
            }
            Self::AcceptanceMerged {
                reviewer,
                verdict,
                gaps,
            } => {
                let commands: Vec<&str> = gaps.iter().filter_map(|g| g.key.as_deref()).collect();
                if gaps.is_empty() {
                    format!(
                        "acceptance {verdict} (reviewer {reviewer}; every required receipt present)"
                    )
                } else {
                    format!(
                        "acceptance {verdict} (reviewer {reviewer}; unproven: {})",
                        commands.join(", ")
                    )
                }
            }
            Self::PhaseSettled { effect, transition } => {
                format!("  settled ({effect}) → {}", transition.describe())
            }
            Self::HandoffOpened { handoff } => format!("handoff `{handoff}` opened"),
            Self::HandoffResumed {
                handoff,
                resumption,
            } => format!("handoff `{handoff}` resumed: {}", resumption.describe()),
            Self::IntakeOpened => {
                "intake: the target checkout has uncommitted changes; asking".to_owned()
            }
            Self::IntakeHalted => "intake: halt; the run does not start".to_owned(),
            Self::WorkspaceReady { intake, .. } => match intake {
                Some(action) => format!("worktree ready (intake: {action})"),
                None => "worktree ready".to_owned(),
            },
            Self::PhaseInterrupted {
                phase,
                attempt,
                touchpoint,
                ..
            } => format!(
                "phase `{phase}` attempt {attempt} stopped to ask: {}",
                touchpoint_kind(touchpoint)
            ),
            Self::TouchpointOpened { id } => format!("touchpoint `{id}` opened"),
            Self::TouchpointResolved { id, resolution } => {
                format!("touchpoint `{id}` resolved: {}", resolution.describe())
            }
            Self::DeliveryOpened { verdict } => {
                format!("delivery gate opened (release {verdict})")
            }
            // The detail names commits and paths: not stable across runs.
            Self::Delivered { action, .. } => format!("delivered: {action}"),
            Self::Interrupted {
                phase,
                attempt,
                reason,
            } => format!("phase `{phase}` attempt {attempt} interrupted ({reason}); it runs again"),
            Self::Cancelled { by, .. } => format!("cancelled by {by}"),
        }
    }
}

fn touchpoint_kind(touchpoint: &Touchpoint) -> &'static str {
    match touchpoint {
        Touchpoint::PlannerQuestions { .. } => "planner questions",
        Touchpoint::PlanApproval { .. } => "plan approval",
        _ => "deviation",
    }
}

impl Supervised {
    /// A short description for traces.
    pub fn describe(&self) -> String {
        match self {
            Self::Answered { .. } => "answered; the attempt runs again".to_owned(),
            Self::PlanApproved { .. } => "plan approved".to_owned(),
            Self::PlanRevised { feedback } => format!("plan revision requested \"{feedback}\""),
            Self::PlanRejected { .. } => "plan rejected".to_owned(),
            Self::DeviationRetry { .. } => "retry the step".to_owned(),
            Self::DeviationReplan { to, .. } => format!("replan from phase {}", to + 1),
            Self::DeviationStopped { .. } => "stop".to_owned(),
        }
    }
}

fn count(prefix: &str, n: usize, noun: &str) -> String {
    match n {
        0 => String::new(),
        1 => format!("{prefix} 1 {noun}"),
        n => format!("{prefix} {n} {noun}s"),
    }
}

/// The transition's [`describe`](Transition::describe) text.
impl std::fmt::Display for Transition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Transition {
    /// A short description for traces.
    pub fn describe(&self) -> String {
        match self {
            Self::Retry { input } => {
                let fed: Vec<&str> = input.fed_failures.iter().map(|f| f.gate.as_str()).collect();
                if fed.is_empty() {
                    "retry".to_owned()
                } else {
                    format!("retry, feeding {}", fed.join(", "))
                }
            }
            Self::Advance => "advance".to_owned(),
            Self::Feed { to, input, .. } => {
                let fed: Vec<&str> = input.fed_failures.iter().map(|f| f.gate.as_str()).collect();
                format!("back to phase {}, feeding {}", to + 1, fed.join(", "))
            }
            Self::Replan { to, input } => format!(
                "replan from phase {} with {}",
                to + 1,
                count("", input.critique.len(), "critique item").trim_start()
            ),
            Self::Pause {
                trigger, verdict, ..
            } => {
                let why = match trigger {
                    PauseTrigger::Verdict => "verdict".to_owned(),
                    PauseTrigger::Gate { gate } => format!("gate `{gate}`"),
                    PauseTrigger::Always => "always".to_owned(),
                };
                format!("pause ({verdict}, trigger {why})")
            }
            Self::Halt { reason } => format!("halt: {reason}"),
            Self::Supervise { touchpoint } => format!("ask: {}", touchpoint_kind(touchpoint)),
        }
    }
}

impl Resumption {
    /// A short description for traces.
    pub fn describe(&self) -> String {
        match self {
            Self::Continue => "continue".to_owned(),
            Self::Retry { feedback } => format!("retry_feedback \"{feedback}\""),
            Self::ContinueWithWaiver { reason } => format!("continue_with_waiver \"{reason}\""),
            Self::Halt => "halt".to_owned(),
        }
    }
}
