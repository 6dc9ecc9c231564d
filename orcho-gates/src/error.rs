//! Errors of `orcho-gates`.

use std::{error::Error as StdError, fmt, sync::Arc};

use orcho_core::GateName;

/// A gate could not run: spawn failed, I/O, a bad response, a plugin bug.
///
/// This is distinct from a gate that ran and said no, which is an
/// `Ok(QualityGateResult)` with a failed outcome. The scheduler records an
/// `Err` as an *errored* result, so it is never mistaken for a pass.
///
/// Plugin errors enter through [`GateError::new`] (any error type) or
/// [`GateError::msg`] (a message); the error is clonable and forwards
/// [`source`](StdError::source).
///
/// ```
/// use orcho_gates::GateError;
///
/// let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
/// let err = GateError::new(io).context("calling the review model");
/// assert_eq!(err.to_string(), "calling the review model");
/// assert_eq!(orcho_core::error_chain(&err), "calling the review model: caused by: connection refused");
/// ```
#[derive(Clone)]
pub struct GateError {
    message: Option<Arc<str>>,
    source: Option<Arc<dyn StdError + Send + Sync>>,
}

impl GateError {
    /// Wraps any error.
    pub fn new(error: impl StdError + Send + Sync + 'static) -> Self {
        Self {
            message: None,
            source: Some(Arc::new(error)),
        }
    }

    /// An error with a message only.
    pub fn msg(message: impl fmt::Display) -> Self {
        Self {
            message: Some(message.to_string().into()),
            source: None,
        }
    }

    /// Adds a message saying what was being done; the previous error becomes
    /// the source.
    #[must_use]
    pub fn context(self, message: impl fmt::Display) -> Self {
        Self {
            message: Some(message.to_string().into()),
            source: Some(Arc::new(self)),
        }
    }
}

impl fmt::Debug for GateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GateError")
            .field("message", &self.message)
            .field("source", &self.source)
            .finish()
    }
}

impl fmt::Display for GateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.message, &self.source) {
            (Some(message), _) => f.write_str(message),
            (None, Some(source)) => fmt::Display::fmt(source, f),
            (None, None) => f.write_str("the gate could not run"),
        }
    }
}

impl StdError for GateError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match (&self.message, &self.source) {
            (Some(_), Some(source)) => Some(source.as_ref()),
            // Without a message the source's text is our Display: do not
            // print it twice.
            (None, Some(source)) => source.source(),
            (_, None) => None,
        }
    }
}

/// A fail strategy was misspelt.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown fail strategy `{given}`: expected `halt`, `feed_into_next`, `trigger_replan` or `informational`{}", suggestion(self.nearest))]
pub struct StrategyParseError {
    given: String,
    nearest: Option<&'static str>,
}

impl StrategyParseError {
    #[cold]
    pub(crate) fn new(given: &str) -> Self {
        let names = crate::FailStrategy::ALL.map(crate::FailStrategy::as_str);
        Self {
            given: given.chars().take(60).collect(),
            nearest: orcho_core::nearest(given, names),
        }
    }

    /// The closest valid spelling, if the input looks like a typo of one.
    pub fn nearest(&self) -> Option<&'static str> {
        self.nearest
    }
}

fn suggestion(nearest: Option<&str>) -> String {
    nearest
        .map(|n| format!(" (did you mean `{n}`?)"))
        .unwrap_or_default()
}

/// A gate registry lookup or registration failed, or a gate's factory
/// refused its configuration.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// No gate is registered under the name.
    #[error("no gate is registered as `{name}`; known gates: {}{}", orcho_core::spelling::quoted(known), suggestion(nearest.as_deref()))]
    Unknown {
        /// The name looked up.
        name: String,
        /// The registered names, sorted.
        known: Vec<String>,
        /// The closest registered name, if the lookup looks like a typo.
        nearest: Option<String>,
    },
    /// A gate is already registered under the name; shadowing must be
    /// explicit ([`GateRegistryBuilder::shadow`](crate::GateRegistryBuilder::shadow)).
    #[error("a gate is already registered as `{name}`; use `shadow` to replace it on purpose")]
    Duplicate {
        /// The name.
        name: String,
    },
    /// `shadow` named a gate that is not registered, so nothing would be
    /// shadowed (likely a typo).
    #[error("cannot shadow `{name}`: no gate is registered under that name")]
    NothingToShadow {
        /// The name.
        name: String,
    },
    /// A gate was registered under a name that is not a valid gate name.
    #[error(transparent)]
    InvalidName(orcho_core::IdError),
    /// The gate's factory refused its configuration (the `with:` block).
    #[error("invalid configuration for gate `{gate}` (uses `{uses}`)")]
    Config {
        /// The gate's name in the profile.
        gate: GateName,
        /// The registered gate it uses.
        uses: String,
        /// What the factory said.
        #[source]
        source: GateError,
    },
}

impl RegistryError {
    /// Whether the name is not registered.
    pub fn is_unknown(&self) -> bool {
        matches!(self, Self::Unknown { .. })
    }
}

/// The scheduler stopped: the callback that persists results failed.
///
/// Gate failures are never scheduler errors (they are results); only the
/// engine's persistence can stop the schedule, and then nothing after the
/// failed write has run.
#[derive(Debug, thiserror::Error)]
#[error("failed to record the result of gate `{gate}`")]
pub struct ScheduleError {
    gate: GateName,
    #[source]
    source: Box<dyn StdError + Send + Sync>,
}

impl ScheduleError {
    #[cold]
    pub(crate) fn new(gate: &GateName, source: Box<dyn StdError + Send + Sync>) -> Self {
        Self {
            gate: gate.clone(),
            source,
        }
    }

    /// The gate whose result could not be recorded.
    pub fn gate(&self) -> &GateName {
        &self.gate
    }
}

/// Model usage reported for a computational gate, which cannot spend money
/// or tokens (see [`QualityGateResult::with_reported_usage`]).
///
/// [`QualityGateResult::with_reported_usage`]: crate::QualityGateResult::with_reported_usage
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("gate `{gate}` is computational and cannot report model usage (`usage`)")]
pub struct UsageOnComputationalGate {
    pub(crate) gate: GateName,
}

impl UsageOnComputationalGate {
    /// The gate.
    pub fn gate(&self) -> &GateName {
        &self.gate
    }
}
