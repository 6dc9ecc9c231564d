//! Checkout fingerprints beside git, as whole processes on the same trees.
//!
//! ```text
//! fingerprint-trees compare [--rounds N] TREE…   the table of ratios
//! fingerprint-trees generate DIR                 the generated tree
//! fingerprint-trees fingerprint ROOT CACHE       one fingerprint (a measured process)
//! fingerprint-trees list ROOT                    the file list alone (a measured process)
//! fingerprint-trees floor ROOT LIST THREADS      the read floor (a measured process)
//! ```
//!
//! `compare` measures, on each tree, one process of ours against one of
//! git's (or of the floor), alternately, each pair on the same tree state,
//! and prints the median of the per-pair ratios with their range:
//!
//! | case | ours | beside | target |
//! |---|---|---|---|
//! | first | a fingerprint with no cache | the read floor | ≤ 1.1x |
//! | first | the same | `git add -A` into an empty index + `git write-tree` | ≤ 0.3x |
//! | unchanged | a fingerprint, caches valid | `git status --porcelain` | ≤ 0.5x |
//! | build | after one new folder and file in the ignored `target/` | the same | ≤ 0.6x |
//! | new file | after one new untracked file in a tracked folder | the same | ≤ 0.8x |
//! | index | after `.git/index` was written again | the same | ≤ 0.8x |
//!
//! The read floor reads the fingerprint's file list (precomputed) with as
//! many threads as the fingerprinter and the same calls per file (`openat`
//! from the root's descriptor, `fstat`, `read` up to the size `fstat` gave,
//! `close`), without hashing and without listing. git runs with `--no-optional-locks` (so that it never rewrites
//! the index under the measurement), no untracked cache and no file-system
//! monitor. The build case needs an ignored `target/`; it is filled with
//! 25,000 small files when it holds fewer, and left out on a tree that does
//! not ignore `target/`. The trees are modified (new files, the index
//! rewritten with the same contents, `target/` filled): measure copies.
//! `benches/fingerprint-trees.sh` builds the trees and runs this.
#![expect(clippy::print_stdout, reason = "a benchmark reports to the terminal")]
#![expect(
    clippy::disallowed_methods,
    reason = "the measured processes and git are run by std, so that none of Orcho's own code inflates a baseline"
)]

use std::{
    ffi::OsString,
    io::Read,
    os::unix::ffi::OsStrExt,
    path::{Path, PathBuf},
    process::{Command, ExitCode, Stdio},
    sync::atomic::{AtomicUsize, Ordering},
    time::{Duration, Instant},
};

use camino::Utf8PathBuf;
use orcho::receipts::fingerprint::Fingerprinter;
use orcho_benches::tree::{generate, git, populate_build_folder, write_file};
use rustix::fs::{Mode, OFlags};

const USAGE: &str = "usage: fingerprint-trees compare [--rounds N] TREE…
       fingerprint-trees generate DIR
       fingerprint-trees fingerprint ROOT CACHE
       fingerprint-trees fingerprint-kept ROOT CACHE
       fingerprint-trees list ROOT
       fingerprint-trees floor ROOT LIST THREADS";

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let words: Vec<&str> = args.iter().map(|a| a.to_str().unwrap_or("")).collect();
    match words.as_slice() {
        ["fingerprint", _, _] => fingerprint(Path::new(&args[1]), Path::new(&args[2]), false),
        ["fingerprint-kept", _, _] => fingerprint(Path::new(&args[1]), Path::new(&args[2]), true),
        ["list", _] => list(Path::new(&args[1])),
        ["floor", _, _, threads] => match threads.parse() {
            Ok(threads) => floor(Path::new(&args[1]), Path::new(&args[2]), threads),
            Err(_) => usage(),
        },
        ["generate", _] => {
            let (files, bytes) = generate(Path::new(&args[1]));
            println!("generated {files} files, {:.1} MB", bytes as f64 / 1e6);
            ExitCode::SUCCESS
        }
        ["compare", rest @ ..] => {
            let (rounds, trees) = match rest {
                ["--rounds", n, trees @ ..] => match n.parse() {
                    Ok(n) => (n, trees),
                    Err(_) => return usage(),
                },
                trees => (15, trees),
            };
            if trees.is_empty() {
                return usage();
            }
            compare(rounds, trees);
            ExitCode::SUCCESS
        }
        _ => usage(),
    }
}

fn usage() -> ExitCode {
    println!("{USAGE}");
    ExitCode::from(2)
}

/// One fingerprint, printed with where its file list came from; `kept`:
/// keeping its manifest, as `orcho verify` and `orcho status` do.
fn fingerprint(root: &Path, cache: &Path, kept: bool) -> ExitCode {
    let (Ok(root), Ok(cache)) = (
        Utf8PathBuf::try_from(root.to_owned()),
        Utf8PathBuf::try_from(cache.to_owned()),
    ) else {
        println!("paths must be UTF-8");
        return ExitCode::FAILURE;
    };
    let mut fingerprinter = Fingerprinter::new().with_cache_dir(cache);
    if kept {
        fingerprinter = fingerprinter.keeping_manifests();
    }
    match fingerprinter.fingerprint(&root, &[]) {
        Ok(f) => {
            println!(
                "{} {:?} files={} hashed={}",
                f.digest, f.source, f.files, f.hashed
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("{}", orcho::core::error_chain(&e));
            ExitCode::FAILURE
        }
    }
}

/// The files a fingerprint covers, listed as it lists them without a cache.
fn list(root: &Path) -> ExitCode {
    let Ok(root) = Utf8PathBuf::try_from(root.to_owned()) else {
        println!("paths must be UTF-8");
        return ExitCode::FAILURE;
    };
    match Fingerprinter::new().files(&root, &[]) {
        Ok(files) => {
            println!("{} files", files.len());
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("{}", orcho::core::error_chain(&e));
            ExitCode::FAILURE
        }
    }
}

/// The read floor: the files of `list` (NUL-separated, relative to `root`)
/// read by `threads` threads, each file opened from the root's descriptor,
/// `fstat`-ed, read to the end and closed, as the fingerprinter reads them.
fn floor(root: &Path, list: &Path, threads: usize) -> ExitCode {
    let Ok(listing) = std::fs::read(list) else {
        println!("cannot read {}", list.display());
        return ExitCode::FAILURE;
    };
    let paths: Vec<&[u8]> = listing
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .collect();
    let Ok(dir) = rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        println!("cannot open {}", root.display());
        return ExitCode::FAILURE;
    };
    let next = AtomicUsize::new(0);
    let total: u64 = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut buf = vec![0u8; 64 * 1024];
                    let mut read = 0u64;
                    loop {
                        let start = next.fetch_add(64, Ordering::Relaxed);
                        let Some(batch) = paths.get(start..(start + 64).min(paths.len())) else {
                            break;
                        };
                        if batch.is_empty() {
                            break;
                        }
                        for rel in batch {
                            let Ok(fd) = rustix::fs::openat(
                                &dir,
                                std::ffi::OsStr::from_bytes(rel),
                                OFlags::RDONLY
                                    | OFlags::CLOEXEC
                                    | OFlags::NOFOLLOW
                                    | OFlags::NOCTTY
                                    | OFlags::NONBLOCK,
                                Mode::empty(),
                            ) else {
                                continue;
                            };
                            let size = rustix::fs::fstat(&fd)
                                .map_or(0, |s| u64::try_from(s.st_size).unwrap_or(0));
                            let mut file = std::fs::File::from(fd);
                            // As the fingerprinter reads: up to the size
                            // `fstat` gave, without a read that only finds
                            // the end.
                            let mut left = size;
                            while left > 0 {
                                let want =
                                    buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                                match file.read(&mut buf[..want]) {
                                    Ok(0) | Err(_) => break,
                                    Ok(n) => {
                                        read += n as u64;
                                        left -= n as u64;
                                    }
                                }
                            }
                        }
                    }
                    read
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap_or(0)).sum()
    });
    println!("read {total} bytes");
    ExitCode::SUCCESS
}

/// A process to time, run with its output discarded (or captured, for the
/// fingerprint's report).
#[derive(Debug)]
struct Side {
    name: String,
    commands: Vec<Command>,
}

impl Side {
    fn one(name: &str, command: Command) -> Self {
        Self {
            name: name.to_owned(),
            commands: vec![command],
        }
    }

    /// Runs every command in turn; the time of all of them, and what the
    /// last printed.
    fn time(&mut self) -> (Duration, String) {
        let start = Instant::now();
        let mut said = String::new();
        for c in &mut self.commands {
            let out = c.stdout(Stdio::piped()).stderr(Stdio::null()).output();
            match out {
                Ok(out) if out.status.success() => {
                    said = String::from_utf8_lossy(&out.stdout).trim().to_owned();
                }
                Ok(out) => panic!(
                    "{c:?} failed: {}",
                    String::from_utf8_lossy(&out.stdout).trim()
                ),
                Err(e) => panic!("{c:?}: {e}"),
            }
        }
        (start.elapsed(), said)
    }
}

/// Times `ours` and each baseline in alternating order, `rounds` times after
/// one round not counted; `prepare` runs before every run of ours (and so
/// before the baselines of the same round, which see the same tree).
fn measure(
    rounds: usize,
    prepare: &mut dyn FnMut(),
    ours: &mut Side,
    baselines: &mut [(&mut Side, &mut dyn FnMut(), f64)],
) -> Vec<String> {
    let mut mine = Vec::new();
    let mut theirs: Vec<Vec<Duration>> = vec![Vec::new(); baselines.len()];
    let mut said = String::new();
    for round in 0..=rounds {
        let mut order: Vec<Option<usize>> = std::iter::once(None)
            .chain((0..baselines.len()).map(Some))
            .collect();
        let turn = round % order.len();
        order.rotate_left(turn);
        for who in order {
            match who {
                None => {
                    prepare();
                    let (t, s) = ours.time();
                    if round > 0 {
                        mine.push(t);
                    }
                    said = s;
                }
                Some(i) => {
                    (baselines[i].1)();
                    let (t, _) = baselines[i].0.time();
                    if round > 0 {
                        theirs[i].push(t);
                    }
                }
            }
        }
    }
    let source = said.split_whitespace().nth(1).unwrap_or("?").to_owned();
    baselines
        .iter()
        .zip(&theirs)
        .map(|((side, _, target), times)| {
            let mut ratios: Vec<f64> = mine
                .iter()
                .zip(times)
                .map(|(a, b)| a.as_secs_f64() / b.as_secs_f64())
                .collect();
            ratios.sort_by(f64::total_cmp);
            let ratio = median(&ratios);
            format!(
                "{:>9.1} ms  {:<34} {:>9.1} ms  {:>5.2}x [{:.2}–{:.2}]  ≤ {target:.1}x {:<4} {source}",
                median_ms(&mine),
                side.name,
                median_ms(times),
                ratio,
                ratios.first().copied().unwrap_or(f64::NAN),
                ratios.last().copied().unwrap_or(f64::NAN),
                if ratio <= *target { "ok" } else { "OVER" },
            )
        })
        .collect()
}

fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => f64::midpoint(sorted[n / 2 - 1], sorted[n / 2]),
    }
}

fn median_ms(times: &[Duration]) -> f64 {
    let mut ms: Vec<f64> = times.iter().map(|t| t.as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    median(&ms)
}

fn compare(rounds: usize, trees: &[&str]) {
    let me = std::env::current_exe().expect("this program");
    let threads = Fingerprinter::new().threads();
    println!(
        "{rounds} rounds of each pair, whole processes, {threads} reading threads; the ratio is the median of the per-pair ratios [min–max]"
    );
    for tree in trees {
        let root = std::fs::canonicalize(tree).expect("tree");
        let scratch = tempfile::tempdir().expect("scratch");
        let files = listed(&root).iter().filter(|&&b| b == 0).count();
        println!("\n{} ({files} files)", root.display());
        for line in compare_tree(&me, &root, scratch.path(), threads, rounds) {
            println!("  {line}");
        }
    }
}

/// The files git lists for `root`, NUL-separated.
fn listed(root: &Path) -> Vec<u8> {
    let mut c = git(root);
    c.args(["ls-files", "-co", "--exclude-standard", "-z"]);
    c.stdout(Stdio::piped());
    c.output().expect("git ls-files").stdout
}

fn compare_tree(
    me: &Path,
    root: &Path,
    scratch: &Path,
    threads: usize,
    rounds: usize,
) -> Vec<String> {
    let cache = scratch.join("cache");
    let list = scratch.join("list");
    write_file(&list, &listed(root));
    let ours = || {
        let mut c = Command::new(me);
        c.arg("fingerprint").arg(root).arg(&cache);
        Side::one("fingerprint", c)
    };
    let status = || {
        let mut c = git(root);
        c.args(["--no-optional-locks", "status", "--porcelain"]);
        Side::one("git status --porcelain", c)
    };
    let mut lines = Vec::new();

    // The first fingerprint: no cache at all.
    let index = scratch.join("capture-index");
    let mut capture = Side {
        name: "git add -A + write-tree".to_owned(),
        commands: vec![
            {
                let mut c = git(root);
                c.env("GIT_INDEX_FILE", &index).args(["add", "-A"]);
                c
            },
            {
                let mut c = git(root);
                c.env("GIT_INDEX_FILE", &index).arg("write-tree");
                c
            },
        ],
    };
    let mut floor = Side::one("read floor", {
        let mut c = Command::new(me);
        c.arg("floor").arg(root).arg(&list).arg(threads.to_string());
        c
    });
    let mut no_cache = || {
        let _ = std::fs::remove_dir_all(&cache);
    };
    let mut no_index = || {
        let _ = std::fs::remove_file(&index);
    };
    let mut nothing = || {};
    for line in measure(
        rounds,
        &mut no_cache,
        &mut ours(),
        &mut [
            (&mut floor, &mut nothing, 1.1),
            (&mut capture, &mut no_index, 0.3),
        ],
    ) {
        lines.push(format!("first      {line}"));
    }

    // Caches valid: let them settle past the racily-clean window first.
    let settle = || {
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(30));
            ours().time();
        }
    };
    settle();
    for line in measure(
        rounds,
        &mut nothing,
        &mut ours(),
        &mut [(&mut status(), &mut || {}, 0.5)],
    ) {
        lines.push(format!("unchanged  {line}"));
    }

    // A build wrote into the ignored `target/`.
    let target = root.join("target");
    let mut check = git(root);
    check.args(["check-ignore", "-q", "target/"]);
    if check.status().is_ok_and(|s| s.success()) {
        let present = walk_count(&target);
        if present < 1_000 {
            populate_build_folder(&target, 25_000);
        }
        settle();
        let mut build = 0u32;
        let mut built = || {
            build += 1;
            let dir = target.join(format!("incremental/orcho-bench-{build}"));
            std::fs::create_dir_all(&dir).expect("mkdir");
            write_file(&dir.join("out.o"), b"object\n");
        };
        for line in measure(
            rounds,
            &mut built,
            &mut ours(),
            &mut [(&mut status(), &mut || {}, 0.6)],
        ) {
            lines.push(format!("build      {line}"));
        }
    } else {
        lines.push("build      left out: the tree does not ignore `target/`".to_owned());
    }

    // One new untracked file in a tracked folder.
    let listing = listed(root);
    let folder = listing
        .split(|&b| b == 0)
        .filter_map(|p| {
            let p = Path::new(std::ffi::OsStr::from_bytes(p));
            p.parent()
                .filter(|d| !d.as_os_str().is_empty())
                .map(Path::to_owned)
        })
        .find(|d| root.join(d).is_dir())
        .expect("a tracked folder");
    settle();
    let mut added: Vec<PathBuf> = Vec::new();
    let mut add = || {
        let path = root
            .join(&folder)
            .join(format!("orcho-bench-new-{}.txt", added.len()));
        write_file(&path, b"new\n");
        added.push(path);
    };
    for line in measure(
        rounds,
        &mut add,
        &mut ours(),
        &mut [(&mut status(), &mut || {}, 0.8)],
    ) {
        lines.push(format!("new file   {line}"));
    }
    for path in &added {
        let _ = std::fs::remove_file(path);
    }

    // `.git/index` written again with the same entries, as `git checkout`
    // of the same tree does.
    settle();
    let index_file = git_index(root);
    let bytes = std::fs::read(&index_file).expect("index");
    let mut rewrite = || write_file(&index_file, &bytes);
    for line in measure(
        rounds,
        &mut rewrite,
        &mut ours(),
        &mut [(&mut status(), &mut || {}, 0.8)],
    ) {
        lines.push(format!("index      {line}"));
    }
    lines
}

fn git_index(root: &Path) -> PathBuf {
    let mut c = git(root);
    c.args(["rev-parse", "--git-path", "index"]);
    c.stdout(Stdio::piped());
    let out = c.output().expect("git rev-parse");
    root.join(String::from_utf8_lossy(&out.stdout).trim())
}

fn walk_count(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => walk_count(&e.path()),
            _ => 1,
        })
        .sum()
}
