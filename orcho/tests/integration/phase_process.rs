//! The phase protocol run by the library: real processes in a temporary
//! checkout, what they are given and what their reports say.

use std::time::{Duration, Instant};

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{
    Engine, PhasePlan, PhaseRequest, PhaseRole, RunPlan, Start, Step,
    core::{Severity, Verdict},
    phase::{Attempt, PhaseError, PhaseProcess, Reported},
    receipts::exec::CancelToken,
};

use crate::Result;

/// A run of one `implement` phase in a fresh checkout, at its first
/// request.
struct Fixture {
    _dir: tempfile::TempDir,
    checkout: Utf8PathBuf,
    engine: Engine,
    request: PhaseRequest,
}

async fn fixture() -> Result<Fixture> {
    let dir = tempfile::tempdir()?;
    let checkout = Utf8PathBuf::try_from(dir.path().join("work"))?;
    std::fs::create_dir_all(&checkout)?;
    let plan = RunPlan::new(
        "phases",
        vec![PhasePlan::new("implement".parse()?, PhaseRole::Implement)],
    );
    let engine = Engine::builder(plan, checkout.join(".orcho")).build()?;
    let mut run = engine.start_with(Start::in_place(&checkout).task("greet the world"))?;
    let Step::RunPhase(request) = run.next().await? else {
        return Err("the first step runs the phase".into());
    };
    Ok(Fixture {
        _dir: dir,
        checkout,
        engine,
        request,
    })
}

fn sh(script: &str) -> PhaseProcess {
    PhaseProcess::new(["sh", "-c", script])
}

fn read(path: &Utf8Path) -> Result<String> {
    Ok(std::fs::read_to_string(path)?)
}

#[tokio::test]
async fn a_process_is_given_the_protocol_and_its_document_is_read() -> Result {
    let f = fixture().await?;
    let attempt = Attempt::prepare(f.engine.store(), &f.request)?;
    let files = attempt.files().clone();
    assert_eq!(files.checkout, f.checkout);
    assert!(files.artifacts.is_dir(), "the artifacts directory is made");
    let input: serde_json::Value = serde_json::from_str(&read(&files.input)?)?;
    assert_eq!(input["schema"], 1);
    assert_eq!(input["phase"], "implement");
    assert_eq!(input["task"], "greet the world");

    let script = r#"
        pwd > "$ORCHO_ARTIFACTS/cwd"
        printf '%s\n' "$ORCHO_RUN" "$ORCHO_PHASE" "$ORCHO_ATTEMPT" "$ORCHO_ROUND" \
            "$ORCHO_INPUT_FILE" > "$ORCHO_ARTIFACTS/env"
        printf '%s' "$ORCHO_INPUT" > "$ORCHO_ARTIFACTS/input.json"
        printf '%s' "$ORCHO_INPUT_TEXT" > "$ORCHO_ARTIFACTS/input.txt"
        printf '%s' "$EXTRA" > "$ORCHO_ARTIFACTS/extra"
        cat > "$ORCHO_OUTPUT" <<'DOC'
        {"schema": 1, "verdict": "rejected", "summary": "one thing left",
         "findings": [{"title": "no name", "severity": "high", "file": "greeting.txt", "line": 1}],
         "cost": {"usd": 0.5, "input_tokens": 10, "output_tokens": 2}}
DOC
        echo done
    "#;
    let ran = attempt.run(sh(script).env("EXTRA", "given"))?;
    assert!(ran.outcome.status.success());
    let report = ran.report("`review.sh`", None)?;
    assert_eq!(
        report.outcome.verdict,
        Verdict::Rejected,
        "the document's verdict"
    );
    assert_eq!(report.outcome.summary, "one thing left");
    let finding = &report.outcome.findings[0];
    assert_eq!(
        (finding.source.as_str(), finding.severity, finding.line),
        ("implement", Severity::High, Some(1))
    );
    assert_eq!(report.cost.usd.map(|u| u.get()), Some(0.5));
    assert_eq!(
        report.cost.tokens.map(|t| (t.input, t.output)),
        Some((10, 2)),
        "the document's tokens"
    );
    assert!(
        report.cost.wall > Duration::ZERO,
        "and the process's wall time"
    );

    let artifacts = &files.artifacts;
    assert_eq!(read(&artifacts.join("cwd"))?.trim(), f.checkout.as_str());
    let env: Vec<String> = read(&artifacts.join("env"))?
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        env,
        [
            f.request.run.to_string(),
            "implement".to_owned(),
            "1".to_owned(),
            "1".to_owned(),
            files.input.to_string()
        ]
    );
    assert_eq!(read(&artifacts.join("input.json"))?, read(&files.input)?);
    assert!(read(&artifacts.join("input.txt"))?.contains("greet the world"));
    assert_eq!(read(&artifacts.join("extra"))?, "given");
    assert_eq!(
        read(&files.stdout_log)?.trim(),
        "done",
        "the full output is logged"
    );
    Ok(())
}

#[tokio::test]
async fn the_exit_code_decides_without_a_document_and_a_failure_never_approves() -> Result {
    let f = fixture().await?;
    let attempt = Attempt::prepare(f.engine.store(), &f.request)?;
    let report = attempt.run(sh("echo ok"))?.report("`ok`", None)?;
    assert_eq!(report.outcome.verdict, Verdict::Approved);
    assert_eq!(report.outcome.summary, "ok", "the last line of output");

    let attempt = Attempt::prepare(f.engine.store(), &f.request)?;
    let script = r#"echo 'the test broke' >&2
        echo '{"schema": 1, "verdict": "approved"}' > "$ORCHO_OUTPUT"
        exit 3"#;
    let report = attempt.run(sh(script))?.report("`check`", None)?;
    assert_eq!(report.outcome.verdict, Verdict::Rejected);
    let finding = &report.outcome.findings[0];
    assert_eq!(finding.title, "`check` exit code 3");
    assert!(
        finding.detail.contains("the test broke"),
        "{}",
        finding.detail
    );
    assert!(finding.detail.contains(".stderr.log"), "{}", finding.detail);
    Ok(())
}

#[tokio::test]
async fn the_same_attempt_run_again_keeps_what_the_earlier_one_left() -> Result {
    let f = fixture().await?;
    for n in 1..=3 {
        let attempt = Attempt::prepare(f.engine.store(), &f.request)?;
        attempt
            .run(sh(&format!(
                "echo run {n}; echo '{{\"schema\": 1}}' > \"$ORCHO_OUTPUT\""
            )))?
            .report("`x`", None)?;
    }
    let attempt = Attempt::prepare(f.engine.store(), &f.request)?;
    let log = &attempt.files().stdout_log;
    assert!(!log.exists(), "the next run starts with a fresh log");
    assert_eq!(
        read(&Utf8PathBuf::from(format!("{log}.1")))?.trim(),
        "run 1"
    );
    assert_eq!(
        read(&Utf8PathBuf::from(format!("{log}.3")))?.trim(),
        "run 3"
    );
    let output = &attempt.files().output;
    assert!(Utf8PathBuf::from(format!("{output}.2")).is_file());
    Ok(())
}

#[tokio::test]
async fn a_document_that_breaks_the_schema_says_where() -> Result {
    let f = fixture().await?;
    let attempt = Attempt::prepare(f.engine.store(), &f.request)?;
    let ran = attempt.run(sh(
        r#"printf '{"schema": 1,\n "verdikt": "approved"}' > "$ORCHO_OUTPUT""#,
    ))?;
    let err = ran.report("`x`", None).unwrap_err();
    let PhaseError::Output { path, message } = &err else {
        return Err(format!("not an output error: {err}").into());
    };
    assert_eq!(path, &attempt.files().output);
    assert!(
        message.starts_with("line 2, column 10: unknown field `verdikt`"),
        "{message}"
    );
    Ok(())
}

#[tokio::test]
async fn a_timeout_stops_the_whole_group() -> Result {
    let f = fixture().await?;
    let attempt = Attempt::prepare(f.engine.store(), &f.request)?;
    let pid_file = attempt.files().artifacts.join("child");
    let started = Instant::now();
    let ran = attempt.run(
        sh(r#"sleep 30 & echo $! > "$ORCHO_ARTIFACTS/child"; wait"#)
            .timeout(Duration::from_millis(300))
            .timeout_said("runner.timeout_secs: 0.3"),
    )?;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "it did not wait for sleep"
    );
    let report = ran.report("`slow`", None)?;
    assert_eq!(report.outcome.verdict, Verdict::Rejected);
    // In words, and as the profile declared it.
    assert_eq!(
        report.outcome.findings[0].title,
        "`slow` timed out after 300ms (`runner.timeout_secs: 0.3`)"
    );
    let child = read(&pid_file)?;
    let alive = Utf8PathBuf::from(format!("/proc/{}", child.trim()));
    let stat = std::fs::read_to_string(alive.join("stat")).unwrap_or_default();
    // Gone, or a zombie waiting for init.
    assert!(
        stat.is_empty() || stat.contains(") Z "),
        "the group's child runs on: {stat}"
    );
    Ok(())
}

#[tokio::test]
async fn a_cancelled_process_is_an_interruption_not_a_verdict() -> Result {
    let f = fixture().await?;
    let attempt = Attempt::prepare(f.engine.store(), &f.request)?;
    let token = CancelToken::new();
    let cancel = token.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        cancel.cancel();
    });
    let err = attempt.run(sh("sleep 30").cancel(token)).unwrap_err();
    canceller.join().map_err(|_| "the canceller panicked")?;
    assert!(matches!(err, PhaseError::Interrupted), "{err}");
    Ok(())
}

#[tokio::test]
async fn a_program_that_cannot_start_is_an_error() -> Result {
    let f = fixture().await?;
    let attempt = Attempt::prepare(f.engine.store(), &f.request)?;
    let err = attempt
        .run(PhaseProcess::new(["./no-such-program"]))
        .unwrap_err();
    assert!(matches!(err, PhaseError::CannotStart { .. }), "{err}");
    Ok(())
}

#[tokio::test]
async fn a_program_that_reports_for_itself_must_write_its_document() -> Result {
    let f = fixture().await?;
    let mut reported = Reported::default();
    reported.last_message = Some("all done, trust me".to_owned());

    let attempt = Attempt::prepare(f.engine.store(), &f.request)?;
    let report = attempt
        .run(sh("echo noise"))?
        .report("Agent", Some(&reported))?;
    assert_eq!(report.outcome.verdict, Verdict::Incomplete);
    assert_eq!(report.outcome.summary, "all done, trust me");
    assert_eq!(
        report.outcome.findings[0].title,
        "Agent wrote no report (the phase output document)"
    );

    reported.stopped_early = true;
    let attempt = Attempt::prepare(f.engine.store(), &f.request)?;
    let report = attempt
        .run(sh(r#"echo '{"schema": 1}' > "$ORCHO_OUTPUT""#))?
        .report("Agent", Some(&reported))?;
    assert_eq!(
        report.outcome.verdict,
        Verdict::Incomplete,
        "it stopped early"
    );
    Ok(())
}

#[tokio::test]
async fn questions_interrupt_the_attempt() -> Result {
    let f = fixture().await?;
    let attempt = Attempt::prepare(f.engine.store(), &f.request)?;
    let report = attempt
        .run(sh(
            r#"echo '{"schema": 1, "questions": [{"header": "Name", "question": "Whom to greet?"}]}' > "$ORCHO_OUTPUT""#,
        ))?
        .report("`planner`", None)?;
    assert!(matches!(
        report.interruption,
        Some(orcho::Interruption::Questions(_))
    ));
    Ok(())
}
