//! `drive` with a host, and the evidence bundle.

use std::{convert::Infallible, sync::Arc};

use orcho::{
    Engine, Host, PhaseReport, PhaseRequest, PhaseRole, Progress, RunPlan, Step,
    core::{Finding, FixedClock, RunStatus, Severity, Verdict},
    drive,
    gates::{FailStrategy, PhaseOutcome},
    handoff::{
        decision::{DecidedBy, DecisionRequest},
        handoff::{HandoffChoice, PhaseHandoff},
    },
};

use crate::{Result, gate, phase};

#[derive(Default)]
struct ScriptedHost {
    seen: Vec<String>,
    decide: bool,
}

impl Host for ScriptedHost {
    type Error = Infallible;

    async fn run_phase(
        &mut self,
        request: &PhaseRequest,
    ) -> std::result::Result<PhaseReport, Infallible> {
        let verdict = if request.phase == "review" && request.attempt == 1 {
            Verdict::Rejected
        } else {
            Verdict::Approved
        };
        Ok(PhaseReport::new(
            PhaseOutcome::new(verdict)
                .with_findings([Finding::new("reviewer", Severity::Medium, "rename `x`")])
                .with_summary("did the work"),
        ))
    }

    async fn decide(
        &mut self,
        _handoff: &PhaseHandoff,
    ) -> std::result::Result<Option<DecisionRequest<HandoffChoice>>, Infallible> {
        Ok(self.decide.then(|| {
            DecisionRequest::new(
                HandoffChoice::retry("rename it to `count`").expect("text"),
                DecidedBy::Operator,
            )
        }))
    }

    fn progress(&mut self, event: Progress<'_>) {
        let Progress::Step(step) = event else {
            return;
        };
        self.seen.push(match step {
            Step::RunPhase(r) => format!("run {} #{}", r.phase, r.attempt),
            Step::DecideHandoff(h) => format!("decide {}", h.id()),
            Step::Finished { status, .. } => format!("finished {status}"),
            _ => "other".to_owned(),
        });
    }
}

fn plan() -> RunPlan {
    RunPlan::new(
        "hosted",
        vec![
            phase("implement", PhaseRole::Implement)
                .with_max_attempts(2)
                .with_gate(gate("tests", FailStrategy::FeedIntoNext, &[(1, 1)])),
            phase("review", PhaseRole::Review),
        ],
    )
}

fn engine(dir: &tempfile::TempDir) -> Result<(Engine, camino::Utf8PathBuf)> {
    let root = camino::Utf8PathBuf::try_from(dir.path().to_owned())?;
    let clock = Arc::new(FixedClock::new("2026-11-21T12:00:00Z".parse()?));
    Ok((
        Engine::builder(plan(), root.join("store"))
            .clock(clock)
            .build()?,
        root,
    ))
}

#[tokio::test]
async fn drive_runs_the_loop_with_a_host() -> Result {
    let dir = tempfile::tempdir()?;
    let (engine, root) = engine(&dir)?;
    let mut run = engine.start(&root)?;
    let mut host = ScriptedHost {
        decide: true,
        ..ScriptedHost::default()
    };
    let last = drive(&mut run, &mut host).await?;
    assert!(matches!(
        last,
        Step::Finished {
            status: RunStatus::Completed,
            ..
        }
    ));
    assert_eq!(
        host.seen,
        [
            "run implement #1",
            "run implement #2",
            "run review #1",
            "decide 0001-review",
            "run review #2",
            "finished completed"
        ]
    );
    Ok(())
}

#[tokio::test]
async fn drive_leaves_the_run_paused_when_nobody_can_decide() -> Result {
    let dir = tempfile::tempdir()?;
    let (engine, root) = engine(&dir)?;
    let mut run = engine.start(&root)?;
    let last = drive(&mut run, &mut ScriptedHost::default()).await?;
    let Step::DecideHandoff(handoff) = last else {
        panic!("expected the open handoff, got {last:?}")
    };
    assert_eq!(run.state().status(), RunStatus::AwaitingPhaseHandoff);
    assert_eq!(handoff.id().as_str(), "0001-review");
    Ok(())
}

#[tokio::test]
async fn the_evidence_bundle_has_phases_gates_handoffs_and_decisions() -> Result {
    let dir = tempfile::tempdir()?;
    let (engine, root) = engine(&dir)?;
    let mut run = engine.start(&root)?;
    drive(
        &mut run,
        &mut ScriptedHost {
            decide: true,
            ..ScriptedHost::default()
        },
    )
    .await?;
    let id = run.id().clone();
    drop(run);
    let evidence = engine.evidence(&id)?;
    engine.store().write_evidence(&evidence)?;
    assert_eq!(evidence.phases.len(), 4);
    assert_eq!(
        evidence.handoffs[0].decision.as_ref().map(|d| d.decided_by),
        Some(DecidedBy::Operator)
    );
    let on_disk = std::fs::read_to_string(engine.store().evidence_path(&id))?;
    let mut json: serde_json::Value = serde_json::from_str(&on_disk)?;
    json["run"] = serde_json::Value::String("<run>".into());
    // Wall times depend on the machine: a gate that takes a millisecond on
    // a loaded one shows in every total above it.
    zero_times(&mut json);
    insta::assert_json_snapshot!(json);
    Ok(())
}

/// Sets every wall time (`duration_ms`, `wall_ms`) in `json` to 0.
fn zero_times(json: &mut serde_json::Value) {
    match json {
        serde_json::Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                if key == "duration_ms" || key == "wall_ms" {
                    *value = 0.into();
                } else {
                    zero_times(value);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(zero_times),
        _ => {}
    }
}
