//! The whole path of a gate written in Rust, from the trait to a tested
//! profile: `QualityGate` → a registry → `Profile::resolve` →
//! `RunPlan::from_profile` → `orcho::testing::Scenario`.
//!
//! `cargo run -p orcho-examples --example gate_plugin`
#![expect(clippy::print_stdout, reason = "the example shows its trace on stdout")]

use std::sync::Arc;

use orcho::{
    RunPlan,
    core::{Finding, GateName, RunStatus, Severity, Verdict},
    gates::{
        GateContext, GateError, GateKind, GateOutcome, GateRegistry, GateSpec, PhaseOutcome,
        QualityGate, QualityGateResult,
    },
    profile::Profile,
    testing::Scenario,
};

/// The gate (step 1): fails when the phase's summary admits to a `TODO`.
#[derive(Debug)]
struct NoTodo {
    name: GateName,
    word: String,
}

#[orcho::gates::async_trait]
impl QualityGate for NoTodo {
    fn name(&self) -> &GateName {
        &self.name
    }

    // Computational (the default): it reads, it does not ask a model. The
    // results below are built with `of_kind(self.kind(), …)` so that the
    // two always agree.
    fn kind(&self) -> GateKind {
        GateKind::Computational
    }

    async fn evaluate(&self, ctx: &GateContext) -> Result<QualityGateResult, GateError> {
        let found = ctx.phase_outcome().summary.contains(&self.word);
        let outcome = if found {
            GateOutcome::Failed
        } else {
            GateOutcome::Passed
        };
        let mut result = QualityGateResult::of_kind(self.kind(), self.name.clone(), outcome);
        if found {
            result = result.with_finding(Finding::new(
                self.name.as_str(),
                Severity::Medium,
                format!("the summary still says `{}`", self.word),
            ));
        }
        Ok(result)
    }
}

/// Its factory (step 2): validates the profile's `with:` block when the profile
/// is resolved, so that a typo is a load error, not a silent default.
fn no_todo(spec: &GateSpec) -> Result<Arc<dyn QualityGate>, GateError> {
    let word = match spec.config.get("word") {
        None => "TODO".to_owned(),
        Some(serde_json::Value::String(word)) if !word.is_empty() => word.clone(),
        Some(other) => {
            return Err(GateError::msg(format!(
                "`word` must be a word, not {other}"
            )));
        }
    };
    if let Some(map) = spec.config.as_object()
        && let Some(key) = map.keys().find(|k| *k != "word")
    {
        return Err(GateError::msg(format!("unknown key `{key}` (known: word)")));
    }
    Ok(Arc::new(NoTodo {
        name: spec.name.clone(),
        word,
    }))
}

/// A profile that uses it (step 3), by its registered name.
const PROFILE: &str = "
schema: 1
name: with-a-plugin
phases:
  - name: implement
    role: implement
    max_attempts: 2
    gates:
      - { name: no_todo, uses: no_todo, on_fail: feed_into_next, with: { word: TODO } }
supervision:
  plan_approval: false
";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    walk().await
}

async fn walk() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    // The registry: the built-ins (`tests`, `command`) and the plugin.
    let registry = GateRegistry::builtins_builder()
        .register("no_todo", no_todo)?
        .build();
    // 4. Resolving checks every `uses:` against the registry and builds
    // every gate with its `with:` block.
    let profile = Profile::from_yaml_str(PROFILE)?.resolve(&registry)?;
    // 5. The plan the engine runs.
    let plan = RunPlan::from_profile(&profile);
    // 6. A scenario: the first attempt admits a TODO, so the gate fails and
    // feeds the finding into the second, which is clean.
    let run = Scenario::new(plan)
        .report(
            "implement",
            PhaseOutcome::new(Verdict::Approved).with_summary("done, but a TODO remains"),
        )
        .report(
            "implement",
            PhaseOutcome::new(Verdict::Approved).with_summary("done"),
        )
        .run()
        .await?;
    println!("{}", run.trace);
    assert_eq!(run.status, RunStatus::Completed);
    let second = &run.requests[1].input;
    assert!(
        second
            .fed_failures
            .iter()
            .flat_map(|f| &f.findings)
            .any(|f| f.title.contains("TODO")),
        "the second attempt was told why the first failed"
    );
    println!("the plugin gate failed the first attempt and fed its finding into the second");
    Ok(())
}

#[cfg(test)]
mod tests {
    /// `cargo test` walks the whole path too (`test = true` in Cargo.toml).
    #[tokio::test]
    async fn the_plugin_path_works_end_to_end()
    -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        super::walk().await
    }
}
