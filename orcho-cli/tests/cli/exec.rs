//! `orcho exec`: an exploratory command in the declared environment, shown,
//! logged and counted, never a receipt.

use crate::{
    Result,
    support::{QUICK, Repo},
};

#[test]
fn exec_runs_in_the_declared_environment_and_is_counted_not_proven() -> Result {
    let repo = Repo::with_files(QUICK, &[("ok", ""), ("sub/keep", "")])?;
    // From a subdirectory: it runs at the environment's working directory
    // (the checkout root), both streams shown, its exit code passed on.
    let out = repo.orcho_in(
        "sub",
        &[],
        &[
            "exec",
            "--",
            "sh",
            "-c",
            "test -f ok && echo found; echo to-err >&2; exit 7",
        ],
    )?;
    out.expect_no_panic().expect_code(7);
    assert!(out.stdout.contains("found"), "{out}");
    assert!(out.stderr.contains("to-err"), "{out}");
    assert!(
        out.stderr
            .contains("logged, not a receipt (1 exploratory command(s)"),
        "{out}"
    );

    // Counted in the readiness summary, and the receipt is still missing.
    let status = repo.orcho(&["status", "--json"])?;
    status.expect_code(3);
    let doc = status.json()?;
    assert_eq!(doc["exploratory"]["count"], 1, "{doc}");
    assert_eq!(doc["exploratory"]["authoritative"], false, "{doc}");
    assert_eq!(doc["required"][0]["status"], "missing", "{doc}");
    let text = repo.orcho(&["status"])?;
    assert!(text.stdout.contains("exploratory commands: 1"), "{text}");

    // `--json`: the log entry on stdout, the command's output on stderr.
    let out = repo.orcho(&["--json", "exec", "echo", "hello"])?;
    out.expect_code(0);
    let doc = out.json()?;
    assert_eq!(doc["argv"], serde_json::json!(["echo", "hello"]), "{out}");
    assert_eq!(doc["exit_code"], 0, "{out}");
    assert_eq!(doc["authoritative"], false, "{out}");
    assert_eq!(doc["exploratory_commands"], 2, "{out}");
    assert!(out.stderr.contains("hello"), "{out}");
    Ok(())
}

#[test]
fn exec_refuses_an_undeclared_environment_and_explains_a_missing_program() -> Result {
    let repo = Repo::new(QUICK)?;
    let out = repo.orcho(&["exec", "--env", "nope", "true"])?;
    out.expect_no_panic().expect_code(1);
    assert!(
        out.stderr
            .contains("the profile declares no environment `nope`"),
        "{out}"
    );
    assert!(out.stderr.contains("hint:"), "{out}");
    let out = repo.orcho(&["exec", "no-such-program-here"])?;
    // As a shell says it.
    out.expect_no_panic().expect_code(127);
    assert!(out.stderr.contains("could not be started"), "{out}");
    // Nothing to run is a usage error.
    repo.orcho(&["exec"])?.expect_code(2);
    Ok(())
}
