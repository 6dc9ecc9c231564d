use std::{
    error::Error as StdError,
    ops::Range,
    panic::AssertUnwindSafe,
    pin::pin,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    task::Poll,
    time::Duration,
};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{Cost, GateName, error_chain, fs::LockFile};
use serde::{Deserialize, Serialize};
use tokio::{sync::mpsc, task::JoinSet, time::Instant};

use crate::{
    Cancellation, FailStrategy, GateContext, GateKind, GateOutcome, PhaseEffect, QualityGate,
    QualityGateResult, ScheduleError, phase_effect,
};

/// One gate of a phase, with what the profile declares about it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ScheduledGate {
    /// The gate.
    pub gate: Arc<dyn QualityGate>,
    /// What its failure does.
    pub on_fail: FailStrategy,
    /// Gates sharing a lock group never overlap, in one process or across
    /// processes.
    pub lock_group: Option<String>,
    /// Past this, the gate is cancelled and reported timed out.
    pub timeout: Option<Duration>,
    /// The gate's configuration (`with:`), handed over in its context.
    pub config: serde_json::Value,
}

impl ScheduledGate {
    /// A gate with a strategy and nothing else.
    pub fn new(gate: Arc<dyn QualityGate>, on_fail: FailStrategy) -> Self {
        Self {
            gate,
            on_fail,
            lock_group: None,
            timeout: None,
            config: serde_json::Value::Null,
        }
    }
}

impl ScheduledGate {
    orcho_core::setters! {
        /// Sets the lock group.
        pub fn with_lock_group(group: Some(impl Into<String>)) => lock_group;
        /// Sets the timeout.
        pub fn with_timeout(timeout: Some(Duration));
        /// Sets the configuration.
        pub fn with_config(config: serde_json::Value);
    }
}

/// A gate's result with its place in the phase and its strategy: what the
/// engine persists in the phase log.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct GateRecord {
    /// The 0-based position of the gate in its phase.
    pub index: usize,
    /// Its strategy.
    pub on_fail: FailStrategy,
    /// Its lock group.
    pub lock_group: Option<String>,
    /// Its result.
    pub result: QualityGateResult,
}

impl GateRecord {
    /// A record of `result` for the gate at `index` with strategy `on_fail`.
    pub fn new(index: usize, on_fail: FailStrategy, result: QualityGateResult) -> Self {
        Self {
            index,
            on_fail,
            lock_group: None,
            result,
        }
    }
}

impl GateRecord {
    orcho_core::setters! {
        /// Sets the lock group.
        pub fn with_lock_group(group: Option<String>) => lock_group;
    }
}

/// Everything a phase's gates produced.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PhaseGates {
    /// One record per gate, in declared order.
    pub records: Vec<GateRecord>,
    /// The effect on the run.
    pub effect: PhaseEffect,
    /// Wall time of every gate, plus model usage of the inferential ones.
    pub cost: Cost,
}

/// Runs the gates of a phase.
///
/// - Gates run in declared order. A computational gate runs inline: the next
///   gate starts after it ends. Consecutive inferential gates form a *wave*
///   and run concurrently, at most [`inferential_concurrency`] at a time.
/// - A gate with a lock group holds the exclusive [`LockFile`]
///   `<lock dir>/<group>.lock` while it runs, so gates of one group never
///   overlap, also across processes.
/// - A gate past its timeout is cancelled and reported
///   [`TimedOut`](GateOutcome::TimedOut); an `Err` from a gate is reported
///   [`Errored`](GateOutcome::Errored).
/// - Each result is handed to the `record` callback as soon as it is known.
///   Within a wave, the next gate starts as soon as a slot is free, without
///   waiting for the callback to return on the previous record.
/// - When a `halt` gate fails, its record is handed over first, then those
///   of gates that had already finished; gates still running in its wave are
///   cancelled, and they and every gate not yet started are recorded as
///   skipped with the reason. No gate starts once a halting failure is known
///   or the run is cancelled.
///
/// [`inferential_concurrency`]: SchedulerBuilder::inferential_concurrency
#[derive(Debug, Clone)]
pub struct Scheduler {
    concurrency: usize,
    lock_dir: Utf8PathBuf,
    cancel_grace: Duration,
}

/// Builds a [`Scheduler`].
#[derive(Debug, Clone)]
#[must_use]
pub struct SchedulerBuilder {
    concurrency: usize,
    lock_dir: Utf8PathBuf,
    cancel_grace: Duration,
}

impl Scheduler {
    /// A builder: lock files under `lock_dir` (created if missing),
    /// inferential concurrency 4.
    pub fn builder(lock_dir: impl Into<Utf8PathBuf>) -> SchedulerBuilder {
        SchedulerBuilder {
            concurrency: 4,
            lock_dir: lock_dir.into(),
            cancel_grace: Duration::from_secs(2),
        }
    }

    /// Where lock files live.
    pub fn lock_dir(&self) -> &Utf8Path {
        &self.lock_dir
    }

    /// Runs `gates` after the phase described by `ctx`, handing every record
    /// to `record` as described on the type. Cancelling `ctx.cancel()` cancels
    /// the running gates and skips the rest.
    ///
    /// # Errors
    ///
    /// Only when `record` fails: the schedule stops at once (gates still
    /// running are cancelled) and nothing after the failed record is
    /// reported.
    pub async fn run<F>(
        &self,
        ctx: &GateContext,
        gates: &[ScheduledGate],
        mut record: F,
    ) -> Result<PhaseGates, ScheduleError>
    where
        F: FnMut(&GateRecord) -> Result<(), Box<dyn StdError + Send + Sync>> + Send,
    {
        let mut records: Vec<Option<GateRecord>> = vec![None; gates.len()];
        let mut stop: Option<String> = None;
        let mut emit =
            |rec: GateRecord, records: &mut Vec<Option<GateRecord>>| -> Result<(), ScheduleError> {
                record(&rec).map_err(|e| ScheduleError::new(&rec.result.gate, e))?;
                let index = rec.index;
                records[index] = Some(rec);
                Ok(())
            };

        let mut i = 0;
        while i < gates.len() && stop.is_none() {
            if ctx.cancel().is_cancelled() {
                stop = Some(RUN_CANCELLED.to_owned());
                break;
            }
            match gates[i].gate.kind() {
                GateKind::Computational => {
                    let rec = run_one(ctx, &gates[i], i, &self.lock_dir, Cancellation::new()).await;
                    if is_halting(&rec) {
                        stop = Some(format!("halted by gate `{}`", rec.result.gate));
                    }
                    emit(rec, &mut records)?;
                    i += 1;
                }
                GateKind::Inferential => {
                    let end = (i..gates.len())
                        .find(|&j| gates[j].gate.kind() != GateKind::Inferential)
                        .unwrap_or(gates.len());
                    stop = self
                        .run_wave(ctx, gates, i..end, &mut records, &mut emit)
                        .await?;
                    i = end;
                }
            }
        }

        if let Some(reason) = stop {
            for (index, gate) in gates.iter().enumerate() {
                if records[index].is_none() {
                    emit(skipped(gate, index, &reason), &mut records)?;
                }
            }
        }

        let records: Vec<GateRecord> = records.into_iter().flatten().collect();
        let effect = phase_effect(records.iter().map(|r| (&r.result, r.on_fail)));
        let cost = records.iter().map(|r| r.result.cost()).sum();
        Ok(PhaseGates {
            records,
            effect,
            cost,
        })
    }

    /// Runs one wave of inferential gates; returns the stop reason when one of
    /// them halts (or the run is cancelled).
    ///
    /// `concurrency` runner tasks each take the next gate of the wave in
    /// declared order as soon as their last one ends, and send its record
    /// here. A gate therefore starts without waiting for this task to wake
    /// up, and a gate that blocks its thread holds up only its own runner.
    async fn run_wave(
        &self,
        ctx: &GateContext,
        gates: &[ScheduledGate],
        wave: Range<usize>,
        records: &mut Vec<Option<GateRecord>>,
        emit: &mut impl FnMut(GateRecord, &mut Vec<Option<GateRecord>>) -> Result<(), ScheduleError>,
    ) -> Result<Option<String>, ScheduleError> {
        let shared = Arc::new(Wave {
            first: wave.start,
            gates: gates[wave.clone()].to_vec(),
            cancels: wave.clone().map(|_| Cancellation::new()).collect(),
            next: AtomicUsize::new(0),
            halted: AtomicBool::new(false),
        });
        let (sender, mut receiver) = mpsc::unbounded_channel();
        let mut runners = JoinSet::new();
        for _ in 0..self.concurrency.min(wave.len()) {
            runners.spawn(run_runner(
                Arc::clone(&shared),
                ctx.clone(),
                self.lock_dir.clone(),
                sender.clone(),
            ));
        }
        drop(sender);

        let mut stop = None;
        while let Some(rec) = receiver.recv().await {
            let halting = is_halting(&rec);
            let name = rec.result.gate.clone();
            if let Err(e) = emit(rec, records) {
                shared.stop();
                runners.abort_all();
                return Err(e);
            }
            if halting {
                stop = Some(format!("halted by gate `{name}`"));
                break;
            }
        }
        if stop.is_some() {
            // Gates that finished before they could be cancelled keep their
            // results (and their cost), after the halting record.
            while let Ok(rec) = receiver.try_recv() {
                if let Err(e) = emit(rec, records) {
                    shared.stop();
                    runners.abort_all();
                    return Err(e);
                }
            }
        }
        if stop.is_none() && ctx.cancel().is_cancelled() {
            // The runners stopped taking gates: the rest are skipped.
            stop = Some(RUN_CANCELLED.to_owned());
        }
        if stop.is_some() {
            shared.stop();
            // Give cooperating gates a moment to stop their work, then drop
            // the rest.
            let _ = tokio::time::timeout(self.cancel_grace, async {
                while runners.join_next().await.is_some() {}
            })
            .await;
            runners.abort_all();
        } else {
            // Every runner has dropped its sender, so every gate the runners
            // took has been recorded unless a runner itself died.
            for index in wave {
                if records[index].is_none() {
                    let gate = &gates[index];
                    emit(
                        errored_record(
                            gate,
                            index,
                            "the gate's runner stopped before it reported".to_owned(),
                        ),
                        records,
                    )?;
                }
            }
        }
        Ok(stop)
    }
}

/// What the runners of one wave share.
struct Wave {
    /// The index of the wave's first gate in its phase.
    first: usize,
    gates: Vec<ScheduledGate>,
    cancels: Vec<Cancellation>,
    /// The next gate to take, relative to `first`.
    next: AtomicUsize,
    /// Set when a gate halted or the schedule stopped: no gate starts after.
    halted: AtomicBool,
}

impl Wave {
    /// Starts no more gates and cancels the running ones.
    fn stop(&self) {
        self.halted.store(true, Ordering::Release);
        self.cancels.iter().for_each(Cancellation::cancel);
    }
}

/// One runner of a wave: runs the wave's next gate until there is none, a
/// gate halts, the run is cancelled, or the scheduler stops listening.
async fn run_runner(
    wave: Arc<Wave>,
    ctx: GateContext,
    lock_dir: Utf8PathBuf,
    records: mpsc::UnboundedSender<GateRecord>,
) {
    loop {
        if wave.halted.load(Ordering::Acquire) || ctx.cancel().is_cancelled() {
            return;
        }
        let at = wave.next.fetch_add(1, Ordering::AcqRel);
        let Some(gate) = wave.gates.get(at) else {
            return;
        };
        let index = wave.first + at;
        let rec = run_one(&ctx, gate, index, &lock_dir, wave.cancels[at].clone()).await;
        if is_halting(&rec) {
            // Before the record is sent: no runner takes another gate once
            // a halting failure is known.
            wave.halted.store(true, Ordering::Release);
        }
        if records.send(rec).is_err() {
            return;
        }
    }
}

impl SchedulerBuilder {
    /// How many inferential gates of one wave may run at once (at least 1).
    pub fn inferential_concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// The scheduler.
    pub fn build(self) -> Scheduler {
        Scheduler {
            concurrency: self.concurrency,
            lock_dir: self.lock_dir,
            cancel_grace: self.cancel_grace,
        }
    }
}

impl SchedulerBuilder {
    orcho_core::setters! {
        /// How long gates cancelled by a halting gate get to stop before they
        /// are dropped.
        pub fn cancel_grace(grace: Duration) => cancel_grace;
    }
}

/// Why gates are skipped when the run is cancelled.
const RUN_CANCELLED: &str = "the run was cancelled";

fn is_halting(rec: &GateRecord) -> bool {
    rec.on_fail == FailStrategy::Halt && rec.result.outcome.is_failure()
}

fn skipped(gate: &ScheduledGate, index: usize, reason: &str) -> GateRecord {
    record_of(
        gate,
        index,
        GateOutcome::Skipped {
            reason: reason.to_owned(),
        },
    )
}

fn errored_record(gate: &ScheduledGate, index: usize, error: String) -> GateRecord {
    record_of(gate, index, GateOutcome::Errored { error })
}

fn record_of(gate: &ScheduledGate, index: usize, outcome: GateOutcome) -> GateRecord {
    GateRecord {
        index,
        on_fail: gate.on_fail,
        lock_group: gate.lock_group.clone(),
        result: QualityGateResult::of_kind(gate.gate.kind(), gate.gate.name().clone(), outcome),
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Runs one gate to a record: takes its lock, applies its timeout, turns an
/// `Err` into an errored result, and checks what the gate reported.
async fn run_one(
    ctx: &GateContext,
    gate: &ScheduledGate,
    index: usize,
    lock_dir: &Utf8Path,
    cancel: Cancellation,
) -> GateRecord {
    let name = gate.gate.name().clone();
    let kind = gate.gate.kind();
    let record = |result: QualityGateResult| GateRecord {
        index,
        on_fail: gate.on_fail,
        lock_group: gate.lock_group.clone(),
        result,
    };
    let errored = |error: String| {
        QualityGateResult::of_kind(kind, name.clone(), GateOutcome::Errored { error })
    };

    let skipped = |reason: &str| {
        QualityGateResult::of_kind(
            kind,
            name.clone(),
            GateOutcome::Skipped {
                reason: reason.to_owned(),
            },
        )
    };

    // Waiting for a lock group ends with a cancellation too; a lock taken
    // after that is released as soon as the blocking task hands it over.
    let _guard = match &gate.lock_group {
        Some(group) => tokio::select! {
            biased;
            () = ctx.cancel().cancelled() => return record(skipped(RUN_CANCELLED)),
            () = cancel.cancelled() => return record(skipped("cancelled")),
            locked = lock(lock_dir, group) => match locked {
                Ok(guard) => Some(guard),
                Err(e) => return record(errored(e)),
            },
        },
        None => None,
    };

    let gctx = ctx
        .clone()
        .with_cancel(cancel.clone())
        .with_config(gate.config.clone());
    let start = Instant::now();
    let evaluation = catch_unwind(gate.gate.evaluate(&gctx));
    let deadline = async {
        match gate.timeout {
            Some(t) => tokio::time::sleep(t).await,
            None => std::future::pending().await,
        }
    };
    // Cancellation is looked at first, so a gate cancelled before it starts
    // is never polled.
    let result = tokio::select! {
        biased;
        () = ctx.cancel().cancelled() => {
            cancel.cancel();
            skipped(RUN_CANCELLED)
        },
        () = cancel.cancelled() => skipped("cancelled"),
        result = evaluation => match result {
            Ok(Ok(result)) => checked(result, &name, kind),
            Ok(Err(e)) => errored(error_chain(&e)),
            // A gate that panicked could not run: errored, never a pass.
            Err(_panic) => errored("the gate panicked".to_owned()),
        },
        () = deadline => {
            cancel.cancel();
            let after = gate.timeout.unwrap_or_default();
            QualityGateResult::of_kind(kind, name.clone(), GateOutcome::TimedOut { after_ms: millis(after) })
        },
    };
    let result = if result.duration.is_zero() {
        result.with_duration(start.elapsed())
    } else {
        result
    };
    record(result)
}

/// The output of `future`, or `Err` with the payload when polling it
/// panicked.
async fn catch_unwind<F: Future>(future: F) -> std::thread::Result<F::Output> {
    let mut future = pin!(future);
    std::future::poll_fn(|cx| {
        match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(panic) => Poll::Ready(Err(panic)),
        }
    })
    .await
}

/// What a gate reported, with the declared name, and refused when a
/// computational gate claims model usage.
fn checked(mut result: QualityGateResult, name: &GateName, kind: GateKind) -> QualityGateResult {
    result.gate = name.clone();
    if kind == GateKind::Computational && result.kind() == GateKind::Inferential {
        return QualityGateResult::computational(
            name.clone(),
            GateOutcome::Errored {
                error: format!(
                    "gate `{name}` is computational but reported an inferential result with model usage"
                ),
            },
        );
    }
    if kind == GateKind::Inferential && result.kind() == GateKind::Computational {
        let mut converted = QualityGateResult::inferential(name.clone(), result.outcome.clone());
        converted.findings = result.findings;
        converted.summary = result.summary;
        converted.output_tail = result.output_tail;
        converted.duration = result.duration;
        return converted;
    }
    result
}

async fn lock(lock_dir: &Utf8Path, group: &str) -> Result<orcho_core::fs::ExclusiveGuard, String> {
    let group_id = GateName::new(group).map_err(|e| e.to_string())?;
    let dir = lock_dir.to_owned();
    let path = dir.join(format!("{group_id}.lock"));
    tokio::task::spawn_blocking(move || {
        orcho_core::fs::create_dir_all(&dir).map_err(|e| error_chain(&e))?;
        LockFile::new(path)
            .lock_exclusive()
            .map_err(|e| error_chain(&e))
    })
    .await
    .map_err(|e| format!("the lock task failed: {e}"))?
}
