//! Integration tests of the engine: the diagram end to end with scripted
//! phases and gates, final acceptance on real receipts, the autopilot, and
//! crash recovery with real processes.

mod acceptance;
mod autopilot;
mod crash;
mod decide;
mod delivery;
mod flow;
mod host;
mod notify;
mod pause_always;
mod phase_process;
mod point_view;
mod profile;
mod readme;
mod store_paused;
mod store_v1;
mod supervision;

pub(crate) type Result<T = (), E = Box<dyn std::error::Error + Send + Sync>> =
    std::result::Result<T, E>;

use std::sync::Arc;

use camino::Utf8Path;

use orcho::{
    ExhaustedPolicy, PausePolicy, PhasePlan, PhaseRole,
    core::{Finding, GateName, Severity},
    gates::{
        FailStrategy, GateContext, GateError, GateOutcome, QualityGate, QualityGateResult,
        ScheduledGate,
    },
};

/// A gate that fails on the listed (round, attempt) pairs and passes
/// otherwise: deterministic across processes.
#[derive(Debug)]
pub(crate) struct FailsOn {
    name: GateName,
    when: Vec<(u32, u32)>,
}

#[orcho::gates::async_trait]
impl QualityGate for FailsOn {
    fn name(&self) -> &GateName {
        &self.name
    }

    async fn evaluate(
        &self,
        ctx: &GateContext,
    ) -> std::result::Result<QualityGateResult, GateError> {
        Ok(if self.when.contains(&(ctx.round(), ctx.attempt())) {
            QualityGateResult::computational(self.name.clone(), GateOutcome::Failed)
                .with_finding(
                    Finding::new(
                        self.name.as_str(),
                        Severity::High,
                        format!("`{}` failed", self.name),
                    )
                    .with_key(self.name.to_string()),
                )
                .with_summary(format!("{} failed", self.name))
        } else {
            QualityGateResult::computational(self.name.clone(), GateOutcome::Passed)
        })
    }
}

pub(crate) fn gate(name: &str, on_fail: FailStrategy, when: &[(u32, u32)]) -> ScheduledGate {
    ScheduledGate::new(
        Arc::new(FailsOn {
            name: name.parse().expect("gate name"),
            when: when.to_vec(),
        }),
        on_fail,
    )
}

pub(crate) fn phase(name: &str, role: PhaseRole) -> PhasePlan {
    PhasePlan::new(name.parse().expect("phase name"), role)
        .with_pause(PausePolicy::OnRejected)
        .with_on_exhausted(ExhaustedPolicy::Halt)
}

/// Copies a fixture tree, so a test changes a copy and never the fixture.
pub(crate) fn copy_dir(from: &Utf8Path, to: &Utf8Path) -> Result {
    std::fs::create_dir_all(to)?;
    for entry in from.read_dir_utf8()? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}
