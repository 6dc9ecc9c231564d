//! An agent's permission question: a tool call that the permission rules
//! answer `ask`, made by an agent Orcho runs as a phase, where nobody sits
//! at the agent's terminal. It becomes a decision point of the run, which
//! any host shows and a person decides (`allow` or `deny`, with a note);
//! the agent's hook waits for the decision, and records that it answered.
//!
//! A question nobody answers in time is decided `deny` by the hook that
//! asked it, through the same slot: whichever decision is recorded first
//! holds, and the hook answers the agent with that one.
//!
//! ```
//! use std::{sync::Arc, time::Duration};
//! use orcho_core::{FixedClock, storage::FsStorage};
//! use orcho_handoff::{
//!     ask::{AskAction, AskChoice, AskQuestion, Asks},
//!     decision::{DecidedBy, DecisionRequest},
//! };
//!
//! let dir = tempfile::tempdir()?;
//! let storage = Arc::new(FsStorage::new(camino::Utf8Path::from_path(dir.path()).unwrap()));
//! let asks = Asks::new(storage, Arc::new(FixedClock::new("2026-11-28T10:00:00Z".parse()?)));
//! let run = "run-1".parse()?;
//! let question = AskQuestion::new("implement", "claude-code", "Bash", "git push", "rule 2 (bash `git push*` → ask)")
//!     .waiting_at_most(Duration::from_secs(600));
//! let id = asks.open(&run, &question)?;
//! assert!(asks.pending(&run)?.len() == 1);
//! asks.decide(&run, &id, DecisionRequest::new(AskChoice::new(AskAction::Allow, None)?, DecidedBy::Operator))?;
//! assert!(asks.pending(&run)?.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::{sync::Arc, time::Duration};

use camino::Utf8Path;
use orcho_core::{
    Clock, DocumentError, HandoffId, RunId, SchemaVersion, Timestamp,
    schema::{self, Document},
    storage::{PointKind, Set, Storage},
};
use serde::{Deserialize, Serialize};

use crate::{
    decision::{DecidedBy, Decision, DecisionPayload, DecisionRequest, RecordedDecision},
    inbox::{PendingDecision, PendingPoint},
    point::{DecisionPoint, PointError, PointErrorKind, Points, action_enum},
};

action_enum! {
    /// What a person answers an agent's permission question.
    ///
    /// ```
    /// use orcho_handoff::ask::AskAction;
    ///
    /// assert_eq!("deny".parse::<AskAction>()?, AskAction::Deny);
    /// # Ok::<(), orcho_handoff::point::UnknownActionError>(())
    /// ```
    pub enum AskAction in "permission" {
        /// The tool call runs.
        Allow => "allow": "let the agent's tool call run",
        /// The tool call is refused; the agent reads the note.
        Deny => "deny": "refuse the tool call; the agent is told so, with your note",
    }
}

/// How long an agent's question waits for a person when the profile does
/// not say (`permissions.ask_timeout`).
pub const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(600);

/// The client a question nobody answered is decided by.
pub const NO_ANSWER: &str = "orcho (nobody answered in time)";

/// What the agent asked to do, and why a person is asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AskQuestion {
    /// The phase whose agent asks.
    pub phase: String,
    /// The agent (`claude-code`, `codex`, …).
    pub agent: String,
    /// The tool, as the agent names it (`Bash`, `Write`).
    pub tool: String,
    /// What it would do: the command, or the path.
    pub subject: String,
    /// Why a person is asked: the rule that answered `ask`, in words.
    pub rule: String,
    /// How long the hook waits for a decision, in seconds; then it denies.
    pub timeout_secs: u64,
}

impl AskQuestion {
    /// The agent of `phase` asks to use `tool` on `subject`, held by
    /// `rule`; it waits [`DEFAULT_ASK_TIMEOUT`] unless told otherwise.
    pub fn new(
        phase: impl Into<String>,
        agent: impl Into<String>,
        tool: impl Into<String>,
        subject: impl Into<String>,
        rule: impl Into<String>,
    ) -> Self {
        Self {
            phase: phase.into(),
            agent: agent.into(),
            tool: tool.into(),
            subject: subject.into(),
            rule: rule.into(),
            timeout_secs: DEFAULT_ASK_TIMEOUT.as_secs(),
        }
    }

    /// It waits at most `timeout` for a person.
    #[must_use]
    pub fn waiting_at_most(mut self, timeout: Duration) -> Self {
        self.timeout_secs = timeout.as_secs().max(1);
        self
    }

    /// What it would do, as a person may be shown it: control characters
    /// (escape sequences, carriage returns, newlines) written out as
    /// `\u{…}`, so that no text the agent chose can redraw the screen or
    /// hide part of the command; cut after 300 characters, and said so.
    pub fn subject_shown(&self) -> String {
        shown(&self.subject)
    }

    /// How long the hook waits for a decision.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs)
    }

    /// The question in words: "claude-code asks to run `git push` (Bash) in
    /// `implement`".
    pub fn headline(&self) -> String {
        format!(
            "{} asks to use {} on `{}` in `{}`",
            shown(&self.agent),
            shown(&self.tool),
            self.subject_shown(),
            shown(&self.phase)
        )
    }
}

/// A person's answer: allow or deny, with a note the agent reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskChoice {
    action: AskAction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

impl AskChoice {
    /// `action`, with `note` when it is not blank.
    ///
    /// # Errors
    ///
    /// Never today; a note's rules may grow.
    pub fn new(action: AskAction, note: Option<String>) -> Result<Self, AskError> {
        Ok(Self {
            action,
            note: note.filter(|n| !n.trim().is_empty()),
        })
    }

    /// The action.
    pub fn action(&self) -> AskAction {
        self.action
    }

    /// The note, if any.
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }
}

impl DecisionPayload for AskChoice {
    const KIND: &'static str = "permission";

    fn label(&self) -> String {
        self.action.as_str().to_owned()
    }
}

/// What the hook did with the decision: the agent was answered.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AskOutcome {
    /// How the agent was answered.
    pub answered: AskAction,
    /// When.
    pub at: Timestamp,
}

/// A permission question cannot be asked, decided or answered.
pub type AskError = PointError<AskRefusal>;

/// What only a permission question refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AskRefusal {
    /// The agent was answered already: deciding now changes nothing.
    #[error("the agent was answered already ({0})")]
    Answered(AskAction),
    /// Only a person answers an agent's question: a client (an agent over
    /// MCP, say) may not, or an agent could answer its own.
    #[error(
        "an agent's permission question is answered by a person (the command line or the web \
         inbox), not by a client{}",
        client.as_ref().map(|c| format!(" (`{c}`)")).unwrap_or_default()
    )]
    OperatorRequired {
        /// The client that tried.
        client: Option<String>,
    },
}

impl crate::point::Refusal for AskRefusal {
    fn is_conflict(&self) -> bool {
        matches!(self, Self::Answered(_))
    }
}

type Kind = PointErrorKind<AskRefusal>;

/// The question's document.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AskDoc {
    schema: SchemaVersion,
    run_id: RunId,
    id: HandoffId,
    #[serde(flatten)]
    question: AskQuestion,
    asked_at: Timestamp,
}

impl Document for AskDoc {
    const KIND: &'static str = "permission question";
    /// Version 1: run_id, id, phase, agent, tool, subject, rule,
    /// timeout_secs, asked_at.
    const SCHEMA: SchemaVersion = SchemaVersion::new(1);
}

/// The outcome's document.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AskOutcomeDoc {
    schema: SchemaVersion,
    run_id: RunId,
    answered: AskAction,
    at: Timestamp,
}

impl Document for AskOutcomeDoc {
    const KIND: &'static str = "permission answer";
    /// Version 1: run_id, answered, at.
    const SCHEMA: SchemaVersion = SchemaVersion::new(1);
}

/// Permission questions as a kind of decision point.
#[derive(Debug)]
pub enum AskPoints {}

impl DecisionPoint for AskPoints {
    const WHAT: &'static str = "permission question";
    const NOT_FOUND: &'static str = "the run has no such permission question";
    const ALREADY_OPEN: &'static str = "a permission question of that id was asked already";

    type Question = AskQuestion;
    type Choice = AskChoice;
    type Outcome = AskOutcome;
    type Refusal = AskRefusal;
    const KIND: PointKind = PointKind::Permission;

    fn encode_question(
        run: &RunId,
        id: &HandoffId,
        question: &AskQuestion,
        at: Timestamp,
    ) -> Result<Vec<u8>, DocumentError> {
        schema::encode(&AskDoc {
            schema: AskDoc::SCHEMA,
            run_id: run.clone(),
            id: id.clone(),
            question: question.clone(),
            asked_at: at,
        })
    }

    fn decode_question(
        bytes: &[u8],
        at: &Utf8Path,
        run: &RunId,
        id: &HandoffId,
    ) -> Result<(AskQuestion, Timestamp), Kind> {
        let doc = schema::decode::<AskDoc>(bytes, Some(at))?;
        if doc.run_id != *run || doc.id != *id {
            return Err(Kind::misplaced(&doc.run_id, Some(&doc.id)));
        }
        Ok((doc.question, doc.asked_at))
    }

    fn read_outcome(
        points: &Points<Self>,
        run: &RunId,
        id: &HandoffId,
    ) -> Result<Option<AskOutcome>, Kind> {
        match points.read_outcome_document::<AskOutcomeDoc>(run, id)? {
            Some(doc) if doc.run_id == *run => Ok(Some(AskOutcome {
                answered: doc.answered,
                at: doc.at,
            })),
            Some(doc) => Err(Kind::misplaced(&doc.run_id, None)),
            None => Ok(None),
        }
    }

    fn write_outcome(
        points: &Points<Self>,
        decision: &Decision<AskChoice>,
        outcome: &AskOutcome,
    ) -> Result<(), Kind> {
        let run = decision.run();
        points.write_outcome_document(
            run,
            decision.point(),
            &AskOutcomeDoc {
                schema: AskOutcomeDoc::SCHEMA,
                run_id: run.clone(),
                answered: outcome.answered,
                at: outcome.at,
            },
        )
    }
}

/// One permission question of a run, as it stands.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Asked {
    /// Its id (`ask-0001`).
    pub id: HandoffId,
    /// What was asked.
    pub question: AskQuestion,
    /// When.
    pub asked_at: Timestamp,
    /// The decision, once recorded.
    pub decision: Option<Decision<AskChoice>>,
    /// How the agent was answered, once it was.
    pub outcome: Option<AskOutcome>,
}

impl Asked {
    /// Whether it waits for a person: nobody decided it yet.
    pub fn is_pending(&self) -> bool {
        self.decision.is_none() && self.outcome.is_none()
    }
}

/// The permission questions of the runs of one store. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Asks {
    points: Points<AskPoints>,
}

impl Asks {
    /// The questions kept in `storage`.
    pub fn new(storage: Arc<dyn Storage>, clock: Arc<dyn Clock>) -> Self {
        Self {
            points: Points::new(storage, clock),
        }
    }

    /// Asks `question` for `run`: a new point, `ask-0001`, `ask-0002`, ….
    ///
    /// # Errors
    ///
    /// When it cannot be written.
    pub fn open(&self, run: &RunId, question: &AskQuestion) -> Result<HandoffId, AskError> {
        let err = |kind| PointError::of_run("ask the permission question of", run, kind);
        let mut n = self.ids(run).map_err(err)?.len() + 1;
        loop {
            let id = HandoffId::new(format!("ask-{n:04}"))
                .map_err(|e| err(Kind::Corrupt(e.to_string())))?;
            match self.points.open(run, &id, question) {
                Ok(_) => return Ok(id),
                // Another agent of the run asked at the same moment.
                Err(Kind::AlreadyOpen(_)) if n < 100_000 => n += 1,
                Err(kind) => return Err(err(kind)),
            }
        }
    }

    fn ids(&self, run: &RunId) -> Result<Vec<HandoffId>, Kind> {
        let mut ids: Vec<HandoffId> = self
            .points
            .storage()
            .list(run, Set::Questions(PointKind::Permission))?
            .into_iter()
            .filter_map(|name| HandoffId::new(name).ok())
            .collect();
        sort_asked(&mut ids);
        Ok(ids)
    }

    /// Every permission question of `run`, oldest first.
    ///
    /// # Errors
    ///
    /// When one cannot be read.
    pub fn all(&self, run: &RunId) -> Result<Vec<Asked>, AskError> {
        let err = |kind| PointError::of_run("read the permission questions of", run, kind);
        let mut all = Vec::new();
        for id in self.ids(run).map_err(err)? {
            let err = |kind| Points::<AskPoints>::error("read", run, &id, kind);
            let (question, asked_at) = self.points.question(run, &id).map_err(err)?;
            let decision = self
                .points
                .recorded(run, &id)
                .map_err(err)?
                .map(RecordedDecision::into_decision);
            let outcome = self.points.outcome(run, &id).map_err(err)?;
            all.push(Asked {
                id,
                question,
                asked_at,
                decision,
                outcome,
            });
        }
        Ok(all)
    }

    /// The questions of `run` nobody decided yet, oldest first.
    ///
    /// # Errors
    ///
    /// When one cannot be read.
    pub fn pending(&self, run: &RunId) -> Result<Vec<Asked>, AskError> {
        let mut all = self.all(run)?;
        all.retain(Asked::is_pending);
        Ok(all)
    }

    /// Records a decision on question `id` of `run`. The same decision
    /// again replays; another conflicts; one after the agent was answered
    /// is refused; so is one by anybody but an operator (a person), the
    /// hook's deny when nobody answered in time excepted.
    ///
    /// # Errors
    ///
    /// Not found, a conflict, a storage error.
    pub fn decide(
        &self,
        run: &RunId,
        id: &HandoffId,
        request: DecisionRequest<AskChoice>,
    ) -> Result<RecordedDecision<AskChoice>, AskError> {
        let outcome = self
            .points
            .outcome(run, id)
            .map_err(|kind| Points::<AskPoints>::error("decide", run, id, kind))?;
        self.points
            .decide(run, id, request, |_, request, _| {
                // A person decides; the hook's own deny when nobody answered
                // in time is the one other decider.
                let nobody = request.client() == Some(NO_ANSWER)
                    && request.payload().action() == AskAction::Deny;
                if request.decided_by() != DecidedBy::Operator && !nobody {
                    return Err(Kind::Refused(AskRefusal::OperatorRequired {
                        client: request.client().map(str::to_owned),
                    }));
                }
                match &outcome {
                    Some(o) if o.answered != request.payload().action() => {
                        Err(Kind::Refused(AskRefusal::Answered(o.answered)))
                    }
                    _ => Ok(()),
                }
            })
            .map_err(|kind| Points::<AskPoints>::error("decide", run, id, kind))
    }

    /// The decision recorded on question `id`, if any.
    ///
    /// # Errors
    ///
    /// When the record cannot be read.
    pub fn recorded(
        &self,
        run: &RunId,
        id: &HandoffId,
    ) -> Result<Option<RecordedDecision<AskChoice>>, AskError> {
        self.points
            .recorded(run, id)
            .map_err(|kind| Points::<AskPoints>::error("read", run, id, kind))
    }

    /// Waits for the decision on question `id`, looking every `every`,
    /// until `deadline`; then records `deny` as nobody's answer (a
    /// decision recorded first holds). Records that the agent was answered,
    /// and returns the decision it was answered with.
    ///
    /// # Errors
    ///
    /// When the store cannot be read or written.
    pub fn wait(
        &self,
        run: &RunId,
        id: &HandoffId,
        deadline: std::time::Instant,
        every: Duration,
    ) -> Result<Decision<AskChoice>, AskError> {
        let recorded = loop {
            if let Some(recorded) = self.recorded(run, id)? {
                break recorded;
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                let (question, _) = self
                    .points
                    .question(run, id)
                    .map_err(|kind| Points::<AskPoints>::error("read", run, id, kind))?;
                let note = format!("nobody answered within {}", in_words(question.timeout()));
                let deny = AskChoice::new(AskAction::Deny, Some(note))?;
                // A person's decision recorded meanwhile holds: read it back.
                match self.decide(run, id, DecisionRequest::by_client(deny, NO_ANSWER)) {
                    Ok(recorded) => break recorded,
                    Err(e) if e.is_conflict() => continue,
                    Err(e) => return Err(e),
                }
            }
            std::thread::sleep(every.min(deadline - now));
        };
        let answered = recorded.decision().payload().action();
        let at = self.points.clock().now();
        self.points
            .act(&recorded, |_, _| Ok(AskOutcome { answered, at }))
            .map_err(|kind| Points::<AskPoints>::error("answer", run, id, kind))?;
        Ok(recorded.into_decision())
    }

    /// The [`Scanner`](crate::inbox::Scanner) of permission questions: each
    /// one nobody decided yet.
    ///
    /// # Errors
    ///
    /// When they cannot be read, said in words.
    pub fn scan(storage: &Arc<dyn Storage>, run: &RunId) -> Result<Vec<PendingDecision>, String> {
        let asks = Self::new(
            Arc::clone(storage),
            Arc::new(orcho_core::SystemClock::new()),
        );
        Ok(asks
            .pending(run)
            .map_err(|e| orcho_core::error_chain(&e))?
            .into_iter()
            .map(|asked| {
                let until = asked
                    .asked_at
                    .checked_add(asked.question.timeout())
                    .unwrap_or(asked.asked_at);
                PendingDecision::new(
                    run.clone(),
                    PendingPoint::Permission {
                        id: asked.id,
                        phase: asked.question.phase.clone(),
                        tool: asked.question.tool,
                        subject: asked.question.subject,
                        until,
                    },
                    None,
                    None,
                    asked.asked_at,
                )
            })
            .collect())
    }
}

/// Who decided a question, when it was not a person: nobody, in time.
pub fn decided_by_nobody(decision: &Decision<AskChoice>) -> bool {
    decision.decided_by() == DecidedBy::Client && decision.client() == Some(NO_ANSWER)
}

/// `text` with its control characters written out and cut after 300
/// characters (see [`AskQuestion::subject_shown`]).
pub fn shown(text: &str) -> String {
    const MAX: usize = 300;
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == MAX {
            out.push_str(" … (cut)");
            break;
        }
        if c.is_control() {
            let _ = std::fmt::Write::write_fmt(&mut out, format_args!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// `d` as people say it: `10 min`, `90 s`, `2 h`.
pub fn in_words(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        s if s >= 3600 && s % 3600 == 0 => format!("{} h", s / 3600),
        s if s >= 60 && s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

/// Puts question ids in the order they were asked: by number (`ask-9999`
/// before `ask-10000`, which text order puts first).
fn sort_asked(ids: &mut [HandoffId]) {
    let number = |id: &HandoffId| {
        id.as_str()
            .strip_prefix("ask-")
            .and_then(|n| n.parse::<u64>().ok())
    };
    ids.sort_by(|a, b| (number(a), a).cmp(&(number(b), b)));
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use orcho_core::{SystemClock, storage::FsStorage};

    use super::*;

    #[test]
    fn questions_are_in_the_order_they_were_asked_past_ask_9999() {
        let mut ids: Vec<HandoffId> = ["ask-10000", "ask-0002", "ask-9999", "ask-0010"]
            .into_iter()
            .map(|id| HandoffId::new(id).unwrap())
            .collect();
        sort_asked(&mut ids);
        let ids: Vec<&str> = ids.iter().map(HandoffId::as_str).collect();
        assert_eq!(ids, ["ask-0002", "ask-0010", "ask-9999", "ask-10000"]);
    }

    fn asks() -> (tempfile::TempDir, Asks, RunId) {
        let dir = tempfile::tempdir().unwrap();
        let root = camino::Utf8PathBuf::try_from(dir.path().to_owned()).unwrap();
        let asks = Asks::new(Arc::new(FsStorage::new(root)), Arc::new(SystemClock::new()));
        (dir, asks, "run-1".parse().unwrap())
    }

    fn question() -> AskQuestion {
        AskQuestion::new("implement", "codex", "Bash", "git push", "rule 2")
    }

    fn choice(action: AskAction, note: Option<&str>) -> DecisionRequest<AskChoice> {
        DecisionRequest::new(
            AskChoice::new(action, note.map(str::to_owned)).unwrap(),
            DecidedBy::Operator,
        )
    }

    #[test]
    fn questions_are_numbered_and_listed_until_decided() {
        let (_dir, asks, run) = asks();
        let first = asks.open(&run, &question()).unwrap();
        let second = asks.open(&run, &question()).unwrap();
        assert_eq!((first.as_str(), second.as_str()), ("ask-0001", "ask-0002"));
        assert_eq!(asks.pending(&run).unwrap().len(), 2);
        asks.decide(&run, &first, choice(AskAction::Deny, Some("  ")))
            .unwrap();
        let all = asks.all(&run).unwrap();
        // A blank note is no note.
        assert_eq!(all[0].decision.as_ref().unwrap().payload().note(), None);
        assert_eq!(asks.pending(&run).unwrap()[0].id, second);
    }

    #[test]
    fn a_waiting_hook_gets_the_persons_decision_and_records_that_it_answered() {
        let (_dir, asks, run) = asks();
        let id = asks.open(&run, &question()).unwrap();
        let deciding = {
            let (asks, run, id) = (asks.clone(), run.clone(), id.clone());
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(100));
                asks.decide(&run, &id, choice(AskAction::Allow, Some("once")))
                    .unwrap();
            })
        };
        let started = Instant::now();
        let decision = asks
            .wait(
                &run,
                &id,
                started + Duration::from_secs(30),
                Duration::from_millis(10),
            )
            .unwrap();
        deciding.join().unwrap();
        assert_eq!(decision.payload().action(), AskAction::Allow);
        assert!(started.elapsed() < Duration::from_secs(10));
        let asked = &asks.all(&run).unwrap()[0];
        assert_eq!(
            asked.outcome.as_ref().map(|o| o.answered),
            Some(AskAction::Allow)
        );
        // Once the agent was answered, another decision is refused.
        let late = asks
            .decide(&run, &id, choice(AskAction::Deny, None))
            .unwrap_err();
        assert!(late.is_conflict(), "{late}");
    }

    #[test]
    fn only_a_person_answers_and_a_client_is_refused() {
        let (_dir, asks, run) = asks();
        let id = asks.open(&run, &question()).unwrap();
        // An agent over MCP, say, may not allow itself.
        let client = asks
            .decide(
                &run,
                &id,
                DecisionRequest::by_client(
                    AskChoice::new(AskAction::Allow, None).unwrap(),
                    "mcp 0.1.0",
                ),
            )
            .unwrap_err();
        assert!(
            orcho_core::error_chain(&client).contains("answered by a person"),
            "{client}"
        );
        assert!(!client.is_conflict());
        // Nor pass for the hook's own answer with an allow.
        let posing =
            DecisionRequest::by_client(AskChoice::new(AskAction::Allow, None).unwrap(), NO_ANSWER);
        assert!(asks.decide(&run, &id, posing).is_err());
        assert!(asks.pending(&run).unwrap().len() == 1);
        asks.decide(&run, &id, choice(AskAction::Allow, None))
            .unwrap();
    }

    #[test]
    fn nobody_answering_in_time_is_a_deny_that_says_so() {
        let (_dir, asks, run) = asks();
        let id = asks
            .open(&run, &question().waiting_at_most(Duration::from_secs(90)))
            .unwrap();
        let decision = asks
            .wait(&run, &id, Instant::now(), Duration::from_millis(10))
            .unwrap();
        assert_eq!(decision.payload().action(), AskAction::Deny);
        assert!(decided_by_nobody(&decision));
        assert_eq!(
            decision.payload().note(),
            Some("nobody answered within 90 s")
        );
        assert_eq!(in_words(Duration::from_secs(600)), "10 min");
        assert_eq!(in_words(Duration::from_secs(7200)), "2 h");
    }
}
