//! `orcho mcp` driven by the official Rust MCP SDK's client on temporary
//! git repositories: the server in process over an in-memory duplex
//! transport, and the real binary as a child process over stdio.

use camino::{Utf8Path, Utf8PathBuf};
use orcho::receipts::exec::{self, BaseEnv, ExecRequest};
use rmcp::{
    RoleClient, ServiceExt,
    model::{CallToolRequestParams, CallToolResult},
    service::RunningService,
    transport::TokioChildProcess,
};
use serde_json::{Value, json};

#[path = "../common/redact.rs"]
mod redact;

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;
type Client = RunningService<RoleClient, ()>;

const TOOLS: [&str; 19] = [
    "orcho_run_start",
    "orcho_run_status",
    "orcho_run_evidence",
    "orcho_phase_handoff_decide",
    "orcho_run_resume",
    "orcho_handoff_advice",
    "orcho_review_paused_run",
    "orcho_delivery_gate",
    "orcho_delivery_decide",
    "orcho_delivery_rerun",
    "orcho_workspace_pending_decisions",
    "orcho_touchpoint",
    "orcho_touchpoint_answer",
    "orcho_intake_gate",
    "orcho_intake_decide",
    "orcho_verify",
    "orcho_status",
    "orcho_point",
    "orcho_decide",
];

/// A review phase that pauses for a decision when it rejects.
const PROFILE: &str = "\
schema: 1
name: mcp-test
description: A review that pauses on rejection.
phases:
  - name: review
    role: review
    max_attempts: 1
    handoff:
      pause: on_rejected
      on_exhausted: pause
";

/// Rejects on its first run (leaving a marker), approves after.
const REVIEW_ONCE: [&str; 3] = [
    "sh",
    "-c",
    "test -f reviewed || { touch reviewed; exit 1; }",
];

fn git(dir: &Utf8Path, args: &[&str]) -> TestResult {
    let request = ExecRequest::new(std::iter::once("git").chain(args.iter().copied()))
        .cwd(dir)
        .envs(BaseEnv::inherit());
    let outcome = exec::run(&request)?;
    if !outcome.status.success() {
        return Err(format!(
            "git {} {}: {}",
            args.join(" "),
            outcome.status,
            outcome.stderr.tail_lossy()
        )
        .into());
    }
    Ok(())
}

/// A committed git repository with the test profile and `.orcho/` ignored.
fn repo() -> Result<(tempfile::TempDir, Utf8PathBuf), Box<dyn std::error::Error + Send + Sync>> {
    let tmp = tempfile::tempdir()?;
    let dir = Utf8PathBuf::try_from(tmp.path().to_owned())?;
    git(&dir, &["init", "-q"])?;
    git(&dir, &["config", "user.name", "Orcho Test"])?;
    git(&dir, &["config", "user.email", "test@orcho.invalid"])?;
    git(&dir, &["config", "commit.gpgsign", "false"])?;
    orcho::core::fs::write_atomic(&dir.join(".gitignore"), b".orcho/\n")?;
    orcho::core::fs::write_atomic(&dir.join("orcho.yaml"), PROFILE.as_bytes())?;
    git(&dir, &["add", ".gitignore", "orcho.yaml"])?;
    git(&dir, &["commit", "-q", "-m", "initial"])?;
    Ok((tmp, dir))
}

/// The server in this process, the client on the other end of an in-memory
/// duplex stream.
async fn connect(checkout: &Utf8Path) -> Result<Client, Box<dyn std::error::Error + Send + Sync>> {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let server = orcho_cli::OrchoMcp::for_checkout(checkout.to_owned(), None).with_receipt_key(
        orcho::receipts::ReceiptKey::derive_from_secret(b"the in-process server's test key"),
    );
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    Ok(().serve(client_io).await?)
}

/// The real `orcho mcp` binary as a child process, over its stdio.
#[expect(
    clippy::disallowed_methods,
    reason = "the test starts the binary under test; rmcp's transport takes a tokio command"
)]
async fn connect_binary(
    checkout: &Utf8Path,
) -> Result<Client, Box<dyn std::error::Error + Send + Sync>> {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_orcho"));
    command
        .arg("--checkout")
        .arg(checkout.as_str())
        .arg("mcp")
        .env(
            "ORCHO_RECEIPT_KEY",
            "the test's receipt secret, outside the checkout",
        );
    let transport = TokioChildProcess::new(command)?;
    Ok(().serve(transport).await?)
}

/// Calls a tool; returns whether it was refused and its structured content.
async fn call(
    client: &Client,
    tool: &'static str,
    arguments: Value,
) -> Result<(bool, Value), Box<dyn std::error::Error + Send + Sync>> {
    let Value::Object(arguments) = arguments else {
        return Err("arguments must be an object".into());
    };
    let result: CallToolResult = client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
        .await?;
    let content = result
        .structured_content
        .ok_or_else(|| format!("{tool} returned no structured content"))?;
    Ok((result.is_error == Some(true), content))
}

/// Starts a run in a worktree whose `review` phase runs `review`; it ends
/// at its delivery gate. Returns the run id.
async fn to_the_gate(
    client: &Client,
    review: Value,
) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    let started = ok(
        client,
        "orcho_run_start",
        json!({ "phases": { "review": review } }),
    )
    .await?;
    if started["status"] != "awaiting_delivery" || started["awaiting"] != "delivery_gate" {
        return Err(format!("the run did not reach its delivery gate: {started}").into());
    }
    Ok(started["run_id"].as_str().ok_or("no run id")?.to_owned())
}

/// A call that must succeed.
async fn ok(
    client: &Client,
    tool: &'static str,
    arguments: Value,
) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
    let (refused, content) = call(client, tool, arguments).await?;
    if refused {
        return Err(format!("{tool} was refused: {content}").into());
    }
    Ok(content)
}

/// A call that must be refused with `code`.
async fn refused(
    client: &Client,
    tool: &'static str,
    arguments: Value,
    code: &str,
) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
    let (refused, content) = call(client, tool, arguments).await?;
    if !refused || content["code"] != code {
        return Err(format!("{tool}: expected a refusal `{code}`, got {content}").into());
    }
    Ok(content)
}

#[tokio::test]
async fn a_paused_run_is_reviewed_decided_and_resumed() -> TestResult {
    let (_tmp, dir) = repo()?;
    let client = connect(&dir).await?;

    let tools = client.list_all_tools().await?;
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    let mut expected = TOOLS.to_vec();
    expected.sort_unstable();
    assert_eq!(names, expected);
    assert!(
        tools
            .iter()
            .all(|t| t.input_schema.get("type") == Some(&json!("object")))
    );

    let started = ok(
        &client,
        "orcho_run_start",
        json!({ "phases": { "review": REVIEW_ONCE }, "in_place": true }),
    )
    .await?;
    assert_eq!(started["status"], "awaiting_phase_handoff");
    assert_eq!(started["awaiting"], "phase_handoff");
    let run = started["run_id"].as_str().ok_or("no run id")?.to_owned();

    let status = ok(&client, "orcho_run_status", json!({ "run_id": run })).await?;
    let handoff = &status["meta"]["phase_handoff"];
    let handoff_id = handoff["handoff_id"]
        .as_str()
        .ok_or("no handoff id")?
        .to_owned();
    assert_eq!(handoff["phase"], "review");
    assert_eq!(handoff["verdict"], "rejected");
    assert!(
        handoff["available_actions"]
            .as_array()
            .is_some_and(|a| a.contains(&json!("retry_feedback")))
    );
    assert_eq!(handoff["findings"].as_array().map(Vec::len), Some(1));
    assert_eq!(status["phase"], "review");
    assert_eq!(status["attempt"], 1);

    let findings = ok(
        &client,
        "orcho_run_evidence",
        json!({ "run_id": run, "slice": "findings" }),
    )
    .await?;
    assert_eq!(findings["handoff"]["handoff_id"], handoff_id.as_str());
    assert_eq!(findings["attempts"][0]["verdict"], "rejected");

    let pending = ok(&client, "orcho_workspace_pending_decisions", json!({})).await?;
    assert_eq!(pending["pending"][0]["run_id"], run.as_str());

    // While another driver holds the run, resuming it is refused as busy.
    {
        let engine = orcho::Engine::builder(
            orcho::RunPlan::new("holder", Vec::new()),
            dir.join(".orcho"),
        )
        .build()?;
        let _held = engine.open(&run.parse()?)?;
        refused(
            &client,
            "orcho_run_resume",
            json!({ "run_id": run }),
            "run_busy",
        )
        .await?;
    }

    let no_advice = refused(
        &client,
        "orcho_handoff_advice",
        json!({ "run_id": run }),
        "no_advisor",
    )
    .await?;
    assert!(
        no_advice["message"]
            .as_str()
            .is_some_and(|m| m.contains("no advisor is configured"))
    );
    assert!(
        no_advice["hint"]
            .as_str()
            .is_some_and(|h| h.contains("orcho_phase_handoff_decide"))
    );

    let review = ok(&client, "orcho_review_paused_run", json!({ "run_id": run })).await?;
    let shown = |doc: &Value| {
        let text = serde_json::to_string_pretty(doc).unwrap_or_default();
        redact::redact(&text, &[(dir.as_str(), "[dir]"), (run.as_str(), "[run]")])
    };
    insta::assert_snapshot!("status_at_a_handoff", shown(&status));
    insta::assert_snapshot!("review_of_a_paused_run", shown(&review));
    let proposal = &review["proposal"];
    assert_eq!(proposal["action"], "retry_feedback");
    assert_eq!(proposal["applied"], false);
    assert_eq!(proposal["requires_confirmation"], true);
    assert_eq!(
        proposal["confirm_with"]["tool"],
        "orcho_phase_handoff_decide"
    );
    // Reviewing decided nothing.
    let status = ok(&client, "orcho_run_status", json!({ "run_id": run })).await?;
    assert_eq!(status["meta"]["phase_handoff"]["decision"], Value::Null);

    let awaiting = refused(
        &client,
        "orcho_run_resume",
        json!({ "run_id": run }),
        "awaiting_decision",
    )
    .await?;
    insta::assert_snapshot!("resume_awaiting_a_decision", shown(&awaiting));
    assert_eq!(awaiting["details"]["handoff_id"], handoff_id.as_str());
    assert!(
        awaiting["details"]["available_actions"]
            .as_array()
            .is_some_and(|a| !a.is_empty())
    );

    let decide = json!({
        "run_id": run, "handoff_id": handoff_id,
        "action": "retry_feedback", "feedback": "mark it reviewed",
    });
    let recorded = ok(&client, "orcho_phase_handoff_decide", decide.clone()).await?;
    assert_eq!(recorded["recorded"], true);
    // The same payload again is idempotent; a different one conflicts.
    ok(&client, "orcho_phase_handoff_decide", decide).await?;
    refused(
        &client,
        "orcho_phase_handoff_decide",
        json!({ "run_id": run, "action": "continue" }),
        "decision_conflict",
    )
    .await?;
    // Deciding did not move the run.
    let status = ok(&client, "orcho_run_status", json!({ "run_id": run })).await?;
    assert_eq!(status["status"], "awaiting_phase_handoff");

    let resumed = ok(&client, "orcho_run_resume", json!({ "run_id": run })).await?;
    assert_eq!(resumed["status"], "completed", "{resumed}");

    let evidence = ok(
        &client,
        "orcho_run_evidence",
        json!({ "run_id": run, "slice": "handoffs" }),
    )
    .await?;
    let decision = &evidence["handoffs"][0]["decision"];
    assert_eq!(decision["action"], "retry_feedback");
    // Recorded as the client's, named by what it said at `initialize`.
    assert_eq!(decision["decided_by"], "client", "{decision}");
    assert!(
        decision["client"].as_str().is_some_and(|c| !c.is_empty()),
        "{decision}"
    );
    // The advice slice: no advisor ran, so no call and nothing applied.
    let advice = ok(
        &client,
        "orcho_run_evidence",
        json!({ "run_id": run, "slice": "handoff_advice" }),
    )
    .await?;
    assert_eq!(advice["handoff_advice"]["advice_calls"], 0, "{advice}");
    assert!(advice.get("handoffs").is_none(), "{advice}");

    // After the run ended: the recorded decision again is a replay that
    // changes nothing; a different one conflicts.
    let replay = ok(
        &client,
        "orcho_phase_handoff_decide",
        json!({
            "run_id": run, "handoff_id": handoff_id,
            "action": "retry_feedback", "note": "mark it reviewed",
        }),
    )
    .await?;
    assert_eq!(replay["recorded"], false, "{replay}");
    refused(
        &client,
        "orcho_phase_handoff_decide",
        json!({ "run_id": run, "handoff_id": handoff_id, "action": "halt" }),
        "decision_conflict",
    )
    .await?;
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_halted_run_refuses_decisions_and_resumes() -> TestResult {
    let (_tmp, dir) = repo()?;
    let client = connect(&dir).await?;
    let started = ok(
        &client,
        "orcho_run_start",
        json!({ "phases": { "review": "false" }, "in_place": true }),
    )
    .await?;
    let run = started["run_id"].as_str().ok_or("no run id")?.to_owned();
    refused(
        &client,
        "orcho_phase_handoff_decide",
        json!({ "run_id": run, "action": "retry_feedback" }),
        "invalid_input",
    )
    .await?;
    refused(
        &client,
        "orcho_phase_handoff_decide",
        json!({ "run_id": run, "action": "shrug" }),
        "invalid_input",
    )
    .await?;
    ok(
        &client,
        "orcho_phase_handoff_decide",
        json!({ "run_id": run, "action": "halt" }),
    )
    .await?;
    // Halted when decided: no resume needed.
    let halted = ok(&client, "orcho_run_status", json!({ "run_id": run })).await?;
    assert_eq!(halted["status"], "halted", "{halted}");
    // The same `halt` again: a replay, nothing changes; another decision
    // conflicts with it.
    let replay = ok(
        &client,
        "orcho_phase_handoff_decide",
        json!({ "run_id": run, "action": "halt" }),
    )
    .await?;
    assert_eq!(replay["recorded"], false, "{replay}");
    refused(
        &client,
        "orcho_phase_handoff_decide",
        json!({ "run_id": run, "action": "continue" }),
        "decision_conflict",
    )
    .await?;
    refused(
        &client,
        "orcho_run_resume",
        json!({ "run_id": run }),
        "run_terminal",
    )
    .await?;
    refused(
        &client,
        "orcho_run_status",
        json!({ "run_id": "20260101T000000000Z-0000000000000000" }),
        "unknown_run",
    )
    .await?;
    refused(
        &client,
        "orcho_run_status",
        json!({ "run_id": "../x" }),
        "invalid_input",
    )
    .await?;
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_run_in_a_worktree_ends_at_its_delivery_gate() -> TestResult {
    let (_tmp, dir) = repo()?;
    let client = connect_binary(&dir).await?;
    let run = to_the_gate(&client, json!(["sh", "-c", "echo reviewed > REVIEWED.md"])).await?;

    let gate = ok(&client, "orcho_delivery_gate", json!({ "run_id": run })).await?;
    assert_eq!(gate["verdict"], "approved");
    assert!(
        gate["available_actions"]
            .as_array()
            .is_some_and(|a| a.contains(&json!("skip")))
    );

    refused(
        &client,
        "orcho_run_resume",
        json!({ "run_id": run }),
        "awaiting_decision",
    )
    .await?;
    refused(
        &client,
        "orcho_delivery_decide",
        json!({ "run_id": run, "action": "ship" }),
        "invalid_input",
    )
    .await?;
    let recorded = ok(
        &client,
        "orcho_delivery_decide",
        json!({ "run_id": run, "action": "skip", "note": "nothing to deliver" }),
    )
    .await?;
    assert_eq!(recorded["recorded"], true);
    refused(
        &client,
        "orcho_delivery_decide",
        json!({ "run_id": run, "action": "halt" }),
        "decision_conflict",
    )
    .await?;
    let done = ok(&client, "orcho_run_resume", json!({ "run_id": run })).await?;
    assert_eq!(done["status"], "completed", "{done}");

    // A profile that lets only an operator approve: the client cannot.
    let operator = format!("{PROFILE}delivery:\n  approve_requires_operator: true\n");
    orcho::core::fs::write_atomic(&dir.join("operator.yaml"), operator.as_bytes())?;
    git(&dir, &["add", "operator.yaml"])?;
    git(&dir, &["commit", "-q", "-m", "operator profile"])?;
    let started = ok(
        &client,
        "orcho_run_start",
        json!({ "profile": "operator.yaml", "phases": { "review": ["sh", "-c", "echo reviewed > REVIEWED.md"] } }),
    )
    .await?;
    let guarded = started["run_id"].as_str().ok_or("no run id")?.to_owned();
    // Not offered to a client, with why.
    let gate = ok(&client, "orcho_delivery_gate", json!({ "run_id": guarded })).await?;
    assert!(
        !gate["available_actions"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == "approve")),
        "{gate}"
    );
    assert!(
        gate["blocked"]
            .as_array()
            .is_some_and(|b| b.iter().any(|x| x["action"] == "approve")),
        "{gate}"
    );
    let refusal = refused(
        &client,
        "orcho_delivery_decide",
        json!({ "run_id": guarded, "action": "approve" }),
        "operator_required",
    )
    .await?;
    assert!(
        refusal["message"]
            .as_str()
            .is_some_and(|m| m.contains("only an operator")),
        "{refusal}"
    );
    let delivery = ok(
        &client,
        "orcho_run_evidence",
        json!({ "run_id": run, "slice": "delivery" }),
    )
    .await?;
    assert_eq!(delivery["delivery"]["action"], "skip");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_target_in_the_way_is_shown_and_refused_with_what_to_do() -> TestResult {
    let (_tmp, dir) = repo()?;
    let client = connect_binary(&dir).await?;
    let run = to_the_gate(&client, json!(["sh", "-c", "echo run > notes.txt"])).await?;
    // Meanwhile the operator writes the same file in the target.
    orcho::core::fs::write_atomic(&dir.join("notes.txt"), b"mine\n")?;

    let gate = ok(&client, "orcho_delivery_gate", json!({ "run_id": run })).await?;
    assert_eq!(gate["target_status"]["state"], "conflicting", "{gate}");
    assert_eq!(
        gate["target_status"]["refused"],
        json!(["approve", "apply"])
    );
    let refusal = refused(
        &client,
        "orcho_delivery_decide",
        json!({ "run_id": run, "action": "approve" }),
        "target_conflict",
    )
    .await?;
    assert!(
        refusal["hint"]
            .as_str()
            .is_some_and(|h| h.contains("commit or stash")),
        "{refusal}"
    );

    std::fs::remove_file(dir.join("notes.txt"))?;
    ok(
        &client,
        "orcho_delivery_decide",
        json!({ "run_id": run, "action": "approve" }),
    )
    .await?;
    let done = ok(&client, "orcho_run_resume", json!({ "run_id": run })).await?;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(std::fs::read_to_string(dir.join("notes.txt"))?, "run\n");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_run_is_named_as_the_cli_names_it_and_unknown_arguments_are_refused() -> TestResult {
    let (_tmp, dir) = repo()?;
    let client = connect_binary(&dir).await?;
    let run = to_the_gate(&client, json!(["sh", "-c", "echo reviewed > REVIEWED.md"])).await?;
    for reference in ["latest", &run[..20]] {
        let status = ok(&client, "orcho_run_status", json!({ "run_id": reference })).await?;
        assert_eq!(status["run_id"], run.as_str(), "{reference}: {status}");
    }
    // The CLI's key is understood too.
    let status = ok(&client, "orcho_run_status", json!({ "run": "latest" })).await?;
    assert_eq!(status["run_id"], run.as_str(), "{status}");
    refused(
        &client,
        "orcho_run_status",
        json!({ "run_id": "2099" }),
        "unknown_run",
    )
    .await?;

    // A misspelt argument is refused, not ignored; nothing is recorded.
    let misspelt = call(
        &client,
        "orcho_delivery_decide",
        json!({ "run_id": run, "action": "skip", "nte": "typo" }),
    )
    .await;
    let said = match misspelt {
        Err(e) => e.to_string(),
        Ok((refused, content)) => {
            assert!(refused, "{content}");
            content.to_string()
        }
    };
    assert!(said.contains("nte"), "{said}");
    let gate = ok(&client, "orcho_delivery_gate", json!({ "run_id": run })).await?;
    assert_eq!(gate["target_status"]["state"], "clean", "{gate}");
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_phase_command_that_cannot_start_is_bad_input() -> TestResult {
    let (_tmp, dir) = repo()?;
    let client = connect_binary(&dir).await?;
    let refusal = refused(
        &client,
        "orcho_run_start",
        json!({ "phases": { "review": ["no-such-program-anywhere"] } }),
        "invalid_input",
    )
    .await?;
    assert!(
        refusal["message"]
            .as_str()
            .is_some_and(|m| m.contains("cannot start")),
        "{refusal}"
    );
    assert!(
        refusal["hint"]
            .as_str()
            .is_some_and(|h| h.contains("start a new run") && h.contains("program on PATH")),
        "{refusal}"
    );
    client.cancel().await?;
    Ok(())
}

/// A plan phase that waits for approval, then an implement phase.
const PLANNED: &str = "\
schema: 1
name: planned
phases:
  - { name: plan, role: plan, max_attempts: 3 }
  - { name: implement, role: implement }
supervision:
  plan_approval: true
";

/// A checkout whose run waits for its plan's approval: the planner writes
/// a plan, and keeps what it was given in `planner-input.txt`.
async fn waiting_for_plan_approval()
-> Result<(tempfile::TempDir, Utf8PathBuf, Client, Value), Box<dyn std::error::Error + Send + Sync>>
{
    let (tmp, dir) = repo()?;
    orcho::core::fs::write_atomic(&dir.join("planned.yaml"), PLANNED.as_bytes())?;
    let client = connect(&dir).await?;
    let planner = r#"echo "$ORCHO_INPUT_TEXT" >> planner-input.txt; echo '{"schema": 1, "plan": {"goal": "ship it", "steps": [{"role": "coder", "description": "write it"}]}}' > "$ORCHO_OUTPUT""#;
    let started = ok(
        &client,
        "orcho_run_start",
        json!({
            "profile": "planned.yaml",
            "phases": { "plan": ["sh", "-c", planner] },
            "in_place": true
        }),
    )
    .await?;
    Ok((tmp, dir, client, started))
}

#[tokio::test]
async fn plan_approval_is_decided_through_the_touchpoint_tools() -> TestResult {
    let (_tmp, dir, client, started) = waiting_for_plan_approval().await?;
    assert_eq!(started["status"], "awaiting_plan_approval", "{started}");
    let run = started["run_id"].as_str().ok_or("no run id")?.to_owned();

    let pending = ok(&client, "orcho_workspace_pending_decisions", json!({})).await?;
    assert!(pending.to_string().contains("plan_approval"), "{pending}");

    let touchpoint = ok(&client, "orcho_touchpoint", json!({ "run_id": run })).await?;
    assert_eq!(touchpoint["kind"], "plan_approval");
    assert_eq!(touchpoint["plan"]["goal"], "ship it");
    assert!(
        touchpoint["plan_digest"]
            .as_str()
            .is_some_and(|d| d.starts_with("blake3:"))
    );

    // A wrong number of answers is refused; nothing is recorded.
    refused(
        &client,
        "orcho_touchpoint_answer",
        json!({ "run_id": run, "answers": ["Approve", "", "more"] }),
        "invalid_input",
    )
    .await?;
    ok(
        &client,
        "orcho_touchpoint_answer",
        json!({ "run_id": run, "answers": ["Request Changes", "name the risks"] }),
    )
    .await?;
    let again = ok(&client, "orcho_run_resume", json!({ "run_id": run })).await?;
    assert_eq!(again["status"], "awaiting_plan_approval", "{again}");
    let input = std::fs::read_to_string(dir.join("planner-input.txt"))?;
    assert!(input.contains("name the risks"), "{input}");

    // Pinned to the plan read: another digest is refused as stale, the
    // plan's own is taken. The action alone: the context is left empty.
    let shown = ok(&client, "orcho_touchpoint", json!({ "run_id": run })).await?;
    let digest = shown["plan_digest"]
        .as_str()
        .ok_or("no plan digest")?
        .to_owned();
    let stale = format!("blake3:{}", "0".repeat(64));
    refused(
        &client,
        "orcho_touchpoint_answer",
        json!({ "run_id": run, "answers": ["Approve"], "plan_digest": stale }),
        "stale_plan",
    )
    .await?;
    ok(
        &client,
        "orcho_touchpoint_answer",
        json!({ "run_id": run, "answers": ["Approve"], "plan_digest": digest }),
    )
    .await?;
    let done = ok(&client, "orcho_run_resume", json!({ "run_id": run })).await?;
    assert_eq!(done["status"], "completed", "{done}");
    // Each answer is recorded as the client's, by the name it gave.
    let decisions = dir.join(".orcho/runs").join(&run).join("decisions");
    let mut named = 0;
    for entry in std::fs::read_dir(&decisions)? {
        let record: Value = serde_json::from_str(&std::fs::read_to_string(entry?.path())?)?;
        if record["kind"] == "supervision" {
            assert_eq!(record["decided_by"], "client", "{record}");
            assert!(
                record["client"].as_str().is_some_and(|c| !c.is_empty()),
                "{record}"
            );
            named += 1;
        }
    }
    assert!(named >= 2, "the plan's answers in {decisions:?}");
    client.cancel().await?;
    Ok(())
}

/// Any point through the two tools every kind shares: the view of what
/// waits, and a decision by an action's name, pinned to what was shown.
#[tokio::test]
async fn any_point_is_shown_and_decided_by_an_actions_name() -> TestResult {
    let (_tmp, dir, client, started) = waiting_for_plan_approval().await?;
    let run = started["run_id"].as_str().ok_or("no run id")?.to_owned();

    let shown = ok(&client, "orcho_point", json!({ "run_id": run })).await?;
    let point = &shown["point"];
    assert_eq!(point["kind"], "plan_approval", "{shown}");
    assert_eq!(point["headline"], "the plan waits for approval: ship it");
    let actions: Vec<&str> = point["actions"]
        .as_array()
        .ok_or("no actions")?
        .iter()
        .filter_map(|a| a["name"].as_str())
        .collect();
    assert_eq!(actions, ["approve", "request_changes", "reject"]);
    assert_eq!(point["actions"][1]["note"]["note"], "required");
    assert_eq!(point["pinned"][0]["what"], "plan");
    let digest = point["pinned"][0]["digest"]
        .as_str()
        .ok_or("no digest")?
        .to_owned();
    let id = point["id"].as_str().ok_or("no id")?.to_owned();

    // The resume refusal names the actions and the tool.
    let awaiting = refused(
        &client,
        "orcho_run_resume",
        json!({ "run_id": run }),
        "awaiting_decision",
    )
    .await?;
    assert_eq!(awaiting["details"]["point"], "plan approval");
    assert_eq!(
        awaiting["details"]["available_actions"][1],
        "request_changes"
    );
    assert!(
        awaiting["hint"]
            .as_str()
            .is_some_and(|h| h.contains("orcho_decide"))
    );

    // The note rules, a slip, another point, another plan: refused, and
    // nothing is recorded.
    let refusals = [
        (json!({ "action": "request_changes" }), "invalid_input"),
        (json!({ "action": "aprove" }), "invalid_input"),
        (
            json!({ "action": "approve", "point_id": "touchpoint-9" }),
            "point_moved",
        ),
        (
            json!({ "action": "approve", "digest": format!("blake3:{}", "0".repeat(64)) }),
            "stale",
        ),
    ];
    for (mut input, code) in refusals {
        input["run_id"] = json!(run);
        let err = refused(&client, "orcho_decide", input, code).await?;
        if code == "invalid_input" && err["message"].to_string().contains("aprove") {
            assert!(
                err["message"]
                    .to_string()
                    .contains("did you mean `approve`?"),
                "{err}"
            );
        }
    }
    let decided = ok(
        &client,
        "orcho_decide",
        json!({ "run_id": run, "action": "request_changes", "note": "name the risks",
                "point_id": id, "digest": digest }),
    )
    .await?;
    assert_eq!(decided["recorded"], true, "{decided}");
    assert_eq!(decided["point"], "plan approval");
    let decided_point = ok(&client, "orcho_point", json!({ "run_id": run })).await?;
    assert_eq!(decided_point["point"], Value::Null, "decided: nothing open");
    refused(
        &client,
        "orcho_decide",
        json!({ "run_id": run, "action": "approve" }),
        "no_open_point",
    )
    .await?;

    let again = ok(&client, "orcho_run_resume", json!({ "run_id": run })).await?;
    assert_eq!(again["status"], "awaiting_plan_approval", "{again}");
    let input = std::fs::read_to_string(dir.join("planner-input.txt"))?;
    assert!(input.contains("name the risks"), "{input}");
    ok(
        &client,
        "orcho_decide",
        json!({ "run_id": run, "action": "approve" }),
    )
    .await?;
    let done = ok(&client, "orcho_run_resume", json!({ "run_id": run })).await?;
    assert_eq!(done["status"], "completed", "{done}");
    client.cancel().await?;
    Ok(())
}

/// A review phase whose `check` gate runs a verification command.
const CHECKED: &str = "\
schema: 1
name: checked
phases:
  - name: review
    role: review
    gates:
      - { name: check, uses: tests, on_fail: informational }
verification:
  commands:
    - { name: check, argv: [\"true\"] }
  required: [check]
";

#[tokio::test]
async fn intake_is_decided_through_its_tools_and_receipts_carry_the_servers_key() -> TestResult {
    let (_tmp, dir) = repo()?;
    orcho::core::fs::write_atomic(&dir.join("checked.yaml"), CHECKED.as_bytes())?;
    git(&dir, &["add", "checked.yaml"])?;
    git(&dir, &["commit", "-q", "-m", "profile"])?;
    // The checkout is dirty when the run starts.
    orcho::core::fs::write_atomic(&dir.join("notes.txt"), b"uncommitted\n")?;
    let key = orcho::receipts::ReceiptKey::derive_from_secret(b"the in-process server's test key");
    let client = connect(&dir).await?;
    let started = ok(
        &client,
        "orcho_run_start",
        json!({ "profile": "checked.yaml", "phases": { "review": ["sh", "-c", "echo reviewed > REVIEWED.md"] } }),
    )
    .await?;
    assert_eq!(started["status"], "awaiting_intake", "{started}");
    let run = started["run_id"].as_str().ok_or("no run id")?.to_owned();

    let gate = ok(&client, "orcho_intake_gate", json!({ "run_id": run })).await?;
    assert_eq!(gate["untracked"], json!(["notes.txt"]), "{gate}");
    // A delivery decision now: not at that gate, and what it waits for.
    let early = refused(
        &client,
        "orcho_delivery_decide",
        json!({ "run_id": run, "action": "approve" }),
        "not_at_delivery",
    )
    .await?;
    assert!(
        early["hint"]
            .as_str()
            .is_some_and(|h| h.contains("orcho_intake_decide")),
        "{early}"
    );
    refused(
        &client,
        "orcho_intake_decide",
        json!({ "run_id": run, "action": "includ" }),
        "invalid_input",
    )
    .await?;
    ok(
        &client,
        "orcho_intake_decide",
        json!({ "run_id": run, "action": "exclude" }),
    )
    .await?;
    let resumed = ok(&client, "orcho_run_resume", json!({ "run_id": run })).await?;
    assert_eq!(resumed["status"], "awaiting_delivery", "{resumed}");

    // The run's receipt is signed with the key the server was given.
    let receipt = std::fs::read_to_string(
        dir.join(".orcho/runs")
            .join(&run)
            .join("receipts/check/latest.json"),
    )?;
    assert!(
        receipt.contains(&format!("\"key\": \"{}\"", key.id())),
        "{receipt}"
    );
    client.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn a_run_started_with_a_task_keeps_it_and_bad_input_is_refused() -> TestResult {
    let (_tmp, dir) = repo()?;
    let client = connect_binary(&dir).await?;
    let started = ok(
        &client,
        "orcho_run_start",
        json!({ "phases": { "review": ["sh", "-c", "echo reviewed > REVIEWED.md"] }, "task": "Parse empty input as []" }),
    )
    .await?;
    assert_eq!(started["task"], "Parse empty input as []", "{started}");
    let (refused_blank, said) = call(
        &client,
        "orcho_run_start",
        json!({ "phases": { "review": ["sh", "-c", "echo reviewed > REVIEWED.md"] }, "task": "  " }),
    )
    .await?;
    assert!(refused_blank, "{said}");
    assert!(said.to_string().contains("`task` is empty"), "{said}");
    let (refused_agent, said) = call(
        &client,
        "orcho_run_start",
        json!({ "phases": { "review": "@claude" } }),
    )
    .await?;
    assert!(refused_agent, "{said}");
    assert!(
        said.to_string().contains("did you mean `@claude-code`?"),
        "{said}"
    );
    Ok(())
}

#[tokio::test]
async fn an_mcp_led_agent_proves_readiness_outside_a_run() -> TestResult {
    let (_tmp, dir) = repo()?;
    orcho::core::fs::write_atomic(
        &dir.join("orcho.yaml"),
        format!(
            "{PROFILE}verification:\n  commands:\n    - {{ name: test, argv: [sh, -c, \"echo 'test result: ok. 1 passed; 0 failed'\"] }}\n    - {{ name: none, argv: [sh, -c, \"echo 'test result: ok. 0 passed; 0 failed'\"] }}\n  required: [test]\n"
        )
        .as_bytes(),
    )?;
    git(&dir, &["commit", "-q", "-am", "what proves it"])?;
    let client = connect(&dir).await?;
    let before = ok(&client, "orcho_status", json!({})).await?;
    assert_eq!(before["ready"], false, "{before}");
    assert_eq!(before["required"][0]["status"], "missing", "{before}");
    let verified = ok(&client, "orcho_verify", json!({})).await?;
    assert_eq!(verified["passed"], true, "{verified}");
    assert_eq!(verified["commands"][0]["command"], "test", "{verified}");
    let after = ok(&client, "orcho_status", json!({})).await?;
    assert_eq!(after["ready"], true, "{after}");
    // A command that ran no test does not pass.
    let vacuous = ok(&client, "orcho_verify", json!({ "commands": ["none"] })).await?;
    assert_eq!(vacuous["passed"], false, "{vacuous}");
    // A misspelt command is refused before anything runs.
    refused(
        &client,
        "orcho_verify",
        json!({ "commands": ["tset"] }),
        "invalid_input",
    )
    .await?;
    // From the commit's notes: nothing attested yet.
    let commit = ok(&client, "orcho_status", json!({ "commit": "HEAD" })).await?;
    assert_eq!(commit["ready"], false, "{commit}");
    assert_eq!(commit["required"][0]["state"], "missing", "{commit}");
    Ok(())
}

/// The real binary on the shared store `url`, as the machine `machine`.
#[expect(
    clippy::disallowed_methods,
    reason = "the test starts the binary under test; rmcp's transport takes a tokio command"
)]
async fn connect_shared(
    checkout: &Utf8Path,
    url: &str,
    machine: &str,
) -> Result<Client, Box<dyn std::error::Error + Send + Sync>> {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_orcho"));
    command
        .arg("--checkout")
        .arg(checkout.as_str())
        .args(["--store", url, "mcp"])
        .env("ORCHO_MACHINE", machine)
        .env(
            "ORCHO_RECEIPT_KEY",
            "the test's receipt secret, outside the checkout",
        );
    let transport = TokioChildProcess::new(command)?;
    Ok(().serve(transport).await?)
}

#[tokio::test(flavor = "multi_thread")]
async fn on_a_shared_store_the_tools_see_and_decide_another_machines_run() -> TestResult {
    let Some(server) = orcho_pg::testing::Server::shared() else {
        return Ok(());
    };
    let url = server.new_database();
    let (_first_tmp, first_dir) = repo()?;
    let (_second_tmp, second_dir) = repo()?;
    let first = connect_shared(&first_dir, &url, "build-1").await?;
    let started = ok(
        &first,
        "orcho_run_start",
        json!({ "phases": { "review": REVIEW_ONCE }, "in_place": true }),
    )
    .await?;
    assert_eq!(started["status"], "awaiting_phase_handoff", "{started}");
    let run = started["run_id"].as_str().ok_or("no run id")?.to_owned();

    // Another machine's client lists it, with where it was started.
    let second = connect_shared(&second_dir, &url, "laptop").await?;
    let pending = ok(&second, "orcho_workspace_pending_decisions", json!({})).await?;
    let entry = pending["pending"]
        .as_array()
        .and_then(|p| p.iter().find(|e| e["run_id"] == run.as_str()))
        .ok_or_else(|| format!("the run is not listed: {pending}"))?;
    assert_eq!(entry["origin"]["machine"], "build-1", "{entry}");
    let status = ok(&second, "orcho_run_status", json!({ "run_id": run })).await?;
    assert_eq!(status["status"], "awaiting_phase_handoff", "{status}");

    // It decides there; it may not drive the run, which says where it is.
    let decided = ok(
        &second,
        "orcho_phase_handoff_decide",
        json!({ "run_id": run, "action": "retry_feedback", "note": "mark it reviewed" }),
    )
    .await?;
    assert_eq!(decided["recorded"], true, "{decided}");
    let refusal = refused(
        &second,
        "orcho_run_resume",
        json!({ "run_id": run }),
        "run_elsewhere",
    )
    .await?;
    assert!(refusal.to_string().contains("build-1"), "{refusal}");

    // Where it was started, it goes on with that decision.
    let resumed = ok(&first, "orcho_run_resume", json!({ "run_id": run })).await?;
    assert_eq!(resumed["status"], "completed", "{resumed}");
    first.cancel().await?;
    second.cancel().await?;
    Ok(())
}

#[tokio::test]
async fn the_receipts_missing_at_the_gate_are_run_again_and_the_gate_shown_again() -> TestResult {
    let (_tmp, dir) = repo()?;
    orcho::core::fs::write_atomic(
        &dir.join("orcho.yaml"),
        b"schema: 1\nname: unproven\nphases:\n  - name: implement\n    role: implement\n\
          verification:\n  commands:\n    - { name: test, argv: [sh, -c, \"test -f done.txt\"] }\n  \
          required: [test]\n",
    )?;
    git(&dir, &["commit", "-q", "-am", "unproven"])?;
    let client = connect(&dir).await?;
    let started = ok(
        &client,
        "orcho_run_start",
        json!({ "phases": { "implement": ["sh", "-c", "echo x > done.txt"] } }),
    )
    .await?;
    assert_eq!(started["awaiting"], "delivery_gate", "{started}");
    let run = started["run_id"].as_str().ok_or("no run id")?.to_owned();
    let gate = ok(&client, "orcho_delivery_gate", json!({ "run_id": run })).await?;
    assert_eq!(gate["verdict"], "rejected", "{gate}");
    let again = ok(&client, "orcho_delivery_rerun", json!({ "run_id": run })).await?;
    assert_eq!(again["rerun"], json!(["test"]), "{again}");
    assert_eq!(again["verdict"], "approved", "{again}");
    client.cancel().await?;
    Ok(())
}
