//! `extends`: override by name, sections replaced whole, cycles, locations
//! in the right file.

use camino::{Utf8Path, Utf8PathBuf};
use orcho_gates::{FailStrategy, GateRegistry};
use orcho_profile::{Profile, ProfileErrorKind, Role};

use crate::{Result, render};

struct Dir {
    _guard: tempfile::TempDir,
    root: Utf8PathBuf,
}

impl Dir {
    fn new() -> Result<Self> {
        let guard = tempfile::tempdir()?;
        let root = Utf8PathBuf::try_from(guard.path().to_owned())?;
        Ok(Self {
            _guard: guard,
            root,
        })
    }

    fn write(&self, name: &str, text: &str) -> Result<Utf8PathBuf> {
        let path = self.root.join(name);
        if let Some(parent) = path.parent() {
            orcho_core::fs::create_dir_all(parent)?;
        }
        orcho_core::fs::write_atomic(&path, text.as_bytes())?;
        Ok(path)
    }

    /// The error text with the temporary directory replaced by `<dir>`.
    fn scrub(&self, text: &str) -> String {
        text.replace(self.root.as_str(), "<dir>")
    }
}

const BASE: &str = "\
schema: 1
name: base
description: the base
phases:
  - name: implement
    role: implement
    max_attempts: 2
    gates:
      - { name: unit, uses: tests, on_fail: feed_into_next }
      - { name: lint, uses: tests, on_fail: halt }
  - name: review
    role: review
verification:
  commands:
    - { name: unit, argv: [cargo, test] }
    - { name: lint, argv: [cargo, clippy] }
  required: [unit]
supervision: { plan_approval: false, retry_cap: 3 }
";

#[test]
fn phases_and_gates_override_by_name_and_others_are_added() -> Result {
    let dir = Dir::new()?;
    dir.write("base.yaml", BASE)?;
    let child = dir.write(
        "child.yaml",
        "\
schema: 1
name: child
extends: base.yaml
phases:
  - name: implement
    max_attempts: 4
    gates:
      - { name: lint, uses: tests, on_fail: informational }
      - { name: docs, uses: tests, on_fail: informational }
  - name: document
    role: custom
verification:
  commands:
    - { name: unit, argv: [cargo, nextest, run] }
    - { name: lint, argv: [cargo, clippy] }
    - { name: docs, argv: [cargo, doc] }
  required: [unit, docs]
",
    )?;
    let profile = Profile::load(&child)?;
    assert_eq!(profile.name, "child");
    assert_eq!(
        profile.description.as_deref(),
        Some("the base"),
        "kept from the base"
    );
    assert!(profile.extends.is_none());
    let resolved = profile.resolve(&GateRegistry::with_builtins())?;

    let phases: Vec<_> = resolved
        .phases
        .iter()
        .map(|p| (p.name.as_str(), p.role))
        .collect();
    assert_eq!(
        phases,
        [
            ("implement", Role::Implement),
            ("review", Role::Review),
            ("document", Role::Custom)
        ],
        "the overriding phase keeps its place; the new one is added at the end"
    );
    let implement = &resolved.phases[0];
    assert_eq!(implement.max_attempts, 4, "the field the child sets wins");
    assert_eq!(
        implement.role,
        Role::Implement,
        "the field it leaves out is the base's"
    );
    let gates: Vec<_> = implement
        .gates
        .iter()
        .map(|g| (g.name.as_str(), g.on_fail))
        .collect();
    assert_eq!(
        gates,
        [
            ("unit", FailStrategy::FeedIntoNext),
            ("lint", FailStrategy::Informational),
            ("docs", FailStrategy::Informational)
        ],
        "a gate with a base gate's name replaces it in place; others are added"
    );
    // Sections the child declares replace the base's whole; others are kept.
    assert_eq!(
        resolved.verification.commands[0].argv,
        ["cargo", "nextest", "run"]
    );
    assert!(resolved.verification.is_required("docs"));
    assert!(!resolved.supervision.plan_approval);
    assert_eq!(resolved.supervision.deviation.retry_cap, 3);
    Ok(())
}

#[test]
fn a_child_extends_a_builtin_from_a_string_or_a_file() -> Result {
    let text =
        "schema: 1\nname: mine\nextends: builtin:default\nsupervision: { plan_approval: false }\n";
    let from_string = Profile::from_yaml_str(text)?;
    let dir = Dir::new()?;
    let from_file = Profile::load(dir.write("mine.yaml", text)?)?;
    assert_eq!(
        serde_json::to_value(&from_string)?,
        serde_json::to_value(&from_file)?
    );
    let resolved = from_string.resolve(&GateRegistry::with_builtins())?;
    assert_eq!(resolved.phases.len(), 4);
    assert!(!resolved.supervision.plan_approval);
    Ok(())
}

#[test]
fn relative_extends_are_relative_to_the_extending_file() -> Result {
    let dir = Dir::new()?;
    dir.write("shared/base.yaml", BASE)?;
    dir.write(
        "shared/middle.yaml",
        "schema: 1\nname: middle\nextends: base.yaml\n",
    )?;
    let child = dir.write(
        "team/child.yaml",
        "schema: 1\nname: child\nextends: ../shared/middle.yaml\n",
    )?;
    let profile = Profile::load(&child)?;
    assert_eq!(profile.name, "child");
    assert_eq!(profile.phases.len(), 2);
    Ok(())
}

#[test]
fn cycles_are_errors_naming_the_chain() -> Result {
    let dir = Dir::new()?;
    dir.write("a.yaml", "schema: 1\nname: a\nextends: b.yaml\n")?;
    dir.write("b.yaml", "schema: 1\nname: b\nextends: ./c.yaml\n")?;
    dir.write("c.yaml", "schema: 1\nname: c\nextends: a.yaml\n")?;
    let err = Profile::load(dir.root.join("a.yaml"))
        .err()
        .ok_or("accepted")?;
    assert!(err.is_cycle());
    let ProfileErrorKind::ExtendsCycle { chain } = err.kind() else {
        return Err("not a cycle".into());
    };
    assert_eq!(chain.len(), 4);
    insta::assert_snapshot!(dir.scrub(&render(&err)), @"<dir>/c.yaml:3:10 [extends] invalid profile `<dir>/c.yaml` at line 3, column 10, in `extends`: caused by: `extends` forms a cycle: <dir>/a.yaml → <dir>/b.yaml → <dir>/c.yaml → <dir>/a.yaml");

    let own = dir.write("self.yaml", "schema: 1\nname: self\nextends: self.yaml\n")?;
    let err = Profile::load(&own).err().ok_or("accepted")?;
    assert!(err.is_cycle());
    Ok(())
}

#[test]
fn chains_are_bounded() -> Result {
    let dir = Dir::new()?;
    for i in 0..40 {
        dir.write(
            &format!("p{i}.yaml"),
            &format!("schema: 1\nname: p{i}\nextends: p{}.yaml\n", i + 1),
        )?;
    }
    dir.write("p40.yaml", BASE)?;
    let err = Profile::load(dir.root.join("p0.yaml"))
        .err()
        .ok_or("accepted")?;
    assert!(
        matches!(err.kind(), ProfileErrorKind::ExtendsTooDeep { max: 16 }),
        "{err:?}"
    );
    Ok(())
}

#[test]
fn errors_name_the_file_they_are_in() -> Result {
    let dir = Dir::new()?;
    dir.write(
        "base.yaml",
        &BASE.replace("uses: tests, on_fail: halt", "uses: tsets, on_fail: halt"),
    )?;
    let child = dir.write(
        "child.yaml",
        "schema: 1\nname: child\nextends: base.yaml\nphases:\n  - name: review\n    gates:\n      - { name: unit, uses: tests, on_fail: feed_into_next, feeds: implemnt }\n",
    )?;
    // The child's own problem is reported in the child, after the merge.
    let err = Profile::load(&child).err().ok_or("accepted")?;
    insta::assert_snapshot!(dir.scrub(&render(&err)), @"<dir>/child.yaml:7:68 [phases[0].gates[0].feeds] invalid profile `<dir>/child.yaml` at line 7, column 68, in `phases[0].gates[0].feeds`: caused by: `feeds` names phase `implemnt`, which the profile does not declare (did you mean `implement`?); phases: `implement`, `review` => suggestion `implement`");

    // A problem in an inherited gate is reported in the base.
    let child = dir.write(
        "child2.yaml",
        "schema: 1\nname: child\nextends: base.yaml\n",
    )?;
    let err = Profile::load(&child)?
        .resolve(&GateRegistry::with_builtins())
        .err()
        .ok_or("accepted")?;
    insta::assert_snapshot!(dir.scrub(&render(&err)), @"<dir>/base.yaml:10:29 [phases[0].gates[1].uses] invalid profile `<dir>/base.yaml` at line 10, column 29, in `phases[0].gates[1].uses`: caused by: no gate is registered as `tsets`; known gates: `command`, `tests` (did you mean `tests`?) => suggestion `tests`");
    Ok(())
}

#[test]
fn a_missing_base_is_reported_at_the_extends_line() -> Result {
    let dir = Dir::new()?;
    let child = dir.write(
        "child.yaml",
        "schema: 1\nname: child\nextends: nowhere.yaml\n",
    )?;
    let err = Profile::load(&child).err().ok_or("accepted")?;
    assert!(matches!(err.kind(), ProfileErrorKind::ExtendsRead { .. }));
    assert_eq!((err.line(), err.column()), (Some(3), Some(10)));
    assert_eq!(err.file(), child.as_str());

    let err = Profile::load(Utf8Path::new("/definitely/not/here.yaml"))
        .err()
        .ok_or("accepted")?;
    assert!(matches!(err.kind(), ProfileErrorKind::Read(_)));
    insta::assert_snapshot!(err.to_string(), @"cannot read profile `/definitely/not/here.yaml`");
    Ok(())
}

#[test]
fn a_base_gate_whose_command_this_profile_renamed_is_reported_here() -> Result {
    let dir = Dir::new()?;
    let path = dir.write(
        "orcho.yaml",
        "schema: 1\nname: mine\nextends: builtin:default\nverification:\n  commands:\n    - { name: unit, argv: [cargo, test] }\n  required: [unit]\n",
    )?;
    let profile = Profile::load(&path)?;
    let err = profile
        .resolve(&GateRegistry::with_builtins())
        .expect_err("the built-in gate runs `test`");
    // In the file the user wrote, at its commands, not in the built-in.
    assert_eq!(err.file(), path.as_str());
    assert_eq!((err.line(), err.column()), (Some(6), Some(5)));
    assert!(matches!(
        err.kind(),
        ProfileErrorKind::BaseGateCommand { command, gate, .. }
            if command == "test" && gate.base == "builtin:default"
    ));
    assert_eq!(err.suggestion(), Some("unit"));
    let said = dir.scrub(&orcho_core::error_chain(&err));
    assert!(
        said.contains(
            "the gate `tests` of phase `implement`, from `builtin:default`, runs the command `test`"
        ),
        "{said}"
    );
    // The override it suggests is a profile that resolves.
    let suggested = said
        .rsplit_once("whole): `")
        .and_then(|(_, s)| s.strip_suffix('`'))
        .ok_or("no suggestion")?;
    let fixed = dir.write(
        "fixed.yaml",
        &format!("{}{suggested}\n", std::fs::read_to_string(&path)?),
    )?;
    let resolved = Profile::load(&fixed)?.resolve(&GateRegistry::with_builtins())?;
    let implement = Profile::load(&fixed)?;
    let gate = &implement
        .phases
        .iter()
        .find(|p| p.name.as_str() == "implement")
        .ok_or("no implement")?
        .gates[0];
    assert_eq!(gate.on_fail, FailStrategy::FeedIntoNext);
    assert_eq!(gate.lock_group.as_deref(), Some("checkout"));
    drop(resolved);
    Ok(())
}
