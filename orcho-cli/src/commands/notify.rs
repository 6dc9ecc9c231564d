//! `orcho notify`: where the store's events are sent, and what was.

use orcho::{
    core::Timestamp,
    notify::{Delivery, Due, Event, EventKind, Notifier, Outcome, Secret, Target},
};
use std::time::Duration;

use orcho_notify::{Retry, Sender};
use serde::Serialize;

use crate::{error::CliError, exit::Exit, output::Report, place::Place};

/// A notifier as `list --json` shows it: never its secret.
#[derive(Debug, Serialize)]
struct NotifierDoc<'a> {
    name: &'a str,
    /// Where it sends: the webhook's URL, or `mail to … via …`.
    sends_to: String,
    events: Vec<&'static str>,
    /// `env:VAR`, `kept` (in the store), or `none` (mail).
    secret: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    inbox_url: Option<&'a str>,
    created_at: String,
}

impl<'a> NotifierDoc<'a> {
    fn of(n: &'a Notifier) -> Self {
        let secret = match &n.target {
            Target::Webhook {
                secret: Secret::Env { var },
                ..
            } => format!("env:{var}"),
            Target::Webhook { .. } => "kept".to_owned(),
            _ => "none".to_owned(),
        };
        Self {
            name: &n.name,
            sends_to: n.target.shown(),
            events: n.events.iter().map(|e| e.as_str()).collect(),
            secret,
            inbox_url: n.inbox_url.as_deref(),
            created_at: n.created_at.to_string(),
        }
    }
}

/// Where a new notifier is to send.
pub(crate) enum Wanted {
    /// A webhook, signed with the secret in `secret_env` (else one made).
    Webhook {
        url: String,
        secret_env: Option<String>,
    },
    /// Mail through an SMTP server.
    Mail {
        smtp: String,
        to: Vec<String>,
        from: Option<String>,
        password_env: Option<String>,
    },
}

/// `orcho notify add`.
pub(crate) fn add(
    place: &Place,
    name: &str,
    wanted: Wanted,
    events: &[String],
    inbox_url: Option<&str>,
) -> Result<Report, CliError> {
    let inbox_url = inbox_url.map(|u| http_url(u, "--inbox-url")).transpose()?;
    let events = events
        .iter()
        .map(|e| e.trim())
        .filter(|e| !e.is_empty())
        .map(str::parse::<EventKind>)
        .collect::<Result<Vec<_>, _>>()?;
    let (target, shown) = match wanted {
        Wanted::Webhook { url, secret_env } => webhook(place, &url, secret_env.as_deref())?,
        Wanted::Mail {
            smtp,
            to,
            from,
            password_env,
        } => (mail(place, smtp, to, from, password_env)?, None),
    };
    let notifier = Notifier::new(name, target)?
        .with_events(events)
        .with_inbox_url(inbox_url);
    place.store().add_notifier(&notifier)?;
    let mut doc = serde_json::to_value(NotifierDoc::of(&notifier))?;
    let how = match &notifier.target {
        Target::Webhook { .. } => "as a signed JSON POST",
        _ => "as a mail",
    };
    let mut lines = vec![format!(
        "notifier `{name}` added: {} is sent {} {how}",
        notifier.target.shown(),
        events_said(&notifier)
    )];
    if let Some(secret) = shown {
        doc["secret_value"] = secret.clone().into();
        lines.push(format!(
            "its secret, shown only now (the receiver checks X-Orcho-Signature with it): \
             {secret}"
        ));
    }
    lines.push(format!(
        "`orcho notify test {name}` sends it a test event now"
    ));
    Ok(Report::new(&doc).line(lines.join("\n")))
}

/// A webhook's target, and its secret when one was made (shown once).
fn webhook(
    place: &Place,
    url: &str,
    secret_env: Option<&str>,
) -> Result<(Target, Option<String>), CliError> {
    let url = http_url(url, "--webhook")?;
    let (secret, shown) = match secret_env {
        Some(var) => {
            variable(place, var, "events are signed with it")?;
            (
                Secret::Env {
                    var: var.to_owned(),
                },
                None,
            )
        }
        None => {
            let secret = Secret::generate()?;
            let shown = match &secret {
                Secret::Kept { secret } => Some(secret.clone()),
                _ => None,
            };
            (secret, shown)
        }
    };
    Ok((Target::Webhook { url, secret }, shown))
}

/// A mail target: a server URL without a password, and addresses.
fn mail(
    place: &Place,
    smtp: String,
    to: Vec<String>,
    from: Option<String>,
    password_env: Option<String>,
) -> Result<Target, CliError> {
    let rest = smtp
        .strip_prefix("smtp://")
        .or_else(|| smtp.strip_prefix("smtps://"))
        .filter(|rest| !rest.is_empty())
        .ok_or_else(|| {
            CliError::usage(format!("`{smtp}` is not an smtp:// or smtps:// URL")).with_hint(
                "`--smtp` takes smtp://HOST:PORT (plain, `?tls=required` for STARTTLS) or \
                 smtps://HOST:PORT",
            )
        })?;
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    if authority
        .rsplit_once('@')
        .is_some_and(|(user, _)| user.contains(':'))
    {
        return Err(CliError::usage(
            "the SMTP URL holds a password, and it would be kept in the store",
        )
        .with_hint("leave it out of the URL and name its variable: `--password-env VAR`"));
    }
    let to: Vec<String> = to
        .into_iter()
        .map(|a| a.trim().to_owned())
        .filter(|a| !a.is_empty())
        .collect();
    for address in to.iter().chain(from.as_ref()) {
        if !address.contains('@') || address.contains(char::is_whitespace) {
            return Err(CliError::usage(format!(
                "`{address}` is not a mail address"
            )));
        }
    }
    if to.is_empty() {
        return Err(CliError::usage(
            "`--smtp` needs `--to ADDR`: who receives the mail",
        ));
    }
    if let Some(var) = &password_env {
        variable(place, var, "the server is signed in to with it")?;
    }
    Ok(Target::Mail {
        smtp,
        to,
        from: from.unwrap_or_else(|| "orcho@localhost".to_owned()),
        password_env,
    })
}

/// Checks that `var` can name a variable, and warns when it is not set
/// here.
fn variable(place: &Place, var: &str, what: &str) -> Result<(), CliError> {
    if var.is_empty() || var.contains('=') {
        return Err(CliError::usage(format!(
            "`{var}` cannot name an environment variable"
        )));
    }
    if std::env::var_os(var).is_none() {
        place.progress(&format!(
            "warning: `{var}` is not set here: {what} wherever events are sent from, and \
             sending fails there until it is set"
        ));
    }
    Ok(())
}

/// A URL `flag` takes: http or https, with a host.
fn http_url(url: &str, flag: &str) -> Result<String, CliError> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    match rest {
        Some(rest) if !rest.is_empty() && !rest.starts_with('/') => Ok(url.to_owned()),
        _ => Err(
            CliError::usage(format!("`{url}` is not an http or https URL")).with_hint(format!(
                "`{flag}` takes a URL such as https://hooks.example.com/orcho"
            )),
        ),
    }
}

fn events_said(n: &Notifier) -> String {
    if n.events.len() == EventKind::ALL.len() {
        "every event".to_owned()
    } else {
        n.events
            .iter()
            .map(|e| e.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// `orcho notify list`.
pub(crate) fn list(place: &Place) -> Result<Report, CliError> {
    let notifiers = place.store().notifiers()?;
    let docs: Vec<NotifierDoc<'_>> = notifiers.iter().map(NotifierDoc::of).collect();
    let text = if notifiers.is_empty() {
        "no notifier: `orcho notify add NAME --webhook URL` adds one".to_owned()
    } else {
        notifiers
            .iter()
            .zip(&docs)
            .map(|(n, d)| {
                format!(
                    "{}  {}  {}  secret {}",
                    d.name,
                    d.sends_to,
                    events_said(n),
                    d.secret
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    Ok(Report::new(&docs).line(text))
}

/// `orcho notify remove`.
pub(crate) fn remove(place: &Place, name: &str) -> Result<Report, CliError> {
    place.store().remove_notifier(name)?;
    Ok(
        Report::new(&serde_json::json!({ "removed": name })).line(format!(
            "removed the notifier `{name}`: nothing more is sent to it (`orcho notify log` keeps \
         what was)"
        )),
    )
}

/// `orcho notify test`: sends a test event now and says how it went.
pub(crate) fn test(place: &Place, name: &str) -> Result<Report, CliError> {
    let store = place.store();
    let notifier = store.notifier(name)?;
    let event = Event::test(&notifier, Timestamp::now());
    let due = Due::now(notifier, event);
    let sent = Sender::new().send(&due.notifier, &due.event);
    // A test is never tried again.
    let outcome = match &sent {
        Ok(status) => Outcome::Sent {
            status: Some(*status),
        },
        Err(e) => Outcome::GaveUp {
            error: e.to_string(),
        },
    };
    store.record_delivery(&due.delivery(Timestamp::now(), outcome))?;
    match sent {
        Ok(status) => Ok(Report::new(&serde_json::json!({
            "notifier": name, "sent": true, "status": status,
        }))
        .line(format!(
            "sent a test event to `{name}` ({}): it answered {status}",
            due.notifier.target.shown()
        ))),
        Err(e) => Err(
            CliError::msg(format!("the test event to `{name}` failed: {e}")).with_hint(
                "check the URL and that the receiver is up; `orcho notify log` keeps each attempt",
            ),
        ),
    }
}

/// `orcho notify log`.
pub(crate) fn log(place: &Place, last: usize) -> Result<Report, CliError> {
    let all = place.store().deliveries()?;
    let shown: &[Delivery] = &all[all.len().saturating_sub(last)..];
    let text = if shown.is_empty() {
        "nothing sent yet".to_owned()
    } else {
        shown
            .iter()
            .map(|d| {
                let how = match &d.outcome {
                    Outcome::Sent { status } => format!(
                        "sent{}",
                        status.map(|s| format!(" ({s})")).unwrap_or_default()
                    ),
                    Outcome::Failed { error, retry_at } => {
                        format!("failed: {error}; tried again at {retry_at}")
                    }
                    Outcome::GaveUp { error } => format!("gave up: {error}"),
                    _ => "?".to_owned(),
                };
                format!(
                    "{}  {}  {}  attempt {}  {how}",
                    d.at, d.notifier, d.event, d.attempt
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    Ok(Report::new(&shown).line(text))
}

/// `orcho notify deliver [--watch]`.
pub(crate) fn deliver(place: &Place, watch: bool) -> Result<Report, CliError> {
    // Every machine's runs of a shared store: whoever delivers sends them.
    let store = place.team_store();
    let sender = Sender::new();
    let retry = Retry::default();
    if watch {
        crate::interrupt::install(place.voice);
        place.progress(
            "delivering what is due every 2 s, and each retry when its time comes (Ctrl-C stops)",
        );
        let said = place.clone();
        orcho_notify::watch(
            &store,
            &sender,
            &retry,
            Duration::from_secs(2),
            &|| false,
            &mut |e| said.progress(&format!("warning: {}", orcho::core::error_chain(e))),
        );
        return Ok(Report::silent(Exit::Ok));
    }
    // Started after something happened: another process delivering may
    // have read what was due before it, so this one waits its turn (a pass
    // takes at most the endpoints' timeouts).
    let pass = orcho_notify::deliver_within(&store, &sender, &retry, Duration::from_secs(120))
        .map_err(|e| CliError::msg(orcho::core::error_chain(&e)))?;
    let text = if pass.busy {
        "another orcho is delivering; it sends what is due".to_owned()
    } else if pass.sent + pass.failed + pass.gave_up == 0 {
        "nothing was due".to_owned()
    } else {
        format!(
            "sent {}, failed {} (tried again later), gave up {}",
            pass.sent, pass.failed, pass.gave_up
        )
    };
    Ok(Report::new(&serde_json::json!({
        "sent": pass.sent, "failed": pass.failed, "gave_up": pass.gave_up, "busy": pass.busy,
    }))
    .line(text))
}
