//! The phase output document: reading never panics, and a document that
//! is read says `"schema": 1`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if orcho_cli::fuzzing::phase_output(text).is_ok() {
        let value: serde_json::Value = serde_json::from_str(text).expect("a read document is JSON");
        assert_eq!(value["schema"], 1, "a read document is schema 1");
    }
});
