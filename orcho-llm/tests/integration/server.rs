//! An HTTP/1.1 server on 127.0.0.1 with a script of canned answers: it
//! accepts one connection per answer, captures each request, waits if told
//! to, and answers. It stops by itself when the script is done, or gives up
//! accepting after a few seconds.

use std::{
    io::{Read, Write},
    net::{TcpListener, TcpStream},
    sync::mpsc,
    thread,
    time::{Duration, Instant},
};

/// How long the server waits for a connection, and for a request's bytes.
const PATIENCE: Duration = Duration::from_secs(10);

/// The answer the server gives.
#[derive(Debug, Clone)]
pub(crate) struct Canned {
    status: u16,
    body: String,
    delay: Duration,
    retry_after: Option<u64>,
}

impl Canned {
    /// An answer with `status` and a JSON `body`.
    pub(crate) fn new(status: u16, body: impl Into<String>) -> Self {
        Self {
            status,
            body: body.into(),
            delay: Duration::ZERO,
            retry_after: None,
        }
    }

    /// Sends `Retry-After: <secs>`.
    pub(crate) fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs);
        self
    }

    /// A 200 answer.
    pub(crate) fn ok(body: impl Into<String>) -> Self {
        Self::new(200, body)
    }

    /// Waits `delay` after reading the request before answering.
    pub(crate) fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// A request as the server read it.
#[derive(Debug)]
pub(crate) struct Captured {
    /// The request line, such as `POST /v1/chat/completions HTTP/1.1`.
    pub(crate) request_line: String,
    /// Header names (lowercased) and values.
    pub(crate) headers: Vec<(String, String)>,
    /// The body.
    pub(crate) body: String,
}

impl Captured {
    /// The value of header `name` (case-insensitive).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A running one-shot server.
#[derive(Debug)]
pub(crate) struct Server {
    /// `http://127.0.0.1:<port>/v1`.
    pub(crate) base_url: String,
    requests: mpsc::Receiver<Captured>,
}

impl Server {
    /// Starts a server that answers one request with `canned`.
    pub(crate) fn start(canned: Canned) -> Self {
        Self::script(vec![canned])
    }

    /// Starts a server that answers requests with `script`, in order.
    pub(crate) fn script(script: Vec<Canned>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = listener.local_addr().expect("local address").port();
        let (tx, requests) = mpsc::channel();
        thread::spawn(move || {
            for canned in script {
                let Some(mut stream) = accept(&listener) else {
                    return;
                };
                let Some(captured) = read_request(&mut stream) else {
                    return;
                };
                let _ = tx.send(captured);
                thread::sleep(canned.delay);
                let reason = match canned.status {
                    200 => "OK",
                    401 => "Unauthorized",
                    429 => "Too Many Requests",
                    500 => "Internal Server Error",
                    _ => "Whatever",
                };
                let retry = canned
                    .retry_after
                    .map(|s| format!("Retry-After: {s}\r\n"))
                    .unwrap_or_default();
                let response = format!(
                    "HTTP/1.1 {} {reason}\r\nContent-Type: application/json\r\n{retry}Content-Length: {}\r\nConnection: close\r\n\r\n{}",
                    canned.status,
                    canned.body.len(),
                    canned.body
                );
                // The client may have given up (the timeout test).
                let _ = stream.write_all(response.as_bytes());
                let _ = stream.flush();
            }
        });
        Self {
            base_url: format!("http://127.0.0.1:{port}/v1"),
            requests,
        }
    }

    /// The request the server received.
    pub(crate) fn request(&self) -> Captured {
        self.requests
            .recv_timeout(PATIENCE)
            .expect("the server received a request")
    }
}

fn accept(listener: &TcpListener) -> Option<TcpStream> {
    listener.set_nonblocking(true).ok()?;
    let deadline = Instant::now() + PATIENCE;
    while Instant::now() < deadline {
        match listener.accept() {
            Ok((stream, _)) => {
                stream.set_nonblocking(false).ok()?;
                stream.set_read_timeout(Some(PATIENCE)).ok()?;
                return Some(stream);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(5));
            }
            Err(_) => return None,
        }
    }
    None
}

fn read_request(stream: &mut TcpStream) -> Option<Captured> {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        bytes.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8(bytes[..head_end].to_vec()).ok()?;
    let mut lines = head.split("\r\n");
    let request_line = lines.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = bytes[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&buf[..n]);
    }
    Some(Captured {
        request_line,
        headers,
        body: String::from_utf8(body).ok()?,
    })
}
