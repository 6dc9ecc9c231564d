//! `orcho init` and `orcho profile show`: a project's profile.

use camino::Utf8Path;
use orcho::{
    profile::Profile,
    receipts::exec::{self, BaseEnv, ExecRequest},
};
use serde::Serialize;

use crate::{
    error::CliError,
    exit::Exit,
    output,
    place::{PROFILE_FILE, Place},
};

/// What a project is built with, as far as its files tell, and the
/// commands that test and lint it.
struct Kind {
    name: &'static str,
    test: &'static str,
    lint: Option<&'static str>,
}

/// The kinds `orcho init` recognises, by the file that marks them.
const KINDS: &[(&str, Kind)] = &[
    (
        "Cargo.toml",
        Kind {
            name: "Rust",
            test: "[cargo, test, --workspace]",
            lint: Some("[cargo, clippy, --all-targets, --, -D, warnings]"),
        },
    ),
    (
        "pyproject.toml",
        Kind {
            name: "Python",
            test: "[python3, -m, pytest, -q]",
            lint: Some("[ruff, check, .]"),
        },
    ),
    (
        "setup.py",
        Kind {
            name: "Python",
            test: "[python3, -m, pytest, -q]",
            lint: None,
        },
    ),
    (
        "package.json",
        Kind {
            name: "JavaScript",
            test: "[npm, test]",
            lint: None,
        },
    ),
    (
        "go.mod",
        Kind {
            name: "Go",
            test: "[go, test, ./...]",
            lint: Some("[go, vet, ./...]"),
        },
    ),
    (
        "Makefile",
        Kind {
            name: "make",
            test: "[make, test]",
            lint: None,
        },
    ),
];

/// A project nothing above recognises: the test command says what to do.
const UNKNOWN: Kind = Kind {
    name: "unrecognised",
    test: "[sh, -c, \"echo 'declare the command that tests this project in orcho.yaml' >&2; exit 1\"]",
    lint: None,
};

/// What `orcho init --json` prints.
#[derive(Debug, Serialize)]
struct InitDoc<'a> {
    profile: &'a str,
    project: &'a str,
    store: &'a str,
    /// Whether `.gitignore` got a line for the store.
    ignored_now: bool,
    /// The test caches `.gitignore` got a line for.
    caches_ignored: &'a [&'static str],
}

/// Writes a starter `orcho.yaml` in the checkout and makes git ignore the
/// store.
pub(crate) fn init(place: &Place, force: bool) -> Result<Exit, CliError> {
    let path = place.checkout.join(PROFILE_FILE);
    if path.exists() && !force {
        return Err(CliError::msg(format!("`{path}` exists already"))
            .with_hint("`orcho init --force` replaces it; `orcho profile show` prints it"));
    }
    let kind = KINDS
        .iter()
        .find(|(marker, _)| place.checkout.join(marker).is_file())
        .map(|(_, kind)| kind)
        .or_else(|| {
            has_python_tests(&place.checkout).then(|| {
                KINDS
                    .iter()
                    .find(|(marker, _)| *marker == "setup.py")
                    .map(|(_, kind)| kind)
            })?
        })
        .unwrap_or(&UNKNOWN);
    let name = place.checkout.file_name().unwrap_or("project");
    // A Python project with its own virtual environment: tests run with it,
    // and each run's worktree links it in (git does not track it).
    let venv = kind.name == "Python" && place.checkout.join(".venv/bin/python").exists();
    let text = starter(name, kind, venv);
    // What is written must load: a profile that does not is a bug here.
    Profile::from_yaml_str(&text)?;
    orcho::core::fs::write_atomic(&path, text.as_bytes())?;
    let ignored_now = ignore_store(place)?;
    let mut caches_ignored = Vec::new();
    for cache in caches(kind) {
        if ignore(place, cache, cache)? {
            caches_ignored.push(*cache);
        }
    }
    if place.json {
        output::json(&InitDoc {
            profile: path.as_str(),
            project: kind.name,
            store: place.store.as_str(),
            ignored_now,
            caches_ignored: &caches_ignored,
        });
    } else {
        output::out(&format!("wrote {path} ({} project)", kind.name));
        if ignored_now {
            output::out(&format!(
                "added the store {} to {}",
                place.store,
                place.checkout.join(".gitignore")
            ));
        }
        if !caches_ignored.is_empty() {
            output::out(&format!(
                "added {} to {}: a test run writes them, and unignored they would make its own \
                 receipt stale",
                caches_ignored.join(", "),
                place.checkout.join(".gitignore")
            ));
        }
        output::out("next: check the commands it declares, then `orcho verify` and `orcho status`");
    }
    Ok(Exit::Ok)
}

fn starter(name: &str, kind: &Kind, venv: bool) -> String {
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let test = if venv {
        "[.venv/bin/python, -m, pytest, -q]"
    } else {
        kind.test
    };
    let worktree = if venv {
        "  # What a run's worktree needs that git does not track.\n  worktree:\n    setup:\n      - link: .venv\n"
    } else {
        ""
    };
    let lint = match kind.lint {
        Some(argv) => format!(
            "    # A second command that proves something; add it to `required` to\n    \
             # make it count:\n    # - name: lint\n    #   argv: {argv}\n"
        ),
        None => String::new(),
    };
    format!(
        "# How runs of this project are controlled, and what proves a change is ready.\n\
         # It extends the built-in `default` profile: plan, implement (the `test` command\n\
         # must pass; failures feed the next attempt), review, and final acceptance from\n\
         # the receipts on disk. `orcho profile show` prints the whole merged profile.\n\
         schema: 1\n\
         name: {name}\n\
         extends: builtin:default\n\
         verification:\n  \
           commands:\n    \
             - name: test\n      \
               argv: {test}\n      \
               timeout: 30m\n\
         {lint}  \
           required: [test]\n\
         {worktree}",
    )
}

/// Adds the store to the checkout's `.gitignore` when it lies in the
/// checkout and git does not ignore it yet. Outside a repository, nothing.
fn ignore_store(place: &Place) -> Result<bool, CliError> {
    let Ok(relative) = place.store.strip_prefix(&place.checkout) else {
        return Ok(false);
    };
    if relative.as_str().is_empty() {
        return Ok(false);
    }
    // With the trailing slash, a directory-only pattern (`/.orcho/`) matches
    // a store that does not exist yet.
    let dir = format!("{relative}/");
    ignore(place, &dir, &format!("/{relative}/"))
}

/// The caches a test run of `kind` writes into the checkout. Unignored,
/// they would be part of what a receipt proves, so the run that writes
/// them would make its own receipt stale.
fn caches(kind: &Kind) -> &'static [&'static str] {
    if kind.name == "Python" {
        &["__pycache__/", ".pytest_cache/"]
    } else {
        &[]
    }
}

/// Adds `pattern` to the checkout's `.gitignore` unless git ignores
/// `probe` already; whether it was added. Outside a repository, nothing.
fn ignore(place: &Place, probe: &str, pattern: &str) -> Result<bool, CliError> {
    if !place.checkout.join(".git").exists() {
        return Ok(false);
    }
    let check = ExecRequest::new(["git", "check-ignore", "--quiet", "--no-index", probe])
        .cwd(place.checkout.clone())
        .envs(BaseEnv::inherit());
    if exec::run(&check)?.status.success() {
        return Ok(false);
    }
    let gitignore = place.checkout.join(".gitignore");
    let mut text = match std::fs::read_to_string(&gitignore) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(CliError::msg(format!("cannot read `{gitignore}`: {e}"))),
    };
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(pattern);
    text.push('\n');
    orcho::core::fs::write_atomic(&gitignore, text.as_bytes())?;
    Ok(true)
}

/// Whether the checkout holds pytest-style tests (`test_*.py` at its root
/// or in `tests/`) without a file that names its kind.
fn has_python_tests(checkout: &Utf8Path) -> bool {
    [checkout.to_owned(), checkout.join("tests")]
        .iter()
        .any(|dir| {
            dir.read_dir_utf8().is_ok_and(|entries| {
                entries.flatten().any(|e| {
                    let name = e.file_name();
                    (name.starts_with("test_") && name.ends_with(".py")) || name == "conftest.py"
                })
            })
        })
}

/// Prints a profile merged with what it extends.
pub(crate) fn show(place: &Place, name: Option<&str>) -> Result<Exit, CliError> {
    let spec = match name {
        Some(name) => crate::place::spec_of(name)?,
        None => place.profile_spec()?,
    };
    let profile = match spec.strip_prefix("builtin:") {
        Some(builtin) => Profile::builtin(builtin)?,
        None => Profile::load(Utf8Path::new(&spec))?,
    };
    // Shown only when it would run: every gate built from its `with:`.
    profile.resolve(&crate::place::registry())?;
    if !place.json {
        output::err(&format!("# {spec}"));
    }
    output::out(profile.to_yaml().trim_end());
    Ok(Exit::Ok)
}
