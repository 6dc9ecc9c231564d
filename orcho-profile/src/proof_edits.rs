//! What a change does to its own proof: the parts of a profile that decide
//! what proves a change, compared between the profile a change starts from
//! (the protected branch's) and the one it brings.
//!
//! A change that edits what proves it — the verification contract, the
//! trusted keys, the permission rules, a phase's gates — is not judged by
//! its own edit: hosts list these edits for a person to see, and a
//! delivery that carries one needs a person.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{DocPath, GateDecl, Profile};

/// A part of a profile that decides what proves a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProofSection {
    /// `verification`: the commands, their environments, `required`.
    Verification,
    /// `trust`: the keys whose attestations count.
    Trust,
    /// `permissions`: what an agent may do.
    Permissions,
    /// A phase's `gates`.
    Gates,
}

impl ProofSection {
    /// The section's key in a profile (`gates` for a phase's gates).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Verification => "verification",
            Self::Trust => "trust",
            Self::Permissions => "permissions",
            Self::Gates => "gates",
        }
    }
}

impl fmt::Display for ProofSection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One edit of what proves a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProofEdit {
    /// Which part of the profile.
    pub section: ProofSection,
    /// What changed, in words (``command `test`: argv `cargo test` →
    /// `true` ``).
    pub what: String,
    /// The file of the changed profile that holds it (for a removal: the
    /// file that holds the section now, if any).
    pub file: String,
    /// Its line there, when it can be found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
}

impl ProofEdit {
    /// An edit of the profile `file` as a whole (it was removed, or does
    /// not load), counted under [`ProofSection::Verification`].
    pub fn whole(file: impl Into<String>, what: impl Into<String>) -> Self {
        Self {
            section: ProofSection::Verification,
            what: what.into(),
            file: file.into(),
            line: None,
        }
    }
}

impl fmt::Display for ProofEdit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.file, self.what),
            None => write!(f, "{}: {}", self.file, self.what),
        }
    }
}

/// The edits `changed` makes to what proves a change, against `base`: in
/// the order of the profile (verification, trust, permissions, gates).
///
/// ```
/// use orcho_profile::{Profile, ProofSection, proof_edits};
///
/// let base = Profile::from_yaml_str(
///     "schema: 1\nname: p\nextends: builtin:quick\nverification:\n  commands:\n    - { name: test, argv: [cargo, test] }\n  required: [test]\n",
/// )?;
/// let same = proof_edits(&base, &base);
/// assert!(same.is_empty());
/// let changed = Profile::from_yaml_str(
///     "schema: 1\nname: p\nextends: builtin:quick\nverification:\n  commands:\n    - { name: test, argv: [\"true\"] }\n  required: []\n",
/// )?;
/// let edits = proof_edits(&base, &changed);
/// assert_eq!(edits[0].section, ProofSection::Verification);
/// assert_eq!(edits[0].what, "`test` is no longer required");
/// assert_eq!(edits[1].what, "command `test`: argv `cargo test` → `true`");
/// assert_eq!(edits[1].line, Some(6));
/// # Ok::<(), orcho_profile::ProfileError>(())
/// ```
pub fn proof_edits(base: &Profile, changed: &Profile) -> Vec<ProofEdit> {
    let mut edits = Edits {
        changed,
        out: Vec::new(),
    };
    edits.verification(base);
    edits.trust(base);
    edits.permissions(base);
    edits.gates(base);
    edits.out
}

struct Edits<'a> {
    changed: &'a Profile,
    out: Vec<ProofEdit>,
}

impl Edits<'_> {
    /// Records an edit located at `path` under the top-level `section`.
    fn push(&mut self, section: ProofSection, key: &'static str, path: DocPath, what: String) {
        let located = self.changed.provenance.locate_section(key, path);
        self.out.push(ProofEdit {
            section,
            what,
            file: located.file,
            line: located.position.map(|p| p.line),
        });
    }

    fn verification(&mut self, base: &Profile) {
        const KEY: &str = "verification";
        let empty = orcho_receipts::VerificationContract::default();
        let old = base.verification.as_ref().unwrap_or(&empty);
        let new = self.changed.verification.as_ref().unwrap_or(&empty);
        let root = DocPath::root().key(KEY);
        let section = ProofSection::Verification;
        for name in &old.required {
            if !new.is_required(name.as_str()) {
                self.push(
                    section,
                    KEY,
                    root.key("required"),
                    format!("`{name}` is no longer required"),
                );
            }
        }
        for (i, name) in new.required.iter().enumerate() {
            if !old.is_required(name.as_str()) {
                self.push(
                    section,
                    KEY,
                    root.key("required").index(i),
                    format!("`{name}` is newly required"),
                );
            }
        }
        for (i, command) in new.commands.iter().enumerate() {
            let path = root.key("commands").index(i);
            match old.command(command.name.as_str()) {
                None => self.push(
                    section,
                    KEY,
                    path,
                    format!("command `{}` added", command.name),
                ),
                Some(before) => {
                    let changes = orcho_receipts::command_changes(before, command);
                    if !changes.is_empty() {
                        self.push(
                            section,
                            KEY,
                            path,
                            format!("command `{}`: {}", command.name, changes.join("; ")),
                        );
                    }
                }
            }
        }
        for command in &old.commands {
            if new.command(command.name.as_str()).is_none() {
                self.push(
                    section,
                    KEY,
                    root.key("commands"),
                    format!("command `{}` removed", command.name),
                );
            }
        }
        for (i, env) in new.environments.iter().enumerate() {
            let path = root.key("environments").index(i);
            match old.environment(env.name.as_str()) {
                None => self.push(
                    section,
                    KEY,
                    path,
                    format!("environment `{}` added", env.name),
                ),
                Some(before) => {
                    let changes = orcho_receipts::environment_changes(before, env);
                    if !changes.is_empty() {
                        self.push(
                            section,
                            KEY,
                            path,
                            format!("environment `{}`: {}", env.name, changes.join("; ")),
                        );
                    }
                }
            }
        }
        for env in &old.environments {
            if new.environment(env.name.as_str()).is_none() {
                self.push(
                    section,
                    KEY,
                    root.key("environments"),
                    format!("environment `{}` removed", env.name),
                );
            }
        }
        if old.worktree != new.worktree {
            self.push(
                section,
                KEY,
                root.key("worktree"),
                "the worktree's setup or teardown changed".to_owned(),
            );
        }
        if old.attest != new.attest {
            self.push(
                section,
                KEY,
                root.key("attest"),
                format!("attest `{}` → `{}`", old.attest, new.attest),
            );
        }
    }

    fn trust(&mut self, base: &Profile) {
        const KEY: &str = "trust";
        let keys = |p: &Profile| p.trust.as_ref().map(|t| t.keys.clone()).unwrap_or_default();
        let (old, new) = (keys(base), keys(self.changed));
        let root = DocPath::root().key(KEY).key("keys");
        for (i, key) in new.iter().enumerate() {
            let id = &key.ed25519.keyid()[..16];
            match old.iter().find(|k| k.ed25519 == key.ed25519) {
                None => self.push(
                    ProofSection::Trust,
                    KEY,
                    root.index(i),
                    format!("key `{}` ({id}) newly trusted", key.name),
                ),
                Some(before) if before.name != key.name => self.push(
                    ProofSection::Trust,
                    KEY,
                    root.index(i),
                    format!("key {id} renamed `{}` → `{}`", before.name, key.name),
                ),
                Some(_) => {}
            }
        }
        for key in &old {
            if !new.iter().any(|k| k.ed25519 == key.ed25519) {
                self.push(
                    ProofSection::Trust,
                    KEY,
                    DocPath::root().key(KEY),
                    format!(
                        "key `{}` ({}) no longer trusted",
                        key.name,
                        &key.ed25519.keyid()[..16]
                    ),
                );
            }
        }
    }

    fn permissions(&mut self, base: &Profile) {
        const KEY: &str = "permissions";
        let (old, new) = (&base.permissions, &self.changed.permissions);
        if old == new {
            return;
        }
        let root = DocPath::root().key(KEY);
        let preset = |p: &Option<crate::PermissionsSpec>| {
            p.as_ref()
                .and_then(|p| p.preset)
                .map_or_else(|| "(none)".to_owned(), |p| format!("`{p}`"))
        };
        if preset(old) != preset(new) {
            self.push(
                ProofSection::Permissions,
                KEY,
                root.key("preset"),
                format!("preset {} → {}", preset(old), preset(new)),
            );
        }
        let rules = |p: &Option<crate::PermissionsSpec>| {
            p.as_ref().map(|p| p.rules.clone()).unwrap_or_default()
        };
        let (old_rules, new_rules) = (rules(old), rules(new));
        for (i, rule) in new_rules.iter().enumerate() {
            if !old_rules.contains(rule) {
                self.push(
                    ProofSection::Permissions,
                    KEY,
                    root.key("rules").index(i),
                    format!("rule added: {rule}"),
                );
            }
        }
        for rule in &old_rules {
            if !new_rules.contains(rule) {
                self.push(
                    ProofSection::Permissions,
                    KEY,
                    root.key("rules"),
                    format!("rule removed: {rule}"),
                );
            }
        }
    }

    fn gates(&mut self, base: &Profile) {
        let gate_json = |g: &GateDecl| serde_json::to_string(g).unwrap_or_default();
        for phase in &self.changed.phases {
            let before = base.phases.iter().find(|p| p.name == phase.name);
            for gate in &phase.gates {
                let old = before.and_then(|p| p.gates.iter().find(|g| g.name == gate.name));
                let what = match old {
                    None => format!("phase `{}`: gate `{}` added", phase.name, gate.name),
                    Some(old) if gate_json(old) != gate_json(gate) => {
                        format!(
                            "phase `{}`: gate `{}` changed ({})",
                            phase.name,
                            gate.name,
                            gate_change(old, gate)
                        )
                    }
                    Some(_) => continue,
                };
                let located = self
                    .changed
                    .provenance
                    .locate(gate.origin.source, gate.origin.path());
                self.out.push(ProofEdit {
                    section: ProofSection::Gates,
                    what,
                    file: located.file,
                    line: located.position.map(|p| p.line),
                });
            }
        }
        for phase in &base.phases {
            let now = self.changed.phases.iter().find(|p| p.name == phase.name);
            for gate in &phase.gates {
                if now.is_some_and(|p| p.gates.iter().any(|g| g.name == gate.name)) {
                    continue;
                }
                let located = self.changed.provenance.locate(0, DocPath::root());
                self.out.push(ProofEdit {
                    section: ProofSection::Gates,
                    what: format!("phase `{}`: gate `{}` removed", phase.name, gate.name),
                    file: located.file,
                    line: None,
                });
            }
        }
    }
}

/// What differs between two declarations of a gate, in words.
fn gate_change(old: &GateDecl, new: &GateDecl) -> String {
    let mut out = Vec::new();
    if old.uses != new.uses {
        out.push(format!("uses `{}` → `{}`", old.uses, new.uses));
    }
    if old.on_fail != new.on_fail {
        out.push(format!("on_fail `{}` → `{}`", old.on_fail, new.on_fail));
    }
    if old.with != new.with {
        let shown = |w: &Option<serde_json::Value>| {
            w.as_ref()
                .map_or_else(|| "(none)".to_owned(), |w| format!("`{w}`"))
        };
        out.push(format!("with {} → {}", shown(&old.with), shown(&new.with)));
    }
    if out.is_empty() {
        out.push("its declaration".to_owned());
    }
    out.join("; ")
}
