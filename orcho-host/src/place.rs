//! Where a command works: the checkout, its store, and the profile it
//! loads.
//!
//! Without `--checkout`, the checkout is found as cargo finds a package:
//! from the current directory upwards, the first directory with an
//! `orcho.yaml`, stopping at the repository's root (the directory with
//! `.git`); with no `orcho.yaml` on the way, the repository's root; outside
//! a repository, the current directory. The store is `.orcho` in the
//! checkout unless `--store` (or `ORCHO_STORE`) says otherwise: another
//! directory, or a PostgreSQL URL that a team shares (receipts, worktrees
//! and phase logs then stay in `.orcho` in the checkout).

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{RunPlan, gates::GateRegistry, profile::Profile};

use crate::error::CliError;

pub use orcho::profile::PROFILE_FILE;

/// Where a command works (the checkout and its store), who acts through
/// it, and how it prints.
#[derive(Debug, Clone)]
pub struct Place {
    /// The checkout: the root of its git work tree.
    pub checkout: Utf8PathBuf,
    /// This machine's directory of the store: the whole store, or, with a
    /// shared store, its receipts, worktrees and phase logs.
    pub store: Utf8PathBuf,
    /// The database the runs and decisions are kept in, when the store is
    /// shared.
    pub shared: Option<orcho_pg::PgStorage>,
    /// The store as it was named (`--store` or `ORCHO_STORE`), for another
    /// `orcho` started on the same store.
    pub store_named: Option<Utf8PathBuf>,
    /// Who acts through this place.
    pub actor: Actor,
    /// How what a command does is said.
    pub voice: Voice,
}

/// Who acts through a place: whose name decisions are recorded under, and
/// the receipt key receipts are sealed with.
#[derive(Debug, Clone, Default)]
pub struct Actor {
    /// Who decides, when not this process's user (the web inbox's token
    /// holders).
    pub name: Option<String>,
    /// The receipt key an embedding host gave; `None` reads the caller's
    /// (see [`key`](crate::key)).
    pub receipt_key: Option<orcho::receipts::ReceiptKey>,
}

impl Actor {
    /// A named actor: decisions are recorded as `name`'s.
    pub fn named(name: impl Into<String>) -> Self {
        Self {
            name: Some(name.into()),
            receipt_key: None,
        }
    }

    /// The name decisions are recorded under: the actor's, else this
    /// process's user at this machine.
    pub fn name(&self) -> String {
        self.name.clone().unwrap_or_else(decider)
    }
}

/// How a command says what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Voice {
    /// Progress on standard error, results on standard output as they
    /// come.
    Text,
    /// One JSON document at the end: nothing said as it goes.
    Json,
    /// Nothing said at all: a server answering a request.
    Quiet,
}

impl Voice {
    /// Text, or one JSON document (`--json`).
    pub fn of(json: bool) -> Self {
        if json { Self::Json } else { Self::Text }
    }

    /// Whether what is said goes to a terminal as it comes.
    pub fn speaks(self) -> bool {
        self == Self::Text
    }

    /// Whether the output is one JSON document (or nothing).
    pub fn is_json(self) -> bool {
        !self.speaks()
    }
}

/// A loaded profile: how it is named again later (a file by its absolute
/// path, a built-in as `builtin:<name>`), and its plan.
pub type Loaded = (String, RunPlan);

impl Place {
    /// `checkout` (default: found from the current directory) and `store`
    /// (default: `.orcho` in the checkout). Nothing is created.
    ///
    /// # Errors
    ///
    /// A `checkout` that is not a directory, or a current directory that
    /// cannot be read.
    pub fn new(
        checkout: Option<Utf8PathBuf>,
        store: Option<Utf8PathBuf>,
        json: bool,
    ) -> Result<Self, CliError> {
        let cwd = Utf8PathBuf::try_from(std::env::current_dir()?)?;
        let checkout = match checkout {
            Some(dir) => {
                let dir = absolute(&cwd, &dir);
                if !dir.is_dir() {
                    return Err(
                        CliError::msg(format!("the checkout `{dir}` is not a directory"))
                            .with_hint("`--checkout` takes the directory of a git repository"),
                    );
                }
                dir
            }
            None => discover(&cwd),
        };
        let local = || checkout.join(orcho::core::layout::DEFAULT_STORE_DIR);
        let store_named = store.clone();
        let (store, shared) = match store {
            Some(url) if orcho_pg::is_url(url.as_str()) => {
                // What the team sees a run come from: this machine and
                // checkout, of the repository it is a clone of.
                let origin = orcho_pg::Origin::new(machine(), checkout.as_str())
                    .with_repository(orcho::checkout::repository_url(&checkout));
                let shared = orcho_pg::PgStorage::open(url.as_str())
                    .map_err(|e| {
                        CliError::msg(orcho::core::error_chain(&e)).with_hint(
                            "a shared store is `postgres://USER:PASSWORD@HOST:PORT/DATABASE` \
                             (with `?sslmode=require` for TLS); without `--store` and \
                             ORCHO_STORE the store is `.orcho` in the checkout",
                        )
                    })?
                    .for_origin(origin);
                (local(), Some(shared))
            }
            Some(other) if looks_like_url(other.as_str()) => {
                return Err(CliError::usage(format!(
                    "the store `{}` is a URL, and only PostgreSQL URLs name a store",
                    orcho_pg::redact_url(other.as_str())
                ))
                .with_hint(
                    "write `postgres://USER:PASSWORD@HOST:PORT/DATABASE` (or `postgresql://`), or \
                     a directory",
                ));
            }
            Some(dir) => (absolute(&cwd, &dir), None),
            None => (local(), None),
        };
        Ok(Self {
            checkout,
            store,
            shared,
            store_named,
            actor: Actor::default(),
            voice: Voice::of(json),
        })
    }

    /// Loads `profile` (a file, relative to the current directory, or
    /// `builtin:<name>`), else the checkout's `orcho.yaml`, else the
    /// `default` built-in, saying so on standard error.
    pub fn load_profile(&self, profile: Option<&str>) -> Result<Loaded, CliError> {
        let spec = match profile {
            Some(p) => spec_of(p)?,
            None => self.profile_spec()?,
        };
        self.progress(&format!("profile: {spec}"));
        let (loaded, warnings) = self.load_spec_warned(&spec)?;
        // Allowed, but probably not meant: said where the profile is.
        for warning in warnings {
            self.progress(&format!("warning: {warning}"));
        }
        Ok(loaded)
    }

    /// Loads the profile `spec` names (as [`load`] does), knowing which file
    /// of the checkout it is: a run's delivery gate compares that file with
    /// the run's base.
    pub fn load_spec(&self, spec: &str) -> Result<Loaded, CliError> {
        self.load_spec_warned(spec).map(|(loaded, _)| loaded)
    }

    /// [`load_spec`](Self::load_spec), with the profile's warnings.
    fn load_spec_warned(&self, spec: &str) -> Result<(Loaded, Vec<String>), CliError> {
        let ((name, plan), warnings) = load_warned(spec)?;
        let inside = (!spec.starts_with("builtin:"))
            .then(|| {
                let real = |p: &Utf8Path| p.canonicalize_utf8().unwrap_or_else(|_| p.to_owned());
                real(Utf8Path::new(spec))
                    .strip_prefix(real(&self.checkout))
                    .ok()
                    .map(Utf8Path::to_owned)
            })
            .flatten();
        let plan = match inside {
            Some(file) => plan.with_profile_file(file),
            None => plan,
        };
        Ok(((name, plan), warnings))
    }

    /// How the checkout's profile is named: its `orcho.yaml`, else the
    /// `default` built-in, saying so on standard error.
    pub fn profile_spec(&self) -> Result<String, CliError> {
        let own = self.checkout.join(PROFILE_FILE);
        if own.is_file() {
            return Ok(own.to_string());
        }
        self.progress(&format!(
            "note: no {PROFILE_FILE} in {} or above it; using builtin:default, which runs \
             `cargo test` (`orcho init` writes an {PROFILE_FILE} for this project)",
            self.checkout
        ));
        Ok("builtin:default".to_owned())
    }

    /// Progress on standard error, unless the output is one JSON document.
    pub fn progress(&self, line: &str) {
        if self.voice.speaks() {
            crate::output::err(line);
        }
    }

    /// A result said as it comes, on standard output, unless the output is
    /// one JSON document (which says it at the end).
    pub fn say(&self, line: &str) {
        if self.voice.speaks() {
            crate::output::out(line);
        }
    }

    /// The place's store: its runs, read and decided without a plan.
    pub fn store(&self) -> orcho::Store {
        match &self.shared {
            Some(shared) => orcho::Store::new(std::sync::Arc::new(shared.clone()), &self.store),
            None => orcho::Store::open(&self.store),
        }
        .with_decider(self.actor.name())
    }

    /// Where the runs are kept: the database of a shared store, else the
    /// store directory.
    pub fn storage(&self) -> std::sync::Arc<dyn orcho::core::storage::Storage> {
        match &self.shared {
            Some(shared) => std::sync::Arc::new(shared.clone()),
            None => std::sync::Arc::new(orcho::core::storage::FsStorage::new(&self.store)),
        }
    }

    /// The store as a team sees it: with a shared store, every machine's
    /// and checkout's runs (for the inbox); otherwise the
    /// place's store.
    pub fn team_store(&self) -> orcho::Store {
        match &self.shared {
            Some(shared) => orcho::Store::new(std::sync::Arc::new(shared.team()), &self.store)
                .with_decider(self.actor.name()),
            None => self.store(),
        }
    }

    /// The place's store, signing and checking receipts with the host's
    /// receipt key.
    pub fn keyed_store(&self) -> Result<orcho::Store, CliError> {
        Ok(self
            .store()
            .with_receipt_key(Some(crate::key::receipt_key(self)?)))
    }
}

/// The gates a profile may use: the built-ins, and `llm_judge` with the
/// `llm` feature.
pub fn registry() -> GateRegistry {
    let builder = GateRegistry::builtins_builder();
    #[cfg(feature = "llm")]
    let builder = match orcho_llm::register(builder) {
        Ok(builder) => builder,
        // Nothing else registers `llm_judge`.
        Err(_) => GateRegistry::builtins_builder(),
    };
    builder.build()
}

/// Whether `store` has a URL's scheme (`word://`): a mistyped database URL
/// must not become a directory.
fn looks_like_url(store: &str) -> bool {
    store.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

/// Who decides through this process, as decisions record it: the user
/// (`USER`, else `LOGNAME`, else the user id) at this machine.
fn decider() -> String {
    let uid = rustix::process::getuid().as_raw();
    let user = ["USER", "LOGNAME"]
        .iter()
        .filter_map(|var| std::env::var_os(var).and_then(|v| v.into_string().ok()))
        .find(|v| !v.trim().is_empty())
        .or_else(|| user_named(uid))
        .unwrap_or_else(|| format!("uid {uid}"));
    format!("{}@{}", user.trim(), machine())
}

/// The name of the user `uid` in `/etc/passwd`.
fn user_named(uid: u32) -> Option<String> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        let id = fields.nth(1)?;
        (id.parse() == Ok(uid)).then(|| name.to_owned())
    })
}

/// This machine's label in a shared store: `ORCHO_MACHINE`, else its host
/// name.
fn machine() -> String {
    if let Some(label) = std::env::var_os("ORCHO_MACHINE").and_then(|v| v.into_string().ok())
        && !label.trim().is_empty()
    {
        return label.trim().to_owned();
    }
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// `builtin:<name>` as it is; a file made absolute against the current
/// directory.
pub fn spec_of(profile: &str) -> Result<String, CliError> {
    if profile.starts_with("builtin:") {
        return Ok(profile.to_owned());
    }
    let cwd = Utf8PathBuf::try_from(std::env::current_dir()?)?;
    Ok(absolute(&cwd, Utf8Path::new(profile)).to_string())
}

/// Loads the profile `spec` names: `builtin:<name>` or an absolute path.
pub fn load(spec: &str) -> Result<Loaded, CliError> {
    load_warned(spec).map(|(loaded, _)| loaded)
}

/// [`load`], with what the profile allows but probably does not mean (a
/// gate whose failure can never be fed on, plan approval without a plan
/// phase), each as `profile `…` at line L, column C, in `path`: why`.
fn load_warned(spec: &str) -> Result<(Loaded, Vec<String>), CliError> {
    let parsed = match spec.strip_prefix("builtin:") {
        Some(name) => Profile::builtin(name)?,
        None => Profile::load(spec)?,
    };
    let resolved = parsed.resolve(&registry())?;
    let warnings = resolved
        .warnings()
        .iter()
        .map(ToString::to_string)
        .collect();
    let plan = RunPlan::from_profile(&resolved);
    // A broken `advisor:` block is said when the profile loads, not at the
    // first paused handoff.
    advisor_of(&plan)?;
    Ok(((spec.to_owned(), plan), warnings))
}

/// The checkout for a command run in `cwd` (see the module docs).
pub fn discover(cwd: &Utf8Path) -> Utf8PathBuf {
    for dir in cwd.ancestors() {
        if dir.join(PROFILE_FILE).is_file() {
            return dir.to_owned();
        }
        if orcho::core::fs::is_git_top(dir.as_std_path()) {
            return dir.to_owned();
        }
    }
    cwd.to_owned()
}

fn absolute(base: &Utf8Path, path: &Utf8Path) -> Utf8PathBuf {
    if path.is_absolute() {
        path.to_owned()
    } else {
        base.join(path)
    }
}

/// The host variable `name` of this `orcho`, when set, not empty and
/// UTF-8: for what the command line reads of its own environment (an
/// agent's home, a phase's output file).
pub fn env_text(name: &str) -> Option<String> {
    std::env::var_os(name)
        .and_then(|v| v.into_string().ok())
        .filter(|v| !v.is_empty())
}

/// The advisor the profile's `advisor:` block declares, if it declares one.
pub fn advisor_of(
    plan: &RunPlan,
) -> Result<Option<std::sync::Arc<dyn orcho::handoff::Advisor>>, CliError> {
    let Some(block) = &plan.advisor_config else {
        return Ok(None);
    };
    #[cfg(feature = "llm")]
    {
        let advisor = orcho_llm::LlmAdvisor::from_value(block).map_err(|e| {
            CliError::msg(format!("the profile's `advisor:` block: {e}")).with_hint(concat!(
                crate::docs_url!("profile.md#advisor"),
                " describes `advisor:`; `orcho profile show` prints the profile in use"
            ))
        })?;
        Ok(Some(std::sync::Arc::new(advisor)))
    }
    #[cfg(not(feature = "llm"))]
    {
        let _ = block;
        Err(CliError::msg(
            "the profile declares an `advisor:`, and this `orcho` was built without the `llm` feature",
        )
        .with_hint("install it with the default features: `cargo install --path orcho-cli`"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> (tempfile::TempDir, Utf8PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = Utf8PathBuf::try_from(tmp.path().to_owned()).unwrap();
        orcho::core::fs::create_dir_all(&root.join("repo/.git")).unwrap();
        orcho::core::fs::write_atomic(&root.join("repo/.git/HEAD"), b"ref: refs/heads/main\n")
            .unwrap();
        orcho::core::fs::create_dir_all(&root.join("repo/pkg/src")).unwrap();
        (tmp, root)
    }

    #[test]
    fn the_repository_root_is_the_checkout_from_a_subdirectory() {
        let (_tmp, root) = tree();
        assert_eq!(discover(&root.join("repo/pkg/src")), root.join("repo"));
    }

    #[test]
    fn the_nearest_profile_file_below_the_root_wins() {
        let (_tmp, root) = tree();
        orcho::core::fs::write_atomic(&root.join("repo/pkg/orcho.yaml"), b"").unwrap();
        orcho::core::fs::write_atomic(&root.join("repo/orcho.yaml"), b"").unwrap();
        assert_eq!(discover(&root.join("repo/pkg/src")), root.join("repo/pkg"));
    }

    #[test]
    fn nothing_above_the_repository_root_is_looked_at() {
        let (_tmp, root) = tree();
        orcho::core::fs::write_atomic(&root.join("orcho.yaml"), b"").unwrap();
        assert_eq!(discover(&root.join("repo/pkg")), root.join("repo"));
    }

    #[test]
    fn outside_a_repository_the_current_directory_is_the_checkout() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Utf8PathBuf::try_from(tmp.path().join("a/b")).unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        // Unless something above the temporary directory has a `.git` or an
        // `orcho.yaml`, which a test machine's /tmp does not.
        assert_eq!(discover(&dir), dir);
    }
}
