//! Classification: what the receipts on disk prove about the checkout as it

use std::{
    collections::{BTreeMap, BTreeSet, HashMap, HashSet},
    fmt,
    sync::{
        OnceLock,
        atomic::{AtomicUsize, Ordering},
    },
};

use camino::Utf8PathBuf;
use orcho_core::{Digest, SchemaVersion};

use crate::{
    CommandName, CommandReceipt, CommandSpec, EnvName, Failure, LoadedReceipt, ReceiptStore,
    VerificationContract, store::LoadBuffers,
};

/// Classification: what the receipts on disk prove about the checkout as it
/// is now.
///
/// Each declared command gets one [`ReceiptStatus`]:
///
/// | status | meaning | next action |
/// |---|---|---|
/// | present | a verified receipt that passed and matches the current subject, dependencies, command and environment | none |
/// | missing | no receipt: it never ran; nothing failed (or it was deleted: the history says when it last ran) | re-run |
/// | failed | the receipt records a non-zero exit, a signal, a timeout, a cancellation, a spawn failure or a failed assertion | fix |
/// | vacuous | it exited 0, but its test runner reported that no test ran (and its spec does not say `allow_empty`) | fix |
/// | stale | it passed, but something it was bound to changed since (every reason is listed) | re-run |
/// | invalid | unreadable, truncated, from a newer schema, digest or MAC mismatch | investigate |
///
/// Execution evidence outranks freshness: a failed receipt is failed even if
/// it is also stale (the stale reasons are kept beside the failure). When a
/// comparison cannot be made (a dependency the receipt does not mention, an
/// environment the current state lacks), the receipt is stale: never present
/// by default.
///
/// The status of one declared command's latest receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReceiptStatus {
    /// A receipt proves it for the current checkout.
    Present,
    /// No receipt: nothing ran.
    Missing,
    /// No receipt, but the history says one was there: it was deleted.
    /// Named `missing`, as it blocks and is fixed the same way.
    Deleted {
        /// When the last receipt in the history finished, when it reads.
        last_ran: Option<orcho_core::Timestamp>,
    },
    /// The receipt records a failed execution.
    Failed {
        /// Why it failed.
        failure: Failure,
        /// Whether it is also stale, and why (informational: failed wins).
        stale: Vec<StaleReason>,
        /// The first tests its runner said failed, where it names them (at
        /// most three).
        failing: Vec<String>,
    },
    /// The receipt passed, but its test runner reported that no test ran:
    /// it proves nothing (unless the spec says `allow_empty`).
    Vacuous {
        /// The runners that reported it (`cargo test`, `pytest`, …).
        runners: Vec<String>,
    },
    /// The receipt passed, but what it was bound to changed since.
    Stale(Vec<StaleReason>),
    /// The receipt cannot be trusted.
    Invalid(InvalidReason),
}

impl ReceiptStatus {
    /// Its stale reasons, to add to (a failed receipt's too).
    pub(crate) fn stale_reasons_mut(&mut self) -> Option<&mut Vec<StaleReason>> {
        match self {
            Self::Stale(reasons) | Self::Failed { stale: reasons, .. } => Some(reasons),
            _ => None,
        }
    }

    /// The lower-case name: `present`, `missing`, `failed`, `vacuous`,
    /// `stale` or `invalid`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Present => "present",
            Self::Missing | Self::Deleted { .. } => "missing",
            Self::Failed { .. } => "failed",
            Self::Vacuous { .. } => "vacuous",
            Self::Stale(_) => "stale",
            Self::Invalid(_) => "invalid",
        }
    }

    /// Whether the receipt proves the command for the current checkout.
    pub fn is_present(&self) -> bool {
        matches!(self, Self::Present)
    }

    /// What to do about it, or `None` when present.
    pub fn next_action(&self) -> Option<NextAction> {
        match self {
            Self::Present => None,
            // The checkout changed since it failed: the change may be the
            // fix, which only running it again can tell.
            Self::Failed { stale, .. } if !stale.is_empty() => Some(NextAction::Rerun),
            // Stopped by a person (Ctrl-C) or a host before it ended: it
            // says nothing of the checkout, and only running it again does.
            Self::Failed {
                failure: Failure::Cancelled,
                ..
            } => Some(NextAction::Rerun),
            Self::Failed { .. } | Self::Vacuous { .. } => Some(NextAction::Fix),
            Self::Missing | Self::Deleted { .. } | Self::Stale(_) => Some(NextAction::Rerun),
            Self::Invalid(_) => Some(NextAction::Investigate),
        }
    }

    /// A one-line reason, for example
    /// ``stale: the subject changed; dependency `core` changed``.
    pub fn reason(&self) -> String {
        match self {
            Self::Present => "a passing receipt matches the current checkout".to_owned(),
            Self::Missing => "no receipt: it never ran".to_owned(),
            Self::Deleted { last_ran: Some(at) } => {
                format!("no receipt: it was deleted (it last ran at {at})")
            }
            Self::Deleted { last_ran: None } => "no receipt: it was deleted".to_owned(),
            Self::Failed {
                failure,
                stale,
                failing,
            } => {
                use fmt::Write as _;
                let mut said = failure.to_string();
                if !failing.is_empty() {
                    let _ = write!(
                        said,
                        " (failing: {})",
                        orcho_core::spelling::quoted(failing)
                    );
                }
                if !stale.is_empty() {
                    let _ = write!(
                        said,
                        "; and it is stale: {}",
                        stale
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join("; ")
                    );
                }
                said
            }
            Self::Vacuous { runners } if runners.is_empty() => "exit 0, but no test ran".to_owned(),
            Self::Vacuous { runners } => {
                format!(
                    "exit 0, but no test ran ({} reported none)",
                    runners.join(", ")
                )
            }
            Self::Stale(reasons) => reasons
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
            Self::Invalid(reason) => reason.to_string(),
        }
    }
}

impl fmt::Display for ReceiptStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.as_str(), self.reason())
    }
}

/// What to do about a command that is not present.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NextAction {
    /// It ran and failed: fix the code (or the environment).
    Fix,
    /// It never ran, or ran against something else: run it again.
    Rerun,
    /// Its receipt cannot be trusted: find out why.
    Investigate,
}

orcho_core::spelled!(NextAction {
    Fix => "fix",
    Rerun => "re-run",
    Investigate => "investigate",
});

/// Why a passing receipt no longer proves anything. Each carries the recorded
/// and the current value.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StaleReason {
    /// The subject's files changed since the run.
    Subject {
        /// The fingerprint the command ran against.
        recorded: Digest,
        /// The fingerprint now.
        current: Digest,
        /// The paths that changed, when both fingerprints' manifests are
        /// at hand ([`Verifier::classify`](crate::Verifier::classify)
        /// names them).
        changes: Option<crate::fingerprint::PathChanges>,
    },
    /// The command changed its own subject while it ran, so it proved
    /// nothing about either state.
    ChangedByRun {
        /// Before the run.
        before: Digest,
        /// After the run.
        after: Digest,
        /// The paths it changed, when both manifests are at hand.
        changes: Option<crate::fingerprint::PathChanges>,
    },
    /// A git submodule of the subject changed (an uncommitted edit or a new
    /// commit inside it), appeared or disappeared. Reported with
    /// [`Subject`](Self::Subject), to name where the change is.
    Submodule {
        /// Its path in the checkout.
        path: Utf8PathBuf,
        /// Its work tree's fingerprint at the run (`None`: not there).
        recorded: Option<Digest>,
        /// Its work tree's fingerprint now (`None`: gone).
        current: Option<Digest>,
    },
    /// A dependency checkout changed, appeared or disappeared.
    Dependency {
        /// The dependency.
        name: EnvName,
        /// Its fingerprint at the run (`None`: absent or not recorded).
        recorded: Option<Digest>,
        /// Its fingerprint now (`None`: absent or no longer declared).
        current: Option<Digest>,
        /// The paths inside it that changed, when both fingerprints'
        /// manifests are at hand.
        changes: Option<crate::fingerprint::PathChanges>,
    },
    /// The declared command (argv, env, environment, timeout, secret names)
    /// changed.
    CommandSpec {
        /// The spec digest at the run.
        recorded: Digest,
        /// The spec digest now.
        current: Digest,
    },
    /// The environment's declaration or a variable it binds changed, or the
    /// command now runs in another environment.
    Environment {
        /// The environment it ran in.
        recorded_name: EnvName,
        /// Its digest at the run.
        recorded: Digest,
        /// The environment it would run in now.
        current_name: EnvName,
        /// That environment's digest now (`None`: not in the current state).
        current: Option<Digest>,
        /// The variables whose values differ from the run's (empty when
        /// only the declaration changed).
        changed: Vec<String>,
    },
    /// `PATH` now finds another program for the command than it ran.
    Program {
        /// The program it ran.
        recorded: Utf8PathBuf,
        /// The program it would run now (`None`: none is found).
        current: Option<Utf8PathBuf>,
    },
    /// A file outside the subject that it ran or read changed, appeared or
    /// went (its program, an interpreter, runner configuration above the
    /// checkout, a link's target outside it).
    Bound {
        /// What changed, path by path.
        changes: Vec<crate::BoundChange>,
    },
    /// The receipt was written before receipts bound the files outside the
    /// subject (schema 6): what the command ran is not known.
    Unbound,
    /// Files of its subject were written while it ran (and may have been
    /// put back before it ended).
    WrittenDuringRun {
        /// The files, relative to the checkout.
        paths: Vec<Utf8PathBuf>,
    },
}

impl fmt::Display for StaleReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Subject {
                changes: Some(changes),
                ..
            } if !changes.is_empty() => {
                write!(f, "the subject changed since it ran: {changes}")
            }
            Self::Subject { .. } => f.write_str("the subject changed since it ran"),
            Self::ChangedByRun {
                changes: Some(changes),
                ..
            } if !changes.is_empty() => {
                write!(f, "it changed its own subject while running: {changes}")
            }
            Self::ChangedByRun { .. } => f.write_str("it changed its own subject while running"),
            Self::Submodule {
                path,
                recorded: None,
                ..
            } => write!(f, "submodule `{path}` appeared"),
            Self::Submodule {
                path,
                current: None,
                ..
            } => write!(f, "submodule `{path}` is gone"),
            Self::Submodule { path, .. } => write!(
                f,
                "submodule `{path}` changed (an uncommitted edit or a new commit inside it)"
            ),
            Self::Dependency {
                name,
                recorded,
                current,
                changes,
            } => match (recorded, current) {
                (Some(_), None) => write!(f, "dependency `{name}` is gone"),
                (None, Some(_)) => write!(f, "dependency `{name}` appeared"),
                _ => match changes {
                    Some(changes) if !changes.is_empty() => {
                        write!(f, "dependency `{name}` changed: {changes}")
                    }
                    _ => write!(f, "dependency `{name}` changed"),
                },
            },
            Self::CommandSpec { .. } => f.write_str("the declared command changed"),
            Self::Environment {
                recorded_name,
                current_name,
                ..
            } if recorded_name != current_name => write!(
                f,
                "it ran in environment `{recorded_name}`, but is declared in `{current_name}`"
            ),
            Self::Environment {
                recorded_name,
                changed,
                ..
            } if changed.is_empty() => write!(f, "environment `{recorded_name}` changed"),
            Self::Environment {
                recorded_name,
                changed,
                ..
            } => write!(
                f,
                "environment `{recorded_name}` changed: {} changed",
                orcho_core::spelling::quoted(changed)
            ),
            Self::Bound { changes } => {
                let shown: Vec<String> = changes.iter().take(3).map(ToString::to_string).collect();
                let more = changes.len().saturating_sub(3);
                write!(f, "what it ran changed: {}", shown.join(", "))?;
                if more > 0 {
                    write!(f, " and {more} more")?;
                }
                Ok(())
            }
            Self::Unbound => f.write_str(
                "it was recorded before receipts bound the program and the files it reads \
                 outside the checkout: run it again",
            ),
            Self::WrittenDuringRun { paths } => {
                let shown: Vec<String> = paths.iter().take(3).map(|p| format!("`{p}`")).collect();
                let more = paths.len().saturating_sub(3);
                write!(
                    f,
                    "it wrote files it is bound to while it ran: {}",
                    shown.join(", ")
                )?;
                if more > 0 {
                    write!(f, " and {more} more")?;
                }
                Ok(())
            }
            Self::Program {
                recorded,
                current: Some(current),
            } => write!(f, "`PATH` now finds `{current}`, not `{recorded}`"),
            Self::Program {
                recorded,
                current: None,
            } => {
                write!(f, "`PATH` no longer finds `{recorded}`")
            }
        }
    }
}

/// Why a receipt cannot be trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InvalidReason {
    /// The file exists but cannot be read.
    Unreadable {
        /// The I/O error kind.
        message: String,
    },
    /// The file is not valid JSON for a receipt (for example truncated).
    Malformed {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// The file has no `schema` field.
    MissingSchema,
    /// A newer Orcho wrote it; this build does not read it.
    TooNew {
        /// Its schema.
        found: SchemaVersion,
        /// The newest this build reads.
        supported: SchemaVersion,
    },
    /// It is older than this build reads.
    TooOld {
        /// Its schema.
        found: SchemaVersion,
        /// The oldest this build reads.
        oldest: SchemaVersion,
    },
    /// Its digest does not match its contents: it was edited.
    DigestMismatch,
    /// A key is configured but the receipt carries no MAC.
    MissingMac,
    /// Its MAC does not match: it was forged or edited.
    MacMismatch,
    /// It was signed with another key than the host's (another machine,
    /// a rotated key, another `ORCHO_RECEIPT_KEY`).
    OtherKey {
        /// The id of the key it names.
        found: String,
        /// The id of the host's key.
        expected: String,
    },
    /// It is the receipt of another command or environment.
    WrongSubject {
        /// What it says it is for.
        found: String,
    },
}

impl fmt::Display for InvalidReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unreadable { message } => write!(f, "the receipt cannot be read ({message})"),
            Self::Malformed { line, column, .. } => write!(
                f,
                "the receipt is not valid at line {line}, column {column} (truncated or edited)"
            ),
            Self::MissingSchema => f.write_str("the receipt has no `schema` field"),
            Self::TooNew { found, supported } => write!(
                f,
                "the receipt has schema {found}, newer than {supported}; upgrade Orcho to read it"
            ),
            Self::TooOld { found, oldest } => write!(
                f,
                "the receipt has schema {found}, older than {oldest}, the oldest this build reads"
            ),
            Self::DigestMismatch => f.write_str("the receipt's digest does not match its contents"),
            Self::MissingMac => f.write_str(
                "the receipt has no MAC (written without a receipt key), but this host requires one",
            ),
            Self::MacMismatch => f.write_str("the receipt's MAC does not match (forged or edited)"),
            Self::OtherKey { found, expected } => write!(
                f,
                "the receipt was signed with another key (key {found}; this host's key is {expected})"
            ),
            Self::WrongSubject { found } => write!(f, "the file is the receipt of `{found}`"),
        }
    }
}

/// The current fingerprints and digests of one environment, to compare
/// receipts against.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EnvironmentState {
    /// The environment's digest now.
    pub digest: Digest,
    /// Its digest now as receipts of schema 1 computed it, which a receipt
    /// of that schema may still match.
    pub legacy: Option<Digest>,
    /// The values of the variables receipts recorded (the base variables
    /// and those the environment binds), to name the ones that changed.
    pub vars: BTreeMap<String, String>,
    /// The subject fingerprint now.
    pub subject: Digest,
    /// Each declared dependency's fingerprint now (`None`: path absent).
    pub dependencies: BTreeMap<EnvName, Option<Digest>>,
    /// Each git submodule in the subject now, with its work tree's
    /// fingerprint.
    pub submodules: BTreeMap<Utf8PathBuf, Digest>,
}

impl EnvironmentState {
    /// An environment state.
    pub fn new(
        digest: Digest,
        subject: Digest,
        dependencies: BTreeMap<EnvName, Option<Digest>>,
    ) -> Self {
        Self {
            digest,
            legacy: None,
            vars: BTreeMap::new(),
            subject,
            dependencies,
            submodules: BTreeMap::new(),
        }
    }
}

impl EnvironmentState {
    orcho_core::setters! {
        /// The state with the subject's git submodules and their fingerprints.
        pub fn with_submodules(submodules: BTreeMap<Utf8PathBuf, Digest>);
        /// Sets the digest receipts of schema 1 match.
        pub fn with_legacy(legacy: Some(Digest));
        /// Sets the variables' values now.
        pub fn with_vars(vars: BTreeMap<String, String>);
    }
}

/// The state of the checkout that receipts are classified against: per
/// environment, its digest, subject fingerprint and dependency fingerprints.
/// [`Verifier::current_state`](crate::Verifier::current_state) captures it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct CurrentState {
    /// The state of each environment.
    pub environments: BTreeMap<EnvName, EnvironmentState>,
    /// The program each command would run now (`None`: none found).
    pub programs: BTreeMap<CommandName, Option<Utf8PathBuf>>,
    /// The files outside its subject each command would run or read now,
    /// with their digests (see [`bound`](crate::bound)); a command not
    /// listed is not compared.
    pub bound: BTreeMap<CommandName, BTreeMap<Utf8PathBuf, crate::BoundFile>>,
}

impl CurrentState {
    /// An empty state (every receipt classifies stale against it).
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an environment's state.
    #[must_use]
    pub fn with_environment(mut self, name: EnvName, state: EnvironmentState) -> Self {
        self.environments.insert(name, state);
        self
    }
}

/// One declared command and its status.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Classified {
    /// The command.
    pub command: CommandName,
    /// Whether it is in the required gate.
    pub required: bool,
    /// Its status.
    pub status: ReceiptStatus,
    /// The dependency checkouts its latest valid receipt was taken against
    /// (empty without a valid receipt, or without dependencies).
    pub dependencies: Vec<crate::DependencyFingerprint>,
    /// What the test runner of its latest valid receipt reported, when one
    /// was recognised.
    pub tests: Option<crate::TestCount>,
}

/// Classifies the latest receipt of every declared command (required ones
/// first, in `required` order, then the others in declared order).
///
/// Never fails and never panics, whatever the files contain: problems with a
/// receipt are [`ReceiptStatus::Invalid`].
///
/// # Examples
///
/// ```
/// use orcho_receipts::{classify, CommandSpec, CurrentState, ReceiptStatus, ReceiptStore, VerificationContract};
/// # let dir = tempfile::tempdir()?;
/// # let root = camino::Utf8PathBuf::try_from(dir.path().to_owned())?;
/// let contract = VerificationContract::new()
///     .with_command(CommandSpec::new("test".parse()?, ["cargo", "test"]))
///     .with_required("test".parse()?);
/// let store = ReceiptStore::new(root.join(".orcho"));
/// let statuses = classify(&contract, &store, &CurrentState::new());
/// assert_eq!(statuses[0].status, ReceiptStatus::Missing);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn classify(
    contract: &VerificationContract,
    store: &ReceiptStore,
    state: &CurrentState,
) -> Vec<Classified> {
    let index = Index::new(contract);
    let mut todo: Vec<(&CommandName, bool)> = Vec::with_capacity(contract.commands.len());
    todo.extend(contract.required.iter().map(|name| (name, true)));
    todo.extend(
        contract
            .commands
            .iter()
            .filter(|c| !index.required.contains(c.name.as_str()))
            .map(|c| (&c.name, false)),
    );
    let one = |(name, required): (&CommandName, bool), buffers: &mut LoadBuffers| {
        let (status, dependencies, tests) = index.classify_loaded(store, state, name, buffers);
        Classified {
            command: name.clone(),
            required,
            status,
            dependencies,
            tests,
        }
    };
    let threads = threads_for(todo.len());
    if threads <= 1 {
        let mut buffers = LoadBuffers::default();
        return todo.into_iter().map(|t| one(t, &mut buffers)).collect();
    }
    // Many receipts: read, parse and verify them on several threads, each
    // taking the next batch of commands until none is left, and put the
    // results back in order.
    let next = AtomicUsize::new(0);
    let todo = &todo;
    let work = || {
        let mut buffers = LoadBuffers::default();
        let mut done = Vec::new();
        loop {
            let start = next.fetch_add(PARALLEL_BATCH, Ordering::Relaxed);
            let Some(batch) = todo.get(start..) else {
                break;
            };
            let batch = &batch[..batch.len().min(PARALLEL_BATCH)];
            done.push((
                start,
                batch
                    .iter()
                    .map(|&t| one(t, &mut buffers))
                    .collect::<Vec<_>>(),
            ));
        }
        done
    };
    let mut batches: Vec<(usize, Vec<Classified>)> = std::thread::scope(|scope| {
        // A thread that cannot be started leaves its share to the others.
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, work).ok())
            .collect();
        let mut all = work();
        for helper in helpers {
            // `classify_one` never panics; if a helper did, its commands are
            // classified again below.
            all.extend(helper.join().unwrap_or_default());
        }
        all
    });
    batches.sort_unstable_by_key(|(start, _)| *start);
    let mut out = Vec::with_capacity(todo.len());
    let mut buffers = LoadBuffers::default();
    for (start, batch) in batches {
        // Anything a failed helper left out, in order.
        while out.len() < start {
            out.push(one(todo[out.len()], &mut buffers));
        }
        out.extend(batch);
    }
    while out.len() < todo.len() {
        out.push(one(todo[out.len()], &mut buffers));
    }
    out
}

/// Commands per batch a classification thread takes at a time.
const PARALLEL_BATCH: usize = 32;
/// Below this many commands, classification stays on the calling thread
/// (starting threads would cost more than it saves).
const PARALLEL_MIN: usize = 128;

/// How many threads classify `commands` receipts: one per core (at most
/// four), and only when there are enough receipts to share.
fn threads_for(commands: usize) -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    if commands < PARALLEL_MIN {
        return 1;
    }
    let cores = *CORES
        .get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get));
    cores.clamp(1, 4).min(commands / PARALLEL_BATCH)
}

/// Classifies the latest receipt of one command.
pub fn classify_one(
    contract: &VerificationContract,
    store: &ReceiptStore,
    state: &CurrentState,
    name: &CommandName,
) -> ReceiptStatus {
    Index::new(contract).classify_one(store, state, name, &mut LoadBuffers::default())
}

/// Classifies a verified receipt against the contract and the current state.
pub fn status_of(
    contract: &VerificationContract,
    state: &CurrentState,
    receipt: &CommandReceipt,
) -> ReceiptStatus {
    Index::new(contract).status_of(state, receipt)
}

/// The contract's commands by name, so that classifying thousands of
/// commands stays linear.
struct Index<'a> {
    contract: &'a VerificationContract,
    commands: HashMap<&'a str, &'a CommandSpec>,
    required: HashSet<&'a str>,
}

impl<'a> Index<'a> {
    fn new(contract: &'a VerificationContract) -> Self {
        Self {
            contract,
            commands: contract
                .commands
                .iter()
                .map(|c| (c.name.as_str(), c))
                .collect(),
            required: contract.required.iter().map(CommandName::as_str).collect(),
        }
    }

    fn classify_one(
        &self,
        store: &ReceiptStore,
        state: &CurrentState,
        name: &CommandName,
        buffers: &mut LoadBuffers,
    ) -> ReceiptStatus {
        self.classify_loaded(store, state, name, buffers).0
    }

    /// The status, the dependencies the receipt was taken against, and what
    /// its test runner reported.
    fn classify_loaded(
        &self,
        store: &ReceiptStore,
        state: &CurrentState,
        name: &CommandName,
        buffers: &mut LoadBuffers,
    ) -> (
        ReceiptStatus,
        Vec<crate::DependencyFingerprint>,
        Option<crate::TestCount>,
    ) {
        match store.load_latest(name, buffers) {
            LoadedReceipt::Missing => (missing(store, name), Vec::new(), None),
            LoadedReceipt::Invalid(reason) => (ReceiptStatus::Invalid(reason), Vec::new(), None),
            LoadedReceipt::Valid(receipt) => {
                let status = self.status_of(state, &receipt);
                (status, receipt.dependencies, receipt.tests)
            }
        }
    }

    fn status_of(&self, state: &CurrentState, receipt: &CommandReceipt) -> ReceiptStatus {
        let spec = self.commands.get(receipt.command.as_str()).copied();
        let stale = stale_reasons(self.contract, spec, state, receipt);
        match receipt.failure() {
            Some(failure) => ReceiptStatus::Failed {
                failure,
                stale,
                failing: receipt
                    .tests
                    .as_ref()
                    .map(|t| t.failed_names.iter().take(3).cloned().collect())
                    .unwrap_or_default(),
            },
            None if !stale.is_empty() => ReceiptStatus::Stale(stale),
            None if receipt.vacuous() => ReceiptStatus::Vacuous {
                runners: receipt
                    .tests
                    .as_ref()
                    .map(|t| t.runners.clone())
                    .unwrap_or_default(),
            },
            None => ReceiptStatus::Present,
        }
    }
}

/// `missing`, or `deleted` when the command's history holds a receipt.
fn missing(store: &ReceiptStore, name: &CommandName) -> ReceiptStatus {
    let history = store.history(name).unwrap_or_default();
    let Some(last) = history.last() else {
        return ReceiptStatus::Missing;
    };
    let last_ran = match store.load_command_receipt_file(last, name) {
        LoadedReceipt::Valid(receipt) => Some(receipt.finished_at),
        _ => None,
    };
    ReceiptStatus::Deleted { last_ran }
}

fn stale_reasons(
    contract: &VerificationContract,
    spec: Option<&CommandSpec>,
    state: &CurrentState,
    receipt: &CommandReceipt,
) -> Vec<StaleReason> {
    let mut reasons = Vec::new();
    let Some(spec) = spec else {
        // Not declared any more: nothing current to be fresh against.
        reasons.push(StaleReason::CommandSpec {
            recorded: receipt.spec_digest,
            current: Digest::derive(crate::SPEC_CONTEXT, b""),
        });
        return reasons;
    };
    let current_spec = crate::verifier::spec_digest(spec);
    if current_spec != receipt.spec_digest {
        reasons.push(StaleReason::CommandSpec {
            recorded: receipt.spec_digest,
            current: current_spec,
        });
    }
    // The environment the command runs in now: the one it names, else
    // `default` (declared or implicit), as `environment_for` resolves it.
    let current_name: &str = match &spec.environment {
        Some(name) if contract.environment(name.as_str()).is_some() => name.as_str(),
        Some(_) => receipt.environment.as_str(),
        None => crate::DEFAULT_ENVIRONMENT,
    };
    let env_state = state.environments.get(current_name);
    let env_current = env_state.map(|s| s.digest);
    let holds = env_state.is_some_and(|s| {
        s.digest == receipt.environment_digest || s.legacy == Some(receipt.environment_digest)
    });
    if current_name != receipt.environment.as_str() || !holds {
        // The variables the run recorded whose value is not what it is now
        // (set, changed or unset since).
        let changed = env_state
            .map(|s| {
                receipt
                    .inherited_env
                    .iter()
                    .filter(|(k, v)| s.vars.get(*k) != Some(*v))
                    .map(|(k, _)| k.clone())
                    .collect()
            })
            .unwrap_or_default();
        reasons.push(StaleReason::Environment {
            recorded_name: receipt.environment.clone(),
            recorded: receipt.environment_digest,
            current_name: EnvName::new(current_name)
                .unwrap_or_else(|_| receipt.environment.clone()),
            current: env_current,
            changed,
        });
    }
    if let Some(recorded) = &receipt.program {
        let current = state.programs.get(&receipt.command).cloned().flatten();
        if current.as_ref() != Some(recorded) {
            reasons.push(StaleReason::Program {
                recorded: recorded.clone(),
                current,
            });
        }
    }
    if let Some(current) = state.bound.get(&receipt.command) {
        match &receipt.bound {
            None => reasons.push(StaleReason::Unbound),
            Some(recorded) => {
                let changes = crate::bound::changes(recorded, current);
                if !changes.is_empty() {
                    reasons.push(StaleReason::Bound { changes });
                }
            }
        }
    }
    if !receipt.written_during_run.is_empty() {
        reasons.push(StaleReason::WrittenDuringRun {
            paths: receipt.written_during_run.clone(),
        });
    }
    if receipt.subject_after != receipt.subject_before {
        reasons.push(StaleReason::ChangedByRun {
            before: receipt.subject_before,
            after: receipt.subject_after,
            changes: None,
        });
    }
    if let Some(s) = env_state {
        if s.subject != receipt.subject_before {
            reasons.push(StaleReason::Subject {
                recorded: receipt.subject_before,
                current: s.subject,
                changes: None,
            });
            // Where the change is, when it is inside a submodule. Receipts
            // before schema 4 recorded none: nothing to compare.
            if !receipt.submodules.is_empty() || !s.submodules.is_empty() {
                let paths: BTreeSet<&Utf8PathBuf> = receipt
                    .submodules
                    .keys()
                    .chain(s.submodules.keys())
                    .collect();
                for path in paths {
                    let recorded = receipt.submodules.get(path).copied();
                    let current = s.submodules.get(path).copied();
                    if recorded != current {
                        reasons.push(StaleReason::Submodule {
                            path: path.clone(),
                            recorded,
                            current,
                        });
                    }
                }
            }
        }
        let mut names: Vec<&EnvName> = s.dependencies.keys().collect();
        for d in &receipt.dependencies {
            if !s.dependencies.contains_key(&d.name) {
                names.push(&d.name);
            }
        }
        names.sort();
        names.dedup();
        for name in names {
            let recorded = receipt
                .dependencies
                .iter()
                .find(|d| &d.name == name)
                .map(|d| d.fingerprint);
            let current = s.dependencies.get(name).copied();
            // Recorded and current must both exist and agree; anything
            // else (not recorded, no longer declared) is stale.
            if recorded.is_none() || current.is_none() || recorded != current {
                reasons.push(StaleReason::Dependency {
                    changes: None,
                    name: name.clone(),
                    recorded: recorded.flatten(),
                    current: current.flatten(),
                });
            }
        }
    }
    // Without a current state for the environment nothing else can be
    // compared; the environment reason above already makes it stale.
    reasons
}
