//! `orcho-receipts` beside the baselines it must beat, measured in the same
//! run on the same tree.
//!
//! The tree is generated deterministically (about 28,000 files and 110 MB:
//! median file about 400 B, p99 about 60 KB, about 10 files per directory, a
//! `.gitignore` with a few ignored files present, a git repository with
//! everything committed). Set `ORCHO_BENCH_CHECKOUT` to a real git checkout
//! to measure that instead (it is only read, never modified, except for the
//! "100 modified" case, which is skipped for a real checkout).
//!
//! Groups and their targets:
//! The fingerprint groups time whole processes on both sides: the
//! package's `fingerprint-trees` binary beside `git` (see that binary for
//! the same cases as paired runs on several trees).
//! - `fingerprint_first`: the first fingerprint (no cache, warm page cache)
//!   vs `git add -A` into an empty temporary index + `git write-tree` (at
//!   most 0.3x), and vs the read floor: the same files, listed beforehand,
//!   read with the fingerprinter's threads and calls, without hashing (at
//!   most 1.1x).
//! - `fingerprint_second`: the second fingerprint of an unchanged tree vs
//!   `git status --porcelain` (at most 0.5x), and the same keeping the
//!   manifest that names what changed, as `orcho status` does, vs without
//!   (at most 1.05x); after a build wrote one new
//!   file and folder into the ignored `target/` (4,000 files there; at most
//!   0.6x: the cached file list stays valid); after one new untracked file
//!   in a tracked folder (at most 0.8x: only that folder is read again);
//!   after `.git/index` was written again with the same entries (at most
//!   0.8x: only the index is read again); and with 100 files modified (at
//!   most 1.1x the unchanged case + 0.2 ms per modified file). The generated
//!   tree only.
//! - `classify`: classifying 1,000 and 10,000 receipts against one current
//!   state vs reading and parsing the same files into a typed struct (at most
//!   1.5x).
//! - `exec`: `/bin/true` through `orcho_receipts::exec` vs
//!   `std::process::Command::status()` (at most 1.2x), also while this
//!   process holds 2 GiB of touched memory, where `true` by name (looked up
//!   on `PATH`) is measured too: a spawn that fell back to `fork` would copy
//!   the page tables of those 2 GiB.
#![expect(clippy::print_stdout, reason = "benchmarks report to the terminal")]
#![expect(
    clippy::disallowed_methods,
    reason = "the baselines (git, Command::status) are measured with std directly, so that Orcho's own overhead never inflates them"
)]

use std::{
    collections::BTreeMap,
    ffi::OsString,
    hint::black_box,
    os::unix::ffi::OsStrExt,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::Duration,
};

use camino::Utf8PathBuf;
use criterion::{BatchSize, Criterion};
use orcho::receipts::{
    COMMAND_RECEIPT_CONTEXT, CommandSpec, CurrentState, ReceiptStore, VerificationContract,
    classify,
    exec::{self, BaseEnv, ExecRequest},
    fingerprint::Fingerprinter,
};
use orcho_benches::{
    Ratio, median_ns, report_ratios,
    tree::{generate, git, populate_build_folder, run, write_file},
};
use serde::Deserialize;

struct Tree {
    _guard: Option<tempfile::TempDir>,
    root: Utf8PathBuf,
    generated: bool,
}

fn tree() -> Tree {
    if let Some(path) = std::env::var_os("ORCHO_BENCH_CHECKOUT") {
        let root = Utf8PathBuf::try_from(PathBuf::from(path)).expect("utf-8 checkout path");
        return Tree {
            _guard: None,
            root,
            generated: false,
        };
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let root = Utf8PathBuf::try_from(dir.path().to_owned()).expect("utf-8");
    let (files, bytes) = generate(root.as_std_path());
    println!(
        "generated {files} files, {:.1} MB under {root}",
        bytes as f64 / 1e6
    );
    Tree {
        _guard: Some(dir),
        root,
        generated: true,
    }
}

/// The fingerprint as a whole process, as `git` is one: the package's
/// `fingerprint-trees` binary.
const FINGERPRINT: &str = env!("CARGO_BIN_EXE_fingerprint-trees");

/// Runs `c`, its output thrown away, and checks that it succeeded.
fn quiet(mut c: Command) {
    c.stdout(Stdio::null()).stderr(Stdio::null());
    run(c);
}

fn bench_fingerprints(c: &mut Criterion, tree: &Tree) {
    let root = &tree.root;
    let scratch = tempfile::tempdir().expect("scratch");
    let cache = scratch.path().join("cache");
    let list = scratch.path().join("list");
    let fingerprint = || {
        let mut c = Command::new(FINGERPRINT);
        c.arg("fingerprint").arg(root.as_str()).arg(&cache);
        quiet(c);
    };
    // As `orcho status` takes it: keeping the manifest that names what
    // changed (written once per digest; a stat when it is there).
    let kept_cache = scratch.path().join("kept-cache");
    let fingerprint_kept = || {
        let mut c = Command::new(FINGERPRINT);
        c.arg("fingerprint-kept")
            .arg(root.as_str())
            .arg(&kept_cache);
        quiet(c);
    };
    let status = || {
        let mut status = git(root.as_std_path());
        status.args(["--no-optional-locks", "status", "--porcelain"]);
        quiet(status);
    };
    let listed = {
        let mut c = git(root.as_std_path());
        c.args(["ls-files", "-co", "--exclude-standard", "-z"])
            .stdout(Stdio::piped());
        c.output().expect("git ls-files").stdout
    };
    write_file(&list, &listed);
    let threads = Fingerprinter::new().threads();

    let mut group = c.benchmark_group("fingerprint_first");
    group.sample_size(10).warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(8));
    group.bench_function("orcho", |b| {
        b.iter_batched(
            || {
                let _ = std::fs::remove_dir_all(&cache);
            },
            |()| fingerprint(),
            BatchSize::PerIteration,
        );
    });
    let index = scratch.path().join("index");
    group.bench_function("git add -A + write-tree", |b| {
        b.iter_batched(
            || {
                let _ = std::fs::remove_file(&index);
            },
            |()| {
                let mut add = git(root.as_std_path());
                add.env("GIT_INDEX_FILE", &index).args(["add", "-A"]);
                run(add);
                let mut tree = git(root.as_std_path());
                tree.env("GIT_INDEX_FILE", &index).arg("write-tree");
                run(tree);
            },
            BatchSize::PerIteration,
        );
    });
    group.bench_function("read floor", |b| {
        b.iter(|| {
            let mut c = Command::new(FINGERPRINT);
            c.arg("floor")
                .arg(root.as_str())
                .arg(&list)
                .arg(threads.to_string());
            quiet(c);
        });
    });
    group.finish();

    let mut group = c.benchmark_group("fingerprint_second");
    group.sample_size(20).warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(5));
    // Let the cache settle past the racily-clean window.
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(30));
        fingerprint();
        fingerprint_kept();
    }
    group.bench_function("orcho unchanged", |b| b.iter(fingerprint));
    group.bench_function("orcho unchanged, keeping manifests", |b| {
        b.iter(fingerprint_kept);
    });
    group.bench_function("git status", |b| b.iter(status));
    if tree.generated {
        // A build folder git ignores (`target/`, 4,000 files in 200
        // folders), then one new file and folder in it per iteration, as
        // every build makes: the cached file list stays valid, because git
        // never enters an ignored folder and neither does the check.
        populate_build_folder(&root.as_std_path().join("target"), 4_000);
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(30));
            fingerprint();
        }
        let mut build = 0u64;
        group.bench_function("orcho after a build", |b| {
            b.iter_batched(
                || {
                    build += 1;
                    let dir = root
                        .as_std_path()
                        .join(format!("target/debug/incremental/b{build}"));
                    std::fs::create_dir_all(&dir).expect("mkdir");
                    write_file(&dir.join("out.o"), b"object\n");
                },
                |()| fingerprint(),
                BatchSize::PerIteration,
            );
        });
        // One new untracked file in a tracked folder: only that folder is
        // read again.
        let folder = Path::new(std::ffi::OsStr::from_bytes(
            listed.split(|&b| b == 0).next().expect("a file"),
        ))
        .parent()
        .expect("a folder")
        .to_owned();
        let mut added = 0u64;
        group.bench_function("orcho after a new file", |b| {
            b.iter_batched(
                || {
                    added += 1;
                    write_file(
                        &root
                            .as_std_path()
                            .join(&folder)
                            .join(format!("new{added}.txt")),
                        b"new\n",
                    );
                },
                |()| fingerprint(),
                BatchSize::PerIteration,
            );
        });
        // `.git/index` written again with the same entries, as `git
        // checkout` of the same tree does: only the index is read again.
        let index_file = root.as_std_path().join(".git/index");
        let bytes = std::fs::read(&index_file).expect("index");
        group.bench_function("orcho after the index was rewritten", |b| {
            b.iter_batched(
                || write_file(&index_file, &bytes),
                |()| fingerprint(),
                BatchSize::PerIteration,
            );
        });
        let victims: Vec<PathBuf> = listed
            .split(|&b| b == 0)
            .map(|p| PathBuf::from(std::ffi::OsStr::from_bytes(p)))
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .step_by(50)
            .take(100)
            .map(|p| root.as_std_path().join(p))
            .collect();
        assert_eq!(victims.len(), 100);
        let mut round = 0u64;
        group.bench_function("orcho 100 modified", |b| {
            b.iter_batched(
                || {
                    round += 1;
                    for v in &victims {
                        write_file(v, format!("modified in round {round}\n").as_bytes());
                    }
                },
                |()| fingerprint(),
                BatchSize::PerIteration,
            );
        });
    }
    group.finish();
}

/// The receipt's shape, parsed by the baseline the way any typed reader
/// would.
#[derive(Deserialize)]
#[expect(dead_code, reason = "parsed for the cost, not read")]
struct ReceiptShape {
    schema: u32,
    command: String,
    spec: serde_json::Map<String, serde_json::Value>,
    spec_digest: String,
    environment: String,
    environment_digest: String,
    inherited_env: BTreeMap<String, String>,
    working_dir: String,
    subject_before: String,
    subject_after: String,
    dependencies: Vec<serde_json::Value>,
    started_at: String,
    finished_at: String,
    duration_ms: u64,
    exit: serde_json::Value,
    assertions: Vec<serde_json::Value>,
    stdout: LogShape,
    stderr: LogShape,
    digest: String,
}

#[derive(Deserialize)]
#[expect(dead_code, reason = "parsed for the cost, not read")]
struct LogShape {
    path: Option<String>,
    digest: Option<String>,
    bytes: u64,
    tail: String,
}

struct ClassifyFixture {
    _guard: tempfile::TempDir,
    contract: VerificationContract,
    store: ReceiptStore,
    state: CurrentState,
    files: Vec<PathBuf>,
}

/// Writes `n` receipts: one through the store, the rest as copies with the
/// command renamed and the digest recomputed (the store's durable writes
/// would make setting up 10,000 receipts take minutes of `fsync`).
fn classify_fixture(n: usize) -> ClassifyFixture {
    let dir = tempfile::tempdir().expect("temp");
    let root = Utf8PathBuf::try_from(dir.path().to_owned()).expect("utf-8");
    let mut contract = VerificationContract::new();
    for i in 0..n {
        let name = format!("cmd{i:05}").parse().expect("name");
        contract = contract.with_command(CommandSpec::new(name, ["true"]));
    }
    for i in 0..n {
        contract = contract.with_required(format!("cmd{i:05}").parse().expect("name"));
    }
    let store = ReceiptStore::new(root.join(".orcho"));
    let verifier = orcho::receipts::Verifier::new(contract.clone(), &root, store.clone())
        .expect("contract")
        .with_base_env(BaseEnv::inherit());
    verifier
        .run_command(&"cmd00000".parse().expect("name"), None)
        .expect("run");
    let state = verifier.current_state().expect("state");
    let template = std::fs::read_to_string(
        store
            .command_dir(&"cmd00000".parse().expect("name"))
            .join("latest.json"),
    )
    .expect("template");
    let body_end = template.rfind("\n  \"digest\": ").expect("digest line");
    let body = &template[..body_end];
    let spec_digest_of = |name: &str| {
        orcho::receipts::spec_digest(contract.command(name).expect("declared")).to_string()
    };
    let first_spec = spec_digest_of("cmd00000");
    let mut files = Vec::with_capacity(n);
    for i in 0..n {
        let name = format!("cmd{i:05}");
        let path = store
            .command_dir(&name.parse().expect("name"))
            .join("latest.json");
        if i > 0 {
            let renamed = body
                .replace("cmd00000", &name)
                .replace(&first_spec, &spec_digest_of(&name));
            let digest = orcho::core::Digest::derive(COMMAND_RECEIPT_CONTEXT, renamed.as_bytes());
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            write_file(
                path.as_std_path(),
                format!("{renamed}\n  \"digest\": \"{digest}\"\n}}\n").as_bytes(),
            );
        }
        files.push(path.into_std_path_buf());
    }
    ClassifyFixture {
        _guard: dir,
        contract,
        store,
        state,
        files,
    }
}

fn bench_classify(c: &mut Criterion) {
    let mut group = c.benchmark_group("classify");
    group.sample_size(10).warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    for n in [1_000usize, 10_000] {
        let fx = classify_fixture(n);
        let statuses = classify(&fx.contract, &fx.store, &fx.state);
        assert!(
            statuses.iter().all(|s| s.status.is_present()),
            "every generated receipt is present: {}",
            statuses[0].status
        );
        group.bench_function(format!("orcho {n}"), |b| {
            b.iter(|| black_box(classify(&fx.contract, &fx.store, &fx.state)));
        });
        group.bench_function(format!("read+parse {n}"), |b| {
            b.iter(|| {
                for f in &fx.files {
                    let bytes = std::fs::read(f).expect("read");
                    black_box(serde_json::from_slice::<ReceiptShape>(&bytes).expect("parse"));
                }
            });
        });
    }
    group.finish();
}

fn bench_exec(c: &mut Criterion) {
    let mut group = c.benchmark_group("exec");
    group.sample_size(30).warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    let env: Vec<(OsString, OsString)> = BaseEnv::inherit()
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
    let request = ExecRequest::new(["/bin/true"]).envs(env.clone());
    let std_true = |env: &[(OsString, OsString)]| {
        let status = Command::new("/bin/true")
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .status()
            .expect("spawn");
        assert!(status.success());
    };
    group.bench_function("orcho /bin/true", |b| {
        b.iter(|| assert!(exec::run(&request).expect("exec").status.success()));
    });
    group.bench_function("std status /bin/true", |b| b.iter(|| std_true(&env)));

    // 2 GiB touched: fork would copy page tables; posix_spawn does not.
    let mut ballast = vec![0u8; 2 << 30];
    for page in ballast.chunks_mut(4096) {
        page[0] = 1;
    }
    group.bench_function("orcho /bin/true 2GiB", |b| {
        b.iter(|| assert!(exec::run(&request).expect("exec").status.success()));
    });
    let by_name = ExecRequest::new(["true"]).envs(env.clone());
    group.bench_function("orcho true by name 2GiB", |b| {
        b.iter(|| assert!(exec::run(&by_name).expect("exec").status.success()));
    });
    group.bench_function("std status /bin/true 2GiB", |b| b.iter(|| std_true(&env)));
    black_box(&ballast);
    drop(ballast);
    group.finish();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let tree = tree();
    bench_fingerprints(&mut c, &tree);
    bench_classify(&mut c);
    bench_exec(&mut c);
    c.final_summary();
    report_ratios(&[
        Ratio {
            group: "fingerprint_first",
            subject: "orcho",
            baseline: "git add -A + write-tree",
            target: 0.3,
        },
        Ratio {
            group: "fingerprint_first",
            subject: "orcho",
            baseline: "read floor",
            target: 1.1,
        },
        Ratio {
            group: "fingerprint_second",
            subject: "orcho unchanged",
            baseline: "git status",
            target: 0.5,
        },
        Ratio {
            group: "fingerprint_second",
            subject: "orcho unchanged, keeping manifests",
            baseline: "orcho unchanged",
            target: 1.05,
        },
        Ratio {
            group: "fingerprint_second",
            subject: "orcho after a new file",
            baseline: "git status",
            target: 0.8,
        },
        Ratio {
            group: "fingerprint_second",
            subject: "orcho after the index was rewritten",
            baseline: "git status",
            target: 0.8,
        },
        Ratio {
            group: "fingerprint_second",
            subject: "orcho after a build",
            baseline: "git status",
            target: 0.6,
        },
        Ratio {
            group: "classify",
            subject: "orcho 1000",
            baseline: "read+parse 1000",
            target: 1.5,
        },
        Ratio {
            group: "classify",
            subject: "orcho 10000",
            baseline: "read+parse 10000",
            target: 1.5,
        },
        Ratio {
            group: "exec",
            subject: "orcho /bin/true",
            baseline: "std status /bin/true",
            target: 1.2,
        },
        Ratio {
            group: "exec",
            subject: "orcho /bin/true 2GiB",
            baseline: "std status /bin/true 2GiB",
            target: 1.2,
        },
        Ratio {
            group: "exec",
            subject: "orcho true by name 2GiB",
            baseline: "std status /bin/true 2GiB",
            target: 1.2,
        },
    ]);
    if let (Some(modified), Some(unchanged)) = (
        median_ns("fingerprint_second", "orcho 100 modified"),
        median_ns("fingerprint_second", "orcho unchanged"),
    ) {
        let allowed = 1.1 * unchanged + 100.0 * 200_000.0;
        println!(
            "  fingerprint_second/orcho 100 modified {:>10.1} µs vs 1.1 × unchanged + 100 × 0.2 ms = {:.1} µs  {}",
            modified / 1e3,
            allowed / 1e3,
            if modified <= allowed {
                "ok"
            } else {
                "OVER TARGET"
            }
        );
    }
}
