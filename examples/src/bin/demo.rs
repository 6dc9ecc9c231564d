//! The README's demo: one complete, scripted run through the engine.
//!
//! ```text
//! cargo run -p orcho-examples --bin demo
//! ```
//!
//! The demo creates a temporary git repository (the *target*) and starts a
//! run in a retained worktree of it, so the target does not change until
//! somebody decides so. A scripted "agent" works in that worktree: its
//! first attempt fails the tests gate, whose output is fed into the second
//! attempt; a reviewer rejects, the run pauses at a handoff, an advisor (a
//! model behind an OpenAI-compatible endpoint, played by a local server the
//! demo starts: no key, no network) recommends the next step, and the
//! operator confirms it; final acceptance is rejected because the receipt no longer
//! matches the worktree, the receipt is re-run, and acceptance passes. The
//! run then reaches its delivery gate, which shows the release verdict, the
//! diff and the actions on offer; the operator approves and the run's diff
//! is committed into the target. Everything is journalled on disk, and the
//! demo ends by showing where.
#![expect(clippy::print_stdout, reason = "a demo talks to its reader")]

use std::{
    error::Error,
    io::{Read, Write},
    net::TcpListener,
    process::ExitCode,
    sync::Arc,
    thread,
};

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{
    Engine, PhaseReport, PhaseRequest, RunPlan, Start, Step,
    core::{Finding, Severity, Verdict, error_chain, fs},
    delivery::DeliveryGate,
    gates::{GateRegistry, PhaseOutcome},
    handoff::{
        decision::{DecidedBy, DecisionRequest},
        delivery::DeliveryChoice,
        handoff::{HandoffChoice, PhaseHandoff},
    },
    profile::Profile,
    receipts::exec::{self, BaseEnv, ExecRequest},
};
use orcho_llm::{Client, LlmAdvisor, LlmConfig};

/// The team's profile: what runs after which phase, and what counts as
/// proof. It names no `delivery` default, so a run in a worktree waits at
/// its delivery gate for a decision.
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

async fn run() -> Result<(), Box<dyn Error>> {
    let tmp = tempfile::Builder::new()
        .prefix("orcho-demo-")
        .tempdir()?
        .keep();
    let target = Utf8PathBuf::try_from(tmp)?.join("repo");
    create_target(&target)?;

    println!("Orcho demo: readiness is proven, not claimed\n");
    println!("Target: {target} (a new git repository with one commit)");
    let profile = Profile::from_yaml_str(PROFILE)?.resolve(&GateRegistry::with_builtins())?;
    let advisor = local_advisor()?;
    let engine = Engine::builder(RunPlan::from_profile(&profile), target.join(".orcho"))
        .advisor(Arc::new(advisor))
        .build()?;
    let mut run = engine.start_with(Start::in_worktree(&target))?;
    println!(
        "Run {} with profile `{}`: implement → review → final_acceptance → delivery gate\n",
        run.id(),
        profile.name
    );

    // The first step checks the target for uncommitted changes (intake)
    // and creates the run's worktree; `orcho::drive` then carries the run
    // from step to step, asking the demo's host at each.
    let mut host = Demo {
        engine: engine.clone(),
        run: run.id().clone(),
        worktree: engine.store().worktree_path(run.id()),
        announced: false,
    };
    let end = orcho::drive(&mut run, &mut host).await?;
    let Step::Finished { status, reason } = end else {
        return Err("the run stopped at a decision the demo does not script".into());
    };
    println!("✔  The run is {status}: {reason}.");
    println!("   In the target:");
    println!("   $ git log --oneline -1");
    println!("   {}", git(&target, &["log", "--oneline", "-1"])?);
    println!("   $ git show --stat --format= HEAD");
    for line in git(&target, &["show", "--stat", "--format=", "HEAD"])?.lines() {
        println!("   {}", line.trim_start());
    }
    println!();

    let id = run.id().clone();
    let worktree = run.state().checkout().to_owned();
    drop(run);
    println!("The trace of the run, one line per durable transition:\n");
    for line in engine.store().trace(&id)?.lines() {
        println!("   {line}");
    }
    let evidence = engine.evidence(&id)?;
    engine.store().write_evidence(&evidence)?;
    println!(
        "\nThe evidence ({} phase attempts, {} handoff(s), the delivery) is on disk:",
        evidence.phases.len(),
        evidence.handoffs.len()
    );
    let dir = engine
        .store()
        .evidence_path(&id)
        .parent()
        .map(Utf8Path::to_owned)
        .unwrap_or_default();
    for (path, what) in [
        (dir.join("evidence.json"), "the evidence bundle"),
        (
            dir.join("journal.jsonl"),
            "the journal, the run's source of truth",
        ),
        (
            dir.join("run.json"),
            "the run's state, rebuilt from the journal",
        ),
        (
            dir.join("delivery"),
            "the delivery gate, the run's patch and the outcome",
        ),
        (target.join(".orcho/receipts"), "the receipts"),
        (worktree, "the retained worktree"),
    ] {
        println!("   {what}:\n      {path}");
    }
    Ok(())
}

/// Creates the target: a git repository with an empty library, one commit,
/// and the store (`.orcho/`) ignored.
/// The advisor, against a chat-completions endpoint the demo serves itself
/// on 127.0.0.1: it answers every request with the same advice, so the demo
/// needs no key and no network. A real profile names a real model in its
/// `advisor:` block instead.
/// The demo's host of [`orcho::drive`]: a scripted agent runs each phase,
/// and a scripted operator decides, confirming the advisor's advice at the
/// handoff and approving the delivery.
struct Demo {
    engine: Engine,
    run: orcho::core::RunId,
    worktree: Utf8PathBuf,
    announced: bool,
}

/// What the demo's host can fail with.
#[derive(Debug)]
struct DemoError(String);

impl std::fmt::Display for DemoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Error for DemoError {}

fn demo_error(e: impl std::fmt::Display) -> DemoError {
    DemoError(e.to_string())
}

impl orcho::Host for Demo {
    type Error = DemoError;

    async fn run_phase(&mut self, request: &PhaseRequest) -> Result<PhaseReport, DemoError> {
        if !self.announced {
            self.announced = true;
            println!(
                "The target has no uncommitted changes, so intake asks nothing. The run works\n\
                 in its own git worktree of the target:\n   {}\n\
                 Every phase works there; the target changes only if the delivery gate says so.\n",
                self.worktree
            );
        }
        announce(request);
        agent(request, &self.worktree).map_err(|e| demo_error(error_chain(e.as_ref())))
    }

    async fn decide(
        &mut self,
        handoff: &PhaseHandoff,
    ) -> Result<Option<DecisionRequest<HandoffChoice>>, DemoError> {
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
        let advice = self
            .engine
            .advise(&self.run, handoff.id())
            .await
            .map_err(|e| demo_error(error_chain(&e)))?;
        let a = advice.advice();
        println!(
            "   The advisor recommends {} (confidence {:.2}): {}",
            a.recommended_action,
            a.confidence.value().unwrap_or_default(),
            a.rationale
        );
        let feedback = a
            .retry_feedback
            .clone()
            .ok_or_else(|| demo_error("the advisor gave no feedback"))?;
        println!("   It decides nothing. The operator reads it and confirms retry_feedback:");
        println!("   \"{feedback}\" (recorded with advice {})", advice.id());
        println!("   (the decision is on disk; resuming advances the run)\n");
        let choice = HandoffChoice::retry(feedback).map_err(demo_error)?;
        Ok(Some(
            DecisionRequest::new(choice, DecidedBy::Operator).with_advice(advice.id().clone()),
        ))
    }

    async fn decide_delivery(
        &mut self,
        gate: &DeliveryGate,
    ) -> Result<Option<DecisionRequest<DeliveryChoice>>, DemoError> {
        show_gate(gate);
        let message = "Add parse: split on commas, no items for empty input";
        println!("   The operator decides approve, with the message \"{message}\".");
        println!("   (the decision is on disk; resuming delivers it)\n");
        let choice = DeliveryChoice::approve_with_message(message).map_err(demo_error)?;
        Ok(Some(DecisionRequest::new(choice, DecidedBy::Operator)))
    }

    fn progress(&mut self, event: orcho::Progress<'_>) {
        if let orcho::Progress::Settled(attempt) = event {
            explain(attempt);
        }
    }
}

fn local_advisor() -> Result<LlmAdvisor, Box<dyn Error>> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    let advice = serde_json::json!({
        "recommended_action": "retry_feedback",
        "confidence": 0.86,
        "rationale": "the finding names the function and the input; one more attempt can fix it",
        "risks": [],
        "retry_feedback": "handle the empty input and say so in a doc comment",
        "expected_files": ["src/lib.rs"],
    });
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            // The request is read to its end, then answered.
            let mut request = Vec::new();
            let mut buf = [0u8; 8192];
            while let Ok(n) = stream.read(&mut buf) {
                request.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&request);
                let Some(head) = text.find("\r\n\r\n") else {
                    continue;
                };
                let length: usize = text[..head]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().to_owned())
                    })
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                if n == 0 || request.len() >= head + 4 + length {
                    break;
                }
            }
            let body = serde_json::json!({
                "choices": [{"message": {"role": "assistant", "content": advice.to_string()}}],
                "usage": {"prompt_tokens": 850, "completion_tokens": 70},
            })
            .to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let config = LlmConfig::from_value(&serde_json::json!({
        "base_url": format!("http://127.0.0.1:{port}/v1"),
        "model": "demo-model",
    }))?;
    let client = Client::new(config).with_api_key_lookup(|_| Ok("demo-key-not-secret".to_owned()));
    Ok(LlmAdvisor::new("demo-advisor", client))
}

fn create_target(target: &Utf8Path) -> Result<(), Box<dyn Error>> {
    fs::create_dir_all(&target.join("src"))?;
    fs::write_atomic(&target.join("src/lib.rs"), b"// the parser goes here\n")?;
    fs::write_atomic(&target.join(".gitignore"), b".orcho/\n")?;
    for args in [
        &["init", "--quiet", "--initial-branch=main"][..],
        &["config", "user.name", "Orcho Demo"],
        &["config", "user.email", "demo@orcho.invalid"],
        &["config", "commit.gpgsign", "false"],
        &["add", "--all"],
        &["commit", "--quiet", "-m", "Start the parser"],
    ] {
        git(target, args)?;
    }
    Ok(())
}

/// Runs git in `dir` through Orcho's one spawn site and returns its
/// standard output.
fn git(dir: &Utf8Path, args: &[&str]) -> Result<String, Box<dyn Error>> {
    let request = ExecRequest::new(std::iter::once("git").chain(args.iter().copied()))
        .cwd(dir.to_owned())
        .envs(BaseEnv::inherit())
        .keep_stdout(1 << 16);
    let out = exec::run(&request)?;
    if !out.status.success() {
        return Err(format!(
            "`git {}` failed ({}): {}",
            args.join(" "),
            out.status,
            out.stderr.tail_lossy().trim()
        )
        .into());
    }
    Ok(
        String::from_utf8_lossy(&out.stdout.kept.unwrap_or_default())
            .trim()
            .to_owned(),
    )
}

/// Prints what the operator sees at the delivery gate.
fn show_gate(gate: &DeliveryGate) {
    println!("🚪 The run reaches its release state: the delivery gate opens.");
    println!(
        "   Release verdict: {} (final acceptance said {}).",
        gate.verdict(),
        gate.reviewer_verdict()
    );
    println!(
        "   The run's diff against {}: {}",
        short(gate.base()),
        gate.diff()
    );
    for file in gate.diff().files() {
        match (file.insertions(), file.deletions()) {
            (Some(added), Some(removed)) => {
                println!("      {}  +{added} -{removed}", file.path());
            }
            _ => println!("      {}  (binary)", file.path()),
        }
    }
    println!("   Available actions: {}", gate.available_actions());
    for blocked in gate.blocked() {
        println!(
            "   Not offered: {} ({})",
            blocked.action(),
            blocked.reason()
        );
    }
}

fn short(commit: &str) -> &str {
    commit.get(..7).unwrap_or(commit)
}

fn announce(request: &PhaseRequest) {
    println!("▶  Phase `{}`, attempt {}.", request.phase, request.attempt);
    for failure in &request.input.fed_failures {
        println!(
            "   It receives the failure of gate `{}`: {}",
            failure.gate, failure.summary
        );
    }
    for finding in &request.input.findings {
        println!(
            "   It receives a finding of the last attempt: {}",
            finding.title
        );
    }
    if let Some(feedback) = &request.input.feedback {
        println!("   It receives the operator's feedback: \"{feedback}\"");
    }
    if request.input.readiness.is_some() {
        println!("   It receives the readiness summary built from the receipts on disk.");
    }
}

/// The scripted agent: what each attempt does in the run's
/// worktree, and what it reports.
fn agent(request: &PhaseRequest, worktree: &Utf8Path) -> Result<PhaseReport, Box<dyn Error>> {
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
                &worktree.join("src/lib.rs"),
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
            // longer proves anything about the worktree.
            fs::write_atomic(
                &worktree.join("src/lib.rs"),
                b"/// Splits on commas; empty input gives no items.\npub fn parse(input: &str) -> Vec<&str> {\n    input.split(',').filter(|s| !s.is_empty()).collect()\n}\n",
            )?;
            println!(
                "   Meanwhile the agent edits src/lib.rs again, after the tests ran: the `check`\n   \
                 receipt no longer matches the worktree. The reviewer approves anyway."
            );
            approved("ready")
        }
        _ => {
            println!("   The reviewer approves.");
            approved("ready")
        }
    })
}

/// Prints what an attempt's gates did and where it sent the run.
fn explain(attempt: &orcho::PhaseEvidence) {
    for record in &attempt.gates {
        let result = &record.result;
        let mut line = format!(
            "   gate `{}` {} [on_fail: {}]",
            result.gate,
            result.outcome.as_str(),
            record.on_fail
        );
        if result.outcome.is_failure() {
            let summary = result.summary.lines().next().unwrap_or_default();
            if !summary.is_empty() {
                line.push_str(": ");
                line.push_str(summary);
            }
        }
        println!("{line}");
    }
    if let Some(verdict) = attempt.merged_verdict
        && verdict != attempt.verdict
    {
        println!(
            "   acceptance {verdict} (the reviewer said {})",
            attempt.verdict
        );
    }
    if let Some(next) = &attempt.next {
        println!("   → {next}");
    }
    println!();
}
