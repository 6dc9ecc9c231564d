//! An agent's permission question in the inbox: the real Claude Code and
//! Codex run an implement phase whose first command the profile's rules
//! answer `ask`. The question appears in `orcho inbox --json`, a person
//! decides it through the web inbox's API, and the agent's command runs
//! (allow) or does not (deny, the agent reading the note) while the run
//! goes on to its delivery gate.

use crate::{Agent, CLAUDE, CODEX, Result, walk_with};

/// The driver: the web inbox served, the run started in the background;
/// once the question shows in the inbox, `$DECISION` is posted to the API
/// with a note, and the run is waited for.
const ASK_DRIVER: &str = r#"
. "$COMMON"
export ANTHROPIC_BASE_URL="http://127.0.0.1:$port"
codex_config "$CODEX_HOME"
cd "$REPO"
"$ORCHO" serve token add walker --json >"$CTL/token.json" 2>"$CTL/token.err"
"$ORCHO" serve --listen 127.0.0.1:0 >/dev/null 2>"$CTL/serve.err" </dev/null &
served=$!
trap 'kill $server $served 2>/dev/null' EXIT
( "$ORCHO" run --no-interactive --task "$TASK (ask first)" >"$CTL/start.out" 2>"$CTL/start.err" </dev/null
  echo $? >"$CTL/start.code" ) &
started=$!
"$PYTHON" - "$ORCHO" "$CTL" "$DECISION" <<'PY' >"$CTL/decide.out" 2>"$CTL/decide.err"
import json, re, subprocess, sys, time, urllib.request
orcho, ctl, decision = sys.argv[1:4]
deadline = time.time() + 240
asked = None
while time.time() < deadline and asked is None:
    out = subprocess.run([orcho, "inbox", "--json"], capture_output=True, text=True)
    if out.returncode == 0:
        inbox = json.loads(out.stdout)
        asked = next((p for p in inbox["pending"] if p.get("kind") == "permission"), None)
        if asked:
            open(ctl + "/inbox.json", "w").write(out.stdout)
    time.sleep(0.2)
if asked is None:
    sys.exit("no permission question in the inbox")
base = None
while time.time() < deadline and base is None:
    m = re.search(r"serving the inbox at (\S+)", open(ctl + "/serve.err").read())
    base = m.group(1).rstrip("/") if m else None
    time.sleep(0.1)
token = json.load(open(ctl + "/token.json"))["token"]
request = urllib.request.Request(
    base + "/api/runs/" + asked["run"] + "/decisions",
    data=json.dumps({"action": decision, "note": "decided from the inbox: " + decision}).encode(),
    headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"},
    method="POST",
)
with urllib.request.urlopen(request) as answer:
    print(answer.status, answer.read().decode())
PY
echo $? >"$CTL/decide.code"
wait $started
"$ORCHO" log latest >"$CTL/log.out" 2>&1
"#;

fn asking(agent: &Agent) -> String {
    format!(
        "\
schema: 1
name: agents
phases:
  - name: implement
    role: implement
    runner: {runner}
verification:
  commands:
    - name: test
      argv: [python3, -c, \"from parse import parse; assert parse('') == []\"]
  required: [test]
supervision:
  plan_approval: false
permissions:
  rules:
    - {{permission: '*', pattern: '*', action: allow}}
    - {{permission: bash, pattern: 'touch asked*', action: ask}}
  ask_timeout: 3m
",
        runner = agent.runner
    )
}

/// The agent asks; `decision` is taken through the API; the command ran
/// or did not, and the run reached its delivery gate.
fn asks_and_is_answered(agent: &Agent, decision: &str) -> Result {
    let driver = format!("DECISION={decision}\n{ASK_DRIVER}");
    let Some(w) = walk_with(&asking(agent), &driver, false)? else {
        return Ok(());
    };
    assert_eq!(w.code("decide"), Some(0), "{}", w.said("decide"));
    // The question as the inbox listed it: the tool, the command, the
    // phase.
    let inbox: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(w.ctl.join("inbox.json"))?)?;
    let asked = inbox["pending"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["kind"] == "permission"))
        .ok_or_else(|| format!("no question in {inbox:#}"))?;
    assert_eq!(asked["phase"], "implement", "{asked:#}");
    assert!(
        asked["trigger"]
            .as_str()
            .is_some_and(|t| t.contains("touch asked.txt")),
        "{asked:#}"
    );
    assert_eq!(
        asked["available_actions"],
        serde_json::json!(["allow", "deny"])
    );
    // The run went on to its delivery gate.
    assert_eq!(w.code("start"), Some(4), "{}", w.said("start"));
    let run = asked["run"].as_str().ok_or("run")?;
    let worktree = w.repo.join(".orcho/worktrees").join(run);
    let ran = worktree.join("asked.txt").exists();
    // Whom the hook answered the agent for, as the model read it.
    let read = w
        .requests()?
        .iter()
        .any(|r| r["body"].to_string().contains("decided from the inbox"));
    if decision == "allow" {
        assert!(ran, "the allowed command did not run: {}", w.said("start"));
    } else {
        assert!(!ran, "the denied command ran: {}", w.said("start"));
        assert!(read, "the agent never read the note: {}", w.said("start"));
    }
    // Who decided is recorded with the question.
    let log = std::fs::read_to_string(w.ctl.join("log.out"))?;
    let decided = std::fs::read_to_string(
        w.repo
            .join(".orcho/runs")
            .join(run)
            .join("decisions/ask-0001.json"),
    )?;
    assert!(decided.contains("walker (web)"), "{decided}\n{log}");
    Ok(())
}

#[test]
fn claude_code_asks_and_a_person_allows_it_from_the_inbox() -> Result {
    asks_and_is_answered(&CLAUDE, "allow")
}

#[test]
fn claude_code_asks_and_a_person_denies_it_from_the_inbox() -> Result {
    asks_and_is_answered(&CLAUDE, "deny")
}

#[test]
fn codex_asks_and_a_person_allows_it_from_the_inbox() -> Result {
    asks_and_is_answered(&CODEX, "allow")
}

#[test]
fn codex_asks_and_a_person_denies_it_from_the_inbox() -> Result {
    asks_and_is_answered(&CODEX, "deny")
}

/// How an agent takes a hook that ended without answering.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Killed {
    /// It refuses the call (Claude Code with `onFailure: block`, opencode's
    /// plugin).
    Refuses,
    /// It runs the call as if the hook had no opinion (Gemini CLI).
    RunsIt,
    /// Its commands cannot reach the hook (Codex's sandbox): the hook
    /// lives to answer.
    OutOfReach,
}

/// What an agent that wants past a person's answer can do: kill the hook
/// that waits for it (a process of its own user). Wherever the call went,
/// the attempt proves nothing: it is rejected, saying why; where the agent
/// refuses a call whose hook failed, the call never ran.
fn a_killed_hook(agent: &Agent, expect: Killed) -> Result {
    let driver =
        crate::UNGUARDED_DRIVER.replace("--task \"$TASK\"", "--task \"$TASK (kill the hook)\"");
    // A short wait, for where the hook cannot be killed; the attempt pauses
    // when it is rejected.
    let profile = asking(agent)
        .replace("ask_timeout: 3m", "ask_timeout: 30s")
        .replace(
            &format!("    runner: {}\n", agent.runner),
            &format!(
                "    runner: {}\n    handoff: {{ pause: on_rejected }}\n",
                agent.runner
            ),
        );
    let Some(w) = walk_with(&profile, &driver, false)? else {
        return Ok(());
    };
    let ran = !crate::files_under(&w.repo.join(".orcho/worktrees"))
        .into_iter()
        .filter(|f| f.file_name() == Some("asked.txt"))
        .collect::<Vec<_>>()
        .is_empty();
    let bodies: Vec<String> = w
        .requests()?
        .iter()
        .map(|r| r["body"].to_string())
        .collect();
    let waited_out = bodies.iter().any(|b| b.contains("nobody answered within"));
    let implement = crate::implement_phase(&w)?;
    let said = w.said("start");
    // The agent went on to its work either way.
    assert!(
        bodies
            .iter()
            .any(|b| b.contains("parse() returns [] for empty input")),
        "{said}"
    );
    match expect {
        Killed::OutOfReach => {
            assert!(waited_out, "the hook was killed: {said}");
            assert!(!ran, "the command asked about ran: {said}");
            assert_eq!(implement["verdict"], "approved", "{implement:#}\n{said}");
        }
        Killed::Refuses | Killed::RunsIt => {
            assert!(!waited_out, "the hook was not killed, it ran out its wait");
            assert_eq!(
                ran,
                expect == Killed::RunsIt,
                "whether the call ran once its hook was killed: {said}"
            );
            assert_eq!(implement["verdict"], "rejected", "{implement:#}\n{said}");
            assert!(
                said.contains("hook ended before it answered a permission question"),
                "{said}"
            );
        }
    }
    Ok(())
}

#[test]
fn claude_code_whose_waiting_hook_is_killed_refuses_the_call() -> Result {
    a_killed_hook(&CLAUDE, Killed::Refuses)
}

#[test]
fn codex_keeps_its_commands_from_the_hook_that_waits() -> Result {
    a_killed_hook(&CODEX, Killed::OutOfReach)
}

#[test]
fn opencode_whose_waiting_hook_is_killed_refuses_the_call() -> Result {
    a_killed_hook(&crate::OPENCODE, Killed::Refuses)
}

/// Gemini CLI takes a hook that ended without an answer as no opinion and
/// runs the call; the attempt is rejected for it.
#[test]
fn gemini_cli_whose_waiting_hook_is_killed_has_its_attempt_rejected() -> Result {
    a_killed_hook(&crate::GEMINI, Killed::RunsIt)
}
