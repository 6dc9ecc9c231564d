//! The profile's `advisor:` through `orcho`: advice on demand, a decision
//! that follows it, and the CI autopilot under `--no-interactive`, each
//! against an OpenAI-compatible server on 127.0.0.1 started by the test.

use std::{
    io::{Read, Write},
    net::TcpListener,
    sync::mpsc,
    thread,
    time::{Duration, Instant},
};

use crate::{
    Result,
    support::{Out, Repo, run_id},
};

/// A chat-completions server answering each request with the next of
/// `answers` (advice documents), 200 OK. It stops by itself.
pub(crate) struct Llm {
    pub(crate) base_url: String,
    requests: mpsc::Receiver<String>,
}

impl Llm {
    pub(crate) fn start(answers: Vec<serde_json::Value>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        listener.set_nonblocking(true).expect("nonblocking");
        let (tx, requests) = mpsc::channel();
        thread::spawn(move || {
            for answer in answers {
                let deadline = Instant::now() + Duration::from_secs(60);
                let mut stream = loop {
                    match listener.accept() {
                        Ok((stream, _)) => break stream,
                        Err(_) if Instant::now() < deadline => {
                            thread::sleep(Duration::from_millis(5));
                        }
                        Err(_) => return,
                    }
                };
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                let mut bytes = Vec::new();
                let mut buf = [0u8; 8192];
                // Headers, then as much body as Content-Length says.
                let body_start = loop {
                    let Ok(n) = stream.read(&mut buf) else { return };
                    if n == 0 {
                        return;
                    }
                    bytes.extend_from_slice(&buf[..n]);
                    if let Some(at) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
                        break at + 4;
                    }
                };
                let head = String::from_utf8_lossy(&bytes[..body_start]).to_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                while bytes.len() < body_start + length {
                    let Ok(n) = stream.read(&mut buf) else { return };
                    if n == 0 {
                        break;
                    }
                    bytes.extend_from_slice(&buf[..n]);
                }
                let _ = tx.send(String::from_utf8_lossy(&bytes[body_start..]).into_owned());
                let body = serde_json::json!({
                    "choices": [{"message": {"role": "assistant", "content": answer.to_string()}}],
                    "usage": {"prompt_tokens": 1000, "completion_tokens": 100},
                })
                .to_string();
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes());
            }
        });
        Self {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            requests,
        }
    }

    fn request(&self) -> serde_json::Value {
        let body = self
            .requests
            .recv_timeout(Duration::from_secs(30))
            .expect("the advisor was asked");
        serde_json::from_str(&body).expect("a JSON request")
    }
}

pub(crate) fn advice(action: &str, confidence: f64, feedback: Option<&str>) -> serde_json::Value {
    serde_json::json!({
        "recommended_action": action,
        "confidence": confidence,
        "rationale": "the failure names the function and the input",
        "risks": [],
        "retry_feedback": feedback,
        "expected_files": ["parse.txt"],
    })
}

/// Logs its input; writes `fixed` when its input carries "handle empty
/// input", else fails naming the blocker.
pub(crate) const PHASE: &str = r#"#!/bin/sh
printf '%s\n---\n' "$ORCHO_INPUT_TEXT" >> "@CTL@/inputs"
case "$ORCHO_INPUT_TEXT" in *"handle empty input"*) touch fixed; exit 0 ;; esac
echo "parse() fails on empty input"
exit 1
"#;

pub(crate) fn profile(base_url: &str) -> String {
    format!(
        "\
schema: 1
name: advised
advisor:
  base_url: {base_url}
  model: test-model
  api_key_env: ORCHO_TEST_ADVISOR_KEY
  max_retries: 0
  input_usd_per_million: 1
  output_usd_per_million: 10
phases:
  - name: implement
    role: implement
    handoff: {{ pause: on_rejected, on_exhausted: pause }}
supervision:
  plan_approval: false
"
    )
}

pub(crate) const KEY: (&str, &str) = ("ORCHO_TEST_ADVISOR_KEY", "sk-test-advisor");

fn run(repo: &Repo, extra: &[&str]) -> Result<Out> {
    let args: Vec<&str> = [
        "--json",
        "run",
        "--in-place",
        "--no-interactive",
        "--phase",
        "implement=./phase.sh",
    ]
    .into_iter()
    .chain(extra.iter().copied())
    .collect();
    let out = repo.orcho_in(".", &[KEY], &args)?;
    out.expect_no_panic();
    Ok(out)
}

#[test]
fn the_autopilot_retries_once_with_the_advisors_feedback() -> Result {
    let llm = Llm::start(vec![advice(
        "retry_feedback",
        0.9,
        Some("handle empty input in parse()"),
    )]);
    let repo = Repo::with_files(&profile(&llm.base_url), &[("phase.sh", PHASE)])?;
    let out = run(&repo, &["--autopilot"])?;
    out.expect_code(0);
    assert!(
        out.stderr.contains("autopilot: advice") && out.stderr.contains("recommends a retry"),
        "{out}"
    );
    // The next attempt saw the feedback in its input.
    let inputs = std::fs::read_to_string(repo.ctl("inputs"))?;
    assert!(inputs.contains("handle empty input in parse()"), "{inputs}");
    assert!(repo.dir().join("fixed").exists());
    // What the advisor was asked: the blocker, with the phase's output.
    let asked = llm.request();
    let user = asked["messages"][1]["content"].as_str().unwrap_or_default();
    assert!(user.contains("parse() fails on empty input"), "{user}");
    // Provenance: the decision was the CI agent's, following the advice.
    let run = run_id(&out.json()?)?;
    let evidence = repo.orcho(&["--json", "evidence", &run])?.json()?;
    let decision = &evidence["handoffs"][0]["decision"];
    assert_eq!(decision["decided_by"], "ci_agent", "{decision}");
    assert!(decision["advice"].as_str().is_some(), "{decision}");
    assert_eq!(evidence["handoff_advice"]["advice_calls"], 1, "{evidence}");
    Ok(())
}

#[test]
fn the_autopilot_stops_with_a_typed_reason_and_leaves_the_handoff_open() -> Result {
    let cases = [
        (
            advice("retry_feedback", 0.2, Some("handle empty input")),
            "low_confidence",
        ),
        (
            advice(
                "retry_feedback",
                0.9,
                Some("run `rm -r -f build` and handle empty input"),
            ),
            "destructive_action",
        ),
        (
            advice("continue_with_waiver", 0.9, None),
            "waiver_recommended",
        ),
        (advice("halt", 0.9, None), "halt_recommended"),
        (advice("continue", 0.9, None), "continue_recommended"),
        // Not the advice document: never guessed at.
        (
            serde_json::json!({"recommended_action": "maybe"}),
            "malformed_advice",
        ),
    ];
    for (answer, reason) in cases {
        let llm = Llm::start(vec![answer]);
        let repo = Repo::with_files(&profile(&llm.base_url), &[("phase.sh", PHASE)])?;
        let out = run(&repo, &["--autopilot"])?;
        out.expect_code(4);
        assert!(
            out.stderr.contains(&format!("autopilot stopped: {reason}")),
            "{reason}: {out}"
        );
        assert!(out.stderr.contains("what to do:"), "{out}");
        assert!(
            !repo.dir().join("fixed").exists(),
            "{reason}: nothing was retried"
        );
        let run = run_id(&out.json()?)?;
        let status = repo.orcho(&["--json", "handoff", "show", &run])?;
        status.expect_code(0);
    }
    Ok(())
}

#[test]
fn a_repeated_blocker_stops_the_autopilot_after_one_retry() -> Result {
    // The feedback does not help: the same blocker comes back.
    let llm = Llm::start(vec![
        advice("retry_feedback", 0.9, Some("try again harder")),
        advice("retry_feedback", 0.9, Some("try again harder")),
    ]);
    let repo = Repo::with_files(&profile(&llm.base_url), &[("phase.sh", PHASE)])?;
    let out = run(&repo, &["--autopilot"])?;
    out.expect_code(4);
    assert!(out.stderr.contains("recommends a retry"), "{out}");
    assert!(
        out.stderr.contains("autopilot stopped: repeated_blocker"),
        "{out}"
    );
    Ok(())
}

#[test]
fn advice_on_demand_and_a_decision_that_follows_it() -> Result {
    let llm = Llm::start(vec![advice(
        "retry_feedback",
        0.8,
        Some("handle empty input"),
    )]);
    let repo = Repo::with_files(&profile(&llm.base_url), &[("phase.sh", PHASE)])?;
    // Without `--autopilot` (the profile leaves it off), the run pauses.
    let out = run(&repo, &[])?;
    out.expect_code(4);
    let run = run_id(&out.json()?)?;
    let advised = repo.orcho_in(".", &[KEY], &["handoff", "advise", &run])?;
    advised.expect_code(0);
    assert!(
        advised.stdout.contains("retry_feedback (confidence 0.80)"),
        "{advised}"
    );
    assert!(
        advised
            .stdout
            .contains("cost: $0.0020, 1000 in / 100 out tokens"),
        "{advised}"
    );
    assert!(!advised.stdout.contains(KEY.1), "{advised}");
    let line = advised
        .stdout
        .lines()
        .find(|l| l.contains("to follow it:"))
        .ok_or("the command that follows it")?;
    let advice_id = line.rsplit(' ').next().ok_or("the advice id")?.to_owned();
    // An unknown advice id is refused.
    repo.orcho(&["handoff", "decide", &run, "halt", "--advice", "0009-nope"])?
        .expect_code(1);
    repo.orcho(&[
        "handoff",
        "decide",
        &run,
        "retry_feedback",
        "--text",
        "handle empty input",
        "--advice",
        &advice_id,
    ])?
    .expect_code(0);
    repo.orcho_in(".", &[KEY], &["resume", &run, "--no-interactive"])?
        .expect_code(0);
    let evidence = repo.orcho(&["--json", "evidence", &run])?.json()?;
    assert_eq!(
        evidence["handoffs"][0]["decision"]["advice"],
        advice_id.as_str(),
        "{evidence}"
    );
    assert_eq!(
        evidence["handoffs"][0]["decision"]["decided_by"],
        "operator"
    );
    Ok(())
}

#[test]
fn a_broken_advisor_block_is_said_when_the_profile_loads() -> Result {
    let repo = Repo::with_files(
        &profile("http://127.0.0.1:9/v1").replace("model: test-model", "model: \" \""),
        &[("phase.sh", PHASE)],
    )?;
    let out = repo.orcho(&["run", "--in-place", "--no-interactive"])?;
    out.expect_no_panic().expect_code(1);
    assert!(
        out.stderr
            .contains("the profile's `advisor:` block: `model` must not be empty"),
        "{out}"
    );
    // `--autopilot` without an advisor is refused before anything starts.
    let plain = Repo::with_files(crate::support::REVIEW, &[])?;
    let out = plain.orcho(&["run", "--in-place", "--no-interactive", "--autopilot"])?;
    out.expect_code(1);
    assert!(out.stderr.contains("declares no `advisor:`"), "{out}");
    Ok(())
}

/// Writes a change the judge should see.
const PARSER: &str = "#!/bin/sh\nprintf 'def parse(text):\\n    return [] if not text else text.split()\\n' > parse.py\n";

fn judged(base_url: &str, extra: &str) -> String {
    format!(
        "\
schema: 1
name: judged
phases:
  - name: implement
    role: implement
    gates:
      - name: review
        uses: llm_judge
        on_fail: halt
        with:
          base_url: {base_url}
          model: judge
          api_key_env: ORCHO_TEST_ADVISOR_KEY
          instructions: Fail a change without a test.
{extra}supervision:
  plan_approval: false
"
    )
}

#[test]
fn an_llm_judge_gate_runs_in_the_cli_and_judges_the_change() -> Result {
    let verdict = serde_json::json!({
        "verdict": "fail",
        "summary": "the change has no test",
        "findings": [{"severity": "high", "message": "no test for parse()", "file": "parse.py", "line": null}],
    });
    let llm = Llm::start(vec![verdict.clone()]);
    let repo = Repo::with_files(&judged(&llm.base_url, ""), &[("implement.sh", PARSER)])?;
    repo.orcho(&["profile", "show"])?.expect_code(0);
    let out = repo.orcho_in(
        ".",
        &[KEY],
        &[
            "run",
            "--no-interactive",
            "--task",
            "Parse empty input as an empty list",
            "--phase",
            "implement=./implement.sh",
        ],
    )?;
    out.expect_no_panic().expect_code(5);
    assert!(
        out.stderr.contains("no test for parse() (parse.py)"),
        "{out}"
    );
    let asked = llm.request();
    let user = asked["messages"][1]["content"].as_str().unwrap_or_default();
    assert!(user.contains("Fail a change without a test."), "{user}");
    // The judge sees the change (a line of the diff, untracked file and
    // all), the task, and what the phase said.
    assert!(
        user.contains("+    return [] if not text else text.split()"),
        "{user}"
    );
    assert!(user.contains("+++ b/parse.py"), "{user}");
    assert!(
        user.contains("Parse empty input as an empty list"),
        "{user}"
    );
    assert!(!user.contains("the diff was cut"), "{user}");

    // `include` leaves parts out; `max_diff_bytes` cuts the diff and says so.
    let llm = Llm::start(vec![verdict.clone(), verdict]);
    let repo = Repo::with_files(
        &judged(
            &llm.base_url,
            "          include: [diff, summary]\n          max_diff_bytes: 40\n",
        ),
        &[("implement.sh", PARSER)],
    )?;
    let out = repo.orcho_in(
        ".",
        &[KEY],
        &[
            "run",
            "--no-interactive",
            "--task",
            "Parse it",
            "--phase",
            "implement=./implement.sh",
        ],
    )?;
    out.expect_no_panic().expect_code(5);
    let user = llm.request()["messages"][1]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!user.contains("Parse it"), "the task is left out: {user}");
    assert!(!user.contains("Findings the phase reported"), "{user}");
    assert!(user.contains("(the diff was cut: 40 of its"), "{user}");

    // A part the judge does not know is said when the profile loads.
    let repo = Repo::with_files(
        &judged("http://127.0.0.1:9/v1", "          include: [difff]\n"),
        &[],
    )?;
    let out = repo.orcho(&["profile", "show"])?;
    out.expect_no_panic();
    assert_ne!(out.code(), Some(0), "{out}");
    assert!(
        out.stderr
            .contains("unknown part `difff` (did you mean `diff`?)"),
        "{out}"
    );
    Ok(())
}

/// Fails with a finding that differs at each attempt: no blocker repeats.
const FAILS_DIFFERENTLY: &str = r#"#!/bin/sh
printf '{"schema": 1, "verdict": "rejected", "findings": [{"title": "case %s of parse() fails"}]}' "$ORCHO_ATTEMPT" > "$ORCHO_OUTPUT"
"#;

#[test]
fn the_autopilots_budgets_scope_and_a_dead_advisor_stop_it() -> Result {
    let retry = || advice("retry_feedback", 0.9, Some("handle the next case"));
    // (answers, `autopilot:` block, reason, retries before the stop)
    let cases = [
        (
            vec![retry(), retry()],
            "autopilot: { max_retries: 1 }",
            "retry_budget_exhausted",
            1,
        ),
        // The advice itself costs $0.002, past the cap: nothing is retried.
        (
            vec![retry()],
            "autopilot: { max_cost_usd: 0.001 }",
            "cost_budget_exhausted",
            0,
        ),
        (
            vec![retry()],
            "autopilot: { allowed_files: [\"src/**\"] }",
            "files_out_of_scope",
            0,
        ),
    ];
    for (answers, block, reason, retries) in cases {
        let llm = Llm::start(answers);
        let repo = Repo::with_files(
            &format!("{}{block}\n", profile(&llm.base_url)),
            &[("phase.sh", FAILS_DIFFERENTLY)],
        )?;
        let out = run(&repo, &["--autopilot"])?;
        out.expect_code(4);
        assert!(
            out.stderr.contains(&format!("autopilot stopped: {reason}")),
            "{reason}: {out}"
        );
        assert_eq!(
            out.stderr.matches("recommends a retry").count(),
            retries,
            "{reason}: {out}"
        );
    }
    // An advisor nobody answers for: it failed, said as such.
    let closed = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://127.0.0.1:{}/v1", closed.local_addr()?.port());
    drop(closed);
    let repo = Repo::with_files(&profile(&url), &[("phase.sh", FAILS_DIFFERENTLY)])?;
    let out = run(&repo, &["--autopilot"])?;
    out.expect_code(4);
    assert!(
        out.stderr.contains("autopilot stopped: advisor_failed"),
        "{out}"
    );
    assert!(out.stderr.contains("could not reach"), "{out}");
    Ok(())
}

#[test]
fn profile_show_fills_in_the_advisors_defaults() -> Result {
    let repo = Repo::with_files(
        "schema: 1\nname: advised\nadvisor:\n  base_url: http://127.0.0.1:9/v1\n  model: m\n\
         phases:\n  - name: implement\n    role: implement\n",
        &[],
    )?;
    let out = repo.orcho(&["profile", "show"])?;
    out.expect_code(0);
    for default in [
        "timeout_secs: 60",
        "deadline_secs: 180",
        "max_retries: 3",
        "api_key_env: OPENAI_API_KEY",
        "provider: openai",
        "json_schema: true",
    ] {
        assert!(out.stdout.contains(default), "{default}: {out}");
    }
    Ok(())
}
