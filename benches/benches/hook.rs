//! An agent's hook, answered as a whole process: `orcho hook claude-code`
//! for a `PreToolUse` document (a shell command under the read-only preset
//! and a rule of the profile's own), beside `/bin/true` fed the same
//! document, measured in the same run. An agent waits for this answer
//! before every tool call.
//!
//! Target: at most 8x `/bin/true` (a process that does nothing), and the
//! absolute median is printed too (under 5 ms on a 2-core machine). Beside
//! a 100-byte command: a 200 KiB one (checked in full), a 1 MiB one
//! (refused past the cap) and a 10 MB document, each within a small
//! multiple: the cost grows linearly, never with the square.
#![expect(
    clippy::disallowed_methods,
    reason = "both sides are spawned with std directly, so that the harness never inflates either"
)]

use std::{
    io::Write as _,
    path::Path,
    process::{Command, Stdio},
    time::Duration,
};

use criterion::Criterion;
use orcho_benches::{Ratio, report_ratios};

const PROFILE: &str = "\
schema: 1
name: bench-hook
extends: builtin:quick
verification:
  commands:
    - { name: test, argv: [cargo, test] }
  required: [test]
permissions:
  preset: read_only
  rules:
    - { permission: bash, pattern: 'cargo test *', action: allow }
";

/// Spawns `program args…` in `dir`, writes `input` to it and waits.
fn answer(program: &str, args: &[&str], dir: &Path, input: &[u8]) -> Vec<u8> {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env_remove("CLAUDE_PROJECT_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    // `/bin/true` may exit before reading: a broken pipe is fine.
    let _ = child.stdin.take().expect("stdin").write_all(input);
    child.wait_with_output().expect("wait").stdout
}

fn bench_hook(c: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    std::fs::create_dir(dir.join(".git")).expect("mkdir");
    std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
    std::fs::write(dir.join("orcho.yaml"), PROFILE).expect("profile");
    let document = serde_json::json!({
        "session_id": "bench",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": dir,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git log --oneline -20", "description": "history"},
        "tool_use_id": "toolu_bench"
    })
    .to_string();
    let orcho = env!("CARGO_BIN_EXE_orcho-for-benches");
    let hook = ["hook", "claude-code"];
    // The answer is right before it is timed.
    let out = answer(orcho, &hook, dir, document.as_bytes());
    let out: serde_json::Value = serde_json::from_slice(&out).expect("an answer");
    assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "allow");

    let mut group = c.benchmark_group("hook");
    group.sample_size(40).warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    group.bench_function("orcho hook PreToolUse", |b| {
        b.iter(|| answer(orcho, &hook, dir, document.as_bytes()));
    });
    group.bench_function("/bin/true", |b| {
        b.iter(|| answer("/bin/true", &[], dir, document.as_bytes()));
    });
    group.finish();

    // What an agent might send to stall the hook: a long command under the
    // size cap (checked in full), one past it (refused), and a document of
    // ten megabytes, beside a command of a hundred bytes.
    let with_command = |command: &str| {
        serde_json::json!({
            "session_id": "bench", "cwd": dir, "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": command},
        })
        .to_string()
    };
    let short = with_command(&format!("cargo test {}", "x".repeat(89)));
    let long = with_command(&format!("cargo test {}", "x ".repeat(100 * 1024)));
    let huge = with_command(&format!("cargo test {}", "x".repeat(1 << 20)));
    let document = format!(
        "{{\"session_id\":\"b\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\
         \"tool_input\":{{\"command\":\"ls\",\"pad\":\"{}\"}}}}",
        "p".repeat(10 << 20)
    );
    let mut group = c.benchmark_group("hook-size");
    group.sample_size(20).warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    for (name, input) in [
        ("100 B command", &short),
        ("200 KiB command", &long),
        ("1 MiB command", &huge),
        ("10 MB document", &document),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| answer(orcho, &hook, dir, input.as_bytes()));
        });
    }
    group.finish();
}

#[expect(clippy::print_stdout, reason = "benchmarks report to the terminal")]
fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench_hook(&mut c);
    c.final_summary();
    // A document is read whole (about 3 ms a megabyte here), a command
    // checked against every rule: linear in both, far under a hook's
    // timeout.
    let size = |subject, target| Ratio {
        group: "hook-size",
        subject,
        baseline: "100 B command",
        target,
    };
    report_ratios(&[
        Ratio {
            group: "hook",
            subject: "orcho hook PreToolUse",
            baseline: "/bin/true",
            target: 8.0,
        },
        size("200 KiB command", 10.0),
        size("1 MiB command", 10.0),
        size("10 MB document", 20.0),
    ]);
    if let Some(ns) = orcho_benches::median_ns("hook", "orcho hook PreToolUse") {
        println!(
            "  hook/orcho hook PreToolUse median: {:.2} ms (target < 5 ms)",
            ns / 1e6
        );
    }
}
