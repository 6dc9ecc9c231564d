//! The built-in computational gate `tests`: one declared verification
//! command, run through `orcho-receipts`, so its run is a receipt.

use std::sync::Arc;

use camino::Utf8Path;

use orcho_core::{Finding, GateName, Severity};
use orcho_receipts::{CommandName, CommandReceipt, Failure};
use serde::{Deserialize, Serialize};

use super::process::run_cancellable;
use crate::{GateContext, GateError, GateOutcome, GateSpec, QualityGate, QualityGateResult};

/// The registry name of the built-in `tests` gate.
pub const TESTS: &str = "tests";

/// The `with:` block of a `tests` gate.
///
/// ```yaml
/// gates:
///   - name: unit
///     uses: tests
///     on_fail: feed_into_next
///     with:
///       command: unit      # a command of `verification.commands`; default: the gate's name
/// ```
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct TestsGateConfig {
    /// The declared verification command to run.
    pub command: Option<CommandName>,
}

/// Runs one declared verification command and turns its receipt into a
/// result.
///
/// - The command runs through the run's verification contract (handed over
///   as [`GateContext::verification`]), so every run of the gate leaves a receipt
///   that final acceptance can read; the gate adds no proof of its own.
/// - A passing receipt passes. A non-zero exit, a signal, a failed
///   environment assertion, or a command that changed the files it verifies
///   fails, with one finding whose detail is the end of the command's output:
///   the text a `feed_into_next` strategy hands to the next attempt.
/// - A timeout is reported timed out, with a finding keyed as the
///   environment's (`environment:timeout:<command>`): the run pauses for a
///   person, who waives it or halts, and no attempt is spent waiting as long
///   again. A command that cannot be started, or a run that cannot be
///   recorded, is an error (the gate could not run).
/// - Cancelling the gate kills the command's whole process group.
#[derive(Debug, Clone)]
pub struct TestsGate {
    name: GateName,
    command: CommandName,
}

impl TestsGate {
    /// A gate named `name` that runs `command`.
    pub fn new(name: GateName, command: CommandName) -> Self {
        Self { name, command }
    }

    /// Builds the gate from its spec (the registry's factory for `tests`).
    ///
    /// # Errors
    ///
    /// When `with:` has unknown keys or an invalid command name, or no command
    /// is given and the gate's name is not a valid command name.
    pub fn from_spec(spec: &GateSpec) -> Result<Arc<dyn QualityGate>, GateError> {
        let config: TestsGateConfig = if spec.config.is_null() {
            TestsGateConfig::default()
        } else {
            // Read in place: no copy of the `with:` block.
            TestsGateConfig::deserialize(&spec.config).map_err(GateError::new)?
        };
        let command = match config.command {
            Some(command) => command,
            None => spec.name.as_str().parse().map_err(|e| {
                GateError::new(e).context(format!(
                    "no `command` given, and the gate's name `{}` is not a command name",
                    spec.name
                ))
            })?,
        };
        Ok(Arc::new(Self::new(spec.name.clone(), command)))
    }

    /// The command it runs.
    pub fn command(&self) -> &CommandName {
        &self.command
    }

    fn result(
        &self,
        receipt: &CommandReceipt,
        store: &Utf8Path,
    ) -> Result<QualityGateResult, GateError> {
        let outcome = match receipt.failure() {
            None if receipt.subject_before != receipt.subject_after => GateOutcome::Failed,
            None => GateOutcome::Passed,
            Some(Failure::Timeout { after }) => GateOutcome::TimedOut {
                after_ms: u64::try_from(after.as_millis()).unwrap_or(u64::MAX),
            },
            Some(Failure::Cancelled) => GateOutcome::Skipped {
                reason: "cancelled".to_owned(),
            },
            Some(Failure::SpawnFailed { message }) => {
                let program = receipt.spec.argv.first().map_or("", String::as_str);
                return Err(GateError::msg(format!(
                    "`{}` could not start `{program}`: {message}",
                    self.command
                )));
            }
            Some(
                Failure::ExitCode(_) | Failure::Signal { .. } | Failure::AssertionFailed { .. },
            ) => GateOutcome::Failed,
            Some(_) => GateOutcome::Failed,
        };
        let tail = output_tail(receipt);
        let mut result = QualityGateResult::computational(self.name.clone(), outcome.clone())
            .with_duration(receipt.duration)
            .with_output_tail(tail.clone());
        let logs: Vec<String> = [&receipt.stdout.path, &receipt.stderr.path]
            .into_iter()
            .flatten()
            .map(|p| store.join(p).to_string())
            .collect();
        let detail = if logs.is_empty() {
            tail
        } else {
            format!("{tail}\n(full output: {})", logs.join(", "))
        };
        match &outcome {
            GateOutcome::Passed => {
                result = result.with_summary(format!("`{}` passed", self.command));
            }
            GateOutcome::Failed | GateOutcome::TimedOut { .. } => {
                let (why, detail) = match receipt.failure() {
                    Some(failure) => (failure.to_string(), detail),
                    None => (
                        "it changed the files it verifies, so its run proves nothing".to_owned(),
                        format!(
                            "hint: a command that writes files git does not ignore (a cache such \
                             as `__pycache__/` or `.pytest_cache/`) changes its own subject; \
                             git-ignore them\n{detail}"
                        ),
                    ),
                };
                // The declared environment is not as declared: the command
                // did not run, and no attempt of the agent's can fix that.
                let (summary, key) = match receipt.failure() {
                    // Past its declared timeout: another attempt would wait
                    // as long again, and a machine too slow for it is no
                    // agent's to fix; a person decides.
                    Some(Failure::Timeout { after }) => (
                        format!(
                            "`{}` did not finish within its timeout ({}): the command hangs, or \
                             this machine is too slow for it; a person waives it or halts (an \
                             attempt would wait as long again)",
                            self.command,
                            orcho_receipts::HumanDuration::new(after)
                        ),
                        format!("{}timeout:{}", crate::ENVIRONMENT_KEY, self.command),
                    ),
                    Some(Failure::AssertionFailed { .. }) => (
                        format!(
                            "`{}` did not run: the environment `{}` is not as declared: {why}",
                            self.command, receipt.environment
                        ),
                        format!("{}{}", crate::ENVIRONMENT_KEY, receipt.environment),
                    ),
                    _ => (
                        format!("`{}` failed: {why}", self.command),
                        format!("command:{}", self.command),
                    ),
                };
                result = result.with_summary(summary.clone()).with_finding(
                    Finding::new(self.name.as_str(), Severity::High, summary)
                        .with_detail(detail.trim_start())
                        .with_key(key),
                );
            }
            GateOutcome::Skipped { .. } | GateOutcome::Errored { .. } => {}
        }
        Ok(result)
    }
}

/// The end of the command's output.
fn output_tail(receipt: &CommandReceipt) -> String {
    super::process::output_tail(&receipt.stderr.tail, &receipt.stdout.tail)
}

#[async_trait::async_trait]
impl QualityGate for TestsGate {
    fn name(&self) -> &GateName {
        &self.name
    }

    async fn evaluate(&self, ctx: &GateContext) -> Result<QualityGateResult, GateError> {
        let verification = ctx.verification().cloned().ok_or_else(|| {
            GateError::msg(format!(
                "gate `{}` needs the run's verification contract, and none was given to the gate context",
                self.name
            ))
        })?;
        let command = self.command.clone();
        let store = verification.receipts_dir().to_owned();
        let receipt = run_cancellable(ctx, move |token| {
            verification.run_command(&command, Some(&token))
        })
        .await?;
        self.result(&receipt, &store)
    }
}
