//! Hostile input: every case is an error (or a bounded success), never a
//! panic, a hang or unbounded memory. What bounds the work is the refusal
//! each test asserts (the size cap, the depth cap, the alias expansion
//! cap); how long a large profile takes to parse is measured beside a plain
//! serde_yaml parse in `benches/benches/profile.rs`, not timed here.

use std::fmt::Write as _;

use camino::Utf8PathBuf;
use orcho_gates::GateRegistry;
use orcho_profile::{MAX_PROFILE_BYTES, Profile, ProfileErrorKind};
use proptest::prelude::*;

use crate::{Result, render};

#[test]
fn billion_laughs_is_refused_before_expansion() -> Result {
    let mut text = String::from(
        "schema: 1\nname: lol\nl0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n",
    );
    for i in 1..10 {
        let prev = format!("*l{}", i - 1);
        let items = [prev.as_str(); 9].join(", ");
        writeln!(text, "l{i}: &l{i} [{items}]")?;
    }
    text.push_str("phases: *l9\n");
    let err = Profile::from_yaml_str(&text).err().ok_or("accepted")?;
    assert!(err.is_hostile(), "{err:?}");
    assert!(matches!(
        err.kind(),
        ProfileErrorKind::AliasExpansion { .. }
    ));
    insta::assert_snapshot!(render(&err), @"<string>:8:10 [-] invalid profile `<string>` at line 8, column 10: caused by: expanding the aliases would produce more than 100000 nodes");
    Ok(())
}

#[test]
fn quadratic_aliases_into_a_gate_config_are_refused() -> Result {
    // One anchored list of 20 000 items, aliased 2 000 times in `with:`:
    // 40 million nodes if expanded, in a 60 kB document.
    let items = vec!["x"; 20_000].join(",");
    let aliases = vec!["*big"; 2_000].join(",");
    let text = format!(
        "schema: 1\nname: q\nphases:\n  - name: implement\n    role: implement\n    gates:\n      - name: t\n        uses: tests\n        on_fail: halt\n        with: {{ a: &big [{items}], b: [{aliases}] }}\n"
    );
    let err = Profile::from_yaml_str(&text).err().ok_or("accepted")?;
    assert!(
        matches!(err.kind(), ProfileErrorKind::AliasExpansion { .. }),
        "{err:?}"
    );
    Ok(())
}

#[test]
fn small_anchors_and_aliases_still_work() -> Result {
    let text = "\
schema: 1
name: reuse
phases:
  - name: implement
    role: implement
    max_attempts: 2
    gates:
      - &unit { name: unit, uses: tests, on_fail: feed_into_next }
  - name: review
    role: review
    gates:
      - *unit
verification:
  commands: [{ name: unit, argv: [cargo, test] }]
";
    let resolved = Profile::from_yaml_str(text)?.resolve(&GateRegistry::with_builtins())?;
    assert_eq!(resolved.phases[1].gates[0].name, "unit");
    Ok(())
}

#[test]
fn deep_nesting_is_refused() -> Result {
    for text in [
        format!(
            "schema: 1\nname: deep\ndescription: {}\n",
            "[".repeat(200_000)
        ),
        format!(
            "schema: 1\nname: deep\nphases:\n  - name: a\n    role: plan\n    gates:\n      - {{ name: t, uses: tests, on_fail: halt, with: {}1{} }}\n",
            "[".repeat(10_000),
            "]".repeat(10_000)
        ),
        format!(
            "schema: 1\nname: deep\nx: {}1{}\n",
            "{a: ".repeat(50_000),
            "}".repeat(50_000)
        ),
        format!(
            "schema: 1\nname: deep\nx: {}1{}\n",
            "[\"]\", ".repeat(50_000),
            "]".repeat(50_000)
        ),
        format!(
            "schema: 1\nname: deep\nphases:\n- name: a\n  role: plan\n  gates:\n  - name: t\n    uses: tests\n    on_fail: halt\n    with:\n{}",
            (0..1_300)
                .map(|i| format!("{}a{i}:\n", " ".repeat(i + 6)))
                .collect::<String>()
        ),
    ] {
        let err = Profile::from_yaml_str(&text).err().ok_or("accepted")?;
        assert!(err.is_syntax() || err.is_unknown_key(), "{err:?}");
    }
    let text = format!(
        "schema: 1\nname: deep\nphases:\n  - name: a\n    role: plan\n    gates:\n      - {{ name: t, uses: tests, on_fail: halt, with: {}1{} }}\n",
        "[".repeat(1_000),
        "]".repeat(1_000)
    );
    let err = Profile::from_yaml_str(&text).err().ok_or("accepted")?;
    assert!(matches!(err.kind(), ProfileErrorKind::TooDeep), "{err:?}");
    Ok(())
}

#[test]
fn huge_scalars_are_bounded_by_the_size_cap() -> Result {
    // Under the cap: accepted, the scalar kept whole.
    let big = "x".repeat(900_000);
    let text = format!("schema: 1\nname: big\ndescription: {big}\nextends: builtin:quick\n");
    let profile = Profile::from_yaml_str(&text)?;
    assert_eq!(profile.description.as_deref().map(str::len), Some(900_000));
    // Over the cap: refused before parsing.
    let text = format!(
        "schema: 1\nname: big\ndescription: {}\n",
        "x".repeat(MAX_PROFILE_BYTES as usize)
    );
    let err = Profile::from_yaml_str(&text).err().ok_or("accepted")?;
    assert!(matches!(err.kind(), ProfileErrorKind::TooLarge { .. }));
    assert!(err.is_hostile());
    // Error messages never echo a huge value.
    let text = format!(
        "schema: 1\nname: big\nphases:\n  - name: a\n    role: {}\n",
        "r".repeat(500_000)
    );
    let err = Profile::from_yaml_str(&text).err().ok_or("accepted")?;
    assert!(
        orcho_core::error_chain(&err).len() < 500,
        "{}",
        orcho_core::error_chain(&err).len()
    );
    Ok(())
}

#[test]
fn huge_files_are_refused_without_reading_them_whole() -> Result {
    let dir = tempfile::tempdir()?;
    let path = Utf8PathBuf::try_from(dir.path().join("huge.yaml"))?;
    let file = std::fs::File::create(&path)?;
    file.set_len(8 * 1024 * 1024 * 1024)?; // 8 GiB, sparse
    let before = bytes_read_by_this_thread()?;
    let err = Profile::load(&path).err().ok_or("accepted")?;
    if let (Some(before), Some(after)) = (before, bytes_read_by_this_thread()?) {
        // At most the cap and the one byte that shows the file is longer
        // (and this thread's read of its own counters).
        let read = after - before;
        assert!(read <= MAX_PROFILE_BYTES + 4096, "read {read} bytes");
    }
    insta::assert_snapshot!(orcho_core::error_chain(&err).replace(path.as_str(), "<file>"), @"invalid profile `<file>`: caused by: the profile is 8589934592 bytes long, more than the limit of 1048576");
    Ok(())
}

/// What this thread has read so far, in bytes (`rchar` of
/// `/proc/thread-self/io`), where the system says.
fn bytes_read_by_this_thread() -> std::result::Result<Option<u64>, String> {
    let Ok(io) = std::fs::read_to_string("/proc/thread-self/io") else {
        return Ok(None);
    };
    let rchar = io
        .lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .ok_or_else(|| format!("no rchar in {io}"))?;
    Ok(Some(
        rchar.parse::<u64>().map_err(|e| format!("{rchar}: {e}"))?,
    ))
}

#[test]
fn non_utf8_bytes_are_located() -> Result {
    let err = Profile::from_yaml_slice(b"schema: 1\nname: caf\xc3\xa9 \xff\n")
        .err()
        .ok_or("accepted")?;
    assert!(matches!(
        err.kind(),
        ProfileErrorKind::NotUtf8 { offset: 22 }
    ));
    assert_eq!((err.line(), err.column()), (Some(2), Some(12)));

    let dir = tempfile::tempdir()?;
    let path = Utf8PathBuf::try_from(dir.path().join("latin1.yaml"))?;
    orcho_core::fs::write_atomic(&path, b"schema: 1\nname: \xe9t\xe9\n")?;
    let err = Profile::load(&path).err().ok_or("accepted")?;
    assert!(matches!(
        err.kind(),
        ProfileErrorKind::NotUtf8 { offset: 16 }
    ));
    Ok(())
}

#[test]
fn odd_but_valid_yaml_is_handled() -> Result {
    for text in [
        "schema: 1\nname: tagged\nphases: !custom [1]\n",
        "schema: 1\nname: twodocs\n---\nschema: 1\n",
        "schema: 1\nname: keys\nphases:\n  - name: a\n    role: plan\n    gates:\n      - { name: t, uses: tests, on_fail: halt, with: { [1]: x } }\n",
        "schema: 1\nname: nan\nautopilot: { min_confidence: .nan }\n",
        "schema: 1\nname: big\nautopilot: { max_retries: 99999999999999999999 }\n",
        "schema: 1\nname: dup\nname: dup\n",
        "\u{feff}schema: 1\nname: bom\n",
        "schema: 1\nname: nul\0\n",
        "*unknown\n",
    ] {
        let result =
            Profile::from_yaml_str(text).and_then(|p| p.resolve(&GateRegistry::with_builtins()));
        assert!(result.is_err(), "{text:?} was accepted");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Arbitrary bytes never panic.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let _ = Profile::from_yaml_slice(&bytes).map(|p| p.resolve(&GateRegistry::with_builtins()));
    }

    /// Arbitrary text made of YAML punctuation and profile words never
    /// panics, and every error it gives has a file.
    #[test]
    fn yaml_shaped_text_never_panics(
        parts in prop::collection::vec(prop::sample::select(vec![
            "schema: 1\n", "name: x\n", "phases:\n", "  - ", "name: a\n", "role: plan\n", "    ",
            "gates: [", "]", "{", "}", "&a ", "*a", ", ", "uses: tests", "on_fail: halt", "\n",
            "verification:\n", "  commands: [{name: a, argv: [x]}]\n", ": ", "- ", "'", "\"", "#", "!tag ",
            "extends: builtin:quick\n", "handoff: {actions: [halt]}\n",
        ]), 0..40),
    ) {
        let text: String = parts.concat();
        if let Err(err) = Profile::from_yaml_str(&text).and_then(|p| p.resolve(&GateRegistry::with_builtins())) {
            prop_assert!(!err.file().is_empty());
            let _ = orcho_core::error_chain(&err);
        }
    }
}
