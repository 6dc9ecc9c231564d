//! Helpers shared by Orcho's criterion benchmarks.
//!
//! Every benchmark measures Orcho beside a baseline in the same run (a plain
//! `write` + `fsync` + `rename`, `git status` on the same tree, …), and
//! reports the *ratio*, which is stable across machines where absolute times
//! are not. [`report_ratios`] reads criterion's estimates after the run and
//! prints each ratio against its target.
#![expect(clippy::print_stdout, reason = "benchmarks report to the terminal")]

use std::path::PathBuf;

pub mod tree;

/// One ratio to report: `subject / baseline`, within one criterion group.
#[derive(Debug, Clone, Copy)]
pub struct Ratio {
    /// The criterion group.
    pub group: &'static str,
    /// The benchmark of Orcho's code.
    pub subject: &'static str,
    /// The baseline measured in the same run.
    pub baseline: &'static str,
    /// The ratio we hold ourselves to (`subject / baseline` at most this).
    pub target: f64,
}

/// Where criterion writes its estimates.
fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target")),
        PathBuf::from,
    );
    target.join("criterion")
}

/// The median time in nanoseconds of one benchmark of the latest run.
pub fn median_ns(group: &str, bench: &str) -> Option<f64> {
    let path = criterion_dir()
        .join(group)
        .join(bench.replace(['/', '\\', ':', '*', '?', '"', '<', '>', '|'], "_"))
        .join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json.get("median")?.get("point_estimate")?.as_f64()
}

/// Prints every ratio of the latest run, marking those over their target.
/// Benchmarks run in `--test` mode have no estimates and print nothing.
pub fn report_ratios(ratios: &[Ratio]) {
    let mut lines = Vec::new();
    for r in ratios {
        let (Some(subject), Some(baseline)) = (
            median_ns(r.group, r.subject),
            median_ns(r.group, r.baseline),
        ) else {
            continue;
        };
        let ratio = subject / baseline;
        let verdict = if ratio <= r.target {
            "ok"
        } else {
            "OVER TARGET"
        };
        lines.push(format!(
            "{:<28} {:>10.1} µs vs {:<34} {:>10.1} µs  ratio {:>5.2}x (target ≤ {:.2}x) {verdict}",
            format!("{}/{}", r.group, r.subject),
            subject / 1e3,
            r.baseline,
            baseline / 1e3,
            ratio,
            r.target,
        ));
    }
    if !lines.is_empty() {
        println!("\nRatios against baselines measured in the same run:");
        for line in lines {
            println!("  {line}");
        }
    }
}

/// Times `subject` and `baseline` alternately, one call of each per round,
/// so that both see the same machine and file-system state (a benchmark
/// measured first on a busy file system otherwise comes out slower), and
/// returns their p50 and p99 in nanoseconds: `((subject_p50, subject_p99),
/// (baseline_p50, baseline_p99))`.
pub fn alternate(
    rounds: usize,
    mut subject: impl FnMut(),
    mut baseline: impl FnMut(),
) -> ((f64, f64), (f64, f64)) {
    let mut a = Vec::with_capacity(rounds);
    let mut b = Vec::with_capacity(rounds);
    for round in 0..rounds {
        // Alternate which goes first, too.
        let (first, second): (&mut dyn FnMut(), &mut dyn FnMut()) = if round % 2 == 0 {
            (&mut subject, &mut baseline)
        } else {
            (&mut baseline, &mut subject)
        };
        let start = std::time::Instant::now();
        first();
        let t1 = start.elapsed();
        let start = std::time::Instant::now();
        second();
        let t2 = start.elapsed();
        if round % 2 == 0 {
            a.push(t1);
            b.push(t2);
        } else {
            a.push(t2);
            b.push(t1);
        }
    }
    let pct = |v: &mut Vec<std::time::Duration>, p: f64| {
        v.sort_unstable();
        let i = ((v.len().saturating_sub(1)) as f64 * p).round() as usize;
        v.get(i).map_or(f64::NAN, |d| d.as_nanos() as f64)
    };
    (
        (pct(&mut a, 0.5), pct(&mut a, 0.99)),
        (pct(&mut b, 0.5), pct(&mut b, 0.99)),
    )
}

/// Prints the p50 and p99 ratios of an [`alternate`] measurement against a
/// target for the p50.
pub fn report_alternating(
    name: &str,
    baseline: &str,
    measured: ((f64, f64), (f64, f64)),
    target: f64,
) {
    let ((s50, s99), (b50, b99)) = measured;
    let ratio = s50 / b50;
    let verdict = if ratio <= target { "ok" } else { "OVER TARGET" };
    println!(
        "  {name:<28} p50 {:>8.1} µs vs {baseline} {:>8.1} µs  ratio {ratio:>5.2}x (target ≤ {target:.2}x) {verdict}; p99 {:.2}x",
        s50 / 1e3,
        b50 / 1e3,
        s99 / b99
    );
}
