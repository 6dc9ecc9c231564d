//! How many tests a command ran, read from what its test runner printed.
//!
//! A required command that exits 0 having run no test proves nothing: a
//! filter that matches nothing, a test directory that moved, a runner told
//! to pass with no tests. [`TestCount::read`] recognises the summary lines
//! of the usual runners in a command's output (standard output and
//! standard error together, escape sequences dropped):
//!
//! | runner | line |
//! |---|---|
//! | `cargo test` (libtest), one per test binary | `test result: ok. 3 passed; 0 failed; 1 ignored; …` |
//! | `cargo nextest` | `Summary [ 0.01s] 3 tests run: 3 passed, 1 skipped` |
//! | pytest | `=== 3 passed, 1 skipped in 0.12s ===`, `no tests ran in 0.01s` |
//! | Python's unittest | `Ran 3 tests in 0.001s`, then `FAILED (failures=1, errors=1, skipped=1)` |
//! | `go test` | `--- PASS: TestX` / `--- FAIL: …` with `-v`; without, `ok  pkg 0.1s` counts its package once and `[no test files]` / `[no tests to run]` none |
//! | jest | `Tests:       1 failed, 2 passed, 3 total` |
//! | vitest | `Tests  2 passed (2)`, `No test files found` |
//!
//! A command whose output has none of these has no count (`None`): Orcho
//! does not know, and does not guess. Counts from several lines (a
//! workspace's test binaries, a script running two runners) add up. The
//! names of the tests are kept where the runner prints them one per line,
//! at most [`MAX_TEST_NAMES`] of each kind:
//!
//! | runner | passed | failed |
//! |---|---|---|
//! | `cargo test` | `test a::b ... ok` | `test a::b ... FAILED` |
//! | `go test -v` | `--- PASS: TestX` | `--- FAIL: TestX` |
//! | pytest | | `FAILED tests/test_a.py::test_x - …`, `ERROR tests/…` (its short summary) |
//! | unittest | | `FAIL: test_x (mod.T.test_x)`, `ERROR: …` |
//! | jest | | `● parse › empty` (the header of each failure) |
//! | vitest | | ` FAIL  src/a.test.ts > parse > empty` |
//!
//! The failures of pytest, jest and vitest are named only when that
//! runner's summary is in the output too, so that a line of a program's
//! own that happens to read like one names nothing.

use std::io::{BufRead, BufReader, Read};

/// The most test names of each kind (passed, failed) kept.
pub const MAX_TEST_NAMES: usize = 1000;

/// The longest line read; the rest of a longer line is skipped.
const MAX_LINE: usize = 4096;

/// What a test runner reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TestCount {
    /// The runners recognised, in the order first seen (`cargo test`,
    /// `nextest`, `pytest`, `go test`, `jest`, `vitest`).
    pub runners: Vec<String>,
    /// Tests that passed.
    pub passed: u64,
    /// Tests that failed.
    pub failed: u64,
    /// Tests skipped or ignored: they did not run.
    pub skipped: u64,
    /// What did not run, by the runner's own word (`skipped`, `ignored`,
    /// `deselected`, `xfailed`, `todo`, `filtered out`, `expected
    /// failures`): what a person sees when a change makes fewer tests
    /// run. `filtered out` (a libtest filter) is not in `skipped`.
    pub not_run: std::collections::BTreeMap<String, u64>,
    /// The names of tests that passed, where the runner printed them.
    pub passed_names: Vec<String>,
    /// The names of tests that failed, where the runner printed them.
    pub failed_names: Vec<String>,
}

impl std::fmt::Display for TestCount {
    /// `3 passed, 1 failed; did not run: 2 skipped, 1 deselected` (what did
    /// not run left out when nothing did).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} passed", self.passed)?;
        if self.failed > 0 {
            write!(f, ", {} failed", self.failed)?;
        }
        if !self.not_run.is_empty() {
            let parts: Vec<String> = self
                .not_run
                .iter()
                .map(|(what, n)| format!("{n} {what}"))
                .collect();
            write!(f, "; did not run: {}", parts.join(", "))?;
        } else if self.skipped > 0 {
            write!(f, "; did not run: {} skipped", self.skipped)?;
        }
        Ok(())
    }
}

impl TestCount {
    /// How many tests ran (passed and failed).
    pub fn ran(&self) -> u64 {
        self.passed.saturating_add(self.failed)
    }

    /// Reads the runners' lines in `streams` (a command's standard output,
    /// then its standard error); `None` when no runner is recognised.
    pub fn read<R: Read>(streams: impl IntoIterator<Item = R>) -> Option<Self> {
        let mut reader = Reader::default();
        for stream in streams {
            let mut stream = BufReader::new(stream);
            let mut line = Vec::new();
            loop {
                line.clear();
                match read_line(&mut stream, &mut line) {
                    Ok(true) => reader.line(&clean(&line)),
                    Ok(false) | Err(_) => break,
                }
            }
        }
        reader.finish()
    }

    /// The count of one text (for tests and callers holding the output).
    pub fn read_text(text: &str) -> Option<Self> {
        Self::read([text.as_bytes()])
    }
}

/// Reads one line into `line` (at most [`MAX_LINE`] bytes of it);
/// `false` at the end.
fn read_line(stream: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<bool> {
    let mut any = false;
    loop {
        let buf = stream.fill_buf()?;
        if buf.is_empty() {
            return Ok(any);
        }
        any = true;
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(at) => (&buf[..at], Some(at + 1)),
            None => (buf, None),
        };
        let room = MAX_LINE.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = done.unwrap_or(buf.len());
        stream.consume(used);
        if done.is_some() {
            return Ok(true);
        }
    }
}

/// The line as text, without terminal escape sequences and carriage
/// returns.
fn clean(line: &[u8]) -> String {
    crate::exec::without_escapes(&String::from_utf8_lossy(line)).replace('\r', "")
}

#[derive(Default)]
struct Reader {
    count: TestCount,
    seen: bool,
    /// `go test -v` lines were seen: its package lines count nothing more.
    go_verbose: bool,
    /// Packages `go test` reported as run without `-v`.
    go_packages: u64,
    /// Tests unittest ran, those of them that failed or erred, and those
    /// it skipped or expected to fail (which it counts as ran).
    unittest_ran: u64,
    unittest_failed: u64,
    unittest_not_run: u64,
    /// Test files vitest reported failed.
    vitest_failed_files: u64,
    /// Failures named by a runner that prints its summary after them
    /// (pytest, jest, vitest): kept once that runner is recognised.
    named_failures: Vec<(&'static str, String)>,
}

impl Reader {
    fn runner(&mut self, name: &str) {
        self.seen = true;
        if !self.count.runners.iter().any(|r| r == name) {
            self.count.runners.push(name.to_owned());
        }
    }

    /// Adds `n` tests of the kind `what` names (`passed`, `failed`,
    /// `skipped`, and each runner's words for them); other words (libtest's
    /// `measured`, a total) count nothing.
    fn tally(&mut self, n: u64, what: &str) {
        let count = &mut self.count;
        let bucket = match what {
            "passed" | "xpassed" => &mut count.passed,
            "failed" | "timed" | "error" | "errors" => &mut count.failed,
            "ignored" | "skipped" | "todo" | "xfailed" | "deselected" => {
                self.not_run(n, what);
                &mut self.count.skipped
            }
            "filtered" => return self.not_run(n, "filtered out"),
            _ => return,
        };
        *bucket = bucket.saturating_add(n);
    }

    /// Adds `n` to what did not run under the runner's word `what`.
    fn not_run(&mut self, n: u64, what: &str) {
        if n == 0 {
            return;
        }
        let entry = self.count.not_run.entry(what.to_owned()).or_default();
        *entry = entry.saturating_add(n);
    }

    /// Tallies every `N word` of `parts`; whether any read as one.
    fn tally_parts<'a>(&mut self, parts: impl Iterator<Item = &'a str>) -> bool {
        let mut any = false;
        for part in parts {
            let mut words = part.split_whitespace();
            let (Some(n), Some(what)) = (words.next(), words.next()) else {
                continue;
            };
            let Ok(n) = n.parse::<u64>() else { continue };
            any = true;
            self.tally(n, what);
        }
        any
    }

    fn name(names: &mut Vec<String>, name: &str) {
        if names.len() < MAX_TEST_NAMES {
            names.push(name.to_owned());
        }
    }

    /// A failure `runner` names, kept if its summary is seen.
    fn named_failure(&mut self, runner: &'static str, name: &str) {
        let name = name.trim();
        if !name.is_empty()
            && self.named_failures.len() < MAX_TEST_NAMES
            && !self
                .named_failures
                .iter()
                .any(|(r, n)| *r == runner && n == name)
        {
            self.named_failures.push((runner, name.to_owned()));
        }
    }

    fn line(&mut self, line: &str) {
        let trimmed = line.trim();
        // vitest's header of a failed test (a failed file reads
        // ` FAIL  src/a.test.ts [ src/a.test.ts ]` and names no test).
        if let Some(rest) = trimmed.strip_prefix("FAIL ")
            && rest.contains(" > ")
        {
            return self.named_failure("vitest", rest);
        }
        // jest's header of a failure, two spaces in.
        if let Some(rest) = line.strip_prefix("  \u{25cf} ")
            && !rest.starts_with(' ')
            && rest != "Test suite failed to run"
        {
            return self.named_failure("jest", rest);
        }
        // pytest's short summary: `FAILED tests/test_a.py::test_x - assert …`.
        if let Some(rest) = trimmed
            .strip_prefix("FAILED ")
            .or_else(|| trimmed.strip_prefix("ERROR "))
            && let Some(id) = rest.split(" - ").next()
            && id.contains("::")
            && !id.contains(' ')
        {
            return self.named_failure("pytest", id);
        }
        if let Some(rest) = trimmed.strip_prefix("test result: ") {
            return self.libtest_summary(rest);
        }
        if let Some(rest) = trimmed.strip_prefix("test ") {
            // libtest's per-test line: `test a::b ... ok`.
            if let Some((name, outcome)) = rest.rsplit_once(" ... ") {
                match outcome {
                    "ok" => Self::name(&mut self.count.passed_names, name),
                    "FAILED" => Self::name(&mut self.count.failed_names, name),
                    _ => {}
                }
            }
            return;
        }
        if let Some(rest) = trimmed.strip_prefix("Summary [") {
            return self.nextest(rest);
        }
        if let Some(rest) = trimmed.strip_prefix("--- ") {
            return self.go_verbose_line(line, rest);
        }
        if trimmed.starts_with("ok ") || trimmed.starts_with("ok\t") || trimmed.starts_with("?") {
            return self.go_package(trimmed);
        }
        if let Some(rest) = trimmed.strip_prefix("Tests:") {
            return self.jest(rest);
        }
        if let Some(rest) = trimmed.strip_prefix("Test Files ") {
            return self.vitest_files(rest);
        }
        if let Some(rest) = trimmed.strip_prefix("Tests ") {
            return self.vitest(rest);
        }
        if trimmed.starts_with("No test files found") {
            self.runner("vitest");
            return;
        }
        if let Some(rest) = trimmed.strip_prefix("Ran ") {
            return self.unittest_ran(rest);
        }
        if let Some(rest) = trimmed.strip_prefix("FAILED (") {
            return self.unittest_failed(rest);
        }
        if let Some(rest) = trimmed.strip_prefix("OK (") {
            return self.unittest_failed(rest);
        }
        // unittest's header of a failure: `FAIL: test_empty (mod.T.test_empty)`.
        if let Some(rest) = trimmed
            .strip_prefix("FAIL: ")
            .or_else(|| trimmed.strip_prefix("ERROR: "))
            && let Some((method, path)) = rest.split_once(" (")
            && let Some(path) = path.strip_suffix(')')
            && !method.contains(' ')
        {
            let name = if path.ends_with(method) { path } else { method };
            return Self::name(&mut self.count.failed_names, name);
        }
        if trimmed.starts_with("No tests found") {
            self.runner("jest");
            return;
        }
        self.pytest(trimmed);
    }

    /// `ok. 3 passed; 0 failed; 1 ignored; 0 measured; 2 filtered out; …`
    fn libtest_summary(&mut self, rest: &str) {
        let Some((_, counts)) = rest.split_once(". ") else {
            return;
        };
        if self.tally_parts(counts.split(';')) {
            self.runner("cargo test");
        }
    }

    /// `0.01s] 3 tests run: 2 passed, 1 failed, 1 skipped`
    fn nextest(&mut self, rest: &str) {
        let Some((_, after)) = rest.split_once(']') else {
            return;
        };
        let Some((_, counts)) = after.split_once("run:") else {
            return;
        };
        self.runner("nextest");
        self.tally_parts(counts.split(','));
    }

    /// `--- PASS: TestX (0.00s)`, at the start of the line (a subtest is
    /// indented and counted with its parent).
    fn go_verbose_line(&mut self, line: &str, rest: &str) {
        if line.starts_with(char::is_whitespace) {
            return;
        }
        let (kind, name) = match rest.split_once(": ") {
            Some((kind, name)) => (kind, name.split_whitespace().next().unwrap_or("")),
            None => return,
        };
        match kind {
            "PASS" => {
                self.count.passed = self.count.passed.saturating_add(1);
                Self::name(&mut self.count.passed_names, name);
            }
            "FAIL" => {
                self.count.failed = self.count.failed.saturating_add(1);
                Self::name(&mut self.count.failed_names, name);
            }
            "SKIP" => self.count.skipped = self.count.skipped.saturating_add(1),
            _ => return,
        }
        self.go_verbose = true;
        self.runner("go test");
    }

    /// `ok   example.com/pkg 0.002s`, `?    example.com/cmd [no test files]`,
    /// `ok   pkg 0.01s [no tests to run]`.
    fn go_package(&mut self, line: &str) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(&first) = words.first() else { return };
        if !(first == "ok" || first == "?") || words.len() < 3 {
            return;
        }
        let none = line.contains("[no test files]") || line.contains("[no tests to run]");
        let timed = words
            .get(2)
            .is_some_and(|w| w.ends_with('s') && w[..w.len() - 1].parse::<f64>().is_ok());
        if !(none || (first == "ok" && (timed || line.contains("(cached)")))) {
            return;
        }
        self.runner("go test");
        if !none && first == "ok" {
            self.go_packages = self.go_packages.saturating_add(1);
        }
    }

    /// ` 1 failed, 1 skipped, 2 passed, 4 total`
    fn jest(&mut self, rest: &str) {
        if !rest.contains("total") {
            return;
        }
        self.runner("jest");
        self.tally_parts(rest.split(','));
    }

    /// `Test Files  1 failed | 2 passed (3)`: a file that failed (a suite
    /// with no test, an import that throws) is a failure even where no test
    /// in it ran.
    fn vitest_files(&mut self, rest: &str) {
        let rest = rest.trim();
        let Some((counts, _)) = rest.rsplit_once('(') else {
            return;
        };
        for part in counts.split('|') {
            let mut words = part.split_whitespace();
            if let (Some(n), Some("failed")) = (words.next(), words.next())
                && let Ok(n) = n.parse::<u64>()
            {
                self.runner("vitest");
                self.vitest_failed_files = self.vitest_failed_files.saturating_add(n);
            }
        }
    }

    /// ` 1 failed | 2 passed | 1 skipped (4)`, or ` no tests`.
    fn vitest(&mut self, rest: &str) {
        let rest = rest.trim();
        if rest == "no tests" {
            self.runner("vitest");
            return;
        }
        if !rest.ends_with(')') {
            return;
        }
        let Some((counts, _)) = rest.rsplit_once('(') else {
            return;
        };
        if self.tally_parts(counts.split('|')) {
            self.runner("vitest");
        }
    }

    /// `3 tests in 0.001s`
    fn unittest_ran(&mut self, rest: &str) {
        let words: Vec<&str> = rest.split_whitespace().collect();
        let [n, "test" | "tests", "in", time] = words.as_slice() else {
            return;
        };
        let (Ok(n), true) = (n.parse::<u64>(), time.ends_with('s')) else {
            return;
        };
        self.runner("unittest");
        self.unittest_ran = self.unittest_ran.saturating_add(n);
    }

    /// `failures=1, errors=1, skipped=1)` (after `FAILED (`), or
    /// `skipped=3, expected failures=1)` (after `OK (`).
    fn unittest_failed(&mut self, rest: &str) {
        for part in rest.trim_end_matches(')').split(',') {
            if let Some((what, n)) = part.trim().split_once('=')
                && let Ok(n) = n.parse::<u64>()
            {
                match what {
                    "failures" | "errors" | "unexpected successes" => {
                        self.unittest_failed = self.unittest_failed.saturating_add(n);
                    }
                    "skipped" | "expected failures" => {
                        self.count.skipped = self.count.skipped.saturating_add(n);
                        self.unittest_not_run = self.unittest_not_run.saturating_add(n);
                        self.not_run(n, what);
                    }
                    _ => {}
                }
            }
        }
    }

    /// `==== 3 passed, 1 skipped in 0.12s ====`, `3 passed in 0.01s`
    /// (`-q`), `no tests ran in 0.01s`.
    fn pytest(&mut self, line: &str) {
        let line = line.trim_matches(|c| c == '=' || c == ' ');
        let Some((counts, time)) = line.rsplit_once(" in ") else {
            return;
        };
        let time = time.split_whitespace().next().unwrap_or("");
        if !(time.ends_with('s') && time[..time.len() - 1].parse::<f64>().is_ok()) {
            return;
        }
        if counts == "no tests ran" {
            self.runner("pytest");
            return;
        }
        let mut parsed = Vec::new();
        for part in counts.split(',') {
            let mut words = part.split_whitespace();
            let (Some(n), Some(what), None) = (words.next(), words.next(), words.next()) else {
                return;
            };
            let Ok(n) = n.parse::<u64>() else { return };
            parsed.push((n, what));
        }
        if parsed.is_empty() {
            return;
        }
        self.runner("pytest");
        for (n, what) in parsed {
            self.tally(n, what);
        }
    }

    fn finish(mut self) -> Option<TestCount> {
        // unittest counts what it skipped as ran: none of it passed.
        let failed = self.unittest_failed.min(self.unittest_ran);
        let not_run = self.unittest_not_run.min(self.unittest_ran - failed);
        self.count.failed = self.count.failed.saturating_add(failed);
        self.count.passed = self
            .count
            .passed
            .saturating_add(self.unittest_ran - failed - not_run);
        // A failed test file with no failed test in it is one failure.
        if self.count.failed == 0 {
            self.count.failed = self.vitest_failed_files;
        }
        if !self.go_verbose {
            self.count.passed = self.count.passed.saturating_add(self.go_packages);
        }
        for (runner, name) in std::mem::take(&mut self.named_failures) {
            if self.count.runners.iter().any(|r| r == runner) {
                Self::name(&mut self.count.failed_names, &name);
            }
        }
        self.seen.then_some(self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(text: &str) -> Option<(u64, u64, u64)> {
        TestCount::read_text(text).map(|c| (c.passed, c.failed, c.skipped))
    }

    #[test]
    fn libtest_lines_add_up_across_binaries() {
        let text = "running 2 tests\ntest a::b ... ok\ntest a::c ... FAILED\n\
            test result: FAILED. 1 passed; 1 failed; 3 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\
            running 0 tests\n\
            test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\
            test result: ok. 4 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.10s\n";
        assert_eq!(count(text), Some((5, 1, 3)));
        let c = TestCount::read_text(text).unwrap();
        assert_eq!(c.passed_names, ["a::b"]);
        assert_eq!(c.failed_names, ["a::c"]);
        assert_eq!(c.runners, ["cargo test"]);
    }

    #[test]
    fn a_filter_that_matches_nothing_ran_nothing() {
        let text = "running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 12 filtered out; finished in 0.00s\n";
        assert_eq!(count(text), Some((0, 0, 0)));
        assert_eq!(TestCount::read_text(text).unwrap().ran(), 0);
    }

    #[test]
    fn nextest_summary() {
        assert_eq!(
            count("     Summary [   0.012s] 4 tests run: 3 passed, 1 failed, 2 skipped\n"),
            Some((3, 1, 2))
        );
        assert_eq!(
            count(
                "\u{1b}[32;1m     Summary\u{1b}[0m [   0.000s] 0 tests run: 0 passed, 0 skipped\n"
            ),
            Some((0, 0, 0)),
            "colours are dropped"
        );
        assert_eq!(
            count("     Summary [   0.000s] 0 tests run: 0 passed, 0 skipped\n"),
            Some((0, 0, 0))
        );
    }

    #[test]
    fn pytest_summaries() {
        assert_eq!(
            count("============ 3 passed, 1 skipped in 0.12s ============\n"),
            Some((3, 0, 1))
        );
        assert_eq!(count("1 failed, 2 passed in 0.03s\n"), Some((2, 1, 0)));
        assert_eq!(
            count("====== no tests ran in 0.01s ======\n"),
            Some((0, 0, 0))
        );
        assert_eq!(count("==== 2 deselected in 0.01s ====\n"), Some((0, 0, 2)));
        // Prose that happens to end in a time is not a summary.
        assert_eq!(count("built the docs in 2.5s\n"), None);
    }

    #[test]
    fn go_test_with_and_without_verbose() {
        let quiet = "ok  \texample.com/a\t0.002s\n?   \texample.com/cmd\t[no test files]\n";
        assert_eq!(count(quiet), Some((1, 0, 0)));
        assert_eq!(
            count(
                "?   \texample.com/cmd\t[no test files]\nok  \texample.com/a\t0.01s [no tests to run]\n"
            ),
            Some((0, 0, 0))
        );
        let verbose = "=== RUN   TestA\n--- PASS: TestA (0.00s)\n    --- PASS: TestA/sub (0.00s)\n--- FAIL: TestB (0.00s)\nFAIL\nFAIL\texample.com/a\t0.003s\n";
        let c = TestCount::read_text(verbose).unwrap();
        assert_eq!((c.passed, c.failed), (1, 1));
        assert_eq!(c.passed_names, ["TestA"]);
        assert_eq!(c.failed_names, ["TestB"]);
    }

    #[test]
    fn jest_and_vitest() {
        assert_eq!(
            count("Tests:       1 failed, 1 skipped, 2 passed, 4 total\n"),
            Some((2, 1, 1))
        );
        assert_eq!(count("Tests:       0 total\n"), Some((0, 0, 0)));
        assert_eq!(
            count(
                "\u{1b}[2m      Tests \u{1b}[22m \u{1b}[1m\u{1b}[32m2 passed\u{1b}[39m\u{1b}[22m\u{1b}[90m (2)\u{1b}[39m\n"
            ),
            Some((2, 0, 0))
        );
        assert_eq!(count(" Tests  1 failed | 2 passed (3)\n"), Some((2, 1, 0)));
        // A file whose suites hold no test: no test ran, and the file failed.
        assert_eq!(
            count(" Test Files  1 failed (1)\n      Tests  no tests\n"),
            Some((0, 1, 0))
        );
        assert_eq!(count("      Tests  no tests\n"), Some((0, 0, 0)));
        assert_eq!(
            count("No test files found, exiting with code 0\n"),
            Some((0, 0, 0))
        );
    }

    #[test]
    fn vitest_jest_and_pytest_name_their_failures() {
        // As vitest 3 prints it (colours dropped).
        let vitest = " \u{276f} src/parse.test.js (3 tests | 2 failed) 13ms\n\
            \x20  \u{2713} parse > splits 2ms\n\
            \x20  \u{d7} parse > empty 8ms\n\
            \u{23af}\u{23af} Failed Tests 2 \u{23af}\u{23af}\n\n\
            \x20FAIL  src/parse.test.js > parse > empty\n\
            AssertionError: expected [] to deeply equal [ '' ]\n\n\
            \x20FAIL  src/parse.test.js > parse > one\n\
            AssertionError: expected [ 'a' ] to deeply equal [ 'b' ]\n\n\
            \x20Test Files  1 failed (1)\n\
            \x20     Tests  2 failed | 1 passed (3)\n";
        let c = TestCount::read_text(vitest).unwrap();
        assert_eq!((c.passed, c.failed), (1, 2));
        assert_eq!(
            c.failed_names,
            [
                "src/parse.test.js > parse > empty",
                "src/parse.test.js > parse > one"
            ]
        );
        // As jest 29 prints it.
        let jest = "FAIL ./parse.test.js\n\
            \x20 \u{2715} top level (2 ms)\n\
            \x20 parse\n\
            \x20   \u{2713} splits (2 ms)\n\n\
            \x20 \u{25cf} parse \u{203a} empty\n\n\
            \x20   expect(received).toEqual(expected) // deep equality\n\n\
            \x20 \u{25cf} top level\n\n\
            Test Suites: 1 failed, 1 total\n\
            Tests:       2 failed, 1 passed, 3 total\n";
        let c = TestCount::read_text(jest).unwrap();
        assert_eq!((c.passed, c.failed), (1, 2));
        assert_eq!(c.failed_names, ["parse \u{203a} empty", "top level"]);
        // pytest's short summary.
        let pytest = "=========================== short test summary info ============================\n\
            FAILED tests/test_parse.py::test_empty - assert [] == ['']\n\
            ERROR tests/test_io.py::test_read\n\
            ========================= 1 failed, 2 passed, 1 error in 0.05s =========================\n";
        let c = TestCount::read_text(pytest).unwrap();
        assert_eq!(
            c.failed_names,
            [
                "tests/test_parse.py::test_empty",
                "tests/test_io.py::test_read"
            ]
        );
        // Lines that read like a failure name nothing without the runner's
        // summary.
        let own =
            "FAIL  a > b\n  \u{25cf} not a test\nFAILED x::y - no\ntest result: ok. 1 passed;\n";
        let c = TestCount::read_text(own).unwrap();
        assert!(c.failed_names.is_empty(), "{:?}", c.failed_names);
    }

    #[test]
    fn python_unittest() {
        assert_eq!(
            count(
                "..\n----------------------------------------------------------------------\nRan 2 tests in 0.001s\n\nOK\n"
            ),
            Some((2, 0, 0))
        );
        // unittest counts what it skipped among what ran: none of it passed.
        assert_eq!(
            count("Ran 4 tests in 0.002s\n\nFAILED (failures=1, errors=1, skipped=1)\n"),
            Some((1, 2, 1))
        );
        assert_eq!(
            count("Ran 3 tests in 0.001s\n\nOK (skipped=3)\n"),
            Some((0, 0, 3))
        );
        let c =
            TestCount::read_text("Ran 3 tests in 0.001s\n\nOK (skipped=1, expected failures=1)\n")
                .unwrap();
        assert_eq!((c.passed, c.skipped), (1, 2));
        assert_eq!(
            c.to_string(),
            "1 passed; did not run: 1 expected failures, 1 skipped"
        );
        assert_eq!(count("Ran 0 tests in 0.000s\n\nOK\n"), Some((0, 0, 0)));
        assert_eq!(
            count("Ran 0 tests in 0.000s\n\nNO TESTS RAN\n"),
            Some((0, 0, 0))
        );
        assert_eq!(count("Ran out of time\n"), None);
        // The failures are named by their dotted path.
        let text = "F.E\n\
            ======================================================================\n\
            FAIL: test_empty (test_parse.T.test_empty)\n\
            ----------------------------------------------------------------------\n\
            AssertionError: Lists differ: [''] != []\n\
            ======================================================================\n\
            ERROR: test_io (test_parse.T.test_io)\n\
            ----------------------------------------------------------------------\n\
            Ran 3 tests in 0.001s\n\nFAILED (failures=1, errors=1)\n";
        let c = TestCount::read_text(text).unwrap();
        assert_eq!(
            c.failed_names,
            ["test_parse.T.test_empty", "test_parse.T.test_io"]
        );
        // Words that only look like it are not a test.
        let c =
            TestCount::read_text("ERROR: could not connect (timeout)\nRan 1 test in 0.1s\n\nOK\n")
                .unwrap();
        assert!(c.failed_names.is_empty(), "{:?}", c.failed_names);
    }

    #[test]
    fn unknown_output_has_no_count() {
        assert_eq!(count("hello\nall good\n"), None);
        assert_eq!(count(""), None);
    }

    #[test]
    fn long_lines_and_garbage_are_bounded() {
        let long = format!("test result: ok. 1 passed;{}\n", "x".repeat(100_000));
        assert_eq!(count(&long), Some((1, 0, 0)));
        let names =
            "test t ... ok\n".repeat(MAX_TEST_NAMES + 10) + "test result: ok. 1010 passed;\n";
        assert_eq!(
            TestCount::read_text(&names).unwrap().passed_names.len(),
            MAX_TEST_NAMES
        );
        let huge = "test result: ok. 18446744073709551615 passed; 18446744073709551615 passed;\n";
        assert_eq!(count(huge), Some((u64::MAX, 0, 0)));
    }
}
