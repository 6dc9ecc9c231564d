//! YAML profiles: the one file where a team declares how its runs are
//! controlled — "gates are data, not code".
//!
//! A profile (`schema: 1`) names its phases in order, each with a
//! [`Role`], attempt and round limits, the quality gates that run after it
//! (a registry name, a fail strategy, a lock group, a timeout and a `with:`
//! block for the gate's factory) and its handoff policy (when to pause, what
//! happens when the attempts run out, which decisions are allowed). It
//! declares the verification contract that says what counts as proof, the
//! CI autopilot's limits, delivery and intake defaults, supervision and
//! permission rules. It may `extend` another profile or a built-in.
//!
//! - [`Profile`] is the document: [`Profile::from_yaml_str`],
//!   [`Profile::load`] and [`Profile::builtin`] parse it, merge its
//!   [`extends`] chain and validate it.
//! - [`Profile::resolve`] builds every gate through a
//!   [`GateRegistry`](orcho_gates::GateRegistry) and returns a
//!   [`ResolvedProfile`]: [`ResolvedPhase`]s with
//!   [`ScheduledGate`](orcho_gates::ScheduledGate)s and a
//!   [`HandoffPolicy`](orcho_handoff::handoff::HandoffPolicy), the validated
//!   [`VerificationContract`](orcho_receipts::VerificationContract), the
//!   [`AutopilotPolicy`](orcho_handoff::autopilot::AutopilotPolicy), delivery and intake
//!   defaults, supervision's
//!   [`DeviationPolicy`](orcho_handoff::supervision::DeviationPolicy) and the
//!   permission [`RuleSet`](orcho_permissions::RuleSet).
//! - Every [`ProfileError`] names the file, line, column and document path
//!   (`phases[2].gates[0].on_fail`) and suggests the nearest valid name for
//!   a misspelt key, value, gate, phase or command. Unknown keys are errors:
//!   a typo never silently disables a gate. [`ProfileWarning`]s (allowed but
//!   probably unintended) go to a [`ProfileWarnings`] sink.
//! - Hostile input — more than [`MAX_PROFILE_BYTES`], non-UTF-8 bytes, deep
//!   nesting, an alias bomb — is refused with an error, in bounded time and
//!   memory (see "How a profile is read" below).
//! - [`builtin`] profiles are embedded: `default`, `quick`,
//!   `read_only_review`.
//!
//! # Example
//!
//! ```
//! use orcho_core::error_chain;
//! use orcho_gates::{FailStrategy, GateRegistry};
//! use orcho_profile::{Profile, Role};
//!
//! let yaml = r#"
//! schema: 1
//! name: my-project
//! extends: builtin:default
//! phases:
//!   - name: implement
//!     max_attempts: 5
//!     gates:
//!       - { name: lint, uses: tests, on_fail: informational, with: { command: lint } }
//! verification:
//!   commands:
//!     - { name: test, argv: [cargo, test], timeout: 20m }
//!     - { name: lint, argv: [cargo, clippy] }
//!   required: [test]
//! "#;
//! let profile = Profile::from_yaml_str(yaml)?;
//! let resolved = profile.resolve(&GateRegistry::with_builtins())?;
//!
//! let implement = resolved.phase("implement").expect("inherited from default");
//! assert_eq!(implement.role, Role::Implement);
//! assert_eq!(implement.max_attempts, 5);
//! let gates: Vec<_> = implement.gates.iter().map(|g| (g.name.as_str(), g.on_fail)).collect();
//! assert_eq!(gates, [("tests", FailStrategy::FeedIntoNext), ("lint", FailStrategy::Informational)]);
//!
//! // A typo is an error with its place and a suggestion.
//! let err = Profile::from_yaml_str(&yaml.replace("on_fail: informational", "on_fail: informtional")).unwrap_err();
//! assert_eq!((err.line(), err.column()), (Some(9), Some(45)));
//! assert_eq!(err.suggestion(), Some("informational"));
//! println!("{}", error_chain(&err));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # How a profile is read
//!
//! 1. The input is capped at [`MAX_PROFILE_BYTES`] and must be UTF-8 (a bad
//!    byte is reported at its line and column).
//! 2. Flow nesting (`[`, `{`) is bounded by a linear scan before any parser
//!    sees the text. If the text has an anchor (`&`), the node count after
//!    alias expansion is computed in one pass over the YAML events and
//!    capped at [`MAX_ALIAS_NODES`]: an alias bomb is refused before
//!    anything is expanded.
//! 3. One typed serde pass reads the [`Profile`] with unknown keys refused.
//!    Its errors carry a line, a column and a document path; they are
//!    turned into [`ProfileErrorKind`]s with suggestions. Only when it fails
//!    is the `schema` probed alone, so a profile from a newer Orcho is told
//!    to upgrade rather than shown an unknown key.
//! 4. `extends` is merged, then the cross-checks run on the typed value.
//!    A problem found there is located by walking the YAML events of the
//!    file it came from to its document path — only when there is something
//!    to report, so a valid profile never pays for positions.
//! 5. [`Profile::resolve`] builds the gates and policies of the crates
//!    below and adds the checks that need them.
//!
//! # Crate features
//!
//! None. The crate has no optional parts.
//!
//! # Stability and MSRV
//!
//! Pre-1.0: minor versions may break the API. The profile format is
//! versioned (`schema: 1`, [`PROFILE_SCHEMA`]); a profile from a newer Orcho
//! is refused with "upgrade Orcho", never mis-read. The minimum supported
//! Rust version is 1.95.

pub mod builtin;
mod error;
pub mod extends;
mod format;
mod load;
mod locate;
mod parse;
mod proof_edits;
mod provenance;
mod resolve;
mod validate;

pub use error::{
    BaseGate, ParseValueError, ProfileError, ProfileErrorKind, ProfileWarning, ProfileWarnings,
    WarningKind,
};
pub use extends::MAX_EXTENDS_DEPTH;

/// The name of the profile file a checkout keeps at its root.
pub const PROFILE_FILE: &str = "orcho.yaml";
pub use format::{
    Agent, AutopilotSpec, DeliveryDefault, DeliverySpec, Exhausted, GateDecl, HandoffSpec,
    IntakeDefault, IntakeSpec, PROFILE_SCHEMA, PauseWhen, PermissionsSpec, PhaseSpec, Profile,
    Role, RunnerSpec, SupervisionSpec, TrustSpec,
};
pub use locate::DocPath;
pub use parse::{MAX_ALIAS_NODES, MAX_PROFILE_BYTES};
pub use proof_edits::{ProofEdit, ProofSection, proof_edits};
pub use resolve::{
    DEFAULT_COMMIT_MESSAGE, DEFAULT_MAX_STOP_BLOCKS, DeliveryDefaults, IntakeDefaults,
    ResolvedAutopilot, ResolvedGate, ResolvedHandoff, ResolvedPhase, ResolvedProfile, Supervision,
};
pub use validate::{
    CommitValues, MAX_ATTEMPTS, MAX_AUTOPILOT_RETRIES, MAX_ROUNDS, MAX_RUNNER_TIMEOUT_SECS,
    fill_commit_message,
};

pub use orcho_core as core;
pub use orcho_gates as gates;
pub use orcho_handoff as handoff;
pub use orcho_receipts as receipts;
