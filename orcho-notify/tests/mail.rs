//! Mail through an SMTP server the test starts (Python's standard library,
//! on 127.0.0.1): an event due is mailed once, its line as the subject;
//! a server that is not there fails and is tried again.

use orcho::{
    PhasePlan, PhaseRole, RunPlan,
    core::{RunStatus, Verdict},
    gates::PhaseOutcome,
    notify::{Notifier, Outcome, Target},
    testing::Scenario,
};
use orcho_notify::{Retry, Sender, deliver, testing::Receiver};

type Result<T = (), E = Box<dyn std::error::Error + Send + Sync>> = std::result::Result<T, E>;

fn mail(smtp: String) -> Target {
    Target::Mail {
        smtp,
        to: vec!["team@example.com".to_owned(), "lead@example.com".to_owned()],
        from: "orcho@example.com".to_owned(),
        password_env: None,
    }
}

#[tokio::test]
async fn a_waiting_point_is_mailed_once_with_its_line_as_the_subject() -> Result {
    let Some(server) = Receiver::smtp()? else {
        return Ok(());
    };
    let plan = RunPlan::new(
        "mail",
        vec![PhasePlan::new("review".parse()?, PhaseRole::Review)],
    );
    let run = Scenario::new(plan)
        .task("greet the user by name")
        .report("review", PhaseOutcome::new(Verdict::Rejected))
        .run()
        .await?;
    assert_eq!(run.status, RunStatus::AwaitingPhaseHandoff, "{}", run.trace);
    let store = run.engine.store();
    store.add_notifier(
        &Notifier::new("mail", mail(server.smtp_url()))?
            .with_inbox_url(Some("http://127.0.0.1:8470".to_owned())),
    )?;
    let pass = deliver(store, &Sender::new(), &Retry::default())?;
    assert_eq!((pass.sent, pass.failed), (1, 0), "{pass:?}");
    assert_eq!(deliver(store, &Sender::new(), &Retry::default())?.sent, 0);

    let mails = server.requests();
    assert_eq!(mails.len(), 1, "{mails:#?}");
    let got = &mails[0];
    assert_eq!(got["from"], "orcho@example.com");
    assert_eq!(
        got["to"],
        serde_json::json!(["team@example.com", "lead@example.com"])
    );
    let message = got["message"].as_str().ok_or("a message")?;
    assert!(message.contains("Subject: run "), "{message}");
    assert!(
        message.contains("waits: phase `review` rejected"),
        "{message}"
    );
    assert!(
        message.contains(&format!("http://127.0.0.1:8470/runs/{}", run.run)),
        "{message}"
    );
    assert!(message.contains("\"event\": \"point_opened\""), "{message}");
    assert_eq!(
        store.deliveries()?[0].outcome,
        Outcome::Sent { status: Some(250) }
    );

    // A server that is not there: failed, tried again later.
    store.add_notifier(&Notifier::new(
        "nowhere",
        mail("smtp://127.0.0.1:9".to_owned()),
    )?)?;
    let pass = deliver(store, &Sender::new(), &Retry::default())?;
    assert_eq!(pass.failed, 1, "{pass:?}");
    let last = store.deliveries()?.pop().ok_or("logged")?;
    let Outcome::Failed { error, .. } = &last.outcome else {
        return Err(format!("{:?}", last.outcome).into());
    };
    assert!(
        error.starts_with("mail through smtp://127.0.0.1:9"),
        "{error}"
    );

    // A server's password comes from the variable the notifier names: not
    // set, the mail is not sent, and the log says why.
    store.add_notifier(&Notifier::new(
        "signed-in",
        Target::Mail {
            smtp: server.smtp_url(),
            to: vec!["team@example.com".to_owned()],
            from: "orcho@example.com".to_owned(),
            password_env: Some("SMTP_PASSWORD".to_owned()),
        },
    )?)?;
    let pass = deliver(store, &Sender::new().with_env(|_| None), &Retry::default())?;
    assert_eq!((pass.sent, pass.failed), (0, 1), "{pass:?}");
    let last = store.deliveries()?.pop().ok_or("logged")?;
    let Outcome::Failed { error, .. } = &last.outcome else {
        return Err(format!("{:?}", last.outcome).into());
    };
    assert_eq!(
        error,
        "the secret's variable `SMTP_PASSWORD` is not set in this environment"
    );
    assert_eq!(server.requests().len(), 1, "nothing more was mailed");
    Ok(())
}
