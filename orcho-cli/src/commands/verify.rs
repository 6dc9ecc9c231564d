//! `orcho verify` and `orcho status`: receipts of this checkout.

use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};

use std::io::Write as _;

use orcho::receipts::{
    CommandName, EnvName, ExploratoryLog, Failure, ReceiptStatus, VerificationContract, Verifier,
    exec::ExitStatus,
};

use crate::{
    error::CliError,
    exit::Exit,
    output::{
        Report,
        doc::{CheckedEnvDoc, ExecDoc, StatusDoc, VerifiedDoc, VerifyDoc},
        text,
    },
    place::Place,
};

/// The verifier of the profile in use, or, with a base, of the profile at
/// the base (its commands, environments and `required` list).
fn verifier(
    place: &Place,
    profile: Option<&str>,
    base: Option<&str>,
) -> Result<Arc<Verifier>, CliError> {
    let (name, plan) = match super::attest::base_of(base) {
        Some(base) => {
            let (commit, plan) = super::attest::plan_at(place, profile, base)?;
            place.progress(&format!(
                "judged by base {base} ({}): its required commands, as it declares them",
                commit.get(..12).unwrap_or(&commit)
            ));
            (format!("{base}:orcho.yaml"), plan)
        }
        None => place.load_profile(profile)?,
    };
    let contract = plan.verification.ok_or_else(|| {
        CliError::msg(format!(
            "the profile `{name}` declares no verification commands"
        ))
    })?;
    crate::key::keyed_verifier(place, contract)
}

/// Refuses to run the repository's commands with the signing key in this
/// process's environment when they are to be attested: the shell that
/// started `orcho` holds it too, and a command can read it there.
fn refuse_signing_key_in_environment(place: &Place, attest: bool) -> Result<(), CliError> {
    if !crate::key::signing_key_in_environment() {
        return Ok(());
    }
    if attest {
        return Err(CliError::usage(
            "`orcho verify --attest` was given the signing key in its environment \
             (ORCHO_SIGNING_KEY): the commands it runs could read it from the shell that started \
             it",
        )
        .with_hint(
            "run `orcho verify` without the key, then sign in a step of its own, which runs no \
             command: `orcho attest sign` (docs/attestations.md, \"In CI\"); on your own \
             machine, `--attest` signs with the key file `orcho key generate` made",
        ));
    }
    place.progress(
        "warning: ORCHO_SIGNING_KEY is set: the commands this runs could read it from the shell \
         that started orcho; give it only to `orcho attest sign`, in a step of its own",
    );
    Ok(())
}

/// Runs `commands` (default: the required ones) and writes their receipts;
/// not ready when one fails. Each result is said as it comes; the report
/// is the JSON document of them all.
pub(crate) async fn verify(
    place: &Place,
    profile: Option<&str>,
    base: Option<&str>,
    commands: &[String],
    attest: bool,
) -> Result<Report, CliError> {
    // What `--attest` needs is checked before anything runs (or is made).
    if attest {
        refuse_signing_key_in_environment(place, true)?;
        super::attest::precheck(place)?;
    }
    let verifier = verifier(place, profile, base)?;
    let names = declared_names(verifier.contract(), commands)?;
    let attest_wanted = attest || verifier.contract().attest;
    if !names.is_empty() {
        refuse_signing_key_in_environment(place, attest)?;
    }
    let mut doc = VerifyDoc {
        passed: true,
        environments: Vec::new(),
        commands: Vec::new(),
        attested: None,
    };
    // The declared environments first: a command's result means something
    // only in the environment it declares.
    for env in environments_of(verifier.contract(), &names, commands.is_empty()) {
        let checked = check_environment(place, &verifier, env).await?;
        doc.passed &= checked.passed;
        doc.environments.push(checked);
    }
    // Ctrl-C stops the running command's process group and ends the
    // verify; the command's receipt records that it was cancelled.
    crate::interrupt::install(place.json);
    for name in names {
        let verified = run_command(place, &verifier, name).await?;
        doc.passed &= verified.passed;
        doc.commands.push(verified);
    }
    // `--attest` with the key in the environment was refused above; the
    // profile's `attest` with it says why nothing is attached.
    if attest_wanted && crate::key::signing_key_in_environment() {
        place.progress(
            "not attested: the signing key is in the environment, where the commands could read \
             it\n  hint: `orcho attest sign` signs these receipts in a step of its own",
        );
    } else if attest_wanted {
        let v = Arc::clone(&verifier);
        let place = place.clone();
        doc.attested =
            tokio::task::spawn_blocking(move || super::attest::attach_head(&place, &v, attest))
                .await??;
    }
    // Passing receipts are not the whole story: what the change does to
    // its own tests is said here too, as `orcho status` will.
    if doc.passed && !doc.commands.is_empty() {
        let commands = declared(verifier.contract());
        let (at, against) = (
            place.clone(),
            super::attest::base_of(base).map(str::to_owned),
        );
        let weakened = tokio::task::spawn_blocking(move || {
            super::weakened::weakened(&at, against.as_deref(), &commands, &[])
        })
        .await?;
        if !weakened.open.is_empty() {
            let mut said = vec![format!(
                "but this change weakens its own proof (against {}), and `orcho status` is not \
                 ready until a person has reviewed it:",
                weakened.against
            )];
            said.extend(weakened.open.iter().map(|w| format!("  {w}")));
            place.progress(&said.join("\n"));
        }
    }
    let exit = if doc.passed { Exit::Ok } else { Exit::NotReady };
    Ok(Report::new(&doc).exit(exit))
}

/// Every command `contract` declares, by name.
pub(crate) fn declared(contract: &VerificationContract) -> Vec<CommandName> {
    contract.commands.iter().map(|c| c.name.clone()).collect()
}

/// The commands `given` names (default: the required ones), each one the
/// profile declares: refused before anything runs, as a misspelled flag is.
fn declared_names(
    contract: &VerificationContract,
    given: &[String],
) -> Result<Vec<CommandName>, CliError> {
    if given.is_empty() {
        return Ok(contract.required.clone());
    }
    let declared: Vec<&str> = contract.commands.iter().map(|c| c.name.as_str()).collect();
    given
        .iter()
        .map(|command| {
            let name = command
                .parse::<CommandName>()
                .map_err(|e| CliError::usage(e.to_string()))?;
            if declared.contains(&name.as_str()) {
                return Ok(name);
            }
            let near = orcho::core::nearest(command, declared.iter().copied())
                .map(|n| format!(" (did you mean `{n}`?)"))
                .unwrap_or_default();
            Err(CliError::usage(format!(
                "the profile declares no verification command `{command}`{near}"
            ))
            .with_hint(format!(
                "its commands: {}",
                orcho::core::spelling::quoted(&declared)
            )))
        })
        .collect()
}

/// Checks the assertions of environment `env` (writing its receipt) and
/// says how it went.
async fn check_environment(
    place: &Place,
    verifier: &Arc<Verifier>,
    env: EnvName,
) -> Result<CheckedEnvDoc, CliError> {
    let v = Arc::clone(verifier);
    let name = env.clone();
    let receipt = tokio::task::spawn_blocking(move || v.check_environment(&name)).await??;
    let failed = receipt.results.iter().find(|r| !r.passed);
    place.say(&match failed {
        None => format!(
            "✓ environment `{env}`: {} assertion(s) held",
            receipt.results.len()
        ),
        Some(f) => format!(
            "✗ environment `{env}`: {} failed: {}\n  \
             hint: its commands' receipts record this failure; fix the environment, \
             then `orcho verify` again",
            f.description, f.detail
        ),
    });
    Ok(CheckedEnvDoc {
        environment: env.to_string(),
        passed: failed.is_none(),
        assertions: receipt.results.len(),
        failed: failed.map(|f| format!("{}: {}", f.description, f.detail)),
    })
}

/// Runs the declared command `name` (writing its receipt) and says how it
/// went; Ctrl-C stops it and ends the verify.
async fn run_command(
    place: &Place,
    verifier: &Arc<Verifier>,
    name: CommandName,
) -> Result<VerifiedDoc, CliError> {
    place.progress(&format!("running `{name}` …"));
    let v = Arc::clone(verifier);
    let command = name.clone();
    let cancel = crate::interrupt::phase_started();
    let receipt = tokio::task::spawn_blocking(move || v.run_command(&command, Some(&cancel))).await;
    crate::interrupt::phase_ended();
    let receipt = receipt??;
    if receipt.exit == ExitStatus::Cancelled {
        return Err(CliError::interrupted(format!(
            "interrupted: `{name}` was stopped; its receipt says it was cancelled"
        ))
        .with_hint(format!("`orcho verify {name}` runs it again")));
    }
    let vacuous = receipt.vacuous();
    let passed = receipt.passed() && !vacuous;
    // unittest finds test methods of `unittest.TestCase` classes only: a
    // suite written for pytest runs nothing under it.
    let unittest = receipt
        .tests
        .as_ref()
        .is_some_and(|t| t.runners.iter().any(|r| r == "unittest"));
    let counted = receipt
        .tests
        .as_ref()
        .filter(|t| t.ran() > 0 || t.skipped > 0 || !t.not_run.is_empty())
        .map(|t| format!(" ({t})"))
        .unwrap_or_default();
    place.say(&format!(
        "{} `{name}` {}{counted} in {:.1}s{}",
        if passed { "✓" } else { "✗" },
        receipt.exit,
        receipt.duration.as_secs_f64(),
        match (vacuous, unittest) {
            (true, true) =>
                ", but no test ran: vacuous (unittest finds only the test methods of \
                             `unittest.TestCase` classes: tests written as pytest functions \
                             need `argv: [python3, -m, pytest]`, with pytest installed)",
            (true, false) =>
                ", but no test ran: vacuous (a command that checks rather than tests \
                              says `allow_empty: true`)",
            _ => "",
        }
    ));
    if passed && receipt.subject_after != receipt.subject_before {
        // Proven for neither state: say so now, not at the next status.
        let subject = verifier
            .contract()
            .command(name.as_str())
            .and_then(|spec| verifier.contract().environment_for(spec))
            .map(|e| e.subject.clone())
            .unwrap_or_default();
        let changes = verifier
            .fingerprinter()
            .changes(
                verifier.checkout(),
                &subject,
                &receipt.subject_before,
                &receipt.subject_after,
            )
            .filter(|c| !c.is_empty())
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        place.say(&format!(
            concat!(
                "  but `{name}` changed the files it is bound to while it ran{changes}, ",
                "so its receipt is stale\n",
                "  hint: `orcho verify {name}` again: what it writes once (a first ",
                "Cargo.lock) is then part of what it runs against; what it writes every ",
                "time, commit or ignore (`.gitignore`, or `.ignore` outside git)"
            ),
            name = name,
            changes = changes
        ));
    }
    if let Some(failure @ Failure::AssertionFailed { .. }) = receipt.failure() {
        // The command's own output is not why it failed.
        place.say(&format!("    failed: {failure}"));
    } else if !passed {
        let logs: Vec<Utf8PathBuf> = [&receipt.stdout.path, &receipt.stderr.path]
            .into_iter()
            .flatten()
            .map(|p| place.store.join(p))
            .collect();
        let logs: Vec<&Utf8Path> = logs.iter().map(Utf8PathBuf::as_path).collect();
        let detail = orcho::phase::output_detail(&receipt.stdout.tail, &receipt.stderr.tail, &logs);
        place.say(&text::indented(&detail, crate::phase::TAIL_LINES));
        if let Some(hint) = left_out_toolchain(verifier.contract(), &name) {
            place.say(&format!("  hint: {hint}"));
        }
    }
    Ok(VerifiedDoc {
        command: name.to_string(),
        passed,
        exit: receipt.exit.to_string(),
        duration_ms: u64::try_from(receipt.duration.as_millis()).unwrap_or(u64::MAX),
    })
}

/// The host variables a toolchain is commonly found by, with the programs
/// of that toolchain.
const TOOLCHAIN_VARS: &[(&str, &[&str])] = &[
    ("RUSTUP_HOME", RUST),
    ("CARGO_HOME", RUST),
    ("RUSTUP_TOOLCHAIN", RUST),
    ("VIRTUAL_ENV", PYTHON),
    ("PYENV_ROOT", PYTHON),
    ("CONDA_PREFIX", PYTHON),
    ("JAVA_HOME", JVM),
    ("GRADLE_USER_HOME", JVM),
    ("GOROOT", GO),
    ("GOPATH", GO),
    ("NVM_DIR", NODE),
];

const RUST: &[&str] = &["cargo", "rustc", "rustup", "cargo-nextest"];
const PYTHON: &[&str] = &[
    "python", "python3", "pytest", "pip", "pip3", "uv", "tox", "nox", "poetry", "hatch", "pdm",
];
const JVM: &[&str] = &["java", "javac", "mvn", "gradle", "gradlew", "mvnw", "sbt"];
const GO: &[&str] = &["go", "gofmt"];
const NODE: &[&str] = &["node", "npm", "npx", "yarn", "pnpm"];

/// Whether the toolchain variable `var` may matter to `program` (its
/// command's first word): a shell or `make` may run anything.
fn may_need(program: &str, programs: &[&str]) -> bool {
    let program = program.rsplit('/').next().unwrap_or(program);
    let program = program.trim_start_matches("./");
    matches!(program, "sh" | "bash" | "zsh" | "make" | "just" | "env")
        || programs.contains(&program)
        || programs
            .iter()
            .any(|p| program.starts_with(&format!("{p}-")))
}

/// For a command that failed: the toolchain variables the host sets that
/// the command was not given (its environment neither `inherit`s nor sets
/// them), which may be why.
fn left_out_toolchain(contract: &VerificationContract, name: &CommandName) -> Option<String> {
    let spec = contract.command(name.as_str())?;
    let environment = contract.environment_for(spec);
    let environment = environment.as_deref();
    let given = |var: &str| {
        spec.env.contains_key(var)
            || environment
                .is_some_and(|e| e.env.contains_key(var) || e.inherit.iter().any(|i| i == var))
    };
    let program = spec.argv.first().map_or("", String::as_str);
    let relevant = TOOLCHAIN_VARS
        .iter()
        .filter(|(_, programs)| may_need(program, programs))
        .map(|(var, _)| *var);
    let host = orcho::receipts::exec::BaseEnv::empty().with_host_vars(relevant);
    let left_out: Vec<&str> = host.iter().map(|(k, _)| k).filter(|k| !given(k)).collect();
    if left_out.is_empty() {
        return None;
    }
    let env_name = environment.map_or("default", |e| e.name.as_str());
    Some(format!(
        "this host sets {}, which `{name}` was not given (a command gets only the declared \
         environment); if its toolchain needs it, add `inherit: [{}]` to the environment \
         `{env_name}` in orcho.yaml",
        orcho::core::spelling::quoted(&left_out),
        left_out.join(", ")
    ))
}

/// Runs `argv` in the declared environment `env` as an exploratory command:
/// its output goes to the terminal as it comes (to standard error under
/// `--json`, which prints the log entry), it is logged and counted, and it
/// proves nothing.
pub(crate) async fn exec(
    place: &Place,
    profile: Option<&str>,
    env: Option<&str>,
    argv: Vec<String>,
) -> Result<Report, CliError> {
    let (_, plan) = place.load_profile(profile)?;
    let verifier = crate::key::keyed_verifier(place, plan.verification.unwrap_or_default())?;
    let env = env.map(str::parse::<EnvName>).transpose()?;
    if let Some(name) = &env
        && verifier.contract().environment(name.as_str()).is_none()
    {
        let declared: Vec<String> = verifier
            .contract()
            .environments
            .iter()
            .map(|e| format!("`{}`", e.name))
            .collect();
        return Err(
            CliError::msg(format!("the profile declares no environment `{name}`")).with_hint(
                if declared.is_empty() {
                    "leave out `--env`: the command then runs at the checkout root".to_owned()
                } else {
                    format!("declared: {}", declared.join(", "))
                },
            ),
        );
    }
    crate::interrupt::install(place.json);
    let cancel = crate::interrupt::phase_started();
    let json = place.json;
    let v = Arc::clone(&verifier);
    let (entry, outcome) = tokio::task::spawn_blocking(move || {
        let mut stdout = std::io::stdout();
        let mut stderr = std::io::stderr();
        let mut to_stdout = |bytes: &[u8]| {
            let _ = if json {
                stderr.write_all(bytes).and_then(|()| stderr.flush())
            } else {
                stdout.write_all(bytes).and_then(|()| stdout.flush())
            };
        };
        let mut to_stderr = |bytes: &[u8]| {
            let mut err = std::io::stderr();
            let _ = err.write_all(bytes).and_then(|()| err.flush());
        };
        v.run_exploratory(
            &argv,
            env.as_ref(),
            Some(&cancel),
            &mut to_stdout,
            &mut to_stderr,
        )
    })
    .await??;
    crate::interrupt::phase_ended();
    let counted = ExploratoryLog::new(verifier.store()).count()?;
    let code = match &outcome.status {
        ExitStatus::Exited(code) => u8::try_from(*code).unwrap_or(1),
        ExitStatus::Signaled(signal) => u8::try_from(128 + signal).unwrap_or(1),
        ExitStatus::Cancelled => crate::exit::INTERRUPTED,
        ExitStatus::SpawnFailed { message } => {
            return Err(CliError::msg(format!(
                "`{}` could not be started: {message}",
                entry.argv.first().map_or("", String::as_str)
            ))
            .with_hint("the command runs from the environment's working directory with its PATH")
            // What a shell says of a program it cannot start.
            .with_code(127));
        }
        // No timeout is set; anything else is a failure.
        _ => 1,
    };
    Ok(Report::new(&ExecDoc {
        argv: &entry.argv,
        exit: outcome.status.to_string(),
        exit_code: entry.exit_code,
        authoritative: entry.is_authoritative(),
        exploratory_commands: counted,
    })
    .note(format!(
        "exploratory: {}; logged, not a receipt ({counted} exploratory command(s) so far); \
         `orcho verify` proves the declared commands",
        outcome.status
    ))
    .exit(Exit::Command(code)))
}

/// The declared environments `names` run in, each once, in declaration
/// order; with `all`, every declared environment.
fn environments_of(
    contract: &VerificationContract,
    names: &[CommandName],
    all: bool,
) -> Vec<EnvName> {
    contract
        .environments
        .iter()
        .filter(|env| {
            all || names.iter().any(|name| {
                contract
                    .command(name.as_str())
                    .and_then(|spec| contract.environment_for(spec))
                    .is_some_and(|e| e.name == env.name)
            })
        })
        .map(|env| env.name.clone())
        .collect()
}

/// Classifies the receipts of the checkout; ready when every required one
/// is present.
pub(crate) async fn status(
    place: &Place,
    profile: Option<&str>,
    base: Option<&str>,
    ack_weakening: bool,
) -> Result<Report, CliError> {
    let verifier = verifier(place, profile, base)?;
    // What the change does to weaken its own proof: a person must see it,
    // whatever the receipts say.
    let against = super::attest::base_of(base);
    let commands = declared(verifier.contract());
    let summary = tokio::task::spawn_blocking(move || verifier.readiness()).await??;
    // After the fingerprint: the same state reviews from the cache.
    let mut weakened = {
        let (place, against) = (place.clone(), against.map(str::to_owned));
        let subjects = summary.subjects.clone();
        tokio::task::spawn_blocking(move || {
            super::weakened::weakened(&place, against.as_deref(), &commands, &subjects)
        })
        .await?
    };
    if ack_weakening {
        let n = super::weakened::acknowledge(place, &weakened)?;
        place.progress(&format!(
            "acknowledged {n} weakening(s) of this change's proof"
        ));
        let open = std::mem::take(&mut weakened.open);
        weakened.acknowledged.extend(open);
    }
    let ready = weakened.open.is_empty()
        && summary
            .required
            .iter()
            .all(|r| r.status == ReceiptStatus::Present);
    let unproven_stops = crate::hook::unproven_stops(&place.store)?;
    let mut lines = Vec::new();
    // Hooks installed that never called Orcho here guard nothing.
    let mut never_called = Vec::new();
    for agent in crate::hook::Agent::ALL {
        let dialect = agent.dialect();
        let (agent, settings, how) = (dialect.name, dialect.settings, dialect.once);
        let installed = std::fs::read_to_string(place.checkout.join(settings))
            .is_ok_and(|text| text.contains(&format!("orcho hook {agent}")));
        if installed && !crate::hook::was_called(&place.store, agent) {
            never_called.push(agent);
            lines.push(format!(
                "warning: {settings} runs `orcho hook {agent}`, but it has never called Orcho \
                 here: {how}"
            ));
        }
    }
    // Settings that switch Orcho's hooks off, in the project or the home:
    // the agent's stops are then not guarded at all.
    let mut hooks_off = Vec::new();
    for (agent, file, how) in crate::hook::hooks_switched_off(&place.checkout) {
        hooks_off.push(agent);
        lines.push(format!(
            "warning: {file} switches {agent}'s hooks off ({how}): Orcho's guard and stop \
             checks do not run in its sessions; remove it (only a person should)"
        ));
    }
    if !lines.is_empty() {
        lines.push(String::new());
    }
    if let Some(last) = unproven_stops.last() {
        lines.push(format!(
            "agent stops let through unproven: {} (last {}, {}{} after {} refusal(s): {}); \
             `orcho status --ack-stops` acknowledges them, and a later proven stop clears them",
            unproven_stops.len(),
            last.at,
            last.agent,
            last.session_id
                .as_deref()
                .map(|s| format!(" session {s}"))
                .unwrap_or_default(),
            last.blocks,
            last.unproven.join(", ")
        ));
        lines.push(String::new());
    }
    if let Some(table) = text::environment_table(&summary) {
        lines.push(table);
        lines.push(String::new());
    }
    lines.push(text::readiness_table(&summary));
    if summary.exploratory_commands > 0 {
        lines.push(format!(
            "exploratory commands: {} (not authoritative: they never satisfy a requirement)",
            summary.exploratory_commands
        ));
    }
    lines.extend(super::weakened::lines(&weakened));
    let verdict = text::readiness_verdict(&summary);
    if weakened.open.is_empty() {
        lines.push(verdict);
    } else if verdict.starts_with("ready") {
        lines.push(format!(
            "not ready: every required receipt is present, but {} weakening(s) of this change \
             wait for a person (`orcho status --ack-weakening` once reviewed)",
            weakened.open.len()
        ));
    } else {
        lines.push(format!(
            "{verdict}; and {} weakening(s) of this change wait for a person",
            weakened.open.len()
        ));
    }
    let exit = if ready { Exit::Ok } else { Exit::NotReady };
    Ok(Report::new(&StatusDoc {
        summary: &summary,
        ready,
        unproven_stops,
        hooks_never_called: never_called,
        hooks_switched_off: hooks_off,
        weakenings: &weakened,
    })
    .line(lines.join("\n"))
    .exit(exit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_toolchain_variable_is_named_only_for_a_program_that_may_need_it() {
        assert!(may_need("cargo", RUST));
        assert!(may_need("/usr/local/cargo/bin/cargo", RUST));
        assert!(may_need("cargo-nextest", RUST));
        assert!(!may_need("cargo", PYTHON));
        assert!(may_need("pytest", PYTHON));
        assert!(may_need("./gradlew", JVM));
        // A shell or make may run anything.
        assert!(may_need("sh", GO));
        assert!(may_need("make", NODE));
    }
}
