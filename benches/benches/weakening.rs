//! Reading a change for what weakens its own proof, as `orcho status` and
//! the Stop hook do: [`orcho::proof::review`] of a work tree with 1,000
//! changed test files (250 each of Rust, Python, JavaScript and Go, every
//! tenth with a skip added, the others with an assertion changed) against
//! `HEAD`, beside `git diff --name-status HEAD` on the same tree (which only
//! lists the change; reading it takes at least that), in the same run.
//!
//! Target: under 100 ms for the 1,000 files; the ratio to `git diff` is
//! reported.
#![expect(clippy::print_stdout, reason = "benchmarks report to the terminal")]

use std::{hint::black_box, path::Path, process::Stdio};

use camino::Utf8PathBuf;
use criterion::Criterion;
use orcho_benches::{
    Ratio, median_ns, report_ratios,
    tree::{git, run, write_file},
};

/// Changed files of the benchmark.
const FILES: usize = 1000;

/// One test of a file: its file's number, its own, and whether its second
/// assertion is changed.
type OneTest = fn(usize, usize, bool) -> String;

/// A test file of `lang` with `tests` tests, each asserting twice; `weak`
/// skips the first and changes the others' second assertion.
fn test_file(lang: &str, i: usize, weak: Option<bool>) -> (String, String) {
    let tests = 8;
    let mut text = String::new();
    // (path, the marker put before a test, one test)
    let (path, skip, body): (String, &str, OneTest) = match lang {
        "rs" => (format!("tests/t{i}.rs"), "#[ignore]\n", |i, t, changed| {
            format!(
                "#[test]\nfn case_{i}_{t}() {{\n    assert_eq!(f({t}), {t});\n    assert!(g({}));\n}}\n\n",
                if changed { t + 1 } else { t }
            )
        }),
        "py" => (
            format!("tests/test_{i}.py"),
            "@pytest.mark.skip\n",
            |i, t, changed| {
                format!(
                    "def test_case_{i}_{t}():\n    assert f({t}) == {t}\n    assert g({})\n\n\n",
                    if changed { t + 1 } else { t }
                )
            },
        ),
        "js" => (format!("src/m{i}.test.js"), "", |i, t, changed| {
            format!(
                "test('case {i} {t}', () => {{\n  expect(f({t})).toBe({t});\n  expect(g({})).toBeTruthy();\n}});\n\n",
                if changed { t + 1 } else { t }
            )
        }),
        _ => (format!("pkg/m{i}_test.go"), "", |i, t, changed| {
            format!(
                "func TestCase{i}_{t}(t *testing.T) {{\n\tif f({t}) != {t} {{\n\t\tt.Fatal(\"f\")\n\t}}\n\tif !g({}) {{\n\t\tt.Error(\"g\")\n\t}}\n}}\n\n",
                if changed { t + 1 } else { t }
            )
        }),
    };
    match lang {
        "py" => text.push_str("import pytest\n\n\n"),
        "go" => text.push_str("package pkg\n\nimport \"testing\"\n\n"),
        _ => {}
    }
    for t in 0..tests {
        let mut one = body(i, t, weak == Some(false));
        if t == 0 && weak == Some(true) {
            one = match lang {
                "js" => one.replacen("test(", "test.skip(", 1),
                "go" => one.replacen("{\n", "{\n\tt.Skip(\"later\")\n", 1),
                _ => format!("{skip}{one}"),
            };
        }
        text.push_str(&one);
    }
    (path, text)
}

fn main() {
    let mut criterion = Criterion::default()
        .configure_from_args()
        .sample_size(20)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(4));
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("repo");
    let files: Vec<(String, &str, usize)> = (0..FILES)
        .map(|n| {
            let lang = ["rs", "py", "js", "go"][n % 4];
            (test_file(lang, n, None).0, lang, n)
        })
        .collect();
    for (path, lang, n) in &files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        write_file(&path, test_file(lang, *n, None).1.as_bytes());
    }
    write_file(
        &dir.join("orcho.yaml"),
        b"schema: 1\nname: bench\nextends: builtin:quick\n",
    );
    let mut init = git(&dir);
    init.args(["init", "-q"]);
    run(init);
    let mut add = git(&dir);
    add.args(["add", "-A"]);
    run(add);
    let mut commit = git(&dir);
    commit.args(["commit", "-q", "-m", "tests"]);
    run(commit);
    for (path, lang, n) in &files {
        let weak = n % 10 == 0;
        write_file(
            &dir.join(path),
            test_file(lang, *n, Some(weak)).1.as_bytes(),
        );
    }
    let utf8 = Utf8PathBuf::try_from(dir.clone()).expect("a UTF-8 path");
    // What is found, once: every skip, nothing else.
    let found = orcho::proof::review(&utf8, "HEAD", Some("orcho.yaml")).expect("review");
    assert_eq!(
        found.weakenings.len(),
        FILES / 10,
        "{:#?}",
        &found.weakenings[..found.weakenings.len().min(5)]
    );
    let mut group = criterion.benchmark_group("weakening");
    group.bench_function("review_1000_files", |b| {
        b.iter(|| black_box(orcho::proof::review(&utf8, "HEAD", Some("orcho.yaml"))));
    });
    group.bench_function("git_diff_name_status", |b| {
        b.iter(|| diff(&dir));
    });
    group.finish();
    criterion.final_summary();
    report_ratios(&[Ratio {
        group: "weakening",
        subject: "review_1000_files",
        baseline: "git_diff_name_status",
        target: f64::INFINITY,
    }]);
    if let Some(ns) = median_ns("weakening", "review_1000_files") {
        let verdict = if ns < 100e6 { "ok" } else { "OVER TARGET" };
        println!(
            "  weakening of a {FILES}-file change: {:.1} ms (target < 100 ms) {verdict}",
            ns / 1e6
        );
    }
}

fn diff(dir: &Path) {
    let mut c = git(dir);
    c.args(["diff", "--name-status", "HEAD"])
        .stdout(Stdio::null());
    run(c);
}
