//! The generated repository the fingerprint benchmarks measure, and git run
//! the way the baselines run it.

use std::{
    fs::File,
    io::Write,
    path::Path,
    process::{Command, Stdio},
};

/// A small deterministic generator (splitmix64).
#[derive(Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A standard normal sample (Box-Muller).
    fn normal(&mut self) -> f64 {
        let u1 = self.unit().max(1e-12);
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

/// Writes `bytes` to a new file at `path`.
///
/// # Panics
///
/// When the file cannot be written: a benchmark cannot go on without it.
pub fn write_file(path: &Path, bytes: &[u8]) {
    let mut f = File::create(path).unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
    f.write_all(bytes)
        .unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// `git` in `dir`, configured as every baseline runs it: no system or global
/// configuration, no untracked cache, no file-system monitor, no automatic
/// maintenance (which would repack in a detached process during the
/// measurements), and a fixed identity for commits.
pub fn git(dir: &Path) -> Command {
    #[expect(
        clippy::disallowed_methods,
        reason = "the baseline is git itself, run by std"
    )]
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
            "-c",
            "core.untrackedCache=false",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "maintenance.auto=false",
            "-c",
            "gc.auto=0",
        ])
        .stdout(Stdio::null());
    c
}

/// Runs `c` and checks that it succeeded.
///
/// # Panics
///
/// When it cannot start or fails.
pub fn run(mut c: Command) {
    let status = c.status().expect("spawn");
    assert!(status.success(), "{c:?} failed");
}

/// Generates the repository-shaped tree under `root` and commits it: about
/// 28,000 files and 110 MB (lognormal sizes, median 400 B, p99 about 60 KB),
/// about 10 files per directory, a `.gitignore` with a few ignored files
/// present (`target/`, `*.log`). Returns the files and bytes written.
///
/// # Panics
///
/// When the tree cannot be written or git fails.
pub fn generate(root: &Path) -> (u64, u64) {
    let mut rng = Rng(0x0c40_c4e5);
    let files = 28_000u64;
    let mut total = 0u64;
    let mut made = 0u64;
    let mut dir_index = 0u64;
    while made < files {
        let depth_a = dir_index % 40;
        let depth_b = (dir_index / 40) % 10;
        let dir = root.join(format!("pkg{depth_a:02}/mod{depth_b}/d{dir_index:04}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let in_dir = 6 + rng.next_u64() % 9; // 6..=14, about 10 per directory
        for j in 0..in_dir {
            if made == files {
                break;
            }
            let size = (400.0 * (2.15 * rng.normal()).exp()).clamp(1.0, 4.0e6) as usize;
            let mut contents = Vec::with_capacity(size);
            while contents.len() < size {
                contents.extend_from_slice(format!("{:016x}\n", rng.next_u64()).as_bytes());
            }
            contents.truncate(size);
            let ext = ["rs", "md", "toml", "json", "txt"][(rng.next_u64() % 5) as usize];
            write_file(&dir.join(format!("file{j:02}.{ext}")), &contents);
            total += size as u64;
            made += 1;
        }
        dir_index += 1;
    }
    write_file(&root.join(".gitignore"), b"target/\n*.log\n");
    commit_all(root);
    // Ignored files present in the work tree.
    std::fs::create_dir_all(root.join("target/debug")).expect("mkdir");
    for i in 0..200 {
        write_file(&root.join(format!("target/debug/obj{i}.o")), &[0u8; 4096]);
    }
    write_file(&root.join("build.log"), b"noise\n");
    // Flush the freshly written tree and git objects now, so that background
    // writeback does not land in whichever measurement runs first.
    #[expect(clippy::disallowed_methods, reason = "sync(1), before measuring")]
    run(Command::new("sync"));
    (made, total)
}

/// A repository made of everything in `root`, committed and packed (as a
/// real checkout's objects mostly are).
fn commit_all(root: &Path) {
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &["commit", "-q", "-m", "generated"],
        &["gc", "-q"],
    ] {
        let mut c = git(root);
        c.args(args);
        run(c);
    }
}

/// `files` small files (100 to 400 bytes), 20 to a directory, committed,
/// with `target/` ignored: a large checkout whose cost is the number of
/// files, not their bytes. Returns the bytes written.
///
/// # Panics
///
/// When the tree cannot be written or git fails.
pub fn generate_many(root: &Path, files: usize) -> u64 {
    let mut rng = Rng(0x5709_0100);
    let mut total = 0u64;
    for i in 0..files {
        let dir = root.join(format!("src/m{:03}/d{:04}", i / 2000, i / 20));
        if i % 20 == 0 {
            std::fs::create_dir_all(&dir).expect("mkdir");
        }
        let size = 100 + (rng.next_u64() % 300) as usize;
        let mut contents = Vec::with_capacity(size);
        while contents.len() < size {
            contents.extend_from_slice(format!("{:016x}\n", rng.next_u64()).as_bytes());
        }
        contents.truncate(size);
        write_file(&dir.join(format!("f{:02}.rs", i % 20)), &contents);
        total += size as u64;
    }
    write_file(&root.join(".gitignore"), b"target/\n.orcho/\n");
    commit_all(root);
    #[expect(clippy::disallowed_methods, reason = "sync(1), before measuring")]
    run(Command::new("sync"));
    total
}

/// Fills the ignored folder `dir` (a build's output, such as `target/`) with
/// `files` small files in folders of 20, as a build leaves it.
///
/// # Panics
///
/// When the files cannot be written.
pub fn populate_build_folder(dir: &Path, files: usize) {
    for i in 0..files {
        let sub = dir.join(format!("deps/d{:04}", i / 20));
        if i % 20 == 0 {
            std::fs::create_dir_all(&sub).expect("mkdir");
        }
        write_file(&sub.join(format!("f{}.o", i % 20)), b"object\n");
    }
}
