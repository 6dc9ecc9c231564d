//! Warnings: allowed, probably unintended, reported through a sink.

use orcho_gates::GateRegistry;
use orcho_profile::{Profile, ProfileWarning, ProfileWarnings, WarningKind};

use crate::{Result, render_warning};

const PROFILE: &str = "\
schema: 1
name: warned
phases:
  - name: implement
    role: implement
    gates:
      - { name: unit, uses: tests, on_fail: feed_into_next }
  - name: final_acceptance
    role: final_acceptance
verification:
  commands: [{ name: unit, argv: [cargo, test] }]
supervision: { plan_approval: true }
permissions:
  preset: read_only
  rules:
    - { permission: bash, pattern: \"cargo test*\", action: allow }
    - { permission: bash, pattern: \"cargo *\", action: ask }
";

#[test]
fn warnings_go_to_the_injected_sink_with_their_location() -> Result {
    let profile = Profile::from_yaml_str(PROFILE)?;
    let mut sink: Vec<ProfileWarning> = Vec::new();
    let resolved = profile.resolve_with_warnings(&GateRegistry::with_builtins(), &mut sink)?;
    assert!(resolved.warnings().is_empty(), "the sink got them instead");
    let lines: Vec<String> = sink.iter().map(render_warning).collect();
    insta::assert_snapshot!(lines.join("\n"), @"
    <string>:7:45 [phases[0].gates[0].on_fail] phase `implement` has `max_attempts: 1`, so this gate's failure is fed on only if a handoff grants a retry (a feed is an attempt of `implement`: `max_attempts: 2` gives it one)
    <string>:9:11 [phases[1].role] the `final_acceptance` phase reads receipts, but `verification.required` is empty, so acceptance proves nothing
    <string>:12:31 [supervision.plan_approval] `plan_approval` is on, but no phase has role `plan`
    <string>:16:7 [permissions.rules[0]] rule 46 (bash `cargo test*` → allow) never decides: the later rule 47 (bash `cargo *` → ask) matches everything it matches
    ");
    assert!(matches!(
        sink[0].kind(),
        WarningKind::FeedWithoutNextAttempt { .. }
    ));

    // `resolve` keeps them on the result.
    let resolved = profile.resolve(&GateRegistry::with_builtins())?;
    assert_eq!(resolved.warnings(), sink.as_slice());
    Ok(())
}

#[test]
fn preset_rules_overridden_by_the_profile_are_not_warnings() -> Result {
    // `bash *` → deny shadows many preset rules on purpose: that is how a
    // preset is tightened, so nothing is reported.
    let text = "schema: 1\nname: strict\nextends: builtin:read_only_review\npermissions:\n  preset: read_only\n  rules:\n    - { permission: bash, pattern: \"*\", action: deny }\n";
    let resolved = Profile::from_yaml_str(text)?.resolve(&GateRegistry::with_builtins())?;
    assert!(resolved.warnings().is_empty(), "{:?}", resolved.warnings());
    let rules = resolved.permissions.as_ref().ok_or("rules")?;
    assert_eq!(
        rules.evaluate("bash", "git status").action,
        orcho_permissions::PermissionAction::Deny
    );
    Ok(())
}

/// A sink that counts, to show that any type can receive warnings.
#[derive(Default)]
struct Count(usize);

impl ProfileWarnings for Count {
    fn warn(&mut self, _: ProfileWarning) {
        self.0 += 1;
    }
}

#[test]
fn any_sink_receives_warnings() -> Result {
    let mut count = Count::default();
    Profile::from_yaml_str(PROFILE)?
        .resolve_with_warnings(&GateRegistry::with_builtins(), &mut count)?;
    assert_eq!(count.0, 4);
    Ok(())
}

#[test]
fn a_feed_to_an_earlier_phase_without_room_for_a_return_is_warned() -> Result {
    let text = "schema: 1\nname: f\nphases:\n  - { name: plan, role: plan }\n  - name: implement\n    role: implement\n    gates:\n      - { name: unit, uses: tests, on_fail: feed_into_next, feeds: plan }\nverification:\n  commands: [{ name: unit, argv: [cargo, test] }]\n";
    let resolved = Profile::from_yaml_str(text)?.resolve(&GateRegistry::with_builtins())?;
    let lines: Vec<String> = resolved.warnings().iter().map(render_warning).collect();
    insta::assert_snapshot!(lines.join("\n"), @"<string>:8:45 [phases[1].gates[0].on_fail] phase `implement` has `max_attempts: 1`, so this gate's failure is fed on to `plan` only if a handoff grants a retry (a feed is an attempt of `implement`: `max_attempts: 2` gives it one)");
    // With room for a return, nothing to say.
    let roomy = text.replace(
        "    role: implement\n",
        "    role: implement\n    max_attempts: 2\n",
    );
    let resolved = Profile::from_yaml_str(&roomy)?.resolve(&GateRegistry::with_builtins())?;
    assert!(resolved.warnings().is_empty(), "{:?}", resolved.warnings());
    Ok(())
}
