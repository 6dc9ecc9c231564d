//! Running declared commands and environment assertions, and recording them.

use std::{
    collections::BTreeMap,
    ffi::{OsStr, OsString},
    sync::{Arc, LazyLock},
    time::Duration,
};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{Clock, Digest, SystemClock};
use serde::Serialize;

use crate::{
    Assertion, AssertionResult, CommandName, CommandReceipt, CommandSpec, ContractError,
    CurrentState, DependencyFingerprint, EnvName, EnvReceipt, Environment, EnvironmentState,
    LogRecord, PathExpectation, ReceiptError, ReceiptErrorKind, ReceiptStore, TestCount,
    VerificationContract,
    classify::{Classified, classify},
    exec::{self, BaseEnv, CancelToken, CapturedOutput, DEFAULT_GRACE, ExecOutcome, ExecRequest},
    fingerprint::Fingerprinter,
    readiness::{ExploratoryEntry, ExploratoryLog, ReadinessSummary},
    receipt::{ENVIRONMENT_CONTEXT, LEGACY_ENVIRONMENT_CONTEXT, SPEC_CONTEXT},
};

/// How long an assertion's command may run.
const ASSERTION_TIMEOUT: Duration = Duration::from_secs(60);
/// How much of an assertion command's output is examined.
const ASSERTION_OUTPUT: usize = 1 << 20;
/// How much of what an assertion found goes into its receipt.
const DETAIL_CHARS: usize = 200;

/// The digest of a declared command (context [`SPEC_CONTEXT`]).
pub fn spec_digest(spec: &CommandSpec) -> Digest {
    // Classification computes one per receipt: the context key is derived
    // once per process, not once per call.
    static HASHER: LazyLock<blake3::Hasher> =
        LazyLock::new(|| blake3::Hasher::new_derive_key(SPEC_CONTEXT));
    let json = serde_json::to_vec(spec).unwrap_or_default();
    Digest::from_blake3(HASHER.clone().update(&json).finalize())
}

/// The digest of an environment's declaration together with the values
/// of the variables it binds ([`bound_env`]), context
/// [`ENVIRONMENT_CONTEXT`]. The rest of the host's environment (`TERM`,
/// `HOME`, `LANG`, `PATH`) is not part of it.
pub fn environment_digest(environment: &Environment, base: &BaseEnv) -> Digest {
    #[derive(Serialize)]
    struct Hashed<'a> {
        environment: &'a Environment,
        bound: BTreeMap<String, String>,
    }
    let hashed = Hashed {
        environment,
        bound: bound_env(environment, base),
    };
    Digest::derive(
        ENVIRONMENT_CONTEXT,
        &serde_json::to_vec(&hashed).unwrap_or_default(),
    )
}

/// The digest of an environment's declaration alone, without the values
/// of the host variables it binds (context
/// [`ENVIRONMENT_DECLARATION_CONTEXT`]): what an attestation names, so
/// that a judge can tell which declaration a command ran under wherever it
/// ran.
pub fn environment_declaration_digest(environment: &Environment) -> Digest {
    Digest::derive(
        ENVIRONMENT_DECLARATION_CONTEXT,
        &serde_json::to_vec(environment).unwrap_or_default(),
    )
}

/// The `derive_key` context of [`environment_declaration_digest`].
pub const ENVIRONMENT_DECLARATION_CONTEXT: &str = "orcho environment declaration v1";

/// The environment digest receipts of schema 1 recorded: the declaration
/// and every base variable (context [`LEGACY_ENVIRONMENT_CONTEXT`]).
pub(crate) fn legacy_environment_digest(environment: &Environment, base: &BaseEnv) -> Digest {
    #[derive(Serialize)]
    struct Hashed<'a> {
        environment: &'a Environment,
        base: BTreeMap<&'a str, &'a str>,
    }
    let hashed = Hashed {
        environment,
        base: base.iter().collect(),
    };
    Digest::derive(
        LEGACY_ENVIRONMENT_CONTEXT,
        &serde_json::to_vec(&hashed).unwrap_or_default(),
    )
}

/// The variables `environment` binds, with their values now: its `env`,
/// and each variable it `inherit`s, as `base` has it (absent when unset).
pub fn bound_env(environment: &Environment, base: &BaseEnv) -> BTreeMap<String, String> {
    let mut bound = environment.env.clone();
    for name in &environment.inherit {
        if let Some(value) = base.get(name) {
            bound
                .entry(name.clone())
                .or_insert_with(|| value.to_owned());
        }
    }
    bound
}

/// A subject's fingerprint, as the current state keeps it for every
/// command of its environments.
#[derive(Debug, Clone)]
struct Subject {
    digest: Digest,
    submodules: BTreeMap<Utf8PathBuf, Digest>,
    links_out: Vec<Utf8PathBuf>,
}

/// The program `argv0` names, as a command running in `cwd` with `path` as
/// its `PATH` finds it, or `None` when nothing runnable is found. A program
/// in the checkout (`./scripts/check.sh`) stays relative to `cwd`: its
/// content is part of the subject, and the same receipt holds for the same
/// tree wherever it is checked out.
pub(crate) fn resolve_program(
    argv0: &str,
    path: Option<&str>,
    cwd: &Utf8Path,
) -> Option<Utf8PathBuf> {
    let found = exec::lookup::find_program(
        OsStr::new(argv0),
        path.map(OsStr::new),
        Some(cwd.as_std_path()),
    )
    .ok()?;
    Utf8PathBuf::try_from(found).ok()
}

/// Runs what a [`VerificationContract`] declares against one checkout and
/// records receipts in a [`ReceiptStore`]; classifies them and builds the
/// readiness summary.
///
/// Synchronous: an async host calls it through `spawn_blocking`.
///
/// ```
/// use orcho_receipts::{CommandSpec, ReceiptStatus, ReceiptStore, VerificationContract, Verifier};
/// use orcho_receipts::exec::BaseEnv;
/// # let dir = tempfile::tempdir()?;
/// # let root = camino::Utf8PathBuf::try_from(dir.path().to_owned())?;
/// let contract = VerificationContract::new()
///     .with_command(CommandSpec::new("check".parse()?, ["true"]))
///     .with_required("check".parse()?);
/// let verifier = Verifier::new(contract, &root, ReceiptStore::new(root.join(".orcho")))?
///     .with_base_env(BaseEnv::inherit());
///
/// let receipt = verifier.run_command(&"check".parse()?, None)?;
/// assert!(receipt.passed());
/// let statuses = verifier.classify()?;
/// assert_eq!(statuses[0].status, ReceiptStatus::Present);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Verifier {
    contract: VerificationContract,
    checkout: Utf8PathBuf,
    store: ReceiptStore,
    clock: Arc<dyn Clock>,
    base_env: BaseEnv,
    secrets: BTreeMap<String, String>,
    grace: Duration,
    tail_bytes: usize,
    threads: Option<usize>,
}

impl Verifier {
    /// A verifier for `checkout`, recording in `store`, with the system
    /// clock, [`BaseEnv::inherit`] plus the host variables the contract's
    /// environments `inherit`, and secret values read from this process's
    /// environment.
    ///
    /// # Errors
    ///
    /// The contract's first validation problem.
    pub fn new(
        contract: VerificationContract,
        checkout: &Utf8Path,
        store: ReceiptStore,
    ) -> Result<Self, ContractError> {
        contract.validate()?;
        let base_env = BaseEnv::inherit().with_host_vars(
            contract
                .environments
                .iter()
                .flat_map(|e| e.inherit.iter().map(String::as_str)),
        );
        Ok(Self {
            contract,
            checkout: checkout.to_owned(),
            store,
            clock: Arc::new(SystemClock::new()),
            base_env,
            secrets: BTreeMap::new(),
            grace: DEFAULT_GRACE,
            tail_bytes: 4096,
            threads: None,
        })
    }

    /// Uses `clock` for every timestamp.
    #[must_use]
    pub fn with_clock(mut self, clock: impl Clock + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// Supplies the value of a declared secret (otherwise it is read from
    /// this process's environment when the command runs).
    #[must_use]
    pub fn with_secret(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.secrets.insert(name.into(), value.into());
        self
    }

    orcho_core::getters! {
        /// The contract.
        pub fn contract(&self) -> &VerificationContract;
        /// The store.
        pub fn store(&self) -> &ReceiptStore;
        /// The checkout root.
        pub fn checkout(&self) -> &Utf8Path;
    }

    /// The fingerprinter used for subjects and dependencies: the store's
    /// stat cache, the store excluded, git run with the base environment.
    /// Where the store does not exist yet, no cache is kept: reading the
    /// readiness of a checkout nothing was verified in leaves no trace.
    pub fn fingerprinter(&self) -> Fingerprinter {
        let mut f = Fingerprinter::new()
            .excluding(self.store.dir().as_std_path())
            .with_env(self.base_env.clone())
            .keeping_manifests();
        if self.store.dir().is_dir() {
            f = f.with_cache_dir(self.store.cache_dir());
        }
        if let Some(key) = self.store.key() {
            f = f.with_cache_key(key.cache_key());
        }
        match self.threads {
            Some(n) => f.with_threads(n),
            None => f,
        }
    }

    fn environment(&self, spec: &CommandSpec) -> Environment {
        self.contract
            .environment_for(spec)
            .map_or_else(Environment::implicit, std::borrow::Cow::into_owned)
    }

    /// Runs a declared command and writes its receipt (also when it fails,
    /// times out, is cancelled or cannot be spawned: that is what the receipt
    /// says). The environment's assertions are checked first and recorded in
    /// the receipt; the subject is fingerprinted before and after.
    ///
    /// # Errors
    ///
    /// A [`ReceiptError`] when the command is not declared, or the run cannot
    /// be fingerprinted, supervised or recorded.
    pub fn run_command(
        &self,
        name: &CommandName,
        cancel: Option<&CancelToken>,
    ) -> Result<CommandReceipt, ReceiptError> {
        let err = |kind| ReceiptError::command(name.as_str(), kind);
        let spec = self
            .contract
            .command(name.as_str())
            .ok_or_else(|| err(ReceiptErrorKind::NotDeclared))?;
        let environment = self.environment(spec);
        // The store is written to anyway: made first, so that the
        // fingerprints before and after are cached and kept (to name what
        // changed), on a first run too.
        let _ = std::fs::create_dir_all(self.store.dir());
        let fingerprinter = self.fingerprinter();
        let started_at = self.clock.now();
        let before = fingerprinter
            .fingerprint(&self.checkout, &environment.subject)
            .map_err(|e| err(ReceiptErrorKind::Fingerprint(e)))?;
        let subject_before = before.digest;
        let submodules = before
            .submodules
            .into_iter()
            .map(|s| (s.path, s.digest))
            .collect();
        let dependencies = self
            .dependency_fingerprints(&environment, &fingerprinter)
            .map_err(err)?;
        let assertions = self.check_assertions(&environment);
        let logs = self.store.reserve_logs(name, started_at)?;

        let cwd = self.checkout.join(&environment.working_dir);
        let bound = bound_env(&environment, &self.base_env);
        let path = self.command_path(&environment, spec);
        let program = spec
            .argv
            .first()
            .and_then(|argv0| resolve_program(argv0, path.as_deref(), &cwd));
        let bound_files = crate::bound::bind(&crate::bound::Inputs {
            program: program.as_deref(),
            path: path.as_deref(),
            cwd: &cwd,
            cargo_home: self.cargo_home(program.as_deref(), &environment, spec),
            around: &crate::bound::around(&self.checkout),
            links_out: &before.links_out,
            known: None,
        });
        // Every directory of the subject watched while the command runs:
        // a file changed and put back before it ends is still named.
        let listed = fingerprinter
            .files(&self.checkout, &environment.subject)
            .unwrap_or_default();
        let watch = crate::watch::Watch::start(self.checkout.as_std_path(), &listed);
        // Python's bytecode is neither read from nor written into the
        // checkout: a stale `__pycache__` left there cannot stand in for
        // the source the receipt proves.
        let pycache = tempfile::Builder::new()
            .prefix("orcho-pycache-")
            .tempdir()
            .map_err(|e| err(ReceiptErrorKind::io(self.checkout.clone(), e)))?;
        let mut request = ExecRequest::new(spec.argv.iter().map(OsString::from))
            .cwd(cwd)
            .envs(self.base_env.clone())
            .envs(bound.clone())
            .envs(spec.env.clone())
            .timeout(spec.effective_timeout())
            .grace(self.grace)
            .tail_bytes(self.tail_bytes)
            .stdout_log(logs.join("stdout.log"))
            .stderr_log(logs.join("stderr.log"));
        for secret in &spec.secrets {
            let value = self
                .secrets
                .get(secret)
                .cloned()
                .map(OsString::from)
                .or_else(|| std::env::var_os(secret));
            if let Some(value) = value {
                request = request
                    .redact(value.as_encoded_bytes().to_vec())
                    .env(secret, value);
            }
        }
        if let Some(token) = cancel {
            request = request.cancel(token.clone());
        }
        request = request
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("PYTHONPYCACHEPREFIX", pycache.path().as_os_str());
        let outcome = exec::run(&request);
        let written_during_run = match watch {
            Some(watch) => {
                let (mut written, created) = watch.finish();
                written.extend(self.not_ignored(created));
                written.sort();
                written.dedup();
                written
            }
            None => Vec::new(),
        };
        let outcome = outcome.map_err(|e| err(ReceiptErrorKind::Exec(e)))?;
        let subject_after = fingerprinter
            .fingerprint(&self.checkout, &environment.subject)
            .map_err(|e| err(ReceiptErrorKind::Fingerprint(e)))?
            .digest;
        let finished_at = self.clock.now();
        let tests = self.test_count(&outcome);
        let receipt = CommandReceipt {
            command: name.clone(),
            spec: spec.clone(),
            spec_digest: spec_digest(spec),
            environment: environment.name.clone(),
            environment_digest: environment_digest(&environment, &self.base_env),
            inherited_env: bound,
            program,
            working_dir: environment.working_dir.clone(),
            subject_before,
            subject_after,
            submodules,
            dependencies,
            started_at,
            finished_at,
            duration: finished_at.duration_since(started_at).unwrap_or_default(),
            exit: outcome.status,
            assertions,
            stdout: self.log_record(&outcome.stdout),
            stderr: self.log_record(&outcome.stderr),
            tests,
            bound: Some(bound_files),
            written_during_run,
        };
        self.store.write_command_receipt(&receipt)?;
        Ok(receipt)
    }

    /// Cargo's home, when `program` is cargo's: `CARGO_HOME` as the command
    /// sees it, else `~/.cargo`.
    fn cargo_home(
        &self,
        program: Option<&Utf8Path>,
        environment: &Environment,
        spec: &CommandSpec,
    ) -> Option<Utf8PathBuf> {
        let name = program?.file_name()?;
        if !(name == "cargo" || name.starts_with("cargo-")) {
            return None;
        }
        let var = |key: &str| {
            spec.env
                .get(key)
                .or_else(|| environment.env.get(key))
                .cloned()
                .or_else(|| self.base_env.get(key).map(str::to_owned))
                .or_else(|| {
                    environment
                        .inherit
                        .iter()
                        .any(|i| i == key)
                        .then(|| std::env::var_os(key)?.into_string().ok())
                        .flatten()
                })
        };
        var("CARGO_HOME")
            .map(Utf8PathBuf::from)
            .or_else(|| var("HOME").map(|home| Utf8PathBuf::from(home).join(".cargo")))
    }

    /// Of `created` (paths relative to the checkout), those git would list:
    /// not ignored by the checkout's ignore files. Outside git, all of them
    /// but those under the store.
    fn not_ignored(&self, created: Vec<Utf8PathBuf>) -> Vec<Utf8PathBuf> {
        let created: Vec<Utf8PathBuf> = created
            .into_iter()
            .filter(|p| !p.starts_with(crate::fingerprint::STORE_DIR_NAME))
            .collect();
        if created.is_empty() || !crate::fingerprint::in_git_work_tree(self.checkout.as_std_path())
        {
            return created;
        }
        let mut input = Vec::new();
        for path in &created {
            input.extend_from_slice(path.as_str().as_bytes());
            input.push(0);
        }
        let request = exec::git_request(
            &self.checkout,
            &["check-ignore", "--no-index", "--stdin", "-z"],
        )
        .stdin(input)
        .keep_stdout(1 << 20);
        let Ok(out) = exec::run(&request) else {
            return created;
        };
        let ignored: std::collections::BTreeSet<Vec<u8>> = out
            .stdout
            .kept
            .unwrap_or_default()
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(<[u8]>::to_vec)
            .collect();
        created
            .into_iter()
            .filter(|p| !ignored.contains(p.as_str().as_bytes()))
            .collect()
    }

    /// The `PATH` a command of `environment` runs with: its own `env`'s,
    /// else the environment's, else the base's.
    fn command_path(&self, environment: &Environment, spec: &CommandSpec) -> Option<String> {
        spec.env
            .get("PATH")
            .or_else(|| environment.env.get("PATH"))
            .cloned()
            .or_else(|| self.base_env.get("PATH").map(str::to_owned))
    }

    /// What the command's test runner reported: read from the full logs
    /// (line by line, bounded), else from the tails kept in memory.
    fn test_count(&self, outcome: &ExecOutcome) -> Option<TestCount> {
        let logs: Vec<std::fs::File> = [&outcome.stdout, &outcome.stderr]
            .into_iter()
            .filter_map(|out| out.log.as_ref())
            .filter_map(|log| std::fs::File::open(&log.path).ok())
            .collect();
        if logs.len() == 2 {
            return TestCount::read(logs);
        }
        TestCount::read([
            outcome.stdout.tail_lossy().into_bytes().as_slice(),
            outcome.stderr.tail_lossy().into_bytes().as_slice(),
        ])
    }

    fn log_record(&self, out: &CapturedOutput) -> LogRecord {
        let (path, digest) = match &out.log {
            Some(log) => (
                Some(
                    log.path
                        .strip_prefix(self.store.dir())
                        .map_or_else(|_| log.path.clone(), Utf8Path::to_owned),
                ),
                Some(log.digest),
            ),
            None => (None, None),
        };
        LogRecord {
            path,
            digest,
            bytes: out.total_bytes,
            tail: out.tail_lossy(),
        }
    }

    /// How the dependency at `root` is fingerprinted: one inside the
    /// checkout (an installed `node_modules`, a `.venv`, which git ignores)
    /// file by file, all of it; another checkout as its git lists it.
    fn dependency_fingerprinter(
        &self,
        root: &Utf8Path,
        fingerprinter: &Fingerprinter,
    ) -> Fingerprinter {
        let real = |p: &Utf8Path| p.canonicalize_utf8().unwrap_or_else(|_| p.to_owned());
        if real(root).starts_with(real(&self.checkout)) {
            fingerprinter.clone().everything()
        } else {
            fingerprinter.clone()
        }
    }

    fn dependency_fingerprints(
        &self,
        environment: &Environment,
        fingerprinter: &Fingerprinter,
    ) -> Result<Vec<DependencyFingerprint>, ReceiptErrorKind> {
        environment
            .dependencies
            .iter()
            .map(|dep| {
                let root = self.checkout.join(&dep.path);
                let fingerprint = if root.is_dir() {
                    Some(
                        self.dependency_fingerprinter(&root, fingerprinter)
                            .fingerprint(&root, &[])
                            .map_err(ReceiptErrorKind::Fingerprint)?
                            .digest,
                    )
                } else {
                    None
                };
                Ok(
                    DependencyFingerprint::new(dep.name.clone(), dep.path.clone(), fingerprint)
                        .with_commit(head_commit(&root, &self.base_env)),
                )
            })
            .collect()
    }

    /// Checks an environment's assertions and writes an env-assertion
    /// receipt.
    ///
    /// # Errors
    ///
    /// A [`ReceiptError`] when the environment is not declared or the
    /// receipt cannot be written.
    pub fn check_environment(&self, name: &EnvName) -> Result<EnvReceipt, ReceiptError> {
        let environment = self.contract.environment(name.as_str()).ok_or_else(|| {
            ReceiptError::new(
                format_args!("environment `{name}`"),
                ReceiptErrorKind::NotDeclared,
            )
        })?;
        let checked_at = self.clock.now();
        let receipt = EnvReceipt {
            environment: name.clone(),
            environment_digest: environment_digest(environment, &self.base_env),
            checked_at,
            results: self.check_assertions(environment),
        };
        self.store.write_env_receipt(&receipt)?;
        Ok(receipt)
    }

    /// Runs `argv` as an exploratory command: in `environment` (by default
    /// the one a command without `environment:` runs in), with its working
    /// directory and declared variables, in a process group of its own,
    /// handing its output to `on_stdout` and `on_stderr` as it arrives. The
    /// command is logged in the [`ExploratoryLog`] and counted in the
    /// readiness summary; it writes no receipt and never satisfies a
    /// requirement.
    ///
    /// # Errors
    ///
    /// A [`ReceiptError`] when the environment is not declared, the process
    /// cannot be supervised, or the log cannot be written. A command that
    /// cannot be started (an empty `argv`, a program not found) is an entry
    /// without an exit code and an outcome that says why.
    pub fn run_exploratory(
        &self,
        argv: &[String],
        environment: Option<&EnvName>,
        cancel: Option<&CancelToken>,
        on_stdout: &mut dyn FnMut(&[u8]),
        on_stderr: &mut dyn FnMut(&[u8]),
    ) -> Result<(ExploratoryEntry, ExecOutcome), ReceiptError> {
        let program = argv.first().map_or("", String::as_str);
        let environment = match environment {
            Some(name) => self
                .contract
                .environment(name.as_str())
                .cloned()
                .ok_or_else(|| {
                    ReceiptError::new(
                        format_args!("environment `{name}`"),
                        ReceiptErrorKind::NotDeclared,
                    )
                })?,
            None => self
                .contract
                .environment(crate::DEFAULT_ENVIRONMENT)
                .cloned()
                .unwrap_or_else(Environment::implicit),
        };
        let at = self.clock.now();
        let mut request = ExecRequest::new(argv.iter().map(OsString::from))
            .cwd(self.checkout.join(&environment.working_dir))
            .envs(self.base_env.clone())
            .envs(bound_env(&environment, &self.base_env))
            .grace(self.grace)
            .tail_bytes(self.tail_bytes);
        if let Some(token) = cancel {
            request = request.cancel(token.clone());
        }
        let outcome = exec::run_teed(&request, on_stdout, on_stderr).map_err(|e| {
            ReceiptError::new(
                format_args!("exploratory command `{program}`"),
                ReceiptErrorKind::Exec(e),
            )
        })?;
        let entry = ExploratoryEntry::new(at, argv.to_vec(), outcome.status.code())
            .with_cwd(Some(self.checkout.join(&environment.working_dir)));
        ExploratoryLog::new(&self.store).record(&entry)?;
        Ok((entry, outcome))
    }

    fn check_assertions(&self, environment: &Environment) -> Vec<AssertionResult> {
        let cwd = self.checkout.join(&environment.working_dir);
        let mut env = self.base_env.clone();
        for (k, v) in &environment.env {
            env = env.with(k.clone(), v.clone());
        }
        environment
            .assertions
            .iter()
            .map(|a| check_assertion(a, &cwd, &env))
            .collect()
    }

    /// Fingerprints the subject and dependencies of every environment a
    /// declared command runs in.
    ///
    /// # Errors
    ///
    /// A [`ReceiptError`] when a fingerprint cannot be taken.
    pub fn current_state(&self) -> Result<CurrentState, ReceiptError> {
        let fingerprinter = self.fingerprinter();
        let mut state = CurrentState::new();
        let mut subjects: BTreeMap<Vec<Utf8PathBuf>, Subject> = BTreeMap::new();
        let around = crate::bound::around(&self.checkout);
        for spec in &self.contract.commands {
            let environment = self.environment(spec);
            let cwd = self.checkout.join(&environment.working_dir);
            let path = self.command_path(&environment, spec);
            let program = spec
                .argv
                .first()
                .and_then(|argv0| resolve_program(argv0, path.as_deref(), &cwd));
            let at =
                |kind| ReceiptError::new(format_args!("environment `{}`", environment.name), kind);
            let subject = match subjects.get(&environment.subject) {
                Some(known) => known.clone(),
                None => {
                    let f = fingerprinter
                        .fingerprint(&self.checkout, &environment.subject)
                        .map_err(|e| at(ReceiptErrorKind::Fingerprint(e)))?;
                    let known = Subject {
                        digest: f.digest,
                        submodules: f
                            .submodules
                            .into_iter()
                            .map(|s| (s.path, s.digest))
                            .collect(),
                        links_out: f.links_out,
                    };
                    subjects.insert(environment.subject.clone(), known.clone());
                    known
                }
            };
            // What the receipt recorded, so that a file whose `lstat` data
            // did not change is not read again.
            let recorded = match self.store.load_command_receipt(&spec.name) {
                crate::LoadedReceipt::Valid(receipt) => receipt.bound,
                _ => None,
            };
            let bound = crate::bound::bind(&crate::bound::Inputs {
                program: program.as_deref(),
                path: path.as_deref(),
                cwd: &cwd,
                cargo_home: self.cargo_home(program.as_deref(), &environment, spec),
                around: &around,
                links_out: &subject.links_out,
                known: recorded.as_ref(),
            });
            state.bound.insert(spec.name.clone(), bound);
            state.programs.insert(spec.name.clone(), program);
            if state.environments.contains_key(&environment.name) {
                continue;
            }
            let Subject {
                digest: subject,
                submodules,
                ..
            } = subject;
            let dependencies = self
                .dependency_fingerprints(&environment, &fingerprinter)
                .map_err(at)?
                .into_iter()
                .map(|d| (d.name, d.fingerprint))
                .collect();
            state.environments.insert(
                environment.name.clone(),
                EnvironmentState::new(
                    environment_digest(&environment, &self.base_env),
                    subject,
                    dependencies,
                )
                .with_legacy(legacy_environment_digest(&environment, &self.base_env))
                .with_submodules(submodules)
                .with_vars(
                    self.base_env
                        .iter()
                        .map(|(k, v)| (k.to_owned(), v.to_owned()))
                        .chain(bound_env(&environment, &self.base_env))
                        .collect(),
                ),
            );
        }
        Ok(state)
    }

    /// Takes over the receipts `from` holds (another checkout's, of the same
    /// tree: a run's worktree after its diff was delivered here) that are
    /// present for this checkout as it is now: each is written into this
    /// verifier's store with its logs. A receipt that is not present here
    /// (the trees differ, or it failed) is left where it is. Returns the
    /// commands taken over.
    ///
    /// # Errors
    ///
    /// When the current state cannot be captured, or a receipt or log
    /// cannot be written.
    pub fn adopt(&self, from: &ReceiptStore) -> Result<Vec<CommandName>, ReceiptError> {
        let state = self.current_state()?;
        let mut adopted = Vec::new();
        for spec in &self.contract.commands {
            let crate::LoadedReceipt::Valid(receipt) = from.load_command_receipt(&spec.name) else {
                continue;
            };
            if crate::classify::status_of(&self.contract, &state, &receipt)
                != crate::ReceiptStatus::Present
            {
                continue;
            }
            for log in [&receipt.stdout.path, &receipt.stderr.path]
                .into_iter()
                .flatten()
            {
                let (source, target) = (from.dir().join(log), self.store.dir().join(log));
                let copy = || -> std::io::Result<u64> {
                    if let Some(dir) = target.parent() {
                        std::fs::create_dir_all(dir)?;
                    }
                    std::fs::copy(&source, &target)
                };
                copy().map_err(|e| {
                    ReceiptError::command(
                        spec.name.as_str(),
                        ReceiptErrorKind::io(target.clone(), e),
                    )
                })?;
            }
            self.store.write_command_receipt(&receipt)?;
            adopted.push(spec.name.clone());
        }
        Ok(adopted)
    }

    /// Captures the current state and classifies every declared command
    /// (see [`classify`](crate::classify())).
    ///
    /// # Errors
    ///
    /// When the current state cannot be captured.
    pub fn classify(&self) -> Result<Vec<Classified>, ReceiptError> {
        let state = self.current_state()?;
        let mut classified = classify(&self.contract, &self.store, &state);
        self.name_changes(&mut classified);
        Ok(classified)
    }

    /// Names the paths behind each stale subject, where the manifests of
    /// both fingerprints are kept.
    fn name_changes(&self, classified: &mut [Classified]) {
        let fingerprinter = self.fingerprinter();
        for c in classified {
            let Some(reasons) = c.status.stale_reasons_mut() else {
                continue;
            };
            let Some(spec) = self.contract.command(c.command.as_str()) else {
                continue;
            };
            let subject = self.environment(spec).subject;
            for reason in reasons {
                match reason {
                    crate::StaleReason::Subject {
                        recorded,
                        current,
                        changes,
                    } => {
                        *changes =
                            fingerprinter.changes(&self.checkout, &subject, recorded, current);
                    }
                    crate::StaleReason::ChangedByRun {
                        before,
                        after,
                        changes,
                    } => {
                        *changes = fingerprinter.changes(&self.checkout, &subject, before, after);
                    }
                    crate::StaleReason::Dependency {
                        name,
                        recorded: Some(recorded),
                        current: Some(current),
                        changes,
                    } => {
                        let environment = self.environment(spec);
                        if let Some(dep) = environment.dependencies.iter().find(|d| &d.name == name)
                        {
                            let root = self.checkout.join(&dep.path);
                            *changes = self
                                .dependency_fingerprinter(&root, &fingerprinter)
                                .changes(&root, &[], recorded, current);
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// Builds the readiness summary from the receipts on disk.
    ///
    /// # Errors
    ///
    /// When the current state cannot be captured or the exploratory log
    /// cannot be read.
    pub fn readiness(&self) -> Result<ReadinessSummary, ReceiptError> {
        let state = self.current_state()?;
        let mut classified = classify(&self.contract, &self.store, &state);
        self.name_changes(&mut classified);
        let exploratory = ExploratoryLog::new(&self.store).count()?;
        let mut subjects: Vec<Digest> = state.environments.values().map(|e| e.subject).collect();
        subjects.sort_unstable_by_key(ToString::to_string);
        subjects.dedup();
        let summary = ReadinessSummary::build(
            &self.contract,
            &self.store,
            &classified,
            exploratory,
            |env, recorded| {
                recorded == environment_digest(env, &self.base_env)
                    || recorded == legacy_environment_digest(env, &self.base_env)
            },
        );
        Ok(ReadinessSummary {
            subjects,
            ..summary
        })
    }
}

impl Verifier {
    orcho_core::setters! {
        /// The base environment of every command and assertion.
        pub fn with_base_env(base: BaseEnv) => base_env;
        /// The time between `SIGTERM` and `SIGKILL` at a timeout.
        pub fn with_grace(grace: Duration);
        /// How many bytes of each output stream a receipt keeps as its tail.
        pub fn with_tail_bytes(bytes: usize) => tail_bytes;
        /// How many files the fingerprinter reads at once.
        pub fn with_fingerprint_threads(threads: Some(usize));
    }
}

fn short(text: &str) -> String {
    let text = text.trim();
    let mut out: String = text.chars().take(DETAIL_CHARS).collect();
    if text.chars().count() > DETAIL_CHARS {
        out.push('…');
    }
    out
}

fn argv_text(argv: &[String]) -> String {
    short(&argv.join(" "))
}

/// The commit checked out at `dir` when it is the root of a git work tree
/// of its own (a dependency checkout), else `None`.
fn head_commit(dir: &Utf8Path, env: &BaseEnv) -> Option<String> {
    if !orcho_core::fs::is_git_top(dir.as_std_path()) {
        return None;
    }
    let request = ExecRequest::new(["git", "rev-parse", "--verify", "--quiet", "HEAD"])
        .cwd(dir.to_owned())
        .envs(env.clone())
        .timeout(Duration::from_secs(30))
        .keep_stdout(256);
    let outcome = exec::run(&request).ok()?;
    let kept = outcome.stdout.kept.filter(|_| outcome.status.success())?;
    let commit = String::from_utf8(kept).ok()?.trim().to_owned();
    (!commit.is_empty()).then_some(commit)
}

fn check_assertion(assertion: &Assertion, cwd: &Utf8Path, env: &BaseEnv) -> AssertionResult {
    match assertion {
        Assertion::FileExists(path) => {
            let full = cwd.join(path);
            let (passed, detail) = match std::fs::metadata(&full) {
                Ok(m) if m.is_file() => (true, "found".to_owned()),
                Ok(_) => (false, "exists but is not a file".to_owned()),
                Err(e) => (false, format!("not found ({})", e.kind())),
            };
            AssertionResult::new(format!("file_exists `{path}`"), passed, detail)
        }
        Assertion::PathExists(path) => {
            let full = cwd.join(path);
            let (passed, detail) = match std::fs::symlink_metadata(&full) {
                Ok(_) => (true, "found".to_owned()),
                Err(e) => (false, format!("not found ({})", e.kind())),
            };
            AssertionResult::new(format!("path_exists `{path}`"), passed, detail)
        }
        Assertion::CommandExists(program) => {
            let found = find_program(program, cwd, env.get("PATH"));
            let description = format!("command_exists `{program}`");
            match found {
                Ok(path) => AssertionResult::new(description, true, path),
                Err(why) => AssertionResult::new(description, false, why),
            }
        }
        Assertion::Version(v) => {
            let description = format!(
                "version `{}` {}",
                argv_text(&v.argv),
                match &v.expect {
                    crate::Pattern::Contains(p) => format!("contains `{p}`"),
                    crate::Pattern::Matches(p) => format!("matches `{p}`"),
                }
            );
            match run_for_output(&v.argv, cwd, env) {
                Ok(output) => {
                    let passed = v.expect.is_satisfied_by(&output);
                    let first = output.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                    AssertionResult::new(description, passed, format!("printed `{}`", short(first)))
                }
                Err(why) => AssertionResult::new(description, false, why),
            }
        }
        Assertion::ImportPath(a) => {
            let (label, expected) = match &a.expect {
                PathExpectation::Equals(p) => ("equals", p),
                PathExpectation::Under(p) => ("under", p),
            };
            let description = format!("import_path `{}` {label} `{expected}`", argv_text(&a.argv));
            match run_for_output(&a.argv, cwd, env) {
                Ok(output) => {
                    let printed = output
                        .lines()
                        .rev()
                        .map(str::trim)
                        .find(|l| !l.is_empty())
                        .unwrap_or("");
                    let resolve = |p: &Utf8Path| {
                        let full = cwd.join(p);
                        full.canonicalize_utf8().unwrap_or(full)
                    };
                    let got = resolve(Utf8Path::new(printed));
                    let want = resolve(expected);
                    let passed = !printed.is_empty()
                        && match &a.expect {
                            PathExpectation::Equals(_) => got == want,
                            PathExpectation::Under(_) => got.starts_with(&want),
                        };
                    AssertionResult::new(
                        description,
                        passed,
                        format!("printed `{}`", short(printed)),
                    )
                }
                Err(why) => AssertionResult::new(description, false, why),
            }
        }
    }
}

fn run_for_output(argv: &[String], cwd: &Utf8Path, env: &BaseEnv) -> Result<String, String> {
    let request = ExecRequest::new(argv.iter().map(OsString::from))
        .cwd(cwd)
        .envs(env.clone())
        .timeout(ASSERTION_TIMEOUT)
        .grace(Duration::from_secs(1))
        .keep_stdout(ASSERTION_OUTPUT)
        .tail_bytes(ASSERTION_OUTPUT);
    let outcome = exec::run(&request).map_err(|e| orcho_core::error_chain(&e))?;
    if !outcome.status.success() {
        return Err(format!("`{}` {}", argv_text(argv), outcome.status));
    }
    let mut text = String::from_utf8_lossy(
        outcome
            .stdout
            .kept
            .as_deref()
            .unwrap_or(&outcome.stdout.tail),
    )
    .into_owned();
    text.push('\n');
    text.push_str(&outcome.stderr.tail_lossy());
    Ok(text)
}

/// Where a command of `program` run in `cwd` with `path` as its `PATH`
/// would find it: the same lookup as the spawn itself.
fn find_program(program: &str, cwd: &Utf8Path, path: Option<&str>) -> Result<String, String> {
    let found = exec::lookup::find_program(
        OsStr::new(program),
        path.map(OsStr::new),
        Some(cwd.as_std_path()),
    )
    .and_then(|found| {
        // A name with a `/` comes back as written: relative to `cwd`, and
        // not checked yet.
        let full = cwd.as_std_path().join(found);
        exec::lookup::executable(&full).map(|()| full)
    });
    match found {
        // `components` drops the `.` of a joined `./tool`.
        Ok(full) => Ok(full
            .components()
            .collect::<std::path::PathBuf>()
            .to_string_lossy()
            .into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            Err("found, but not executable".to_owned())
        }
        Err(_) if program.contains('/') => Err("not found".to_owned()),
        Err(_) => Err("not found on PATH".to_owned()),
    }
}
