//! What differs between test runs, replaced in snapshots: given strings
//! (temporary directories, run ids), hex words of 12 digits or more (commit
//! ids, digests) and RFC 3339 UTC timestamps.

/// `text` with each `(needle, label)` replaced, then hex words and
/// timestamps.
pub(crate) fn redact(text: &str, replace: &[(&str, &str)]) -> String {
    let mut text = text.to_owned();
    for (needle, label) in replace {
        if !needle.is_empty() {
            text = text.replace(needle, label);
        }
    }
    redact_hex(&redact_timestamps(&text))
}

fn redact_hex(text: &str) -> String {
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let hex = word.len() >= 12 && word.chars().all(|c| c.is_ascii_hexdigit());
        out.push_str(if hex { "[hex]" } else { word });
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

fn redact_timestamps(text: &str) -> String {
    let shape = |s: &str| {
        let b = s.as_bytes();
        b.len() >= 20
            && b[..4].iter().all(u8::is_ascii_digit)
            && b[4] == b'-'
            && b[7] == b'-'
            && b[10] == b'T'
    };
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(|c: char| c.is_ascii_digit()) {
        let (head, tail) = rest.split_at(i);
        out.push_str(head);
        if shape(tail)
            && let Some(end) = tail.find('Z')
            && tail[..end]
                .chars()
                .all(|c| c.is_ascii_digit() || "-:.T".contains(c))
        {
            out.push_str("[time]");
            rest = &tail[end + 1..];
        } else {
            let digits = tail
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(tail.len());
            out.push_str(&tail[..digits]);
            rest = &tail[digits..];
        }
    }
    out.push_str(rest);
    out
}
