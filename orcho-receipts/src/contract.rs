//! The verification contract: what counts as proof, and where it is valid.

use std::{
    borrow::Cow,
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use camino::{Utf8Component, Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};

use crate::{
    CommandName, ContractError, ContractLocation, ContractProblem, EnvName, HumanDuration,
};

/// The timeout of a command that declares none: 30 minutes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// The name of the environment a command without `environment` runs in.
pub const DEFAULT_ENVIRONMENT: &str = "default";

/// The verification contract: what counts as proof, and where it is valid.
///
/// A contract declares
///
/// - **environments** ([`Environment`]): a working directory, environment
///   variables, dependency checkouts, the subject paths whose contents a
///   result is bound to, and [`Assertion`]s that say the environment is the
///   right one;
/// - **commands** ([`CommandSpec`]): native commands as argv (never a shell
///   string) with their variables, environment, timeout and the names of
///   secret variables whose values never reach a receipt or a log;
/// - **`required`**: the commands that form the required gate.
///
/// The types are plain serde data with snake_case keys and
/// `deny_unknown_fields`, ready to sit under `verification:` in a YAML
/// profile. Deserializing checks the shape (an unknown assertion kind is an
/// error, not a silent pass); [`VerificationContract::validate`] checks the
/// cross-references and names the offending command or assertion.
///
/// ```
/// use orcho_receipts::VerificationContract;
///
/// let yaml = r#"
/// environments:
///   - name: default
///     env: { RUST_BACKTRACE: "1" }
///     dependencies:
///       - { name: core-lib, path: ../core-lib }
///     assertions:
///       - file_exists: Cargo.toml
///       - command_exists: cargo
///       - version: { argv: [cargo, --version], expect: { contains: "cargo" } }
/// commands:
///   - name: test
///     argv: [cargo, test, --workspace]
///     timeout: 10m
///     secrets: [CRATES_TOKEN]
///   - name: lint
///     argv: [cargo, clippy]
/// required: [test]
/// "#;
/// let contract: VerificationContract = serde_yaml::from_str(yaml)?;
/// contract.validate()?;
/// assert_eq!(contract.commands.len(), 2);
/// assert!(contract.is_required("test"));
///
/// let typo = "commands:\n  - name: test\n    argv: [true]\n    timout: 5s\n";
/// assert!(serde_yaml::from_str::<VerificationContract>(typo).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// The whole verification contract.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct VerificationContract {
    /// The declared environments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub environments: Vec<Environment>,
    /// The declared commands.
    #[serde(default)]
    pub commands: Vec<CommandSpec>,
    /// The names of the commands that form the required gate.
    #[serde(default)]
    pub required: Vec<CommandName>,
    /// What a fresh worktree of the checkout needs before its commands can
    /// run (files git does not track, such as a virtual environment), and
    /// what to undo before it is removed.
    #[serde(default, skip_serializing_if = "WorktreeSetup::is_empty")]
    pub worktree: WorktreeSetup,
    /// Whether `orcho verify` attaches signed attestations of a clean
    /// checkout's receipts to its commit (as `orcho verify --attest` does).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub attest: bool,
}

/// What a run's worktree needs that git does not give it.
///
/// ```yaml
/// worktree:
///   setup:
///     - link: .venv          # the checkout's .venv, linked in
///     - copy: .env.local     # a copy of a file (or directory)
///     - run: [npm, ci]       # a command, run in the worktree
///   teardown:
///     - run: [docker, compose, down]
/// ```
///
/// `link` and `copy` take paths relative to the checkout root, which git
/// must ignore (in the worktree they would otherwise become part of the
/// run's diff). A linked directory is made as a directory of links to its
/// entries, so that a directory-only ignore pattern (`.venv/`) matches it.
/// Setup runs before the first phase, again after a crash (so each step
/// must be safe to repeat); teardown runs before `orcho gc` removes the
/// worktree.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct WorktreeSetup {
    /// Steps before the first phase.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<SetupStep>,
    /// Steps before the worktree is removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub teardown: Vec<SetupStep>,
}

impl WorktreeSetup {
    /// Whether nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.setup.is_empty() && self.teardown.is_empty()
    }

    fn validate(&self) -> Result<(), ContractError> {
        for step in self.setup.iter().chain(&self.teardown) {
            let at = || ContractLocation::Worktree;
            match step {
                SetupStep::Link(path) | SetupStep::Copy(path) => {
                    check_inside(path).map_err(|p| ContractError::new(at(), p))?;
                }
                SetupStep::Run(argv) if argv.is_empty() || argv[0].is_empty() => {
                    return Err(ContractError::new(at(), ContractProblem::EmptyValue("run")));
                }
                SetupStep::Run(_) => {}
            }
        }
        Ok(())
    }
}

/// One step of a worktree's setup or teardown: a mapping with exactly one
/// of `link`, `copy` or `run`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "StepRepr", into = "StepRepr")]
#[non_exhaustive]
pub enum SetupStep {
    /// Links the checkout's file or directory at this path into the
    /// worktree.
    Link(Utf8PathBuf),
    /// Copies the checkout's file or directory at this path into the
    /// worktree.
    Copy(Utf8PathBuf),
    /// Runs this command (argv, no shell) in the worktree.
    Run(Vec<String>),
}

/// How a [`SetupStep`] is written.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StepRepr {
    link: Option<Utf8PathBuf>,
    copy: Option<Utf8PathBuf>,
    run: Option<Vec<String>>,
}

impl TryFrom<StepRepr> for SetupStep {
    type Error = String;

    fn try_from(r: StepRepr) -> Result<Self, Self::Error> {
        match (r.link, r.copy, r.run) {
            (Some(p), None, None) => Ok(Self::Link(p)),
            (None, Some(p), None) => Ok(Self::Copy(p)),
            (None, None, Some(argv)) => Ok(Self::Run(argv)),
            _ => Err("a step has exactly one of `link`, `copy` or `run`".to_owned()),
        }
    }
}

impl From<SetupStep> for StepRepr {
    fn from(step: SetupStep) -> Self {
        match step {
            SetupStep::Link(p) => Self {
                link: Some(p),
                ..Self::default()
            },
            SetupStep::Copy(p) => Self {
                copy: Some(p),
                ..Self::default()
            },
            SetupStep::Run(argv) => Self {
                run: Some(argv),
                ..Self::default()
            },
        }
    }
}

impl VerificationContract {
    /// An empty contract.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an environment.
    #[must_use]
    pub fn with_environment(mut self, environment: Environment) -> Self {
        self.environments.push(environment);
        self
    }

    /// Adds a command.
    #[must_use]
    pub fn with_command(mut self, command: CommandSpec) -> Self {
        self.commands.push(command);
        self
    }

    /// Adds a command to the required gate.
    #[must_use]
    pub fn with_required(mut self, name: CommandName) -> Self {
        self.required.push(name);
        self
    }

    /// The command called `name`.
    pub fn command(&self, name: &str) -> Option<&CommandSpec> {
        self.commands.iter().find(|c| c.name.as_str() == name)
    }

    /// The environment called `name`.
    pub fn environment(&self, name: &str) -> Option<&Environment> {
        self.environments.iter().find(|e| e.name.as_str() == name)
    }

    /// Whether `name` is in the required gate.
    pub fn is_required(&self, name: &str) -> bool {
        self.required.iter().any(|r| r.as_str() == name)
    }

    /// The environment `command` runs in: the one it names, else the one
    /// called [`DEFAULT_ENVIRONMENT`], else [`Environment::implicit`] (the
    /// checkout root, the whole checkout, nothing else).
    ///
    /// Returns `None` only when the command names an environment that is not
    /// declared, which [`validate`](Self::validate) refuses.
    pub fn environment_for(&self, command: &CommandSpec) -> Option<Cow<'_, Environment>> {
        match &command.environment {
            Some(name) => self.environment(name.as_str()).map(Cow::Borrowed),
            None => Some(
                self.environment(DEFAULT_ENVIRONMENT)
                    .map_or_else(|| Cow::Owned(Environment::implicit()), Cow::Borrowed),
            ),
        }
    }

    /// Checks the contract as a whole: unique names, declared references,
    /// non-empty argv, valid variable names, secrets without values, paths
    /// that stay inside the checkout, non-zero timeouts.
    ///
    /// # Errors
    ///
    /// The first problem found, as a [`ContractError`] naming the command,
    /// environment or assertion.
    pub fn validate(&self) -> Result<(), ContractError> {
        self.worktree.validate()?;
        let mut seen = BTreeSet::new();
        for env in &self.environments {
            let at = || ContractLocation::Environment(env.name.to_string());
            if !seen.insert(env.name.as_str()) {
                return Err(ContractError::new(
                    at(),
                    ContractProblem::Duplicate(env.name.to_string()),
                ));
            }
            env.validate()?;
        }
        let mut seen = BTreeSet::new();
        for command in &self.commands {
            let at = || ContractLocation::Command(command.name.to_string());
            if !seen.insert(command.name.as_str()) {
                return Err(ContractError::new(
                    at(),
                    ContractProblem::Duplicate(command.name.to_string()),
                ));
            }
            if let Some(env) = &command.environment
                && self.environment(env.as_str()).is_none()
            {
                return Err(ContractError::new(
                    at(),
                    ContractProblem::UnknownEnvironment(env.to_string()),
                ));
            }
            command.validate()?;
        }
        let mut seen = BTreeSet::new();
        for name in &self.required {
            if self.command(name.as_str()).is_none() {
                return Err(ContractError::new(
                    ContractLocation::Required,
                    ContractProblem::UnknownCommand(name.to_string()),
                ));
            }
            if !seen.insert(name.as_str()) {
                return Err(ContractError::new(
                    ContractLocation::Required,
                    ContractProblem::Duplicate(name.to_string()),
                ));
            }
        }
        Ok(())
    }
}

fn default_working_dir() -> Utf8PathBuf {
    Utf8PathBuf::from(".")
}

fn is_default_working_dir(dir: &Utf8PathBuf) -> bool {
    dir.as_str() == "."
}

/// A verification environment: where, and against what, a result is valid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Environment {
    /// Its name.
    pub name: EnvName,
    /// The working directory of its commands, relative to the checkout root
    /// (default `.`).
    #[serde(
        default = "default_working_dir",
        skip_serializing_if = "is_default_working_dir"
    )]
    pub working_dir: Utf8PathBuf,
    /// Variables set for its commands (a command's own `env` wins).
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "orcho_core::unique_keys::map"
    )]
    pub env: BTreeMap<String, String>,
    /// Variables of the host's environment a result depends on (such as
    /// `JAVA_HOME`): passed through to its commands and bound into their
    /// receipts, which go stale when one changes. Nothing else of the
    /// host's environment is bound: `PATH`, `HOME`, `TERM` or `LANG` may
    /// change without staling a receipt (the program `PATH` resolves is
    /// bound instead).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inherit: Vec<String>,
    /// Other checkouts a result depends on, each fingerprinted on its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependencies: Vec<Dependency>,
    /// The subject: paths relative to the checkout root whose files a result
    /// is bound to. Empty means the whole checkout.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subject: Vec<Utf8PathBuf>,
    /// Checks that this is the right environment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assertions: Vec<Assertion>,
}

impl Environment {
    /// An environment called `name` at the checkout root, bound to the whole
    /// checkout, with nothing else declared.
    pub fn new(name: EnvName) -> Self {
        Self {
            name,
            working_dir: default_working_dir(),
            env: BTreeMap::new(),
            inherit: Vec::new(),
            dependencies: Vec::new(),
            subject: Vec::new(),
            assertions: Vec::new(),
        }
    }

    /// The environment of a command that names none when the contract
    /// declares no [`DEFAULT_ENVIRONMENT`].
    pub fn implicit() -> Self {
        Self::new(EnvName::new_unchecked(DEFAULT_ENVIRONMENT))
    }

    /// Sets a variable.
    #[must_use]
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// Binds a variable of the host's environment (see
    /// [`inherit`](Self::inherit)).
    #[must_use]
    pub fn with_inherit(mut self, name: impl Into<String>) -> Self {
        self.inherit.push(name.into());
        self
    }

    /// Adds a dependency checkout.
    #[must_use]
    pub fn with_dependency(mut self, dependency: Dependency) -> Self {
        self.dependencies.push(dependency);
        self
    }

    /// Adds a subject path.
    #[must_use]
    pub fn with_subject(mut self, path: impl Into<Utf8PathBuf>) -> Self {
        self.subject.push(path.into());
        self
    }

    /// Adds an assertion.
    #[must_use]
    pub fn with_assertion(mut self, assertion: Assertion) -> Self {
        self.assertions.push(assertion);
        self
    }

    fn validate(&self) -> Result<(), ContractError> {
        let at = || ContractLocation::Environment(self.name.to_string());
        check_inside(&self.working_dir).map_err(|p| ContractError::new(at(), p))?;
        for path in &self.subject {
            check_inside(path).map_err(|p| ContractError::new(at(), p))?;
        }
        for key in self.env.keys().chain(&self.inherit) {
            check_var(key).map_err(|p| ContractError::new(at(), p))?;
        }
        let mut seen = BTreeSet::new();
        for dep in &self.dependencies {
            if !seen.insert(dep.name.as_str()) {
                return Err(ContractError::new(
                    at(),
                    ContractProblem::Duplicate(dep.name.to_string()),
                ));
            }
            if dep.path.as_str().is_empty() {
                return Err(ContractError::new(
                    at(),
                    ContractProblem::EmptyValue("a dependency path"),
                ));
            }
        }
        for (i, assertion) in self.assertions.iter().enumerate() {
            assertion.validate().map_err(|p| {
                ContractError::new(
                    ContractLocation::Assertion {
                        environment: self.name.to_string(),
                        index: i + 1,
                        kind: assertion.kind(),
                    },
                    p,
                )
            })?;
        }
        Ok(())
    }
}

impl Environment {
    orcho_core::setters! {
        /// Sets the working directory (relative to the checkout root).
        pub fn with_working_dir(dir: impl Into<Utf8PathBuf>) => working_dir;
    }
}

/// A dependency checkout: another directory a result depends on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Dependency {
    /// Its name, used in stale reasons ("dependency `core-lib` changed").
    pub name: EnvName,
    /// Its path: absolute, or relative to the checkout root.
    pub path: Utf8PathBuf,
}

impl Dependency {
    /// A dependency called `name` at `path`.
    pub fn new(name: EnvName, path: impl Into<Utf8PathBuf>) -> Self {
        Self {
            name,
            path: path.into(),
        }
    }
}

/// A check that an environment is the right one.
///
/// Externally tagged: in YAML each assertion is a one-key map such as
/// `file_exists: Cargo.toml`. An unknown kind fails to load. Relative paths
/// are resolved against the environment's working directory; argv runs there
/// with the environment's variables.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Assertion {
    /// A regular file (or a symlink to one) exists.
    FileExists(Utf8PathBuf),
    /// Anything exists at the path.
    PathExists(Utf8PathBuf),
    /// A program of this name is found on `PATH` (or the path, if it
    /// contains `/`, is an executable file).
    CommandExists(String),
    /// A command's output contains or matches a pattern.
    Version(VersionAssertion),
    /// A command prints a path that equals, or lies under, a given path.
    ImportPath(ImportPathAssertion),
}

impl Assertion {
    /// The snake_case kind, as written in YAML.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::FileExists(_) => "file_exists",
            Self::PathExists(_) => "path_exists",
            Self::CommandExists(_) => "command_exists",
            Self::Version(_) => "version",
            Self::ImportPath(_) => "import_path",
        }
    }

    fn validate(&self) -> Result<(), ContractProblem> {
        match self {
            Self::FileExists(p) | Self::PathExists(p) if p.as_str().is_empty() => {
                Err(ContractProblem::EmptyValue("the path"))
            }
            Self::CommandExists(c) if c.is_empty() => {
                Err(ContractProblem::EmptyValue("the command name"))
            }
            Self::FileExists(_) | Self::PathExists(_) | Self::CommandExists(_) => Ok(()),
            Self::Version(v) => {
                check_argv(&v.argv)?;
                match &v.expect {
                    Pattern::Contains(p) | Pattern::Matches(p) if p.is_empty() => {
                        Err(ContractProblem::EmptyValue("the pattern"))
                    }
                    Pattern::Contains(_) | Pattern::Matches(_) => Ok(()),
                }
            }
            Self::ImportPath(a) => {
                check_argv(&a.argv)?;
                match &a.expect {
                    PathExpectation::Equals(p) | PathExpectation::Under(p)
                        if p.as_str().is_empty() =>
                    {
                        Err(ContractProblem::EmptyValue("the expected path"))
                    }
                    PathExpectation::Equals(_) | PathExpectation::Under(_) => Ok(()),
                }
            }
        }
    }
}

/// The `version` assertion: run `argv`, then look for `expect` in what it
/// printed (standard output and standard error together).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct VersionAssertion {
    /// The command to run.
    pub argv: Vec<String>,
    /// What its output must contain or match.
    pub expect: Pattern,
}

impl VersionAssertion {
    /// A version assertion.
    pub fn new(argv: Vec<String>, expect: Pattern) -> Self {
        Self { argv, expect }
    }
}

/// What a command's output must contain or match.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Pattern {
    /// The output contains this text.
    Contains(String),
    /// A line of the output (trimmed) matches this wildcard pattern, in which
    /// `*` matches any run of characters and `?` any one character.
    Matches(String),
}

impl Pattern {
    /// Whether `output` satisfies the pattern.
    ///
    /// ```
    /// use orcho_receipts::Pattern;
    ///
    /// assert!(Pattern::Matches("Python 3.12.*".into()).is_satisfied_by("Python 3.12.4\n"));
    /// assert!(!Pattern::Matches("Python 3.12.*".into()).is_satisfied_by("Python 3.11.9\n"));
    /// assert!(Pattern::Contains("3.12".into()).is_satisfied_by("Python 3.12.4\n"));
    /// ```
    pub fn is_satisfied_by(&self, output: &str) -> bool {
        match self {
            Self::Contains(text) => output.contains(text.as_str()),
            Self::Matches(pattern) => output
                .lines()
                .any(|line| wildcard(pattern.as_bytes(), line.trim().as_bytes())),
        }
    }
}

/// Matches `text` against a pattern with `*` (any run) and `?` (any one
/// byte), iteratively, in O(pattern × text) at worst.
pub(crate) fn wildcard(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && (pattern[p] == b'?' || pattern[p] == text[t]) {
            p += 1;
            t += 1;
        } else if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

/// The `import_path` assertion: run `argv`; the last non-empty line it
/// prints is a path that must equal, or lie under, the expected path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ImportPathAssertion {
    /// The command to run, for example
    /// `[python, -c, "import mylib; print(mylib.__file__)"]`.
    pub argv: Vec<String>,
    /// Where the printed path must be.
    pub expect: PathExpectation,
}

impl ImportPathAssertion {
    /// An import-path assertion.
    pub fn new(argv: Vec<String>, expect: PathExpectation) -> Self {
        Self { argv, expect }
    }
}

/// Where a printed path must be. Relative expected paths are resolved against
/// the working directory; both sides are canonicalized when they exist.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathExpectation {
    /// Exactly this path.
    Equals(Utf8PathBuf),
    /// This path or anything below it.
    Under(Utf8PathBuf),
}

/// Serde for enums whose variants all hold one value, in the externally
/// tagged shape: a map with exactly one key, the snake_case variant name. Written
/// by hand because the YAML crate only reads that shape from YAML tags.
macro_rules! single_key_enum {
    ($ty:ident { $($variant:ident = $key:literal),+ $(,)? }) => {
        impl Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let mut map = serializer.serialize_map(Some(1))?;
                match self {
                    $(Self::$variant(value) => map.serialize_entry($key, value)?,)+
                }
                map.end()
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct Visit;
                impl<'de> serde::de::Visitor<'de> for Visit {
                    type Value = $ty;

                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str(concat!("a map with one key, one of ", $("`", $key, "` "),+))
                    }

                    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<$ty, A::Error> {
                        use serde::de::Error;
                        let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? else {
                            return Err(A::Error::invalid_length(0, &self));
                        };
                        let value = match key.as_ref() {
                            $($key => $ty::$variant(map.next_value()?),)+
                            other => return Err(A::Error::unknown_variant(other, &[$($key),+])),
                        };
                        if map.next_key::<serde::de::IgnoredAny>()?.is_some() {
                            return Err(A::Error::invalid_length(2, &self));
                        }
                        Ok(value)
                    }
                }
                deserializer.deserialize_map(Visit)
            }
        }
    };
}

single_key_enum!(Assertion {
    FileExists = "file_exists",
    PathExists = "path_exists",
    CommandExists = "command_exists",
    Version = "version",
    ImportPath = "import_path",
});
single_key_enum!(Pattern {
    Contains = "contains",
    Matches = "matches",
});
single_key_enum!(PathExpectation {
    Equals = "equals",
    Under = "under",
});

/// A declared verification command.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct CommandSpec {
    /// Its name; the receipt store keeps its receipts under this name.
    pub name: CommandName,
    /// The program and its arguments. Never a shell string: nothing is
    /// interpolated.
    pub argv: Vec<String>,
    /// Variables set for it, over its environment's.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "orcho_core::unique_keys::map"
    )]
    pub env: BTreeMap<String, String>,
    /// The environment it runs in (see
    /// [`VerificationContract::environment_for`]).
    pub environment: Option<EnvName>,
    /// How long it may run (default [`DEFAULT_TIMEOUT`]).
    pub timeout: Option<HumanDuration>,
    /// Names of variables passed through from the host whose values are
    /// secret: they are never written to a receipt, and are redacted from
    /// the captured output and logs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<String>,
    /// Whether passing with no test run proves it (default `false`: a
    /// command whose test runner reported zero tests is
    /// [`Vacuous`](crate::ReceiptStatus::Vacuous), not present). For a
    /// command that checks rather than tests (a linter, a build).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_empty: bool,
}

impl CommandSpec {
    /// A command called `name` running `argv`.
    pub fn new<S: Into<String>>(name: CommandName, argv: impl IntoIterator<Item = S>) -> Self {
        Self {
            name,
            argv: argv.into_iter().map(Into::into).collect(),
            env: BTreeMap::new(),
            environment: None,
            timeout: None,
            secrets: Vec::new(),
            allow_empty: false,
        }
    }

    /// Sets a variable.
    #[must_use]
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// Sets its timeout.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(HumanDuration::new(timeout));
        self
    }

    /// Declares a secret variable.
    #[must_use]
    pub fn with_secret(mut self, name: impl Into<String>) -> Self {
        self.secrets.push(name.into());
        self
    }

    /// The effective timeout.
    pub fn effective_timeout(&self) -> Duration {
        self.timeout.map_or(DEFAULT_TIMEOUT, HumanDuration::get)
    }

    fn validate(&self) -> Result<(), ContractError> {
        let at = || ContractLocation::Command(self.name.to_string());
        check_argv(&self.argv).map_err(|p| ContractError::new(at(), p))?;
        for key in self.env.keys() {
            check_var(key).map_err(|p| ContractError::new(at(), p))?;
        }
        for secret in &self.secrets {
            check_var(secret).map_err(|p| ContractError::new(at(), p))?;
            if self.env.contains_key(secret) {
                return Err(ContractError::new(
                    at(),
                    ContractProblem::SecretWithValue(secret.clone()),
                ));
            }
        }
        if self.timeout.is_some_and(|t| t.get().is_zero()) {
            return Err(ContractError::new(at(), ContractProblem::ZeroTimeout));
        }
        Ok(())
    }
}

impl CommandSpec {
    orcho_core::setters! {
        /// Runs it in the environment `name`.
        pub fn with_environment(name: Some(EnvName)) => environment;
        /// Lets it pass with no test run.
        pub fn with_allow_empty(allow: bool) => allow_empty;
    }
}

fn check_argv(argv: &[String]) -> Result<(), ContractProblem> {
    match argv.first() {
        Some(program) if !program.is_empty() => Ok(()),
        _ => Err(ContractProblem::EmptyArgv),
    }
}

fn check_var(name: &str) -> Result<(), ContractProblem> {
    if name.is_empty() || name.contains(['=', '\0']) {
        return Err(ContractProblem::BadVariableName(name.to_owned()));
    }
    if crate::store::is_key_var(name) {
        return Err(ContractProblem::ReservedVariable(name.to_owned()));
    }
    Ok(())
}

fn check_inside(path: &Utf8Path) -> Result<(), ContractProblem> {
    let escapes = path.as_str().is_empty()
        || path.components().any(|c| {
            matches!(
                c,
                Utf8Component::ParentDir | Utf8Component::RootDir | Utf8Component::Prefix(_)
            )
        });
    if escapes {
        return Err(ContractProblem::PathEscapes(path.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(yaml: &str) -> VerificationContract {
        serde_yaml::from_str(yaml).unwrap()
    }

    fn problem(yaml: &str) -> String {
        load(yaml).validate().unwrap_err().to_string()
    }

    #[test]
    fn validation_names_the_offender() {
        insta::assert_snapshot!(problem("commands:\n  - {name: a, argv: []}\n"), @"command `a`: argv is empty or its program is an empty string");
        insta::assert_snapshot!(problem("commands:\n  - {name: a, argv: [x]}\n  - {name: a, argv: [y]}\n"), @"command `a`: `a` is declared more than once");
        insta::assert_snapshot!(problem("commands:\n  - {name: a, argv: [x], environment: ci}\n"), @"command `a`: environment `ci` is not declared");
        insta::assert_snapshot!(problem("commands:\n  - {name: a, argv: [x], env: {TOKEN: x}, secrets: [TOKEN]}\n"), @"command `a`: `TOKEN` is a secret but also has a value in `env`, which would be recorded");
        insta::assert_snapshot!(problem("commands:\n  - {name: a, argv: [x], timeout: 0s}\n"), @"command `a`: the timeout is zero");
        insta::assert_snapshot!(problem("commands:\n  - {name: a, argv: [x], env: {\"A=B\": x}}\n"), @"command `a`: `A=B` is not a valid environment variable name");
        insta::assert_snapshot!(problem("environments:\n  - name: e\n    assertions:\n      - file_exists: a\n      - version: {argv: [], expect: {contains: x}}\n"), @"environment `e`, assertion 2 (`version`): argv is empty or its program is an empty string");
        insta::assert_snapshot!(problem("environments:\n  - name: e\n    assertions:\n      - import_path: {argv: [py], expect: {under: \"\"}}\n"), @"environment `e`, assertion 1 (`import_path`): the expected path is empty");
        insta::assert_snapshot!(problem("environments:\n  - {name: e, subject: [../other]}\n"), @"environment `e`: path `../other` must be relative and stay inside the checkout");
        insta::assert_snapshot!(problem("environments:\n  - {name: e, working_dir: /tmp}\n"), @"environment `e`: path `/tmp` must be relative and stay inside the checkout");
        insta::assert_snapshot!(problem("environments:\n  - name: e\n    dependencies: [{name: d, path: a}, {name: d, path: b}]\n"), @"environment `e`: `d` is declared more than once");
        insta::assert_snapshot!(problem("environments:\n  - {name: e}\n  - {name: e}\n"), @"environment `e`: `e` is declared more than once");
        insta::assert_snapshot!(problem("commands:\n  - {name: a, argv: [x]}\nrequired: [a, a]\n"), @"`required`: `a` is declared more than once");
        insta::assert_snapshot!(problem("required: [a]\n"), @"`required`: command `a` is not declared");
    }

    #[test]
    fn shape_errors_are_load_errors() {
        for bad in [
            "environments:\n  - name: e\n    assertions:\n      - python_version: \"3.12\"\n",
            "commands:\n  - {name: a, argv: [x], timeout: soon}\n",
            "commands:\n  - {name: a, argv: \"cargo test\"}\n",
            "commands:\n  - {name: ../a, argv: [x]}\n",
            "verification: {}\n",
        ] {
            assert!(
                serde_yaml::from_str::<VerificationContract>(bad).is_err(),
                "{bad}"
            );
        }
        let err = serde_yaml::from_str::<VerificationContract>(
            "environments:\n  - name: e\n    assertions:\n      - python_version: \"3.12\"\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("unknown variant `python_version`"));
    }

    #[test]
    fn round_trips_through_yaml_and_json() {
        let contract = VerificationContract::new()
            .with_environment(
                Environment::new("ci".parse().unwrap())
                    .with_working_dir("crates/x")
                    .with_env("LANG", "C")
                    .with_subject("crates/x")
                    .with_dependency(Dependency::new("lib".parse().unwrap(), "../lib"))
                    .with_assertion(Assertion::FileExists("Cargo.toml".into()))
                    .with_assertion(Assertion::Version(VersionAssertion::new(
                        vec!["rustc".into(), "-V".into()],
                        Pattern::Matches("rustc 1.*".into()),
                    )))
                    .with_assertion(Assertion::ImportPath(ImportPathAssertion::new(
                        vec!["python3".into()],
                        PathExpectation::Under("vendor".into()),
                    ))),
            )
            .with_command(
                CommandSpec::new("test".parse().unwrap(), ["cargo", "test"])
                    .with_environment("ci".parse().unwrap())
                    .with_timeout(Duration::from_secs(90))
                    .with_secret("TOKEN"),
            )
            .with_required("test".parse().unwrap());
        contract.validate().unwrap();
        let yaml = serde_yaml::to_string(&contract).unwrap();
        assert!(yaml.contains("timeout: 1m30s"), "{yaml}");
        assert_eq!(load(&yaml), contract);
        let json = serde_json::to_string(&contract).unwrap();
        assert_eq!(
            serde_json::from_str::<VerificationContract>(&json).unwrap(),
            contract
        );
    }

    #[test]
    fn default_environment_resolution() {
        let c = load("commands:\n  - {name: a, argv: [x]}\n");
        let cmd = c.command("a").unwrap();
        assert_eq!(c.environment_for(cmd).unwrap().name.as_str(), "default");
        let c = load(
            "environments:\n  - {name: default, working_dir: sub}\ncommands:\n  - {name: a, argv: [x]}\n",
        );
        assert_eq!(
            c.environment_for(c.command("a").unwrap())
                .unwrap()
                .working_dir,
            "sub"
        );
    }

    #[test]
    fn wildcards() {
        assert!(wildcard(b"a*c", b"abbbc"));
        assert!(wildcard(b"*", b""));
        assert!(wildcard(b"a?c", b"abc"));
        assert!(!wildcard(b"a?c", b"ac"));
        assert!(!wildcard(b"a*d", b"abc"));
        assert!(wildcard(b"*.*.*", b"1.2.3"));
    }
}
