//! Orcho's hooks inside the real Claude Code, Codex, Gemini CLI, Qwen Code,
//! Copilot CLI and opencode (through Orcho's plugin), installed by
//! `orcho init --agent`, against the scripted model server (a hook walk:
//! `model_server.py`'s "# Orcho hook walk" scripts):
//!
//! - what proves readiness reaches the model when the session starts;
//! - a failing command runs and is logged as exploratory with its exit
//!   status;
//! - a command the rules deny does not run, and the model reads why;
//! - a stop is refused while the receipt is missing, the reason reaches the
//!   model, the agent runs `orcho verify`, and the next stop goes through;
//! - an agent that never proves anything is let go after the profile's
//!   bound of refusals, and the stop is recorded as unproven.

use camino::Utf8PathBuf;
use orcho::receipts::exec;
use serde_json::Value;

use super::{Result, git, host, note, private_network, run, unavailable, workspace, write};

const PROFILE: &str = "\
schema: 1
name: hook-walk
extends: builtin:quick
verification:
  commands:
    - { name: test, argv: [sh, -c, \"test -f ok\"] }
  required: [test]
permissions:
  rules:
    - { permission: '*', pattern: '*', action: allow }
    - { permission: bash, pattern: 'rm *', action: deny }
";

/// Starts the model server, installs the hooks with `orcho init --agent`,
/// runs the agent headless in the checkout, and keeps `orcho status
/// --json`.
const DRIVER: &str = r#"
. "$COMMON"
cd "$REPO"
# The hooks: as `orcho init --agent` installs them, or as the agent's own
# plugin or extension installs the bundle this repository ships.
plugin=""
if [ -z "${BUNDLE:-}" ]; then
  "$ORCHO" init --agent "$AGENT" >"$CTL/init.out" 2>"$CTL/init.err"
else
  case "$AGENT" in
  gemini) GEMINI_CLI_TRUST_WORKSPACE=true "$AGENT_BIN" extensions install "$BUNDLE" --consent ;;
  qwen) "$AGENT_BIN" extensions install "$BUNDLE" --consent ;;
  *) plugin="--plugin-dir=$BUNDLE"; echo "--plugin-dir $BUNDLE" ;;
  esac >"$CTL/init.out" 2>"$CTL/init.err" </dev/null
fi
case "$AGENT" in
gemini)
  mkdir -p "$HOME/.gemini"
  printf '%s' '{"general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false},"security":{"auth":{"selectedType":"gemini-api-key"}}}' >"$HOME/.gemini/settings.json"
  GEMINI_API_KEY=scripted GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$port" GEMINI_CLI_TRUST_WORKSPACE=true \
    "$AGENT_BIN" -p "$PROMPT" --yolo -m gemini-2.5-flash >"$CTL/agent.out" 2>"$CTL/agent.err" </dev/null
  ;;
qwen)
  mkdir -p "$HOME/.qwen"
  printf '%s' '{"security":{"auth":{"selectedType":"openai"}},"privacy":{"usageStatisticsEnabled":false},"general":{"enableAutoUpdate":false},"telemetry":{"enabled":false}}' >"$HOME/.qwen/settings.json"
  OPENAI_API_KEY=scripted OPENAI_BASE_URL="http://127.0.0.1:$port/v1" OPENAI_MODEL=scripted QWEN_CODE_SUPPRESS_YOLO_WARNING=1 \
    "$AGENT_BIN" -p "$PROMPT" --yolo >"$CTL/agent.out" 2>"$CTL/agent.err" </dev/null
  ;;
claude-code)
  ANTHROPIC_BASE_URL="http://127.0.0.1:$port" ANTHROPIC_API_KEY=scripted \
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \
  DISABLE_ERROR_REPORTING=1 CLAUDE_CODE_MAX_RETRIES=1 \
    "$AGENT_BIN" -p "$PROMPT" --model claude-sonnet-4-5 $plugin >"$CTL/agent.out" 2>"$CTL/agent.err" </dev/null
  ;;
opencode)
  # Its configuration, and the plugin package it installs into each config
  # directory when it starts (offline, that waits for the registry), also
  # in the checkout's `.opencode/`, where the plugin is.
  opencode_config "$XDG_CONFIG_HOME/opencode"
  opencode_deps "$REPO/.opencode"
  ocport=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  # Its stop gate is a new prompt, which only a server (or the TUI) acts
  # on: driven through `opencode serve`.
  # With ORCHO_BIN_ONLY, the plugin finds orcho by ORCHO_BIN alone: it is
  # not on opencode's PATH (the first entry, orcho's directory, dropped).
  serve_path=$PATH
  if [ -n "${ORCHO_BIN_ONLY:-}" ]; then
    serve_path=${PATH#*:}
    if [ -z "${ORCHO_BIN_UNSET:-}" ]; then export ORCHO_BIN="$ORCHO"; fi
  fi
  PATH=$serve_path \
  OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_DEFAULT_PLUGINS=1 \
  OPENCODE_DISABLE_LSP_DOWNLOAD=1 OPENCODE_DISABLE_SHARE=1 \
    "$AGENT_BIN" serve --hostname 127.0.0.1 --port "$ocport" --print-logs >"$CTL/serve.out" 2>&1 </dev/null &
  oc=$!
  # A request made while the server starts may never be answered: the
  # driver starts once it listens.
  for _ in $(seq 1 600); do grep -q "listening on" "$CTL/serve.out" 2>/dev/null && break; sleep 0.1; done
  node "$OPENCODE_DRIVER" "http://127.0.0.1:$ocport" "$PROMPT" >"$CTL/agent.out" 2>"$CTL/agent.err" </dev/null
  code=$?
  kill $oc 2>/dev/null
  wait $oc 2>/dev/null
  (exit $code)
  ;;
copilot)
  # A repository's hooks load only in a folder the user trusted.
  mkdir -p "$HOME/.copilot"
  printf '{"trusted_folders":["%s"]}' "$REPO" >"$HOME/.copilot/config.json"
  COPILOT_HOME="$HOME/.copilot" COPILOT_OFFLINE=true COPILOT_PROVIDER_BASE_URL="http://127.0.0.1:$port/v1" \
  COPILOT_MODEL=scripted COPILOT_PROVIDER_API_KEY=scripted \
    "$AGENT_BIN" -p "$PROMPT" --allow-all-tools $plugin >"$CTL/agent.out" 2>"$CTL/agent.err" </dev/null
  ;;
codex)
  codex_config "$HOME/.codex"
  # Codex runs the agent's commands through a login shell: the fix `orcho
  # init` gives when that shell does not find orcho.
  printf 'export PATH="%s:$PATH"\n' "$(dirname "$ORCHO")" >"$HOME/.bash_profile"
  # `--approve-for-me` (its own sandbox) sends approvals to the
  # PermissionRequest hook, else to a reviewer model.
  # Its sandbox never gets the machine's /tmp: it makes `.git` mount points
  # in each writable root, and one in /tmp is a repository above every
  # other test's directory.
  codex_mode=--sandbox=danger-full-access
  if [ -n "${CODEX_APPROVE:-}" ]; then codex_mode=--approve-for-me; fi
  CODEX_HOME="$HOME/.codex" SCRIPTED_API_KEY=scripted \
    "$AGENT_BIN" exec "$codex_mode" -c sandbox_workspace_write.exclude_slash_tmp=true \
      --trust --dangerously-bypass-hook-trust "$PROMPT" \
    >"$CTL/agent.out" 2>"$CTL/agent.err" </dev/null
  ;;
esac
echo $? >"$CTL/agent.code"
"$ORCHO" status --json >"$CTL/status.json" 2>"$CTL/status.err"
"#;

struct Walk {
    root: Utf8PathBuf,
    _tmp: Option<tempfile::TempDir>,
}

impl Walk {
    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.root.join("ctl").join(name)).unwrap_or_default()
    }

    fn repo(&self) -> Utf8PathBuf {
        self.root.join("repo")
    }

    /// Everything the run said, for a failed assertion.
    fn said(&self) -> String {
        format!(
            "--- agent exit {}\n--- agent stdout\n{}\n--- agent stderr\n{}\n--- init\n{}{}\n--- \
             status\n{}{}\n--- driver\n{}{}",
            self.read("agent.code").trim(),
            self.read("agent.out"),
            tail(&self.read("agent.err"), 4000),
            self.read("init.out"),
            self.read("init.err"),
            self.read("status.json"),
            self.read("status.err"),
            self.read("driver.err"),
            self.read("server.err"),
        )
    }

    /// Every request the model server saw, as text.
    fn requests(&self) -> String {
        self.read("requests.jsonl")
    }

    fn status(&self) -> Result<Value> {
        Ok(serde_json::from_str(&self.read("status.json"))?)
    }

    fn exploratory(&self) -> Vec<Value> {
        std::fs::read_to_string(self.repo().join(".orcho/receipts/_exploratory/log.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

fn tail(text: &str, max: usize) -> &str {
    let at = text.len().saturating_sub(max);
    let at = (at..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    &text[at..]
}

/// Runs `agent`'s hook walk in `mode` (`prove`, `stubborn`), with the
/// hooks installed from `bundle` (a plugin or extension in `integrations/`)
/// by the agent's own command, else by `orcho init`; `None` when it cannot
/// run here (said).
fn walk_with(agent: &str, mode: &str, bundle: Option<&str>) -> Result<Option<Walk>> {
    walk_full(agent, mode, bundle, PROFILE, &[])
}

/// [`walk_with`], with the checkout's profile and more of the driver's
/// environment.
fn walk_full(
    agent: &str,
    mode: &str,
    bundle: Option<&str>,
    profile: &str,
    envs: &[(&str, &str)],
) -> Result<Option<Walk>> {
    let bin = host("ORCHO_TEST_AGENTS")
        .map(Utf8PathBuf::from)
        .unwrap_or_else(|| workspace().join(".ci/agents/node_modules/.bin"));
    let program = bin.join(if agent == "claude-code" {
        "claude"
    } else {
        agent
    });
    if !program.exists() {
        unavailable(&format!(
            "`{program}` is missing; `npm install --prefix .ci/agents --no-save` installs the pinned agents"
        ));
        return Ok(None);
    }
    if !run(&["node", "--version"]).is_ok_and(|o| o.status.success()) {
        unavailable("`node` is not on PATH");
        return Ok(None);
    }
    let Some(python) = super::python() else {
        return Ok(None);
    };
    let private = private_network();
    let tmp = tempfile::tempdir()?;
    let root = Utf8PathBuf::try_from(tmp.path().to_owned())?;
    let (repo, ctl, home) = (root.join("repo"), root.join("ctl"), root.join("home"));
    for dir in [&repo, &ctl, &home, &root.join("tmp"), &repo.join("src")] {
        std::fs::create_dir_all(dir)?;
    }
    write(repo.join("orcho.yaml"), profile)?;
    write(repo.join("src/lib.py"), "def f():\n    return 1\n")?;
    git(&repo, &["init", "-q"])?;
    git(&repo, &["config", "user.name", "Agent Test"])?;
    git(&repo, &["config", "user.email", "agent-test@orcho.invalid"])?;
    git(&repo, &["config", "commit.gpgsign", "false"])?;
    git(&repo, &["add", "-A"])?;
    git(&repo, &["commit", "-q", "-m", "initial"])?;
    let orcho = Utf8PathBuf::from(env!("CARGO_BIN_EXE_orcho"));
    let dir = orcho.parent().ok_or("orcho's directory")?;
    let node = run(&["sh", "-c", "dirname \"$(command -v node)\""])
        .map(|o| o.stdout.tail_lossy().trim().to_owned())
        .unwrap_or_default();
    let path = format!("{dir}:{node}:/usr/local/bin:/usr/bin:/bin");
    // What opencode installs into each config directory when it starts,
    // installed ahead by `npm ci --prefix orcho-cli/tests/agents/opencode`.
    let deps = workspace().join("orcho-cli/tests/agents/opencode");
    if agent == "opencode" && !deps.join("node_modules/@opencode-ai/plugin").exists() {
        unavailable(
            "opencode's plugin package is not installed: `npm ci --prefix \
             orcho-cli/tests/agents/opencode` installs it",
        );
        return Ok(None);
    }
    let driven = exec::run(
        &super::driver(&root, DRIVER, private.is_ok(), &python, path)?
            .env("XDG_CONFIG_HOME", home.join(".config").as_str())
            .env("SHELL", "/bin/bash")
            .env("AGENT", agent)
            .env("AGENT_BIN", program.as_str())
            .env("OPENCODE_DEPS", deps.as_str())
            .env(
                "OPENCODE_DRIVER",
                workspace()
                    .join("orcho-cli/tests/agents/opencode/driver.mjs")
                    .as_str(),
            )
            .env(
                "OPENCODE_SDK",
                workspace()
                    .join(".ci/agents/node_modules/@opencode-ai/sdk/dist/index.js")
                    .as_str(),
            )
            .env(
                "BUNDLE",
                bundle
                    .map(|b| workspace().join("integrations").join(b))
                    .map(Utf8PathBuf::into_string)
                    .unwrap_or_default(),
            )
            .env(
                "PROMPT",
                format!("# Orcho hook walk: {mode}\nDo the task, then stop."),
            )
            // Telemetry and updates off, whatever the settings say.
            .envs(envs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())))
            .env("GEMINI_TELEMETRY_ENABLED", "false")
            .env("DO_NOT_TRACK", "1")
            .timeout(std::time::Duration::from_secs(
                host("ORCHO_TEST_AGENT_TIMEOUT")
                    .and_then(|t| t.parse().ok())
                    .unwrap_or(300),
            )),
    )?;
    let keep = std::env::var_os("ORCHO_TEST_KEEP").is_some();
    if keep {
        note(&format!("kept: {root}"));
    }
    let tmp = if keep {
        let _ = tmp.keep();
        None
    } else {
        Some(tmp)
    };
    if let exec::ExitStatus::TimedOut { .. } | exec::ExitStatus::SpawnFailed { .. } = driven.status
    {
        return Err(format!("the {agent} hook walk {}", driven.status).into());
    }
    Ok(Some(Walk { root, _tmp: tmp }))
}

/// `expected_exit`: the exit status the agent tells its hook of the failing
/// command (Codex tells none).
fn proves_its_work_through_the_hooks(agent: &str, expected_exit: Option<i32>) -> Result {
    proves_its_work(agent, expected_exit, None)
}

fn proves_its_work(agent: &str, expected_exit: Option<i32>, bundle: Option<&str>) -> Result {
    let Some(walk) = walk_with(agent, "prove", bundle)? else {
        return Ok(());
    };
    let said = walk.said();
    let requests = walk.requests();
    if bundle.is_none() {
        assert!(
            walk.read("init.out")
                .contains(&format!("added `orcho hook {agent}`")),
            "{said}"
        );
    }
    // The session started knowing what proves readiness.
    assert!(requests.contains("This project uses Orcho"), "{said}");
    // The failing command ran, and was logged with its exit status.
    let log = walk.exploratory();
    let failing = log
        .iter()
        .find(|e| e.to_string().contains("ls no-such-file-from-the-agent"))
        .ok_or_else(|| format!("no exploratory entry: {log:?}\n{said}"))?;
    assert_eq!(
        failing["exit_code"],
        expected_exit.map_or(Value::Null, Value::from),
        "{failing}\n{said}"
    );
    // The denied command did not run, and the model was told why.
    assert!(
        walk.repo().join("src/lib.py").exists(),
        "src was removed\n{said}"
    );
    assert!(
        requests.contains("bash `rm -rf src`: deny by rule 2"),
        "the model never read the refusal\n{said}"
    );
    // The stop was refused with the reason, the agent proved, and stopped.
    assert!(requests.contains("so do not stop yet"), "{said}");
    assert!(requests.contains("Prove it: `orcho verify test`"), "{said}");
    let status = walk.status()?;
    assert_eq!(status["required"][0]["status"], "present", "{said}");
    assert!(
        status
            .get("unproven_stops")
            .is_none_or(|s| s.as_array().is_some_and(Vec::is_empty)),
        "{said}"
    );
    assert_eq!(walk.read("agent.code").trim(), "0", "{said}");
    Ok(())
}

fn a_stubborn_agent_is_let_go_and_recorded_unproven(agent: &str) -> Result {
    stubborn(agent, &[])
}

fn stubborn(agent: &str, envs: &[(&str, &str)]) -> Result {
    let Some(walk) = walk_full(agent, "stubborn", None, PROFILE, envs)? else {
        return Ok(());
    };
    let said = walk.said();
    let requests = walk.requests();
    // Refused three times in a row (the default bound), then let go.
    for n in 1..=3 {
        assert!(
            requests.contains(&format!("Refusal {n} of 3")),
            "{n}\n{said}"
        );
    }
    let status = walk.status()?;
    let stops = status["unproven_stops"]
        .as_array()
        .ok_or("no unproven stops")?;
    assert_eq!(stops.len(), 1, "{said}");
    assert_eq!(stops[0]["agent"], agent, "{said}");
    assert_eq!(stops[0]["unproven"][0], "test: missing", "{said}");
    Ok(())
}

#[test]
fn gemini_cli_proves_its_work_through_orchos_hooks() -> Result {
    proves_its_work_through_the_hooks("gemini", Some(2))
}

#[test]
fn gemini_cli_that_never_proves_is_let_go_and_recorded() -> Result {
    a_stubborn_agent_is_let_go_and_recorded_unproven("gemini")
}

#[test]
fn qwen_code_proves_its_work_through_orchos_hooks() -> Result {
    proves_its_work_through_the_hooks("qwen", Some(2))
}

#[test]
fn qwen_code_that_never_proves_is_let_go_and_recorded() -> Result {
    a_stubborn_agent_is_let_go_and_recorded_unproven("qwen")
}

#[test]
fn claude_code_proves_its_work_through_orchos_hooks() -> Result {
    proves_its_work_through_the_hooks("claude-code", Some(2))
}

#[test]
fn claude_code_that_never_proves_is_let_go_and_recorded() -> Result {
    a_stubborn_agent_is_let_go_and_recorded_unproven("claude-code")
}

#[test]
fn codex_proves_its_work_through_orchos_hooks() -> Result {
    proves_its_work_through_the_hooks("codex", None)
}

#[test]
fn codex_that_never_proves_is_let_go_and_recorded() -> Result {
    a_stubborn_agent_is_let_go_and_recorded_unproven("codex")
}

#[test]
fn copilot_cli_proves_its_work_through_orchos_hooks() -> Result {
    proves_its_work_through_the_hooks("copilot", Some(2))
}

#[test]
fn copilot_cli_that_never_proves_is_let_go_and_recorded() -> Result {
    a_stubborn_agent_is_let_go_and_recorded_unproven("copilot")
}

#[test]
fn the_claude_code_plugin_runs_the_same_hooks() -> Result {
    proves_its_work("claude-code", Some(2), Some("claude-code"))
}

#[test]
fn the_gemini_cli_extension_runs_the_same_hooks() -> Result {
    proves_its_work("gemini", Some(2), Some("gemini"))
}

#[test]
fn the_qwen_code_extension_runs_the_same_hooks() -> Result {
    proves_its_work("qwen", Some(2), Some("qwen"))
}

#[test]
fn the_copilot_cli_plugin_runs_the_same_hooks() -> Result {
    proves_its_work("copilot", Some(2), Some("copilot"))
}

#[test]
fn opencode_proves_its_work_through_orchos_plugin() -> Result {
    proves_its_work_through_the_hooks("opencode", Some(2))
}

#[test]
fn opencode_that_never_proves_is_let_go_and_recorded() -> Result {
    a_stubborn_agent_is_let_go_and_recorded_unproven("opencode")
}

/// Codex's `PermissionRequest`: the approval `codex exec --approve-for-me`
/// would send to its own reviewer model is answered by the rules. Allowed,
/// the escalated write outside the workspace runs with no reviewer call;
/// without rules the hook has no opinion, the reviewer (the scripted model,
/// which does not answer as one) is asked, and the write does not happen.
#[test]
fn codex_escalation_is_approved_by_the_rules_through_permission_request() -> Result {
    // Outside the sandbox's writable roots (the checkout and TMPDIR).
    let target = workspace().join("target");
    std::fs::create_dir_all(&target)?;
    let outside_dir = tempfile::tempdir_in(&target)?;
    let outside = Utf8PathBuf::try_from(outside_dir.path().to_owned())?;
    let mode = format!("escalate {outside}");
    let envs = [("CODEX_APPROVE", "1")];
    let Some(walk) = walk_full("codex", &mode, None, PROFILE, &envs)? else {
        return Ok(());
    };
    let said = walk.said();
    assert!(outside.join("escalated").exists(), "not approved\n{said}");
    // Every request was the agent's own turn: none a reviewer's, which
    // comes with tools of its own.
    assert_eq!(tool_sets(&walk)?.len(), 1, "{said}");

    let plain = PROFILE
        .split("permissions:")
        .next()
        .ok_or("no profile")?
        .to_owned();
    std::fs::remove_file(outside.join("escalated"))?;
    let Some(walk) = walk_full("codex", &mode, None, &plain, &envs)? else {
        return Ok(());
    };
    let said = walk.said();
    assert!(
        !outside.join("escalated").exists(),
        "approved without rules\n{said}"
    );
    assert!(tool_sets(&walk)?.len() > 1, "no reviewer was asked\n{said}");
    Ok(())
}

/// The distinct numbers of tools the model server was offered.
fn tool_sets(walk: &Walk) -> Result<std::collections::BTreeSet<usize>> {
    walk.requests()
        .lines()
        .map(|line| {
            let request: Value = serde_json::from_str(line)?;
            Ok(request["body"]["tools"].as_array().map_or(0, Vec::len))
        })
        .collect()
}

/// `ORCHO_BIN` names the program opencode's plugin runs when `orcho` is not
/// on opencode's PATH: without it, every hook call fails and no stop is
/// ever refused with Orcho's reason.
#[test]
fn opencodes_plugin_runs_the_orcho_that_orcho_bin_names() -> Result {
    stubborn("opencode", &[("ORCHO_BIN_ONLY", "1")])
}

/// Where opencode's plugin cannot run orcho at all, an idle session is
/// prompted with why three times in a row, then let go: never a loop.
#[test]
fn opencodes_plugin_without_orcho_prompts_three_times_then_lets_go() -> Result {
    let envs = [("ORCHO_BIN_ONLY", "1"), ("ORCHO_BIN_UNSET", "1")];
    let Some(walk) = walk_full("opencode", "stubborn", None, PROFILE, &envs)? else {
        return Ok(());
    };
    let said = walk.said();
    let last = walk
        .requests()
        .lines()
        .last()
        .unwrap_or_default()
        .to_owned();
    let request: Value = serde_json::from_str(&last)?;
    let prompts = request["body"]["messages"]
        .as_array()
        .ok_or("no messages")?
        .iter()
        .filter(|m| m["role"] == "user" && m.to_string().contains("orcho could not start"))
        .count();
    assert_eq!(prompts, 3, "{said}");
    Ok(())
}
