//! Spawning and supervising one process group.

use std::{
    collections::BTreeMap,
    ffi::{OsStr, OsString},
    io::{self, Read, Write as _},
    os::{
        fd::{AsFd, OwnedFd},
        unix::{
            ffi::OsStrExt,
            process::{CommandExt, ExitStatusExt},
        },
    },
    path::Path,
    process::{Child, ChildStderr, ChildStdout, Command, Stdio},
    sync::Arc,
    time::{Duration, Instant},
};

use camino::{Utf8Path, Utf8PathBuf};
use rustix::{
    event::{PollFd, PollFlags, Timespec},
    io::Errno,
    process::{Pid, Signal},
};

use super::{
    CancelToken, CapturedOutput, ExitStatus, GroupMarker, cancel::Registration, output::Sink,
};
use crate::{ExecError, ExecErrorKind};

/// How long a command gets between `SIGTERM` and `SIGKILL` unless the
/// request says otherwise.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(5);

/// How many bytes of each stream stay in memory unless the request says
/// otherwise.
pub const DEFAULT_TAIL_BYTES: usize = 16 * 1024;

/// How long processes left behind by a command that exited may keep its
/// output pipes open before its process group is killed.
pub const LEAK_GRACE: Duration = Duration::from_millis(250);

/// After `SIGKILL`, how long to wait for the pipes to close before giving up
/// on them (a process that left the group may hold them forever).
const KILLED_DRAIN: Duration = Duration::from_secs(2);

/// Without a pidfd, how often to check whether the child exited.
const POLL_TICK: Duration = Duration::from_millis(5);

const CHUNK: usize = 64 * 1024;

/// What to run and how. Build it with [`ExecRequest::new`] and the setters.
#[derive(Debug, Clone)]
#[must_use]
pub struct ExecRequest {
    argv: Vec<OsString>,
    cwd: Option<Utf8PathBuf>,
    env: BTreeMap<OsString, OsString>,
    timeout: Option<Duration>,
    grace: Duration,
    stdout_log: Option<Utf8PathBuf>,
    stderr_log: Option<Utf8PathBuf>,
    tail_bytes: usize,
    keep_stdout: Option<usize>,
    secrets: Vec<Vec<u8>>,
    cancel: Option<CancelToken>,
    on_start: Option<StartHook>,
    marker: Option<GroupMarker>,
    stdin: Option<Arc<[u8]>>,
    whole_tree: bool,
}

/// What [`ExecRequest::on_start`] calls.
#[derive(Clone)]
struct StartHook(Arc<dyn Fn(u32) + Send + Sync>);

impl std::fmt::Debug for StartHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StartHook")
    }
}

impl ExecRequest {
    /// Runs `argv[0]` with the rest as arguments, in the current directory,
    /// with an **empty** environment (add [`BaseEnv::inherit`](super::BaseEnv::inherit) with
    /// [`envs`](Self::envs)), no timeout, and no log files.
    pub fn new<S: Into<OsString>>(argv: impl IntoIterator<Item = S>) -> Self {
        Self {
            argv: argv.into_iter().map(Into::into).collect(),
            cwd: None,
            env: BTreeMap::new(),
            timeout: None,
            grace: DEFAULT_GRACE,
            stdout_log: None,
            stderr_log: None,
            tail_bytes: DEFAULT_TAIL_BYTES,
            keep_stdout: None,
            secrets: Vec::new(),
            cancel: None,
            on_start: None,
            marker: None,
            stdin: None,
            whole_tree: false,
        }
    }

    /// Stops every process the command started, not only its process
    /// group: also those in a session or group of their own (a coding
    /// agent runs each shell command so), followed through `/proc` while it
    /// runs. When it times out or is cancelled they are stopped with it;
    /// when it ends, those still running are stopped too: nothing it
    /// started outlives it. A process that leaves before it is ever seen
    /// (a subshell that starts it and ends at once) is left to this
    /// process, which becomes a child subreaper for that, and is stopped
    /// with the tree too (see [`claim_every_orphan`](super::claim_every_orphan)
    /// for which). On Linux; elsewhere, the group only.
    pub fn whole_tree(mut self) -> Self {
        self.whole_tree = true;
        self
    }

    /// Gives the command `bytes` on its standard input, then end-of-file
    /// (without this, standard input is `/dev/null`). They are written from
    /// a thread of their own while the output is drained, so a command that
    /// reads all of its input before writing, or none of it, never blocks
    /// either side.
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(Arc::from(bytes.into()));
        self
    }

    /// Sets one variable.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// Sets every variable of `vars` (later values win).
    pub fn envs<K: Into<OsString>, V: Into<OsString>>(
        mut self,
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        for (k, v) in vars {
            self.env.insert(k.into(), v.into());
        }
        self
    }

    /// A secret value to replace with [`REDACTED`](super::REDACTED) in logs,
    /// tails and kept output. Empty values are ignored.
    pub fn redact(mut self, secret: impl Into<Vec<u8>>) -> Self {
        self.secrets.push(secret.into());
        self
    }

    /// Calls `hook` with the child's process id, which is also its process
    /// group id, as soon as it has started: for a host that records it, so
    /// that a later process can stop a command this one left behind when it
    /// was killed.
    ///
    /// The hook is not called when the command cannot be started. It runs
    /// on the thread that supervises the command, before any output is read
    /// and with the timeout already running, so it should be quick; if it
    /// panics, the command's process group is killed.
    pub fn on_start(mut self, hook: impl Fn(u32) + Send + Sync + 'static) -> Self {
        self.on_start = Some(StartHook(Arc::new(hook)));
        self
    }

    /// The argv.
    pub fn argv(&self) -> &[OsString] {
        &self.argv
    }

    fn program(&self) -> String {
        self.argv
            .first()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

impl ExecRequest {
    orcho_core::setters! {
        /// The working directory.
        pub fn cwd(dir: Some(impl Into<Utf8PathBuf>)) => cwd;
        /// Kills the process group after `timeout` (`SIGTERM`, the grace period,
        /// `SIGKILL`).
        pub fn timeout(timeout: Some(Duration));
        /// The time between `SIGTERM` and `SIGKILL` (default [`DEFAULT_GRACE`]).
        pub fn grace(grace: Duration);
        /// Writes the full standard output to `path` (created or truncated,
        /// its directory created when missing).
        pub fn stdout_log(path: Some(impl Into<Utf8PathBuf>)) => stdout_log;
        /// Writes the full standard error to `path` (created or truncated, its
        /// directory created when missing).
        pub fn stderr_log(path: Some(impl Into<Utf8PathBuf>)) => stderr_log;
        /// How many bytes of each stream to keep in memory (default
        /// [`DEFAULT_TAIL_BYTES`]).
        pub fn tail_bytes(bytes: usize) => tail_bytes;
        /// Also keeps the whole standard output in memory when it is at most
        /// `max_bytes` long ([`CapturedOutput::kept`]); for commands whose output
        /// is their result.
        pub fn keep_stdout(max_bytes: Some(usize)) => keep_stdout;
        /// Cancels the command when `token` is cancelled.
        pub fn cancel(token: Some(CancelToken)) => cancel;
        /// Names the command's process group in `marker` while it runs, so that
        /// if this process is killed, the next one can stop what is left of it
        /// ([`GroupMarker::stop_leftover`]). The marker is written once the
        /// group is guarded and removed when the command ends; a marker that
        /// cannot be written is reported in [`ExecOutcome::warnings`], and the
        /// command runs all the same.
        pub fn group_marker(marker: Some(GroupMarker));
    }
}

/// The result of [`run`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExecOutcome {
    /// How it ended.
    pub status: ExitStatus,
    /// From just before the spawn to the end of supervision.
    pub duration: Duration,
    /// Its standard output.
    pub stdout: CapturedOutput,
    /// Its standard error.
    pub stderr: CapturedOutput,
    /// What went wrong around the command without stopping it (a group
    /// marker that could not be written or removed).
    pub warnings: Vec<String>,
}

/// Runs a command to completion, under the rules of the [module docs](super).
///
/// A command that cannot be spawned is not an error: the outcome's status
/// is [`ExitStatus::SpawnFailed`].
///
/// # Errors
///
/// An [`ExecError`] when a log file cannot be created or written, or the
/// process cannot be supervised (a pipe read fails). The process group is
/// killed before returning it.
pub fn run(request: &ExecRequest) -> Result<ExecOutcome, ExecError> {
    run_streaming(request, &mut |_| {})
}

/// Like [`run`], and also hands each chunk of (redacted) standard output to
/// `on_stdout` as it arrives, for callers that process a command's output
/// while it is still running.
///
/// # Errors
///
/// As [`run`].
pub fn run_streaming(
    request: &ExecRequest,
    on_stdout: &mut dyn FnMut(&[u8]),
) -> Result<ExecOutcome, ExecError> {
    run_teed(request, on_stdout, &mut |_| {})
}

/// Like [`run_streaming`], and also hands each chunk of (redacted) standard
/// error to `on_stderr`: for a command whose output a person watches while
/// it is recorded (`orcho exec`).
///
/// # Errors
///
/// As [`run`].
pub fn run_teed(
    request: &ExecRequest,
    on_stdout: &mut dyn FnMut(&[u8]),
    on_stderr: &mut dyn FnMut(&[u8]),
) -> Result<ExecOutcome, ExecError> {
    let program = request.program();
    let err = |kind| ExecError::new(&program, kind);
    let mut stdout_sink = Sink::new(
        request.stdout_log.as_deref(),
        request.tail_bytes,
        request.keep_stdout,
        &request.secrets,
    )
    .map_err(|e| err(ExecErrorKind::Log(e)))?;
    let mut stderr_sink = Sink::new(
        request.stderr_log.as_deref(),
        request.tail_bytes,
        None,
        &request.secrets,
    )
    .map_err(|e| err(ExecErrorKind::Log(e)))?;

    let started = Instant::now();
    // The outcome, once the command has ended (or never started).
    let outcome = |status,
                   warnings,
                   stdout: Sink,
                   stderr: Sink,
                   on_stdout: &mut dyn FnMut(&[u8]),
                   on_stderr: &mut dyn FnMut(&[u8])| {
        Ok(ExecOutcome {
            status,
            duration: started.elapsed(),
            stdout: stdout
                .finish(on_stdout)
                .map_err(|e| err(ExecErrorKind::Log(e)))?,
            stderr: stderr
                .finish(on_stderr)
                .map_err(|e| err(ExecErrorKind::Log(e)))?,
            warnings,
        })
    };
    // Cancelled before it started: never started, whatever its speed (a
    // fast command could otherwise end before the cancellation is seen).
    if request
        .cancel
        .as_ref()
        .is_some_and(CancelToken::is_cancelled)
    {
        return outcome(
            ExitStatus::Cancelled,
            Vec::new(),
            stdout_sink,
            stderr_sink,
            on_stdout,
            on_stderr,
        );
    }
    if request.whole_tree {
        // Before the command starts: what it leaves at once is this
        // process's to claim, not init's.
        super::tree::adopt();
    }
    let child = match spawn(request) {
        Ok(child) => child,
        Err(message) => {
            let status = ExitStatus::SpawnFailed { message };
            return outcome(
                status,
                Vec::new(),
                stdout_sink,
                stderr_sink,
                on_stdout,
                on_stderr,
            );
        }
    };
    let mut group = Group::new(child);
    let pid = group.child.id();
    if let (Some(bytes), Some(mut pipe)) = (request.stdin.clone(), group.child.stdin.take()) {
        // A command that exits without reading closes the pipe: the write
        // then fails with EPIPE, which says nothing about the command.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
    }
    let mut warnings = Vec::new();
    // Once the group is guarded: a failure here still kills it.
    if let Some(marker) = &request.marker
        && let Err(e) = marker.record(pid)
    {
        warnings.push(format!(
            "the process group could not be recorded in `{}` ({e}); if this process is killed, \
             the command may keep running",
            marker.path()
        ));
    }
    if let Some(StartHook(hook)) = &request.on_start {
        hook(pid);
    }
    let status = supervise(
        request,
        &mut group,
        &mut stdout_sink,
        &mut stderr_sink,
        on_stdout,
        on_stderr,
    )
    .map_err(|e| err(ExecErrorKind::Supervise(e)));
    if let Some(marker) = &request.marker
        && let Err(e) = marker.clear(pid)
    {
        warnings.push(format!(
            "the process marker `{}` could not be removed ({e})",
            marker.path()
        ));
    }
    outcome(
        status?,
        warnings,
        stdout_sink,
        stderr_sink,
        on_stdout,
        on_stderr,
    )
}

/// Starts the command in its own process group, or says why it could not.
fn spawn(request: &ExecRequest) -> Result<Child, String> {
    let Some((first, rest)) = request.argv.split_first() else {
        return Err("argv is empty".to_owned());
    };
    let cwd = request.cwd.as_deref();
    let message = |e: io::Error| spawn_message(&e, cwd);
    let program = super::lookup::find_program(
        first,
        request.env.get(OsStr::new("PATH")).map(OsString::as_os_str),
        cwd.map(Utf8Path::as_std_path),
    )
    .map_err(message)?;
    match command(request, &program, first, rest).spawn() {
        Ok(child) => Ok(child),
        // As `execvp` does, a file found on `PATH` that the kernel cannot
        // execute (a script without a `#!` line) is run by the shell.
        Err(e)
            if e.raw_os_error() == Some(Errno::NOEXEC.raw_os_error())
                && !first.as_bytes().contains(&b'/') =>
        {
            let shell = OsStr::new("/bin/sh");
            let args: Vec<OsString> = std::iter::once(program.into_os_string())
                .chain(rest.iter().cloned())
                .collect();
            command(request, Path::new(shell), shell, &args)
                .spawn()
                .map_err(message)
        }
        Err(e) => Err(message(e)),
    }
}

/// `program` with `arg0` and `args`, in the request's environment and
/// directory, in a process group of its own.
fn command(request: &ExecRequest, program: &Path, arg0: &OsStr, args: &[OsString]) -> Command {
    let mut command = Command::new(program);
    command
        .arg0(arg0)
        .args(args)
        .env_clear()
        .envs(&request.env)
        .stdin(if request.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(cwd) = &request.cwd {
        command.current_dir(cwd);
    }
    command
}

fn spawn_message(e: &io::Error, cwd: Option<&Utf8Path>) -> String {
    // A missing working directory explains any failure to start, whatever
    // the lookup of the program then ran into.
    if let Some(cwd) = cwd
        && !cwd.is_dir()
    {
        return format!("working directory `{cwd}` does not exist");
    }
    match e.kind() {
        io::ErrorKind::NotFound => "program not found".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => e.to_string(),
    }
}

/// A spawned child and its process group, killed and reaped on drop if
/// supervision ends early.
struct Group {
    child: Child,
    pgid: Option<Pid>,
    reaped: Option<std::process::ExitStatus>,
}

impl Group {
    fn new(child: Child) -> Self {
        super::tree::started(child.id());
        let pgid = i32::try_from(child.id()).ok().and_then(Pid::from_raw);
        Self {
            child,
            pgid,
            reaped: None,
        }
    }

    fn signal(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            // ESRCH (the group is gone) is the expected way for this to fail.
            let _ = rustix::process::kill_process_group(pgid, signal);
        }
    }

    fn try_reap(&mut self) -> io::Result<Option<std::process::ExitStatus>> {
        if self.reaped.is_none() {
            self.reaped = self.child.try_wait()?;
        }
        Ok(self.reaped)
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.reaped.is_none() {
            self.signal(Signal::KILL);
            let _ = self.child.wait();
        }
        super::tree::reaped(self.child.id());
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ending {
    Running,
    /// `SIGTERM` was sent at this instant because of a timeout or a
    /// cancellation.
    Terminating {
        since: Instant,
        cancelled: bool,
    },
    /// `SIGKILL` was sent.
    Killed {
        cancelled: bool,
    },
}

fn supervise(
    request: &ExecRequest,
    group: &mut Group,
    stdout_sink: &mut Sink,
    stderr_sink: &mut Sink,
    on_stdout: &mut dyn FnMut(&[u8]),
    on_stderr: &mut dyn FnMut(&[u8]),
) -> io::Result<ExitStatus> {
    let started = Instant::now();
    let deadline = request.timeout.map(|t| started + t);
    let mut stdout: Option<ChildStdout> = group.child.stdout.take();
    let mut stderr: Option<ChildStderr> = group.child.stderr.take();
    let pidfd: Option<OwnedFd> = group.pgid.and_then(open_pidfd);
    let registration: Option<Registration> = match &request.cancel {
        Some(token) => Some(token.register()?),
        None => None,
    };
    let mut ending = Ending::Running;
    let mut exited_at: Option<Instant> = None;
    let mut leak_killed_at: Option<Instant> = None;
    let mut buf = vec![0u8; CHUNK];
    // Every process it starts, where it is asked to follow them.
    let mut tree = request
        .whole_tree
        .then(|| super::tree::Tree::new(group.pgid));
    let mut next_scan = started;

    loop {
        let now = Instant::now();
        // 1. Has the child exited?
        if exited_at.is_none() && group.try_reap()?.is_some() {
            exited_at = Some(now);
            // What it started and left running ends with it.
            if let Some(tree) = &mut tree {
                tree.signal(Signal::TERM);
            }
        }
        if exited_at.is_none()
            && now >= next_scan
            && let Some(tree) = &mut tree
        {
            tree.scan();
            next_scan = now + super::tree::SCAN_EVERY;
        }
        // 2. Timeout and cancellation.
        if exited_at.is_none() {
            let cancelled_now = request
                .cancel
                .as_ref()
                .is_some_and(CancelToken::is_cancelled);
            match ending {
                Ending::Running if cancelled_now => {
                    signal_all(group, &mut tree, Signal::TERM);
                    ending = Ending::Terminating {
                        since: now,
                        cancelled: true,
                    };
                }
                Ending::Running if deadline.is_some_and(|d| now >= d) => {
                    signal_all(group, &mut tree, Signal::TERM);
                    ending = Ending::Terminating {
                        since: now,
                        cancelled: false,
                    };
                }
                Ending::Terminating { since, cancelled } if now >= since + request.grace => {
                    signal_all(group, &mut tree, Signal::KILL);
                    ending = Ending::Killed { cancelled };
                }
                Ending::Running | Ending::Terminating { .. } | Ending::Killed { .. } => {}
            }
        }
        // 3. Leaked pipe holders after the exit.
        if let Some(at) = exited_at {
            if stdout.is_none() && stderr.is_none() {
                break;
            }
            match leak_killed_at {
                None if now >= at + LEAK_GRACE => {
                    signal_all(group, &mut tree, Signal::KILL);
                    leak_killed_at = Some(now);
                }
                Some(killed) if now >= killed + KILLED_DRAIN => break,
                None | Some(_) => {}
            }
        }

        // 4. Wait for something to happen.
        let mut wake_at: Option<Instant> = None;
        let mut consider = |t: Instant| wake_at = Some(wake_at.map_or(t, |w: Instant| w.min(t)));
        if exited_at.is_none() {
            match ending {
                Ending::Running => {
                    if let Some(d) = deadline {
                        consider(d);
                    }
                }
                Ending::Terminating { since, .. } => consider(since + request.grace),
                Ending::Killed { .. } => {}
            }
            if pidfd.is_none() {
                consider(now + POLL_TICK);
            }
            if tree.is_some() {
                consider(next_scan);
            }
        } else {
            match leak_killed_at {
                None => consider(exited_at.unwrap_or(now) + LEAK_GRACE),
                Some(killed) => consider(killed + KILLED_DRAIN),
            }
        }
        let timeout = wake_at.map(|w| w.saturating_duration_since(now));
        let (out_ready, err_ready) = {
            let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(4);
            let mut slots = [usize::MAX; 4];
            if let Some(s) = &stdout {
                slots[0] = fds.len();
                fds.push(PollFd::new(s, PollFlags::IN));
            }
            if let Some(s) = &stderr {
                slots[1] = fds.len();
                fds.push(PollFd::new(s, PollFlags::IN));
            }
            if exited_at.is_none()
                && let Some(fd) = &pidfd
            {
                slots[2] = fds.len();
                fds.push(PollFd::new(fd, PollFlags::IN));
            }
            if exited_at.is_none()
                && matches!(ending, Ending::Running)
                && let Some(reg) = &registration
            {
                slots[3] = fds.len();
                fds.push(PollFd::from_borrowed_fd(reg.reader.as_fd(), PollFlags::IN));
            }
            let ts = timeout.map(|t| {
                Timespec::try_from(t).unwrap_or(Timespec {
                    tv_sec: i64::MAX / 2,
                    tv_nsec: 0,
                })
            });
            match rustix::event::poll(&mut fds, ts.as_ref()) {
                Ok(_) => {}
                Err(Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
            let ready = |slot: usize| slot != usize::MAX && !fds[slot].revents().is_empty();
            (ready(slots[0]), ready(slots[1]))
        };
        if out_ready
            && let Some(s) = &mut stdout
            && !drain_once(s, &mut buf, stdout_sink, on_stdout)?
        {
            stdout = None;
        }
        if err_ready
            && let Some(s) = &mut stderr
            && !drain_once(s, &mut buf, stderr_sink, on_stderr)?
        {
            stderr = None;
        }
    }
    // What it started is stopped by now, or is now.
    if let Some(tree) = &mut tree {
        tree.kill();
    }
    // Make sure the child is reaped even when we stopped waiting on pipes.
    let raw = match group.reaped {
        Some(status) => status,
        None => {
            group.signal(Signal::KILL);
            let status = group.child.wait()?;
            group.reaped = Some(status);
            status
        }
    };
    Ok(match ending {
        Ending::Terminating {
            cancelled: true, ..
        }
        | Ending::Killed { cancelled: true } => ExitStatus::Cancelled,
        Ending::Terminating {
            cancelled: false, ..
        }
        | Ending::Killed { cancelled: false } => ExitStatus::TimedOut {
            after: request.timeout.unwrap_or_default(),
        },
        Ending::Running => match (raw.code(), raw.signal()) {
            (Some(code), _) => ExitStatus::Exited(code),
            (None, Some(sig)) => ExitStatus::Signaled(sig),
            (None, None) => ExitStatus::Signaled(0),
        },
    })
}

/// Sends `signal` to the group, and to every process of the tree when one
/// is followed.
fn signal_all(group: &Group, tree: &mut Option<super::tree::Tree>, signal: Signal) {
    if let Some(tree) = tree {
        tree.signal(signal);
    }
    group.signal(signal);
}

/// A descriptor that becomes readable when the child exits, so that one
/// `poll` waits on the pipes, the child and cancellation at once.
#[cfg(target_os = "linux")]
fn open_pidfd(pid: Pid) -> Option<OwnedFd> {
    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
}

/// Without pidfds the loop polls for the child's exit every few
/// milliseconds.
#[cfg(not(target_os = "linux"))]
fn open_pidfd(_pid: Pid) -> Option<OwnedFd> {
    None
}

/// One read from a readable pipe; `false` at end of file.
fn drain_once<R: Read>(
    reader: &mut R,
    buf: &mut [u8],
    sink: &mut Sink,
    observe: &mut dyn FnMut(&[u8]),
) -> io::Result<bool> {
    match reader.read(buf) {
        Ok(0) => Ok(false),
        Ok(n) => sink.write(&buf[..n], observe).map(|()| true),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(true),
        Err(e) => Err(e),
    }
}
