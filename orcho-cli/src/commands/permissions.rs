//! `orcho permissions check`: what the permission rules say about one
//! request, and why.

use camino::Utf8PathBuf;
use orcho::permissions::{PermissionAction, PermissionPreset};
use serde::Serialize;

use crate::{
    error::CliError,
    exit::{self, Exit},
    output::Report,
    place::Place,
};

/// The request to check.
#[derive(Debug)]
pub(crate) enum Request {
    /// A shell command line.
    Command(Vec<String>),
    /// Writing a file.
    Write(Utf8PathBuf),
    /// Editing a file.
    Edit(Utf8PathBuf),
    /// Reading a file.
    Read(Utf8PathBuf),
    /// Any other tool, by name, with its argument.
    Tool(String, String),
}

#[derive(Serialize)]
struct CheckDoc<'a> {
    permission: &'a str,
    argument: &'a str,
    action: PermissionAction,
    explanation: String,
}

/// Evaluates `request` against the rules in force: `preset`, else the
/// profile's `permissions`. Exit 0 allow, 7 ask, 8 deny.
pub(crate) fn check(
    place: &Place,
    profile: Option<&str>,
    preset: Option<PermissionPreset>,
    request: Request,
) -> Result<Report, CliError> {
    let rules = match preset {
        Some(preset) => preset.rules(),
        None => {
            let (name, plan) = place.load_profile(profile)?;
            plan.permissions.ok_or_else(|| {
                CliError::msg(format!(
                    "the profile `{name}` has no `permissions`: no rules are in force"
                ))
                .with_hint(
                    "add a `permissions:` block to orcho.yaml, or check against a preset with \
                     `--permissions read_only`",
                )
            })?
        }
    };
    // Relative to the current directory, `..` resolved, then relative to
    // the checkout: as the hooks read an agent's paths.
    let path = |p: Utf8PathBuf| -> Result<String, CliError> {
        let cwd = Utf8PathBuf::try_from(std::env::current_dir()?)?;
        Ok(crate::hook::relative(p.as_str(), &place.checkout, &cwd))
    };
    let (permission, argument) = match request {
        Request::Command(words) => (
            "bash".to_owned(),
            if words.len() == 1 {
                words[0].clone()
            } else {
                shlex::try_join(words.iter().map(String::as_str))
                    .map_err(|e| CliError::msg(format!("the command cannot be quoted: {e}")))?
            },
        ),
        Request::Write(p) => ("write".to_owned(), path(p)?),
        Request::Edit(p) => ("edit".to_owned(), path(p)?),
        Request::Read(p) => ("read".to_owned(), path(p)?),
        Request::Tool(name, argument) => (crate::hook::permission_name(&name), argument),
    };
    let evaluation = rules.evaluate(&permission, &argument);
    let exit = match evaluation.action {
        PermissionAction::Allow => Exit::Ok,
        PermissionAction::Ask => Exit::Command(exit::ASKS),
        _ => Exit::Command(exit::DENIED),
    };
    Ok(Report::new(&CheckDoc {
        permission: &permission,
        argument: &argument,
        action: evaluation.action,
        explanation: evaluation.explain(),
    })
    .line(format!(
        "{permission} `{argument}`: {}",
        evaluation.explain()
    ))
    .exit(exit))
}
