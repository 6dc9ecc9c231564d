//! Picking the command to run.

use clap::CommandFactory;

use super::{decide, inbox, init, run, show, verify};

use crate::{
    cli::{Cli, Command, DeliveryCommand, HandoffCommand, ProfileCommand},
    error::CliError,
    exit::Exit,
    output,
    place::Place,
};

/// Runs the command `cli` names.
pub(crate) async fn dispatch(cli: Cli) -> Result<Exit, CliError> {
    let place = Place::new(cli.checkout, cli.store, cli.json)?;
    match cli.command {
        Command::Verify { commands, profile } => {
            verify::verify(&place, profile.profile.as_deref(), &commands).await
        }
        Command::Status { profile } => verify::status(&place, profile.profile.as_deref()).await,
        Command::Run(args) => run::start(&place, &args).await,
        Command::Resume {
            run,
            no_interactive,
            phases,
        } => run::resume(&place, &run, no_interactive, &phases).await,
        Command::Inbox => inbox::inbox(&place),
        Command::Handoff(HandoffCommand::Show { run }) => show::handoff(&place, &run),
        Command::Handoff(HandoffCommand::Decide {
            run,
            action,
            text,
            handoff,
        }) => decide::handoff(&place, &run, action, text.as_deref(), handoff),
        Command::Handoff(HandoffCommand::Advise { run }) => show::advice(&place, &run).await,
        Command::Delivery(DeliveryCommand::Show { run }) => show::gate(&place, &run),
        Command::Delivery(DeliveryCommand::Decide {
            run,
            action,
            message,
            note,
        }) => decide::delivery(&place, &run, action, message, note),
        Command::Plan(cmd) => decide::plan(&place, cmd),
        Command::Intake {
            run,
            action,
            message,
        } => decide::intake(&place, &run, action, message),
        Command::Mcp => crate::mcp::serve(place).await,
        Command::Init { force } => init::init(&place, force),
        Command::Profile(ProfileCommand::Show { name }) => init::show(&place, name.as_deref()),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "orcho", &mut out);
            output::out(String::from_utf8_lossy(&out).trim_end());
            Ok(Exit::Ok)
        }
    }
}
