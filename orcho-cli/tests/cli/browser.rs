//! The web inbox in a real browser: Debian's chromium, headless and kept
//! off the network, driven through chromedriver (WebDriver). Screenshots of
//! each page are kept under the target directory's `tmp/web-screenshots`.
//!
//! Without chromium and chromedriver here, the test says so and passes;
//! with `CI` set it fails instead.

use std::{
    net::TcpListener,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;

use crate::{
    Result,
    phase_output::{IMPLEMENTER, PROFILE},
    support::{REVIEW, Repo, Watched, paused_at_review},
    web::serve,
    web_points::{HOSTILE, hostile_planner, paused},
};

/// chromedriver on a free port, stopped when dropped.
struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

#[expect(
    clippy::disallowed_methods,
    reason = "the test starts chromedriver itself and must hold the child to stop it"
)]
#[expect(clippy::print_stdout, reason = "the skip is said where tests print")]
fn driver() -> Result<Option<Driver>> {
    if !(on_path("chromedriver") && on_path("chromium")) {
        let reason = "chromium and chromedriver are not installed (apt-get install chromium chromium-driver)";
        if std::env::var_os("CI").is_some() {
            return Err(format!("CI never skips the browser tests: {reason}").into());
        }
        println!("skipping the browser test: {reason}");
        return Ok(None);
    }
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let child = Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .arg("--allowed-ips=127.0.0.1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let driver = Driver {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            return Err("chromedriver did not start".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(Some(driver))
}

async fn browser(driver: &Driver) -> Result<Client> {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".to_owned(),
        serde_json::json!({
            "binary": "/usr/bin/chromium",
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--window-size=420,900"
            ]
        }),
    );
    Ok(ClientBuilder::new(HttpConnector::new())
        .capabilities(caps)
        .connect(&driver.url)
        .await?)
}

async fn shot(client: &Client, name: &str) -> Result {
    let dir = camino::Utf8PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("web-screenshots");
    orcho::core::fs::create_dir_all(&dir)?;
    orcho::core::fs::write_atomic(
        &dir.join(format!("{name}.png")),
        &client.screenshot().await?,
    )?;
    Ok(())
}

/// Waits (at most 20 s) for the page `client` shows to contain `text`,
/// without reloading it: the page does that itself when the store changes.
async fn until_page_has(client: &Client, text: &str) -> Result {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if client.source().await?.contains(text) {
            return Ok(());
        }
        if Instant::now() > deadline {
            shot(client, "failed").await?;
            let source = client.source().await?;
            return Err(format!("the page never showed `{text}`:\n{source}").into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Picks the option `choice` (a CSS selector), types `text` into the
/// field `field` (an id) and sends the form with `submit` (a selector).
async fn pick_and_send(
    client: &Client,
    choice: &str,
    (field, text): (&str, &str),
    submit: &str,
) -> Result {
    client.find(Locator::Css(choice)).await?.click().await?;
    client
        .find(Locator::Id(field))
        .await?
        .send_keys(text)
        .await?;
    client.find(Locator::Css(submit)).await?.click().await?;
    Ok(())
}

#[test]
fn a_handoff_decided_in_the_browser_goes_on_and_the_other_window_sees_it() -> Result {
    let Some(driver) = driver()? else {
        return Ok(());
    };
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;
    let served = serve(&repo)?;
    // The run's host waits for the decision; its review passes next time,
    // with a change to deliver.
    let host = Watched::new(repo.spawn(&[
        "resume",
        &run,
        "--wait",
        "--no-interactive",
        "--json",
        "--phase",
        "review=sh -c 'echo covered > empty-input.txt'",
    ])?)?;
    host.until("waiting for the handoff to be decided")?;

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let login = format!("{}/login?token={}", served.base, served.decide);
        let deciding = browser(&driver).await?;
        let watching = browser(&driver).await?;
        for client in [&deciding, &watching] {
            client.goto(&login).await?;
        }
        // The inbox lists the run; the second window keeps it open.
        until_page_has(&watching, &run).await?;
        shot(&watching, "inbox").await?;

        // Open the run, pick retry with feedback by keyboard and mouse.
        deciding
            .find(Locator::Css(&format!("a[href='/runs/{run}']")))
            .await?
            .click()
            .await?;
        until_page_has(&deciding, "Record the decision").await?;
        shot(&deciding, "run").await?;
        pick_and_send(
            &deciding,
            "input[value=retry_feedback]",
            ("text", "cover the empty input"),
            "button[type=submit]:not(header button)",
        )
        .await?;
        until_page_has(&deciding, "Recorded: retry_feedback").await?;
        shot(&deciding, "decided").await?;

        // The other window follows on its own: the run went on to its
        // delivery gate, and the handoff left the inbox.
        until_page_has(&watching, "release approved").await?;
        shot(&watching, "inbox-after").await?;
        assert!(!watching.source().await?.contains("phase `review` rejected"));
        deciding.close().await?;
        watching.close().await?;
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
    })?;
    // The host waits at the delivery gate now; halting it there ends the
    // run.
    repo.orcho(&["delivery", "decide", &run, "halt"])?
        .expect_code(0);
    let out = host.finish()?;
    assert_eq!(out.code(), Some(5), "{out}");
    assert!(
        out.stderr.contains("the handoff was decided elsewhere"),
        "{out}"
    );
    Ok(())
}

/// Whether the page `client` shows scrolls sideways.
async fn overflows(client: &Client) -> Result<bool> {
    let found = client
        .execute(
            "return document.documentElement.scrollWidth > document.documentElement.clientWidth;",
            vec![],
        )
        .await?;
    Ok(found.as_bool().unwrap_or(true))
}

#[test]
fn the_inbox_and_a_run_fit_a_phone_and_a_desktop_and_a_card_decides() -> Result {
    let Some(driver) = driver()? else {
        return Ok(());
    };
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;
    let served = serve(&repo)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let client = browser(&driver).await?;
        client
            .goto(&format!("{}/login?token={}", served.base, served.decide))
            .await?;
        for (width, height, name) in [(390, 844, "phone"), (1280, 800, "desktop")] {
            client.set_window_size(width, height).await?;
            client.goto(&format!("{}/", served.base)).await?;
            until_page_has(&client, "phase `review` rejected").await?;
            let source = client.source().await?;
            // A card: what waits in words, the task's line, since when,
            // and the point's actions.
            assert!(source.contains("waiting for"), "{source}");
            assert!(source.contains("value=\"halt\""), "{source}");
            assert!(source.contains("open it (retry_feedback"), "{source}");
            assert!(
                !overflows(&client).await?,
                "the inbox scrolls sideways at {width}px"
            );
            shot(&client, &format!("inbox-{name}")).await?;
            client.goto(&format!("{}/runs/{run}", served.base)).await?;
            until_page_has(&client, "Record the decision").await?;
            assert!(
                !overflows(&client).await?,
                "the run's page scrolls sideways at {width}px"
            );
            shot(&client, &format!("run-{name}")).await?;
        }
        // On the phone, the card's button decides.
        client.set_window_size(390, 844).await?;
        client.goto(&format!("{}/", served.base)).await?;
        until_page_has(&client, "phase `review` rejected").await?;
        client
            .find(Locator::Css("button[value=halt]"))
            .await?
            .click()
            .await?;
        until_page_has(&client, "halted").await?;
        client.goto(&format!("{}/", served.base)).await?;
        until_page_has(&client, "No run is waiting for a decision").await?;
        client.close().await?;
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
    })?;
    let out = repo.orcho(&["handoff", "show", &run, "--json"])?;
    out.expect_code(0);
    let shown = out.json()?;
    assert_eq!(shown["decision"]["action"], "halt", "{out}");
    Ok(())
}

/// Asks its questions first; with their answers, writes a plan of
/// [`HOSTILE`] text.
fn asking_then_planning() -> String {
    let plan = hostile_planner();
    let plan = plan.trim_start_matches("#!/bin/sh\n");
    format!(
        "#!/bin/sh\ncase \"$ORCHO_INPUT\" in\n*answers*)\n{plan};;\n*)\n\
         cat > \"$ORCHO_OUTPUT\" <<'JSON'\n\
         {{\"schema\": 1, \"questions\": [\
         {{\"header\": \"Storage\", \"question\": \"Where do results go?\", \
         \"options\": [{{\"label\": \"Files\"}}, {{\"label\": \"SQLite\"}}]}},\
         {{\"header\": \"Name\", \"question\": \"What is the module called?\"}}]}}\n\
         JSON\n;;\nesac\n"
    )
}

/// Nothing the run wrote became markup: no script but the page's own, no
/// attribute from a plan or an answer, and the text reads as written.
async fn nothing_ran(client: &Client) -> Result {
    let found = client
        .execute(
            "return [document.scripts.length, document.querySelectorAll('[onmouseover]').length, \
             typeof window.pwned, document.body.innerText];",
            vec![],
        )
        .await?;
    assert_eq!(found[0], 1, "{found}");
    assert_eq!(found[1], 0, "{found}");
    assert_eq!(found[2], "undefined", "{found}");
    assert!(
        found[3]
            .as_str()
            .is_some_and(|text| text.contains("<script>window.pwned=1</script>")),
        "{found}"
    );
    Ok(())
}

#[test]
fn questions_and_a_plan_are_decided_in_the_browser_and_nothing_from_the_run_runs() -> Result {
    let Some(driver) = driver()? else {
        return Ok(());
    };
    let repo = Repo::with_files(
        &PROFILE.replace("SUPERVISION", "  plan_approval: true"),
        &[
            ("plan.sh", &asking_then_planning()),
            ("implement.sh", IMPLEMENTER),
        ],
    )?;
    let run = paused(&repo)?;
    let served = serve(&repo)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let client = browser(&driver).await?;
        client
            .goto(&format!("{}/login?token={}", served.base, served.decide))
            .await?;
        client.goto(&format!("{}/runs/{run}", served.base)).await?;
        until_page_has(&client, "The planner asks").await?;
        shot(&client, "questions").await?;
        // An option by a click, and one's own words for the other.
        pick_and_send(
            &client,
            "input[name=q0][value=SQLite]",
            ("t1", HOSTILE),
            "main button[type=submit]",
        )
        .await?;
        until_page_has(&client, "Decided: SQLite").await?;
        nothing_ran(&client).await?;
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
    })?;

    // The planner gets its answers and writes its plan: approval waits.
    let out = repo.orcho(&["resume", &run, "--no-interactive"])?;
    assert_eq!(out.code(), Some(4), "{out}");
    runtime.block_on(async {
        let client = browser(&driver).await?;
        client
            .goto(&format!("{}/login?token={}", served.base, served.decide))
            .await?;
        client.goto(&format!("{}/runs/{run}", served.base)).await?;
        until_page_has(&client, "Approve the plan").await?;
        shot(&client, "plan").await?;
        nothing_ran(&client).await?;
        pick_and_send(
            &client,
            "input[name=q0][value=Approve]",
            ("t1", "keep it small"),
            "main button[type=submit]",
        )
        .await?;
        until_page_has(&client, "Decided: Approve (keep it small)").await?;
        shot(&client, "plan-decided").await?;
        nothing_ran(&client).await?;
        client.close().await?;
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
    })?;
    let out = repo.orcho(&["resume", &run, "--no-interactive"])?;
    assert_eq!(out.code(), Some(0), "{out}");
    Ok(())
}
