//! Prompts: asked only at a terminal. With `--no-interactive`, or with a
//! standard input that is not a terminal, a decision point pauses the run
//! (exit 4) instead of waiting for input; at a pseudo-terminal the menu is
//! shown and answered.

use std::{
    fs::File,
    io::{Read, Write},
    process::Stdio,
    sync::mpsc,
    thread,
    time::{Duration, Instant},
};

use rustix::{
    fs::{Mode, OFlags},
    pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt},
};

use crate::{
    Result,
    support::{Out, REVIEW, Repo, WAIT, finish, run_id},
};

/// Runs `orcho <args>` with a standard input pipe that stays open and is
/// never written: the process must exit on its own.
fn with_open_stdin(repo: &Repo, args: &[&str]) -> Result<Out> {
    let mut child = repo
        .command(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let stdin = child.stdin.take();
    let out = finish(child, WAIT);
    drop(stdin);
    out
}

#[test]
fn no_interactive_never_waits_for_input() -> Result {
    let repo = Repo::new(REVIEW)?;
    let out = with_open_stdin(
        &repo,
        &[
            "run",
            "--phase",
            "review=false",
            "--no-interactive",
            "--json",
        ],
    )?;
    out.expect_code(4);
    let run = run_id(&out.json()?)?;
    let out = with_open_stdin(&repo, &["resume", &run, "--no-interactive", "--json"])?;
    out.expect_code(4);
    assert_eq!(out.json()?["awaiting"], "handoff", "{out}");
    Ok(())
}

#[test]
fn stdin_that_is_not_a_terminal_never_waits_for_input() -> Result {
    let repo = Repo::new(REVIEW)?;
    let out = with_open_stdin(&repo, &["run", "--phase", "review=false", "--json"])?;
    out.expect_code(4);
    let run = run_id(&out.json()?)?;
    let out = with_open_stdin(&repo, &["resume", &run])?;
    out.expect_code(4);
    assert!(
        out.stdout.contains("paused awaiting a handoff decision"),
        "{out}"
    );
    Ok(())
}

/// A pseudo-terminal: the master side for the test, the slave side for the
/// child's standard streams.
struct Pty {
    master: File,
    slave: File,
}

fn pty() -> Result<Pty> {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)?;
    grantpt(&master)?;
    unlockpt(&master)?;
    let name = ptsname(&master, Vec::new())?;
    let slave = rustix::fs::open(
        name.as_c_str(),
        OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    Ok(Pty {
        master: File::from(master),
        slave: File::from(slave),
    })
}

/// What the child writes to the terminal, read on a thread so that a child
/// that never prompts cannot hang the test.
struct Screen {
    chunks: mpsc::Receiver<Vec<u8>>,
    seen: String,
}

impl Screen {
    fn new(mut master: File) -> Self {
        let (tx, chunks) = mpsc::channel();
        thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // The read fails (EIO) once every slave handle is closed.
            while let Ok(n) = master.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Self {
            chunks,
            seen: String::new(),
        }
    }

    /// Reads until the screen shows `text`, at most `timeout`.
    fn until(&mut self, text: &str, timeout: Duration) -> Result<&str> {
        let deadline = Instant::now() + timeout;
        while !self.seen.contains(text) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.chunks.recv_timeout(left) {
                Ok(chunk) => self.seen.push_str(&String::from_utf8_lossy(&chunk)),
                Err(_) => {
                    return Err(format!(
                        "the terminal never showed `{text}`; it shows:\n{}",
                        self.seen
                    )
                    .into());
                }
            }
        }
        Ok(&self.seen)
    }

    /// Waits until `text` shows after the first `after`, and returns what
    /// follows `after`.
    fn until_after(&mut self, after: &str, text: &str, timeout: Duration) -> Result<&str> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some((_, rest)) = self.seen.split_once(after)
                && rest.contains(text)
            {
                break;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.chunks.recv_timeout(left) {
                Ok(chunk) => self.seen.push_str(&String::from_utf8_lossy(&chunk)),
                Err(_) => {
                    return Err(format!(
                        "the terminal never showed `{text}` after `{after}`; it shows:\n{}",
                        self.seen
                    )
                    .into());
                }
            }
        }
        Ok(self.seen.split_once(after).map_or("", |(_, rest)| rest))
    }
}

/// The number the menu on `screen` gives `action`
/// (`  3) halt   stop the run here`).
fn menu_number(screen: &str, action: &str) -> Result<String> {
    screen
        .lines()
        .filter_map(|l| l.trim().split_once(") "))
        .find(|(_, entry)| entry.split_whitespace().next() == Some(action))
        .map(|(n, _)| n.to_owned())
        .ok_or_else(|| format!("no `{action}` in the menu:\n{screen}").into())
}

/// Starts `orcho run` of a rejecting review at a pseudo-terminal, answers
/// the handoff menu with `action`, and returns the exit code.
fn answer_at_a_terminal(repo: &Repo, extra: &[&str], action: &str) -> Result<Option<i32>> {
    let pty = pty()?;
    let mut args = vec!["run", "--phase", "review=false"];
    args.extend_from_slice(extra);
    let mut command = repo.command(&args);
    command
        .stdin(Stdio::from(pty.slave.try_clone()?))
        .stdout(Stdio::from(pty.slave.try_clone()?))
        .stderr(Stdio::from(pty.slave));
    let mut child = command.spawn()?;
    // Only the child holds the slave side now, so the reader sees the end.
    drop(command);
    let mut writer = pty.master.try_clone()?;
    let mut screen = Screen::new(pty.master);
    let shown = screen.until("choose 1-", WAIT)?;
    assert!(shown.contains("decide the handoff:"), "{shown}");
    let number = menu_number(shown, action)?;
    writer.write_all(format!("{number}\n").as_bytes())?;
    writer.flush()?;
    let status = crate::support::wait(&mut child, WAIT)?;
    Ok(status.code())
}

/// A phase that records its process id, then sleeps (and ignores
/// `SIGINT`, as a careless agent might).
const SLOW_PHASE: &str = "#!/bin/sh\ntrap '' INT\necho $$ > \"@CTL@/pid.tmp\"\nmv \"@CTL@/pid.tmp\" \"@CTL@/pid\"\nexec sleep 600\n";

/// Whether `pid` is a live process.
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}

#[test]
fn ctrl_c_at_a_terminal_stops_the_phase_and_says_how_to_resume() -> Result {
    let repo = Repo::with_files(REVIEW, &[("review.sh", SLOW_PHASE)])?;
    let (mut child, mut writer, mut screen) =
        in_a_session(&repo, &["run", "--phase", "review=./review.sh"])?;
    screen.until("running `./review.sh`", WAIT)?;
    crate::support::wait_for_file(&repo.ctl("pid"), WAIT)?;
    let pid: u32 = std::fs::read_to_string(repo.ctl("pid"))?.trim().parse()?;
    assert!(running(pid));
    let (code, shown) = press(0x03, (&mut child, &mut writer, &mut screen), "orcho resume")?;
    assert_eq!(code, Some(130), "{shown}");
    assert!(shown.contains("interrupted: run"), "{shown}");
    assert!(!running(pid), "the phase command outlived Ctrl-C\n{shown}");
    // The journal says so; the run resumes: the same attempt runs again.
    let run = only_run(&repo)?;
    let log = repo.orcho(&["log", &run])?;
    assert!(
        log.stdout
            .contains("phase `review` attempt 1 interrupted (Ctrl-C); it runs again"),
        "{log}"
    );
    let out = repo.orcho(&[
        "resume",
        &run,
        "--phase",
        "review=true",
        "--no-interactive",
        "--json",
    ])?;
    // To its end: it changed nothing, so there is nothing to deliver.
    out.expect_code(0);
    assert_eq!(out.json()?["status"], "completed", "{out}");
    let evidence = repo.orcho(&["--json", "evidence", &run])?.json()?;
    assert_eq!(
        evidence["interruptions"][0]["reason"], "Ctrl-C",
        "{evidence}"
    );
    assert_eq!(evidence["interruptions"][0]["attempt"], 1, "{evidence}");
    assert_eq!(
        evidence["phases"][0]["attempt"], 1,
        "the attempt is not spent: {evidence}"
    );
    Ok(())
}

/// A profile whose one required command is `./slow.sh`.
const SLOW_VERIFY: &str = "\
schema: 1
name: slow-verify
extends: builtin:quick
verification:
  commands:
    - { name: test, argv: [./slow.sh] }
  required: [test]
";

#[test]
fn ctrl_c_during_verify_stops_the_command_and_says_so() -> Result {
    let repo = Repo::with_files(SLOW_VERIFY, &[("slow.sh", SLOW_PHASE)])?;
    let (mut child, mut writer, mut screen) = in_a_session(&repo, &["verify"])?;
    screen.until("running `test`", WAIT)?;
    crate::support::wait_for_file(&repo.ctl("pid"), WAIT)?;
    let pid: u32 = std::fs::read_to_string(repo.ctl("pid"))?.trim().parse()?;
    let (code, shown) = press(
        0x03,
        (&mut child, &mut writer, &mut screen),
        "orcho verify test",
    )?;
    assert_eq!(code, Some(130), "{shown}");
    assert!(shown.contains("interrupted: `test` was stopped"), "{shown}");
    assert!(!running(pid), "the command outlived Ctrl-C\n{shown}");
    // Its receipt says what happened; the checkout is not ready.
    let out = repo.orcho(&["status", "--json"])?;
    out.expect_code(3);
    assert_eq!(out.json()?["required"][0]["status"], "failed", "{out}");
    Ok(())
}

/// `orcho <args>` in a session of its own whose controlling terminal is a
/// new pseudo-terminal, so that ^C written to it reaches `orcho` as a
/// terminal's Ctrl-C does.
#[expect(
    clippy::disallowed_methods,
    reason = "the test needs a child in a session of its own whose terminal is the test's pty"
)]
fn in_a_session(repo: &Repo, args: &[&str]) -> Result<(std::process::Child, File, Screen)> {
    let mut command = std::process::Command::new("setsid");
    command
        .args(["--ctty", "--wait", env!("CARGO_BIN_EXE_orcho")])
        .args(args)
        .current_dir(repo.dir())
        .env("XDG_DATA_HOME", repo.data());
    started_at_a_terminal(command)
}

/// Writes the control character `key` (^C, ^D) to `orcho`'s terminal and
/// waits for it to end; its exit code, and the screen once it shows
/// `then`.
fn press(
    key: u8,
    (child, writer, screen): (&mut std::process::Child, &mut File, &mut Screen),
    then: &str,
) -> Result<(Option<i32>, String)> {
    writer.write_all(&[key])?;
    writer.flush()?;
    let status = crate::support::wait(child, WAIT)?;
    Ok((status.code(), screen.until(then, WAIT)?.to_owned()))
}

#[test]
fn ctrl_c_at_a_prompt_stops_at_once_and_the_run_resumes() -> Result {
    let repo = Repo::new(REVIEW)?;
    let (mut child, mut writer, mut screen) =
        in_a_session(&repo, &["run", "--phase", "review=false", "--in-place"])?;
    screen.until("choose 1-", WAIT)?;
    // ^C with no line after it: the prompt must not wait for Enter.
    let (code, shown) = press(0x03, (&mut child, &mut writer, &mut screen), "orcho resume")?;
    assert_eq!(code, Some(130), "{shown}");
    assert!(shown.contains("interrupted: run"), "{shown}");
    // Nothing was decided: the handoff still waits.
    let run = only_run(&repo)?;
    let out = repo.orcho(&["resume", &run, "--no-interactive", "--json"])?;
    out.expect_code(4);
    assert_eq!(out.json()?["awaiting"], "handoff", "{out}");
    Ok(())
}

#[test]
fn ctrl_d_at_a_prompt_pauses_the_run_and_says_what_to_do() -> Result {
    let repo = Repo::new(REVIEW)?;
    let (mut child, mut writer, mut screen) =
        at_a_terminal(&repo, &["run", "--phase", "review=false", "--in-place"])?;
    screen.until("choose 1-", WAIT)?;
    // ^D at the start of a line: the terminal's end of input.
    let (code, shown) = press(
        0x04,
        (&mut child, &mut writer, &mut screen),
        "orcho handoff decide",
    )?;
    assert_eq!(code, Some(4), "{shown}");
    Ok(())
}

#[test]
fn a_handoff_prompt_answered_halt_at_a_terminal_halts() -> Result {
    let repo = Repo::new(REVIEW)?;
    assert_eq!(answer_at_a_terminal(&repo, &[], "halt")?, Some(5));
    let runs: Vec<_> = std::fs::read_dir(repo.dir().join(".orcho/runs"))?.collect();
    assert_eq!(runs.len(), 1);
    let run = runs
        .into_iter()
        .next()
        .ok_or("no run")??
        .file_name()
        .into_string()
        .map_err(|_| "a run id that is not UTF-8")?;
    let out = repo.orcho(&["handoff", "show", &run, "--json"])?;
    assert_eq!(out.json()?["decision"]["action"], "halt", "{out}");
    Ok(())
}

#[test]
fn a_handoff_prompt_answered_continue_at_a_terminal_completes() -> Result {
    let repo = Repo::new(REVIEW)?;
    assert_eq!(
        answer_at_a_terminal(&repo, &["--in-place"], "continue")?,
        Some(0)
    );
    Ok(())
}

/// `orcho <args>` at a pseudo-terminal: the child, a writer to its
/// terminal, and its screen.
fn at_a_terminal(repo: &Repo, args: &[&str]) -> Result<(std::process::Child, File, Screen)> {
    started_at_a_terminal(repo.command(args))
}

/// Starts `command` with a new pseudo-terminal as its standard streams:
/// the child, a writer to its terminal, and its screen.
fn started_at_a_terminal(
    mut command: std::process::Command,
) -> Result<(std::process::Child, File, Screen)> {
    let pty = pty()?;
    command
        .stdin(Stdio::from(pty.slave.try_clone()?))
        .stdout(Stdio::from(pty.slave.try_clone()?))
        .stderr(Stdio::from(pty.slave));
    let child = command.spawn()?;
    // Only the child holds the slave side now, so the reader sees the end.
    drop(command);
    let writer = pty.master.try_clone()?;
    Ok((child, writer, Screen::new(pty.master)))
}

/// The id of the one run in `repo`'s store.
fn only_run(repo: &Repo) -> Result<String> {
    Ok(std::fs::read_dir(repo.dir().join(".orcho/runs"))?
        .next()
        .ok_or("no run")??
        .file_name()
        .to_string_lossy()
        .into_owned())
}

fn type_line(writer: &mut File, line: &str) -> Result {
    writer.write_all(format!("{line}\n").as_bytes())?;
    writer.flush()?;
    Ok(())
}

#[test]
fn menus_say_what_each_action_does() -> Result {
    let repo = Repo::new(REVIEW)?;
    let (mut child, mut writer, mut screen) =
        at_a_terminal(&repo, &["run", "--phase", "review=false", "--in-place"])?;
    let shown = screen.until("choose 1-", WAIT)?.to_owned();
    assert!(
        shown.contains("run the phase again with your feedback"),
        "{shown}"
    );
    assert!(shown.contains("stop the run here"), "{shown}");
    // A typo is answered with the nearest choice.
    type_line(&mut writer, "hallt")?;
    screen.until(
        "`hallt` is not one of the choices; did you mean `halt`?",
        WAIT,
    )?;
    let halt = menu_number(&shown, "halt")?;
    type_line(&mut writer, &halt)?;
    assert_eq!(crate::support::wait(&mut child, WAIT)?.code(), Some(5));
    Ok(())
}

#[test]
fn a_plan_for_approval_is_shown_once_at_a_terminal() -> Result {
    let profile = "\
schema: 1
name: planned
phases:
  - { name: plan, role: plan }
supervision:
  plan_approval: true
";
    let planner = "#!/bin/sh\necho '{\"schema\": 1, \"plan\": {\"goal\": \"Add sub()\", \"steps\": []}}' > \"$ORCHO_OUTPUT\"\n";
    let repo = Repo::with_files(profile, &[("plan.sh", planner)])?;
    let (mut child, mut writer, mut screen) =
        at_a_terminal(&repo, &["run", "--in-place", "--phase", "plan=./plan.sh"])?;
    let shown = screen.until("choose 1-3: ", WAIT)?.to_owned();
    assert_eq!(shown.matches("Goal: Add sub()").count(), 1, "{shown}");
    // Approve needs no feedback: nothing more is asked.
    type_line(&mut writer, "1")?;
    assert_eq!(crate::support::wait(&mut child, WAIT)?.code(), Some(0));
    Ok(())
}

/// A review that writes `greeting.txt` and approves: the run ends at its
/// delivery gate with that one file in its diff.
const GREETS: &str = r#"review=sh -c "echo hello > greeting.txt""#;

#[test]
fn the_delivery_prompt_shows_the_diff_and_asks_for_the_commit_message() -> Result {
    let repo = Repo::new(REVIEW)?;
    let (mut child, mut writer, mut screen) = at_a_terminal(&repo, &["run", "--phase", GREETS])?;
    // The prompt names the letter too, not only the numbers.
    let shown = screen.until(" or d: ", WAIT)?.to_owned();
    assert!(shown.contains("d) show the diff"), "{shown}");
    type_line(&mut writer, "d")?;
    screen.until("+hello", WAIT)?;
    let approve = menu_number(&shown, "approve")?;
    type_line(&mut writer, &approve)?;
    screen.until("commit message", WAIT)?;
    type_line(&mut writer, "Add a greeting")?;
    screen.until("a note for the record", WAIT)?;
    type_line(&mut writer, "")?;
    assert_eq!(crate::support::wait(&mut child, WAIT)?.code(), Some(0));
    assert_eq!(repo.git(&["log", "-1", "--format=%s"])?, "Add a greeting");
    assert_eq!(
        std::fs::read_to_string(repo.dir().join("greeting.txt"))?,
        "hello\n"
    );
    Ok(())
}

#[test]
fn the_delivery_prompt_does_not_offer_what_the_target_would_refuse() -> Result {
    let repo = Repo::new(REVIEW)?;
    // The phase also writes the file into the target, as an agent that
    // strays out of its worktree would.
    let phase = format!(
        r#"review=sh -c "echo hello > greeting.txt && echo mine > {}/greeting.txt""#,
        repo.dir()
    );
    let (mut child, mut writer, mut screen) = at_a_terminal(&repo, &["run", "--phase", &phase])?;
    let shown = screen.until(" or d: ", WAIT)?.to_owned();
    assert!(
        shown.contains("`approve`, `apply` refused now: commit or stash"),
        "{shown}"
    );
    skip_keeping_the_users_file(&repo, (&mut child, &mut writer, &mut screen), &shown, "")
}

/// At a delivery menu (`menu`) that must not offer `approve`: chooses
/// `skip`, answers the note asked for after `after`, and checks that
/// `orcho` ends well and the user's `greeting.txt` stays theirs.
fn skip_keeping_the_users_file(
    repo: &Repo,
    (child, writer, screen): (&mut std::process::Child, &mut File, &mut Screen),
    menu: &str,
    after: &str,
) -> Result {
    assert!(menu_number(menu, "approve").is_err(), "{menu}");
    type_line(writer, &menu_number(menu, "skip")?)?;
    if after.is_empty() {
        screen.until("a note for the record", WAIT)?;
    } else {
        screen.until_after(after, "a note for the record", WAIT)?;
    }
    type_line(writer, "")?;
    assert_eq!(crate::support::wait(child, WAIT)?.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(repo.dir().join("greeting.txt"))?,
        "mine\n"
    );
    Ok(())
}

#[test]
fn a_target_that_changes_while_the_prompt_waits_is_said_and_asked_again() -> Result {
    let repo = Repo::new(REVIEW)?;
    let (mut child, mut writer, mut screen) = at_a_terminal(&repo, &["run", "--phase", GREETS])?;
    let shown = screen.until(" or d: ", WAIT)?.to_owned();
    // Meanwhile the user writes the same file in the target.
    repo.write("greeting.txt", "mine\n")?;
    type_line(&mut writer, &menu_number(&shown, "approve")?)?;
    screen.until("commit message", WAIT)?;
    type_line(&mut writer, "")?;
    screen.until("a note for the record", WAIT)?;
    type_line(&mut writer, "")?;
    let again = screen
        .until_after("not recorded: ", " or d: ", WAIT)?
        .to_owned();
    assert!(
        again.contains("`approve`, `apply` refused now: commit or stash"),
        "{again}"
    );
    skip_keeping_the_users_file(
        &repo,
        (&mut child, &mut writer, &mut screen),
        &again,
        "not recorded: ",
    )
}

#[test]
fn a_decision_taken_elsewhere_while_the_prompt_waits_is_adopted() -> Result {
    let repo = Repo::new(REVIEW)?;
    let (mut child, mut writer, mut screen) =
        at_a_terminal(&repo, &["run", "--phase", "review=false", "--in-place"])?;
    let shown = screen.until("choose 1-", WAIT)?.to_owned();
    let run = shown
        .split("run ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .ok_or(format!("no run id on the screen:\n{shown}"))?
        .to_owned();
    // Another terminal decides first.
    repo.orcho(&["handoff", "decide", &run, "halt"])?
        .expect_code(0);
    let cont = menu_number(&shown, "continue")?;
    type_line(&mut writer, &cont)?;
    let status = crate::support::wait(&mut child, WAIT)?;
    let shown = screen.until("halted", WAIT)?.to_owned();
    assert!(
        shown.contains("a different decision was recorded meanwhile"),
        "{shown}"
    );
    assert!(!shown.contains("error:"), "{shown}");
    assert_eq!(status.code(), Some(5), "{shown}");
    Ok(())
}

#[test]
fn at_a_terminal_the_advisors_advice_is_shown_and_can_be_taken() -> Result {
    use crate::advisor::{KEY, Llm, PHASE, advice, profile};
    let llm = Llm::start(vec![advice(
        "retry_feedback",
        0.9,
        Some("handle empty input"),
    )]);
    let repo = Repo::with_files(&profile(&llm.base_url), &[("phase.sh", PHASE)])?;
    let pty = pty()?;
    let mut command = repo.command(&["run", "--in-place", "--phase", "implement=./phase.sh"]);
    command
        .env(KEY.0, KEY.1)
        .stdin(Stdio::from(pty.slave.try_clone()?))
        .stdout(Stdio::from(pty.slave.try_clone()?))
        .stderr(Stdio::from(pty.slave));
    let mut child = command.spawn()?;
    drop(command);
    let mut writer = pty.master.try_clone()?;
    let mut screen = Screen::new(pty.master);
    let shown = screen.until("choose 1-", WAIT)?.to_owned();
    assert!(
        shown.contains("retry_feedback (confidence 0.90)"),
        "{shown}"
    );
    assert!(
        shown.contains("a) take the advice: retry_feedback"),
        "{shown}"
    );
    type_line(&mut writer, "a")?;
    assert_eq!(crate::support::wait(&mut child, WAIT)?.code(), Some(0));
    // The operator's decision, with the advice it followed.
    let runs = repo.orcho(&["--json", "runs"])?.json()?;
    let run = runs[0]["run"].as_str().ok_or("a run")?.to_owned();
    let evidence = repo.orcho(&["--json", "evidence", &run])?.json()?;
    let decision = &evidence["handoffs"][0]["decision"];
    assert_eq!(decision["decided_by"], "operator", "{decision}");
    assert!(decision["advice"].as_str().is_some(), "{decision}");
    assert_eq!(decision["text"], "handle empty input", "{decision}");
    Ok(())
}

/// Sends `signal` to the process `pid`.
fn signal(pid: u32, signal: rustix::process::Signal) -> Result {
    let pid = rustix::process::Pid::from_raw(i32::try_from(pid)?).ok_or("a process id")?;
    rustix::process::kill_process(pid, signal)?;
    Ok(())
}

#[test]
fn sigterm_or_sighup_stops_the_phase_as_ctrl_c_does() -> Result {
    for sent in [rustix::process::Signal::TERM, rustix::process::Signal::HUP] {
        let repo = Repo::with_files(REVIEW, &[("review.sh", SLOW_PHASE)])?;
        let child = repo.spawn(&["run", "--no-interactive", "--phase", "review=./review.sh"])?;
        crate::support::wait_for_file(&repo.ctl("pid"), WAIT)?;
        let pid: u32 = std::fs::read_to_string(repo.ctl("pid"))?.trim().parse()?;
        signal(child.id(), sent)?;
        let out = finish(child, WAIT)?;
        assert_eq!(out.code(), Some(130), "{sent:?}: {out}");
        assert!(out.stderr.contains("orcho resume"), "{out}");
        assert!(!running(pid), "the phase command outlived {sent:?}\n{out}");
        let log = repo.orcho(&["log", "latest"])?;
        let name = if sent == rustix::process::Signal::TERM {
            "SIGTERM"
        } else {
            "SIGHUP"
        };
        assert!(
            log.stdout.contains(&format!("interrupted ({name})")),
            "{log}"
        );
    }
    Ok(())
}

#[test]
fn cancelling_a_run_whose_orcho_was_killed_stops_what_it_left_running() -> Result {
    let repo = Repo::with_files(REVIEW, &[("review.sh", SLOW_PHASE)])?;
    let mut child = repo.spawn(&["run", "--no-interactive", "--phase", "review=./review.sh"])?;
    crate::support::wait_for_file(&repo.ctl("pid"), WAIT)?;
    let pid: u32 = std::fs::read_to_string(repo.ctl("pid"))?.trim().parse()?;
    // The phase starts before orcho names its process group (it can only
    // name it once the group exists): killed in between, orcho leaves no
    // name to stop it by. What is tested is a kill after that.
    let runs = repo.dir().join(".orcho/runs");
    let named = || {
        std::fs::read_dir(&runs).is_ok_and(|entries| {
            entries
                .filter_map(std::result::Result::ok)
                .any(|e| e.path().join("phase-group.json").is_file())
        })
    };
    let until = Instant::now() + WAIT;
    while !named() && Instant::now() < until {
        thread::sleep(Duration::from_millis(10));
    }
    child.kill()?;
    child.wait()?;
    assert!(running(pid), "SIGKILL leaves the phase command running");
    let out = repo.orcho(&["cancel", "latest", "--reason", "gone"])?;
    out.expect_code(0);
    assert!(out.stderr.contains("stopped process group"), "{out}");
    assert!(!running(pid), "cancel stopped it");
    Ok(())
}

#[test]
fn a_prompt_ends_when_its_point_is_decided_elsewhere_and_the_run_goes_on() -> Result {
    let repo = Repo::new(REVIEW)?;
    let (mut child, mut writer, mut screen) = at_a_terminal(
        &repo,
        &[
            "run",
            "--phase",
            "review=false",
            "--in-place",
            "--task",
            "t",
        ],
    )?;
    screen.until("choose 1-", WAIT)?;
    // Decided from another terminal (or machine) while the prompt waits.
    let run = only_run(&repo)?;
    repo.orcho(&["handoff", "decide", &run, "continue"])?
        .expect_code(0);
    let shown = screen
        .until("recorded elsewhere: continue by", WAIT)?
        .to_owned();
    let status = crate::support::wait(&mut child, WAIT)?;
    assert_eq!(status.code(), Some(0), "{shown}");
    // Nothing typed was needed, and nothing typed after is lost to the
    // prompt given up: the run has ended.
    writer.write_all(b"\n")?;
    let out = repo.orcho(&["--json", "evidence", &run])?.json()?;
    assert_eq!(out["status"], "completed", "{out}");
    Ok(())
}

#[test]
fn at_the_delivery_prompt_r_runs_the_missing_receipts_and_shows_the_gate_again() -> Result {
    let repo = Repo::new(crate::delivery::UNPROVEN)?;
    let (mut child, mut writer, mut screen) = at_a_terminal(
        &repo,
        &["run", "--phase", "implement=sh -c 'echo x > done.txt'"],
    )?;
    let shown = screen.until(" or d or r: ", WAIT)?.to_owned();
    assert!(shown.contains("release rejected"), "{shown}");
    assert!(
        shown.contains("r) run the missing and stale receipts again"),
        "{shown}"
    );
    type_line(&mut writer, "r")?;
    // The gate again, as it is now: no gap left, and no `r` to offer.
    let again = screen
        .until_after("running the missing and stale", " or d: ", WAIT)?
        .to_owned();
    assert!(again.contains("release approved"), "{again}");
    let approve = menu_number(&again, "approve")?;
    type_line(&mut writer, &approve)?;
    screen.until("commit message", WAIT)?;
    type_line(&mut writer, "Prove it")?;
    screen.until("a note for the record", WAIT)?;
    type_line(&mut writer, "")?;
    assert_eq!(crate::support::wait(&mut child, WAIT)?.code(), Some(0));
    assert_eq!(repo.git(&["log", "-1", "--format=%s"])?, "Prove it");
    Ok(())
}
