//! Invalid profiles and their messages: file, line, column, document path
//! and suggestion, one line each, in one snapshot.

use std::fmt::Write as _;

use orcho_gates::GateRegistry;
use orcho_profile::{Profile, ProfileErrorKind};

use crate::{Result, render};

/// A valid profile that the cases below break one way each.
const BASE: &str = "\
schema: 1
name: table
phases:
  - name: plan
    role: plan
  - name: implement
    role: implement
    max_attempts: 3
    gates:
      - name: tests
        uses: tests
        on_fail: feed_into_next
        with: { command: test }
  - name: review
    role: review
    handoff:
      pause: on_rejected
      actions: [continue, retry_feedback, halt]
  - name: final_acceptance
    role: final_acceptance
verification:
  commands:
    - name: test
      argv: [cargo, test]
    - name: lint
      argv: [cargo, clippy]
  required: [test]
";

/// Each case: a label, the profile text.
fn cases() -> Vec<(&'static str, String)> {
    let edit = |from: &str, to: &str| {
        assert!(BASE.contains(from), "the base has {from:?}");
        BASE.replacen(from, to, 1)
    };
    vec![
        ("misspelt top-level key", edit("phases:", "phasses:")),
        (
            "misspelt gate key",
            edit("on_fail: feed_into_next", "on_fial: feed_into_next"),
        ),
        ("misspelt strategy", edit("feed_into_next", "feed_into_nxt")),
        ("misspelt role", edit("role: implement", "role: implment")),
        ("misspelt gate `uses`", edit("uses: tests", "uses: test")),
        (
            "unknown key in a gate's `with`",
            edit("{ command: test }", "{ comand: test }"),
        ),
        (
            "tests gate runs an undeclared command",
            edit("{ command: test }", "{ command: tset }"),
        ),
        (
            "`required` names an undeclared command",
            edit("required: [test]", "required: [tests]"),
        ),
        (
            "duplicate phase",
            edit("  - name: review\n", "  - name: plan\n"),
        ),
        (
            "duplicate gate",
            edit(
                "        with: { command: test }\n",
                "        with: { command: test }\n      - { name: tests, uses: tests, on_fail: halt }\n",
            ),
        ),
        (
            "feed target does not exist",
            edit(
                "on_fail: feed_into_next\n",
                "on_fail: feed_into_next\n        feeds: implemnt\n",
            ),
        ),
        (
            "`feeds` without feed_into_next",
            edit(
                "on_fail: feed_into_next\n",
                "on_fail: halt\n        feeds: implement\n",
            ),
        ),
        (
            "trigger_replan without a plan phase",
            edit("  - name: plan\n    role: plan\n", "").replacen(
                "feed_into_next",
                "trigger_replan",
                1,
            ),
        ),
        (
            "unknown runner",
            edit("max_attempts: 3\n", "max_attempts: 3\n    runner: claude\n"),
        ),
        (
            "unknown runner key",
            edit(
                "max_attempts: 3\n",
                "max_attempts: 3\n    runner: { agent: codex, modle: o4 }\n",
            ),
        ),
        (
            "runner timeout of zero",
            edit(
                "max_attempts: 3\n",
                "max_attempts: 3\n    runner:\n      agent: codex\n      timeout_secs: 0\n",
            ),
        ),
        (
            "empty runner model",
            edit(
                "max_attempts: 3\n",
                "max_attempts: 3\n    runner: { agent: claude-code, model: \"\" }\n",
            ),
        ),
        (
            "read_only that is not a boolean",
            edit("role: review\n", "role: review\n    read_only: sometimes\n"),
        ),
        (
            "misspelt handoff action",
            edit("retry_feedback, halt]", "retry_feedbak, halt]"),
        ),
        (
            "handoff actions without halt",
            edit(
                "[continue, retry_feedback, halt]",
                "[continue, retry_feedback]",
            ),
        ),
        (
            "handoff action listed twice",
            edit(
                "[continue, retry_feedback, halt]",
                "[continue, halt, continue]",
            ),
        ),
        (
            "continue on final acceptance",
            edit(
                "role: final_acceptance\n",
                "role: final_acceptance\n    handoff: { actions: [continue, halt] }\n",
            ),
        ),
        (
            "actions on a phase that never pauses",
            edit(
                "pause: on_rejected\n",
                "pause: never\n      on_exhausted: halt\n",
            ),
        ),
        (
            "misspelt pause policy",
            edit("pause: on_rejected", "pause: on_rejectd"),
        ),
        ("missing schema", edit("schema: 1\n", "")),
        (
            "schema from a newer Orcho",
            edit("schema: 1\n", "schema: 2\nnew_section: {}\n"),
        ),
        ("schema zero", edit("schema: 1\n", "schema: 0\n")),
        ("phase without a role", edit("    role: review\n", "")),
        ("zero attempts", edit("max_attempts: 3", "max_attempts: 0")),
        (
            "too many rounds",
            edit("max_attempts: 3", "max_rounds: 500"),
        ),
        (
            "second final_acceptance",
            edit("    role: plan\n", "    role: final_acceptance\n"),
        ),
        (
            "invalid phase name",
            edit("name: review", "name: ../review"),
        ),
        (
            "misspelt key in a verification command",
            edit(
                "argv: [cargo, clippy]",
                "argv: [cargo, clippy]\n      timout: 5m",
            ),
        ),
        (
            "invalid duration",
            edit(
                "on_fail: feed_into_next\n",
                "on_fail: feed_into_next\n        timeout: 10 minutes\n",
            ),
        ),
        (
            "zero timeout",
            edit(
                "on_fail: feed_into_next\n",
                "on_fail: feed_into_next\n        timeout: 0s\n",
            ),
        ),
        (
            "command in an undeclared environment",
            edit(
                "argv: [cargo, clippy]",
                "argv: [cargo, clippy]\n      environment: ci",
            ),
        ),
        ("empty argv", edit("argv: [cargo, clippy]", "argv: []")),
        (
            "delivery default `fix`",
            format!("{BASE}delivery: {{ default_action: fix }}\n"),
        ),
        (
            "misspelt delivery default",
            format!("{BASE}delivery: {{ default_action: aprove }}\n"),
        ),
        (
            "unknown commit message placeholder",
            format!("{BASE}delivery:\n  commit_message: \"{{profile}} {{run}}\"\n"),
        ),
        (
            "misspelt intake default",
            format!("{BASE}intake: {{ dirty_checkout: comit }}\n"),
        ),
        ("empty permissions", format!("{BASE}permissions: {{}}\n")),
        (
            "misspelt permission preset",
            format!("{BASE}permissions: {{ preset: read_onyl }}\n"),
        ),
        (
            "misspelt permission action",
            format!(
                "{BASE}permissions:\n  rules:\n    - {{ permission: bash, pattern: \"ls*\", action: alow }}\n"
            ),
        ),
        (
            "confidence above 1",
            format!("{BASE}autopilot: {{ enabled: true, min_confidence: 1.5 }}\n"),
        ),
        (
            "absolute allowed-files glob",
            format!("{BASE}autopilot:\n  allowed_files: [\"src/**\", \"/etc/**\"]\n"),
        ),
        (
            "negative cost cap",
            format!("{BASE}autopilot: {{ max_cost_usd: -1 }}\n"),
        ),
        (
            "misspelt supervision key",
            format!("{BASE}supervision: {{ plan_aproval: true }}\n"),
        ),
        (
            "unknown built-in",
            edit("name: table\n", "name: table\nextends: builtin:defualt\n"),
        ),
        (
            "a string extends a file",
            edit("name: table\n", "name: table\nextends: base.yaml\n"),
        ),
        ("empty name", edit("name: table", "name: \"\"")),
        ("no phases", "schema: 1\nname: empty\n".to_owned()),
        (
            "not YAML",
            edit(
                "    role: review\n",
                "    role: review\n   bad: indentation\n",
            ),
        ),
        (
            "a list where a mapping belongs",
            "schema: 1\nname: x\nphases:\n  - [plan]\n".to_owned(),
        ),
        ("empty document", String::new()),
        (
            "gate without `on_fail`",
            edit("        on_fail: feed_into_next\n", ""),
        ),
        (
            "phase without a name",
            edit("  - name: review\n    role: review\n", "  - role: review\n"),
        ),
        ("a key given twice", format!("{BASE}name: again\n")),
        (
            "a key given twice inside a gate's `with`",
            edit(
                "with: { command: test }",
                "with: { command: test, command: lint }",
            ),
        ),
        (
            "a variable given twice in a command's `env`",
            edit(
                "argv: [cargo, clippy]",
                "argv: [cargo, clippy]\n      env:\n        RUSTFLAGS: -D\n        RUSTFLAGS: -W",
            ),
        ),
        (
            "a gate that feeds a later phase",
            edit(
                "with: { command: test }",
                "with: { command: test }\n        feeds: review",
            ),
        ),
        (
            "a number of attempts in words",
            edit("max_attempts: 3", "max_attempts: three"),
        ),
        (
            "a trusted key that is not a key",
            edit(
                "  required: [test]\n",
                "  required: [test]\ntrust:\n  keys:\n    - name: ci\n      ed25519: not-a-key\n",
            ),
        ),
        (
            "a trusted key of the wrong length",
            edit(
                "  required: [test]\n",
                "  required: [test]\ntrust:\n  keys:\n    - name: ci\n      ed25519: AAAA\n",
            ),
        ),
        (
            "a trusted key named twice",
            edit(
                "  required: [test]\n",
                "  required: [test]\ntrust:\n  keys:\n    - name: ci\n      ed25519: 11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n    - name: ci\n      ed25519: PUAXw+hDiVqStwqnTRt+vJyYLM8uxJaMwM1V8Sr0Zgw=\n",
            ),
        ),
        (
            "a trusted key listed twice",
            edit(
                "  required: [test]\n",
                "  required: [test]\ntrust:\n  keys:\n    - name: ci\n      ed25519: 11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n    - name: alice\n      ed25519: 11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n",
            ),
        ),
        (
            "a misspelt key in trust",
            edit(
                "  required: [test]\n",
                "  required: [test]\ntrust:\n  keys:\n    - name: ci\n      ed2559: 11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n",
            ),
        ),
        (
            "a tab for indentation",
            edit("  - name: review", "\t- name: review"),
        ),
    ]
}

#[test]
fn invalid_profiles_are_located_explained_and_suggested() -> Result {
    let registry = GateRegistry::with_builtins();
    let mut table = String::new();
    for (label, text) in cases() {
        let result = Profile::from_yaml_str(&text).and_then(|p| p.resolve(&registry));
        let Err(err) = result else {
            return Err(format!("case {label:?} was accepted").into());
        };
        writeln!(table, "{label}\n  {}", render(&err))?;
    }
    assert!(cases().len() >= 25);
    insta::assert_snapshot!("invalid_profiles", table);
    Ok(())
}

#[test]
fn the_base_of_the_table_is_valid() -> Result {
    let resolved = Profile::from_yaml_str(BASE)?.resolve(&GateRegistry::with_builtins())?;
    assert_eq!(resolved.phases.len(), 4);
    Ok(())
}

#[test]
fn errors_expose_their_parts() -> Result {
    let err = Profile::from_yaml_str(&BASE.replace("feed_into_next", "HALT_NOW"))
        .err()
        .ok_or("accepted")?;
    assert_eq!(err.file(), "<string>");
    assert_eq!((err.line(), err.column()), (Some(12), Some(18)));
    assert_eq!(
        err.path().map(ToString::to_string).as_deref(),
        Some("phases[1].gates[0].on_fail")
    );
    assert!(matches!(err.kind(), ProfileErrorKind::Invalid { .. }));

    let err = Profile::from_yaml_str(&BASE.replace("uses: tests", "uses: tsts"))?
        .resolve(&GateRegistry::with_builtins())
        .err()
        .ok_or("accepted")?;
    assert!(err.is_unknown_gate());
    assert_eq!(err.suggestion(), Some("tests"));
    assert_eq!((err.line(), err.column()), (Some(11), Some(15)));

    let err = Profile::from_yaml_str(&BASE.replace("phases:", "phasess:"))
        .err()
        .ok_or("accepted")?;
    assert!(err.is_unknown_key());
    assert_eq!(err.suggestion(), Some("phases"));
    insta::assert_snapshot!(err.to_string(), @"invalid profile `<string>` at line 3, column 1, in `phasess`");
    Ok(())
}

#[test]
fn upper_case_strategies_are_accepted() -> Result {
    let profile = Profile::from_yaml_str(&BASE.replace("feed_into_next", "FEED_INTO_NEXT"))?;
    assert_eq!(
        profile.phases[1].gates[0].on_fail,
        orcho_gates::FailStrategy::FeedIntoNext
    );
    Ok(())
}

#[test]
fn format_enums_parse_with_suggestions() {
    use orcho_profile::{DeliveryDefault, IntakeDefault, Role};
    assert_eq!(
        "final_acceptance".parse::<Role>(),
        Ok(Role::FinalAcceptance)
    );
    assert_eq!("commit".parse::<IntakeDefault>(), Ok(IntakeDefault::Commit));
    let err = "aprove".parse::<DeliveryDefault>().unwrap_err();
    assert_eq!(err.nearest(), Some("approve"));
    insta::assert_snapshot!(err, @"unknown delivery default `aprove` (did you mean `approve`?); expected one of `ask`, `approve`, `apply`, `fix`, `skip`, `halt`");
    for role in Role::ALL {
        assert_eq!(role.as_str().parse::<Role>(), Ok(*role));
    }
}

#[test]
fn delivery_and_intake_defaults_are_spelt_like_their_actions() {
    use orcho_profile::{DeliveryDefault, IntakeDefault};
    for default in DeliveryDefault::ALL {
        match default.action() {
            Some(action) => assert_eq!(action.as_str(), default.as_str()),
            None => assert_eq!(*default, DeliveryDefault::Ask),
        }
    }
    for default in IntakeDefault::ALL {
        match default.action() {
            Some(action) => assert_eq!(action.as_str(), default.as_str()),
            None => assert_eq!(*default, IntakeDefault::Ask),
        }
    }
}

#[test]
fn a_profile_from_a_newer_orcho_asks_for_an_upgrade() -> Result {
    // A future schema with keys this version does not know: the version is
    // reported, not the unknown keys.
    let future = "schema: 3\nname: future\nphases:\n  - name: plan\n    role: plan\n    budget: { tokens: 1000 }\nnotifications: [slack]\n";
    let err = Profile::from_yaml_str(future).err().ok_or("accepted")?;
    assert!(err.is_unsupported_schema());
    insta::assert_snapshot!(render(&err), @"<string>:1:9 [schema] invalid profile `<string>` at line 1, column 9, in `schema`: caused by: schema 3 is newer than 1, the schema this version of Orcho reads; upgrade Orcho to use this profile");
    Ok(())
}
