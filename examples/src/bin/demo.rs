//! The README's demo: one complete, scripted run through the engine.
//!
//! ```text
//! cargo run -p orcho-examples --bin demo
//! ```
//!
//! A scripted "agent" works in a temporary checkout: its first attempt fails
//! the tests gate, whose output is fed into the second attempt; a reviewer
//! rejects, the run pauses at a handoff and an operator decides; final
//! acceptance is rejected because the receipt no longer matches the
//! checkout, the receipt is re-run, and acceptance passes. Everything is
//! journalled on disk, and the demo ends by showing where.
#![expect(clippy::print_stdout, reason = "a demo talks to its reader")]

use std::process::ExitCode;

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{
    Engine, PhaseReport, PhaseRequest, RunPlan, Step,
    core::{Finding, Severity, Verdict, error_chain, fs},
    gates::{GateRegistry, PhaseOutcome},
    handoff::{DecidedBy, DecisionRequest, HandoffChoice},
    profile::Profile,
};

/// The team's profile: what runs after which phase, and what counts as
/// proof.
const PROFILE: &str = r#"
schema: 1
name: demo
phases:
  - name: implement
    role: implement
    max_attempts: 2
    gates:
      - { name: tests, uses: tests, on_fail: feed_into_next, with: { command: check } }
    handoff: { pause: never, on_exhausted: halt }
  - name: review
    role: review
    handoff: { pause: on_rejected, on_exhausted: pause }
  - name: final_acceptance
    role: final_acceptance
    max_attempts: 2
    handoff: { pause: on_rejected, on_exhausted: pause }
verification:
  commands:
    - { name: check, argv: [grep, -q, "fn parse", src/lib.rs], timeout: 30s }
  required: [check]
"#;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            println!("demo failed: {}", error_chain(e.as_ref()));
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let tmp = tempfile::Builder::new()
        .prefix("orcho-demo-")
        .tempdir()?
        .keep();
    let checkout = Utf8PathBuf::try_from(tmp)?;
    fs::create_dir_all(&checkout.join("src"))?;
    fs::write_atomic(&checkout.join("src/lib.rs"), b"// the parser goes here\n")?;

    println!("Orcho demo: readiness is proven, not claimed\n");
    println!("Checkout: {checkout}");
    let profile = Profile::from_yaml_str(PROFILE)?.resolve(&GateRegistry::with_builtins())?;
    let engine =
        Engine::builder(RunPlan::from_profile(&profile), checkout.join(".orcho")).build()?;
    let mut run = engine.start(&checkout)?;
    println!(
        "Run {} with profile `{}`: implement → review → final_acceptance\n",
        run.id(),
        profile.name
    );

    let mut step = run.next().await?;
    loop {
        step = match step {
            Step::RunPhase(request) => {
                announce(&request);
                let report = agent(&request, &checkout)?;
                let next = run.complete_phase(report).await?;
                explain(&engine, run.id())?;
                next
            }
            Step::DecideHandoff(handoff) => {
                println!(
                    "⏸  The run pauses at handoff `{}` ({} {}).",
                    handoff.id(),
                    handoff.phase(),
                    handoff.verdict()
                );
                for finding in handoff.findings() {
                    println!("   finding: {}", finding.title);
                }
                let actions: Vec<String> = handoff
                    .available_actions()
                    .iter()
                    .map(|a| a.to_string())
                    .collect();
                println!("   The operator may choose: {}", actions.join(", "));
                let feedback = "handle the empty input and say so in a doc comment";
                println!("   The operator decides retry_feedback: \"{feedback}\"");
                engine.decide(
                    run.id(),
                    handoff.id(),
                    DecisionRequest::new(HandoffChoice::retry(feedback)?, DecidedBy::Operator),
                )?;
                println!("   (the decision is on disk; resuming advances the run)\n");
                run.resume().await?
            }
            Step::Finished { status, reason } => {
                println!("✔  The run is {status}: {reason}.\n");
                break;
            }
            _ => return Err("the engine asked for something this demo does not script".into()),
        };
    }

    let id = run.id().clone();
    drop(run);
    let evidence = engine.evidence(&id)?;
    println!(
        "Evidence: {} phase attempts, {} handoff(s); on disk:",
        evidence.phases.len(),
        evidence.handoffs.len()
    );
    let dir = engine.runs().run_dir(&id);
    for name in ["journal.jsonl", "run.json", "evidence.json"] {
        println!("   {}", dir.join(name));
    }
    println!("   {}", checkout.join(".orcho/receipts"));
    println!("\nThe trace of the run, one line per durable transition:\n");
    for line in engine.trace(&id)?.lines() {
        println!("   {line}");
    }
    Ok(())
}

fn announce(request: &PhaseRequest) {
    println!("▶  Phase `{}`, attempt {}.", request.phase, request.attempt);
    for failure in &request.input.fed_failures {
        println!(
            "   It receives the failure of gate `{}`: {}",
            failure.gate, failure.summary
        );
    }
    if let Some(feedback) = &request.input.feedback {
        println!("   It receives the operator's feedback: \"{feedback}\"");
    }
    if request.input.readiness.is_some() {
        println!("   It receives the readiness summary built from the receipts on disk.");
    }
}

/// The scripted agent: what each attempt does to the checkout and reports.
fn agent(
    request: &PhaseRequest,
    checkout: &Utf8Path,
) -> Result<PhaseReport, Box<dyn std::error::Error>> {
    let approved = |summary: &str| {
        PhaseReport::new(PhaseOutcome::new(Verdict::Approved).with_summary(summary))
    };
    Ok(match (request.phase.as_str(), request.attempt) {
        ("implement", 1) => {
            println!("   The agent says it is done, but wrote no parser yet.");
            approved("done")
        }
        ("implement", _) => {
            fs::write_atomic(
                &checkout.join("src/lib.rs"),
                b"pub fn parse(input: &str) -> Vec<&str> {\n    input.split(',').collect()\n}\n",
            )?;
            println!("   The agent writes `parse`.");
            approved("parse implemented")
        }
        ("review", 1) => {
            println!("   The reviewer rejects.");
            PhaseReport::new(
                PhaseOutcome::new(Verdict::Rejected).with_findings([Finding::new(
                    "reviewer",
                    Severity::High,
                    "parse(\"\") returns [\"\"], not []",
                )]),
            )
        }
        ("review", _) => approved("looks good"),
        ("final_acceptance", 1) => {
            // The agent keeps editing after the tests ran: the receipt no
            // longer proves anything about this checkout.
            fs::write_atomic(
                &checkout.join("src/lib.rs"),
                b"/// Splits on commas; empty input gives no items.\npub fn parse(input: &str) -> Vec<&str> {\n    input.split(',').filter(|s| !s.is_empty()).collect()\n}\n",
            )?;
            println!(
                "   Meanwhile the agent edits src/lib.rs again; the reviewer approves anyway."
            );
            approved("ready")
        }
        _ => {
            println!("   The reviewer approves.");
            approved("ready")
        }
    })
}

/// Prints what the last attempt did, from the journal.
fn explain(engine: &Engine, run: &orcho::core::RunId) -> Result<(), Box<dyn std::error::Error>> {
    let trace = engine.trace(run)?;
    let last: Vec<&str> = trace
        .lines()
        .rev()
        .take_while(|l| !l.starts_with("phase `"))
        .collect();
    for line in last.iter().rev() {
        let line = line.trim();
        if let Some(gate) = line.strip_prefix("gate ") {
            println!("   gate {gate}");
        } else if line.starts_with("acceptance") {
            println!("   {line}");
        } else if let Some((_, next)) = line
            .strip_prefix("settled ")
            .and_then(|s| s.split_once("→ "))
        {
            println!("   → {next}");
        }
    }
    println!();
    Ok(())
}
