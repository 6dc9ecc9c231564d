//! Webhooks against a receiver the test starts (Python's standard library,
//! on 127.0.0.1), which checks each signature itself: what is due is sent
//! once, signed; a failing endpoint is retried, logged and never blocks; a
//! slow one times out.

use std::time::{Duration, Instant};

use orcho::{
    PhasePlan, PhaseRole, RunPlan,
    core::{Finding, RunStatus, Severity, Verdict},
    gates::PhaseOutcome,
    notify::{EventKind, Notifier, Outcome, Secret, Target},
    testing::{Scenario, ScenarioRun},
};
use orcho_notify::{Retry, Sender, deliver, testing::Receiver};

type Result<T = (), E = Box<dyn std::error::Error + Send + Sync>> = std::result::Result<T, E>;

const SECRET: &str = "a-long-test-secret-0123456789";

fn receiver() -> Result<Option<Receiver>> {
    Receiver::start(SECRET)
}

async fn paused_at_review() -> Result<ScenarioRun> {
    let plan = RunPlan::new(
        "notify",
        vec![PhasePlan::new("review".parse()?, PhaseRole::Review)],
    );
    let rejected = PhaseOutcome::new(Verdict::Rejected).with_findings([Finding::new(
        "reviewer",
        Severity::Medium,
        "no name in the greeting",
    )]);
    let run = Scenario::new(plan)
        .task("greet the user by name")
        .report("review", rejected)
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::AwaitingPhaseHandoff, "{}", run.trace);
    Ok(run)
}

fn webhook(url: String) -> Target {
    Target::Webhook {
        url,
        secret: Secret::Env {
            var: "HOOK_SECRET".to_owned(),
        },
    }
}

fn sender() -> Sender {
    Sender::new().with_env(|var| (var == "HOOK_SECRET").then(|| SECRET.to_owned()))
}

#[tokio::test]
async fn a_waiting_point_reaches_the_receiver_once_signed() -> Result {
    let Some(receiver) = receiver()? else {
        return Ok(());
    };
    let run = paused_at_review().await?;
    let store = run.engine.store();
    store.add_notifier(&Notifier::new("team", webhook(receiver.url("/ok")))?)?;
    // While another process delivers, a pass does nothing.
    let held = store.delivering(Duration::ZERO)?.ok_or("free")?;
    let pass = std::thread::scope(|s| {
        s.spawn(|| deliver(store, &sender(), &Retry::default()))
            .join()
            .expect("no panic")
    })?;
    assert!(pass.busy && pass.sent == 0, "{pass:?}");
    // One that waits its turn sends once the other lets go.
    let pass = std::thread::scope(|s| {
        let waiting = s.spawn(|| {
            orcho_notify::deliver_within(
                store,
                &sender(),
                &Retry::default(),
                Duration::from_secs(20),
            )
        });
        std::thread::sleep(Duration::from_millis(200));
        drop(held);
        waiting.join().expect("no panic")
    })?;
    assert_eq!(
        (pass.sent, pass.failed, pass.busy),
        (1, 0, false),
        "{pass:?}"
    );
    // Nothing new: the next pass sends nothing.
    let pass = deliver(store, &sender(), &Retry::default())?;
    assert_eq!(pass.sent, 0, "{pass:?}");

    let requests = receiver.requests();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    let request = &requests[0];
    assert_eq!(
        request["signed"], true,
        "the receiver checked the signature: {request}"
    );
    assert_eq!(request["event"], "point_opened");
    assert_eq!(request["content_type"], "application/json");
    let body = &request["body"];
    assert_eq!(body["schema"], 1);
    assert_eq!(body["run"]["id"], run.run.as_str());
    assert_eq!(body["run"]["task"], "greet the user by name");
    assert_eq!(body["point"]["headline"], "phase `review` rejected");
    assert_eq!(body["point"]["actions"][1]["name"], "retry_feedback");
    assert!(
        body["text"].as_str().is_some_and(|t| t.contains("waits")),
        "a line a chat shows: {body}"
    );
    assert_eq!(request["delivery"], body["id"]);

    let log = store.deliveries()?;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].outcome, Outcome::Sent { status: Some(200) });
    Ok(())
}

#[tokio::test]
async fn a_failing_endpoint_is_logged_and_retried_and_a_wrong_secret_is_seen() -> Result {
    let Some(receiver) = receiver()? else {
        return Ok(());
    };
    let run = paused_at_review().await?;
    let store = run.engine.store();
    store.add_notifier(
        &Notifier::new("down", webhook(receiver.url("/fail")))?
            .with_events(vec![EventKind::PointOpened]),
    )?;
    let pass = deliver(store, &sender(), &Retry::default())?;
    assert_eq!((pass.sent, pass.failed), (0, 1), "{pass:?}");
    let log = store.deliveries()?;
    let Outcome::Failed { error, .. } = &log[0].outcome else {
        return Err(format!("{:?}", log[0].outcome).into());
    };
    assert!(
        error.contains("answered 500: down for maintenance"),
        "{error}"
    );
    // Not before its time.
    assert_eq!(deliver(store, &sender(), &Retry::default())?.failed, 0);
    // A policy of one attempt gives up at the first failure, and a later
    // pass sends nothing more.
    let mut once = Retry::default();
    once.attempts = 1;
    store.add_notifier(
        &Notifier::new("down-once", webhook(receiver.url("/fail")))?
            .with_events(vec![EventKind::PointOpened]),
    )?;
    let pass = deliver(store, &sender(), &once)?;
    assert_eq!((pass.failed, pass.gave_up), (0, 1), "{pass:?}");
    let pass = deliver(store, &sender(), &once)?;
    assert_eq!(
        (pass.sent, pass.failed, pass.gave_up),
        (0, 0, 0),
        "{pass:?}"
    );

    // A secret the receiver does not hold: sent, and seen as unsigned.
    store.add_notifier(&Notifier::new(
        "kept",
        Target::Webhook {
            url: receiver.url("/ok"),
            secret: Secret::generate()?,
        },
    )?)?;
    deliver(store, &sender(), &Retry::default())?;
    let requests = receiver.requests();
    let last = requests.last().ok_or("a request")?;
    assert_eq!(last["path"], "/ok");
    assert_eq!(
        last["signed"], false,
        "another secret signs otherwise: {last}"
    );
    Ok(())
}

#[tokio::test]
async fn a_slow_endpoint_times_out_and_a_missing_secret_is_said() -> Result {
    let Some(receiver) = receiver()? else {
        return Ok(());
    };
    let run = paused_at_review().await?;
    let store = run.engine.store();
    store.add_notifier(&Notifier::new("slow", webhook(receiver.url("/slow")))?)?;
    let started = Instant::now();
    let pass = deliver(
        store,
        &sender().with_timeout(Duration::from_secs(1)),
        &Retry::default(),
    )?;
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(pass.failed, 1, "{pass:?}");
    let log = store.deliveries()?;
    let Outcome::Failed { error, .. } = &log[0].outcome else {
        return Err(format!("{:?}", log[0].outcome).into());
    };
    assert!(error.contains("did not answer within 1s"), "{error}");

    store.remove_notifier("slow")?;
    store.add_notifier(&Notifier::new("nosecret", webhook(receiver.url("/ok")))?)?;
    let pass = deliver(store, &Sender::new().with_env(|_| None), &Retry::default())?;
    assert_eq!(pass.failed, 1);
    let log = store.deliveries()?;
    let Outcome::Failed { error, .. } = &log.last().ok_or("logged")?.outcome else {
        return Err("failed".into());
    };
    assert_eq!(
        error,
        "the secret's variable `HOOK_SECRET` is not set in this environment"
    );
    Ok(())
}
