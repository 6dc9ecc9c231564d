//! `orcho run` killed with SIGKILL in the middle of a phase, then
//! `orcho resume`: the phase command left behind is stopped, the run
//! continues from its journal and no transition is applied twice.

use std::{
    io::{BufRead, BufReader},
    process::Stdio,
    time::{Duration, Instant},
};

use camino::Utf8PathBuf;

use crate::{
    Result,
    support::{QUICK, Repo, WAIT, wait, wait_for_file},
};

/// Until the test creates `fast`, the phase starts a child that ignores
/// `SIGTERM`, leaves both process ids as markers and becomes a long sleep
/// (same process, its own process group); afterwards it makes the `test`
/// command pass and returns at once.
const IMPLEMENT: &str = r#"#!/bin/sh
echo "$ORCHO_ATTEMPT" >> "@CTL@/attempts"
if [ ! -e "@CTL@/fast" ]; then
  ( trap '' TERM; exec sleep 30 ) &
  echo $! > "@CTL@/child"
  echo $$ > "@CTL@/pid.tmp"
  mv "@CTL@/pid.tmp" "@CTL@/pid"
  exec sleep 30
fi
echo "done" > feature.txt
touch ok
"#;

/// Whether `pid` is a live process (an exited one waiting to be reaped by
/// its new parent does not count).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}

fn kinds(journal: &[serde_json::Value]) -> Vec<&str> {
    journal
        .iter()
        .filter_map(|l| l["event"]["kind"].as_str())
        .collect()
}

/// Waits for `orcho` to record its phase command, and returns the marker.
fn wait_for_marker(repo: &Repo) -> Result<Utf8PathBuf> {
    let runs = repo.dir().join(".orcho/runs");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(dirs) = std::fs::read_dir(&runs) {
            for dir in dirs {
                let marker = Utf8PathBuf::try_from(dir?.path())?.join("phase-group.json");
                if marker.exists() {
                    return Ok(marker);
                }
            }
        }
        assert!(Instant::now() < deadline, "no phase process marker");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn killed_mid_phase_then_resumed_applies_nothing_twice() -> Result {
    killed_mid_phase(false)
}

#[test]
fn a_phase_command_recorded_where_the_first_orcho_kept_it_is_stopped_too() -> Result {
    killed_mid_phase(true)
}

/// Kills `orcho run` in the middle of a phase and resumes the run; with
/// `legacy`, the marker of the phase command is where the first `orcho`
/// kept it.
fn killed_mid_phase(legacy: bool) -> Result {
    let repo = Repo::with_files(QUICK, &[("implement.sh", IMPLEMENT)])?;
    let mut child = repo
        .command(&[
            "run",
            "--phase",
            "implement=./implement.sh",
            "--no-interactive",
            "--json",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    wait_for_file(&repo.ctl("pid"), Duration::from_secs(30))?;
    // `orcho` records the phase command as soon as it has started it; the
    // kill comes after that.
    let marker = wait_for_marker(&repo)?;
    // SIGKILL: no destructor runs, the phase command is left behind.
    child.kill()?;
    let status = wait(&mut child, WAIT)?;
    assert_eq!(status.code(), None, "killed by a signal: {status}");
    let pid: u32 = std::fs::read_to_string(repo.ctl("pid"))?.trim().parse()?;
    let child: u32 = std::fs::read_to_string(repo.ctl("child"))?.trim().parse()?;
    assert!(running(pid), "the phase command outlives `orcho run`");
    assert!(running(child), "so does its child");

    // Exactly one run, stopped inside its first attempt: nothing reported.
    let runs: Vec<String> = std::fs::read_dir(repo.dir().join(".orcho/runs"))?
        .map(|e| Ok(e?.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_>>()?;
    assert_eq!(runs.len(), 1, "{runs:?}");
    let run = &runs[0];
    let before = repo.journal(run)?;
    assert_eq!(kinds(&before), ["started", "workspace_ready"]);
    assert_eq!(marker, repo.run_dir(run).join("phase-group.json"));
    if legacy {
        // Where the first `orcho` kept the marker: it is read there too.
        let old = repo.dir().join(format!(".orcho/host/{run}.phase.json"));
        std::fs::create_dir_all(repo.dir().join(".orcho/host"))?;
        std::fs::rename(&marker, &old)?;
    }

    orcho::core::fs::write_atomic(&repo.ctl("fast"), b"")?;
    let out = repo.orcho(&["resume", run, "--no-interactive", "--json"])?;
    out.expect_code(4);
    assert_eq!(out.json()?["awaiting"], "delivery", "{out}");
    // The command the killed `orcho` left behind was stopped before the
    // attempt ran again.
    assert!(!running(pid), "the left-over phase command still runs");
    // Its child ignored SIGTERM and outlived the leader: SIGKILL reached it.
    assert!(!running(child), "the left-over command's child still runs");
    assert!(!marker.exists(), "the phase process marker is left");
    assert!(
        std::fs::read_dir(repo.dir().join(".orcho/host")).map_or(true, |mut d| d.next().is_none()),
        "a phase process marker is left in the old place"
    );

    // The attempt that died is asked again (attempt 1 twice), and then
    // reported, gated and settled once.
    assert_eq!(std::fs::read_to_string(repo.ctl("attempts"))?, "1\n1\n");
    let journal = repo.journal(run)?;
    assert_eq!(
        kinds(&journal),
        [
            "started",
            "workspace_ready",
            "phase_reported",
            "gate_recorded",
            "phase_settled",
            "delivery_opened"
        ],
        "{journal:#?}"
    );
    assert_eq!(journal[..2], before[..]);
    let reported = &journal[2]["event"];
    assert_eq!(reported["phase"], "implement");
    assert_eq!(reported["attempt"], 1);
    // Sequence numbers run 1, 2, 3, … with no gap and no repeat.
    for (i, line) in journal.iter().enumerate() {
        assert_eq!(line["seq"].as_u64(), Some(i as u64 + 1), "{journal:#?}");
    }

    // The resumed run is whole: its delivery gate shows the change.
    let out = repo.orcho(&["delivery", "show", run, "--json"])?;
    out.expect_code(0);
    let gate = out.json()?;
    assert_eq!(gate["verdict"], "approved", "{out}");
    assert!(
        gate["diff"]
            .as_array()
            .ok_or("no diff")?
            .iter()
            .any(|f| f["path"] == "feature.txt"),
        "{out}"
    );
    Ok(())
}

/// `orcho run` killed at once after it printed its run id: the run it
/// leaves resumes to the end.
#[test]
fn a_run_killed_right_after_it_printed_its_id_resumes() -> Result {
    let repo = Repo::new(QUICK)?;
    let mut child = repo
        .command(&["run", "--phase", "implement=touch ok", "--no-interactive"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let mut stderr = BufReader::new(stderr);
    let mut line = String::new();
    while !line.ends_with(" started\n") {
        line.clear();
        if stderr.read_line(&mut line)? == 0 {
            return Err("`orcho run` never said it started".into());
        }
    }
    child.kill()?;
    wait(&mut child, WAIT)?;
    let run = line
        .strip_prefix("run ")
        .and_then(|l| l.strip_suffix(" started\n"))
        .ok_or_else(|| format!("no run id in {line:?}"))?;
    let out = repo.orcho(&["resume", run, "--no-interactive", "--json"])?;
    // Paused at its delivery gate, or, killed before its worktree was
    // ready, at the intake question for the checkout's changes.
    out.expect_no_panic();
    assert_eq!(out.code(), Some(4), "{out}");
    Ok(())
}
