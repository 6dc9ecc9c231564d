//! Errors and warnings of `orcho-profile`.
//!
//! Every [`ProfileError`] and [`ProfileWarning`] names the file (a path,
//! `builtin:<name>`, or `<string>`), the 1-based line and column, and the
//! path in the document (`phases[2].gates[0].on_fail`); what is wrong is its
//! [`kind`](ProfileError::kind), the error's source, so
//! [`error_chain`](orcho_core::error_chain) renders both on one line.

use std::{fmt, io};

use orcho_core::SchemaVersion;
use orcho_gates::RegistryError;
use orcho_handoff::autopilot::AutopilotPolicyError;
use orcho_receipts::ContractError;

use crate::{
    locate::{DocPath, Position},
    provenance::Located,
};

/// A profile could not be read, parsed, validated or resolved.
///
/// ```
/// use orcho_profile::Profile;
///
/// let yaml = "schema: 1\nname: demo\nphases:\n  - name: implement\n    role: implment\n";
/// let err = Profile::from_yaml_str(yaml).unwrap_err();
/// assert_eq!((err.line(), err.column()), (Some(5), Some(11)));
/// assert_eq!(err.path().map(|p| p.to_string()).as_deref(), Some("phases[0].role"));
/// assert_eq!(err.suggestion(), Some("implement"));
/// assert_eq!(
///     orcho_core::error_chain(&err),
///     "invalid profile `<string>` at line 5, column 11, in `phases[0].role`: caused by: \
///      unknown value `implment` (did you mean `implement`?); expected one of `plan`, \
///      `implement`, `review`, `final_acceptance`, `custom`"
/// );
/// ```
#[derive(Debug)]
pub struct ProfileError {
    // Boxed: errors are rare, and a small `Result` keeps the happy path fast.
    inner: Box<Inner>,
}

#[derive(Debug)]
struct Inner {
    file: String,
    position: Option<Position>,
    path: Option<DocPath>,
    kind: ProfileErrorKind,
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lead = match self.inner.kind {
            ProfileErrorKind::Read(_) => "cannot read profile",
            _ => "invalid profile",
        };
        write!(f, "{lead} `{}`", self.inner.file)?;
        if let Some(p) = self.inner.position {
            write!(f, " at line {}, column {}", p.line, p.column)?;
        }
        if let Some(path) = &self.inner.path {
            write!(f, ", in `{path}`")?;
        }
        Ok(())
    }
}

impl std::error::Error for ProfileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.inner.kind)
    }
}

/// What is wrong with a profile; see [`ProfileError::kind`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProfileErrorKind {
    /// The file could not be read.
    #[error("the file could not be read")]
    Read(#[source] io::Error),
    /// The input is larger than [`MAX_PROFILE_BYTES`](crate::MAX_PROFILE_BYTES).
    #[error("the profile is {len} bytes long, more than the limit of {max}")]
    TooLarge {
        /// Its length in bytes.
        len: u64,
        /// The limit.
        max: u64,
    },
    /// The input is not UTF-8.
    #[error("the profile is not UTF-8 (invalid byte at offset {offset})")]
    NotUtf8 {
        /// The byte offset of the first invalid byte.
        offset: usize,
    },
    /// The text is not valid YAML.
    #[error("invalid YAML: {message}")]
    Syntax {
        /// The parser's description.
        message: String,
    },
    /// The document nests deeper than the parser allows.
    #[error("the document nests too deeply")]
    TooDeep,
    /// Expanding the document's aliases would produce too many nodes (an
    /// alias bomb, or a document far larger than a profile).
    #[error("expanding the aliases would produce more than {limit} nodes")]
    AliasExpansion {
        /// The limit.
        limit: usize,
    },
    /// The document has no `schema` key.
    #[error("the profile has no `schema`; profiles start with `schema: 1`")]
    MissingSchema,
    /// The document's schema is not one this version reads.
    #[error("{}", schema_message(*found, *supported))]
    UnsupportedSchema {
        /// The schema found.
        found: SchemaVersion,
        /// The schema this version reads.
        supported: SchemaVersion,
    },
    /// A key that the format does not have (a typo never silently disables
    /// anything).
    #[error("unknown key `{key}`{}; expected one of {}", did_you_mean(nearest.as_deref()), list(expected))]
    UnknownKey {
        /// The key found.
        key: String,
        /// The valid keys at that place.
        expected: Vec<String>,
        /// The nearest valid key, if the key looks like a typo of one.
        nearest: Option<String>,
    },
    /// A required key is missing.
    #[error("missing required key `{key}`")]
    MissingKey {
        /// The key.
        key: String,
    },
    /// A value that is not one of the allowed spellings.
    #[error("unknown value `{value}`{}; expected one of {}", did_you_mean(nearest.as_deref()), list(expected))]
    UnknownValue {
        /// The value found.
        value: String,
        /// The valid values.
        expected: Vec<String>,
        /// The nearest valid value, if the value looks like a typo of one.
        nearest: Option<String>,
    },
    /// A value has the wrong type or is out of its domain, as the value's
    /// own parser says.
    #[error("{message}")]
    Invalid {
        /// What is wrong.
        message: String,
        /// The nearest valid spelling, when the parser suggested one.
        nearest: Option<String>,
    },
    /// The profile's name is empty, too long, or has control characters.
    #[error("the profile name must be 1 to 64 characters without control characters")]
    InvalidName,
    /// A trusted key with no name.
    #[error("a trusted key needs a `name`: it is what says who signed")]
    UnnamedKey,
    /// Two phases, or two gates of one phase, share a name.
    #[error("{what} `{name}` is declared twice{}", first_line.map(|l| format!(" (first at line {l})")).unwrap_or_default())]
    Duplicate {
        /// `"phase"`, `"gate"`, `"trusted key"` or `"public key"`.
        what: &'static str,
        /// The name.
        name: String,
        /// The line of the first declaration, when known.
        first_line: Option<usize>,
    },
    /// The profile has no phases.
    #[error("the profile declares no phases")]
    NoPhases,
    /// A phase has no role (after merging `extends`).
    #[error("phase `{phase}` has no `role`; expected one of {}", list(&crate::Role::ALL.iter().map(|r| r.as_str().to_owned()).collect::<Vec<_>>()))]
    MissingRole {
        /// The phase.
        phase: String,
    },
    /// A second `final_acceptance` phase.
    #[error("a profile has at most one `final_acceptance` phase, and `{first}` is one already")]
    SecondFinalAcceptance {
        /// The first one.
        first: String,
    },
    /// A number is out of its range.
    #[error("`{key}` is {value}; it must be between {min} and {max}")]
    OutOfRange {
        /// The key.
        key: &'static str,
        /// The value found.
        value: u64,
        /// The smallest valid value.
        min: u64,
        /// The largest valid value.
        max: u64,
    },
    /// `feeds` names a phase that does not exist.
    #[error("`feeds` names phase `{target}`, which the profile does not declare{}; phases: {}", did_you_mean(nearest.as_deref()), list(known))]
    UnknownFeedTarget {
        /// The name given.
        target: String,
        /// The declared phases.
        known: Vec<String>,
        /// The nearest declared phase.
        nearest: Option<String>,
    },
    /// `feeds` names a phase after the gate's own.
    #[error(
        "`feeds` names phase `{target}`, which comes after `{phase}`: a gate feeds its own phase or an earlier one, which then runs again with the failure as its input"
    )]
    FeedsLaterPhase {
        /// The name given.
        target: String,
        /// The gate's phase.
        phase: String,
    },
    /// `feeds` on a gate whose strategy does not feed anything.
    #[error(
        "`feeds` applies only to `on_fail: feed_into_next`, and this gate's strategy is `{strategy}`"
    )]
    FeedsWithoutFeedStrategy {
        /// The gate's strategy.
        strategy: String,
    },
    /// `trigger_replan` in a profile with nothing to replan.
    #[error(
        "`on_fail: trigger_replan` needs a phase with role `plan` to replan, and the profile has none"
    )]
    ReplanWithoutPlan,
    /// A handoff action that the phase cannot offer.
    #[error("handoff action `{action}` is not valid here: {reason}")]
    InvalidHandoffAction {
        /// The action.
        action: String,
        /// Why.
        reason: &'static str,
    },
    /// The handoff's `actions` omit `halt`.
    #[error("handoff `actions` must include `halt`: stopping the run is always possible")]
    HaltNotOffered,
    /// `actions` on a phase that can never pause.
    #[error(
        "handoff `actions` are listed, but the phase never pauses (`pause: never` and `on_exhausted: halt`)"
    )]
    ActionsWithoutPause,
    /// `required` (or a `tests` gate) names a command the contract does
    /// not declare.
    #[error("command `{command}` is not declared in `verification.commands`{}; declared: {}", did_you_mean(nearest.as_deref()), list(known))]
    UnknownCommand {
        /// The command named.
        command: String,
        /// The declared commands.
        known: Vec<String>,
        /// The nearest declared command.
        nearest: Option<String>,
    },
    /// A `tests` gate of the profile this one extends names a command that
    /// this profile's own `verification` (which replaces the base's whole)
    /// does not declare: reported in this profile, where the fix is.
    #[error(
        "the gate `{}` of phase `{}`, from `{}`, runs the command `{command}`, which \
         `verification.commands` here does not declare (declared: {}); name one of them \
         `{command}`, or give the gate another here (it replaces the gate whole): `{}`",
        gate.gate, gate.phase, gate.base, list(&gate.known), gate.suggested
    )]
    BaseGateCommand {
        /// The command the gate names.
        command: String,
        /// The nearest declared command.
        nearest: Option<String>,
        /// The gate, where it comes from, and how to override it.
        gate: Box<BaseGate>,
    },
    /// The verification contract is inconsistent.
    #[error(transparent)]
    Contract(ContractError),
    /// The gate registry does not know a gate's `uses` (the error lists the
    /// known gates and the nearest one).
    #[error(transparent)]
    Registry(RegistryError),
    /// A gate's factory refused its `with:` block.
    #[error("the gate's factory refused its `with:` block{}", did_you_mean(nearest.as_deref()))]
    GateConfig {
        /// The nearest valid key, when the factory reported an unknown one.
        nearest: Option<String>,
        /// The registry's error, with the factory's as its source.
        #[source]
        error: RegistryError,
    },
    /// The autopilot's limits are invalid.
    #[error(transparent)]
    Autopilot(AutopilotPolicyError),
    /// `fix` as the delivery default.
    #[error("`fix` cannot be a default: it is valid only after a rejected release verdict")]
    FixAsDefault,
    /// An unknown `{placeholder}` in the commit message.
    #[error("unknown placeholder `{{{placeholder}}}`{}; expected one of {}", did_you_mean(nearest.as_deref()), list(&crate::validate::PLACEHOLDERS.iter().map(|p| format!("{{{p}}}")).collect::<Vec<_>>()))]
    UnknownPlaceholder {
        /// The placeholder's name.
        placeholder: String,
        /// The nearest valid one.
        nearest: Option<String>,
    },
    /// `permissions` with neither a preset nor rules.
    #[error(
        "`permissions` declares neither a `preset` nor `rules`, so every request would be denied"
    )]
    EmptyPermissions,
    /// `extends` names a built-in that does not exist.
    #[error("no built-in profile is called `{name}`{}; built-ins: {}", did_you_mean(nearest.as_deref()), list(&crate::builtin::NAMES.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>()))]
    UnknownBuiltin {
        /// The name given.
        name: String,
        /// The nearest built-in.
        nearest: Option<String>,
    },
    /// The profile a profile extends could not be read.
    #[error("cannot read `{target}`")]
    ExtendsRead {
        /// The file.
        target: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A profile read from a string extends a file, which has no directory
    /// to be relative to.
    #[error(
        "a profile read from a string can only extend built-ins (`builtin:<name>`); load it from a file to extend `{target}`"
    )]
    ExtendsFileFromString {
        /// The file named.
        target: String,
    },
    /// `extends` leads back to a profile already being extended.
    #[error("`extends` forms a cycle: {}", chain.join(" → "))]
    ExtendsCycle {
        /// The files, from the first to the repeated one.
        chain: Vec<String>,
    },
    /// `extends` chains deeper than [`MAX_EXTENDS_DEPTH`](crate::MAX_EXTENDS_DEPTH).
    #[error("`extends` chains more than {max} profiles")]
    ExtendsTooDeep {
        /// The limit.
        max: usize,
    },
}

fn schema_message(found: SchemaVersion, supported: SchemaVersion) -> String {
    if found > supported {
        format!(
            "schema {found} is newer than {supported}, the schema this version of Orcho reads; upgrade Orcho to use this profile"
        )
    } else {
        format!("schema {found} does not exist; the current schema is {supported}")
    }
}

pub(crate) fn did_you_mean(nearest: Option<&str>) -> String {
    nearest
        .map(|n| format!(" (did you mean `{n}`?)"))
        .unwrap_or_default()
}

pub(crate) fn list(names: &[String]) -> String {
    if names.is_empty() {
        return "none".to_owned();
    }
    let mut out = String::new();
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push('`');
        out.push_str(name);
        out.push('`');
    }
    out
}

impl ProfileError {
    #[cold]
    pub(crate) fn new(at: Located, kind: ProfileErrorKind) -> Self {
        Self::at(at.file, at.position, at.path, kind)
    }

    #[cold]
    pub(crate) fn in_file(file: String, kind: ProfileErrorKind) -> Self {
        Self::at(file, None, None, kind)
    }

    #[cold]
    pub(crate) fn at(
        file: String,
        position: Option<Position>,
        path: Option<DocPath>,
        kind: ProfileErrorKind,
    ) -> Self {
        Self {
            inner: Box::new(Inner {
                file,
                position,
                path: path.filter(|p| !p.is_root()),
                kind,
            }),
        }
    }

    /// The file the problem is in: a path, `builtin:<name>`, or `<string>`
    /// for [`Profile::from_yaml_str`](crate::Profile::from_yaml_str).
    pub fn file(&self) -> &str {
        &self.inner.file
    }

    /// The 1-based line, when the problem is at a place in the text.
    pub fn line(&self) -> Option<usize> {
        self.inner.position.map(|p| p.line)
    }

    /// The 1-based column (in characters), when the problem is at a place in
    /// the text.
    pub fn column(&self) -> Option<usize> {
        self.inner.position.map(|p| p.column)
    }

    /// The path in the document, such as `phases[2].gates[0].on_fail`; `None`
    /// for problems with the document as a whole.
    pub fn path(&self) -> Option<&DocPath> {
        self.inner.path.as_ref()
    }

    /// What is wrong.
    pub fn kind(&self) -> &ProfileErrorKind {
        &self.inner.kind
    }

    /// The valid name the misspelt key, value, gate, phase, command or
    /// built-in most likely meant.
    pub fn suggestion(&self) -> Option<&str> {
        match &self.inner.kind {
            ProfileErrorKind::UnknownKey { nearest, .. }
            | ProfileErrorKind::UnknownValue { nearest, .. }
            | ProfileErrorKind::Invalid { nearest, .. }
            | ProfileErrorKind::UnknownFeedTarget { nearest, .. }
            | ProfileErrorKind::UnknownCommand { nearest, .. }
            | ProfileErrorKind::BaseGateCommand { nearest, .. }
            | ProfileErrorKind::UnknownPlaceholder { nearest, .. }
            | ProfileErrorKind::UnknownBuiltin { nearest, .. }
            | ProfileErrorKind::GateConfig { nearest, .. } => nearest.as_deref(),
            ProfileErrorKind::Registry(RegistryError::Unknown { nearest, .. }) => {
                nearest.as_deref()
            }
            _ => None,
        }
    }

    /// Whether the text is not YAML (or too deep, or an alias bomb).
    pub fn is_syntax(&self) -> bool {
        matches!(
            self.inner.kind,
            ProfileErrorKind::Syntax { .. }
                | ProfileErrorKind::TooDeep
                | ProfileErrorKind::AliasExpansion { .. }
        )
    }

    /// Whether a key is not part of the format.
    pub fn is_unknown_key(&self) -> bool {
        matches!(self.inner.kind, ProfileErrorKind::UnknownKey { .. })
    }

    /// Whether a gate's `uses` is not in the registry.
    pub fn is_unknown_gate(&self) -> bool {
        matches!(&self.inner.kind, ProfileErrorKind::Registry(e) if e.is_unknown())
    }

    /// Whether the input was refused for its size, encoding, depth or alias
    /// expansion before it was deserialized.
    pub fn is_hostile(&self) -> bool {
        matches!(
            self.inner.kind,
            ProfileErrorKind::TooLarge { .. }
                | ProfileErrorKind::NotUtf8 { .. }
                | ProfileErrorKind::TooDeep
                | ProfileErrorKind::AliasExpansion { .. }
        )
    }

    /// Whether `extends` forms a cycle.
    pub fn is_cycle(&self) -> bool {
        matches!(self.inner.kind, ProfileErrorKind::ExtendsCycle { .. })
    }

    /// Whether the profile comes from a newer (or an impossible) schema.
    pub fn is_unsupported_schema(&self) -> bool {
        matches!(self.inner.kind, ProfileErrorKind::UnsupportedSchema { .. })
    }
}

/// A spelling that is not one of a format enum's values; returned by the
/// `FromStr` impls of [`Role`](crate::Role), [`PauseWhen`](crate::PauseWhen)
/// and the other format enums.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{given}`{}; expected one of {}", did_you_mean(self.nearest.as_deref()), list(expected))]
pub struct ParseValueError {
    what: &'static str,
    given: String,
    expected: Vec<String>,
    nearest: Option<String>,
}

impl ParseValueError {
    #[cold]
    pub(crate) fn new<'a>(
        what: &'static str,
        given: &str,
        expected: impl Iterator<Item = &'a str> + Clone,
    ) -> Self {
        Self {
            what,
            given: given.chars().take(60).collect(),
            expected: expected.clone().map(str::to_owned).collect(),
            nearest: orcho_core::nearest(given, expected).map(str::to_owned),
        }
    }

    /// The nearest valid spelling, if the input looks like a typo of one.
    pub fn nearest(&self) -> Option<&str> {
        self.nearest.as_deref()
    }
}

/// Something in a profile that is allowed but probably not meant, reported
/// through a [`ProfileWarnings`] sink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileWarning {
    file: String,
    position: Option<Position>,
    path: Option<DocPath>,
    kind: WarningKind,
}

/// What a [`ProfileWarning`] is about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WarningKind {
    /// A permission rule of the profile never decides, because a later rule
    /// matches everything it matches. Rules of a preset shadowed by the
    /// profile's own rules are the intended way to override a preset and
    /// are not reported.
    ShadowedRule {
        /// The message of `RuleSet::lint`'s finding, naming both rules.
        message: String,
    },
    /// A `final_acceptance` phase with nothing in `verification.required`:
    /// acceptance proves nothing.
    AcceptanceWithoutRequired,
    /// Plan approval is on, but no phase has role `plan`.
    PlanApprovalWithoutPlan,
    /// A `feed_into_next` gate feeds a phase with a single attempt, so the
    /// failure is only fed after a handoff grants a retry.
    FeedWithoutNextAttempt {
        /// The gate's phase, whose attempts bound its feeds.
        phase: String,
        /// The earlier phase its `feeds:` names, when it names one.
        feeds: Option<String>,
    },
}

impl fmt::Display for WarningKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ShadowedRule { message } => f.write_str(message),
            Self::AcceptanceWithoutRequired => f.write_str(
                "the `final_acceptance` phase reads receipts, but `verification.required` is empty, so acceptance proves nothing",
            ),
            Self::PlanApprovalWithoutPlan => {
                f.write_str("`plan_approval` is on, but no phase has role `plan`")
            }
            Self::FeedWithoutNextAttempt { phase, feeds } => {
                write!(
                    f,
                    "phase `{phase}` has `max_attempts: 1`, so this gate's failure is fed on"
                )?;
                if let Some(feeds) = feeds {
                    write!(f, " to `{feeds}`")?;
                }
                write!(
                    f,
                    " only if a handoff grants a retry (a feed is an attempt of `{phase}`: \
                     `max_attempts: 2` gives it one)"
                )
            }
        }
    }
}

impl fmt::Display for ProfileWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "profile `{}`", self.file)?;
        if let Some(p) = self.position {
            write!(f, " at line {}, column {}", p.line, p.column)?;
        }
        if let Some(path) = &self.path {
            write!(f, ", in `{path}`")?;
        }
        write!(f, ": {}", self.kind)
    }
}

impl ProfileWarning {
    #[cold]
    pub(crate) fn new(at: Located, kind: WarningKind) -> Self {
        Self {
            file: at.file,
            position: at.position,
            path: at.path,
            kind,
        }
    }

    /// The file: a path, `builtin:<name>`, or `<string>`.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The 1-based line.
    pub fn line(&self) -> Option<usize> {
        self.position.map(|p| p.line)
    }

    /// The 1-based column.
    pub fn column(&self) -> Option<usize> {
        self.position.map(|p| p.column)
    }

    /// The path in the document.
    pub fn path(&self) -> Option<&DocPath> {
        self.path.as_ref()
    }

    /// What the warning is about.
    pub fn kind(&self) -> &WarningKind {
        &self.kind
    }
}

/// Where [`Profile::resolve_with_warnings`](crate::Profile::resolve_with_warnings)
/// reports warnings: a host prints them, a test collects them, CI may turn
/// them into failures. `Vec<ProfileWarning>` collects them.
pub trait ProfileWarnings {
    /// Reports one warning.
    fn warn(&mut self, warning: ProfileWarning);
}

impl ProfileWarnings for Vec<ProfileWarning> {
    fn warn(&mut self, warning: ProfileWarning) {
        self.push(warning);
    }
}

impl<W: ProfileWarnings + ?Sized> ProfileWarnings for &mut W {
    fn warn(&mut self, warning: ProfileWarning) {
        (**self).warn(warning);
    }
}

/// A base profile's `tests` gate whose command this profile renamed (see
/// [`ProfileErrorKind::BaseGateCommand`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct BaseGate {
    /// The phase of the gate.
    pub phase: String,
    /// The gate.
    pub gate: String,
    /// The profile it came from (`builtin:default`, a path).
    pub base: String,
    /// The commands this profile declares.
    pub known: Vec<String>,
    /// The gate as this profile would override it, naming the nearest
    /// declared command (one line of YAML).
    pub suggested: String,
}
