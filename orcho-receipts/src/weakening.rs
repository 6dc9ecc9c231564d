//! Changes that weaken a change's own proof: what makes the tests pass
//! without the work.
//!
//! A receipt proves that the declared command ran and passed. It does not
//! say whether the tests it ran are the tests the project had: a change
//! that deletes a test, skips one, drops its assertions or tells the runner
//! to collect fewer passes as honestly as one that fixes the code.
//! [`weakenings`] reads a change file by file (each file before and after)
//! and names what weakens the proof, each with its file and line:
//!
//! | detector | what |
//! |---|---|
//! | `test_deleted` | a test file deleted, or renamed to a name its runner no longer collects |
//! | `skip_marker` | a skip added: `#[ignore]`, `@pytest.mark.skip(if)`, `@unittest.skip`, `pytest.skip(`, `self.skipTest(`, `it.skip`/`test.skip`/`describe.skip`, `xit(`/`xdescribe(`, `t.Skip(` |
//! | `only_marker` | a focus added that runs one test and skips the rest: `it.only`, `test.only`, `describe.only`, `fit(`, `fdescribe(` |
//! | `todo_marker` | a test turned into a to-do: `it.todo`, `test.todo`, `#[ignore = "todo"]` |
//! | `xfail_marker` | an expected failure added: `@pytest.mark.xfail`, `@unittest.expectedFailure`, `#[should_panic]` |
//! | `fewer_assertions` | a test file that asserts less than before |
//! | `runner_config` | runner configuration changed: `conftest.py`, `pytest.ini`, `tox.ini`, `setup.cfg`, pytest's section of `pyproject.toml`, jest and vitest configuration, `.cargo/config.toml` |
//! | `test_script` | how the tests are started changed: `package.json`'s `test` script or `jest`/`vitest` section, a Makefile's test target, Cargo's `[[test]]`, `harness`, `test = false` or `autotests`, `passWithNoTests` |
//! | `profile_edit` | the profile's verification, trust, permissions or gates edited (read by `orcho_profile::proof_edits`) |
//! | `unread` | files of the change past the most a host reads: what they do is unknown |
//! | `fewer_tests` | a command's latest receipt passed fewer tests, or left more unrun, than its last passing receipt ([`fewer_tests`], from the receipts rather than the change) |
//!
//! The reading is textual and per language, tuned for recall on the markers
//! above; `tests/weakening/` carries a corpus of weakening and honest
//! changes in Rust, Python, JavaScript/TypeScript and Go, and checks the
//! recall of each detector and how often an honest change is flagged
//! (`docs/receipts.md` has the figures). A finding is for a person to see,
//! never a verdict on its own.

use std::fmt;

use camino::{Utf8Path, Utf8PathBuf};
use serde::{Deserialize, Serialize};

/// One file of a change: its path, and its contents before and after
/// (`None`: it did not exist).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChangedFile {
    /// Its path after the change (for a deletion, before), relative to the
    /// checkout.
    pub path: Utf8PathBuf,
    /// Where it was before, when the change renamed it.
    pub renamed_from: Option<Utf8PathBuf>,
    /// Its contents before the change.
    pub before: Option<Vec<u8>>,
    /// Its contents after the change.
    pub after: Option<Vec<u8>>,
}

impl ChangedFile {
    /// `path`, from `before` to `after`.
    pub fn new(
        path: impl Into<Utf8PathBuf>,
        before: Option<Vec<u8>>,
        after: Option<Vec<u8>>,
    ) -> Self {
        Self {
            path: path.into(),
            renamed_from: None,
            before,
            after,
        }
    }

    /// The same file, renamed from `from`.
    #[must_use]
    pub fn renamed_from(mut self, from: impl Into<Utf8PathBuf>) -> Self {
        self.renamed_from = Some(from.into());
        self
    }
}

/// What a weakening detector looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Detector {
    /// A test file deleted, or renamed out of its runner's reach.
    TestDeleted,
    /// A skip added.
    SkipMarker,
    /// A focus added (`.only`), which skips every other test.
    OnlyMarker,
    /// A test turned into a to-do.
    TodoMarker,
    /// An expected failure added.
    XfailMarker,
    /// A test file that asserts less.
    FewerAssertions,
    /// A runner's configuration changed.
    RunnerConfig,
    /// How the tests are started changed.
    TestScript,
    /// A command's latest receipt passed fewer tests, or left more unrun,
    /// than its last passing receipt (see [`fewer_tests`]).
    FewerTests,
    /// The profile's verification, trust, permissions or gates edited (the
    /// profile crate reads these; see `orcho_profile::proof_edits`).
    ProfileEdit,
    /// Files of the change past the most read: what they do is unknown.
    Unread,
}

impl Detector {
    /// Every detector.
    pub const ALL: [Self; 11] = [
        Self::TestDeleted,
        Self::SkipMarker,
        Self::OnlyMarker,
        Self::TodoMarker,
        Self::XfailMarker,
        Self::FewerAssertions,
        Self::RunnerConfig,
        Self::TestScript,
        Self::FewerTests,
        Self::ProfileEdit,
        Self::Unread,
    ];

    /// The detector as findings name it (`skip_marker`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TestDeleted => "test_deleted",
            Self::SkipMarker => "skip_marker",
            Self::OnlyMarker => "only_marker",
            Self::TodoMarker => "todo_marker",
            Self::XfailMarker => "xfail_marker",
            Self::FewerAssertions => "fewer_assertions",
            Self::RunnerConfig => "runner_config",
            Self::TestScript => "test_script",
            Self::FewerTests => "fewer_tests",
            Self::ProfileEdit => "profile_edit",
            Self::Unread => "unread",
        }
    }
}

impl fmt::Display for Detector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One way a change weakens its own proof.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Weakening {
    /// The detector that found it.
    pub detector: Detector,
    /// The file.
    pub path: Utf8PathBuf,
    /// The line (of the file after the change; before, for a deletion),
    /// when there is one to name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// What it is, in words.
    pub what: String,
}

impl Weakening {
    /// A weakening `detector` found at `path` (and `line`).
    pub fn new(
        detector: Detector,
        path: impl Into<Utf8PathBuf>,
        line: Option<u32>,
        what: impl Into<String>,
    ) -> Self {
        Self {
            detector,
            path: path.into(),
            line,
            what: what.into(),
        }
    }
}

impl fmt::Display for Weakening {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {} ({})", self.path, self.what, self.detector),
            None => write!(f, "{}: {} ({})", self.path, self.what, self.detector),
        }
    }
}

/// The weakenings of a change, file by file, in the order of `files`.
///
/// ```
/// use orcho_receipts::weakening::{ChangedFile, Detector, weakenings};
///
/// let before = b"def test_empty():\n    assert parse('') == []\n".to_vec();
/// let after = b"import pytest\n\n@pytest.mark.skip\ndef test_empty():\n    assert parse('') == []\n".to_vec();
/// let found = weakenings(&[ChangedFile::new("tests/test_parse.py", Some(before), Some(after))]);
/// assert_eq!(found[0].detector, Detector::SkipMarker);
/// assert_eq!(found[0].line, Some(3));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn weakenings(files: &[ChangedFile]) -> Vec<Weakening> {
    let mut out = Vec::new();
    let mut asserted: Vec<Asserted> = Vec::new();
    for file in files {
        file_weakenings(file, &mut out, &mut asserted);
    }
    // Assertions counted over the whole change, per language: a test moved
    // from one file to another asserts as much as before.
    for lang in [Lang::Rust, Lang::Python, Lang::Js, Lang::Go] {
        let of_lang: Vec<&Asserted> = asserted.iter().filter(|a| a.lang == lang).collect();
        let was: usize = of_lang.iter().map(|a| a.before).sum();
        let now: usize = of_lang.iter().map(|a| a.after).sum();
        if now >= was {
            continue;
        }
        for a in of_lang
            .iter()
            .filter(|a| a.after < a.before && a.deleted.is_none())
        {
            out.push(Weakening {
                detector: Detector::FewerAssertions,
                path: a.path.clone(),
                line: None,
                what: format!(
                    "it asserts less: {} assertions before, {} now ({} fewer in the whole change)",
                    a.before,
                    a.after,
                    was - now
                ),
            });
        }
    }
    out
}

/// Whether a weakening can be found in a file at `path` at all: a source
/// file of a language read, a runner's configuration or a test script. A
/// host reads only these of a change.
pub fn may_weaken(path: &Utf8Path) -> bool {
    language(path).is_some() || config_kind(path).is_some()
}

/// Whether a changed file at `path` is likely to weaken a proof by its name
/// alone (a runner's configuration, a test script, a file named like a
/// test): a host that reads only so many files of a change reads these
/// first.
pub fn likely_to_weaken(path: &Utf8Path) -> bool {
    let lower = path.as_str().to_ascii_lowercase();
    config_kind(path).is_some() || lower.contains("test") || lower.contains("spec")
}

/// How many of its last receipts [`fewer_tests`] reads, newest first.
pub const MAX_HISTORY_READ: usize = 256;

/// Whether the latest receipt of `command` passed fewer tests, or left more
/// unrun (skipped, ignored, deselected, xfailed, filtered out), than a
/// passing receipt of the same declaration before it: a weakening the
/// change's files may not show (a test deselected by a variable, a runner
/// plugin, a file outside the checkout). The baseline is the most any
/// earlier passing receipt passed (and the fewest it left unrun), among
/// those started after `since` (when a person last acknowledged this
/// command's count: the count they accepted is the new floor), so that
/// running the weakened command again does not make it the baseline. The
/// finding is located at `declared_in` and `line`, where the command is
/// declared.
///
/// Only a latest receipt that passed, and whose runner counted its tests,
/// is compared; a receipt that cannot be read or verified is skipped; the
/// newest [`MAX_HISTORY_READ`] history files are read.
pub fn fewer_tests(
    store: &crate::ReceiptStore,
    command: &crate::CommandName,
    since: Option<orcho_core::Timestamp>,
    declared_in: &Utf8Path,
    line: Option<u32>,
) -> Option<Weakening> {
    let crate::LoadedReceipt::Valid(latest) = store.load_command_receipt(command) else {
        return None;
    };
    let now = latest.tests.as_ref().filter(|_| latest.passed())?;
    let not_run = |t: &crate::TestCount| t.not_run.values().sum::<u64>();
    let history = store.history(command).ok()?;
    // (most passed, when), (fewest unrun, when)
    let mut most: Option<(u64, orcho_core::Timestamp)> = None;
    let mut fewest: Option<(u64, orcho_core::Timestamp)> = None;
    for path in history.iter().rev().take(MAX_HISTORY_READ) {
        let crate::LoadedReceipt::Valid(r) = store.load_command_receipt_file(path, command) else {
            continue;
        };
        if r.started_at >= latest.started_at
            || since.is_some_and(|since| r.started_at <= since)
            || r.spec_digest != latest.spec_digest
            || !r.passed()
        {
            continue;
        }
        let Some(tests) = &r.tests else { continue };
        if most.is_none_or(|(n, _)| tests.passed > n) {
            most = Some((tests.passed, r.started_at));
        }
        if fewest.is_none_or(|(n, _)| not_run(tests) < n) {
            fewest = Some((not_run(tests), r.started_at));
        }
    }
    let mut said = Vec::new();
    if let Some((was, at)) = most.filter(|(was, _)| now.passed < *was) {
        said.push(format!("{} passed where {was} did ({at})", now.passed));
    }
    if let Some((was, at)) = fewest.filter(|(was, _)| not_run(now) > *was) {
        said.push(format!(
            "{} not run where {} ({at})",
            not_run(now),
            match was {
                0 => "every test ran".to_owned(),
                n => format!("{n} did not"),
            }
        ));
    }
    if said.is_empty() {
        return None;
    }
    Some(Weakening {
        detector: Detector::FewerTests,
        path: declared_in.to_owned(),
        line,
        what: format!(
            "`{command}` ran fewer tests than an earlier passing receipt: {} (now: {now})",
            said.join("; ")
        ),
    })
}

/// The assertions of one test file of a change, before and after.
struct Asserted {
    lang: Lang,
    path: Utf8PathBuf,
    before: usize,
    after: usize,
    /// Whether the file is gone (reported as deleted instead).
    deleted: Option<()>,
}

/// The most bytes of one file read; a bigger file is compared as far as
/// that.
const MAX_FILE_BYTES: usize = 4 << 20;

fn text(bytes: Option<&Vec<u8>>) -> Option<String> {
    let bytes = bytes?;
    let bytes = &bytes[..bytes.len().min(MAX_FILE_BYTES)];
    Some(String::from_utf8_lossy(bytes).into_owned())
}

fn file_weakenings(file: &ChangedFile, out: &mut Vec<Weakening>, asserted: &mut Vec<Asserted>) {
    let before_path = file.renamed_from.as_deref().unwrap_or(&file.path);
    let before = text(file.before.as_ref());
    let after = text(file.after.as_ref());
    let push = |out: &mut Vec<Weakening>, detector, path: &Utf8Path, line, what: String| {
        out.push(Weakening {
            detector,
            path: path.to_owned(),
            line,
            what,
        });
    };
    // What each test file asserts, before and after, for the whole
    // change's count.
    let test_before = before
        .as_deref()
        .filter(|b| is_test_file(before_path, b))
        .and_then(|b| Some((language(before_path)?, b)));
    let test_after = after
        .as_deref()
        .filter(|a| is_test_file(&file.path, a))
        .and_then(|a| Some((language(&file.path)?, a)));
    if let Some(lang) = test_before.map(|t| t.0).or(test_after.map(|t| t.0)) {
        asserted.push(Asserted {
            lang,
            path: file.path.clone(),
            before: test_before.map_or(0, |(l, b)| assertions(l, b)),
            after: test_after.map_or(0, |(l, a)| assertions(l, a)),
            // Gone, or renamed out of its runner's reach: named as deleted,
            // not as asserting less.
            deleted: (after.is_none() || (file.renamed_from.is_some() && test_after.is_none()))
                .then_some(()),
        });
    }
    // A test file that is gone, or no longer collected.
    if let Some(before_text) = &before
        && is_test_file(before_path, before_text)
    {
        let collected_after = after
            .as_deref()
            .is_some_and(|a| is_test_file(&file.path, a) && language(&file.path).is_some());
        if after.is_none() {
            push(
                out,
                Detector::TestDeleted,
                before_path,
                None,
                "test file deleted".to_owned(),
            );
            return;
        }
        if file.renamed_from.is_some() && !collected_after {
            push(
                out,
                Detector::TestDeleted,
                &file.path,
                None,
                format!("test file `{before_path}` renamed to a name its runner does not collect"),
            );
        }
    }
    if let Some(what) = config_kind(&file.path) {
        let changed = match what {
            Config::Runner => before != after,
            Config::Script(script) => script_changed(script, before.as_deref(), after.as_deref()),
        };
        if changed {
            let (detector, said) = match what {
                Config::Runner => (Detector::RunnerConfig, "runner configuration changed"),
                Config::Script(_) => (Detector::TestScript, "how the tests are started changed"),
            };
            push(
                out,
                detector,
                &file.path,
                first_changed_line(before.as_deref(), after.as_deref()),
                said.to_owned(),
            );
        }
    }
    let Some(after_text) = &after else {
        return;
    };
    // `passWithNoTests` anywhere a runner reads it.
    if added_count(before.as_deref(), after_text, |l| {
        l.contains("passWithNoTests")
    }) > 0
    {
        let line = first_line_with(after_text, |l| l.contains("passWithNoTests"));
        push(
            out,
            Detector::TestScript,
            &file.path,
            line,
            "`passWithNoTests` added".to_owned(),
        );
    }
    let Some(lang) = language(&file.path) else {
        return;
    };
    if !(is_test_file(&file.path, after_text)
        || before
            .as_deref()
            .is_some_and(|b| is_test_file(before_path, b)))
    {
        return;
    }
    for (detector, markers, said) in markers(lang) {
        // Only the markers the file holds at all are looked for line by
        // line (one search of the text each, instead of one per line).
        let markers: Vec<&str> = markers
            .iter()
            .copied()
            .filter(|m| after_text.contains(m))
            .collect();
        if markers.is_empty() {
            continue;
        }
        // Each marker added, at its own line: one more is a new finding,
        // wherever it is.
        let added = new_lines(before.as_deref(), after_text, |l| {
            markers.iter().any(|m| has_marker(l, m))
        });
        for line in added.iter().take(MAX_PER_FILE) {
            push(out, *detector, &file.path, Some(*line), (*said).to_owned());
        }
        if added.len() > MAX_PER_FILE {
            push(
                out,
                *detector,
                &file.path,
                None,
                format!("{said}: {} more in this file", added.len() - MAX_PER_FILE),
            );
        }
    }
}

/// The most findings of one detector named line by line in one file; past
/// it, the rest are counted in one.
const MAX_PER_FILE: usize = 20;

/// The languages whose test files are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Rust,
    Python,
    Js,
    Go,
}

fn language(path: &Utf8Path) -> Option<Lang> {
    Some(match path.extension()? {
        "rs" => Lang::Rust,
        "py" => Lang::Python,
        "js" | "jsx" | "ts" | "tsx" | "mjs" | "cjs" | "mts" | "cts" => Lang::Js,
        "go" => Lang::Go,
        _ => return None,
    })
}

/// Whether `path` (with `text`) is a test file its runner collects.
fn is_test_file(path: &Utf8Path, text: &str) -> bool {
    let name = path.file_name().unwrap_or("");
    let in_tests = path.components().any(|c| {
        matches!(
            c.as_str(),
            "tests" | "test" | "__tests__" | "spec" | "specs"
        )
    });
    match language(path) {
        Some(Lang::Rust) => {
            in_tests
                || text.contains("#[test]")
                || text.contains("#[cfg(test)]")
                || text.contains("#[tokio::test")
        }
        Some(Lang::Python) => {
            let stem = name.trim_end_matches(".py");
            stem.starts_with("test_") || stem.ends_with("_test") || name == "conftest.py"
        }
        Some(Lang::Js) => {
            let stem = name.split('.').collect::<Vec<_>>();
            stem.iter().any(|s| *s == "test" || *s == "spec")
                || path.components().any(|c| c.as_str() == "__tests__")
        }
        Some(Lang::Go) => name.ends_with("_test.go"),
        None => false,
    }
}

type Markers = &'static [(Detector, &'static [&'static str], &'static str)];

fn markers(lang: Lang) -> Markers {
    match lang {
        Lang::Rust => &[
            (
                Detector::SkipMarker,
                &["#[ignore]", "#[ignore ", "#[ignore="],
                "`#[ignore]` added",
            ),
            (
                Detector::TodoMarker,
                &[
                    "#[ignore = \"todo",
                    "#[ignore = \"TODO",
                    "#[ignore = \"not yet",
                    "#[ignore=\"todo",
                    "#[ignore=\"TODO",
                ],
                "a test turned into a to-do (`#[ignore = \"todo…\"]`)",
            ),
            (
                Detector::XfailMarker,
                &["#[should_panic"],
                "`#[should_panic]` added",
            ),
        ],
        Lang::Python => &[
            (
                Detector::SkipMarker,
                &[
                    "@pytest.mark.skip",
                    "@unittest.skip",
                    "pytest.skip(",
                    ".skipTest(",
                    "@skip(",
                    "@skipIf(",
                    "@skipUnless(",
                ],
                "a skip added",
            ),
            (
                Detector::XfailMarker,
                &[
                    "@pytest.mark.xfail",
                    "@unittest.expectedFailure",
                    "pytest.xfail(",
                ],
                "an expected failure added",
            ),
        ],
        Lang::Js => &[
            (
                Detector::SkipMarker,
                &[
                    "it.skip(",
                    "test.skip(",
                    "describe.skip(",
                    "xit(",
                    "xtest(",
                    "xdescribe(",
                    "it.skipIf(",
                    "test.skipIf(",
                    "describe.skipIf(",
                    "suite.skip(",
                ],
                "a skip added",
            ),
            (
                Detector::OnlyMarker,
                &[
                    "it.only(",
                    "test.only(",
                    "describe.only(",
                    "fit(",
                    "fdescribe(",
                    "suite.only(",
                ],
                "a focus added: `.only` runs this and skips every other test",
            ),
            (
                Detector::TodoMarker,
                &["it.todo(", "test.todo(", "describe.todo("],
                "a test turned into a to-do",
            ),
            (
                Detector::XfailMarker,
                &["it.fails(", "test.fails("],
                "an expected failure added",
            ),
        ],
        Lang::Go => &[(
            Detector::SkipMarker,
            &["t.Skip(", "t.Skipf(", "t.SkipNow(", "b.Skip("],
            "`t.Skip` added",
        )],
    }
}

/// Whether `line` holds `marker` in code (not after a line comment).
fn has_marker(line: &str, marker: &str) -> bool {
    let code = strip_comment(line);
    let Some(at) = code.find(marker) else {
        return false;
    };
    // `fit(` and `xit(` only as words of their own (`benefit(`, `exit(`).
    let first = marker.as_bytes()[0];
    if first.is_ascii_alphabetic() {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.') {
            return false;
        }
    }
    true
}

/// The line without a trailing `//` or `#` comment (naively: not inside
/// quotes).
fn strip_comment(line: &str) -> &str {
    let trimmed = line.trim_start();
    if trimmed.starts_with("//") || (trimmed.starts_with('#') && !trimmed.starts_with("#[")) {
        return "";
    }
    match line.find(" //") {
        Some(at) if !line[..at].contains('"') => &line[..at],
        _ => line,
    }
}

fn count_lines(text: &str, matches: impl Fn(&str) -> bool) -> usize {
    text.lines().filter(|l| matches(l)).count()
}

fn added_count(before: Option<&str>, after: &str, matches: impl Fn(&str) -> bool) -> usize {
    let was = before.map_or(0, |b| count_lines(b, &matches));
    count_lines(after, &matches).saturating_sub(was)
}

fn first_line_with(text: &str, matches: impl Fn(&str) -> bool) -> Option<u32> {
    text.lines()
        .position(matches)
        .and_then(|i| u32::try_from(i + 1).ok())
}

/// The lines of `after` that match and are not one of `before`'s
/// matching lines (as many as `before` has of each are taken as old), in
/// order.
fn new_lines(before: Option<&str>, after: &str, matches: impl Fn(&str) -> bool) -> Vec<u32> {
    let mut old: Vec<&str> = before
        .map(|b| b.lines().filter(|l| matches(l)).map(str::trim).collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    for (i, line) in after.lines().enumerate() {
        if !matches(line) {
            continue;
        }
        if let Some(at) = old.iter().position(|o| *o == line.trim()) {
            old.swap_remove(at);
            continue;
        }
        if let Ok(n) = u32::try_from(i + 1) {
            out.push(n);
        }
    }
    out
}

fn first_changed_line(before: Option<&str>, after: Option<&str>) -> Option<u32> {
    let (Some(before), Some(after)) = (before, after) else {
        return None;
    };
    let mut a = after.lines();
    for (i, old) in before.lines().enumerate() {
        match a.next() {
            Some(new) if new == old => {}
            _ => return u32::try_from(i + 1).ok(),
        }
    }
    a.next()
        .map(|_| u32::try_from(before.lines().count() + 1).unwrap_or(u32::MAX))
}

/// How many assertions a test file makes, by its language's usual forms.
fn assertions(lang: Lang, text: &str) -> usize {
    let forms: &[&str] = match lang {
        Lang::Rust => &[
            "assert!(",
            "assert_eq!(",
            "assert_ne!(",
            "assert_matches!(",
            "debug_assert",
            "prop_assert",
            "assert_snapshot!(",
        ],
        Lang::Python => &[
            "assert ",
            "assert(",
            ".assert",
            "pytest.raises(",
            "self.fail(",
        ],
        Lang::Js => &[
            "expect(",
            "assert.",
            "assert(",
            ".toBe(",
            "t.is(",
            "t.deepEqual(",
        ],
        Lang::Go => &["t.Error", "t.Fatal", "assert.", "require.", "t.Fail("],
    };
    // Only the forms the text holds at all are looked for line by line.
    let forms: Vec<&str> = forms.iter().copied().filter(|f| text.contains(f)).collect();
    if forms.is_empty() {
        return 0;
    }
    text.lines()
        .map(strip_comment)
        .map(|line| {
            forms
                .iter()
                .filter(|form| {
                    let Some(at) = line.find(**form) else {
                        return false;
                    };
                    // `assert ` and `assert(` as words, not `self.assertEqual`
                    // counted twice or `do_assert(`.
                    let before = line[..at].chars().next_back();
                    !(form.starts_with(char::is_alphabetic)
                        && before.is_some_and(|c| c.is_alphanumeric() || c == '_'))
                })
                .count()
                .min(1)
        })
        .sum()
}

/// A configuration file a runner reads, and what part of it counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Config {
    /// Any change counts.
    Runner,
    /// Only the part that starts the tests.
    Script(Script),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Script {
    PackageJson,
    Makefile,
    CargoToml,
    Pyproject,
}

fn config_kind(path: &Utf8Path) -> Option<Config> {
    let name = path.file_name()?;
    if matches!(
        name,
        "conftest.py" | "pytest.ini" | "tox.ini" | ".noserc" | "nose.cfg"
    ) {
        return Some(Config::Runner);
    }
    if name.starts_with("jest.config.")
        || name.starts_with("vitest.config.")
        || name.starts_with("vitest.workspace.")
        || name.starts_with("karma.conf")
        || name == ".mocharc.json"
        || name == ".mocharc.yml"
        || name == ".mocharc.js"
    {
        return Some(Config::Runner);
    }
    if path.as_str().ends_with(".cargo/config.toml") || path.as_str().ends_with(".cargo/config") {
        return Some(Config::Runner);
    }
    Some(Config::Script(match name {
        "package.json" => Script::PackageJson,
        "Makefile" | "makefile" | "GNUmakefile" => Script::Makefile,
        "Cargo.toml" => Script::CargoToml,
        "pyproject.toml" | "setup.cfg" => Script::Pyproject,
        _ => return None,
    }))
}

/// Whether the part of a file that starts the tests changed.
fn script_changed(script: Script, before: Option<&str>, after: Option<&str>) -> bool {
    let part = |text: Option<&str>| -> Option<String> {
        let text = text?;
        Some(match script {
            Script::PackageJson => {
                let json: serde_json::Value = serde_json::from_str(text).ok()?;
                let scripts = &json["scripts"];
                let keys = ["test", "pretest", "posttest"];
                let mut out = String::new();
                for key in keys {
                    out.push_str(&scripts[key].to_string());
                }
                for key in ["jest", "vitest", "mocha", "ava"] {
                    out.push_str(&json[key].to_string());
                }
                out
            }
            Script::Makefile => make_target(text, &["test", "check", "tests"]),
            Script::CargoToml => text
                .lines()
                .filter(|l| {
                    let l = l.trim();
                    l.starts_with("[[test]]")
                        || l.starts_with("harness")
                        || l.starts_with("test =")
                        || l.starts_with("test=")
                        || l.starts_with("autotests")
                })
                .collect::<Vec<_>>()
                .join("\n"),
            Script::Pyproject => ini_section(
                text,
                &[
                    "[tool.pytest",
                    "[tool:pytest]",
                    "[pytest]",
                    "[tool.coverage",
                ],
            ),
        })
    };
    part(before) != part(after)
}

/// The recipes of a Makefile's `targets`.
fn make_target(text: &str, targets: &[&str]) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.lines() {
        if !line.starts_with('\t') && !line.starts_with(' ') && !line.trim().is_empty() {
            inside = line
                .split(':')
                .next()
                .is_some_and(|head| head.split_whitespace().any(|t| targets.contains(&t)))
                && line.contains(':');
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The text of the sections of an INI or TOML file that start with one of
/// `heads`.
fn ini_section(text: &str, heads: &[&str]) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            inside = heads.iter().any(|h| trimmed.starts_with(h));
        }
        if inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}
