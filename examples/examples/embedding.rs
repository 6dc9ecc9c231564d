//! Embedding the engine: a host with its own runner and its own user
//! interface drives a run through the step API.
//!
//! ```text
//! cargo run -p orcho-examples --example embedding
//! ```
//!
//! The host builds a two-phase [`RunPlan`] by hand, starts a run in a
//! temporary checkout and loops on [`Step`]: it runs each phase attempt with
//! its own (scripted) runner and reports it with [`Run::complete_phase`];
//! when the reviewer rejects, the run pauses at a handoff, the host's user
//! interface records a decision with [`Engine::decide`] and
//! [`Run::resume`] carries it out; [`Step::Finished`] ends the loop. Decision
//! points this host has no interface for (pre-run intake, the delivery
//! gate, supervision touchpoints) fall into one catch-all arm.
//!
//! [`Run::complete_phase`]: orcho::Run::complete_phase
//! [`Run::resume`]: orcho::Run::resume
#![expect(clippy::print_stdout, reason = "the host's user interface is stdout")]

use std::error::Error;

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{
    Engine, PhasePlan, PhaseReport, PhaseRequest, PhaseRole, RunPlan, Step,
    core::{Finding, Severity, Verdict, fs},
    gates::PhaseOutcome,
    handoff::{
        decision::{DecidedBy, DecisionRequest},
        handoff::{HandoffChoice, PhaseHandoff},
    },
};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let checkout = Utf8PathBuf::try_from(dir.path().to_owned())?;
    let plan = RunPlan::new(
        "embedded",
        vec![
            PhasePlan::new("implement".parse()?, PhaseRole::Implement),
            // One attempt, pausing for a decision when it is rejected.
            PhasePlan::new("review".parse()?, PhaseRole::Review),
        ],
    );
    let engine = Engine::builder(plan, checkout.join(".orcho")).build()?;
    let mut run = engine.start(&checkout)?;
    println!("[host] run {} in {checkout}", run.id());

    let mut step = run.next().await?;
    loop {
        step = match step {
            Step::RunPhase(request) => {
                let report = run_phase(&request, run.state().checkout())?;
                run.complete_phase(report).await?
            }
            Step::DecideHandoff(handoff) => {
                let choice = ask_operator(&handoff)?;
                engine.store().decide(
                    run.id(),
                    handoff.id(),
                    DecisionRequest::new(choice, DecidedBy::Operator),
                )?;
                run.resume().await?
            }
            Step::Finished { status, reason } => {
                println!("[host] the run is {status}: {reason}");
                break;
            }
            // Intake, delivery and supervision touchpoints come with
            // `Engine::start_with(Start::in_worktree(..))` or a plan that
            // asks for them; a host that offers them matches them here.
            _ => return Err("a decision point this host has no interface for".into()),
        };
    }
    Ok(())
}

/// The host's runner: here a script standing in for an agent.
fn run_phase(request: &PhaseRequest, checkout: &Utf8Path) -> Result<PhaseReport, Box<dyn Error>> {
    println!("[runner] {} attempt {}", request.phase, request.attempt);
    if let Some(feedback) = &request.input.feedback {
        println!("[runner]   with the operator's feedback: {feedback}");
    }
    let outcome = match (request.phase.as_str(), request.attempt) {
        ("implement", _) => {
            fs::write_atomic(&checkout.join("greeting.txt"), b"hello\n")?;
            PhaseOutcome::new(Verdict::Approved).with_summary("wrote greeting.txt")
        }
        ("review", 1) => PhaseOutcome::new(Verdict::Rejected).with_findings([Finding::new(
            "reviewer",
            Severity::Medium,
            "the greeting has no name in it",
        )]),
        _ => PhaseOutcome::new(Verdict::Approved).with_summary("looks good"),
    };
    println!("[runner]   reports {}", outcome.verdict);
    Ok(PhaseReport::new(outcome))
}

/// The host's user interface: shows the handoff and "asks" the operator,
/// who always retries with feedback.
fn ask_operator(handoff: &PhaseHandoff) -> Result<HandoffChoice, Box<dyn Error>> {
    println!(
        "[ui] {} was {}; paused at `{}`",
        handoff.phase(),
        handoff.verdict(),
        handoff.id()
    );
    for finding in handoff.findings() {
        println!("[ui]   finding: {}", finding.title);
    }
    println!("[ui]   choices: {}", handoff.available_actions());
    let feedback = "names are out of scope for this change";
    println!("[ui]   the operator picks retry_feedback: {feedback}");
    Ok(HandoffChoice::retry(feedback)?)
}
