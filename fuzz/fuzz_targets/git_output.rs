//! What git writes, read by Orcho: the index, ignore files (and git's
//! wildmatch), `status --porcelain -z`, `diff --numstat -z`, `config -z
//! --list --show-origin`, a repository's config for its object format, and
//! the fingerprint cache file. Nothing panics on any bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    match selector % 8 {
        0 => {
            let _ = orcho_receipts::fingerprint::fuzzing::git_index(rest);
        }
        1 => {
            let (file, path) = split(rest);
            let _ = orcho_receipts::fingerprint::fuzzing::ignore(b"", file, path, false);
            let _ = orcho_receipts::fingerprint::fuzzing::ignore(b"sub/", file, path, true);
        }
        2 => {
            let (pattern, text) = split(rest);
            let _ = orcho_receipts::fingerprint::fuzzing::wildmatch(pattern, text, true);
            let _ = orcho_receipts::fingerprint::fuzzing::wildmatch(pattern, text, false);
        }
        3 => {
            let _ = orcho_delivery::fuzzing::git_status(rest);
        }
        4 => {
            let _ = orcho_delivery::fuzzing::git_numstat(rest);
        }
        5 => {
            let _ = orcho_receipts::fingerprint::fuzzing::cache(rest.to_vec());
        }
        6 => {
            let _ = orcho_receipts::fingerprint::fuzzing::git_config(rest);
        }
        _ => {
            let _ = orcho_receipts::fingerprint::fuzzing::object_format(rest);
        }
    }
});

fn split(bytes: &[u8]) -> (&[u8], &[u8]) {
    match bytes.iter().position(|&b| b == 0) {
        Some(at) => (&bytes[..at], &bytes[at + 1..]),
        None => (bytes, b"a/b"),
    }
}
