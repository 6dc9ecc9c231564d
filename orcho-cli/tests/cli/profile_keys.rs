//! Every profile key takes effect: for each, the same run with the key
//! changed behaves differently, seen from outside through `orcho`.

use crate::{
    Result,
    support::{Out, Repo},
};

/// Appends `<phase> <attempt>` to the control directory's `log`; an
/// `implement` attempt after the first writes `fixed` (the fix a fed-in
/// failure asked for) and keeps its input.
const PHASE: &str = r#"#!/bin/sh
echo "$ORCHO_PHASE $ORCHO_ATTEMPT" >> "@CTL@/log"
if [ "$ORCHO_PHASE" = implement ] && [ "$ORCHO_ATTEMPT" -gt 1 ]; then
  printf '%s' "$ORCHO_INPUT" > "@CTL@/input.json"
  touch fixed
fi
"#;

/// `implement`, then `review` whose `check` gate fails until `fixed`
/// exists; `FEEDS` is replaced by the gate's `feeds` line or nothing.
const FEEDING: &str = "\
schema: 1
name: feeding
phases:
  - name: implement
    role: implement
    max_attempts: 3
  - name: review
    role: review
    max_attempts: 3
    gates:
      - name: check
        uses: tests
        on_fail: feed_into_next
FEEDS
verification:
  commands:
    - { name: check, argv: [sh, -c, \"test -f fixed\"] }
  required: [check]
";

fn run_in_place(repo: &Repo) -> Result<Out> {
    let out = repo.orcho(&[
        "run",
        "--in-place",
        "--no-interactive",
        "--phase",
        "implement=./phase.sh",
        "--phase",
        "review=./phase.sh",
    ])?;
    out.expect_no_panic();
    Ok(out)
}

#[test]
fn feeds_sends_a_review_gates_failure_back_to_implement() -> Result {
    // Declared: the failure goes back to `implement`, which fixes it, and
    // `review` passes on its second attempt.
    let repo = Repo::with_files(
        &FEEDING.replace("FEEDS", "        feeds: implement"),
        &[("phase.sh", PHASE)],
    )?;
    run_in_place(&repo)?.expect_code(0);
    let log = std::fs::read_to_string(repo.ctl("log"))?;
    assert_eq!(log, "implement 1\nreview 1\nimplement 2\nreview 2\n");
    let input = std::fs::read_to_string(repo.ctl("input.json"))?;
    assert!(input.contains("\"gate\":\"check\""), "{input}");
    let trace = repo.orcho(&["log", "latest"])?;
    assert!(
        trace.stdout.contains("back to phase 1, feeding check"),
        "{trace}"
    );

    // Not declared: the failure stays with `review`, which cannot fix it,
    // and the run pauses when its attempts are used up.
    let repo = Repo::with_files(&FEEDING.replace("FEEDS\n", ""), &[("phase.sh", PHASE)])?;
    run_in_place(&repo)?.expect_code(4);
    let log = std::fs::read_to_string(repo.ctl("log"))?;
    assert_eq!(log, "implement 1\nreview 1\nreview 2\nreview 3\n");
    Ok(())
}

#[test]
fn feeding_back_is_bounded_by_the_gates_own_phase() -> Result {
    // `implement` never fixes anything: `review`'s three attempts bound the
    // loop, and the run pauses instead of going round for ever.
    let never = "#!/bin/sh\necho \"$ORCHO_PHASE $ORCHO_ATTEMPT\" >> \"@CTL@/log\"\n";
    let repo = Repo::with_files(
        &FEEDING.replace("FEEDS", "        feeds: implement"),
        &[("phase.sh", never)],
    )?;
    run_in_place(&repo)?.expect_code(4);
    let log = std::fs::read_to_string(repo.ctl("log"))?;
    assert_eq!(
        log,
        "implement 1\nreview 1\nimplement 2\nreview 2\nimplement 3\nreview 3\n"
    );
    Ok(())
}

/// One `implement` phase whose `test` gate only informs; `test` passes when
/// `ok` exists; the delivery gate approves by itself; `DELIVERY` adds keys
/// to `delivery:`.
const DELIVERING: &str = "\
schema: 1
name: shipping
phases:
  - name: implement
    role: implement
    gates:
      - { name: test, uses: tests, on_fail: informational }
verification:
  commands:
    - { name: test, argv: [sh, -c, \"test -f ok\"] }
  required: [test]
delivery:
  default_action: approve
DELIVERY";

const WRITE: &str = "#!/bin/sh\necho done > work.txt\n";

fn deliver(repo: &Repo) -> Result<(Out, String)> {
    let out = repo.orcho(&[
        "run",
        "--no-interactive",
        "--json",
        "--phase",
        "implement=./write.sh",
    ])?;
    out.expect_no_panic();
    let run = out.json()?["run"].as_str().unwrap_or_default().to_owned();
    Ok((out, run))
}

#[test]
fn commit_message_names_the_delivered_commit() -> Result {
    let repo = Repo::with_files(
        &DELIVERING.replace(
            "DELIVERY",
            "  commit_message: \"{profile} ships {run_id} ({verdict}) {{done}}\"\n",
        ),
        &[("write.sh", WRITE), ("ok", "")],
    )?;
    let (out, run) = deliver(&repo)?;
    out.expect_code(0);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s"])?,
        format!("shipping ships {run} (approved) {{done}}")
    );
    // The default template.
    let repo = Repo::with_files(
        &DELIVERING.replace("DELIVERY", ""),
        &[("write.sh", WRITE), ("ok", "")],
    )?;
    let (out, run) = deliver(&repo)?;
    out.expect_code(0);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s"])?,
        format!("shipping: approved run {run}")
    );
    Ok(())
}

#[test]
fn require_receipts_decides_whether_missing_receipts_hold_delivery_back() -> Result {
    // `test` never passes (there is no `ok`), so its receipt is failed.
    // Required by default: approve is blocked and the run waits.
    let repo = Repo::with_files(&DELIVERING.replace("DELIVERY", ""), &[("write.sh", WRITE)])?;
    let (out, _) = deliver(&repo)?;
    out.expect_code(4);
    assert_eq!(repo.git(&["log", "-1", "--format=%s"])?, "initial");
    // Not required: the delivery goes through.
    let repo = Repo::with_files(
        &DELIVERING.replace("DELIVERY", "  require_receipts: false\n"),
        &[("write.sh", WRITE)],
    )?;
    let (out, _) = deliver(&repo)?;
    out.expect_code(0);
    assert_eq!(
        std::fs::read_to_string(repo.dir().join("work.txt"))?,
        "done\n"
    );
    Ok(())
}

#[test]
fn permissions_reach_every_phase_command() -> Result {
    let phase = "#!/bin/sh\nprintf '%s' \"${ORCHO_PERMISSIONS-unset}\" > \"@CTL@/permissions\"\n";
    let base = "\
schema: 1
name: reading
phases:
  - name: implement
    role: implement
PERMISSIONS";
    let with = "permissions:\n  preset: read_only\n  rules:\n    - { permission: bash, pattern: \"make test*\", action: allow }\n";
    for (permissions, expect) in [(with, true), ("", false)] {
        let repo = Repo::with_files(
            &base.replace("PERMISSIONS", permissions),
            &[("phase.sh", phase)],
        )?;
        repo.orcho(&[
            "run",
            "--in-place",
            "--no-interactive",
            "--phase",
            "implement=./phase.sh",
        ])?
        .expect_code(0);
        let seen = std::fs::read_to_string(repo.ctl("permissions"))?;
        if expect {
            let rules: serde_json::Value = serde_json::from_str(&seen)?;
            let rules = rules.as_array().ok_or("not a list of rules")?;
            assert!(rules.len() > 1, "{seen}");
            assert!(seen.contains("make test*"), "{seen}");
        } else {
            assert_eq!(seen, "unset");
        }
    }
    Ok(())
}

#[test]
fn profile_show_writes_out_every_default_and_reads_back() -> Result {
    let repo = Repo::new(crate::support::QUICK)?;
    let out = repo.orcho(&["profile", "show"])?;
    out.expect_code(0);
    for default in [
        "max_stop_blocks: 3",
        "approve_requires_operator: false",
        "require_receipts: true",
        "dirty_checkout: ask",
        "retry_cap: 10",
        "max_rounds: 1",
    ] {
        assert!(out.stdout.contains(default), "{default}\n{out}");
    }
    // What it prints is a profile that loads, and shows the same.
    repo.write("shown.yaml", &out.stdout)?;
    let again = repo.orcho(&["profile", "show", "shown.yaml"])?;
    again.expect_code(0);
    assert_eq!(again.stdout, out.stdout);
    Ok(())
}

#[test]
fn renaming_the_built_in_gates_command_is_reported_in_the_users_file() -> Result {
    let profile = "\
schema: 1
name: renamed
extends: builtin:default
verification:
  commands:
    - { name: unit, argv: [sh, -c, 'true'] }
  required: [unit]
";
    let repo = Repo::new(profile)?;
    let status = repo.orcho(&["status"])?;
    assert_ne!(status.code(), Some(0), "{status}");
    let orcho_yaml = repo.dir().join("orcho.yaml");
    assert!(
        status.stderr.contains(&format!(
            "invalid profile `{orcho_yaml}` at line 6, column 5, in `verification.commands`"
        )),
        "{status}"
    );
    assert!(
        status.stderr.contains(
            "the gate `tests` of phase `implement`, from `builtin:default`, runs the command `test`"
        ),
        "{status}"
    );
    assert!(status.stderr.contains("with: {command: unit}"), "{status}");
    // `profile show` prints what it can: the merged profile, then the error.
    let show = repo.orcho(&["profile", "show"])?;
    assert_ne!(show.code(), Some(0), "{show}");
    assert!(
        show.stdout.contains("as merged with what it extends"),
        "{show}"
    );
    assert!(show.stdout.contains("      command: test"), "{show}");
    assert!(show.stdout.contains("- name: unit"), "{show}");
    assert!(show.stderr.contains("runs the command `test`"), "{show}");
    Ok(())
}

#[test]
fn a_feed_that_can_never_take_effect_is_warned_where_the_profile_loads() -> Result {
    let profile = "\
schema: 1
name: warned
phases:
  - { name: plan, role: plan }
  - name: implement
    role: implement
    gates:
      - { name: unit, uses: tests, on_fail: feed_into_next, feeds: plan }
verification:
  commands: [{ name: unit, argv: [sh, -c, 'true'] }]
  required: [unit]
";
    let repo = Repo::new(profile)?;
    let said = "in `phases[1].gates[0].on_fail`: phase `implement` has `max_attempts: 1`, so this \
                gate's failure is fed on to `plan` only if a handoff grants a retry";
    let show = repo.orcho(&["profile", "show"])?;
    show.expect_code(0);
    assert!(show.stderr.contains("warning: profile `"), "{show}");
    assert!(show.stderr.contains(said), "{show}");
    let json = repo.orcho(&["profile", "show", "--json"])?;
    let doc = json.json()?;
    assert!(
        doc["warnings"][0]
            .as_str()
            .is_some_and(|w| w.contains(said)),
        "{json}"
    );
    let status = repo.orcho(&["status"])?;
    assert!(status.stderr.contains(said), "{status}");
    // Machine-read output stays clean of it.
    let status = repo.orcho(&["status", "--json"])?;
    assert!(!status.stdout.contains("warning"), "{status}");
    Ok(())
}
