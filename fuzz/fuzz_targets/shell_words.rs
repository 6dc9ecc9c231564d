//! The hook's readers of shell command lines: the simple-command reader
//! (what a phase's agent may run as `orcho report`) and the guard's words
//! and directories. They never panic; a simple command quoted back and
//! read again gives the same words; the guard looks up no more
//! directories than the command changes into, plus the agent's.
#![no_main]

use camino::Utf8Path;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(command) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(words) = orcho_cli::fuzzing::simple_words(command)
        && let Ok(joined) = shlex::try_join(words.iter().map(String::as_str))
    {
        assert_eq!(
            orcho_cli::fuzzing::simple_words(&joined).as_ref(),
            Some(&words),
            "{joined:?}"
        );
    }
    let (_, dirs) = orcho_cli::fuzzing::guard_reads(command, Utf8Path::new("/work"));
    let cds = command.matches("cd").count();
    assert!(dirs.len() <= cds + 1, "{dirs:?}");
});
