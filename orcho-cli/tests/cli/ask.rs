//! An agent's permission question, end to end through the real binary: a
//! phase does what an agent's hook does (`orcho hook claude-code` with a
//! tool call the rules answer `ask`), the question waits in the inbox,
//! and a person's decision (or nobody's, in time) is what the hook
//! answers.

use crate::{
    Result,
    support::{Repo, WAIT, finish},
};

/// A profile whose rules allow everything but `git push`, which they ask
/// about; its agents wait `timeout` for a person.
fn profile(timeout: &str) -> String {
    format!(
        "\
schema: 1
name: cli-ask
phases:
  - name: implement
    role: implement
permissions:
  rules:
    - {{permission: '*', pattern: '*', action: allow}}
    - {{permission: bash, pattern: 'git push*', action: ask}}
  ask_timeout: {timeout}
supervision:
  plan_approval: false
"
    )
}

/// The phase: in the environment an agent has (a notifier's secret in
/// it), what Claude Code's PreToolUse hook sends for `command`, answered
/// by `orcho hook` with `hook_args` and the store a runner gives its
/// agent's hooks (the run's own directory); the answer is kept, and the
/// phase passes when it allows.
fn script(command: &str, hook_args: &str) -> String {
    format!(
        "#!/bin/sh\n\
         doc='{{\"session_id\":\"s\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\
         \"tool_input\":{{\"command\":\"{command}\"}},\"cwd\":\"'\"$PWD\"'\"}}'\n\
         export HOOK_SECRET={secret}\n\
         printf '%s' \"$doc\" | '{orcho}' --store @CTL@/../repo/.orcho/runs/$ORCHO_RUN hook claude-code \
         {hook_args} >@CTL@/answer.json 2>@CTL@/answer.err\n\
         grep -q '\"permissionDecision\": *\"allow\"' @CTL@/answer.json && echo ran > ran.txt\n",
        orcho = env!("CARGO_BIN_EXE_orcho"),
        secret = SECRET,
    )
}

/// A checkout whose phase asks about `git push origin main` as an agent
/// Orcho runs does, its hook given `wait` seconds.
pub(crate) fn asking_repo(wait: u64) -> Result<Repo> {
    let script = script("git push origin main", &format!("--ask-wait {wait}"));
    Repo::with_files(&profile("2m"), &[("ask.sh", &script)])
}

/// Waits for the permission question of the inbox; its document.
fn question(repo: &Repo) -> Result<serde_json::Value> {
    let deadline = std::time::Instant::now() + WAIT;
    while std::time::Instant::now() < deadline {
        let inbox = repo.orcho(&["inbox", "--json"])?.json()?;
        if let Some(asked) = inbox["pending"]
            .as_array()
            .and_then(|p| p.iter().find(|p| p["kind"] == "permission"))
        {
            return Ok(asked.clone());
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Err("no permission question in the inbox".into())
}

pub(crate) fn answer(repo: &Repo) -> Result<serde_json::Value> {
    Ok(serde_json::from_str(&std::fs::read_to_string(
        repo.ctl("answer.json"),
    )?)?)
}

const SECRET: &str = "a-long-test-secret-0123456789";

#[test]
fn a_question_waits_in_the_inbox_and_a_persons_allow_lets_the_tool_call_run() -> Result {
    let repo = asking_repo(120)?;
    // A webhook is told of the question, as of any point.
    let receiver = orcho_notify::testing::Receiver::start(SECRET)?;
    if let Some(receiver) = &receiver {
        let url = receiver.url("/ok");
        let args = [
            "notify",
            "add",
            "team",
            "--webhook",
            url.as_str(),
            "--secret-env",
            "HOOK_SECRET",
        ];
        finish(repo.spawn_with(&[("HOOK_SECRET", SECRET)], &args)?, WAIT)?.expect_code(0);
    }
    let child = repo.spawn_with(
        &[("HOOK_SECRET", SECRET)],
        &[
            "run",
            "--phase",
            "implement=./ask.sh",
            "--no-interactive",
            "--json",
        ],
    )?;
    let asked = question(&repo)?;
    if let Some(receiver) = &receiver {
        let got = receiver.wait_for(1, std::time::Duration::from_secs(20))?;
        let body = &got[0]["body"];
        assert_eq!(got[0]["signed"], true, "{body}");
        assert_eq!(body["event"], "point_opened", "{body}");
        assert_eq!(body["point"]["kind"], "permission", "{body}");
        assert_eq!(body["point"]["id"], "ask-0001", "{body}");
        assert!(
            body["text"]
                .as_str()
                .is_some_and(|t| t.contains("asks to use Bash on `git push origin main`")),
            "{body}"
        );
    }
    let run = asked["run"].as_str().ok_or("run")?.to_owned();
    assert_eq!(asked["phase"], "implement", "{asked}");
    assert_eq!(
        asked["trigger"], "ask Bash `git push origin main`",
        "{asked}"
    );
    assert_eq!(
        asked["available_actions"],
        serde_json::json!(["allow", "deny"])
    );
    // Its view, as every host shows it.
    let shown = repo.orcho(&["decide", &run, "--json"])?.json()?;
    assert_eq!(shown["kind"], "permission", "{shown}");
    assert_eq!(shown["id"], "ask-0001", "{shown}");
    let headline = shown["headline"].as_str().unwrap_or_default();
    assert!(
        headline.contains("claude-code in `implement` asks to use Bash on `git push origin main`"),
        "{headline}"
    );
    assert!(headline.contains("within 2 min"), "{headline}");
    let text = repo.orcho(&["inbox"])?;
    assert!(
        text.stdout.contains("ask Bash `git push origin main`"),
        "{text}"
    );

    // An agent may not answer its own question.
    let inside = repo.orcho_in(
        ".",
        &[("CLAUDECODE", "1")],
        &["permission", "decide", &run, "allow"],
    )?;
    inside.expect_code(1);
    assert!(inside.stderr.contains("does not decide"), "{inside}");
    // A slip names what reads.
    let slip = repo.orcho(&["permission", "decide", &run, "alow"])?;
    slip.expect_code(2);
    assert!(slip.stderr.contains("allow"), "{slip}");

    let decided = repo.orcho(&[
        "permission",
        "decide",
        &run,
        "allow",
        "--note",
        "fine, once",
    ])?;
    decided.expect_code(0);
    let out = finish(child, WAIT)?;
    out.expect_code(4);
    assert_eq!(out.json()?["awaiting"], "delivery", "{out}");
    let answered = answer(&repo)?;
    let hook = &answered["hookSpecificOutput"];
    assert_eq!(hook["permissionDecision"], "allow", "{answered}");
    let reason = hook["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default();
    assert!(
        reason.contains("allowed it (permission question ask-0001"),
        "{reason}"
    );
    assert!(reason.contains("fine, once"), "{reason}");
    // Nothing waits any more; the record says who decided.
    let inbox = repo.orcho(&["inbox", "--json"])?.json()?;
    assert!(!inbox.to_string().contains("\"permission\""), "{inbox}");
    let record = std::fs::read_to_string(repo.run_dir(&run).join("decisions/ask-0001.json"))?;
    assert!(record.contains("\"decided_by\": \"operator\""), "{record}");
    // The same decision again replays; another conflicts.
    repo.orcho(&[
        "permission",
        "decide",
        &run,
        "allow",
        "--note",
        "fine, once",
    ])?
    .expect_code(0);
    repo.orcho(&["permission", "decide", &run, "deny"])?
        .expect_code(6);
    Ok(())
}

#[test]
fn a_deny_is_what_the_agent_reads_and_nobody_answering_in_time_denies() -> Result {
    // A person denies: the hook refuses the call with their note.
    let repo = asking_repo(120)?;
    let child = repo.spawn(&[
        "run",
        "--phase",
        "implement=./ask.sh",
        "--no-interactive",
        "--json",
    ])?;
    let run = question(&repo)?["run"].as_str().ok_or("run")?.to_owned();
    repo.orcho(&[
        "decide",
        &run,
        "deny",
        "--note",
        "push from CI, not from here",
    ])?
    .expect_code(0);
    let out = finish(child, WAIT)?;
    // The phase failed (its command was refused): the run pauses or ends,
    // and is never delivered.
    assert_ne!(out.code(), Some(0), "{out}");
    let hook = answer(&repo)?["hookSpecificOutput"].clone();
    assert_eq!(hook["permissionDecision"], "deny", "{hook}");
    assert!(
        hook["permissionDecisionReason"]
            .as_str()
            .is_some_and(|r| r.contains("denied it") && r.contains("push from CI, not from here")),
        "{hook}"
    );

    // Nobody answers within the profile's bound: denied, and said so.
    let repo = asking_repo(1)?;
    let out = repo.orcho(&[
        "run",
        "--phase",
        "implement=./ask.sh",
        "--no-interactive",
        "--json",
    ])?;
    assert_ne!(out.code(), Some(0), "{out}");
    let hook = answer(&repo)?["hookSpecificOutput"].clone();
    assert_eq!(hook["permissionDecision"], "deny", "{hook}");
    let reason = hook["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default();
    assert!(
        reason.contains("nobody answered within 1 s: denied"),
        "{reason}"
    );
    let run = crate::support::run_id(&out.json()?)?;
    // A person's answer after that changes nothing the agent was told.
    repo.orcho(&["permission", "decide", &run, "allow"])?
        .expect_code(6);
    let record = std::fs::read_to_string(repo.run_dir(&run).join("decisions/ask-0001.json"))?;
    assert!(record.contains("nobody answered in time"), "{record}");
    Ok(())
}

#[test]
fn a_read_only_preset_and_an_agents_own_hooks_refuse_an_ask_without_a_question() -> Result {
    // The hooks of a read-only phase are given the preset on their
    // command line; it asks about every command it does not know. An
    // agent's own hooks (no `--ask-wait`) may be cut short by the agent,
    // which would let the call through: they never wait either.
    for hook_args in ["--permissions read-only --ask-wait 120", ""] {
        let command = if hook_args.is_empty() {
            "git push origin main"
        } else {
            "make lint"
        };
        let script = script(command, hook_args);
        let repo = Repo::with_files(&profile("2m"), &[("ask.sh", &script)])?;
        let started = std::time::Instant::now();
        let out = repo.orcho(&[
            "run",
            "--phase",
            "implement=./ask.sh",
            "--no-interactive",
            "--json",
        ])?;
        assert!(out.code().is_some(), "{out}");
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
        let hook = answer(&repo)?["hookSpecificOutput"].clone();
        assert_eq!(hook["permissionDecision"], "ask", "{hook}");
        assert!(
            hook["permissionDecisionReason"]
                .as_str()
                .is_some_and(|r| r.contains("in a session nobody watches it is refused")),
            "{hook}"
        );
        let run = crate::support::run_id(&out.json()?)?;
        assert!(!repo.run_dir(&run).join("asks").exists());
    }
    Ok(())
}

#[test]
fn two_open_questions_are_decided_by_name_and_shown_without_control_characters() -> Result {
    // Two agents of the phase ask at once; one hides a control sequence in
    // its command.
    let one = script("git push origin main", "--ask-wait 120").replace("answer.", "one.");
    let two = script("git push --force\\u001b[2K origin main", "--ask-wait 120")
        .replace("answer.", "two.");
    // The phase fails when either of its agent's commands was denied.
    let both = "#!/bin/sh\n./one.sh & one=$!\n./two.sh & two=$!\nwait $one && wait $two\n";
    let repo = Repo::with_files(
        &profile("2m"),
        &[("one.sh", &one), ("two.sh", &two), ("ask.sh", both)],
    )?;
    let child = repo.spawn(&[
        "run",
        "--phase",
        "implement=./ask.sh",
        "--no-interactive",
        "--json",
    ])?;
    let deadline = std::time::Instant::now() + WAIT;
    let run = loop {
        let inbox = repo
            .orcho(&["inbox", "--kind", "permission", "--json"])?
            .json()?;
        if inbox["total"] == 2 {
            break inbox["pending"][0]["run"].as_str().ok_or("run")?.to_owned();
        }
        if std::time::Instant::now() > deadline {
            return Err(format!("two questions never waited: {inbox}").into());
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let text = repo.orcho(&["inbox"])?;
    assert!(!text.stdout.contains('\u{1b}'), "{text}");
    assert!(
        text.stdout.contains("--force\\u{1b}[2K origin main"),
        "{text}"
    );
    // Without an id, the decision could land on a question nobody read.
    let which = repo.orcho(&["permission", "decide", &run, "allow"])?;
    assert_ne!(which.code(), Some(0), "{which}");
    assert!(
        which.stderr.contains("2 open permission questions"),
        "{which}"
    );
    assert!(!which.stderr.contains('\u{1b}'), "{which}");
    for id in ["ask-0001", "ask-0002"] {
        repo.orcho(&["permission", "decide", &run, "deny", "--id", id])?
            .expect_code(0);
    }
    let out = finish(child, WAIT)?;
    assert_ne!(out.code(), Some(0), "{out}");
    Ok(())
}

#[test]
fn the_profiles_ask_timeout_is_how_long_a_runners_hook_waits() -> Result {
    // A stand-in for Claude Code: keeps the settings file it is given.
    let agent = "#!/bin/sh\n\
        while [ $# -gt 0 ]; do\n\
          if [ \"$1\" = --settings ]; then cp \"$2\" @CTL@/settings.json; fi\n\
          shift\n\
        done\n";
    let profile = profile("7m").replace(
        "    role: implement\n",
        "    role: implement\n    runner: claude-code\n",
    );
    let repo = Repo::with_files(&profile, &[("claude.sh", agent)])?;
    let claude = repo.dir().join("claude.sh");
    let out = repo.orcho_in(
        ".",
        &[("ORCHO_CLAUDE", claude.as_str())],
        &["run", "--in-place", "--no-interactive"],
    )?;
    out.expect_no_panic();
    let settings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo.ctl("settings.json"))?)?;
    let hook = &settings["hooks"]["PreToolUse"][0]["hooks"][0];
    let command = hook["command"].as_str().ok_or("a hook command")?;
    assert!(command.contains("--ask-wait 420"), "{command}");
    // The agent gives its hook that long and a minute more.
    assert_eq!(hook["timeout"], 480, "{hook}");
    // Its other hooks do not wait for a person.
    let stop = &settings["hooks"]["Stop"][0]["hooks"][0];
    assert_eq!(stop["timeout"], 60, "{stop}");
    Ok(())
}

#[test]
fn a_question_whose_hook_died_leaves_the_inbox_when_its_wait_is_over() -> Result {
    // The hook asks, waiting 2 s, and is killed (its agent killed, say);
    // the phase runs on.
    let ask = script("git push origin main", "--ask-wait 2")
        .replace(" >@CTL@/answer.json 2>@CTL@/answer.err\n", " >/dev/null 2>&1 &\n")
        .replace(
            "grep -q '\"permissionDecision\": *\"allow\"' @CTL@/answer.json && echo ran > ran.txt\n",
            "hook=$!\n\
             while [ ! -d @CTL@/../repo/.orcho/runs/$ORCHO_RUN/asks ]; do sleep 0.05; done\n\
             sleep 0.3; kill -9 $hook; touch @CTL@/killed\n\
             sleep 10; touch @CTL@/ended\n",
        );
    let repo = Repo::with_files(&profile("2m"), &[("ask.sh", &ask)])?;
    let child = repo.spawn(&["run", "--phase", "implement=./ask.sh", "--no-interactive"])?;
    let asked = question(&repo)?;
    assert_eq!(asked["kind"], "permission", "{asked}");
    crate::support::wait_for_file(&repo.ctl("killed"), WAIT)?;
    // Nobody will answer the agent: once the wait is over, nobody is asked.
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let inbox = repo.orcho(&["inbox", "--json"])?.json()?;
        let waiting = inbox["pending"]
            .as_array()
            .is_some_and(|p| p.iter().any(|p| p["kind"] == "permission"));
        if !waiting {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the dead hook's question stays in the inbox: {inbox}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert!(
        !repo.ctl("ended").exists(),
        "the phase still runs while the question leaves"
    );
    // The agent may have gone on without the answer: the attempt is
    // rejected for it, however it ended.
    let out = finish(child, WAIT)?;
    assert!(
        out.stderr
            .contains("hook ended before it answered a permission question"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("phase `implement` attempt 1 (round 1): rejected"),
        "{}",
        out.stderr
    );
    Ok(())
}
