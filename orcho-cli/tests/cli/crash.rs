//! `orcho run` killed with SIGKILL in the middle of a phase, then
//! `orcho resume`: the phase command left behind is stopped, the run
//! continues from its journal and no transition is applied twice.

use std::{process::Stdio, time::Duration};

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

#[test]
fn killed_mid_phase_then_resumed_applies_nothing_twice() -> Result {
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
    let markers = repo.dir().join(".orcho/host");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !std::fs::read_dir(&markers).is_ok_and(|mut d| {
        d.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".phase.json")))
    }) {
        assert!(
            std::time::Instant::now() < deadline,
            "no phase process marker"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
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

    orcho::core::fs::write_atomic(&repo.ctl("fast"), b"")?;
    let out = repo.orcho(&["resume", run, "--no-interactive", "--json"])?;
    out.expect_code(4);
    assert_eq!(out.json()?["awaiting"], "delivery", "{out}");
    // The command the killed `orcho` left behind was stopped before the
    // attempt ran again.
    assert!(!running(pid), "the left-over phase command still runs");
    // Its child ignored SIGTERM and outlived the leader: SIGKILL reached it.
    assert!(!running(child), "the left-over command's child still runs");
    assert!(
        std::fs::read_dir(&markers).map_or(true, |mut d| d.next().is_none()),
        "no phase process marker is left in {markers}"
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
