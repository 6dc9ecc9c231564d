//! Embedding the engine: a host with its own runner and its own user
//! interface drives a run through the step API.
//!
//! ```text
//! cargo run -p orcho-examples --example embedding
//! ```
//!
//! The host builds a two-phase [`RunPlan`] by hand, starts a run in a
//! temporary checkout and loops on [`Step`]: it runs each phase attempt
//! and reports it with [`Run::complete_phase`] — `implement` in-process
//! with its own (scripted) runner, `review` as a process through
//! [`orcho::phase`], the protocol `orcho` runs phase commands with;
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
use orcho::phase::{Attempt, PhaseError, PhaseProcess};
use orcho::{
    Engine, PhasePlan, PhaseReport, PhaseRequest, PhaseRole, RunPlan, Step,
    core::{Verdict, fs},
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
            Step::RunPhase(request) if request.phase == "review" => {
                // A process, given the attempt as `ORCHO_*` variables and
                // documents; blocking, so off the async runtime.
                let store = engine.store().clone();
                let report =
                    tokio::task::spawn_blocking(move || review(&store, &request)).await??;
                println!("[runner]   reports {}", report.outcome.verdict);
                run.complete_phase(report).await?
            }
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

/// The host's in-process runner: here a script standing in for an agent.
fn run_phase(request: &PhaseRequest, checkout: &Utf8Path) -> Result<PhaseReport, Box<dyn Error>> {
    println!("[runner] {} attempt {}", request.phase, request.attempt);
    fs::write_atomic(&checkout.join("greeting.txt"), b"hello\n")?;
    let outcome = PhaseOutcome::new(Verdict::Approved).with_summary("wrote greeting.txt");
    println!("[runner]   reports {}", outcome.verdict);
    Ok(PhaseReport::new(outcome))
}

/// The reviewer, a shell script: it rejects a greeting without a name
/// through the phase output document, unless the operator's feedback
/// (in `ORCHO_INPUT_TEXT`) puts names out of scope; exit 0 approves.
const REVIEWER: &str = r#"
if grep -q ', ' greeting.txt || printf '%s' "$ORCHO_INPUT_TEXT" | grep -q 'out of scope'; then
    echo "looks good"
else
    cat > "$ORCHO_OUTPUT" <<'DOC'
{"schema": 1, "verdict": "rejected",
 "findings": [{"title": "the greeting has no name in it", "file": "greeting.txt", "line": 1}]}
DOC
fi
"#;

/// Runs the reviewer as a process in the run's checkout, with the phase
/// protocol, and reads its report.
fn review(store: &orcho::Store, request: &PhaseRequest) -> Result<PhaseReport, PhaseError> {
    println!(
        "[runner] {} attempt {} (a process)",
        request.phase, request.attempt
    );
    if let Some(feedback) = &request.input.feedback {
        println!("[runner]   with the operator's feedback: {feedback}");
    }
    let attempt = Attempt::prepare(store, request)?;
    let ran = attempt.run(PhaseProcess::new(["sh", "-c", REVIEWER]))?;
    ran.report("the reviewer", None)
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

#[cfg(test)]
mod tests {
    /// Run by `cargo test`: the host runs its run to the end.
    #[test]
    fn the_host_drives_its_run_to_the_end() -> Result<(), String> {
        super::main().map_err(|e| e.to_string())
    }
}
