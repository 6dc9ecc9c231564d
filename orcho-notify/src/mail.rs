//! An event as a mail, through an SMTP server.

use std::time::Duration;

use lettre::{
    Message, SmtpTransport, Transport as _,
    message::{Mailbox, header::ContentType},
    transport::smtp::authentication::Credentials,
};
use orcho::notify::Event;

use crate::SendError;

/// Sends `event` from `from` to `to` through `server` (`smtp://` or
/// `smtps://`, with its user), signing in with `password` when given.
pub(crate) fn send(
    server: &str,
    from: &str,
    to: &[String],
    password: Option<String>,
    event: &Event,
    timeout: Duration,
) -> Result<(), SendError> {
    let fail = |message: String| SendError::Mail {
        server: server.to_owned(),
        message,
    };
    let mailbox = |address: &str| {
        address
            .parse::<Mailbox>()
            .map_err(|e| fail(format!("`{address}` is no mail address: {e}")))
    };
    let mut message = Message::builder()
        .from(mailbox(from)?)
        .subject(subject(&event.text))
        .header(ContentType::TEXT_PLAIN);
    for address in to {
        message = message.to(mailbox(address)?);
    }
    let document = serde_json::to_string_pretty(event).unwrap_or_default();
    let body = format!(
        "{}\n{}\n\n-- \nThe event as JSON (docs/notification.schema.json):\n{document}\n",
        event.text,
        event
            .url
            .as_ref()
            .map(|u| format!("\n{u}\n"))
            .unwrap_or_default()
    );
    let message = message.body(body).map_err(|e| fail(e.to_string()))?;
    let mut transport = SmtpTransport::from_url(server)
        .map_err(|e| fail(e.to_string()))?
        .timeout(Some(timeout));
    if let Some(password) = password {
        let user = server
            .split_once("://")
            .and_then(|(_, rest)| rest.split_once('@'))
            .map(|(user, _)| user.to_owned())
            .unwrap_or_default();
        transport = transport.credentials(Credentials::new(user, password));
    }
    transport
        .build()
        .send(&message)
        .map(drop)
        .map_err(|e| fail(e.to_string()))
}

/// A mail's subject: the event's line, cut to fit.
fn subject(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    if line.chars().count() <= 140 {
        return line.to_owned();
    }
    let cut: String = line.chars().take(139).collect();
    format!("{cut}…")
}
