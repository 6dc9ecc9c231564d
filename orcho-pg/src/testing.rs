//! A throwaway PostgreSQL server for tests: `initdb` and `pg_ctl` in a
//! temporary directory, listening on a free port of 127.0.0.1 only, with a
//! password for its superuser, stopped when the test process ends.
//!
//! ```no_run
//! let Some(server) = orcho_pg::testing::Server::shared() else {
//!     return; // no PostgreSQL here, and not in CI: the reason is printed
//! };
//! let url = server.new_database();
//! ```

#![expect(
    clippy::disallowed_methods,
    reason = "test support: starts a database server with its own tools, for a test process, \
              outside any run"
)]

use std::{
    net::TcpListener,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::{
        OnceLock,
        atomic::{AtomicUsize, Ordering},
    },
};

/// The superuser's password on a test server: the tests check it never
/// shows.
pub const PASSWORD: &str = "orcho-test-s3cret";

/// A running test server.
#[derive(Debug)]
pub struct Server {
    bin: PathBuf,
    data: PathBuf,
    dir: PathBuf,
    port: u16,
    as_postgres: bool,
    databases: AtomicUsize,
}

/// Where the server binaries are: `initdb` on the `PATH`, else Debian's
/// `/usr/lib/postgresql/N/bin` (the newest).
fn binaries() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("ORCHO_TEST_PG_BIN") {
        return Some(PathBuf::from(path));
    }
    let debian = Path::new("/usr/lib/postgresql");
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(debian)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    if let Some((_, bin)) = found.pop() {
        return Some(bin);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .find(|p| p.join("initdb").is_file() && p.join("pg_ctl").is_file())
    })
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl Server {
    /// The server of this test process, started on first use; `None`
    /// (with the reason printed) when PostgreSQL is not installed here.
    ///
    /// # Panics
    ///
    /// When it cannot be started, or when it is not installed and `CI` is
    /// set: CI never skips these tests.
    pub fn shared() -> Option<&'static Self> {
        static SERVER: OnceLock<Option<Server>> = OnceLock::new();
        SERVER
            .get_or_init(|| match Self::start() {
                Ok(server) => Some(server),
                Err(reason) if std::env::var_os("CI").is_some() => {
                    panic!("PostgreSQL is needed in CI: {reason}")
                }
                Err(reason) => {
                    #[expect(clippy::print_stderr, reason = "the skip is said where tests print")]
                    {
                        eprintln!("skipping the PostgreSQL tests: {reason}");
                    }
                    None
                }
            })
            .as_ref()
    }

    /// Starts a new server.
    ///
    /// # Errors
    ///
    /// Why it could not be started.
    pub fn start() -> Result<Self, String> {
        let bin = binaries().ok_or_else(|| {
            "no `initdb` found (install PostgreSQL: `apt-get install postgresql`, or set \
             ORCHO_TEST_PG_BIN to its bin directory)"
                .to_owned()
        })?;
        let as_postgres = is_root();
        let dir = tempfile::Builder::new()
            .prefix("orcho-pg-test-")
            .tempdir()
            .map_err(|e| format!("cannot make a temporary directory: {e}"))?
            .keep();
        let data = dir.join("data");
        let pwfile = dir.join("pw");
        std::fs::write(&pwfile, PASSWORD).map_err(|e| e.to_string())?;
        let port = free_port().map_err(|e| format!("no free port: {e}"))?;
        let server = Self {
            bin,
            data,
            dir,
            port,
            as_postgres,
            databases: AtomicUsize::new(0),
        };
        if as_postgres {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&server.dir)
                .status()
                .map_err(|e| format!("cannot run chown: {e}"))?;
            if !status.success() {
                return Err("cannot give the temporary directory to the user `postgres`".to_owned());
            }
        }
        server.run(
            "initdb",
            &[
                "-D".as_ref(),
                server.data.as_os_str(),
                "-U".as_ref(),
                "postgres".as_ref(),
                "--pwfile".as_ref(),
                pwfile.as_os_str(),
                "--auth-host=scram-sha-256".as_ref(),
                "--auth-local=trust".as_ref(),
                "--encoding=UTF8".as_ref(),
                "--locale=C".as_ref(),
                "--no-sync".as_ref(),
                // 1 MB WAL segments (16 MB by default): the tests' WAL stays
                // a few megabytes on disk.
                "--wal-segsize=1".as_ref(),
            ],
        )?;
        server.start_again()?;
        server.watch();
        Ok(server)
    }

    /// Runs a server binary, as `postgres` when this process is root.
    fn run(&self, tool: &str, args: &[&std::ffi::OsStr]) -> Result<(), String> {
        let program = self.bin.join(tool);
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        };
        let out = command
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{tool} failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    /// Starts the server (again, after [`stop`](Self::stop)).
    ///
    /// # Errors
    ///
    /// When `pg_ctl start` fails.
    pub fn start_again(&self) -> Result<(), String> {
        let options = format!(
            // fsync off for speed; synchronous_commit stays on, so a commit
            // survives `stop` (an immediate shutdown), as the restart tests
            // need. Minimal WAL, recycled early: each new database is
            // otherwise written to the WAL whole, and a test binary makes
            // dozens.
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off \
             -c full_page_writes=off -c max_connections=200 \
             -c wal_level=minimal -c max_wal_senders=0 \
             -c max_wal_size=32MB -c min_wal_size=4MB",
            self.port,
            self.dir.display()
        );
        let log = self.dir.join("server.log");
        self.run(
            "pg_ctl",
            &[
                "-D".as_ref(),
                self.data.as_os_str(),
                "-l".as_ref(),
                log.as_os_str(),
                "-w".as_ref(),
                "-o".as_ref(),
                options.as_ref(),
                "start".as_ref(),
            ],
        )
    }

    /// Stops the server at once (connections are cut).
    ///
    /// # Errors
    ///
    /// When `pg_ctl stop` fails.
    pub fn stop(&self) -> Result<(), String> {
        self.run(
            "pg_ctl",
            &[
                "-D".as_ref(),
                self.data.as_os_str(),
                "-m".as_ref(),
                "immediate".as_ref(),
                "-w".as_ref(),
                "stop".as_ref(),
            ],
        )
    }

    /// A process that stops the server and removes its directory once this
    /// test process has ended, however it ended.
    fn watch(&self) {
        let pg_ctl = self.bin.join("pg_ctl");
        let stop = format!(
            "{} -D {} -m immediate stop",
            pg_ctl.display(),
            self.data.display()
        );
        let stop = if self.as_postgres {
            format!("runuser -u postgres -- {stop}")
        } else {
            stop
        };
        let script = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 1; done; {stop} >/dev/null 2>&1; rm -rf {dir}",
            pid = std::process::id(),
            dir = self.dir.display()
        );
        let _ = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
    }

    /// The port it listens on, on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of `database` as the superuser, with the password.
    pub fn url(&self, database: &str) -> String {
        format!(
            "postgres://postgres:{PASSWORD}@127.0.0.1:{}/{database}?sslmode=disable",
            self.port
        )
    }

    /// A new, empty database, and its URL.
    ///
    /// # Panics
    ///
    /// When it cannot be created.
    pub fn new_database(&self) -> String {
        let n = self.databases.fetch_add(1, Ordering::SeqCst);
        let name = format!("orcho_test_{}_{n}", std::process::id());
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(&name)
    }

    /// Runs `sql` in `database` with `psql`, returning its output
    /// (unaligned, tuples only).
    ///
    /// # Panics
    ///
    /// When `psql` fails.
    pub fn psql(&self, database: &str, sql: &str) -> String {
        let psql = self.bin.join("psql");
        let out = Command::new(&psql)
            .args(["-X", "-q", "-A", "-t", "-h", "127.0.0.1", "-p"])
            .arg(self.port.to_string())
            .args(["-U", "postgres", "-d", database, "-c", sql])
            .env("PGPASSWORD", PASSWORD)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", psql.display()));
        assert!(
            out.status.success(),
            "psql failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }
}
