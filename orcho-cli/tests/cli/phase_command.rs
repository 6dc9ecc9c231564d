//! `--phase PHASE=COMMAND`: shell words without a shell, and a program that
//! cannot start stops the run at once instead of being retried.

use crate::{
    Result,
    support::{QUICK, Repo, run_id},
};

#[test]
fn a_phase_command_is_split_into_shell_words() -> Result {
    let repo = Repo::new(QUICK)?;
    let out = repo.orcho(&[
        "run",
        "--phase",
        r#"implement=sh -c "echo 'making it pass'; touch ok""#,
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    assert_eq!(out.json()?["awaiting"], "delivery", "{out}");
    Ok(())
}

#[test]
fn an_unbalanced_quote_is_refused_before_a_run_starts() -> Result {
    let repo = Repo::new(QUICK)?;
    let out = repo.orcho(&[
        "run",
        "--phase",
        "implement=sh -c 'echo",
        "--no-interactive",
    ])?;
    out.expect_code(2);
    assert!(out.stderr.contains("unbalanced quote"), "{out}");
    assert!(!repo.dir().join(".orcho/runs").exists(), "{out}");
    Ok(())
}

#[test]
fn a_program_that_is_not_there_is_refused_before_a_run_starts() -> Result {
    let repo = Repo::new(QUICK)?;
    for (command, why) in [
        (
            "implement=./no-such-agent.sh",
            "neither committed nor a file of the checkout",
        ),
        ("implement=no-such-program-anywhere", "not on PATH"),
        ("implement=/no/such/agent", "not an executable file"),
    ] {
        let out = repo.orcho(&["run", "--phase", command, "--no-interactive"])?;
        out.expect_code(1);
        assert!(
            out.stderr
                .contains("cannot start, said before the run starts"),
            "{out}"
        );
        assert!(out.stderr.contains(why), "{out}");
        assert!(!repo.dir().join(".orcho/runs").exists(), "{out}");
    }
    // A script only the working copy has is said, not refused.
    repo.write("local.sh", "#!/bin/sh\ntouch ok\n")?;
    let out = repo.orcho(&["run", "--phase", "implement=./local.sh", "--no-interactive"])?;
    assert!(
        out.stderr.contains("`./local.sh`, which is not committed"),
        "{out}"
    );
    Ok(())
}

#[test]
fn a_program_that_cannot_start_is_an_error_at_once() -> Result {
    // Committed, so it passes the check before the run; not executable, so
    // it cannot start when the phase runs.
    let repo = Repo::with_files(QUICK, &[("no-such-agent.txt", "not a program\n")])?;
    let out = repo.orcho(&[
        "run",
        "--phase",
        "implement=./no-such-agent.txt",
        "--no-interactive",
    ])?;
    out.expect_code(1);
    assert!(out.stderr.contains("cannot start"), "{out}");
    assert!(out.stderr.contains("orcho resume"), "{out}");
    assert_eq!(
        out.stderr.matches("running `./no-such-agent.txt`").count(),
        1,
        "{out}"
    );
    let runs: Vec<_> = std::fs::read_dir(repo.dir().join(".orcho/runs"))?.collect();
    assert_eq!(runs.len(), 1);
    let run = runs
        .into_iter()
        .next()
        .ok_or("no run")??
        .file_name()
        .to_string_lossy()
        .into_owned();
    let kinds: Vec<String> = repo
        .journal(&run)?
        .iter()
        .filter_map(|l| l["event"]["kind"].as_str().map(str::to_owned))
        .collect();
    assert!(!kinds.iter().any(|k| k == "phase_reported"), "{kinds:?}");
    // Another command, given on resume, runs the same attempt.
    let out = repo.orcho(&[
        "resume",
        &run,
        "--phase",
        "implement=touch ok",
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    assert_eq!(run_id(&out.json()?)?, run);
    assert_eq!(out.json()?["awaiting"], "delivery", "{out}");
    Ok(())
}

#[test]
fn ctrl_c_stops_what_the_phase_started_in_a_session_of_its_own() -> Result {
    // As a coding agent runs a shell command: in a session of its own.
    let phase = "#!/bin/sh\n\
        setsid sleep 1000 </dev/null >/dev/null 2>&1 &\n\
        echo $! > @CTL@/pid.tmp; mv @CTL@/pid.tmp @CTL@/pid\n\
        sleep 1000\n";
    let repo = Repo::with_files(QUICK, &[("phase.sh", phase)])?;
    let run = crate::support::Watched::new(repo.spawn(&[
        "run",
        "--in-place",
        "--no-interactive",
        "--phase",
        "implement=./phase.sh",
    ])?)?;
    let pid_file = repo.ctl("pid");
    crate::support::wait_for_file(&pid_file, crate::support::WAIT)?;
    run.interrupt()?;
    let out = run.finish()?;
    assert_eq!(out.code(), Some(130), "{out}");
    let pid = std::fs::read_to_string(&pid_file)?;
    let stat = format!("/proc/{}/stat", pid.trim());
    let deadline = std::time::Instant::now() + crate::support::WAIT;
    while std::fs::read_to_string(&stat).is_ok_and(|s| !s.contains(") Z ")) {
        assert!(
            std::time::Instant::now() < deadline,
            "the phase's sleep {pid} outlived Ctrl-C"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Ok(())
}

#[test]
fn what_a_phase_leaves_before_orcho_sees_it_ends_with_the_phase() -> Result {
    // Two ways out of sight: a subshell that starts a process in a session
    // of its own and ends at once, and one that starts a process in a group
    // of its own (as a host's own process would be) and ends at once.
    let phase = "#!/bin/sh\n\
        (setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > @CTL@/session.tmp; \
         mv @CTL@/session.tmp @CTL@/session)\n\
        (perl -e 'setpgrp(0, 0); exec q(sleep), q(1000)' </dev/null >/dev/null 2>&1 & \
         echo $! > @CTL@/group.tmp; mv @CTL@/group.tmp @CTL@/group)\n\
        touch done.txt\n";
    let repo = Repo::with_files(QUICK, &[("phase.sh", phase)])?;
    let out = repo.orcho(&["run", "--no-interactive", "--phase", "implement=./phase.sh"])?;
    assert!(out.code().is_some(), "{out}");
    for name in ["session", "group"] {
        let pid = std::fs::read_to_string(repo.ctl(name))?;
        let stat = format!("/proc/{}/stat", pid.trim());
        let deadline = std::time::Instant::now() + crate::support::WAIT;
        while std::fs::read_to_string(&stat).is_ok_and(|s| !s.contains(") Z ")) {
            if std::time::Instant::now() >= deadline {
                if let Some(p) = pid
                    .trim()
                    .parse()
                    .ok()
                    .and_then(rustix::process::Pid::from_raw)
                {
                    let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
                }
                panic!("the phase's sleep in a {name} of its own ({pid}) outlived the phase");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    Ok(())
}
