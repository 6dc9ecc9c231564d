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
pub enum Naming {
    /// `run`, `handoff`.
    Cli,
    /// `run_id`, `handoff_id`.
    Mcp,
}

/// A run's id under the key [`Naming`] gives it.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum RunKey<'a> {
    /// The command line's key.
    Cli {
        /// The run.
        run: &'a RunId,
    },
    /// The MCP tools' key.
    Mcp {
        /// The run.
        run_id: &'a RunId,
    },
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
    /// `run` under this naming's key.
    pub fn run(self, run: &RunId) -> RunKey<'_> {
        match self {
            Self::Cli => RunKey::Cli { run },
            Self::Mcp => RunKey::Mcp { run_id: run },
        }
    }
}

/// A failed command: `kind` is `conflict` when a different decision was
/// recorded first, else `error`.
#[derive(Debug, Serialize)]
pub struct ErrorDoc<'a> {
    /// What failed, with its causes.
    pub error: String,
    /// `conflict` or `error`.
    pub kind: &'a str,
    /// What to do next, when there is something to say.
    pub hint: Option<&'a str>,
}

/// `orcho verify`.
#[derive(Debug, Serialize)]
pub struct VerifyDoc {
    /// Whether every environment and command passed.
    pub passed: bool,
    /// The declared environments checked before the commands ran.
    pub environments: Vec<CheckedEnvDoc>,
    /// The commands run, each with its receipt's result.
    pub commands: Vec<VerifiedDoc>,
    /// What was attached to the commit (`--attest`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attested: Option<AttestedDoc>,
}

impl VerifyDoc {
    /// The document of what a verify ran (nothing attested yet).
    pub fn of(verified: &orcho::checkout::Verified) -> Self {
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
pub struct ExecDoc<'a> {
    /// The command, as given.
    pub argv: &'a [String],
    /// How it ended, in words: `exit code 0`, `killed by SIGTERM`, ….
    pub exit: String,
    /// Its exit code, when it exited (not killed by a signal).
    pub exit_code: Option<i32>,
    /// Always `false`: an exploratory command proves nothing.
    pub authoritative: bool,
    /// How many exploratory commands this checkout's log holds.
    pub exploratory_commands: u64,
}

/// One environment `orcho verify` checked (its env-assertion receipt).
#[serde_with::skip_serializing_none]
#[derive(Debug, Serialize)]
pub struct CheckedEnvDoc {
    /// The environment's name.
    pub environment: String,
    /// Whether every assertion held.
    pub passed: bool,
    /// How many assertions it declares.
    pub assertions: usize,
    /// The first assertion that failed, and what it found.
    pub failed: Option<String>,
}

/// One command `orcho verify` ran.
#[derive(Debug, Serialize)]
pub struct VerifiedDoc {
    /// The command's name in the profile.
    pub command: String,
    /// Whether its receipt says it passed.
    pub passed: bool,
    /// How it exited: `exit 0`, `killed by SIGTERM`, ….
    pub exit: String,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
}

/// `orcho status`: the readiness summary, and whether every required
/// receipt is present.
#[derive(Debug, Serialize)]
pub struct StatusDoc<'a> {
    /// Each required command's receipt: present, missing, failed, stale, vacuous or invalid.
    #[serde(flatten)]
    pub summary: &'a orcho::receipts::ReadinessSummary,
    /// Whether every required receipt is present and nothing waits for a person.
    pub ready: bool,
    /// How the agents' hooks stand: stops let through unproven, hooks
    /// installed that never called Orcho, hooks switched off.
    #[serde(flatten)]
    pub hooks: &'a orcho_agents::hook::Health,
    /// What the change does to weaken its own proof, against `--base`
    /// (else `HEAD`): open (holding the checkout back until a person
    /// acknowledges it) and acknowledged, the edits of `orcho.yaml` among
    /// them (`profile_edit`); what a profile new since then declares.
    pub weakenings: &'a orcho::checkout::Weakened,
    /// The runs of this checkout that wait at their delivery gate: their
    /// work, and its receipts, are in their worktrees, not here yet.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub at_delivery: &'a [RunId],
}

/// The decision inbox: pending decisions, and run directories that could
/// not be read.
#[derive(Debug, Serialize)]
pub struct InboxDoc<'a> {
    /// The decisions runs wait on.
    pub pending: Vec<PendingDoc<'a>>,
    /// Run directories that could not be read, and why.
    pub degraded: Vec<DegradedDoc<'a>>,
    /// Runs no process drives any more, stopped mid-phase: each waits for a
    /// resume, not a decision.
    pub stopped: Vec<StoppedDoc<'a>>,
    /// How many decisions and stopped runs the filter kept, on every page.
    pub total: usize,
    /// The page shown, when paged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<PageDoc>,
}

/// Which page of the inbox a document holds.
#[derive(Debug, Serialize)]
pub struct PageDoc {
    /// The page, from 1.
    pub number: usize,
    /// How many entries a page holds.
    pub size: usize,
    /// How many pages there are.
    pub pages: usize,
}

/// A run that was stopped while it ran.
#[derive(Debug, Serialize)]
pub struct StoppedDoc<'a> {
    /// The run.
    #[serde(flatten)]
    pub run: RunKey<'a>,
    /// Where the run was started, with a shared store.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<&'a orcho::core::storage::RunOrigin>,
    /// The phase it was stopped in, when one was running.
    pub phase: Option<&'a str>,
    /// The command that drives it on.
    pub next_step: &'static str,
}

/// Where the runs of a shared store were started, by run.
pub type Origins = std::collections::BTreeMap<RunId, orcho::core::storage::RunOrigin>;

/// One decision a run waits on.
#[derive(Debug, Serialize)]
pub struct PendingDoc<'a> {
    /// The run.
    #[serde(flatten)]
    pub run: RunKey<'a>,
    /// Where the run was started (machine, checkout, repository, whether
    /// that is here), with a shared store.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<&'a orcho::core::storage::RunOrigin>,
    /// Since when it waits.
    pub since: String,
    /// Its kind, as `orcho inbox --kind` names it.
    pub kind: Option<&'static str>,
    /// The phase the decision is about.
    pub phase: &'a str,
    /// What opened it, in words.
    pub trigger: String,
    /// The phase's verdict, for a handoff.
    pub verdict: Option<String>,
    /// The actions a decision may take.
    pub available_actions: Vec<&'static str>,
    /// The decision already recorded, waiting for a resume.
    pub decision: Option<&'a str>,
    /// The command that decides it, or acts on the decision.
    pub next_step: &'static str,
}

/// A run directory the inbox could not read.
#[derive(Debug, Serialize)]
pub struct DegradedDoc<'a> {
    /// The directory.
    pub dir: &'a str,
    /// Why it could not be read.
    pub reason: &'a str,
}

impl<'a> InboxDoc<'a> {
    /// The store's inbox (or a page of it), with where each run was
    /// started.
    pub fn of(team: &'a orcho::TeamInbox, naming: Naming) -> Self {
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
pub struct HandoffDoc<'a> {
    /// The handoff's id (and its run's, for the command line).
    #[serde(flatten)]
    pub id: HandoffKey<'a>,
    /// The phase that handed off.
    pub phase: &'a str,
    /// The phase's verdict.
    pub verdict: &'static str,
    /// What opened the handoff, in words.
    pub trigger: String,
    /// The findings the phase and its gates reported.
    pub findings: &'a [Finding],
    /// The actions a decision may take.
    pub available_actions: Vec<&'static str>,
    /// The decision recorded on it, if any.
    pub decision: Option<DecisionDoc<'a>>,
}

/// A handoff's id: with its run for the CLI, alone for the MCP tools.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum HandoffKey<'a> {
    /// The command line's keys: the handoff and its run.
    Cli {
        /// The handoff.
        handoff: &'a HandoffId,
        /// Its run.
        run: &'a RunId,
    },
    /// The MCP tools' key: the handoff alone.
    Mcp {
        /// The handoff.
        handoff_id: &'a HandoffId,
    },
}

/// A recorded handoff decision.
#[derive(Debug, Serialize)]
pub struct DecisionDoc<'a> {
    /// The action.
    pub action: &'static str,
    /// The feedback or note given with it.
    pub text: Option<&'a str>,
}

impl<'a> HandoffDoc<'a> {
    /// The document of handoff `h` and the decision on it, keyed by `naming`.
    pub fn new(h: &'a PhaseHandoff, decided: Option<&'a HandoffChoice>, naming: Naming) -> Self {
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
pub struct GateDoc<'a> {
    /// The run.
    pub run: &'a RunId,
    /// What the run was started to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<&'a str>,
    /// The implementing phase's verdict.
    pub verdict: &'static str,
    /// The review's verdict.
    pub reviewer_verdict: &'static str,
    /// Where the run's work is.
    pub worktree: &'a str,
    /// The checkout it would be delivered into.
    pub target: &'a str,
    /// The commit the run started from.
    pub base: &'a str,
    /// The files the patch changes.
    pub diff: Vec<FileDoc<'a>>,
    /// The digest of the patch the gate would deliver: give it back with a
    /// decision to pin what was looked at (a gate opened again on new work
    /// then refuses it).
    pub patch_digest: String,
    /// The patch itself (`orcho delivery show --diff --json`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// The required receipts that are not present in the run's worktree.
    pub gaps: Vec<GapDoc<'a>>,
    /// The findings of the run's phases and gates.
    pub findings: &'a [Finding],
    /// The actions the gate offers.
    pub available_actions: Vec<&'static str>,
    /// The actions it does not offer, and why.
    pub blocked: Vec<BlockedDoc>,
    /// The waivers the release stands on.
    pub waivers: &'a [String],
    /// The target checkout as it is now, when it was checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_status: Option<TargetDoc>,
    /// The handoffs the run was moved past with `continue`.
    pub overridden: &'a [Overridden],
    /// The decision recorded on the gate, waiting for a resume.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<&'a Decided>,
    /// The run has ended: nothing is left to decide.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended: Option<&'a str>,
    /// The required commands run again before the gate was opened again
    /// (`orcho delivery rerun`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rerun: Vec<String>,
}

/// The target checkout's status for a run's diff, checked now.
#[derive(Debug, Serialize)]
pub struct TargetDoc {
    /// `clean`, `dirty`, `overlapping` or `conflicting`.
    pub state: &'static str,
    /// What it is, in a sentence.
    pub detail: String,
    /// The target's uncommitted paths the run also changed.
    pub overlapping: Vec<String>,
    /// The actions on the menu that deciding now would refuse.
    pub refused: Vec<&'static str>,
}

impl TargetDoc {
    /// The document of `status`, the target of `gate`.
    pub fn new(gate: &DeliveryGate, status: &TargetStatus) -> Self {
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
pub struct FileDoc<'a> {
    /// The file's path.
    pub path: &'a str,
    /// Lines added (none for a binary file).
    pub insertions: Option<u64>,
    /// Lines removed (none for a binary file).
    pub deletions: Option<u64>,
    /// Whether git takes it for binary.
    pub binary: bool,
}

/// A required receipt that is not present.
#[derive(Debug, Serialize)]
pub struct GapDoc<'a> {
    /// The command.
    pub command: &'a str,
    /// Its receipt's status: `missing`, `failed`, `stale`, `vacuous` or `invalid`.
    pub status: &'static str,
    /// Why, in words.
    pub reason: &'a str,
    /// What makes it present: `run`, `fix`, `re-run`, ….
    pub next_action: &'static str,
}

/// An action the gate does not offer, and why.
#[derive(Debug, Serialize)]
pub struct BlockedDoc {
    /// The action.
    pub action: &'static str,
    /// Why it is not offered.
    pub reason: String,
}

impl<'a> GateDoc<'a> {
    /// The document of `gate`, without its task, patch or target.
    pub fn new(gate: &'a DeliveryGate) -> Self {
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
    pub fn with_now(mut self, gate: &DeliveryGate, now: &'a GateNow) -> Self {
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
pub struct DecidedDoc<'a> {
    /// The run.
    pub run: &'a RunId,
    /// `handoff`, `delivery`, `intake` or `plan`.
    pub point: &'a str,
    /// The decision, as its action's name.
    pub decision: &'a str,
    /// `false` when the same decision was recorded before (a replay).
    pub recorded: bool,
    /// `halted` when the decision ended the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<&'static str>,
}

/// A run that finished.
#[derive(Debug, Serialize)]
pub struct FinishedDoc<'a> {
    /// The run.
    pub run: &'a RunId,
    /// How it ended.
    pub status: &'static str,
    /// Why, in words.
    pub reason: &'a str,
    /// Where its evidence bundle is.
    pub evidence: &'a str,
    /// What it cost in dollars, when a phase reported a price.
    pub cost_usd: Option<String>,
    /// The command to run next, when there is one (after `fix`: the
    /// correction follow-up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<&'a str>,
}

/// A run that paused at a decision nobody has taken.
#[derive(Debug, Serialize)]
pub struct PausedDoc<'a> {
    /// The run.
    pub run: &'a RunId,
    /// Its status.
    pub status: &'static str,
    /// `handoff`, `intake`, `touchpoint` or `delivery`.
    pub awaiting: &'a str,
    /// The command that decides it.
    pub hint: &'a str,
}

/// `orcho profile show --json`: where the profile comes from, the profile
/// as the engine runs it (the fields of its YAML, in JSON), and its
/// warnings.
#[derive(Debug, Serialize)]
pub struct ProfileDoc<'a> {
    /// The file, or the built-in profile, it was read from.
    pub source: &'a str,
    /// The profile, merged with what it extends.
    pub profile: &'a orcho::profile::Profile,
    /// What the profile allows but probably does not mean, each with its
    /// file, line and column.
    pub warnings: Vec<String>,
}

/// A run's pre-run intake question: the checkout's uncommitted changes and
/// what can be decided.
#[derive(Debug, Serialize)]
pub struct IntakeDoc<'a> {
    /// The run.
    #[serde(flatten)]
    pub run: RunKey<'a>,
    /// The checkout the run would start in.
    pub checkout: &'a str,
    /// Its `HEAD` commit.
    pub head: &'a str,
    /// Tracked files changed, each with how.
    pub tracked: Vec<String>,
    /// Untracked files.
    pub untracked: Vec<String>,
    /// The actions a decision may take.
    pub available_actions: Vec<&'static str>,
    /// The command that decides it.
    pub next: &'static str,
}

impl<'a> IntakeDoc<'a> {
    /// The document of `report`, `run`'s intake, keyed by `naming`, with the command that decides it.
    pub fn new(
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
pub struct AttestedDoc {
    /// The commit.
    pub commit: String,
    /// The commands whose receipts the attestation carries.
    pub commands: Vec<String>,
}

/// `orcho status --commit REV --json`.
#[derive(Debug, Serialize)]
pub struct CommitStatusDoc<'a> {
    /// The commit judged.
    pub commit: &'a str,
    /// Its tree.
    pub tree: &'a str,
    /// Whether its attestations prove every required command.
    pub ready: bool,
    /// `base REF` or `commit`: what the keys, `required` and the
    /// declarations came from.
    pub trust_source: String,
    /// The base's commit, when the base was the trust source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_commit: Option<&'a str>,
    /// Each required command and what its attestations show.
    pub required: &'a [orcho::attest::AttestedCommand],
    /// With `--base`: what the commit changes of what proves it.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub edits_what_proves_it: &'a [orcho::profile::ProofEdit],
    /// With `--base`: what the commit does to weaken its own proof
    /// otherwise (tests skipped or deleted, fewer assertions, the runner's
    /// configuration), for the change's reviewer.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub weakenings: &'a [orcho::receipts::weakening::Weakening],
}

impl<'a> CommitStatusDoc<'a> {
    /// The document of `proof`, with what the commit weakens.
    pub fn of(
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
pub struct AdviceDoc<'a> {
    /// The run.
    pub run_id: &'a RunId,
    /// The handoff advised on.
    pub handoff_id: &'a HandoffId,
    /// The advice's id.
    pub advice_id: String,
    /// The advisor that gave it.
    pub advisor: &'a str,
    /// The action it recommends.
    pub recommended_action: &'static str,
    /// How sure it says it is, from 0 to 1.
    pub confidence: Option<f64>,
    /// Why.
    pub rationale: &'a str,
    /// What could go wrong.
    pub risks: &'a [String],
    /// The feedback it would give a retry.
    pub retry_feedback: Option<&'a str>,
    /// The files it expects a retry to change.
    pub expected_files: &'a [camino::Utf8PathBuf],
    /// Always `false`.
    pub applied: bool,
    /// That advice is shown, never applied: a person decides.
    pub note: &'static str,
}

impl<'a> AdviceDoc<'a> {
    /// The document of `record`, on `handoff` of `run`, with `note`.
    pub fn of(
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
