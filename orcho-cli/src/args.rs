//! The command line: arguments, and the commands that are one call each.

use std::sync::Arc;

use camino::{Utf8Path, Utf8PathBuf};
use clap::{Args, CommandFactory, Parser, Subcommand};
use orcho::{
    RunPlan,
    core::{HandoffId, RunId},
    gates::GateRegistry,
    handoff::{
        DecidedBy, DecisionRequest, DeliveryAction, DeliveryChoice, HandoffAction, HandoffChoice,
        IntakeAction, IntakeChoice, supervision::Answer,
    },
    profile::Profile,
    receipts::{CommandName, ReceiptStatus, ReceiptStore, Verifier},
};
use serde_json::json;

use super::{BoxError, Exit, drive, show};

/// Proven readiness for coding-agent runs, from the command line.
///
/// Verification receipts prove that declared commands ran against this exact
/// checkout; runs pass quality gates after each phase and pause at typed
/// decision points (handoffs, plan approval, delivery) that you decide here
/// or at a prompt.
#[derive(Debug, Parser)]
#[command(name = "orcho", version, propagate_version = true)]
#[command(after_help = "Exit codes: 0 success, 1 error, 2 usage, 3 not ready, \
4 paused awaiting a decision, 5 halted, 6 a different decision was recorded first.")]
pub(crate) struct Cli {
    /// The checkout to work on [default: the current directory]
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) checkout: Option<Utf8PathBuf>,
    /// The store directory [default: .orcho in the checkout]
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) store: Option<Utf8PathBuf>,
    /// Print one JSON document on standard output instead of text
    #[arg(long, global = true)]
    pub(crate) json: bool,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run declared verification commands and write their receipts
    Verify {
        /// The commands to run [default: the required ones]
        #[arg(value_name = "COMMAND")]
        commands: Vec<String>,
        #[command(flatten)]
        profile: ProfileArg,
    },
    /// Classify the receipts of this checkout; exit 0 only when every
    /// required receipt is present (3 when not ready)
    Status {
        #[command(flatten)]
        profile: ProfileArg,
    },
    /// Start a run and drive it: phases run the commands given with
    /// `--phase`, decisions are asked at a prompt (or the run pauses)
    Run(RunArgs),
    /// Continue a run: act on recorded decisions and drive it on
    Resume {
        /// The run
        run: RunId,
        /// Never prompt: stop with exit code 4 at an undecided decision point
        #[arg(long)]
        no_interactive: bool,
    },
    /// List the runs waiting for a decision, newest first
    Inbox,
    /// Show, decide or get advice on a run's phase handoff
    #[command(subcommand)]
    Handoff(HandoffCommand),
    /// Show or decide a run's delivery gate
    #[command(subcommand)]
    Delivery(DeliveryCommand),
    /// Decide a plan that waits for approval
    #[command(subcommand)]
    Plan(PlanCommand),
    /// Decide a run's pre-run intake question
    Intake {
        /// The run
        run: RunId,
        /// include, exclude, commit or halt
        action: IntakeAction,
        /// The commit message (`commit` only)
        #[arg(long)]
        message: Option<String>,
    },
    /// Serve the run's decision points as MCP tools over stdio (for agent
    /// clients)
    Mcp,
    /// Print shell completions
    Completions {
        /// The shell
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Args)]
pub(crate) struct ProfileArg {
    /// The profile: a YAML file or `builtin:<name>` [default: ./orcho.yaml
    /// when it exists, else builtin:default]
    #[arg(long, value_name = "PROFILE")]
    pub(crate) profile: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub(crate) profile: ProfileArg,
    /// The command a phase runs, as `PHASE=COMMAND` (split on whitespace;
    /// exit 0 approves, anything else rejects). Phases without one are
    /// approved.
    #[arg(long = "phase", value_name = "PHASE=COMMAND")]
    pub(crate) phases: Vec<String>,
    /// Work in the checkout itself (no worktree, no intake, no delivery)
    #[arg(long)]
    pub(crate) in_place: bool,
    /// Never prompt: stop with exit code 4 at an undecided decision point
    #[arg(long)]
    pub(crate) no_interactive: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum HandoffCommand {
    /// Show the run's open handoff (or the last one)
    Show {
        /// The run
        run: RunId,
    },
    /// Record a decision; `orcho resume` acts on it
    Decide {
        /// The run
        run: RunId,
        /// continue, retry_feedback, continue_with_waiver or halt
        action: HandoffAction,
        /// Feedback (retry_feedback) or the waiver's reason
        /// (continue_with_waiver)
        #[arg(long)]
        text: Option<String>,
        /// The handoff [default: the run's open handoff]
        #[arg(long)]
        handoff: Option<HandoffId>,
    },
    /// Ask the advisor for a recommendation (needs a host with an advisor)
    Advise {
        /// The run
        run: RunId,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum DeliveryCommand {
    /// Show the run's delivery gate: release verdict, diff, actions
    Show {
        /// The run
        run: RunId,
    },
    /// Record the delivery decision; `orcho resume` delivers it
    Decide {
        /// The run
        run: RunId,
        /// approve, apply, fix, skip or halt
        action: DeliveryAction,
        /// The commit message (`approve` only)
        #[arg(long)]
        message: Option<String>,
        /// A note for the record (and for the follow-up after `fix`)
        #[arg(long)]
        note: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum PlanCommand {
    /// Approve the plan
    Approve {
        /// The run
        run: RunId,
        /// Notes for the next phase
        #[arg(long)]
        feedback: Option<String>,
    },
    /// Send the plan back to the planner
    RequestChanges {
        /// The run
        run: RunId,
        /// What to change
        #[arg(long)]
        feedback: String,
    },
    /// Reject the plan: the run halts
    Reject {
        /// The run
        run: RunId,
        /// Why
        #[arg(long)]
        feedback: Option<String>,
    },
}

/// Where the command works.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    pub(crate) checkout: Utf8PathBuf,
    pub(crate) store: Utf8PathBuf,
    pub(crate) json: bool,
}

pub(crate) async fn dispatch(cli: Cli) -> Result<Exit, BoxError> {
    let checkout = match cli.checkout {
        Some(c) => c,
        None => Utf8PathBuf::try_from(std::env::current_dir()?)?,
    };
    let store = cli.store.unwrap_or_else(|| checkout.join(".orcho"));
    let place = Place {
        checkout,
        store,
        json: cli.json,
    };
    match cli.command {
        Command::Verify { commands, profile } => verify(&place, &profile, &commands).await,
        Command::Status { profile } => status(&place, &profile).await,
        Command::Run(args) => drive::start(&place, &args).await,
        Command::Resume {
            run,
            no_interactive,
        } => drive::resume(&place, &run, no_interactive).await,
        Command::Inbox => inbox(&place),
        Command::Handoff(cmd) => handoff(&place, cmd).await,
        Command::Delivery(cmd) => delivery(&place, cmd),
        Command::Plan(cmd) => plan(&place, cmd),
        Command::Intake {
            run,
            action,
            message,
        } => {
            let choice = IntakeChoice::from_parts(action, message)?;
            let engine = drive::engine_for(&place, Some(&run))?;
            engine.decide_intake(&run, DecisionRequest::new(choice, DecidedBy::Operator))?;
            decided(&place, &run, "intake", action.as_str())
        }
        Command::Mcp => super::mcp::serve(place).await,
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "orcho", &mut out);
            show::out(String::from_utf8_lossy(&out).trim_end());
            Ok(Exit::Ok)
        }
    }
}

/// Loads `--profile` (a file or `builtin:<name>`), or `./orcho.yaml`, or
/// the `default` built-in.
pub(crate) fn load_profile(
    place: &Place,
    profile: Option<&str>,
) -> Result<(String, RunPlan), BoxError> {
    let spec = match profile {
        Some(p) => p.to_owned(),
        None if place.checkout.join("orcho.yaml").is_file() => {
            place.checkout.join("orcho.yaml").to_string()
        }
        None => "builtin:default".to_owned(),
    };
    let parsed = match spec.strip_prefix("builtin:") {
        Some(name) => Profile::builtin(name)?,
        None => Profile::load(absolute(&place.checkout, Utf8Path::new(&spec)))?,
    };
    let resolved = parsed.resolve(&GateRegistry::with_builtins())?;
    let spec = match spec.strip_prefix("builtin:") {
        Some(_) => spec,
        None => absolute(&place.checkout, Utf8Path::new(&spec)).to_string(),
    };
    Ok((spec, RunPlan::from_profile(&resolved)))
}

fn absolute(base: &Utf8Path, path: &Utf8Path) -> Utf8PathBuf {
    if path.is_absolute() {
        path.to_owned()
    } else {
        base.join(path)
    }
}

fn verifier(place: &Place, profile: &ProfileArg) -> Result<Arc<Verifier>, BoxError> {
    let (name, plan) = load_profile(place, profile.profile.as_deref())?;
    let contract = plan
        .verification
        .ok_or_else(|| format!("the profile `{name}` declares no verification commands"))?;
    let verifier = Verifier::new(contract, &place.checkout, ReceiptStore::new(&place.store))?;
    Ok(Arc::new(verifier))
}

async fn verify(
    place: &Place,
    profile: &ProfileArg,
    commands: &[String],
) -> Result<Exit, BoxError> {
    let verifier = verifier(place, profile)?;
    let names: Vec<CommandName> = if commands.is_empty() {
        verifier.contract().required.clone()
    } else {
        commands
            .iter()
            .map(|c| c.parse::<CommandName>())
            .collect::<Result<_, _>>()?
    };
    let mut results = Vec::new();
    let mut all_passed = true;
    for name in names {
        if !place.json {
            show::err(&format!("running `{name}` …"));
        }
        let v = Arc::clone(&verifier);
        let command = name.clone();
        let receipt = tokio::task::spawn_blocking(move || v.run_command(&command, None)).await??;
        let passed = receipt.passed();
        all_passed &= passed;
        if !place.json {
            show::out(&format!(
                "{} `{name}` {} in {:.1}s",
                if passed { "✓" } else { "✗" },
                receipt.exit,
                receipt.duration.as_secs_f64()
            ));
        }
        results.push(json!({
            "command": name.as_str(),
            "passed": passed,
            "exit": receipt.exit.to_string(),
            "duration_ms": u64::try_from(receipt.duration.as_millis()).unwrap_or(u64::MAX),
        }));
    }
    if place.json {
        show::out(&json!({ "passed": all_passed, "commands": results }).to_string());
    }
    Ok(if all_passed { Exit::Ok } else { Exit::NotReady })
}

async fn status(place: &Place, profile: &ProfileArg) -> Result<Exit, BoxError> {
    let verifier = verifier(place, profile)?;
    let v = Arc::clone(&verifier);
    let summary = tokio::task::spawn_blocking(move || v.readiness()).await??;
    let ready = summary
        .required
        .iter()
        .all(|r| r.status == ReceiptStatus::Present);
    if place.json {
        let mut doc: serde_json::Value = serde_json::from_str(&summary.to_json())?;
        if let Some(map) = doc.as_object_mut() {
            map.insert("ready".to_owned(), json!(ready));
        }
        show::out(&doc.to_string());
    } else {
        show::out(&show::readiness_table(&summary));
        show::out(if ready {
            "ready: every required receipt is present"
        } else {
            "not ready: run `orcho verify` for the commands above that are not present"
        });
    }
    Ok(if ready { Exit::Ok } else { Exit::NotReady })
}

fn inbox(place: &Place) -> Result<Exit, BoxError> {
    let engine = drive::engine_for(place, None)?;
    let inbox = engine.inbox()?;
    if place.json {
        show::out(&show::inbox_json(&inbox, "run").to_string());
    } else if inbox.is_empty() {
        show::out("no run is waiting for a decision");
    } else {
        for p in inbox.pending() {
            show::out(&format!(
                "{}  {}  {}  actions: {}  next: {}",
                p.run(),
                p.phase(),
                p.trigger(),
                p.available_actions().join(", "),
                p.next_step()
            ));
        }
        for d in inbox.degraded() {
            show::out(&format!("unreadable run {}: {}", d.dir(), d.reason()));
        }
    }
    Ok(Exit::Ok)
}

async fn handoff(place: &Place, cmd: HandoffCommand) -> Result<Exit, BoxError> {
    match cmd {
        HandoffCommand::Show { run } => {
            let engine = drive::engine_for(place, Some(&run))?;
            let handoffs = engine.handoffs().handoffs(&run)?;
            let Some(last) = handoffs.last() else {
                return Err(format!("run `{run}` has no handoff").into());
            };
            let decision = engine.handoffs().recorded_decision(&run, last.id())?;
            let decided = decision.as_ref().map(|d| d.decision().payload().clone());
            if place.json {
                show::out(&show::handoff_json(last, decided.as_ref()).to_string());
            } else {
                show::out(&show::handoff_text(last, decided.as_ref()));
            }
            Ok(Exit::Ok)
        }
        HandoffCommand::Decide {
            run,
            action,
            text,
            handoff,
        } => {
            let engine = drive::engine_for(place, Some(&run))?;
            let handoff = match handoff {
                Some(h) => h,
                None => engine
                    .runs()
                    .read(&run)?
                    .handoff()
                    .cloned()
                    .ok_or_else(|| format!("run `{run}` is not paused at a handoff"))?,
            };
            let choice = HandoffChoice::new(action, text.as_deref())?;
            engine.decide(
                &run,
                &handoff,
                DecisionRequest::new(choice, DecidedBy::Operator),
            )?;
            decided(place, &run, "handoff", action.as_str())
        }
        HandoffCommand::Advise { run } => {
            let engine = drive::engine_for(place, Some(&run))?;
            let handoff = engine
                .runs()
                .read(&run)?
                .handoff()
                .cloned()
                .ok_or_else(|| format!("run `{run}` is not paused at a handoff"))?;
            let advice = engine.advise(&run, &handoff).await?;
            show::out(&format!("{advice:?}"));
            Ok(Exit::Ok)
        }
    }
}

fn delivery(place: &Place, cmd: DeliveryCommand) -> Result<Exit, BoxError> {
    match cmd {
        DeliveryCommand::Show { run } => {
            let engine = drive::engine_for(place, Some(&run))?;
            let gate = engine.delivery_gate(&run)?;
            if place.json {
                show::out(&show::gate_json(&gate).to_string());
            } else {
                show::out(&show::gate_text(&gate));
            }
            Ok(Exit::Ok)
        }
        DeliveryCommand::Decide {
            run,
            action,
            message,
            note,
        } => {
            let engine = drive::engine_for(place, Some(&run))?;
            let choice = DeliveryChoice::from_parts(action, message, note)?;
            engine.decide_delivery(&run, DecisionRequest::new(choice, DecidedBy::Operator))?;
            decided(place, &run, "delivery", action.as_str())
        }
    }
}

fn plan(place: &Place, cmd: PlanCommand) -> Result<Exit, BoxError> {
    let (run, label, feedback) = match cmd {
        PlanCommand::Approve { run, feedback } => (run, "Approve", feedback),
        PlanCommand::RequestChanges { run, feedback } => (run, "Request Changes", Some(feedback)),
        PlanCommand::Reject { run, feedback } => (run, "Reject", feedback),
    };
    let engine = drive::engine_for(place, Some(&run))?;
    let state = engine.runs().read(&run)?;
    let touchpoint = state
        .touchpoint()
        .cloned()
        .filter(|_| state.status() == orcho::core::RunStatus::AwaitingPlanApproval)
        .ok_or_else(|| format!("run `{run}` has no plan waiting for approval"))?;
    let context = feedback.map_or_else(Answer::none, Answer::text);
    engine.answer(
        &run,
        &touchpoint,
        vec![Answer::select(label), context],
        DecidedBy::Operator,
    )?;
    decided(place, &run, "plan", label)
}

fn decided(place: &Place, run: &RunId, point: &str, action: &str) -> Result<Exit, BoxError> {
    if place.json {
        show::out(
            &json!({ "run": run.as_str(), "point": point, "decision": action, "recorded": true })
                .to_string(),
        );
    } else {
        show::out(&format!(
            "recorded `{action}` on the {point} of run {run}; `orcho resume {run}` acts on it"
        ));
    }
    Ok(Exit::Ok)
}
