//! The JSON documents the CLI and the MCP server print.
//!
//! The CLI names a run `run`, the MCP tools `run_id` (and a handoff
//! `handoff`, or `handoff_id`): [`Naming`] picks which.

use orcho::{
    Overridden, RunView,
    core::{Finding, HandoffId, RunId},
    delivery::{DeliveryGate, IntakeReport, TargetStatus},
    handoff::{
        IntakeAction,
        handoff::{HandoffChoice, PhaseHandoff},
        inbox::{Inbox, PendingDecision},
    },
    receipts::Gap,
};
use serde::Serialize;

use crate::gate_now::{Decided, GateNow};

/// How ids are keyed: by the CLI, or by the MCP tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Naming {
    /// `run`, `handoff`.
    Cli,
    /// `run_id`, `handoff_id`.
    Mcp,
}

/// A run's id under the key [`Naming`] gives it.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub(crate) enum RunKey<'a> {
    Cli { run: &'a RunId },
    Mcp { run_id: &'a RunId },
}

impl RunKey<'_> {
    fn id(&self) -> &RunId {
        match self {
            Self::Cli { run } => run,
            Self::Mcp { run_id } => run_id,
        }
    }
}

impl Naming {
    pub(crate) fn run(self, run: &RunId) -> RunKey<'_> {
        match self {
            Self::Cli => RunKey::Cli { run },
            Self::Mcp => RunKey::Mcp { run_id: run },
        }
    }
}

/// A failed command: `kind` is `conflict` when a different decision was
/// recorded first, else `error`.
#[derive(Debug, Serialize)]
pub(crate) struct ErrorDoc<'a> {
    pub(crate) error: String,
    pub(crate) kind: &'a str,
    pub(crate) hint: Option<&'a str>,
}

/// `orcho verify`.
#[derive(Debug, Serialize)]
pub(crate) struct VerifyDoc {
    pub(crate) passed: bool,
    /// The declared environments checked before the commands ran.
    pub(crate) environments: Vec<CheckedEnvDoc>,
    pub(crate) commands: Vec<VerifiedDoc>,
    /// What was attached to the commit (`--attest`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) attested: Option<AttestedDoc>,
}

impl VerifyDoc {
    /// The document of what a verify ran (nothing attested yet).
    pub(crate) fn of(verified: &orcho::checkout::Verified) -> Self {
        Self {
            passed: verified.passed,
            environments: verified
                .environments
                .iter()
                .map(|receipt| {
                    let failed = receipt.results.iter().find(|r| !r.passed);
                    CheckedEnvDoc {
                        environment: receipt.environment.to_string(),
                        passed: failed.is_none(),
                        assertions: receipt.results.len(),
                        failed: failed.map(|f| format!("{}: {}", f.description, f.detail)),
                    }
                })
                .collect(),
            commands: verified
                .commands
                .iter()
                .map(|run| VerifiedDoc {
                    command: run.name.to_string(),
                    passed: run.passed,
                    exit: run.receipt.exit.to_string(),
                    duration_ms: u64::try_from(run.receipt.duration.as_millis())
                        .unwrap_or(u64::MAX),
                })
                .collect(),
            attested: None,
        }
    }
}

/// `orcho exec --json`: the exploratory log entry, and how many there are.
#[derive(Debug, Serialize)]
pub(crate) struct ExecDoc<'a> {
    pub(crate) argv: &'a [String],
    /// How it ended, in words: `exit code 0`, `killed by SIGTERM`, ….
    pub(crate) exit: String,
    pub(crate) exit_code: Option<i32>,
    /// Always `false`: an exploratory command proves nothing.
    pub(crate) authoritative: bool,
    /// How many exploratory commands this checkout's log holds.
    pub(crate) exploratory_commands: u64,
}

/// One environment `orcho verify` checked (its env-assertion receipt).
#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize)]
pub(crate) struct CheckedEnvDoc {
    pub(crate) environment: String,
    pub(crate) passed: bool,
    /// How many assertions it declares.
    pub(crate) assertions: usize,
    /// The first assertion that failed, and what it found.
    pub(crate) failed: Option<String>,
}

/// One command `orcho verify` ran.
#[derive(Debug, Serialize)]
pub(crate) struct VerifiedDoc {
    pub(crate) command: String,
    pub(crate) passed: bool,
    /// How it exited: `exit 0`, `killed by SIGTERM`, ….
    pub(crate) exit: String,
    pub(crate) duration_ms: u64,
}

/// `orcho status`: the readiness summary, and whether every required
/// receipt is present.
#[derive(Debug, Serialize)]
pub(crate) struct StatusDoc<'a> {
    #[serde(flatten)]
    pub(crate) summary: &'a orcho::receipts::ReadinessSummary,
    pub(crate) ready: bool,
    /// How the agents' hooks stand: stops let through unproven, hooks
    /// installed that never called Orcho, hooks switched off.
    #[serde(flatten)]
    pub(crate) hooks: &'a orcho_agents::hook::Health,
    /// What the change does to weaken its own proof, against `--base`
    /// (else `HEAD`): open (holding the checkout back until a person
    /// acknowledges it) and acknowledged, the edits of `orcho.yaml` among
    /// them (`profile_edit`); what a profile new since then declares.
    pub(crate) weakenings: &'a orcho::checkout::Weakened,
    /// The runs of this checkout that wait at their delivery gate: their
    /// work, and its receipts, are in their worktrees, not here yet.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) at_delivery: &'a [RunId],
}

/// The decision inbox: pending decisions, and run directories that could
/// not be read.
#[derive(Debug, Serialize)]
pub(crate) struct InboxDoc<'a> {
    pub(crate) pending: Vec<PendingDoc<'a>>,
    pub(crate) degraded: Vec<DegradedDoc<'a>>,
    /// Runs no process drives any more, stopped mid-phase: each waits for a
    /// resume, not a decision.
    pub(crate) stopped: Vec<StoppedDoc<'a>>,
    /// How many decisions and stopped runs the filter kept, on every page.
    pub(crate) total: usize,
    /// The page shown, when paged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) page: Option<PageDoc>,
}

/// Which page of the inbox a document holds.
#[derive(Debug, Serialize)]
pub(crate) struct PageDoc {
    /// The page, from 1.
    pub(crate) number: usize,
    /// How many entries a page holds.
    pub(crate) size: usize,
    /// How many pages there are.
    pub(crate) pages: usize,
}

/// A run that was stopped while it ran.
#[derive(Debug, Serialize)]
pub(crate) struct StoppedDoc<'a> {
    #[serde(flatten)]
    pub(crate) run: RunKey<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) origin: Option<&'a orcho::core::storage::RunOrigin>,
    pub(crate) phase: Option<&'a str>,
    pub(crate) next_step: &'static str,
}

/// Where the runs of a shared store were started, by run.
pub(crate) type Origins = std::collections::BTreeMap<RunId, orcho::core::storage::RunOrigin>;

/// One decision a run waits on.
#[derive(Debug, Serialize)]
pub(crate) struct PendingDoc<'a> {
    #[serde(flatten)]
    pub(crate) run: RunKey<'a>,
    /// Where the run was started (machine, checkout, repository, whether
    /// that is here), with a shared store.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) origin: Option<&'a orcho::core::storage::RunOrigin>,
    /// Since when it waits.
    pub(crate) since: String,
    /// Its kind, as `orcho inbox --kind` names it.
    pub(crate) kind: Option<&'static str>,
    pub(crate) phase: &'a str,
    pub(crate) trigger: String,
    pub(crate) verdict: Option<String>,
    pub(crate) available_actions: Vec<&'static str>,
    pub(crate) decision: Option<&'a str>,
    pub(crate) next_step: &'static str,
}

/// A run directory the inbox could not read.
#[derive(Debug, Serialize)]
pub(crate) struct DegradedDoc<'a> {
    pub(crate) dir: &'a str,
    pub(crate) reason: &'a str,
}

impl<'a> InboxDoc<'a> {
    /// The store's inbox (or a page of it), with where each run was
    /// started.
    pub(crate) fn of(team: &'a orcho::TeamInbox, naming: Naming) -> Self {
        let mut doc = Self::new(&team.inbox, &team.stopped, naming).with_origins(&team.origins);
        doc.total = team.total;
        doc.page = team.page.map(|page| PageDoc {
            number: page.number,
            size: page.size,
            pages: page.count(team.total),
        });
        doc
    }

    fn new(inbox: &'a Inbox, stopped: &'a [RunView], naming: Naming) -> Self {
        Self {
            total: inbox.pending().count() + stopped.len(),
            page: None,
            stopped: stopped
                .iter()
                .map(|view| StoppedDoc {
                    run: naming.run(&view.run),
                    origin: None,
                    phase: view.phase.as_ref().map(|p| p.as_str()),
                    next_step: "resume",
                })
                .collect(),
            pending: inbox
                .pending()
                .map(|p| PendingDoc::new(p, naming))
                .collect(),
            degraded: inbox
                .degraded()
                .map(|d| DegradedDoc {
                    dir: d.dir().as_str(),
                    reason: d.reason(),
                })
                .collect(),
        }
    }
}

impl<'a> InboxDoc<'a> {
    /// With where each run was started, for a shared store.
    fn with_origins(mut self, origins: &'a Origins) -> Self {
        for p in &mut self.pending {
            p.origin = origins.get(p.run.id());
        }
        for s in &mut self.stopped {
            s.origin = origins.get(s.run.id());
        }
        self
    }
}

impl<'a> PendingDoc<'a> {
    fn new(p: &'a PendingDecision, naming: Naming) -> Self {
        Self {
            run: naming.run(p.run()),
            origin: None,
            since: p.opened_at().to_string(),
            kind: orcho::point::PointKind::of_pending(p.point()).map(orcho::point::PointKind::name),
            phase: p.phase(),
            trigger: p.trigger(),
            verdict: p.verdict().map(|v| v.to_string()),
            available_actions: p.available_actions(),
            decision: p.decision(),
            next_step: p.next_step().as_str(),
        }
    }
}

/// A phase handoff and the decision recorded on it.
#[derive(Debug, Serialize)]
pub(crate) struct HandoffDoc<'a> {
    #[serde(flatten)]
    pub(crate) id: HandoffKey<'a>,
    pub(crate) phase: &'a str,
    pub(crate) verdict: &'static str,
    pub(crate) trigger: String,
    pub(crate) findings: &'a [Finding],
    pub(crate) available_actions: Vec<&'static str>,
    pub(crate) decision: Option<DecisionDoc<'a>>,
}

/// A handoff's id: with its run for the CLI, alone for the MCP tools.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(crate) enum HandoffKey<'a> {
    Cli {
        handoff: &'a HandoffId,
        run: &'a RunId,
    },
    Mcp {
        handoff_id: &'a HandoffId,
    },
}

/// A recorded handoff decision.
#[derive(Debug, Serialize)]
pub(crate) struct DecisionDoc<'a> {
    pub(crate) action: &'static str,
    pub(crate) text: Option<&'a str>,
}

impl<'a> HandoffDoc<'a> {
    pub(crate) fn new(
        h: &'a PhaseHandoff,
        decided: Option<&'a HandoffChoice>,
        naming: Naming,
    ) -> Self {
        Self {
            id: match naming {
                Naming::Cli => HandoffKey::Cli {
                    handoff: h.id(),
                    run: h.run(),
                },
                Naming::Mcp => HandoffKey::Mcp { handoff_id: h.id() },
            },
            phase: h.phase().as_str(),
            verdict: h.verdict().as_str(),
            trigger: h.trigger().to_string(),
            findings: h.findings(),
            available_actions: h.available_actions().iter().map(|a| a.as_str()).collect(),
            decision: decided.map(|c| DecisionDoc {
                action: c.action().as_str(),
                text: c.text(),
            }),
        }
    }
}

/// A run's delivery gate.
#[derive(Debug, Serialize)]
pub(crate) struct GateDoc<'a> {
    pub(crate) run: &'a RunId,
    /// What the run was started to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) task: Option<&'a str>,
    pub(crate) verdict: &'static str,
    pub(crate) reviewer_verdict: &'static str,
    pub(crate) worktree: &'a str,
    pub(crate) target: &'a str,
    pub(crate) base: &'a str,
    pub(crate) diff: Vec<FileDoc<'a>>,
    /// The digest of the patch the gate would deliver: give it back with a
    /// decision to pin what was looked at (a gate opened again on new work
    /// then refuses it).
    pub(crate) patch_digest: String,
    /// The patch itself (`orcho delivery show --diff --json`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) patch: Option<String>,
    pub(crate) gaps: Vec<GapDoc<'a>>,
    pub(crate) findings: &'a [Finding],
    pub(crate) available_actions: Vec<&'static str>,
    pub(crate) blocked: Vec<BlockedDoc>,
    /// The waivers the release stands on.
    pub(crate) waivers: &'a [String],
    /// The target checkout as it is now, when it was checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) target_status: Option<TargetDoc>,
    /// The handoffs the run was moved past with `continue`.
    pub(crate) overridden: &'a [Overridden],
    /// The decision recorded on the gate, waiting for a resume.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) decision: Option<&'a Decided>,
    /// The run has ended: nothing is left to decide.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ended: Option<&'a str>,
    /// The required commands run again before the gate was opened again
    /// (`orcho delivery rerun`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) rerun: Vec<String>,
}

/// The target checkout's status for a run's diff, checked now.
#[derive(Debug, Serialize)]
pub(crate) struct TargetDoc {
    /// `clean`, `dirty`, `overlapping` or `conflicting`.
    pub(crate) state: &'static str,
    /// What it is, in a sentence.
    pub(crate) detail: String,
    /// The target's uncommitted paths the run also changed.
    pub(crate) overlapping: Vec<String>,
    /// The actions on the menu that deciding now would refuse.
    pub(crate) refused: Vec<&'static str>,
}

impl TargetDoc {
    pub(crate) fn new(gate: &DeliveryGate, status: &TargetStatus) -> Self {
        Self {
            state: status.as_str(),
            detail: status.to_string(),
            overlapping: status
                .overlapping()
                .iter()
                .map(ToString::to_string)
                .collect(),
            refused: gate
                .available_actions()
                .intersection(status.refused())
                .spellings(),
        }
    }
}

/// One changed file of a diff.
#[derive(Debug, Serialize)]
pub(crate) struct FileDoc<'a> {
    pub(crate) path: &'a str,
    pub(crate) insertions: Option<u64>,
    pub(crate) deletions: Option<u64>,
    pub(crate) binary: bool,
}

/// A required receipt that is not present.
#[derive(Debug, Serialize)]
pub(crate) struct GapDoc<'a> {
    pub(crate) command: &'a str,
    pub(crate) status: &'static str,
    pub(crate) reason: &'a str,
    pub(crate) next_action: &'static str,
}

/// An action the gate does not offer, and why.
#[derive(Debug, Serialize)]
pub(crate) struct BlockedDoc {
    pub(crate) action: &'static str,
    pub(crate) reason: String,
}

impl<'a> GateDoc<'a> {
    pub(crate) fn new(gate: &'a DeliveryGate) -> Self {
        Self {
            run: gate.run(),
            task: None,
            verdict: gate.verdict().as_str(),
            reviewer_verdict: gate.reviewer_verdict().as_str(),
            worktree: gate.worktree().as_str(),
            target: gate.target().as_str(),
            base: gate.base(),
            diff: gate
                .diff()
                .files()
                .iter()
                .map(|f| FileDoc {
                    path: f.path().as_str(),
                    insertions: f.insertions(),
                    deletions: f.deletions(),
                    binary: f.is_binary(),
                })
                .collect(),
            patch_digest: gate.patch_digest().to_string(),
            patch: None,
            gaps: gate.gaps().iter().map(GapDoc::new).collect(),
            findings: gate.findings(),
            available_actions: gate
                .available_actions()
                .iter()
                .map(|a| a.as_str())
                .collect(),
            blocked: gate
                .blocked()
                .iter()
                .map(|b| BlockedDoc {
                    action: b.action().as_str(),
                    reason: b.reason().to_string(),
                })
                .collect(),
            waivers: gate.waivers(),
            target_status: None,
            overridden: &[],
            decision: None,
            ended: None,
            rerun: Vec::new(),
        }
    }

    /// With what is read now: the target's status and the handoffs the run
    /// was moved past.
    pub(crate) fn with_now(mut self, gate: &DeliveryGate, now: &'a GateNow) -> Self {
        self.target_status = now.target.as_ref().map(|t| TargetDoc::new(gate, t));
        self.overridden = &now.overridden;
        self.decision = now.decided.as_ref();
        self.ended = now.ended.as_deref();
        self.task = now.task.as_deref();
        self
    }
}

impl<'a> GapDoc<'a> {
    fn new(gap: &'a Gap) -> Self {
        Self {
            command: gap.command().as_str(),
            status: gap.status().as_str(),
            reason: gap.reason(),
            next_action: gap.next_action().as_str(),
        }
    }
}

/// A decision recorded by `orcho handoff decide`, `orcho delivery decide`,
/// `orcho intake` or `orcho plan …`.
#[derive(Debug, Serialize)]
pub(crate) struct DecidedDoc<'a> {
    pub(crate) run: &'a RunId,
    /// `handoff`, `delivery`, `intake` or `plan`.
    pub(crate) point: &'a str,
    pub(crate) decision: &'a str,
    pub(crate) recorded: bool,
    /// `halted` when the decision ended the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) status: Option<&'static str>,
}

/// A run that finished.
#[derive(Debug, Serialize)]
pub(crate) struct FinishedDoc<'a> {
    pub(crate) run: &'a RunId,
    pub(crate) status: &'static str,
    pub(crate) reason: &'a str,
    /// Where its evidence bundle is.
    pub(crate) evidence: &'a str,
    /// What it cost in dollars, when a phase reported a price.
    pub(crate) cost_usd: Option<String>,
    /// The command to run next, when there is one (after `fix`: the
    /// correction follow-up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) next: Option<&'a str>,
}

/// A run that paused at a decision nobody has taken.
#[derive(Debug, Serialize)]
pub(crate) struct PausedDoc<'a> {
    pub(crate) run: &'a RunId,
    pub(crate) status: &'static str,
    /// `handoff`, `intake`, `touchpoint` or `delivery`.
    pub(crate) awaiting: &'a str,
    /// The command that decides it.
    pub(crate) hint: &'a str,
}

/// `orcho profile show --json`: where the profile comes from, the profile
/// as the engine runs it (the fields of its YAML, in JSON), and its
/// warnings.
#[derive(Debug, Serialize)]
pub(crate) struct ProfileDoc<'a> {
    pub(crate) source: &'a str,
    pub(crate) profile: &'a orcho::profile::Profile,
    /// What the profile allows but probably does not mean, each with its
    /// file, line and column.
    pub(crate) warnings: Vec<String>,
}

/// A run's pre-run intake question: the checkout's uncommitted changes and
/// what can be decided.
#[derive(Debug, Serialize)]
pub(crate) struct IntakeDoc<'a> {
    #[serde(flatten)]
    pub(crate) run: RunKey<'a>,
    pub(crate) checkout: &'a str,
    pub(crate) head: &'a str,
    pub(crate) tracked: Vec<String>,
    pub(crate) untracked: Vec<String>,
    pub(crate) available_actions: Vec<&'static str>,
    pub(crate) next: &'static str,
}

impl<'a> IntakeDoc<'a> {
    pub(crate) fn new(
        run: &'a RunId,
        report: &'a IntakeReport,
        naming: Naming,
        next: &'static str,
    ) -> Self {
        Self {
            run: naming.run(run),
            checkout: report.checkout().as_str(),
            head: report.head(),
            tracked: report
                .tracked()
                .iter()
                .map(|c| format!("{:?} {}", c.kind(), c.path()))
                .collect(),
            untracked: report.untracked().iter().map(ToString::to_string).collect(),
            available_actions: IntakeAction::ALL.iter().map(|a| a.as_str()).collect(),
            next,
        }
    }
}

/// What `orcho verify` attached to the commit.
#[derive(Debug, Serialize)]
pub(crate) struct AttestedDoc {
    pub(crate) commit: String,
    pub(crate) commands: Vec<String>,
}

/// `orcho status --commit REV --json`.
#[derive(Debug, Serialize)]
pub(crate) struct CommitStatusDoc<'a> {
    pub(crate) commit: &'a str,
    pub(crate) tree: &'a str,
    pub(crate) ready: bool,
    /// `base REF` or `commit`: what the keys, `required` and the
    /// declarations came from.
    pub(crate) trust_source: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) base_commit: Option<&'a str>,
    pub(crate) required: &'a [orcho::attest::AttestedCommand],
    /// With `--base`: what the commit changes of what proves it.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) edits_what_proves_it: &'a [orcho::profile::ProofEdit],
    /// With `--base`: what the commit does to weaken its own proof
    /// otherwise (tests skipped or deleted, fewer assertions, the runner's
    /// configuration), for the change's reviewer.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(crate) weakenings: &'a [orcho::receipts::weakening::Weakening],
}

impl<'a> CommitStatusDoc<'a> {
    /// The document of `proof`, with what the commit weakens.
    pub(crate) fn of(
        proof: &'a orcho::proof::CommitProof,
        weakenings: &'a [orcho::receipts::weakening::Weakening],
    ) -> Self {
        Self {
            commit: &proof.commit,
            tree: &proof.tree,
            ready: proof.ready(),
            trust_source: proof.trust_source.to_string(),
            base_commit: match &proof.trust_source {
                orcho::proof::TrustSource::Base { commit, .. } => Some(commit.as_str()),
                _ => None,
            },
            required: &proof.judgement.commands,
            edits_what_proves_it: &proof.edits,
            weakenings,
        }
    }
}

/// `orcho handoff advise` and `orcho_handoff_advice`.
#[derive(Debug, Serialize)]
pub(crate) struct AdviceDoc<'a> {
    pub(crate) run_id: &'a RunId,
    pub(crate) handoff_id: &'a HandoffId,
    pub(crate) advice_id: String,
    pub(crate) advisor: &'a str,
    pub(crate) recommended_action: &'static str,
    pub(crate) confidence: Option<f64>,
    pub(crate) rationale: &'a str,
    pub(crate) risks: &'a [String],
    pub(crate) retry_feedback: Option<&'a str>,
    pub(crate) expected_files: &'a [camino::Utf8PathBuf],
    /// Always `false`.
    pub(crate) applied: bool,
    pub(crate) note: &'static str,
}

impl<'a> AdviceDoc<'a> {
    /// The document of `record`, on `handoff` of `run`, with `note`.
    pub(crate) fn of(
        run_id: &'a RunId,
        handoff_id: &'a HandoffId,
        record: &'a orcho::handoff::advisor::AdviceRecord,
        note: &'static str,
    ) -> Self {
        let a = record.advice();
        Self {
            run_id,
            handoff_id,
            advice_id: record.id().to_string(),
            advisor: record.advisor(),
            recommended_action: a.recommended_action.as_str(),
            confidence: a.confidence.value(),
            rationale: &a.rationale,
            risks: &a.risks,
            retry_feedback: a.retry_feedback.as_deref(),
            expected_files: &a.expected_files,
            applied: false,
            note,
        }
    }
}
