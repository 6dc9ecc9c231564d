//! `orcho verify` and `orcho status`: receipts of this checkout.

use std::{io::Write as _, sync::Arc};

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{
    checkout::{CommandRun, Verified, Verifying, declared},
    receipts::{CommandName, EnvName, ExploratoryLog, Failure, Verifier, exec::ExitStatus},
};

use crate::{
    error::CliError,
    exit::Exit,
    output::{
        Report,
        doc::{ExecDoc, StatusDoc, VerifyDoc},
        text,
    },
    place::Place,
};

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
    let verifier = crate::proof::verifier(place, profile, base)?;
    let names = orcho::checkout::commands_to_verify(verifier.contract(), commands)?;
    if !names.is_empty() {
        refuse_signing_key_in_environment(place, attest)?;
    }
    let verified = run(place, &verifier, names, commands.is_empty()).await?;
    let mut doc = VerifyDoc::of(&verified);
    doc.attested = crate::proof::attest_verified(place, &verifier, attest).await?;
    // Passing receipts are not the whole story: what the change does to
    // its own tests is said here too, as `orcho status` will.
    if doc.passed && !doc.commands.is_empty() {
        let commands = declared(verifier.contract());
        let (checkout, against) = (
            crate::key::checkout(place)?,
            crate::proof::base_of(base).map(str::to_owned),
        );
        let weakened = tokio::task::spawn_blocking(move || {
            checkout.weakened(against.as_deref(), &commands, &[])
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

/// Runs the environments and commands `names` with their receipts, each
/// result said as it comes; Ctrl-C stops the running command's process
/// group and ends the verify, with a receipt that says it was cancelled.
pub(crate) async fn run(
    place: &Place,
    verifier: &Arc<Verifier>,
    names: Vec<CommandName>,
    all_environments: bool,
) -> Result<Verified, CliError> {
    let checkout = crate::key::checkout(place)?;
    crate::interrupt::install(place.voice);
    let cancel = crate::interrupt::phase_started();
    let (v, at) = (Arc::clone(verifier), place.clone());
    let verified = tokio::task::spawn_blocking(move || {
        checkout.verify(&v, &names, all_environments, Some(&cancel), &mut |event| {
            say(&at, &v, &event);
        })
    })
    .await;
    crate::interrupt::phase_ended();
    let verified = verified??;
    if let Some(name) = &verified.interrupted {
        return Err(CliError::interrupted(format!(
            "interrupted: `{name}` was stopped; its receipt says it was cancelled"
        ))
        .with_hint(format!("`orcho verify {name}` runs it again")));
    }
    Ok(verified)
}

/// Says one result of a verify.
fn say(place: &Place, verifier: &Verifier, event: &Verifying<'_>) {
    match event {
        Verifying::Environment(receipt) => {
            let env = &receipt.environment;
            place.say(&match receipt.results.iter().find(|r| !r.passed) {
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
        }
        Verifying::Starting(name) => place.progress(&format!("running `{name}` …")),
        Verifying::Ran(run) => say_ran(place, verifier, run),
        _ => {}
    }
}

/// Says how a declared command ran.
fn say_ran(place: &Place, verifier: &Verifier, run: &CommandRun) {
    let (name, receipt) = (&run.name, &run.receipt);
    let counted = receipt
        .tests
        .as_ref()
        .filter(|t| t.ran() > 0 || t.skipped > 0 || !t.not_run.is_empty())
        .map(|t| format!(" ({t})"))
        .unwrap_or_default();
    place.say(&format!(
        "{} `{name}` {}{counted} in {:.1}s{}",
        if run.passed { "✓" } else { "✗" },
        receipt.exit,
        receipt.duration.as_secs_f64(),
        match (run.vacuous, run.unittest) {
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
    if let Some(changes) = &run.changed_subject {
        // Proven for neither state: say so now, not at the next status.
        let changes = if changes.is_empty() {
            String::new()
        } else {
            format!(" ({changes})")
        };
        if run.runs_again() {
            place.say(&format!(
                "  but `{name}` changed the files it is bound to while it ran{changes}; \
                 running it once more, against them"
            ));
        } else {
            place.say(&format!(
                concat!(
                    "  but `{name}` changed the files it is bound to again while it ran{changes}, ",
                    "so its receipt is stale\n",
                    "  hint: it writes them every time it runs: commit or ignore what it ",
                    "writes (`.gitignore`, or `.ignore` outside git), then `orcho verify {name}`"
                ),
                name = name,
                changes = changes
            ));
        }
    }
    if run.passed && run.changed_subject.is_none() && !receipt.written_during_run.is_empty() {
        let paths: Vec<String> = receipt
            .written_during_run
            .iter()
            .map(ToString::to_string)
            .collect();
        place.say(&format!(
            "  but `{name}` wrote files it is bound to while it ran ({}), so its receipt is \
             stale\n  hint: it writes them every time it runs: commit or ignore what it writes \
             (`.gitignore`, or `.ignore` outside git), then `orcho verify {name}`",
            orcho::core::spelling::quoted(&paths)
        ));
    }
    if let Some(failure @ Failure::AssertionFailed { .. }) = receipt.failure() {
        // The command's own output is not why it failed.
        place.say(&format!("    failed: {failure}"));
    } else if !run.passed {
        let logs: Vec<Utf8PathBuf> = [&receipt.stdout.path, &receipt.stderr.path]
            .into_iter()
            .flatten()
            .map(|p| verifier.store().dir().join(p))
            .collect();
        let logs: Vec<&Utf8Path> = logs.iter().map(Utf8PathBuf::as_path).collect();
        let detail = orcho::phase::output_detail(&receipt.stdout.tail, &receipt.stderr.tail, &logs);
        place.say(&text::indented(&detail, crate::phase::TAIL_LINES));
        if let Some(left) = &run.left_out {
            place.say(&format!(
                "  hint: this host sets {}, which `{name}` was not given (a command gets only \
                 the declared environment); if its toolchain needs it, add `inherit: [{}]` to \
                 the environment `{}` in orcho.yaml",
                orcho::core::spelling::quoted(&left.vars),
                left.vars.join(", "),
                left.environment
            ));
        }
    }
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
    crate::interrupt::install(place.voice);
    let cancel = crate::interrupt::phase_started();
    let json = place.voice.is_json();
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

/// Classifies the receipts of the checkout; ready when every required one
/// is present and nothing that weakens the change's proof waits for a
/// person.
pub(crate) async fn status(
    place: &Place,
    profile: Option<&str>,
    base: Option<&str>,
    ack_weakening: bool,
) -> Result<Report, CliError> {
    let (readiness, hooks) = crate::proof::readiness(place, profile, base).await?;
    let mut readiness = readiness;
    if ack_weakening {
        let n = crate::key::checkout(place)?.acknowledge(&readiness.weakened)?;
        place.progress(&format!(
            "acknowledged {n} weakening(s) of this change's proof"
        ));
        readiness.weakened.mark_acknowledged();
    }
    let ready = readiness.ready();
    let mut lines = text::checkout_status(&readiness, &hooks);
    let exit = if ready { Exit::Ok } else { Exit::NotReady };
    let at_delivery = crate::proof::at_delivery(place);
    for run in &at_delivery {
        let _ = std::fmt::Write::write_fmt(
            &mut lines,
            format_args!(
                "\nrun {run} waits at its delivery gate: its work and its receipts are in its worktree, not \
             here yet; `orcho delivery show {run}`, then `orcho delivery decide {run} approve` \
             brings it here"
            ),
        );
    }
    Ok(Report::new(&StatusDoc {
        summary: &readiness.summary,
        ready,
        hooks: &hooks,
        weakenings: &readiness.weakened,
        at_delivery: &at_delivery,
    })
    .line(lines)
    .exit(exit))
}
