//! Test doubles for hosts' and profiles' tests (feature `test-util`).
//!
//! [`ScriptedGate`] does what it is told — pass, fail with findings, hang,
//! error, panic — after an optional delay, as a computational or inferential
//! gate, and records when it ran in a [`GateLog`] so tests can assert
//! ordering and overlap without timing thresholds.

use std::{
    sync::{Arc, Mutex, PoisonError},
    time::{Duration, Instant},
};

use async_trait::async_trait;
use orcho_core::{Finding, GateName};

use crate::{
    GateContext, GateError, GateKind, GateOutcome, ModelUsage, QualityGate, QualityGateResult,
};

/// What a [`ScriptedGate`] does.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Script {
    /// Pass.
    Pass,
    /// Fail with these findings.
    Fail(Vec<Finding>),
    /// Never finish (and ignore cancellation, like a stuck plugin).
    Hang,
    /// Return `Err` (the gate could not run).
    Error(String),
    /// Panic (a plugin bug).
    Panic,
}

/// When a scripted gate started and ended, as recorded in a [`GateLog`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Span {
    /// The gate.
    pub gate: GateName,
    /// When `evaluate` started.
    pub start: Instant,
    /// When it returned (never set for a gate that was dropped).
    pub end: Option<Instant>,
}

/// A shared record of when scripted gates ran.
#[derive(Debug, Clone, Default)]
pub struct GateLog {
    spans: Arc<Mutex<Vec<Span>>>,
}

impl GateLog {
    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every span so far, in start order.
    pub fn spans(&self) -> Vec<Span> {
        self.spans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The gates in the order they started.
    pub fn started(&self) -> Vec<GateName> {
        self.spans().into_iter().map(|s| s.gate).collect()
    }

    /// The largest number of gates that were running at the same instant.
    pub fn max_overlap(&self) -> usize {
        let spans = self.spans();
        let mut events: Vec<(Instant, i32)> = Vec::new();
        for s in &spans {
            events.push((s.start, 1));
            events.push((s.end.unwrap_or_else(Instant::now), -1));
        }
        // Ends sort before starts at the same instant: touching is not
        // overlapping.
        events.sort_by_key(|&(t, delta)| (t, delta));
        let (mut now, mut max) = (0i32, 0i32);
        for (_, delta) in events {
            now += delta;
            max = max.max(now);
        }
        usize::try_from(max).unwrap_or(0)
    }

    fn start(&self, gate: &GateName) -> usize {
        let mut spans = self.spans.lock().unwrap_or_else(PoisonError::into_inner);
        spans.push(Span {
            gate: gate.clone(),
            start: Instant::now(),
            end: None,
        });
        spans.len() - 1
    }

    fn end(&self, at: usize) {
        let mut spans = self.spans.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(span) = spans.get_mut(at) {
            span.end = Some(Instant::now());
        }
    }
}

/// A gate that follows a [`Script`].
///
/// ```
/// use std::time::Duration;
/// use orcho_core::{Finding, Severity};
/// use orcho_gates::testing::ScriptedGate;
///
/// let tests = ScriptedGate::fail("tests".parse()?, [Finding::new("tests", Severity::High, "1 test failed")]);
/// let judge = ScriptedGate::pass("security".parse()?).inferential().with_delay(Duration::from_millis(200));
/// # let _ = (tests, judge);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct ScriptedGate {
    name: GateName,
    kind: GateKind,
    script: Script,
    delay: Duration,
    usage: Option<ModelUsage>,
    log: Option<GateLog>,
}

impl ScriptedGate {
    /// A gate following `script`.
    pub fn new(name: GateName, script: Script) -> Self {
        Self {
            name,
            kind: GateKind::Computational,
            script,
            delay: Duration::ZERO,
            usage: None,
            log: None,
        }
    }

    /// A gate that passes.
    pub fn pass(name: GateName) -> Self {
        Self::new(name, Script::Pass)
    }

    /// A gate that fails with `findings`.
    pub fn fail(name: GateName, findings: impl IntoIterator<Item = Finding>) -> Self {
        Self::new(name, Script::Fail(findings.into_iter().collect()))
    }

    /// A gate that never finishes.
    pub fn hang(name: GateName) -> Self {
        Self::new(name, Script::Hang)
    }

    /// A gate that cannot run.
    pub fn error(name: GateName, message: impl Into<String>) -> Self {
        Self::new(name, Script::Error(message.into()))
    }

    /// A gate that panics.
    pub fn panics(name: GateName) -> Self {
        Self::new(name, Script::Panic)
    }

    /// Makes it inferential.
    #[must_use]
    pub fn inferential(mut self) -> Self {
        self.kind = GateKind::Inferential;
        self
    }

    /// Records its runs in `log`.
    #[must_use]
    pub fn with_log(mut self, log: &GateLog) -> Self {
        self.log = Some(log.clone());
        self
    }
}

impl ScriptedGate {
    orcho_core::setters! {
        /// Waits `delay` before acting.
        pub fn with_delay(delay: Duration);
        /// Reports `usage` (inferential gates only).
        pub fn with_usage(usage: Some(ModelUsage));
    }
}

#[async_trait]
impl QualityGate for ScriptedGate {
    fn name(&self) -> &GateName {
        &self.name
    }

    fn kind(&self) -> GateKind {
        self.kind
    }

    async fn evaluate(&self, _ctx: &GateContext) -> Result<QualityGateResult, GateError> {
        let span = self.log.as_ref().map(|log| log.start(&self.name));
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        let outcome = match &self.script {
            Script::Pass => Ok(QualityGateResult::of_kind(
                self.kind,
                self.name.clone(),
                GateOutcome::Passed,
            )),
            Script::Fail(findings) => {
                Ok(
                    QualityGateResult::of_kind(self.kind, self.name.clone(), GateOutcome::Failed)
                        .with_findings(findings.iter().cloned())
                        .with_summary(format!("{} failed", self.name)),
                )
            }
            Script::Hang => std::future::pending().await,
            Script::Error(message) => Err(GateError::msg(message)),
            Script::Panic => panic!("scripted gate `{}` panicked", self.name),
        };
        if let (Some(log), Some(at)) = (&self.log, span) {
            log.end(at);
        }
        outcome.map(|r| match self.usage {
            Some(usage) => r.with_model_usage(usage),
            None => r,
        })
    }
}
