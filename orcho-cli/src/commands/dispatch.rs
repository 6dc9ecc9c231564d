//! Picking the command to run.

use clap::CommandFactory;

use super::{
    attest, decide, hook, inbox, init, notify, permissions, run, runs, show, store, verify,
};

use crate::{
    cli::{
        AttestCommand, Cli, Command, DeliveryCommand, HandoffCommand, IntakeCommand, KeyCommand,
        NotifyCommand, PermissionsCommand, ProfileCommand, SchemaDocument, ServeCommand,
        StoreCommand,
    },
    error::CliError,
    exit::Exit,
    host,
    output::Report,
    place::Place,
};

/// Runs the command `cli` names and prints what it reports, as text or
/// (`--json`) one JSON document.
pub(crate) async fn dispatch(cli: Cli) -> Result<Exit, CliError> {
    if let Command::Hook {
        agent,
        profile,
        permissions,
        ask_wait,
        drive,
        guard_stops,
        program,
    } = &cli.command
    {
        let at = hook::HookPlace {
            checkout: cli.checkout.clone(),
            store: cli.store.clone(),
            profile: profile.profile.as_deref(),
            preset: permissions.map(Into::into),
            ask_wait: ask_wait.map(std::time::Duration::from_secs),
        };
        if let Some(prompt) = drive {
            return hook::drive(*agent, &at, prompt, *guard_stops, program);
        }
        // The hook finds its checkout from the agent's document, and never
        // fails: whatever goes wrong is its refusal.
        return Ok(hook::hook(*agent, &at));
    }
    let json = cli.json;
    if let Some(verb) = decision_verb(&cli.command) {
        refuse_outside_a_person(verb)?;
    }
    let place = Place::new(cli.checkout, cli.store, json)?;
    let makes_events = makes_events(&cli.command);
    let done = command(&place, cli.command).await;
    if makes_events {
        // Whatever it opened, decided or ended is sent in the background,
        // also when the command failed part way.
        crate::notifying::kick(&place);
    }
    Ok(done?.render(json))
}

/// Whether `command` may open, decide or end something a notifier is told
/// of.
fn makes_events(command: &Command) -> bool {
    matches!(
        command,
        Command::Run(_)
            | Command::Resume { .. }
            | Command::Cancel { .. }
            | Command::Handoff(HandoffCommand::Decide { .. })
            | Command::Delivery(DeliveryCommand::Decide { .. })
            | Command::Plan(_)
            | Command::Answer { .. }
            | Command::Deviation { .. }
            | Command::Intake { .. }
            | Command::Decide { .. }
            | Command::Permissions(PermissionsCommand::Decide { .. })
    )
}

/// The decision `command` records, when it records one: what only a person
/// decides (handoffs and their waivers, plans, answers, deviations, intake,
/// delivery, cancelling, acknowledging unproven stops, the web inbox's
/// tokens).
fn decision_verb(command: &Command) -> Option<&'static str> {
    Some(match command {
        Command::Handoff(HandoffCommand::Decide { .. }) => "orcho handoff decide",
        Command::Delivery(DeliveryCommand::Decide { .. }) => "orcho delivery decide",
        Command::Plan(_) => "orcho plan",
        Command::Answer { .. } => "orcho answer",
        Command::Deviation { .. } => "orcho deviation",
        Command::Decide {
            action: Some(_), ..
        } => "orcho decide",
        Command::Intake {
            action: Some(_), ..
        }
        | Command::Intake {
            command: Some(IntakeCommand::Decide { .. }),
            ..
        } => "orcho intake",
        Command::Cancel { .. } => "orcho cancel",
        Command::Permissions(PermissionsCommand::Decide { .. }) => "orcho permission decide",
        Command::Status {
            ack_stops: true, ..
        } => "orcho status --ack-stops",
        Command::Status {
            ack_weakening: true,
            ..
        } => "orcho status --ack-weakening",
        Command::Serve {
            command: Some(ServeCommand::Token(_)),
            ..
        } => "orcho serve token",
        _ => return None,
    })
}

/// Refuses a decision made from inside a coding agent's session or a
/// process Orcho started: decisions belong to people, and such a decision
/// is never recorded as one.
fn refuse_outside_a_person(verb: &str) -> Result<(), CliError> {
    let Some(inside) = crate::hook::session::inside() else {
        return Ok(());
    };
    let hint = if verb.starts_with("orcho status --ack") {
        format!(
            "tell the user what `orcho status` shows, and let them review it and run `{verb}` \
             from a terminal of their own"
        )
    } else {
        "ask the user to decide: from a terminal of their own (`orcho inbox` lists what waits), \
         the web inbox (`orcho serve`), or an MCP client, which is recorded by its name"
            .to_owned()
    };
    Err(CliError::refused(format!(
        "`{verb}` records a person's decision, and this `orcho` runs {inside}: an agent, or a \
         command a run started, does not decide"
    ))
    .with_hint(hint))
}

/// Runs `command` at `place` and returns its report.
async fn command(place: &Place, command: Command) -> Result<Report, CliError> {
    let find = |reference: &str| host::find_run(place, reference);
    match command {
        Command::Verify {
            commands,
            profile,
            attest,
            base,
        } => {
            verify::verify(
                place,
                profile.profile.as_deref(),
                base.base.as_deref(),
                &commands,
                attest,
            )
            .await
        }
        Command::Status {
            profile,
            commit: Some(rev),
            base,
            ..
        } => attest::status_commit(
            place,
            profile.profile.as_deref(),
            &rev,
            base.base.as_deref(),
        ),
        Command::Status {
            profile,
            commit: None,
            ack_stops,
            ack_weakening,
            base,
        } => {
            if ack_stops {
                let n = crate::hook::acknowledge_stops(&place.store)?;
                place.progress(&format!(
                    "acknowledged {n} agent stop(s) let through unproven"
                ));
            }
            verify::status(
                place,
                profile.profile.as_deref(),
                base.base.as_deref(),
                ack_weakening,
            )
            .await
        }
        Command::Serve {
            command: None,
            listen,
            insecure_listen,
        } => orcho_web::serve(place, listen, insecure_listen)
            .await
            .map(|()| Report::silent(Exit::Ok)),
        Command::Serve {
            command: Some(ServeCommand::Token(command)),
            listen,
            ..
        } => super::serve::token(place, command, listen),
        Command::Store(StoreCommand::Migrate) => store::migrate(place),
        Command::Store(StoreCommand::Export { runs, output }) => {
            store::export(place, &runs, output.as_deref())
        }
        Command::Store(StoreCommand::Import { file }) => store::import(place, &file),
        Command::Notify(NotifyCommand::Add {
            name,
            webhook,
            smtp,
            to,
            from,
            password_env,
            events,
            secret_env,
            inbox_url,
        }) => {
            let target = match (webhook, smtp) {
                (Some(url), _) => notify::Wanted::Webhook { url, secret_env },
                (None, Some(smtp)) => notify::Wanted::Mail {
                    smtp,
                    to,
                    from,
                    password_env,
                },
                (None, None) => {
                    return Err(CliError::usage(
                        "say where: `--webhook URL` or `--smtp URL`",
                    ));
                }
            };
            notify::add(place, &name, target, &events, inbox_url.as_deref())
        }
        Command::Notify(NotifyCommand::List) => notify::list(place),
        Command::Notify(NotifyCommand::Remove { name }) => notify::remove(place, &name),
        Command::Notify(NotifyCommand::Test { name }) => notify::test(place, &name),
        Command::Notify(NotifyCommand::Log { last }) => notify::log(place, last),
        Command::Notify(NotifyCommand::Deliver { watch }) => {
            let place = place.clone();
            tokio::task::spawn_blocking(move || notify::deliver(&place, watch)).await?
        }
        Command::Key(KeyCommand::Generate { force }) => attest::key_generate(place, force),
        Command::Key(KeyCommand::Show) => attest::key_show(place),
        Command::Attest(AttestCommand::Push { remote }) => attest::push(place, &remote),
        Command::Attest(AttestCommand::Fetch { remote }) => attest::fetch(place, &remote),
        Command::Attest(AttestCommand::Sign {
            commit,
            base,
            profile,
        }) => attest::sign(
            place,
            profile.profile.as_deref(),
            &commit,
            base.base.as_deref(),
        ),
        Command::Attest(AttestCommand::Explain {
            commit,
            command,
            base,
            profile,
        }) => attest::explain(
            place,
            profile.profile.as_deref(),
            &commit,
            base.base.as_deref(),
            command.as_deref(),
        ),
        Command::Exec {
            env,
            profile,
            command,
        } => verify::exec(place, profile.profile.as_deref(), env.as_deref(), command).await,
        Command::Run(args) => run::start(place, &args).await,
        Command::Resume {
            run,
            no_interactive,
            wait,
            autopilot,
            phases,
        } => {
            let asking = run::Asking::new(no_interactive, wait);
            run::resume(place, &find(&run)?, asking, autopilot, &phases).await
        }
        Command::Inbox {
            mine,
            repo,
            kind,
            older_than,
            newer_than,
            page,
            per_page,
        } => {
            let mut filter = orcho::InboxFilter::all();
            filter.mine = mine;
            filter.repo = repo;
            filter.kind = kind;
            filter.older_than = older_than;
            filter.newer_than = newer_than;
            let page = page.map(|n| orcho::InboxPage::new(n, per_page.unwrap_or(50)));
            inbox::inbox(place, &filter, page)
        }
        Command::Runs { team } => runs::list(place, team),
        Command::Log { run } => runs::log(place, &find(&run)?),
        Command::Evidence { run } => runs::evidence(place, &find(&run)?),
        Command::Cancel { run, reason } => runs::cancel(place, &find(&run)?, &reason),
        Command::Gc { keep_logs, dry_run } => runs::gc(place, keep_logs, dry_run),
        Command::Handoff(HandoffCommand::Show { run }) => show::handoff(place, &find(&run)?),
        Command::Handoff(HandoffCommand::Decide {
            run,
            action,
            text,
            handoff,
            advice,
        }) => decide::handoff(
            place,
            &find(&run)?,
            action,
            text.as_deref(),
            handoff,
            advice,
        ),
        Command::Handoff(HandoffCommand::Advise { run }) => show::advice(place, &find(&run)?).await,
        Command::Delivery(DeliveryCommand::Show { run, diff }) => {
            show::gate(place, &find(&run)?, diff)
        }
        Command::Delivery(DeliveryCommand::Decide {
            run,
            action,
            message,
            note,
            patch,
        }) => decide::delivery(place, &find(&run)?, action, message, note, patch.as_deref()),
        Command::Delivery(DeliveryCommand::Rerun { run }) => show::rerun(place, &find(&run)?).await,
        Command::Plan(cmd) => decide::plan(place, cmd),
        Command::Intake {
            command,
            run,
            action,
            message,
        } => {
            let (run, action, message) = match command {
                Some(command) => command.into_parts(),
                None => (run.unwrap_or_default(), action, message),
            };
            match action {
                Some(action) => decide::intake(place, &find(&run)?, action, message),
                None => show::intake(place, &find(&run)?),
            }
        }
        Command::Answer { run, answers } => decide::answer(place, &find(&run)?, &answers),
        Command::Deviation { run, action, note } => {
            decide::deviation(place, &find(&run)?, action, note)
        }
        Command::Decide {
            run,
            action,
            note,
            point,
            digest,
        } => decide::by_name(
            place,
            &find(&run)?,
            action.as_deref(),
            note,
            point.as_deref(),
            digest.as_deref(),
        ),
        Command::Mcp => orcho_mcp::serve(place.clone()).await.map(Report::silent),
        Command::Init {
            force,
            agent: None,
            dry_run: false,
        } => init::init(place, force),
        Command::Init {
            force,
            agent,
            dry_run,
        } => init::init_agent(place, force, agent, dry_run),
        // Answered above, before the place is found.
        Command::Hook { .. } => Ok(Report::silent(Exit::Ok)),
        Command::Permissions(PermissionsCommand::Decide {
            run,
            action,
            note,
            id,
        }) => decide::permission(place, &find(&run)?, action.into(), note, id),
        Command::Permissions(PermissionsCommand::Check {
            profile,
            permissions,
            write,
            edit,
            read,
            tool,
            command,
        }) => {
            let request = match (write, edit, read, tool) {
                (Some(p), ..) => permissions::Request::Write(p),
                (_, Some(p), ..) => permissions::Request::Edit(p),
                (_, _, Some(p), _) => permissions::Request::Read(p),
                (_, _, _, Some(mut words)) => {
                    let argument = if words.len() > 1 {
                        words.remove(1)
                    } else {
                        String::new()
                    };
                    permissions::Request::Tool(words.remove(0), argument)
                }
                _ => permissions::Request::Command(command),
            };
            permissions::check(
                place,
                profile.profile.as_deref(),
                permissions.map(Into::into),
                request,
            )
        }
        Command::Profile(ProfileCommand::Show { name }) => init::show(place, name.as_deref()),
        Command::Report { document, file } => {
            super::report::report(document.as_deref(), file.as_deref())
        }
        Command::Schema {
            document: SchemaDocument::PhaseOutput,
        } => Ok(Report::text(orcho::phase::output::schema().trim_end())),
        Command::Schema {
            document: SchemaDocument::PhaseInput,
        } => Ok(Report::text(orcho::phase::input::schema().trim_end())),
        Command::Schema {
            document: SchemaDocument::Notification,
        } => Ok(Report::text(orcho::notify::schema().trim_end())),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "orcho", &mut out);
            Ok(Report::text(String::from_utf8_lossy(&out).trim_end()))
        }
    }
}
