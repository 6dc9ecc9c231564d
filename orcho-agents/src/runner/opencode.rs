//! opencode: `opencode run --format json` in the run's checkout, the prompt
//! on standard input, and Orcho's plugin loaded for the attempt only (a
//! copy in its artifacts, named by `OPENCODE_CONFIG_CONTENT`; the user's
//! settings and the checkout are left as they are).
//!
//! opencode has no stop a plugin can refuse, and `opencode run` ends at the
//! session's first idle. So the attempt is [driven](drive): `orcho hook
//! opencode --drive` runs `opencode run`, asks the Stop guard once it ends,
//! and while the guard refuses, continues the same session (`--session`)
//! with the guard's reason as the next prompt. The plugin answers tool
//! calls, shell results and the session's start, and leaves idle sessions
//! to the driver (`ORCHO_OPENCODE_DRIVEN`). After each round the session
//! is exported (`opencode export`) as the attempt's transcript, one message
//! a line.

use std::io::{BufRead as _, Write as _};

use camino::Utf8Path;
use orcho::{
    core::{Cost, Tokens, Usd},
    profile::{Agent, RunnerSpec},
};
use serde_json::{Value, json};

use super::{AgentReport, AttemptPaths, HookCommand, Launch, LaunchError, RunnerAgent};
use crate::hook::{self, Answer};

/// opencode's row of [`RUNNERS`](super::RUNNERS).
pub(super) const RUNNER: RunnerAgent = RunnerAgent {
    agent: Agent::Opencode,
    title: "opencode",
    hooks: hook::Agent::Opencode,
    program_var: "ORCHO_OPENCODE",
    program: "opencode",
    package: "opencode-ai",
    launch,
    finish,
    more_events: &[],
};

/// The plugin's copy, in the attempt's artifacts.
const PLUGIN: &str = "opencode-plugin/orcho.js";

/// The prompt the driver sends first, in the attempt's artifacts.
const PROMPT: &str = "opencode-prompt.md";

/// What `opencode run --format json` printed, every round, in the
/// attempt's artifacts.
pub const EVENTS: &str = "opencode-events.jsonl";

/// The session, one message a line, in the attempt's artifacts.
pub const TRANSCRIPT: &str = "transcript.jsonl";

/// Set for opencode by the driver: the plugin leaves idle sessions to it.
pub const DRIVEN_ENV: &str = "ORCHO_OPENCODE_DRIVEN";

/// The hook's command line, as a JSON array of words, for the plugin.
pub const HOOK_ENV: &str = "ORCHO_HOOK";

/// The most rounds one attempt is driven: the Stop guard bounds its own
/// refusals in a row (`supervision.max_stop_blocks`) long before this.
const MAX_ROUNDS: usize = 64;

/// Stops refused in a row because the guard itself could not answer, as
/// the plugin bounds them.
const MAX_FAILURES: usize = 3;

pub(super) fn launch(
    program: &Utf8Path,
    spec: &RunnerSpec,
    prompt: &str,
    hook: &HookCommand,
    paths: &AttemptPaths<'_>,
) -> Result<Launch, LaunchError> {
    if spec.args.iter().any(|a| a == "--pure") {
        return Err(LaunchError::Failed(
            "opencode: `--pure` in the runner's `args` starts it without plugins, Orcho's among \
             them, and the phase's tool calls would go unchecked; leave it out"
                .to_owned(),
        ));
    }
    let plugin = paths.artifacts.join(PLUGIN);
    if let Some(dir) = plugin.parent() {
        orcho::core::fs::create_dir_all(dir)?;
    }
    let hook::Layout::Plugin { text } = hook::Agent::Opencode.dialect().layout else {
        return Err(LaunchError::Failed(
            "opencode's hooks are not a plugin".to_owned(),
        ));
    };
    orcho::core::fs::write_atomic(&plugin, text.as_bytes())?;
    let prompt_file = paths.artifacts.join(PROMPT);
    orcho::core::fs::write_atomic(&prompt_file, prompt.as_bytes())?;
    // The user's inline configuration, when they give one, with the
    // plugin added to its list.
    let mut config = crate::env_text("OPENCODE_CONFIG_CONTENT")
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    let url = format!("file://{plugin}");
    match config["plugin"].as_array_mut() {
        Some(list) => list.push(json!(url)),
        None => config["plugin"] = json!([url]),
    }
    let mut argv = hook.words.clone();
    argv.extend(["--drive".to_owned(), prompt_file.to_string()]);
    if hook.guard_stops {
        argv.push("--guard-stops".to_owned());
    }
    argv.extend([
        "--".to_owned(),
        program.to_string(),
        "run".to_owned(),
        "--format".to_owned(),
        "json".to_owned(),
        // Tool calls go through; Orcho's plugin applies the phase's rules
        // to each before it runs (a refusal is the tool's result).
        "--auto".to_owned(),
        // In a git worktree, opencode otherwise works in the repository's
        // main checkout: the user's, not the run's.
        "--dir".to_owned(),
        paths.checkout.to_string(),
    ]);
    super::model_and_args(&mut argv, spec, "--model");
    Ok(Launch {
        agent: Agent::Opencode,
        argv,
        envs: vec![
            ("OPENCODE_CONFIG_CONTENT".to_owned(), config.to_string()),
            (HOOK_ENV.to_owned(), serde_json::to_string(&hook.words)?),
            (DRIVEN_ENV.to_owned(), "1".to_owned()),
        ],
        guard_stops: false,
    })
}

/// Reads the events every round of `opencode run --format json` printed:
/// the last text, the tokens and money of every step, an error. An
/// attempt stopped before the driver kept its transcript (timed out,
/// interrupted) has its session exported now.
pub(super) fn finish(out: &str, paths: &AttemptPaths<'_>) -> AgentReport {
    let _ = orcho::core::fs::write_atomic(&paths.artifacts.join(EVENTS), out.as_bytes());
    let mut report = AgentReport::default();
    let (mut input, mut output, mut usd) = (0, 0, 0.0);
    let mut session = None;
    for event in out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
    {
        if session.is_none() {
            session = event["sessionID"]
                .as_str()
                .filter(|id| safe_id(id))
                .map(str::to_owned);
        }
        let part = &event["part"];
        match event["type"].as_str() {
            Some("text") => {
                if let Some(text) = part["text"].as_str().filter(|t| !t.trim().is_empty()) {
                    report.result = Some(text.to_owned());
                }
            }
            Some("step_finish") => {
                let tokens = &part["tokens"];
                let n = |v: &Value| v.as_u64().unwrap_or(0);
                input += n(&tokens["input"])
                    + n(&tokens["cache"]["read"])
                    + n(&tokens["cache"]["write"]);
                output += n(&tokens["output"]) + n(&tokens["reasoning"]);
                usd += part["cost"].as_f64().unwrap_or(0.0);
            }
            Some("error") => {
                let error = &event["error"];
                let message = error["data"]["message"]
                    .as_str()
                    .or_else(|| error["message"].as_str())
                    .or_else(|| error["name"].as_str())
                    .unwrap_or("no message");
                report.failed = Some(format!(
                    "opencode could not get an answer from its model: {message}"
                ));
            }
            _ => {}
        }
    }
    let mut cost = Cost::default();
    if input + output > 0 {
        cost = cost.with_tokens(Tokens::new(input, output));
    }
    if usd > 0.0
        && let Ok(usd) = Usd::new(usd)
    {
        cost = cost.with_usd(usd);
    }
    report.cost = cost;
    if let Some(id) = session
        && !paths.artifacts.join(TRANSCRIPT).is_file()
        && let Ok(program) = RUNNER.find()
    {
        export(program.as_str(), &id, paths.artifacts);
    }
    report
}

/// How the driver asks the Stop guard: the session, and whether its last
/// stop was refused.
pub type AskStop<'a> = dyn FnMut(&str, bool) -> Answer + 'a;

/// Why a driven attempt could not go on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DriveError {
    /// The program could not start.
    #[error("`{program}` cannot start: {source}")]
    Start {
        /// The program.
        program: String,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
    /// The prompt could not be read.
    #[error("the prompt `{path}` cannot be read: {source}")]
    Prompt {
        /// The file.
        path: camino::Utf8PathBuf,
        /// Why not.
        #[source]
        source: std::io::Error,
    },
    /// No program was given.
    #[error("no program to drive: give it after `--`")]
    NoProgram,
}

/// Drives `run` (`opencode run --format json …`) in the current directory
/// until its session may stop: the prompt in `prompt_file` first; after each
/// round, when `guard_stops`, `ask_stop` answers for the session, and a
/// refused stop's reason is the next round's prompt, in the same session.
/// What each round prints goes to this process's standard output; after
/// each round the session is exported beside the prompt file (the
/// attempt's artifacts) as [`TRANSCRIPT`]. The last round's exit code.
///
/// # Errors
///
/// The program cannot start, or the prompt cannot be read.
pub fn drive(
    run: &[String],
    prompt_file: &Utf8Path,
    guard_stops: bool,
    ask_stop: &mut AskStop<'_>,
) -> Result<i32, DriveError> {
    let program = run.first().ok_or(DriveError::NoProgram)?;
    let mut text = std::fs::read_to_string(prompt_file).map_err(|source| DriveError::Prompt {
        path: prompt_file.to_owned(),
        source,
    })?;
    let mut session: Option<String> = None;
    let mut refused = false;
    let mut failures = 0;
    for _ in 0..MAX_ROUNDS {
        let mut argv = run.to_vec();
        if let Some(id) = &session {
            argv.extend(["--session".to_owned(), id.clone()]);
        }
        let (code, id) = round(&argv, &text)?;
        if session.is_none() {
            session = id;
        }
        let Some(id) = session.as_deref() else {
            // Nothing started that could go on.
            return Ok(code);
        };
        if let Some(artifacts) = prompt_file.parent() {
            export(program, id, artifacts);
        }
        if code != 0 || !guard_stops {
            return Ok(code);
        }
        match ask_stop(id, refused) {
            Answer::BlockStop { reason } => {
                refused = true;
                failures = 0;
                text = reason;
            }
            Answer::FailSafe { message } if failures < MAX_FAILURES => {
                failures += 1;
                text = message;
            }
            _ => return Ok(code),
        }
    }
    Ok(0)
}

/// One `opencode run`: `text` on its standard input, what it prints passed
/// on; its exit code and the session it named.
fn round(argv: &[String], text: &str) -> Result<(i32, Option<String>), DriveError> {
    let program = &argv[0];
    #[expect(
        clippy::disallowed_methods,
        reason = "the driver is the phase's own process: the phase's tree around it bounds, \
                  groups and stops what it starts"
    )]
    let mut child = std::process::Command::new(program)
        .args(&argv[1..])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|source| DriveError::Start {
            program: program.clone(),
            source,
        })?;
    if let Some(mut stdin) = child.stdin.take() {
        // It reads its prompt to the end before it starts.
        let _ = stdin.write_all(text.as_bytes());
    }
    let mut session = None;
    if let Some(stdout) = child.stdout.take() {
        // Passed on as bytes, line by line, to the end: a line that is not
        // UTF-8 neither stops the reading (the program would block on a
        // full pipe) nor is changed.
        let mut out = std::io::stdout().lock();
        let mut reader = std::io::BufReader::new(stdout);
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
            if session.is_none() {
                session = serde_json::from_slice::<Value>(line.trim_ascii_end())
                    .ok()
                    .and_then(|v| v["sessionID"].as_str().map(str::to_owned))
                    .filter(|id| safe_id(id));
            }
            let _ = out.write_all(&line);
            let _ = out.flush();
            line.clear();
        }
    }
    let status = child.wait().map_err(|source| DriveError::Start {
        program: program.clone(),
        source,
    })?;
    Ok((status.code().unwrap_or(1), session))
}

/// Whether `id` is a session id as opencode writes them (never an option).
fn safe_id(id: &str) -> bool {
    !id.is_empty()
        && !id.starts_with('-')
        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Keeps the session as the attempt's transcript: `opencode export`'s
/// messages, one a line. Best effort.
fn export(program: &str, session: &str, artifacts: &Utf8Path) {
    #[expect(
        clippy::disallowed_methods,
        reason = "the driver is the phase's own process: the phase's tree around it bounds, \
                  groups and stops what it starts"
    )]
    let exported = std::process::Command::new(program)
        // Without plugins: only the stored session is read.
        .args(["export", "--pure", session])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    let Ok(exported) = exported else { return };
    let Ok(doc) = serde_json::from_slice::<Value>(&exported.stdout) else {
        return;
    };
    let mut lines = String::new();
    for message in doc["messages"].as_array().into_iter().flatten() {
        lines.push_str(&message.to_string());
        lines.push('\n');
    }
    if !lines.is_empty() {
        let _ = orcho::core::fs::write_atomic(&artifacts.join(TRANSCRIPT), lines.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use camino::Utf8PathBuf;

    use super::*;

    /// An attempt whose every place is `root`.
    fn paths_at(root: &Utf8Path) -> AttemptPaths<'_> {
        AttemptPaths {
            checkout: root,
            artifacts: root,
            output: root,
            store: root,
            run_dir: root,
        }
    }

    #[test]
    fn the_report_adds_every_steps_tokens_and_keeps_the_last_text() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::try_from(dir.path().to_owned()).unwrap();
        let paths = paths_at(&root);
        let out = "\
{\"type\":\"step_start\",\"sessionID\":\"ses_1\",\"part\":{}}
{\"type\":\"text\",\"sessionID\":\"ses_1\",\"part\":{\"text\":\"first\"}}
{\"type\":\"step_finish\",\"part\":{\"tokens\":{\"input\":100,\"output\":20,\"reasoning\":5,\"cache\":{\"read\":10,\"write\":1}},\"cost\":0.25}}
not json
{\"type\":\"text\",\"part\":{\"text\":\"done\"}}
{\"type\":\"step_finish\",\"part\":{\"tokens\":{\"input\":7,\"output\":3},\"cost\":0.5}}
";
        let report = finish(out, &paths);
        assert_eq!(report.result.as_deref(), Some("done"));
        assert_eq!(
            report.cost.tokens.map(|t| (t.input, t.output)),
            Some((118, 28))
        );
        assert_eq!(report.cost.usd.map(Usd::get), Some(0.75));
        assert!(report.failed.is_none());
        assert!(root.join(EVENTS).is_file());

        let failed = finish(
            "{\"type\":\"error\",\"error\":{\"name\":\"APIError\",\"data\":{\"message\":\"quota\"}}}",
            &paths,
        );
        assert!(failed.failed.unwrap().contains("quota"));
    }

    fn hook_command(guard_stops: bool) -> HookCommand {
        let words: Vec<String> = ["/bin/orcho", "hook", "opencode", "--profile", "p.yaml"]
            .map(str::to_owned)
            .into();
        HookCommand {
            exe: "/bin/orcho".to_owned(),
            line: words.join(" "),
            words,
            guard_stops,
            more_events: &[],
            ask_timeout: std::time::Duration::from_secs(60),
        }
    }

    #[test]
    fn the_launch_is_orchos_driver_around_opencode_run_with_the_plugin_of_the_attempt() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::try_from(dir.path().to_owned()).unwrap();
        let paths = paths_at(&root);
        let mut spec = RunnerSpec::new(Agent::Opencode);
        spec.model = Some("scripted/scripted".to_owned());
        let program = Utf8Path::new("/bin/opencode");
        let launch = launch(program, &spec, "the prompt", &hook_command(true), &paths).unwrap();
        assert_eq!(
            launch.argv.join(" "),
            format!(
                "/bin/orcho hook opencode --profile p.yaml --drive {root}/{PROMPT} --guard-stops \
                 -- /bin/opencode run --format json --auto --dir {root} --model scripted/scripted"
            )
        );
        assert_eq!(
            std::fs::read_to_string(root.join(PROMPT)).unwrap(),
            "the prompt"
        );
        let plugin = std::fs::read_to_string(root.join(PLUGIN)).unwrap();
        assert!(
            plugin.contains("ORCHO_OPENCODE_DRIVEN"),
            "the plugin as shipped"
        );
        let env = |name: &str| {
            launch
                .envs
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
                .unwrap()
        };
        let config: Value = serde_json::from_str(&env("OPENCODE_CONFIG_CONTENT")).unwrap();
        assert_eq!(config["plugin"], json!([format!("file://{root}/{PLUGIN}")]));
        let words: Vec<String> = serde_json::from_str(&env(HOOK_ENV)).unwrap();
        assert_eq!(words, hook_command(true).words);
        assert_eq!(env(DRIVEN_ENV), "1");

        // A read-only phase's stops are not guarded.
        let launch = launch_of(&spec, &hook_command(false), &paths);
        assert!(!launch.unwrap().argv.contains(&"--guard-stops".to_owned()));
        // Without plugins, the phase's tool calls would go unchecked.
        spec.args = vec!["--pure".to_owned()];
        let refused = launch_of(&spec, &hook_command(true), &paths).unwrap_err();
        assert!(refused.to_string().contains("`--pure`"), "{refused}");
    }

    fn launch_of(
        spec: &RunnerSpec,
        hook: &HookCommand,
        paths: &AttemptPaths<'_>,
    ) -> Result<Launch, LaunchError> {
        launch(Utf8Path::new("/bin/opencode"), spec, "p", hook, paths)
    }

    #[test]
    fn a_session_id_is_never_an_option() {
        assert!(safe_id("ses_ddc5e9755ffekmHMe5r7RVtV2V"));
        assert!(!safe_id("--pure"));
        assert!(!safe_id("ses 1"));
        assert!(!safe_id(""));
    }

    /// A stand-in for `opencode run`: prints a line that is not UTF-8, then
    /// a session's events for the prompt it reads, and records what it was
    /// asked.
    fn fake_opencode(dir: &Utf8Path) -> Utf8PathBuf {
        let script = dir.join("opencode");
        let log = dir.join("asked");
        std::fs::create_dir_all(dir).unwrap();
        orcho::core::fs::write_atomic(
            &script,
            format!(
                "#!/bin/sh\n\
                 if [ \"$1\" = export ]; then echo '{{\"messages\":[{{\"n\":1}},{{\"n\":2}}]}}'; exit 0; fi\n\
                 prompt=$(cat)\n\
                 printf '%s | %s\\n' \"$*\" \"$prompt\" >> {log}\n\
                 printf '\\377\\376 not text\\n'\n\
                 echo '{{\"type\":\"text\",\"sessionID\":\"ses_a\",\"part\":{{\"text\":\"ok\"}}}}'\n"
            )
            .as_bytes(),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        script
    }

    #[test]
    fn a_refused_stop_goes_on_in_the_same_session_until_the_guard_lets_it_stop() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::try_from(dir.path().to_owned()).unwrap();
        let program = fake_opencode(&root);
        let prompt = root.join("prompt.md");
        orcho::core::fs::write_atomic(&prompt, b"do the task").unwrap();
        let run = vec![program.to_string(), "run".to_owned()];
        let mut asked = Vec::new();
        let mut ask = |session: &str, active: bool| {
            asked.push((session.to_owned(), active));
            if asked.len() < 3 {
                Answer::BlockStop {
                    reason: format!("prove it ({})", asked.len()),
                }
            } else {
                Answer::Silent
            }
        };
        let code = drive(&run, &prompt, true, &mut ask).unwrap();
        assert_eq!(code, 0);
        assert_eq!(
            asked,
            [
                ("ses_a".to_owned(), false),
                ("ses_a".to_owned(), true),
                ("ses_a".to_owned(), true)
            ]
        );
        let rounds = std::fs::read_to_string(root.join("asked")).unwrap();
        assert_eq!(
            rounds,
            "run | do the task\n\
             run --session ses_a | prove it (1)\n\
             run --session ses_a | prove it (2)\n"
        );
        assert_eq!(
            std::fs::read_to_string(root.join(TRANSCRIPT)).unwrap(),
            "{\"n\":1}\n{\"n\":2}\n"
        );
    }

    #[test]
    fn an_unguarded_attempt_is_one_round_and_a_guard_that_cannot_answer_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::try_from(dir.path().to_owned()).unwrap();
        let program = fake_opencode(&root);
        let prompt = root.join("prompt.md");
        orcho::core::fs::write_atomic(&prompt, b"review").unwrap();
        let run = vec![program.to_string(), "run".to_owned()];
        let mut never = |_: &str, _: bool| -> Answer { unreachable!("not guarded") };
        assert_eq!(drive(&run, &prompt, false, &mut never).unwrap(), 0);
        let mut failing = |_: &str, _: bool| Answer::FailSafe {
            message: "the profile does not load".to_owned(),
        };
        assert_eq!(drive(&run, &prompt, true, &mut failing).unwrap(), 0);
        let rounds = std::fs::read_to_string(root.join("asked")).unwrap();
        assert_eq!(rounds.lines().count(), 1 + 1 + MAX_FAILURES, "{rounds}");
        assert!(matches!(
            drive(&[], &prompt, true, &mut failing),
            Err(DriveError::NoProgram)
        ));
    }
}
