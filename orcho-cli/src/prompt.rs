//! Decisions asked at a terminal: numbered menus on standard error, answers
//! read from standard input.

use std::fmt::Write as _;
use std::io::{BufRead, Write};
use std::sync::{
    Mutex, OnceLock, PoisonError,
    atomic::{AtomicBool, Ordering},
    mpsc,
};
use std::time::Duration;

use orcho::{
    SupervisionRequest,
    delivery::{DeliveryGate, TargetStatus},
    handoff::{
        Advice, DeliveryAction, HandoffAction, IntakeAction,
        delivery::DeliveryChoice,
        handoff::{HandoffChoice, PhaseHandoff},
        intake::IntakeChoice,
        point::Action,
        supervision::{Answer, Question},
    },
};

use crate::{error::CliError, output};

/// Asks `question` and reads one line; a closed standard input (Ctrl-D) is
/// [`CliErrorKind::InputClosed`](crate::error::CliErrorKind::InputClosed):
/// the decision stays open, and the run pauses there.
fn prompt(question: &str) -> Result<String, CliError> {
    {
        // Not held while reading: Ctrl-C's handler writes to standard
        // error, and must not wait for the answer to do so.
        let mut err = std::io::stderr().lock();
        write!(err, "{question}")?;
        err.flush()?;
    }
    match next_line()? {
        Some(line) => Ok(line.trim().to_owned()),
        None => {
            // The next output starts on a line of its own.
            output::err("");
            Err(CliError::input_closed())
        }
    }
}

/// Standard input's lines, read on a thread of their own: a prompt given up
/// (its point decided elsewhere) leaves the next line typed to the next
/// prompt. `None` is the end of input.
type Line = std::io::Result<Option<String>>;

static LINES: OnceLock<Mutex<mpsc::Receiver<Line>>> = OnceLock::new();

/// Set while a prompt is given up: it returns as if nobody answered.
static GIVE_UP: AtomicBool = AtomicBool::new(false);

/// How often a prompt that waits for a line looks whether it is given up.
const GIVE_UP_SLICE: Duration = Duration::from_millis(50);

fn lines() -> &'static Mutex<mpsc::Receiver<Line>> {
    LINES.get_or_init(|| {
        let (tx, rx) = mpsc::channel();
        let reader = move || {
            let stdin = std::io::stdin();
            loop {
                let mut line = String::new();
                let read = match stdin.lock().read_line(&mut line) {
                    Ok(0) => Ok(None),
                    Ok(_) => Ok(Some(line)),
                    Err(e) => Err(e),
                };
                let last = !matches!(read, Ok(Some(_)));
                if tx.send(read).is_err() || last {
                    return;
                }
            }
        };
        if let Err(e) = std::thread::Builder::new()
            .name("stdin".to_owned())
            .spawn(reader)
        {
            output::err(&format!("cannot read standard input: {e}"));
        }
        Mutex::new(rx)
    })
}

/// The next line of standard input, `None` at its end, or
/// [`CliErrorKind::InputClosed`](crate::error::CliErrorKind::InputClosed)
/// when the prompt is [given up](give_up).
fn next_line() -> Result<Option<String>, CliError> {
    let lines = lines().lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        if GIVE_UP.load(Ordering::Acquire) {
            output::err("");
            return Err(CliError::input_closed());
        }
        match lines.recv_timeout(GIVE_UP_SLICE) {
            Ok(line) => return Ok(line?),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            // The reader saw the end (or could not start): the end.
            Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(None),
        }
    }
}

/// Gives up the prompt waiting on another thread (`true`), or lets prompts
/// wait again (`false`, once it has returned).
pub(crate) fn give_up(yes: bool) {
    GIVE_UP.store(yes, Ordering::Release);
}

/// What a menu answer picked: an action, or one of the menu's extras.
enum Picked<T> {
    Action(T),
    Extra(char),
}

/// Asks for one of `options` by number (or by name), until one is given.
/// Each option is shown with what it does; `extras` are lettered entries
/// (`d) show the diff`) whose letter is returned for the caller to act on.
fn choose<A: Action>(
    title: &str,
    options: &[A],
    extras: &[(char, &str)],
) -> Result<Picked<A>, CliError> {
    let width = options.iter().map(|o| o.as_str().len()).max().unwrap_or(0);
    let mut menu = format!("{title}\n");
    for (i, o) in options.iter().enumerate() {
        let _ = writeln!(
            menu,
            "  {}) {:<width$}  {}",
            i + 1,
            o.as_str(),
            o.description()
        );
    }
    for (key, what) in extras {
        let _ = writeln!(menu, "  {key}) {what}");
    }
    output::err(menu.trim_end());
    loop {
        let letters: String = extras.iter().map(|(k, _)| format!(" or {k}")).collect();
        let answer = prompt(&format!("choose 1-{}{letters}: ", options.len()))?;
        if let Some(o) = pick(options, &answer) {
            return Ok(Picked::Action(o));
        }
        if let Some((key, _)) = extras.iter().find(|(k, _)| answer == k.to_string()) {
            return Ok(Picked::Extra(*key));
        }
        let names = options.iter().map(|o| o.as_str());
        match orcho::core::nearest(&answer, names) {
            Some(near) => output::err(&format!(
                "`{answer}` is not one of the choices; did you mean `{near}`?"
            )),
            None => output::err(&format!("`{answer}` is not one of the choices")),
        }
    }
}

/// A menu of `options` with no extras.
fn choose_action<A: Action>(title: &str, options: &[A]) -> Result<A, CliError> {
    loop {
        if let Picked::Action(a) = choose(title, options, &[])? {
            return Ok(a);
        }
    }
}

/// The option `answer` names, by number (1-based) or by name.
fn pick<A: Action>(options: &[A], answer: &str) -> Option<A> {
    if let Ok(n) = answer.parse::<usize>() {
        return n.checked_sub(1).and_then(|i| options.get(i)).copied();
    }
    options
        .iter()
        .find(|o| o.as_str().eq_ignore_ascii_case(answer))
        .copied()
}

/// Decides a phase handoff.
pub(crate) fn handoff(
    handoff: &PhaseHandoff,
    advice: Option<&Advice>,
) -> Result<(HandoffChoice, bool), CliError> {
    let actions: Vec<HandoffAction> = handoff.available_actions().iter().collect();
    // The advisor's recommendation, as a choice of its own.
    let taken = advice.and_then(|a| {
        let text = match a.recommended_action {
            HandoffAction::RetryFeedback => a.retry_feedback.clone(),
            HandoffAction::ContinueWithWaiver => Some(a.rationale.clone()),
            _ => None,
        };
        HandoffChoice::new(a.recommended_action, text.as_deref()).ok()
    });
    let label = taken
        .as_ref()
        .map(|c| format!("take the advice: {}", c.action()));
    let extras: Vec<(char, &str)> = label.as_deref().map(|l| ('a', l)).into_iter().collect();
    loop {
        let action = match choose("decide the handoff:", &actions, &extras)? {
            Picked::Action(action) => action,
            Picked::Extra('a') => {
                if let Some(choice) = &taken {
                    return Ok((choice.clone(), true));
                }
                continue;
            }
            Picked::Extra(_) => continue,
        };
        let text = match action {
            HandoffAction::RetryFeedback => Some(prompt("feedback for the next attempt: ")?),
            HandoffAction::ContinueWithWaiver => Some(prompt("the waiver's reason: ")?),
            _ => None,
        };
        match HandoffChoice::new(action, text.as_deref()) {
            Ok(choice) => return Ok((choice, false)),
            Err(e) => output::err(&e.to_string()),
        }
    }
}

/// Decides what a run starts from when the checkout has uncommitted
/// changes.
pub(crate) fn intake() -> Result<IntakeChoice, CliError> {
    let action = choose_action(
        "the checkout has uncommitted changes; the run starts from:",
        IntakeAction::ALL,
    )?;
    let message = (action == IntakeAction::Commit)
        .then(|| prompt("commit message (empty for the default): "))
        .transpose()?
        .filter(|m| !m.is_empty());
    Ok(IntakeChoice::from_parts(action, message)?)
}

/// How many lines of the run's diff the delivery prompt shows at most.
const DIFF_LINES: usize = 400;

/// Decides a delivery gate; `diff` gives the run's diff when asked to show
/// it. `approve` asks for the commit message. `None`: the missing and stale
/// receipts are to be run again (offered when the gate has gaps), and the
/// gate shown again.
pub(crate) fn delivery(
    gate: &DeliveryGate,
    target: Option<&TargetStatus>,
    diff: impl Fn() -> Result<Vec<u8>, CliError>,
) -> Result<Option<DeliveryChoice>, CliError> {
    // What the target as it is refuses is not offered; the gate shown
    // above says why and how to clear it.
    let refused = target.map(TargetStatus::refused).unwrap_or_default();
    let actions: Vec<_> = gate
        .available_actions()
        .iter()
        .filter(|a| !refused.contains(*a))
        .collect();
    let mut extras = vec![('d', "show the diff")];
    if !gate.gaps().is_empty() {
        extras.push(('r', "run the missing and stale receipts again"));
    }
    let action = loop {
        match choose("decide the delivery:", &actions, &extras)? {
            Picked::Action(action) => break action,
            Picked::Extra('d') => show_diff(&diff()?),
            Picked::Extra('r') if !gate.gaps().is_empty() => return Ok(None),
            Picked::Extra(_) => {}
        }
    };
    let message = (action == DeliveryAction::Approve)
        .then(|| prompt("commit message (empty for the profile's default): "))
        .transpose()?
        .filter(|m| !m.is_empty());
    let note = prompt("a note for the record (empty for none): ")?;
    let note = (!note.is_empty()).then_some(note);
    Ok(Some(DeliveryChoice::from_parts(action, message, note)?))
}

fn show_diff(patch: &[u8]) {
    let text = String::from_utf8_lossy(patch);
    let lines: Vec<&str> = text.lines().collect();
    for line in lines.iter().take(DIFF_LINES) {
        output::err(line);
    }
    if lines.len() > DIFF_LINES {
        output::err(&format!(
            "… {} more line(s); `orcho delivery show RUN --json` lists every file",
            lines.len() - DIFF_LINES
        ));
    }
    if lines.is_empty() {
        output::err("(the run changed nothing)");
    }
}

/// Answers a question batch: numbered options, several numbers separated
/// by commas where several may be chosen, free text where allowed.
pub(crate) fn questions(request: &SupervisionRequest) -> Result<Vec<Answer>, CliError> {
    let mut answers: Vec<Answer> = Vec::new();
    let plan_approval = matches!(
        request.touchpoint,
        orcho::handoff::supervision::Touchpoint::PlanApproval { .. }
    );
    for question in request.questions.questions() {
        // An approved plan needs no feedback: its context question is
        // left empty rather than asked.
        if plan_approval && answers.len() == 1 && answers[0].selected.iter().any(|s| s == "Approve")
        {
            answers.push(Answer::none());
            continue;
        }
        output::err(&format!("[{}] {}", question.header(), question.question()));
        for (i, option) in question.options().iter().enumerate() {
            match &option.description {
                Some(d) => output::err(&format!("  {}) {} — {d}", i + 1, option.label)),
                None => output::err(&format!("  {}) {}", i + 1, option.label)),
            }
        }
        let ask = ask_line(question);
        loop {
            let answer = match parse_answer(question, &prompt(&ask)?) {
                Ok(answer) => answer,
                Err(slip) => {
                    output::err(&slip);
                    continue;
                }
            };
            match question.check(&answer) {
                Ok(()) => {
                    answers.push(answer);
                    break;
                }
                Err(e) => output::err(&e.to_string()),
            }
        }
    }
    Ok(answers)
}

/// What the prompt under a question says.
fn ask_line(question: &Question) -> String {
    let count = question.options().len();
    if count == 0 {
        return "your answer (empty for none): ".to_owned();
    }
    let several = if question.multiple() {
        " (comma-separated)"
    } else {
        ""
    };
    let own = if question.custom() {
        ", or type your own answer"
    } else {
        ""
    };
    format!("choose 1-{count}{several}{own}: ")
}

use orcho::decide::parse_answer;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_choice_is_picked_by_number_or_by_name() {
        let options = HandoffAction::ALL;
        assert_eq!(pick(options, "1"), Some(options[0]));
        assert_eq!(pick(options, "halt"), Some(HandoffAction::Halt));
        assert_eq!(pick(options, "0"), None);
        assert_eq!(pick(options, "99"), None);
        assert_eq!(pick(options, "nope"), None);
    }

    fn storage(multiple: bool) -> Question {
        use orcho::handoff::supervision::QuestionOption;
        Question::new(
            "Storage",
            "Where do results go?",
            [QuestionOption::new("Files"), QuestionOption::new("SQLite")],
        )
        .unwrap()
        .with_multiple(multiple)
    }

    #[test]
    fn an_answer_names_options_by_number_or_label_and_a_stray_number_is_refused() {
        let one = storage(false);
        assert_eq!(parse_answer(&one, "2").unwrap().selected, ["SQLite"]);
        assert_eq!(parse_answer(&one, "files").unwrap().selected, ["Files"]);
        let text = parse_answer(&one, "Postgres").unwrap();
        assert_eq!(text.custom.as_deref(), Some("Postgres"));
        let slip = parse_answer(&one, "7").unwrap_err();
        assert!(slip.contains("choose 1-2"), "{slip}");
        assert!(parse_answer(&one, "0").is_err());

        let several = storage(true);
        let both = parse_answer(&several, "1, 2").unwrap();
        assert_eq!(both.selected, ["Files", "SQLite"]);
        assert!(parse_answer(&several, "1,9").is_err());

        // Without options, a number is what the person means.
        let free = Question::new("Port", "Which port?", []).unwrap();
        assert_eq!(
            parse_answer(&free, "7").unwrap().custom.as_deref(),
            Some("7")
        );
    }
}
