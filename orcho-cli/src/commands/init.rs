//! `orcho init` and `orcho profile show`: a project's profile.

use camino::Utf8Path;
use orcho::{
    profile::Profile,
    receipts::exec::{self, BaseEnv, ExecRequest},
};
use serde::Serialize;

use crate::{
    error::CliError,
    hook::{Agent, Layout},
    output::{Report, doc::ProfileDoc},
    place::{PROFILE_FILE, Place},
};

/// What a project is built with, as far as its files tell, and the
/// commands that test and lint it.
struct Kind {
    name: &'static str,
    test: &'static str,
    lint: Option<&'static str>,
    /// The host variables its toolchain is found by: declared under
    /// `inherit`, so a command finds it where the host has it (and its
    /// receipts bind the values).
    inherit: &'static [&'static str],
}

/// The kinds `orcho init` recognises, by the file that marks them.
const KINDS: &[(&str, Kind)] = &[
    (
        "Cargo.toml",
        Kind {
            name: "Rust",
            test: "[cargo, test, --workspace]",
            lint: Some("[cargo, clippy, --all-targets, --, -D, warnings]"),
            inherit: &["RUSTUP_HOME", "CARGO_HOME", "RUSTUP_TOOLCHAIN"],
        },
    ),
    (
        "pyproject.toml",
        Kind {
            name: "Python",
            test: "[python3, -m, pytest, -q]",
            lint: Some("[ruff, check, .]"),
            inherit: PYTHON_VARS,
        },
    ),
    (
        "setup.py",
        Kind {
            name: "Python",
            test: "[python3, -m, pytest, -q]",
            lint: None,
            inherit: PYTHON_VARS,
        },
    ),
    (
        "package.json",
        Kind {
            name: "JavaScript",
            test: "[npm, test]",
            lint: None,
            inherit: &["NVM_DIR", "NVM_BIN", "NODE_PATH"],
        },
    ),
    (
        "go.mod",
        Kind {
            name: "Go",
            // `-v`: each test is named, so that tests that all skipped are
            // told from tests that passed.
            test: "[go, test, -v, ./...]",
            lint: Some("[go, vet, ./...]"),
            inherit: &["GOROOT", "GOPATH", "GOFLAGS", "GOTOOLCHAIN"],
        },
    ),
    (
        "Makefile",
        Kind {
            name: "make",
            test: "[make, test]",
            lint: None,
            inherit: &[],
        },
    ),
];

/// A project nothing above recognises: the test command says what to do.
const UNKNOWN: Kind = Kind {
    name: "unrecognised",
    test: "[sh, -c, \"echo 'declare the command that tests this project in orcho.yaml' >&2; exit 1\"]",
    lint: None,
    inherit: &[],
};

/// Where a Python interpreter and its packages are found.
const PYTHON_VARS: &[&str] = &["VIRTUAL_ENV", "PYENV_ROOT", "PYENV_VERSION", "CONDA_PREFIX"];

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
pub(crate) fn init(place: &Place, force: bool) -> Result<Report, CliError> {
    let written = write_starter(place, force)?;
    let mut report = Report::new(&InitDoc {
        profile: written.path.as_str(),
        project: written.project,
        store: place.store.as_str(),
        ignored_now: written.ignored_now,
        caches_ignored: &written.caches_ignored,
    });
    for line in written.lines(place) {
        report = report.line(line);
    }
    Ok(report)
}

/// What writing the starter profile did.
struct Written {
    path: camino::Utf8PathBuf,
    project: &'static str,
    ignored_now: bool,
    caches_ignored: Vec<&'static str>,
}

impl Written {
    /// What it did, for a person.
    fn lines(&self, place: &Place) -> Vec<String> {
        let mut lines = vec![format!("wrote {} ({} project)", self.path, self.project)];
        if self.ignored_now {
            lines.push(format!(
                "added the store {} to {}",
                place.store,
                place.checkout.join(".gitignore")
            ));
        }
        if !self.caches_ignored.is_empty() {
            lines.push(format!(
                "added {} to {}: a test run writes them, and unignored they would make its own \
                 receipt stale",
                self.caches_ignored.join(", "),
                place.checkout.join(".gitignore")
            ));
        }
        if !orcho::receipts::fingerprint::in_git_work_tree(place.checkout.as_std_path()) {
            lines.push(
                concat!(
                    "outside git, a receipt is bound to every file here but the store, what ",
                    "`.gitignore` and `.ignore` files leave out, and build output (`target/` ",
                    "beside Cargo.toml, `node_modules/`, `__pycache__/`, `.venv/`, test caches); ",
                    "an environment's `subject:` narrows it"
                )
                .to_owned(),
            );
        }
        lines.push(
            "next: check the commands it declares, then `orcho verify` and `orcho status`"
                .to_owned(),
        );
        lines
    }
}

/// Writes the starter profile and the `.gitignore` lines it needs.
fn write_starter(place: &Place, force: bool) -> Result<Written, CliError> {
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
            has_python(&place.checkout).then(|| {
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
    // Python's tests run with pytest where it is installed, else with the
    // standard library's unittest.
    let venv_python = place.checkout.join(".venv/bin/python");
    // unittest discovers only packages from the root: a `tests` folder
    // without `__init__.py` is searched only when named (else it runs no
    // test, and its receipt would be vacuous).
    let tests_dir = place.checkout.join("tests");
    let start = if tests_dir.is_dir() && !tests_dir.join("__init__.py").exists() {
        ", -s, tests"
    } else {
        ""
    };
    let test = match (kind.name, venv) {
        ("Python", true) if python_has(venv_python.as_str(), "pytest") => {
            "[.venv/bin/python, -m, pytest, -q]".to_owned()
        }
        ("Python", true) => format!("[.venv/bin/python, -m, unittest, discover, -q{start}]"),
        ("Python", false) if !python_has("python3", "pytest") => {
            format!("[python3, -m, unittest, discover, -q{start}]")
        }
        _ => kind.test.to_owned(),
    };
    // What the tests run that git ignores, bound file by file so that an
    // edited installed package makes a receipt stale: `node_modules` of a
    // JavaScript project, a Python project's `.venv`.
    let installed: Vec<(&str, &str)> = [
        (kind.name == "JavaScript", "node_modules", "node_modules"),
        (venv, "venv", ".venv"),
    ]
    .into_iter()
    .filter(|(applies, _, _)| *applies)
    .map(|(_, name, path)| (name, path))
    .collect();
    let text = starter(name, kind, venv, &test, &installed);
    // What is written must load: a profile that does not is a bug here.
    Profile::from_yaml_str(&text)?;
    write_project_file(&path, text.as_bytes())?;
    let ignored_now = ignore_store(place)?;
    let mut caches_ignored = Vec::new();
    for cache in caches(kind) {
        if ignore(place, cache, cache)? {
            caches_ignored.push(*cache);
        }
    }
    Ok(Written {
        path,
        project: kind.name,
        ignored_now,
        caches_ignored,
    })
}

fn starter(name: &str, kind: &Kind, venv: bool, test: &str, installed: &[(&str, &str)]) -> String {
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

    let worktree = if venv {
        "  # What a run's worktree needs that git does not track.\n  worktree:\n    setup:\n      - link: .venv\n"
    } else {
        ""
    };
    let dependencies = if installed.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = installed
            .iter()
            .map(|(name, path)| format!("{{ name: {name}, path: {path} }}"))
            .collect();
        format!(
            "      # What the tests run that git ignores: bound file by file, so that\n      \
             # a changed installed package makes a receipt stale.\n      \
             dependencies: [{}]\n",
            list.join(", ")
        )
    };
    let environments = if kind.inherit.is_empty() && dependencies.is_empty() {
        String::new()
    } else {
        let inherit = if kind.inherit.is_empty() {
            String::new()
        } else {
            format!(
                "      # Where the toolchain is found, when the host says so: passed\n      \
                 # through, and bound into receipts.\n      \
                 inherit: [{}]\n",
                kind.inherit.join(", ")
            )
        };
        format!("  environments:\n    - name: default\n{inherit}{dependencies}")
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
         verification:\n\
         {environments}  \
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

/// Whether a shell with this process's PATH finds `orcho`.
fn path_finds_orcho() -> bool {
    let check = ExecRequest::new(["sh", "-c", "command -v orcho"])
        .envs(BaseEnv::inherit())
        .timeout(std::time::Duration::from_secs(10));
    exec::run(&check).is_ok_and(|outcome| outcome.status.success())
}

/// Whether a login shell (`$SHELL`, else `bash`, with `-lc`) finds
/// `orcho` on its PATH.
fn login_shell_finds_orcho() -> bool {
    let shell = std::env::var_os("SHELL")
        .and_then(|s| s.into_string().ok())
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "bash".to_owned());
    let check = ExecRequest::new([shell.as_str(), "-lc", "command -v orcho"])
        .envs(BaseEnv::inherit())
        .timeout(std::time::Duration::from_secs(10));
    exec::run(&check).is_ok_and(|outcome| outcome.status.success())
}

/// Adds `pattern` to the checkout's `.gitignore` unless git ignores
/// `probe` already; whether it was added. Outside a repository, nothing.
fn ignore(place: &Place, probe: &str, pattern: &str) -> Result<bool, CliError> {
    if !orcho::core::fs::is_git_top(place.checkout.as_std_path()) {
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
    write_project_file(&gitignore, text.as_bytes())?;
    Ok(true)
}

/// Writes a file of the project (atomically) with the mode it had, or, for
/// a new one, the mode of a file anybody may read (`0644`): the project's
/// files are shared, unlike the store's.
fn write_project_file(path: &Utf8Path, bytes: &[u8]) -> Result<(), CliError> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(path).map_or(0o644, |m| m.permissions().mode() & 0o7777);
    orcho::core::fs::write_atomic(path, bytes)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| CliError::msg(format!("cannot set the mode of `{path}`: {e}")))
}

/// Whether `python` (a program) imports `module`.
fn python_has(python: &str, module: &str) -> bool {
    let check = ExecRequest::new([python, "-c", &format!("import {module}")])
        .envs(BaseEnv::inherit())
        .timeout(std::time::Duration::from_secs(20));
    exec::run(&check).is_ok_and(|o| o.status.success())
}

/// Whether the checkout is Python without a file that names its kind:
/// `.py` files at its root, or tests (`test_*.py`, `conftest.py`) in
/// `tests/`.
fn has_python(checkout: &Utf8Path) -> bool {
    let root_py = checkout
        .read_dir_utf8()
        .is_ok_and(|entries| entries.flatten().any(|e| e.file_name().ends_with(".py")));
    root_py || has_python_tests(checkout)
}

/// Whether the checkout holds pytest-style tests (`test_*.py` at its root
/// or in `tests/`).
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
pub(crate) fn show(place: &Place, name: Option<&str>) -> Result<Report, CliError> {
    let spec = match name {
        Some(name) => crate::place::spec_of(name)?,
        None => place.profile_spec()?,
    };
    let profile = match spec.strip_prefix("builtin:") {
        Some(builtin) => Profile::builtin(builtin)?,
        None => Profile::load(Utf8Path::new(&spec))?,
    };
    // Shown only when it would run: every gate built from its `with:`;
    // shown with every default it runs with.
    let resolved = match profile.resolve(&crate::place::registry()) {
        Ok(resolved) => resolved,
        Err(error) => {
            // What it can show, as merged and without the defaults it
            // would run with: the file the error is read against.
            place.say(&format!(
                "# {spec}: as merged with what it extends; it does not run (below)\n{}",
                profile.to_yaml().trim_end()
            ));
            return Err(error.into());
        }
    };
    let warnings: Vec<String> = resolved
        .warnings()
        .iter()
        .map(ToString::to_string)
        .collect();
    for warning in &warnings {
        place.progress(&format!("warning: {warning}"));
    }
    #[cfg_attr(
        not(feature = "llm"),
        expect(unused_mut, reason = "filled by the advisor's defaults")
    )]
    let mut profile = profile.with_defaults(&resolved);
    // The advisor's block is read by the model client: its defaults too.
    #[cfg(feature = "llm")]
    if let Some(advisor) = &profile.advisor
        && let Ok(mut config) = orcho_llm::LlmConfig::from_value(advisor)
    {
        config.api_key_env = Some(config.api_key_env().to_owned());
        if let Ok(filled) = serde_json::to_value(&config) {
            profile.advisor = Some(filled);
        }
    }
    Ok(Report::new(&ProfileDoc {
        source: &spec,
        profile: &profile,
        warnings,
    })
    .note(format!("# {spec}"))
    .line(profile.to_yaml().trim_end()))
}

/// `orcho init` (unless an `orcho.yaml` is there already), then `agent`'s
/// hooks merged into its project settings.
pub(crate) fn init_agent(
    place: &Place,
    force: bool,
    agent: Option<Agent>,
    dry_run: bool,
) -> Result<Report, CliError> {
    let writes_profile = force || !place.checkout.join(PROFILE_FILE).is_file();
    let would_write = || {
        format!(
            "would write {} and make git ignore the store",
            place.checkout.join(PROFILE_FILE)
        )
    };
    let Some(agent) = agent else {
        let mut report = Report::silent(crate::exit::Exit::Ok);
        if writes_profile {
            report = report.line(would_write());
        }
        return Ok(report);
    };
    // The settings are read and merged first: a file that cannot take the
    // hooks stops everything before anything is written.
    let dialect = agent.dialect();
    let path = place.checkout.join(dialect.settings);
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(CliError::msg(format!("cannot read `{path}`: {e}"))),
    };
    let (merged, added) =
        orcho_agents::hook::install::merge(existing.as_deref(), agent).map_err(|e| {
            CliError::msg(format!("`{path}` is not a JSON object of settings: {e}")).with_hint(
                "fix the file (or move it away) and run `orcho init --agent` again; nothing was \
             changed",
            )
        })?;
    let mut lines = Vec::new();
    if dry_run && writes_profile {
        lines.push(would_write());
    }
    if !dry_run && writes_profile {
        lines.extend(write_starter(place, force)?.lines(place));
    }
    // The profile was there already: the store is ignored all the same.
    if !dry_run && !writes_profile && ignore_store(place)? {
        lines.push(format!(
            "added the store {} to {}",
            place.store,
            place.checkout.join(".gitignore")
        ));
    }
    let plugin = matches!(dialect.layout, Layout::Plugin { .. });
    let kept = match (&existing, plugin) {
        (Some(_), false) => {
            " (every other setting kept; the file is rewritten with its keys sorted)"
        }
        (Some(_), true) => " (the plugin file there replaced with Orcho's)",
        (None, _) => "",
    };
    if added.is_empty() {
        lines.push(format!(
            "{path} runs `orcho hook {}` already",
            agent.as_str()
        ));
    } else if dry_run {
        lines.push(format!(
            "would add to {path}: {}{kept}\n{merged}",
            added.join(", ")
        ));
    } else {
        if let Some(parent) = path.parent() {
            orcho::core::fs::create_dir_all(parent)?;
        }
        write_project_file(&path, merged.as_bytes())?;
        let (allowed, events): (Vec<&String>, Vec<&String>) = added
            .iter()
            .partition(|a| a.starts_with("permissions.allow "));
        if !events.is_empty() {
            lines.push(format!(
                "added `orcho hook {}` to {path} for {}{kept}",
                agent.as_str(),
                events
                    .iter()
                    .map(|e| e.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            ));
        }
        if !allowed.is_empty() {
            lines.push(format!(
                "allowed {} in {path}: Claude Code would ask before running them, and a \
                 session without a person (`claude -p`) could never prove its work",
                allowed
                    .iter()
                    .map(|a| format!("`{}`", a.trim_start_matches("permissions.allow ")))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ));
        }
        lines.push(format!(
            "next: `orcho` must be on the PATH {} runs hooks with. {}; `orcho status` warns \
             while the hooks have never called Orcho",
            dialect.title, dialect.once
        ));
    }
    // The hooks run `orcho` by name: where it is not on the PATH, every
    // hook call fails, which one agent reads as "allow" (Claude Code) and
    // another as a refusal without end (Gemini CLI).
    if !dry_run && !path_finds_orcho() {
        lines.push(format!(
            "warning: `orcho` is not on this shell's PATH, and {} runs the hooks as `orcho hook \
             {}`: every hook call would fail (Claude Code then lets everything through; Gemini \
             CLI refuses every stop without end); install it (`cargo install --path \
             orcho-cli`) or add its directory to PATH",
            dialect.title, dialect.name
        ));
    }
    // Codex runs the agent's commands through a login shell: an `orcho`
    // its hooks find may be unknown there, and the agent's own `orcho
    // verify` would fail with "command not found".
    if agent == Agent::Codex && !dry_run && !login_shell_finds_orcho() {
        lines.push(
            "warning: a login shell (`bash -lc`, as Codex runs the agent's commands) does not \
             find `orcho`, so the agent's own `orcho verify` would fail with \"command not \
             found\"; add the directory `orcho` is in to PATH in your shell's login profile \
             (~/.profile or ~/.bash_profile)"
                .to_owned(),
        );
    }
    let mut report = Report::new(&serde_json::json!({
        "settings": path.as_str(),
        "added": added,
        "profile_written": writes_profile && !dry_run,
        "dry_run": dry_run,
    }));
    for line in lines {
        report = report.line(line);
    }
    Ok(report)
}
