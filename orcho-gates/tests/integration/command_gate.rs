//! The built-in `command` gate on real processes: the context goes in on
//! standard input, the result comes back on standard output, and anything
//! else is said precisely.

use std::{sync::Arc, time::Duration};

use camino::Utf8PathBuf;
use orcho_core::{Finding, Severity, Verdict};
use orcho_gates::{GateKind, GateOutcome, GateRegistry, GateSpec, PhaseOutcome, QualityGate};

use crate::{Result, context, name};

fn gate(with: serde_json::Value) -> Result<Arc<dyn QualityGate>> {
    let spec = GateSpec::new(name("style"), name("command")).with_config(with);
    Ok(GateRegistry::with_builtins().build(&spec)?)
}

fn sh(script: &str) -> serde_json::Value {
    serde_json::json!({ "argv": ["sh", "-c", script] })
}

fn error_of(
    result: std::result::Result<orcho_gates::QualityGateResult, orcho_gates::GateError>,
) -> String {
    match result {
        Ok(r) => panic!("expected an error, got {r:?}"),
        Err(e) => orcho_core::error_chain(&e),
    }
}

#[tokio::test]
async fn the_context_goes_in_and_a_failed_result_comes_back() -> Result {
    let (dir, ctx) = context();
    let root = Utf8PathBuf::try_from(dir.path().to_owned())?;
    let mut ctx = ctx;
    ctx = ctx.with_phase_outcome(
        PhaseOutcome::new(Verdict::Approved).with_findings([Finding::new(
            "implement",
            Severity::Low,
            "left a TODO",
        )]),
    );
    let with = serde_json::json!({
        "argv": ["sh", "-c", r#"cat > context.json; echo "$ORCHO_GATE $ORCHO_PHASE $STYLE" > env.txt
printf '%s' '{"schema": 1, "outcome": "failed", "summary": "1 line too long",
 "findings": [{"title": "line too long", "severity": "low", "file": "src/a.py", "line": 3, "detail": "103 > 100"},
              {"title": "no severity"}]}'"#],
        "env": { "STYLE": "strict" },
        "config": { "max_line": 100 },
    });
    let result = gate(with)?.evaluate(&ctx).await?;
    assert_eq!(result.outcome, GateOutcome::Failed);
    assert_eq!(result.kind(), GateKind::Computational);
    assert_eq!(result.summary, "1 line too long");
    let finding = &result.findings[0];
    assert_eq!(finding.title, "line too long");
    assert_eq!(finding.source, "style");
    assert_eq!(finding.severity, Severity::Low);
    // Without one, the phase output document's default.
    assert_eq!(result.findings[1].severity, Severity::Medium);
    assert_eq!(finding.file.as_deref(), Some("src/a.py".into()));
    assert_eq!(finding.line, Some(3));
    assert_eq!(finding.detail, "103 > 100");

    // It ran from the checkout root, with its variables and the context.
    assert_eq!(
        std::fs::read_to_string(root.join("env.txt"))?,
        "style implement strict\n"
    );
    let sent: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("context.json"))?)?;
    assert_eq!(sent["schema"], 1);
    assert_eq!(sent["gate"], "style");
    assert_eq!(sent["phase"], "implement");
    assert_eq!(sent["attempt"], 1);
    assert_eq!(sent["checkout"], root.as_str());
    assert_eq!(sent["kind"], "computational");
    assert_eq!(sent["config"]["max_line"], 100);
    assert_eq!(sent["phase_outcome"]["verdict"], "approved");
    assert_eq!(sent["phase_outcome"]["findings"][0]["title"], "left a TODO");
    assert_eq!(sent["phase_outcome"]["findings"][0]["severity"], "low");
    Ok(())
}

#[tokio::test]
async fn without_a_document_the_exit_status_decides() -> Result {
    let (_dir, ctx) = context();
    let passed = gate(sh("echo checking >&2"))?.evaluate(&ctx).await?;
    assert_eq!(passed.outcome, GateOutcome::Passed);
    let failed = gate(sh("echo 'E501 line too long' >&2; exit 3"))?
        .evaluate(&ctx)
        .await?;
    assert_eq!(failed.outcome, GateOutcome::Failed);
    assert_eq!(failed.findings[0].title, "`sh` failed: exit code 3");
    assert!(failed.findings[0].detail.contains("E501 line too long"));
    assert!(failed.output_tail.contains("E501"));
    Ok(())
}

#[tokio::test]
async fn a_broken_document_is_an_error_that_says_where() -> Result {
    let (_dir, ctx) = context();
    let error = error_of(
        gate(sh("echo '{\"schema\": 1,\n \"outcome\": \"maybe\"}'"))?
            .evaluate(&ctx)
            .await,
    );
    assert!(error.contains("line 2, column"), "{error}");
    assert!(error.contains("maybe"), "{error}");
    let error = error_of(
        gate(sh(
            "echo '{\"schema\": 1, \"outcome\": \"passed\"}'; exit 1",
        ))?
        .evaluate(&ctx)
        .await,
    );
    assert!(
        error.contains("reported `passed` but exit code 1"),
        "{error}"
    );
    let error = error_of(
        gate(sh("echo '{\"schema\": 2, \"outcome\": \"passed\"}'"))?
            .evaluate(&ctx)
            .await,
    );
    assert!(error.contains("schema 2"), "{error}");
    let error = error_of(
        gate(sh("echo '{\"schema\": 1, \"outcome\": \"failed\", \"findings\": [{\"title\": \"x\", \"severity\": \"huge\"}]}'"))?
            .evaluate(&ctx)
            .await,
    );
    assert!(error.contains("`findings[0]`: `severity`"), "{error}");
    let error = error_of(
        gate(serde_json::json!({"argv": ["definitely-not-a-program-orcho"]}))?
            .evaluate(&ctx)
            .await,
    );
    assert!(error.contains("could not be started"), "{error}");
    Ok(())
}

#[tokio::test]
async fn usage_belongs_to_inferential_gates_only() -> Result {
    let (_dir, ctx) = context();
    let doc = r#"echo '{"schema": 1, "outcome": "passed", "usage": {"cost_usd": 0.25, "input_tokens": 1000, "output_tokens": 50}}'"#;
    let error = error_of(gate(sh(doc))?.evaluate(&ctx).await);
    assert!(error.contains("declare `kind: inferential`"), "{error}");

    let judge = gate(serde_json::json!({ "argv": ["sh", "-c", doc], "kind": "inferential" }))?;
    assert_eq!(judge.kind(), GateKind::Inferential);
    let result = judge.evaluate(&ctx).await?;
    assert_eq!(
        result.kind(),
        GateKind::Inferential,
        "the result's kind agrees with the gate's"
    );
    let usage = result.model_usage().ok_or("usage")?;
    assert_eq!(usage.cost_usd.map(orcho_core::Usd::get), Some(0.25));
    assert_eq!(usage.tokens.map(|t| t.total()), Some(1050));
    Ok(())
}

#[tokio::test]
async fn past_its_timeout_the_whole_group_is_stopped() -> Result {
    let (dir, ctx) = context();
    let root = Utf8PathBuf::try_from(dir.path().to_owned())?;
    // A child that would write its marker after the timeout.
    let with = serde_json::json!({
        "argv": ["sh", "-c", "(sleep 3; touch late) & sleep 30"],
        "timeout": "300ms",
    });
    let result = gate(with)?.evaluate(&ctx).await?;
    assert!(
        matches!(result.outcome, GateOutcome::TimedOut { .. }),
        "{result:?}"
    );
    std::thread::sleep(Duration::from_secs(4));
    assert!(
        !root.join("late").exists(),
        "the group was killed, children too"
    );
    Ok(())
}

#[tokio::test]
async fn a_large_context_is_written_while_the_output_is_read() -> Result {
    let (_dir, ctx) = context();
    let mut ctx = ctx;
    // Larger than a pipe buffer, both ways.
    ctx = ctx
        .with_phase_outcome(PhaseOutcome::new(Verdict::Rejected).with_summary("x".repeat(300_000)));
    let echoed = gate(sh("cat >&2"))?.evaluate(&ctx).await?;
    assert_eq!(echoed.outcome, GateOutcome::Passed);
    // A program that never reads its input does not hang the gate.
    let ignoring = gate(sh("exit 0"))?.evaluate(&ctx).await?;
    assert_eq!(ignoring.outcome, GateOutcome::Passed);
    Ok(())
}

#[test]
fn a_bad_with_block_is_refused_when_the_gate_is_built() {
    let build = |with: serde_json::Value| {
        let spec = GateSpec::new(name("style"), name("command")).with_config(with);
        GateRegistry::with_builtins()
            .build(&spec)
            .map(|_| ())
            .map_err(|e| orcho_core::error_chain(&e))
    };
    let missing = build(serde_json::Value::Null).unwrap_err();
    assert!(missing.contains("needs `with: { argv"), "{missing}");
    let empty = build(serde_json::json!({ "argv": [] })).unwrap_err();
    assert!(empty.contains("`argv` is empty"), "{empty}");
    let typo = build(serde_json::json!({ "argv": ["true"], "kinds": "inferential" })).unwrap_err();
    assert!(typo.contains("unknown field `kinds`"), "{typo}");
    let zero = build(serde_json::json!({ "argv": ["true"], "timeout": "0s" })).unwrap_err();
    assert!(zero.contains("zero"), "{zero}");
    let var = build(serde_json::json!({ "argv": ["true"], "env": { "A=B": "1" } })).unwrap_err();
    assert!(var.contains("not a variable name"), "{var}");
}
