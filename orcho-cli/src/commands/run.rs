//! `orcho run` and `orcho resume`: a run driven by [`orcho::drive`], with
//! phases run as commands and decisions asked at a terminal prompt (or left
//! open without one).

use std::collections::BTreeMap;
use std::io::IsTerminal;

use orcho::{
    Engine, PhaseReport, PhaseRequest, Progress, Run, Step, SupervisionRequest,
    core::{RunId, RunStatus},
    delivery::{DeliveryGate, IntakeReport},
    handoff::{
        advisor::AdviceRecord,
        autopilot::{AutopilotOutcome, Ineligible, StopReason},
        decision::{DecidedBy, DecisionRequest},
        delivery::DeliveryChoice,
        handoff::{HandoffChoice, PhaseHandoff},
        intake::IntakeChoice,
        supervision::Answer,
    },
    point::{PointKind, PointView},
};

use crate::{
    cli::RunArgs,
    error::{CliError, CliErrorKind},
    exit::Exit,
    host::{self, RunConfig},
    interrupt,
    output::{
        self, Report,
        doc::{FinishedDoc, PausedDoc},
        text,
    },
    phase,
    place::Place,
    prompt,
};

/// Parses `--phase PHASE=COMMAND` arguments.
fn parse_phases(specs: &[String]) -> Result<BTreeMap<String, Vec<String>>, CliError> {
    let mut phases = BTreeMap::new();
    for spec in specs {
        let Some((phase, command)) = spec.split_once('=') else {
            return Err(
                CliError::usage(format!("`--phase {spec}` must be PHASE=COMMAND"))
                    .with_hint("for example --phase 'implement=./agent.sh'"),
            );
        };
        let Some(argv) = host::split_command(command) else {
            return Err(CliError::usage(format!(
                "`--phase {spec}` has an empty command or an unbalanced quote"
            ))
            .with_hint("quote the command as a shell would: --phase 'test=sh -c \"echo hi\"'"));
        };
        if let Some(Err(why)) = crate::runner::agent_of(&argv) {
            return Err(CliError::usage(format!("`--phase {spec}`: {why}")));
        }
        phases.insert(phase.trim().to_owned(), argv);
    }
    Ok(phases)
}

/// The task `--task` or `--task-file` gives, checked.
fn read_task(args: &RunArgs) -> Result<Option<String>, CliError> {
    if let Some(task) = &args.task {
        return host::check_task(task.clone(), "`--task`").map(Some);
    }
    let Some(file) = &args.task_file else {
        return Ok(None);
    };
    let what = format!("`--task-file {file}`");
    let bytes = if file == "-" {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes)
            .map_err(|e| CliError::msg(format!("cannot read the task from standard input: {e}")))?;
        bytes
    } else {
        std::fs::read(file).map_err(|e| {
            CliError::usage(format!("{what}: cannot read it: {e}")).with_hint(
                "a relative path is relative to where `orcho` runs; `-` reads standard input",
            )
        })?
    };
    let text = String::from_utf8(bytes)
        .map_err(|e| CliError::usage(format!("{what} is not UTF-8 text: {e}")))?;
    host::check_task(text, &what).map(Some)
}

/// `orcho run`: starts a run and drives it.
pub(crate) async fn start(place: &Place, args: &RunArgs) -> Result<Report, CliError> {
    let phases = parse_phases(&args.phases)?;
    let task = read_task(args)?;
    if let Some(parent) = &args.follow_up {
        let parent = host::find_run(place, parent)?;
        interrupt::install(place.voice);
        let launch = host::Launch {
            phases,
            task,
            autopilot: args.autopilot,
            ..host::Launch::default()
        };
        let (config, mut run, spec) = host::begin_follow_up(place, &parent, launch)?;
        interrupt::driving_run(run.id());
        place.progress(&format!(
            "run {} started: follow-up generation {} of run {parent}, for {}",
            run.id(),
            spec.generation(),
            spec.counted()
        ));
        return drive(
            place,
            &config,
            &mut run,
            Asking::new(args.no_interactive, args.wait),
        )
        .await;
    }
    let (name, plan) = place.load_profile(args.profile.profile.as_deref())?;
    if let Some((name, why)) = host::unknown_phase(&plan, &phases) {
        return Err(CliError::usage(format!("`--phase {name}=…`: {why}")));
    }
    interrupt::install(place.voice);
    let launch = host::Launch {
        phases,
        in_place: args.in_place,
        task,
        autopilot: args.autopilot,
    };
    let (config, mut run) = host::begin(place, (name, plan), launch)?;
    interrupt::driving_run(run.id());
    place.progress(&format!("run {} started", run.id()));
    drive(
        place,
        &config,
        &mut run,
        Asking::new(args.no_interactive, args.wait),
    )
    .await
}

/// `orcho resume`: acts on recorded decisions and drives the run on.
pub(crate) async fn resume(
    place: &Place,
    id: &RunId,
    asking: Asking,
    autopilot: bool,
    phases: &[String],
) -> Result<Report, CliError> {
    interrupt::install(place.voice);
    interrupt::driving_run(id);
    let (mut config, mut run) = host::open_with(place, id, autopilot)?;
    // A run that is over has nothing to resume: said, as an error.
    if let Some(ended) = run.refusal_if_ended() {
        return Err(ended.into());
    }
    host::check_autopilot(run.engine().plan(), autopilot)?;
    let phases = parse_phases(phases)?;
    let plan = run.engine().plan();
    if let Some((name, why)) = host::unknown_phase(plan, &phases) {
        return Err(CliError::usage(format!("`--phase {name}=…`: {why}")));
    }
    config.phases.extend(phases);
    crate::runner::check_agents(run.engine().plan(), &config)?;
    // Building the seed patch of large files takes a while: said first.
    let store = run.engine().store();
    if store
        .status(id)
        .is_ok_and(|v| v.status == RunStatus::AwaitingIntake)
        && store.intake_decision(id).ok().flatten().is_some_and(|d| {
            d.decision().payload().action() == orcho::handoff::IntakeAction::Include
        })
    {
        place.progress("carrying the uncommitted changes into the run's worktree …");
    }
    match drive(place, &config, &mut run, asking).await {
        // The recorded decision stands; the target has to make way for it.
        Err(e) if matches!(e.kind(), CliErrorKind::Engine(engine) if engine.target_conflict().is_some()) =>
        {
            let CliErrorKind::Engine(engine) = e.kind() else {
                return Err(e);
            };
            let remedy = engine
                .target_conflict()
                .map(crate::error::target_remedy_decided);
            Err(match remedy {
                Some(remedy) => e.with_hint(format!("{remedy} `orcho resume {id}` again")),
                None => e,
            })
        }
        other => other,
    }
}

/// How the CLI gets the decisions a run waits on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Asking {
    /// Asked at the terminal.
    interactive: bool,
    /// Nobody decided here: wait for a decision made elsewhere (`--wait`).
    wait: bool,
}

impl Asking {
    /// `--no-interactive` and `--wait` as given: the prompt only at a
    /// terminal, and never inside an agent's session or a process Orcho
    /// started (an agent at a terminal of its own is not a person).
    pub(crate) fn new(no_interactive: bool, wait: bool) -> Self {
        Self {
            interactive: !no_interactive
                && std::io::stdin().is_terminal()
                && crate::hook::session::inside().is_none(),
            wait,
        }
    }
}

/// How long one wait for a decision made elsewhere lasts before the run
/// looks anyway (a store that tells of writes wakes it sooner).
const WAIT_SLICE: std::time::Duration = std::time::Duration::from_secs(5);

/// Drives `run` with [`orcho::drive`] until it finishes, or pauses at a
/// decision nobody took (asked at the terminal when `interactive`), and
/// reports where it ended.
async fn drive(
    place: &Place,
    config: &RunConfig,
    run: &mut Run,
    asking: Asking,
) -> Result<Report, CliError> {
    // Subscribed before the run is first looked at, so that no decision
    // made elsewhere in between goes unheard. A prompt watches too: a
    // decision made elsewhere while it waits ends it.
    let watch = if asking.wait {
        Some(run.engine().store().subscribe()?)
    } else if asking.interactive {
        run.engine().store().subscribe().ok()
    } else {
        None
    };
    let mut cli = CliHost {
        place,
        config,
        engine: run.engine().clone(),
        run: run.id().clone(),
        interactive: asking.interactive,
        wait: asking.wait,
        watch,
        decided_elsewhere: false,
        rerun_requested: false,
        waiting_on: None,
        shown: None,
        reported: None,
    };
    let end = match orcho::drive(run, &mut cli).await {
        Ok(end) => end,
        Err(orcho::DriveError::Host(e)) if matches!(e.kind(), CliErrorKind::Interrupted(_)) => {
            // Stopped in the middle of a phase: the journal says so, and the
            // attempt runs again on resume.
            if let Err(record) = run.record_interruption(interrupt::what_stopped()) {
                output::err(&format!(
                    "warning: the interruption could not be recorded: {}",
                    orcho::core::error_chain(&record)
                ));
            }
            return Err(e);
        }
        // The store stopped answering while the run waited for a decision
        // made elsewhere: nothing is lost, and the wait can go on.
        Err(orcho::DriveError::Engine(e)) if asking.wait => {
            return Err(CliError::from(e).with_hint(format!(
                "what was decided is kept; `orcho resume {} --wait` waits again once the store \
                 answers",
                run.id()
            )));
        }
        Err(e) => return Err(e.into()),
    };
    match end {
        Step::Finished { status, reason } => finished(run, status, &reason),
        waiting => {
            let (point, hint) = pause_hint(&waiting, run.id())?;
            Ok(paused(run, point, &hint))
        }
    }
}

/// The CLI as a host of [`orcho::drive`]: phases run as commands; decisions
/// asked at the terminal when it is interactive, else left open (the
/// autopilot may act at a handoff first).
struct CliHost<'a> {
    place: &'a Place,
    config: &'a RunConfig,
    engine: Engine,
    run: RunId,
    interactive: bool,
    /// `--wait`: nobody decided here, so wait for a decision made elsewhere.
    wait: bool,
    /// With `--wait` or a prompt: what wakes the run when a decision is
    /// made elsewhere.
    watch: Option<orcho::Watch>,
    /// A prompt was given up for a decision made elsewhere: the run looks
    /// again at once, and acts on it.
    decided_elsewhere: bool,
    /// At the delivery prompt, `r`: run the missing and stale receipts
    /// again, then show the gate again.
    rerun_requested: bool,
    /// The point the run was last said to wait on.
    waiting_on: Option<orcho::Waiting>,
    /// The point last shown, with `--wait`.
    shown: Option<orcho::Waiting>,
    /// The verdict the last phase command gave, to say when the engine
    /// recorded another (a read-only phase that wrote).
    reported: Option<orcho::core::Verdict>,
}

impl CliHost<'_> {
    /// A prompt's answer; `None` when standard input closed (Ctrl-D):
    /// nobody decided, as without a terminal.
    fn asked<T>(&self, answer: Result<T, CliError>) -> Result<Option<T>, CliError> {
        match answer {
            Err(e) if matches!(e.kind(), CliErrorKind::InputClosed) => Ok(None),
            other => other.map(Some),
        }
    }

    /// Asks at the terminal with `ask`, on a thread of its own, while the
    /// store is watched: when `decided` finds the point decided elsewhere
    /// first, the prompt is given up, that is said, and `None` lets the run
    /// act on that decision.
    async fn prompted<T: Send + 'static>(
        &mut self,
        ask: impl FnOnce() -> Result<T, CliError> + Send + 'static,
        decided: impl Fn(&orcho::Store, &RunId) -> Option<String>,
    ) -> Result<Option<T>, CliError> {
        let Some(mut watch) = self.watch.take() else {
            return self.asked(ask());
        };
        let mut asking = tokio::task::spawn_blocking(ask);
        let answered = loop {
            tokio::select! {
                answer = &mut asking => break Some(answer),
                _ = watch.changed(WAIT_SLICE) => {
                    if let Some(said) = decided(self.engine.store(), &self.run) {
                        prompt::give_up(true);
                        let _ = (&mut asking).await;
                        prompt::give_up(false);
                        output::err(&format!("recorded elsewhere: {said}"));
                        self.decided_elsewhere = true;
                        break None;
                    }
                }
            }
        };
        self.watch = Some(watch);
        match answered {
            Some(answer) => {
                self.asked(answer.map_err(|e| CliError::msg(format!("the prompt stopped: {e}")))?)
            }
            None => Ok(None),
        }
    }

    /// At a terminal, the advisor's advice on `handoff`, shown; `None`
    /// without an advisor, or when it gave none (said, not fatal: the person
    /// decides anyway).
    async fn advise(&self, handoff: &PhaseHandoff) -> Option<AdviceRecord> {
        self.engine.advisor()?;
        output::err("asking the advisor …");
        match self.engine.advise(&self.run, handoff.id()).await {
            Ok(record) => {
                output::err(&text::advice_shown(&record));
                Some(record)
            }
            Err(e) => {
                output::err(&format!(
                    "the advisor gave no advice: {}",
                    orcho::core::error_chain(&e)
                ));
                None
            }
        }
    }
}

impl orcho::Host for CliHost<'_> {
    type Error = CliError;

    async fn run_phase(&mut self, request: &PhaseRequest) -> Result<PhaseReport, CliError> {
        let report = phase::run_phase(self.place, &self.engine, self.config, request).await?;
        self.reported = Some(report.outcome.verdict);
        Ok(report)
    }

    async fn decide(
        &mut self,
        handoff: &PhaseHandoff,
    ) -> Result<Option<DecisionRequest<HandoffChoice>>, CliError> {
        if !self.interactive {
            return Ok(None);
        }
        let advice = self.advise(handoff).await;
        let shown = handoff.clone();
        let advised = advice.as_ref().map(|a| a.advice().clone());
        let id = handoff.id().clone();
        let Some((choice, took)) = self
            .prompted(
                move || prompt::handoff(&shown, advised.as_ref()),
                |store, run| {
                    let recorded = store.handoff_decision(run, &id).ok()??;
                    let d = recorded.decision();
                    Some(format!(
                        "{} by {}",
                        d.payload().action(),
                        crate::gate_now::who_decided(d)
                    ))
                },
            )
            .await?
        else {
            return Ok(None);
        };
        let mut request = DecisionRequest::new(choice, DecidedBy::Operator);
        if let Some(record) = advice.filter(|_| took) {
            request = request.with_advice(record.id().clone());
        }
        Ok(Some(request))
    }

    async fn decide_intake(
        &mut self,
        _report: &IntakeReport,
    ) -> Result<Option<DecisionRequest<IntakeChoice>>, CliError> {
        if !self.interactive {
            return Ok(None);
        }
        Ok(self
            .prompted(prompt::intake, |store, run| {
                let recorded = store.intake_decision(run).ok()??;
                let d = recorded.decision();
                Some(format!(
                    "{} by {}",
                    d.payload().action(),
                    crate::gate_now::who_decided(d)
                ))
            })
            .await?
            .map(|choice| DecisionRequest::new(choice, DecidedBy::Operator)))
    }

    async fn answer(
        &mut self,
        request: &SupervisionRequest,
    ) -> Result<Option<Vec<Answer>>, CliError> {
        if !self.interactive {
            return Ok(None);
        }
        let asked = request.clone();
        let id = request.id.clone();
        self.prompted(
            move || prompt::questions(&asked),
            |store, run| {
                store
                    .touchpoints(run)
                    .ok()?
                    .into_iter()
                    .find(|t| t.id == id)?
                    .resolution
                    .map(|_| "answered".to_owned())
            },
        )
        .await
    }

    async fn decide_delivery(
        &mut self,
        gate: &DeliveryGate,
    ) -> Result<Option<DecisionRequest<DeliveryChoice>>, CliError> {
        if !self.interactive {
            return Ok(None);
        }
        let store = self.engine.store().clone();
        let now = crate::gate_now::GateNow::read(&store, &self.run).unwrap_or_default();
        let (shown, run) = (gate.clone(), self.run.clone());
        Ok(self
            .prompted(
                move || {
                    prompt::delivery(&shown, now.target.as_ref(), || {
                        Ok(store.delivery_patch(&run)?)
                    })
                },
                |store, run| {
                    let recorded = store.delivery_decision(run).ok()??;
                    let d = recorded.decision();
                    Some(format!(
                        "{} by {}",
                        d.payload().action(),
                        crate::gate_now::who_decided(d)
                    ))
                },
            )
            .await?
            .and_then(|choice| {
                // `r`: the receipts are run again and the gate shown again.
                self.rerun_requested = choice.is_none();
                choice
            })
            .map(|choice| DecisionRequest::new(choice, DecidedBy::Operator)))
    }

    fn rerun_at_gate(&mut self) -> bool {
        let asked = std::mem::take(&mut self.rerun_requested);
        if asked {
            output::err("running the missing and stale required commands in the run's worktree …");
        }
        asked
    }

    async fn wait(&mut self, step: &Step) -> Result<bool, CliError> {
        // A prompt given up for a decision made elsewhere: look again now.
        if std::mem::take(&mut self.decided_elsewhere) {
            return Ok(true);
        }
        let Some(watch) = self.watch.as_mut().filter(|_| self.wait) else {
            return Ok(false);
        };
        if self.waiting_on != step.waiting() {
            self.waiting_on = step.waiting();
            let (point, how) = pause_hint(step, &self.run)?;
            // Said under `--json` too: a process that waits says so.
            output::err(&format!(
                "waiting for the {point} to be decided, from here or anywhere the store is \
                 shared: `{how}` (Ctrl-C stops waiting; `orcho resume {}` later goes on)",
                self.run
            ));
        }
        watch.changed(WAIT_SLICE).await;
        Ok(true)
    }

    fn autopilot(&self) -> bool {
        !self.interactive
    }

    fn refused(&mut self, step: &Step, error: &orcho::EngineError) -> bool {
        // The target changed while the prompt waited: say so and ask again
        // with what it refuses now.
        if !(matches!(step, Step::DecideDelivery(_)) && error.target_conflict().is_some()) {
            return false;
        }
        let Step::DecideDelivery(gate) = step else {
            return false;
        };
        output::err(&format!(
            "not recorded: {}",
            orcho::core::error_chain(error)
        ));
        if let Some(status) = error.target_conflict() {
            output::err(&format!(
                "hint: {}; `orcho delivery show {}` shows the target's status",
                crate::error::target_remedy(status),
                self.run
            ));
        }
        let now =
            crate::gate_now::GateNow::read(self.engine.store(), &self.run).unwrap_or_default();
        output::err(&text::gate(gate, &now));
        true
    }

    fn progress(&mut self, event: Progress<'_>) {
        match event {
            Progress::Step(step) => {
                // Waiting, the run looks again and again at the same point:
                // it is shown once.
                if self.wait && step.waiting().is_some() {
                    if self.shown == step.waiting() {
                        return;
                    }
                    self.shown = step.waiting();
                }
                self.show_point(step);
            }
            Progress::Settled(attempt) => {
                if self.place.voice.is_json() {
                    return;
                }
                if self.reported.take().is_some_and(|v| v != attempt.verdict) {
                    self.say_overruled(attempt);
                }
                for record in &attempt.gates {
                    output::err(&text::gate_result(record, phase::TAIL_LINES));
                }
                if let Some(next) = &attempt.next {
                    output::err(&format!("  → {next}"));
                }
            }
            // What the autopilot did is never hidden, under `--json` too.
            Progress::Autopilot(outcome) => say_autopilot(outcome, &self.run),
            Progress::DecidedElsewhere(_) => output::err(
                "a different decision was recorded meanwhile (from another terminal or a client); \
                 the run goes on with that one",
            ),
            Progress::ActingOnDecided(step) => {
                if self.place.voice.is_json() {
                    return;
                }
                let point = pause_hint(step, &self.run).map_or("decision point", |(p, _)| p);
                output::err(&format!(
                    "the {point} is decided; the run goes on with that decision (`orcho log {}` \
                     says what was decided, by whom)",
                    self.run
                ));
            }
            Progress::DecidedWhileWaiting(step) => {
                let point = pause_hint(step, &self.run).map_or("decision point", |(p, _)| p);
                output::err(&format!(
                    "the {point} was decided elsewhere; the run goes on"
                ));
            }
            _ => {}
        }
    }
}

impl CliHost<'_> {
    /// Says why the engine recorded another verdict than the phase gave:
    /// the finding it added first.
    fn say_overruled(&self, attempt: &orcho::PhaseEvidence) {
        let recorded = self
            .engine
            .store()
            .attempts(&self.run)
            .ok()
            .and_then(|all| {
                all.into_iter().rev().find(|a| {
                    a.phase == attempt.phase
                        && a.attempt == attempt.attempt
                        && a.round == attempt.round
                })
            });
        if let Some(finding) = recorded.as_ref().and_then(|a| a.outcome.findings.first()) {
            output::err(&format!("  {}: {}", attempt.verdict, finding.title));
            if !finding.detail.is_empty() {
                output::err(&text::indented(&finding.detail, phase::TAIL_LINES));
            }
        }
    }

    /// Shows the decision point `step` stops at (when the output is text;
    /// at a terminal the prompt shows a touchpoint's questions).
    fn show_point(&self, step: &Step) {
        if self.place.voice.is_json() {
            return;
        }
        match step {
            Step::DecideHandoff(handoff) => output::err(&text::handoff(handoff, None)),
            Step::DecideIntake(report) => output::err(&text::intake(report)),
            Step::DecideDelivery(gate) => {
                let now = crate::gate_now::GateNow::read(self.engine.store(), &self.run)
                    .unwrap_or_default();
                output::err(&text::gate(gate, &now));
            }
            Step::AnswerQuestions(request)
            | Step::ApprovePlan(request)
            | Step::HandleDeviation(request)
                if !self.interactive =>
            {
                output::err(&text::touchpoint(request));
            }
            _ => {}
        }
    }
}

/// What the CI autopilot did, on standard error also under `--json` (where
/// progress is otherwise quiet): what the autopilot did is never hidden.
fn say_autopilot(outcome: &AutopilotOutcome, run: &RunId) {
    match outcome {
        AutopilotOutcome::Retried { advice, .. } => output::err(&format!(
            "autopilot: advice {} recommends a retry (confidence {}); the safety checks \
             passed; retrying with its feedback:\n  {}",
            advice.id(),
            advice
                .advice()
                .confidence
                .value()
                .map_or_else(|| "unknown".to_owned(), |c| format!("{c:.2}")),
            advice
                .advice()
                .retry_feedback
                .as_deref()
                .unwrap_or_default()
        )),
        AutopilotOutcome::Stopped { reason, advice } => {
            let advice = advice
                .as_ref()
                .map(|a| format!(" (advice {})", a.id()))
                .unwrap_or_default();
            output::err(&format!(
                "autopilot stopped: {} — {reason}{advice}\n  what to do: {}",
                reason.code(),
                stop_hint(reason, run)
            ));
        }
        AutopilotOutcome::NotEligible(why) => {
            let why = match why {
                Ineligible::Disabled => "the profile turns it off (`autopilot.enabled: false`)",
                Ineligible::Approved => "the verdict is approved: nothing to retry",
                Ineligible::RetryUnavailable => "`retry_feedback` is not on this handoff's menu",
                Ineligible::NoFindings => "there are no findings to give feedback on",
                _ => "the handoff is not open",
            };
            output::err(&format!("autopilot: not acting here: {why}"));
        }
        _ => {}
    }
}

/// What an operator does after the autopilot stopped for `reason`.
fn stop_hint(reason: &StopReason, run: &RunId) -> String {
    let decide = format!("`orcho handoff decide {run} <ACTION>`");
    match reason.code() {
        "low_confidence" | "repeated_blocker" | "files_out_of_scope" | "destructive_action" => {
            format!(
                "read the findings and the advice (`orcho handoff show {run}`), then decide with \
                 {decide}; `--advice ID` records which advice you followed"
            )
        }
        "retry_budget_exhausted" | "cost_budget_exhausted" => format!(
            "the autopilot's budget for this run is spent; decide with {decide}, or raise the \
             budget in the profile's `autopilot:`"
        ),
        "weakens_proof" => format!(
            "the phase's change weakens its own proof (a test skipped or deleted, the runner's \
             configuration or the profile edited): review it in the worktree, then decide with \
             {decide}"
        ),
        "advisor_failed" | "malformed_advice" => format!(
            "the advisor gave no usable advice; decide with {decide}, and check the `advisor:` \
             block (`orcho handoff advise {run}` asks again)"
        ),
        _ => format!(
            "the advice is for a person to weigh; decide with {decide} (`--advice ID` follows it)"
        ),
    }
}

/// Which decision `step` waits on, as the library's view names it, and
/// the command that takes it: the point's own command where it has one,
/// else `orcho decide`, which takes any point by an action's name.
fn pause_hint(step: &Step, run: &RunId) -> Result<(&'static str, String), CliError> {
    let point = PointView::of(run, step)
        .ok_or_else(|| CliError::msg(format!("run `{run}` waits at no decision point")))?;
    let how = match point.kind {
        PointKind::Handoff => format!("orcho handoff decide {run} <ACTION>"),
        PointKind::Intake => format!("orcho intake {run} include|exclude|commit|halt"),
        PointKind::Delivery => format!("orcho delivery decide {run} <ACTION>"),
        PointKind::PlanApproval => format!("orcho plan approve|request-changes|reject {run}"),
        PointKind::PlannerQuestions => format!(
            "orcho answer {run}{}",
            " --answer …".repeat(point.questions.len().max(1))
        ),
        PointKind::Deviation => format!("orcho deviation {run} retry|replan|stop"),
        _ => format!("orcho decide {run} <ACTION>"),
    };
    Ok((point.kind.as_str(), how))
}

fn paused(run: &Run, point: &str, hint: &str) -> Report {
    let status = run.view().status;
    Report::new(&PausedDoc {
        run: run.id(),
        status: status.as_str(),
        awaiting: point,
        hint,
    })
    .line(text::paused(run.id(), status.as_str(), point, hint))
    .exit(Exit::Paused)
}

fn finished(run: &Run, status: RunStatus, reason: &str) -> Result<Report, CliError> {
    let engine = run.engine();
    let store = engine.store();
    let evidence = engine.evidence(run.id())?;
    store.write_evidence(&evidence)?;
    let path = store.evidence_path(run.id());
    // After `fix`: the command that starts the correction follow-up.
    let next = (store.follow_up(run.id()).is_ok()
        && host::follow_up_child(store, run.id())?.is_none())
    .then(|| format!("orcho run --follow-up {}", run.id()));
    let mut report = Report::new(&FinishedDoc {
        run: run.id(),
        status: status.as_str(),
        reason,
        evidence: path.as_str(),
        cost_usd: evidence.cost.usd.map(|u| u.to_string()),
        next: next.as_deref(),
    })
    .line(text::finished(
        run.id(),
        status.as_str(),
        reason,
        path.as_str(),
    ));
    if let Some(next) = &next {
        report = report.line(format!("next: `{next}` starts the correction follow-up"));
    }
    Ok(report.exit(if status == RunStatus::Halted {
        Exit::Halted
    } else {
        Exit::Ok
    }))
}
