//! The fixture: a temporary git repository with a profile, and the ways the
//! tests run `orcho` in it.

use std::{
    fmt,
    io::Read,
    os::unix::fs::PermissionsExt,
    process::{Child, Command, ExitStatus, Stdio},
    thread,
    time::{Duration, Instant},
};

use camino::{Utf8Path, Utf8PathBuf};
use orcho::receipts::{
    RECEIPT_KEY_VAR,
    exec::{self, BaseEnv, ExecRequest},
};
use serde_json::Value;

use crate::Result;

/// How long any one `orcho` process may take before the test calls it
/// hung. Generous: a healthy one takes well under a second.
pub(crate) const WAIT: Duration = Duration::from_secs(60);

/// One `implement` phase (from `builtin:quick`) whose `tests` gate runs the
/// verification command `test`, which passes when the file `ok` exists. A
/// failure is fed into the next attempt.
pub(crate) const QUICK: &str = "\
schema: 1
name: cli-quick
extends: builtin:quick
verification:
  commands:
    - { name: test, argv: [sh, -c, \"test -f ok\"] }
  required: [test]
";

/// One `review` phase that pauses at a handoff when it rejects, offering all
/// four actions; no plan, no verification.
pub(crate) const REVIEW: &str = "\
schema: 1
name: cli-review
phases:
  - name: review
    role: review
    handoff:
      pause: on_rejected
      on_exhausted: pause
      actions: [continue, retry_feedback, continue_with_waiver, halt]
supervision:
  plan_approval: false
";

/// A git repository with `orcho.yaml`, `.gitignore` (`.orcho/`) and a
/// `README`, committed; and a control directory beside it, outside the
/// checkout, where phase scripts leave markers for the test.
#[derive(Debug)]
pub(crate) struct Repo {
    dir: Utf8PathBuf,
    ctl: Utf8PathBuf,
    data: Utf8PathBuf,
    _tmp: tempfile::TempDir,
}

impl Repo {
    /// A repository whose `orcho.yaml` is `profile`.
    pub(crate) fn new(profile: &str) -> Result<Self> {
        Self::with_files(profile, &[])
    }

    /// A repository with `profile` and `files` (path, text) in its first
    /// commit. `@CTL@` in a file's text becomes the control directory; files
    /// ending in `.sh` are executable.
    pub(crate) fn with_files(profile: &str, files: &[(&str, &str)]) -> Result<Self> {
        let tmp = tempfile::tempdir()?;
        let root = Utf8PathBuf::try_from(tmp.path().to_owned())?;
        let repo = Self {
            dir: root.join("repo"),
            ctl: root.join("ctl"),
            data: root.join("data"),
            _tmp: tmp,
        };
        orcho::core::fs::create_dir_all(&repo.dir)?;
        orcho::core::fs::create_dir_all(&repo.ctl)?;
        repo.write("orcho.yaml", profile)?;
        repo.write(".gitignore", ".orcho/\n")?;
        repo.write("README", "a checkout for the CLI tests\n")?;
        for (path, text) in files {
            repo.write(path, &text.replace("@CTL@", repo.ctl.as_str()))?;
        }
        repo.git(&["init", "-q"])?;
        repo.git(&["config", "user.name", "CLI Test"])?;
        repo.git(&["config", "user.email", "cli-test@example.com"])?;
        repo.git(&["config", "commit.gpgsign", "false"])?;
        repo.git(&["add", "-A"])?;
        repo.git(&["commit", "-q", "-m", "initial"])?;
        Ok(repo)
    }

    /// The checkout.
    pub(crate) fn dir(&self) -> &Utf8Path {
        &self.dir
    }

    /// A file of the control directory.
    pub(crate) fn ctl(&self, name: &str) -> Utf8PathBuf {
        self.ctl.join(name)
    }

    /// `runs/<run>/` of the store.
    pub(crate) fn run_dir(&self, run: &str) -> Utf8PathBuf {
        self.dir.join(".orcho").join("runs").join(run)
    }

    /// Writes a file of the checkout.
    pub(crate) fn write(&self, path: &str, text: &str) -> Result {
        let path = self.dir.join(path);
        if let Some(parent) = path.parent() {
            orcho::core::fs::create_dir_all(parent)?;
        }
        orcho::core::fs::write_atomic(&path, text.as_bytes())?;
        if path.as_str().ends_with(".sh") {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        }
        Ok(())
    }

    /// Runs git in the checkout; its trimmed standard output.
    pub(crate) fn git(&self, args: &[&str]) -> Result<String> {
        let request = ExecRequest::new(std::iter::once("git").chain(args.iter().copied()))
            .cwd(self.dir.clone())
            .envs(BaseEnv::inherit())
            .keep_stdout(1 << 20);
        let out = exec::run(&request)?;
        if !out.status.success() {
            return Err(format!("git {args:?}: {}", out.stderr.tail_lossy()).into());
        }
        Ok(
            String::from_utf8_lossy(&out.stdout.kept.unwrap_or_default())
                .trim()
                .to_owned(),
        )
    }

    /// `orcho <args>` in the checkout, with no standard streams attached:
    /// the caller picks them.
    #[expect(
        clippy::disallowed_methods,
        reason = "the test drives the CLI as a subprocess: it must hold the child to kill it, give it a pty or keep its stdin open"
    )]
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_orcho"));
        command
            .args(args)
            .current_dir(&self.dir)
            .env("XDG_DATA_HOME", &self.data)
            .env_remove(RECEIPT_KEY_VAR)
            // The hook prefers Claude Code's project directory to the
            // document's `cwd`; a test run inside Claude Code must not leak
            // its own.
            .env_remove("CLAUDE_PROJECT_DIR");
        command
    }

    /// The data directory `orcho` keeps its receipt key in (outside the
    /// checkout).
    pub(crate) fn data(&self) -> &Utf8Path {
        &self.data
    }

    /// Spawns `orcho <args>` with standard input closed and the outputs
    /// captured.
    pub(crate) fn spawn(&self, args: &[&str]) -> Result<Child> {
        Ok(self
            .command(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?)
    }

    /// Spawns `orcho <args>` with `envs` added to its environment, standard
    /// input closed and the outputs captured.
    pub(crate) fn spawn_with(&self, envs: &[(&str, &str)], args: &[&str]) -> Result<Child> {
        Ok(self
            .command(args)
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?)
    }

    /// Runs `orcho <args>` to the end (at most [`WAIT`]).
    pub(crate) fn orcho(&self, args: &[&str]) -> Result<Out> {
        finish(self.spawn(args)?, WAIT)
    }

    /// Runs `orcho <args>` with `input` on its standard input.
    pub(crate) fn orcho_with_input(&self, args: &[&str], input: &str) -> Result<Out> {
        self.orcho_with_input_env(args, input, &[])
    }

    /// Runs `orcho <args>` with `input` on its standard input and `envs`
    /// added to its environment.
    pub(crate) fn orcho_with_input_env(
        &self,
        args: &[&str],
        input: &str,
        envs: &[(&str, &str)],
    ) -> Result<Out> {
        let mut child = self
            .command(args)
            .envs(envs.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let mut stdin = child.stdin.take().ok_or("no stdin")?;
        let input = input.to_owned();
        // Written from a thread: a large document must not block on a full
        // pipe while the child writes its answer.
        let writer = thread::spawn(move || {
            use std::io::Write as _;
            let _ = stdin.write_all(input.as_bytes());
        });
        let out = finish(child, WAIT)?;
        let _ = writer.join();
        Ok(out)
    }

    /// Runs `orcho <args>` in `dir` (relative to the checkout) with `envs`
    /// added to its environment.
    pub(crate) fn orcho_in(&self, dir: &str, envs: &[(&str, &str)], args: &[&str]) -> Result<Out> {
        let data = [("XDG_DATA_HOME", self.data.as_str())];
        let envs: Vec<(&str, &str)> = data.iter().chain(envs).copied().collect();
        orcho_at(&self.dir.join(dir), &envs, args)
    }

    /// The events of `runs/<run>/journal.jsonl`, in order.
    pub(crate) fn journal(&self, run: &str) -> Result<Vec<Value>> {
        let text = std::fs::read_to_string(self.run_dir(run).join("journal.jsonl"))?;
        text.lines()
            .map(|line| Ok(serde_json::from_str::<Value>(line)?))
            .collect()
    }
}

/// What a finished `orcho` process left.
#[derive(Debug)]
pub(crate) struct Out {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Out {
    /// Its exit code (`None` when a signal ended it).
    pub(crate) fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Asserts the exit code, and that nothing panicked.
    #[track_caller]
    pub(crate) fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code(), Some(code), "unexpected exit code\n{self}");
        self.expect_no_panic()
    }

    /// Asserts that nothing panicked.
    #[track_caller]
    pub(crate) fn expect_no_panic(&self) -> &Self {
        assert!(!self.stderr.contains("panicked"), "orcho panicked\n{self}");
        self
    }

    /// Standard output as the one JSON document `--json` prints.
    pub(crate) fn json(&self) -> Result<Value> {
        serde_json::from_str(self.stdout.trim())
            .map_err(|e| format!("standard output is not one JSON document ({e})\n{self}").into())
    }
}

impl fmt::Display for Out {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "status: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

/// Runs `orcho <args>` in `dir` with `envs` added to its environment, with
/// standard input closed, to the end (at most [`WAIT`]). Its receipt key
/// lives in `data` beside `dir` unless `envs` say otherwise.
#[expect(
    clippy::disallowed_methods,
    reason = "the test drives the CLI as a subprocess in a directory of its choosing"
)]
pub(crate) fn orcho_at(dir: &Utf8Path, envs: &[(&str, &str)], args: &[&str]) -> Result<Out> {
    let data = dir.parent().unwrap_or(dir).join("data");
    let child = Command::new(env!("CARGO_BIN_EXE_orcho"))
        .args(args)
        .current_dir(dir)
        .env("XDG_DATA_HOME", data)
        .env_remove(RECEIPT_KEY_VAR)
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    finish(child, WAIT)
}

/// A running `orcho` whose standard error is read as it comes.
#[derive(Debug)]
pub(crate) struct Watched {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
    stderr: thread::JoinHandle<String>,
}

impl Watched {
    /// Reads `child`'s standard error as it comes.
    pub(crate) fn new(mut child: Child) -> Result<Self> {
        let pipe = child.stderr.take().ok_or("no stderr")?;
        let (tx, lines) = std::sync::mpsc::channel();
        let stderr = thread::spawn(move || {
            use std::io::BufRead;
            let mut all = String::new();
            for line in std::io::BufReader::new(pipe)
                .lines()
                .map_while(std::result::Result::ok)
            {
                all.push_str(&line);
                all.push('\n');
                let _ = tx.send(line);
            }
            all
        });
        Ok(Self {
            child,
            lines,
            stderr,
        })
    }

    /// Waits (at most [`WAIT`]) for a line of standard error containing
    /// `needle`.
    pub(crate) fn until(&self, needle: &str) -> Result<String> {
        let deadline = Instant::now() + WAIT;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return Ok(line),
                Ok(_) => {}
                Err(_) => break,
            }
        }
        Err(format!("no line with `{needle}` on standard error").into())
    }

    /// Sends it SIGINT, as Ctrl-C does.
    pub(crate) fn interrupt(&self) -> Result {
        let pid = rustix::process::Pid::from_raw(i32::try_from(self.child.id())?)
            .ok_or("no process id")?;
        rustix::process::kill_process(pid, rustix::process::Signal::INT)?;
        Ok(())
    }

    /// Stops it (SIGKILL) and reaps it.
    pub(crate) fn kill(mut self) -> Result {
        let _ = self.child.kill();
        let _ = self.child.wait();
        Ok(())
    }

    /// Waits for it to exit, as [`finish`] does.
    pub(crate) fn finish(mut self) -> Result<Out> {
        let stdout = drain(self.child.stdout.take());
        let status = wait(&mut self.child, WAIT)?;
        let stdout = stdout.join().map_err(|_| "the stdout reader panicked")?;
        let stderr = self
            .stderr
            .join()
            .map_err(|_| "the stderr reader panicked")?;
        Ok(Out {
            status,
            stdout,
            stderr,
        })
    }
}

/// Waits for `child` to exit, at most `timeout`, reading its captured
/// outputs meanwhile; kills it and fails when it takes longer.
pub(crate) fn finish(mut child: Child, timeout: Duration) -> Result<Out> {
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = wait(&mut child, timeout)?;
    let stdout = stdout.join().map_err(|_| "the stdout reader panicked")?;
    let stderr = stderr.join().map_err(|_| "the stderr reader panicked")?;
    Ok(Out {
        status,
        stdout,
        stderr,
    })
}

/// Polls `child` until it exits, at most `timeout`; kills it and fails when
/// it takes longer.
pub(crate) fn wait(child: &mut Child, timeout: Duration) -> Result<ExitStatus> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("orcho did not exit within {timeout:?}").into());
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Reads a pipe to its end on a thread, so a chatty child never blocks.
fn drain(pipe: Option<impl Read + Send + 'static>) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Waits until `path` exists, at most `timeout`.
pub(crate) fn wait_for_file(path: &Utf8Path, timeout: Duration) -> Result {
    let deadline = Instant::now() + timeout;
    while !path.exists() {
        if Instant::now() >= deadline {
            return Err(format!("`{path}` did not appear within {timeout:?}").into());
        }
        thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Starts a run of [`REVIEW`] whose review rejects: it pauses at its
/// handoff, in a worktree. Its id.
pub(crate) fn paused_at_review(repo: &Repo) -> Result<String> {
    let out = repo.orcho(&[
        "run",
        "--phase",
        "review=false",
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    let paused = out.json()?;
    assert_eq!(paused["awaiting"], "handoff", "{out}");
    run_id(&paused)
}

/// The `run` field of a `--json` document.
pub(crate) fn run_id(doc: &Value) -> Result<String> {
    doc["run"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("no `run` in {doc}").into())
}

impl Repo {
    /// `text` with what differs between test runs replaced: the checkout's
    /// temporary directory, `run`'s id, commit ids and timestamps.
    pub(crate) fn redact(&self, text: &str, run: &str) -> String {
        let tmp = self.dir.parent().map_or("", Utf8Path::as_str);
        crate::redact::redact(text, &[(tmp, "[tmp]"), (run, "[run]")])
    }
}

/// Whether `program` is on this process's `PATH`.
pub(crate) fn have(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Runs `program args` in `dir` with `envs` added to a small environment
/// (`PATH`, and whatever `envs` say), standard input closed, to the end.
#[expect(
    clippy::disallowed_methods,
    reason = "the test runs a program (orcho, or a wrapper that starts it) as a subprocess"
)]
pub(crate) fn run_program(
    dir: &Utf8Path,
    program: &str,
    args: &[&str],
    envs: &[(&str, &str)],
) -> Result<Out> {
    let child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    finish(child, WAIT)
}

/// When this process is root: gives `path` and everything under it to the
/// user `uid` (for a test that runs `orcho` as an unprivileged user).
pub(crate) fn chown_all(path: &Utf8Path, uid: u32) -> Result {
    if !rustix::process::geteuid().is_root() {
        return Ok(());
    }
    let owner = format!("{uid}:{uid}");
    let out = exec::run(
        &ExecRequest::new(["chown", "-R", owner.as_str(), path.as_str()]).envs(BaseEnv::inherit()),
    )?;
    if !out.status.success() {
        return Err(format!("chown: {}", out.stderr.tail_lossy()).into());
    }
    Ok(())
}

/// Runs `orcho <args>` in `dir` under a Python wrapper that reports the
/// most memory it (and what it started) held: its output and that peak,
/// in KiB.
pub(crate) fn with_max_rss(dir: &Utf8Path, args: &[&str]) -> Result<(Out, u64)> {
    const WRAPPER: &str = "import resource, subprocess, sys\n\
        r = subprocess.run(sys.argv[1:])\n\
        sys.stderr.write('\\nmax_rss_kib=%d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n\
        sys.exit(r.returncode)\n";
    let data = dir.parent().unwrap_or(dir).join("data");
    let mut argv = vec!["-c", WRAPPER, env!("CARGO_BIN_EXE_orcho")];
    argv.extend_from_slice(args);
    let out = run_program(dir, "python3", &argv, &[("XDG_DATA_HOME", data.as_str())])?;
    let rss = out
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("max_rss_kib="))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| format!("no max_rss_kib line\n{out}"))?;
    Ok((out, rss))
}

/// Copies the directory `from` to `to` (created), files and folders.
pub(crate) fn copy_dir(from: &Utf8Path, to: &Utf8Path) -> Result {
    orcho::core::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_str().ok_or("a name that is not UTF-8")?;
        let (source, target) = (from.join(name), to.join(name));
        if entry.file_type()?.is_dir() {
            copy_dir(&source, &target)?;
        } else {
            std::fs::copy(&source, &target)?;
        }
    }
    Ok(())
}
