//! Receivers for tests (feature `test-util`), each a Python process
//! (standard library only) on 127.0.0.1: a webhook receiver that checks
//! each request's signature itself, and an SMTP server; both record what
//! they got.

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

/// The webhook receiver's script.
const SCRIPT: &str = include_str!("receiver.py");

/// The SMTP server's script.
const SMTP_SCRIPT: &str = include_str!("smtp_receiver.py");

/// Why a receiver could not be started.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// A receiver on 127.0.0.1, stopped when dropped.
///
/// Its paths say how it answers: `/ok` 200, `/fail` 500 ("down for
/// maintenance"), `/slow` 200 after five seconds. Each request is recorded
/// as a JSON object: `path`, `event` and `delivery` (the headers),
/// `content_type`, `signed` (whether the signature held, with the secret it
/// was started with, and the timestamp is within five minutes) and `body`.
#[derive(Debug)]
pub struct Receiver {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Receiver {
    /// Starts a receiver that checks signatures with `secret`; `None`, with
    /// the reason printed, when `python3` cannot be started (outside CI:
    /// with `CI` set, that is an error).
    ///
    /// # Errors
    ///
    /// Under CI without `python3`, or when it does not come up.
    pub fn start(secret: &str) -> Result<Option<Self>, Error> {
        Self::python(SCRIPT, &[("RECEIVER_SECRET", secret)], "webhook")
    }

    /// Starts an SMTP server that records each mail as a JSON object:
    /// `from` and `to` (the envelope's) and `message` (as received); `None`
    /// as [`start`](Self::start).
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start).
    pub fn smtp() -> Result<Option<Self>, Error> {
        Self::python(SMTP_SCRIPT, &[], "mail")
    }

    #[expect(
        clippy::disallowed_methods,
        reason = "a test's receiver: the test holds the child to stop it"
    )]
    #[expect(clippy::print_stdout, reason = "the skip is said where tests print")]
    fn python(source: &str, envs: &[(&str, &str)], what: &str) -> Result<Option<Self>, Error> {
        let dir = tempfile::tempdir()?;
        let script = dir.path().join("receiver.py");
        orcho::core::fs::write_atomic(
            camino::Utf8Path::from_path(&script).ok_or("a UTF-8 temporary directory")?,
            source.as_bytes(),
        )?;
        let child = Command::new("python3")
            .arg(&script)
            .arg(dir.path().join("requests.jsonl"))
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn();
        let mut child = match child {
            Ok(child) => child,
            Err(e) => {
                let reason = format!("python3 cannot be started: {e}");
                if std::env::var_os("CI").is_some() {
                    return Err(format!("CI never skips the {what} tests: {reason}").into());
                }
                println!("skipping the {what} test: {reason}");
                return Ok(None);
            }
        };
        let mut line = String::new();
        BufReader::new(child.stdout.take().ok_or("no standard output")?).read_line(&mut line)?;
        let port = line.trim().parse()?;
        Ok(Some(Self { child, port, dir }))
    }

    /// The SMTP server's URL (plain SMTP on its port).
    pub fn smtp_url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// The URL of `path` on it.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// What it got so far, in order.
    pub fn requests(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.dir.path().join("requests.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// What it got, once `n` requests have come.
    ///
    /// # Errors
    ///
    /// When fewer came within `timeout`.
    pub fn wait_for(&self, n: usize, timeout: Duration) -> Result<Vec<serde_json::Value>, Error> {
        let deadline = Instant::now() + timeout;
        loop {
            let got = self.requests();
            if got.len() >= n {
                return Ok(got);
            }
            if Instant::now() > deadline {
                return Err(format!("{} request(s) came, not {n}: {got:#?}", got.len()).into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
