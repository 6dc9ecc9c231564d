//! Where a command works: the checkout, its store, and the profile it
//! loads.

use camino::{Utf8Path, Utf8PathBuf};
use orcho::{RunPlan, gates::GateRegistry, profile::Profile};

use crate::error::CliError;

/// The checkout a command works on, its store, and how it prints.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    pub(crate) checkout: Utf8PathBuf,
    pub(crate) store: Utf8PathBuf,
    pub(crate) json: bool,
}

impl Place {
    /// `checkout` (default: the current directory) and `store` (default:
    /// `.orcho` in the checkout).
    pub(crate) fn new(
        checkout: Option<Utf8PathBuf>,
        store: Option<Utf8PathBuf>,
        json: bool,
    ) -> Result<Self, CliError> {
        let checkout = match checkout {
            Some(c) => c,
            None => Utf8PathBuf::try_from(std::env::current_dir()?)?,
        };
        let store = store.unwrap_or_else(|| checkout.join(".orcho"));
        Ok(Self {
            checkout,
            store,
            json,
        })
    }

    /// Loads `profile` (a file or `builtin:<name>`), or `./orcho.yaml` when
    /// there is one, or the `default` built-in. Returns how the profile is
    /// named again later (a file by its absolute path) and its plan.
    pub(crate) fn load_profile(
        &self,
        profile: Option<&str>,
    ) -> Result<(String, RunPlan), CliError> {
        let spec = match profile {
            Some(p) => p.to_owned(),
            None if self.checkout.join("orcho.yaml").is_file() => {
                self.checkout.join("orcho.yaml").to_string()
            }
            None => "builtin:default".to_owned(),
        };
        let (spec, parsed) = match spec.strip_prefix("builtin:") {
            Some(name) => (spec.clone(), Profile::builtin(name)?),
            None => {
                let path = self.absolute(Utf8Path::new(&spec));
                let parsed = Profile::load(&path)?;
                (path.to_string(), parsed)
            }
        };
        let resolved = parsed.resolve(&GateRegistry::with_builtins())?;
        Ok((spec, RunPlan::from_profile(&resolved)))
    }

    /// Progress on standard error, unless the output is one JSON document.
    pub(crate) fn progress(&self, line: &str) {
        if !self.json {
            crate::output::err(line);
        }
    }

    fn absolute(&self, path: &Utf8Path) -> Utf8PathBuf {
        if path.is_absolute() {
            path.to_owned()
        } else {
            self.checkout.join(path)
        }
    }
}
