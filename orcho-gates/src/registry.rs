//! Gate registry: the names a profile's `uses:` can refer to.

use std::{collections::BTreeMap, fmt, sync::Arc};

use orcho_core::GateName;
use serde::{Deserialize, Serialize};

use crate::{GateError, QualityGate, RegistryError};

/// A gate as a profile declares it: its name in the phase, the registered
/// gate it uses, and its `with:` configuration (as JSON, so no YAML type
/// leaks into plugin signatures).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct GateSpec {
    /// The gate's name in its phase.
    pub name: GateName,
    /// The registered gate it uses.
    pub uses: GateName,
    /// The `with:` block, or `null`.
    #[serde(default)]
    pub config: serde_json::Value,
}

impl GateSpec {
    /// A spec with no configuration.
    pub fn new(name: GateName, uses: GateName) -> Self {
        Self {
            name,
            uses,
            config: serde_json::Value::Null,
        }
    }
}

impl GateSpec {
    orcho_core::setters! {
        /// Sets the configuration.
        pub fn with_config(config: serde_json::Value);
    }
}

/// Builds a gate from its spec, validating the configuration so that a typo
/// in `with:` is a load error, not a silently ignored key.
///
/// Closures `Fn(&GateSpec) -> Result<Arc<dyn QualityGate>, GateError>`
/// implement it.
pub trait GateFactory: Send + Sync + 'static {
    /// Builds the gate.
    ///
    /// # Errors
    ///
    /// A [`GateError`] saying what is wrong with `spec.config`.
    fn build(&self, spec: &GateSpec) -> Result<Arc<dyn QualityGate>, GateError>;
}

impl<F> GateFactory for F
where
    F: Fn(&GateSpec) -> Result<Arc<dyn QualityGate>, GateError> + Send + Sync + 'static,
{
    fn build(&self, spec: &GateSpec) -> Result<Arc<dyn QualityGate>, GateError> {
        self(spec)
    }
}

/// Registered gates by name.
///
/// ```
/// use std::sync::Arc;
/// use orcho_core::GateName;
/// use orcho_gates::{GateContext, GateError, GateOutcome, GateRegistry, GateSpec, QualityGate, QualityGateResult};
///
/// #[derive(Debug)]
/// struct AlwaysPasses(GateName);
///
/// #[orcho_gates::async_trait]
/// impl QualityGate for AlwaysPasses {
///     fn name(&self) -> &GateName { &self.0 }
///     async fn evaluate(&self, _: &GateContext) -> Result<QualityGateResult, GateError> {
///         Ok(QualityGateResult::computational(self.0.clone(), GateOutcome::Passed))
///     }
/// }
///
/// let registry = GateRegistry::builder()
///     .register("always_passes", |spec: &GateSpec| {
///         if !spec.config.is_null() {
///             return Err(GateError::msg("`always_passes` takes no configuration"));
///         }
///         Ok(Arc::new(AlwaysPasses(spec.name.clone())) as Arc<dyn QualityGate>)
///     })?
///     .build();
/// let gate = registry.build(&GateSpec::new("smoke".parse()?, "always_passes".parse()?))?;
/// assert_eq!(gate.name(), "smoke");
///
/// let err = registry.build(&GateSpec::new("x".parse()?, "always_pass".parse()?)).unwrap_err();
/// assert!(err.to_string().contains("did you mean `always_passes`?"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Default)]
pub struct GateRegistry {
    factories: BTreeMap<GateName, Arc<dyn GateFactory>>,
}

impl fmt::Debug for GateRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GateRegistry")
            .field("gates", &self.factories.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl GateRegistry {
    /// A builder with no gates registered.
    pub fn builder() -> GateRegistryBuilder {
        GateRegistryBuilder {
            registry: Self::default(),
        }
    }

    /// A registry with the built-in gates: [`tests`](crate::builtin::TestsGate).
    pub fn with_builtins() -> Self {
        Self::builtins_builder().build()
    }

    /// A builder that starts with the built-in gates, to add (or explicitly
    /// shadow) third-party ones.
    pub fn builtins_builder() -> GateRegistryBuilder {
        let mut builder = Self::builder();
        builder.insert(
            crate::builtin::TESTS,
            Arc::new(crate::builtin::TestsGate::from_spec),
        );
        builder.insert(
            crate::builtin::COMMAND,
            Arc::new(crate::builtin::CommandGate::from_spec),
        );
        builder
    }

    /// The registered names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &GateName> {
        self.factories.keys()
    }

    /// Whether `uses` is registered.
    pub fn contains(&self, uses: &str) -> bool {
        self.factories.contains_key(uses)
    }

    /// Builds the gate a spec declares.
    ///
    /// # Errors
    ///
    /// [`RegistryError::Unknown`] (listing the known names and the nearest
    /// one) or [`RegistryError::Config`] when the factory refuses the
    /// configuration.
    pub fn build(&self, spec: &GateSpec) -> Result<Arc<dyn QualityGate>, RegistryError> {
        let factory = self
            .factories
            .get(spec.uses.as_str())
            .ok_or_else(|| self.unknown(spec.uses.as_str()))?;
        factory.build(spec).map_err(|source| RegistryError::Config {
            gate: spec.name.clone(),
            uses: spec.uses.to_string(),
            source,
        })
    }

    /// The error for an unknown name, with the known names and a suggestion.
    pub fn unknown(&self, name: &str) -> RegistryError {
        RegistryError::Unknown {
            name: name.to_owned(),
            known: self.factories.keys().map(ToString::to_string).collect(),
            nearest: orcho_core::nearest(name, self.factories.keys().map(GateName::as_str))
                .map(str::to_owned),
        }
    }
}

/// Builds a [`GateRegistry`]. Registering a name twice is an error; replacing
/// a gate (for example a built-in) must be said with [`shadow`](Self::shadow).
#[derive(Debug, Default)]
#[must_use]
pub struct GateRegistryBuilder {
    registry: GateRegistry,
}

impl GateRegistryBuilder {
    fn insert(&mut self, name: &'static str, factory: Arc<dyn GateFactory>) {
        if let Ok(key) = GateName::new(name) {
            self.registry.factories.insert(key, factory);
        }
    }

    fn name(name: &str) -> Result<GateName, RegistryError> {
        GateName::new(name).map_err(RegistryError::InvalidName)
    }

    /// Registers a gate under `name`.
    ///
    /// # Errors
    ///
    /// [`RegistryError::Duplicate`] when the name is taken, or an invalid
    /// name.
    pub fn register(
        mut self,
        name: &str,
        factory: impl GateFactory,
    ) -> Result<Self, RegistryError> {
        let key = Self::name(name)?;
        if self.registry.factories.contains_key(&key) {
            return Err(RegistryError::Duplicate {
                name: name.to_owned(),
            });
        }
        self.registry.factories.insert(key, Arc::new(factory));
        Ok(self)
    }

    /// Replaces the gate registered under `name`, on purpose.
    ///
    /// # Errors
    ///
    /// [`RegistryError::NothingToShadow`] when nothing is registered under
    /// `name` (a typo would otherwise add a second gate silently).
    pub fn shadow(mut self, name: &str, factory: impl GateFactory) -> Result<Self, RegistryError> {
        let key = Self::name(name)?;
        if !self.registry.factories.contains_key(&key) {
            return Err(RegistryError::NothingToShadow {
                name: name.to_owned(),
            });
        }
        self.registry.factories.insert(key, Arc::new(factory));
        Ok(self)
    }

    /// The registry.
    pub fn build(self) -> GateRegistry {
        self.registry
    }
}
