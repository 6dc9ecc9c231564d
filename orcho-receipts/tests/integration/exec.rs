//! The one spawn site: statuses, timeouts, process groups, output, cancel.

use std::{os::unix::process::CommandExt as _, thread, time::Duration};

use orcho_receipts::exec::{self, BaseEnv, CancelToken, ExecRequest, ExitStatus, REDACTED};

use crate::{Result, temp, test_env, write};

/// The tests that follow a whole tree, or that need a process a command
/// left to outlive it, one at a time: this test process adopts what its
/// commands leave behind, and a tree claims what is left to it while it
/// runs.
static TREES: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn trees() -> std::sync::MutexGuard<'static, ()> {
    TREES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A script whose subshell starts a sleep in a session of its own and ends
/// at once; the sleep's id goes to `pid_file`.
fn leaves_at_once(pid_file: &camino::Utf8Path) -> String {
    format!(
        "(setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > {pid_file}.tmp; \
         mv {pid_file}.tmp {pid_file})"
    )
}

fn sh(script: &str) -> ExecRequest {
    ExecRequest::new(["sh", "-c", script]).envs(test_env())
}

#[test]
fn pass_and_fail_are_exit_codes() -> Result {
    let ok = exec::run(&sh("echo out; echo err >&2"))?;
    assert_eq!(ok.status, ExitStatus::Exited(0));
    assert!(ok.status.success());
    assert_eq!(ok.stdout.tail_lossy(), "out\n");
    assert_eq!(ok.stderr.tail_lossy(), "err\n");
    let fail = exec::run(&sh("exit 7"))?;
    assert_eq!(fail.status, ExitStatus::Exited(7));
    assert!(!fail.status.success());
    Ok(())
}

#[test]
fn a_signal_is_not_an_exit_code() -> Result {
    let out = exec::run(&sh("kill -SEGV $$"))?;
    assert_eq!(out.status, ExitStatus::Signaled(11));
    insta::assert_snapshot!(out.status, @"killed by signal 11 (SIGSEGV)");
    Ok(())
}

#[test]
fn spawn_failure_is_a_status() -> Result {
    let out = exec::run(&ExecRequest::new(["/definitely/not/a/program"]))?;
    insta::assert_snapshot!(out.status, @"could not be started: program not found");
    let dir = temp()?;
    let out = exec::run(
        &ExecRequest::new(["true"])
            .envs(test_env())
            .cwd(dir.path.join("missing")),
    )?;
    assert!(
        matches!(out.status, ExitStatus::SpawnFailed { .. }),
        "{:?}",
        out.status
    );
    assert!(out.status.to_string().contains("does not exist"));
    // Also when the lookup on `PATH` meets a file it may not execute first.
    write(&dir.path, "off/true", "", 0o644)?;
    let out = exec::run(
        &ExecRequest::new(["true"])
            .env("PATH", dir.path.join("off"))
            .cwd(dir.path.join("missing")),
    )?;
    assert!(
        out.status.to_string().contains("does not exist"),
        "{}",
        out.status
    );
    let out = exec::run(&ExecRequest::new(Vec::<String>::new()))?;
    assert!(matches!(out.status, ExitStatus::SpawnFailed { .. }));
    Ok(())
}

#[test]
fn a_bare_name_is_looked_up_on_the_childs_path() -> Result {
    let dir = temp()?;
    write(
        &dir.path,
        "bin/orcho-test-tool",
        "#!/bin/sh\necho ran \"$1\"\n",
        0o755,
    )?;
    write(&dir.path, "off/orcho-test-tool", "", 0o644)?;
    let on_path = |path: &str| {
        exec::run(
            &ExecRequest::new(["orcho-test-tool", "arg"])
                .envs(test_env())
                .env("PATH", path),
        )
    };
    let bin = dir.path.join("bin");
    let out = on_path(&format!("{}:/usr/bin:/bin", dir.path.join("off")))?;
    insta::assert_snapshot!(out.status, @"could not be started: permission denied");
    let out = on_path(&format!("/usr/bin:/bin:{bin}"))?;
    assert_eq!(out.status, ExitStatus::Exited(0));
    assert_eq!(out.stdout.tail_lossy(), "ran arg\n");
    // A relative entry is relative to the command's directory.
    let out = exec::run(
        &ExecRequest::new(["orcho-test-tool"])
            .env("PATH", "bin")
            .cwd(&dir.path),
    )?;
    assert_eq!(out.status, ExitStatus::Exited(0));
    // Not this process's `PATH`, nor the default one.
    let out = exec::run(&ExecRequest::new(["orcho-test-tool"]))?;
    insta::assert_snapshot!(out.status, @"could not be started: program not found");
    Ok(())
}

#[test]
fn on_start_is_told_the_childs_process_id() -> Result {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let hook = std::sync::Arc::clone(&seen);
    let out = exec::run(&sh("echo $$").on_start(move |pid| {
        hook.lock().expect("not poisoned").push(pid);
    }))?;
    let pid: u32 = out.stdout.tail_lossy().trim().parse()?;
    assert_eq!(*seen.lock().expect("not poisoned"), [pid]);
    Ok(())
}

/// As with `execvp`, a file found on `PATH` without a `#!` line is run by
/// the shell.
#[test]
fn a_script_without_an_interpreter_line_runs_in_sh() -> Result {
    let dir = temp()?;
    write(
        &dir.path,
        "bin/plain-script",
        "echo from sh \"$1\"\n",
        0o755,
    )?;
    let out = exec::run(
        &ExecRequest::new(["plain-script", "arg"])
            .envs(test_env())
            .env("PATH", format!("{}:/usr/bin:/bin", dir.path.join("bin"))),
    )?;
    assert_eq!(
        out.status,
        ExitStatus::Exited(0),
        "{:?}",
        out.stderr.tail_lossy()
    );
    assert_eq!(out.stdout.tail_lossy(), "from sh arg\n");
    Ok(())
}

/// The program is found by its name, and still sees that name as its
/// `argv[0]` (multi-call binaries dispatch on it).
#[cfg(target_os = "linux")]
#[test]
fn argv0_is_the_name_as_written() -> Result {
    let out = exec::run(&ExecRequest::new(["cat", "/proc/self/cmdline"]).envs(test_env()))?;
    assert_eq!(out.stdout.tail_lossy(), "cat\0/proc/self/cmdline\0");
    Ok(())
}

#[test]
fn the_environment_is_exactly_the_requested_one() -> Result {
    let out = exec::run(
        &ExecRequest::new(["env"])
            .envs(BaseEnv::empty().with("PATH", "/usr/bin:/bin"))
            .env("ONLY", "this")
            .keep_stdout(1 << 16),
    )?;
    let text = String::from_utf8(out.stdout.kept.unwrap_or_default())?;
    let mut vars: Vec<&str> = text.lines().collect();
    vars.sort_unstable();
    assert_eq!(vars, ["ONLY=this", "PATH=/usr/bin:/bin"]);
    Ok(())
}

fn pid_alive(pid: &str) -> bool {
    // A zombie waiting for its reaper is dead for our purposes.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn wait_dead(pid: &str) -> bool {
    // Reaping by init is asynchronous; poll for up to 10 s before declaring
    // the child alive (a fact, not a speed requirement).
    for _ in 0..1000 {
        if !pid_alive(pid) {
            return true;
        }
        thread::sleep(Duration::from_millis(10));
    }
    false
}

#[test]
fn timeout_kills_a_group_that_ignores_sigterm() -> Result {
    let dir = temp()?;
    let pids = dir.path.join("pids");
    // The shell and its children ignore SIGTERM; the children are in the
    // same process group and must die with it.
    let script = format!(
        "trap '' TERM; sleep 1000 & echo $! > {pids}; sleep 1000 & echo $! >> {pids}; echo started; wait"
    );
    // Long enough for the shell to start both children on a loaded
    // machine: what is tested is what happens at the timeout, not its length.
    let out = exec::run(
        &sh(&script)
            .timeout(Duration::from_secs(2))
            .grace(Duration::from_millis(200)),
    )?;
    assert_eq!(
        out.status,
        ExitStatus::TimedOut {
            after: Duration::from_secs(2)
        }
    );
    assert_eq!(out.stdout.tail_lossy(), "started\n");
    let pids = std::fs::read_to_string(&pids)?;
    let pids: Vec<&str> = pids.lines().collect();
    assert_eq!(pids.len(), 2);
    for pid in pids {
        assert!(wait_dead(pid), "child {pid} survived the timeout");
    }
    Ok(())
}

#[test]
fn cancel_from_another_thread_kills_the_group() -> Result {
    let dir = temp()?;
    let pid_file = dir.path.join("pid");
    let token = CancelToken::new();
    let canceller = token.clone();
    let watched = pid_file.clone();
    let t = thread::spawn(move || {
        // Cancel once the child is surely running.
        while !watched.exists() {
            thread::sleep(Duration::from_millis(5));
        }
        canceller.cancel();
    });
    // Renamed into place: the watcher never sees a file the shell is still
    // writing (an empty pid names no process, and `/proc//stat` exists).
    let out = exec::run(
        &sh(&format!(
            "sleep 1000 & echo $! > {pid_file}.tmp; mv {pid_file}.tmp {pid_file}; wait"
        ))
        .grace(Duration::from_millis(500))
        .cancel(token.clone()),
    )?;
    t.join().map_err(|_| "canceller panicked")?;
    assert_eq!(out.status, ExitStatus::Cancelled);
    let pid = std::fs::read_to_string(&pid_file)?;
    assert!(wait_dead(pid.trim()));
    // Cancelling is sticky: a new command with the same token does not run,
    // however fast it would have been.
    let again = exec::run(&sh(&format!("touch {}/ran", dir.path)).cancel(token))?;
    assert_eq!(again.status, ExitStatus::Cancelled);
    assert!(
        !dir.path.join("ran").exists(),
        "a cancelled command started"
    );
    Ok(())
}

#[test]
fn a_leaked_background_process_does_not_hang_us() -> Result {
    let dir = temp()?;
    let pid_file = dir.path.join("pid");
    // The shell exits at once but leaves a child holding stdout open.
    let out = exec::run(&sh(&format!(
        "sleep 1000 & echo $! > {pid_file}; echo done"
    )))?;
    assert_eq!(out.status, ExitStatus::Exited(0));
    assert_eq!(out.stdout.tail_lossy(), "done\n");
    let pid = std::fs::read_to_string(&pid_file)?;
    assert!(wait_dead(pid.trim()), "the leaked child was not killed");
    Ok(())
}

#[test]
fn a_flood_of_output_keeps_a_bounded_tail_and_a_full_log() -> Result {
    let dir = temp()?;
    let log = dir.path.join("stdout.log");
    let err_log = dir.path.join("stderr.log");
    // 64 MiB on stdout and 16 MiB on stderr at the same time: drained
    // concurrently, or the child would block on a full pipe.
    let out = exec::run(
        &sh("head -c 16777216 /dev/zero >&2 & head -c 67108864 /dev/zero | tr '\\0' x; wait; printf END")
            .tail_bytes(1024)
            .stdout_log(&log)
            .stderr_log(&err_log),
    )?;
    assert_eq!(out.status, ExitStatus::Exited(0));
    assert_eq!(out.stdout.total_bytes, (64 << 20) + 3);
    assert_eq!(out.stdout.tail.len(), 1024);
    assert!(out.stdout.tail.ends_with(b"xxxEND"));
    assert!(!out.stdout.is_complete());
    assert_eq!(std::fs::metadata(&log)?.len(), (64 << 20) + 3);
    assert_eq!(out.stderr.total_bytes, 16 << 20);
    assert_eq!(std::fs::metadata(&err_log)?.len(), 16 << 20);
    let digest = out.stdout.log.as_ref().map(|l| l.digest).ok_or("no log")?;
    let bytes = std::fs::read(&log)?;
    assert_eq!(
        digest,
        orcho_core::Digest::derive("orcho command log v1", &bytes)
    );
    Ok(())
}

#[test]
fn secrets_are_redacted_from_logs_and_tails() -> Result {
    let dir = temp()?;
    let log = dir.path.join("out.log");
    let out = exec::run(
        &sh("echo \"token=$TOKEN\"; head -c 65530 /dev/zero | tr '\\0' a; echo \"$TOKEN\"; echo \"$TOKEN\" >&2")
            .tail_bytes(1 << 20)
            .env("TOKEN", "s3cr3t-value")
            .redact("s3cr3t-value")
            .stdout_log(&log),
    )?;
    let tail = out.stdout.tail_lossy();
    assert!(tail.starts_with(&format!("token={REDACTED}\n")), "{tail}");
    assert!(!tail.contains("s3cr3t-value"));
    assert!(
        tail.ends_with(&format!("a{REDACTED}\n")),
        "a secret across a read boundary"
    );
    let logged = std::fs::read_to_string(&log)?;
    assert!(!logged.contains("s3cr3t-value"));
    assert_eq!(logged.matches(REDACTED).count(), 2);
    assert_eq!(out.stderr.tail_lossy(), format!("{REDACTED}\n"));
    Ok(())
}

#[test]
fn many_short_commands_in_parallel() -> Result {
    let handles: Vec<_> = (0..16)
        .map(|i| thread::spawn(move || exec::run(&sh(&format!("exit {i}")))))
        .collect();
    for (i, h) in handles.into_iter().enumerate() {
        let out = h.join().map_err(|_| "panicked")??;
        assert_eq!(out.status, ExitStatus::Exited(i32::try_from(i)?));
    }
    Ok(())
}

#[test]
fn stdin_is_fed_while_the_output_is_drained_and_streams_are_teed() -> Result {
    // Larger than a pipe buffer in and out: written and read at once.
    let input = "x".repeat(400_000);
    let echoed = exec::run(
        &sh("cat; echo done >&2")
            .stdin(input.clone())
            .keep_stdout(1 << 20),
    )?;
    assert!(echoed.status.success());
    assert_eq!(echoed.stdout.kept.as_deref(), Some(input.as_bytes()));
    // A command that never reads its input ends all the same.
    let ignored = exec::run(&sh("exit 4").stdin(input))?;
    assert_eq!(ignored.status, ExitStatus::Exited(4));
    // Without `stdin`, standard input is empty.
    let empty = exec::run(&sh("wc -c"))?;
    assert_eq!(empty.stdout.tail_lossy().trim(), "0");

    let (mut out, mut err) = (Vec::new(), Vec::new());
    let teed = exec::run_teed(
        &sh("echo to-out; echo to-err >&2"),
        &mut |b| out.extend_from_slice(b),
        &mut |b| err.extend_from_slice(b),
    )?;
    assert!(teed.status.success());
    assert_eq!(
        (out.as_slice(), err.as_slice()),
        (&b"to-out\n"[..], &b"to-err\n"[..])
    );
    Ok(())
}

#[test]
fn the_whole_tree_is_stopped_also_in_a_session_of_its_own() -> Result {
    let _trees = trees();
    let dir = temp()?;
    let pid_file = dir.path.join("pid");
    let token = CancelToken::new();
    let canceller = token.clone();
    let watched = pid_file.clone();
    let t = thread::spawn(move || {
        while !watched.exists() {
            thread::sleep(Duration::from_millis(5));
        }
        canceller.cancel();
    });
    // As a coding agent runs a shell command: in a session of its own,
    // which the group's signal does not reach.
    let out = exec::run(
        &sh(&format!(
            "setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > {pid_file}.tmp; \
             mv {pid_file}.tmp {pid_file}; wait"
        ))
        .grace(Duration::from_millis(500))
        .cancel(token)
        .whole_tree(),
    )?;
    t.join().map_err(|_| "canceller panicked")?;
    assert_eq!(out.status, ExitStatus::Cancelled);
    let pid = std::fs::read_to_string(&pid_file)?;
    assert!(wait_dead(pid.trim()), "the session's sleep {pid} runs on");
    Ok(())
}

#[test]
fn what_a_command_leaves_running_in_a_session_of_its_own_ends_with_it() -> Result {
    let _trees = trees();
    let dir = temp()?;
    let pid_file = dir.path.join("pid");
    let script =
        format!("setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > {pid_file}; sleep 1");
    let out = exec::run(&sh(&script).whole_tree())?;
    assert_eq!(out.status, ExitStatus::Exited(0));
    let pid = std::fs::read_to_string(&pid_file)?;
    assert!(
        wait_dead(pid.trim()),
        "the session's sleep {pid} outlived it"
    );

    // Without it, the group is all that is stopped: the session's process
    // runs on (and is stopped here).
    let out = exec::run(&sh(&script))?;
    assert_eq!(out.status, ExitStatus::Exited(0));
    let pid = std::fs::read_to_string(&pid_file)?;
    let pid = pid.trim();
    let alive = pid_alive(pid);
    if let Some(p) = pid.parse().ok().and_then(rustix::process::Pid::from_raw) {
        let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
    }
    assert!(alive, "a session of its own is outside the group");
    Ok(())
}

#[test]
fn a_process_that_leaves_before_it_is_seen_is_stopped_with_the_tree() -> Result {
    let _trees = trees();
    let dir = temp()?;
    let pid_file = dir.path.join("pid");
    // A subshell starts the sleep in a session of its own and ends at once,
    // with the command: the tree never sees the sleep below it.
    let script = leaves_at_once(&pid_file);
    let out = exec::run(&sh(&script).whole_tree())?;
    assert_eq!(out.status, ExitStatus::Exited(0));
    let pid = std::fs::read_to_string(&pid_file)?;
    assert!(
        wait_dead(pid.trim()),
        "the sleep {pid} that left its tree at once runs on"
    );
    Ok(())
}

#[test]
fn a_process_of_the_host_itself_is_not_taken_for_a_commands() -> Result {
    let _trees = trees();
    let dir = temp()?;
    let pid_file = dir.path.join("pid");
    // While a tree runs, the host starts a process of its own, in a group
    // of its own: not one a command left, so not stopped with the tree.
    #[expect(
        clippy::disallowed_methods,
        reason = "a host's own process, started beside the library's exec"
    )]
    let mut own = std::process::Command::new("sleep")
        .arg("1000")
        .process_group(0)
        .spawn()?;
    let script = format!("{}; sleep 0.2", leaves_at_once(&pid_file));
    let started_during = thread::scope(|scope| {
        let tree = scope.spawn(|| exec::run(&sh(&script).whole_tree()));
        // One started while the tree runs, too.
        thread::sleep(Duration::from_millis(50));
        #[expect(
            clippy::disallowed_methods,
            reason = "a host's own process, started beside the library's exec"
        )]
        let during = std::process::Command::new("sleep")
            .arg("1000")
            .process_group(0)
            .spawn();
        let out = tree.join().map_err(|_| "the tree's thread panicked");
        (during, out)
    });
    let (during, out) = started_during;
    let mut during = during?;
    assert_eq!(out??.status, ExitStatus::Exited(0));
    let alive = (
        pid_alive(&own.id().to_string()),
        pid_alive(&during.id().to_string()),
    );
    own.kill()?;
    own.wait()?;
    during.kill()?;
    during.wait()?;
    let pid = std::fs::read_to_string(&pid_file)?;
    assert!(wait_dead(pid.trim()), "the command's sleep {pid} runs on");
    assert_eq!(alive, (true, true), "the host's own processes were stopped");
    Ok(())
}

/// Set in the copy of this test binary that runs in a PID namespace of its
/// own, so that it does not start another.
const IN_NAMESPACE: &str = "ORCHO_TEST_IN_PID_NAMESPACE";

#[test]
fn a_tree_holds_where_the_session_leader_is_outside_the_pid_namespace() -> Result {
    if std::env::var_os(IN_NAMESPACE).is_some() {
        return Ok(());
    }
    // As in a container started by a runtime whose session leader lives in
    // the host's namespace: this process's session reads as 0 there.
    let exe = std::env::current_exe()?;
    #[expect(
        clippy::disallowed_methods,
        reason = "this test binary again, in a PID namespace of its own"
    )]
    let out = std::process::Command::new("unshare")
        .args([
            "--user",
            "--map-root-user",
            "--pid",
            "--fork",
            "--mount-proc",
        ])
        .arg(&exe)
        .args(["exec::", "--test-threads=1"])
        .env(IN_NAMESPACE, "1")
        .output();
    let out = match out {
        Ok(out) if out.status.success() => out,
        Ok(out) if String::from_utf8_lossy(&out.stderr).starts_with("unshare:") => {
            println!(
                "skipped: unshare cannot start a PID namespace here ({})",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            return Ok(());
        }
        Ok(out) => {
            return Err(format!(
                "the exec tests failed in a PID namespace of their own:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
            .into());
        }
        Err(e) => {
            println!("skipped: unshare is not here ({e})");
            return Ok(());
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("a_process_that_leaves_before_it_is_seen_is_stopped_with_the_tree ... ok"),
        "the tree's tests did not run there:\n{stdout}"
    );
    Ok(())
}
