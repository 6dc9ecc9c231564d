//! `orcho notify`: a webhook told, in the background, when a run waits at
//! a point, when the point is decided and when the run ends, against a
//! receiver the test starts that checks each signature; a slow endpoint
//! never holds up the command that made the event.

use std::time::{Duration, Instant};

use orcho_notify::testing::Receiver;

use crate::{
    Result,
    support::{Out, REVIEW, Repo, WAIT, finish, run_id},
};

const SECRET: &str = "a-long-test-secret-0123456789";

fn receiver() -> Result<Option<Receiver>> {
    Receiver::start(SECRET)
}

/// The receiver's requests once `n` have come (within 20 s).
fn wait_for(receiver: &Receiver, n: usize) -> Result<Vec<serde_json::Value>> {
    receiver.wait_for(n, Duration::from_secs(20))
}

/// Waits (at most 20 s) until `log` (an `orcho notify log --json`) lists
/// `n` attempts: the background delivery logs each once the endpoint has
/// answered.
fn until_logged(n: usize, log: impl Fn() -> Result<Out>) -> Result {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = log()?;
        if out.json()?.as_array().map_or(0, Vec::len) >= n {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("{n} attempts were not logged: {out}").into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `orcho <args>` with the webhook's secret in its environment (and so in
/// the deliverer's it starts).
fn orcho(repo: &Repo, args: &[&str]) -> Result<Out> {
    finish(repo.spawn_with(&[("HOOK_SECRET", SECRET)], args)?, WAIT)
}

#[test]
fn a_webhook_hears_a_run_wait_be_decided_and_end() -> Result {
    let Some(receiver) = receiver()? else {
        return Ok(());
    };
    let repo = Repo::new(REVIEW)?;
    let out = orcho(
        &repo,
        &[
            "notify",
            "add",
            "team",
            "--webhook",
            &receiver.url("/ok"),
            "--secret-env",
            "HOOK_SECRET",
            "--inbox-url",
            "http://127.0.0.1:8080",
        ],
    )?;
    out.expect_code(0);
    assert!(out.stdout.contains("notifier `team` added"), "{out}");

    let out = orcho(
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
    let got = wait_for(&receiver, 1)?;
    assert_eq!(got[0]["signed"], true, "{:#?}", got[0]);
    let body = &got[0]["body"];
    assert_eq!(body["event"], "point_opened", "{body}");
    assert_eq!(body["run"]["id"], run.as_str());
    assert_eq!(body["point"]["kind"], "handoff");
    assert_eq!(
        body["url"],
        format!("http://127.0.0.1:8080/runs/{run}").as_str()
    );

    let out = orcho(&repo, &["handoff", "decide", &run, "halt"])?;
    out.expect_code(0);
    let got = wait_for(&receiver, 3)?;
    let events: Vec<&str> = got
        .iter()
        .filter_map(|r| r["body"]["event"].as_str())
        .collect();
    assert!(events.contains(&"decided"), "{events:?}");
    assert!(events.contains(&"run_ended"), "{events:?}");
    let decided = got
        .iter()
        .find(|r| r["body"]["event"] == "decided")
        .ok_or("decided")?;
    assert_eq!(decided["body"]["decided"]["action"], "halt", "{decided}");
    assert!(got.iter().all(|r| r["signed"] == true), "{got:#?}");

    // The background delivery logs each attempt once the receiver has
    // answered: it has finished when all three are logged.
    until_logged(3, || repo.orcho(&["notify", "log", "--json"]))?;
    // Each event once, however often delivery runs again.
    let out = orcho(&repo, &["notify", "deliver", "--json"])?;
    out.expect_code(0);
    assert_eq!(out.json()?["sent"], 0, "{out}");
    let out = orcho(&repo, &["notify", "deliver"])?;
    assert!(out.stdout.contains("nothing was due"), "{out}");
    assert_eq!(receiver.requests().len(), 3);

    let out = repo.orcho(&["notify", "log", "--json"])?;
    out.expect_code(0);
    let log = out.json()?;
    assert_eq!(log.as_array().map(Vec::len), Some(3), "{out}");
    assert!(
        log.as_array()
            .into_iter()
            .flatten()
            .all(|d| d["outcome"]["result"] == "sent"),
        "{out}"
    );

    let out = repo.orcho(&["notify", "list"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("secret env:HOOK_SECRET"), "{out}");
    Ok(())
}

#[test]
fn a_slow_endpoint_never_holds_up_a_decision_and_typos_are_named() -> Result {
    let Some(receiver) = receiver()? else {
        return Ok(());
    };
    let repo = Repo::new(REVIEW)?;
    let out = repo.orcho(&[
        "notify",
        "add",
        "slow",
        "--webhook",
        &receiver.url("/slow"),
        "--json",
    ])?;
    out.expect_code(0);
    let secret = out.json()?["secret_value"]
        .as_str()
        .ok_or("a secret made and shown once")?
        .to_owned();
    assert_eq!(secret.len(), 64, "{out}");
    // Never shown again.
    let out = repo.orcho(&["notify", "list", "--json"])?;
    assert!(!out.stdout.contains(&secret), "{out}");

    let out = orcho(
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
    let started = Instant::now();
    let out = orcho(&repo, &["handoff", "decide", &run, "halt"])?;
    out.expect_code(0);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the decision waited for the endpoint: {:?}",
        started.elapsed()
    );

    let out = repo.orcho(&["notify", "remove", "slo"])?;
    out.expect_code(2);
    assert!(out.stderr.contains("did you mean `slow`"), "{out}");
    let out = repo.orcho(&["notify", "add", "x", "--webhook", "ftp://example"])?;
    out.expect_code(2);
    assert!(out.stderr.contains("is not an http or https URL"), "{out}");
    let out = repo.orcho(&[
        "notify",
        "add",
        "x",
        "--webhook",
        &receiver.url("/ok"),
        "--events",
        "point_open",
    ])?;
    out.expect_code(2);
    assert!(out.stderr.contains("did you mean `point_opened`"), "{out}");

    // A test event to a working endpoint, and to one that is down.
    let out = orcho(
        &repo,
        &[
            "notify",
            "add",
            "ok",
            "--webhook",
            &receiver.url("/ok"),
            "--secret-env",
            "HOOK_SECRET",
        ],
    )?;
    out.expect_code(0);
    let out = orcho(&repo, &["notify", "test", "ok"])?;
    out.expect_code(0);
    assert!(out.stdout.contains("it answered 200"), "{out}");
    let out = repo.orcho(&[
        "notify",
        "add",
        "down",
        "--webhook",
        "http://127.0.0.1:9/none",
    ])?;
    out.expect_code(0);
    let out = repo.orcho(&["notify", "test", "down"])?;
    out.expect_code(1);
    assert!(
        out.stderr.contains("the test event to `down` failed"),
        "{out}"
    );
    Ok(())
}

#[test]
fn a_team_on_one_database_shares_its_notifiers_and_each_machines_events_reach_them() -> Result {
    let Some(server) = orcho_pg::testing::Server::shared() else {
        return Ok(());
    };
    let Some(receiver) = receiver()? else {
        return Ok(());
    };
    let url = server.new_database();
    let (a, b) = (Repo::new(REVIEW)?, Repo::new(REVIEW)?);
    let on = |repo: &Repo, machine: &str, args: &[&str]| -> Result<Out> {
        let envs = [
            ("ORCHO_STORE", url.as_str()),
            ("ORCHO_MACHINE", machine),
            ("HOOK_SECRET", SECRET),
        ];
        let out = finish(repo.spawn_with(&envs, args)?, WAIT)?;
        out.expect_no_panic();
        Ok(out)
    };
    let out = on(
        &a,
        "machine-a",
        &[
            "notify",
            "add",
            "team",
            "--webhook",
            &receiver.url("/ok"),
            "--secret-env",
            "HOOK_SECRET",
        ],
    )?;
    out.expect_code(0);
    // Machine b sees the team's notifier, and its paused run reaches it.
    let out = on(&b, "machine-b", &["notify", "list", "--json"])?;
    assert_eq!(out.json()?[0]["name"], "team", "{out}");
    let out = on(
        &b,
        "machine-b",
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
    let got = wait_for(&receiver, 1)?;
    assert_eq!(got[0]["body"]["event"], "point_opened", "{got:#?}");
    assert_eq!(got[0]["body"]["run"]["id"], run.as_str());
    assert_eq!(got[0]["body"]["run"]["machine"], "machine-b", "{got:#?}");
    assert_eq!(got[0]["signed"], true);

    // Decided on machine a: its delivery sends the decision of b's run.
    let out = on(
        &a,
        "machine-a",
        &[
            "handoff",
            "decide",
            &run,
            "retry_feedback",
            "--text",
            "again",
        ],
    )?;
    out.expect_code(0);
    let got = wait_for(&receiver, 2)?;
    let decided = got
        .iter()
        .find(|r| r["body"]["event"] == "decided")
        .ok_or("decided")?;
    assert_eq!(
        decided["body"]["decided"]["action"], "retry_feedback",
        "{decided}"
    );
    // Every machine's log is the team's (once the delivery that sent the
    // decision has logged it).
    until_logged(2, || on(&b, "machine-b", &["notify", "log", "--json"]))?;
    Ok(())
}

#[test]
fn a_mail_notifier_is_mailed_when_a_run_waits_and_a_password_never_enters_the_store() -> Result {
    let Some(server) = Receiver::smtp()? else {
        return Ok(());
    };
    let repo = Repo::new(REVIEW)?;
    let out = repo.orcho(&[
        "notify",
        "add",
        "mail",
        "--smtp",
        &server.smtp_url(),
        "--to",
        "team@example.com",
        "--from",
        "orcho@example.com",
        "--events",
        "point_opened",
    ])?;
    out.expect_code(0);
    assert!(out.stdout.contains("mail to team@example.com"), "{out}");
    let out = repo.orcho(&[
        "run",
        "--phase",
        "review=false",
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    let run = run_id(&out.json()?)?;
    let mails = wait_for(&server, 1)?;
    let message = mails[0]["message"].as_str().ok_or("a message")?;
    assert!(message.contains(&run), "{message}");
    assert!(
        message.contains("waits: phase `review` rejected"),
        "{message}"
    );

    // A password in the URL would be kept in the store: refused.
    let out = repo.orcho(&[
        "notify",
        "add",
        "x",
        "--smtp",
        "smtp://me:hunter2@127.0.0.1:25",
        "--to",
        "a@b.c",
    ])?;
    out.expect_code(2);
    assert!(out.stderr.contains("--password-env"), "{out}");
    let out = repo.orcho(&["notify", "add", "x", "--smtp", &server.smtp_url()])?;
    out.expect_code(2);
    let out = repo.orcho(&[
        "notify",
        "add",
        "x",
        "--smtp",
        &server.smtp_url(),
        "--to",
        "nobody",
    ])?;
    out.expect_code(2);
    assert!(
        out.stderr.contains("`nobody` is not a mail address"),
        "{out}"
    );
    let out = repo.orcho(&["notify", "add", "x"])?;
    out.expect_code(2);
    Ok(())
}
