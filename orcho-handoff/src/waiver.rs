//! Waivers: durable records that a risk was accepted on purpose.

use std::collections::BTreeSet;

use orcho_core::{Digest, Finding, GateName, HandoffId, PhaseName, RunId, Timestamp};

use crate::{
    decision::{DecidedBy, Decision},
    handoff::{HandoffChoice, HandoffTrigger, PhaseHandoff},
};

/// One finding a waiver covers, identified by its fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaivedFinding {
    pub(crate) fingerprint: Digest,
    pub(crate) source: String,
    pub(crate) title: String,
}

impl WaivedFinding {
    orcho_core::getters! {
        /// The finding's [`fingerprint`](Finding::fingerprint): what the waiver
        /// matches on.
        pub fn fingerprint(&self) -> Digest;
        /// What produced the finding, for people reading the waiver.
        pub fn source(&self) -> &str;
        /// The finding's title, for people reading the waiver.
        pub fn title(&self) -> &str;
    }
}

/// A durable waiver, written by resuming a `continue_with_waiver` decision.
///
/// It covers exactly the findings the handoff showed (by fingerprint) and
/// the gate that triggered it, if one did — nothing else: a waiver for one
/// finding or gate never covers another. Later gates and acceptance read
/// waivers through [`HandoffStore::waivers`](crate::handoff::HandoffStore::waivers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiver {
    pub(crate) run: RunId,
    pub(crate) handoff: HandoffId,
    pub(crate) phase: PhaseName,
    pub(crate) reason: String,
    pub(crate) findings: Vec<WaivedFinding>,
    pub(crate) gates: Vec<GateName>,
    pub(crate) waived_by: DecidedBy,
    pub(crate) waived_at: Timestamp,
    pub(crate) decision_digest: Digest,
}

impl Waiver {
    pub(crate) fn from_decision(
        handoff: &PhaseHandoff,
        decision: &Decision<HandoffChoice>,
        reason: &str,
    ) -> Self {
        let findings = handoff
            .findings
            .iter()
            .map(|f| WaivedFinding {
                fingerprint: f.fingerprint(),
                source: f.source.clone(),
                title: f.title.clone(),
            })
            .collect();
        let gates = match &handoff.trigger {
            HandoffTrigger::Gate(gate) => vec![gate.clone()],
            HandoffTrigger::Verdict | HandoffTrigger::AlwaysPause => Vec::new(),
        };
        Self {
            run: handoff.run.clone(),
            handoff: handoff.id.clone(),
            phase: handoff.phase.clone(),
            reason: reason.to_owned(),
            findings,
            gates,
            waived_by: decision.decided_by(),
            waived_at: decision.decided_at(),
            decision_digest: decision.digest(),
        }
    }

    orcho_core::getters! {
        /// The run.
        pub fn run(&self) -> &RunId;
        /// The handoff whose decision made it.
        pub fn handoff(&self) -> &HandoffId;
        /// The phase.
        pub fn phase(&self) -> &PhaseName;
        /// Why the risk was accepted.
        pub fn reason(&self) -> &str;
        /// The findings waived.
        pub fn findings(&self) -> &[WaivedFinding];
        /// The gates waived.
        pub fn gates(&self) -> &[GateName];
        /// Who waived.
        pub fn waived_by(&self) -> DecidedBy;
        /// When (the decision's time).
        pub fn waived_at(&self) -> Timestamp;
        /// The digest of the decision that made it.
        pub fn decision_digest(&self) -> Digest;
    }

    /// Whether this waiver covers `finding`: its fingerprint is one of the
    /// waived findings'.
    pub fn covers_finding(&self, finding: &Finding) -> bool {
        let fingerprint = finding.fingerprint();
        self.findings.iter().any(|w| w.fingerprint == fingerprint)
    }

    /// Whether this waiver covers `gate`.
    pub fn covers_gate(&self, gate: &GateName) -> bool {
        self.gates.contains(gate)
    }
}

/// Every waiver of a run, for gates and acceptance to consult.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WaiverSet {
    waivers: Vec<Waiver>,
    fingerprints: BTreeSet<Digest>,
}

impl WaiverSet {
    /// A set of these waivers.
    pub fn new(waivers: Vec<Waiver>) -> Self {
        let fingerprints = waivers
            .iter()
            .flat_map(|w| w.findings.iter().map(|f| f.fingerprint))
            .collect();
        Self {
            waivers,
            fingerprints,
        }
    }

    /// The waivers, in handoff order.
    pub fn waivers(&self) -> &[Waiver] {
        &self.waivers
    }

    /// Whether any waiver covers `finding`.
    pub fn covers_finding(&self, finding: &Finding) -> bool {
        self.fingerprints.contains(&finding.fingerprint())
    }

    /// The waiver that covers `finding`, if any.
    pub fn waiver_for_finding(&self, finding: &Finding) -> Option<&Waiver> {
        self.waivers.iter().find(|w| w.covers_finding(finding))
    }

    /// Whether any waiver covers `gate`.
    pub fn covers_gate(&self, gate: &GateName) -> bool {
        self.waivers.iter().any(|w| w.covers_gate(gate))
    }

    /// Whether there are no waivers.
    pub fn is_empty(&self) -> bool {
        self.waivers.is_empty()
    }
}
