//! The demo path through the CLI: the tests gate fails the first attempt
//! and its failure is fed into the second, which passes; the run pauses at
//! the delivery gate, is approved, and the resume commits the change into
//! the target checkout.

use crate::{
    Result,
    support::{QUICK, Repo, run_id},
};

/// Records what each attempt was given, appends to `feature.txt`, and
/// creates `ok` (which the `test` command checks) from attempt 2 on.
const IMPLEMENT: &str = r#"#!/bin/sh
set -e
printf '%s' "$ORCHO_INPUT" > "@CTL@/input-$ORCHO_ATTEMPT.json"
echo "attempt $ORCHO_ATTEMPT" >> feature.txt
if [ "$ORCHO_ATTEMPT" -ge 2 ]; then touch ok; fi
sleep 0.02
echo "implemented attempt $ORCHO_ATTEMPT"
"#;

#[test]
fn a_fed_in_failure_then_delivery_approved_commits_the_change() -> Result {
    let repo = Repo::with_files(QUICK, &[("implement.sh", IMPLEMENT)])?;
    let initial = repo.git(&["rev-parse", "HEAD"])?;

    let out = repo.orcho(&[
        "run",
        "--phase",
        "implement=./implement.sh",
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    let paused = out.json()?;
    assert_eq!(paused["awaiting"], "delivery", "{out}");
    assert_eq!(paused["status"], "awaiting_delivery", "{out}");
    let run = run_id(&paused)?;

    // Attempt 2 was given attempt 1's tests failure.
    let input1: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo.ctl("input-1.json"))?)?;
    let input2: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo.ctl("input-2.json"))?)?;
    assert!(
        input1["fed_failures"]
            .as_array()
            .is_none_or(|fed| fed.is_empty()),
        "{input1}"
    );
    assert_eq!(input2["fed_failures"][0]["gate"], "tests", "{input2}");
    assert_eq!(input2["fed_failures"][0]["outcome"], "failed", "{input2}");
    assert_eq!(input2["schema"], 1, "the phase input document is versioned");
    assert_eq!(input2["attempt"], 2, "{input2}");

    // The journal says so too: attempt 1 settled as a retry feeding `tests`.
    let journal = repo.journal(&run)?;
    let settled: Vec<_> = journal
        .iter()
        .filter(|l| l["event"]["kind"] == "phase_settled")
        .collect();
    assert_eq!(settled.len(), 2, "{journal:#?}");
    assert_eq!(settled[0]["event"]["effect"], "feed_into_next");
    assert_eq!(settled[0]["event"]["transition"]["kind"], "retry");
    assert_eq!(
        settled[0]["event"]["transition"]["input"]["fed_failures"][0]["gate"],
        "tests"
    );
    assert_eq!(settled[1]["event"]["transition"]["kind"], "advance");

    // The delivery gate: approved, the diff, and the actions.
    let out = repo.orcho(&["delivery", "show", &run, "--json"])?;
    out.expect_code(0);
    let gate = out.json()?;
    assert_eq!(gate["run"], run.as_str());
    assert_eq!(gate["verdict"], "approved", "{out}");
    let actions: Vec<&str> = gate["available_actions"]
        .as_array()
        .ok_or("no available_actions")?
        .iter()
        .filter_map(|a| a.as_str())
        .collect();
    assert!(actions.contains(&"approve"), "{out}");
    assert!(actions.contains(&"halt"), "{out}");
    assert!(
        gate["diff"]
            .as_array()
            .ok_or("no diff")?
            .iter()
            .any(|f| f["path"] == "feature.txt"),
        "{out}"
    );
    // Nothing is delivered before the decision.
    assert_eq!(repo.git(&["rev-parse", "HEAD"])?, initial);

    let out = repo.orcho(&["delivery", "decide", &run, "approve", "--json"])?;
    out.expect_code(0);
    assert_eq!(out.json()?["recorded"], true, "{out}");

    let out = repo.orcho(&["resume", &run, "--no-interactive", "--json"])?;
    out.expect_code(0);
    let finished = out.json()?;
    assert_eq!(finished["status"], "completed", "{out}");

    // A new commit on the target with the script's change.
    let head = repo.git(&["rev-parse", "HEAD"])?;
    assert_ne!(head, initial);
    assert_eq!(repo.git(&["rev-parse", "HEAD~1"])?, initial);
    assert_eq!(
        repo.git(&["show", "HEAD:feature.txt"])?,
        "attempt 1\nattempt 2"
    );
    let changed = repo.git(&["show", "--name-only", "--format=", "HEAD"])?;
    assert!(changed.lines().any(|l| l == "feature.txt"), "{changed}");

    // The evidence bundle, where the CLI said it is, shows the fed failure.
    let evidence_path = finished["evidence"].as_str().ok_or("no evidence path")?;
    assert_eq!(
        evidence_path,
        repo.run_dir(&run).join("evidence.json").as_str()
    );
    let evidence: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(evidence_path)?)?;
    let phases = evidence["phases"].as_array().ok_or("no phases")?;
    assert_eq!(phases.len(), 2, "{evidence:#}");
    assert_eq!(phases[0]["attempt"], 1);
    assert_eq!(phases[0]["effect"], "feed_into_next");
    assert_eq!(phases[0]["gates"][0]["result"]["gate"], "tests");
    assert_eq!(
        phases[0]["gates"][0]["result"]["outcome"]["status"],
        "failed"
    );
    // Each attempt costs the wall time of its command (which sleeps 20 ms).
    for phase in phases {
        let wall = phase["cost"]["wall_ms"].as_u64().ok_or("no wall time")?;
        assert!(wall >= 20, "{phase:#}");
    }
    assert_eq!(phases[1]["attempt"], 2);
    assert_eq!(
        phases[1]["gates"][0]["result"]["outcome"]["status"],
        "passed"
    );
    assert_eq!(evidence["delivery"]["action"], "approve", "{evidence:#}");
    Ok(())
}
