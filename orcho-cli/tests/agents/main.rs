//! The real coding agents as phase runners: Claude Code, Codex, Gemini CLI and opencode, from
//! npm at the versions `.ci/agents/package-lock.json` pins, run one whole
//! `orcho run` each against a scripted model server the test starts on
//! 127.0.0.1 (`model_server.py`): task → plan (approved) → implement (its
//! prompt holds the task and the plan; its edit lands) → a read-only review
//! → final acceptance from the receipts → delivery `approve`.
//!
//! Where the machine allows it, everything runs inside a private network
//! namespace (`unshare -rn`, only loopback), so no request can leave the
//! machine; telemetry and updates are off either way.
//!
//! Without node or the agents (`npm install --prefix .ci/agents --no-save`), the tests
//! say why and pass; with `CI=true` they fail instead. `ORCHO_TEST_AGENTS`
//! names another directory of the agents' programs; `ORCHO_TEST_KEEP=1`
//! keeps each run's directory (the requests the model server saw, every
//! command's output) and prints where.

mod ask;
mod hooks;
mod stopped;

use std::time::Duration;

use camino::{Utf8Path, Utf8PathBuf};
use orcho::receipts::exec::{self, BaseEnv, ExecOutcome, ExecRequest};

type Result<T = (), E = Box<dyn std::error::Error + Send + Sync>> = std::result::Result<T, E>;

const TASK: &str = "Make parse() return [] for empty input\n\nparse('') returns [''] today.";

/// Runs `argv` with the test's own base environment; its outcome, or why
/// it could not start.
fn run(argv: &[&str]) -> std::result::Result<ExecOutcome, String> {
    exec::run(
        &ExecRequest::new(argv.iter().copied())
            .envs(BaseEnv::inherit())
            .keep_stdout(1 << 20)
            .timeout(Duration::from_secs(60)),
    )
    .map_err(|e| e.to_string())
}

fn host(name: &str) -> Option<String> {
    std::env::var_os(name).and_then(|v| v.into_string().ok())
}

fn workspace() -> Utf8PathBuf {
    Utf8Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Utf8Path::to_owned)
        .unwrap_or_default()
}

/// The agents' programs, or why they cannot run here.
fn agents() -> std::result::Result<[Utf8PathBuf; 4], String> {
    let bin = host("ORCHO_TEST_AGENTS")
        .map(Utf8PathBuf::from)
        .unwrap_or_else(|| workspace().join(".ci/agents/node_modules/.bin"));
    let claude = bin.join("claude");
    let codex = bin.join("codex");
    let gemini = bin.join("gemini");
    let opencode = bin.join("opencode");
    for program in [&claude, &codex, &gemini, &opencode] {
        if !program.exists() {
            return Err(format!(
                "`{program}` is missing; `npm install --prefix .ci/agents --no-save` installs the pinned agents"
            ));
        }
    }
    if !run(&["node", "--version"]).is_ok_and(|o| o.status.success()) {
        return Err("`node` is not on PATH (Codex's launcher needs it)".to_owned());
    }
    if !opencode_deps()
        .join("node_modules/@opencode-ai/plugin")
        .exists()
    {
        return Err(
            "opencode's plugin package is not installed: `npm ci --prefix \
             orcho-cli/tests/agents/opencode` installs it"
                .to_owned(),
        );
    }
    Ok([claude, codex, gemini, opencode])
}

/// What opencode installs into its configuration directory when it starts,
/// installed ahead by `npm ci --prefix orcho-cli/tests/agents/opencode`.
fn opencode_deps() -> Utf8PathBuf {
    workspace().join("orcho-cli/tests/agents/opencode")
}

/// Skips with the reason printed; in CI, fails instead.
fn unavailable(reason: &str) {
    if host("CI").is_some_and(|v| v == "true") {
        panic!("the real-agent tests cannot run in CI: {reason}");
    }
    note(&format!(
        "skipped: the real-agent test needs what is missing here: {reason}"
    ));
}

/// Says something on standard error, where `cargo test` shows it.
#[expect(
    clippy::print_stderr,
    reason = "a test that skips or keeps its files says so"
)]
fn note(text: &str) {
    eprintln!("{text}");
}

/// Whether `unshare -rn` gives a private network namespace with loopback.
fn private_network() -> std::result::Result<(), String> {
    let out = run(&["unshare", "-rn", "sh", "-c", "ip link set lo up"])
        .map_err(|e| format!("`unshare` cannot run: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(out.stderr.tail_lossy().trim().to_owned())
    }
}

/// The interpreter that runs the scripted model server (by its own path:
/// a driver's environment is cleared, and a version manager's shim may
/// need what it clears), or why there is none (said).
fn python() -> Option<String> {
    let python = run(&["python3", "-c", "import sys; print(sys.executable)"])
        .ok()
        .filter(|o| o.status.success())
        .map(|o| o.stdout.tail_lossy().trim().to_owned());
    if python.is_none() {
        unavailable("`python3` (the scripted model server) cannot run");
    }
    python
}

/// A driver script `script` written under `root` and run (in a private
/// network namespace when `private`) with only what is set here: no key,
/// no host configuration; the model server, the shared shell functions,
/// the checkout `root/repo` and the control directory `root/ctl`.
fn driver(
    root: &Utf8Path,
    script: &str,
    private: bool,
    python: &str,
    path: String,
) -> Result<ExecRequest> {
    let driver = root.join("driver.sh");
    write(&driver, script)?;
    std::fs::create_dir_all(root.join("tmp"))?;
    let argv: Vec<String> = if private {
        vec![
            "unshare".into(),
            "-rn".into(),
            "bash".into(),
            driver.to_string(),
        ]
    } else {
        vec!["bash".into(), driver.to_string()]
    };
    let agents = workspace().join("orcho-cli/tests/agents");
    Ok(ExecRequest::new(argv)
        .envs(BaseEnv::empty())
        .env("PATH", path)
        .env("HOME", root.join("home").as_str())
        .env("TMPDIR", root.join("tmp").as_str())
        .env("XDG_DATA_HOME", root.join("data").as_str())
        .env("LANG", "C.UTF-8")
        .env("PRIVATE_NET", if private { "1" } else { "0" })
        .env("PYTHON", python)
        .env("SERVER", agents.join("model_server.py").as_str())
        .env("COMMON", agents.join("common.sh").as_str())
        .env("CTL", root.join("ctl").as_str())
        .env("REPO", root.join("repo").as_str())
        .env("ORCHO", env!("CARGO_BIN_EXE_orcho")))
}

struct Agent {
    /// The runner as the profile names it.
    runner: &'static str,
    /// What ends a phase's settings file name, in its artifacts.
    settings: &'static str,
    /// The file the agent's own output is kept as, in the artifacts.
    result: &'static str,
    /// The request path of its API (how it starts: Gemini's names the
    /// model).
    api: &'static str,
}

const CLAUDE: Agent = Agent {
    runner: "{agent: claude-code, model: claude-sonnet-4-5}",
    settings: "claude-settings.json",
    result: "claude-result.json",
    api: "/v1/messages",
};

const CODEX: Agent = Agent {
    runner: "{agent: codex, model: gpt-5.5}",
    settings: "",
    result: "codex-events.jsonl",
    api: "/v1/responses",
};

const GEMINI: Agent = Agent {
    runner: "{agent: gemini, model: gemini-2.5-flash}",
    settings: "gemini-settings.json",
    result: "gemini-result.json",
    api: "/v1beta/models/",
};

const OPENCODE: Agent = Agent {
    runner: "{agent: opencode, model: scripted/scripted}",
    settings: "opencode-plugin/orcho.js",
    result: "opencode-events.jsonl",
    api: "/v1/chat/completions",
};

fn profile(agent: &Agent) -> String {
    format!(
        "\
schema: 1
name: agents
phases:
  - name: plan
    role: plan
    runner: {runner}
  - name: implement
    role: implement
    runner: {runner}
  - name: review
    role: review
    read_only: true
    runner: {runner}
  - name: final_acceptance
    role: final_acceptance
verification:
  commands:
    - name: test
      argv: [python3, -c, \"from parse import parse; assert parse('') == []\"]
  required: [test]
supervision:
  plan_approval: true
",
        runner = agent.runner
    )
}

/// The steps of the whole run, each an `orcho` command whose output and
/// exit code the driver keeps as `<name>.out`, `<name>.err`, `<name>.code`.
const DRIVER: &str = r#"
. "$COMMON"
export ANTHROPIC_BASE_URL="http://127.0.0.1:$port"
export GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$port"
codex_config "$CODEX_HOME"
opencode_config "$HOME/.config/opencode"
cd "$REPO"
step() { name=$1; shift; "$ORCHO" "$@" >"$CTL/$name.out" 2>"$CTL/$name.err" </dev/null; echo $? >"$CTL/$name.code"; }
step start run --no-interactive --task "$TASK"
step approve plan approve latest --feedback "keep it small"
step resume resume latest --no-interactive
step evidence evidence latest --json
step evidence_text evidence latest
step runs runs
# What the agents did is in the run's worktree: the user's checkout is
# as it was.
git status --porcelain --untracked-files=all >"$CTL/checkout.status"
step decide delivery decide latest approve
step deliver resume latest --no-interactive
"#;

struct Walked {
    ctl: Utf8PathBuf,
    repo: Utf8PathBuf,
    _tmp: tempfile::TempDir,
}

impl Walked {
    fn code(&self, step: &str) -> Option<i32> {
        std::fs::read_to_string(self.ctl.join(format!("{step}.code")))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    fn said(&self, step: &str) -> String {
        let read = |name: &str| std::fs::read_to_string(self.ctl.join(name)).unwrap_or_default();
        format!(
            "--- {step}: exit {:?}\n--- stdout\n{}\n--- stderr\n{}\n--- driver\n{}{}",
            self.code(step),
            read(&format!("{step}.out")),
            read(&format!("{step}.err")),
            read("driver.err"),
            read("server.err"),
        )
    }

    fn git(&self, args: &[&str]) -> Result<String> {
        git(&self.repo, args)
    }

    fn requests(&self) -> Result<Vec<serde_json::Value>> {
        Ok(std::fs::read_to_string(self.ctl.join("requests.jsonl"))?
            .lines()
            .map(serde_json::from_str)
            .collect::<std::result::Result<_, _>>()?)
    }
}

fn write(path: impl AsRef<Utf8Path>, text: impl AsRef<[u8]>) -> Result {
    Ok(orcho::core::fs::write_atomic(path.as_ref(), text.as_ref())?)
}

fn git(dir: &Utf8Path, args: &[&str]) -> Result<String> {
    let out = exec::run(
        &ExecRequest::new(std::iter::once("git").chain(args.iter().copied()))
            .cwd(dir.to_owned())
            .envs(BaseEnv::inherit())
            .keep_stdout(1 << 20),
    )?;
    if !out.status.success() {
        return Err(format!("git {args:?} failed: {}", out.stderr.tail_lossy()).into());
    }
    Ok(out.stdout.tail_lossy().trim().to_owned())
}

/// Runs the whole flow with `agent`'s programs; `None` when it cannot run
/// here (said).
/// What the user's credential file for Gemini CLI holds in the tests.
const CREDENTIAL: &str = "{\"refresh_token\": \"scripted-user-credential\"}";

/// Every regular file under `dir` (links are not followed).
fn files_under(dir: &Utf8Path) -> Vec<Utf8PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = dir.read_dir_utf8() else {
        return out;
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            out.extend(files_under(entry.path()));
        } else if kind.is_file() {
            out.push(entry.path().to_owned());
        }
    }
    out
}

fn walk(agent: &Agent) -> Result<Option<Walked>> {
    walk_with(&profile(agent), DRIVER, false)
}

/// Runs `driver` against a checkout whose profile is `profile`, with the
/// agents' hooks switched off in the user's settings when `hooks_off`.
fn walk_with(profile: &str, driver_script: &str, hooks_off: bool) -> Result<Option<Walked>> {
    let [claude, codex, gemini, opencode] = match agents() {
        Ok(programs) => programs,
        Err(reason) => {
            unavailable(&reason);
            return Ok(None);
        }
    };
    let private = private_network();
    if let Err(reason) = &private {
        note(&format!(
            "note: no private network namespace here ({reason}); the agents run with telemetry \
             and updates off, against 127.0.0.1 only"
        ));
    }
    let tmp = tempfile::tempdir()?;
    let root = Utf8PathBuf::try_from(tmp.path().to_owned())?;
    let (repo, ctl, home) = (root.join("repo"), root.join("ctl"), root.join("home"));
    for dir in [&repo, &ctl, &home] {
        std::fs::create_dir_all(dir)?;
    }
    write(repo.join("orcho.yaml"), profile)?;
    if hooks_off {
        // What a user (or an agent with the run of the home) can set: the
        // agent then never calls Orcho.
        std::fs::create_dir_all(home.join(".claude"))?;
        write(
            home.join(".claude/settings.json"),
            "{\"disableAllHooks\": true}\n",
        )?;
    }
    // Gemini CLI: its key's kind, nothing sent but the model's requests;
    // with `hooks_off`, its hooks switched off too; a credential file of
    // the user's, which the store must never hold a copy of.
    std::fs::create_dir_all(home.join(".gemini"))?;
    write(home.join(".gemini/oauth_creds.json"), CREDENTIAL)?;
    write(
        home.join(".gemini/settings.json"),
        format!(
            "{{\"general\": {{\"enableAutoUpdate\": false, \"enableAutoUpdateNotification\": false}}, \
             \"privacy\": {{\"usageStatisticsEnabled\": false}}, \"telemetry\": {{\"enabled\": false}}, \
             \"security\": {{\"auth\": {{\"selectedType\": \"gemini-api-key\"}}}}, \
             \"hooksConfig\": {{\"enabled\": {}}}}}\n",
            !hooks_off
        ),
    )?;
    write(repo.join(".gitignore"), ".orcho/\n__pycache__/\n")?;
    write(
        repo.join("parse.py"),
        "def parse(text):\n    return text.split(' ')\n",
    )?;
    git(&repo, &["init", "-q"])?;
    git(&repo, &["config", "user.name", "Agent Test"])?;
    git(&repo, &["config", "user.email", "agent-test@orcho.invalid"])?;
    git(&repo, &["config", "commit.gpgsign", "false"])?;
    git(&repo, &["add", "-A"])?;
    git(&repo, &["commit", "-q", "-m", "initial"])?;

    let Some(python) = python() else {
        return Ok(None);
    };
    let orcho = Utf8PathBuf::from(env!("CARGO_BIN_EXE_orcho"));
    let bin = orcho.parent().ok_or("orcho's directory")?;
    let path = format!("{bin}:{}", host("PATH").unwrap_or_default());
    let driven = exec::run(
        &driver(&root, driver_script, private.is_ok(), &python, path)?
            .env("HOOKS_OFF", if hooks_off { "1" } else { "0" })
            .env("TASK", TASK)
            .env("ORCHO_CLAUDE", claude.as_str())
            .env("ORCHO_CODEX", codex.as_str())
            .env("ORCHO_GEMINI", gemini.as_str())
            .env("ORCHO_OPENCODE", opencode.as_str())
            // opencode: its configuration written by the driver, its
            // plugin package linked there, nothing fetched or shared.
            .env("OPENCODE_DEPS", opencode_deps().as_str())
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
            .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
            .env("OPENCODE_DISABLE_SHARE", "1")
            // Gemini CLI: the scripted server (its URL set by the driver).
            .env("GEMINI_API_KEY", "scripted")
            .env("GEMINI_TELEMETRY_ENABLED", "false")
            // Claude Code: the scripted server, a key it sends there, no
            // traffic but the model's, one retry.
            .env("ANTHROPIC_API_KEY", "scripted")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("CLAUDE_CODE_MAX_RETRIES", "1")
            // Codex: its home with the scripted provider.
            .env("CODEX_HOME", home.join(".codex").as_str())
            .env("SCRIPTED_API_KEY", "scripted")
            .timeout(Duration::from_secs(600)),
    )?;
    if let exec::ExitStatus::TimedOut { .. } | exec::ExitStatus::SpawnFailed { .. } = driven.status
    {
        return Err(format!("the agents' run {}", driven.status).into());
    }
    if std::env::var_os("ORCHO_TEST_KEEP").is_some() {
        note(&format!("kept: {root}"));
        std::mem::forget(tmp);
        let tmp = tempfile::tempdir()?;
        return Ok(Some(Walked {
            ctl,
            repo,
            _tmp: tmp,
        }));
    }
    Ok(Some(Walked {
        ctl,
        repo,
        _tmp: tmp,
    }))
}

fn whole_run(agent: &Agent) -> Result {
    let Some(w) = walk(agent)? else {
        return Ok(());
    };
    // The agents worked in the run's worktree, never in the user's
    // checkout.
    let status = std::fs::read_to_string(w.ctl.join("checkout.status"))?;
    assert_eq!(status, "", "the user's checkout changed during the run");
    // Paused at plan approval, with the agent's plan.
    assert_eq!(w.code("start"), Some(4), "{}", w.said("start"));
    assert!(
        w.said("start")
            .contains("Make parse() return an empty list for empty input"),
        "{}",
        w.said("start")
    );
    assert_eq!(w.code("approve"), Some(0), "{}", w.said("approve"));
    // Implemented, reviewed read-only, accepted from the receipts: the run
    // waits at its delivery gate.
    assert_eq!(w.code("resume"), Some(4), "{}", w.said("resume"));
    assert!(
        w.said("resume").contains("release approved"),
        "{}",
        w.said("resume")
    );

    // The implementer's prompt held the task, the approved plan and the
    // approval's notes.
    let requests = w.requests()?;
    assert!(
        requests
            .iter()
            .all(|r| r["path"].as_str().is_some_and(|p| p.starts_with(agent.api))),
        "only the model API was asked: {requests:#?}"
    );
    let implement = requests
        .iter()
        .map(|r| r["body"].to_string())
        .find(|b| b.contains("# Your role: implement"))
        .ok_or("the implementer asked the model")?;
    assert!(
        implement.contains("Make parse() return [] for empty input"),
        "{implement}"
    );
    assert!(
        implement.contains("The approved plan (carry it out)"),
        "{implement}"
    );
    assert!(
        implement.contains("Return [] from parse() when the text is empty"),
        "{implement}"
    );
    assert!(implement.contains("keep it small"), "{implement}");

    // The evidence: the agent's output, its settings and transcript kept
    // as artifacts; its tokens added to the cost.
    let evidence: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(w.ctl.join("evidence.out")).unwrap_or_default(),
    )?;
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
    for expected in [
        format!("implement-r1-a1/{}", agent.result),
        "implement-r1-a1/transcript.jsonl".to_owned(),
        "review-r1-a1/transcript.jsonl".to_owned(),
    ] {
        assert!(artifacts.contains(&expected), "{expected} in {artifacts:?}");
    }
    if !agent.settings.is_empty() {
        let settings = format!("implement-r1-a1/{}", agent.settings);
        assert!(artifacts.contains(&settings), "{settings} in {artifacts:?}");
    }
    let tokens = evidence["cost"]["tokens"]["input"].as_u64().unwrap_or(0);
    assert!(
        tokens >= 300,
        "the agents' tokens are the run's cost: {evidence:#}"
    );
    // Said in words too, in the evidence and beside the run in its list.
    let said = format!("{tokens} in / ");
    for step in ["evidence_text", "runs"] {
        let text = std::fs::read_to_string(w.ctl.join(format!("{step}.out"))).unwrap_or_default();
        assert!(
            text.contains("cost: ") && text.contains(&said),
            "`orcho {step}` says the cost: {text}"
        );
    }
    // The review is read-only: its agent's hooks refused its write before
    // it ran, so nothing had to be taken back.
    let refused = requests
        .iter()
        .map(|r| r["body"].to_string())
        .filter(|b| b.contains("# Your role: review"))
        .any(|b| b.contains("REVIEW.md`: ask by rule"));
    assert!(
        refused,
        "the read-only rules refused the review's write before it ran"
    );
    let review = evidence["phases"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["phase"] == "review"))
        .ok_or("the review in the evidence")?;
    assert_eq!(review["verdict"], "approved", "{review:#}");
    // What the review approved with is its report, not an exit code.
    assert_eq!(
        review["summary"], "the change does what the plan says",
        "{review:#}"
    );

    // Delivered: the task's first line is the commit's subject, and the
    // commit holds the agent's edit and nothing of Orcho's.
    assert_eq!(w.code("decide"), Some(0), "{}", w.said("decide"));
    assert_eq!(w.code("deliver"), Some(0), "{}", w.said("deliver"));
    assert_eq!(
        w.git(&["log", "-1", "--format=%s"])?,
        "Make parse() return [] for empty input"
    );
    assert_eq!(
        w.git(&["show", "--name-only", "--format=", "HEAD"])?,
        "parse.py"
    );
    let parse = std::fs::read_to_string(w.repo.join("parse.py"))?;
    assert!(
        parse.contains("return text.split() if text else []"),
        "{parse}"
    );
    assert!(
        [".claude", ".codex", ".gemini", ".opencode"]
            .iter()
            .all(|dir| !w.repo.join(dir).exists()),
        "no agent settings in the user's checkout"
    );
    // The user's credentials reach the agent's attempt home as links,
    // never as copies in the store.
    let copied = files_under(&w.repo.join(".orcho"))
        .into_iter()
        .filter(|f| std::fs::read_to_string(f).is_ok_and(|text| text.contains(CREDENTIAL)))
        .collect::<Vec<_>>();
    assert!(
        copied.is_empty(),
        "a credential copied into the store: {copied:?}"
    );
    assert!(!w.repo.join("REVIEW.md").exists());
    Ok(())
}

#[test]
fn claude_code_runs_a_whole_run_from_task_to_delivery() -> Result {
    whole_run(&CLAUDE)
}

#[test]
fn codex_runs_a_whole_run_from_task_to_delivery() -> Result {
    whole_run(&CODEX)
}

#[test]
fn gemini_cli_runs_a_whole_run_from_task_to_delivery() -> Result {
    whole_run(&GEMINI)
}

#[test]
fn opencode_runs_a_whole_run_from_task_to_delivery() -> Result {
    whole_run(&OPENCODE)
}

/// One implement phase whose agent's hooks are switched off.
const UNGUARDED_DRIVER: &str = r#"
. "$COMMON"
export ANTHROPIC_BASE_URL="http://127.0.0.1:$port"
export GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$port"
codex_config "$CODEX_HOME"
opencode_config "$HOME/.config/opencode"
# Codex's hooks off, in its own configuration (its `[features]` table).
if [ "$HOOKS_OFF" = 1 ]; then echo 'hooks = false' >>"$CODEX_HOME/config.toml"; fi
cd "$REPO"
step() { name=$1; shift; "$ORCHO" "$@" >"$CTL/$name.out" 2>"$CTL/$name.err" </dev/null; echo $? >"$CTL/$name.code"; }
step start run --no-interactive --task "$TASK"
step evidence evidence latest --json
step handoff handoff show latest --json
"#;

fn implement_only(agent: &Agent) -> String {
    format!(
        "\
schema: 1
name: agents
phases:
  - name: implement
    role: implement
    runner: {runner}
    handoff: {{ pause: on_rejected }}
verification:
  commands:
    - name: test
      argv: [python3, -c, \"from parse import parse; assert parse('') == []\"]
  required: [test]
supervision:
  plan_approval: false
",
        runner = agent.runner
    )
}

/// The implement phase of the walk's evidence.
fn implement_phase(w: &Walked) -> Result<serde_json::Value> {
    let evidence: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(w.ctl.join("evidence.out")).unwrap_or_default(),
    )
    .map_err(|e| format!("{e}: {}", w.said("evidence")))?;
    evidence["phases"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["phase"] == "implement"))
        .cloned()
        .ok_or_else(|| format!("the implement phase in {evidence:#}").into())
}

/// An agent whose hooks are off does its work and proves it with `orcho
/// verify`, but its Stop guard never answered: the attempt is rejected,
/// saying so; with its hooks on, the same attempt is approved.
fn unguarded(agent: &Agent) -> Result {
    for hooks_off in [true, false] {
        let Some(w) = walk_with(&implement_only(agent), UNGUARDED_DRIVER, hooks_off)? else {
            return Ok(());
        };
        let implement = implement_phase(&w)?;
        if hooks_off {
            assert_eq!(
                implement["verdict"],
                "rejected",
                "{implement:#}\n{}",
                w.said("start")
            );
            // The handoff it paused at says why.
            let handoff: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(w.ctl.join("handoff.out")).unwrap_or_default(),
            )
            .map_err(|e| format!("{e}: {}", w.said("handoff")))?;
            let guard = handoff["findings"]
                .as_array()
                .and_then(|f| f.iter().find(|f| f["source"] == "orcho: the stop guard"))
                .ok_or_else(|| format!("no stop-guard finding: {handoff:#}"))?;
            let detail = guard["detail"].as_str().unwrap_or_default();
            assert!(
                detail.contains("ended without its Stop guard answering"),
                "{detail}"
            );
            assert!(
                w.said("start")
                    .contains("ended without proving its work to its Stop guard"),
                "{}",
                w.said("start")
            );
        } else {
            assert_eq!(
                implement["findings"],
                0,
                "{implement:#}\n{}",
                w.said("start")
            );
            assert_eq!(
                implement["verdict"],
                "approved",
                "{implement:#}\n{}",
                w.said("start")
            );
        }
    }
    Ok(())
}

#[test]
fn claude_code_with_its_hooks_off_is_rejected_for_it() -> Result {
    unguarded(&CLAUDE)
}

#[test]
fn codex_with_its_hooks_off_is_rejected_for_it() -> Result {
    unguarded(&CODEX)
}

/// Gemini CLI's hooks for a phase are in a home of the attempt's own,
/// switched on there: switching hooks off in `~/.gemini/settings.json`
/// leaves the phase's Stop guard answering, and the attempt approved.
#[test]
fn gemini_cli_keeps_its_phase_hooks_when_the_user_switches_hooks_off() -> Result {
    let Some(w) = walk_with(&implement_only(&GEMINI), UNGUARDED_DRIVER, true)? else {
        return Ok(());
    };
    implement_approved(&w)
}

/// The walk's implement phase was approved.
fn implement_approved(w: &Walked) -> Result {
    let implement = implement_phase(w)?;
    assert_eq!(
        implement["verdict"],
        "approved",
        "{implement:#}\n{}",
        w.said("start")
    );
    Ok(())
}

/// opencode's stop no plugin can refuse, and `opencode run` ends at the
/// first idle: Orcho drives it, asks the Stop guard when it ends, and goes
/// on in the same session with the guard's reason. An implementer that
/// stops before any work is refused, does the work, proves it, and its
/// attempt is approved.
#[test]
fn opencode_goes_on_in_the_same_session_when_its_stop_is_refused() -> Result {
    let driver = UNGUARDED_DRIVER.replace("--task \"$TASK\"", "--task \"$TASK (stop first)\"");
    let Some(w) = walk_with(&implement_only(&OPENCODE), &driver, false)? else {
        return Ok(());
    };
    implement_approved(&w)?;
    // The refusal reached the model as the next prompt, in the session the
    // first round started.
    let requests = w.requests()?;
    let refused = requests
        .iter()
        .map(|r| r["body"].to_string())
        .any(|b| b.contains("done, I think") && b.contains("so do not stop yet"));
    assert!(refused, "the stop guard's reason was the next prompt");
    let events = files_under(&w.repo.join(".orcho"))
        .into_iter()
        .find(|f| {
            f.as_str()
                .ends_with("implement-r1-a1/opencode-events.jsonl")
        })
        .ok_or("the attempt's events are kept")?;
    let sessions: std::collections::BTreeSet<String> = std::fs::read_to_string(&events)?
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|e| e["sessionID"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(sessions.len(), 1, "one session: {sessions:?}");
    let rounds = std::fs::read_to_string(&events)?
        .lines()
        .filter(|l| l.contains("\"type\":\"step_start\""))
        .count();
    assert!(rounds >= 2, "more than one round: {rounds}");
    Ok(())
}
