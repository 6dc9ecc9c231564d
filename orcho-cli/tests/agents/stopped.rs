//! A Claude Code or opencode phase stopped before it ends (its timeout
//! spent): nothing it started runs on, also the shell command it ran in a
//! session of its own, and what it did so far is kept with the attempt.
//!
//! (Claude Code refuses a bare `sleep`: the scripted command sleeps in
//! Python.)

use crate::{Result, walk_with};

/// The run, to its timeout; then what runs that the agent started.
const DRIVER: &str = r#"
. "$COMMON"
export ANTHROPIC_BASE_URL="http://127.0.0.1:$port"
opencode_config "$HOME/.config/opencode"
cd "$REPO"
"$ORCHO" run --no-interactive --task "$TASK (sleep first)" >"$CTL/start.out" 2>"$CTL/start.err" </dev/null
echo $? >"$CTL/start.code"
"$ORCHO" evidence latest --json >"$CTL/evidence.out" 2>"$CTL/evidence.err"
# What still runs of the scripted command, a moment after the run ended:
# this run's (working in its checkout), not another test's.
sleep 1
for p in /proc/[0-9]*; do
  case "$(readlink "$p/cwd" 2>/dev/null)" in "$REPO"*) ;; *) continue ;; esac
  if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q 'time.sleep(4242)'; then
    echo "${p#/proc/}" >>"$CTL/left.out"
  fi
done
"#;

/// One implement phase run by `runner`, bounded to 25 seconds.
fn sleeping(runner: &str) -> String {
    format!(
        "\
schema: 1
name: agents
phases:
  - name: implement
    role: implement
    runner: {{{runner}, timeout_secs: 25}}
supervision:
  plan_approval: false
"
    )
}

#[test]
fn a_claude_code_phase_past_its_timeout_leaves_nothing_running_and_keeps_its_transcript() -> Result
{
    past_its_timeout(
        "agent: claude-code, model: claude-sonnet-4-5",
        "Claude Code",
    )
}

#[test]
fn an_opencode_phase_past_its_timeout_leaves_nothing_running_and_keeps_its_transcript() -> Result {
    past_its_timeout("agent: opencode, model: scripted/scripted", "opencode")
}

fn past_its_timeout(runner: &str, title: &str) -> Result {
    let Some(w) = walk_with(&sleeping(runner), DRIVER, false)? else {
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
        said.contains(&format!(
            "{title} timed out after 25s (`runner.timeout_secs: 25`)"
        )),
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
