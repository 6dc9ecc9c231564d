//! A journal whose last bytes are anything (a torn line, garbage, more
//! lines): reading never panics, and when it reads, every record written
//! before comes back first, in order.
#![no_main]

use camino::Utf8Path;
use libfuzzer_sys::fuzz_target;
use orcho_core::SchemaVersion;

fuzz_target!(|data: &[u8]| {
    // Lines as the journal writes them: `schema` first.
    let lines: Vec<String> = (1..=3)
        .map(|seq| format!(r#"{{"schema":1,"seq":{seq},"event":{{"kind":"x"}}}}"#))
        .collect();
    let written: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    let mut bytes = Vec::new();
    for line in &lines {
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(data);
    if let Ok(read) = orcho_core::fs::parse_journal::<serde_json::Value>(
        &bytes,
        SchemaVersion::new(1),
        Utf8Path::new("journal.jsonl"),
    ) {
        assert!(read.records.len() >= written.len(), "a record was lost");
        assert_eq!(&read.records[..written.len()], &written[..]);
    }
});
