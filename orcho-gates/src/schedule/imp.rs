use std::{error::Error as StdError, sync::Arc, time::Duration};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::{Cost, GateName, error_chain, fs::LockFile};
use serde::{Deserialize, Serialize};
use tokio::{task::JoinSet, time::Instant};

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

    /// Sets the lock group.
    #[must_use]
    pub fn with_lock_group(mut self, group: impl Into<String>) -> Self {
        self.lock_group = Some(group.into());
        self
    }

    /// Sets the timeout.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the configuration.
    #[must_use]
    pub fn with_config(mut self, config: serde_json::Value) -> Self {
        self.config = config;
        self
    }
}

/// A gate's result with its place in the phase and its strategy: what the
/// engine persists in the phase log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct GateRecord {
    /// The 0-based position of the gate in its phase.
    pub index: usize,
    /// Its strategy.
    pub on_fail: FailStrategy,
    /// Its lock group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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

    /// Sets the lock group.
    #[must_use]
    pub fn with_lock_group(mut self, group: Option<String>) -> Self {
        self.lock_group = group;
        self
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
///   When a `halt` gate fails, its record is handed over first; then gates
///   still running in its wave are cancelled, and they and every gate not yet
///   started are recorded as skipped with the reason.
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
    /// to `record` as described on the type. Cancelling `ctx.cancel` cancels
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
            if ctx.cancel.is_cancelled() {
                stop = Some("the run was cancelled".to_owned());
                break;
            }
            match gates[i].gate.kind() {
                GateKind::Computational => {
                    let rec = run_one(
                        ctx.clone(),
                        gates[i].clone(),
                        i,
                        self.lock_dir.clone(),
                        Cancellation::new(),
                    )
                    .await;
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
    async fn run_wave(
        &self,
        ctx: &GateContext,
        gates: &[ScheduledGate],
        wave: std::ops::Range<usize>,
        records: &mut Vec<Option<GateRecord>>,
        emit: &mut impl FnMut(GateRecord, &mut Vec<Option<GateRecord>>) -> Result<(), ScheduleError>,
    ) -> Result<Option<String>, ScheduleError> {
        // At most `concurrency` gates are in flight: the next one is spawned
        // as soon as one finishes, so no task waits on a permit and every
        // gate costs one spawn and one join.
        let mut set = JoinSet::new();
        let mut cancels = Vec::with_capacity(wave.len());
        let mut tasks = std::collections::HashMap::new();
        let mut pending = wave;
        let mut spawn_next =
            |set: &mut JoinSet<GateRecord>,
             cancels: &mut Vec<Cancellation>,
             tasks: &mut std::collections::HashMap<tokio::task::Id, usize>| {
                let Some(index) = pending.next() else {
                    return;
                };
                let cancel = Cancellation::new();
                cancels.push(cancel.clone());
                let (ctx, gate, lock_dir) =
                    (ctx.clone(), gates[index].clone(), self.lock_dir.clone());
                let handle = set.spawn(run_one(ctx, gate, index, lock_dir, cancel));
                tasks.insert(handle.id(), index);
            };
        for _ in 0..self.concurrency {
            spawn_next(&mut set, &mut cancels, &mut tasks);
        }
        let mut stop = None;
        while let Some(joined) = set.join_next().await {
            let rec = match joined {
                Ok(rec) => rec,
                Err(e) => {
                    // A gate that panicked could not run: report it as
                    // errored, never as a pass.
                    let Some(&index) = tasks.get(&e.id()) else {
                        continue;
                    };
                    let gate = &gates[index];
                    GateRecord {
                        index,
                        on_fail: gate.on_fail,
                        lock_group: gate.lock_group.clone(),
                        result: QualityGateResult::of_kind(
                            gate.gate.kind(),
                            gate.gate.name().clone(),
                            GateOutcome::Errored {
                                error: "the gate panicked".to_owned(),
                            },
                        ),
                    }
                }
            };
            let halting = is_halting(&rec);
            let name = rec.result.gate.clone();
            if let Err(e) = emit(rec, records) {
                cancels.iter().for_each(Cancellation::cancel);
                set.abort_all();
                return Err(e);
            }
            if halting {
                stop = Some(format!("halted by gate `{name}`"));
                break;
            }
            spawn_next(&mut set, &mut cancels, &mut tasks);
        }
        if stop.is_some() {
            cancels.iter().for_each(Cancellation::cancel);
            // Give cooperating gates a moment to stop their work, then drop
            // the rest.
            let _ = tokio::time::timeout(self.cancel_grace, async {
                while set.join_next().await.is_some() {}
            })
            .await;
            set.abort_all();
        }
        Ok(stop)
    }
}

impl SchedulerBuilder {
    /// How many inferential gates of one wave may run at once (at least 1).
    pub fn inferential_concurrency(mut self, n: usize) -> Self {
        self.concurrency = n.max(1);
        self
    }

    /// How long gates cancelled by a halting gate get to stop before they
    /// are dropped.
    pub fn cancel_grace(mut self, grace: Duration) -> Self {
        self.cancel_grace = grace;
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

fn is_halting(rec: &GateRecord) -> bool {
    rec.on_fail == FailStrategy::Halt && rec.result.outcome.is_failure()
}

fn skipped(gate: &ScheduledGate, index: usize, reason: &str) -> GateRecord {
    GateRecord {
        index,
        on_fail: gate.on_fail,
        lock_group: gate.lock_group.clone(),
        result: QualityGateResult::of_kind(
            gate.gate.kind(),
            gate.gate.name().clone(),
            GateOutcome::Skipped {
                reason: reason.to_owned(),
            },
        ),
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Runs one gate to a record: takes its lock, applies its timeout, turns an
/// `Err` into an errored result, and checks what the gate reported.
async fn run_one(
    ctx: GateContext,
    gate: ScheduledGate,
    index: usize,
    lock_dir: Utf8PathBuf,
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

    let _guard = match &gate.lock_group {
        Some(group) => match lock(&lock_dir, group).await {
            Ok(guard) => Some(guard),
            Err(e) => return record(errored(e)),
        },
        None => None,
    };

    let mut gctx = ctx.clone();
    gctx.cancel = cancel.clone();
    gctx.config = gate.config.clone();
    let start = Instant::now();
    let evaluation = gate.gate.evaluate(&gctx);
    let deadline = async {
        match gate.timeout {
            Some(t) => tokio::time::sleep(t).await,
            None => std::future::pending().await,
        }
    };
    let result = tokio::select! {
        result = evaluation => match result {
            Ok(result) => checked(result, &name, kind),
            Err(e) => errored(error_chain(&e)),
        },
        () = deadline => {
            cancel.cancel();
            let after = gate.timeout.unwrap_or_default();
            QualityGateResult::of_kind(kind, name.clone(), GateOutcome::TimedOut { after_ms: millis(after) })
        },
        () = ctx.cancel.cancelled() => {
            cancel.cancel();
            QualityGateResult::of_kind(kind, name.clone(), GateOutcome::Skipped { reason: "the run was cancelled".to_owned() })
        },
        () = cancel.cancelled() => {
            QualityGateResult::of_kind(kind, name.clone(), GateOutcome::Skipped { reason: "cancelled".to_owned() })
        },
    };
    let result = if result.duration.is_zero() {
        result.with_duration(start.elapsed())
    } else {
        result
    };
    record(result)
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
