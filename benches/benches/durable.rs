//! `write_atomic` and `Journal::append` beside the plain system calls they
//! wrap, measured in the same run on the same file system.
//!
//! Baselines:
//! - `plain write+fsync+rename`: create a temp file, write, `fsync`, rename;
//!   what a careful program does without Orcho.
//! - `plain write+fsync+rename+dirsync`: the same plus the directory `fsync`
//!   that makes the rename itself durable; `write_atomic` does this too, so it
//!   is the like-for-like baseline.
//! - `plain write_all+sync_data`: one append and `fdatasync` on an open
//!   file, the floor for a durable journal append.

use std::{
    fs::{File, OpenOptions},
    hint::black_box,
    io::Write,
};

use camino::Utf8PathBuf;
use criterion::{Criterion, Throughput};
use orcho::core::{
    SchemaVersion,
    fs::{Journal, write_atomic},
};
use orcho_benches::{Ratio, report_ratios};
use serde::Serialize;

fn temp_dir() -> (tempfile::TempDir, Utf8PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = Utf8PathBuf::try_from(dir.path().to_owned()).expect("utf-8 temp dir");
    (dir, root)
}

fn plain_replace(dir: &Utf8PathBuf, target: &Utf8PathBuf, bytes: &[u8], sync_dir: bool) {
    let tmp = dir.join(".plain-tmp");
    let mut f = File::create(&tmp).expect("create");
    f.write_all(bytes).expect("write");
    f.sync_all().expect("fsync");
    drop(f);
    std::fs::rename(&tmp, target).expect("rename");
    if sync_dir {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .expect("dir fsync");
    }
}

fn bench_write_atomic(c: &mut Criterion) {
    let (_guard, dir) = temp_dir();
    let target = dir.join("state.json");
    let bytes = vec![b'x'; 4096];
    let mut group = c.benchmark_group("write_atomic");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("orcho", |b| {
        b.iter(|| write_atomic(&target, black_box(&bytes)).expect("write_atomic"))
    });
    group.bench_function("plain write+fsync+rename", |b| {
        b.iter(|| plain_replace(&dir, &target, &bytes, false))
    });
    group.bench_function("plain write+fsync+rename+dirsync", |b| {
        b.iter(|| plain_replace(&dir, &target, &bytes, true))
    });
    group.finish();
}

#[derive(Serialize)]
struct Event<'a> {
    schema: SchemaVersion,
    seq: u64,
    kind: &'a str,
    detail: &'a str,
}

fn bench_journal(c: &mut Criterion) {
    let (_guard, dir) = temp_dir();
    let mut journal = Journal::open(&dir.join("journal.jsonl")).expect("journal");
    let detail = "x".repeat(160);
    let event = Event {
        schema: SchemaVersion::new(1),
        seq: 7,
        kind: "gate_finished",
        detail: &detail,
    };
    let line = {
        let mut l = serde_json::to_vec(&event).expect("encode");
        l.push(b'\n');
        l
    };
    let mut plain = OpenOptions::new()
        .append(true)
        .create(true)
        .open(dir.join("plain.jsonl"))
        .expect("plain journal");

    let mut group = c.benchmark_group("journal_append");
    group.throughput(Throughput::Bytes(line.len() as u64));
    group.bench_function("orcho", |b| {
        b.iter(|| journal.append(black_box(&event)).expect("append"))
    });
    group.bench_function("plain write_all+sync_data", |b| {
        b.iter(|| {
            plain.write_all(black_box(&line)).expect("write");
            plain.sync_data().expect("fdatasync");
        })
    });
    group.finish();
}

/// The alternating measurements: the ratios the targets are about.
#[expect(clippy::print_stdout, reason = "benchmarks report to the terminal")]
fn alternating() {
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return;
    }
    println!("\nAlternating rounds (one call of each per round, 2,000 rounds):");
    let (_guard, dir) = temp_dir();
    let target = dir.join("state.json");
    let bytes = vec![b'x'; 4096];
    let measured = orcho_benches::alternate(
        2000,
        || write_atomic(&target, &bytes).expect("write_atomic"),
        || plain_replace(&dir, &dir.join("plain.json"), &bytes, true),
    );
    orcho_benches::report_alternating("write_atomic", "write+fsync+rename+dirsync", measured, 1.10);
    let measured = orcho_benches::alternate(
        2000,
        || write_atomic(&target, &bytes).expect("write_atomic"),
        || plain_replace(&dir, &dir.join("plain.json"), &bytes, false),
    );
    orcho_benches::report_alternating("write_atomic", "write+fsync+rename", measured, 1.10);

    let mut journal = Journal::open(&dir.join("journal.jsonl")).expect("journal");
    let detail = "x".repeat(160);
    let event = Event {
        schema: SchemaVersion::new(1),
        seq: 7,
        kind: "gate_finished",
        detail: &detail,
    };
    let mut line = serde_json::to_vec(&event).expect("encode");
    line.push(b'\n');
    let mut plain = OpenOptions::new()
        .append(true)
        .create(true)
        .open(dir.join("plain.jsonl"))
        .expect("plain journal");
    let measured = orcho_benches::alternate(
        4000,
        || journal.append(&event).expect("append"),
        || {
            plain.write_all(&line).expect("write");
            plain.sync_data().expect("fdatasync");
        },
    );
    orcho_benches::report_alternating("journal_append", "write_all+sync_data", measured, 1.10);
}

fn main() {
    alternating();
    let mut c = Criterion::default().configure_from_args();
    bench_write_atomic(&mut c);
    bench_journal(&mut c);
    c.final_summary();
    report_ratios(&[
        Ratio {
            group: "write_atomic",
            subject: "orcho",
            baseline: "plain write+fsync+rename+dirsync",
            target: 1.10,
        },
        Ratio {
            group: "write_atomic",
            subject: "orcho",
            baseline: "plain write+fsync+rename",
            target: 1.10,
        },
        Ratio {
            group: "journal_append",
            subject: "orcho",
            baseline: "plain write_all+sync_data",
            target: 1.10,
        },
    ]);
}
