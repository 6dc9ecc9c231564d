//! The `--json` documents and the text of a run from start to delivery, as
//! scripts and people see them. Run ids, temporary paths and commit ids are
//! redacted.

use crate::{
    Result,
    support::{QUICK, Repo, run_id},
};

fn pretty(out: &str) -> Result<String> {
    let doc: serde_json::Value = serde_json::from_str(out.trim())?;
    Ok(serde_json::to_string_pretty(&doc)?)
}

#[test]
fn a_run_to_its_delivery_gate() -> Result {
    let repo = Repo::new(QUICK)?;
    let out = repo.orcho(&["status", "--json"])?;
    out.expect_code(3);
    let status: serde_json::Value = out.json()?;
    assert_eq!(status["ready"], false, "{out}");

    let out = repo.orcho(&[
        "run",
        "--phase",
        "implement=touch ok",
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    let run = run_id(&out.json()?)?;
    insta::assert_snapshot!("paused_json", repo.redact(&pretty(&out.stdout)?, &run));

    let out = repo.orcho(&["inbox", "--json"])?;
    out.expect_code(0);
    insta::assert_snapshot!("inbox_json", repo.redact(&pretty(&out.stdout)?, &run));
    let out = repo.orcho(&["inbox"])?;
    insta::assert_snapshot!("inbox_text", repo.redact(&out.stdout, &run));

    let out = repo.orcho(&["delivery", "show", &run, "--json"])?;
    out.expect_code(0);
    insta::assert_snapshot!("gate_json", repo.redact(&pretty(&out.stdout)?, &run));
    let out = repo.orcho(&["delivery", "show", &run])?;
    insta::assert_snapshot!("gate_text", repo.redact(&out.stdout, &run));

    let out = repo.orcho(&["delivery", "decide", &run, "skip", "--json"])?;
    out.expect_code(0);
    insta::assert_snapshot!("decided_json", repo.redact(&pretty(&out.stdout)?, &run));
    let out = repo.orcho(&["delivery", "decide", &run, "halt", "--json"])?;
    out.expect_code(6);
    insta::assert_snapshot!("conflict_json", repo.redact(&pretty(&out.stdout)?, &run));

    let out = repo.orcho(&["resume", &run, "--json"])?;
    out.expect_code(0);
    insta::assert_snapshot!("finished_json", repo.redact(&pretty(&out.stdout)?, &run));
    Ok(())
}

#[test]
fn profile_show_json_is_one_json_document_of_the_profile() -> Result {
    let repo = Repo::new(QUICK)?;
    for args in [
        &["profile", "show", "--json"][..],
        &["--json", "profile", "show", "builtin:quick"][..],
    ] {
        let out = repo.orcho(args)?;
        out.expect_code(0);
        let doc = out.json()?;
        assert!(doc["source"].is_string(), "{args:?}: {out}");
        assert_eq!(doc["profile"]["schema"], 1, "{args:?}: {out}");
        assert!(doc["profile"]["phases"].is_array(), "{args:?}: {out}");
    }
    Ok(())
}
