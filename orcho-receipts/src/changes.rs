//! What differs between two declarations of a command or an environment,
//! in words: what a change that edits its own proof is shown with.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::{CommandSpec, Environment};

/// The most characters of one value shown in a change.
const SHOWN: usize = 80;

/// What differs between `old` and `new`, one line each (`argv \`cargo
/// test\` → \`true\``); empty when they are the same declaration.
///
/// ```
/// use orcho_receipts::{CommandName, CommandSpec, command_changes};
///
/// let name: CommandName = "test".parse()?;
/// let old = CommandSpec::new(name.clone(), ["cargo", "test"]);
/// let new = CommandSpec::new(name, ["true"]).with_env("CI", "1");
/// assert_eq!(command_changes(&old, &new), ["argv `cargo test` → `true`", "env `CI` set to `1`"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn command_changes(old: &CommandSpec, new: &CommandSpec) -> Vec<String> {
    let mut out = Vec::new();
    if old.argv != new.argv {
        out.push(format!(
            "argv `{}` → `{}`",
            shown(&old.argv.join(" ")),
            shown(&new.argv.join(" "))
        ));
    }
    map_changes("env", &old.env, &new.env, &mut out);
    if old.environment != new.environment {
        let name = |e: &Option<crate::EnvName>| {
            e.as_ref()
                .map_or_else(|| "(the default)".to_owned(), |e| format!("`{e}`"))
        };
        out.push(format!(
            "environment {} → {}",
            name(&old.environment),
            name(&new.environment)
        ));
    }
    if old.timeout != new.timeout {
        let t = |t: &Option<crate::HumanDuration>| {
            t.map_or_else(|| "(the default)".to_owned(), |t| format!("`{t}`"))
        };
        out.push(format!("timeout {} → {}", t(&old.timeout), t(&new.timeout)));
    }
    if old.secrets != new.secrets {
        out.push(format!(
            "secrets `{}` → `{}`",
            old.secrets.join(", "),
            new.secrets.join(", ")
        ));
    }
    if old.allow_empty != new.allow_empty {
        out.push(format!(
            "allow_empty `{}` → `{}`",
            old.allow_empty, new.allow_empty
        ));
    }
    if out.is_empty() && json(old) != json(new) {
        out.push("its declaration changed".to_owned());
    }
    out
}

/// What differs between two declarations of an environment, one line
/// each; empty when they are the same.
pub fn environment_changes(old: &Environment, new: &Environment) -> Vec<String> {
    let mut out = Vec::new();
    if old.working_dir != new.working_dir {
        out.push(format!(
            "working_dir `{}` → `{}`",
            old.working_dir, new.working_dir
        ));
    }
    map_changes("env", &old.env, &new.env, &mut out);
    if old.inherit != new.inherit {
        out.push(format!(
            "inherit `{}` → `{}`",
            old.inherit.join(", "),
            new.inherit.join(", ")
        ));
    }
    for (field, a, b) in [
        (
            "dependencies",
            json(&old.dependencies),
            json(&new.dependencies),
        ),
        ("subject", json(&old.subject), json(&new.subject)),
        ("assertions", json(&old.assertions), json(&new.assertions)),
    ] {
        if a != b {
            out.push(format!("{field} changed"));
        }
    }
    if out.is_empty() && json(old) != json(new) {
        out.push("its declaration changed".to_owned());
    }
    out
}

fn map_changes(
    what: &str,
    old: &BTreeMap<String, String>,
    new: &BTreeMap<String, String>,
    out: &mut Vec<String>,
) {
    for (key, value) in new {
        match old.get(key) {
            None => out.push(format!("{what} `{key}` set to `{}`", shown(value))),
            Some(before) if before != value => out.push(format!(
                "{what} `{key}` `{}` → `{}`",
                shown(before),
                shown(value)
            )),
            Some(_) => {}
        }
    }
    for key in old.keys().filter(|k| !new.contains_key(*k)) {
        out.push(format!("{what} `{key}` removed"));
    }
}

fn json(value: &impl Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// `text`, cut at [`SHOWN`] characters.
fn shown(text: &str) -> String {
    if text.chars().count() <= SHOWN {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(SHOWN).collect();
    cut.push('…');
    cut
}
