//! The command line's arguments.

use camino::Utf8PathBuf;
use clap::{Args, Parser, Subcommand};
use orcho::{
    core::HandoffId,
    handoff::{DeliveryAction, HandoffAction, IntakeAction},
};

/// Proven readiness for coding-agent runs, from the command line.
///
/// Verification receipts prove that declared commands ran against this exact
/// checkout; runs pass quality gates after each phase and pause at typed
/// decision points (handoffs, plan approval, delivery) that you decide here
/// or at a prompt.
#[derive(Debug, Parser)]
#[command(name = "orcho", version, propagate_version = true)]
#[command(after_help = "Exit codes: 0 success, 1 error, 2 usage, 3 not ready, \
4 paused awaiting a decision, 5 halted, 6 a different decision was recorded first, \
7 ask and 8 deny (`permissions check`), 130 interrupted.")]
pub(crate) struct Cli {
    /// The checkout to work on [default: the nearest directory upwards with
    /// an orcho.yaml, up to the repository's root; else the root]
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) checkout: Option<Utf8PathBuf>,
    /// The store: a directory [default: .orcho in the checkout], or a
    /// PostgreSQL URL a team shares (postgres://USER:PASSWORD@HOST/DATABASE)
    #[arg(
        long,
        global = true,
        value_name = "DIR|URL",
        env = "ORCHO_STORE",
        hide_env_values = true
    )]
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
        /// Then attach signed attestations of the receipts to HEAD as a git
        /// note (the checkout must be clean; `orcho key generate` makes the
        /// key, which must not be in the environment: in CI, `orcho attest
        /// sign` signs in a step of its own)
        #[arg(long)]
        attest: bool,
        #[command(flatten)]
        base: BaseArg,
    },
    /// Classify the receipts of this checkout; exit 0 only when every
    /// required receipt is present (3 when not ready)
    Status {
        #[command(flatten)]
        profile: ProfileArg,
        /// Classify from the attestations in the commit's notes instead of
        /// receipts on disk (no store or key needed; the profile and the
        /// trusted keys are the commit's)
        #[arg(long, value_name = "REV")]
        commit: Option<String>,
        /// Acknowledge the agent stops let through unproven: they are no
        /// longer shown (they are kept in the store's acknowledged log)
        #[arg(long, conflicts_with = "commit")]
        ack_stops: bool,
        /// Acknowledge what this change does to weaken its own proof (a
        /// test skipped or deleted, fewer assertions, the runner's
        /// configuration, `orcho.yaml`), as shown now: a person has
        /// reviewed it, and it no longer holds the checkout back
        #[arg(long, conflicts_with = "commit")]
        ack_weakening: bool,
        #[command(flatten)]
        base: BaseArg,
    },
    /// Run a command in the declared environment and log it as exploratory:
    /// counted in the readiness summary, never a receipt; exits with the
    /// command's code
    Exec {
        /// The declared environment to run in [default: the one a command
        /// without `environment:` runs in]
        #[arg(long, value_name = "ENV")]
        env: Option<String>,
        #[command(flatten)]
        profile: ProfileArg,
        /// The command and its arguments (after `--` when they start with
        /// `-`)
        #[arg(
            required = true,
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "COMMAND"
        )]
        command: Vec<String>,
    },
    /// Start a run and drive it: phases run the commands given with
    /// `--phase`, decisions are asked at a prompt (or the run pauses)
    Run(RunArgs),
    /// Continue a run: act on recorded decisions and drive it on
    Resume {
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref)]
        run: String,
        /// Never prompt: stop with exit code 4 at an undecided decision point
        #[arg(long)]
        no_interactive: bool,
        /// At an undecided decision point, wait until it is decided (from
        /// another terminal, or from any machine sharing the store), then
        /// go on
        #[arg(long)]
        wait: bool,
        /// At a paused handoff with nobody to ask, let the CI autopilot try
        /// (see `orcho run --autopilot`)
        #[arg(long)]
        autopilot: bool,
        /// The command a phase runs from now on, as `PHASE=COMMAND`, in place
        /// of the one the run was started with (for this resume)
        #[arg(long = "phase", value_name = "PHASE=COMMAND")]
        phases: Vec<String>,
    },
    /// List the runs waiting for a decision, newest first (with a shared
    /// store: every machine's and checkout's)
    Inbox {
        /// Only runs started from this machine and checkout
        #[arg(long)]
        mine: bool,
        /// Only runs of checkouts whose repository (its `origin` remote) or
        /// path contains REPO
        #[arg(long, value_name = "REPO")]
        repo: Option<String>,
        /// Only decision points of one kind: intake, planner_questions,
        /// plan_approval, handoff, deviation, delivery (stopped runs are
        /// left out)
        #[arg(long, value_name = "KIND", value_parser = point_kind)]
        kind: Option<orcho::point::PointKind>,
        /// Only what has waited at least this long (`30m`, `2h`, `1d`)
        #[arg(long, value_name = "AGE", value_parser = age)]
        older_than: Option<std::time::Duration>,
        /// Only what has waited at most this long (`30m`, `2h`, `1d`)
        #[arg(long, value_name = "AGE", value_parser = age)]
        newer_than: Option<std::time::Duration>,
        /// Show this page only (from 1), of `--per-page` entries
        #[arg(long, value_name = "N")]
        page: Option<usize>,
        /// How many entries a page holds [default: 50]
        #[arg(long, value_name = "N", requires = "page")]
        per_page: Option<usize>,
    },
    /// List this checkout's runs, newest first, with where each stands
    Runs {
        /// On a shared store: every machine's and checkout's runs, each
        /// with where it was started
        #[arg(long)]
        team: bool,
    },
    /// A run's history: one line per transition, in order
    Log {
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref)]
        run: String,
    },
    /// A run's evidence: phases, gates, decisions, receipts, delivery
    /// (`--json`: the whole bundle)
    Evidence {
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref)]
        run: String,
    },
    /// End a run where it stands (at a decision point, or paused), recorded
    /// as cancelled
    Cancel {
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref)]
        run: String,
        /// Why, for the record
        #[arg(long, default_value = "no reason given")]
        reason: String,
    },
    /// Remove what ended runs no longer need: their worktrees, their intake
    /// seed patches, and receipt logs no latest receipt names. Runs that are
    /// not over are never touched
    Gc {
        /// Keep receipt logs younger than this many days
        #[arg(long, value_name = "DAYS", default_value_t = 14)]
        keep_logs: u32,
        /// Say what would be removed, and remove nothing
        #[arg(long)]
        dry_run: bool,
    },
    /// Show, decide or get advice on a run's phase handoff
    #[command(subcommand)]
    Handoff(HandoffCommand),
    /// Show or decide a run's delivery gate
    #[command(subcommand)]
    Delivery(DeliveryCommand),
    /// Decide a plan that waits for approval
    #[command(subcommand)]
    Plan(PlanCommand),
    /// Answer the questions a run's planner asked: one `--answer` per
    /// question, in order (an option's label or number, several
    /// comma-separated where the question allows it, or your own words)
    Answer {
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref)]
        run: String,
        /// The answer to the next question
        #[arg(long = "answer", value_name = "ANSWER")]
        answers: Vec<String>,
    },
    /// Decide a step that failed: retry it, go back to the planner, or stop
    Deviation {
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref)]
        run: String,
        /// retry, replan or stop
        action: DeviationArg,
        /// Guidance for the retry, or a note for the record
        #[arg(long)]
        note: Option<String>,
    },
    /// Show or decide a run's pre-run intake question (`orcho intake RUN
    /// [ACTION]`, or `orcho intake show|decide …` as its siblings say it)
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Intake {
        #[command(subcommand)]
        command: Option<IntakeCommand>,
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref, required = true)]
        run: Option<String>,
        /// include, exclude, commit or halt; without it, the question is
        /// shown
        action: Option<IntakeAction>,
        /// The commit message (`commit` only)
        #[arg(long)]
        message: Option<String>,
    },
    /// Show the decision point a run waits at, whatever its kind, with what
    /// each action does; with ACTION, decide it (`orcho resume` acts on it)
    Decide {
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref)]
        run: String,
        /// The action, by its name (`orcho decide RUN` lists them)
        action: Option<String>,
        /// The action's note, where it takes one: feedback, a reason,
        /// guidance (planner questions: one answer per line)
        #[arg(long, value_name = "TEXT")]
        note: Option<String>,
        /// The id of the point the decision is about: refused when the run
        /// waits at another one
        #[arg(long, value_name = "ID")]
        point: Option<String>,
        /// The digest the decision is pinned to (`pinned` of the point, a
        /// plan's or a patch's): refused when it changed
        #[arg(long, value_name = "DIGEST")]
        digest: Option<String>,
    },
    /// Serve the run's decision points as MCP tools over stdio (for agent
    /// clients)
    Mcp,
    /// Write a starter orcho.yaml for this project and make git ignore the
    /// store; with `--agent`, add orcho's hooks to that agent's project
    /// settings
    Init {
        /// Replace an orcho.yaml that exists
        #[arg(long)]
        force: bool,
        /// Add `orcho hook` to this agent's project settings, keeping what
        /// is there (each agent's file is listed with its name below)
        #[arg(long, value_name = "AGENT", value_parser = agent_parser())]
        agent: Option<crate::hook::Agent>,
        /// Show what would change, and change nothing
        #[arg(long)]
        dry_run: bool,
    },
    /// Answer a coding agent's hook: the JSON document the agent passes on
    /// standard input (before a tool runs, when it wants to stop, after a
    /// shell command, at session start); `orcho init --agent` installs it
    Hook {
        /// The agent whose hook document and answer format to use
        #[arg(value_parser = agent_parser())]
        agent: crate::hook::Agent,
        #[command(flatten)]
        profile: ProfileArg,
        /// Check tool calls against this preset instead of the profile's
        /// `permissions`
        #[arg(long, value_name = "PRESET")]
        permissions: Option<PresetArg>,
        /// Given by Orcho to the hooks of an agent it runs, which it gives
        /// this long and a minute more: a tool call the rules answer `ask`
        /// waits for a person at most SECS, then is denied. Without it, an
        /// `ask` is refused at once (an agent's own hooks may be given
        /// less time, and a hook cut short lets the call through)
        #[arg(long, value_name = "SECS")]
        ask_wait: Option<u64>,
        /// Given by Orcho to an agent it drives (opencode, whose stop a
        /// plugin cannot refuse): run the program after `--` with the
        /// prompt in FILE, then, while its session may not stop, again in
        /// the same session with the reason
        #[arg(long, value_name = "FILE", hide = true, requires = "program")]
        drive: Option<Utf8PathBuf>,
        /// With `--drive`: ask the Stop guard after each round
        #[arg(long, hide = true, requires = "drive")]
        guard_stops: bool,
        /// With `--drive`: the program and its arguments
        #[arg(last = true, hide = true, value_name = "PROGRAM")]
        program: Vec<String>,
    },
    /// Evaluate permission rules; decide an agent's permission question
    #[command(subcommand, visible_alias = "permission")]
    Permissions(PermissionsCommand),
    /// Show a profile
    #[command(subcommand)]
    Profile(ProfileCommand),
    /// Inside a phase: write its output document (`ORCHO_OUTPUT`), checked
    /// against `orcho schema phase-output` first
    Report {
        /// The document, as JSON [default: read from standard input]
        #[arg(value_name = "DOCUMENT", conflicts_with = "file")]
        document: Option<String>,
        /// Read the document from FILE (`-`: standard input)
        #[arg(long, value_name = "FILE")]
        file: Option<String>,
    },
    /// Print the JSON Schema of a document orcho reads
    Schema {
        /// `phase-output`: what a phase command writes to `ORCHO_OUTPUT`;
        /// `phase-input`: what it is given in `ORCHO_INPUT`
        document: SchemaDocument,
    },
    /// Serve the inbox and every run as web pages and a JSON API, to look
    /// and decide from a browser (docs/web.md)
    Serve {
        #[command(subcommand)]
        command: Option<ServeCommand>,
        /// The address to listen on
        #[arg(
            long,
            value_name = "ADDR",
            default_value = "127.0.0.1:8470",
            global = true
        )]
        listen: std::net::SocketAddr,
        /// Serve plain HTTP on an address other machines can reach (rather
        /// put a reverse proxy with TLS in front of 127.0.0.1)
        #[arg(long)]
        insecure_listen: bool,
    },
    /// The store itself: its schema, and runs moved in and out of it
    #[command(subcommand)]
    Store(StoreCommand),
    /// Where the store's events are sent: a webhook told when a run waits
    /// for a decision, a point is decided, a run ends or proof fails
    #[command(subcommand)]
    Notify(NotifyCommand),
    /// This machine's key for signing attestations
    #[command(subcommand)]
    Key(KeyCommand),
    /// Share attestations: push or fetch the notes that hold them
    #[command(subcommand)]
    Attest(AttestCommand),
    /// Print shell completions
    Completions {
        /// The shell
        shell: clap_complete::Shell,
    },
}

/// What to do about a step that failed.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum DeviationArg {
    /// Try the step again (offered until the step's retry cap)
    Retry,
    /// Go back to the planner to revise the approach
    Replan,
    /// Stop the run
    Stop,
}

/// A named permission rule set.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum PresetArg {
    /// Reading and a list of read-only commands allowed, every write denied
    #[value(alias = "read_only")]
    ReadOnly,
}

impl From<PresetArg> for orcho::permissions::PermissionPreset {
    fn from(arg: PresetArg) -> Self {
        match arg {
            PresetArg::ReadOnly => Self::ReadOnly,
        }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum PermissionsCommand {
    /// Allow or deny what an agent of a running phase asked (a tool call
    /// the rules answer `ask`): its hook waits for this, and answers the
    /// agent. `orcho inbox` lists the questions
    Decide {
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref)]
        run: String,
        /// `allow` or `deny`
        action: AskActionArg,
        /// A note: for `deny`, what the agent reads (what to do instead)
        #[arg(long, value_name = "TEXT")]
        note: Option<String>,
        /// The question (`ask-0001`) [default: the run's oldest open one]
        #[arg(long, value_name = "ID")]
        id: Option<HandoffId>,
    },
    /// Say whether the rules allow, ask about or deny one request, and
    /// which rule decided: exit 0 allow, 7 ask, 8 deny
    #[command(group = clap::ArgGroup::new("request").required(true))]
    Check {
        #[command(flatten)]
        profile: ProfileArg,
        /// Check against this preset instead of the profile's `permissions`
        #[arg(long, value_name = "PRESET")]
        permissions: Option<PresetArg>,
        /// Writing this file
        #[arg(long, value_name = "PATH", group = "request")]
        write: Option<Utf8PathBuf>,
        /// Editing this file
        #[arg(long, value_name = "PATH", group = "request")]
        edit: Option<Utf8PathBuf>,
        /// Reading this file
        #[arg(long, value_name = "PATH", group = "request")]
        read: Option<Utf8PathBuf>,
        /// Another tool by name (an MCP tool's `mcp__server__tool`), with
        /// its argument
        #[arg(long, value_names = ["NAME", "ARGUMENT"], num_args = 1..=2, group = "request")]
        tool: Option<Vec<String>>,
        /// A shell command line, as one word or as its words (after `--`
        /// when they start with `-`)
        #[arg(trailing_var_arg = true, value_name = "COMMAND", group = "request")]
        command: Vec<String>,
    },
}

/// A document whose JSON Schema `orcho schema` prints.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum SchemaDocument {
    /// What a phase command writes to `ORCHO_OUTPUT`
    PhaseOutput,
    /// What a phase command is given in `ORCHO_INPUT`
    PhaseInput,
    /// What a notifier's webhook is sent (`orcho notify`)
    Notification,
}

/// The protected branch a change is judged by.
#[derive(Debug, Args)]
pub(crate) struct BaseArg {
    /// Judge by the profile at REF, the protected branch a change is to be
    /// merged into (`main`, `origin/main`): its trusted keys, required
    /// commands, declarations and environments, never the change's own
    #[arg(long, value_name = "REF", env = "ORCHO_BASE")]
    pub(crate) base: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ProfileArg {
    /// The profile: a YAML file or `builtin:<name>` [default: the
    /// checkout's orcho.yaml, else builtin:default]
    #[arg(long, value_name = "PROFILE", env = "ORCHO_PROFILE")]
    pub(crate) profile: Option<String>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ProfileCommand {
    /// Print a profile as the engine runs it: merged with what it extends,
    /// with every default filled in
    Show {
        /// A YAML file or `builtin:<name>` [default: the profile in use]
        #[arg(value_name = "PROFILE", env = "ORCHO_PROFILE")]
        name: Option<String>,
    },
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub(crate) profile: ProfileArg,
    /// The command a phase runs, as `PHASE=COMMAND`: split into words as a
    /// shell would (quotes, escapes) but never run by one; exit 0 approves,
    /// anything else rejects, and the JSON it writes to `$ORCHO_OUTPUT` may
    /// say more (`orcho schema phase-output`). `PHASE=@claude-code` or
    /// `PHASE=@codex` runs the phase with that coding agent. Phases without
    /// one run what the profile's `runner` names, or are approved.
    #[arg(long = "phase", value_name = "PHASE=COMMAND")]
    pub(crate) phases: Vec<String>,
    /// What the run is to do: every phase receives it (`ORCHO_INPUT`,
    /// `ORCHO_INPUT_TEXT`), the run keeps it, and its first line is the
    /// subject of the delivered commit. A follow-up has its parent's unless
    /// given one
    #[arg(long, value_name = "TEXT", conflicts_with = "task_file")]
    pub(crate) task: Option<String>,
    /// The task, read from FILE (`-`: standard input)
    #[arg(long, value_name = "FILE")]
    pub(crate) task_file: Option<String>,
    /// Work in the checkout itself (no worktree, no intake, no delivery)
    #[arg(long, conflicts_with = "follow_up")]
    pub(crate) in_place: bool,
    /// Start the correction follow-up of RUN, whose delivery was decided
    /// `fix`: its profile and phase commands (`--phase` replaces one), a
    /// worktree that starts from its diff, and what it was rejected for as
    /// the phases' input
    #[arg(long, value_name = "RUN", value_parser = run_ref, conflicts_with = "profile")]
    pub(crate) follow_up: Option<String>,
    /// Never prompt: stop with exit code 4 at an undecided decision point
    #[arg(long)]
    pub(crate) no_interactive: bool,
    /// At an undecided decision point, wait until it is decided (from
    /// another terminal, or from any machine sharing the store), then go on
    #[arg(long)]
    pub(crate) wait: bool,
    /// At a paused handoff with nobody to ask, let the CI autopilot try:
    /// the advisor's advice, the safety checks, then a retry with its
    /// feedback, or a stop with the reason (also the profile's
    /// `autopilot.enabled`)
    #[arg(long)]
    pub(crate) autopilot: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum HandoffCommand {
    /// Show the run's open handoff (or the last one)
    Show {
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref)]
        run: String,
    },
    /// Record a decision; `orcho resume` acts on it
    Decide {
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref)]
        run: String,
        /// continue, retry_feedback, continue_with_waiver or halt
        action: HandoffAction,
        /// The decision's note: feedback (retry_feedback), the waiver's
        /// reason (continue_with_waiver), or why (continue, halt: kept with
        /// the decision)
        #[arg(long = "note", visible_alias = "text", value_name = "TEXT")]
        text: Option<String>,
        /// The handoff [default: the run's open handoff]
        #[arg(long)]
        handoff: Option<HandoffId>,
        /// The advice this decision follows (from `orcho handoff advise`),
        /// recorded as its provenance
        #[arg(long, value_name = "ADVICE_ID")]
        advice: Option<orcho::handoff::advisor::AdviceId>,
    },
    /// Ask the profile's advisor (`advisor:`) what to do at the run's open
    /// handoff; prints its advice and keeps it as an artifact, decides
    /// nothing
    Advise {
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref)]
        run: String,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum NotifyCommand {
    /// Add a notifier: a webhook sent each event as a signed JSON POST, or
    /// a mail address (kept in the store, so a team on a shared store
    /// shares it)
    #[command(group(clap::ArgGroup::new("target").required(true).args(["webhook", "smtp"])))]
    Add {
        /// Its name
        name: String,
        /// The URL events are POSTed to (a chat's incoming webhook shows
        /// their `text` line)
        #[arg(long, value_name = "URL")]
        webhook: Option<String>,
        /// The SMTP server events are mailed through: `smtp://HOST:PORT`
        /// (`?tls=required` for STARTTLS) or `smtps://HOST:PORT`, with
        /// `USER@` when it asks for one
        #[arg(long, value_name = "URL", requires = "to")]
        smtp: Option<String>,
        /// Who receives the mail, comma-separated
        #[arg(long, value_delimiter = ',', value_name = "ADDR")]
        to: Vec<String>,
        /// Who the mail is from [default: orcho@localhost]
        #[arg(long, value_name = "ADDR", requires = "smtp")]
        from: Option<String>,
        /// The variable that holds the SMTP server's password where events
        /// are sent from
        #[arg(long, value_name = "VAR", requires = "smtp")]
        password_env: Option<String>,
        /// The events it is told of, comma-separated [default: all]:
        /// point_opened, decided, run_ended, proof_failed
        #[arg(long, value_delimiter = ',', value_name = "EVENTS")]
        events: Vec<String>,
        /// The variable that holds the webhook's signing secret where
        /// events are sent from [default: a secret is made, printed once and
        /// kept in the store]
        #[arg(long, value_name = "VAR", requires = "webhook")]
        secret_env: Option<String>,
        /// The web inbox's address (`orcho serve`), for each event's link
        #[arg(long, value_name = "URL")]
        inbox_url: Option<String>,
    },
    /// List the notifiers
    List,
    /// Remove a notifier (what was sent to it stays in the log)
    Remove {
        /// Its name
        name: String,
    },
    /// Send a notifier a test event now, and say how it went
    Test {
        /// Its name
        name: String,
    },
    /// What was sent, to whom, and how it went, newest last
    Log {
        /// Only the last N attempts
        #[arg(long, default_value_t = 20, value_name = "N")]
        last: usize,
    },
    /// Send what is due now (started in the background after a command
    /// that opens, decides or ends something)
    Deliver {
        /// Keep delivering until Ctrl-C
        #[arg(long)]
        watch: bool,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum KeyCommand {
    /// Make a new Ed25519 signing key (mode 0600, in the user's data
    /// directory) and print the `trust:` lines that trust it
    Generate {
        /// Replace the key that exists
        #[arg(long)]
        force: bool,
    },
    /// Print the signing key's id and public key (`--json`: keyid,
    /// algorithm, public_key)
    Show,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ServeCommand {
    /// The named tokens that may look at (and decide from) the web inbox
    #[command(subcommand)]
    Token(TokenCommand),
}

#[derive(Debug, Subcommand)]
pub(crate) enum TokenCommand {
    /// Make a token for NAME and print it with its login link, once (it
    /// is kept only as a hash, in the user's data directory)
    Add {
        /// Who holds it: decisions made with it are recorded as theirs
        name: String,
        /// May look, not decide
        #[arg(long)]
        read_only: bool,
    },
    /// List the tokens (names and what they may do, never the secrets)
    List,
    /// Remove the token NAME
    Remove {
        /// The token's name
        name: String,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum StoreCommand {
    /// Bring a shared store's schema to this orcho's version (done on
    /// first use too; a newer schema is refused)
    Migrate,
    /// Write runs of the store as JSON lines, one run each (default:
    /// every run of this checkout), for `orcho store import`
    Export {
        /// The runs: ids, starts of ids, or `latest`
        runs: Vec<String>,
        /// Write to FILE instead of standard output
        #[arg(long, short, value_name = "FILE")]
        output: Option<Utf8PathBuf>,
    },
    /// Read runs that `orcho store export` wrote into this store (a run
    /// the store has already is left as it is)
    Import {
        /// The file (`-`: standard input)
        file: Utf8PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum AttestCommand {
    /// Push `refs/notes/orcho` to a remote, merging with the remote's
    /// notes when they moved on
    Push {
        /// The remote
        #[arg(default_value = "origin")]
        remote: String,
    },
    /// Fetch a remote's `refs/notes/orcho` and merge it with the notes here
    Fetch {
        /// The remote
        #[arg(default_value = "origin")]
        remote: String,
    },
    /// Sign the receipts this checkout holds for a commit and attach the
    /// attestations to it: runs no command of the repository (in CI, the
    /// step after the one that ran `orcho verify` without the key)
    Sign {
        /// The commit the receipts prove [default: HEAD]
        #[arg(long, value_name = "REV", default_value = "HEAD")]
        commit: String,
        #[command(flatten)]
        base: BaseArg,
        #[command(flatten)]
        profile: ProfileArg,
    },
    /// Say, per required command, which envelopes of a commit's notes were
    /// considered and why each did or did not count
    Explain {
        /// The commit [default: HEAD]
        #[arg(long, value_name = "REV", default_value = "HEAD")]
        commit: String,
        /// Only this command
        #[arg(value_name = "COMMAND")]
        command: Option<String>,
        #[command(flatten)]
        base: BaseArg,
        #[command(flatten)]
        profile: ProfileArg,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum IntakeCommand {
    /// Show the run's intake question: what is uncommitted in the checkout
    Show {
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref)]
        run: String,
    },
    /// Record the intake decision; `orcho resume` acts on it
    Decide {
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref)]
        run: String,
        /// include, exclude, commit or halt
        action: IntakeAction,
        /// The commit message (`commit` only)
        #[arg(long)]
        message: Option<String>,
    },
}

impl IntakeCommand {
    /// The run, the action and the message, as `orcho intake RUN [ACTION]`
    /// gives them.
    pub(crate) fn into_parts(self) -> (String, Option<IntakeAction>, Option<String>) {
        match self {
            Self::Show { run } => (run, None, None),
            Self::Decide {
                run,
                action,
                message,
            } => (run, Some(action), message),
        }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum DeliveryCommand {
    /// Show the run's delivery gate: release verdict, diff, actions
    Show {
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref)]
        run: String,
        /// Print the patch the gate would deliver (with `--json`: in the
        /// document's `patch`)
        #[arg(long)]
        diff: bool,
    },
    /// Record the delivery decision; `orcho resume` delivers it
    Decide {
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref)]
        run: String,
        /// approve, apply, fix, skip or halt
        action: DeliveryAction,
        /// The commit message (`approve` only)
        #[arg(long)]
        message: Option<String>,
        /// A note for the record (and for the follow-up after `fix`)
        #[arg(long)]
        note: Option<String>,
        /// The patch digest the decision is about (`patch_digest` of
        /// `orcho delivery show --json`): refused when the gate now holds
        /// another patch
        #[arg(long, value_name = "DIGEST")]
        patch: Option<String>,
    },
    /// Run again, in the run's worktree, the required commands whose
    /// receipts are missing or stale, then show the gate as it is now
    Rerun {
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref)]
        run: String,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum PlanCommand {
    /// Approve the plan
    Approve {
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref)]
        run: String,
        /// The decision's note: notes for the next phase
        #[arg(long = "note", visible_alias = "feedback", value_name = "TEXT")]
        feedback: Option<String>,
    },
    /// Send the plan back to the planner
    RequestChanges {
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref)]
        run: String,
        /// The decision's note: what to change
        #[arg(long = "note", visible_alias = "feedback", value_name = "TEXT")]
        feedback: String,
    },
    /// Reject the plan: the run halts
    Reject {
        /// The run: its id, the start of it, or `latest`
        #[arg(value_parser = run_ref)]
        run: String,
        /// The decision's note: why
        #[arg(long = "note", visible_alias = "feedback", value_name = "TEXT")]
        feedback: Option<String>,
    },
}

/// A run as the command line names it: `latest`, or what a run id may
/// hold (a whole id or the start of one).
fn point_kind(s: &str) -> Result<orcho::point::PointKind, String> {
    s.parse()
        .map_err(|e: orcho::point::UnknownKind| e.to_string())
}

fn age(s: &str) -> Result<std::time::Duration, String> {
    s.parse::<orcho::receipts::HumanDuration>()
        .map(orcho::receipts::HumanDuration::get)
        .map_err(|e| e.to_string())
}

fn run_ref(s: &str) -> Result<String, String> {
    if s == "latest" {
        return Ok(s.to_owned());
    }
    s.parse::<orcho::core::RunId>()
        .map(|_| s.to_owned())
        .map_err(|e| e.to_string())
}

/// The agents `orcho hook` and `orcho init --agent` take, each listed with
/// the project file its hooks go in.
fn agent_parser() -> impl clap::builder::TypedValueParser<Value = crate::hook::Agent> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser as _};
    PossibleValuesParser::new(crate::hook::Agent::ALL.map(|agent| {
        let dialect = agent.dialect();
        PossibleValue::new(agent.as_str())
            .help(format!("{} (`{}`)", dialect.title, dialect.settings))
    }))
    .try_map(|name| name.parse::<crate::hook::Agent>())
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }
}

/// What `orcho permission decide` answers.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum AskActionArg {
    /// Let the tool call run
    Allow,
    /// Refuse it; the agent reads your note
    Deny,
}

impl From<AskActionArg> for orcho::handoff::ask::AskAction {
    fn from(arg: AskActionArg) -> Self {
        match arg {
            AskActionArg::Allow => Self::Allow,
            AskActionArg::Deny => Self::Deny,
        }
    }
}
