//! The JSON documents and text lines as scripts and people see them.

use orcho::core::RunId;

use super::{
    doc::{
        CheckedEnvDoc, DecidedDoc, ErrorDoc, FinishedDoc, Naming, PausedDoc, VerifiedDoc, VerifyDoc,
    },
    print::json_line,
    text,
};

fn run() -> RunId {
    "20261123-101500-ab12".parse().unwrap()
}

#[test]
fn json_keys_print_sorted() {
    let run = run();
    insta::assert_snapshot!(json_line(&PausedDoc {
        run: &run,
        status: "awaiting_phase_handoff",
        awaiting: "handoff",
        hint: "orcho handoff decide 20261123-101500-ab12 <ACTION>",
    }), @r#"{"awaiting":"handoff","hint":"orcho handoff decide 20261123-101500-ab12 <ACTION>","run":"20261123-101500-ab12","status":"awaiting_phase_handoff"}"#);
}

#[test]
fn an_error_names_its_kind_and_hint() {
    insta::assert_json_snapshot!(ErrorDoc {
        error: "run `x` has no handoff".to_owned(),
        kind: "error",
        hint: None,
    }, @r#"
    {
      "error": "run `x` has no handoff",
      "kind": "error",
      "hint": null
    }
    "#);
}

#[test]
fn verify_lists_each_command() {
    insta::assert_json_snapshot!(VerifyDoc {
        passed: false,
        environments: vec![CheckedEnvDoc {
            environment: "py".to_owned(),
            passed: false,
            assertions: 2,
            failed: Some("command_exists `python3`: not found on PATH".to_owned()),
        }],
        commands: vec![VerifiedDoc {
            command: "test".to_owned(),
            passed: false,
            exit: "exit 1".to_owned(),
            duration_ms: 12,
        }],
        attested: None,
    }, @r#"
    {
      "passed": false,
      "environments": [
        {
          "environment": "py",
          "passed": false,
          "assertions": 2,
          "failed": "command_exists `python3`: not found on PATH"
        }
      ],
      "commands": [
        {
          "command": "test",
          "passed": false,
          "exit": "exit 1",
          "duration_ms": 12
        }
      ]
    }
    "#);
}

#[test]
fn a_decision_and_a_finished_run() {
    let run = run();
    insta::assert_json_snapshot!(DecidedDoc { run: &run, point: "handoff", decision: "continue", recorded: true, status: None }, @r#"
    {
      "run": "20261123-101500-ab12",
      "point": "handoff",
      "decision": "continue",
      "recorded": true
    }
    "#);
    insta::assert_json_snapshot!(FinishedDoc {
        run: &run,
        status: "completed",
        reason: "all phases completed",
        evidence: ".orcho/runs/20261123-101500-ab12/evidence.json",
        cost_usd: None,
        next: None,
    }, @r#"
    {
      "run": "20261123-101500-ab12",
      "status": "completed",
      "reason": "all phases completed",
      "evidence": ".orcho/runs/20261123-101500-ab12/evidence.json",
      "cost_usd": null
    }
    "#);
}

#[test]
fn the_cli_and_the_mcp_tools_key_a_run_differently() {
    let run = run();
    insta::assert_snapshot!(json_line(&Naming::Cli.run(&run)), @r#"{"run":"20261123-101500-ab12"}"#);
    insta::assert_snapshot!(json_line(&Naming::Mcp.run(&run)), @r#"{"run_id":"20261123-101500-ab12"}"#);
}

#[test]
fn text_lines_say_what_to_do_next() {
    let run = run();
    insta::assert_snapshot!(text::decided(&run, "delivery", "approve"), @"recorded `approve` on the delivery of run 20261123-101500-ab12; `orcho resume 20261123-101500-ab12` acts on it");
    insta::assert_snapshot!(text::paused(&run, "awaiting_delivery", "delivery", "orcho delivery decide 20261123-101500-ab12 <ACTION>"), @r"
    run 20261123-101500-ab12 is paused awaiting a delivery decision (awaiting_delivery).
    next: orcho delivery decide 20261123-101500-ab12 <ACTION>, then `orcho resume 20261123-101500-ab12`
    ");
    insta::assert_snapshot!(text::finished(&run, "halted", "halted at handoff", "/s/e.json"), @r"
    run 20261123-101500-ab12 halted: halted at handoff
    evidence: /s/e.json
    ");
}

#[test]
fn a_pause_names_its_decision_with_the_right_article() {
    let run = run();
    let intake = text::paused(
        &run,
        "awaiting_intake",
        "intake",
        "orcho intake RUN <ACTION>",
    );
    assert!(intake.contains("awaiting an intake decision"), "{intake}");
    let gate = text::paused(
        &run,
        "awaiting_delivery",
        "delivery",
        "orcho delivery decide",
    );
    assert!(gate.contains("awaiting a delivery decision"), "{gate}");
}
