//! Verifying a checkout: its declared environments and commands run with
//! their receipts, each result with what a person needs to know of it;
//! and its readiness.

use orcho_receipts::{
    CommandName, CommandReceipt, EnvName, EnvReceipt, ReadinessSummary, ReceiptStatus,
    VerificationContract, Verifier,
    exec::{BaseEnv, CancelToken, ExitStatus},
};

use super::{Checkout, CheckoutError, Weakened};

/// What [`Checkout::verify`] says as it goes.
#[derive(Debug)]
#[non_exhaustive]
pub enum Verifying<'a> {
    /// An environment's assertions were checked (its receipt written).
    Environment(&'a EnvReceipt),
    /// A command is about to run.
    Starting(&'a CommandName),
    /// A command ran (its receipt written); not said for one that was
    /// interrupted.
    Ran(&'a CommandRun),
}

/// One declared command run, with what a person needs to know of it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CommandRun {
    /// The command.
    pub name: CommandName,
    /// Its receipt.
    pub receipt: CommandReceipt,
    /// Whether it proves the command: it passed and a test ran (or it
    /// needs none).
    pub passed: bool,
    /// It passed, but no test ran.
    pub vacuous: bool,
    /// A vacuous run under `unittest`, which finds only the test methods of
    /// `unittest.TestCase` classes: a suite written for pytest runs nothing.
    pub unittest: bool,
    /// It passed, but changed the files it is bound to while it ran, so its
    /// receipt is stale: the changes, in words (empty when they cannot be
    /// named).
    pub changed_subject: Option<String>,
    /// Which run of the command this is in one verify: `1`, or `2` when
    /// the first changed the files it is bound to ([`Checkout::verify`]
    /// runs it once more, against them, as `cargo test` writing a first
    /// `Cargo.lock` needs). A second run that changes them again is stale:
    /// the command writes them every time.
    pub attempt: u8,
    /// It failed, and the host sets toolchain variables the command was not
    /// given, which may be why.
    pub left_out: Option<LeftOutToolchain>,
}

/// Toolchain variables a command was not given (its environment neither
/// `inherit`s nor sets them), which the host sets.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeftOutToolchain {
    /// The variables.
    pub vars: Vec<String>,
    /// The environment that would `inherit` them (`default` when the
    /// command declares none).
    pub environment: String,
}

/// The most times [`Checkout::verify`] runs one command: a second run
/// when the first changed the files the command is bound to.
pub const MAX_RUNS: u8 = 2;

impl CommandRun {
    /// Whether [`Checkout::verify`] runs the command once more: this run
    /// passed but changed the files it is bound to, and it was the first.
    pub fn runs_again(&self) -> bool {
        self.changed_subject.is_some() && self.attempt < MAX_RUNS
    }
}

/// What [`Checkout::verify`] ran.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Verified {
    /// Whether every environment held and every command proved itself.
    pub passed: bool,
    /// The environments checked, in declaration order.
    pub environments: Vec<EnvReceipt>,
    /// The commands run, in the order given: the last run of each.
    pub commands: Vec<CommandRun>,
    /// The command an interruption stopped, when one did: its receipt says
    /// it was cancelled, and nothing ran after it.
    pub interrupted: Option<CommandName>,
}

/// The readiness of a checkout: its receipts classified, and what its
/// change does to weaken its own proof.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Readiness {
    /// The receipts of every declared command and environment.
    pub summary: ReadinessSummary,
    /// What weakens the change's proof.
    pub weakened: Weakened,
}

impl Readiness {
    /// Ready: every required receipt is present, and nothing that weakens
    /// the proof waits for a person.
    pub fn ready(&self) -> bool {
        self.weakened.open.is_empty()
            && self
                .summary
                .required
                .iter()
                .all(|r| r.status == ReceiptStatus::Present)
    }
}

impl Checkout {
    /// Checks the environments `names` run in (every declared one with
    /// `all_environments`), then runs the declared commands `names`, in
    /// order, writing each receipt; `say` hears each result as it comes.
    /// A command that passes but changes the files it is bound to runs once
    /// more, against them (see [`CommandRun::attempt`]); `say` hears both
    /// runs.
    /// `cancel` stops the running command's process group: its receipt
    /// records that it was cancelled, and nothing runs after it.
    ///
    /// Blocking: a host with an async runtime runs it on a blocking thread.
    ///
    /// # Errors
    ///
    /// A receipt that cannot be written, or a command the contract does
    /// not declare.
    pub fn verify(
        &self,
        verifier: &Verifier,
        names: &[CommandName],
        all_environments: bool,
        cancel: Option<&CancelToken>,
        say: &mut dyn FnMut(Verifying<'_>),
    ) -> Result<Verified, CheckoutError> {
        let contract = verifier.contract();
        let mut out = Verified {
            passed: true,
            ..Verified::default()
        };
        // The declared environments first: a command's result means
        // something only in the environment it declares.
        for env in environments_of(contract, names, all_environments) {
            let receipt = verifier.check_environment(&env)?;
            say(Verifying::Environment(&receipt));
            out.passed &= receipt.passed();
            out.environments.push(receipt);
        }
        'commands: for name in names {
            // A command that changes its own subject on its first run (a
            // first `Cargo.lock`, a lockfile `npm install` writes) runs
            // once more against what it wrote; only the last run counts.
            for attempt in 1..=MAX_RUNS {
                say(Verifying::Starting(name));
                let receipt = verifier.run_command(name, cancel)?;
                if receipt.exit == ExitStatus::Cancelled {
                    out.passed = false;
                    out.interrupted = Some(name.clone());
                    break 'commands;
                }
                let run = command_run(verifier, name, receipt, attempt);
                say(Verifying::Ran(&run));
                if run.runs_again() {
                    continue;
                }
                out.passed &= run.passed;
                out.commands.push(run);
                break;
            }
        }
        Ok(out)
    }

    /// Classifies the receipts of every command `verifier` declares, and
    /// reads what the change weakens against `against` (`HEAD` when
    /// `None`).
    ///
    /// # Errors
    ///
    /// The checkout cannot be fingerprinted, or a receipt read.
    pub fn readiness(
        &self,
        verifier: &Verifier,
        against: Option<&str>,
    ) -> Result<Readiness, CheckoutError> {
        let summary = verifier.readiness()?;
        let commands = declared(verifier.contract());
        // After the fingerprint: the same state reviews from the cache.
        let weakened = self.weakened(against, &commands, &summary.subjects);
        Ok(Readiness { summary, weakened })
    }
}

/// Every command `contract` declares, by name.
pub fn declared(contract: &VerificationContract) -> Vec<CommandName> {
    contract.commands.iter().map(|c| c.name.clone()).collect()
}

/// The commands `given` names (the required ones when it is empty), each
/// one `contract` declares: refused before anything runs, as a misspelled
/// flag is.
///
/// # Errors
///
/// A name that is not a command name, or one the contract does not
/// declare (with the nearest it does).
pub fn commands_to_verify(
    contract: &VerificationContract,
    given: &[String],
) -> Result<Vec<CommandName>, CheckoutError> {
    if given.is_empty() {
        return Ok(contract.required.clone());
    }
    let declared: Vec<&str> = contract.commands.iter().map(|c| c.name.as_str()).collect();
    given
        .iter()
        .map(|command| {
            let name = command.parse::<CommandName>()?;
            if declared.contains(&name.as_str()) {
                return Ok(name);
            }
            Err(CheckoutError::UnknownCommand {
                given: command.clone(),
                near: orcho_core::nearest(command, declared.iter().copied()).map(str::to_owned),
                declared: declared.iter().map(|d| (*d).to_owned()).collect(),
            })
        })
        .collect()
}

/// The declared environments `names` run in, each once, in declaration
/// order; with `all`, every declared environment.
pub fn environments_of(
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

/// What a person needs to know of `receipt`, the run of `name`.
fn command_run(
    verifier: &Verifier,
    name: &CommandName,
    receipt: CommandReceipt,
    attempt: u8,
) -> CommandRun {
    let vacuous = receipt.vacuous();
    let passed = receipt.passed() && !vacuous;
    let unittest = vacuous
        && receipt
            .tests
            .as_ref()
            .is_some_and(|t| t.runners.iter().any(|r| r == "unittest"));
    let changed_subject = (passed && receipt.subject_after != receipt.subject_before).then(|| {
        let contract = verifier.contract();
        let subject = contract
            .command(name.as_str())
            .and_then(|spec| contract.environment_for(spec))
            .map(|e| e.subject.clone())
            .unwrap_or_default();
        verifier
            .fingerprinter()
            .changes(
                verifier.checkout(),
                &subject,
                &receipt.subject_before,
                &receipt.subject_after,
            )
            .map(|c| c.to_string())
            .unwrap_or_default()
    });
    let left_out = if passed {
        None
    } else {
        left_out_toolchain(verifier.contract(), name)
    };
    CommandRun {
        name: name.clone(),
        receipt,
        passed,
        vacuous,
        unittest,
        changed_subject,
        attempt,
        left_out,
    }
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

/// Whether the toolchain variable of `programs` may matter to `program`
/// (its command's first word): a shell or `make` may run anything.
fn may_need(program: &str, programs: &[&str]) -> bool {
    let program = program.rsplit('/').next().unwrap_or(program);
    let program = program.trim_start_matches("./");
    matches!(program, "sh" | "bash" | "zsh" | "make" | "just" | "env")
        || programs.contains(&program)
        || programs
            .iter()
            .any(|p| program.starts_with(&format!("{p}-")))
}

/// The toolchain variables the host sets that the command `name` was not
/// given (its environment neither `inherit`s nor sets them).
fn left_out_toolchain(
    contract: &VerificationContract,
    name: &CommandName,
) -> Option<LeftOutToolchain> {
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
    let host = BaseEnv::empty().with_host_vars(relevant);
    let vars: Vec<String> = host
        .iter()
        .map(|(k, _)| k)
        .filter(|k| !given(k))
        .map(str::to_owned)
        .collect();
    if vars.is_empty() {
        return None;
    }
    Some(LeftOutToolchain {
        vars,
        environment: environment
            .map_or("default", |e| e.name.as_str())
            .to_owned(),
    })
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

    #[test]
    fn a_command_not_declared_is_refused_with_the_nearest() {
        let mut contract = VerificationContract::new();
        contract.commands.push(orcho_receipts::CommandSpec::new(
            "test".parse().unwrap(),
            ["cargo", "test"],
        ));
        let err = commands_to_verify(&contract, &["tests".to_owned()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the profile declares no verification command `tests` (did you mean `test`?)"
        );
        let names = commands_to_verify(&contract, &["test".to_owned()]).unwrap();
        assert_eq!(names, ["test".parse::<CommandName>().unwrap()]);
    }
}
