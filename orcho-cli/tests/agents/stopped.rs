//! A Claude Code phase stopped before it ends (its timeout spent): nothing
//! it started runs on, also the shell command it ran in a session of its
//! own, and what it did so far is kept with the attempt.
//!
//! (Claude Code refuses a bare `sleep`: the scripted command sleeps in
//! Python.)

use crate::{Result, walk_with};

/// The run, to its timeout; then what runs that the agent started.
const DRIVER: &str = r#"
. "$COMMON"
export ANTHROPIC_BASE_URL="http://127.0.0.1:$port"
cd "$REPO"
"$ORCHO" run --no-interactive --task "$TASK (sleep first)" >"$CTL/start.out" 2>"$CTL/start.err" </dev/null
echo $? >"$CTL/start.code"
"$ORCHO" evidence latest --json >"$CTL/evidence.out" 2>"$CTL/evidence.err"
# What still runs of the scripted command, a moment after the run ended.
sleep 1
for p in /proc/[0-9]*; do
  if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q 'time.sleep(4242)'; then
    echo "${p#/proc/}" >>"$CTL/left.out"
  fi
done
"#;

/// One implement phase: Claude Code, bounded to 25 seconds.
const SLEEPING: &str = "\
schema: 1
name: agents
phases:
  - name: implement
    role: implement
    runner: {agent: claude-code, model: claude-sonnet-4-5, timeout_secs: 25}
supervision:
  plan_approval: false
";

#[test]
fn a_claude_code_phase_past_its_timeout_leaves_nothing_running_and_keeps_its_transcript() -> Result
{
    let Some(w) = walk_with(SLEEPING, DRIVER, false)? else {
        return Ok(());
    };
    let left = std::fs::read_to_string(w.ctl.join("left.out")).unwrap_or_default();
    assert!(
        left.trim().is_empty(),
        "the agent's `sleep` runs on after its phase timed out: {left}\n{}",
        w.said("start")
    );
    let evidence: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(w.ctl.join("evidence.out"))?)?;
    let said = w.said("start");
    assert!(
        said.contains("Claude Code timed out after 25s (`runner.timeout_secs: 25`)"),
        "{said}"
    );
    let artifacts: Vec<String> = evidence["artifacts"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|a| {
            Some(format!(
                "{}/{}",
                a["attempt"].as_str()?,
                a["file"].as_str()?
            ))
        })
        .collect();
    assert!(
        artifacts.contains(&"implement-r1-a1/transcript.jsonl".to_owned()),
        "the transcript of a timed-out attempt is kept: {artifacts:?}\n{}",
        w.said("start")
    );
    Ok(())
}
