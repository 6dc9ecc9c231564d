//! The registry: lookups, duplicates, explicit shadowing.

use std::sync::Arc;

use orcho_gates::{
    GateError, GateRegistry, GateSpec, QualityGate, RegistryError, testing::ScriptedGate,
};

use crate::{Result, name};

fn passing(spec: &GateSpec) -> std::result::Result<Arc<dyn QualityGate>, GateError> {
    Ok(Arc::new(ScriptedGate::pass(spec.name.clone())))
}

fn failing(spec: &GateSpec) -> std::result::Result<Arc<dyn QualityGate>, GateError> {
    Ok(Arc::new(ScriptedGate::fail(spec.name.clone(), [])))
}

#[test]
fn unknown_names_list_the_known_ones() -> Result {
    let registry = GateRegistry::builder()
        .register("tests", passing)?
        .register("lint", passing)?
        .build();
    let err = registry
        .build(&GateSpec::new(name("unit"), name("tets")))
        .err()
        .ok_or("unknown gate accepted")?;
    assert!(err.is_unknown());
    insta::assert_snapshot!(err, @"no gate is registered as `tets`; known gates: `lint`, `tests` (did you mean `tests`?)");
    let err = GateRegistry::default().unknown("tests");
    insta::assert_snapshot!(err, @"no gate is registered as `tests`; known gates: none");
    Ok(())
}

#[tokio::test]
async fn shadowing_is_explicit() -> Result {
    let err = GateRegistry::builder()
        .register("tests", passing)?
        .register("tests", failing)
        .err()
        .ok_or("duplicate accepted")?;
    insta::assert_snapshot!(err, @"a gate is already registered as `tests`; use `shadow` to replace it on purpose");
    let err = GateRegistry::builder()
        .shadow("tests", failing)
        .err()
        .ok_or("shadowing nothing accepted")?;
    assert!(matches!(err, RegistryError::NothingToShadow { .. }));

    let registry = GateRegistry::builder()
        .register("tests", passing)?
        .shadow("tests", failing)?
        .build();
    let gate = registry.build(&GateSpec::new(name("unit"), name("tests")))?;
    let (_dir, ctx) = crate::context();
    let result = gate.evaluate(&ctx).await?;
    assert_eq!(
        result.outcome.as_str(),
        "failed",
        "the shadowing factory is used"
    );
    assert_eq!(
        registry
            .names()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        ["tests"]
    );
    Ok(())
}
