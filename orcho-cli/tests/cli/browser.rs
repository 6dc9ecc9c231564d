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
    support::{REVIEW, Repo, Watched, paused_at_review},
    web::serve,
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

#[test]
fn a_handoff_decided_in_the_browser_goes_on_and_the_other_window_sees_it() -> Result {
    let Some(driver) = driver()? else {
        return Ok(());
    };
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;
    let served = serve(&repo)?;
    // The run's host waits for the decision; its review passes next time.
    let host = Watched::new(repo.spawn(&[
        "resume",
        &run,
        "--wait",
        "--no-interactive",
        "--json",
        "--phase",
        "review=true",
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
            .find(Locator::LinkText(&run))
            .await?
            .click()
            .await?;
        until_page_has(&deciding, "Record the decision").await?;
        shot(&deciding, "run").await?;
        deciding
            .find(Locator::Css("input[value=retry_feedback]"))
            .await?
            .click()
            .await?;
        deciding
            .find(Locator::Id("text"))
            .await?
            .send_keys("cover the empty input")
            .await?;
        deciding
            .find(Locator::Css("button[type=submit]:not(header button)"))
            .await?
            .click()
            .await?;
        until_page_has(&deciding, "Recorded: retry_feedback").await?;
        shot(&deciding, "decided").await?;

        // The other window follows on its own: the run went on to its
        // delivery gate, and the handoff left the inbox.
        until_page_has(&watching, "delivery").await?;
        shot(&watching, "inbox-after").await?;
        assert!(!watching.source().await?.contains("review: verdict"));
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
