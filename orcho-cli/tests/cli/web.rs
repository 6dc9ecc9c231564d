//! `orcho serve`: the web inbox and its JSON API, served by the real
//! binary on a free port, asked over HTTP.

use crate::{
    Result,
    support::{REVIEW, Repo, Watched, paused_at_review},
};

/// A server for `repo`, and the tokens it knows.
pub(crate) struct Served {
    pub(crate) base: String,
    pub(crate) decide: String,
    pub(crate) read_only: String,
    server: Option<Watched>,
}

impl Served {
    /// The server process, to stop it by hand.
    pub(crate) fn take_server(&mut self) -> Option<Watched> {
        self.server.take()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            let _ = server.kill();
        }
    }
}

fn token(repo: &Repo, name: &str, read_only: bool) -> Result<String> {
    let mut args = vec!["serve", "token", "add", name, "--json"];
    if read_only {
        args.push("--read-only");
    }
    let out = repo.orcho(&args)?;
    out.expect_code(0);
    Ok(out.json()?["token"].as_str().ok_or("no token")?.to_owned())
}

/// Tokens for `alice` (decides) and `bob` (looks), and `orcho serve` on a
/// free port.
pub(crate) fn serve(repo: &Repo) -> Result<Served> {
    serve_with(repo, &[])
}

/// [`serve`], with `envs` in the server's environment.
pub(crate) fn serve_with(repo: &Repo, envs: &[(&str, &str)]) -> Result<Served> {
    let decide = token(repo, "alice", false)?;
    let read_only = token(repo, "bob", true)?;
    let server = Watched::new(repo.spawn_with(envs, &["serve", "--listen", "127.0.0.1:0"])?)?;
    let line = server.until("serving the inbox at ")?;
    let base = line
        .split("serving the inbox at ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .ok_or("no address")?
        .trim_end_matches('/')
        .to_owned();
    Ok(Served {
        base,
        decide,
        read_only,
        server: Some(server),
    })
}

pub(crate) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into()
}

pub(crate) fn status(response: &ureq::http::Response<ureq::Body>) -> u16 {
    response.status().as_u16()
}

#[test]
fn the_api_answers_as_the_cli_and_refuses_what_it_must() -> Result {
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;
    let served = serve(&repo)?;
    let http = agent();
    let url = |path: &str| format!("{}{path}", served.base);
    let bearer = |t: &str| format!("Bearer {t}");

    // No token, or a wrong one: 401; the token never shows in the answer.
    assert_eq!(status(&http.get(url("/api/inbox")).call()?), 401);
    assert_eq!(status(&http.get(url("/")).call()?), 401);
    let wrong = http
        .get(url("/api/inbox"))
        .header("Authorization", bearer("orcho_nope"))
        .call()?;
    assert_eq!(status(&wrong), 401);

    // The inbox is the document `orcho inbox --json` prints.
    let mut answer = http
        .get(url("/api/inbox"))
        .header("Authorization", bearer(&served.read_only))
        .call()?;
    assert_eq!(status(&answer), 200);
    let inbox: serde_json::Value = serde_json::from_str(&answer.body_mut().read_to_string()?)?;
    let cli = repo.orcho(&["inbox", "--json"])?.json()?;
    assert_eq!(inbox, cli);

    // A run that does not exist: 404; a run: its view and evidence.
    let missing = http
        .get(url("/api/runs/20260101T000000000Z-0000000000000000"))
        .header("Authorization", bearer(&served.read_only))
        .call()?;
    assert_eq!(status(&missing), 404);
    let mut shown = http
        .get(url(&format!("/api/runs/{run}")))
        .header("Authorization", bearer(&served.read_only))
        .call()?;
    let shown: serde_json::Value = serde_json::from_str(&shown.body_mut().read_to_string()?)?;
    assert_eq!(shown["run"]["status"], "awaiting_phase_handoff", "{shown}");
    assert_eq!(
        shown["evidence"]["handoffs"][0]["id"], "0001-review",
        "{shown}"
    );

    // A read-only token may not decide: 403, and nothing is recorded.
    let decide = format!("/api/runs/{run}/decisions/handoff");
    let refused = http
        .post(url(&decide))
        .header("Authorization", bearer(&served.read_only))
        .header("Content-Type", "application/json")
        .send(serde_json::json!({"action": "halt"}).to_string())?;
    assert_eq!(status(&refused), 403);
    // Feedback required where it is: 400, with what to do.
    let mut bad = http
        .post(url(&decide))
        .header("Authorization", bearer(&served.decide))
        .header("Content-Type", "application/json")
        .send(serde_json::json!({"action": "retry_feedback"}).to_string())?;
    assert_eq!(status(&bad), 400);
    assert!(bad.body_mut().read_to_string()?.contains("hint"));
    // A body larger than any decision: 413. (Just over the limit: the
    // server answers before it reads, and a body larger than the socket's
    // buffers would end in a broken pipe on this side instead.)
    let huge = http
        .post(url(&decide))
        .header("Authorization", bearer(&served.decide))
        .header("Content-Type", "application/json")
        .send(
            serde_json::json!({"action": "retry_feedback", "text": "x".repeat(70_000)}).to_string(),
        )?;
    assert_eq!(status(&huge), 413);

    // A decision, recorded as the token's person; again is a replay; a
    // different one is a conflict.
    let ok = http
        .post(url(&decide))
        .header("Authorization", bearer(&served.decide))
        .header("Content-Type", "application/json")
        .send(
            serde_json::json!({"action": "retry_feedback", "text": "cover the empty input"})
                .to_string(),
        )?;
    assert_eq!(status(&ok), 200);
    let again = http
        .post(url(&decide))
        .header("Authorization", bearer(&served.decide))
        .header("Content-Type", "application/json")
        .send(
            serde_json::json!({"action": "retry_feedback", "text": "cover the empty input"})
                .to_string(),
        )?;
    assert_eq!(status(&again), 200);
    let other = http
        .post(url(&decide))
        .header("Authorization", bearer(&served.decide))
        .header("Content-Type", "application/json")
        .send(serde_json::json!({"action": "halt"}).to_string())?;
    assert_eq!(status(&other), 409);
    let log = repo.orcho(&["log", &run, "--json"])?.json()?;
    assert_eq!(log["decisions"][0]["by"], "alice (web)", "{log}");
    Ok(())
}

#[test]
fn pages_need_a_session_and_forms_their_csrf_token() -> Result {
    let repo = Repo::new(REVIEW)?;
    let out = repo.orcho(&[
        "run",
        "--task",
        "<script>alert('task')</script>\" onmouseover=\"alert(1)",
        "--phase",
        "review=false",
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    let run = crate::support::run_id(&out.json()?)?;
    let served = serve(&repo)?;
    let http = agent();
    let url = |path: &str| format!("{}{path}", served.base);

    // The login link sets an HttpOnly, SameSite=Strict cookie, on a page
    // that goes on to the inbox (a redirect from another site would not
    // carry the cookie).
    let login = http
        .get(url(&format!("/login?token={}", served.decide)))
        .call()?;
    assert_eq!(status(&login), 200);
    let cookie = login
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .ok_or("no cookie")?
        .to_owned();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert!(!cookie.contains("Secure"), "plain HTTP: {cookie}");
    let session = cookie.split(';').next().ok_or("no session")?.to_owned();
    // Behind a proxy that speaks TLS, the cookie is Secure.
    let proxied = http
        .get(url(&format!("/login?token={}", served.decide)))
        .header("X-Forwarded-Proto", "https")
        .call()?;
    let secure = proxied
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert!(secure.contains("; Secure"), "{secure}");

    // The run's page: the task escaped, no inline script allowed.
    let mut page = http
        .get(url(&format!("/runs/{run}")))
        .header("Cookie", &session)
        .call()?;
    assert_eq!(status(&page), 200);
    let csp = page
        .headers()
        .get("content-security-policy")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(csp.contains("script-src 'self'"), "{csp}");
    let html = page.body_mut().read_to_string()?;
    assert!(!html.contains("<script>alert"), "the task is escaped");
    assert!(html.contains("&lt;script&gt;alert"), "{html}");
    assert!(!html.contains("\" onmouseover=\""), "{html}");
    let csrf = html
        .split("name=\"csrf\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .ok_or("no CSRF token in the form")?
        .to_owned();

    // A form without its CSRF token: 403; with it, recorded.
    let form = format!("/runs/{run}/decisions/handoff");
    let forged = http
        .post(url(&form))
        .header("Cookie", &session)
        .send_form([("action", "halt")])?;
    assert_eq!(status(&forged), 403);
    let decided = http
        .post(url(&form))
        .header("Cookie", &session)
        .send_form([
            ("csrf", csrf.as_str()),
            ("action", "retry_feedback"),
            ("text", "try again"),
        ])?;
    assert_eq!(status(&decided), 303);
    let mut after = http
        .get(url(&format!("/runs/{run}")))
        .header("Cookie", &session)
        .call()?;
    assert!(
        after
            .body_mut()
            .read_to_string()?
            .contains("Decided retry_feedback by alice (web)")
    );

    // Nobody puts words on the page with a link: only a known action is
    // said.
    let mut forged = http
        .get(url(&format!(
            "/runs/{run}?decided=visit+evil.example&said=visit+evil.example"
        )))
        .header("Cookie", &session)
        .call()?;
    assert!(!forged.body_mut().read_to_string()?.contains("evil.example"));

    // Removing the token ends the sessions it opened.
    repo.orcho(&["serve", "token", "remove", "alice"])?
        .expect_code(0);
    let gone = http.get(url("/")).header("Cookie", &session).call()?;
    assert_eq!(status(&gone), 401);
    Ok(())
}

#[test]
fn api_refusals_are_json_documents() -> Result {
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;
    let served = serve(&repo)?;
    let http = agent();
    let decide = format!("{}/api/runs/{run}/decisions/handoff", served.base);
    let read = |mut r: ureq::http::Response<ureq::Body>| -> Result<(u16, serde_json::Value)> {
        let code = status(&r);
        Ok((code, serde_json::from_str(&r.body_mut().read_to_string()?)?))
    };
    let (code, doc) = read(http.get(format!("{}/api/inbox", served.base)).call()?)?;
    assert_eq!(code, 401);
    assert!(
        doc["hint"]
            .as_str()
            .is_some_and(|h| h.contains("token add")),
        "{doc}"
    );
    for body in ["{\"action\": ", "{\"action\": \"halt\", \"bogus\": 1}"] {
        let (code, doc) = read(
            http.post(&decide)
                .header("Authorization", format!("Bearer {}", served.decide))
                .header("Content-Type", "application/json")
                .send(body)?,
        )?;
        assert_eq!(code, 400, "{doc}");
        assert!(doc["error"].is_string() && doc["hint"].is_string(), "{doc}");
    }
    let (code, doc) = read(
        http.post(&decide)
            .header("Authorization", format!("Bearer {}", served.decide))
            .header("Content-Type", "application/json")
            .send("{\"action\": \"retry_feedback\"}")?,
    )?;
    assert_eq!(code, 400, "{doc}");
    assert!(
        doc["hint"]
            .as_str()
            .is_some_and(|h| h.contains("needs its text")),
        "{doc}"
    );
    Ok(())
}

#[test]
fn ctrl_c_stops_the_server_with_a_live_page_open() -> Result {
    use std::io::{Read, Write};
    let repo = Repo::new(REVIEW)?;
    let mut served = serve(&repo)?;
    // A page's live stream, held open.
    let address = served.base.trim_start_matches("http://").to_owned();
    let mut stream = std::net::TcpStream::connect(&address)?;
    write!(
        stream,
        "GET /events HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {}\r\n\r\n",
        served.read_only
    )?;
    let mut head = [0u8; 64];
    let n = stream.read(&mut head)?;
    assert!(String::from_utf8_lossy(&head[..n]).starts_with("HTTP/1.1 200"));
    let server = served.take_server().ok_or("no server")?;
    server.interrupt()?;
    let out = server.finish()?;
    assert_eq!(out.code(), Some(0), "{out}");
    Ok(())
}

/// Ctrl-C the instant the server says it is up stops it as gracefully as
/// later: it listens for Ctrl-C before it says so.
#[test]
fn ctrl_c_right_after_the_server_is_up_stops_it_gracefully() -> Result {
    for _ in 0..5 {
        let repo = Repo::new(REVIEW)?;
        let mut served = serve(&repo)?;
        let server = served.take_server().ok_or("no server")?;
        server.interrupt()?;
        let out = server.finish()?;
        assert_eq!(out.code(), Some(0), "{out}");
    }
    Ok(())
}

#[test]
fn a_reachable_address_without_tls_is_refused_unless_said() -> Result {
    let repo = Repo::new(REVIEW)?;
    let out = repo.orcho(&["serve", "--listen", "0.0.0.0:0"])?;
    out.expect_code(2);
    assert!(out.stderr.contains("--insecure-listen"), "{out}");
    // Said, it serves there, with a warning.
    let server =
        Watched::new(repo.spawn(&["serve", "--listen", "0.0.0.0:0", "--insecure-listen"])?)?;
    server.until("serving the inbox at http://0.0.0.0:")?;
    server.until("warning: serving plain HTTP to other machines")?;
    server.kill()?;
    Ok(())
}

#[test]
fn the_delivery_gate_is_decided_from_the_page_and_the_api() -> Result {
    let repo = Repo::new(crate::support::QUICK)?;
    let out = repo.orcho(&[
        "run",
        "--phase",
        "implement=sh -c 'touch ok && echo run > notes.txt'",
        "--no-interactive",
        "--json",
    ])?;
    out.expect_code(4);
    let run = crate::support::run_id(&out.json()?)?;
    let served = serve(&repo)?;
    let http = agent();
    let url = |path: &str| format!("{}{path}", served.base);
    let login = http
        .get(url(&format!("/login?token={}", served.decide)))
        .call()?;
    let session = login
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .ok_or("no cookie")?
        .to_owned();
    // The page offers the gate's actions, with the patch it shows.
    let mut page = http
        .get(url(&format!("/runs/{run}")))
        .header("Cookie", &session)
        .call()?;
    let html = page.body_mut().read_to_string()?;
    assert!(html.contains("Decide the delivery"), "{html}");
    assert!(html.contains("value=\"approve\"") && html.contains("name=\"patch_digest\""));
    // The diff first, with its files and counts, coloured; then the form.
    let diff = html.find("file(s) changed").ok_or("the diff's summary")?;
    let form = html.find("value=\"approve\"").ok_or("the form")?;
    assert!(diff < form, "the diff comes before the form: {html}");
    assert!(html.contains("<span class=\"add\">+"), "{html}");
    // A decision pinned to another patch is refused; the gate's own is
    // recorded as the token's person.
    let decide = url(&format!("/api/runs/{run}/decisions/delivery"));
    let post = |body: String| {
        http.post(&decide)
            .header("Authorization", format!("Bearer {}", served.decide))
            .header("Content-Type", "application/json")
            .send(body)
    };
    let stale =
        post(serde_json::json!({"action": "approve", "patch_digest": "0".repeat(64)}).to_string())?;
    assert_ne!(status(&stale), 200);
    let ok = post(serde_json::json!({"action": "skip", "note": "not this one"}).to_string())?;
    assert_eq!(status(&ok), 200);
    let log = repo.orcho(&["log", &run, "--json"])?.json()?;
    let last = log["decisions"]
        .as_array()
        .and_then(|d| d.last())
        .ok_or("no decision")?;
    assert_eq!(last["action"], "skip", "{log}");
    assert_eq!(last["by"], "alice (web)", "{log}");
    let mut page = http
        .get(url(&format!("/runs/{run}")))
        .header("Cookie", &session)
        .call()?;
    assert!(
        page.body_mut()
            .read_to_string()?
            .contains("Decided skip by alice (web)")
    );
    Ok(())
}

#[test]
fn no_token_ever_shows_in_the_servers_output() -> Result {
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;
    // Asked to say everything it would, as a user chasing a problem might.
    let mut served = serve_with(&repo, &[("RUST_LOG", "trace"), ("RUST_BACKTRACE", "1")])?;
    let http = agent();
    let url = |path: &str| format!("{}{path}", served.base);
    let wrong = "orcho_0123456789abcdef0123456789abcdef";
    for token in [served.decide.as_str(), served.read_only.as_str(), wrong] {
        let bearer = format!("Bearer {token}");
        http.get(url("/api/inbox"))
            .header("Authorization", &bearer)
            .call()?;
        http.get(url(&format!("/runs/{run}")))
            .header("Authorization", &bearer)
            .call()?;
        http.post(url(&format!("/api/runs/{run}/decisions/handoff")))
            .header("Authorization", &bearer)
            .header("Content-Type", "application/json")
            .send("{\"action\": \"nonsense\"}")?;
        http.get(url(&format!("/login?token={token}"))).call()?;
    }
    let server = served.take_server().ok_or("no server")?;
    server.interrupt()?;
    let out = server.finish()?;
    assert_eq!(out.code(), Some(0), "{out}");
    for token in [served.decide.as_str(), served.read_only.as_str(), wrong] {
        assert!(!out.stdout.contains(token), "{out}");
        assert!(!out.stderr.contains(token), "{out}");
    }
    Ok(())
}

#[test]
fn a_page_that_missed_a_change_while_it_loaded_is_told_at_once() -> Result {
    use std::io::{Read, Write};
    let repo = Repo::new(REVIEW)?;
    paused_at_review(&repo)?;
    let served = serve(&repo)?;
    let address = served.base.trim_start_matches("http://").to_owned();
    let listen = |since: &str| -> Result<String> {
        let mut stream = std::net::TcpStream::connect(&address)?;
        stream.set_read_timeout(Some(std::time::Duration::from_secs(2)))?;
        write!(
            stream,
            "GET /events?since={since} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {}\r\n\r\n",
            served.read_only
        )?;
        let mut seen = Vec::new();
        let mut buf = [0u8; 1024];
        // Until the stream says something or goes quiet.
        while let Ok(n) = stream.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
            if seen.windows(14).any(|w| w == b"event: changed") {
                break;
            }
        }
        Ok(String::from_utf8_lossy(&seen).into_owned())
    };
    // A page made from another inbox than the one there is now.
    assert!(listen("0000")?.contains("event: changed"));
    // A page made from the inbox as it is: nothing to say.
    let mut page = agent()
        .get(format!("{}/", served.base))
        .header("Authorization", format!("Bearer {}", served.read_only))
        .call()?;
    let html = page.body_mut().read_to_string()?;
    let seen = html
        .split("name=\"orcho-inbox\" content=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .ok_or("the page says what it was made from")?
        .to_owned();
    assert!(!listen(&seen)?.contains("event: changed"));
    Ok(())
}

/// A session of `served`'s deciding token, and the page of `run` as it
/// shows it.
fn session_and_page(http: &ureq::Agent, served: &Served, run: &str) -> Result<(String, String)> {
    let session = session(http, served)?;
    let html = http
        .get(format!("{}/runs/{run}", served.base))
        .header("Cookie", &session)
        .call()?
        .body_mut()
        .read_to_string()?;
    Ok((session, html))
}

/// A session cookie of `served`'s deciding token, from its login link.
pub(crate) fn session(http: &ureq::Agent, served: &Served) -> Result<String> {
    let login = http
        .get(format!("{}/login?token={}", served.base, served.decide))
        .call()?;
    Ok(login
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|c| c.split(';').next())
        .ok_or("no session")?
        .to_owned())
}

/// The value of the first hidden field `name` of a page's forms.
fn form_field(html: &str, name: &str) -> Result<String> {
    html.split(&format!("name=\"{name}\" value=\""))
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .map(str::to_owned)
        .ok_or_else(|| format!("no `{name}` in the form").into())
}

/// A handoff form names the handoff it was shown for: sent after the run
/// moved on to its next handoff, it is a conflict (409) and records
/// nothing on the handoff nobody saw; the API takes the id too.
#[test]
fn a_handoff_form_sent_after_the_run_moved_on_decides_nothing() -> Result {
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;
    let served = serve(&repo)?;
    let http = agent();
    let url = |path: &str| format!("{}{path}", served.base);
    let (session, html) = session_and_page(&http, &served, &run)?;
    let (csrf, handoff) = (form_field(&html, "csrf")?, form_field(&html, "handoff")?);
    assert_eq!(handoff, "0001-review");
    // Each action says what it does, in the library's words.
    assert!(
        html.contains("retry_feedback — run `review` again with your feedback"),
        "{html}"
    );

    // Decided elsewhere, and resumed: the run waits at `0002-review`.
    repo.orcho(&[
        "handoff",
        "decide",
        &run,
        "retry_feedback",
        "--note",
        "again",
    ])?
    .expect_code(0);
    repo.orcho(&["resume", &run, "--no-interactive"])?
        .expect_code(4);

    let form = format!("/runs/{run}/decisions/handoff");
    let stale = http
        .post(url(&form))
        .header("Cookie", &session)
        .send_form([
            ("csrf", csrf.as_str()),
            ("handoff", handoff.as_str()),
            ("action", "halt"),
        ])?;
    assert_eq!(status(&stale), 409);
    let api = http
        .post(url(&format!("/api/runs/{run}/decisions/handoff")))
        .header("Authorization", &format!("Bearer {}", served.decide))
        .header("Content-Type", "application/json")
        .send(serde_json::json!({ "action": "halt", "handoff": "0001-review" }).to_string())?;
    assert_eq!(status(&api), 409);
    let shown = repo.orcho(&["handoff", "show", &run, "--json"])?;
    shown.expect_code(0);
    let shown = shown.json()?;
    assert_eq!(shown["handoff"], "0002-review", "{shown}");
    assert!(shown["decision"].is_null(), "nothing recorded: {shown}");
    Ok(())
}

/// Any point by an action's name, as `orcho decide` takes it: the API's
/// view of the open point, its decision pinned to the point, and the
/// page's generic form; the note rules and a moved point are refused.
#[test]
fn any_point_is_shown_and_decided_by_name_through_the_api_and_a_form() -> Result {
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;
    let served = serve(&repo)?;
    let http = agent();
    let url = |path: &str| format!("{}{path}", served.base);
    let bearer = format!("Bearer {}", served.decide);

    let mut shown = http
        .get(url(&format!("/api/runs/{run}/point")))
        .header("Authorization", &bearer)
        .call()?;
    assert_eq!(status(&shown), 200);
    let shown: serde_json::Value = serde_json::from_str(&shown.body_mut().read_to_string()?)?;
    assert_eq!(shown["point"]["kind"], "handoff", "{shown}");
    assert_eq!(shown["point"]["id"], "0001-review", "{shown}");

    let decide = |body: serde_json::Value| {
        http.post(url(&format!("/api/runs/{run}/decisions")))
            .header("Authorization", &bearer)
            .header("Content-Type", "application/json")
            .send(body.to_string())
    };
    assert_eq!(
        status(&decide(serde_json::json!({ "action": "retry_feedback" }))?),
        400
    );
    assert_eq!(
        status(&decide(
            serde_json::json!({ "action": "halt", "point": "0002-review" })
        )?),
        409
    );

    // The page's generic form records too, pinned to its point.
    let (session, html) = session_and_page(&http, &served, &run)?;
    let csrf = form_field(&html, "csrf")?;
    let sent = http
        .post(url(&format!("/runs/{run}/decisions/point")))
        .header("Cookie", &session)
        .send_form([
            ("csrf", csrf.as_str()),
            ("point", "0001-review"),
            ("action", "retry_feedback"),
            ("note", "name the empty case"),
        ])?;
    assert_eq!(status(&sent), 303);
    let recorded = repo.orcho(&["handoff", "show", &run, "--json"])?.json()?;
    assert_eq!(
        recorded["decision"]["action"], "retry_feedback",
        "{recorded}"
    );
    let mut after = http
        .get(url(&format!("/api/runs/{run}/point")))
        .header("Authorization", &bearer)
        .call()?;
    let after: serde_json::Value = serde_json::from_str(&after.body_mut().read_to_string()?)?;
    assert!(after["point"].is_null(), "decided: {after}");
    Ok(())
}

/// A browser says where a request comes from: a post from another origin
/// (or an opaque one) is refused before anything is read, even with a
/// valid session and CSRF token; the server's own origin, and a program
/// that sends none, go on.
#[test]
fn a_post_from_another_origin_is_refused() -> Result {
    let repo = Repo::new(REVIEW)?;
    let run = paused_at_review(&repo)?;
    let served = serve(&repo)?;
    let http = agent();
    let (session, html) = session_and_page(&http, &served, &run)?;
    let csrf = form_field(&html, "csrf")?;
    let form = format!("{}/runs/{run}/decisions/handoff", served.base);
    for origin in ["http://evil.example", "null", "http://127.0.0.1:1"] {
        let sent = http
            .post(&form)
            .header("Cookie", &session)
            .header("Origin", origin)
            .send_form([("csrf", csrf.as_str()), ("action", "halt")])?;
        assert_eq!(status(&sent), 403, "{origin}");
        let api = http
            .post(format!("{}/api/runs/{run}/decisions/handoff", served.base))
            .header("Authorization", &format!("Bearer {}", served.decide))
            .header("Origin", origin)
            .header("Content-Type", "application/json")
            .send(serde_json::json!({ "action": "halt" }).to_string())?;
        assert_eq!(status(&api), 403, "{origin}");
    }
    let shown = repo.orcho(&["handoff", "show", &run, "--json"])?.json()?;
    assert!(shown["decision"].is_null(), "nothing recorded: {shown}");
    let sent = http
        .post(&form)
        .header("Cookie", &session)
        .header("Origin", &served.base)
        .send_form([("csrf", csrf.as_str()), ("action", "halt")])?;
    assert_eq!(status(&sent), 303);
    Ok(())
}

#[test]
fn the_inbox_pages_and_filters_on_the_page_and_the_api() -> Result {
    let repo = Repo::new(REVIEW)?;
    let older = paused_at_review(&repo)?;
    let newer = paused_at_review(&repo)?;
    let served = serve(&repo)?;
    let http = agent();
    let get = |path: &str| -> Result<(u16, String)> {
        let mut r = http
            .get(format!("{}{path}", served.base))
            .header("Authorization", format!("Bearer {}", served.read_only))
            .call()?;
        Ok((status(&r), r.body_mut().read_to_string()?))
    };

    // The API pages as `orcho inbox --page` does.
    let (code, body) = get("/api/inbox?page=2&per_page=1")?;
    assert_eq!(code, 200, "{body}");
    let doc: serde_json::Value = serde_json::from_str(&body)?;
    let cli = repo
        .orcho(&["inbox", "--page", "2", "--per-page", "1", "--json"])?
        .json()?;
    assert_eq!(doc, cli);
    assert_eq!(doc["pending"][0]["run"], older.as_str(), "{doc}");
    let (_, body) = get("/api/inbox?kind=delivery")?;
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&body)?["total"],
        0
    );
    // A value that does not read: 400, naming the parameter, with what reads.
    for (query, named) in [
        ("kind=handof", "did you mean `handoff`"),
        ("older_than=soon", "older_than"),
        ("page=0", "page"),
    ] {
        let (code, body) = get(&format!("/api/inbox?{query}"))?;
        assert_eq!(code, 400, "{query}: {body}");
        let doc: serde_json::Value = serde_json::from_str(&body)?;
        assert!(
            doc["error"].as_str().is_some_and(|e| e.contains(named)),
            "{doc}"
        );
        assert!(
            doc["hint"].as_str().is_some_and(|h| h.contains("per_page")),
            "{doc}"
        );
    }

    // The page: the filters as a form, a page of cards, links to the
    // others that keep the filter.
    let (code, page) = get("/?per_page=1&kind=handoff")?;
    assert_eq!(code, 200, "{page}");
    assert!(page.contains("2 waiting (filtered), page 1 of 2"), "{page}");
    assert!(
        page.contains(&newer[newer.len() - 16..newer.len() - 8]),
        "{page}"
    );
    assert!(!page.contains(&format!("/runs/{older}")), "{page}");
    assert!(
        page.contains("href=\"?kind=handoff&amp;per_page=1&amp;page=2\""),
        "{page}"
    );
    assert!(
        page.contains("<option value=\"handoff\" selected>"),
        "{page}"
    );
    let (_, second) = get("/?kind=handoff&per_page=1&page=2")?;
    assert!(second.contains(&format!("/runs/{older}")), "{second}");
    assert!(second.contains("rel=\"prev\""), "{second}");
    let (_, none) = get("/?older_than=7d")?;
    assert!(
        none.contains("Nothing waiting matches the filter."),
        "{none}"
    );
    let (code, bad) = get("/?kind=handof")?;
    assert_eq!(code, 400);
    assert!(bad.contains("did you mean"), "{bad}");
    Ok(())
}
