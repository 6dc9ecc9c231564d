use orcho_core::Verdict;
use orcho_gates::{FailStrategy, GateRegistry};
use orcho_handoff::HandoffAction;
use orcho_permissions::PermissionAction;
use orcho_profile::{Exhausted, PauseWhen, Profile, Role, builtin};

use crate::Result;

#[test]
fn every_builtin_loads_validates_resolves_and_is_snapshotted() -> Result {
    let registry = GateRegistry::with_builtins();
    for name in builtin::NAMES {
        let profile = Profile::builtin(name)?;
        assert_eq!(profile.name, *name);
        let resolved = profile.resolve(&registry)?;
        assert!(
            resolved.warnings().is_empty(),
            "{name}: {:?}",
            resolved.warnings()
        );
        insta::assert_yaml_snapshot!(format!("builtin_{name}"), resolved);
    }
    Ok(())
}

#[test]
fn default_plans_implements_reviews_and_accepts_on_receipts() -> Result {
    let resolved = Profile::builtin("default")?.resolve(&GateRegistry::with_builtins())?;
    let roles: Vec<_> = resolved
        .phases
        .iter()
        .map(|p| (p.name.as_str(), p.role))
        .collect();
    assert_eq!(
        roles,
        [
            ("plan", Role::Plan),
            ("implement", Role::Implement),
            ("review", Role::Review),
            ("final_acceptance", Role::FinalAcceptance)
        ]
    );
    let implement = resolved.phase("implement").ok_or("implement")?;
    assert_eq!(implement.max_attempts, 3);
    let tests = &implement.scheduled_gates()[0];
    assert_eq!(tests.gate.name(), "tests");
    assert_eq!(tests.on_fail, FailStrategy::FeedIntoNext);
    assert_eq!(tests.lock_group.as_deref(), Some("checkout"));
    assert_eq!(tests.timeout, Some(std::time::Duration::from_secs(1800)));

    let review = resolved.phase("review").ok_or("review")?;
    assert_eq!(review.handoff.pause, PauseWhen::OnRejected);
    assert!(
        review
            .handoff
            .menu(Verdict::Rejected)
            .contains(HandoffAction::RetryFeedback)
    );

    let acceptance = resolved
        .phase("final_acceptance")
        .ok_or("final_acceptance")?;
    assert!(
        !acceptance
            .handoff
            .menu(Verdict::Rejected)
            .contains(HandoffAction::Continue)
    );
    assert!(
        acceptance
            .handoff
            .menu(Verdict::Rejected)
            .contains(HandoffAction::ContinueWithWaiver)
    );
    assert!(resolved.verification.is_required("test"));
    assert!(resolved.supervision.plan_approval);
    assert_eq!(resolved.supervision.deviation.retry_cap, 10);
    assert_eq!(
        resolved.supervision.max_stop_blocks,
        orcho_profile::DEFAULT_MAX_STOP_BLOCKS
    );
    assert!(!resolved.autopilot.enabled);
    assert!(resolved.permissions.is_none());
    Ok(())
}

#[test]
fn quick_is_implement_and_tests_only() -> Result {
    let resolved = Profile::builtin("quick")?.resolve(&GateRegistry::with_builtins())?;
    assert_eq!(resolved.phases.len(), 1);
    let implement = &resolved.phases[0];
    assert_eq!(implement.role, Role::Implement);
    assert_eq!(implement.gates.len(), 1);
    assert_eq!(implement.gates[0].uses, "tests");
    assert!(!resolved.supervision.plan_approval);
    Ok(())
}

#[test]
fn read_only_review_runs_under_the_read_only_preset() -> Result {
    let resolved = Profile::builtin("read_only_review")?.resolve(&GateRegistry::with_builtins())?;
    assert_eq!(resolved.phases.len(), 1);
    assert_eq!(resolved.phases[0].role, Role::Review);
    assert_eq!(resolved.phases[0].handoff.on_exhausted, Exhausted::Halt);
    let rules = resolved.permissions.as_ref().ok_or("permissions")?;
    assert_eq!(
        rules.evaluate("write", "src/lib.rs").action,
        PermissionAction::Deny
    );
    assert_eq!(
        rules.evaluate("edit", "src/lib.rs").action,
        PermissionAction::Deny
    );
    assert_eq!(
        rules.evaluate("bash", "git status").action,
        PermissionAction::Allow
    );
    assert_eq!(
        rules.evaluate("bash", "cargo build").action,
        PermissionAction::Ask
    );
    assert_eq!(
        rules.evaluate("read", "README.md").action,
        PermissionAction::Allow
    );
    Ok(())
}

#[test]
fn builtin_texts_parse_as_plain_yaml_documents() -> Result {
    for name in builtin::NAMES {
        let text = builtin::text(name).ok_or("text")?;
        let from_text = Profile::from_yaml_str(text)?;
        assert_eq!(
            serde_json::to_value(&from_text)?,
            serde_json::to_value(Profile::builtin(name)?)?
        );
    }
    Ok(())
}

#[test]
fn final_acceptance_without_actions_never_offers_continue() -> Result {
    let profile = Profile::from_yaml_str(
        "schema: 1\nname: fa\nphases:\n  - name: build\n    role: implement\n  - name: release\n    role: final_acceptance\n    handoff: { pause: on_rejected }\nverification:\n  commands: [{ name: test, argv: [\"true\"] }]\n  required: [test]\n",
    )?;
    let resolved = profile.resolve(&GateRegistry::with_builtins())?;
    let menu = resolved
        .phase("release")
        .ok_or("release")?
        .handoff
        .menu(Verdict::Rejected);
    assert!(!menu.contains(HandoffAction::Continue), "{menu:?}");
    assert!(menu.contains(HandoffAction::ContinueWithWaiver), "{menu:?}");
    assert!(menu.contains(HandoffAction::Halt), "{menu:?}");
    // Another role keeps it.
    let build = resolved
        .phase("build")
        .ok_or("build")?
        .handoff
        .menu(Verdict::Rejected);
    assert!(build.contains(HandoffAction::Continue), "{build:?}");
    Ok(())
}

#[test]
fn an_ask_timeout_is_read_and_alone_sets_no_rules() -> Result {
    let base = "schema: 1\nname: asks\nphases:\n  - name: build\n    role: implement\n";
    let alone = Profile::from_yaml_str(&format!("{base}permissions:\n  ask_timeout: 5m\n"))?
        .resolve(&GateRegistry::with_builtins())?;
    assert_eq!(alone.permissions, None);
    assert_eq!(
        alone.ask_timeout.map(|t| t.get()),
        Some(std::time::Duration::from_secs(300))
    );
    let with_rules = Profile::from_yaml_str(&format!(
        "{base}permissions:\n  rules:\n    - {{permission: bash, pattern: 'git push*', action: ask}}\n  ask_timeout: 30s\n"
    ))?
    .resolve(&GateRegistry::with_builtins())?;
    assert_eq!(with_rules.permissions.map(|r| r.rules().len()), Some(1));
    assert_eq!(
        with_rules.ask_timeout.map(|t| t.get()),
        Some(std::time::Duration::from_secs(30))
    );
    let wrong = Profile::from_yaml_str(&format!("{base}permissions:\n  ask_timeout: soon\n"));
    assert!(wrong.is_err());
    Ok(())
}
