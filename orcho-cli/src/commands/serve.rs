//! `orcho serve token`: the tokens the web inbox takes, kept in the
//! user's data directory.

use std::net::SocketAddr;

use crate::{cli::TokenCommand, error::CliError, output::Report, place::Place};

/// `orcho serve token …`.
pub(crate) fn token(
    place: &Place,
    command: TokenCommand,
    listen: SocketAddr,
) -> Result<Report, CliError> {
    let tokens = orcho_web::tokens::Tokens::of_user()?;
    crate::key::refuse_inside_place(tokens.path(), place, "token file")?;
    match command {
        TokenCommand::Add { name, read_only } => {
            let access = if read_only {
                orcho_web::tokens::Access::ReadOnly
            } else {
                orcho_web::tokens::Access::Decide
            };
            let secret = tokens.add(&name, access)?;
            let link = format!("http://{listen}/login?token={secret}");
            Ok(Report::new(&serde_json::json!({
                "name": name, "access": access, "token": secret, "login": link,
            }))
            .line(format!(
                "token for {name} ({}): {secret}\nlogin link: {link}\nit is shown only now; \
                 the API takes it as `Authorization: Bearer {secret}`",
                if read_only {
                    "may look, not decide"
                } else {
                    "may look and decide"
                }
            )))
        }
        TokenCommand::List => {
            let list = tokens.list()?;
            let lines: Vec<String> = list
                .iter()
                .map(|t| {
                    let access = match t.access {
                        orcho_web::tokens::Access::Decide => "decide",
                        orcho_web::tokens::Access::ReadOnly => "read-only",
                    };
                    format!("{}  {access}  since {}", t.name, t.created_at)
                })
                .collect();
            let doc: Vec<_> = list
                .iter()
                .map(|t| serde_json::json!({"name": t.name, "access": t.access, "created_at": t.created_at}))
                .collect();
            Ok(Report::new(&doc).line(if lines.is_empty() {
                "no token yet: `orcho serve token add NAME` makes one".to_owned()
            } else {
                lines.join("\n")
            }))
        }
        TokenCommand::Remove { name } => {
            if tokens.remove(&name)? {
                Ok(
                    Report::new(&serde_json::json!({"removed": name})).line(format!(
                        "removed the token `{name}`: a running `orcho serve` refuses it, and the \
                     sessions it opened, from now on"
                    )),
                )
            } else {
                Err(CliError::msg(format!("there is no token named `{name}`"))
                    .with_hint("`orcho serve token list` lists them"))
            }
        }
    }
}
