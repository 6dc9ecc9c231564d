//! An agent's hook document through the hook's decision (rules, guard,
//! answer), for every agent: it never panics, it answers with exit 0 (a
//! JSON object or nothing) or 2 (refused), a document that is not JSON is refused, and
//! under the read-only preset a compound shell command is never allowed.
#![no_main]

use std::sync::OnceLock;

use camino::Utf8PathBuf;
use libfuzzer_sys::fuzz_target;

/// A checkout with an `orcho.yaml`, made once.
fn checkout() -> &'static Utf8PathBuf {
    static DIR: OnceLock<(tempfile::TempDir, Utf8PathBuf)> = OnceLock::new();
    &DIR.get_or_init(|| {
        let tmp = tempfile::tempdir().expect("a temporary directory");
        let dir = Utf8PathBuf::try_from(tmp.path().to_owned()).expect("UTF-8");
        orcho_core::fs::write_atomic(
            &dir.join("orcho.yaml"),
            b"schema: 1\nname: fuzz\nphases:\n  - name: implement\n    role: implement\n",
        )
        .expect("the profile");
        (tmp, dir)
    })
    .1
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, document)) = data.split_first() else {
        return;
    };
    let read_only = selector & 1 == 1;
    let agent = selector >> 1;
    let answer = orcho_cli::fuzzing::hook(agent, checkout(), read_only, document);
    assert!(answer.code == 0 || answer.code == 2, "{answer:?}");
    if let Some(out) = &answer.stdout {
        serde_json::from_str::<serde_json::Value>(out).expect("the answer is JSON");
    }
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(document) else {
        assert!(!answer.allows(), "a document that is not JSON is never allowed");
        return;
    };
    let command = doc["tool_input"]["command"].as_str().unwrap_or_default();
    let shell = matches!(
        doc["tool_name"].as_str(),
        Some("Bash" | "shell" | "bash" | "run_shell_command")
    );
    let compound = [";", "&", "|", ">", "<", "$(", "`", "\n"]
        .iter()
        .any(|c| command.contains(c));
    if read_only && shell && compound {
        assert!(!answer.allows(), "a compound command was allowed: {command:?}");
    }
});
