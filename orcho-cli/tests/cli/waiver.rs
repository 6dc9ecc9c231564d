//! A waiver is durable: accepted at final acceptance, it lets the release
//! stand at the delivery gate, which names it, and covers nothing else.

use crate::{
    Result,
    support::{Repo, run_id},
};

/// Implement, then final acceptance on a required `lint` that always fails;
/// a rejected acceptance pauses with a waiver on offer.
const WAIVABLE: &str = "\
schema: 1
name: waivable
phases:
  - name: implement
    role: implement
  - name: final_acceptance
    role: final_acceptance
    handoff:
      pause: on_rejected
      on_exhausted: pause
      actions: [retry_feedback, continue_with_waiver, halt]
verification:
  commands:
    - { name: lint, argv: [sh, -c, \"echo 'E501 line too long' >&2; exit 1\"] }
  required: [lint]
";

#[test]
fn a_waiver_at_final_acceptance_lets_the_release_be_delivered() -> Result {
    let repo = Repo::new(WAIVABLE)?;
    let out = repo.orcho(&[
        "run",
        "--phase",
        "implement=sh -c 'echo done > feature.txt'",
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    let run = run_id(&out.json()?)?;
    assert_eq!(out.json()?["awaiting"], "handoff", "{out}");
    repo.orcho(&[
        "handoff",
        "decide",
        &run,
        "continue_with_waiver",
        "--text",
        "the line-length rule is being retired",
    ])?
    .expect_code(0);
    let out = repo.orcho(&["resume", &run, "--no-interactive", "--json"])?;
    out.expect_code(4);
    assert_eq!(out.json()?["awaiting"], "delivery", "{out}");

    let gate = repo.orcho(&["delivery", "show", &run, "--json"])?.json()?;
    assert_eq!(gate["verdict"], "approved", "{gate}");
    assert_eq!(gate["reviewer_verdict"], "approved", "{gate}");
    assert_eq!(gate["gaps"], serde_json::json!([]), "{gate}");
    let actions = gate["available_actions"].as_array().ok_or("no actions")?;
    assert!(actions.contains(&serde_json::json!("approve")), "{gate}");
    let waivers = gate["waivers"].as_array().ok_or("no waivers")?;
    assert_eq!(waivers.len(), 1, "{gate}");
    let waiver = waivers[0].as_str().unwrap_or_default();
    assert!(
        waiver.contains("the line-length rule is being retired"),
        "{waiver}"
    );
    assert!(waiver.contains("`lint`"), "{waiver}");
    let text = repo.orcho(&["delivery", "show", &run])?;
    assert!(text.stdout.contains("waived: handoff"), "{text}");

    repo.orcho(&["delivery", "decide", &run, "approve"])?
        .expect_code(0);
    repo.orcho(&["resume", &run, "--json"])?.expect_code(0);
    assert_eq!(
        std::fs::read_to_string(repo.dir().join("feature.txt"))?,
        "done\n"
    );
    Ok(())
}
