//! A store shared by a team on PostgreSQL: two checkouts (two
//! repositories, two "machines") on one database, against a real server
//! the test binary starts.

use std::collections::BTreeSet;

use orcho_pg::testing::{PASSWORD, Server};

use crate::{
    Result,
    support::{REVIEW, Repo, WAIT, Watched, finish, run_id},
};

/// A checkout of the team: its repository, the store's URL and its
/// machine's label.
struct Member<'a> {
    repo: Repo,
    url: &'a str,
    machine: &'a str,
}

impl Member<'_> {
    fn envs(&self) -> [(&str, &str); 2] {
        [("ORCHO_STORE", self.url), ("ORCHO_MACHINE", self.machine)]
    }

    fn orcho(&self, args: &[&str]) -> Result<crate::support::Out> {
        let out = finish(self.repo.spawn_with(&self.envs(), args)?, WAIT)?;
        out.expect_no_panic();
        assert!(
            !out.stdout.contains(PASSWORD) && !out.stderr.contains(PASSWORD),
            "{out}"
        );
        Ok(out)
    }

    /// Starts a run whose review rejects: it pauses at its handoff.
    fn paused(&self) -> Result<String> {
        let out = self.orcho(&[
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
}

#[test]
fn two_checkouts_share_one_inbox_and_record_one_decision() -> Result {
    let Some(server) = Server::shared() else {
        return Ok(());
    };
    let url = server.new_database();
    let a = Member {
        repo: Repo::new(REVIEW)?,
        url: &url,
        machine: "machine-a",
    };
    let b = Member {
        repo: Repo::new(REVIEW)?,
        url: &url,
        machine: "machine-b",
    };
    let ra = a.paused()?;
    let rb = b.paused()?;
    // Nothing of the runs is kept in the checkouts' directories.
    let local = a.repo.dir().join(".orcho/runs");
    let kept: Vec<_> = walk(&local);
    assert!(kept.is_empty(), "{kept:?}");

    // The inbox of either lists both, each saying where it was started.
    let out = a.orcho(&["inbox", "--json"])?;
    out.expect_code(0);
    let inbox = out.json()?;
    let pending = inbox["pending"].as_array().ok_or("no pending")?;
    let runs: BTreeSet<&str> = pending.iter().filter_map(|p| p["run"].as_str()).collect();
    assert_eq!(runs, BTreeSet::from([ra.as_str(), rb.as_str()]), "{out}");
    let theirs = pending
        .iter()
        .find(|p| p["run"] == rb.as_str())
        .ok_or("no rb")?;
    assert_eq!(theirs["origin"]["machine"], "machine-b", "{out}");
    assert_eq!(theirs["origin"]["checkout"], b.repo.dir().as_str(), "{out}");
    assert_eq!(theirs["origin"]["here"], false, "{out}");
    assert!(
        theirs["since"]
            .as_str()
            .is_some_and(|s| s.starts_with("20")),
        "{out}"
    );
    let text = a.orcho(&["inbox"])?;
    assert!(
        text.stdout
            .contains(&format!("on machine-b:{}", b.repo.dir())),
        "{text}"
    );

    // `--mine` and `--repo` narrow it; `runs` lists this checkout's runs.
    let mine = a.orcho(&["inbox", "--mine", "--json"])?.json()?;
    assert_eq!(mine["pending"].as_array().map(Vec::len), Some(1));
    assert_eq!(mine["pending"][0]["run"], ra.as_str());
    let repo_name = b
        .repo
        .dir()
        .parent()
        .and_then(camino::Utf8Path::file_name)
        .ok_or("no name")?;
    let theirs = a.orcho(&["inbox", "--repo", repo_name, "--json"])?.json()?;
    assert_eq!(theirs["pending"][0]["run"], rb.as_str());
    assert_eq!(theirs["pending"].as_array().map(Vec::len), Some(1));
    let listed = a.orcho(&["runs", "--json"])?;
    assert!(
        listed.stdout.contains(&ra) && !listed.stdout.contains(&rb),
        "{listed}"
    );

    // Twenty different decisions on the second checkout's run, from both
    // checkouts at once: exactly one is recorded.
    let texts: Vec<String> = (0..20).map(|n| format!("try again, take {n}")).collect();
    let children = texts
        .iter()
        .enumerate()
        .map(|(n, text)| {
            let from = if n % 2 == 0 { &a } else { &b };
            from.repo.spawn_with(
                &from.envs(),
                &[
                    "handoff",
                    "decide",
                    &rb,
                    "retry_feedback",
                    "--text",
                    text,
                    "--json",
                ],
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let outs = children
        .into_iter()
        .map(|child| finish(child, WAIT))
        .collect::<Result<Vec<_>>>()?;
    let codes: Vec<Option<i32>> = outs.iter().map(crate::support::Out::code).collect();
    assert_eq!(
        codes.iter().filter(|c| **c == Some(0)).count(),
        1,
        "{codes:?}"
    );
    assert_eq!(
        codes.iter().filter(|c| **c == Some(6)).count(),
        19,
        "{codes:?}"
    );
    for out in &outs {
        out.expect_no_panic();
    }
    // The log says who decided: the user at the machine whose process won.
    let winner = codes
        .iter()
        .position(|c| *c == Some(0))
        .ok_or("no winner")?;
    let machine = if winner % 2 == 0 {
        "machine-a"
    } else {
        "machine-b"
    };
    let log = b.orcho(&["log", &rb, "--json"])?.json()?;
    let decision = &log["decisions"][0];
    assert_eq!(decision["action"], "retry_feedback", "{log}");
    assert_eq!(decision["decided_by"], "operator", "{log}");
    assert!(
        decision["by"]
            .as_str()
            .is_some_and(|by| by.ends_with(&format!("@{machine}"))),
        "{log}"
    );
    let text = a.orcho(&["log", &rb])?;
    assert!(text.stdout.contains(&format!("@{machine} at ")), "{text}");

    // The run is driven only where it was started: resuming it from the
    // first checkout says where.
    let out = a.orcho(&["resume", &rb, "--no-interactive"])?;
    out.expect_code(1);
    assert!(out.stderr.contains("driven from machine-b"), "{out}");
    assert!(
        out.stderr
            .contains(&format!("on machine-b, in {}", b.repo.dir())),
        "{out}"
    );
    Ok(())
}

#[test]
fn a_wrong_store_url_is_one_line_and_exit_1() -> Result {
    let repo = Repo::new(REVIEW)?;
    for (url, says) in [
        (
            "postgres://u:hunter22@127.0.0.1:1/db?connect_timeout=3",
            "connection refused",
        ),
        (
            "postgres://u:hunter22@127.0.0.1/db?sslmode=sometimes",
            "not a PostgreSQL URL",
        ),
    ] {
        let out = finish(repo.spawn_with(&[("ORCHO_STORE", url)], &["inbox"])?, WAIT)?;
        out.expect_no_panic();
        out.expect_code(1);
        assert!(out.stderr.contains(says), "{out}");
        assert!(
            !out.stderr.contains("hunter22") && !out.stdout.contains("hunter22"),
            "{out}"
        );
    }
    Ok(())
}

/// The files under `dir` whose names say they are run documents (journals,
/// snapshots, decisions), not this machine's logs and worktrees.
fn walk(dir: &camino::Utf8Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = d.read_dir_utf8() else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path().to_owned();
            if path.is_dir() {
                if !path.as_str().contains("/worktree") {
                    stack.push(path);
                }
            } else if ["journal.jsonl", "snapshot.json", "run.lock"]
                .iter()
                .any(|n| path.as_str().ends_with(n))
                || path.as_str().contains("/decisions/")
            {
                found.push(path.to_string());
            }
        }
    }
    found
}

#[test]
fn resume_wait_goes_on_when_another_machine_decides() -> Result {
    let Some(server) = Server::shared() else {
        return Ok(());
    };
    let url = server.new_database();
    let a = Member {
        repo: Repo::new(REVIEW)?,
        url: &url,
        machine: "machine-a",
    };
    let b = Member {
        repo: Repo::new(REVIEW)?,
        url: &url,
        machine: "machine-b",
    };
    let run = b.paused()?;
    let waiting = Watched::new(b.repo.spawn_with(
        &b.envs(),
        &["resume", &run, "--wait", "--no-interactive", "--json"],
    )?)?;
    waiting.until("waiting for the handoff to be decided")?;
    let decided = a.orcho(&["handoff", "decide", &run, "halt", "--json"])?;
    decided.expect_code(0);
    let out = waiting.finish()?;
    out.expect_no_panic();
    assert!(out.stderr.contains("decided elsewhere"), "{out}");
    let end = out.json()?;
    assert_eq!(end["status"], "halted", "{out}");
    Ok(())
}

#[test]
fn resume_wait_with_a_directory_store_looks_again_until_decided() -> Result {
    let repo = Repo::new(REVIEW)?;
    let run = crate::support::paused_at_review(&repo)?;
    // Without --json, so that the point's display shows on stderr.
    let waiting = Watched::new(repo.spawn(&["resume", &run, "--wait", "--no-interactive"])?)?;
    waiting.until("waiting for the handoff to be decided")?;
    // Long enough for a few looks (twice a second): the point is shown
    // once, not at each look.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    repo.orcho(&["handoff", "decide", &run, "halt", "--json"])?
        .expect_code(0);
    let out = waiting.finish()?;
    out.expect_no_panic();
    assert_eq!(out.code(), Some(5), "halted: {out}");
    assert_eq!(out.stderr.matches("exit code 1").count(), 1, "{out}");
    assert_eq!(
        out.stderr.matches("waiting for the handoff").count(),
        1,
        "{out}"
    );
    Ok(())
}

#[test]
fn runs_move_between_a_directory_and_the_database() -> Result {
    let Some(server) = Server::shared() else {
        return Ok(());
    };
    let url = server.new_database();
    let repo = Repo::new(REVIEW)?;
    let run = crate::support::paused_at_review(&repo)?;
    let archive = repo.dir().join("../runs.jsonl");
    let out = repo.orcho(&["store", "export", "-o", archive.as_str()])?;
    out.expect_code(0);
    assert!(out.stdout.contains("exported 1 run"), "{out}");

    let team = Member {
        repo,
        url: &url,
        machine: "here",
    };
    let out = team.orcho(&["store", "migrate"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("schema version"), "{out}");
    let out = team.orcho(&["store", "import", archive.as_str()])?;
    out.expect_code(0);
    assert!(out.stdout.contains("imported 1 run"), "{out}");
    // The same run, waiting at the same point, now in the database.
    let inbox = team.orcho(&["inbox", "--json"])?.json()?;
    assert_eq!(inbox["pending"][0]["run"], run.as_str(), "{inbox}");
    let again = team.orcho(&["store", "import", archive.as_str()])?;
    assert!(again.stdout.contains("already there"), "{again}");
    // And back out again, line for line.
    let out = team.orcho(&["store", "export", &run])?;
    out.expect_code(0);
    let original = std::fs::read_to_string(&archive)?;
    assert_eq!(out.stdout, original);

    // A file that is no export is refused, naming the line, and nothing is
    // written.
    let bad = team.repo.dir().join("../bad.jsonl");
    orcho::core::fs::write_atomic(
        &bad,
        format!("{}\nnot json\n", original.trim_end()).as_bytes(),
    )?;
    let fresh = server.new_database();
    let other = Member {
        repo: Repo::new(REVIEW)?,
        url: &fresh,
        machine: "there",
    };
    let out = other.orcho(&["store", "import", bad.as_str()])?;
    out.expect_code(1);
    assert!(out.stderr.contains("line 2"), "{out}");
    let listed = other.orcho(&["inbox", "--json"])?.json()?;
    assert_eq!(
        listed["pending"].as_array().map(Vec::len),
        Some(0),
        "{listed}"
    );
    Ok(())
}

/// A phase that takes a moment, so that a kill lands in it as often as
/// between transitions.
const SLOW_IMPLEMENT: &str = "#!/bin/sh\nsleep 0.2\ntouch ok\n";

#[test]
fn a_driver_killed_at_random_instants_resumes_with_nothing_lost_or_applied_twice() -> Result {
    let Some(server) = Server::shared() else {
        return Ok(());
    };
    let url = server.new_database();
    let db = url
        .rsplit('/')
        .next()
        .and_then(|t| t.split('?').next())
        .ok_or("no database")?;
    let member = Member {
        repo: Repo::with_files(crate::support::QUICK, &[("implement.sh", SLOW_IMPLEMENT)])?,
        url: &url,
        machine: "here",
    };
    // The instants come from a seed that is printed, and can be given back
    // (ORCHO_TEST_SEED) to replay a failure.
    let mut seed: u64 = std::env::var_os("ORCHO_TEST_SEED")
        .and_then(|s| s.into_string().ok())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| u64::from(d.subsec_nanos()) | 1)
        });
    println!("ORCHO_TEST_SEED={seed}");
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    // The schema first, so that the test can look for the run (a kill
    // during a migration rolls it back whole; the next use migrates).
    member.orcho(&["store", "migrate"])?.expect_code(0);
    let mut run: Option<String> = None;
    let mut kills = 0;
    for _ in 0..8 {
        let args: Vec<&str> = match &run {
            None => vec![
                "run",
                "--phase",
                "implement=./implement.sh",
                "--no-interactive",
                "--json",
            ],
            Some(run) => vec!["resume", run, "--no-interactive", "--json"],
        };
        let mut child = member.repo.spawn_with(&member.envs(), &args)?;
        std::thread::sleep(std::time::Duration::from_millis(30 + next() % 700));
        if child.try_wait()?.is_none() {
            // SIGKILL: no destructor runs, the connection just drops.
            child.kill()?;
            kills += 1;
        }
        let _ = crate::support::wait(&mut child, WAIT)?;
        if run.is_none() {
            let made = server.psql(db, "SELECT run FROM orcho_runs");
            if !made.is_empty() {
                run = Some(made);
            }
        }
    }
    let run = run.ok_or("no run was ever created")?;
    // The lease of a killed driver is free at once: resume takes it and
    // goes on to the delivery gate.
    let out = member.orcho(&["resume", &run, "--no-interactive", "--json"])?;
    assert_eq!(out.code(), Some(4), "{out}");
    assert_eq!(
        out.json()?["awaiting"],
        "delivery",
        "after {kills} kills: {out}"
    );
    // The journal in the database: every line whole, numbered without a
    // gap or a repeat, and every transition once.
    let lines = server.psql(
        db,
        &format!(
            "SELECT convert_from(line, 'UTF8') FROM orcho_log_lines \
             WHERE run = '{run}' AND log = 'run' ORDER BY id"
        ),
    );
    let events = lines
        .lines()
        .map(serde_json::from_str::<serde_json::Value>)
        .collect::<Result<Vec<_>, _>>()?;
    let seqs: Vec<u64> = events.iter().filter_map(|e| e["seq"].as_u64()).collect();
    assert_eq!(
        seqs,
        (1..=events.len() as u64).collect::<Vec<_>>(),
        "{lines}"
    );
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| e["event"]["kind"].as_str())
        .collect();
    for once in [
        "started",
        "workspace_ready",
        "phase_settled",
        "delivery_opened",
    ] {
        assert_eq!(
            kinds.iter().filter(|k| **k == once).count(),
            1,
            "{once}: {kinds:?}"
        );
    }
    Ok(())
}

#[test]
fn a_delivery_decided_on_another_machine_is_checked_where_the_run_is() -> Result {
    let Some(server) = Server::shared() else {
        return Ok(());
    };
    let url = server.new_database();
    let a = Member {
        repo: Repo::new(REVIEW)?,
        url: &url,
        machine: "machine-a",
    };
    let b = Member {
        repo: Repo::with_files(crate::support::QUICK, &[("implement.sh", SLOW_IMPLEMENT)])?,
        url: &url,
        machine: "machine-b",
    };
    let out = b.orcho(&[
        "run",
        "--phase",
        "implement=./implement.sh",
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    assert_eq!(out.json()?["awaiting"], "delivery", "{out}");
    let run = run_id(&out.json()?)?;
    // The target on machine B changes after the gate opened; machine A
    // cannot see it, and records the decision.
    b.repo.write("ok", "made on machine B too\n")?;
    let decided = a.orcho(&["delivery", "decide", &run, "approve", "--json"])?;
    decided.expect_code(0);
    // Machine B checks its target when it delivers, and says what to do.
    let out = b.orcho(&["resume", &run, "--no-interactive"])?;
    assert_ne!(out.code(), Some(0), "{out}");
    assert!(out.stderr.contains("`ok`"), "{out}");
    Ok(())
}

#[test]
fn a_mistyped_scheme_is_refused_and_the_password_may_come_from_pgpassword() -> Result {
    let repo = Repo::new(REVIEW)?;
    // A mistyped scheme is no directory: refused, never written to.
    for url in [
        "postgress://u:hunter22@127.0.0.1/db",
        "pg://u:hunter22@h/db",
    ] {
        let out = finish(repo.spawn_with(&[("ORCHO_STORE", url)], &["inbox"])?, WAIT)?;
        out.expect_code(2);
        assert!(
            out.stderr.contains("only PostgreSQL URLs name a store"),
            "{out}"
        );
        assert!(!out.stderr.contains("hunter22"), "{out}");
    }
    assert!(!repo.dir().join("postgress:").exists());

    let Some(server) = Server::shared() else {
        return Ok(());
    };
    let url = server.new_database().replace(&format!(":{PASSWORD}@"), "@");
    let out = finish(repo.spawn_with(&[("ORCHO_STORE", &url)], &["inbox"])?, WAIT)?;
    out.expect_code(1);
    assert!(
        out.stderr.contains("neither the URL nor PGPASSWORD"),
        "{out}"
    );
    let with = [("ORCHO_STORE", url.as_str()), ("PGPASSWORD", PASSWORD)];
    finish(repo.spawn_with(&with, &["inbox"])?, WAIT)?.expect_code(0);
    Ok(())
}

/// While the shared store is down, the web inbox says so: 503 with
/// `Retry-After` for the API and the pages, for looking and deciding; once
/// the database is back, the same requests answer again.
#[test]
fn the_web_inbox_says_the_store_is_down_and_comes_back_with_it() -> Result {
    if Server::shared().is_none() {
        return Ok(());
    }
    // A server of its own: this test stops it.
    let server = Server::start()?;
    let url = server.new_database();
    let repo = Repo::new(REVIEW)?;
    let served = crate::web::serve_with(&repo, &[("ORCHO_STORE", &url)])?;
    let http = crate::web::agent();
    let bearer = format!("Bearer {}", served.decide);
    let inbox = || {
        http.get(format!("{}/api/inbox", served.base))
            .header("Authorization", &bearer)
            .call()
    };
    assert_eq!(crate::web::status(&inbox()?), 200);
    let session = crate::web::session(&http, &served)?;

    server.stop()?;
    let mut down = inbox()?;
    assert_eq!(crate::web::status(&down), 503);
    assert_eq!(
        down.headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok()),
        Some("5")
    );
    let said: serde_json::Value = serde_json::from_str(&down.body_mut().read_to_string()?)?;
    assert!(
        said["error"]
            .as_str()
            .is_some_and(|e| e.contains("cannot be reached")),
        "{said}"
    );
    let decided = http
        .post(format!("{}/api/runs/latest/decisions/handoff", served.base))
        .header("Authorization", &bearer)
        .header("Content-Type", "application/json")
        .send(serde_json::json!({ "action": "halt" }).to_string())?;
    assert_eq!(crate::web::status(&decided), 503);
    let page = http
        .get(format!("{}/", served.base))
        .header("Cookie", &session)
        .call()?;
    assert_eq!(crate::web::status(&page), 503);

    server.start_again()?;
    assert_eq!(crate::web::status(&inbox()?), 200);
    Ok(())
}

#[test]
fn the_team_inbox_pages_and_filters_and_finds_a_stopped_run_on_the_database() -> Result {
    let Some(server) = Server::shared() else {
        return Ok(());
    };
    let url = server.new_database();
    let a = Member {
        repo: Repo::new(REVIEW)?,
        url: &url,
        machine: "machine-a",
    };
    let b = Member {
        repo: Repo::new(REVIEW)?,
        url: &url,
        machine: "machine-b",
    };
    let paused = [a.paused()?, b.paused()?];
    // A run on b whose host dies mid-phase: nothing drives it any more.
    // (The phase ends when the test says, so that nothing outlives it.)
    let phase = format!(
        "review=sh -c 'touch {started}; while [ ! -e {go} ]; do sleep 0.05; done'",
        started = b.repo.ctl("started"),
        go = b.repo.ctl("go"),
    );
    let mut child = b.repo.spawn_with(
        &b.envs(),
        &["run", "--phase", &phase, "--no-interactive", "--json"],
    )?;
    crate::support::wait_for_file(&b.repo.ctl("started"), WAIT)?;
    child.kill()?;
    child.wait()?;

    // From a, the whole team's inbox: both decisions, and the stopped run
    // with where it was started.
    let inbox = a.orcho(&["inbox", "--json"])?.json()?;
    assert_eq!(inbox["total"], 3, "{inbox}");
    assert_eq!(inbox["pending"][0]["run"], paused[1].as_str(), "{inbox}");
    assert_eq!(inbox["pending"][1]["run"], paused[0].as_str(), "{inbox}");
    assert_eq!(
        inbox["stopped"][0]["origin"]["machine"], "machine-b",
        "{inbox}"
    );
    let stopped = inbox["stopped"][0]["run"].clone();
    // Decisions first, then stopped runs, a page at a time.
    let last = a
        .orcho(&["inbox", "--page", "2", "--per-page", "2", "--json"])?
        .json()?;
    assert_eq!(last["pending"], serde_json::json!([]), "{last}");
    assert_eq!(last["stopped"][0]["run"], stopped, "{last}");
    // A kind leaves the stopped run out; a repository keeps its own.
    let handoffs = a.orcho(&["inbox", "--kind", "handoff", "--json"])?.json()?;
    assert_eq!(handoffs["total"], 2, "{handoffs}");
    assert_eq!(handoffs["stopped"], serde_json::json!([]), "{handoffs}");
    let mine = a.orcho(&["inbox", "--mine", "--json"])?.json()?;
    assert_eq!(mine["total"], 1, "{mine}");
    assert_eq!(mine["pending"][0]["run"], paused[0].as_str(), "{mine}");
    orcho::core::fs::write_atomic(&b.repo.ctl("go"), b"")?;
    Ok(())
}

#[test]
fn an_agents_question_on_one_machine_is_answered_from_another() -> Result {
    let Some(server) = Server::shared() else {
        return Ok(());
    };
    let url = server.new_database();
    let a = Member {
        repo: crate::ask::asking_repo(120)?,
        url: &url,
        machine: "machine-a",
    };
    let b = Member {
        repo: Repo::new(REVIEW)?,
        url: &url,
        machine: "machine-b",
    };
    // On a, a phase's agent asks (its hook is told the database's URL).
    let child = a.repo.spawn_with(
        &a.envs(),
        &[
            "run",
            "--phase",
            "implement=./ask.sh",
            "--no-interactive",
            "--json",
        ],
    )?;
    // On b, the question is in the team's inbox, with where it was asked.
    let deadline = std::time::Instant::now() + WAIT;
    let asked = loop {
        let inbox = b
            .orcho(&["inbox", "--kind", "permission", "--json"])?
            .json()?;
        if inbox["total"] == 1 {
            break inbox["pending"][0].clone();
        }
        if std::time::Instant::now() > deadline {
            return Err(format!("no question in b's inbox: {inbox}").into());
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(asked["origin"]["machine"], "machine-a", "{asked}");
    let run = asked["run"].as_str().ok_or("run")?.to_owned();
    b.orcho(&["permission", "decide", &run, "allow", "--note", "from b"])?
        .expect_code(0);
    // On a, the hook answered the agent with b's decision.
    let out = finish(child, WAIT)?;
    out.expect_code(4);
    let hook = crate::ask::answer(&a.repo)?["hookSpecificOutput"].clone();
    assert_eq!(hook["permissionDecision"], "allow", "{hook}");
    assert!(
        hook["permissionDecisionReason"]
            .as_str()
            .is_some_and(|r| r.contains("allowed it") && r.contains("from b")),
        "{hook}"
    );
    Ok(())
}

#[test]
fn runs_lists_the_checkouts_own_and_with_team_every_machines_with_its_repository() -> Result {
    let Some(server) = Server::shared() else {
        return Ok(());
    };
    let url = server.new_database();
    let a = Member {
        repo: Repo::new(REVIEW)?,
        url: &url,
        machine: "machine-a",
    };
    let b = Member {
        repo: Repo::new(REVIEW)?,
        url: &url,
        machine: "machine-b",
    };
    // A clone: its remote, with a token a careless URL carries.
    b.repo.git(&[
        "remote",
        "add",
        "origin",
        "https://bot:ghp_token@example.com/acme/app.git",
    ])?;
    let ra = a.paused()?;
    let rb = b.paused()?;
    let own = a.orcho(&["runs"])?;
    own.expect_code(0);
    assert!(
        own.stdout.contains(&ra) && !own.stdout.contains(&rb),
        "{own}"
    );
    assert!(
        own.stdout
            .contains("`orcho runs --team` lists every machine's"),
        "{own}"
    );
    let team = a.orcho(&["runs", "--team"])?;
    team.expect_code(0);
    assert!(
        team.stdout.contains(&ra) && team.stdout.contains(&rb),
        "{team}"
    );
    assert!(
        team.stdout.contains(&format!(
            "started on machine-b in {} (https://bot@example.com/acme/app.git); driven there",
            b.repo.dir()
        )),
        "{team}"
    );
    assert!(!team.stdout.contains("ghp_token"), "{team}");
    // The run of this checkout says nothing of where: it is here.
    assert!(!team.stdout.contains("started on machine-a"), "{team}");
    let json = a.orcho(&["runs", "--team", "--json"])?.json()?;
    assert_eq!(json.as_array().map(Vec::len), Some(2), "{json}");
    Ok(())
}

/// A TCP proxy in front of the test's server that can be cut: its
/// connections closed and new ones refused, as when the database goes
/// down.
struct Cuttable {
    port: u16,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Cuttable {
    fn start(upstream: u16) -> Result<Self> {
        use std::{
            io::{Read, Write},
            net::{Shutdown, TcpListener, TcpStream},
            sync::{Arc, Mutex, atomic::Ordering},
        };
        let listener = TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let cut = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let (stop, streams) = (Arc::clone(&cut), Arc::clone(&open));
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                let Ok((client, _)) = listener.accept() else {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    continue;
                };
                let _ = client.set_nonblocking(false);
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                    continue;
                };
                if let Ok(mut kept) = streams.lock() {
                    kept.extend(
                        [client.try_clone(), server.try_clone()]
                            .into_iter()
                            .flatten(),
                    );
                }
                for (mut from, mut to) in [
                    (client.try_clone(), server.try_clone()),
                    (Ok(server), Ok(client)),
                ]
                .into_iter()
                .filter_map(|(a, b)| Some((a.ok()?, b.ok()?)))
                {
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 8192];
                        while let Ok(n) = from.read(&mut buf) {
                            if n == 0 || to.write_all(&buf[..n]).is_err() {
                                break;
                            }
                        }
                        let _ = to.shutdown(Shutdown::Both);
                    });
                }
            }
            // Down: every connection closed; the listener is dropped, so
            // new ones are refused.
            if let Ok(kept) = streams.lock() {
                for stream in kept.iter() {
                    let _ = stream.shutdown(Shutdown::Both);
                }
            }
        });
        Ok(Self { port, cut })
    }

    fn cut(&self) {
        self.cut.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn a_wait_that_loses_the_database_ends_with_the_resume_hint() -> Result {
    let Some(server) = Server::shared() else {
        return Ok(());
    };
    let direct = server.new_database();
    let proxy = Cuttable::start(server.port())?;
    let url = direct.replace(
        &format!("127.0.0.1:{}/", server.port()),
        &format!("127.0.0.1:{}/", proxy.port),
    ) + "&connect_timeout=2";
    let b = Member {
        repo: Repo::new(REVIEW)?,
        url: &url,
        machine: "machine-b",
    };
    let run = b.paused()?;
    let waiting = Watched::new(
        b.repo
            .spawn_with(&b.envs(), &["resume", &run, "--wait", "--no-interactive"])?,
    )?;
    waiting.until("waiting for the handoff to be decided")?;
    proxy.cut();
    let out = waiting.finish()?;
    out.expect_no_panic();
    assert_eq!(out.code(), Some(1), "{out}");
    assert!(
        out.stderr.contains(&format!(
            "`orcho resume {run} --wait` waits again once the store answers"
        )),
        "{out}"
    );
    assert!(!out.stderr.contains(PASSWORD), "{out}");
    // Nothing was lost: the run still waits at its handoff.
    let direct_member = Member {
        repo: Repo::new(REVIEW)?,
        url: &direct,
        machine: "machine-a",
    };
    let inbox = direct_member.orcho(&["inbox", "--json"])?.json()?;
    assert!(inbox.to_string().contains(&run), "{inbox}");
    Ok(())
}
