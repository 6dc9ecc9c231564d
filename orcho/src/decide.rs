//! Deciding a run's open decision point the way people name it: an
//! action by its name, with its note or text, checked by the rules every
//! host shares, and what was recorded said back as data.
//!
//! Hosts (a command line, a web page, an MCP server) differ in how they
//! ask and how they say the result; what a decision means, which point it
//! is about and which notes it needs are this module's:
//!
//! ```no_run
//! # fn host(store: &orcho::Store, run: &orcho::core::RunId) -> Result<(), orcho::decide::DecideError> {
//! use orcho::decide::{self, Decision};
//! use orcho::handoff::{HandoffAction, decision::DecidedBy};
//!
//! let decided = decide::decide(
//!     store,
//!     run,
//!     Decision::handoff(HandoffAction::RetryFeedback, Some("names are out of scope".into())),
//!     DecidedBy::Operator,
//! )?;
//! assert_eq!(decided.point, "handoff");
//! # Ok(()) }
//! ```

use orcho_core::{Digest, HandoffId, RunId, RunStatus};
use orcho_handoff::{
    DeliveryAction, HandoffAction, IntakeAction,
    advisor::AdviceId,
    decision::{DecidedBy, DecisionRequest},
    delivery::{DeliveryChoice, DeliveryChoiceError},
    handoff::{ChoiceError, HandoffChoice},
    intake::{IntakeChoice, IntakeChoiceError},
    supervision::{Answer, DeviationAction, OpenTouchpoint, Question, TouchpointAnswers},
};

use crate::{EngineError, Store, TouchpointKind};

/// A decision on a run's open point, by name.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Decision {
    /// A phase handoff's action.
    Handoff {
        /// The handoff; default: the one the run is paused at (or, once it
        /// moved on, the last one decided, so that the same decision again
        /// replays).
        handoff: Option<HandoffId>,
        /// The action.
        action: HandoffAction,
        /// Its text: the feedback of `retry_feedback`, the reason of
        /// `continue_with_waiver`.
        text: Option<String>,
        /// The advice it applies, if it applies one.
        advice: Option<AdviceId>,
    },
    /// The delivery gate's action.
    Delivery {
        /// The action.
        action: DeliveryAction,
        /// The commit message of `approve`.
        message: Option<String>,
        /// The note (`fix` needs one).
        note: Option<String>,
        /// The patch the decision was taken on: refused when the gate's
        /// patch is another.
        patch: Option<Digest>,
    },
    /// An agent's permission question: allow or deny its tool call.
    Permission {
        /// The question; default: the run's open one (none open: the last
        /// one asked, so that the same decision again replays; several:
        /// refused, naming them).
        id: Option<HandoffId>,
        /// Allow or deny.
        action: orcho_handoff::ask::AskAction,
        /// A note: for `deny`, what the agent reads.
        note: Option<String>,
    },
    /// The pre-run intake question's action.
    Intake {
        /// The action.
        action: IntakeAction,
        /// The commit message of `commit`.
        message: Option<String>,
    },
    /// A plan waiting for approval.
    Plan {
        /// Approve, request changes, or reject.
        verdict: PlanVerdict,
        /// Feedback for the planner (request changes needs it).
        feedback: Option<String>,
    },
    /// The planner's questions, one answer each, in order: an option's
    /// number or label (several, comma-separated, where several may be
    /// chosen), else the answer's own words; empty for none.
    Questions {
        /// The answers.
        answers: Vec<String>,
    },
    /// What to do about a failed step.
    Deviation {
        /// The action.
        action: DeviationAction,
        /// Guidance for a retry, or a note for the record.
        note: Option<String>,
    },
}

impl Decision {
    /// A handoff's `action` on the open handoff, with its `text`.
    pub fn handoff(action: HandoffAction, text: Option<String>) -> Self {
        Self::Handoff {
            handoff: None,
            action,
            text,
            advice: None,
        }
    }
}

/// What a plan approval answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PlanVerdict {
    /// Carry the plan out.
    Approve,
    /// Send it back to the planner with feedback.
    RequestChanges,
    /// Stop the run.
    Reject,
}

impl PlanVerdict {
    /// The option the touchpoint offers for it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Approve => "Approve",
            Self::RequestChanges => "Request Changes",
            Self::Reject => "Reject",
        }
    }
}

/// The option a deviation touchpoint offers for `action`.
fn deviation_label(action: DeviationAction) -> &'static str {
    match action {
        DeviationAction::Retry => "Retry",
        DeviationAction::Replan => "Replan",
        _ => "Stop",
    }
}

/// Who records a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decider {
    /// A person through a host's interface, or the autopilot.
    By(DecidedBy),
    /// A program through a client connection, by its name and version (an
    /// agent over MCP): recorded as [`DecidedBy::Client`] with that name.
    Client(String),
}

impl From<DecidedBy> for Decider {
    fn from(by: DecidedBy) -> Self {
        Self::By(by)
    }
}

impl Decider {
    /// A request for `payload` by this decider.
    fn request<P: orcho_handoff::decision::DecisionPayload>(
        &self,
        payload: P,
    ) -> DecisionRequest<P> {
        match self {
            Self::By(by) => DecisionRequest::new(payload, *by),
            Self::Client(name) => DecisionRequest::by_client(payload, name.clone()),
        }
    }
}

/// What was recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Decided {
    /// The run.
    pub run: RunId,
    /// The point: `handoff`, `delivery`, `intake`, `plan`, `questions` or
    /// `deviation`.
    pub point: &'static str,
    /// The point's id: the handoff's or the touchpoint's (the delivery gate
    /// and the intake question are one per run).
    pub id: Option<HandoffId>,
    /// The action, as the point names it.
    pub action: String,
    /// Recorded now; `false`: the same decision was recorded before, and
    /// nothing changed (a replay).
    pub recorded: bool,
    /// The decision ended the run (a halt is terminal when decided).
    pub halted: bool,
}

/// Why a decision was not recorded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecideError {
    /// The run does not wait at the point the decision is about.
    #[error("run `{run}` {says}")]
    NotWaiting {
        /// The run.
        run: RunId,
        /// What it is not doing: `is not paused at a handoff`, `has no plan
        /// waiting for approval`, ….
        says: &'static str,
    },
    /// Several permission questions are open, and the decision did not
    /// name one: it could land on one the person never saw.
    #[error(
        "run `{run}` has {} open permission questions: name the one you decide ({})",
        open.len(),
        open.join("; ")
    )]
    WhichQuestion {
        /// The run.
        run: RunId,
        /// Each open question: its id and what it asks.
        open: Vec<String>,
    },
    /// The action needs text it was not given, or was given text it takes
    /// none of.
    #[error(transparent)]
    Text(#[from] ChoiceError),
    /// The delivery decision's parts do not go together.
    #[error(transparent)]
    Delivery(#[from] DeliveryChoiceError),
    /// The intake decision's parts do not go together.
    #[error(transparent)]
    Intake(#[from] IntakeChoiceError),
    /// Not one answer per question.
    #[error("the planner asked {asked} question(s) and {given} answer(s) were given")]
    AnswerCount {
        /// The questions, numbered from 1, with their headers.
        questions: Vec<String>,
        /// How many were asked.
        asked: usize,
        /// How many answers were given.
        given: usize,
    },
    /// An answer names no option of its question.
    #[error("answer {number} ([{header}]): {slip}")]
    Answer {
        /// Its number, from 1.
        number: usize,
        /// Its question's header.
        header: String,
        /// What is wrong with it.
        slip: String,
        /// The question's options, numbered.
        options: Vec<String>,
    },
    /// The store refused it, or could not record it.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// No action of that name is on offer at the point
    /// ([`PointView::action`](crate::point::PointView::action)).
    #[error(
        "`{given}` is not an action of this {point}: choose {}{}",
        orcho_core::spelling::quoted(offered),
        nearest.as_ref().map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default()
    )]
    UnknownAction {
        /// The point.
        point: crate::point::PointKind,
        /// The name given.
        given: String,
        /// The nearest action's name to a slip.
        nearest: Option<String>,
        /// The actions on offer.
        offered: Vec<String>,
    },
    /// The action needs a note and was given none (or only blanks).
    #[error("`{action}` needs a note: {what}")]
    NoteRequired {
        /// The action.
        action: String,
        /// What the note is.
        what: &'static str,
    },
    /// The run waits at another point than the one the decision was taken
    /// on ([`PointView::check_seen`](crate::point::PointView::check_seen)).
    #[error("the decision is about `{seen}`, and the run now waits at `{open}`")]
    PointMoved {
        /// The point's id the decision was taken on.
        seen: String,
        /// The point open now.
        open: String,
    },
    /// What the decision pinned changed since it was shown.
    #[error("the {what} changed: the decision is about {seen}, the {what} is now {now}")]
    Stale {
        /// What was pinned: `plan`, `patch`.
        what: &'static str,
        /// The digest the decision was taken on.
        seen: String,
        /// The digest now.
        now: String,
    },
    /// A digest was given for a point that pins none (an intake question,
    /// a handoff).
    #[error("the {point} pins no digest, and the decision names `{seen}`")]
    NothingPinned {
        /// The point.
        point: crate::point::PointKind,
        /// The digest given.
        seen: String,
    },
    /// The action takes no note and was given one: refused, never dropped.
    #[error("`{action}` takes no note")]
    NoteRefused {
        /// The action.
        action: String,
    },
}

/// Records `decision` on `run`'s point, as `by` (a [`DecidedBy`] or a
/// [`Decider::Client`]).
///
/// # Errors
///
/// A run that does not wait at the point, a decision whose parts break
/// its rules, or the store's refusal (a different decision recorded first,
/// an ended run, a patch that changed).
pub fn decide(
    store: &Store,
    run: &RunId,
    decision: Decision,
    by: impl Into<Decider>,
) -> Result<Decided, DecideError> {
    let by = by.into();
    let decided = |point, id: Option<&HandoffId>, action: &str, recorded| Decided {
        run: run.clone(),
        point,
        id: id.cloned(),
        action: action.to_owned(),
        recorded,
        halted: false,
    };
    let ended = |mut d: Decided| {
        d.halted = store
            .status(run)
            .is_ok_and(|view| view.status == RunStatus::Halted);
        d
    };
    match decision {
        Decision::Handoff {
            handoff,
            action,
            text,
            advice,
        } => {
            let handoff = match handoff {
                Some(h) => h,
                None => decision_handoff(store, run)?.ok_or_else(|| DecideError::NotWaiting {
                    run: run.clone(),
                    says: "is not paused at a handoff",
                })?,
            };
            // `continue` and `halt` carry no text: what is given with them
            // is a note for the record (why), kept with the decision.
            let (text, note) = if action.requires_text() {
                (text, None)
            } else {
                (None, text)
            };
            let choice = HandoffChoice::new(action, text.as_deref())?;
            // The recorded decision again is a replay: it succeeds and
            // changes nothing (also after the run acted on it); a different
            // one conflicts. The store refuses advice about another handoff.
            let mut request = by.request(choice);
            if let Some(note) = note {
                request = request.with_note(note);
            }
            if let Some(advice) = advice {
                request = request.with_advice(advice);
            }
            let recorded = store.decide(run, &handoff, request)?;
            let d = decided(
                "handoff",
                Some(&handoff),
                action.as_str(),
                !recorded.is_replay(),
            );
            Ok(if action == HandoffAction::Halt {
                ended(d)
            } else {
                d
            })
        }
        Decision::Delivery {
            action,
            message,
            note,
            patch,
        } => {
            let mut choice = DeliveryChoice::from_parts(action, message, note)?;
            if let Some(patch) = patch {
                choice = choice.for_patch(patch);
            }
            store.decide_delivery(run, by.request(choice))?;
            Ok(ended(decided("delivery", None, action.as_str(), true)))
        }
        Decision::Permission { id, action, note } => {
            let id = match id {
                Some(id) => id,
                // The open question; when none is open, the last one asked,
                // so that the same decision again replays. Several open:
                // the caller names one.
                None => {
                    let asked = store.asks(run)?;
                    let open: Vec<_> = asked.iter().filter(|a| a.is_pending()).collect();
                    if open.len() > 1 {
                        return Err(DecideError::WhichQuestion {
                            run: run.clone(),
                            open: open
                                .iter()
                                .map(|a| {
                                    format!(
                                        "`{}`: {} `{}`",
                                        a.id,
                                        a.question.tool,
                                        a.question.subject_shown()
                                    )
                                })
                                .collect(),
                        });
                    }
                    open.first()
                        .copied()
                        .or(asked.last())
                        .map(|a| a.id.clone())
                        .ok_or_else(|| DecideError::NotWaiting {
                            run: run.clone(),
                            says: "has no permission question",
                        })?
                }
            };
            let choice = orcho_handoff::ask::AskChoice::new(action, note)
                .map_err(|e| EngineError::run(run, crate::EngineErrorKind::Ask(Box::new(e))))?;
            let recorded = store.decide_ask(run, &id, by.request(choice))?;
            Ok(decided(
                "permission",
                Some(&id),
                action.as_str(),
                !recorded.is_replay(),
            ))
        }
        Decision::Intake { action, message } => {
            let choice = IntakeChoice::from_parts(action, message)?;
            store.decide_intake(run, by.request(choice))?;
            Ok(ended(decided("intake", None, action.as_str(), true)))
        }
        Decision::Plan { verdict, feedback } => {
            let open = open_touchpoint(store, run, TouchpointKind::PlanApproval)?;
            let context = feedback.map_or_else(Answer::none, Answer::text);
            store.answer_with(
                run,
                &open.id,
                by.request(TouchpointAnswers::new(vec![
                    Answer::select(verdict.label()),
                    context,
                ])),
            )?;
            Ok(decided("plan", Some(&open.id), verdict.label(), true))
        }
        Decision::Questions { answers: given } => {
            let open = open_touchpoint(store, run, TouchpointKind::Questions)?;
            let batch = open.touchpoint.questions().map_err(|e| {
                EngineError::run(run, crate::EngineErrorKind::Unreadable(Box::new(e)))
            })?;
            let questions = batch.questions();
            if given.len() != questions.len() {
                return Err(DecideError::AnswerCount {
                    questions: questions
                        .iter()
                        .enumerate()
                        .map(|(i, q)| format!("{}. [{}] {}", i + 1, q.header(), q.question()))
                        .collect(),
                    asked: questions.len(),
                    given: given.len(),
                });
            }
            let answers = questions
                .iter()
                .zip(&given)
                .enumerate()
                .map(|(i, (q, text))| {
                    parse_answer(q, text.trim()).map_err(|slip| DecideError::Answer {
                        number: i + 1,
                        header: q.header().to_owned(),
                        slip,
                        options: q
                            .options()
                            .iter()
                            .enumerate()
                            .map(|(i, o)| format!("{}) {}", i + 1, o.label))
                            .collect(),
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            store.answer_with(run, &open.id, by.request(TouchpointAnswers::new(answers)))?;
            Ok(decided("questions", Some(&open.id), "answered", true))
        }
        Decision::Deviation { action, note } => {
            let open = open_touchpoint(store, run, TouchpointKind::Deviation)?;
            let label = deviation_label(action);
            let context = note.map_or_else(Answer::none, Answer::text);
            store.answer_with(
                run,
                &open.id,
                by.request(TouchpointAnswers::new(vec![Answer::select(label), context])),
            )?;
            Ok(decided("deviation", Some(&open.id), label, true))
        }
    }
}

/// Who took `decision`, in words, as every host says it: the client's
/// name or the kind of decider, then the person where the host said
/// (`operator alice@build-1`, `mcp 0.1.0 root@vm`).
pub fn who_decided<P: orcho_handoff::decision::DecisionPayload>(
    decision: &orcho_handoff::decision::Decision<P>,
) -> String {
    let by = decision
        .client()
        .map_or_else(|| decision.decided_by().to_string(), str::to_owned);
    match decision.who() {
        Some(who) => format!("{by} {who}"),
        None => by,
    }
}

/// The handoff a decision without a named handoff is about: the one the run
/// is paused at; else, once the run moved on or ended, the last one with a
/// recorded decision, so that replaying that decision succeeds (nothing
/// changes) and a different one is a conflict. `None` when neither exists.
///
/// # Errors
///
/// An unknown run, or handoffs that cannot be read.
pub fn decision_handoff(store: &Store, run: &RunId) -> Result<Option<HandoffId>, EngineError> {
    let view = store.status(run)?;
    if let Some(open) = view.handoff() {
        return Ok(Some(open.clone()));
    }
    for handoff in store.handoffs(run)?.iter().rev() {
        if store.handoff_decision(run, handoff.id())?.is_some() {
            return Ok(Some(handoff.id().clone()));
        }
    }
    Ok(None)
}

/// The run's open touchpoint of `kind`.
fn open_touchpoint(
    store: &Store,
    run: &RunId,
    kind: TouchpointKind,
) -> Result<OpenTouchpoint, DecideError> {
    let view = store.status(run)?;
    let not_waiting = || DecideError::NotWaiting {
        run: run.clone(),
        says: match kind {
            TouchpointKind::PlanApproval => "has no plan waiting for approval",
            TouchpointKind::Questions => "is not waiting at planner questions",
            _ => "is not waiting at a deviation",
        },
    };
    let id = match view.touchpoint() {
        Some((id, k)) if k == kind => id.clone(),
        _ => return Err(not_waiting()),
    };
    store
        .touchpoints(run)?
        .into_iter()
        .find(|t| t.id == id)
        .ok_or_else(not_waiting)
}

/// An answer as a person types it: empty for none; option numbers or
/// labels (several comma-separated where several may be chosen); else the
/// text itself.
///
/// # Errors
///
/// Numbers that name no option: a slip, not an answer.
pub fn parse_answer(question: &Question, line: &str) -> Result<Answer, String> {
    if line.is_empty() {
        return Ok(Answer::none());
    }
    let option = |part: &str| {
        let part = part.trim();
        match part.parse::<usize>() {
            Ok(n) => n
                .checked_sub(1)
                .and_then(|i| question.options().get(i))
                .map(|o| o.label.clone()),
            Err(_) => question
                .options()
                .iter()
                .find(|o| o.label.eq_ignore_ascii_case(part))
                .map(|o| o.label.clone()),
        }
    };
    let parts: Vec<&str> = if question.multiple() {
        line.split(',').collect()
    } else {
        vec![line]
    };
    let picks: Option<Vec<String>> = parts.iter().copied().map(option).collect();
    match picks {
        Some(selected) if !selected.is_empty() => Ok(Answer::select_all(selected)),
        _ if !question.options().is_empty()
            && parts.iter().all(|p| p.trim().parse::<usize>().is_ok()) =>
        {
            Err(format!(
                "`{line}` names no option: choose {} by number or by name",
                match question.options().len() {
                    1 => "1".to_owned(),
                    n => format!("1-{n}"),
                }
            ))
        }
        _ => Ok(Answer::text(line)),
    }
}
