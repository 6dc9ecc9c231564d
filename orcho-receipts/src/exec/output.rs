//! Captured output: a redacted log file with its digest, and a bounded tail.

use std::{
    collections::VecDeque,
    fs::File,
    io::{self, BufWriter, Write},
};

use camino::{Utf8Path, Utf8PathBuf};
use orcho_core::Digest;

/// What replaces a secret value in logs and tails.
pub const REDACTED: &str = "[redacted]";

/// The context of log digests.
pub(crate) const LOG_DIGEST_CONTEXT: &str = "orcho command log v1";

/// A full log written to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LogFile {
    /// Where it is.
    pub path: Utf8PathBuf,
    /// The digest of its bytes (context `"orcho command log v1"`).
    pub digest: Digest,
}

/// One output stream of a finished command.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct CapturedOutput {
    /// The last bytes of the (redacted) stream, at most the request's
    /// `tail_bytes`.
    pub tail: Vec<u8>,
    /// How many bytes the (redacted) stream had in all.
    pub total_bytes: u64,
    /// The full log, when the request asked for one.
    pub log: Option<LogFile>,
    /// The whole stream, when the request asked to keep it and it fit.
    pub kept: Option<Vec<u8>>,
}

impl CapturedOutput {
    /// The tail as text, with invalid UTF-8 replaced and the terminal's
    /// escape sequences (colours, hyperlinks, cursor moves) left out:
    /// what Orcho keeps and shows of a command's output.
    pub fn tail_lossy(&self) -> String {
        without_escapes(&String::from_utf8_lossy(&self.tail))
    }

    /// Whether the tail is all of the output.
    pub fn is_complete(&self) -> bool {
        self.total_bytes == self.tail.len() as u64
    }
}

/// `text` without the terminal's escape sequences: CSI (`ESC [ … final`,
/// colours and cursor moves), OSC (`ESC ] … BEL` or `ESC ] … ESC \`,
/// titles and hyperlinks) and the other two-character escapes; `\r\n`
/// becomes `\n`.
///
/// ```
/// use orcho_receipts::exec::without_escapes;
///
/// let vitest = "\u{1b}[31m FAIL \u{1b}[39m src/a.test.ts > parse\r\n";
/// assert_eq!(without_escapes(vitest), " FAIL  src/a.test.ts > parse\n");
/// let link = "\u{1b}]8;;file:///a.rs\u{1b}\\a.rs\u{1b}]8;;\u{1b}\\:3";
/// assert_eq!(without_escapes(link), "a.rs:3");
/// ```
pub fn without_escapes(text: &str) -> String {
    if !text.contains('\u{1b}') && !text.contains("\r\n") {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                // CSI: parameters and intermediates, then a final byte.
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC (and the other strings): up to BEL or ST (ESC \).
                Some(']' | 'P' | '^' | '_' | 'X') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                // A two-character escape (ESC c, ESC =, …).
                Some(_) | None => {}
            },
            '\r' if chars.peek() == Some(&'\n') => {}
            c => out.push(c),
        }
    }
    out
}

/// Replaces secret values in a stream that arrives in chunks, holding back
/// just enough bytes to catch a secret split across two chunks.
#[derive(Debug)]
pub(crate) struct Redactor {
    secrets: Vec<Vec<u8>>,
    first: [bool; 256],
    pending: Vec<u8>,
}

impl Redactor {
    pub(crate) fn new(secrets: &[Vec<u8>]) -> Self {
        let mut secrets: Vec<Vec<u8>> = secrets.iter().filter(|s| !s.is_empty()).cloned().collect();
        // Longest first, so a secret that contains another is redacted whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        let mut first = [false; 256];
        for s in &secrets {
            first[usize::from(s[0])] = true;
        }
        Self {
            secrets,
            first,
            pending: Vec::new(),
        }
    }

    fn is_noop(&self) -> bool {
        self.secrets.is_empty()
    }

    /// Feeds a chunk; the redacted bytes that are final go to `out`.
    pub(crate) fn push(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        if self.is_noop() {
            out.extend_from_slice(chunk);
            return;
        }
        self.pending.extend_from_slice(chunk);
        let buf = std::mem::take(&mut self.pending);
        self.scan(&buf, out, false);
    }

    /// Flushes what was held back at the end of the stream.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>) {
        let buf = std::mem::take(&mut self.pending);
        self.scan(&buf, out, true);
    }

    fn scan(&mut self, buf: &[u8], out: &mut Vec<u8>, at_end: bool) {
        let mut i = 0;
        let mut start = 0;
        'bytes: while i < buf.len() {
            if !self.first[usize::from(buf[i])] {
                i += 1;
                continue;
            }
            let rest = &buf[i..];
            // Longest first: a longer secret that may still complete wins
            // over a shorter one that matches already.
            for s in &self.secrets {
                if rest.len() >= s.len() {
                    if rest.starts_with(s) {
                        out.extend_from_slice(&buf[start..i]);
                        out.extend_from_slice(REDACTED.as_bytes());
                        i += s.len();
                        start = i;
                        continue 'bytes;
                    }
                } else if !at_end && s.starts_with(rest) {
                    out.extend_from_slice(&buf[start..i]);
                    self.pending = rest.to_vec();
                    return;
                }
            }
            i += 1;
        }
        out.extend_from_slice(&buf[start..]);
    }
}

/// Where one stream goes while the command runs.
#[derive(Debug)]
pub(crate) struct Sink {
    log: Option<(Utf8PathBuf, BufWriter<File>)>,
    hasher: blake3::Hasher,
    tail: VecDeque<u8>,
    tail_cap: usize,
    total: u64,
    keep: Option<(Vec<u8>, usize)>,
    kept_overflow: bool,
    redactor: Redactor,
    scratch: Vec<u8>,
}

impl Sink {
    pub(crate) fn new(
        log: Option<&Utf8Path>,
        tail_cap: usize,
        keep: Option<usize>,
        secrets: &[Vec<u8>],
    ) -> io::Result<Self> {
        let log = match log {
            Some(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_str().is_empty()) {
                    std::fs::create_dir_all(dir)?;
                }
                Some((
                    path.to_owned(),
                    BufWriter::with_capacity(64 * 1024, File::create(path)?),
                ))
            }
            None => None,
        };
        Ok(Self {
            log,
            hasher: blake3::Hasher::new_derive_key(LOG_DIGEST_CONTEXT),
            tail: VecDeque::new(),
            tail_cap,
            total: 0,
            keep: keep.map(|limit| (Vec::new(), limit)),
            kept_overflow: false,
            redactor: Redactor::new(secrets),
            scratch: Vec::new(),
        })
    }

    /// Takes a chunk; `observe` sees the redacted bytes that are final.
    pub(crate) fn write(&mut self, chunk: &[u8], observe: &mut dyn FnMut(&[u8])) -> io::Result<()> {
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        self.redactor.push(chunk, &mut out);
        if !out.is_empty() {
            observe(&out);
        }
        let result = self.emit(&out);
        self.scratch = out;
        result
    }

    fn emit(&mut self, bytes: &[u8]) -> io::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        self.total += bytes.len() as u64;
        if let Some((_, w)) = &mut self.log {
            w.write_all(bytes)?;
            self.hasher.update(bytes);
        }
        if let Some((kept, limit)) = &mut self.keep
            && !self.kept_overflow
        {
            if kept.len() + bytes.len() > *limit {
                self.kept_overflow = true;
                *kept = Vec::new();
            } else {
                kept.extend_from_slice(bytes);
            }
        }
        if self.tail_cap > 0 {
            let take = bytes.len().min(self.tail_cap);
            self.tail.extend(&bytes[bytes.len() - take..]);
            if self.tail.len() > self.tail_cap {
                let excess = self.tail.len() - self.tail_cap;
                self.tail.drain(..excess);
            }
        }
        Ok(())
    }

    pub(crate) fn finish(mut self, observe: &mut dyn FnMut(&[u8])) -> io::Result<CapturedOutput> {
        let mut rest = Vec::new();
        self.redactor.finish(&mut rest);
        if !rest.is_empty() {
            observe(&rest);
        }
        self.emit(&rest)?;
        let log = match self.log.take() {
            Some((path, w)) => {
                let file = w.into_inner().map_err(io::IntoInnerError::into_error)?;
                file.sync_data()?;
                Some(LogFile {
                    path,
                    digest: Digest::from_blake3(self.hasher.finalize()),
                })
            }
            None => None,
        };
        Ok(CapturedOutput {
            tail: self.tail.into_iter().collect(),
            total_bytes: self.total,
            log,
            kept: match self.keep {
                Some((kept, _)) if !self.kept_overflow => Some(kept),
                _ => None,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn redact_in_chunks(secrets: &[&str], input: &[u8], chunk: usize) -> Vec<u8> {
        let secrets: Vec<Vec<u8>> = secrets.iter().map(|s| s.as_bytes().to_vec()).collect();
        let mut r = Redactor::new(&secrets);
        let mut out = Vec::new();
        for c in input.chunks(chunk.max(1)) {
            r.push(c, &mut out);
        }
        r.finish(&mut out);
        out
    }

    #[test]
    fn secrets_split_across_chunks_are_redacted() {
        let input = b"token=hunter2 and hunter2hunter2 but hunter";
        for chunk in 1..input.len() {
            assert_eq!(
                redact_in_chunks(&["hunter2"], input, chunk),
                b"token=[redacted] and [redacted][redacted] but hunter",
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn a_shorter_secret_is_redacted_at_the_end_of_the_stream() {
        assert_eq!(
            redact_in_chunks(&["abc", "abcdef"], b"x abcd", 2),
            b"x [redacted]d"
        );
    }

    #[test]
    fn longer_secret_wins() {
        assert_eq!(
            redact_in_chunks(&["abc", "abcdef"], b"xabcdefx abcx", 3),
            b"x[redacted]x [redacted]x"
        );
    }

    proptest! {
        #[test]
        fn chunking_never_changes_the_result(
            input in proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), Just(b'c')], 0..200),
            chunk in 1usize..20,
        ) {
            let whole = redact_in_chunks(&["abca", "bb"], &input, input.len().max(1));
            let shown = String::from_utf8(whole.clone()).unwrap().replace(REDACTED, "#");
            prop_assert!(!shown.contains("abca") && !shown.contains("bb"));
            prop_assert_eq!(redact_in_chunks(&["abca", "bb"], &input, chunk), whole);
        }
    }

    #[test]
    fn tail_is_bounded() {
        let mut sink = Sink::new(None, 10, None, &[]).unwrap();
        for _ in 0..1000 {
            sink.write(b"0123456789abcdef", &mut |_| {}).unwrap();
        }
        sink.write(b"xyz", &mut |_| {}).unwrap();
        let out = sink.finish(&mut |_| {}).unwrap();
        assert_eq!(out.tail, b"9abcdefxyz");
        assert_eq!(out.total_bytes, 16_003);
        assert!(out.log.is_none());
    }
}
