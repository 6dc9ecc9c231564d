//! What an attempt receives from the run's history: the task, the plan the
//! run goes on with, the planner's previous plan and every answer given.
//!
//! The state keeps only what the last transition gave the next attempt;
//! these come from the journal, so that no decision is lost to a
//! transition in between (an approval's notes survive a gate's retry, the
//! first answers survive a plan sent back for changes).

use std::collections::BTreeMap;

use orcho_core::PhaseName;
use orcho_handoff::supervision::{Plan, Touchpoint};

use crate::{
    plan::{PhaseRole, RunPlan},
    state::{PhaseInput, PlanInput, Resumption, RunEvent, Supervised, Transition},
};

/// What the journal says every later attempt should know.
#[derive(Debug, Default)]
pub(crate) struct Carried {
    /// The plan the run went on with last.
    plan: Option<Box<PlanInput>>,
    /// The last plan each phase reported.
    reported: BTreeMap<PhaseName, Plan>,
    /// The answers each phase's questions were given, oldest first.
    answers: BTreeMap<PhaseName, Vec<String>>,
}

impl Carried {
    /// Reads `events` (a run's journal, in order) of a run of `plan`.
    pub(crate) fn read<'a>(plan: &RunPlan, events: impl IntoIterator<Item = &'a RunEvent>) -> Self {
        let role = |phase: &PhaseName| {
            plan.phases
                .iter()
                .find(|p| p.name == *phase)
                .map(|p| &p.role)
        };
        let mut carried = Self::default();
        // The plan of the attempt whose gates run, and of the one waiting
        // at its approval or at a handoff.
        let mut in_flight: Option<Plan> = None;
        let mut at_approval: Option<Plan> = None;
        let mut paused: Option<Plan> = None;
        let mut asking: Option<PhaseName> = None;
        for event in events {
            match event {
                RunEvent::PhaseReported {
                    phase,
                    plan: Some(reported),
                    ..
                } => {
                    carried.reported.insert(phase.clone(), reported.clone());
                    in_flight = (role(phase) == Some(&PhaseRole::Plan)).then(|| reported.clone());
                }
                RunEvent::PhaseReported { .. } => in_flight = None,
                RunEvent::PhaseSettled { transition, .. } => match transition {
                    Transition::Advance => {
                        if let Some(plan) = in_flight.take() {
                            carried.plan = Some(Box::new(PlanInput::new(plan, false, None)));
                        }
                    }
                    Transition::Supervise {
                        touchpoint: Touchpoint::PlanApproval { plan },
                    } => at_approval = Some(plan.clone()),
                    Transition::Pause { .. } => paused = in_flight.take(),
                    _ => in_flight = None,
                },
                RunEvent::HandoffResumed { resumption, .. } => {
                    // A planner's handoff decided to go on: the run goes on
                    // with its plan.
                    let plan = paused.take();
                    if matches!(
                        resumption,
                        Resumption::Continue | Resumption::ContinueWithWaiver { .. }
                    ) && let Some(plan) = plan
                    {
                        carried.plan = Some(Box::new(PlanInput::new(plan, false, None)));
                    }
                }
                RunEvent::PhaseInterrupted { phase, .. } => asking = Some(phase.clone()),
                RunEvent::TouchpointResolved { resolution, .. } => match resolution {
                    Supervised::PlanApproved { feedback } => {
                        if let Some(plan) = at_approval.take() {
                            carried.plan =
                                Some(Box::new(PlanInput::new(plan, true, feedback.clone())));
                        }
                    }
                    Supervised::Answered { answers } => {
                        if let Some(phase) = &asking {
                            carried
                                .answers
                                .entry(phase.clone())
                                .or_default()
                                .push(answers.trim_end().to_owned());
                        }
                    }
                    _ => at_approval = None,
                },
                _ => {}
            }
        }
        carried
    }

    /// The plan the run went on with last, if any.
    pub(crate) fn plan(&self) -> Option<&PlanInput> {
        self.plan.as_deref()
    }

    /// Adds what `phase` (of `role`) should know to `input`: the task; the
    /// plan, for a phase after the planner; for the planner, its previous
    /// plan; and every answer its questions were given.
    pub(crate) fn fill(
        &self,
        input: &mut PhaseInput,
        task: Option<&str>,
        phase: &PhaseName,
        role: &PhaseRole,
    ) {
        input.task = task.map(str::to_owned);
        if *role == PhaseRole::Plan {
            input.previous_plan = self.reported.get(phase).cloned().map(Box::new);
        } else {
            input.plan.clone_from(&self.plan);
        }
        if let Some(answers) = self.answers.get(phase) {
            input.answers = Some(answers.join("\n\n"));
        }
    }
}
