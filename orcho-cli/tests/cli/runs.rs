//! Runs as things you manage: `orcho runs`, ids by prefix and `latest`,
//! `orcho cancel` at a decision point, `orcho gc`.

use crate::{
    Result,
    support::{QUICK, REVIEW, Repo, WAIT, paused_at_review, run_id, wait_for_file},
};

#[test]
fn runs_are_listed_newest_first_and_named_by_prefix_or_latest() -> Result {
    let repo = Repo::new(REVIEW)?;
    let out = repo.orcho(&["runs"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("no run"), "{out}");
    let first = paused_at_review(&repo)?;
    let second = paused_at_review(&repo)?;
    let out = repo.orcho(&["runs", "--json"])?;
    out.expect_code(0);
    let listed = out.json()?;
    let ids: Vec<&str> = listed
        .as_array()
        .ok_or("not a list")?
        .iter()
        .filter_map(|r| r["run"].as_str())
        .collect();
    assert_eq!(ids, [second.as_str(), first.as_str()], "{out}");
    assert_eq!(listed[0]["status"], "awaiting_phase_handoff");

    let out = repo.orcho(&["handoff", "show", "latest", "--json"])?;
    out.expect_code(0);
    assert_eq!(out.json()?["run"], second.as_str(), "{out}");
    // The shortest prefix that tells the two apart names one of them.
    let common = first
        .chars()
        .zip(second.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let prefix = &first[..=common];
    let out = repo.orcho(&["handoff", "show", prefix, "--json"])?;
    out.expect_code(0);
    assert_eq!(out.json()?["run"], first.as_str(), "{out}");
    let out = repo.orcho(&["handoff", "show", &first[..common]])?;
    out.expect_code(1);
    assert!(out.stderr.contains("names 2 runs"), "{out}");
    assert!(out.stderr.contains("orcho runs"), "{out}");
    Ok(())
}

#[test]
fn a_cancelled_run_leaves_the_inbox_and_gc_removes_its_worktree_only() -> Result {
    let repo = Repo::new(REVIEW)?;
    let cancelled = paused_at_review(&repo)?;
    let waiting = paused_at_review(&repo)?;
    let out = repo.orcho(&["cancel", &cancelled, "--reason", "wrong approach", "--json"])?;
    out.expect_code(0);
    assert_eq!(out.json()?["status"], "cancelled", "{out}");

    let inbox = repo.orcho(&["inbox", "--json"])?.json()?;
    let pending: Vec<&str> = inbox["pending"]
        .as_array()
        .ok_or("no pending")?
        .iter()
        .filter_map(|p| p["run"].as_str())
        .collect();
    assert_eq!(pending, [waiting.as_str()]);
    let evidence: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        repo.run_dir(&cancelled).join("evidence.json"),
    )?)?;
    assert_eq!(evidence["status"], "cancelled");
    assert!(
        evidence["reason"]
            .as_str()
            .is_some_and(|r| r.contains("wrong approach"))
    );

    let out = repo.orcho(&["resume", &cancelled, "--no-interactive"])?;
    out.expect_code(1);
    assert!(out.stderr.contains("cancelled"), "{out}");
    let out = repo.orcho(&["cancel", &cancelled])?;
    out.expect_code(1);

    let worktrees = repo.dir().join(".orcho/worktrees");
    let out = repo.orcho(&["gc", "--dry-run", "--json"])?;
    out.expect_code(0);
    assert!(
        worktrees.join(&cancelled).is_dir(),
        "a dry run removed something"
    );
    let out = repo.orcho(&["gc", "--json"])?;
    out.expect_code(0);
    let report = out.json()?;
    assert_eq!(
        report["worktrees"].as_array().map(Vec::len),
        Some(1),
        "{out}"
    );
    assert!(!worktrees.join(&cancelled).exists());
    assert!(worktrees.join(&waiting).is_dir(), "gc touched a paused run");
    assert!(
        !repo.git(&["worktree", "list"])?.contains(&cancelled),
        "git still lists the removed worktree"
    );
    // The record of the cancelled run stays.
    assert!(repo.run_dir(&cancelled).join("journal.jsonl").is_file());
    Ok(())
}

#[test]
fn a_run_nothing_drives_any_more_is_listed_stopped_and_waits_in_the_inbox() -> Result {
    let repo = Repo::new(QUICK)?;
    // The phase says it started, then waits for the test's word.
    let phase = format!(
        "implement=sh -c 'touch {started}; while [ ! -e {go} ]; do sleep 0.05; done; touch ok'",
        started = repo.ctl("started"),
        go = repo.ctl("go"),
    );
    let mut child = repo.spawn(&["run", "--phase", &phase, "--no-interactive", "--json"])?;
    wait_for_file(&repo.ctl("started"), WAIT)?;

    // While a process drives it, it is running.
    let listed = repo.orcho(&["runs", "--json"])?.json()?;
    assert_eq!(listed[0]["status"], "running", "{listed}");
    assert!(listed[0].get("stopped").is_none(), "{listed}");
    let run = run_id(&listed[0])?;

    // Its host dies: nothing drives it any more.
    child.kill()?;
    child.wait()?;
    let listed = repo.orcho(&["runs", "--json"])?.json()?;
    assert_eq!(listed[0]["status"], "running", "{listed}");
    assert_eq!(listed[0]["stopped"], true, "{listed}");
    let out = repo.orcho(&["runs"])?;
    let row = out.stdout.lines().nth(1).unwrap_or_default();
    assert!(row.contains("stopped"), "{out}");
    assert!(row.contains("stopped in `implement`"), "{out}");
    let out = repo.orcho(&["inbox"])?;
    out.expect_code(0);
    assert!(
        out.stdout.contains(&format!("next: orcho resume {run}")),
        "{out}"
    );
    let inbox = repo.orcho(&["inbox", "--json"])?.json()?;
    assert_eq!(inbox["stopped"][0]["run"], run.as_str(), "{inbox}");
    assert_eq!(inbox["stopped"][0]["next_step"], "resume", "{inbox}");

    // Resumed, it goes on to its delivery gate and leaves the list.
    orcho::core::fs::write_atomic(&repo.ctl("go"), b"")?;
    let out = repo.orcho(&["resume", &run, "--no-interactive", "--json"])?;
    out.expect_code(4);
    assert_eq!(out.json()?["awaiting"], "delivery", "{out}");
    let inbox = repo.orcho(&["inbox", "--json"])?.json()?;
    assert_eq!(inbox["stopped"], serde_json::json!([]), "{inbox}");
    Ok(())
}

#[test]
fn a_run_refused_before_it_starts_leaves_no_run_behind() -> Result {
    let repo = Repo::new(REVIEW)?;
    // `--autopilot` with no advisor to ask.
    let out = repo.orcho(&["run", "--autopilot", "--no-interactive"])?;
    out.expect_no_panic();
    out.expect_code(1);
    assert!(out.stderr.contains("needs an advisor"), "{out}");
    // A blank task.
    let out = repo.orcho(&["run", "--task", "", "--no-interactive"])?;
    out.expect_code(2);
    let runs = repo.orcho(&["runs"])?;
    runs.expect_code(0);
    assert!(runs.stdout.contains("no run"), "{runs}");
    let inbox = repo.orcho(&["inbox", "--json"])?.json()?;
    assert_eq!(
        inbox["stopped"].as_array().map(Vec::len),
        Some(0),
        "{inbox}"
    );
    Ok(())
}
