//! `--phase PHASE=COMMAND`: shell words without a shell, and a program that
//! cannot start stops the run at once instead of being retried.

use crate::{
    Result,
    support::{QUICK, Repo, run_id},
};

#[test]
fn a_phase_command_is_split_into_shell_words() -> Result {
    let repo = Repo::new(QUICK)?;
    let out = repo.orcho(&[
        "run",
        "--phase",
        r#"implement=sh -c "echo 'making it pass'; touch ok""#,
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    assert_eq!(out.json()?["awaiting"], "delivery", "{out}");
    Ok(())
}

#[test]
fn an_unbalanced_quote_is_refused_before_a_run_starts() -> Result {
    let repo = Repo::new(QUICK)?;
    let out = repo.orcho(&[
        "run",
        "--phase",
        "implement=sh -c 'echo",
        "--no-interactive",
    ])?;
    out.expect_code(2);
    assert!(out.stderr.contains("unbalanced quote"), "{out}");
    assert!(!repo.dir().join(".orcho/runs").exists(), "{out}");
    Ok(())
}

#[test]
fn a_program_that_cannot_start_is_an_error_at_once() -> Result {
    let repo = Repo::new(QUICK)?;
    let out = repo.orcho(&[
        "run",
        "--phase",
        "implement=./no-such-agent.sh",
        "--no-interactive",
    ])?;
    out.expect_code(1);
    assert!(out.stderr.contains("cannot start"), "{out}");
    assert!(out.stderr.contains("orcho resume"), "{out}");
    assert_eq!(
        out.stderr.matches("running `./no-such-agent.sh`").count(),
        1,
        "{out}"
    );
    let runs: Vec<_> = std::fs::read_dir(repo.dir().join(".orcho/runs"))?.collect();
    assert_eq!(runs.len(), 1);
    let run = runs
        .into_iter()
        .next()
        .ok_or("no run")??
        .file_name()
        .to_string_lossy()
        .into_owned();
    let kinds: Vec<String> = repo
        .journal(&run)?
        .iter()
        .filter_map(|l| l["event"]["kind"].as_str().map(str::to_owned))
        .collect();
    assert!(!kinds.iter().any(|k| k == "phase_reported"), "{kinds:?}");
    // Another command, given on resume, runs the same attempt.
    let out = repo.orcho(&[
        "resume",
        &run,
        "--phase",
        "implement=touch ok",
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    assert_eq!(run_id(&out.json()?)?, run);
    assert_eq!(out.json()?["awaiting"], "delivery", "{out}");
    Ok(())
}
